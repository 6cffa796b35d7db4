/* Shared macros of the public headers: export attribute, printf checking, version. */
#ifndef PCHRONICLE_COMMON_H
#define PCHRONICLE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#  define PCH_API __attribute__((visibility("default")))
#  define PCH_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#  define PCH_API
#  define PCH_PRINTF(fmt, args)
#endif

#define PCH_VERSION_STRING "0.1.0"
#define PCH_VERSION_MAJOR 0
#define PCH_VERSION_MINOR 1
#define PCH_VERSION_PATCH 0

/* A borrowed byte view (LMDB MDB_val): valid as long as its owner says. */
typedef struct pch_bytes {
    const uint8_t *ptr;
    size_t len;
} pch_bytes;

#endif
