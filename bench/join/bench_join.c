/*
 * bench_join.c — throughput of the join algorithms of engine/rt_*.h.
 *
 * A foreign-key join as in the radix-join literature: the build side has
 * unique 8-byte keys (a permutation of 0..B-1 when B is a power of two) and
 * 8-byte payloads; the probe side's keys hit the build side, uniformly or
 * Zipf-distributed (s = 1, hot keys scattered over the key space). The
 * inputs are arrays of tuples made before the clock starts; the join scans
 * them as a pipeline scans a table. Each run is one scheduler job: materialize (or, for
 * the shared table, probe straight from the scan), partition / sort, build,
 * probe; the probe counts matches and sums payloads — what generated code
 * would do inline (hash, chain walk, key compare) — and every algorithm
 * must report the same sums.
 *
 * Output: one line per (algorithm, distribution, threads, run) with the
 * wall time and (B + P) / time / threads, the tuples per second per core.
 * Each configuration runs BENCH_JOIN_RUNS times (default 2): the first
 * faults in fresh pages for every buffer; the later ones get the pages the
 * run before freed (big blocks from the instance tracker's pool, engine/
 * mem_pool.h, smaller ones from jemalloc, as in the rackdb program), which
 * is what a query finds on a server that has run queries before.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "engine/mem.h"
#include "engine/rt_hashtable.h"
#include "engine/rt_join.h"
#include "engine/rt_radix.h"
#include "engine/rt_sortmerge.h"
#include "engine/sched.h"

#define MAXW   64
#define SLICES 64u
#define UNITS  256u

typedef struct tuple {
    uint64_t key, payload;
} tuple;

typedef enum { ALG_RADIX, ALG_SHARED, ALG_SORTMERGE } alg;
static const char *const alg_names[] = {"radix", "non-partitioned", "sort-merge"};

typedef struct wstate {
    unsigned id;
} wstate;

typedef struct bench {
    alg a;
    bool zipf;
    uint64_t nb, np;
    const tuple *bin, *pin; /* the inputs */
    unsigned threads;
    eng_mem *mem;
    eng_join_mat build[MAXW], probe[MAXW];
    eng_join_mat *bp[MAXW], *pp[MAXW];
    eng_join_ht ht;
    eng_radix_join rj;
    eng_sm_join sm;
    struct {
        uint64_t matches, sum;
        char pad[48];
    } out[MAXW];
    _Atomic(sto_status) err;
} bench;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* A bijection of [0, n) when n is a power of two (odd multiplier). */
static uint64_t permute(uint64_t i, uint64_t n)
{
    return (i * 0x9E3779B97F4A7C15ULL) % n;
}

static tuple build_tuple(uint64_t nb, uint64_t i)
{
    return (tuple){permute(i, nb), i};
}

static tuple probe_tuple(const bench *b, uint64_t i)
{
    return b->pin[i];
}

static tuple make_probe_tuple(const bench *b, uint64_t i)
{
    uint64_t r = mix(i + 0x5bd1e995);
    uint64_t k;
    if (b->zipf) {
        double u = (double)(r >> 11) / 9007199254740992.0;
        uint64_t rank = (uint64_t)floor(exp(u * log((double)b->nb))); /* 1 .. nb */
        if (rank > b->nb) rank = b->nb;
        k = permute(rank - 1, b->nb);
    } else {
        k = r % b->nb;
    }
    return (tuple){k, i};
}

static int fail(bench *b, sto_status st)
{
    sto_status none = NULL;
    if (!atomic_compare_exchange_strong(&b->err, &none, st)) sto_status_free(st);
    return 1;
}

static sto_status on_error(void *ctx, void *state, int rc)
{
    (void)state;
    sto_status st = atomic_exchange(&((bench *)ctx)->err, NULL);
    return st ? st : sto_error(STO_INTERNAL_ERROR, "bench pipeline failed (%d)", rc);
}

static sto_status state_init(void *ctx, void *state, const eng_worker_info *wi)
{
    bench *b = ctx;
    ((wstate *)state)->id = wi->id;
    b->build[wi->id].mem.cache = wi->mem;
    b->probe[wi->id].mem.cache = wi->mem;
    return STO_OK;
}

