/*
 * exec_stmt.c — one statement, dispatched on its kind.
 *
 * Statements that change the catalog or data follow one pattern, so a
 * failure never leaves memory and disk disagreeing:
 *   1. take the catalog's write lock and check names;
 *   2. build the new state beside the old (a new table, rows appended to a
 *      table whose previous row count is remembered);
 *   3. persist the new state to the instance's directory (engine/persist.h);
 *   4. only then publish it in the catalog — or, when 3 failed, undo 2.
 * Queries are the executor's; exec_query is where it plugs in.
 */
#include "engine/exec_stmt.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/executor.h"
#include "engine/literal.h"
#include "engine/mem.h"
#include "engine/persist.h"
#include "sql/bind.h"
#include "storage/loader.h"
#include "storage/writer.h"

/* The instance's catalog and directory for this statement. */
static eng_catalog *catalog_of(eng_stmt_ctx *ctx)
{
    return ctx->session->db->catalog;
}
static const char *dir_of(eng_stmt_ctx *ctx)
{
    return ctx->session->db->dir;
}

/* Puts a position on an error that has none. */
static sto_status at(sto_status st, int pos)
{
    if (st && !st->position && st != sto_error_oom()) st->position = pos;
    return st;
}

/* --- queries ---------------------------------------------------------------------- */

/* Binds a query against the catalog (names, types: the errors a user can
 * act on come from here). Caller holds the catalog lock. */
static sto_status bind(eng_stmt_ctx *ctx, const sql_query *query, sql_arena *arena, sql_plan **plan)
{
    sql_catalog iface = eng_catalog_iface(catalog_of(ctx));
    return sql_bind_query(arena, &iface, query, plan);
}

/* Every statement that runs a query ends here. SELECT, EXPLAIN, CREATE
 * TABLE AS and INSERT ... SELECT go to the executor (engine/exec_query.c:
 * optimizer → physical pipelines → result chunks); any other statement with
 * a query is bound (so its errors are the binder's) and then fails with
 * 0A000 naming the statement. */
static sto_status exec_query(eng_stmt_ctx *ctx, const sql_stmt *stmt, const char *what,
                             const sql_query *query, eng_result **out)
{
    if (query && (stmt->kind == SQL_STMT_SELECT || stmt->kind == SQL_STMT_EXPLAIN ||
                  stmt->kind == SQL_STMT_CREATE_TABLE || stmt->kind == SQL_STMT_CREATE_TABLE_AS ||
                  stmt->kind == SQL_STMT_INSERT))
        return eng_exec_query(ctx, stmt, out); /* engine/exec_query.c */
    if (query) {
        sql_arena *arena = sql_arena_create();
        if (!arena) return sto_error_oom();
        sql_plan *plan = NULL;
        eng_catalog_read_lock(catalog_of(ctx));
        sto_status st = bind(ctx, query, arena, &plan);
        eng_catalog_unlock(catalog_of(ctx));
        sql_arena_destroy(arena);
        if (st) return st;
    }
    return sto_error_at(STO_FEATURE_NOT_SUPPORTED, stmt->pos,
                        "%s is not executable yet: the query executor (optimizer, compiled "
                        "pipelines) is not built",
                        what);
}

/* --- CREATE / DROP TABLE -------------------------------------------------------------- */

sto_status eng_schema_from_defs(const sql_column_def_list *cols, const sql_ident_list *pk,
                                sto_schema **out)
{
    int n = cols->count;
    const char **names = calloc(n ? (size_t)n : 1, sizeof(*names));
    sto_type *types = calloc(n ? (size_t)n : 1, sizeof(*types));
    bool *not_null = calloc(n ? (size_t)n : 1, sizeof(*not_null));
    sto_status st = STO_OK;
    if (!names || !types || !not_null) {
        st = sto_error_oom();
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const sql_column_def *c = cols->items[i];
        names[i] = c->name;
        types[i] = c->type;
        not_null[i] = c->not_null || c->primary_key;
        for (int j = 0; j < i; j++) {
            if (strcmp(names[j], c->name) == 0) {
                st = sto_error_at(STO_DUPLICATE_COLUMN, c->pos,
                                  "column \"%s\" specified more than once", c->name);
                goto out;
            }
        }
    }
    for (int k = 0; pk && k < pk->count; k++) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(names[i], pk->items[k]->name) == 0) found = i;
        if (found < 0) {
            st = sto_error_at(STO_UNDEFINED_COLUMN, pk->items[k]->pos,
                              "column \"%s\" named in key does not exist", pk->items[k]->name);
            goto out;
        }
        not_null[found] = true;
    }
    st = sto_schema_new((uint32_t)n, names, types, not_null, out);
    if (st && n) st = at(st, cols->items[0]->pos);
