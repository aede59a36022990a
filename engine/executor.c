/*
 * executor.c — compiling and running a query's pipelines (executor.h).
 *
 * Every pipeline becomes one sched job with one pipeline: its morsels run
 * the generated function with the worker's state, its finalize step moves
 * the workers' sink states out (sorting each worker's run, or merging one
 * aggregation partition per finalize morsel), and what is left to do once —
 * merging sorted runs, concatenating rows, applying LIMIT — happens between
 * jobs. Running pipelines one job at a time keeps every pipeline's input
 * known (and its size, which picks the compile mode) before it runs; most
 * are compiled earlier all the same, on the compile pool while earlier
 * ones run (compile_ahead), with the size known or estimated and checked.
 */
#include "engine/executor.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/rt.h"
#include "engine/exchange.h"
#include "engine/exec_radix.h"
#include "engine/exec_setop.h"
#include "engine/exec_sortmerge.h"
#include "engine/instance.h"
#include "engine/jit_cost.h"
#include "engine/optimize.h"
#include "engine/rt_agg.h"
#include "engine/rt_hashtable.h"
#include "engine/rt_join.h"
#include "engine/rt_radix.h"
#include "engine/rt_sort.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* --- the instance's JIT and pool ------------------------------------------------ */

void eng_exec_shared_free(eng_exec_shared *s)
{
    if (!s) return;
    if (s->sched) eng_sched_destroy(s->sched);
    cg_compile_pool_destroy(s->compile);
    if (s->jit) sto_status_free(cg_jit_destroy(s->jit));
    eng_mem_destroy(s->mem);
    free(s);
}

/* Threads that compile pipelines ahead: the caller compiles too, so one
 * gives two compiles at once; a few more pay on larger machines, where a
 * query's compiles would otherwise leave most cores idle. */
static unsigned compile_threads(eng_sched *sched)
{
    unsigned n = eng_sched_threads(sched) / 2;
    return n < 1 ? 1 : n > 4 ? 4 : n;
}

sto_status eng_exec_shared_get(rackdb *db, eng_exec_shared **out)
{
    pthread_mutex_lock(&db->exec_lock);
    sto_status st = STO_OK;
    if (!db->exec) {
        eng_exec_shared *s = calloc(1, sizeof(*s));
        if (!s) st = sto_error_oom();
        if (!st) st = eng_mem_create("instance", 0, NULL, &s->mem);
        if (!st) st = cg_jit_create(NULL, &s->jit);
        if (!st) st = eng_sched_create(NULL, &s->sched);
        if (!st) st = cg_compile_pool_create(s->jit, compile_threads(s->sched), &s->compile);
        if (st)
            eng_exec_shared_free(s);
        else
            db->exec = s;
    }
    *out = db->exec;
    pthread_mutex_unlock(&db->exec_lock);
    return st;
}

/* --- strings made by generated code ------------------------------------------------ */

/* Each worker's string arena outlives its pipeline: rows downstream may
 * point into it. They are collected here and freed with the query. */
struct eng_exec_strings {
    pthread_mutex_t lock;
    cg_rt_strings *arenas;
    size_t n, cap;
};

