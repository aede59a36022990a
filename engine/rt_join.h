/*
 * rt_join.h — what every join algorithm shares: the materialized build
 * tuples, the join kinds and the per-probe-row state machine that turns key
 * matches into output rows.
 *
 * How a join runs (issue 6). The planner picks one of three algorithms; all
 * of them start the same way and end the same way:
 *
 *   build pipeline (sink)         algorithm                 probe
 *   ─────────────────────────     ──────────────────────    ─────────────────
 *   generated code computes the   shared table: size the    generated code (or
 *   key hash and the build row    directory, insert all     eng_join_probe_*)
 *   (row format of codegen/       entries with CAS          walks the chain
 *   pipeline.h), appends it to    (rt_hashtable.h)          for its hash,
 *   its worker's eng_join_mat     radix: histogram, prefix  compares keys,
 *   through eng_rt_join_append    sums, partition, build    runs the residual
 *   (rows with a NULL key go to   per partition             predicate and
 *   eng_rt_join_append_null)      (rt_radix.h)              emits rows per the
 *                                 sort-merge: splitters,    join kind; right/
 *                                 range partition, sort     full joins end with
 *                                 runs, merge (rt_sortmerge eng_join_emit_
 *                                 .h)                       unmatched
 *
 * The runtime never looks inside a row: hashing and key comparison are the
 * generated code's (or, in tests and the interpreted fallback, a callback's).
 * A tuple is an eng_join_entry: a 24-byte head (chain link, 64-bit hash,
 * match flag) followed by the row, so the same pointer serves the shared
 * table, a radix partition's table and a sort-merge run, and generated code
 * reads the row at a fixed offset (ENG_JOIN_ENTRY_HEAD) whichever algorithm
 * produced it. Entries never move once a table points at them.
 *
 * Hash bits: the top bits choose radix partitions, bits 32..35 the 16-bit
 * tag of the shared directory, the low bits the directory slot, so the three
 * uses stay independent (a directory never has 2^32 slots).
 *
 * Strings in rows are sto_str references into the chunks' heaps (or into a
 * row buffer's referents): the join copies rows, never the bytes they point
 * to, so those heaps must live until the join's output is consumed — the
 * executor keeps the tables and buffers of a query until it ends.
 *
 * Join kinds (probe side = left input, build side = right input):
 *   INNER  one row per (probe, build) match
 *   LEFT   plus probe rows without a match, build side NULL
 *   RIGHT  plus build rows no probe row matched (match flags, final scan)
 *   FULL   both
 *   SEMI   probe rows with at least one match, once
 *   ANTI   probe rows without a match (NOT EXISTS: a NULL key never matches)
 *   MARK   every probe row with a three-valued mark (x IN (subquery)):
 *          true on a match; otherwise NULL when the probe key is NULL (and
 *          the build side is not empty) or the build side has a NULL key;
 *          false otherwise (always false over an empty build side)
 *   SINGLE every probe row with its only match or NULLs (scalar subquery);
 *          a second match is error 21000
 * A match is key equality (never for NULL keys) and, when the join has one,
 * a true residual predicate.
 */
#ifndef RACKDB_ENGINE_RT_JOIN_H
#define RACKDB_ENGINE_RT_JOIN_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/ir.h"
#include "engine/rt_result.h"
#include "storage/status.h"

/*  kind    name     keeps unmatched probe rows  flags build rows */
#define ENG_JOIN_KIND_LIST(X)                                                                      \
    X(INNER, "inner", false, false)                                                                \
    X(LEFT, "left", true, false)                                                                   \
    X(RIGHT, "right", false, true)                                                                 \
    X(FULL, "full", true, true)                                                                    \
    X(SEMI, "semi", false, false)                                                                  \
    X(ANTI, "anti", false, false)                                                                  \
    X(MARK, "mark", false, false)                                                                  \
    X(SINGLE, "single", true, false)

