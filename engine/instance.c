/*
 * instance.c — the public API's entry points: instances, sessions, running
 * statement text one statement at a time, catalog listings for shells.
 */
#include "engine/instance.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/exec_stmt.h"
#include "engine/executor.h"
#include "engine/persist.h"
#include "sql/parse.h"
#include "storage/snapshot.h"

const char *rackdb_version(void)
{
    return RACKDB_VERSION;
}

static rackdb_code fail(sto_status st, rackdb_error **err)
{
    if (err)
        *err = eng_error_from_status(st, NULL, 0);
    else
        sto_status_free(st);
    return RACKDB_ERROR;
}

/* mkdir -p */
static sto_status make_dirs(const char *dir)
{
    char *path = strdup(dir);
    if (!path) return sto_error_oom();
    sto_status st = STO_OK;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            st = sto_error(STO_IO_ERROR, "could not create directory \"%s\": %s", path,
                           strerror(errno));
            break;
        }
        *p = saved;
        if (saved == '\0') break;
    }
    free(path);
    if (!st) {
        struct stat sb;
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
            st = sto_error(STO_IO_ERROR, "\"%s\" is not a directory", dir);
    }
    return st;
}

/* Takes dir/LOCK so a second process cannot write the same snapshot. */
static sto_status lock_dir(const char *dir, int *fd_out)
{
    char *path = malloc(strlen(dir) + sizeof("/LOCK"));
    if (!path) return sto_error_oom();
    sprintf(path, "%s/LOCK", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    sto_status st = STO_OK;
    if (fd < 0) {
        st = sto_error(STO_IO_ERROR, "could not open \"%s\": %s", path, strerror(errno));
    } else if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        st = sto_error(STO_IO_ERROR, "database directory \"%s\" is in use by another process", dir);
        close(fd);
    } else {
        *fd_out = fd;
    }
    free(path);
    return st;
}

/* True when dir holds no snapshot yet. (A directory with other files and no
 * MANIFEST never gets here: eng_persist_load refuses it.) */
static bool dir_is_new(const char *dir)
{
    char *path = malloc(strlen(dir) + sizeof("/MANIFEST"));
    if (!path) return false;
    sprintf(path, "%s/MANIFEST", dir);
    bool has_manifest = access(path, F_OK) == 0;
    free(path);
    return !has_manifest;
}

rackdb_code rackdb_open(const char *dir, rackdb **out, rackdb_error **err)
{
    rackdb *db = calloc(1, sizeof(*db));
    if (!db) return fail(sto_error_oom(), err);
    db->lock_fd = -1;
    atomic_init(&db->sessions, 0);
    pthread_mutex_init(&db->exec_lock, NULL);
    sto_status st = eng_catalog_new(&db->catalog);
    if (st) goto fail;
    if (dir) {
        db->dir = strdup(dir);
        if (!db->dir) {
            st = sto_error_oom();
            goto fail;
        }
        st = make_dirs(dir);
        if (!st) st = lock_dir(dir, &db->lock_fd);
        if (st) goto fail;
        st = eng_persist_load(dir, db->catalog);
        /* A fresh directory gets an empty snapshot at once, so it is
         * recognizably ours from now on. */
        if (!st && dir_is_new(dir)) st = sto_snapshot_save(dir, NULL, NULL, 0);
        if (st) goto fail;
    }
    *out = db;
    return RACKDB_OK;
fail:
    rackdb_close(db);
    return fail(st, err);
}

void rackdb_close(rackdb *db)
{
    if (!db) return;
    assert(atomic_load(&db->sessions) == 0 && "rackdb_close with sessions still open");
    eng_exec_shared_free(db->exec);
    pthread_mutex_destroy(&db->exec_lock);
    eng_catalog_free(db->catalog);
    if (db->lock_fd >= 0) close(db->lock_fd); /* releases the flock */
    free(db->dir);
    free(db);
}

rackdb_code rackdb_session_open(rackdb *db, rackdb_session **out, rackdb_error **err)
{
    rackdb_session *s = calloc(1, sizeof(*s));
    if (!s) return fail(sto_error_oom(), err);
    s->db = db;
    eng_settings_init(&s->settings);
    atomic_init(&s->cancel, 0);
    atomic_init(&s->cancel_bool, false);
    atomic_fetch_add(&db->sessions, 1);
    *out = s;
    return RACKDB_OK;
}

void rackdb_session_close(rackdb_session *s)
{
    if (!s) return;
    atomic_fetch_sub(&s->db->sessions, 1);
    free(s);
}

