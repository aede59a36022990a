/*
 * exec_radix.h — the middle of a radix-partitioned join in a query: after
 * the build pipeline (JOIN sink) and the probe side's pipeline (PARTITION
 * sink) have left their entries in per-worker eng_join_mats, this runs the
 * steps of rt_radix.h on the scheduler as one job of dependent pipelines,
 *
 *   histogram (both sides, per slice; finalize: prefix sums)
 *     ► partition (both sides, per slice, write-combine buffers)
 *     ► refine (second pass, per first-pass partition; only when needed)
 *     ► build (a table per partition; finalize: probe tasks)
 *
 * and leaves an eng_radix_join whose probe tasks the PARTS pipeline runs
 * as its morsels (engine/executor.c).
 */
#ifndef RACKDB_ENGINE_EXEC_RADIX_H
#define RACKDB_ENGINE_EXEC_RADIX_H

#include <stdatomic.h>

#include "engine/rt_radix.h"
#include "engine/sched.h"

/* Partitions build[0..nb) and probe[0..np) into rj (freed by the caller
 * with eng_radix_free, also on error) with at most `threads` workers of
 * sched; bits < 0 lets eng_radix_init choose. */
sto_status eng_exec_radix_partition(eng_sched *sched, unsigned threads, eng_mem *mem,
                                    atomic_int *cancel, eng_radix_join *rj, eng_join_mat *build,
                                    unsigned nb, eng_join_mat *probe, unsigned np, int bits);

#endif
