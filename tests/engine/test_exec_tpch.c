/*
 * test_exec_tpch.c — the 22 TPC-H queries at SF 0.01 through the C API:
 * the data made in memory by CALL dbgen, the queries read from
 * $RACKDB_SHARED/tpch/queries (every statement of a file run in turn, the
 * last result with rows checked) and the rows compared with the reference
 * answers in $RACKDB_SHARED/tpch/answers/sf0.01 (numbers within 0.01,
 * strings exactly), with 1 and 2 worker threads and with join_algorithm
 * auto, hash, radix and sortmerge.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rackdb.h"
#include "test.h"

static rackdb *db;
static rackdb_session *sess;

static char *slurp(const char *path)
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

/* Whether field a (ours) matches b (the answer). */
static int field_matches(const char *a, const char *b)
{
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (*a && *b && !*ea && !*eb) return fabs(x - y) <= 0.01;
    return strcmp(a, b) == 0;
}

/* Runs query qNN and compares it with the answer; returns mismatches. */
static int check_query(int n)
{
    const char *shared = getenv("RACKDB_SHARED");
    if (!shared) shared = "/work/shared";
    char path[512];
    snprintf(path, sizeof(path), "%s/tpch/queries/q%02d.sql", shared, n);
    char *sql = slurp(path);
    snprintf(path, sizeof(path), "%s/tpch/answers/sf0.01/q%02d.csv", shared, n);
    char *answer = slurp(path);
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
        uint64_t rows = rackdb_result_row_count(r);
        uint32_t nc = rackdb_result_column_count(r);
        char *line = strtok(answer, "\n");
        for (uint64_t i = 0; i < rows; i++) {
            if (!line) {
                fprintf(stderr, "q%02d: more rows than the answer\n", n);
                bad++;
                break;
            }
            char *save = NULL, *field = strtok_r(line, "|", &save);
            for (uint32_t c = 0; c < nc; c++) {
                const char *ours = rackdb_result_text(r, i, c);
                if (!ours) ours = "NULL";
                if (!field || !field_matches(ours, field)) {
                    fprintf(stderr, "q%02d row %llu col %u: %s vs %s\n", n,
                            (unsigned long long)i + 1, c + 1, ours, field ? field : "(none)");
                    bad++;
                }
                field = strtok_r(NULL, "|", &save);
            }
            line = strtok(NULL, "\n");
        }
        if (line) {
            fprintf(stderr, "q%02d: fewer rows than the answer\n", n);
            bad++;
        }
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
    rackdb_error *e = NULL;
    rackdb_result *r = NULL;
    if (rackdb_open(NULL, &db, &e) != RACKDB_OK ||
        rackdb_session_open(db, &sess, &e) != RACKDB_OK ||
        rackdb_exec(sess, "CALL dbgen(sf = 0.01)", &r, &e) != RACKDB_OK) {
        fprintf(stderr, "setup: %s\n", e ? rackdb_error_message(e) : "?");
        return 1;
    }
    rackdb_result_free(r);
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
