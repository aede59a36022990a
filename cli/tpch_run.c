/*
 * tpch_run.c — `rackdb tpch run`: TPC-H queries timed and checked.
 *
 * The data is generated in memory (CALL dbgen) or loaded from dbgen's .tbl
 * files (--data DIR); the queries are the ones built into the program
 * (cli/tpch_embedded.c) or read from --queries-dir. Each query runs --reps
 * times; the table shows the best time, the compile time of that run, the
 * rows and whether the answer matched. --check compares each query's rows
 * with the built-in answer of the scale factor (numbers within 0.01, text
 * exactly after trimming blanks), prints the first row that differs and
 * makes the exit status non-zero on any mismatch or failure; queries the
 * engine cannot run yet ("not supported", SQLSTATE 0A000) count as
 * failures only then. --results writes DIR/qNN.csv in the answers' format;
 * --json writes every figure. --servers N runs everything on a cluster of N
 * local servers instead (cli/tpch_cluster.h): each generates its own chunk,
 * the queries go to the coordinator over the PostgreSQL protocol, times are
 * taken at the client and the table adds the bytes moved between servers.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/tpch_cluster.h"
#include "cli/tpch_embedded.h"
#include "rackdb.h"

static const char run_usage[] =
    "usage: rackdb tpch run --sf SF [options]\n"
    "  --sf SF            scale factor of the data (generated in memory)\n"
    "  --queries LIST     queries to run, e.g. 1,6 (default: all 22)\n"
    "  --threads N        worker threads (default: all cores)\n"
    "  --reps R           runs per query; the best time counts (default 1)\n"
    "  --check            compare with the built-in answers (SF 0.01, 0.1, 1)\n"
    "  --queries-dir DIR  read qNN.sql from DIR instead of the built-in ones\n"
    "  --results DIR      write each query's rows to DIR/qNN.csv\n"
    "  --json FILE        write all figures as JSON\n"
    "  --data DIR         load DIR/<table>.tbl instead of generating\n"
    "  --servers N        run on a cluster of N local servers (loopback), each\n"
    "                     generating its own chunk; adds bytes moved per query\n";

typedef struct opts {
    const char *sf;
    bool queries[CLI_TPCH_QUERIES + 1];
    const char *threads;
    int reps;
    bool check;
    const char *queries_dir, *results, *json, *data;
    int servers; /* 0: in this process */
} opts;

typedef enum outcome { OUT_OK, OUT_MISMATCH, OUT_UNSUPPORTED, OUT_ERROR, OUT_UNCHECKED } outcome;

static const char *outcome_name[] = {"ok", "MISMATCH", "not supported", "ERROR", "-"};

typedef struct qrun {
    int q;
    outcome out;
    double best_ms, compile_ms;
    double *times;
    uint64_t rows;
    uint64_t shuffle_bytes; /* --servers: moved between servers */
    char message[512];
} qrun;

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "rackdb tpch run: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", run_usage);
    return -1;
}

static bool parse_queries(const char *list, bool *sel)
{
    memset(sel, 0, (CLI_TPCH_QUERIES + 1) * sizeof(*sel));
    const char *p = list;
    while (*p) {
        char *end;
        long q = strtol(p, &end, 10);
        if (end == p || q < 1 || q > CLI_TPCH_QUERIES) return false;
        sel[q] = true;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    return true;
}

static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof(*o));
    o->reps = 1;
    for (int q = 1; q <= CLI_TPCH_QUERIES; q++)
        o->queries[q] = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(run_usage, stdout);
            return 1;
        }
        if (strcmp(a, "--check") == 0) {
            o->check = true;
            continue;
        }
        const char *names[] = {"--sf",      "--queries", "--threads", "--reps",   "--queries-dir",
                               "--results", "--json",    "--data",    "--servers"};
        int k = -1;
        for (int j = 0; j < 9; j++)
            if (strcmp(a, names[j]) == 0) k = j;
        if (k < 0) return usage("unknown option \"%s\"", a);
        if (i + 1 >= argc) return usage("%s needs a value", a);
        const char *v = argv[++i];
        switch (k) {
        case 0:
            o->sf = v;
            break;
        case 1:
            if (!parse_queries(v, o->queries)) return usage("bad query list \"%s\"", v);
            break;
        case 2:
            o->threads = v;
            break;
        case 3:
            o->reps = atoi(v);
            if (o->reps < 1) return usage("bad --reps \"%s\"", v);
            break;
        case 4:
            o->queries_dir = v;
            break;
        case 5:
            o->results = v;
            break;
        case 6:
            o->json = v;
            break;
        case 7:
            o->data = v;
            break;
        case 8:
            o->servers = atoi(v);
            if (o->servers < 1 || o->servers > 64) return usage("bad --servers \"%s\"", v);
            break;
        }
    }
    if (!o->sf) return usage("%s", "--sf is required");
    if (o->servers && o->data) return usage("%s", "--data cannot be used with --servers");
    char *end;
    double sf = strtod(o->sf, &end);
    if (*end || !(sf > 0)) return usage("bad scale factor \"%s\"", o->sf);
    return 0;
}

