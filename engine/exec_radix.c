/*
 * exec_radix.c — a radix join's partitioning steps as one scheduler job
 * (exec_radix.h).
 *
 * Every step is a pipeline over a fixed number of units, one unit per
 * morsel: the first-pass steps over input slices of both sides (units
 * [0, slices) are the build side's, [slices, 2 slices) the probe side's),
 * the per-partition steps over equal shares of the partitions. Steps that
 * need every worker's output — prefix sums, the task list — are the
 * finalize of the step before.
 */
#include "engine/exec_radix.h"

#include "engine/exec_job.h"

typedef struct radix_run {
    eng_step_job steps; /* first: the steps' error hook finds it at ctx */
    eng_radix_join *rj;
    unsigned slices, units;
} radix_run;

static eng_radix_side *side_of(radix_run *r, uint64_t u, unsigned per)
{
    return u < per ? &r->rj->build : &r->rj->probe;
}

static int histogram(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    radix_run *r = ctx;
    for (uint64_t u = b; u < e; u++)
        eng_radix_histogram(r->rj, side_of(r, u, r->slices), (unsigned)(u % r->slices));
    return 0;
}

static int prefix(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    eng_radix_prefix(((radix_run *)ctx)->rj);
    return 0;
}

static int scatter(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    radix_run *r = ctx;
    for (uint64_t u = b; u < e; u++) {
        sto_status st =
            eng_radix_scatter(r->rj, side_of(r, u, r->slices), (unsigned)(u % r->slices));
        if (st) return eng_step_fail(&r->steps, st);
    }
    return 0;
}

static int refine(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    radix_run *r = ctx;
    uint64_t parts1 = (uint64_t)1 << r->rj->bits1;
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        eng_join_slice(parts1, u % r->units, r->units, &lo, &hi);
        for (uint64_t p = lo; p < hi; p++)
            eng_radix_refine(r->rj, side_of(r, u, r->units), p);
    }
    return 0;
}

static int build(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    radix_run *r = ctx;
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        eng_join_slice(r->rj->parts, u, r->units, &lo, &hi);
        for (uint64_t p = lo; p < hi; p++) {
            sto_status st = eng_radix_build(r->rj, p);
            if (st) return eng_step_fail(&r->steps, st);
        }
    }
    return 0;
}

static int tasks(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    radix_run *r = ctx;
    sto_status st = eng_radix_tasks(r->rj);
    return st ? eng_step_fail(&r->steps, st) : 0;
}

sto_status eng_exec_radix_partition(eng_sched *sched, unsigned threads, eng_mem *mem,
                                    atomic_int *cancel, eng_radix_join *rj, eng_join_mat *build_m,
                                    unsigned nb, eng_join_mat *probe_m, unsigned np, int bits)
{
    eng_join_mat **bm = NULL, **pm = NULL;
    sto_status st = eng_join_mats_ptrs(build_m, nb, &bm);
    if (!st) st = eng_join_mats_ptrs(probe_m, np, &pm);
    unsigned t = threads ? threads : 1;
    unsigned slices = eng_join_slices(build_m, nb, probe_m, np, t);
    if (!st) st = eng_radix_init(rj, bm, nb, pm, np, slices, bits, mem);
    free(bm);
    free(pm);
    if (st) return st;
    radix_run r = {.rj = rj, .slices = slices, .units = 1};
    if (slices > 1) r.units = rj->parts < 8u * t ? (unsigned)rj->parts : 8u * t;
    st = eng_step_job_begin(&r.steps, "radix join", t, mem, cancel);
    if (!st) st = eng_step_add(&r.steps, &r, "join histogram", histogram, 2u * slices, prefix);
    if (!st) st = eng_step_add(&r.steps, &r, "join partition", scatter, 2u * slices, NULL);
    if (!st && rj->bits2)
        st = eng_step_add(&r.steps, &r, "join second pass", refine, 2u * r.units, NULL);
    if (!st) st = eng_step_add(&r.steps, &r, "join partition tables", build, r.units, tasks);
    return eng_step_job_run(&r.steps, sched, st);
}
