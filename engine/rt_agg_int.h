/*
 * rt_agg_int.h — what the aggregation runtime's two files share: the
 * hash tables and merge (rt_agg.c) and the ordered runs (rt_agg_runs.c,
 * described in rt_agg.h). Finished runs are entries like the table's;
 * the merge either emits them as groups or folds them with the rest.
 */
#ifndef RACKDB_ENGINE_RT_AGG_INT_H
#define RACKDB_ENGINE_RT_AGG_INT_H

#include "engine/rt_agg.h"

/* Room for one more entry at the end of p's buffer (its histogram
 * counted), and the removal of the last one (rt_agg.c). */
sto_status eng_agg_part_append(eng_agg_local *a, eng_agg_part *p, uint64_t hash, uint8_t **out);
void eng_agg_part_pop(eng_agg_local *a, eng_agg_part *p, uint64_t hash);
void eng_agg_part_free(const eng_rt_mem *m, eng_agg_part *p);

/* Folds entry e (hash, key row, states) into its group in the worker's
 * table (rt_agg.c). */
sto_status eng_agg_table_fold(eng_agg_local *a, uint8_t *e);

typedef enum eng_agg_runs_mode {
    ENG_AGG_RUNS_NONE,   /* no finished runs */
    ENG_AGG_RUNS_GROUPS, /* each finished run is a whole group: emitted as is */
    ENG_AGG_RUNS_MERGE,  /* runs were turned off or calls overlap: merged */
} eng_agg_runs_mode;

/* What the merge does with the workers' finished runs (rt_agg_runs.c). */
eng_agg_runs_mode eng_agg_runs_check(eng_agg_local *const *locals, unsigned n);

void eng_agg_runs_free(eng_agg_local *a);

#endif