static int materialize(bench *b, eng_join_mat *m, bool probe, uint64_t lo, uint64_t hi)
{
    cg_error err = cg_error_none();
    for (uint64_t i = lo; i < hi; i++) {
        tuple t = probe ? b->pin[i] : b->bin[i];
        uint8_t *row;
        if (eng_rt_join_append(&err, m, mix(t.key), &row)) return fail(b, err.detail);
        memcpy(row, &t, sizeof(t));
    }
    return 0;
}

static int m_build(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    bench *b = ctx;
    return materialize(b, &b->build[((wstate *)state)->id], false, lo, hi);
}

static int m_probe_mat(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    bench *b = ctx;
    return materialize(b, &b->probe[((wstate *)state)->id], true, lo, hi);
}

/* The chain walk generated code does: hash, tag, hash compare, key compare. */
static inline void probe_chain(eng_join_entry *e, uint64_t h, uint64_t key, uint64_t *n,
                               uint64_t *sum)
{
    for (; e; e = e->next) {
        const tuple *t = (const tuple *)(const void *)eng_join_row(e);
        if (e->hash == h && t->key == key) {
            (*n)++;
            *sum += t->payload;
        }
    }
}

/* --- shared table ---------------------------------------------------------- */

static int f_prepare(void *ctx, void *const *s, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)s, (void)n, (void)pb, (void)pe;
    bench *b = ctx;
    sto_status st = eng_join_ht_prepare(&b->ht, b->bp, b->threads, b->mem);
    return st ? fail(b, st) : 0;
}

static int m_insert(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state;
    bench *b = ctx;
    for (uint64_t u = lo; u < hi; u++)
        eng_join_ht_insert_slice(&b->ht, u, UNITS);
    return 0;
}

static int m_probe_shared(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    bench *b = ctx;
    unsigned w = ((wstate *)state)->id;
    uint64_t n = 0, sum = 0;
    for (uint64_t i = lo; i < hi; i++) {
        tuple t = probe_tuple(b, i);
        uint64_t h = mix(t.key);
        probe_chain(eng_join_ht_lookup(&b->ht, h), h, t.key, &n, &sum);
    }
    b->out[w].matches += n;
    b->out[w].sum += sum;
    return 0;
}

/* --- radix ------------------------------------------------------------------ */

static int m_radix_plan(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state, (void)lo, (void)hi;
    bench *b = ctx;
    /* BENCH_JOIN_RADIX_BITS forces the number of bits (default: the plan's) */
    const char *bits = getenv("BENCH_JOIN_RADIX_BITS");
    sto_status st = eng_radix_init(&b->rj, b->bp, b->threads, b->pp, b->threads, SLICES,
                                   bits ? atoi(bits) : -1, b->mem);
    return st ? fail(b, st) : 0;
}

static int m_radix_hist(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state;
    bench *b = ctx;
    for (uint64_t u = lo; u < hi; u++)
        eng_radix_histogram(&b->rj, u < SLICES ? &b->rj.build : &b->rj.probe,
                            (unsigned)(u % SLICES));
    return 0;
}

static int f_radix_prefix(void *ctx, void *const *s, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)s, (void)n, (void)pb, (void)pe;
    eng_radix_prefix(&((bench *)ctx)->rj);
    return 0;
}

static int m_radix_scatter(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state;
    bench *b = ctx;
    for (uint64_t u = lo; u < hi; u++) {
        sto_status st = eng_radix_scatter(&b->rj, u < SLICES ? &b->rj.build : &b->rj.probe,
                                          (unsigned)(u % SLICES));
        if (st) return fail(b, st);
    }
    return 0;
}

static int m_radix_refine(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state;
    bench *b = ctx;
    uint64_t parts1 = (uint64_t)1 << b->rj.bits1;
    for (uint64_t u = lo; u < hi; u++) {
        uint64_t a, z;
        eng_join_slice(parts1, u % UNITS, UNITS, &a, &z);
        for (uint64_t p = a; p < z; p++)
            eng_radix_refine(&b->rj, u < UNITS ? &b->rj.build : &b->rj.probe, p);
    }
    return 0;
}

/* Build and probe partition by partition: the table is still in cache when
 * its probe tuples come. */
static int m_radix_build(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state;
    bench *b = ctx;
    for (uint64_t u = lo; u < hi; u++) {
        uint64_t a, z;
        eng_join_slice(b->rj.parts, u, UNITS, &a, &z);
        for (uint64_t p = a; p < z; p++) {
            sto_status st = eng_radix_build(&b->rj, p);
            if (st) return fail(b, st);
        }
    }
    return 0;
}