out:
    free(names);
    free(types);
    free(not_null);
    return st;
}

static bool name_taken(eng_catalog *c, const char *name)
{
    return eng_catalog_table(c, name) || eng_catalog_view(c, name);
}

static sto_status exec_create_table(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    if (stmt->create_table.query)
        return exec_query(ctx, stmt, "CREATE TABLE AS", stmt->create_table.query, out);
    const char *name = stmt->create_table.name;
    int pos = stmt->create_table.name_pos;
    sto_schema *schema = NULL;
    sto_table *t = NULL;
    STO_TRY(eng_schema_from_defs(&stmt->create_table.columns, &stmt->create_table.primary_key,
                                 &schema));
    sto_status st = sto_table_new(schema, &t);
    sto_schema_free(schema);
    if (st) return st;

    eng_catalog *c = catalog_of(ctx);
    eng_catalog_write_lock(c);
    if (name_taken(c, name)) {
        if (!stmt->create_table.if_not_exists)
            st = sto_error_at(STO_DUPLICATE_TABLE, pos, "relation \"%s\" already exists", name);
        goto out;
    }
    st = eng_persist_tables(dir_of(ctx), c, NULL, 1, &name, &t);
    if (!st) st = eng_catalog_create_table(c, name, t, false, pos, NULL);
    if (!st) t = NULL; /* the catalog's now */
out:
    eng_catalog_unlock(c);
    sto_table_free(t);
    if (st) return st;
    return eng_result_new_tag(out, "CREATE TABLE");
}

/* The views reading what DROP removes: without CASCADE a refusal (2BP01)
 * before anything is written, on disk or in memory; with CASCADE they are
 * dropped first and the remaining views saved. */
static sto_status drop_dependents(eng_stmt_ctx *ctx, eng_catalog *c, const sql_stmt *stmt)
{
    if (!stmt->drop.cascade)
        return eng_catalog_check_dependents(c, stmt->drop.name, stmt->drop.name_pos);
    uint32_t dropped = 0;
    STO_TRY(eng_catalog_drop_dependents(c, stmt->drop.name, &dropped));
    return dropped ? eng_persist_views(dir_of(ctx), c, NULL) : STO_OK;
}

static sto_status exec_drop_table(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    const char *name = stmt->drop.name;
    eng_catalog *c = catalog_of(ctx);
    sto_status st = STO_OK;
    eng_catalog_write_lock(c);
    if (eng_catalog_table(c, name)) {
        st = drop_dependents(ctx, c, stmt);
        if (!st) st = eng_persist_tables(dir_of(ctx), c, name, 0, NULL, NULL);
        if (!st) st = eng_catalog_drop_table(c, name, false, stmt->drop.name_pos, NULL);
    } else {
        /* Missing, or a view: the catalog words the error (or IF EXISTS). */
        st = eng_catalog_drop_table(c, name, stmt->drop.if_exists, stmt->drop.name_pos, NULL);
    }
    eng_catalog_unlock(c);
    if (st) return st;
    return eng_result_new_tag(out, "DROP TABLE");
}

/* --- CREATE / DROP VIEW ----------------------------------------------------------------- */

static sto_status exec_create_view(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    const char *name = stmt->create_view.name;
    const sql_ident_list *cols = &stmt->create_view.columns;
    const char **names = calloc(cols->count ? (size_t)cols->count : 1, sizeof(*names));
    if (!names) return sto_error_oom();
    for (int i = 0; i < cols->count; i++)
        names[i] = cols->items[i]->name;
    /* The query is bound now, so a view naming a missing table or column
     * fails at CREATE; the text is what is stored and bound at every use. */
    const char *text = stmt->create_view.query_text;
    eng_catalog *c = catalog_of(ctx);
    sql_arena *arena = sql_arena_create();
    sql_plan *plan = NULL;
    eng_catalog_write_lock(c);
    sto_status st = arena ? bind(ctx, stmt->create_view.query, arena, &plan) : sto_error_oom();
    if (!st && (uint32_t)cols->count > plan->ncols)
        st = sto_error_at(STO_SYNTAX_ERROR, cols->items[plan->ncols]->pos,
                          "CREATE VIEW specifies more column names than columns");
    if (!st)
        st = eng_catalog_create_view(c, name, text ? text : "", (uint32_t)cols->count, names,
                                     stmt->create_view.name_pos);
    if (!st) {
        st = eng_persist_views(dir_of(ctx), c, NULL);
        if (st) eng_catalog_drop_view(c, name, true, 0, NULL);
    }
    eng_catalog_unlock(c);
    sql_arena_destroy(arena);
    free(names);
    if (st) return st;
    return eng_result_new_tag(out, "CREATE VIEW");
}

