/*
 * rt_agg_runs.c — ordered runs in front of the aggregation's tables: the
 * rows of a group that come together are folded into one entry that is
 * written once, never through the table, and emitted as the group's row
 * when no other entry of the group can exist. rt_agg.h describes when that holds.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/rt_agg_int.h"

/* Below this many expected groups the worker's table holds them all in
 * cache and runs would only add their checks. */
#define RUNS_MIN_GROUPS 4096.0

/* Runs of one row cost a runtime call each where the table inserts
 * inline, but a table over many groups spills them, and the merge folds
 * every spilled entry, where a finished run is written once and emitted
 * as it is. Session 7 required two rows a group (q13's 150K customers,
 * one row each: about 5% more time for the query in four interleaved
 * wall-clock pairs); in session 8 (load 6-9, so compared by perf samples
 * within each run) runs for q11's 30K parts of about one row each halved
 * the aggregation runtime's samples against those of the scan pipeline
 * feeding it (0.54-0.61 to 0.27-0.29 of them, four runs), and q13's
 * pipelines plus the aggregation runtime against its orders scan were
 * within the noise (1.43-1.72 with runs, 1.50-1.70 without, four pairs).
 * So every group may be a run of its own. */
#define RUNS_MIN_ROWS_PER_GROUP 1.0

bool eng_agg_runs_fit(const eng_agg_layout *l, bool key_nullable, double groups, double rows)
{
    if (l->nkeys != 1 || key_nullable || l->distinct_sets || groups < RUNS_MIN_GROUPS ||
        rows < RUNS_MIN_ROWS_PER_GROUP * groups)
        return false;
    switch (l->key_types[0].id) {
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
    case STO_TYPE_DECIMAL:
    case STO_TYPE_DATE:
        return true;
    default:
        return false;
    }
}

void eng_agg_runs_free(eng_agg_local *a)
{
    eng_agg_runs *r = &a->runs;
    for (unsigned p = 0; p < ENG_AGG_PARTS; p++)
        eng_agg_part_free(&a->mem, &r->parts[p]);
    free(r->ranges);
    memset(r, 0, sizeof(*r));
}

/* A new run's entry at the end of its partition's finished runs: the
 * hash, the key row and zeroed states. */
static sto_status run_append(eng_agg_local *a, uint64_t hash, const uint8_t *key_row, uint8_t **out)
{
    const eng_agg_layout *l = a->layout;
    eng_agg_runs *r = &a->runs;
    r->open_part = (unsigned)(hash >> (64 - ENG_AGG_PARTS_LOG));
    uint8_t *e = NULL;
    STO_TRY(eng_agg_part_append(a, &r->parts[r->open_part], hash, &e));
    memset(e, 0, l->entry_bytes);
    memcpy(e, &hash, 8);
    e[ENG_AGG_ENTRY_USED] = 1;
    memcpy(e + ENG_AGG_ENTRY_HEAD, key_row, l->key_bytes);
    r->count++;
    *out = e;
    return STO_OK;
}

/* The open run (its partition's last entry) may go on in a neighbouring
 * call: it leaves the runs for the worker's table. */
static sto_status run_to_table(eng_agg_local *a)
{
    eng_agg_runs *r = &a->runs;
    eng_agg_part *p = &r->parts[r->open_part];
    uint8_t *e = p->free_ptr - a->layout->entry_bytes;
    uint64_t hash;
    memcpy(&hash, e, 8);
    STO_TRY(eng_agg_table_fold(a, e));
    eng_agg_part_pop(a, p, hash);
    r->count--;
    return STO_OK;
}

static sto_status run_next(eng_agg_local *a, uint64_t hash, int64_t key, const uint8_t *key_row,
                           uint8_t **states)
{
    eng_agg_runs *r = &a->runs;
    *states = NULL;
    if (!r->on) return STO_OK;
    if (r->states) {
        /* the open run is done: a call's first run goes to the table */
        if (r->first) STO_TRY(run_to_table(a));
        r->first = false;
        r->states = NULL;
        if (key <= r->key) {
            /* not in key order: the finished runs are merged like
             * spilled entries, and this worker's rows go to its table */
            r->on = 0;
            r->off = true;
            return STO_OK;
        }
    } else {
        r->call_first = key;
        r->first = true;
    }
    uint8_t *e = NULL;
    STO_TRY(run_append(a, hash, key_row, &e));
    r->states = e + ENG_AGG_ENTRY_HEAD + a->layout->key_bytes;
    r->key = key;
    *states = r->states;
    return STO_OK;
}

int32_t eng_rt_agg_run_next(cg_error *err, void *local, uint64_t hash, int64_t key,
                            const uint8_t *key_row, uint8_t **states)
{
    sto_status st = run_next(local, hash, key, key_row, states);
    if (st) {
        err->detail = st;
        return CG_ERR_RUNTIME;
    }
    return CG_ERR_NONE;
}

/* The call's last run goes to the table; its key range is recorded. */
static sto_status run_end(eng_agg_local *a)
{
    eng_agg_runs *r = &a->runs;
    if (!r->states) return STO_OK;
    r->states = NULL;
    if (r->nranges == r->ranges_cap) {
        uint64_t cap = r->ranges_cap ? r->ranges_cap * 2 : 64;
        eng_agg_range *ranges = realloc(r->ranges, cap * sizeof(*ranges));
        if (!ranges) return sto_error_oom();
        r->ranges = ranges;
        r->ranges_cap = cap;
    }
    r->ranges[r->nranges++] = (eng_agg_range){r->call_first, r->key};
    return run_to_table(a);
}

int32_t eng_rt_agg_run_end(cg_error *err, void *local)
{
    sto_status st = run_end(local);
    if (st) {
        err->detail = st;
        return CG_ERR_RUNTIME;
    }
    return CG_ERR_NONE;
}

static int range_cmp(const void *x, const void *y)
{
    const eng_agg_range *a = x, *b = y;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return (a->last > b->last) - (a->last < b->last);
}

eng_agg_runs_mode eng_agg_runs_check(eng_agg_local *const *locals, unsigned n)
{
    uint64_t finished = 0, nranges = 0;
    bool off = false;
    for (unsigned i = 0; i < n; i++) {
        finished += locals[i]->runs.count;
        nranges += locals[i]->runs.nranges;
        off |= locals[i]->runs.off;
    }
    if (!finished) return ENG_AGG_RUNS_NONE;
    if (off) return ENG_AGG_RUNS_MERGE;
    /* Sorted by first key, each call must end where the next begins or
     * before: an interior key (strictly inside its call's range) is then
     * in no other call. Merging is right in any case, so a failed
     * allocation merges. */
    eng_agg_range *all = malloc(nranges * sizeof(*all));
    if (!all) return ENG_AGG_RUNS_MERGE;
    uint64_t k = 0;
    for (unsigned i = 0; i < n; i++) {
        memcpy(all + k, locals[i]->runs.ranges, locals[i]->runs.nranges * sizeof(*all));
        k += locals[i]->runs.nranges;
    }
    qsort(all, nranges, sizeof(*all), range_cmp);
    eng_agg_runs_mode mode = ENG_AGG_RUNS_GROUPS;
    for (uint64_t i = 0; i + 1 < nranges; i++)
        if (all[i].last > all[i + 1].first) mode = ENG_AGG_RUNS_MERGE;
    free(all);
    return mode;
}