typedef enum eng_join_kind {
#define ENG_JOIN_KIND_ENUM(kind, name, keeps, flags) ENG_JOIN_##kind,
    ENG_JOIN_KIND_LIST(ENG_JOIN_KIND_ENUM)
#undef ENG_JOIN_KIND_ENUM
        ENG_JOIN_KIND_COUNT
} eng_join_kind;

const char *eng_join_kind_name(eng_join_kind k);
/* Whether the kind needs match flags on build rows and a final scan. */
bool eng_join_kind_flags_build(eng_join_kind k);

/* --- tuples ----------------------------------------------------------------- */

typedef struct eng_join_entry {
    struct eng_join_entry *next; /* chain in whichever table holds it */
    uint64_t hash;
    uint8_t matched; /* set (atomically, relaxed) by probes of RIGHT/FULL joins */
    uint8_t pad[7];
} eng_join_entry;

#define ENG_JOIN_ENTRY_HEAD 24u

static inline uint8_t *eng_join_row(const eng_join_entry *e)
{
    return (uint8_t *)e + ENG_JOIN_ENTRY_HEAD;
}

/* Bytes between consecutive entries of rows of row_bytes bytes. */
static inline uint32_t eng_join_entry_stride(uint32_t row_bytes)
{
    return (ENG_JOIN_ENTRY_HEAD + row_bytes + 7u) & ~7u;
}

static inline eng_join_entry *eng_join_entry_at(uint8_t *base, uint32_t stride, uint64_t i)
{
    return (eng_join_entry *)(base + i * stride);
}

/* Entries stored back to back. */
typedef struct eng_join_span {
    uint8_t *base;
    uint64_t count;
} eng_join_span;

/* --- per-worker materialization (the build pipeline's sink state) ----------- */

typedef struct eng_join_block eng_join_block;

typedef struct eng_join_mat {
    eng_rt_mem mem;
    uint32_t row_bytes, stride;
    eng_join_block *keyed, *keyed_tail; /* entries whose key has no NULL */
    eng_join_block *nulls, *nulls_tail; /* entries whose key has a NULL */
    uint64_t count, null_count;
    uint64_t next_block; /* entries of the next block */
} eng_join_mat;

void eng_join_mat_init(eng_join_mat *m, eng_rt_mem mem, uint32_t row_bytes);
void eng_join_mat_free(eng_join_mat *m);

/* Room for the row of a build tuple with this hash (generated code fills
 * row_bytes bytes at *row). 0 or CG_ERR_RUNTIME with 53200 in err->detail. */
int32_t eng_rt_join_append(cg_error *err, void *mat, uint64_t hash, uint8_t **row);
/* The same for a tuple whose join key has a NULL: it never matches, but
 * RIGHT/FULL joins emit it and MARK joins note that it exists. */
int32_t eng_rt_join_append_null(cg_error *err, void *mat, uint8_t **row);

/* The keyed (null = false) or NULL-keyed entries of mats[0..n) as spans:
 * *out (n_out spans) is malloc'ed, free() it. */
sto_status eng_join_mat_spans(eng_join_mat *const *mats, unsigned n, bool null, eng_join_span **out,
                              unsigned *n_out);

/* Entries [begin, end) of the concatenation of spans, visited span by span:
 * fn gets entries [lo, hi) of the span at base. */
typedef void (*eng_join_visit_fn)(void *arg, uint8_t *base, uint64_t lo, uint64_t hi);
void eng_join_spans_visit(const eng_join_span *spans, unsigned n, uint64_t begin, uint64_t end,
                          eng_join_visit_fn fn, void *arg);

/* Slice s of n equal slices of `total` items: [*begin, *end). Steps whose
 * amount of work is known only at run time are pipelines over a fixed
 * number of slices. */
static inline void eng_join_slice(uint64_t total, uint64_t s, uint64_t n, uint64_t *begin,
                                  uint64_t *end)
{
    *begin = (uint64_t)((unsigned __int128)total * s / n);
    *end = (uint64_t)((unsigned __int128)total * (s + 1) / n);
}