static int f_radix_tasks(void *ctx, void *const *s, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)s, (void)n, (void)pb, (void)pe;
    bench *b = ctx;
    sto_status st = eng_radix_tasks(&b->rj);
    return st ? fail(b, st) : 0;
}

static int m_radix_probe(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    bench *b = ctx;
    unsigned w = ((wstate *)state)->id;
    uint64_t n = 0, sum = 0;
    const eng_radix_join *rj = &b->rj;
    for (uint64_t u = lo; u < hi; u++) {
        uint64_t a, z;
        eng_join_slice(rj->n_tasks, u, UNITS, &a, &z);
        for (uint64_t t = a; t < z; t++) {
            const eng_radix_task *k = &rj->tasks[t];
            const eng_join_ht *ht = &rj->tables[k->part];
            if (!ht->dir) continue;
            for (uint64_t i = k->begin; i < k->end; i++) {
                eng_join_entry *e = eng_join_entry_at(rj->probe.out, rj->probe.stride, i);
                const tuple *pt = (const tuple *)(const void *)eng_join_row(e);
                probe_chain(eng_join_ht_lookup(ht, e->hash), e->hash, pt->key, &n, &sum);
            }
        }
    }
    b->out[w].matches += n;
    b->out[w].sum += sum;
    return 0;
}

/* --- sort-merge ------------------------------------------------------------ */

static uint64_t norm_key(void *ctx, const uint8_t *row)
{
    (void)ctx;
    return ((const tuple *)(const void *)row)->key;
}

static int m_sm_plan(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state, (void)lo, (void)hi;
    bench *b = ctx;
    sto_status st = eng_sm_init(&b->sm, b->bp, b->threads, b->pp, b->threads, norm_key, norm_key, b,
                                SLICES, 0, b->mem);
    if (!st) st = eng_sm_sample(&b->sm);
    return st ? fail(b, st) : 0;
}

static int m_sm_hist(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state;
    bench *b = ctx;
    for (uint64_t u = lo; u < hi; u++)
        eng_sm_histogram(&b->sm, u < SLICES ? &b->sm.build : &b->sm.probe, (unsigned)(u % SLICES));
    return 0;
}

static int f_sm_prefix(void *ctx, void *const *s, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)s, (void)n, (void)pb, (void)pe;
    eng_sm_prefix(&((bench *)ctx)->sm);
    return 0;
}

static int m_sm_scatter(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state;
    bench *b = ctx;
    for (uint64_t u = lo; u < hi; u++) {
        sto_status st = eng_sm_scatter(&b->sm, u < SLICES ? &b->sm.build : &b->sm.probe,
                                       (unsigned)(u % SLICES));
        if (st) return fail(b, st);
    }
    return 0;
}

static int m_sm_sort(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    (void)state;
    bench *b = ctx;
    for (uint64_t u = lo; u < hi; u++) {
        uint64_t a, z;
        eng_join_slice(b->sm.ranges, u % UNITS, UNITS, &a, &z);
        for (uint64_t r = a; r < z; r++) {
            sto_status st = eng_sm_sort_range(&b->sm, u < UNITS ? &b->sm.build : &b->sm.probe, r);
            if (st) return fail(b, st);
        }
    }
    return 0;
}

static int f_sm_tasks(void *ctx, void *const *s, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)s, (void)n, (void)pb, (void)pe;
    bench *b = ctx;
    sto_status st = eng_sm_tasks(&b->sm);
    return st ? fail(b, st) : 0;
}

static int m_sm_join(void *ctx, void *state, uint64_t lo, uint64_t hi)
{
    bench *b = ctx;
    unsigned w = ((wstate *)state)->id;
    const eng_sm_join *sm = &b->sm;
    uint64_t n = 0, sum = 0;
    for (uint64_t u = lo; u < hi; u++) {
        uint64_t a, z;
        eng_join_slice(sm->n_tasks, u, UNITS, &a, &z);
        for (uint64_t t = a; t < z; t++) {
            const eng_sm_task *k = &sm->tasks[t];
            const eng_sm_pair *pp = sm->probe.sorted, *bp = sm->build.sorted;
            uint64_t j = sm->build.range[k->range], end = sm->build.range[k->range + 1];
            for (uint64_t i = k->begin; i < k->end; i++) {
                uint64_t key = pp[i].key;
                while (j < end && bp[j].key < key)
                    j++;
                for (uint64_t x = j; x < end && bp[x].key == key; x++) {
                    n++;
                    sum += ((const tuple *)(const void *)eng_join_row(bp[x].e))->payload;
                }
            }
        }
    }
    b->out[w].matches += n;
    b->out[w].sum += sum;
    return 0;
}

