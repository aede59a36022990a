/*
 * compile_pool.c — threads that compile pipelines ahead of their run (see
 * compile_pool.h).
 *
 * One lock guards the queue and every task's state. A task moves
 * QUEUED → RUNNING → DONE exactly once; whoever moves it to RUNNING (a pool
 * thread, or the owner finishing a task still queued) compiles it without
 * the lock and moves it to DONE. Only the owner frees a task, after seeing
 * DONE, so a pool thread never touches a task once it has published it.
 */
#include "codegen/compile_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef enum task_state { TASK_QUEUED, TASK_RUNNING, TASK_DONE } task_state;

struct cg_compile_task {
    cg_compile_pool *pool;
    cg_compile_task *next; /* in the queue while QUEUED */
    cg_pipeline_desc desc;
    cg_mode mode;
    bool held; /* queued, but only its owner may start it (see _submit_held) */
    task_state state;
    uint64_t start_seq; /* 1 for the pool's first task started, 2 ... */
    sto_status st;
    cg_pipeline_code code;
};

struct cg_compile_pool {
    cg_jit *jit;
    pthread_mutex_t lock;
    pthread_cond_t work; /* a task was queued, or the pool stops */
    pthread_cond_t done; /* a task became DONE */
    cg_compile_task *head, *tail;
    bool stopping;
    bool paused;       /* pool threads start nothing (cg_compile_pool_pause) */
    unsigned nthreads; /* started */
    uint64_t started;  /* tasks moved to RUNNING, ever */
    unsigned idle;     /* threads waiting for a task */
    bool fifo;         /* RACKDB_JIT_OPT_FIRST=off: all in queue order */
    pthread_t *threads;
    cg_compile_pool_counters counters;
};

/* Unlinks t from the queue. Caller holds the lock; t is QUEUED. */
static void unqueue(cg_compile_pool *pool, cg_compile_task *t)
{
    cg_compile_task **pp = &pool->head;
    cg_compile_task *prev = NULL;
    while (*pp && *pp != t) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp) return;
    *pp = t->next;
    if (pool->tail == t) pool->tail = prev;
    t->next = NULL;
}

/* Compiles a task this thread moved to RUNNING, then publishes it. */
static void run_task(cg_compile_pool *pool, cg_compile_task *t)
{
    t->st = cg_pipeline_compile(pool->jit, &t->desc, t->mode, &t->code);
    pthread_mutex_lock(&pool->lock);
    t->state = TASK_DONE;
    pthread_cond_broadcast(&pool->done);
    pthread_mutex_unlock(&pool->lock);
}

/* The next queued task a thread other than its owner may start: not held
 * and, for a caller filling a wait (fast_only), a FAST one. A pool thread
 * takes the first OPT task before any FAST one: an OPT compile takes ten
 * to fifty times as long, so it is what a query ends up waiting for unless
 * it starts early, while a FAST one that nobody has started when its
 * pipeline comes is compiled by the query itself in a millisecond or two
 * (TPC-H Q8 waited 37 ms for its lineitem pipeline's OPT code, which the
 * pool started only after four FAST compiles of the small pipelines before
 * it). RACKDB_JIT_OPT_FIRST=off in the environment when the pool is
 * created keeps the queue's order, for measurement. Caller holds the
 * lock. */
static cg_compile_task *next_task(cg_compile_pool *pool, bool fast_only)
{
    cg_compile_task *first = NULL;
    for (cg_compile_task *t = pool->head; t; t = t->next) {
        if (t->held || (fast_only && t->mode != CG_MODE_FAST)) continue;
        if (fast_only || pool->fifo || t->mode == CG_MODE_OPT) return t;
        if (!first) first = t;
    }
    return first;
}

/* Moves t, which this thread took from the queue, to RUNNING. Caller holds
 * the lock. */
static void start_task(cg_compile_pool *pool, cg_compile_task *t, bool by_pool)
{
    unqueue(pool, t);
    t->state = TASK_RUNNING;
    t->start_seq = ++pool->started;
    if (by_pool)
        pool->counters.by_pool++;
    else
        pool->counters.by_caller++;
}

