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
    task_state state;
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
    unsigned nthreads; /* started */
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

static void *pool_thread(void *arg)
{
    cg_compile_pool *pool = arg;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->stopping && !pool->head)
            pthread_cond_wait(&pool->work, &pool->lock);
        if (pool->stopping) break;
        cg_compile_task *t = pool->head;
        unqueue(pool, t);
        t->state = TASK_RUNNING;
        pool->counters.by_pool++;
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

sto_status cg_compile_submit(cg_compile_pool *pool, const cg_pipeline_desc *d, cg_mode mode,
                             cg_compile_task **out)
{
    *out = NULL;
    cg_compile_task *t = calloc(1, sizeof(*t));
    if (!t) return sto_error_oom();
    t->pool = pool;
    t->desc = *d;
    t->mode = mode;
    t->state = TASK_QUEUED;
    pthread_mutex_lock(&pool->lock);
    if (pool->tail)
        pool->tail->next = t;
    else
        pool->head = t;
    pool->tail = t;
    pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    *out = t;
    return STO_OK;
}

cg_mode cg_compile_task_mode(const cg_compile_task *t)
{
    return t->mode;
}

bool cg_compile_task_done(cg_compile_task *t)
{
    pthread_mutex_lock(&t->pool->lock);
    bool done = t->state == TASK_DONE;
    pthread_mutex_unlock(&t->pool->lock);
    return done;
}

/* Waits until t is DONE, compiling it here if it is still queued. While a
 * pool thread compiles t, the caller compiles the next queued task rather
 * than sleep: the queue is in pipeline order, so that is code its own query
 * (or a neighbour) needs soon, and a machine with few cores keeps all of
 * them compiling while a query can do nothing else. */
static void settle(cg_compile_task *t, bool finishing)
{
    cg_compile_pool *pool = t->pool;
    pthread_mutex_lock(&pool->lock);
    if (t->state == TASK_QUEUED) {
        unqueue(pool, t);
        if (finishing) {
            t->state = TASK_RUNNING;
            pool->counters.by_caller++;
            pthread_mutex_unlock(&pool->lock);
            run_task(pool, t);
            return;
        }
        t->state = TASK_DONE;
        pool->counters.cancelled++;
    }
    while (t->state != TASK_DONE) {
        cg_compile_task *next = finishing ? pool->head : NULL;
        if (!next) {
            pthread_cond_wait(&pool->done, &pool->lock);
            continue;
        }
        unqueue(pool, next);
        next->state = TASK_RUNNING;
        pool->counters.by_caller++;
        pthread_mutex_unlock(&pool->lock);
        run_task(pool, next);
        pthread_mutex_lock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
}

sto_status cg_compile_task_finish(cg_compile_task *t, cg_pipeline_code *out)
{
    settle(t, true);
    sto_status st = t->st;
    *out = t->code;
    free(t);
    return st;
}

void cg_compile_task_cancel(cg_compile_task *t)
{
    if (!t) return;
    settle(t, false);
    sto_status_free(t->st);
    cg_pipeline_code_free(&t->code);
    free(t);
}

void cg_compile_pool_get_counters(cg_compile_pool *pool, cg_compile_pool_counters *out)
{
    pthread_mutex_lock(&pool->lock);
    *out = pool->counters;
    pthread_mutex_unlock(&pool->lock);
}