static sto_status exec_drop_view(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    const char *name = stmt->drop.name;
    eng_catalog *c = catalog_of(ctx);
    sto_status st = STO_OK;
    eng_catalog_write_lock(c);
    if (eng_catalog_view(c, name)) {
        st = drop_dependents(ctx, c, stmt);
        if (!st) st = eng_persist_views(dir_of(ctx), c, name);
    }
    if (!st) st = eng_catalog_drop_view(c, name, stmt->drop.if_exists, stmt->drop.name_pos, NULL);
    eng_catalog_unlock(c);
    if (st) return st;
    return eng_result_new_tag(out, "DROP VIEW");
}

/* --- COPY ------------------------------------------------------------------------------ */

/* An option value that means yes/no (HEADER, HEADER true, HEADER 0). */
static sto_status option_bool(const sql_option *o, bool *out)
{
    if (!o->value) {
        *out = true;
        return STO_OK;
    }
    eng_const c;
    STO_TRY(eng_const_eval(o->value, &c));
    sto_value v;
    sto_status st = eng_const_assign(&c, sto_type_make(STO_TYPE_BOOLEAN), NULL, &v);
    if (st && c.kind == ENG_CONST_INT && (c.i == 0 || c.i == 1)) {
        sto_status_free(st);
        *out = c.i == 1;
        return STO_OK;
    }
    if (st) {
        sto_status_free(st);
        return sto_error_at(STO_INVALID_PARAMETER_VALUE, o->pos, "%s requires a Boolean value",
                            o->name);
    }
    *out = v.v.i64 != 0;
    return STO_OK;
}

