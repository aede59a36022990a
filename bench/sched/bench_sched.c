/*
 * bench_sched.c — what the morsel scheduler costs and how it scales.
 *
 *   bench_sched [THREADS] [MROWS]
 *
 * 1. overhead: an empty pipeline over many tiny morsels; the time per morsel
 *    is what scheduling adds (take, steal, count down).
 * 2. scan: the sum of a 64-bit column of MROWS million rows in 64K-row chunks,
 *    with 1, 2, 4 ... THREADS workers, against a plain C loop on one thread;
 *    prints GB/s and the speed-up over that loop.
 * 3. skew: every 8th chunk is scanned 20 times; the speed-up from one worker
 *    to all of them, and the steals that keep the workers busy.
 * 4. latency: how long a short query takes while a long one holds the pool.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/sched.h"

#define CHUNK 65536u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(sto_status st)
{
    if (!st) return;
    fprintf(stderr, "error %s: %s\n", st->sqlstate, st->message);
    exit(1);
}

typedef struct scan {
    int64_t **chunks;
    unsigned n_chunks;
    int skew;      /* every 8th chunk is passed over 20 times */
    int64_t total; /* written by finalize */
} scan;

typedef struct acc {
    int64_t sum;
} acc;

/* The work of a scan, shared by the pipeline and the plain loop. */
static __attribute__((noinline)) int64_t sum_range(const int64_t *p, size_t n)
{
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += p[i];
    return sum;
}

static int scan_run(void *ctx, void *state, uint64_t b, uint64_t e)
{
    scan *s = ctx;
    uint32_t c = ENG_MORSEL_CHUNK(b);
    const int64_t *col = s->chunks[c] + ENG_MORSEL_ROW(b);
    size_t n = ENG_MORSEL_ROW(e) - ENG_MORSEL_ROW(b);
    int reps = s->skew && c % 8 == 0 ? 20 : 1;
    int64_t sum = 0;
    for (int r = 0; r < reps; r++) {
        __asm__ volatile("" : "+r"(col)); /* the compiler may not merge passes */
        sum = sum_range(col, n);
    }
    ((acc *)state)->sum += sum;
    return 0;
}

static int scan_finalize(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    scan *s = ctx;
    s->total = 0;
    for (unsigned i = 0; i < n; i++)
        s->total += ((acc *)states[i])->sum;
    return 0;
}

static int nothing(void *ctx, void *state, uint64_t b, uint64_t e)
{
    return 0;
}

/* Runs one scan on a fresh job; returns seconds. */
static double run_scan(eng_sched *pool, scan *s, const uint32_t *rows, unsigned threads,
                       eng_job_stats *stats)
{
    eng_pipeline p = {.name = "scan",
                      .run = scan_run,
                      .ctx = s,
                      .n_chunks = s->n_chunks,
                      .chunk_rows = rows,
                      .state_size = sizeof(acc),
                      .finalize = scan_finalize};
    eng_job_options o = {.threads = threads};
    eng_job *job;
    die(eng_job_create(&o, &job));
    die(eng_job_add(job, &p, NULL, 0, NULL));
    double t = now_s();
    die(eng_sched_run(pool, job));
    t = now_s() - t;
    if (stats) *stats = eng_job_get_stats(job);
    eng_job_free(job);
    return t;
}

static double best_scan(eng_sched *pool, scan *s, const uint32_t *rows, unsigned threads,
                        eng_job_stats *stats)
{
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t = run_scan(pool, s, rows, threads, stats);
        if (t < best) best = t;
    }
    return best;
}

typedef struct slow {
    atomic_int stop;
} slow;

