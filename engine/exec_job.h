/*
 * exec_job.h — what the middle steps of a partitioned join have in common
 * when they run on the scheduler as one job (exec_radix.c, exec_sortmerge.c).
 *
 *   per-worker eng_join_mats ─eng_join_mats_ptrs, eng_join_slices─► the
 *   join's init ─► eng_step_job_begin ─► eng_step_add (each step depends
 *   on the one before) ─► eng_step_job_run ─► the first error, if any
 *
 * Each step is a pipeline over a fixed number of units, one unit per
 * morsel. A step that fails keeps its sto_status in the job's `err` (the
 * scheduler carries only an int code), and the pipeline's error hook hands
 * it back. The join's run struct, the ctx of every step, starts with an
 * eng_step_job so that the hook finds it.
 */
#ifndef RACKDB_ENGINE_EXEC_JOB_H
#define RACKDB_ENGINE_EXEC_JOB_H

#include <stdatomic.h>
#include <stdlib.h>

#include "engine/rt_join.h"
#include "engine/sched.h"

typedef struct eng_step_job {
    _Atomic(sto_status) err; /* the first failure of a step */
    const char *what;        /* the join, for an error without a status */
    eng_job *job;
    unsigned last; /* the id of the last step added; ~0u: none yet */
} eng_step_job;

/* Keeps st as the job's error unless one is kept already (st is then freed). */
static inline int eng_step_fail(eng_step_job *j, sto_status st)
{
    sto_status expected = NULL;
    if (!atomic_compare_exchange_strong(&j->err, &expected, st)) sto_status_free(st);
    return ENG_RC_INTERNAL_ERROR;
}

/* The pipelines' error hook: ctx is a run struct that starts with an
 * eng_step_job. */
static inline sto_status eng_step_error(void *ctx, void *state, int rc)
{
    (void)state;
    eng_step_job *j = ctx;
    sto_status st = atomic_exchange(&j->err, NULL);
    return st ? st : sto_error(STO_INTERNAL_ERROR, "%s step failed (%d)", j->what, rc);
}

static inline sto_status eng_step_job_begin(eng_step_job *j, const char *what, unsigned threads,
                                            eng_mem *mem, atomic_int *cancel)
{
    atomic_init(&j->err, NULL);
    j->what = what;
    j->job = NULL;
    j->last = ~0u;
    eng_job_options jo = {threads, mem, cancel};
    return eng_job_create(&jo, &j->job);
}

/* Adds a step of `units` morsels after the last one; ctx starts with j. */
static inline sto_status eng_step_add(eng_step_job *j, void *ctx, const char *name,
                                      eng_morsel_fn fn, uint64_t units, eng_finalize_fn fin)
{
    eng_pipeline p = {
        .name = name,
        .run = fn,
        .ctx = ctx,
        .rows = units,
        .morsel_rows = 1,
        .state_size = 8,
        .finalize = fin,
        .error = eng_step_error,
    };
    unsigned id;
    sto_status st = eng_job_add(j->job, &p, &j->last, j->last == ~0u ? 0 : 1, &id);
    if (!st) j->last = id;
    return st;
}

/* Runs the job unless st (the status of adding its steps) is an error,
 * frees it and returns st, the job's status or a step's error. */
static inline sto_status eng_step_job_run(eng_step_job *j, eng_sched *sched, sto_status st)
{
    if (!st) st = eng_sched_run(sched, j->job);
    eng_job_free(j->job);
    j->job = NULL;
    sto_status late = atomic_exchange(&j->err, NULL);
    if (late && !st)
        st = late;
    else
        sto_status_free(late);
    return st;
}

/* Pointers to mats[0..n), as the joins' init functions take them
 * (malloc'd: free() it). */
static inline sto_status eng_join_mats_ptrs(eng_join_mat *mats, unsigned n, eng_join_mat ***out)
{
    *out = malloc((n ? n : 1) * sizeof(**out));
    if (!*out) return sto_error_oom();
    for (unsigned i = 0; i < n; i++)
        (*out)[i] = &mats[i];
    return STO_OK;
}

/* Slices of the first pass over both sides with `threads` workers: a few
 * per worker so a slow one is made up for; one for small inputs, where the
 * steps' start-up would cost more than they save. */
static inline unsigned eng_join_slices(const eng_join_mat *build, unsigned nb,
                                       const eng_join_mat *probe, unsigned np, unsigned threads)
{
    uint64_t tuples = 0;
    for (unsigned i = 0; i < nb; i++)
        tuples += build[i].count;
    for (unsigned i = 0; i < np; i++)
        tuples += probe[i].count;
    return threads > 1 && tuples >= 65536 ? 4 * threads : 1;
}

#endif