void eng_exec_strings_free(eng_exec_strings *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        cg_rt_strings_free(&s->arenas[i]);
    free(s->arenas);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Room for one arena per worker state of every pipeline is made when the
 * query starts (a pipeline has at most one state per pool worker), so
 * keeping one never allocates. */
static void keep_strings(eng_exec_strings *s, cg_rt_strings *a)
{
    if (!a->blocks) return;
    pthread_mutex_lock(&s->lock);
    if (s->n < s->cap) {
        s->arenas[s->n++] = *a;
        cg_rt_strings_init(a);
    } else {
        cg_rt_strings_free(a); /* cannot happen: see above */
    }
    pthread_mutex_unlock(&s->lock);
}

/* --- one pipeline's run ------------------------------------------------------------- */

/* Operators of one pipeline whose rows EXPLAIN ANALYZE counts. */
#define MAX_COUNTED 32

typedef struct wstate {
    cg_rt_strings strings;
    uint64_t counters[MAX_COUNTED];
    sto_status err;
    union {
        eng_rows_sink rows;
        eng_agg_local agg;
        eng_join_mat join;
    } sink;
    bool moved;    /* the rows sink was handed to finalize */
    eng_topk topk; /* SORT with a LIMIT: the sink's heap (rt_sort.h) */
    /* PARTS source: the table of the partition the current morsel probes
     * (the probe step reads it from here: cg_probe.table_in_state) */
    const eng_join_ht *join_table;
    eng_sm_cursor join_cursor; /* the same for a sort-merge join */
    uint8_t lean_role;         /* LEAN_*: this worker's part in a lean start */
} wstate;

/* A join's table and the build entries it points at; they live until the
 * query ends (probe pipelines read them, result rows may point into them). */
typedef struct join_rt {
    eng_join_ht ht;
    eng_join_mat *mats; /* per worker state of the build pipeline */
    unsigned nmats;
    uint64_t rows, null_rows;
    bool built;
    bool filter; /* the probe tests a semi-join filter (rt_hashtable.h) */
    /* the probe that tests the exact key bitmap (rt_join_keybits.h), or
     * NULL */
    const cg_probe *kb_probe;
    /* radix, sort-merge (deferred): the probe side's entries (PARTITION
     * sink), then both sides partitioned with a table per partition
     * (partitioned), or range-partitioned and sorted with the probe
     * entries gathered in order (sorted); `empty` stands in for the table
     * of a partition without build rows */
    bool deferred, sortmerge, partitioned, sorted;
    eng_join_mat *probe_mats;
    unsigned nprobe_mats;
    eng_radix_join rj;
    eng_sm_join sm;
    uint8_t *sm_probe;
    uint64_t empty_word;
    eng_join_ht empty;
} join_rt;

static void join_rt_free(join_rt *j)
{
    if (!j) return;
    if (j->built) eng_join_ht_free(&j->ht);
    if (j->partitioned) eng_radix_free(&j->rj);
    if (j->sm_probe) eng_mem_free(j->sm.mem, j->sm_probe, j->sm.probe.count * j->sm.probe.stride);
    if (j->sorted) eng_sm_free(&j->sm);
    for (unsigned i = 0; j->mats && i < j->nmats; i++)
        eng_join_mat_free(&j->mats[i]);
    for (unsigned i = 0; j->probe_mats && i < j->nprobe_mats; i++)
        eng_join_mat_free(&j->probe_mats[i]);
    free(j->mats);
    free(j->probe_mats);
    free(j);
}

typedef struct prun {
    const eng_exec_env *env;
    join_rt *join;       /* JOIN sink */
    join_rt *radix_src;  /* PARTS source: the radix join whose partitions are read */
    join_rt *radix_sink; /* PARTITION sink: the radix join partitioned after it */
    const eng_pipe *p;
    cg_pipeline_fn fn;
    uint8_t *rows_base; /* a PIPE source's rows */
    uint32_t row_bytes; /* of the sink's rows */
    bool mark;          /* record morsel order (ordered input) */
    unsigned nparts;
    eng_rows_sink *runs;  /* ROWS, SORT: per worker, moved here by finalize */
    eng_rows_sink *parts; /* AGG: output per partition */
    unsigned nstates;
    eng_sort_spec sort;
    uint64_t keep; /* SORT: rows each run keeps (top-k) */
    eng_exec_strings *strings;
    _Atomic uint64_t rows_in;
    pthread_mutex_t fin_lock;
    sto_status fin_err; /* the first error of finalize */
    /* LIMIT without ORDER BY over an unordered input: any `keep` rows will
     * do, so morsels stop running once that many exist. */
    bool stop_early;
    _Atomic uint64_t made;
    bool count_rows;
    _Atomic uint64_t counters[MAX_COUNTED];
    /* Adaptive start: fn is FAST code and `upgrade` the OPT compile of the
     * same description; the first worker to find it done between morsels
     * takes its code (under upgrade_lock) and every later morsel runs it.
     * Both read and write the worker state alike, so a pipeline may mix
     * them morsel by morsel. */
    cg_compile_task *upgrade;
    pthread_mutex_t upgrade_lock;
    atomic_int upgrade_state; /* UPGRADE_* */
    cg_pipeline_code opt_code;
    unsigned switch_after; /* eng_exec_env.jit_switch_after */
    _Atomic uint64_t fast_morsels;
    /* Lean start (no spare core, lean_start): the FAST code is compiled by
     * the first FAST worker from lean_desc, into fast_code, under
     * fast_lock; at most lean_fast_max workers run it (the others wait for
     * the OPT code, leaving their cores to its compile). */
    bool lean;
    unsigned lean_fast_max;
    atomic_uint lean_fast_workers;
    cg_pipeline_desc lean_desc;
    pthread_mutex_t fast_lock;
    atomic_int fast_state; /* FAST_* */
    cg_pipeline_code fast_code;
} prun;

enum { UPGRADE_PENDING, UPGRADE_DONE, UPGRADE_FAILED };
enum { FAST_NONE, FAST_READY, FAST_FAILED };
enum { LEAN_UNSET, LEAN_FAST, LEAN_WAIT };

/* A lean start's FAST code, compiled by the first worker to need it. */
static sto_status lean_fast_fn(prun *r, cg_pipeline_fn *fn)
{
    int s = atomic_load_explicit(&r->fast_state, memory_order_acquire);
    sto_status st = STO_OK;
    if (s == FAST_NONE) {
        pthread_mutex_lock(&r->fast_lock);
        s = atomic_load_explicit(&r->fast_state, memory_order_relaxed);
        if (s == FAST_NONE) {
            st = cg_pipeline_compile(r->env->shared->jit, &r->lean_desc, CG_MODE_FAST,
                                     &r->fast_code);
            s = st ? FAST_FAILED : FAST_READY;
            atomic_store_explicit(&r->fast_state, s, memory_order_release);
        }
        pthread_mutex_unlock(&r->fast_lock);
    }
    if (s == FAST_FAILED && !st)
        st = sto_error(STO_INTERNAL_ERROR, "codegen: the pipeline's FAST code failed to compile");
    *fn = r->fast_code.fn;
    return st;
}

/* Takes the OPT code of an adaptive start (blocking: a lean start's
 * waiting worker) or looks whether it is done (trylock: a worker running
 * FAST code looks between morsels and goes on if another has the lock). */
static int upgrade_poll(prun *r, bool block)
{
    int s = atomic_load_explicit(&r->upgrade_state, memory_order_acquire);
    if (s != UPGRADE_PENDING) return s;
    if (block)
        pthread_mutex_lock(&r->upgrade_lock);
    else if (pthread_mutex_trylock(&r->upgrade_lock) != 0)
        return s;
    s = atomic_load_explicit(&r->upgrade_state, memory_order_relaxed);
    if (s == UPGRADE_PENDING && (block || cg_compile_task_done(r->upgrade))) {
        sto_status st = cg_compile_task_await(r->upgrade, &r->opt_code);
        s = st ? UPGRADE_FAILED : UPGRADE_DONE;
        sto_status_free(st);
        atomic_store_explicit(&r->upgrade_state, s, memory_order_release);
    }
    pthread_mutex_unlock(&r->upgrade_lock);
    return s;
}

/* The code a lean start's worker runs its next morsel with. The first
 * lean_fast_max workers to come run FAST code (the first compiles it)
 * until the OPT code is done; the others wait for the OPT code, compiling
 * it themselves if no pool thread has started it. A failed OPT compile
 * leaves everyone on FAST code. */
static sto_status lean_fn(prun *r, wstate *w, cg_pipeline_fn *fn)
{
    if (w->lean_role == LEAN_UNSET)
        w->lean_role =
            atomic_fetch_add(&r->lean_fast_workers, 1) < r->lean_fast_max ? LEAN_FAST : LEAN_WAIT;
    /* jit_switch_after (tests): FAST workers wait too after that many */
    bool wait = w->lean_role == LEAN_WAIT ||
                (r->switch_after && atomic_load(&r->fast_morsels) >= r->switch_after);
    int s = upgrade_poll(r, wait);
    if (s == UPGRADE_DONE) {
        *fn = r->opt_code.fn;
        return STO_OK;
    }
    atomic_fetch_add_explicit(&r->fast_morsels, 1, memory_order_relaxed);
    return lean_fast_fn(r, fn);
}

/* The code the next morsel runs: the OPT code once an adaptive start's
 * compile is done. A failed OPT compile leaves the FAST code running. */
static cg_pipeline_fn current_fn(prun *r)
{
    if (!r->upgrade) return r->fn;
    int s = atomic_load_explicit(&r->upgrade_state, memory_order_acquire);
    if (s == UPGRADE_PENDING && pthread_mutex_trylock(&r->upgrade_lock) == 0) {
        s = atomic_load_explicit(&r->upgrade_state, memory_order_relaxed);
        bool take = r->switch_after ? atomic_load(&r->fast_morsels) >= r->switch_after
                                    : cg_compile_task_done(r->upgrade);
        if (s == UPGRADE_PENDING && take) {
            sto_status st = cg_compile_task_finish(r->upgrade, &r->opt_code);
            s = st ? UPGRADE_FAILED : UPGRADE_DONE;
            sto_status_free(st);
            atomic_store_explicit(&r->upgrade_state, s, memory_order_release);
        }
        pthread_mutex_unlock(&r->upgrade_lock);
    }
    if (s == UPGRADE_DONE) return r->opt_code.fn;
    atomic_fetch_add_explicit(&r->fast_morsels, 1, memory_order_relaxed);
    return r->fn;
}

static sto_status state_init(void *ctx, void *state, const eng_worker_info *worker)
{
    prun *r = ctx;
    wstate *w = state;
    cg_rt_strings_init(&w->strings);
    eng_rt_mem mem = {r->env->mem, worker->mem, worker->node};
    if (r->p->sink == ENG_SINK_AGG)
        eng_agg_local_init(&w->sink.agg, &r->p->agg, mem);
    else if (r->p->sink == ENG_SINK_JOIN || r->p->sink == ENG_SINK_PARTITION)
        eng_join_mat_init(&w->sink.join, mem, r->row_bytes);
    else
        eng_rows_sink_init(&w->sink.rows, mem, r->row_bytes);
    /* an exchange sends its rows as it goes (engine/exchange.h); an ordered
     * input's rows keep their morsel marks and go at the end */
    if (r->p->sink == ENG_SINK_EXCHANGE && !r->mark)
        STO_TRY(eng_exchange_attach(r->env->dist, worker->id, &w->sink.rows));
    if (r->p->sink == ENG_SINK_SORT && r->keep < UINT64_MAX / 4)
        eng_topk_attach(&w->topk, &r->sort, r->keep, &w->sink.rows);
    return STO_OK;
}

static void state_destroy(void *ctx, void *state)
{
    prun *r = ctx;
    wstate *w = state;
    if (r->p->sink == ENG_SINK_AGG)
        eng_agg_local_free(&w->sink.agg);
    else if ((r->p->sink == ENG_SINK_JOIN || r->p->sink == ENG_SINK_PARTITION) && !w->moved)
        eng_join_mat_free(&w->sink.join);
    else if (r->p->sink != ENG_SINK_JOIN && r->p->sink != ENG_SINK_PARTITION && !w->moved)
        eng_rows_sink_free(&w->sink.rows);
    keep_strings(r->strings, &w->strings);
    for (unsigned i = 0; r->count_rows && i < MAX_COUNTED; i++)
        atomic_fetch_add_explicit(&r->counters[i], w->counters[i], memory_order_relaxed);
    sto_status_free(w->err);
    w->err = NULL;
}

static int morsel(void *ctx, void *state, uint64_t begin, uint64_t end)
{
    prun *r = ctx;
    wstate *w = state;
    if (r->mark) {
        sto_status st = eng_rows_sink_mark(&w->sink.rows, begin);
        if (st) {
            w->err = st;
            return ENG_RC_INTERNAL_ERROR;
        }
    }
    if (r->stop_early && atomic_load_explicit(&r->made, memory_order_relaxed) >= r->keep) return 0;
    atomic_fetch_add_explicit(&r->rows_in, end - begin, memory_order_relaxed);
    uint64_t before = r->stop_early ? w->sink.rows.rows : 0;
    cg_error err = cg_error_none();
    cg_pipeline_fn fn = r->lean ? NULL : current_fn(r);
    if (r->lean) {
        sto_status st = lean_fn(r, w, &fn);
        if (st) {
            sto_status_free(w->err);
            w->err = st;
            return ENG_RC_INTERNAL_ERROR;
        }
    }
    int32_t rc = fn(&err, r, w, begin, end);
    if (rc) {
        sto_status_free(w->err);
        w->err = cg_error_status(&err);
        if (!w->err) w->err = sto_error(STO_INTERNAL_ERROR, "pipeline failed (%d)", (int)rc);
        return ENG_RC_INTERNAL_ERROR;
    }
    if (r->stop_early)
        atomic_fetch_add_explicit(&r->made, w->sink.rows.rows - before, memory_order_relaxed);
    return 0;
}

static sto_status morsel_error(void *ctx, void *state, int rc)
{
    (void)ctx;
    wstate *w = state;
    if (w && w->err) {
        sto_status st = w->err;
        w->err = NULL;
        return st;
    }
    return sto_error(STO_INTERNAL_ERROR, "pipeline failed (%d)", rc);
}

/* finalize: partition `part` is worker part's run (ROWS, SORT) or
 * aggregation partition `part` (AGG). */
static int finalize(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    prun *r = ctx;
    r->nstates = n;
    for (uint64_t part = pb; part < pe; part++) {
        sto_status st = STO_OK;
        if (r->p->sink == ENG_SINK_AGG) {
            eng_agg_local **locals = malloc((n ? n : 1) * sizeof(*locals));
            if (!locals) {
                st = sto_error_oom();
            } else {
                for (unsigned i = 0; i < n; i++)
                    locals[i] = &((wstate *)states[i])->sink.agg;
                st = eng_agg_merge_part(locals, n, (unsigned)part, &r->parts[part]);
                free(locals);
            }
        } else if (r->p->sink == ENG_SINK_JOIN || r->p->sink == ENG_SINK_PARTITION) {
            if (part < n) {
                wstate *w = states[part];
                if (r->p->sink == ENG_SINK_JOIN)
                    r->join->mats[part] = w->sink.join;
                else
                    r->radix_sink->probe_mats[part] = w->sink.join;
                w->moved = true;
            }
        } else if (part < n) {
            wstate *w = states[part];
            r->runs[part] = w->sink.rows;
            w->moved = true;
            if (r->p->sink == ENG_SINK_SORT) st = eng_sort_run(&r->sort, &r->runs[part], r->keep);
        }
        if (st) {
            pthread_mutex_lock(&r->fin_lock);
            if (!r->fin_err)
                r->fin_err = st;
            else
                sto_status_free(st);
            pthread_mutex_unlock(&r->fin_lock);
            return ENG_RC_INTERNAL_ERROR;
        }
    }
    return 0;
}

static sto_status finalize_error(prun *r)
{
    pthread_mutex_lock(&r->fin_lock);
    sto_status st = r->fin_err;
    r->fin_err = NULL;
    pthread_mutex_unlock(&r->fin_lock);
    return st;
}

/* The pipeline's description for the code generator. */
static void describe(const eng_physical *ph, const eng_pipe *p, prun *r, const eng_rowset *input,
                     cg_pipeline_desc *d)
{
    memset(d, 0, sizeof(*d));
    d->id = p->id + 1; /* as EXPLAIN numbers it */
    d->ctx = ph->plan->ctx;
    cg_source *s = &d->source;
    s->ncols = p->nin;
    s->ids = p->in_ids;
    switch (p->source) {
    case ENG_SOURCE_TABLE:
        s->kind = CG_SOURCE_CHUNKS;
        s->chunks = p->source_op->get.table->chunks;
        s->col_index = p->col_index;
        s->not_null = p->not_null;
        break;
    case ENG_SOURCE_PIPE:
        s->kind = CG_SOURCE_ROWS;
        s->rows_cell = &r->rows_base;
        s->row_bytes = input->row_bytes;
        break;
    case ENG_SOURCE_VALUES:
        s->kind = CG_SOURCE_VALUES;
        s->nrows = p->source_op->values.nrows;
        s->rows = p->source_op->values.rows;
        break;
    case ENG_SOURCE_PARTS:
        /* the partitioned probe entries, read as rows ENG_JOIN_ENTRY_HEAD
         * into each entry (rows_base points there); the first step probes
         * the table the morsel wrapper puts into the worker state */
        s->kind = CG_SOURCE_ROWS;
        s->rows_cell = &r->rows_base;
        p->steps[0].probe->table_in_state = true;
        if (r->radix_src->sortmerge) {
            s->row_bytes = r->radix_src->sm.probe.stride;
            p->steps[0].probe->table_state_offset = offsetof(wstate, join_cursor);
            p->steps[0].probe->lookup = eng_rt_sm_lookup;
        } else {
            s->row_bytes = r->radix_src->rj.probe.stride;
            p->steps[0].probe->table_state_offset = offsetof(wstate, join_table);
        }
        break;
    }
    d->nsteps = p->nsteps;
    d->steps = p->steps;
    cg_sink *k = &d->sink;
    k->state_offset = offsetof(wstate, sink);
    if (p->sink == ENG_SINK_AGG) {
        k->kind = CG_SINK_AGG;
        k->nkeys = p->agg.nkeys;
        k->keys = p->agg_keys;
        k->naggs = p->agg.naggs;
        k->aggs = p->agg_slots;
        k->find = eng_rt_agg_find;
        k->distinct = eng_rt_agg_distinct;
        k->probe.enabled = true;
        k->probe.table_offset = offsetof(eng_agg_local, table);
        k->probe.mask_offset = offsetof(eng_agg_local, mask);
        k->probe.part_shift_offset = offsetof(eng_agg_local, part_shift);
        k->probe.low_mask_offset = offsetof(eng_agg_local, low_mask);
        k->probe.count_offset = offsetof(eng_agg_local, count);
        k->probe.limit_offset = offsetof(eng_agg_local, limit);
        k->probe.parts_log = ENG_AGG_PARTS_LOG;
        k->probe.entry_bytes = p->agg.entry_bytes;
        k->probe.used_offset = ENG_AGG_ENTRY_USED;
        k->probe.key_offset = ENG_AGG_ENTRY_HEAD;
        k->probe.states_offset = ENG_AGG_ENTRY_HEAD + p->agg.key_bytes;
        k->runs.enabled = p->agg.runs;
        k->runs.states_offset = offsetof(eng_agg_local, runs.states);
        k->runs.key_offset = offsetof(eng_agg_local, runs.key);
        k->runs.on_offset = offsetof(eng_agg_local, runs.on);
        k->runs.next = eng_rt_agg_run_next;
        k->runs.end = eng_rt_agg_run_end;
    } else if (p->sink == ENG_SINK_JOIN || p->sink == ENG_SINK_PARTITION) {
        k->kind = CG_SINK_JOIN;
        k->ncols = p->nexprs;
        k->exprs = p->exprs;
        k->join_nkeys = p->join_nkeys;
        k->join_layout = p->sink == ENG_SINK_JOIN && p->probe ? p->probe->layout : NULL;
        k->join_null_keyed = p->sink == ENG_SINK_PARTITION;
        if (p->sink == ENG_SINK_PARTITION) {
            /* rows failing the build side's filter are never partitioned */
            const cg_probe *bp = ph->pipes[p->join_from - 1].probe;
            k->join_filter = bp->filter;
            k->join_filter_table = bp->table;
            k->join_filter_offset = offsetof(eng_join_ht, filter);
            k->join_filter_mask_offset = offsetof(eng_join_ht, filter_mask);
        }
        k->join_append = eng_rt_join_append;
        k->join_append_null = eng_rt_join_append_null;
    } else {
        k->kind = CG_SINK_ROWS;
        k->ncols = p->nexprs;
        k->exprs = p->exprs;
        k->append = eng_rt_rows_append;
    }
    d->strings_offset = offsetof(wstate, strings);
    d->count_rows = r->count_rows;
    d->counters_offset = offsetof(wstate, counters);
}

/* RIGHT/FULL (and ANTI built on the left): appends to out the build
 * entries of j that no probe matched — or, matched (SEMI built on the
 * left), those that one did — as rows over p's output ids with the probe
 * side's columns NULL. */
static sto_status append_unmatched(const eng_pipe *p, const eng_pipe *build, join_rt *j,
                                   bool matched, eng_mem *mem, eng_rowset *out)
{
    eng_join_mat **mats = malloc((j->nmats ? j->nmats : 1) * sizeof(*mats));
    if (!mats) return sto_error_oom();
    for (unsigned i = 0; i < j->nmats; i++)
        mats[i] = &j->mats[i];
    eng_join_span *spans[2] = {NULL, NULL};
    unsigned nspans[2] = {0, 0};
    sto_status st = STO_OK;
    if (j->partitioned) {
        /* the probes flagged the partitioned copies of the keyed entries */
        spans[0] = malloc(sizeof(*spans[0]));
        if (!spans[0]) st = sto_error_oom();
        if (!st) spans[0][0] = (eng_join_span){j->rj.build.out, j->rj.build.count};
        nspans[0] = 1;
    } else {
        st = eng_join_mat_spans(mats, j->nmats, false, &spans[0], &nspans[0]);
        /* a FLAG probe that the key bitmap decided marked keys, not entries */
        if (!st && j->built && j->nmats)
            eng_join_keybits_fold(&j->ht.keys, spans[0], nspans[0], j->mats[0].stride);
    }
    if (!st) st = eng_join_mat_spans(mats, j->nmats, true, &spans[1], &nspans[1]);
    free(mats);
    uint32_t stride = j->nmats ? j->mats[0].stride : 0;
    uint64_t extra = 0;
    if (matched) nspans[1] = 0; /* a NULL key matches nothing */
    for (int k = 0; !st && k < 2; k++)
        for (unsigned s = 0; s < nspans[k]; s++)
            for (uint64_t i = 0; i < spans[k][s].count; i++)
                extra += (eng_join_entry_at(spans[k][s].base, stride, i)->matched != 0) == matched;
    /* slot of each output column in the build row, or -1 */
    int *from = calloc(p->nexprs ? p->nexprs : 1, sizeof(*from));
    if (!st && !from) st = sto_error_oom();
    for (uint32_t c = 0; !st && c < p->nexprs; c++) {
        from[c] = -1;
        for (uint32_t b = 0; b < build->nout; b++)
            if (build->out_ids[b] == p->out_ids[c]) from[c] = (int)b;
    }
    uint32_t rb = out->row_bytes, bn = build->nexprs;
    const cg_row_layout *bl = build->probe ? build->probe->layout : NULL;
    void *data = NULL;
    size_t bytes = (size_t)(out->rows + extra) * rb;
    if (!st && extra) st = eng_mem_alloc(mem, bytes, -1, &data);
    if (!st && extra) {
        if (out->rows) memcpy(data, out->data, (size_t)out->rows * rb);
        uint8_t *row = (uint8_t *)data + (size_t)out->rows * rb;
        for (int k = 0; k < 2; k++)
            for (unsigned s = 0; s < nspans[k]; s++)
                for (uint64_t i = 0; i < spans[k][s].count; i++) {
                    eng_join_entry *e = eng_join_entry_at(spans[k][s].base, stride, i);
                    if ((e->matched != 0) != matched) continue;
                    const uint8_t *src = eng_join_row(e);
                    memset(row, 0, rb);
                    for (uint32_t c = 0; c < p->nexprs; c++) {
                        if (from[c] < 0) {
                            row[cg_row_null_offset(p->nexprs, c)] = 1;
                            continue;
                        }
                        uint32_t f = (uint32_t)from[c];
                        if (bl) /* packed: the value's own width into the slot */
                            memcpy(row + (size_t)c * CG_ROW_SLOT, src + bl->offset[f],
                                   sto_type_width(build->exprs[f]->type.id));
                        else
                            memcpy(row + (size_t)c * CG_ROW_SLOT, src + (size_t)f * CG_ROW_SLOT,
                                   CG_ROW_SLOT);
                        row[cg_row_null_offset(p->nexprs, c)] =
                            src[bl ? bl->null_offset[f] : cg_row_null_offset(bn, f)];
                    }
                    row += rb;
                }
        uint64_t rows = out->rows + extra;
        eng_rowset_free(out);
        out->data = data;
        out->rows = rows;
        out->row_bytes = rb;
        out->bytes = bytes;
        out->mem = mem;
    }
    free(from);
    free(spans[0]);
    free(spans[1]);
    return st;
}

static int insert_morsel(void *ctx, void *state, uint64_t begin, uint64_t end)
{
    (void)state;
    eng_join_ht_insert_range(ctx, begin, end);
    return 0;
}

/* Inserts the prepared entries: a job over entry ranges when there are
 * enough of them to share (inserts are lock-free), else right here. */
static sto_status insert_entries(const eng_exec_env *env, eng_join_ht *ht)
{
    if (env->threads < 2 || ht->count < 65536) {
        eng_join_ht_insert_slice(ht, 0, 1);
        return STO_OK;
    }
    eng_pipeline pl;
    memset(&pl, 0, sizeof(pl));
    pl.name = "join table insert";
    pl.run = insert_morsel;
    pl.ctx = ht;
    pl.rows = ht->count;
    pl.state_size = 64;
    eng_job_options jo = {env->threads, env->mem, env->cancel};
    eng_job *job = NULL;
    sto_status st = eng_job_create(&jo, &job);
    if (!st) st = eng_job_add(job, &pl, NULL, 0, NULL);
    if (!st) st = eng_sched_run(env->shared->sched, job);
    eng_job_free(job);
    return st;
}

/* The key bitmap of a shared table whose probe tests one: the candidate
 * key columns (cg_probe.kb_cols) at their slots of the build row; a FLAG
 * probe that the bitmap decides marks keys in its hit words. */
static sto_status join_keybits(join_rt *j)
{
    const cg_probe *pr = j->kb_probe;
    uint32_t offsets[32];
    unsigned bytes[32];
    unsigned n = pr->nkeys < 32 ? pr->nkeys : 32;
    for (unsigned c = 0; c < n; c++) {
        uint32_t i = pr->ncols - pr->nkeys + c;
        offsets[c] = ENG_JOIN_ENTRY_HEAD + (pr->layout ? pr->layout->offset[i] : i * CG_ROW_SLOT);
        bytes[c] = pr->kb_cols >> c & 1 ? (unsigned)sto_type_width(pr->keys[c]->type.id) : 0;
    }
    return eng_join_ht_keybits(&j->ht, offsets, bytes, n,
                               pr->keybits_decide && pr->kind == CG_JOIN_FLAG);
}

/* The table over the build entries the workers made. */
static sto_status build_table(const eng_exec_env *env, join_rt *j, eng_mem *mem)
{
    eng_join_mat **mats = malloc((j->nmats ? j->nmats : 1) * sizeof(*mats));
    if (!mats) return sto_error_oom();
    for (unsigned i = 0; i < j->nmats; i++)
        mats[i] = &j->mats[i];
    eng_join_build_info info = eng_join_mat_info(mats, j->nmats);
    j->rows = info.rows;
    j->null_rows = info.null_rows;
    if (j->deferred) { /* partitioned with the probe side later */
        sto_status st = STO_OK;
        if (j->filter) { /* which the probe side's rows are tested on first */
            st = eng_join_ht_filter_mats(&j->ht, mats, j->nmats, mem);
            j->built = !st;
        }
        free(mats);
        return st;
    }
    sto_status st = eng_join_ht_prepare(&j->ht, mats, j->nmats, mem);
    free(mats);
    if (st) return st;
    j->built = true;
    if (j->kb_probe) STO_TRY(join_keybits(j));
    /* an exact bitmap tests every probe row before the filter could */
    if (j->filter && !j->ht.keys.bits) STO_TRY(eng_join_ht_filter_init(&j->ht));
    return insert_entries(env, &j->ht);
}

/* After a radix join's PARTITION pipeline: both sides partitioned, a
 * table per partition, the probe tasks (exec_radix.h). */
static sto_status partition_join(const eng_exec_env *env, join_rt *j, eng_pipe_stats *stats)
{
    double t0 = now_ms();
    sto_status st;
    if (j->sortmerge) {
        j->sorted = true;
        st = eng_exec_sm_partition(env->shared->sched, env->threads, env->mem, env->cancel, &j->sm,
                                   j->mats, j->nmats, j->probe_mats, j->nprobe_mats, &j->sm_probe);
        stats->join_parts = j->sm.ranges;
        stats->join_passes = 1;
    } else {
        j->partitioned = true;
        st = eng_exec_radix_partition(env->shared->sched, env->threads, env->mem, env->cancel,
                                      &j->rj, j->mats, j->nmats, j->probe_mats, j->nprobe_mats, -1);
        j->empty.dir = &j->empty_word;
        j->empty.mask = 0;
        stats->join_parts = j->rj.parts;
        stats->join_passes = j->rj.bits2 ? 2 : 1;
    }
    stats->join_ms = now_ms() - t0;
    return st;
}

/* A PARTS pipeline's morsel: probe tasks [begin, end), each the probe
 * entries of one partition against that partition's table. */
static int parts_morsel(void *ctx, void *state, uint64_t begin, uint64_t end)
{
    prun *r = ctx;
    wstate *w = state;
    if (r->radix_src->sortmerge) {
        const eng_sm_join *sm = &r->radix_src->sm;
        for (uint64_t t = begin; t < end; t++) {
            eng_sm_cursor_for(sm, t, &w->join_cursor);
            int rc = morsel(ctx, state, sm->tasks[t].begin, sm->tasks[t].end);
            if (rc) return rc;
        }
        return 0;
    }
    const eng_radix_join *rj = &r->radix_src->rj;
    for (uint64_t t = begin; t < end; t++) {
        const eng_radix_task *task = &rj->tasks[t];
        const eng_join_ht *ht = &rj->tables[task->part];
        w->join_table = ht->dir ? ht : &r->radix_src->empty;
        int rc = morsel(ctx, state, task->begin, task->end);
        if (rc) return rc;
    }
    return 0;
}

/* A pipeline's code compiled ahead (compile_ahead), or being compiled. */
typedef struct ahead_code {
    cg_compile_task *task; /* NULL: compile when the pipeline runs */
    /* PIPE source: the cell the code reads its input's address from, and
     * the input row size it was compiled for */
    uint8_t *rows_base;
    uint32_t row_bytes;
    /* held (PIPE source whose estimate called for OPT): the pool leaves
     * the task alone until the input is known (release_held) */
    bool held;
} ahead_code;

/* Whether a core is left over beside the query's workers for an OPT
 * compile to run on while the workers run FAST code (adaptive start).
 * Without one the compile slows the workers' FAST code down as much as it
 * saves: measured at SF 1 on 2 cores with 2 workers, total time rose 8-17%
 * for 45% less waiting for code. */
static bool spare_core(const eng_exec_env *env)
{
    return eng_sched_threads(env->shared->sched) > env->threads;
}

/* Whether a pipeline whose OPT code is not ready may start lean: without a
 * spare core, all workers but one run FAST code while the remaining core
 * compiles the OPT code, and the last worker waits for it (run_pipe).
 * RACKDB_JIT_LEAN_START (cg_jit_lean_start) switches it, for measurement;
 * eng_exec_env.jit_lean_start forces it (tests). */
#define LEAN_START_DEFAULT 0

static bool lean_start(const eng_exec_env *env)
{
    if (env->threads < 2) return false;
    if (env->jit_lean_start) return true;
    int set = cg_jit_lean_start(env->shared->jit);
    return !spare_core(env) && (set >= 0 ? set == 1 : LEAN_START_DEFAULT);
}

/* The entry stride of the partitioned join a PARTS pipeline reads. */
static uint32_t parts_stride(const join_rt *parts_in)
{
    return parts_in->sortmerge ? parts_in->sm.probe.stride : parts_in->rj.probe.stride;
}

/* Whether code compiled ahead serves the pipeline now: for a PIPE source,
 * built for the row size of the rows it got (PARTS: the entry stride it
 * got), and compiled at least as hard as its actual input size calls for
 * (both were predicted). Code
 * optimized for an input that turned out small is kept: it is correct,
 * runs faster, and its compile is paid for or under way. */
static bool ahead_fits(const ahead_code *a, const eng_pipe *p, const eng_rowset *input,
                       const join_rt *parts_in, cg_mode mode)
{
    if (cg_compile_task_mode(a->task) < mode) return false;
    if (p->source == ENG_SOURCE_PARTS) return parts_stride(parts_in) == a->row_bytes;
    return p->source != ENG_SOURCE_PIPE || (input && input->row_bytes == a->row_bytes);
}

/* Runs pipeline p over `input` (PIPE sources) into *output; parts_in is
 * the radix join a PARTS source reads, parts_out the one a PARTITION sink
 * fills. */
static sto_status run_pipe(const eng_exec_env *env, const eng_physical *ph, const eng_pipe *p,
                           const eng_rowset *input, eng_exec_strings *strings, join_rt *join,
                           join_rt *parts_in, join_rt *parts_out, join_rt *unmatched,
                           ahead_code *ahead, eng_pipe_stats *stats, eng_rowset *output)
{
    memset(output, 0, sizeof(*output));
    output->mem = env->mem;
    unsigned threads = env->threads;
    prun r;
    memset(&r, 0, sizeof(r));
    pthread_mutex_init(&r.fin_lock, NULL);
    pthread_mutex_init(&r.upgrade_lock, NULL);
    pthread_mutex_init(&r.fast_lock, NULL);
    r.env = env;
    r.p = p;
    r.strings = strings;
    r.rows_base = input ? input->data : NULL;
    uint32_t ncols = p->sink == ENG_SINK_AGG ? p->agg.nkeys + p->agg.naggs : p->nexprs;
    r.row_bytes = p->sink == ENG_SINK_JOIN && p->probe && p->probe->layout ? p->probe->layout->bytes
                                                                           : cg_row_bytes(ncols);
    r.join = join;
    r.radix_src = parts_in;
    r.radix_sink = parts_out;
    r.mark = p->sink != ENG_SINK_AGG && p->sink != ENG_SINK_JOIN && p->source == ENG_SOURCE_PIPE &&
             p->ordered;
    r.sort = (eng_sort_spec){ncols, p->nsort_keys, p->sort_keys};
    r.keep =
        p->limit >= 0 ? (uint64_t)p->limit + (uint64_t)(p->offset > 0 ? p->offset : 0) : UINT64_MAX;
    /* ROWS, SORT: one finalize partition per worker state; any pool worker
     * may run some morsel, even when only `threads` run at once. */
    r.nparts = p->sink == ENG_SINK_AGG ? ENG_AGG_PARTS : eng_sched_threads(env->shared->sched);
    r.stop_early = p->sink == ENG_SINK_ROWS && p->limit >= 0 && !r.mark;
    r.count_rows = env->analyze && p->nsteps + 1 <= MAX_COUNTED;
    eng_job *job = NULL;
    cg_pipeline_code code;
    memset(&code, 0, sizeof(code));

    /* The input: a table's chunks, rows, or VALUES' single call. */
    eng_pipeline pl;
    memset(&pl, 0, sizeof(pl));
    uint32_t *chunk_rows = NULL;
    uint64_t in_rows = 0;
    if (p->source == ENG_SOURCE_TABLE) {
        const sto_table *t = p->source_op->get.table;
        in_rows = sto_table_rows(t);
        if (t->nchunks) {
            chunk_rows = malloc(t->nchunks * sizeof(*chunk_rows));
            if (!chunk_rows) return sto_error_oom();
            for (size_t i = 0; i < t->nchunks; i++)
                chunk_rows[i] = t->chunks[i]->rows;
            pl.n_chunks = (unsigned)t->nchunks;
            pl.chunk_rows = chunk_rows;
        }
    } else if (p->source == ENG_SOURCE_PIPE) {
        in_rows = pl.rows = input->rows;
    } else if (p->source == ENG_SOURCE_PARTS) {
        /* one probe task per morsel */
        pl.morsel_rows = 1;
        if (parts_in->sortmerge) {
            in_rows = parts_in->sm.probe.count;
            pl.rows = parts_in->sm.n_tasks;
            if (parts_in->sm_probe) r.rows_base = parts_in->sm_probe + ENG_JOIN_ENTRY_HEAD;
        } else {
            in_rows = parts_in->rj.probe.count;
            pl.rows = parts_in->rj.n_tasks;
            if (parts_in->rj.probe.out) r.rows_base = parts_in->rj.probe.out + ENG_JOIN_ENTRY_HEAD;
        }
    } else {
        in_rows = p->source_op->values.nrows;
        pl.rows = 1;
    }

    sto_status st = STO_OK;
    r.runs = calloc(r.nparts ? r.nparts : 1, sizeof(*r.runs));
    if (!r.runs) st = sto_error_oom();
    if (!st && p->sink == ENG_SINK_JOIN) {
        join->mats = calloc(r.nparts ? r.nparts : 1, sizeof(*join->mats));
        if (!join->mats) st = sto_error_oom();
        for (unsigned i = 0; !st && i < r.nparts; i++)
            eng_join_mat_init(&join->mats[i], (eng_rt_mem){env->mem, NULL, -1}, r.row_bytes);
        join->nmats = r.nparts;
        join->deferred = p->join_algorithm == ENG_JOIN_ALGO_RADIX ||
                         p->join_algorithm == ENG_JOIN_ALGO_SORTMERGE;
        join->sortmerge = p->join_algorithm == ENG_JOIN_ALGO_SORTMERGE;
        join->filter = p->probe && p->probe->filter;
        join->kb_probe = p->probe && p->probe->keybits ? p->probe : NULL;
        /* the probe step reads the table through pointers wire_joins() set */
    }
    if (!st && p->sink == ENG_SINK_PARTITION) {
        parts_out->probe_mats = calloc(r.nparts ? r.nparts : 1, sizeof(*parts_out->probe_mats));
        if (!parts_out->probe_mats) st = sto_error_oom();
        for (unsigned i = 0; !st && i < r.nparts; i++)
            eng_join_mat_init(&parts_out->probe_mats[i], (eng_rt_mem){env->mem, NULL, -1},
                              r.row_bytes);
        parts_out->nprobe_mats = r.nparts;
    }
    if (!st && p->sink == ENG_SINK_AGG) {
        r.parts = calloc(ENG_AGG_PARTS, sizeof(*r.parts));
        if (!r.parts) st = sto_error_oom();
        for (unsigned i = 0; !st && i < ENG_AGG_PARTS; i++)
            eng_rows_sink_init(&r.parts[i], (eng_rt_mem){env->mem, NULL, -1}, r.row_bytes);
    }

    /* Compile, in the mode the input's size calls for, or take the code the
     * compile pool made (or is making) ahead. */
    double t0 = now_ms();
    if (!st) {
        cg_mode mode = cg_jit_mode(env->shared->jit, eng_jit_mode(p, (double)in_rows, threads));
        /* harder than the input needs and not started yet: compile for the
         * input at hand instead (a FAST compile takes a millisecond or two) */
        if (ahead->task && cg_compile_task_mode(ahead->task) > mode &&
            cg_compile_task_withdraw(ahead->task))
            ahead->task = NULL;
        if (ahead->task && !ahead_fits(ahead, p, input, parts_in, mode)) {
            cg_compile_task_cancel(ahead->task);
            ahead->task = NULL;
        }
        /* both starts need OPT code on its way for a morsel-driven source */
        bool opt_ahead = ahead->task && cg_compile_task_mode(ahead->task) == CG_MODE_OPT &&
                         (p->source == ENG_SOURCE_TABLE || p->source == ENG_SOURCE_PIPE);
        /* lean: only while the OPT compile has a core to itself, that is
         * runs on the pool or starts there at once (or a test forces it) */
        bool lean = opt_ahead && lean_start(env) && !cg_compile_task_done(ahead->task) &&
                    (env->jit_lean_start || cg_compile_task_started(ahead->task) ||
                     cg_compile_pool_has_idle_thread(env->shared->compile));
        bool adaptive =
            opt_ahead && !lean &&
            (env->jit_switch_after || (spare_core(env) && !cg_compile_task_done(ahead->task)));
        if (ahead->task) ahead->rows_base = r.rows_base;
        if (lean) {
            /* the workers compile the FAST code themselves (lean_fn) */
            describe(ph, p, &r, input, &r.lean_desc);
            r.lean_desc.cache = env->jit_cache;
            r.lean = true;
            unsigned cores = eng_sched_threads(env->shared->sched);
            r.lean_fast_max = threads < cores ? threads - 1 : cores > 1 ? cores - 1 : 1;
            r.switch_after = env->jit_switch_after;
            r.upgrade = ahead->task;
            ahead->task = NULL;
            mode = CG_MODE_FAST;
        } else if (adaptive) {
            /* start with FAST code rather than wait for the OPT code */
            cg_pipeline_desc d;
            describe(ph, p, &r, input, &d);
            d.cache = env->jit_cache;
            mode = CG_MODE_FAST;
            st = cg_pipeline_compile(env->shared->jit, &d, mode, &code);
            r.upgrade = ahead->task;
            r.switch_after = env->jit_switch_after;
            ahead->task = NULL;
        } else if (ahead->task) {
            mode = cg_compile_task_mode(ahead->task);
            st = cg_compile_task_finish(ahead->task, &code);
            ahead->task = NULL;
        } else {
            cg_pipeline_desc d;
            describe(ph, p, &r, input, &d);
            d.cache = env->jit_cache;
            st = cg_pipeline_compile(env->shared->jit, &d, mode, &code);
        }
        r.fn = code.fn;
        stats->compile_work_ms = (double)code.compile_us / 1e3;
        stats->mode = mode;
        if (!st && code.code) stats->ir_instructions = cg_code_stats(code.code)->ir_instructions;
    }
    double t1 = now_ms();
    stats->compile_ms = t1 - t0;
    stats->rows_in = 0;

    if (!st) {
        pl.name = "pipeline";
        pl.run = p->source == ENG_SOURCE_PARTS ? parts_morsel : morsel;
        pl.ctx = &r;
        pl.state_size = sizeof(wstate);
        pl.state_init = state_init;
        pl.state_destroy = state_destroy;
        pl.finalize = finalize;
        pl.finalize_parts = r.nparts;
        pl.error = morsel_error;
        eng_job_options jo = {threads, env->mem, env->cancel};
        st = eng_job_create(&jo, &job);
    }
    if (!st) st = eng_job_add(job, &pl, NULL, 0, NULL);
    if (!st) st = eng_sched_run(env->shared->sched, job);
    if (job) {
        eng_job_stats js = eng_job_get_stats(job);
        stats->workers = js.workers;
        stats->morsels = js.morsels;
    }
    if (st) {
        sto_status fe = finalize_error(&r);
        if (fe) {
            sto_status_free(st);
            st = fe;
        }
    }
    eng_job_free(job);
    if (r.upgrade) {
        stats->lean = r.lean;
        stats->fast_morsels = atomic_load(&r.fast_morsels);
        stats->switched = atomic_load(&r.upgrade_state) == UPGRADE_DONE;
        if (r.fast_code.code) {
            stats->compile_work_ms += (double)r.fast_code.compile_us / 1e3;
            stats->ir_instructions = cg_code_stats(r.fast_code.code)->ir_instructions;
        }
        if (stats->switched) {
            stats->mode = CG_MODE_OPT;
            stats->compile_work_ms += (double)r.opt_code.compile_us / 1e3;
            stats->ir_instructions = cg_code_stats(r.opt_code.code)->ir_instructions;
        } else if (atomic_load(&r.upgrade_state) == UPGRADE_PENDING) {
            /* the OPT code came too late: the query's end drops it, so
             * that this pipeline does not wait for it now */
            ahead->task = r.upgrade;
        }
    }

    /* What is left to do once. */
    if (!st) {
        unsigned n = r.nstates < r.nparts ? r.nstates : r.nparts;
        eng_rows_sink **sinks = calloc(r.nparts ? r.nparts : 1, sizeof(*sinks));
        if (!sinks) st = sto_error_oom();
        if (!st && p->sink == ENG_SINK_JOIN) {
            double b0 = now_ms();
            st = build_table(env, join, env->mem);
            if (!join->deferred) {
                stats->join_ms = now_ms() - b0;
                stats->join_filter = join->ht.filter != NULL;
                stats->join_keybits = join->ht.keys.bits != NULL;
                stats->join_unique = stats->join_keybits && join->ht.keys.unique;
            }
        } else if (!st && p->sink == ENG_SINK_PARTITION) {
            st = partition_join(env, parts_out, stats);
        } else if (!st && p->sink == ENG_SINK_AGG) {
            for (unsigned i = 0; i < ENG_AGG_PARTS; i++)
                sinks[i] = &r.parts[i];
            uint64_t groups = 0;
            for (unsigned i = 0; i < ENG_AGG_PARTS; i++)
                groups += r.parts[i].rows;
            if (!groups && p->agg.nkeys == 0) st = eng_agg_empty_row(&p->agg, &r.parts[0]);
            if (!st) st = eng_rowset_gather(sinks, ENG_AGG_PARTS, false, env->mem, output);
        } else if (!st) {
            for (unsigned i = 0; i < n; i++)
                sinks[i] = &r.runs[i];
            if (p->sink == ENG_SINK_SORT) {
                st = eng_sort_merge(&r.sort, sinks, n, r.keep, env->mem, output);
            } else {
                st = eng_rowset_gather(sinks, n, r.mark, env->mem, output);
            }
            if (!st) output->row_bytes = r.row_bytes;
        }
        if (!st && p->unmatched_from) {
            output->row_bytes = r.row_bytes;
            st = append_unmatched(p, &ph->pipes[p->unmatched_from - 1], unmatched, p->emit_matched,
                                  env->mem, output);
        }
        if (!st && (p->limit >= 0 || p->offset > 0)) eng_rowset_slice(output, p->offset, p->limit);
        free(sinks);
    }
    stats->run_ms = now_ms() - t1;
    stats->rows_in = atomic_load(&r.rows_in);
    if (p->source == ENG_SOURCE_VALUES) stats->rows_in = in_rows;
    stats->rows_out = output->rows;
    if (r.count_rows) {
        stats->step_rows = calloc(p->nsteps + 1, sizeof(*stats->step_rows));
        for (uint32_t i = 0; stats->step_rows && i <= p->nsteps; i++)
            stats->step_rows[i] = atomic_load(&r.counters[i]);
    }
    output->row_bytes = r.row_bytes;

    /* Whatever finalize did not take. */
    for (unsigned i = 0; r.runs && i < r.nparts; i++)
        eng_rows_sink_free(&r.runs[i]);
    for (unsigned i = 0; r.parts && i < ENG_AGG_PARTS; i++)
        eng_rows_sink_free(&r.parts[i]);
    free(r.runs);
    free(r.parts);
    free(chunk_rows);
    sto_status_free(finalize_error(&r));
    pthread_mutex_destroy(&r.fin_lock);
    pthread_mutex_destroy(&r.upgrade_lock);
    pthread_mutex_destroy(&r.fast_lock);
    cg_pipeline_code_free(&code);
    cg_pipeline_code_free(&r.opt_code);
    cg_pipeline_code_free(&r.fast_code);
    if (st) eng_rowset_free(output);
    return st;
}

void eng_query_stats_free(eng_query_stats *s)
{
    for (unsigned i = 0; s->pipes && i < s->npipes; i++)
        free(s->pipes[i].step_rows);
    free(s->pipes);
    memset(s, 0, sizeof(*s));
}

/* Points every join's probe step at the join's table before any pipeline
 * runs or compiles: a probe pipeline compiled ahead bakes these addresses
 * in, and the tables live as long as the query (join_rt). */
static void wire_joins(const eng_physical *ph, join_rt **joins)
{
    for (unsigned i = 0; i < ph->npipes; i++) {
        const eng_pipe *p = &ph->pipes[i];
        if (p->sink != ENG_SINK_JOIN) continue;
        p->probe->table = &joins[i]->ht;
        p->probe->build_rows = &joins[i]->rows;
        p->probe->build_null_rows = &joins[i]->null_rows;
    }
}

/* The PARTITION pipeline filling the partitioned join a PARTS pipeline p
 * reads, or NULL. */
static const eng_pipe *partition_of(const eng_physical *ph, const eng_pipe *p)
{
    for (unsigned k = 0; k < ph->npipes; k++)
        if (ph->pipes[k].sink == ENG_SINK_PARTITION && ph->pipes[k].join_from == p->parts_from)
            return &ph->pipes[k];
    return NULL;
}

/* A PARTS pipeline's input, as compile_ahead predicts it from its
 * PARTITION pipeline `from`: the probe side's estimated size, the join
 * algorithm the plan names, and the entry stride from's rows make. */
static void parts_predict(const eng_physical *ph, const eng_pipe *p, const eng_pipe *from,
                          join_rt *parts)
{
    memset(parts, 0, sizeof(*parts));
    parts->sortmerge = ph->pipes[p->parts_from - 1].join_algorithm == ENG_JOIN_ALGO_SORTMERGE;
    parts->rj.probe.stride = eng_join_entry_stride(cg_row_bytes(from->nexprs));
    parts->sm.probe.stride = parts->rj.probe.stride;
}

/* Hands pipelines to the compile pool before the query runs; ahead[i].task
 * is pipeline i's, or NULL. Pipeline 0 goes only when it wants OPT code
 * and a core is spare (spare_core) or a lean start is on (lean_start):
 * the query starts it with FAST code and switches when the pool's OPT code
 * is ready (run_pipe); otherwise the query compiles it at once.
 * The compile mode depends on the input's size: exact for a table or
 * VALUES; for another pipeline's rows the planner's estimate
 * stands in, with the row size that pipeline's sink makes, and run_pipe
 * compiles anew when either guess proves wrong (ahead_fits). A pipeline
 * reading a partitioned join's entries is compiled for the join algorithm
 * the plan names and the entry stride its PARTITION pipeline's rows make,
 * sized by that pipeline's estimate. With jit_cache on, a pipeline
 * reading rows is compiled when it runs: compiled ahead, it would read
 * its input's address from this query's ahead_code, an address baked into
 * its IR and so into its cache key, which would then never match again.
 * When a task cannot be queued, run_pipe compiles that pipeline. */
static void compile_ahead(const eng_exec_env *env, const eng_physical *ph, ahead_code *ahead)
{
    cg_compile_pool *pool = env->serial_compile ? NULL : env->shared->compile;
    for (unsigned i = 0; pool && i < ph->npipes; i++) {
        const eng_pipe *p = &ph->pipes[i];
        double in_rows;
        if (p->source == ENG_SOURCE_TABLE)
            in_rows = (double)sto_table_rows(p->source_op->get.table);
        else if (p->source == ENG_SOURCE_VALUES)
            in_rows = p->source_op->values.nrows;
        else if (p->source == ENG_SOURCE_PIPE && p->input < i && !env->jit_cache)
            in_rows = p->est_rows;
        else if (p->source == ENG_SOURCE_PARTS && !env->jit_cache && partition_of(ph, p))
            in_rows = partition_of(ph, p)->est_rows;
        else
            continue;
        /* describe() reads only count_rows of the run for these sources,
         * and for PARTS how the join is partitioned, with its entry stride */
        prun r;
        memset(&r, 0, sizeof(r));
        r.count_rows = env->analyze && p->nsteps + 1 <= MAX_COUNTED;
        eng_rowset input;
        memset(&input, 0, sizeof(input));
        join_rt parts;
        if (p->source == ENG_SOURCE_PIPE) {
            const eng_pipe *from = &ph->pipes[p->input];
            input.row_bytes = ahead[i].row_bytes = cg_row_bytes(
                from->sink == ENG_SINK_AGG ? from->agg.nkeys + from->agg.naggs : from->nexprs);
        } else if (p->source == ENG_SOURCE_PARTS) {
            parts_predict(ph, p, partition_of(ph, p), &parts);
            ahead[i].row_bytes = parts.rj.probe.stride;
            r.radix_src = &parts;
        }
        cg_mode mode = cg_jit_mode(env->shared->jit, eng_jit_mode(p, in_rows, env->threads));
        if (i == 0 &&
            (mode != CG_MODE_OPT || !(spare_core(env) || env->jit_switch_after || lean_start(env))))
            continue;
        cg_pipeline_desc d;
        describe(ph, p, &r, &input, &d);
        d.source.rows_cell = &ahead[i].rows_base;
        d.cache = env->jit_cache;
        /* an estimate of an earlier pipeline's output is often far off
         * (TPC-H Q18: 2 M rows estimated, 57 came): an OPT compile waits
         * for the real size (release_held) */
        ahead[i].held = p->source == ENG_SOURCE_PIPE && mode == CG_MODE_OPT;
        sto_status_free((ahead[i].held ? cg_compile_submit_held
                                       : cg_compile_submit)(pool, &d, mode, &ahead[i].task));
    }
}

/* Pipeline `done` has made its output: lets the pool compile the held
 * tasks of the pipelines reading it, in the mode its real size calls for. */
static void release_held(const eng_exec_env *env, const eng_physical *ph, unsigned done,
                         const eng_rowset *out, ahead_code *ahead)
{
    for (unsigned k = done + 1; ahead && k < ph->npipes; k++) {
        const eng_pipe *p = &ph->pipes[k];
        if (!ahead[k].held || !ahead[k].task || p->input != done) continue;
        ahead[k].held = false;
        cg_mode mode =
            cg_jit_mode(env->shared->jit, eng_jit_mode(p, (double)out->rows, env->threads));
        cg_compile_task_release(ahead[k].task, mode);
    }
}

sto_status eng_exec_physical(const eng_exec_env *env, const eng_physical *ph,
                             eng_query_stats *stats, eng_rowset *rows, eng_exec_strings **strings)
{
    memset(stats, 0, sizeof(*stats));
    memset(rows, 0, sizeof(*rows));
    *strings = NULL;
    eng_exec_strings *ss = calloc(1, sizeof(*ss));
    eng_rowset *outs = calloc(ph->npipes, sizeof(*outs));
    stats->pipes = calloc(ph->npipes, sizeof(*stats->pipes));
    join_rt **joins = calloc(ph->npipes, sizeof(*joins));
    for (unsigned i = 0; joins && i < ph->npipes; i++)
        if (ph->pipes[i].sink == ENG_SINK_JOIN && !(joins[i] = calloc(1, sizeof(join_rt)))) {
            for (unsigned k = 0; k < i; k++)
                free(joins[k]);
            free(joins);
            joins = NULL;
        }
    if (ss) {
        ss->cap = (size_t)ph->npipes * eng_sched_threads(env->shared->sched) + 1;
        ss->arenas = calloc(ss->cap, sizeof(*ss->arenas));
    }
    if (!ss || !ss->arenas || !outs || !stats->pipes || !joins) {
        for (unsigned i = 0; joins && i < ph->npipes; i++)
            join_rt_free(joins[i]);
        free(joins);
        if (ss) free(ss->arenas);
        free(ss);
        free(outs);
        eng_query_stats_free(stats);
        return sto_error_oom();
    }
    pthread_mutex_init(&ss->lock, NULL);
    stats->npipes = ph->npipes;
    sto_status st = STO_OK;
    wire_joins(ph, joins);
    ahead_code *ahead = calloc(ph->npipes, sizeof(*ahead));
    if (ahead) compile_ahead(env, ph, ahead);
    for (unsigned i = 0; !st && i < ph->npipes; i++) {
        const eng_pipe *p = &ph->pipes[i];
        const eng_rowset *in = p->source == ENG_SOURCE_PIPE ? &outs[p->input] : NULL;
        join_rt *um = p->unmatched_from ? joins[p->unmatched_from - 1] : NULL;
        join_rt *pin = p->parts_from ? joins[p->parts_from - 1] : NULL;
        join_rt *pout = p->join_from ? joins[p->join_from - 1] : NULL;
        ahead_code none = {0};
        st = p->sink == ENG_SINK_EXCHANGE ? eng_exchange_begin(env, ph, p) : STO_OK;
        if (!st)
            st = run_pipe(env, ph, p, in, ss, joins[i], pin, pout, um, ahead ? &ahead[i] : &none,
                          &stats->pipes[i], &outs[i]);
        /* An output is freed after its last reader (physical_share.c lets
         * several pipelines read one aggregation's or join's rows). */
        bool read_later = false;
        for (unsigned k = i + 1; in && k < ph->npipes && !read_later; k++)
            read_later = ph->pipes[k].source == ENG_SOURCE_PIPE && ph->pipes[k].input == p->input;
        if (in && !read_later) eng_rowset_free(&outs[p->input]);
        if (!st) st = eng_exec_setop_rows(p, outs, i, env->cancel);
        if (p->sink == ENG_SINK_EXCHANGE) st = eng_exchange_end(env, ph, p, st, &outs[i]);
        if (!st) release_held(env, ph, i, &outs[i], ahead);
        stats->compile_ms += stats->pipes[i].compile_ms;
        stats->compile_work_ms += stats->pipes[i].compile_work_ms;
        stats->run_ms += stats->pipes[i].run_ms;
    }
    /* after an error: the compiles of pipelines that did not run */
    for (unsigned i = 0; ahead && i < ph->npipes; i++)
        cg_compile_task_cancel(ahead[i].task);
    free(ahead);
    if (!st) {
        *rows = outs[ph->npipes - 1];
        memset(&outs[ph->npipes - 1], 0, sizeof(outs[0]));
        *strings = ss;
    } else {
        eng_exec_strings_free(ss);
    }
    for (unsigned i = 0; i < ph->npipes; i++)
        eng_rowset_free(&outs[i]);
    free(outs);
    for (unsigned i = 0; i < ph->npipes; i++)
        join_rt_free(joins[i]);
    free(joins);
    return st;
}
