/*
 * file_writer.c — ordered appends, written behind by one thread (see
 * file_writer.h).
 *
 * A file's bytes pass through stages: 4 MiB buffers aligned for O_DIRECT.
 * The appender fills its file's current stage; a full stage is queued with
 * the file offset its first byte belongs at, and the writer thread writes
 * queued stages in order and returns them to the free list. Only whole
 * multiples of DIRECT_ALIGN are queued, so every direct write starts and
 * ends on a block boundary; the last, partial block of a file is written by
 * tpch_out_close through the page cache once the queue holds nothing more
 * of that file.
 */
#include "tpch/file_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STAGE_BYTES ((size_t)4 << 20)
/* Stages queued or in flight before an appender waits: enough to keep
 * the disk busy while two generating threads fill theirs. */
#define MAX_IN_FLIGHT 8
/* How long an appender waits for the disk before it writes its full
 * stage through the page cache itself: a stage takes about 3 ms on the
 * disks measured (docs/tpch_gen.md); a disk far slower than generation
 * (a spinning one, a network file system) would otherwise set the pace. */
#define DEFAULT_PATIENCE_MS 20
/* Offsets and lengths of direct writes: fits 512-byte and 4 KiB blocks. */
#define DIRECT_ALIGN 4096

typedef struct stage {
    char *bytes; /* STAGE_BYTES, DIRECT_ALIGN-aligned */
    size_t len;
    int64_t offset; /* where bytes[0] belongs in the file */
    tpch_out *out;
    struct stage *next;
} stage;

struct tpch_writer {
    pthread_mutex_t lock;
    pthread_cond_t work; /* something queued, or stop */
    pthread_cond_t done; /* a stage came back */
    pthread_t thread;
    stage *head, *tail; /* the queue */
    stage *free_list;
    int in_flight; /* queued or being written */
    int max_in_flight;
    int patience_ms;
    bool stop;
    bool direct;
    tpch_writer_stats stats;
};

struct tpch_out {
    tpch_writer *w;
    int fd;
    bool direct;   /* fd has O_DIRECT; cleared by whoever writes when the kernel refuses */
    int cached_fd; /* the same file without O_DIRECT, for appenders; -1 = fd */
    char *path;
    stage *cur;       /* being filled; the appender's own */
    int64_t offset;   /* file offset of the next byte queued */
    int pending;      /* this file's stages queued or in flight; under lock */
    sto_status error; /* the first failed write; under lock */
};

static sto_status write_error(const tpch_out *f, int err)
{
    return sto_error(err == ENOSPC ? STO_DISK_FULL : STO_IO_ERROR, "could not write %s: %s",
                     f->path, strerror(err));
}

/* Goes on through the page cache; false when the flag cannot be changed. */
static bool drop_direct(tpch_out *f)
{
    int flags = fcntl(f->fd, F_GETFL);
    if (flags < 0 || fcntl(f->fd, F_SETFL, flags & ~O_DIRECT) != 0) return false;
    f->direct = false;
    return true;
}

/* Writes len bytes at offset through f->fd, adding what went each way to
 * *direct and *buffered. Only one thread writes through f->fd at a time
 * (the writer thread while the file has stages pending, tpch_out_close
 * after), so only it changes f->direct; appenders that write a stage
 * themselves use f->cached_fd, at offsets of their own. */
static sto_status write_at(tpch_out *f, const char *bytes, size_t len, int64_t offset,
                           uint64_t *direct, uint64_t *buffered)
{
    while (len > 0) {
        ssize_t n = pwrite(f->fd, bytes, len, offset);
        if (n < 0) {
            int err = errno;
            if (err == EINTR) continue;
            /* the file system does not take this direct write after all */
            if (err == EINVAL && f->direct && drop_direct(f)) continue;
            return write_error(f, err);
        }
        if (n == 0) return write_error(f, EIO);
        *(f->direct ? direct : buffered) += (uint64_t)n;
        bytes += n;
        len -= (size_t)n;
        offset += n;
        /* a short direct write leaves an unaligned rest (it is about to
         * fail anyway: a full disk, a file size limit) */
        if (len > 0 && f->direct && !drop_direct(f)) return write_error(f, EIO);
    }
    return NULL;
}

static void *writer_main(void *arg)
{
    tpch_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->work, &w->lock);
        stage *s = w->head;
        if (!s) break;
        w->head = s->next;
        if (!w->head) w->tail = NULL;
        tpch_out *f = s->out;
        bool failed = f->error != NULL; /* the rest of a failed file is dropped */
        pthread_mutex_unlock(&w->lock);

        uint64_t direct = 0, buffered = 0;
        sto_status st =
            failed ? NULL : write_at(f, s->bytes, s->len, s->offset, &direct, &buffered);

        pthread_mutex_lock(&w->lock);
        w->stats.direct_bytes += direct;
        w->stats.buffered_bytes += buffered;
        if (st && !f->error)
            f->error = st;
        else
            sto_status_free(st);
        f->pending--;
        w->in_flight--;
        s->next = w->free_list;
        w->free_list = s;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* A copy of the file's error for an appender (the file keeps its own for
 * tpch_out_close). Under lock. */
