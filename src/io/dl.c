/* libcurl and libcrypto, loaded when the first S3 store opens (docs/object-storage.md
** "Libraries").
**
** Linking them made every process of ours load libcurl's dependency tree (35 shared
** libraries: TLS, SSH, LDAP, Kerberos, IDN, ...) at start: +20 ms per process measured with
** farm-bench (26.7 ms against 6.5 ms for an empty main linked with and without them), paid by
** every `get` on a local root, which never speaks HTTP. So the object-store layer resolves the
** few functions it calls with dlopen(3) the first time it needs them, from the Debian
** packages libcurl4 (libcurl.so.4, OpenSSL flavour) and libssl3 (libcrypto.so.3, already
** loaded by libcurl). Their headers still give the types and constants at build time. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_int.h"

pch_io_libs pch_io;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512];          /* "" after a load that worked */

static void *open_first(const char *const *names, const char *what)
{
    void *h = NULL;
    for (size_t i = 0; names[i] && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) snprintf(why, sizeof why, "%s is not installed (Debian: %s): %s", names[0], what, dlerror());
    return h;
}

/* pch_io.field = the symbol name of library h (a data pointer converted to a function
** pointer through its bytes, as POSIX dlsym(3) allows) */
#define SYM(h, field, name)                                                                    \
    do {                                                                                       \
        void *p_ = why[0] ? NULL : dlsym(h, name);                                             \
        if (p_) memcpy(&pch_io.field, &p_, sizeof p_);                                         \
        else if (!why[0]) snprintf(why, sizeof why, "%s has no %s", #h, name);                 \
    } while (0)

static void load(void)
{
    static const char *const curl_names[] = { "libcurl.so.4", "libcurl.so", NULL };
    static const char *const crypto_names[] = { "libcrypto.so.3", "libcrypto.so", NULL };
#ifdef PCH_FAULT_INJECTION
    /* tests: a machine without libcurl (tests/cli/vortex_faults.sh; fault builds only) */
    if (getenv("PCH_FAULT_NO_LIBCURL")) {
        snprintf(why, sizeof why, "%s is not installed (Debian: libcurl4): hidden by PCH_FAULT_NO_LIBCURL", curl_names[0]);
        return;
    }
#endif
    void *curl = open_first(curl_names, "libcurl4");
    void *crypto = why[0] ? NULL : open_first(crypto_names, "libssl3");
    if (why[0]) return;
    SYM(curl, global_init, "curl_global_init");
    SYM(curl, easy_init, "curl_easy_init");
    SYM(curl, easy_cleanup, "curl_easy_cleanup");
    SYM(curl, easy_reset, "curl_easy_reset");
    SYM(curl, easy_setopt, "curl_easy_setopt");
    SYM(curl, easy_getinfo, "curl_easy_getinfo");
    SYM(curl, easy_strerror, "curl_easy_strerror");
    SYM(curl, slist_append, "curl_slist_append");
    SYM(curl, slist_free_all, "curl_slist_free_all");
    SYM(curl, multi_init, "curl_multi_init");
    SYM(curl, multi_cleanup, "curl_multi_cleanup");
    SYM(curl, multi_add_handle, "curl_multi_add_handle");
    SYM(curl, multi_remove_handle, "curl_multi_remove_handle");
    SYM(curl, multi_perform, "curl_multi_perform");
    SYM(curl, multi_poll, "curl_multi_poll");
    SYM(curl, multi_info_read, "curl_multi_info_read");
    SYM(crypto, evp_digest, "EVP_Digest");
    SYM(crypto, evp_sha256, "EVP_sha256");
    SYM(crypto, hmac, "HMAC");
    if (!why[0] && pch_io.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) snprintf(why, sizeof why, "libcurl: global init failed");
    /* the handles stay open for the life of the process */
}

int pch_io_load_libs(pch_error *err)
{
    pthread_once(&once, load);
    return why[0] ? pch_error_set(err, PCH_EUNSUPPORTED, "S3: %s", why) : PCH_OK;
}
