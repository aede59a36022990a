/*
 * catalog.c — tables and views by name, behind a readers-writer lock.
 *
 * An instance holds tens of tables, not thousands, so entries live in two
 * small arrays searched linearly; creation order is kept because snapshots
 * and .tables list tables in it.
 */
#include "engine/catalog.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/bind.h"
#include "sql/parse.h"

typedef struct table_entry {
    char *name;
    sto_table *table;
    bool replicated; /* a cluster's servers each hold every row */
} table_entry;

struct eng_catalog {
    pthread_rwlock_t lock;
    table_entry *tables;
    size_t ntables, tables_cap;
    eng_view *views;
    size_t nviews, views_cap;
};

sto_status eng_catalog_new(eng_catalog **out)
{
    eng_catalog *c = calloc(1, sizeof(*c));
    if (!c) return sto_error_oom();
    if (pthread_rwlock_init(&c->lock, NULL) != 0) {
        free(c);
        return sto_error(STO_INTERNAL_ERROR, "cannot create the catalog lock");
    }
    *out = c;
    return STO_OK;
}

static void view_clear(eng_view *v)
{
    free(v->name);
    free(v->sql);
    for (uint32_t i = 0; i < v->ncols; i++)
        free(v->column_names[i]);
    free(v->column_names);
    for (uint32_t i = 0; i < v->ndeps; i++)
        free(v->deps[i]);
    free(v->deps);
}

void eng_catalog_free(eng_catalog *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->ntables; i++) {
        free(c->tables[i].name);
        sto_table_free(c->tables[i].table);
    }
    free(c->tables);
    for (size_t i = 0; i < c->nviews; i++)
        view_clear(&c->views[i]);
    free(c->views);
    pthread_rwlock_destroy(&c->lock);
    free(c);
}

void eng_catalog_read_lock(eng_catalog *c)
{
    pthread_rwlock_rdlock(&c->lock);
}

void eng_catalog_write_lock(eng_catalog *c)
{
    pthread_rwlock_wrlock(&c->lock);
}

void eng_catalog_unlock(eng_catalog *c)
{
    pthread_rwlock_unlock(&c->lock);
}

static long find_table(const eng_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->ntables; i++)
        if (strcmp(c->tables[i].name, name) == 0) return (long)i;
    return -1;
}

static long find_view(const eng_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->nviews; i++)
        if (strcmp(c->views[i].name, name) == 0) return (long)i;
    return -1;
}

static bool view_reads(const eng_view *v, const char *name)
{
    for (uint32_t i = 0; i < v->ndeps; i++)
        if (strcmp(v->deps[i], name) == 0) return true;
    return false;
}

/* The first view reading `name`, or -1. */
static long find_dependent(const eng_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->nviews; i++)
        if (view_reads(&c->views[i], name)) return (long)i;
    return -1;
}

static sto_status view_deps(eng_catalog *c, const char *sql, eng_view *v);

static sto_status name_taken(const char *name, int position)
{
    return sto_error_at(STO_DUPLICATE_TABLE, position, "relation \"%s\" already exists", name);
}

/* Grows an array of `size`-byte elements to hold one more. */
static bool grow(void **items, size_t *cap, size_t count, size_t size)
{
    if (count < *cap) return true;
    size_t ncap = *cap ? 2 * *cap : 8;
    void *p = realloc(*items, ncap * size);
    if (!p) return false;
    *items = p;
    *cap = ncap;
    return true;
}

static sto_status add_table(eng_catalog *c, const char *name, sto_table *t)
{
    if (!grow((void **)&c->tables, &c->tables_cap, c->ntables, sizeof(table_entry)))
        return sto_error_oom();
    char *copy = strdup(name);
    if (!copy) return sto_error_oom();
    c->tables[c->ntables].name = copy;
    c->tables[c->ntables].table = t;
    c->tables[c->ntables].replicated = false;
    c->ntables++;
    return STO_OK;
}

