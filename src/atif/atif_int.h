/* Private structures of src/atif (the normalised document behind pch_atif_doc). Not for
** use outside src/atif/. */
#ifndef PCH_ATIF_INT_H
#define PCH_ATIF_INT_H

#include "atif/atif.h"

struct pch_atif_doc {
    pch_ctx *ctx;
    pch_arena arena;                 /* every string and array of the model */
    pch_atif_trajectory *traj;       /* preorder; traj[0] is the document root */
    size_t n_traj, cap_traj;
    const char *file;                /* document name (arena) */
    bool has_source;                 /* src_digest / src_bytes set (dir import, options.digest) */
    uint8_t src_digest[32];
    uint64_t src_bytes;
};

/* Names of the fields of each object kind, in canonical (writer) order. */
extern const char *const pch_atif__traj_keys[PCH_ATIF_T_N];
extern const char *const pch_atif__step_keys[PCH_ATIF_S_N];
extern const char *const pch_atif__call_keys[PCH_ATIF_C_N];
extern const char *const pch_atif__result_keys[PCH_ATIF_R_N];
extern const char *const pch_atif__agent_keys[5];

#endif
