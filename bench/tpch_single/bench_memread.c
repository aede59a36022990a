/*
 * bench_memread.c — how fast this machine reads columns: the yardstick for
 * Q6's scan.
 *
 * Q6 reads four lineitem columns (l_quantity, l_extendedprice, l_discount
 * as 8-byte decimals, l_shipdate as a 4-byte date: 28 bytes per row). This
 * program allocates four arrays of the same widths for `rows` rows, touches
 * them once (so page faults are not timed), then has `threads` threads sum
 * their share of every array with a plain C loop, best of `reps`. It prints
 * the bytes read per second, the upper bound a column scan can reach.
 *
 *   bench_memread [rows=6001215] [threads=all cores] [reps=5]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct share {
    const int64_t *q, *p, *d;
    const int32_t *date;
    size_t begin, end;
    int64_t sum;
} share;

static void *read_share(void *arg)
{
    share *s = arg;
    int64_t sum = 0;
    for (size_t i = s->begin; i < s->end; i++)
        sum += s->q[i] + s->p[i] + s->d[i] + s->date[i];
    s->sum = sum;
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    size_t rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 6001215;
    int threads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (threads < 1) threads = 1;
    int64_t *q = malloc(rows * 8), *p = malloc(rows * 8), *d = malloc(rows * 8);
    int32_t *date = malloc(rows * 4);
    share *sh = calloc((size_t)threads, sizeof(*sh));
    pthread_t *tid = calloc((size_t)threads, sizeof(*tid));
    if (!q || !p || !d || !date || !sh || !tid) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < rows; i++) {
        q[i] = (int64_t)(i % 50);
        p[i] = (int64_t)i;
        d[i] = (int64_t)(i % 11);
        date[i] = (int32_t)(i % 2500);
    }
    double best = 1e30;
    int64_t check = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (int t = 0; t < threads; t++) {
            sh[t] = (share){q,
                            p,
                            d,
                            date,
                            rows * (size_t)t / (size_t)threads,
                            rows * (size_t)(t + 1) / (size_t)threads,
                            0};
            pthread_create(&tid[t], NULL, read_share, &sh[t]);
        }
        check = 0;
        for (int t = 0; t < threads; t++) {
            pthread_join(tid[t], NULL);
            check += sh[t].sum;
        }
        double el = now_s() - t0;
        if (el < best) best = el;
    }
    double bytes = (double)rows * 28.0;
    printf("{\"rows\": %zu, \"threads\": %d, \"bytes\": %.0f, \"best_ms\": %.3f, "
           "\"gb_per_s\": %.3f, \"check\": %lld}\n",
           rows, threads, bytes, best * 1e3, bytes / best / 1e9, (long long)check);
    free(q);
    free(p);
    free(d);
    free(date);
    free(sh);
    free(tid);
    return 0;
}
