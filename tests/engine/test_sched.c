/*
 * test_sched.c — the morsel-driven worker pool (engine/sched.c).
 *
 * Every assertion is on counts and outcomes, never on elapsed time. Where a
 * test needs "a while" (a slow worker, a long query) the pipeline waits for
 * an event the test itself causes, with a generous bound so that a broken
 * scheduler fails the test instead of hanging it.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/sched.h"
#include "test.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Waits (bounded, ~10 s) until *flag is nonzero; 1 when it became so. */
static int wait_for(atomic_int *flag)
{
    for (int i = 0; i < 10000; i++) {
        if (atomic_load(flag)) return 1;
        sleep_us(1000);
    }
    return 0;
}

static eng_sched *make_pool(unsigned threads)
{
    eng_sched_options o = {.threads = threads};
    eng_sched *s = NULL;
    sto_status st = eng_sched_create(&o, &s);
    if (st) {
        fprintf(stderr, "eng_sched_create: %s\n", st->message);
        sto_status_free(st);
    }
    return s;
}

/* ---- coverage: every row exactly once ---------------------------------------- */

typedef struct wstate {
    unsigned worker;
    uint64_t rows;
    atomic_int busy; /* a state belongs to one worker: never used twice at once */
} wstate;

typedef struct cover {
    unsigned n_chunks;
    const uint32_t *chunk_rows;
    _Atomic uint8_t **hits; /* per chunk (or [0] for a range) */
    uint32_t morsel_rows;   /* largest morsel allowed */
    atomic_int bad_morsel;  /* crossed a chunk or was too big */
    atomic_int finalize_calls;
    atomic_int destroyed;
    atomic_int inits;
    uint64_t finalized_rows;
} cover;

static sto_status cover_init(void *ctx, void *state, const eng_worker_info *w)
{
    cover *c = ctx;
    wstate *ws = state;
    ws->worker = w->id;
    atomic_fetch_add(&c->inits, 1);
    return STO_OK;
}

static void cover_destroy(void *ctx, void *state)
{
    cover *c = ctx;
    atomic_fetch_add(&c->destroyed, 1);
}

static int cover_run(void *ctx, void *state, uint64_t begin, uint64_t end)
{
    cover *c = ctx;
    wstate *ws = state;
    unsigned chunk = 0;
    uint64_t b = begin, e = end;
    if (c->n_chunks) {
        chunk = ENG_MORSEL_CHUNK(begin);
        b = ENG_MORSEL_ROW(begin);
        e = ENG_MORSEL_ROW(end);
        if (ENG_MORSEL_CHUNK(end) != chunk || chunk >= c->n_chunks || e > c->chunk_rows[chunk]) {
            atomic_store(&c->bad_morsel, 1);
            return 0;
        }
    }
    if (e <= b || (c->morsel_rows && e - b > c->morsel_rows)) atomic_store(&c->bad_morsel, 1);
    if (atomic_fetch_add(&ws->busy, 1) != 0) atomic_store(&c->bad_morsel, 1);
    for (uint64_t r = b; r < e; r++)
        atomic_fetch_add(&c->hits[chunk][r], 1);
    ws->rows += e - b;
    atomic_fetch_sub(&ws->busy, 1);
    return 0;
}

static int cover_finalize(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    cover *c = ctx;
    atomic_fetch_add(&c->finalize_calls, 1);
    for (unsigned i = 0; i < n; i++)
        c->finalized_rows += ((wstate *)states[i])->rows;
    return 0;
}