/* An option value as text into buf (DELIMITER '|', FORMAT csv). */
static sto_status option_text(const sql_option *o, char *buf, size_t size)
{
    if (!o->value)
        return sto_error_at(STO_SYNTAX_ERROR, o->pos, "option \"%s\" needs a value", o->name);
    eng_const c;
    STO_TRY(eng_const_eval(o->value, &c));
    eng_const_text(&c, buf, size);
    return STO_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* The text format of a COPY: FORMAT csv|text|tbl, DELIMITER, HEADER. Without
 * FORMAT a file named *.tbl is read as dbgen's format, others as text. */
static sto_status copy_format(const sql_stmt *stmt, sto_text_format *fmt)
{
    enum {
        TEXT,
        CSV,
        TBL
    } kind = stmt->copy.file && ends_with(stmt->copy.file, ".tbl") ? TBL : TEXT;
    int delimiter = -1;
    bool header = false;
    const sql_option_list *opts = &stmt->copy.options;
    for (int i = 0; i < opts->count; i++) {
        const sql_option *o = opts->items[i];
        char buf[32];
        if (strcasecmp(o->name, "format") == 0) {
            STO_TRY(option_text(o, buf, sizeof(buf)));
            if (strcasecmp(buf, "csv") == 0) {
                kind = CSV;
            } else if (strcasecmp(buf, "text") == 0) {
                kind = TEXT;
            } else if (strcasecmp(buf, "tbl") == 0) {
                kind = TBL;
            } else {
                return sto_error_at(STO_INVALID_PARAMETER_VALUE, o->pos,
                                    "COPY format \"%s\" not recognized (csv, text or tbl)", buf);
            }
        } else if (strcasecmp(o->name, "delimiter") == 0) {
            STO_TRY(option_text(o, buf, sizeof(buf)));
            if (strlen(buf) != 1 || buf[0] == '\n' || buf[0] == '\r' || buf[0] == '"')
                return sto_error_at(STO_INVALID_PARAMETER_VALUE, o->pos,
                                    "COPY delimiter must be a single one-byte character");
            delimiter = (unsigned char)buf[0];
        } else if (strcasecmp(o->name, "header") == 0) {
            STO_TRY(option_bool(o, &header));
        } else {
            return sto_error_at(STO_SYNTAX_ERROR, o->pos, "COPY option \"%s\" not recognized",
                                o->name);
        }
    }
    if (kind == CSV) {
        *fmt = sto_text_format_csv(header);
    } else if (kind == TBL) {
        *fmt = sto_text_format_tbl();
        fmt->header = header;
    } else {
        sto_text_format text = {'\t', header, false, false};
        *fmt = text;
    }
    if (delimiter >= 0) fmt->delimiter = (char)delimiter;
    return STO_OK;
}

/* COPY FROM STDIN / TO STDOUT need the session's data channel
 * (rackdb_session_set_copy_io). */
static sto_status copy_check_io(eng_stmt_ctx *ctx, const sql_stmt *stmt)
{
    const rackdb_copy_io *io = &ctx->session->copy_io;
    bool ok = stmt->kind == SQL_STMT_COPY_FROM ? io->read != NULL : io->write != NULL;
    if (stmt->copy.file || ok) return STO_OK;
    return sto_error_at(STO_FEATURE_NOT_SUPPORTED, stmt->pos,
                        "COPY %s is not supported by this client: name a file",
                        stmt->kind == SQL_STMT_COPY_FROM ? "FROM STDIN" : "TO STDOUT");
}

static sto_status copy_check(const sql_stmt *stmt, const sto_table *t)
{
    const sql_ident_list *cols = &stmt->copy.columns;
    if (!cols->count) return STO_OK;
    /* A column list is fine when it is exactly the table's columns in order. */
    const sto_schema *s = sto_table_schema(t);
    bool same = (uint32_t)cols->count == s->ncols;
    for (int i = 0; same && i < cols->count; i++)
        same = strcmp(cols->items[i]->name, s->cols[i].name) == 0;
    if (!same)
        return sto_error_at(STO_FEATURE_NOT_SUPPORTED, cols->items[0]->pos,
                            "COPY with a column list other than all columns in order is not "
                            "supported");
    return STO_OK;
}

static sto_status missing_table(const char *name, int pos)
{
    return sto_error_at(STO_UNDEFINED_TABLE, pos, "relation \"%s\" does not exist", name);
}

/* The data of a COPY FROM STDIN ends at a line holding only \. (or at
 * the end of the input): the length before that line. */
static size_t stdin_data_end(const char *data, size_t len)
{
    size_t pos = 0;
    while (pos < len) {
        if (data[pos] == '\\' && pos + 1 < len && data[pos + 1] == '.') {
            size_t e = pos + 2;
            if (e < len && data[e] == '\r') e++;
            if (e == len || data[e] == '\n') return pos;
        }
        const char *nl = memchr(data + pos, '\n', len - pos);
        if (!nl) break;
        pos = (size_t)(nl - data) + 1;
    }
    return len;
}

/* Reads all of a COPY FROM STDIN's data through the session's channel into
 * one malloc'd buffer: the loader parses a whole buffer in parallel, so the
 * input is held once, bounded by memory_limit. */
static sto_status stdin_read_all(eng_stmt_ctx *ctx, char **out, size_t *out_len)
{
    rackdb_session *s = ctx->session;
    const rackdb_copy_io *io = &s->copy_io;
    uint64_t limit = s->settings.memory_limit;
    size_t cap = (size_t)1 << 16, len = 0;
    if (limit && cap > limit) cap = (size_t)limit;
    char *buf = malloc(cap);
    if (!buf) return sto_error_oom();
    sto_status st = STO_OK;
    for (;;) {
        if (eng_session_canceled(s)) {
            st = eng_canceled_error();
            break;
        }
        if (len == cap) {
            if (limit && cap >= limit) {
                char lim[32];
                eng_mem_format(limit, lim, sizeof(lim));
                st = sto_error(STO_OUT_OF_MEMORY,
                               "COPY FROM STDIN data is larger than memory_limit %s", lim);
                break;
            }
            size_t ncap = cap * 2;
            if (limit && ncap > limit) ncap = (size_t)limit;
            char *p = realloc(buf, ncap);
            if (!p) {
                st = sto_error_oom();
                break;
            }
            buf = p;
            cap = ncap;
        }
        const char *message = NULL;
        long n = io->read(io->arg, buf + len, cap - len, &message);
        if (n < 0) {
            st = sto_error(STO_QUERY_CANCELED, "COPY from stdin failed: %s",
                           message ? message : "canceled by the client");
            break;
        }
        if (n == 0) break;
        len += (size_t)n;
    }
    if (st) {
        free(buf);
        return st;
    }
    *out = buf;
    *out_len = stdin_data_end(buf, len);
    return STO_OK;
}

/* Checks a COPY FROM STDIN's table and options under the read lock, then
 * gathers its data without holding any lock (a slow client must not stall
 * the instance); exec_copy_from loads it. */
static sto_status stdin_prepare(eng_stmt_ctx *ctx, const sql_stmt *stmt, char **data, size_t *len)
{
    const char *name = stmt->copy.table;
    eng_catalog *c = catalog_of(ctx);
    sto_text_format fmt;
    uint32_t ncols = 0;
    eng_catalog_read_lock(c);
    sto_table *t = eng_catalog_table(c, name);
    sto_status st = STO_OK;
    if (!t) {
        st = eng_catalog_view(c, name) ? sto_error_at(STO_WRONG_OBJECT_TYPE, stmt->copy.table_pos,
                                                      "cannot copy to view \"%s\"", name)
                                       : missing_table(name, stmt->copy.table_pos);
    } else {
        st = copy_check(stmt, t);
        ncols = sto_table_schema(t)->ncols;
    }
    if (!st) st = copy_format(stmt, &fmt);
    eng_catalog_unlock(c);
    if (st) return st;
    const rackdb_copy_io *io = &ctx->session->copy_io;
    if (io->begin && io->begin(io->arg, RACKDB_COPY_IN, ncols, fmt.csv))
        return sto_error(STO_CONNECTION_FAILURE, "COPY FROM STDIN could not start");
    return stdin_read_all(ctx, data, len);
}

static sto_status exec_copy_from(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    const char *name = stmt->copy.table;
    eng_catalog *c = catalog_of(ctx);
    sto_status st = copy_check_io(ctx, stmt);
    if (st) return st;
    char *data = NULL;
    size_t data_len = 0;
    if (!stmt->copy.file) STO_TRY(stdin_prepare(ctx, stmt, &data, &data_len));
    uint64_t loaded = 0;
    eng_catalog_write_lock(c);
    sto_table *t = eng_catalog_table(c, name);
    if (!t) {
        st = eng_catalog_view(c, name) ? sto_error_at(STO_WRONG_OBJECT_TYPE, stmt->copy.table_pos,
                                                      "cannot copy to view \"%s\"", name)
                                       : missing_table(name, stmt->copy.table_pos);
        goto out;
    }
    st = copy_check(stmt, t);
    sto_load_options opt = {0};
    if (!st) st = copy_format(stmt, &opt.format);
    if (st) goto out;
    opt.threads = ctx->session->settings.threads;
    opt.cancel = &ctx->session->cancel_bool; /* Ctrl-C stops the load itself */
    uint64_t before = sto_table_rows(t);
    if (stmt->copy.file) {
        st = sto_load_file(t, stmt->copy.file, &opt, &loaded);
    } else {
        st = sto_load_buffer(t, "STDIN", data, data_len, &opt, &loaded);
    }
    if (st) goto out;
    if (eng_session_canceled(ctx->session)) {
        st = eng_canceled_error();
    } else {
        st = eng_persist_tables(dir_of(ctx), c, NULL, 1, &name, &t);
    }
    if (st) sto_table_truncate(t, before);
out:
    eng_catalog_unlock(c);
    free(data);
    if (st) return st;
    return eng_result_new_tag(out, "COPY %" PRIu64, loaded);
}

/* COPY TO STDOUT: a stdio stream whose bytes go to the session's write
 * callback, so the writer streams rows without knowing where they go. */
typedef struct stdout_sink {
    const rackdb_copy_io *io;
    bool failed;
} stdout_sink;

static ssize_t stdout_sink_write(void *cookie, const char *buf, size_t size)
{
    stdout_sink *k = cookie;
    if (k->failed || k->io->write(k->io->arg, buf, size)) {
        k->failed = true;
        return 0; /* fopencookie: 0 reports a write error */
    }
    return (ssize_t)size;
}

static sto_status write_stdout(eng_stmt_ctx *ctx, const sto_table *t, const sto_text_format *fmt,
                               uint64_t *written)
{
    const rackdb_copy_io *io = &ctx->session->copy_io;
    if (io->begin && io->begin(io->arg, RACKDB_COPY_OUT, sto_table_schema(t)->ncols, fmt->csv))
        return sto_error(STO_CONNECTION_FAILURE, "COPY TO STDOUT could not start");
    stdout_sink sink = {io, false};
    cookie_io_functions_t fns = {.write = stdout_sink_write};
    FILE *f = fopencookie(&sink, "w", fns);
    if (!f) return sto_error_oom();
    setvbuf(f, NULL, _IOFBF, (size_t)1 << 16);
    sto_status st = sto_write_stream(t, f, fmt, written);
    bool flushed = fflush(f) == 0;
    fclose(f);
    if (sink.failed) {
        sto_status_free(st);
        return sto_error(STO_CONNECTION_FAILURE, "COPY TO STDOUT: the client stopped reading");
    }
    if (!st && !flushed) st = sto_error(STO_IO_ERROR, "COPY TO STDOUT: write failed");
    return st;
}

static sto_status exec_copy_to(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    if (!stmt->copy.table) {
        /* the query's rows as a table (engine/exec_query.c), then written out */
        sto_table *rows = NULL;
        sto_text_format fmt;
        uint64_t written = 0;
        sto_status st = copy_check_io(ctx, stmt);
        if (!st) st = copy_format(stmt, &fmt);
        if (!st) st = eng_query_to_table(ctx, stmt->copy.query, &rows);
        if (!st && stmt->copy.file) st = sto_write_file(rows, stmt->copy.file, &fmt, &written);
        if (!st && !stmt->copy.file) st = write_stdout(ctx, rows, &fmt, &written);
        sto_table_free(rows);
        if (st) return st;
        return eng_result_new_tag(out, "COPY %" PRIu64, written);
    }
    const char *name = stmt->copy.table;
    eng_catalog *c = catalog_of(ctx);
    sto_status st = STO_OK;
    uint64_t written = 0;
    eng_catalog_read_lock(c);
    sto_table *t = eng_catalog_table(c, name);
    if (!t) {
        st = eng_catalog_view(c, name)
                 ? sto_error_at(STO_FEATURE_NOT_SUPPORTED, stmt->copy.table_pos,
                                "COPY from a view is not supported: use COPY (SELECT ...) TO")
                 : missing_table(name, stmt->copy.table_pos);
        goto out;
    }
    st = copy_check(stmt, t);
    sto_text_format fmt;
    if (!st) st = copy_format(stmt, &fmt);
    if (!st) st = copy_check_io(ctx, stmt);
    if (!st && stmt->copy.file) st = sto_write_file(t, stmt->copy.file, &fmt, &written);
    if (!st && !stmt->copy.file) st = write_stdout(ctx, t, &fmt, &written);
out:
    eng_catalog_unlock(c);
    if (st) return st;
    return eng_result_new_tag(out, "COPY %" PRIu64, written);
}

/* --- INSERT ... VALUES ------------------------------------------------------------------ */

/* For each table column, the index of the VALUES expression that fills it,
 * or -1 (NULL). */
static sto_status insert_targets(const sql_stmt *stmt, const sto_schema *s, int width, int *map)
{
    const sql_ident_list *cols = &stmt->insert.columns;
    for (uint32_t i = 0; i < s->ncols; i++)
        map[i] = -1;
    if (!cols->count) {
        if ((uint32_t)width > s->ncols)
            return sto_error_at(STO_SYNTAX_ERROR, stmt->pos,
                                "INSERT has more expressions than target columns");
        for (int i = 0; i < width; i++)
            map[i] = i;
        return STO_OK;
    }
    for (int k = 0; k < cols->count; k++) {
        int i = sto_schema_find(s, cols->items[k]->name);
        if (i < 0)
            return sto_error_at(STO_UNDEFINED_COLUMN, cols->items[k]->pos,
                                "column \"%s\" of relation \"%s\" does not exist",
                                cols->items[k]->name, stmt->insert.table);
        if (map[i] >= 0)
            return sto_error_at(STO_DUPLICATE_COLUMN, cols->items[k]->pos,
                                "column \"%s\" specified more than once", cols->items[k]->name);
        map[i] = k;
    }
    if (width != cols->count)
        return sto_error_at(STO_SYNTAX_ERROR, stmt->pos,
                            width > cols->count
                                ? "INSERT has more expressions than target columns"
                                : "INSERT has more target columns than expressions");
    return STO_OK;
}

/* Appends the VALUES rows through an appender (all rows or none). */
static sto_status insert_rows(eng_stmt_ctx *ctx, const sql_stmt *stmt, sto_table *t,
                              uint64_t *count)
{
    const sql_row_list *rows = &stmt->insert.query->values;
    const sto_schema *s = sto_table_schema(t);
    int width = rows->count ? rows->items[0]->count : 0;
    int *map = calloc(s->ncols ? s->ncols : 1, sizeof(*map));
    eng_const *consts = calloc(width ? (size_t)width : 1, sizeof(*consts));
    sto_value *values = calloc(s->ncols ? s->ncols : 1, sizeof(*values));
    sto_appender *app = NULL;
    sto_status st = STO_OK;
    if (!map || !consts || !values) {
        st = sto_error_oom();
        goto out;
    }
    st = insert_targets(stmt, s, width, map);
    if (!st) st = sto_appender_new(t, &app);
    for (int r = 0; !st && r < rows->count; r++) {
        const sql_expr_list *row = rows->items[r];
        if (row->count != width) {
            st = sto_error_at(STO_SYNTAX_ERROR, row->count ? row->items[0]->pos : stmt->pos,
                              "VALUES lists must all be the same length");
            break;
        }
        for (int k = 0; !st && k < width; k++)
            st = eng_const_eval(row->items[k], &consts[k]);
        for (uint32_t i = 0; !st && i < s->ncols; i++) {
            if (map[i] < 0) {
                memset(&values[i], 0, sizeof(values[i]));
                values[i].is_null = true;
            } else {
                st =
                    eng_const_assign(&consts[map[i]], s->cols[i].type, s->cols[i].name, &values[i]);
            }
        }
        if (!st) st = at(sto_appender_row(app, values), row->count ? row->items[0]->pos : 0);
        if (!st && eng_session_canceled(ctx->session)) st = eng_canceled_error();
    }
    if (!st) st = sto_appender_commit(app);
    if (!st) *count = (uint64_t)rows->count;
out:
    sto_appender_free(app);
    free(map);
    free(consts);
    free(values);
    return st;
}

/* True when every VALUES item is a constant (a literal, a sign, a cast of
 * one): such rows are inserted directly, without compiling anything. */
static bool values_are_constants(const sql_query *q)
{
    for (int r = 0; r < q->values.count; r++) {
        const sql_expr_list *row = q->values.items[r];
        for (int i = 0; i < row->count; i++) {
            eng_const c;
            sto_status st = eng_const_eval(row->items[i], &c);
            bool computed = st && strcmp(st->sqlstate, STO_FEATURE_NOT_SUPPORTED) == 0;
            sto_status_free(st);
            if (computed) return false;
        }
    }
    return true;
}

static sto_status exec_insert(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    const sql_query *q = stmt->insert.query;
    /* Anything but plain constant rows runs as a query (VALUES (1 + 1) too). */
    if (!q || q->kind != SQL_QUERY_VALUES || q->order_by.count || q->limit || q->offset ||
        q->with.count || !values_are_constants(q))
        return exec_query(ctx, stmt, "INSERT ... SELECT", q, out);
    const char *name = stmt->insert.table;
    eng_catalog *c = catalog_of(ctx);
    sto_status st = STO_OK;
    uint64_t count = 0;
    eng_catalog_write_lock(c);
    sto_table *t = eng_catalog_table(c, name);
    if (!t) {
        st = eng_catalog_view(c, name) ? sto_error_at(STO_WRONG_OBJECT_TYPE, stmt->insert.table_pos,
                                                      "cannot insert into view \"%s\"", name)
                                       : missing_table(name, stmt->insert.table_pos);
        goto out;
    }
    uint64_t before = sto_table_rows(t);
    st = insert_rows(ctx, stmt, t, &count);
    if (!st) {
        st = eng_persist_tables(dir_of(ctx), c, NULL, 1, &name, &t);
        if (st) sto_table_truncate(t, before);
    }
out:
    eng_catalog_unlock(c);
    if (st) return st;
    return eng_result_new_tag(out, "INSERT 0 %" PRIu64, count);
}

/* --- SET / SHOW -------------------------------------------------------------------------- */

static sto_status exec_set(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    eng_settings *s = &ctx->session->settings;
    if (!stmt->set.value) {
        STO_TRY(eng_settings_reset(s, stmt->set.name, stmt->pos));
    } else {
        eng_const c;
        STO_TRY(eng_const_eval(stmt->set.value, &c));
        char value[128];
        eng_const_text(&c, value, sizeof(value));
        STO_TRY(eng_settings_set(s, stmt->set.name, value, stmt->set.value->pos));
    }
    return eng_result_new_tag(out, "SET");
}

/* A result of VARCHAR columns named `names`. */
static sto_status text_result(uint32_t ncols, const char *const *names, eng_result **out)
{
    sto_type types[3];
    bool not_null[3] = {false, false, false};
    for (uint32_t i = 0; i < ncols; i++)
        types[i] = sto_type_string(STO_TYPE_VARCHAR, 0);
    sto_schema *schema;
    STO_TRY(sto_schema_new(ncols, names, types, not_null, &schema));
    sto_status st = eng_result_new_rows(schema, out);
    sto_schema_free(schema);
    return st;
}

static sto_value text_value(const char *s)
{
    sto_value v;
    memset(&v, 0, sizeof(v));
    v.v.str = sto_str_make(s, (uint32_t)strlen(s));
    return v;
}

static sto_status exec_show(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    const eng_settings *s = &ctx->session->settings;
    eng_result *r = NULL;
    char value[64];
    sto_status st;
    if (stmt->show.name) {
        STO_TRY(eng_settings_get(s, stmt->show.name, value, sizeof(value), stmt->pos));
        const char *names[] = {stmt->show.name};
        STO_TRY(text_result(1, names, &r));
        sto_value v = text_value(value);
        st = eng_result_append_row(r, &v);
    } else {
        const char *names[] = {"name", "setting", "description"};
        STO_TRY(text_result(3, names, &r));
        st = STO_OK;
        for (size_t i = 0; !st && i < eng_settings_count(); i++) {
            st = eng_settings_get(s, eng_settings_name(i), value, sizeof(value), 0);
            sto_value v[3] = {text_value(eng_settings_name(i)), text_value(value),
                              text_value(eng_settings_description(i))};
            if (!st) st = eng_result_append_row(r, v);
        }
    }
    if (!st) st = eng_result_set_tag(r, "SHOW");
    if (st) {
        rackdb_result_free(r);
        return st;
    }
    *out = r;
    return STO_OK;
}

/* --- CALL ------------------------------------------------------------------------------------ */

static sto_status exec_call(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    if (strcasecmp(stmt->call.name, "dbgen") == 0) return eng_call_dbgen(ctx, stmt, out);
    return sto_error_at(STO_UNDEFINED_FUNCTION, stmt->pos, "procedure %s does not exist",
                        stmt->call.name);
}

/* --- transaction blocks ----------------------------------------------------------------------
 *
 * rackdb makes every statement durable on its own (persist.h) and has no
 * undo log, so ROLLBACK cannot take back a change. Rather than accept
 * INSERT ... ROLLBACK and silently keep the rows, a block refuses every
 * statement that would change tables, views or data, the way PostgreSQL
 * refuses CREATE DATABASE inside one: 25001 "... cannot run inside a
 * transaction block", before anything is touched. Queries, SHOW, COPY TO
 * and SET run; SET is undone by ROLLBACK (the settings of BEGIN come back),
 * as in PostgreSQL. BEGIN inside a block and COMMIT/ROLLBACK outside one
 * succeed (PostgreSQL only warns). docs/sql.md says this to users. */

static bool changes_data(sql_stmt_kind kind)
{
    switch (kind) {
    case SQL_STMT_CREATE_TABLE:
    case SQL_STMT_CREATE_TABLE_AS:
    case SQL_STMT_DROP_TABLE:
    case SQL_STMT_CREATE_VIEW:
    case SQL_STMT_DROP_VIEW:
    case SQL_STMT_INSERT:
    case SQL_STMT_COPY_FROM:
    case SQL_STMT_CALL:
        return true;
    default:
        return false;
    }
}

static sto_status exec_transaction(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    rackdb_session *s = ctx->session;
    switch (stmt->kind) {
    case SQL_STMT_BEGIN:
        if (!s->in_transaction) s->settings_at_begin = s->settings;
        s->in_transaction = true;
        return eng_result_new_tag(out, "BEGIN");
    case SQL_STMT_COMMIT:
        s->in_transaction = false;
        return eng_result_new_tag(out, "COMMIT");
    default:
        if (s->in_transaction) s->settings = s->settings_at_begin;
        s->in_transaction = false;
        return eng_result_new_tag(out, "ROLLBACK");
    }
}

/* --- dispatch ------------------------------------------------------------------------------- */

sto_status eng_exec_stmt(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    *out = NULL;
    if (ctx->session->in_transaction && changes_data(stmt->kind))
        return sto_error_at("25001", stmt->pos,
                            "%s cannot run inside a transaction block (rackdb commits every "
                            "change at once, so ROLLBACK could not undo it; run it after COMMIT)",
                            sql_stmt_kind_name(stmt->kind));
    switch (stmt->kind) {
    case SQL_STMT_SELECT:
        return exec_query(ctx, stmt, "SELECT", stmt->query, out);
    case SQL_STMT_CREATE_TABLE:
    case SQL_STMT_CREATE_TABLE_AS:
        return exec_create_table(ctx, stmt, out);
    case SQL_STMT_DROP_TABLE:
        return exec_drop_table(ctx, stmt, out);
    case SQL_STMT_CREATE_VIEW:
        return exec_create_view(ctx, stmt, out);
    case SQL_STMT_DROP_VIEW:
        return exec_drop_view(ctx, stmt, out);
    case SQL_STMT_INSERT:
        return exec_insert(ctx, stmt, out);
    case SQL_STMT_COPY_FROM:
        return exec_copy_from(ctx, stmt, out);
    case SQL_STMT_COPY_TO:
        return exec_copy_to(ctx, stmt, out);
    case SQL_STMT_CALL:
        return exec_call(ctx, stmt, out);
    case SQL_STMT_EXPLAIN:
        return exec_query(
            ctx, stmt, "EXPLAIN",
            stmt->explain.stmt->kind == SQL_STMT_SELECT ? stmt->explain.stmt->query : NULL, out);
    case SQL_STMT_SET:
        return exec_set(ctx, stmt, out);
    case SQL_STMT_SHOW:
        return exec_show(ctx, stmt, out);
    case SQL_STMT_BEGIN:
    case SQL_STMT_COMMIT:
    case SQL_STMT_ROLLBACK:
        return exec_transaction(ctx, stmt, out);
    case SQL_STMT_KIND_COUNT:
        break;
    }
    return sto_error_at(STO_INTERNAL_ERROR, stmt->pos, "unknown statement kind %d",
                        (int)stmt->kind);
}
