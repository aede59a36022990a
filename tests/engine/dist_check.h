/*
 * dist_check.h — what the distributed execution tests share: reading the
 * TPC-H queries and answers, a multiplexer over loopback, running one query
 * file through eng_dist_plan / eng_dist_run, and comparing the coordinator's
 * rows with the official answer (numbers within 0.01, strings exactly, in
 * order). Included by tests/engine/test_dist_*.c (each a program of its own).
 */
#ifndef RACKDB_TESTS_DIST_CHECK_H
#define RACKDB_TESTS_DIST_CHECK_H

#include <arpa/inet.h>
#include <math.h>
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

static char *dc_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

static const char *dc_shared(void)
{
    const char *s = getenv("RACKDB_SHARED");
    return s ? s : "/work/shared";
}

static char *dc_query_text(int q)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tpch/queries/q%02d.sql", dc_shared(), q);
    return dc_slurp(path);
}

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

/* Whether field a (ours) matches b (the answer). */
static int dc_field_matches(const char *a, const char *b)
{
    if (!a) a = "NULL";
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (*a && *b && !*ea && !*eb) return fabs(x - y) <= 0.01;
    return strcmp(a, b) == 0;
}

/* Mismatches of r against the answer of query q. */
static int dc_compare(int q, rackdb_result *r)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tpch/answers/sf0.01/q%02d.csv", dc_shared(), q);
    char *answer = dc_slurp(path);
    if (!answer) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    int bad = 0;
    uint64_t rows = rackdb_result_row_count(r);
    uint32_t nc = rackdb_result_column_count(r);
    char *save_line = NULL, *line = strtok_r(answer, "\n", &save_line);
    for (uint64_t i = 0; i < rows; i++) {
        if (!line) {
            fprintf(stderr, "q%02d: more rows than the answer\n", q);
            bad++;
            break;
        }
        char *save = NULL, *field = strtok_r(line, "|", &save);
        for (uint32_t c = 0; c < nc; c++) {
            const char *ours = rackdb_result_text(r, i, c);
            if (!field || !dc_field_matches(ours, field)) {
                if (bad < 5)
                    fprintf(stderr, "q%02d row %llu col %u: %s vs %s\n", q,
                            (unsigned long long)i + 1, c + 1, ours, field ? field : "(none)");
                bad++;
            }
            field = strtok_r(NULL, "|", &save);
        }
        line = strtok_r(NULL, "\n", &save_line);
    }
    if (line) {
        fprintf(stderr, "q%02d: fewer rows (%llu) than the answer\n", q, (unsigned long long)rows);
        bad++;
    }
    free(answer);
    return bad;
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

/* A multiplexer for rank `rank` of the cluster text; workers = 2 as
 * eng_dist_run needs. */
static sto_status dc_mux(const char *cluster_text, int rank, mux_cluster *cluster, mux_ctx **out)
{
    STO_TRY(mux_cluster_parse(cluster_text, cluster));
    mux_config cfg;
    mux_config_init(&cfg);
    cfg.cluster = cluster;
    cfg.rank = rank;
    cfg.transport = MUX_TRANSPORT_TCP;
    cfg.workers = 2;
    cfg.pool_msgs = 16;
    cfg.recv_credits = 8;
    cfg.numa_nodes = 1;
    cfg.connect_timeout_ms = 20000;
    cfg.peer_timeout_ms = 20000;
    return mux_create(&cfg, out);
}

#endif