/* --- running statements ------------------------------------------------------ */

static bool exec_all(rackdb_session *s, cli_tpch_cluster *cl, const char *sql, char *err,
                     size_t errsize)
{
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    if (cl) {
        double ms;
        bool unsupported;
        bool ok = cli_tpch_cluster_run(cl, sql, &r, &ms, err, errsize, &unsupported);
        rackdb_result_free(r);
        return ok;
    }
    if (rackdb_exec(s, sql, &r, &e) != RACKDB_OK) {
        snprintf(err, errsize, "%s", rackdb_error_message(e));
        rackdb_error_free(e);
        return false;
    }
    rackdb_result_free(r);
    return true;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Runs every statement of sql; *rows gets the last result with rows (the
 * caller frees it). */
static bool run_query(rackdb_session *s, cli_tpch_cluster *cl, const char *sql,
                      rackdb_result **rows, double *ms, double *compile_ms, char *err,
                      size_t errsize, bool *unsupported)
{
    *rows = NULL;
    *ms = *compile_ms = 0;
    *unsupported = false;
    if (cl) return cli_tpch_cluster_run(cl, sql, rows, ms, err, errsize, unsupported);
    const char *p = sql;
    for (;;) {
        rackdb_result *r = NULL;
        rackdb_error *e = NULL;
        rackdb_code c = rackdb_next(s, &p, &r, &e);
        if (c == RACKDB_DONE) break;
        if (c != RACKDB_OK) {
            snprintf(err, errsize, "%s", rackdb_error_message(e));
            *unsupported = strcmp(rackdb_error_sqlstate(e), "0A000") == 0;
            rackdb_error_free(e);
            rackdb_result_free(*rows);
            *rows = NULL;
            /* q15's view must not outlive a failed select */
            exec_all(s, NULL, "DROP VIEW IF EXISTS revenue0", err + strlen(err), 1);
            return false;
        }
        if (!r) continue;
        *ms += rackdb_result_elapsed_ms(r);
        *compile_ms += rackdb_result_compile_ms(r);
        if (rackdb_result_has_rows(r)) {
            rackdb_result_free(*rows);
            *rows = r;
        } else {
            rackdb_result_free(r);
        }
    }
    return true;
}

/* --- checking ------------------------------------------------------------------------ */

static void trim(const char **s, size_t *len)
{
    while (*len && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' || (*s)[*len - 1] == '\r'))
        (*len)--;
}

static bool as_number(const char *s, size_t len, double *out)
{
    char buf[64];
    if (!len || len >= sizeof(buf)) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    *out = strtod(buf, &end);
    return *end == '\0';
}

static bool field_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    trim(&a, &alen);
    trim(&b, &blen);
    double x, y;
    if (as_number(a, alen, &x) && as_number(b, blen, &y)) return fabs(x - y) <= 0.01;
    return alen == blen && memcmp(a, b, alen) == 0;
}

/* Our row i as '|'-joined text into buf. */
static void row_text(rackdb_result *r, uint64_t i, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t c = 0; c < rackdb_result_column_count(r); c++) {
        const char *v = rackdb_result_is_null(r, i, c) ? "NULL" : rackdb_result_text(r, i, c);
        int n = snprintf(buf + len, len < size ? size - len : 0, "%s%s", c ? "|" : "", v);
        if (n > 0) len += (size_t)n;
        if (len >= size) break;
    }
}

