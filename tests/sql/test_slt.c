/*
 * test_slt.c — the SQL logic test runner: proves SQL behaviour end to end
 * by running sqllogictest files through the public C API (rackdb.h).
 *
 * Without arguments it runs every .test file in tests/sql/slt (found under
 * $RACKDB_SOURCE); subdirectories such as slt/pending/ (known failures) and
 * slt/selftest/ (deliberately wrong expectations) are skipped unless their
 * files are named as arguments. Each file runs on a fresh in-memory
 * instance, once with threads = 1 and once with threads = 2, so that a
 * result depending on the parallel plan shows up as a failure.
 *
 *   test_slt [--threads N] [--expect-fail] [FILE.test ...]
 *
 * --expect-fail inverts the verdict of every record: a record passes when it
 * fails. The self-test runs the files in slt/selftest this way to prove that each
 * kind of check can fail.
 *
 * The format (sqllogictest, with DuckDB's one-row-per-line results):
 *
 *   # comment
 *   statement ok                   the SQL must succeed
 *   statement error [STATE] [@POS] [text]
 *                                  it must fail; STATE (5 characters such
 *                                  as 22012) must equal the SQLSTATE, POS
 *                                  the 1-based error position in the
 *                                  statement, text occur in the message
 *   query TYPES [nosort|rowsort|valuesort] [types=T1;T2]
 *   SELECT ...
 *   ----
 *   1	abc                         expected rows, values joined by tabs
 *
 * `only-threads N` (a line of its own) runs the file with that thread
 * count only, for files too slow to run twice. A record ends at a blank line; its SQL may span
 * lines (and hold several statements: all run, the last one's result counts). TYPES has one letter
 * per column (I integer, R decimal or double, T anything else) and fixes
 * the column count. Values are compared exactly as rackdb prints them
 * (PostgreSQL's text format), NULL as NULL, the empty string as (empty).
 * nosort (default) compares rows in order, rowsort sorts rows as strings on
 * both sides, valuesort sorts all values. Expected values may also be
 * written one per line (the classic sqllogictest layout). types=... checks
 * the SQL type names of the columns ("DECIMAL(12,2);INTEGER").
 * __TEST_DIR__ in SQL is replaced by a temporary directory that is removed
 * afterwards.
 *
 * The program prints each failure as file:line with expected and actual,
 * then "N passed, N failed" counting records, and exits non-zero on any
 * failure.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rackdb.h"
#include "test.h"

/* A growable list of owned strings. */
typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static bool push_len(strlist *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (!v) return false;
        l->v = v;
        l->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return false;
    memcpy(copy, s, len);
    copy[len] = '\0';
    l->v[l->n++] = copy;
    return true;
}

static bool push(strlist *l, const char *s)
{
    return push_len(l, s, strlen(s));
}

static void clear(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    l->n = 0;
}

static void release(strlist *l)
{
    clear(l);
    free(l->v);
    l->v = NULL;
    l->cap = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A growable string. */
typedef struct buf {
    char *s;
    size_t len, cap;
} buf;

static bool append(buf *b, const char *s, size_t len)
{
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) return false;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, len);
    b->len += len;
    b->s[b->len] = '\0';
    return true;
}

static bool append_str(buf *b, const char *s)
{
    return append(b, s, strlen(s));
}

/* How one run goes: the options and the counts. */
typedef struct runner {
    const char *threads; /* "1", "2": the SET threads value */
    bool expect_fail;    /* a record passes when its check fails */
    bool fixed_threads;  /* --threads given: only-threads lines are ignored */
    const char *test_dir;
    int passed, failed;
} runner;

/* One record of a file, as parsed. */
typedef struct record {
    const char *path;
    int line;
    enum { REC_OK, REC_ERROR, REC_QUERY } kind;
    char header[1024];
    strlist sql;      /* lines */
    strlist expected; /* lines after ---- */
} record;

