/* Error reporting (STYLE.md §4): fixed-size message buffer, never allocates, one line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

void pch_error_clear(pch_error *err)
{
    if (!err) return;
    err->code = 0;
    err->sys_errno = 0;
    err->msg[0] = '\0';
}

static void set_msg(pch_error *err, const char *fmt, va_list ap)
{
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    for (char *p = err->msg; *p; p++)   /* one line, always */
        if (*p == '\n' || *p == '\r') *p = ' ';
}

int pch_error_set(pch_error *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    set_msg(err, fmt, ap);
    va_end(ap);
    err->code = code;
    err->sys_errno = 0;
    return code;
}

int pch_error_set_sys(pch_error *err, int code, int sys_errno, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    set_msg(err, fmt, ap);
    va_end(ap);
    size_t n = strlen(err->msg);
    if (n < sizeof err->msg - 3)
        snprintf(err->msg + n, sizeof err->msg - n, ": %s", strerror(sys_errno));
    err->code = code;
    err->sys_errno = sys_errno;
    return code;
}

int pch_error_prefix(pch_error *err, const char *fmt, ...)
{
    if (!err) return 0;
    char prefix[PCH_ERROR_MSG_LEN], old[PCH_ERROR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t pl = strlen(prefix), ol = strlen(old), cap = sizeof err->msg - 1;
    if (pl > cap) pl = cap;
    memcpy(err->msg, prefix, pl);
    size_t at = pl;
    if (at + 2 <= cap) { memcpy(err->msg + at, ": ", 2); at += 2; }
    if (ol > cap - at) ol = cap - at;
    memcpy(err->msg + at, old, ol);
    err->msg[at + ol] = '\0';
    return err->code;
}

const char *pch_status_name(int code)
{
    switch (code) {
    case PCH_OK: return "ok";
    case PCH_ENOMEM: return "out of memory";
    case PCH_EINVAL: return "invalid";
    case PCH_EIO: return "i/o error";
    case PCH_ENOTFOUND: return "not found";
    case PCH_ECORRUPT: return "corrupt";
    case PCH_EUNSUPPORTED: return "unsupported";
    case PCH_ELIMIT: return "limit exceeded";
    case PCH_ENEEDMORE: return "need more input";
    case PCH_ITEROVER: return "end of iteration";
    case PCH_ECANCELED: return "canceled";
    case PCH_EEXISTS: return "already exists";
    default: return "unknown error";
    }
}