static int slow_run(void *ctx, void *state, uint64_t b, uint64_t e)
{
    slow *s = ctx;
    if (atomic_load(&s->stop)) return 0;
    volatile double x = 1;
    for (int i = 0; i < 200000; i++)
        x = x * 1.0000001;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
    uint64_t mrows = argc > 2 ? (uint64_t)atoll(argv[2]) : 64;
    eng_sched_options so = {.threads = threads};
    eng_sched *pool;
    die(eng_sched_create(&so, &pool));
    threads = eng_sched_threads(pool);
    printf("workers: %u (node of worker 0: %d)\n", threads, eng_sched_worker(pool, 0).node);

    /* 1. overhead per morsel */
    {
        uint64_t morsels = 2000000;
        eng_pipeline p = {.run = nothing, .rows = morsels, .morsel_rows = 1};
        eng_job *job;
        die(eng_job_create(NULL, &job));
        die(eng_job_add(job, &p, NULL, 0, NULL));
        double t = now_s();
        die(eng_sched_run(pool, job));
        t = now_s() - t;
        eng_job_stats st = eng_job_get_stats(job);
        printf("overhead: %llu empty morsels in %.3f s = %.0f ns per morsel per worker "
               "(%llu steals)\n",
               (unsigned long long)morsels, t, t * 1e9 * threads / (double)morsels,
               (unsigned long long)st.steals);
        eng_job_free(job);
    }

    /* 2. scan scaling */
    unsigned n_chunks = (unsigned)((mrows * 1000000 + CHUNK - 1) / CHUNK);
    scan s = {.n_chunks = n_chunks};
    s.chunks = calloc(n_chunks, sizeof(*s.chunks));
    uint32_t *rows = calloc(n_chunks, sizeof(*rows));
    if (!s.chunks || !rows) return 1;
    int64_t expect = 0;
    for (unsigned c = 0; c < n_chunks; c++) {
        rows[c] = CHUNK;
        s.chunks[c] = malloc(CHUNK * sizeof(int64_t));
        if (!s.chunks[c]) return 1;
        for (uint32_t i = 0; i < CHUNK; i++) {
            s.chunks[c][i] = (int64_t)(c * 7 + i) % 1000;
            expect += s.chunks[c][i];
        }
    }
    double bytes = (double)n_chunks * CHUNK * sizeof(int64_t);
    double plain = 1e9;
    for (int r = 0; r < 5; r++) {
        double t = now_s();
        int64_t sum = 0;
        for (unsigned c = 0; c < n_chunks; c++)
            sum += sum_range(s.chunks[c], CHUNK);
        t = now_s() - t;
        if (sum != expect) return 1;
        if (t < plain) plain = t;
    }
    printf("scan: %u chunks of 64K rows (%.0f MB); plain C loop, 1 thread: %.3f s, %.2f GB/s\n",
           n_chunks, bytes / 1e6, plain, bytes / plain / 1e9);
    for (unsigned t = 1; t <= threads; t *= 2) {
        eng_job_stats st;
        double secs = best_scan(pool, &s, rows, t, &st);
        if (s.total != expect) {
            fprintf(stderr, "wrong sum\n");
            return 1;
        }
        printf("  threads %3u: %.3f s, %6.2f GB/s, speed-up over plain loop %.2fx (%llu steals)\n",
               t, secs, bytes / secs / 1e9, plain / secs, (unsigned long long)st.steals);
        if (t < threads && t * 2 > threads) t = threads / 2; /* end on the full pool */
    }

    /* 3. skew: the speed-up from 1 to all workers should match the even case */
    {
        eng_job_stats st;
        s.skew = 1;
        double one = best_scan(pool, &s, rows, 1, NULL);
        double all = best_scan(pool, &s, rows, threads, &st);
        s.skew = 0;
        printf("skew: every 8th chunk 20 passes: 1 worker %.3f s, %u workers %.3f s, "
               "speed-up %.2fx (ideal %u), %llu steals\n",
               one, threads, all, one / all, threads, (unsigned long long)st.steals);
    }

    /* 4. a short query while a long one runs */
    {
        slow sl = {0};
        eng_pipeline lp = {.run = slow_run, .ctx = &sl, .rows = 1000000, .morsel_rows = 1};
        eng_job *long_job;
        die(eng_job_create(NULL, &long_job));
        die(eng_job_add(long_job, &lp, NULL, 0, NULL));
        die(eng_sched_submit(pool, long_job));
        double alone = best_scan(pool, &s, rows, threads, NULL);
        atomic_store(&sl.stop, 1);
        die(eng_job_wait(long_job));
        eng_job_free(long_job);
        double idle = best_scan(pool, &s, rows, threads, NULL);
        printf("latency: scan while a long query runs %.3f s vs on an idle pool %.3f s (%.2fx)\n",
               alone, idle, alone / idle);
    }

    for (unsigned c = 0; c < n_chunks; c++)
        free(s.chunks[c]);
    free(s.chunks);
    free(rows);
    eng_sched_destroy(pool);
    return 0;
}