/* --- driver ------------------------------------------------------------------- */

static sto_status add(eng_job *job, bench *b, const char *name, eng_morsel_fn fn, uint64_t rows,
                      bool unit, eng_finalize_fn fin, unsigned d1, unsigned d2, unsigned *id)
{
    eng_pipeline p = {.name = name,
                      .run = fn,
                      .ctx = b,
                      .rows = rows,
                      .morsel_rows = unit ? 1 : 0,
                      .state_size = sizeof(wstate),
                      .state_init = state_init,
                      .finalize = fin,
                      .error = on_error};
    unsigned deps[2] = {d1, d2};
    return eng_job_add(job, &p, deps, d1 == ~0u ? 0 : d2 == ~0u ? 1 : 2, id);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of the whole process: on a machine shared with other jobs the
 * wall time says how much CPU we got, this says how much the join needed. */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static sto_status run(eng_sched *pool, bench *b, double *secs, double *cpu)
{
    eng_job *job = NULL;
    eng_job_options jo = {.threads = b->threads, .mem = b->mem};
    STO_TRY(eng_job_create(&jo, &job));
    unsigned bi, pi, x, none = ~0u;
    sto_status st = add(job, b, "build", m_build, b->nb, false,
                        b->a == ALG_SHARED ? f_prepare : NULL, none, none, &bi);
    if (!st && b->a == ALG_SHARED) {
        st = add(job, b, "insert", m_insert, UNITS, true, NULL, bi, none, &x);
        if (!st) st = add(job, b, "probe", m_probe_shared, b->np, false, NULL, x, none, &x);
    } else if (!st && b->a == ALG_RADIX) {
        st = add(job, b, "probe side", m_probe_mat, b->np, false, NULL, none, none, &pi);
        if (!st) st = add(job, b, "plan", m_radix_plan, 1, true, NULL, bi, pi, &x);
        if (!st)
            st = add(job, b, "hist", m_radix_hist, 2 * SLICES, true, f_radix_prefix, x, none, &x);
        if (!st) st = add(job, b, "scatter", m_radix_scatter, 2 * SLICES, true, NULL, x, none, &x);
        if (!st) st = add(job, b, "refine", m_radix_refine, 2 * UNITS, true, NULL, x, none, &x);
        if (!st) st = add(job, b, "build", m_radix_build, UNITS, true, f_radix_tasks, x, none, &x);
        if (!st) st = add(job, b, "probe", m_radix_probe, UNITS, true, NULL, x, none, &x);
    } else if (!st) {
        st = add(job, b, "probe side", m_probe_mat, b->np, false, NULL, none, none, &pi);
        if (!st) st = add(job, b, "plan", m_sm_plan, 1, true, NULL, bi, pi, &x);
        if (!st) st = add(job, b, "hist", m_sm_hist, 2 * SLICES, true, f_sm_prefix, x, none, &x);
        if (!st) st = add(job, b, "scatter", m_sm_scatter, 2 * SLICES, true, NULL, x, none, &x);
        if (!st) st = add(job, b, "sort", m_sm_sort, 2 * UNITS, true, f_sm_tasks, x, none, &x);
        if (!st) st = add(job, b, "join", m_sm_join, UNITS, true, NULL, x, none, &x);
    }
    double t0 = now(), c0 = cpu_now();
    if (!st) st = eng_sched_run(pool, job);
    *secs = now() - t0;
    *cpu = cpu_now() - c0;
    eng_job_free(job);
    return st;
}

/* Runs and prints one configuration; nonzero when it could not start. */
static int one_run(eng_sched *pool, eng_mem *instance, alg a, int z, uint64_t nb, uint64_t np,
                   const tuple *bin, const tuple *pin, unsigned threads, unsigned rep)
{
    bench *b = calloc(1, sizeof(*b));
    if (!b) return 1;
    b->a = a;
    b->zipf = z;
    b->nb = nb;
    b->np = np;
    b->bin = bin;
    b->pin = pin;
    b->threads = threads;
    if (eng_mem_create("query", 0, instance, &b->mem)) return 1;
    for (unsigned i = 0; i < MAXW; i++) {
        eng_join_mat_init(&b->build[i], (eng_rt_mem){b->mem, NULL, -1}, sizeof(tuple));
        eng_join_mat_init(&b->probe[i], (eng_rt_mem){b->mem, NULL, -1}, sizeof(tuple));
        b->bp[i] = &b->build[i];
        b->pp[i] = &b->probe[i];
    }
    double secs = 0, cpu = 0;
    sto_status st = run(pool, b, &secs, &cpu);
    uint64_t m = 0, sum = 0;
    for (unsigned i = 0; i < MAXW; i++) {
        m += b->out[i].matches;
        sum += b->out[i].sum;
    }
    const char *keys = z ? "zipf" : "uniform";
    if (st) {
        printf("%-16s %-8s %7u %4u  error: %s\n", alg_names[a], keys, threads, rep, st->message);
        sto_status_free(st);
    } else {
        printf("%-16s %-8s %7u %4u %8.3f %14.2f %8.3f %14.2f %10llu %llu\n", alg_names[a], keys,
               threads, rep, secs, (double)(nb + np) / secs / threads / 1e6, cpu,
               (double)(nb + np) / cpu / 1e6, (unsigned long long)m, (unsigned long long)sum);
    }
    fflush(stdout);
    if (b->ht.dir) eng_join_ht_free(&b->ht);
    eng_radix_free(&b->rj);
    eng_sm_free(&b->sm);
    for (unsigned i = 0; i < MAXW; i++) {
        eng_join_mat_free(&b->build[i]);
        eng_join_mat_free(&b->probe[i]);
    }
    eng_mem_destroy(b->mem);
    free(b);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t nb = (argc > 1 ? strtoull(argv[1], NULL, 10) : 16) << 20;
    uint64_t np = (argc > 2 ? strtoull(argv[2], NULL, 10) : 16) << 20;
    unsigned threads[8] = {1, 2};
    unsigned nt = 2;
    if (argc > 3) {
        nt = 0;
        for (int i = 3; i < argc && nt < 8; i++)
            threads[nt++] = (unsigned)atoi(argv[i]);
    }
    double load[3] = {0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(f);
    }
    printf("join %llu x %llu tuples (16 bytes), load average %.2f %.2f %.2f\n",
           (unsigned long long)nb, (unsigned long long)np, load[0], load[1], load[2]);
    printf("%-16s %-8s %7s %4s %8s %14s %8s %14s %10s %s\n", "algorithm", "keys", "threads", "run",
           "wall s", "Mtuples/s/core", "cpu s", "Mtuples/cpu-s", "matches", "payload sum");
    tuple *bin = malloc(nb * sizeof(tuple)), *pin = malloc(np * sizeof(tuple));
    if (!bin || !pin) {
        fprintf(stderr, "no memory for the inputs\n");
        return 1;
    }
    for (uint64_t i = 0; i < nb; i++)
        bin[i] = build_tuple(nb, i);
    /* as in the engine: queries' trackers below the instance's, whose pool
     * keeps big blocks for the next run */
    eng_mem *instance;
    if (eng_mem_create("instance", 0, NULL, &instance)) return 1;
    const char *only = getenv("BENCH_JOIN_ALGS"); /* "radix,sort-merge": only those */
    const char *runs_env = getenv("BENCH_JOIN_RUNS");
    unsigned runs = runs_env ? (unsigned)atoi(runs_env) : 2;
    if (!runs) runs = 1;
    /* One probe input at a time: a big probe side takes GBs. */
    for (int z = 0; z < 2; z++) {
        bench g = {.zipf = z, .nb = nb};
        for (uint64_t i = 0; i < np; i++)
            pin[i] = make_probe_tuple(&g, i);
        for (unsigned ti = 0; ti < nt; ti++) {
            eng_sched *pool;
            eng_sched_options so = {.threads = threads[ti]};
            if (threads[ti] > MAXW || eng_sched_create(&so, &pool)) {
                fprintf(stderr, "cannot start %u threads\n", threads[ti]);
                return 1;
            }
            for (int a = 0; a < 3; a++) {
                if (only && !strstr(only, alg_names[a])) continue;
                for (unsigned r = 1; r <= runs; r++)
                    if (one_run(pool, instance, (alg)a, z, nb, np, bin, pin, threads[ti], r))
                        return 1;
            }
            eng_sched_destroy(pool);
        }
    }
    eng_mem_destroy(instance);
    free(bin);
    free(pin);
    return 0;
}
