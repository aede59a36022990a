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
#include <strings.h>

typedef struct table_entry {
    char *name;
    sto_table *table;
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
        if (strcasecmp(c->tables[i].name, name) == 0) return (long)i;
    return -1;
}

static long find_view(const eng_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->nviews; i++)
        if (strcasecmp(c->views[i].name, name) == 0) return (long)i;
    return -1;
}

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
    view_clear(&c->views[i]);
    memmove(&c->views[i], &c->views[i + 1], (c->nviews - (size_t)i - 1) * sizeof(eng_view));
    c->nviews--;
    if (dropped) *dropped = true;
    return STO_OK;
}

sto_table *eng_catalog_table(const eng_catalog *c, const char *name)
{
    long i = find_table(c, name);
    return i < 0 ? NULL : c->tables[i].table;
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
