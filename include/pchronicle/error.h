/* pChronicle error model (STYLE.md §4): every fallible function returns PCH_OK (0) or a
** negative pch_status; details go to a caller-owned pch_error passed last (NULL allowed).
** Reporting an error never allocates. Codes are pinned: never renumber. */
#ifndef PCHRONICLE_ERROR_H
#define PCHRONICLE_ERROR_H

#include "pchronicle/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pch_status {
    PCH_OK = 0,
    PCH_ENOMEM = -1,       /* allocation failed */
    PCH_EINVAL = -2,       /* caller passed bad arguments or input that is not valid */
    PCH_EIO = -3,          /* the operating system reported an I/O error (see sys_errno) */
    PCH_ENOTFOUND = -4,    /* a named thing does not exist */
    PCH_ECORRUPT = -5,     /* bytes break the format's rules */
    PCH_EUNSUPPORTED = -6, /* valid but not implemented here (names what) */
    PCH_ELIMIT = -7,       /* a configured limit was exceeded */
    PCH_ENEEDMORE = -8,    /* short input: read more and call again */
    PCH_ITEROVER = -9,     /* iteration finished (not an error) */
    PCH_ECANCELED = -10,   /* the operation was cancelled (signal, callback) */
    PCH_EEXISTS = -11      /* the target already exists (create-if-absent lost) */
} pch_status;

#define PCH_ERROR_MSG_LEN 256

/* Filled by a failing call. code mirrors the return value; sys_errno is the errno that
** caused PCH_EIO (0 otherwise); msg is one line, lower case, "what and where". */
typedef struct pch_error {
    int code;
    int sys_errno;
    char msg[PCH_ERROR_MSG_LEN];
} pch_error;

/* Reset err to "no error". NULL is a no-op. */
PCH_API void pch_error_clear(pch_error *err);

/* Record code and a printf-style message in err (NULL allowed) and return code, so that
** callers write `return pch_error_set(err, PCH_ECORRUPT, "...", ...)`. */
PCH_API int pch_error_set(pch_error *err, int code, const char *fmt, ...)
    PCH_PRINTF(3, 4);

/* Like pch_error_set but also records errno value sys_errno and appends strerror(). */
PCH_API int pch_error_set_sys(pch_error *err, int code, int sys_errno, const char *fmt, ...)
    PCH_PRINTF(4, 5);

/* Prefix the existing message with "prefix: " (keeps the lower-level message, STYLE §4). */
PCH_API int pch_error_prefix(pch_error *err, const char *fmt, ...) PCH_PRINTF(2, 3);

/* Static name of a status code, e.g. "corrupt" for PCH_ECORRUPT. */
PCH_API const char *pch_status_name(int code);

#ifdef __cplusplus
}
#endif
#endif
