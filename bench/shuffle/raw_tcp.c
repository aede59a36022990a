/*
 * raw_tcp.c — the baseline of bench/shuffle: an all-to-all over plain
 * blocking TCP sockets between the same processes.
 *
 * Same cluster file as the multiplexer; every pair of ranks gets one
 * connection (the higher rank connects), every peer one sender and one
 * receiver thread, and every rank sends mb/n MB to every other rank in
 * writes of --msg-kb. No framing, no flow control, no schedule: what the
 * kernel does with n-1 streams at once. Prints one line per rank with the
 * bytes moved and the seconds from "all connected" to "all done".
 */
#include "net/mux/cluster.h"
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct link {
    int fd;
    size_t bytes, chunk;
    char *buf;
} link_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void tune(int fd)
{
    int one = 1, buf = 4 << 20;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
}

static void *send_all(void *arg)
{
    link_t *l = arg;
    for (size_t done = 0; done < l->bytes;) {
        size_t n = l->bytes - done < l->chunk ? l->bytes - done : l->chunk;
        ssize_t w = write(l->fd, l->buf, n);
        if (w <= 0) {
            perror("write");
            exit(1);
        }
        done += (size_t)w;
    }
    return NULL;
}

static void *recv_all(void *arg)
{
    link_t *l = arg;
    for (size_t done = 0; done < l->bytes;) {
        size_t n = l->bytes - done < l->chunk ? l->bytes - done : l->chunk;
        ssize_t r = read(l->fd, l->buf, n);
        if (r <= 0) {
            perror("read");
            exit(1);
        }
        done += (size_t)r;
    }
    return NULL;
}

static int resolve(const mux_endpoint *ep, struct addrinfo **ai, int passive)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = passive ? AI_PASSIVE : 0};
    return getaddrinfo(ep->host, ep->port, &hints, ai);
}

int main(int argc, char **argv)
{
    const char *cluster = NULL;
    int rank = -1;
    double mb = 256;
    size_t chunk = 512 << 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--cluster"))
            cluster = argv[i + 1];
        else if (!strcmp(argv[i], "--rank"))
            rank = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--mb"))
            mb = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--msg-kb"))
            chunk = (size_t)atol(argv[i + 1]) << 10;
    }
    mux_cluster c;
    if (!cluster || rank < 0 || mux_cluster_load(cluster, &c) || rank >= c.n) {
        fprintf(stderr, "usage: bench_shuffle_raw --cluster FILE --rank R [--mb N] [--msg-kb K]\n");
        return 2;
    }
    alarm(300);
    int n = c.n;
    int *fd = calloc((size_t)n, sizeof *fd);
    struct addrinfo *ai;
    if (resolve(&c.ep[rank], &ai, 1)) return 1;
    int lfd = socket(ai->ai_family, SOCK_STREAM, 0), one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 64)) {
        perror("listen");
        return 1;
    }
    freeaddrinfo(ai);
    for (int j = 0; j < rank; j++) { /* connect down, retrying until it listens */
        if (resolve(&c.ep[j], &ai, 0)) return 1;
        for (;;) {
            fd[j] = socket(ai->ai_family, SOCK_STREAM, 0);
            tune(fd[j]);
            if (connect(fd[j], ai->ai_addr, ai->ai_addrlen) == 0) break;
            close(fd[j]);
            usleep(10000);
        }
        freeaddrinfo(ai);
        uint32_t me = (uint32_t)rank;
        if (write(fd[j], &me, 4) != 4) return 1;
    }
    for (int k = rank + 1; k < n; k++) { /* accept up, identified by their rank */
        int a = accept(lfd, NULL, NULL);
        uint32_t who;
        if (a < 0 || read(a, &who, 4) != 4 || who <= (uint32_t)rank || who >= (uint32_t)n) return 1;
        tune(a);
        fd[who] = a;
    }
    size_t per_peer = (size_t)(mb * 1048576.0 / n);
    link_t *tx = calloc((size_t)n, sizeof *tx), *rx = calloc((size_t)n, sizeof *rx);
    pthread_t *th = calloc((size_t)n * 2, sizeof *th);
    double t0 = now_s();
    for (int j = 0; j < n; j++) {
        if (j == rank) continue;
        tx[j] = (link_t){fd[j], per_peer, chunk, calloc(1, chunk)};
        rx[j] = (link_t){fd[j], per_peer, chunk, malloc(chunk)};
        pthread_create(&th[2 * j], NULL, send_all, &tx[j]);
        pthread_create(&th[2 * j + 1], NULL, recv_all, &rx[j]);
    }
    for (int j = 0; j < n; j++)
        if (j != rank) {
            pthread_join(th[2 * j], NULL);
            pthread_join(th[2 * j + 1], NULL);
        }
    double secs = now_s() - t0;
    printf("rank %d raw: sent %zu bytes over the network in %.3f s\n", rank,
           per_peer * (size_t)(n - 1), secs);
    for (int j = 0; j < n; j++) {
        if (j == rank) continue;
        free(tx[j].buf);
        free(rx[j].buf);
        close(fd[j]);
    }
    close(lfd);
    free(tx);
    free(rx);
    free(th);
    free(fd);
    mux_cluster_free(&c);
    return 0;
}