/* Runs a coverage pipeline and checks every row was seen once. */
static void check_cover(eng_sched *s, uint64_t rows, unsigned n_chunks, const uint32_t *chunk_rows,
                        const int *nodes, uint32_t morsel_rows)
{
    cover c = {.n_chunks = n_chunks, .chunk_rows = chunk_rows};
    unsigned n_arrays = n_chunks ? n_chunks : 1;
    _Atomic uint8_t *arrays[64];
    REQUIRE(n_arrays <= 64);
    c.hits = arrays;
    for (unsigned i = 0; i < n_arrays; i++) {
        uint64_t n = n_chunks ? chunk_rows[i] : rows;
        arrays[i] = calloc(n ? n : 1, 1);
        REQUIRE(arrays[i]);
    }
    c.morsel_rows = morsel_rows ? morsel_rows : 16384;
    eng_pipeline p = {.name = "cover",
                      .run = cover_run,
                      .ctx = &c,
                      .rows = rows,
                      .n_chunks = n_chunks,
                      .chunk_rows = chunk_rows,
                      .chunk_nodes = nodes,
                      .morsel_rows = morsel_rows,
                      .state_size = sizeof(wstate),
                      .state_init = cover_init,
                      .state_destroy = cover_destroy,
                      .finalize = cover_finalize};
    eng_job *job;
    REQUIRE(eng_job_create(NULL, &job) == STO_OK);
    REQUIRE(eng_job_add(job, &p, NULL, 0, NULL) == STO_OK);
    sto_status st = eng_sched_run(s, job);
    CHECK(st == STO_OK);
    sto_status_free(st);

    uint64_t total = 0, wrong = 0;
    for (unsigned i = 0; i < n_arrays; i++) {
        uint64_t n = n_chunks ? chunk_rows[i] : rows;
        total += n;
        for (uint64_t r = 0; r < n; r++)
            wrong += arrays[i][r] != 1;
        free(arrays[i]);
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(atomic_load(&c.bad_morsel), 0);
    CHECK_EQ_INT(atomic_load(&c.finalize_calls), 1);
    CHECK_EQ_INT(c.finalized_rows, total);
    CHECK_EQ_INT(atomic_load(&c.inits), atomic_load(&c.destroyed));
    eng_job_stats js = eng_job_get_stats(job);
    CHECK(js.workers <= eng_sched_threads(s));
    eng_job_free(job);
}

static void test_range_coverage(void)
{
    static const unsigned sizes[] = {1, 2, 4, 8};
    static const uint64_t rows[] = {0, 1, 999, 100000, (1 << 20) + 7};
    for (unsigned i = 0; i < 4; i++) {
        eng_sched *s = make_pool(sizes[i]);
        REQUIRE(s);
        CHECK_EQ_INT(eng_sched_threads(s), sizes[i]);
        for (unsigned r = 0; r < 5; r++) {
            check_cover(s, rows[r], 0, NULL, NULL, 0);
            check_cover(s, rows[r], 0, NULL, NULL, 100);
        }
        eng_sched_destroy(s);
    }
}

static void test_chunk_coverage(void)
{
    static const uint32_t chunks[] = {65536, 1, 0, 30000, 65536, 17, 0, 40000, 65535};
    static const int nodes[] = {0, -1, 0, 7, 0, -1, 3, 0, -1};
    static const uint32_t empty[] = {0, 0, 0};
    static const unsigned sizes[] = {1, 2, 4, 8};
    for (unsigned i = 0; i < 4; i++) {
        eng_sched *s = make_pool(sizes[i]);
        REQUIRE(s);
        check_cover(s, 0, 9, chunks, NULL, 0);
        check_cover(s, 0, 9, chunks, nodes, 0);
        check_cover(s, 0, 9, chunks, nodes, 5000);
        check_cover(s, 0, 3, empty, NULL, 0);
        check_cover(s, 0, 1, chunks + 5, NULL, 4); /* 17 rows, 5 morsels */
        eng_sched_destroy(s);
    }
}

/* A job without pipelines and one whose only input is empty both finish. */
static void test_empty_jobs(void)
{
    eng_sched *s = make_pool(2);
    REQUIRE(s);
    eng_job *job;
    REQUIRE(eng_job_create(NULL, &job) == STO_OK);
    CHECK(eng_sched_run(s, job) == STO_OK);
    CHECK(eng_job_wait(job) == STO_OK); /* the status was handed out once */
    eng_job_free(job);
    eng_job_free(NULL);
    eng_sched_destroy(s);
}

/* ---- the pipeline DAG and parallel finalize ---------------------------------------- */

typedef struct stage {
    atomic_int *clock;
    atomic_int first_morsel; /* clock when the first morsel started, 0 = none */
    atomic_int finalized;    /* clock when the last partition finished */
    atomic_int parts_left;
    _Atomic uint8_t part_hits[256];
    uint64_t rows;
    atomic_ullong rows_in_states;
    atomic_int n_states_seen;
} stage;

static int stage_run(void *ctx, void *state, uint64_t b, uint64_t e)
{
    stage *st = ctx;
    int zero = 0;
    atomic_compare_exchange_strong(&st->first_morsel, &zero, atomic_fetch_add(st->clock, 1) + 1);
    ((wstate *)state)->rows += e - b;
    return 0;
}

static int stage_finalize(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    stage *st = ctx;
    for (uint64_t p = pb; p < pe; p++)
        atomic_fetch_add(&st->part_hits[p], 1);
    if (pb == 0) {
        uint64_t sum = 0;
        for (unsigned i = 0; i < n; i++)
            sum += ((wstate *)states[i])->rows;
        atomic_store(&st->rows_in_states, sum);
        atomic_store(&st->n_states_seen, (int)n);
    }
    if (atomic_fetch_sub(&st->parts_left, (int)(pe - pb)) == (int)(pe - pb))
        atomic_store(&st->finalized, atomic_fetch_add(st->clock, 1) + 1);
    return 0;
}

static void test_dag_order(void)
{
    eng_sched *s = make_pool(4);
    REQUIRE(s);
    atomic_int clock = 0;
    /* a, b independent; c after both; d after c. Parts: 1, 64, 7, 256. */
    stage st[4] = {0};
    static const uint64_t rows[4] = {50000, 20000, 70000, 0};
    static const uint64_t parts[4] = {1, 64, 7, 256};
    eng_job *job;
    REQUIRE(eng_job_create(NULL, &job) == STO_OK);
    unsigned id[4];
    for (int i = 0; i < 4; i++) {
        st[i].clock = &clock;
        st[i].rows = rows[i];
        atomic_init(&st[i].parts_left, (int)parts[i]);
        eng_pipeline p = {.run = stage_run,
                          .ctx = &st[i],
                          .rows = rows[i],
                          .morsel_rows = 1000,
                          .state_size = sizeof(wstate),
                          .finalize = stage_finalize,
                          .finalize_parts = parts[i]};
        unsigned deps_c[2] = {0, 1}, deps_d[1] = {2};
        const unsigned *deps = i == 2 ? deps_c : i == 3 ? deps_d : NULL;
        unsigned n_deps = i == 2 ? 2 : i == 3 ? 1 : 0;
        REQUIRE(eng_job_add(job, &p, deps, n_deps, &id[i]) == STO_OK);
        CHECK_EQ_INT(id[i], i);
    }
    unsigned bad_dep = 9;
    eng_pipeline dummy = {.run = stage_run, .ctx = &st[0]};
    sto_status err = eng_job_add(job, &dummy, &bad_dep, 1, NULL);
    CHECK(err != STO_OK);
    sto_status_free(err);

    CHECK(eng_sched_run(s, job) == STO_OK);
    for (int i = 0; i < 4; i++) {
        CHECK(atomic_load(&st[i].finalized) > 0);
        CHECK_EQ_INT(atomic_load(&st[i].rows_in_states), rows[i]);
        int wrong = 0;
        for (uint64_t p = 0; p < parts[i]; p++)
            wrong += atomic_load(&st[i].part_hits[p]) != 1;
        CHECK_EQ_INT(wrong, 0);
    }
    CHECK(atomic_load(&st[2].first_morsel) > atomic_load(&st[0].finalized));
    CHECK(atomic_load(&st[2].first_morsel) > atomic_load(&st[1].finalized));
    CHECK(atomic_load(&st[3].finalized) > atomic_load(&st[2].finalized));
    CHECK_EQ_INT(atomic_load(&st[3].first_morsel), 0); /* empty input: no morsel */
    CHECK_EQ_INT(atomic_load(&st[3].n_states_seen), 0);
    eng_job_stats js = eng_job_get_stats(job);
    CHECK_EQ_INT(js.morsels, 50 + 20 + 70 + 1 + 64 + 7 + 256);

    /* Adding after submission is refused. */
    err = eng_job_add(job, &dummy, NULL, 0, NULL);
    CHECK(err != STO_OK);
    sto_status_free(err);
    err = eng_sched_submit(s, job);
    CHECK(err != STO_OK);
    sto_status_free(err);
    eng_job_free(job);
    eng_sched_destroy(s);
}

/* ---- stealing ------------------------------------------------------------------- */

typedef struct steal_ctx {
    _Atomic int runner[64]; /* worker id + 1 that ran morsel i */
    uint32_t w0_lo, w0_hi;  /* worker 0's share (morsel indexes) */
    atomic_int helped;      /* morsels of worker 0's share run by others */
    atomic_int w0_waited_ok;
} steal_ctx;

static int steal_run(void *ctx, void *state, uint64_t b, uint64_t e)
{
    steal_ctx *c = ctx;
    wstate *ws = state;
    atomic_store(&c->runner[b], (int)ws->worker + 1);
    if (ws->worker != 0) {
        if (b >= c->w0_lo && b < c->w0_hi) atomic_fetch_add(&c->helped, 1);
        return 0;
    }
    /* Worker 0 is "slow": its first morsel lasts until someone helps out. */
    if (ws->rows++ == 0) atomic_store(&c->w0_waited_ok, wait_for(&c->helped));
    return 0;
}

static sto_status steal_init(void *ctx, void *state, const eng_worker_info *w)
{
    ((wstate *)state)->worker = w->id;
    return STO_OK;
}

static void test_stealing(void)
{
    eng_sched *s = make_pool(4);
    REQUIRE(s);
    steal_ctx c = {.w0_lo = 0, .w0_hi = 16}; /* 64 morsels dealt 16 per worker */
    eng_pipeline p = {.run = steal_run,
                      .ctx = &c,
                      .rows = 64,
                      .morsel_rows = 1,
                      .state_size = sizeof(wstate),
                      .state_init = steal_init};
    eng_job *job;
    REQUIRE(eng_job_create(NULL, &job) == STO_OK);
    REQUIRE(eng_job_add(job, &p, NULL, 0, NULL) == STO_OK);
    CHECK(eng_sched_run(s, job) == STO_OK);
    int all = 1;
    for (int i = 0; i < 64; i++)
        all &= atomic_load(&c.runner[i]) != 0;
    CHECK(all);
    CHECK(atomic_load(&c.helped) > 0);
    eng_job_stats js = eng_job_get_stats(job);
    CHECK(js.steals > 0);
    CHECK_EQ_INT(js.morsels, 64);
    eng_job_free(job);
    eng_sched_destroy(s);
}

/* ---- errors ------------------------------------------------------------------- */

typedef struct err_ctx {
    uint64_t fail_from; /* rows at or after this fail */
    int rc;
    atomic_int ran_after; /* morsels of the dependent pipeline */
    atomic_int finalized;
    atomic_int inits, destroyed;
} err_ctx;

static sto_status err_init(void *ctx, void *state, const eng_worker_info *w)
{
    atomic_fetch_add(&((err_ctx *)ctx)->inits, 1);
    return STO_OK;
}

static void err_destroy(void *ctx, void *state)
{
    atomic_fetch_add(&((err_ctx *)ctx)->destroyed, 1);
}

static int err_run(void *ctx, void *state, uint64_t b, uint64_t e)
{
    err_ctx *c = ctx;
    if (e > c->fail_from) return c->rc + (int)(b / 1000 % 2); /* two different codes */
    return 0;
}

static int err_finalize(void *ctx, void *const *s, unsigned n, uint64_t pb, uint64_t pe)
{
    atomic_fetch_add(&((err_ctx *)ctx)->finalized, 1);
    return 0;
}

static int after_run(void *ctx, void *state, uint64_t b, uint64_t e)
{
    atomic_fetch_add(&((err_ctx *)ctx)->ran_after, 1);
    return 0;
}

static sto_status detailed_error(void *ctx, void *state, int rc)
{
    return sto_error(eng_rc_sqlstate(rc), "detail for code %d", rc);
}

static void test_errors(void)
{
    eng_sched *s = make_pool(4);
    REQUIRE(s);
    for (int custom = 0; custom < 2; custom++) {
        err_ctx c = {.fail_from = 50000, .rc = ENG_RC_DIVISION_BY_ZERO};
        eng_pipeline p = {.name = "failing",
                          .run = err_run,
                          .ctx = &c,
                          .rows = 200000,
                          .morsel_rows = 1000,
                          .state_size = 8,
                          .state_init = err_init,
                          .state_destroy = err_destroy,
                          .finalize = err_finalize,
                          .error = custom ? detailed_error : NULL};
        eng_pipeline q = {.run = after_run, .ctx = &c, .rows = 10};
        eng_job *job;
        REQUIRE(eng_job_create(NULL, &job) == STO_OK);
        unsigned a;
        REQUIRE(eng_job_add(job, &p, NULL, 0, &a) == STO_OK);
        REQUIRE(eng_job_add(job, &q, &a, 1, NULL) == STO_OK);
        sto_status st = eng_sched_run(s, job);
        REQUIRE(st != STO_OK);
        /* Either of the two codes may win; exactly one status comes back. */
        CHECK(strcmp(st->sqlstate, "22012") == 0 ||
              strcmp(st->sqlstate, eng_rc_sqlstate(ENG_RC_DIVISION_BY_ZERO + 1)) == 0);
        if (custom) CHECK(strncmp(st->message, "detail for code", 15) == 0);
        sto_status_free(st);
        CHECK_EQ_INT(atomic_load(&c.ran_after), 0); /* dependents never start */
        CHECK_EQ_INT(atomic_load(&c.finalized), 0); /* nor does finalize */
        CHECK_EQ_INT(atomic_load(&c.inits), atomic_load(&c.destroyed));
        eng_job_free(job);
    }
    /* Unknown codes still become an error (XX000). */
    CHECK_STREQ(eng_rc_sqlstate(-1), "XX000");
    CHECK_STREQ(eng_rc_sqlstate(ENG_RC_QUERY_CANCELED), "57014");
    CHECK_STREQ(eng_rc_sqlstate(ENG_RC_SUCCESS), "00000");
    eng_sched_destroy(s);
}

static sto_status failing_init(void *ctx, void *state, const eng_worker_info *w)
{
    return sto_error(STO_OUT_OF_MEMORY, "state refused");
}

static void test_state_init_error(void)
{
    eng_sched *s = make_pool(2);
    REQUIRE(s);
    err_ctx c = {.fail_from = UINT64_MAX};
    eng_pipeline p = {
        .run = err_run, .ctx = &c, .rows = 100000, .state_size = 64, .state_init = failing_init};
    eng_job *job;
    REQUIRE(eng_job_create(NULL, &job) == STO_OK);
    REQUIRE(eng_job_add(job, &p, NULL, 0, NULL) == STO_OK);
    sto_status st = eng_sched_run(s, job);
    REQUIRE(st != STO_OK);
    CHECK_STREQ(st->sqlstate, "53200");
    CHECK_STREQ(st->message, "state refused");
    sto_status_free(st);
    eng_job_free(job);
    eng_sched_destroy(s);
}

/* A state that reserves through its worker's cache and releases on the
 * tracker, the way a breaker's hash table would. */
typedef struct cached_state {
    eng_mem *tracker;
} cached_state;

static sto_status cached_init(void *ctx, void *state, const eng_worker_info *w)
{
    cached_state *cs = state;
    if (!w->mem) return sto_error(STO_INTERNAL_ERROR, "no cache");
    cs->tracker = w->mem->mem;
    return eng_mem_cache_reserve(w->mem, 1000);
}

static void cached_destroy(void *ctx, void *state)
{
    eng_mem_release(((cached_state *)state)->tracker, 1000);
}

/* States are charged to the job's memory tracker. */
static void test_state_memory(void)
{
    eng_sched *s = make_pool(2);
    REQUIRE(s);
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 512 << 10, NULL, &mem) == STO_OK);
    err_ctx c = {.fail_from = UINT64_MAX};
    eng_pipeline p = {.run = err_run, .ctx = &c, .rows = 100000, .state_size = 1 << 20};
    eng_job_options o = {.mem = mem};
    eng_job *job;
    REQUIRE(eng_job_create(&o, &job) == STO_OK);
    REQUIRE(eng_job_add(job, &p, NULL, 0, NULL) == STO_OK);
    sto_status st = eng_sched_run(s, job);
    REQUIRE(st != STO_OK);
    CHECK_STREQ(st->sqlstate, "53200");
    CHECK(strstr(st->message, "memory_limit 512kB") != NULL);
    sto_status_free(st);
    eng_job_free(job);
    CHECK_EQ_INT(eng_mem_used(mem), 0);

    eng_mem_set_limit(mem, 16 << 20);
    REQUIRE(eng_job_create(&o, &job) == STO_OK);
    REQUIRE(eng_job_add(job, &p, NULL, 0, NULL) == STO_OK);
    CHECK(eng_sched_run(s, job) == STO_OK);
    eng_job_stats js = eng_job_get_stats(job);
    CHECK(eng_mem_peak(mem) >= (uint64_t)js.workers << 20);
    CHECK_EQ_INT(eng_mem_used(mem), 0); /* states freed after the pipeline */
    eng_job_free(job);

    /* Worker caches: batches taken during the job all come back at its end. */
    eng_pipeline pc = {.run = err_run,
                       .ctx = &c,
                       .rows = 100000,
                       .state_size = sizeof(cached_state),
                       .state_init = cached_init,
                       .state_destroy = cached_destroy};
    REQUIRE(eng_job_create(&o, &job) == STO_OK);
    REQUIRE(eng_job_add(job, &pc, NULL, 0, NULL) == STO_OK);
    CHECK(eng_sched_run(s, job) == STO_OK);
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_job_free(job);
    eng_mem_destroy(mem);
    eng_sched_destroy(s);
}

