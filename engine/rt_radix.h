/*
 * rt_radix.h — the radix-partitioned hash join: both inputs are cut into
 * partitions by the top bits of their hash until a partition's build side
 * fits in cache, then each partition is built and probed on its own.
 *
 * The steps, each a function that can be run and tested alone (Hyrise's
 * join_hash_steps are the model); the executor runs each as a pipeline of
 * slices/partitions on the scheduler, the probe side's the same as the
 * build side's:
 *
 *   materialize  build and probe pipelines fill per-worker eng_join_mats
 *   plan         eng_radix_init: counts, number of bits, buffers
 *   histogram    eng_radix_histogram: per input slice, tuples per partition
 *   prefix sums  eng_radix_prefix: where each slice writes each partition
 *   partition    eng_radix_scatter: per slice, copy tuples to their places
 *                through software write-combine buffers
 *   (2nd pass)   eng_radix_refine: per first-pass partition, again on the
 *                next bits, when one pass cannot reach cache size
 *   build        eng_radix_build: per partition, a chained table
 *                (rt_hashtable.h's layout, filled single-threaded)
 *   probe        eng_radix_tasks, then eng_radix_probe_task per task
 *   unmatched    eng_radix_unmatched per partition (RIGHT/FULL)
 *
 * Fan-out: one pass writes at most 2^ENG_RADIX_MAX_BITS partitions — with
 * one 256-byte write-combine buffer each the buffers stay within L2 and
 * their pages within the TLB. The number of bits is chosen so a build
 * partition holds about ENG_RADIX_PART_BYTES; more than ENG_RADIX_MAX_BITS
 * bits take a second pass over each first-pass partition (which is local
 * and cache-friendly by then). A buffer mirrors the cache lines of its
 * partition's output, so a full one is written as whole, aligned lines —
 * with non-temporal stores when the output is larger than the caches
 * (those bytes are read again only after the whole pass); a region's
 * first and last lines, which it may share with its neighbours, are
 * written with ordinary stores.
 *
 * Skew: a partition's table is built once, but its probe tuples are cut
 * into tasks of at most max(min(2 × average, probe tuples / 64,
 * ENG_RADIX_TASK_MAX), ENG_RADIX_TASK_MIN) tuples, so a hot partition — or
 * the one partition of a small build side — is probed by all workers at
 * once against the one table.
 */
#ifndef RACKDB_ENGINE_RT_RADIX_H
#define RACKDB_ENGINE_RT_RADIX_H

#include <stdint.h>

#include "engine/mem.h"
#include "engine/rt_hashtable.h"
#include "engine/rt_join.h"
#include "storage/status.h"

#define ENG_RADIX_MAX_BITS   10
#define ENG_RADIX_PART_BYTES ((uint64_t)256 << 10)
#define ENG_RADIX_TASK_MIN   4096u
#define ENG_RADIX_TASK_MAX   65536u
#define ENG_RADIX_WC_BYTES   256u

/* One input of the join, partitioned. */
typedef struct eng_radix_side {
    eng_join_span *spans; /* the input: keyed entries of the mats */
    unsigned n_spans;
    uint64_t count;
    uint32_t stride;
    uint8_t *out;   /* the partitioned entries */
    uint8_t *tmp;   /* first-pass output when there are two passes */
    uint64_t *hist; /* [slice][first-pass partition]: counts, then offsets */
    uint64_t *part; /* [partition + 1]: where each final partition begins */
} eng_radix_side;

/* Probe entries [begin, end) (indexes into probe.out) of one partition. */
typedef struct eng_radix_task {
    uint64_t part, begin, end;
} eng_radix_task;

typedef struct eng_radix_join {
    eng_mem *mem;
    unsigned bits1, bits2; /* per pass; bits2 = 0: one pass */
    uint64_t parts;        /* 2^(bits1 + bits2) */
    unsigned slices;       /* first-pass input slices */
    bool stream;           /* non-temporal stores */
    eng_radix_side build, probe;
    eng_join_ht *tables; /* [parts] */
    eng_radix_task *tasks;
    uint64_t n_tasks;
} eng_radix_join;

/* Plan: counts, bits (bits >= 0 forces that many bits, for tests; -1 =
 * choose), the buffers of both sides. slices = the number of first-pass
 * slices the executor will run (each of eng_radix_histogram and
 * eng_radix_scatter is called once per slice and side). 53200 when the
 * partitioned copies do not fit. */
sto_status eng_radix_init(eng_radix_join *rj, eng_join_mat *const *build, unsigned n_build,
                          eng_join_mat *const *probe, unsigned n_probe, unsigned slices, int bits,
                          eng_mem *mem);

/* Counts, per first-pass partition, the entries of slice s of a side. */
void eng_radix_histogram(eng_radix_join *rj, eng_radix_side *side, unsigned s);

/* Turns both sides' counts into write offsets. */
void eng_radix_prefix(eng_radix_join *rj);

/* Copies slice s's entries of a side to their first-pass partitions. 53200
 * when the write-combine buffers do not fit. */
sto_status eng_radix_scatter(eng_radix_join *rj, eng_radix_side *side, unsigned s);

/* Second pass (only when bits2 > 0) over first-pass partition p of a side. */
void eng_radix_refine(eng_radix_join *rj, eng_radix_side *side, uint64_t p);

/* Builds the table of final partition p. */
sto_status eng_radix_build(eng_radix_join *rj, uint64_t p);

/* Cuts the probe side into tasks (after every refine). */
sto_status eng_radix_tasks(eng_radix_join *rj);

/* Probes the entries of task t against its partition's table; rows of the
 * probe entries go to spec. */
int32_t eng_radix_probe_task(cg_error *err, const eng_radix_join *rj, uint64_t t,
                             const eng_join_spec *spec, const eng_join_build_info *info);

/* RIGHT/FULL: the unmatched build entries of partition p. */
int32_t eng_radix_unmatched(cg_error *err, const eng_radix_join *rj, uint64_t p,
                            const eng_join_spec *spec);

void eng_radix_free(eng_radix_join *rj);

#endif