/* Compares the rows with the answer; false with the first difference in msg. */
static bool check_rows(rackdb_result *r, const char *answer, char *msg, size_t size)
{
    const char *line = answer;
    uint64_t rows = rackdb_result_row_count(r);
    uint32_t ncols = rackdb_result_column_count(r);
    char ours[1024];
    for (uint64_t i = 0; i < rows; i++) {
        row_text(r, i, ours, sizeof(ours));
        if (!*line) {
            snprintf(msg, size, "row %llu: extra row \"%.200s\"", (unsigned long long)i + 1, ours);
            return false;
        }
        const char *eol = strchr(line, '\n');
        size_t llen = eol ? (size_t)(eol - line) : strlen(line);
        const char *f = line;
        bool same = true;
        for (uint32_t c = 0; c < ncols && same; c++) {
            const char *fend = memchr(f, '|', (size_t)(line + llen - f));
            size_t flen = fend ? (size_t)(fend - f) : (size_t)(line + llen - f);
            const char *v = rackdb_result_is_null(r, i, c) ? "NULL" : rackdb_result_text(r, i, c);
            same = field_equal(v, strlen(v), f, flen);
            f = fend ? fend + 1 : line + llen;
            if (!fend && c + 1 < ncols) same = false;
        }
        if (!same) {
            snprintf(msg, size, "row %llu: got \"%.200s\", expected \"%.*s\"",
                     (unsigned long long)i + 1, ours, (int)(llen > 200 ? 200 : llen), line);
            return false;
        }
        line = eol ? eol + 1 : line + llen;
    }
    if (*line) {
        const char *eol = strchr(line, '\n');
        snprintf(msg, size, "row %llu: missing, expected \"%.*s\"", (unsigned long long)rows + 1,
                 (int)(eol ? eol - line : (long)strlen(line)), line);
        return false;
    }
    return true;
}

static bool write_results(const char *dir, int q, rackdb_result *r)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/q%02d.csv", dir, q);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    char line[1 << 14];
    for (uint64_t i = 0; i < rackdb_result_row_count(r); i++) {
        row_text(r, i, line, sizeof(line));
        fprintf(f, "%s\n", line);
    }
    return fclose(f) == 0;
}

/* --- output --------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static bool write_json(const opts *o, const char *threads, double load_ms, const qrun *runs, int n)
{
    FILE *f = fopen(o->json, "w");
    if (!f) return false;
    fprintf(f,
            "{\n  \"sf\": %g,\n  \"threads\": %d,\n  \"servers\": %d,\n  \"reps\": %d,\n"
            "  \"load_ms\": %.3f,\n  \"queries\": [\n",
            strtod(o->sf, NULL), atoi(threads), o->servers ? o->servers : 1, o->reps, load_ms);
    for (int i = 0; i < n; i++) {
        const qrun *r = &runs[i];
        fprintf(f, "    {\"query\": %d, \"status\": ", r->q);
        json_string(f, r->out == OUT_UNCHECKED ? "unchecked" : outcome_name[r->out]);
        fprintf(f,
                ", \"best_ms\": %.3f, \"compile_ms\": %.3f, \"rows\": %llu, "
                "\"shuffle_bytes\": %llu, \"times_ms\": [",
                r->best_ms, r->compile_ms, (unsigned long long)r->rows,
                (unsigned long long)r->shuffle_bytes);
        for (int k = 0; k < o->reps && r->times; k++)
            fprintf(f, "%s%.3f", k ? ", " : "", r->times[k]);
        fprintf(f, "], \"message\": ");
        json_string(f, r->message);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0;
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *const tables[] = {"nation",   "region",   "part",   "supplier",
                                     "partsupp", "customer", "orders", "lineitem"};

static bool load_data(rackdb_session *s, cli_tpch_cluster *cl, const opts *o, char *err,
                      size_t size)
{
    char sql[4096];
    if (!o->data) {
        /* on a cluster, the coordinator has every server make its chunk */
        snprintf(sql, sizeof(sql), "CALL dbgen(sf = %s)", o->sf);
        return exec_all(s, cl, sql, err, size);
    }
    if (!exec_all(s, cl, cli_tpch_schema, err, size)) return false;
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        snprintf(sql, sizeof(sql), "COPY %s FROM '%.3000s/%s.tbl'", tables[i], o->data, tables[i]);
        if (!exec_all(s, cl, sql, err, size)) return false;
    }
    return true;
}

