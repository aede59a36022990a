/*
 * test_file_writer.c — the written-behind output files of `tpch gen`: bytes
 * come back in order whatever the append sizes, past the page cache where
 * the file system takes O_DIRECT and through it where not, from several
 * threads at once, and a failed write is reported with its cause.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "tpch/file_writer.h"

static char dir[512]; /* a fresh directory for this run */

/* Byte i of every test file's contents: no run of equal blocks. */
static char pattern(uint64_t i)
{
    uint64_t x = (i / 8 + 1) * 0x9E3779B97F4A7C15ull;
    return (char)(x >> (56 - 8 * (i % 8)));
}

/* Whether this directory takes an aligned O_DIRECT write, as the writer
 * will try it. */
static bool direct_works(void)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/probe", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
    if (fd < 0) return false;
    char *block = aligned_alloc(4096, 4096);
    bool ok = block && (memset(block, 'x', 4096), pwrite(fd, block, 4096, 0) == 4096);
    free(block);
    close(fd);
    unlink(path);
    return ok;
}

/* Whether the file holds exactly pattern(0 .. len-1). */
static bool holds_pattern(const char *path, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    bool ok = true;
    size_t i = 0;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
        for (size_t k = 0; k < n && ok; k++)
            ok = i + k < len && buf[k] == pattern(i + k);
        i += n;
    }
    fclose(f);
    return ok && i == len;
}

/* Appends pattern bytes [from, from + len) in one call. */
static sto_status append_pattern(tpch_out *f, uint64_t from, size_t len)
{
    char *bytes = malloc(len ? len : 1);
    if (!bytes) return sto_error_oom();
    for (size_t i = 0; i < len; i++)
        bytes[i] = pattern(from + i);
    sto_status st = tpch_out_append(f, bytes, len);
    free(bytes);
    return st;
}

/* Appends of awkward sizes: around blocks and stages (4 MiB), one larger
 * than a stage, bytes one at a time. */
static void write_and_check(bool direct)
{
    static const size_t sizes[] = {1,        4095, 4096,    4097, (1u << 20) + 3,
                                   4u << 20, 1,    1,       1,    (9u << 20) + 123,
                                   65536,    3000, 4194301, 7};
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, direct ? "direct" : "buffered");
    tpch_writer *w = NULL;
    REQUIRE(tpch_writer_create(direct, &w) == NULL);
    tpch_out *f = NULL;
    sto_status st = tpch_writer_open(w, path, &f);
    CHECK(st == NULL);
    uint64_t total = 0;
    for (size_t i = 0; !st && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        st = append_pattern(f, total, sizes[i]);
        total += sizes[i];
    }
    CHECK(st == NULL);
    sto_status_free(st);
    if (f) CHECK(tpch_out_close(f) == NULL);
    tpch_writer_stats s = tpch_writer_stats_get(w);
    tpch_writer_free(w);
    CHECK(holds_pattern(path, total));
    CHECK_EQ_INT(s.direct_bytes + s.buffered_bytes, total);
    if (direct && direct_works()) {
        /* everything but the last partial block went past the page cache */
        CHECK_EQ_INT(s.direct_bytes, total & ~(uint64_t)4095);
        CHECK_EQ_INT(s.buffered_bytes, total % 4096);
    } else if (!direct) {
        CHECK_EQ_INT(s.direct_bytes, 0);
    }
    unlink(path);
}

static void test_direct_appends_come_back_in_order(void)
{
    write_and_check(true);
}

static void test_buffered_appends_come_back_in_order(void)
{
    write_and_check(false);
}

/* An empty file, and one of whole blocks (no tail to write at the end). */
static void test_empty_and_whole_block_files(void)
{
    char empty[600], whole[600];
    snprintf(empty, sizeof(empty), "%s/empty", dir);
    snprintf(whole, sizeof(whole), "%s/whole", dir);
    tpch_writer *w = NULL;
    REQUIRE(tpch_writer_create(true, &w) == NULL);
    tpch_out *e = NULL, *b = NULL;
    CHECK(tpch_writer_open(w, empty, &e) == NULL);
    CHECK(tpch_writer_open(w, whole, &b) == NULL);
    if (b) CHECK(append_pattern(b, 0, 8192) == NULL);
    if (e) CHECK(tpch_out_close(e) == NULL);
    if (b) CHECK(tpch_out_close(b) == NULL);
    tpch_writer_stats s = tpch_writer_stats_get(w);
    tpch_writer_free(w);
    CHECK(holds_pattern(empty, 0));
    CHECK(holds_pattern(whole, 8192));
    if (direct_works()) CHECK_EQ_INT(s.direct_bytes, 8192);
    CHECK_EQ_INT(s.direct_bytes + s.buffered_bytes, 8192);
    unlink(empty);
    unlink(whole);
}

typedef struct appender {
    tpch_out *f;
    size_t len;
    sto_status st;
} appender;