static sto_status copy_error(const tpch_out *f)
{
    return sto_error(f->error->sqlstate, "%s", f->error->message);
}

static stage *new_stage(void)
{
    stage *s = malloc(sizeof(*s));
    if (!s) return NULL;
    s->bytes = aligned_alloc(DIRECT_ALIGN, STAGE_BYTES);
    if (!s->bytes) {
        free(s);
        return NULL;
    }
    return s;
}

/* A free stage for f (allocated when none is: at most max_in_flight plus
 * one per file being filled exist). */
static sto_status take_stage(tpch_out *f, stage **out)
{
    tpch_writer *w = f->w;
    pthread_mutex_lock(&w->lock);
    sto_status st = f->error ? copy_error(f) : NULL;
    stage *s = NULL;
    if (!st && w->free_list) {
        s = w->free_list;
        w->free_list = s->next;
    }
    pthread_mutex_unlock(&w->lock);
    if (!st && !s && !(s = new_stage())) st = sto_error_oom();
    if (st) return st;
    s->len = 0;
    *out = s;
    return NULL;
}

static void queue_stage(tpch_out *f, stage *s)
{
    tpch_writer *w = f->w;
    pthread_mutex_lock(&w->lock);
    s->out = f;
    s->offset = f->offset;
    s->next = NULL;
    f->offset += (int64_t)s->len;
    f->pending++;
    w->in_flight++;
    if (w->tail)
        w->tail->next = s;
    else
        w->head = s;
    w->tail = s;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
}

/* Passes f's full current stage on: to the writer thread, or, when the
 * disk has kept max_in_flight stages waiting for longer than the writer's
 * patience, through the page cache from this thread (the stage is then
 * reused at once). */
static sto_status hand_on(tpch_out *f)
{
    tpch_writer *w = f->w;
    stage *s = f->cur;
    pthread_mutex_lock(&w->lock);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += (long)w->patience_ms * 1000000L;
    deadline.tv_sec += deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    if (w->in_flight >= w->max_in_flight && !f->error) {
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        while (w->in_flight >= w->max_in_flight && !f->error)
            if (pthread_cond_timedwait(&w->done, &w->lock, &deadline) != 0) break;
        struct timespec end;
        clock_gettime(CLOCK_MONOTONIC, &end);
        w->stats.disk_wait_s +=
            (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
    }
    if (f->error) {
        sto_status st = copy_error(f);
        pthread_mutex_unlock(&w->lock);
        return st;
    }
    if (w->in_flight < w->max_in_flight) {
        pthread_mutex_unlock(&w->lock);
        queue_stage(f, s);
        f->cur = NULL;
        return NULL;
    }
    int64_t offset = f->offset;
    f->offset += (int64_t)s->len;
    pthread_mutex_unlock(&w->lock);

    uint64_t buffered = 0;
    sto_status st = NULL;
    for (const char *p = s->bytes, *end = s->bytes + s->len; p < end && !st;) {
        ssize_t n = pwrite(f->cached_fd >= 0 ? f->cached_fd : f->fd, p, (size_t)(end - p), offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) st = write_error(f, n < 0 ? errno : EIO);
        if (st) break;
        p += n;
        offset += n;
        buffered += (uint64_t)n;
    }
    pthread_mutex_lock(&w->lock);
    w->stats.buffered_bytes += buffered;
    sto_status copy = NULL;
    if (st && !f->error) {
        f->error = st;
        copy = copy_error(f);
    } else if (st) {
        copy = st;
    }
    pthread_mutex_unlock(&w->lock);
    s->len = 0;
    return copy;
}

static void return_stage(tpch_writer *w, stage *s)
{
    pthread_mutex_lock(&w->lock);
    s->next = w->free_list;
    w->free_list = s;
    pthread_cond_broadcast(&w->done);
    pthread_mutex_unlock(&w->lock);
}

sto_status tpch_writer_create(bool direct, tpch_writer **out)
{
    tpch_writer *w = calloc(1, sizeof(*w));
    if (!w) return sto_error_oom();
    w->direct = direct;
    w->max_in_flight = MAX_IN_FLIGHT;
    w->patience_ms = DEFAULT_PATIENCE_MS;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->done, NULL);
    int err = pthread_create(&w->thread, NULL, writer_main, w);
    if (err != 0) {
        pthread_cond_destroy(&w->done);
        pthread_cond_destroy(&w->work);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return sto_error(STO_OUT_OF_MEMORY, "could not start the writer thread: %s", strerror(err));
    }
    *out = w;
    return NULL;
}

