/*
 * compile_pool.h — compiling a query's pipelines ahead, on threads of their
 * own, while earlier pipelines compile or run.
 *
 * A query's pipelines run one after another, and each used to be compiled
 * just before it ran: on a machine with idle cores the query waited for
 * every compile in turn. Most pipelines can be described (and their compile
 * mode chosen) before the query starts, so the executor hands them to this
 * pool at the start; its threads compile them (OPT ones first, see Order),
 * and when the query reaches a pipeline it takes the code, waiting only for
 * what is left of that compile. A pipeline nobody has started compiling yet is
 * compiled by the caller itself, so a query never waits behind a queue.
 *
 *   executor: cg_compile_submit(desc, mode) for pipelines 2..n
 *     → pool thread: cg_pipeline_compile() (pipeline.h; the JIT is
 *       thread-safe, jit.h) → task done
 *   executor, at pipeline i: cg_compile_task_finish() → code (compiles it
 *     here if still queued, else waits) → runs it
 *   on an error: cg_compile_task_cancel() for every task not finished
 *
 * Order: pool threads take OPT tasks first, then FAST ones, each first
 * come, first served; a query queues its pipelines in the order they run.
 * An OPT compile is long and what a query would wait for; a FAST one is
 * short, and the query compiles it itself if no thread has started it
 * (RACKDB_JIT_OPT_FIRST=off, read when the pool is created, keeps the
 * queue's order, for measurement).
 * A task whose mode rests on a guess (the size of an earlier pipeline's
 * output) can be queued held: no pool thread starts it until its owner,
 * knowing the size, releases it with the right mode, so no compile is
 * spent optimizing code for an input that turns out tiny.
 * A caller waiting for a task a pool thread is compiling fills the wait
 * with queued FAST tasks only (compile_pool.c says why).
 *
 * A task's description and everything it points to (the plan, its
 * expressions, tables, join tables) must stay valid and unchanged until the
 * task is finished or cancelled. One pool per engine instance serves all
 * its queries.
 */
#ifndef RACKDB_CODEGEN_COMPILE_POOL_H
#define RACKDB_CODEGEN_COMPILE_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/jit.h"
#include "codegen/pipeline.h"
#include "storage/status.h"

typedef struct cg_compile_pool cg_compile_pool;
typedef struct cg_compile_task cg_compile_task;

/* Counters a test or a monitoring view can read. */
typedef struct cg_compile_pool_counters {
    uint64_t by_pool;   /* tasks compiled on the pool's threads */
    uint64_t by_caller; /* tasks the finishing caller compiled itself */
    uint64_t cancelled; /* tasks cancelled before anyone compiled them */
} cg_compile_pool_counters;

/* Starts `threads` (at least 1) compile threads for `jit`. */
sto_status cg_compile_pool_create(cg_jit *jit, unsigned threads, cg_compile_pool **out);

/* Stops the threads and frees the pool. Every task must have been finished
 * or cancelled. NULL-safe. */
void cg_compile_pool_destroy(cg_compile_pool *pool);

/* Queues compiling *d in `mode`; the description is copied, what it points
 * to is not (see above). */
sto_status cg_compile_submit(cg_compile_pool *pool, const cg_pipeline_desc *d, cg_mode mode,
                             cg_compile_task **out);

/* Like cg_compile_submit, but held: pool threads leave the task alone until
 * cg_compile_task_release; cg_compile_task_finish compiles it regardless. */
sto_status cg_compile_submit_held(cg_compile_pool *pool, const cg_pipeline_desc *d, cg_mode mode,
                                  cg_compile_task **out);

/* Lets pool threads take a held task, compiling it in `mode`. Does nothing
 * to a task not held or already started. */
void cg_compile_task_release(cg_compile_task *t, cg_mode mode);

/* The mode the task compiles in. */
cg_mode cg_compile_task_mode(cg_compile_task *t);

/* Whether a thread has started compiling the task (or finished). */
bool cg_compile_task_started(cg_compile_task *t);

/* Drops the task if nobody has started it, and returns true; otherwise
 * returns false and leaves it as it was (finish or cancel it as usual). */
bool cg_compile_task_withdraw(cg_compile_task *t);

/* Whether the task's code is ready: cg_compile_task_finish would not wait
 * or compile. */
bool cg_compile_task_done(cg_compile_task *t);

/* Takes the task's code into *out (compiling it on this thread when no pool
 * thread has started it, else waiting for it) and frees the task; returns
 * the compile's status. out->compile_us is the compile's own duration,
 * wherever it ran. */
sto_status cg_compile_task_finish(cg_compile_task *t, cg_pipeline_code *out);

/* Like cg_compile_task_finish, but never compiles another task while a
 * pool thread compiles this one: for a caller whose core the running
 * compile should have to itself (an adaptive start's waiting worker,
 * engine/executor.c). */
sto_status cg_compile_task_await(cg_compile_task *t, cg_pipeline_code *out);

/* Whether a pool thread is waiting for work (and the pool not paused): a
 * task queued now starts at once. */
bool cg_compile_pool_has_idle_thread(cg_compile_pool *pool);

/* Drops the task: unqueues it, or waits for a running compile to end, and
 * frees its code. NULL-safe. */
void cg_compile_task_cancel(cg_compile_task *t);

/* When the task was started among all the pool's tasks: 1 for the first,
 * 2 for the next, ...; 0 while nobody has. For tests of the order. */
uint64_t cg_compile_task_start_seq(cg_compile_task *t);

void cg_compile_pool_get_counters(cg_compile_pool *pool, cg_compile_pool_counters *out);

/* While paused, pool threads start no task (one they are compiling
 * finishes); callers of cg_compile_task_finish still compile. Lets a test
 * fix which thread compiles what. */
void cg_compile_pool_pause(cg_compile_pool *pool, bool paused);

#endif