/* ---- cancellation ---------------------------------------------------------------- */

typedef struct slow_ctx {
    atomic_int started;
    atomic_int running, max_running;
    atomic_int release; /* morsels return at once when set */
    long sleep;
} slow_ctx;

static int slow_run(void *ctx, void *state, uint64_t b, uint64_t e)
{
    slow_ctx *c = ctx;
    atomic_fetch_add(&c->started, 1);
    int now = atomic_fetch_add(&c->running, 1) + 1;
    int max = atomic_load(&c->max_running);
    while (now > max && !atomic_compare_exchange_weak(&c->max_running, &max, now))
        ;
    if (!atomic_load(&c->release)) sleep_us(c->sleep);
    atomic_fetch_sub(&c->running, 1);
    return 0;
}

static eng_job *slow_job(slow_ctx *c, uint64_t morsels, const eng_job_options *o)
{
    eng_pipeline p = {.name = "slow", .run = slow_run, .ctx = c, .rows = morsels, .morsel_rows = 1};
    eng_job *job = NULL;
    if (eng_job_create(o, &job) != STO_OK) return NULL;
    if (eng_job_add(job, &p, NULL, 0, NULL) != STO_OK) {
        eng_job_free(job);
        return NULL;
    }
    return job;
}

/* Waits until the job has started at least n morsels. */
static int wait_started(slow_ctx *c, int n)
{
    for (int i = 0; i < 10000; i++) {
        if (atomic_load(&c->started) >= n) return 1;
        sleep_us(1000);
    }
    return 0;
}