void tpch_writer_free(tpch_writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    for (stage *s = w->free_list, *next; s; s = next) {
        next = s->next;
        free(s->bytes);
        free(s);
    }
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void tpch_writer_set_limits(tpch_writer *w, int max_in_flight, int patience_ms)
{
    pthread_mutex_lock(&w->lock);
    w->max_in_flight = max_in_flight < 1 ? 1 : max_in_flight;
    w->patience_ms = patience_ms < 0 ? 0 : patience_ms;
    pthread_mutex_unlock(&w->lock);
}

tpch_writer_stats tpch_writer_stats_get(tpch_writer *w)
{
    pthread_mutex_lock(&w->lock);
    tpch_writer_stats s = w->stats;
    pthread_mutex_unlock(&w->lock);
    return s;
}

/* Whether direct writes of DIRECT_ALIGN multiples from DIRECT_ALIGN-aligned
 * memory suit the file, where the kernel says (Linux 6.1 and later);
 * elsewhere the first write finds out. */
static bool direct_fits(int fd)
{
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN))
        return sx.stx_dio_offset_align != 0 && sx.stx_dio_offset_align <= DIRECT_ALIGN &&
               sx.stx_dio_mem_align <= DIRECT_ALIGN;
#else
    (void)fd;
#endif
    return true;
}

sto_status tpch_writer_open(tpch_writer *w, const char *path, tpch_out **out)
{
    tpch_out *f = calloc(1, sizeof(*f));
    if (!f) return sto_error_oom();
    f->path = strdup(path);
    if (!f->path) {
        free(f);
        return sto_error_oom();
    }
    f->w = w;
    const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    f->fd = -1;
    f->cached_fd = -1;
    if (w->direct) {
        f->fd = open(path, flags | O_DIRECT, 0644);
        f->direct = f->fd >= 0;
        if (f->direct && !direct_fits(f->fd)) drop_direct(f);
        /* without it, a stage written by its appender goes direct too */
        if (f->direct) f->cached_fd = open(path, O_WRONLY | O_CLOEXEC);
    }
    /* EINVAL: no O_DIRECT here; any other failure recurs below */
    if (f->fd < 0) f->fd = open(path, flags, 0644);
    if (f->fd < 0) {
        int err = errno;
        free(f->path);
        free(f);
        return sto_error(err == ENOSPC ? STO_DISK_FULL : STO_IO_ERROR, "cannot write to %s: %s",
                         path, strerror(err));
    }
    *out = f;
    return NULL;
}

sto_status tpch_out_append(tpch_out *f, const char *bytes, size_t len)
{
    while (len > 0) {
        if (!f->cur) STO_TRY(take_stage(f, &f->cur));
        size_t n = STAGE_BYTES - f->cur->len;
        if (n > len) n = len;
        memcpy(f->cur->bytes + f->cur->len, bytes, n);
        f->cur->len += n;
        bytes += n;
        len -= n;
        if (f->cur->len == STAGE_BYTES) STO_TRY(hand_on(f));
    }
    return NULL;
}

sto_status tpch_out_close(tpch_out *f)
{
    tpch_writer *w = f->w;
    char tail[DIRECT_ALIGN];
    size_t tail_len = 0;
    if (f->cur) {
        size_t whole = f->cur->len & ~(size_t)(DIRECT_ALIGN - 1);
        tail_len = f->cur->len - whole;
        memcpy(tail, f->cur->bytes + whole, tail_len);
        f->cur->len = whole;
        if (whole)
            queue_stage(f, f->cur);
        else
            return_stage(w, f->cur);
        f->cur = NULL;
    }
    pthread_mutex_lock(&w->lock);
    while (f->pending > 0)
        pthread_cond_wait(&w->done, &w->lock);
    sto_status st = f->error;
    f->error = NULL;
    pthread_mutex_unlock(&w->lock);

    /* the last partial block, through the page cache */
    if (!st && tail_len > 0) {
        uint64_t direct = 0, buffered = 0;
        if (f->direct && !drop_direct(f))
            st = write_error(f, errno);
        else
            st = write_at(f, tail, tail_len, f->offset, &direct, &buffered);
        pthread_mutex_lock(&w->lock);
        w->stats.direct_bytes += direct;
        w->stats.buffered_bytes += buffered;
        pthread_mutex_unlock(&w->lock);
    }
    if (close(f->fd) != 0 && !st) st = write_error(f, errno);
    if (f->cached_fd >= 0) close(f->cached_fd);
    free(f->path);
    free(f);
    return st;
}