/* SQL text of the record with __TEST_DIR__ replaced. */
static char *record_sql(const record *rec, const char *test_dir)
{
    buf b = {0};
    static const char marker[] = "__TEST_DIR__";
    for (size_t i = 0; i < rec->sql.n; i++) {
        const char *p = rec->sql.v[i];
        const char *m;
        while ((m = strstr(p, marker))) {
            append(&b, p, (size_t)(m - p));
            append_str(&b, test_dir);
            p = m + sizeof(marker) - 1;
        }
        append_str(&b, p);
        append_str(&b, "\n");
    }
    return b.s;
}

/* A result's rows as tab-joined lines in the file's notation. */
static bool result_rows(rackdb_result *r, strlist *out)
{
    buf line = {0};
    for (uint64_t i = 0; i < rackdb_result_row_count(r); i++) {
        line.len = 0;
        append(&line, "", 0);
        for (uint32_t c = 0; c < rackdb_result_column_count(r); c++) {
            const char *v = rackdb_result_is_null(r, i, c) ? "NULL" : rackdb_result_text(r, i, c);
            if (!v) v = "NULL";
            if (!*v) v = "(empty)";
            if (c) append_str(&line, "\t");
            append_str(&line, v);
        }
        if (!push(out, line.s)) {
            free(line.s);
            return false;
        }
    }
    free(line.s);
    return true;
}

/* Splits tab-joined lines into single values. */
static void split_values(const strlist *rows, strlist *out)
{
    for (size_t i = 0; i < rows->n; i++) {
        const char *p = rows->v[i];
        for (;;) {
            const char *tab = strchr(p, '\t');
            size_t len = tab ? (size_t)(tab - p) : strlen(p);
            push_len(out, p, len);
            if (!tab) break;
            p = tab + 1;
        }
    }
}

/* Expected rows in one-row-per-line form: when the file lists one value per
 * line (the classic layout) for a multi-column result, lines are regrouped. */
static void expected_rows(const strlist *lines, uint32_t cols, uint64_t nrows, strlist *out)
{
    bool per_value = cols > 1 && lines->n == nrows * cols && lines->n != nrows;
    for (size_t i = 0; i < lines->n && per_value; i++)
        if (strchr(lines->v[i], '\t')) per_value = false;
    if (!per_value) {
        for (size_t i = 0; i < lines->n; i++)
            push(out, lines->v[i]);
        return;
    }
    buf row = {0};
    for (size_t i = 0; i < lines->n; i++) {
        if (i % cols == 0) {
            row.len = 0;
            append(&row, "", 0);
        } else {
            append_str(&row, "\t");
        }
        append_str(&row, lines->v[i]);
        if (i % cols == cols - 1) push(out, row.s);
    }
    free(row.s);
}

/* Checks the column type names against "types=A;B;C"; NULL when they match,
 * else a message in msg. */
static const char *check_types(rackdb_result *r, const char *spec, char *msg, size_t size)
{
    buf got = {0};
    for (uint32_t c = 0; c < rackdb_result_column_count(r); c++) {
        if (c) append_str(&got, ";");
        append_str(&got, rackdb_result_column_type(r, c));
    }
    size_t len = strcspn(spec, " \t");
    const char *problem = NULL;
    if (!got.s || strlen(got.s) != len || strncmp(got.s, spec, len) != 0) {
        snprintf(msg, size, "column types: expected %.*s, got %s", (int)len, spec,
                 got.s ? got.s : "");
        problem = msg;
    }
    free(got.s);
    return problem;
}

/* Compares a query's result with the expectations; NULL when they agree,
 * else a description of the first difference (written to *msg, malloc'd). */