int cli_tpch_run(int argc, char **argv)
{
    opts o;
    int pr = parse(argc, argv, &o);
    if (pr) return pr > 0 ? 0 : 2;
    char sf_name[32]; /* "0.01" however it was written (".01", "0.010") */
    snprintf(sf_name, sizeof(sf_name), "%g", strtod(o.sf, NULL));
    const char *answers_sf = o.check && cli_tpch_answer(sf_name, 1) ? sf_name : NULL;
    if (o.check && !answers_sf) {
        fprintf(stderr, "rackdb tpch run: no built-in answers for SF %s (0.01, 0.1 and 1 have)\n",
                o.sf);
        return 2;
    }
    if (o.results && mkdir(o.results, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "rackdb tpch run: cannot create %s: %s\n", o.results, strerror(errno));
        return 1;
    }
    rackdb *db = NULL;
    rackdb_session *s = NULL;
    rackdb_error *e = NULL;
    cli_tpch_cluster *cl = NULL;
    char err[1024] = "";
    if (o.servers) {
        if (isatty(2)) fprintf(stderr, "starting %d servers ...", o.servers);
        bool up = cli_tpch_cluster_start(o.servers, &cl, err, sizeof(err));
        if (isatty(2)) fprintf(stderr, "\r\033[K");
        if (!up) {
            fprintf(stderr, "rackdb tpch run: %s\n", err);
            return 1;
        }
    } else if (rackdb_open(NULL, &db, &e) != RACKDB_OK ||
               rackdb_session_open(db, &s, &e) != RACKDB_OK) {
        fprintf(stderr, "rackdb tpch run: %s\n", e ? rackdb_error_message(e) : "cannot open");
        rackdb_error_free(e);
        rackdb_close(db);
        return 1;
    }
    char threads[32] = "";
    int status = 0;
    qrun runs[CLI_TPCH_QUERIES];
    int nruns = 0;
    bool tty = isatty(2);
    if (o.threads) {
        char sql[64];
        snprintf(sql, sizeof(sql), "SET threads = %s", o.threads);
        if (!exec_all(s, cl, sql, err, sizeof(err))) {
            fprintf(stderr, "rackdb tpch run: %s\n", err);
            status = 2;
            goto out;
        }
    }
    {
        rackdb_result *r = NULL;
        double ms, cms;
        bool unsupported;
        char ignored[256];
        if (run_query(s, cl, "SHOW threads", &r, &ms, &cms, ignored, sizeof(ignored),
                      &unsupported) &&
            r && rackdb_result_row_count(r) == 1)
            snprintf(threads, sizeof(threads), "%s", rackdb_result_text(r, 0, 0));
        rackdb_result_free(r);
        if (!threads[0]) snprintf(threads, sizeof(threads), "0");
    }
    if (tty) fprintf(stderr, "loading SF %s ...", o.sf);
    double t0 = wall_ms();
    if (!load_data(s, cl, &o, err, sizeof(err))) {
        fprintf(stderr, "%srackdb tpch run: loading the data failed: %s\n", tty ? "\n" : "", err);
        status = 1;
        goto out;
    }
    double load_ms = wall_ms() - t0;
    if (tty) fprintf(stderr, "\r\033[K");

    if (cl)
        printf("%-5s %12s %12s %10s %14s  %s\n", "query", "best ms", "compile ms", "rows",
               "shuffle bytes", "ok");
    else
        printf("%-5s %12s %12s %10s  %s\n", "query", "best ms", "compile ms", "rows", "ok");
    for (int q = 1; q <= CLI_TPCH_QUERIES; q++) {
        if (!o.queries[q]) continue;
        qrun *r = &runs[nruns++];
        memset(r, 0, sizeof(*r));
        r->q = q;
        r->out = OUT_UNCHECKED;
        r->times = calloc((size_t)o.reps, sizeof(*r->times));
        char *owned = NULL;
        const char *sql = cli_tpch_queries[q - 1];
        if (o.queries_dir) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/q%02d.sql", o.queries_dir, q);
            sql = owned = read_text(path);
            if (!sql) {
                snprintf(r->message, sizeof(r->message), "cannot read %.400s", path);
                r->out = OUT_ERROR;
            }
        }
        rackdb_result *rows = NULL;
        for (int k = 0; sql && k < o.reps && r->out != OUT_ERROR && r->out != OUT_UNSUPPORTED;
             k++) {
            if (tty) fprintf(stderr, "\rq%02d run %d/%d", q, k + 1, o.reps);
            rackdb_result *res = NULL;
            double ms, cms;
            bool unsupported;
            if (!run_query(s, cl, sql, &res, &ms, &cms, r->message, sizeof(r->message),
                           &unsupported)) {
                r->out = unsupported ? OUT_UNSUPPORTED : OUT_ERROR;
                break;
            }
            if (r->times) r->times[k] = ms;
            if (k == 0 || ms < r->best_ms) {
                r->best_ms = ms;
                r->compile_ms = cms;
            }
            rackdb_result_free(rows);
            rows = res;
        }
        if (tty) fprintf(stderr, "\r\033[K");
        if (cl && rows) r->shuffle_bytes = cli_tpch_cluster_shuffle_bytes(cl);
        if (rows) {
            r->rows = rackdb_result_row_count(rows);
            if (answers_sf) {
                const char *answer = cli_tpch_answer(answers_sf, q);
                r->out = !answer                                                    ? OUT_UNCHECKED
                         : check_rows(rows, answer, r->message, sizeof(r->message)) ? OUT_OK
                                                                                    : OUT_MISMATCH;
            }
            if (o.results && !write_results(o.results, q, rows)) {
                snprintf(r->message, sizeof(r->message), "cannot write %s/q%02d.csv", o.results, q);
                r->out = OUT_ERROR;
            }
        }
        rackdb_result_free(rows);
        free(owned);
        if ((r->out == OUT_OK || r->out == OUT_UNCHECKED) && cl)
            printf("q%02d   %12.3f %12s %10llu %14llu  %s\n", q, r->best_ms, "-",
                   (unsigned long long)r->rows, (unsigned long long)r->shuffle_bytes,
                   outcome_name[r->out]);
        else if (r->out == OUT_OK || r->out == OUT_UNCHECKED)
            printf("q%02d   %12.3f %12.3f %10llu  %s\n", q, r->best_ms, r->compile_ms,
                   (unsigned long long)r->rows, outcome_name[r->out]);
        else
            printf("q%02d   %12s %12s %10s  %s: %s\n", q, "-", "-", "-", outcome_name[r->out],
                   r->message);
        fflush(stdout);
        if (r->out == OUT_MISMATCH || r->out == OUT_ERROR) status = 1;
        if (r->out == OUT_UNSUPPORTED && o.check) status = 1;
    }
    if (o.json && !write_json(&o, threads, load_ms, runs, nruns)) {
        fprintf(stderr, "rackdb tpch run: cannot write %s\n", o.json);
        status = 1;
    }
out:
    for (int i = 0; i < nruns; i++)
        free(runs[i].times);
    rackdb_session_close(s);
    rackdb_close(db);
    if (cl && !cli_tpch_cluster_stop(cl)) {
        fprintf(stderr, "rackdb tpch run: not every server stopped cleanly\n");
        status = 1;
    }
    return status;
}
