/* Files for reading by path, where a path is a local file or an object `s3://bucket/key`
** (docs/object-storage.md "Reading files by path"). The readers of the Vortex projection and
** of Vortex files open, pread and list through these, so a root on S3 reads as a local one.
** A local file is an fd and pread(2); an object is read with ranged GETs through a small
** cache of fetched spans (a read that misses fetches at least PCH_RFILE_SPAN bytes, unless
** set otherwise; the object's size is the manifest's, or comes with the first read of its
** tail). Depends on src/core and the store. */
#ifndef PCH_IO_RFILE_H
#define PCH_IO_RFILE_H

#include "core/core.h"
#include "pchronicle/io.h"

typedef struct pch_rfile pch_rfile;

#define PCH_RFILE_SPAN ((uint64_t)256 << 10)
/* The first read of an object whose size is not known (pch_rfile_note_identity) asks for its
** last PCH_RFILE_PROBE bytes: the size, the tail of a Vortex file, and all of a small file at
** once. */
#define PCH_RFILE_PROBE ((uint64_t)1 << 20)

/* Open path for reading. PCH_ENOTFOUND if it does not exist. An object is not contacted
** until its first read or size. */
int pch_rfile_open(pch_ctx *ctx, const char *path, pch_rfile **out, pch_error *err);
void pch_rfile_close(pch_rfile *f);

/* The file's size (an object: read with its last PCH_RFILE_SPAN bytes, which are kept). */
int pch_rfile_size(pch_rfile *f, uint64_t *size, pch_error *err);

/* Exactly len bytes at off, or an error (PCH_ECORRUPT past the end). */
int pch_rfile_pread(pch_rfile *f, void *dst, size_t len, uint64_t off, pch_error *err);

/* Fetch [off, off+len) of an object now, with one request, unless a kept span holds it; the
** reads inside it that follow make no request. A local file: nothing. */
int pch_rfile_prefetch(pch_rfile *f, uint64_t off, uint64_t len, pch_error *err);

/* Fetch n ranges of an object now (r[2i] offset, r[2i+1] length), concurrently (the store
** runs up to its max_in_flight requests at once), each kept as a span; at most
** PCH_RFILE_AHEAD_MAX of those not held already, the rest ignored. A local file: nothing. For
** a scan reading ahead: its reads then come from the spans, with no request. An answer that
** does not fit the ranges asked keeps nothing and is not an error here (the reads that follow
** ask again and report it); a failed request is. */
#define PCH_RFILE_AHEAD_MAX 16
int pch_rfile_prefetch_ranges(pch_rfile *f, const uint64_t *r, size_t n, pch_error *err);

/* The caller checked bytes [off, size) of object f against a digest of its own (a data
** file's tail against the manifest): keep them in the tail cache under f's identity, if it
** has one (pch_rfile_note_identity) and they are at most PCH_RFILE_PROBE bytes. Best effort;
** a local file: nothing. */
void pch_rfile_keep_tail(pch_rfile *f, uint64_t off, const void *bytes, uint64_t len);

/* An object's read that misses the kept spans fetches at least bytes (default PCH_RFILE_SPAN,
** for a reader's small neighbouring reads; 0: exactly what is asked, for a reader whose reads
** are planned and coalesced already). A local file: nothing. */
void pch_rfile_set_min_span(pch_rfile *f, uint64_t bytes);

/* The descriptor of a local file (for flock), -1 for an object. */
int pch_rfile_fd(const pch_rfile *f);

/* Say that the object at path (s3://...) holds the content with digest id ("blake3:<64
** hex>", as a manifest gives it) and is size bytes (UINT64_MAX: not known): its tail may then
** be read from, and is kept in, the local tail cache (rfile.c), and a known size saves the
** first read's probe for it. Local paths and other ids are ignored. PCH_ENOMEM or PCH_OK. */
int pch_rfile_note_identity(const char *path, const char *id, uint64_t size);

/* True for paths that name objects. */
bool pch_rfile_is_remote(const char *path);

/* A whole file into out (appended, NUL-terminated), at most max bytes (PCH_ELIMIT above). */
int pch_rfile_read_all(pch_ctx *ctx, pch_buf *out, const char *path, size_t max, pch_error *err);

/* The names directly below directory dir (for an object prefix: the next path segment of
** every key below dir/), unsorted; cb returns 0 to go on. A missing directory lists nothing. */
int pch_rfile_list(pch_ctx *ctx, const char *dir, int (*cb)(void *arg, const char *name), void *arg,
                   pch_error *err);

#endif