static char *check_query(const record *rec, rackdb_result *r)
{
    char tmp[2048];
    const char *h = rec->header + 5;
    while (*h == ' ')
        h++;
    size_t ntypes = strcspn(h, " \t");
    uint32_t cols = rackdb_result_column_count(r);
    if (!rackdb_result_has_rows(r)) return strdup("statement returned no rows (not a query)");
    if (ntypes != cols) {
        snprintf(tmp, sizeof(tmp), "expected %zu columns (%.*s), got %u", ntypes, (int)ntypes, h,
                 cols);
        return strdup(tmp);
    }
    const char *types = strstr(rec->header, "types=");
    if (types && check_types(r, types + 6, tmp, sizeof(tmp))) return strdup(tmp);
    bool rowsort = strstr(rec->header, "rowsort") != NULL;
    bool valuesort = strstr(rec->header, "valuesort") != NULL;

    strlist got = {0}, want = {0};
    char *problem = NULL;
    if (!result_rows(r, &got)) {
        problem = strdup("out of memory");
        goto done;
    }
    expected_rows(&rec->expected, cols, got.n, &want);
    if (valuesort) {
        strlist g = {0}, w = {0};
        split_values(&got, &g);
        split_values(&want, &w);
        release(&got);
        release(&want);
        got = g;
        want = w;
    }
    if (rowsort || valuesort) {
        if (got.n) qsort(got.v, got.n, sizeof(*got.v), cmp_str); /* v is NULL when empty */
        if (want.n) qsort(want.v, want.n, sizeof(*want.v), cmp_str);
    }
    for (size_t i = 0; i < got.n || i < want.n; i++) {
        if (i < got.n && i < want.n && strcmp(got.v[i], want.v[i]) == 0) continue;
        buf b = {0};
        snprintf(tmp, sizeof(tmp), "%s %zu differs (%zu expected, %zu returned)\n",
                 valuesort ? "value" : "row", i + 1, want.n, got.n);
        append_str(&b, tmp);
        append_str(&b, "  expected: ");
        append_str(&b, i < want.n ? want.v[i] : "(no more rows)");
        append_str(&b, "\n  actual:   ");
        append_str(&b, i < got.n ? got.v[i] : "(no more rows)");
        append_str(&b, "\n  full result:\n");
        for (size_t j = 0; j < got.n && j < 50; j++) {
            append_str(&b, "    ");
            append_str(&b, got.v[j]);
            append_str(&b, "\n");
        }
        if (got.n > 50) append_str(&b, "    ...\n");
        problem = b.s;
        break;
    }
done:
    release(&got);
    release(&want);
    return problem;
}

/* Runs one record; returns NULL when it behaves as written, else why not. */
static char *run_record(runner *run, rackdb_session *s, const record *rec)
{
    char *text = record_sql(rec, run->test_dir);
    if (!text) return strdup("out of memory");
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    bool ok = rackdb_exec(s, text, &r, &e) == RACKDB_OK;
    free(text);
    char msg[4096];
    char *problem = NULL;
    if (rec->kind == REC_ERROR) {
        const char *arg = rec->header + strlen("statement error");
        while (*arg == ' ')
            arg++;
        size_t toklen = strcspn(arg, " ");
        bool is_state = toklen == 5;
        for (size_t i = 0; i < toklen && is_state; i++)
            is_state = (arg[i] >= '0' && arg[i] <= '9') || (arg[i] >= 'A' && arg[i] <= 'Z');
        const char *state = is_state ? arg : NULL;
        const char *text_part = is_state ? arg + toklen : arg;
        while (*text_part == ' ')
            text_part++;
        int want_pos = 0;
        if (*text_part == '@') {
            want_pos = atoi(text_part + 1);
            text_part += strcspn(text_part, " ");
            while (*text_part == ' ')
                text_part++;
        }
        if (ok) {
            problem = strdup("statement succeeded, expected an error");
        } else if (state && strncmp(state, rackdb_error_sqlstate(e), 5) != 0) {
            snprintf(msg, sizeof(msg), "expected SQLSTATE %.5s, got %s: %s", state,
                     rackdb_error_sqlstate(e), rackdb_error_message(e));
            problem = strdup(msg);
        } else if (*text_part && !strstr(rackdb_error_message(e), text_part)) {
            snprintf(msg, sizeof(msg), "expected an error containing \"%s\", got %s: %s", text_part,
                     rackdb_error_sqlstate(e), rackdb_error_message(e));
            problem = strdup(msg);
        } else if (want_pos && rackdb_error_position(e) != want_pos) {
            snprintf(msg, sizeof(msg), "expected the error at position %d, got %d: %s", want_pos,
                     rackdb_error_position(e), rackdb_error_message(e));
            problem = strdup(msg);
        }
    } else if (!ok) {
        snprintf(msg, sizeof(msg), "unexpected error %s at position %d: %s",
                 rackdb_error_sqlstate(e), rackdb_error_position(e), rackdb_error_message(e));
        problem = strdup(msg);
    } else if (rec->kind == REC_QUERY) {
        problem = check_query(rec, r);
    }
    rackdb_result_free(r);
    rackdb_error_free(e);
    return problem;
}

