/*
 * dist_check.h — what the distributed execution tests share: a multiplexer
 * over loopback and walking a TPC-H query file statement by statement
 * (reading the file and checking the coordinator's rows against the
 * official answer come from tpch_check.h). Included by
 * tests/engine/test_dist_*.c (each a program of its own).
 */
#ifndef RACKDB_TESTS_DIST_CHECK_H
#define RACKDB_TESTS_DIST_CHECK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/dist.h"
#include "engine/instance.h"
#include "net/mux/mux.h"
#include "rackdb.h"
#include "tpch_check.h"

/* A loopback port nobody listens on right now. */
static int dc_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* Runs a statement that is not a query (CREATE VIEW, DROP VIEW) here. */
static int dc_exec(rackdb_session *s, const char *sql)
{
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    if (rackdb_exec(s, sql, &r, &e) != RACKDB_OK) {
        fprintf(stderr, "%s: %s\n", sql, rackdb_error_message(e));
        rackdb_error_free(e);
        return 1;
    }
    rackdb_result_free(r);
    return 0;
}

/* The length of the statement at the start of text (through its ';'). */
static size_t dc_stmt_length(const char *text)
{
    size_t n = strlen(text), l = rackdb_statement_length(text, n);
    return l ? l : n;
}

/* Whether the statement text[0, len) is blank, or a SELECT. */
static bool dc_blank(const char *text, size_t len)
{
    return eng_blank_prefix(text, len) == len;
}

static bool dc_is_select(const char *text, size_t len)
{
    size_t b = eng_blank_prefix(text, len);
    return len - b >= 6 && strncasecmp(text + b, "select", 6) == 0;
}

/* The next SELECT of the query file at *p (malloc'd; NULL at the
 * end), moving *p past it. Statements before it that are not
 * queries (q15's CREATE VIEW, DROP VIEW) run on s; their failures, and a
 * statement that cannot be copied, are added to *bad. */
static char *dc_next_select(rackdb_session *s, const char **p, int *bad)
{
    while (**p) {
        size_t n = dc_stmt_length(*p);
        char *stmt = strndup(*p, n);
        *p += n;
        if (!stmt) {
            (*bad)++;
            continue;
        }
        if (dc_blank(stmt, n)) {
            free(stmt);
            continue;
        }
        if (!dc_is_select(stmt, n)) {
            *bad += dc_exec(s, stmt);
            free(stmt);
            continue;
        }
        return stmt;
    }
    return NULL;
}

/* A multiplexer for rank `rank` of the cluster text with `workers`
 * workers (eng_dist_mux_workers: every pool thread streams). */
static sto_status dc_mux_sized(const char *cluster_text, int rank, int workers, size_t msg_size,
                               size_t pool_msgs, mux_cluster *cluster, mux_ctx **out)
{
    STO_TRY(mux_cluster_parse(cluster_text, cluster));
    mux_config cfg;
    mux_config_init(&cfg);
    cfg.cluster = cluster;
    cfg.rank = rank;
    cfg.transport = MUX_TRANSPORT_TCP;
    cfg.workers = workers;
    cfg.msg_size = msg_size;
    cfg.pool_msgs = pool_msgs;
    cfg.recv_credits = pool_msgs / 2 ? (int)(pool_msgs / 2) : 1;
    cfg.numa_nodes = 1;
    cfg.connect_timeout_ms = 20000;
    cfg.peer_timeout_ms = 20000;
    return mux_create(&cfg, out);
}

/* The same with 512 KiB messages, 16 per pool. */
static sto_status dc_mux(const char *cluster_text, int rank, int workers, mux_cluster *cluster,
                         mux_ctx **out)
{
    return dc_mux_sized(cluster_text, rank, workers, 512u << 10, 16, cluster, out);
}

#endif
