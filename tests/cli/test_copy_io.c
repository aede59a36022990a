/*
 * test_copy_io.c — COPY FROM STDIN / TO STDOUT through the public API's
 * data channel (rackdb_session_set_copy_io) with in-memory callbacks: data
 * handed over in tiny pieces, the \. end marker, begin's arguments, a
 * session without a channel (0A000), the client giving up (57014), a bad
 * row and memory_limit (table unchanged), and a write that fails (08006).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rackdb.h"
#include "test.h"

/* An in-memory client: input handed out `piece` bytes at a time, output
 * collected; fail_at >= 0 makes read give up once that much was read. */
typedef struct client {
    const char *in;
    size_t in_len, in_pos, piece;
    long fail_at;
    char out[4096];
    size_t out_len;
    bool refuse_write;
    int begins;
    rackdb_copy_dir dir;
    uint32_t columns;
    bool csv;
} client;

static int on_begin(void *arg, rackdb_copy_dir dir, uint32_t columns, bool csv)
{
    client *c = arg;
    c->begins++;
    c->dir = dir;
    c->columns = columns;
    c->csv = csv;
    return 0;
}

static long on_read(void *arg, char *buf, size_t cap, const char **message)
{
    client *c = arg;
    if (c->fail_at >= 0 && c->in_pos >= (size_t)c->fail_at) {
        *message = "stopped by the test";
        return -1;
    }
    size_t n = c->in_len - c->in_pos;
    if (n > c->piece) n = c->piece;
    if (n > cap) n = cap;
    memcpy(buf, c->in + c->in_pos, n);
    c->in_pos += n;
    return (long)n;
}

static int on_write(void *arg, const char *data, size_t len)
{
    client *c = arg;
    if (c->refuse_write) return -1;
    if (c->out_len + len >= sizeof(c->out)) return -1;
    memcpy(c->out + c->out_len, data, len);
    c->out_len += len;
    c->out[c->out_len] = '\0';
    return 0;
}

static void feed(client *c, const char *text, size_t piece)
{
    c->in = text;
    c->in_len = strlen(text);
    c->in_pos = 0;
    c->piece = piece;
    c->fail_at = -1;
}

/* Runs sql; the SQLSTATE of its error, "" on success. */
static const char *run(rackdb_session *s, const char *sql, char *tag, size_t tag_size)
{
    static char state[6];
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    if (rackdb_exec(s, sql, &r, &e) != RACKDB_OK) {
        snprintf(state, sizeof(state), "%s", rackdb_error_sqlstate(e));
        if (tag) snprintf(tag, tag_size, "%s", rackdb_error_message(e));
        rackdb_error_free(e);
        return state;
    }
    if (tag) snprintf(tag, tag_size, "%s", r ? rackdb_result_tag(r) : "");
    rackdb_result_free(r);
    return "";
}

static int64_t count(rackdb_session *s)
{
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    if (rackdb_exec(s, "SELECT count(*) FROM t", &r, &e) != RACKDB_OK) {
        rackdb_error_free(e);
        return -1;
    }
    int64_t n = rackdb_result_int64(r, 0, 0);
    rackdb_result_free(r);
    return n;
}