sto_status eng_catalog_create_table(eng_catalog *c, const char *name, sto_table *t,
                                    bool if_not_exists, int position, bool *created)
{
    if (created) *created = false;
    if (find_table(c, name) >= 0 || find_view(c, name) >= 0) {
        if (if_not_exists) return STO_OK;
        return name_taken(name, position);
    }
    STO_TRY(add_table(c, name, t));
    if (created) *created = true;
    return STO_OK;
}

sto_status eng_catalog_replace_table(eng_catalog *c, const char *name, sto_table *t, int position)
{
    if (find_view(c, name) >= 0) return name_taken(name, position);
    long i = find_table(c, name);
    if (i < 0) return add_table(c, name, t);
    sto_table_free(c->tables[i].table);
    c->tables[i].table = t;
    c->tables[i].replicated = false;
    return STO_OK;
}

sto_status eng_catalog_drop_table(eng_catalog *c, const char *name, bool if_exists, int position,
                                  bool *dropped)
{
    if (dropped) *dropped = false;
    long i = find_table(c, name);
    if (i < 0) {
        if (find_view(c, name) >= 0)
            return sto_error_at(STO_WRONG_OBJECT_TYPE, position,
                                "\"%s\" is not a table (use DROP VIEW)", name);
        if (if_exists) return STO_OK;
        return sto_error_at(STO_UNDEFINED_TABLE, position, "table \"%s\" does not exist", name);
    }
    STO_TRY(eng_catalog_check_dependents(c, name, position));
    free(c->tables[i].name);
    sto_table_free(c->tables[i].table);
    memmove(&c->tables[i], &c->tables[i + 1], (c->ntables - (size_t)i - 1) * sizeof(table_entry));
    c->ntables--;
    if (dropped) *dropped = true;
    return STO_OK;
}

sto_status eng_catalog_create_view(eng_catalog *c, const char *name, const char *sql,
                                   uint32_t ncols, const char *const *column_names, int position)
{
    if (find_table(c, name) >= 0 || find_view(c, name) >= 0) return name_taken(name, position);
    if (!grow((void **)&c->views, &c->views_cap, c->nviews, sizeof(eng_view)))
        return sto_error_oom();
    eng_view v = {0};
    v.name = strdup(name);
    v.sql = strdup(sql);
    v.column_names = calloc(ncols ? ncols : 1, sizeof(char *));
    bool ok = v.name && v.sql && v.column_names;
    for (uint32_t i = 0; ok && i < ncols; i++) {
        v.column_names[i] = strdup(column_names[i]);
        ok = v.column_names[i] != NULL;
        v.ncols = i + 1;
    }
    if (!ok) {
        view_clear(&v);
        return sto_error_oom();
    }
    sto_status st = view_deps(c, sql, &v);
    if (st) {
        view_clear(&v);
        return st;
    }
    c->views[c->nviews++] = v;
    return STO_OK;
}

sto_status eng_catalog_drop_view(eng_catalog *c, const char *name, bool if_exists, int position,
                                 bool *dropped)
{
    if (dropped) *dropped = false;
    long i = find_view(c, name);
    if (i < 0) {
        if (find_table(c, name) >= 0)
            return sto_error_at(STO_WRONG_OBJECT_TYPE, position,
                                "\"%s\" is not a view (use DROP TABLE)", name);
        if (if_exists) return STO_OK;
        return sto_error_at(STO_UNDEFINED_TABLE, position, "view \"%s\" does not exist", name);
    }
    STO_TRY(eng_catalog_check_dependents(c, name, position));
    view_clear(&c->views[i]);
    memmove(&c->views[i], &c->views[i + 1], (c->nviews - (size_t)i - 1) * sizeof(eng_view));
    c->nviews--;
    if (dropped) *dropped = true;
    return STO_OK;
}

