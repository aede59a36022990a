/*
 * exec_check.h — what the executor's end-to-end tests share: one instance
 * and session (db, sess; exec_open / exec_close) and Q / QS, which run SQL
 * through the public C API and return its rows as text to compare with
 * expectations. Included by tests/engine/test_exec_*.c and test_rt_topk.c
 * (each a program of its own).
 */
#ifndef RACKDB_TESTS_EXEC_CHECK_H
#define RACKDB_TESTS_EXEC_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rackdb.h"

static rackdb *db;
static rackdb_session *sess;

/* Opens db and sess (an empty in-memory instance); false, the error
 * printed, when that fails. */
static inline bool exec_open(void)
{
    rackdb_error *e = NULL;
    if (rackdb_open(NULL, &db, &e) != RACKDB_OK ||
        rackdb_session_open(db, &sess, &e) != RACKDB_OK) {
        fprintf(stderr, "cannot open: %s\n", e ? rackdb_error_message(e) : "?");
        return false;
    }
    return true;
}

static inline void exec_close(void)
{
    rackdb_session_close(sess);
    rackdb_close(db);
}

/* The rows of the last statement of sql as text: fields joined by '|',
 * rows by '\n' (NULL prints as NULL), or "ERROR <sqlstate>: <message>".
 * sorted: rows sorted as strings (for queries without ORDER BY). */
static char out[1 << 16];

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *run_q(const char *sql, int sorted)
{
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    if (rackdb_exec(sess, sql, &r, &e) != RACKDB_OK) {
        snprintf(out, sizeof(out), "ERROR %s: %s", rackdb_error_sqlstate(e),
                 rackdb_error_message(e));
        rackdb_error_free(e);
        return out;
    }
    if (!r || !rackdb_result_has_rows(r)) {
        snprintf(out, sizeof(out), "%s", r ? rackdb_result_tag(r) : "");
        rackdb_result_free(r);
        return out;
    }
    uint64_t n = rackdb_result_row_count(r);
    uint32_t nc = rackdb_result_column_count(r);
    char **lines = calloc(n ? n : 1, sizeof(*lines));
    for (uint64_t i = 0; i < n; i++) {
        char line[1024] = "";
        for (uint32_t c = 0; c < nc; c++) {
            if (c) strcat(line, "|");
            const char *v = rackdb_result_is_null(r, i, c) ? "NULL" : rackdb_result_text(r, i, c);
            strncat(line, v, sizeof(line) - strlen(line) - 1);
        }
        lines[i] = strdup(line);
    }
    if (sorted) qsort(lines, n, sizeof(*lines), cmp_lines);
    out[0] = '\0';
    size_t len = 0;
    for (uint64_t i = 0; i < n; i++) {
        len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? "\n" : "", lines[i]);
        if (len >= sizeof(out)) len = sizeof(out) - 1;
        free(lines[i]);
    }
    free(lines);
    rackdb_result_free(r);
    return out;
}

#define Q(sql)  run_q(sql, 0)
#define QS(sql) run_q(sql, 1)

/* The text of EXPLAIN sql (in the shared output buffer). */
static inline const char *explain_of(const char *sql)
{
    char e[4096];
    snprintf(e, sizeof(e), "EXPLAIN %s", sql);
    return Q(e);
}

/* Whether the plan of sql contains text. */
static inline bool explains(const char *sql, const char *text)
{
    return strstr(explain_of(sql), text) != NULL;
}

/* Whether EXPLAIN ANALYZE of sql (which runs it) contains text. */
static inline bool analyzes(const char *sql, const char *text)
{
    char e[4096];
    snprintf(e, sizeof(e), "EXPLAIN ANALYZE %s", sql);
    return strstr(Q(e), text) != NULL;
}

/* SET threads and join_algorithm for the statements that follow; false
 * when either is refused. */
static inline bool exec_set_run(int threads, const char *algo)
{
    char set[64];
    snprintf(set, sizeof(set), "SET threads = %d", threads);
    if (strcmp(Q(set), "SET") != 0) return false;
    snprintf(set, sizeof(set), "SET join_algorithm = %s", algo);
    return strcmp(Q(set), "SET") == 0;
}

/* Inserts rows i = 0 .. n-1 of (k, b, v) into table through INSERTs of 1000
 * rows: k = key(which, i) and b = k * 1000003, both NULL where
 * is_null(which, i); v = i % vmod. For the join tests' keyed tables. False,
 * the error printed, when an INSERT fails. */
static inline bool exec_insert_keyed(const char *table, int n, int which,
                                     bool (*is_null)(int which, int i),
                                     long (*key)(int which, int i), int vmod)
{
    size_t cap = 1000 * 64 + 64;
    char *sql = malloc(cap);
    if (!sql) return false;
    for (int lo = 0; lo < n; lo += 1000) {
        size_t len = (size_t)snprintf(sql, cap, "INSERT INTO %s VALUES ", table);
        for (int i = lo; i < lo + 1000 && i < n; i++) {
            const char *sep = i > lo ? "," : "";
            long k = key(which, i);
            if (is_null(which, i))
                len += (size_t)snprintf(sql + len, cap - len, "%s(NULL, NULL, %d)", sep, i % vmod);
            else
                len += (size_t)snprintf(sql + len, cap - len, "%s(%ld, %ld, %d)", sep, k,
                                        k * 1000003L, i % vmod);
        }
        char want[32];
        snprintf(want, sizeof(want), "INSERT 0 %d", (n - lo) < 1000 ? n - lo : 1000);
        const char *got = run_q(sql, 0);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "%s: %s\n", table, got);
            free(sql);
            return false;
        }
    }
    free(sql);
    return true;
}

#endif