rackdb_code rackdb_session_set(rackdb_session *s, const char *name, const char *value,
                               rackdb_error **err)
{
    sto_status st = eng_settings_set(&s->settings, name, value, 0);
    return st ? fail(st, err) : RACKDB_OK;
}

void rackdb_session_set_copy_io(rackdb_session *s, const rackdb_copy_io *io)
{
    if (io) {
        s->copy_io = *io;
    } else {
        memset(&s->copy_io, 0, sizeof(s->copy_io));
    }
}

void rackdb_interrupt(rackdb_session *s)
{
    if (!s) return;
    atomic_store_explicit(&s->cancel, 1, memory_order_relaxed);
    atomic_store_explicit(&s->cancel_bool, true, memory_order_relaxed);
}

/* --- running statements ---------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Parses and runs the statement(s) in text (NUL-terminated). */
static sto_status run_text(rackdb_session *s, const char *text, eng_result **out, bool *empty)
{
    *out = NULL;
    *empty = false;
    sql_arena *arena = sql_arena_create();
    if (!arena) return sto_error_oom();
    sql_stmt_list *stmts = NULL;
    sto_status st = sql_parse(arena, text, &stmts);
    if (!st && stmts->count == 0) *empty = true;
    eng_stmt_ctx ctx = {s, text};
    for (int i = 0; !st && i < stmts->count; i++) {
        if (eng_session_canceled(s)) {
            st = eng_canceled_error();
            break;
        }
        rackdb_result_free(*out);
        *out = NULL;
        st = eng_exec_stmt(&ctx, stmts->items[i], out);
    }
    if (st) {
        rackdb_result_free(*out);
        *out = NULL;
    }
    sql_arena_destroy(arena);
    return st;
}

rackdb_code rackdb_next(rackdb_session *s, const char **sql, rackdb_result **result,
                        rackdb_error **err)
{
    const char *p = *sql;
    *result = NULL;
    if (err) *err = NULL;
    for (;;) {
        size_t rest = strlen(p);
        size_t blank = eng_blank_prefix(p, rest);
        p += blank; /* statement texts start at their first token */
        rest -= blank;
        if (rest == 0) {
            *sql = p + rest;
            return RACKDB_DONE;
        }
        size_t n = rackdb_statement_length(p, rest);
        if (!n) n = rest; /* the last statement may lack its ';' */
        *sql = p + n;
        char *text = malloc(n + 1);
        if (!text) return fail(sto_error_oom(), err);
        memcpy(text, p, n);
        text[n] = '\0';
        atomic_store_explicit(&s->cancel, 0, memory_order_relaxed);
        atomic_store_explicit(&s->cancel_bool, false, memory_order_relaxed);
        double start = now_ms();
        bool empty;
        eng_result *r;
        sto_status st = run_text(s, text, &r, &empty);
        if (st) {
            if (err)
                *err = eng_error_from_status(st, text, n);
            else
                sto_status_free(st);
            free(text);
            return RACKDB_ERROR;
        }
        free(text);
        if (empty) { /* a lone ';' or comments: go on with the next one */
            p += n;
            continue;
        }
        eng_result_set_elapsed(r, now_ms() - start);
        *result = r;
        return RACKDB_OK;
    }
}

rackdb_code rackdb_exec(rackdb_session *s, const char *sql, rackdb_result **result,
                        rackdb_error **err)
{
    rackdb_result *last = NULL;
    for (;;) {
        rackdb_result *r;
        rackdb_code rc = rackdb_next(s, &sql, &r, err);
        if (rc == RACKDB_DONE) break;
        if (rc == RACKDB_ERROR) {
            rackdb_result_free(last);
            if (result) *result = NULL;
            return RACKDB_ERROR;
        }
        rackdb_result_free(last);
        last = r;
    }
    if (result)
        *result = last;
    else
        rackdb_result_free(last);
    return RACKDB_OK;
}

/* --- catalog listings ---------------------------------------------------------------- */

void rackdb_free(void *p)
{
    free(p);
}

typedef struct listing {
    const char *name;
    const char *kind;
    const sto_table *table;
} listing;

static int listing_cmp(const void *a, const void *b)
{
    return strcmp(((const listing *)a)->name, ((const listing *)b)->name);
}

