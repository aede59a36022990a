/*
 * tpch_check.h — what the engine's TPC-H tests share: reading a query file
 * from $RACKDB_SHARED/tpch/queries, opening a database with the SF 0.01
 * data made in memory, and comparing a result's rows with the official
 * answer in $RACKDB_SHARED/tpch/answers/sf0.01 (numbers within 0.01, other
 * fields exactly, NULL as "NULL", in order, same row count), and two
 * results cell by cell. Included by test_exec_tpch.c, test_plan_wire_tpch.c,
 * test_exec_adaptive*.c and dist_check.h.
 */
#ifndef RACKDB_TESTS_TPCH_CHECK_H
#define RACKDB_TESTS_TPCH_CHECK_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rackdb.h"
#include "sql/bind_catalog.h"

/* $RACKDB_SHARED; unlike test_shared_dir(), the default is absolute, as
 * these tests have always had it. */
static inline const char *tc_shared(void)
{
    const char *s = getenv("RACKDB_SHARED");
    return s ? s : "/work/shared";
}

/* Cells that differ between a and b, each reported (1 when the shapes
 * differ): two runs of one query compared with each other
 * (test_exec_adaptive*.c). */
static inline int tc_cells_differ(rackdb_result *a, rackdb_result *b)
{
    uint64_t rows = rackdb_result_row_count(a);
    uint32_t cols = rackdb_result_column_count(a);
    if (rows != rackdb_result_row_count(b) || cols != rackdb_result_column_count(b)) return 1;
    int bad = 0;
    for (uint64_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++) {
            const char *x = rackdb_result_text(a, r, c), *y = rackdb_result_text(b, r, c);
            if (strcmp(x ? x : "NULL", y ? y : "NULL")) {
                fprintf(stderr, "row %llu col %u: %s vs %s\n", (unsigned long long)r, c,
                        x ? x : "NULL", y ? y : "NULL");
                bad++;
            }
        }
    return bad;
}

/* The text of query file qNN.sql, or NULL (reported). */
static inline char *tc_query_text(int q)
{
    return tcat_read_tpch(tc_shared(), "queries/q%02d.sql", q);
}

/* The answer of query q at SF 0.01 ('|'-separated lines), or NULL
 * (reported). */
static inline char *tc_answer_text(int q)
{
    return tcat_read_tpch(tc_shared(), "answers/sf0.01/q%02d.csv", q);
}

/* Whether field a (ours; NULL is printed "NULL") matches b (the answer). */
static inline int tc_field_matches(const char *a, const char *b)
{
    if (!a) a = "NULL";
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (*a && *b && !*ea && !*eb) return fabs(x - y) <= 0.01;
    return strcmp(a, b) == 0;
}

/* Mismatches of r against answer, the text of query q's answer (cut up in
 * place). Only the first few are printed: one wrong column repeats on
 * every row. */
static inline int tc_compare(int q, rackdb_result *r, char *answer)
{
    int bad = 0;
    uint64_t rows = rackdb_result_row_count(r);
    uint32_t nc = rackdb_result_column_count(r);
    char *save_line = NULL, *line = strtok_r(answer, "\n", &save_line);
    for (uint64_t i = 0; i < rows; i++) {
        if (!line) {
            fprintf(stderr, "q%02d: more rows than the answer\n", q);
            return bad + 1;
        }
        char *save = NULL, *field = strtok_r(line, "|", &save);
        for (uint32_t c = 0; c < nc; c++) {
            const char *ours = rackdb_result_text(r, i, c);
            if (!field || !tc_field_matches(ours, field)) {
                if (bad < 5)
                    fprintf(stderr, "q%02d row %llu col %u: %s vs %s\n", q,
                            (unsigned long long)i + 1, c + 1, ours ? ours : "NULL",
                            field ? field : "(none)");
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
    return bad;
}

/* Mismatches of r against the answer file of query q (1 if unreadable). */
static inline int tc_check_answer(int q, rackdb_result *r)
{
    char *answer = tc_answer_text(q);
    if (!answer) return 1;
    int bad = tc_compare(q, r, answer);
    free(answer);
    return bad;
}

/* Opens an in-memory database and a session on it holding the SF 0.01 data
 * (CALL dbgen); false, with the error printed, when that fails. */
static inline bool tc_open_sf001(rackdb **db, rackdb_session **sess)
{
    rackdb_error *e = NULL;
    rackdb_result *r = NULL;
    if (rackdb_open(NULL, db, &e) != RACKDB_OK || rackdb_session_open(*db, sess, &e) != RACKDB_OK ||
        rackdb_exec(*sess, "CALL dbgen(sf = 0.01)", &r, &e) != RACKDB_OK) {
        fprintf(stderr, "setup: %s\n", e ? rackdb_error_message(e) : "?");
        return false;
    }
    rackdb_result_free(r);
    return true;
}

#endif