typedef struct canceller {
    eng_job *job;
    slow_ctx *c;
    int started_at_cancel;
    int use_signal;
} canceller;

static atomic_int *signal_flag; /* for the handler only: a test's globals */

static void on_sigusr1(int sig)
{
    atomic_store(signal_flag, 1);
}

static void *cancel_thread(void *arg)
{
    canceller *k = arg;
    wait_started(k->c, 20);
    if (k->use_signal)
        raise(SIGUSR1);
    else
        eng_job_cancel(k->job);
    /* Read after the flag is up: a worker that checked it just before can
     * still start one morsel, no more. */
    k->started_at_cancel = atomic_load(&k->c->started);
    return NULL;
}

static void test_cancel(void)
{
    eng_sched *s = make_pool(4);
    REQUIRE(s);
    for (int use_signal = 0; use_signal < 2; use_signal++) {
        slow_ctx c = {.sleep = 1000};
        atomic_int query_flag = 0;
        eng_job_options o = {.cancel = use_signal ? &query_flag : NULL};
        eng_job *job = slow_job(&c, 1000000, &o);
        REQUIRE(job);
        if (use_signal) {
            CHECK(eng_job_cancel_flag(job) == &query_flag);
            signal_flag = &query_flag;
            signal(SIGUSR1, on_sigusr1);
        }
        canceller k = {.job = job, .c = &c, .use_signal = use_signal};
        pthread_t t;
        REQUIRE(eng_sched_submit(s, job) == STO_OK);
        REQUIRE(pthread_create(&t, NULL, cancel_thread, &k) == 0);
        sto_status st = eng_job_wait(job);
        pthread_join(t, NULL);
        REQUIRE(st != STO_OK);
        CHECK_STREQ(st->sqlstate, "57014");
        CHECK_STREQ(st->message, "canceling statement due to user request");
        sto_status_free(st);
        /* No morsel starts after the flag is seen: at most one more per worker. */
        CHECK(atomic_load(&c.started) <= k.started_at_cancel + (int)eng_sched_threads(s));
        CHECK(atomic_load(&c.started) < 1000000);
        eng_job_free(job);
        if (use_signal) signal(SIGUSR1, SIG_DFL);
    }
    /* Cancelled before it starts: no morsel runs at all. */
    slow_ctx c = {.sleep = 1000};
    eng_job *job = slow_job(&c, 1000, NULL);
    REQUIRE(job);
    eng_job_cancel(job);
    sto_status st = eng_sched_run(s, job);
    REQUIRE(st != STO_OK);
    CHECK_STREQ(st->sqlstate, "57014");
    sto_status_free(st);
    CHECK_EQ_INT(atomic_load(&c.started), 0);
    eng_job_free(job);
    eng_sched_destroy(s);
}

