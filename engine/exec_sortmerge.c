/*
 * exec_sortmerge.c — a sort-merge join's partitioning and sorting steps as
 * one scheduler job (exec_sortmerge.h).
 *
 * As in exec_radix.c, every step is a pipeline over a fixed number of
 * units, one unit per morsel: units [0, n) of a two-sided step are the
 * build side's, [n, 2n) the probe side's.
 */
#include "engine/exec_sortmerge.h"

#include "engine/exec_job.h"

typedef struct sm_run {
    eng_step_job steps; /* first: the steps' error hook finds it at ctx */
    eng_sm_join *sm;
    uint8_t *gathered;
    unsigned slices, units;
} sm_run;

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
        if (st) return eng_step_fail(&r->steps, st);
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
            if (st) return eng_step_fail(&r->steps, st);
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
    return st ? eng_step_fail(&r->steps, st) : 0;
}

sto_status eng_exec_sm_partition(eng_sched *sched, unsigned threads, eng_mem *mem,
                                 atomic_int *cancel, eng_sm_join *sm, eng_join_mat *build_m,
                                 unsigned nb, eng_join_mat *probe_m, unsigned np,
                                 uint8_t **gathered)
{
    *gathered = NULL;
    eng_join_mat **bm = NULL, **pm = NULL;
    sto_status st = eng_join_mats_ptrs(build_m, nb, &bm);
    if (!st) st = eng_join_mats_ptrs(probe_m, np, &pm);
    unsigned t = threads ? threads : 1;
    unsigned slices = eng_join_slices(build_m, nb, probe_m, np, t);
    if (!st) st = eng_sm_init(sm, bm, nb, pm, np, NULL, NULL, NULL, slices, 0, mem);
    free(bm);
    free(pm);
    if (!st) st = eng_sm_sample(sm);
    if (!st && sm->probe.count)
        st = eng_mem_alloc(mem, sm->probe.count * sm->probe.stride, -1, (void **)gathered);
    if (st) return st;
    sm_run r = {.sm = sm, .gathered = *gathered, .slices = slices, .units = 1};
    if (slices > 1) r.units = sm->ranges < 8u * t ? (unsigned)sm->ranges : 8u * t;
    st = eng_step_job_begin(&r.steps, "sort-merge join", t, mem, cancel);
    if (!st) st = eng_step_add(&r.steps, &r, "join histogram", histogram, 2u * slices, prefix);
    if (!st) st = eng_step_add(&r.steps, &r, "join range partition", scatter, 2u * slices, NULL);
    if (!st) st = eng_step_add(&r.steps, &r, "join sort", sort, 2u * r.units, tasks);
    return eng_step_job_run(&r.steps, sched, st);
}
