/*
 * bind_catalog.h — a test catalog for the binder tests: the eight TPC-H
 * tables built by parsing ../shared/tpch/schema.sql, plus a tiny view store
 * filled by CREATE VIEW statements, behind the sql_catalog interface.
 *
 * Header-only and static: each test program includes it once.
 */
#ifndef RACKDB_TESTS_SQL_BIND_CATALOG_H
#define RACKDB_TESTS_SQL_BIND_CATALOG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/bind.h"
#include "sql/parse.h"
#include "storage/column.h"
#include "test.h" /* test_shared_dir */

#define TCAT_MAX 16

typedef struct test_catalog {
    int ntables;
    char *table_names[TCAT_MAX];
    sto_schema *schemas[TCAT_MAX];
    int nviews;
    char *view_names[TCAT_MAX];
    char *view_sql[TCAT_MAX];
    uint32_t view_ncols[TCAT_MAX];
    char *view_cols[TCAT_MAX][8];
} test_catalog;

static inline bool tcat_lookup_table(void *ctx, const char *name, sql_table_info *out)
{
    test_catalog *c = ctx;
    for (int i = 0; i < c->ntables; i++) {
        if (strcmp(c->table_names[i], name) == 0) {
            memset(out, 0, sizeof(*out));
            out->name = c->table_names[i];
            out->schema = c->schemas[i];
            return true;
        }
    }
    return false;
}

static inline bool tcat_lookup_view(void *ctx, const char *name, sql_view_info *out)
{
    test_catalog *c = ctx;
    for (int i = 0; i < c->nviews; i++) {
        if (strcmp(c->view_names[i], name) == 0) {
            out->name = c->view_names[i];
            out->sql = c->view_sql[i];
            out->ncols = c->view_ncols[i];
            out->column_names = (const char *const *)c->view_cols[i];
            return true;
        }
    }
    return false;
}

static inline sql_catalog tcat_iface(test_catalog *c)
{
    sql_catalog cat = {c, tcat_lookup_table, tcat_lookup_view};
    return cat;
}

static inline char *tcat_read_file(const char *path)
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
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

/* The file $shared/tpch/<name>, name being name_fmt (one %02d) filled
 * with q ("queries/q%02d.sql"); NULL, reported, when it cannot be read. */
static inline char *tcat_read_tpch(const char *shared, const char *name_fmt, int q)
{
    char name[64], path[1024];
    snprintf(name, sizeof(name), name_fmt, q);
    snprintf(path, sizeof(path), "%s/tpch/%s", shared, name);
    char *text = tcat_read_file(path);
    if (!text) fprintf(stderr, "cannot read %s\n", path);
    return text;
}

static inline void tcat_add_view(test_catalog *c, const sql_stmt *st)
{
    int i = c->nviews++;
    c->view_names[i] = strdup(st->create_view.name);
    c->view_sql[i] = strdup(st->create_view.query_text);
    c->view_ncols[i] = (uint32_t)st->create_view.columns.count;
    for (int k = 0; k < st->create_view.columns.count && k < 8; k++)
        c->view_cols[i][k] = strdup(st->create_view.columns.items[k]->name);
}

static inline void tcat_drop_view(test_catalog *c, const char *name)
{
    for (int i = 0; i < c->nviews; i++) {
        if (strcmp(c->view_names[i], name) != 0) continue;
        free(c->view_names[i]);
        free(c->view_sql[i]);
        for (uint32_t k = 0; k < c->view_ncols[i]; k++)
            free(c->view_cols[i][k]);
        c->nviews--;
        c->view_names[i] = c->view_names[c->nviews];
        c->view_sql[i] = c->view_sql[c->nviews];
        c->view_ncols[i] = c->view_ncols[c->nviews];
        memcpy(c->view_cols[i], c->view_cols[c->nviews], sizeof(c->view_cols[i]));
        return;
    }
}

/* Loads the TPC-H schema; false when the file is missing or bad. */
static inline bool tcat_init(test_catalog *c)
{
    memset(c, 0, sizeof(*c));
    char path[1024];
    snprintf(path, sizeof(path), "%s/tpch/schema.sql", test_shared_dir());
    char *text = tcat_read_file(path);
    if (!text) return false;
    sql_arena *a = sql_arena_create();
    sql_stmt_list *l = NULL;
    sto_status st = sql_parse(a, text, &l);
    bool ok = st == NULL;
    if (st) fprintf(stderr, "%s: %s at %d\n", path, st->message, st->position);
    for (int i = 0; ok && i < l->count && c->ntables < TCAT_MAX; i++) {
        const sql_stmt *s = l->items[i];
        if (s->kind != SQL_STMT_CREATE_TABLE) continue;
        uint32_t n = (uint32_t)s->create_table.columns.count;
        const char *names[32];
        sto_type types[32];
        bool nn[32];
        for (uint32_t k = 0; k < n; k++) {
            const sql_column_def *d = s->create_table.columns.items[k];
            names[k] = d->name;
            types[k] = d->type;
            nn[k] = d->not_null;
        }
        sto_schema *sch;
        if (sto_schema_new(n, names, types, nn, &sch)) {
            ok = false;
            break;
        }
        c->table_names[c->ntables] = strdup(s->create_table.name);
        c->schemas[c->ntables++] = sch;
    }
    sto_status_free(st);
    sql_arena_destroy(a);
    free(text);
    return ok && c->ntables == 8;
}

static inline void tcat_free(test_catalog *c)
{
    for (int i = 0; i < c->ntables; i++) {
        free(c->table_names[i]);
        sto_schema_free(c->schemas[i]);
    }
    while (c->nviews)
        tcat_drop_view(c, c->view_names[0]);
}

#endif