static void *append_all(void *arg)
{
    appender *a = arg;
    /* pieces of 100 KB and a bit, as the generator's morsels */
    for (size_t done = 0; done < a->len && !a->st;) {
        size_t n = a->len - done < 100003 ? a->len - done : 100003;
        a->st = append_pattern(a->f, done, n);
        done += n;
    }
    return NULL;
}

/* Three files filled by three threads at once through one writer, more
 * bytes than its stages hold. */
static void test_files_from_several_threads(void)
{
    enum { FILES = 3 };
    const size_t len[FILES] = {(13u << 20) + 5, (6u << 20) + 4096, 777};
    char path[FILES][600];
    appender a[FILES];
    pthread_t tid[FILES];
    tpch_writer *w = NULL;
    REQUIRE(tpch_writer_create(true, &w) == NULL);
    for (int i = 0; i < FILES; i++) {
        snprintf(path[i], sizeof(path[i]), "%s/many%d", dir, i);
        a[i] = (appender){NULL, len[i], NULL};
        a[i].st = tpch_writer_open(w, path[i], &a[i].f);
    }
    for (int i = 0; i < FILES; i++)
        if (!a[i].st) REQUIRE(pthread_create(&tid[i], NULL, append_all, &a[i]) == 0);
    for (int i = 0; i < FILES; i++)
        if (a[i].f) pthread_join(tid[i], NULL);
    for (int i = 0; i < FILES; i++) {
        CHECK(a[i].st == NULL);
        sto_status_free(a[i].st);
        if (a[i].f) CHECK(tpch_out_close(a[i].f) == NULL);
    }
    tpch_writer_stats s = tpch_writer_stats_get(w);
    tpch_writer_free(w);
    CHECK_EQ_INT(s.direct_bytes + s.buffered_bytes, len[0] + len[1] + len[2]);
    for (int i = 0; i < FILES; i++) {
        CHECK(holds_pattern(path[i], len[i]));
        unlink(path[i]);
    }
}

/* A disk that falls behind: with one stage in flight at most and no
 * patience, a full stage that finds one out is written by its appender
 * through the page cache, at its own offset, while the earlier one is
 * still being written; the bytes come back in order all the same. */
static void test_appender_writes_when_disk_is_behind(void)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/behind", dir);
    const size_t total = (64u << 20) + 77;
    char *bytes = malloc(total);
    REQUIRE(bytes);
    for (size_t i = 0; i < total; i++)
        bytes[i] = pattern(i);
    tpch_writer *w = NULL;
    REQUIRE(tpch_writer_create(true, &w) == NULL);
    tpch_writer_set_limits(w, 1, 0);
    tpch_out *f = NULL;
    CHECK(tpch_writer_open(w, path, &f) == NULL);
    /* appends at memory speed, faster than any disk */
    sto_status st = NULL;
    for (size_t done = 0; f && !st && done < total; done += 1u << 20)
        st = tpch_out_append(f, bytes + done, total - done < (1u << 20) ? total - done : 1u << 20);
    CHECK(st == NULL);
    sto_status_free(st);
    if (f) CHECK(tpch_out_close(f) == NULL);
    tpch_writer_stats s = tpch_writer_stats_get(w);
    tpch_writer_free(w);
    free(bytes);
    CHECK_EQ_INT(s.direct_bytes + s.buffered_bytes, total);
    CHECK(holds_pattern(path, total));
    unlink(path);
}

/* A write the kernel refuses (a file size limit, as a full disk would) is
 * reported by a later append or by close, with the cause. Run in a child:
 * the limit is the whole process's. */
static void test_failed_write_is_reported(void)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/limited", dir);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {(1u << 20) + 100, (1u << 20) + 100}; /* not a block multiple */
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(3);
        tpch_writer *w = NULL;
        if (tpch_writer_create(true, &w)) _exit(4);
        tpch_out *f = NULL;
        if (tpch_writer_open(w, path, &f)) _exit(5);
        /* appends go on until the failure comes back: at most the stages
         * in flight later */
        sto_status st = NULL;
        for (uint64_t done = 0; !st && done < (256u << 20); done += 1u << 20)
            st = append_pattern(f, done, 1u << 20);
        bool named = st && strstr(st->message, "File too large") && strstr(st->message, path);
        sto_status_free(st);
        st = tpch_out_close(f);
        named = named && st && strstr(st->message, "File too large");
        sto_status_free(st);
        tpch_writer_free(w);
        _exit(named ? 0 : 6);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
    unlink(path);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/test_file_writer.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_direct_appends_come_back_in_order);
    RUN(test_buffered_appends_come_back_in_order);
    RUN(test_empty_and_whole_block_files);
    RUN(test_files_from_several_threads);
    RUN(test_appender_writes_when_disk_is_behind);
    RUN(test_failed_write_is_reported);
    rmdir(dir);
    return TEST_REPORT();
}
