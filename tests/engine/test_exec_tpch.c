/*
 * test_exec_tpch.c — TPC-H Q1 and Q6 at SF 0.01 through the C API: the
 * data made in memory by CALL dbgen, the queries read from
 * $RACKDB_SHARED/tpch/queries and the rows compared with the reference
 * answers in $RACKDB_SHARED/tpch/answers/sf0.01 (numbers within 0.01,
 * strings exactly), with 1 and 2 worker threads.
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
    if (rackdb_exec(sess, sql, &r, &e) != RACKDB_OK) {
        fprintf(stderr, "q%02d: %s\n", n, rackdb_error_message(e));
        rackdb_error_free(e);
        bad = 1;
    } else {
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

static void test_q1_q6(void)
{
    CHECK_EQ_INT(check_query(1), 0);
    CHECK_EQ_INT(check_query(6), 0);
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
    const char *settings[] = {"SET threads = 1", "SET threads = 2"};
    for (int i = 0; i < 2; i++) {
        if (rackdb_exec(sess, settings[i], &r, &e) == RACKDB_OK) rackdb_result_free(r);
        RUN(test_q1_q6);
    }
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
