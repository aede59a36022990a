/*
 * test_exec_slt.c — the sqllogictest runner: each .test file in tests/sql
 * through the C API, on a fresh in-memory instance, once with threads = 1
 * and once with threads = 2.
 *
 * The format (sqllogictest, with DuckDB's one-row-per-line results):
 *
 *   statement ok               the statement must succeed
 *   statement error [SQLSTATE] it must fail (with that SQLSTATE if given)
 *   query TYPES [rowsort|nosort]
 *   SELECT ...
 *   ----
 *   1	abc                     rows, values joined by tabs; NULL for NULL,
 *                              (empty) for an empty string
 *
 * Records end at a blank line; '#' starts a comment line. TYPES (I, R, T
 * per column) gives the column count. rowsort sorts rows as strings before
 * comparing. Files are found in $RACKDB_SOURCE/tests/sql.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rackdb.h"
#include "test.h"

typedef struct lines {
    char **v;
    size_t n, cap;
} lines;

static void push(lines *l, char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
    }
    l->v[l->n++] = s;
}

static void clear(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    l->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The result's rows in the file's notation. */
static void result_lines(rackdb_result *r, lines *out)
{
    for (uint64_t i = 0; i < rackdb_result_row_count(r); i++) {
        char buf[4096];
        size_t len = 0;
        buf[0] = '\0';
        for (uint32_t c = 0; c < rackdb_result_column_count(r); c++) {
            const char *v = rackdb_result_is_null(r, i, c) ? "NULL" : rackdb_result_text(r, i, c);
            if (!*v) v = "(empty)";
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", c ? "\t" : "", v);
            if (len >= sizeof(buf)) len = sizeof(buf) - 1;
        }
        push(out, strdup(buf));
    }
}

/* Runs one file; returns the number of failed records. */
static int run_file(const char *path, const char *threads)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    rackdb *db = NULL;
    rackdb_session *s = NULL;
    rackdb_error *e = NULL;
    rackdb_result *r = NULL;
    if (rackdb_open(NULL, &db, &e) != RACKDB_OK || rackdb_session_open(db, &s, &e) != RACKDB_OK) {
        fclose(f);
        return 1;
    }
    char set[64];
    snprintf(set, sizeof(set), "SET threads = %s", threads);
    if (rackdb_exec(s, set, &r, &e) == RACKDB_OK) rackdb_result_free(r);

    int failures = 0, lineno = 0;
    char line[4096];
    lines sql = {0}, expected = {0}, got = {0};
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#') continue;
        int start = lineno;
        char header[4096];
        snprintf(header, sizeof(header), "%s", line);
        bool is_query = strncmp(header, "query", 5) == 0;
        bool want_error = strncmp(header, "statement error", 15) == 0;
        const char *state = want_error && header[15] == ' ' ? header + 16 : NULL;
        bool rowsort = is_query && strstr(header, "rowsort") != NULL;
        clear(&sql);
        clear(&expected);
        bool in_result = false;
        while (fgets(line, sizeof(line), f)) {
            lineno++;
            line[strcspn(line, "\r\n")] = '\0';
            if (!line[0]) break;
            if (is_query && strcmp(line, "----") == 0) {
                in_result = true;
                continue;
            }
            push(in_result ? &expected : &sql, strdup(line));
        }
        size_t total = 1;
        for (size_t i = 0; i < sql.n; i++)
            total += strlen(sql.v[i]) + 1;
        char *text = calloc(1, total);
        for (size_t i = 0; i < sql.n; i++) {
            strcat(text, sql.v[i]);
            strcat(text, "\n");
        }
        r = NULL;
        e = NULL;
        bool ok = rackdb_exec(s, text, &r, &e) == RACKDB_OK;
        const char *problem = NULL;
        char msg[8400] = "";
        if (want_error) {
            if (ok)
                problem = "statement succeeded, expected an error";
            else if (state && strcmp(state, rackdb_error_sqlstate(e)) != 0) {
                snprintf(msg, sizeof(msg), "expected SQLSTATE %s, got %s: %s", state,
                         rackdb_error_sqlstate(e), rackdb_error_message(e));
                problem = msg;
            }
        } else if (!ok) {
            snprintf(msg, sizeof(msg), "%s: %s", rackdb_error_sqlstate(e), rackdb_error_message(e));
            problem = msg;
        } else if (is_query) {
            clear(&got);
            result_lines(r, &got);
            if (rowsort) {
                qsort(got.v, got.n, sizeof(*got.v), cmp_str);
                qsort(expected.v, expected.n, sizeof(*expected.v), cmp_str);
            }
            for (size_t i = 0; !problem && (i < got.n || i < expected.n); i++) {
                if (i >= got.n || i >= expected.n || strcmp(got.v[i], expected.v[i]) != 0) {
                    snprintf(msg, sizeof(msg), "row %zu: got \"%s\", expected \"%s\"", i + 1,
                             i < got.n ? got.v[i] : "(none)",
                             i < expected.n ? expected.v[i] : "(none)");
                    problem = msg;
                }
            }
        }
        if (problem) {
            fprintf(stderr, "%s:%d (threads %s): %s\n  %s", path, start, threads, problem, text);
            failures++;
        }
        free(text);
        rackdb_result_free(r);
        rackdb_error_free(e);
    }
    clear(&sql);
    clear(&expected);
    clear(&got);
    free(sql.v);
    free(expected.v);
    free(got.v);
    fclose(f);
    rackdb_session_close(s);
    rackdb_close(db);
    return failures;
}

int main(void)
{
    const char *src = getenv("RACKDB_SOURCE");
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/tests/sql", src ? src : ".");
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", dir);
        return 1;
    }
    lines files = {0};
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n > 5 && strcmp(de->d_name + n - 5, ".test") == 0) {
            char path[8192];
            snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
            push(&files, strdup(path));
        }
    }
    closedir(d);
    qsort(files.v, files.n, sizeof(*files.v), cmp_str);
    for (size_t i = 0; i < files.n; i++) {
        const char *threads[] = {"1", "2"};
        for (int t = 0; t < 2; t++) {
            test_failures_ = run_file(files.v[i], threads[t]);
            if (test_failures_) {
                test_failed_++;
                fprintf(stderr, "FAIL %s (threads %s)\n", files.v[i], threads[t]);
            } else {
                test_passed_++;
            }
        }
    }
    if (!files.n) test_failed_++; /* no test files found: the runner itself failed */
    clear(&files);
    free(files.v);
    return TEST_REPORT();
}
