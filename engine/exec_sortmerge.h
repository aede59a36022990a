/*
 * exec_sortmerge.h — the middle of a sort-merge join in a query: after the
 * build pipeline (JOIN sink) and the probe side's pipeline (PARTITION sink)
 * have left their entries in per-worker eng_join_mats, this runs the steps
 * of rt_sortmerge.h on the scheduler as one job of dependent pipelines,
 *
 *   splitters (before the job, from a sample of both sides)
 *   histogram (both sides, per slice; finalize: prefix sums)
 *     ► partition (both sides, per slice: (key, entry) pairs into ranges)
 *     ► sort (per range: runs sorted, merged; then the build range's runs
 *       of equal keys linked, the probe range's entries gathered in order;
 *       finalize: merge-join tasks)
 *
 * and leaves an eng_sm_join plus the gathered probe entries, which the
 * PARTS pipeline reads task by task, its probe step finding each row's run
 * through an eng_sm_cursor (engine/executor.c). The sort key is the join
 * key's hash: equal keys meet, whatever their type.
 */
#ifndef RACKDB_ENGINE_EXEC_SORTMERGE_H
#define RACKDB_ENGINE_EXEC_SORTMERGE_H

#include <stdatomic.h>

#include "engine/rt_sortmerge.h"
#include "engine/sched.h"

/* Partitions and sorts build[0..nb) and probe[0..np) into sm and gathers
 * the sorted probe entries into *gathered (probe.count × probe.stride
 * bytes on mem; NULL when there are none). The caller frees sm with
 * eng_sm_free and *gathered with eng_mem_free, also on error. */
sto_status eng_exec_sm_partition(eng_sched *sched, unsigned threads, eng_mem *mem,
                                 atomic_int *cancel, eng_sm_join *sm, eng_join_mat *build,
                                 unsigned nb, eng_join_mat *probe, unsigned np, uint8_t **gathered);

#endif