rackdb_code rackdb_tables(rackdb *db, rackdb_result **out, rackdb_error **err)
{
    eng_catalog *c = db->catalog;
    const char *names[] = {"name", "kind", "rows"};
    sto_type types[] = {sto_type_string(STO_TYPE_VARCHAR, 0), sto_type_string(STO_TYPE_VARCHAR, 0),
                        sto_type_make(STO_TYPE_BIGINT)};
    bool not_null[] = {true, true, false};
    sto_schema *schema = NULL;
    eng_result *r = NULL;
    listing *items = NULL;
    eng_catalog_read_lock(c);
    size_t nt = eng_catalog_table_count(c), nv = eng_catalog_view_count(c);
    sto_status st = sto_schema_new(3, names, types, not_null, &schema);
    if (!st) st = eng_result_new_rows(schema, &r);
    if (!st && !(items = calloc(nt + nv + 1, sizeof(*items)))) st = sto_error_oom();
    if (!st) {
        for (size_t i = 0; i < nt; i++)
            items[i] = (listing){eng_catalog_table_name(c, i), "table", eng_catalog_table_at(c, i)};
        for (size_t i = 0; i < nv; i++)
            items[nt + i] = (listing){eng_catalog_view_at(c, i)->name, "view", NULL};
        qsort(items, nt + nv, sizeof(*items), listing_cmp);
    }
    for (size_t i = 0; !st && i < nt + nv; i++) {
        sto_value v[3];
        memset(v, 0, sizeof(v));
        v[0].v.str = sto_str_make(items[i].name, (uint32_t)strlen(items[i].name));
        v[1].v.str = sto_str_make(items[i].kind, (uint32_t)strlen(items[i].kind));
        if (items[i].table)
            v[2].v.i64 = (int64_t)sto_table_rows(items[i].table);
        else
            v[2].is_null = true;
        st = eng_result_append_row(r, v);
    }
    if (!st) st = eng_result_set_tag(r, "SELECT %zu", nt + nv);
    eng_catalog_unlock(c);
    free(items);
    sto_schema_free(schema);
    if (st) {
        rackdb_result_free(r);
        return fail(st, err);
    }
    *out = r;
    return RACKDB_OK;
}

/* Appends text to a malloc'd string; false when out of memory. */
static bool append(char **s, size_t *len, const char *text)
{
    size_t n = strlen(text);
    char *grown = realloc(*s, *len + n + 1);
    if (!grown) return false;
    memcpy(grown + *len, text, n + 1);
    *s = grown;
    *len += n;
    return true;
}

/* CREATE VIEW text of a view. */
static bool append_view(char **s, size_t *len, const eng_view *v)
{
    bool ok = append(s, len, "CREATE VIEW ") && append(s, len, v->name);
    if (ok && v->ncols) {
        ok = append(s, len, " (");
        for (uint32_t i = 0; ok && i < v->ncols; i++)
            ok = append(s, len, i ? ", " : "") && append(s, len, v->column_names[i]);
        ok = ok && append(s, len, ")");
    }
    return ok && append(s, len, " AS ") && append(s, len, v->sql) && append(s, len, ";");
}

rackdb_code rackdb_schema(rackdb *db, const char *name, char **out, rackdb_error **err)
{
    eng_catalog *c = db->catalog;
    char *s = calloc(1, 1);
    size_t len = 0;
    bool ok = s != NULL;
    sto_status st = STO_OK;
    eng_catalog_read_lock(c);
    size_t nt = eng_catalog_table_count(c), nv = eng_catalog_view_count(c);
    bool found = false;
    for (size_t i = 0; ok && i < nt; i++) {
        const char *tn = eng_catalog_table_name(c, i);
        if (name && strcmp(name, tn) != 0) continue;
        char *ddl = eng_catalog_table_ddl(c, tn);
        ok = ddl && append(&s, &len, len ? "\n" : "") && append(&s, &len, ddl) &&
             append(&s, &len, "\n");
        free(ddl);
        found = true;
    }
    for (size_t i = 0; ok && i < nv; i++) {
        const eng_view *v = eng_catalog_view_at(c, i);
        if (name && strcmp(name, v->name) != 0) continue;
        ok =
            append(&s, &len, len ? "\n" : "") && append_view(&s, &len, v) && append(&s, &len, "\n");
        found = true;
    }
    eng_catalog_unlock(c);
    if (!ok)
        st = sto_error_oom();
    else if (name && !found)
        st = sto_error(STO_UNDEFINED_TABLE, "relation \"%s\" does not exist", name);
    if (st) {
        free(s);
        return fail(st, err);
    }
    *out = s;
    return RACKDB_OK;
}