static void report(runner *run, const record *rec, const char *problem)
{
    bool failed = run->expect_fail ? problem == NULL : problem != NULL;
    if (!failed) {
        run->passed++;
        return;
    }
    run->failed++;
    fprintf(stderr, "%s:%d (threads %s): %s\n", rec->path, rec->line, run->threads,
            problem ? problem : "record passed, but --expect-fail wants it to fail");
    for (size_t i = 0; i < rec->sql.n; i++)
        fprintf(stderr, "    | %s\n", rec->sql.v[i]);
}

/* Reads a line without its newline; false at end of file. */
static bool read_line(FILE *f, buf *line, int *lineno)
{
    line->len = 0;
    append(line, "", 0);
    int ch;
    bool any = false;
    while ((ch = fgetc(f)) != EOF) {
        any = true;
        if (ch == '\n') break;
        char c = (char)ch;
        if (c != '\r') append(line, &c, 1);
    }
    if (any) (*lineno)++;
    return any;
}

/* True when the file asks to run with another thread count only (an
 * `only-threads N` line, for files too slow to run twice) and the thread
 * count was not chosen on the command line. */
static bool skip_for_threads(const runner *run, FILE *f)
{
    buf line = {0};
    int lineno = 0;
    bool skip = false;
    while (!run->fixed_threads && read_line(f, &line, &lineno)) {
        if (strncmp(line.s, "only-threads ", 13) == 0) {
            skip = strcmp(line.s + 13, run->threads) != 0;
            break;
        }
    }
    free(line.s);
    rewind(f);
    return skip;
}

