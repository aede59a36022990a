/*
 * exec_sortmerge.c — a sort-merge join's partitioning and sorting steps as
 * one scheduler job (exec_sortmerge.h).
 *
 * As in exec_radix.c, every step is a pipeline over a fixed number of
 * units, one unit per morsel: units [0, n) of a two-sided step are the
 * build side's, [n, 2n) the probe side's.
 */
#include "engine/exec_sortmerge.h"

#include <stdlib.h>
#include <string.h>

typedef struct sm_run {
    eng_sm_join *sm;
    uint8_t *gathered;
    unsigned slices, units;
    _Atomic(sto_status) err;
} sm_run;

static int fail(sm_run *r, sto_status st)
{
    sto_status expected = NULL;
    if (!atomic_compare_exchange_strong(&r->err, &expected, st)) sto_status_free(st);
    return ENG_RC_INTERNAL_ERROR;
}

static eng_sm_side *side_of(sm_run *r, uint64_t u, unsigned per)
{
    return u < per ? &r->sm->build : &r->sm->probe;
}

static int histogram(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    sm_run *r = ctx;
    for (uint64_t u = b; u < e; u++)
        eng_sm_histogram(r->sm, side_of(r, u, r->slices), (unsigned)(u % r->slices));
    return 0;
}

static int prefix(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    eng_sm_prefix(((sm_run *)ctx)->sm);
    return 0;
}

static int scatter(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    sm_run *r = ctx;
    for (uint64_t u = b; u < e; u++) {
        sto_status st = eng_sm_scatter(r->sm, side_of(r, u, r->slices), (unsigned)(u % r->slices));
        if (st) return fail(r, st);
    }
    return 0;
}

/* Sorts a share of one side's ranges, then links (build) or gathers
 * (probe) each. */
static int sort(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    sm_run *r = ctx;
    for (uint64_t u = b; u < e; u++) {
        eng_sm_side *side = side_of(r, u, r->units);
        uint64_t lo, hi;
        eng_join_slice(r->sm->ranges, u % r->units, r->units, &lo, &hi);
        for (uint64_t q = lo; q < hi; q++) {
            sto_status st = eng_sm_sort_range(r->sm, side, q);
            if (st) return fail(r, st);
            if (side == &r->sm->build)
                eng_sm_link_range(r->sm, q);
            else if (r->gathered)
                eng_sm_gather_range(r->sm, q, r->gathered);
        }
    }
    return 0;
}

static int tasks(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    sm_run *r = ctx;
    sto_status st = eng_sm_tasks(r->sm);
    return st ? fail(r, st) : 0;
}

static sto_status step_error(void *ctx, void *state, int rc)
{
    (void)state;
    sm_run *r = ctx;
    sto_status st = atomic_exchange(&r->err, NULL);
    return st ? st : sto_error(STO_INTERNAL_ERROR, "sort-merge join step failed (%d)", rc);
}

static sto_status add(eng_job *job, sm_run *r, const char *name, eng_morsel_fn fn, uint64_t units,
                      eng_finalize_fn fin, unsigned *dep)
{
    eng_pipeline p = {
        .name = name,
        .run = fn,
        .ctx = r,
        .rows = units,
        .morsel_rows = 1,
        .state_size = 8,
        .finalize = fin,
        .error = step_error,
    };
    unsigned id;
    sto_status st = eng_job_add(job, &p, dep, *dep == ~0u ? 0 : 1, &id);
    if (!st) *dep = id;
    return st;
}

sto_status eng_exec_sm_partition(eng_sched *sched, unsigned threads, eng_mem *mem,
                                 atomic_int *cancel, eng_sm_join *sm, eng_join_mat *build_m,
                                 unsigned nb, eng_join_mat *probe_m, unsigned np,
                                 uint8_t **gathered)
{
    *gathered = NULL;
    eng_join_mat **bm = malloc((nb ? nb : 1) * sizeof(*bm));
    eng_join_mat **pm = malloc((np ? np : 1) * sizeof(*pm));
    sto_status st = bm && pm ? STO_OK : sto_error_oom();
    for (unsigned i = 0; !st && i < nb; i++)
        bm[i] = &build_m[i];
    for (unsigned i = 0; !st && i < np; i++)
        pm[i] = &probe_m[i];
    unsigned t = threads ? threads : 1;
    unsigned slices = 1;
    if (!st) {
        uint64_t tuples = 0;
        for (unsigned i = 0; i < nb; i++)
            tuples += build_m[i].count;
        for (unsigned i = 0; i < np; i++)
            tuples += probe_m[i].count;
        if (t > 1 && tuples >= 65536) slices = 4 * t;
        st = eng_sm_init(sm, bm, nb, pm, np, NULL, NULL, NULL, slices, 0, mem);
    }
    free(bm);
    free(pm);
    if (!st) st = eng_sm_sample(sm);
    if (!st && sm->probe.count)
        st = eng_mem_alloc(mem, sm->probe.count * sm->probe.stride, -1, (void **)gathered);
    if (st) return st;
    sm_run r = {sm, *gathered, slices, 1, NULL};
    if (slices > 1) r.units = sm->ranges < 8u * t ? (unsigned)sm->ranges : 8u * t;
    eng_job_options jo = {t, mem, cancel};
    eng_job *job = NULL;
    unsigned dep = ~0u;
    st = eng_job_create(&jo, &job);
    if (!st) st = add(job, &r, "join histogram", histogram, 2u * slices, prefix, &dep);
    if (!st) st = add(job, &r, "join range partition", scatter, 2u * slices, NULL, &dep);
    if (!st) st = add(job, &r, "join sort", sort, 2u * r.units, tasks, &dep);
    if (!st) st = eng_sched_run(sched, job);
    eng_job_free(job);
    sto_status late = atomic_exchange(&r.err, NULL);
    if (late && !st)
        st = late;
    else
        sto_status_free(late);
    return st;
}