/* What the probe needs to know of the whole build side. */
typedef struct eng_join_build_info {
    uint64_t rows;      /* all build rows, NULL keys included */
    uint64_t null_rows; /* rows whose key has a NULL */
} eng_join_build_info;

eng_join_build_info eng_join_mat_info(eng_join_mat *const *mats, unsigned n);

/* --- the probe-side state machine ------------------------------------------ */

/* Mark values passed to emit. */
enum { ENG_JOIN_MARK_FALSE = 0, ENG_JOIN_MARK_TRUE = 1, ENG_JOIN_MARK_NULL = 2 };

/* Key equality of a probe row and a build row with the same hash. */
typedef bool (*eng_join_keys_eq_fn)(void *ctx, const uint8_t *probe, const uint8_t *build);
/* The residual (non-equi) predicate, asked after key equality: true = match. */
typedef bool (*eng_join_residual_fn)(void *ctx, const uint8_t *probe, const uint8_t *build);
/* An output row: probe NULL = an unmatched build row (RIGHT/FULL); build
 * NULL = no partner (NULL-extended, SEMI/ANTI/MARK rows); mark is for MARK
 * joins. 0 or a cg_error_kind. */
typedef int32_t (*eng_join_emit_fn)(cg_error *err, void *ctx, const uint8_t *probe,
                                    const uint8_t *build, int mark);

typedef struct eng_join_spec {
    eng_join_kind kind;
    eng_join_keys_eq_fn keys_eq;
    eng_join_residual_fn residual; /* NULL = none */
    eng_join_emit_fn emit;
    void *ctx;
} eng_join_spec;

/* One probe row's way through its candidates:
 *   eng_join_probe_begin → eng_join_probe_candidate* (until done) →
 *   eng_join_probe_end. */
typedef struct eng_join_probe {
    const eng_join_spec *spec;
    const uint8_t *row;
    uint64_t hash;
    bool key_null;
    bool done; /* later candidates cannot change the output */
    uint64_t matches;
    const uint8_t *single; /* SINGLE: the match */
} eng_join_probe;

void eng_join_probe_begin(eng_join_probe *p, const eng_join_spec *spec, uint64_t hash,
                          const uint8_t *row, bool key_null);
/* A build entry that may match (any hash; unequal hashes are skipped). */
int32_t eng_join_probe_candidate(cg_error *err, eng_join_probe *p, eng_join_entry *e);
int32_t eng_join_probe_end(cg_error *err, eng_join_probe *p, const eng_join_build_info *build);

/* The whole machine over a chain (next links, NULL-terminated). */
int32_t eng_join_probe_chain(cg_error *err, const eng_join_spec *spec,
                             const eng_join_build_info *build, uint64_t hash, const uint8_t *row,
                             bool key_null, eng_join_entry *chain);

/* RIGHT/FULL: emits entries [0, count) of base (stride apart) whose match
 * flag is clear, with probe = NULL. Every NULL-keyed build row is unmatched. */
int32_t eng_join_emit_unmatched(cg_error *err, const eng_join_spec *spec, uint8_t *base,
                                uint32_t stride, uint64_t count);

/* RIGHT/FULL: emits every NULL-keyed build row of mats[0..n). */
int32_t eng_join_mat_emit_nulls(cg_error *err, const eng_join_spec *spec, eng_join_mat *const *mats,
                                unsigned n);

/* Runs every NULL-keyed probe row of mats[0..n) through the state machine
 * (they match nothing; LEFT/FULL/ANTI/MARK/SINGLE still emit them). The
 * partitioning algorithms call this; in-pipeline probes do it row by row. */
int32_t eng_join_mat_probe_nulls(cg_error *err, const eng_join_spec *spec,
                                 const eng_join_build_info *build, eng_join_mat *const *mats,
                                 unsigned n);

/* The 21000 error of a SINGLE join, in err. */
int32_t eng_join_single_error(cg_error *err);

#endif
