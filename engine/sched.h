/*
 * sched.h — the morsel-driven worker pool that runs query pipelines.
 *
 * One eng_sched per instance: a worker thread per allowed core, each pinned
 * to its core and knowing its NUMA node. A query hands the pool an eng_job:
 * a small DAG of pipelines. A pipeline is a function over a row range (or
 * over a table's chunks) that the pool cuts into morsels of some thousand
 * rows; each worker calls it on one morsel at a time with its own
 * per-worker state (the pipeline breaker's thread-local hash table,
 * pre-aggregate, sort run ...). When every morsel is done, the pipeline's
 * finalize step merges those states, itself cut into morsels over
 * partitions so the merge is parallel too. Then the pipelines that depended
 * on it start.
 *
 *   eng_job_add(job, &pipeline, deps)  ─┐
 *   eng_sched_submit(pool, job)        ─┼─► workers: morsels of every ready
 *   eng_job_wait(job) → status         ◄┘   pipeline, then its finalize
 *
 * Each pipeline's morsels are dealt out up front: every worker gets a
 * contiguous share, from chunks on its own NUMA node where the chunks say
 * where they live. A worker takes morsels from the front of its share and,
 * when it is empty, steals half of what another worker has left (same node
 * first). Shares are single 64-bit words changed with compare-and-swap; no
 * lock is taken per morsel.
 *
 * Jobs share the pool: a worker that looks for work picks the job with the
 * fewest workers (up to the job's `threads`), the least recently served
 * first; workers look again whenever a job arrives, a pipeline starts or a
 * job ends, and every few morsels while more than one job runs, so a short
 * query is served while a long one runs. Idle workers sleep on a condition
 * variable.
 *
 * A job stops at its first error (later ones are dropped) or when its
 * cancel flag is set; the flag is checked before every morsel, so a worker
 * finishes at most the morsel it is in. Setting the flag is a single atomic
 * store and may be done from a signal handler.
 */
#ifndef RACKDB_ENGINE_SCHED_H
#define RACKDB_ENGINE_SCHED_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/mem.h"
#include "storage/status.h"

typedef struct eng_sched eng_sched;
typedef struct eng_job eng_job;

/* Return codes of pipeline functions: 0 = success, otherwise one of these,
 * one per SQLSTATE rackdb knows (ENG_RC_DIVISION_BY_ZERO ...). */
#define ENG_RC_DEFINE_(name, code) ENG_RC_##name,
enum { STO_SQLSTATE_LIST(ENG_RC_DEFINE_) ENG_RC_COUNT_ };
#undef ENG_RC_DEFINE_

/* The SQLSTATE of a return code ("XX000" for unknown codes). */
const char *eng_rc_sqlstate(int rc);

/* Morsel positions of chunked pipelines: the chunk index in the high 32 bits,
 * the row inside the chunk in the low 32. A morsel never crosses a chunk, so
 * begin and end share the chunk. Plain ranges use row numbers as they are. */
#define ENG_MORSEL_POS(chunk, row) (((uint64_t)(chunk) << 32) | (uint64_t)(row))
#define ENG_MORSEL_CHUNK(pos)      ((uint32_t)((pos) >> 32))
#define ENG_MORSEL_ROW(pos)        ((uint32_t)(pos))

/* The worker a state belongs to. */
typedef struct eng_worker_info {
    unsigned id; /* 0 .. pool threads - 1 */
    int cpu;     /* the core it is pinned to, -1 when pinning failed */
    int node;    /* its NUMA node (0 without NUMA support) */
    /* Its reservation cache for the job's tracker (NULL without one). Only
     * this worker's morsels may use it; memory reserved through it and freed
     * elsewhere (state_destroy, finalize) is released on mem->mem directly.
     * The pool flushes the cache when the job completes. */
    eng_mem_cache *mem;
} eng_worker_info;

/* One morsel of a pipeline: rows [begin, end) of the input. 0 or an ENG_RC_. */
typedef int (*eng_morsel_fn)(void *ctx, void *worker_state, uint64_t begin, uint64_t end);

/* Finalize partitions [part_begin, part_end) from the states of every worker
 * that ran a morsel (n_states may be 0 for an empty input). */
typedef int (*eng_finalize_fn)(void *ctx, void *const *states, unsigned n_states,
                               uint64_t part_begin, uint64_t part_end);

