/*
 * test_exec_tpch.c — the 22 TPC-H queries at SF 0.01 through the C API:
 * the data made in memory by CALL dbgen, the queries read from
 * $RACKDB_SHARED/tpch/queries (every statement of a file run in turn, the
 * last result with rows checked) and the rows compared with the reference
 * answers in $RACKDB_SHARED/tpch/answers/sf0.01 (numbers within 0.01,
 * strings exactly), with 1 and 2 worker threads and with join_algorithm
 * auto, hash, radix and sortmerge.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "tpch_check.h"

static rackdb *db;
static rackdb_session *sess;

/* Runs query qNN and compares it with the answer; returns mismatches. */
static int check_query(int n)
{
    char *sql = tc_query_text(n);
    char *answer = tc_answer_text(n);
    if (!sql || !answer) {
        fprintf(stderr, "cannot read query or answer %d\n", n);
        free(sql);
        free(answer);
        return 1;
    }
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    int bad = 0;
    const char *next = sql;
    for (;;) { /* q15 creates a view, selects, drops the view */
        rackdb_result *one = NULL;
        rackdb_code c = rackdb_next(sess, &next, &one, &e);
        if (c == RACKDB_DONE) break;
        if (c != RACKDB_OK) {
            fprintf(stderr, "q%02d: %s\n", n, rackdb_error_message(e));
            rackdb_error_free(e);
            rackdb_result_free(one);
            rackdb_result_free(r);
            r = NULL;
            bad = 1;
            rackdb_result *d = NULL;
            if (rackdb_exec(sess, "DROP VIEW IF EXISTS revenue0", &d, &e) == RACKDB_OK)
                rackdb_result_free(d);
            else
                rackdb_error_free(e);
            break;
        }
        if (one && rackdb_result_has_rows(one)) {
            rackdb_result_free(r);
            r = one;
        } else {
            rackdb_result_free(one);
        }
    }
    if (!bad && !r) {
        fprintf(stderr, "q%02d: no result rows\n", n);
        bad = 1;
    } else if (!bad) {
        bad = tc_compare(n, r, answer);
        rackdb_result_free(r);
    }
    free(sql);
    free(answer);
    return bad;
}

static const char *setting;

static void test_all_queries(void)
{
    for (int q = 1; q <= 22; q++) {
        int bad = check_query(q);
        if (bad) fprintf(stderr, "  q%02d failed with %s\n", q, setting);
        CHECK_EQ_INT(bad, 0);
    }
}

int main(void)
{
    if (!tc_open_sf001(&db, &sess)) return 1;
    rackdb_error *e = NULL;
    rackdb_result *r = NULL;
    const char *algos[] = {"auto", "hash", "radix", "sortmerge"};
    for (int th = 1; th <= 2; th++)
        for (int a = 0; a < 4; a++) {
#if defined(__SANITIZE_ADDRESS__)
            /* sanitizer builds run ten times slower: every algorithm once,
             * the partitioning ones with two workers */
            if (th != (a < 2 ? 1 : 2)) continue;
#endif
            char sql[128];
            snprintf(sql, sizeof(sql), "SET threads = %d; SET join_algorithm = %s", th, algos[a]);
            if (rackdb_exec(sess, sql, &r, &e) == RACKDB_OK)
                rackdb_result_free(r);
            else
                rackdb_error_free(e);
            setting = sql;
            RUN(test_all_queries);
        }
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