static void *pool_thread(void *arg)
{
    cg_compile_pool *pool = arg;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        cg_compile_task *t = NULL;
        while (!pool->stopping && (pool->paused || !(t = next_task(pool, false)))) {
            pool->idle++;
            pthread_cond_wait(&pool->work, &pool->lock);
            pool->idle--;
        }
        if (pool->stopping) break;
        start_task(pool, t, true);
        pthread_mutex_unlock(&pool->lock);
        run_task(pool, t);
        pthread_mutex_lock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

sto_status cg_compile_pool_create(cg_jit *jit, unsigned threads, cg_compile_pool **out)
{
    *out = NULL;
    if (threads < 1) threads = 1;
    cg_compile_pool *pool = calloc(1, sizeof(*pool));
    if (!pool) return sto_error_oom();
    pool->threads = calloc(threads, sizeof(*pool->threads));
    if (!pool->threads) {
        free(pool);
        return sto_error_oom();
    }
    pool->jit = jit;
    const char *opt_first = getenv("RACKDB_JIT_OPT_FIRST");
    pool->fifo = opt_first && strcmp(opt_first, "off") == 0;
    bool have_lock = pthread_mutex_init(&pool->lock, NULL) == 0;
    bool have_work = have_lock && pthread_cond_init(&pool->work, NULL) == 0;
    bool have_done = have_work && pthread_cond_init(&pool->done, NULL) == 0;
    if (!have_done) {
        if (have_work) pthread_cond_destroy(&pool->work);
        if (have_lock) pthread_mutex_destroy(&pool->lock);
        free(pool->threads);
        free(pool);
        return sto_error(STO_INTERNAL_ERROR, "codegen: cannot create the compile pool's locks");
    }
    for (unsigned i = 0; i < threads; i++) {
        if (pthread_create(&pool->threads[i], NULL, pool_thread, pool) != 0) break;
        pool->nthreads++;
    }
    if (pool->nthreads == 0) {
        cg_compile_pool_destroy(pool);
        return sto_error(STO_INTERNAL_ERROR, "codegen: cannot start a compile thread");
    }
    *out = pool;
    return STO_OK;
}

void cg_compile_pool_destroy(cg_compile_pool *pool)
{
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->work);
    pthread_cond_destroy(&pool->done);
    pthread_mutex_destroy(&pool->lock);
    free(pool->threads);
    free(pool);
}

static sto_status submit(cg_compile_pool *pool, const cg_pipeline_desc *d, cg_mode mode, bool held,
                         cg_compile_task **out)
{
    *out = NULL;
    cg_compile_task *t = calloc(1, sizeof(*t));
    if (!t) return sto_error_oom();
    t->pool = pool;
    t->desc = *d;
    t->mode = mode;
    t->held = held;
    t->state = TASK_QUEUED;
    pthread_mutex_lock(&pool->lock);
    if (pool->tail)
        pool->tail->next = t;
    else
        pool->head = t;
    pool->tail = t;
    if (!held) pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    *out = t;
    return STO_OK;
}

sto_status cg_compile_submit(cg_compile_pool *pool, const cg_pipeline_desc *d, cg_mode mode,
                             cg_compile_task **out)
{
    return submit(pool, d, mode, false, out);
}

sto_status cg_compile_submit_held(cg_compile_pool *pool, const cg_pipeline_desc *d, cg_mode mode,
                                  cg_compile_task **out)
{
    return submit(pool, d, mode, true, out);
}

void cg_compile_task_release(cg_compile_task *t, cg_mode mode)
{
    cg_compile_pool *pool = t->pool;
    pthread_mutex_lock(&pool->lock);
    if (t->state == TASK_QUEUED && t->held) {
        t->held = false;
        t->mode = mode;
        pthread_cond_signal(&pool->work);
    }
    pthread_mutex_unlock(&pool->lock);
}