/* ---- several jobs at once ------------------------------------------------------------- */

typedef struct shorts {
    eng_sched *s;
    int n, ok;
    atomic_int done;
} shorts;

static void *run_shorts(void *arg)
{
    shorts *sh = arg;
    for (int i = 0; i < sh->n; i++) {
        cover c = {0};
        _Atomic uint8_t hits[100] = {0};
        _Atomic uint8_t *arrays[1] = {hits};
        c.hits = arrays;
        eng_pipeline p = {.run = cover_run,
                          .ctx = &c,
                          .rows = 100,
                          .morsel_rows = 10,
                          .state_size = sizeof(wstate)};
        eng_job *job;
        if (eng_job_create(NULL, &job) != STO_OK) continue;
        if (eng_job_add(job, &p, NULL, 0, NULL) == STO_OK) {
            sto_status st = eng_sched_run(sh->s, job);
            int all = 1;
            for (int r = 0; r < 100; r++)
                all &= hits[r] == 1;
            if (!st && all) sh->ok++;
            sto_status_free(st);
        }
        eng_job_free(job);
    }
    atomic_store(&sh->done, 1);
    return NULL;
}

/* A long query holds every worker; short queries from another thread must
 * still complete while it runs. */
static void test_fairness(void)
{
    static const unsigned sizes[] = {1, 2, 4};
    for (unsigned i = 0; i < 3; i++) {
        eng_sched *s = make_pool(sizes[i]);
        REQUIRE(s);
        slow_ctx c = {.sleep = 500};
        eng_job *long_job = slow_job(&c, 100000, NULL); /* ~25 s if never released */
        REQUIRE(long_job);
        REQUIRE(eng_sched_submit(s, long_job) == STO_OK);
        CHECK(wait_started(&c, (int)sizes[i] * 2));
        shorts sh = {.s = s, .n = 5};
        pthread_t t;
        REQUIRE(pthread_create(&t, NULL, run_shorts, &sh) == 0);
        int finished = wait_for(&sh.done);
        int long_started = atomic_load(&c.started);
        atomic_store(&c.release, 1); /* now let the long query finish */
        pthread_join(t, NULL);
        CHECK(finished);
        CHECK_EQ_INT(sh.ok, 5);
        CHECK(long_started < 100000); /* the long query was still running */
        sto_status st = eng_job_wait(long_job);
        CHECK(st == STO_OK);
        sto_status_free(st);
        CHECK_EQ_INT(atomic_load(&c.started), 100000);
        eng_job_free(long_job);
        eng_sched_destroy(s);
    }
}

