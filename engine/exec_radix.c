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

#include <stdlib.h>
#include <string.h>

typedef struct radix_run {
    eng_radix_join *rj;
    unsigned slices, units;
    _Atomic(sto_status) err;
} radix_run;

static int fail(radix_run *r, sto_status st)
{
    sto_status expected = NULL;
    if (!atomic_compare_exchange_strong(&r->err, &expected, st)) sto_status_free(st);
    return ENG_RC_INTERNAL_ERROR;
}

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
        if (st) return fail(r, st);
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
            if (st) return fail(r, st);
        }
    }
    return 0;
}

static int tasks(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    radix_run *r = ctx;
    sto_status st = eng_radix_tasks(r->rj);
    return st ? fail(r, st) : 0;
}

static sto_status step_error(void *ctx, void *state, int rc)
{
    (void)state;
    radix_run *r = ctx;
    sto_status st = atomic_exchange(&r->err, NULL);
    return st ? st : sto_error(STO_INTERNAL_ERROR, "radix join step failed (%d)", rc);
}

static sto_status add(eng_job *job, radix_run *r, const char *name, eng_morsel_fn fn,
                      uint64_t units, eng_finalize_fn fin, unsigned *dep)
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

sto_status eng_exec_radix_partition(eng_sched *sched, unsigned threads, eng_mem *mem,
                                    atomic_int *cancel, eng_radix_join *rj, eng_join_mat *build_m,
                                    unsigned nb, eng_join_mat *probe_m, unsigned np, int bits)
{
    eng_join_mat **bm = malloc((nb ? nb : 1) * sizeof(*bm));
    eng_join_mat **pm = malloc((np ? np : 1) * sizeof(*pm));
    sto_status st = bm && pm ? STO_OK : sto_error_oom();
    for (unsigned i = 0; !st && i < nb; i++)
        bm[i] = &build_m[i];
    for (unsigned i = 0; !st && i < np; i++)
        pm[i] = &probe_m[i];
    unsigned t = threads ? threads : 1;
    /* A few slices per worker so a slow one is made up for; one for small
     * inputs, where the steps' start-up would cost more than they save. */
    unsigned slices = 1;
    if (!st) {
        uint64_t tuples = 0;
        for (unsigned i = 0; i < nb; i++)
            tuples += build_m[i].count;
        for (unsigned i = 0; i < np; i++)
            tuples += probe_m[i].count;
        if (t > 1 && tuples >= 65536) slices = 4 * t;
        st = eng_radix_init(rj, bm, nb, pm, np, slices, bits, mem);
    }
    free(bm);
    free(pm);
    if (st) return st;
    radix_run r = {rj, slices, 1, NULL};
    if (slices > 1) r.units = rj->parts < 8u * t ? (unsigned)rj->parts : 8u * t;
    eng_job_options jo = {t, mem, cancel};
    eng_job *job = NULL;
    unsigned dep = ~0u;
    st = eng_job_create(&jo, &job);
    if (!st) st = add(job, &r, "join histogram", histogram, 2u * slices, prefix, &dep);
    if (!st) st = add(job, &r, "join partition", scatter, 2u * slices, NULL, &dep);
    if (!st && rj->bits2) st = add(job, &r, "join second pass", refine, 2u * r.units, NULL, &dep);
    if (!st) st = add(job, &r, "join partition tables", build, r.units, tasks, &dep);
    if (!st) st = eng_sched_run(sched, job);
    eng_job_free(job);
    sto_status late = atomic_exchange(&r.err, NULL);
    if (late && !st)
        st = late;
    else
        sto_status_free(late);
    return st;
}