bool cg_compile_task_withdraw(cg_compile_task *t)
{
    cg_compile_pool *pool = t->pool;
    pthread_mutex_lock(&pool->lock);
    bool queued = t->state == TASK_QUEUED;
    if (queued) {
        unqueue(pool, t);
        pool->counters.cancelled++;
    }
    pthread_mutex_unlock(&pool->lock);
    if (queued) free(t);
    return queued;
}

bool cg_compile_task_started(cg_compile_task *t)
{
    pthread_mutex_lock(&t->pool->lock);
    bool started = t->state != TASK_QUEUED;
    pthread_mutex_unlock(&t->pool->lock);
    return started;
}

void cg_compile_pool_pause(cg_compile_pool *pool, bool paused)
{
    pthread_mutex_lock(&pool->lock);
    pool->paused = paused;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
}

cg_mode cg_compile_task_mode(cg_compile_task *t)
{
    pthread_mutex_lock(&t->pool->lock);
    cg_mode mode = t->mode; /* cg_compile_task_release may change it */
    pthread_mutex_unlock(&t->pool->lock);
    return mode;
}

bool cg_compile_task_done(cg_compile_task *t)
{
    pthread_mutex_lock(&t->pool->lock);
    bool done = t->state == TASK_DONE;
    pthread_mutex_unlock(&t->pool->lock);
    return done;
}

/* Waits until t is DONE, compiling it here if it is still queued (held or
 * not). While a pool thread compiles t, the caller compiles the next queued
 * FAST task rather than sleep: the queue is in pipeline order, so that is
 * code its own query (or a neighbour) needs soon, and a machine with few
 * cores keeps all of them compiling while a query can do nothing else.
 * Only FAST ones: an OPT compile cannot be interrupted when t is done, and
 * one of tens of milliseconds started here kept TPC-H Q10 waiting 71 ms for
 * a pipeline whose own compile took 14 (pipeline 3 waited for pipeline 4's
 * code); a FAST compile takes a millisecond or two. */
static void settle(cg_compile_task *t, bool finishing, bool fill)
{
    cg_compile_pool *pool = t->pool;
    pthread_mutex_lock(&pool->lock);
    if (t->state == TASK_QUEUED) {
        if (finishing) {
            start_task(pool, t, false);
            pthread_mutex_unlock(&pool->lock);
            run_task(pool, t);
            return;
        }
        unqueue(pool, t);
        t->state = TASK_DONE;
        pool->counters.cancelled++;
    }
    while (t->state != TASK_DONE) {
        cg_compile_task *next = finishing && fill ? next_task(pool, true) : NULL;
        if (!next) {
            pthread_cond_wait(&pool->done, &pool->lock);
            continue;
        }
        start_task(pool, next, false);
        pthread_mutex_unlock(&pool->lock);
        run_task(pool, next);
        pthread_mutex_lock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
}

static sto_status take(cg_compile_task *t, bool fill, cg_pipeline_code *out)
{
    settle(t, true, fill);
    sto_status st = t->st;
    *out = t->code;
    free(t);
    return st;
}

sto_status cg_compile_task_finish(cg_compile_task *t, cg_pipeline_code *out)
{
    return take(t, true, out);
}

sto_status cg_compile_task_await(cg_compile_task *t, cg_pipeline_code *out)
{
    return take(t, false, out);
}

bool cg_compile_pool_has_idle_thread(cg_compile_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    bool idle = pool->idle > 0 && !pool->paused;
    pthread_mutex_unlock(&pool->lock);
    return idle;
}

void cg_compile_task_cancel(cg_compile_task *t)
{
    if (!t) return;
    settle(t, false, false);
    sto_status_free(t->st);
    cg_pipeline_code_free(&t->code);
    free(t);
}

uint64_t cg_compile_task_start_seq(cg_compile_task *t)
{
    pthread_mutex_lock(&t->pool->lock);
    uint64_t seq = t->start_seq;
    pthread_mutex_unlock(&t->pool->lock);
    return seq;
}

void cg_compile_pool_get_counters(cg_compile_pool *pool, cg_compile_pool_counters *out)
{
    pthread_mutex_lock(&pool->lock);
    *out = pool->counters;
    pthread_mutex_unlock(&pool->lock);
}