sto_status eng_catalog_check_dependents(const eng_catalog *c, const char *name, int position)
{
    if (find_dependent(c, name) < 0) return STO_OK;
    /* PostgreSQL adds DETAIL (view v depends on table t) and HINT (Use DROP
     * ... CASCADE); sto_status has only the message. */
    return sto_error_at(STO_DEPENDENT_OBJECTS_STILL_EXIST, position,
                        "cannot drop %s %s because other objects depend on it",
                        find_view(c, name) >= 0 ? "view" : "table", name);
}

sto_status eng_catalog_drop_dependents(eng_catalog *c, const char *name, uint32_t *ndropped)
{
    uint32_t n = 0;
    long i;
    while ((i = find_dependent(c, name)) >= 0) {
        /* Views reading this view go first; the recursion ends because a
         * view only reads views created before it. */
        char *vname = strdup(c->views[i].name);
        if (!vname) return sto_error_oom();
        uint32_t below = 0;
        sto_status st = eng_catalog_drop_dependents(c, vname, &below);
        if (!st) st = eng_catalog_drop_view(c, vname, false, 0, NULL);
        free(vname);
        if (st) return st;
        n += below + 1;
    }
    if (ndropped) *ndropped = n;
    return STO_OK;
}

sto_table *eng_catalog_table(const eng_catalog *c, const char *name)
{
    long i = find_table(c, name);
    return i < 0 ? NULL : c->tables[i].table;
}

bool eng_catalog_replicated(const eng_catalog *c, const char *name)
{
    long i = find_table(c, name);
    return i >= 0 && c->tables[i].replicated;
}

sto_status eng_catalog_set_replicated(eng_catalog *c, const char *name, bool replicated)
{
    long i = find_table(c, name);
    if (i < 0) return sto_error(STO_UNDEFINED_TABLE, "table \"%s\" does not exist", name);
    c->tables[i].replicated = replicated;
    return STO_OK;
}

const eng_view *eng_catalog_view(const eng_catalog *c, const char *name)
{
    long i = find_view(c, name);
    return i < 0 ? NULL : &c->views[i];
}

size_t eng_catalog_table_count(const eng_catalog *c)
{
    return c->ntables;
}

const char *eng_catalog_table_name(const eng_catalog *c, size_t i)
{
    return i < c->ntables ? c->tables[i].name : NULL;
}

sto_table *eng_catalog_table_at(const eng_catalog *c, size_t i)
{
    return i < c->ntables ? c->tables[i].table : NULL;
}

size_t eng_catalog_view_count(const eng_catalog *c)
{
    return c->nviews;
}

const eng_view *eng_catalog_view_at(const eng_catalog *c, size_t i)
{
    return i < c->nviews ? &c->views[i] : NULL;
}

/* --- the binder's interface -------------------------------------------------- */

static bool iface_lookup_table(void *ctx, const char *name, sql_table_info *out)
{
    const eng_catalog *c = ctx;
    long i = find_table(c, name);
    if (i < 0) return false;
    sto_table *t = c->tables[i].table;
    out->name = c->tables[i].name;
    out->schema = sto_table_schema(t);
    out->rows = sto_table_rows(t);
    out->stats = t->stats;
    out->table = t;
    return true;
}

static bool iface_lookup_view(void *ctx, const char *name, sql_view_info *out)
{
    const eng_catalog *c = ctx;
    long i = find_view(c, name);
    if (i < 0) return false;
    const eng_view *v = &c->views[i];
    out->name = v->name;
    out->sql = v->sql;
    out->ncols = v->ncols;
    out->column_names = (const char *const *)v->column_names;
    return true;
}

sql_catalog eng_catalog_iface(eng_catalog *c)
{
    sql_catalog iface = {c, iface_lookup_table, iface_lookup_view};
    return iface;
}

/* --- view dependencies ----------------------------------------------------------- */

/* Binding a view's query through this iface records every table and view
 * the binder finds, including those read through other views. */