typedef struct eng_pipeline {
    const char *name; /* for errors and EXPLAIN ANALYZE */
    eng_morsel_fn run;
    void *ctx;

    /* Input: `rows` rows, or (n_chunks > 0) chunks of chunk_rows[i] rows,
     * chunk i on NUMA node chunk_nodes[i] (chunk_nodes NULL or -1 = unknown).
     * The arrays are copied. */
    uint64_t rows;
    unsigned n_chunks;
    const uint32_t *chunk_rows;
    const int *chunk_nodes;
    /* Rows per morsel; 0 = the pool's size, shrunk for small inputs so each
     * worker still gets a few morsels (never below 1024 rows). */
    uint32_t morsel_rows;

    /* Per-worker state: state_size bytes (64-byte aligned, zeroed, on the
     * worker's node, charged to the job's tracker), made when a worker first
     * runs a morsel of this pipeline; state_init (optional) fills it in.
     * state_destroy (optional) runs after finalize, before the memory goes. */
    size_t state_size;
    sto_status (*state_init)(void *ctx, void *state, const eng_worker_info *worker);
    void (*state_destroy)(void *ctx, void *state);

    /* Optional: runs once all morsels are done, over finalize_parts
     * partitions (0 or 1 = a single call), one partition per morsel. */
    eng_finalize_fn finalize;
    uint64_t finalize_parts;

    /* Optional: the error for a nonzero return code of run/finalize (the
     * pipeline may have left details in its state); by default a message is
     * made from the code. `state` is NULL for finalize. */
    sto_status (*error)(void *ctx, void *state, int rc);
} eng_pipeline;

typedef struct eng_sched_options {
    unsigned threads;     /* worker threads; 0 = one per core we may run on */
    uint32_t morsel_rows; /* default morsel size; 0 = 16384 */
    int no_pinning;       /* nonzero: leave threads unpinned */
} eng_sched_options;

/* Starts the pool (opt may be NULL). */
sto_status eng_sched_create(const eng_sched_options *opt, eng_sched **out);

/* Cancels running jobs, waits for them and joins every worker. */
void eng_sched_destroy(eng_sched *s);

unsigned eng_sched_threads(const eng_sched *s);

/* Where worker i runs (info.mem is NULL here). */
eng_worker_info eng_sched_worker(const eng_sched *s, unsigned i);

typedef struct eng_job_options {
    unsigned threads;   /* most workers at once; 0 = the whole pool */
    eng_mem *mem;       /* tracker for per-worker states; NULL = none */
    atomic_int *cancel; /* the query's cancel flag (its owner clears it before the
                         * next statement); NULL = the job's own */
} eng_job_options;

/* A new, empty job (opt may be NULL). */
sto_status eng_job_create(const eng_job_options *opt, eng_job **out);

/* Adds a pipeline that starts once the pipelines deps[0..n_deps) (ids from
 * earlier calls) have finalized; its id goes to *id (may be NULL). Only
 * before submission. The pipeline struct is copied; ctx must outlive the job. */
sto_status eng_job_add(eng_job *job, const eng_pipeline *p, const unsigned *deps, unsigned n_deps,
                       unsigned *id);

/* Starts the job on the pool; a job is submitted once. */
sto_status eng_sched_submit(eng_sched *s, eng_job *job);

/* Blocks until the job has finished; returns its status, which the caller
 * now owns (a second call returns STO_OK). Cancelled jobs report 57014. */
sto_status eng_job_wait(eng_job *job);

/* eng_sched_submit then eng_job_wait. */
sto_status eng_sched_run(eng_sched *s, eng_job *job);

/* Asks the job to stop. Async-signal-safe: one atomic store. */
void eng_job_cancel(eng_job *job);

/* The flag eng_job_cancel sets (the query's, or the job's own). */
atomic_int *eng_job_cancel_flag(eng_job *job);

typedef struct eng_job_stats {
    uint64_t morsels; /* morsels run (finalize partitions included) */
    uint64_t steals;  /* successful steals */
    unsigned workers; /* distinct workers that ran a morsel */
} eng_job_stats;

/* Counters of a finished job. */
eng_job_stats eng_job_get_stats(const eng_job *job);

/* Frees a job. A submitted job that is still running is cancelled and
 * waited for first. */
void eng_job_free(eng_job *job);

#endif