/* Runs every record of one file on a fresh instance. */
static void run_file(runner *run, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        run->failed++;
        return;
    }
    if (skip_for_threads(run, f)) {
        fclose(f);
        return;
    }
    rackdb *db = NULL;
    rackdb_session *s = NULL;
    rackdb_error *e = NULL;
    if (rackdb_open(NULL, &db, &e) != RACKDB_OK || rackdb_session_open(db, &s, &e) != RACKDB_OK) {
        fprintf(stderr, "%s: cannot open an instance: %s\n", path,
                e ? rackdb_error_message(e) : "?");
        rackdb_error_free(e);
        if (db) rackdb_close(db);
        fclose(f);
        run->failed++;
        return;
    }
    if (rackdb_session_set(s, "threads", run->threads, &e) != RACKDB_OK) {
        fprintf(stderr, "%s: SET threads = %s failed: %s\n", path, run->threads,
                rackdb_error_message(e));
        rackdb_error_free(e);
        run->failed++;
    }

    record rec = {.path = path};
    buf line = {0};
    int lineno = 0;
    while (read_line(f, &line, &lineno)) {
        if (!line.s[0] || line.s[0] == '#' || strncmp(line.s, "only-threads ", 13) == 0) continue;
        rec.line = lineno;
        snprintf(rec.header, sizeof(rec.header), "%s", line.s);
        clear(&rec.sql);
        clear(&rec.expected);
        if (strcmp(line.s, "statement ok") == 0) {
            rec.kind = REC_OK;
        } else if (strncmp(line.s, "statement error", 15) == 0) {
            rec.kind = REC_ERROR;
        } else if (strncmp(line.s, "query ", 6) == 0) {
            rec.kind = REC_QUERY;
        } else {
            fprintf(stderr, "%s:%d: unknown record \"%s\"\n", path, lineno, line.s);
            run->failed++;
            while (read_line(f, &line, &lineno) && line.s[0]) {
            }
            continue;
        }
        bool in_result = false;
        while (read_line(f, &line, &lineno) && line.s[0]) {
            if (rec.kind == REC_QUERY && !in_result && strcmp(line.s, "----") == 0) {
                in_result = true;
                continue;
            }
            push(in_result ? &rec.expected : &rec.sql, line.s);
        }
        if (!rec.sql.n) {
            fprintf(stderr, "%s:%d: record without SQL\n", path, rec.line);
            run->failed++;
            continue;
        }
        char *problem = run_record(run, s, &rec);
        report(run, &rec, problem);
        free(problem);
    }
    free(line.s);
    release(&rec.sql);
    release(&rec.expected);
    fclose(f);
    rackdb_session_close(s);
    rackdb_close(db);
}

/* The *.test files directly inside dir, sorted. */
static void list_tests(const char *dir, strlist *files)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n > 5 && strcmp(de->d_name + n - 5, ".test") == 0) {
            buf path = {0};
            append_str(&path, dir);
            append_str(&path, "/");
            append_str(&path, de->d_name);
            if (path.s) push(files, path.s);
            free(path.s);
        }
    }
    closedir(d);
    qsort(files->v, files->n, sizeof(*files->v), cmp_str);
}

/* Removes the files a test left in the temporary directory, then it. */
static void remove_test_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            buf path = {0};
            append_str(&path, dir);
            append_str(&path, "/");
            append_str(&path, de->d_name);
            if (path.s) unlink(path.s);
            free(path.s);
        }
        closedir(d);
    }
    rmdir(dir);
}

int main(int argc, char **argv)
{
    runner run = {0};
    (void)test_failures_; /* test.h's per-function counter: records count here */
    const char *threads_opt = NULL;
    strlist files = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect-fail")) {
            run.expect_fail = true;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads_opt = argv[++i];
            run.fixed_threads = true;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--threads N] [--expect-fail] [FILE.test ...]\n", argv[0]);
            return 2;
        } else {
            push(&files, argv[i]);
        }
    }
    if (!files.n) {
        const char *src = getenv("RACKDB_SOURCE");
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s/tests/sql/slt", src ? src : ".");
        list_tests(dir, &files);
        if (!files.n) {
            fprintf(stderr, "no .test files in %s\n", dir);
            return 1;
        }
    }
    char test_dir[] = "/tmp/rackdb_slt_XXXXXX";
    if (!mkdtemp(test_dir)) {
        perror("mkdtemp");
        return 1;
    }
    run.test_dir = test_dir;
    const char *all_threads[] = {"1", "2"};
    size_t nthreads = threads_opt ? 1 : 2;
    for (size_t i = 0; i < files.n; i++) {
        for (size_t t = 0; t < nthreads; t++) {
            run.threads = threads_opt ? threads_opt : all_threads[t];
            int before = run.failed;
            run_file(&run, files.v[i]);
            if (run.failed > before)
                fprintf(stderr, "FAIL %s (threads %s): %d record(s)\n", files.v[i], run.threads,
                        run.failed - before);
        }
    }
    remove_test_dir(test_dir);
    release(&files);
    test_passed_ = run.passed;
    test_failed_ = run.failed;
    return TEST_REPORT();
}