/* A query's `threads` bounds how many workers serve it at once. */
static void test_thread_limit(void)
{
    eng_sched *s = make_pool(4);
    REQUIRE(s);
    slow_ctx c = {.sleep = 200};
    eng_job_options o = {.threads = 2};
    eng_job *job = slow_job(&c, 400, &o);
    REQUIRE(job);
    CHECK(eng_sched_run(s, job) == STO_OK);
    CHECK(atomic_load(&c.max_running) <= 2);
    CHECK(atomic_load(&c.max_running) >= 1);
    CHECK_EQ_INT(atomic_load(&c.started), 400);
    eng_job_free(job);
    eng_sched_destroy(s);
}

/* ---- shutdown ------------------------------------------------------------------ */

typedef struct waiter {
    eng_job *job;
    sto_status st;
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    w->st = eng_job_wait(w->job);
    return NULL;
}

static void test_destroy_running(void)
{
    eng_sched *s = make_pool(2);
    REQUIRE(s);
    slow_ctx c1 = {.sleep = 1000}, c2 = {.sleep = 1000};
    eng_job *j1 = slow_job(&c1, 1000000, NULL), *j2 = slow_job(&c2, 1000000, NULL);
    REQUIRE(j1 && j2);
    REQUIRE(eng_sched_submit(s, j1) == STO_OK);
    REQUIRE(eng_sched_submit(s, j2) == STO_OK);
    waiter w = {.job = j2};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, wait_thread, &w) == 0);
    CHECK(wait_started(&c1, 5));
    eng_sched_destroy(s); /* cancels both, joins the workers */
    pthread_join(t, NULL);
    sto_status st = eng_job_wait(j1);
    REQUIRE(st != STO_OK);
    CHECK_STREQ(st->sqlstate, "57014");
    sto_status_free(st);
    REQUIRE(w.st != STO_OK);
    CHECK_STREQ(w.st->sqlstate, "57014");
    sto_status_free(w.st);
    CHECK(atomic_load(&c1.started) < 1000000);
    eng_job_free(j1);
    eng_job_free(j2);

    /* Freeing a job that is still running cancels it and waits. */
    s = make_pool(2);
    REQUIRE(s);
    slow_ctx c3 = {.sleep = 1000};
    eng_job *j3 = slow_job(&c3, 1000000, NULL);
    REQUIRE(j3);
    REQUIRE(eng_sched_submit(s, j3) == STO_OK);
    CHECK(wait_started(&c3, 3));
    eng_job_free(j3);
    eng_sched_destroy(s);
}