typedef struct dep_recorder {
    eng_catalog *c;
    eng_view *v;
    uint32_t cap;
    bool oom;
} dep_recorder;

static void record_dep(dep_recorder *r, const char *name)
{
    eng_view *v = r->v;
    if (r->oom || view_reads(v, name)) return;
    if (v->ndeps == r->cap) {
        uint32_t cap = r->cap ? 2 * r->cap : 4;
        char **d = realloc(v->deps, cap * sizeof(char *));
        if (!d) {
            r->oom = true;
            return;
        }
        v->deps = d;
        r->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) {
        r->oom = true;
        return;
    }
    v->deps[v->ndeps++] = copy;
}

static bool rec_lookup_table(void *ctx, const char *name, sql_table_info *out)
{
    dep_recorder *r = ctx;
    if (!iface_lookup_table(r->c, name, out)) return false;
    record_dep(r, out->name);
    return true;
}

static bool rec_lookup_view(void *ctx, const char *name, sql_view_info *out)
{
    dep_recorder *r = ctx;
    if (!iface_lookup_view(r->c, name, out)) return false;
    record_dep(r, out->name);
    return true;
}

static sto_status view_deps(eng_catalog *c, const char *sql, eng_view *v)
{
    dep_recorder r = {c, v, 0, false};
    sql_catalog iface = {&r, rec_lookup_table, rec_lookup_view};
    sql_arena *a = sql_arena_create();
    if (!a) return sto_error_oom();
    sql_stmt_list *l;
    sql_plan *plan;
    sto_status st = sql_parse(a, sql, &l);
    if (!st && l->count == 1 && l->items[0]->kind == SQL_STMT_SELECT)
        st = sql_bind_query(a, &iface, l->items[0]->query, &plan);
    sql_arena_destroy(a);
    /* A query that does not bind keeps what was found; running out of
     * memory is an error. */
    bool oom = r.oom || (st && strcmp(st->sqlstate, STO_OUT_OF_MEMORY) == 0);
    if (st) sto_status_free(st);
    return oom ? sto_error_oom() : STO_OK;
}

/* --- DDL text ------------------------------------------------------------------ */

/* A growing string; `failed` sticks after the first allocation failure. */
typedef struct strbuf {
    char *s;
    size_t len, cap;
    bool failed;
} strbuf;

static void sb_add(strbuf *b, const char *text)
{
    size_t n = strlen(text);
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, text, n + 1);
    b->len += n;
}

/* An identifier, double-quoted when it would not read back as written. */
static void sb_add_ident(strbuf *b, const char *name)
{
    bool plain = name[0] && (islower((unsigned char)name[0]) || name[0] == '_');
    for (const char *p = name; plain && *p; p++)
        plain = islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_';
    if (plain) {
        sb_add(b, name);
        return;
    }
    sb_add(b, "\"");
    for (const char *p = name; *p; p++) {
        char ch[2] = {*p, 0};
        sb_add(b, *p == '"' ? "\"\"" : ch);
    }
    sb_add(b, "\"");
}

char *eng_catalog_table_ddl(const eng_catalog *c, const char *name)
{
    long i = find_table(c, name);
    if (i < 0) return NULL;
    const sto_schema *s = sto_table_schema(c->tables[i].table);
    strbuf b = {0};
    sb_add(&b, "CREATE TABLE ");
    sb_add_ident(&b, c->tables[i].name);
    sb_add(&b, " (\n");
    for (uint32_t k = 0; k < s->ncols; k++) {
        char type[48];
        sto_type_format(s->cols[k].type, type, sizeof(type));
        sb_add(&b, "    ");
        sb_add_ident(&b, s->cols[k].name);
        sb_add(&b, " ");
        sb_add(&b, type);
        if (s->cols[k].not_null) sb_add(&b, " NOT NULL");
        sb_add(&b, k + 1 < s->ncols ? ",\n" : "\n");
    }
    sb_add(&b, ");");
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