static void test_copy_io(void)
{
    rackdb *db = NULL;
    rackdb_session *s = NULL;
    rackdb_error *e = NULL;
    REQUIRE(rackdb_open(NULL, &db, &e) == RACKDB_OK);
    REQUIRE(rackdb_session_open(db, &s, &e) == RACKDB_OK);
    char msg[256];
    CHECK_STREQ(run(s, "CREATE TABLE t (a INTEGER NOT NULL, b VARCHAR(10))", NULL, 0), "");

    /* no channel: both directions are refused */
    CHECK_STREQ(run(s, "COPY t FROM STDIN", NULL, 0), "0A000");
    CHECK_STREQ(run(s, "COPY t TO STDOUT", NULL, 0), "0A000");

    client c = {0};
    rackdb_copy_io io = {on_begin, on_read, on_write, &c};
    rackdb_session_set_copy_io(s, &io);

    /* one byte at a time; the data ends at \. and what follows is ignored */
    feed(&c, "1\tone\n2\t\\N\n\\.\n3\tnot loaded\n", 1);
    CHECK_STREQ(run(s, "COPY t FROM STDIN", msg, sizeof(msg)), "");
    CHECK_STREQ(msg, "COPY 2");
    CHECK_EQ_INT(c.begins, 1);
    CHECK_EQ_INT(c.dir, RACKDB_COPY_IN);
    CHECK_EQ_INT(c.columns, 2);
    CHECK(!c.csv);

    /* CSV with a header, in pieces that cut lines */
    feed(&c, "a,b\n3,\"x,y\"\n4,\n", 5);
    CHECK_STREQ(run(s, "COPY t FROM STDIN (FORMAT csv, HEADER)", msg, sizeof(msg)), "");
    CHECK_STREQ(msg, "COPY 2");
    CHECK(c.csv);
    CHECK_EQ_INT(count(s), 4);

    /* the client gives up midway: 57014 with its message, nothing added */
    feed(&c, "5\tfive\n6\tsix\n", 4);
    c.fail_at = 8;
    CHECK_STREQ(run(s, "COPY t FROM STDIN", msg, sizeof(msg)), "57014");
    CHECK_STREQ(msg, "COPY from stdin failed: stopped by the test");
    CHECK_EQ_INT(count(s), 4);

    /* a bad row on line 3: its line and column, nothing added */
    feed(&c, "5\tfive\n6\tsix\nseven\t7\n", 64);
    CHECK_STREQ(run(s, "COPY t FROM STDIN", msg, sizeof(msg)), "22P02");
    CHECK(strstr(msg, "STDIN: line 3, column 1 (a)") != NULL);
    CHECK_EQ_INT(count(s), 4);

    /* input larger than memory_limit: 53200, nothing added */
    size_t big_len = (size_t)7 * (450 << 10); /* 3 MB of "9\tnine\n" */
    char *big = malloc(big_len + 1);
    REQUIRE(big != NULL);
    for (size_t i = 0; i < big_len; i += 7)
        memcpy(big + i, "9\tnine\n", 7);
    big[big_len] = '\0';
    CHECK_STREQ(run(s, "SET memory_limit = '1MB'", NULL, 0), "");
    feed(&c, big, 1 << 16);
    CHECK_STREQ(run(s, "COPY t FROM STDIN", msg, sizeof(msg)), "53200");
    CHECK_EQ_INT(count(s), 4);
    CHECK_STREQ(run(s, "SET memory_limit TO DEFAULT", NULL, 0), "");
    free(big);

    /* COPY TO STDOUT, and a client that stops reading */
    c.out_len = 0;
    c.out[0] = '\0';
    CHECK_STREQ(run(s, "COPY t TO STDOUT", msg, sizeof(msg)), "");
    CHECK_STREQ(msg, "COPY 4");
    CHECK_EQ_INT(c.dir, RACKDB_COPY_OUT);
    CHECK_STREQ(c.out, "1\tone\n2\t\\N\n3\tx,y\n4\t\\N\n");
    c.out_len = 0;
    CHECK_STREQ(
        run(s, "COPY (SELECT b FROM t WHERE a > 2) TO STDOUT (FORMAT csv)", msg, sizeof(msg)), "");
    CHECK_STREQ(c.out, "\"x,y\"\n\n");
    CHECK_EQ_INT(c.columns, 1);
    c.refuse_write = true;
    CHECK_STREQ(run(s, "COPY t TO STDOUT", NULL, 0), "08006");

    rackdb_session_set_copy_io(s, NULL);
    CHECK_STREQ(run(s, "COPY t FROM STDIN", NULL, 0), "0A000");
    rackdb_session_close(s);
    rackdb_close(db);
}

int main(void)
{
    RUN(test_copy_io);
    return TEST_REPORT();
}
