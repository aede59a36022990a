/*
 * test_mux_cluster.c — the cluster file: parsing, comments, IPv6, errors,
 * and the cluster id that tells clusters apart.
 */
#include "net/mux/cluster.h"
#include "test.h"

static void parses(void)
{
    mux_cluster c;
    sto_status st = mux_cluster_parse("# three servers\n127.0.0.1:7000\n\n  host-b:7001  # b\n"
                                      "[::1]:7002",
                                      &c);
    REQUIRE(st == NULL);
    CHECK_EQ_INT(c.n, 3);
    CHECK_STREQ(c.ep[0].host, "127.0.0.1");
    CHECK_STREQ(c.ep[0].port, "7000");
    CHECK_STREQ(c.ep[1].host, "host-b");
    CHECK_STREQ(c.ep[1].port, "7001");
    CHECK_STREQ(c.ep[2].host, "::1");
    CHECK_STREQ(c.ep[2].port, "7002");
    mux_cluster d;
    REQUIRE(mux_cluster_parse("127.0.0.1:7000\nhost-b:7001\n[::1]:7002\n", &d) == NULL);
    CHECK(c.id == d.id); /* comments and blanks do not matter */
    mux_cluster e;
    REQUIRE(mux_cluster_parse("127.0.0.1:7000\nhost-b:7001\n[::1]:7003\n", &e) == NULL);
    CHECK(c.id != e.id);
    mux_cluster_free(&c);
    mux_cluster_free(&d);
    mux_cluster_free(&e);
}

static void expect_error(const char *text, const char *what)
{
    mux_cluster c;
    sto_status st = mux_cluster_parse(text, &c);
    CHECK(st != NULL);
    if (!st) {
        mux_cluster_free(&c);
        return;
    }
    if (!strstr(st->message, what)) fprintf(stderr, "got: %s\n", st->message);
    CHECK(strstr(st->message, what) != NULL);
    CHECK(c.ep == NULL && c.n == 0);
    sto_status_free(st);
}

static void errors(void)
{
    expect_error("", "names no server");
    expect_error("# only a comment\n", "names no server");
    expect_error("a:1\nnoport\n", "line 2");
    expect_error("a:99999\n", "out of range");
    expect_error("a:12x\n", "not a number");
    expect_error(":80\n", "missing");
    expect_error("[::1:80\n", "[host]:port");
}

static void load_missing_file(void)
{
    mux_cluster c;
    sto_status st = mux_cluster_load("/nonexistent/cluster.txt", &c);
    CHECK(st != NULL);
    if (st) CHECK_STREQ(st->sqlstate, STO_UNDEFINED_FILE);
    sto_status_free(st);
}

int main(void)
{
    RUN(parses);
    RUN(errors);
    RUN(load_missing_file);
    return TEST_REPORT();
}