/* ---- where workers run ------------------------------------------------------------ */

static void test_workers(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
    eng_sched *s = make_pool(0); /* one per allowed core */
    REQUIRE(s);
    CHECK_EQ_INT(eng_sched_threads(s), CPU_COUNT(&set));
    for (unsigned i = 0; i < eng_sched_threads(s); i++) {
        eng_worker_info w = eng_sched_worker(s, i);
        CHECK_EQ_INT(w.id, i);
        CHECK(w.node >= 0);
        CHECK(w.cpu == -1 || CPU_ISSET(w.cpu, &set));
        CHECK(w.mem == NULL);
    }
    eng_sched_destroy(s);
    eng_sched_options o = {.threads = 3, .no_pinning = 1};
    REQUIRE(eng_sched_create(&o, &s) == STO_OK);
    CHECK_EQ_INT(eng_sched_worker(s, 2).cpu, -1);
    check_cover(s, 12345, 0, NULL, NULL, 0);
    eng_sched_destroy(s);
}

int main(void)
{
    RUN(test_range_coverage);
    RUN(test_chunk_coverage);
    RUN(test_empty_jobs);
    RUN(test_dag_order);
    RUN(test_stealing);
    RUN(test_errors);
    RUN(test_state_init_error);
    RUN(test_state_memory);
    RUN(test_cancel);
    RUN(test_fairness);
    RUN(test_thread_limit);
    RUN(test_destroy_running);
    RUN(test_workers);
    return TEST_REPORT();
}
