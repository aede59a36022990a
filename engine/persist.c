/*
 * persist.c — writing an instance's tables and views to its directory and
 * reading them back at open.
 */
#include "engine/persist.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rackdb.h"
#include "sql/parse.h"
#include "storage/snapshot.h"

#define VIEWS_FILE     "views.sql"
#define PLACEMENT_FILE "replicated"

static sto_status write_placement(const char *dir, const eng_catalog *c, const char *skip,
                                  size_t nadd, const char *const *add_names,
                                  sto_table *const *add_tables);

sto_status eng_persist_tables(const char *dir, const eng_catalog *c, const char *skip, size_t nadd,
                              const char *const *add_names, sto_table *const *add_tables)
{
    if (!dir) return STO_OK;
    size_t cap = eng_catalog_table_count(c) + nadd;
    const char **names = calloc(cap ? cap : 1, sizeof(*names));
    sto_table **tables = calloc(cap ? cap : 1, sizeof(*tables));
    bool *changed = calloc(cap ? cap : 1, sizeof(*changed));
    bool *used = calloc(nadd ? nadd : 1, sizeof(*used));
    sto_status st = STO_OK;
    if (!names || !tables || !changed || !used) {
        st = sto_error_oom();
        goto out;
    }
    /* A caller naming nothing cannot say what changed: write everything. */
    bool all = !skip && nadd == 0;
    size_t n = 0;
    for (size_t i = 0; i < eng_catalog_table_count(c); i++) {
        const char *name = eng_catalog_table_name(c, i);
        if (skip && strcmp(name, skip) == 0) continue;
        names[n] = name;
        tables[n] = eng_catalog_table_at(c, i);
        changed[n] = all;
        for (size_t k = 0; k < nadd; k++) {
            if (!used[k] && strcmp(add_names[k], name) == 0) {
                tables[n] = add_tables[k];
                changed[n] = true;
                used[k] = true;
            }
        }
        n++;
    }
    for (size_t k = 0; k < nadd; k++) {
        if (used[k]) continue;
        names[n] = add_names[k];
        changed[n] = true;
        tables[n++] = add_tables[k];
    }
    st = sto_snapshot_save_changed(dir, names, tables, changed, n);
    if (!st) st = write_placement(dir, c, skip, nadd, add_names, add_tables);
out:
    free(names);
    free(tables);
    free(changed);
    free(used);
    return st;
}

/* An identifier as SQL that reads back as written. */
static void write_ident(FILE *f, const char *name)
{
    bool plain = name[0] && (islower((unsigned char)name[0]) || name[0] == '_');
    for (const char *p = name; plain && *p; p++)
        plain = islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_';
    if (plain) {
        fputs(name, f);
        return;
    }
    fputc('"', f);
    for (const char *p = name; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

static sto_status io_error(const char *what, const char *path)
{
    int err = errno;
    if (err == ENOSPC)
        return sto_error(STO_DISK_FULL, "could not %s \"%s\": %s", what, path, strerror(err));
    return sto_error(STO_IO_ERROR, "could not %s \"%s\": %s", what, path, strerror(err));
}

/* fsync of the directory, so a rename in it is durable. */
static sto_status sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return io_error("open directory", dir);
    int rc = fsync(fd);
    close(fd);
    return rc == 0 ? STO_OK : io_error("fsync directory", dir);
}

/* Writes dir/name as a whole: a temporary file filled by body, fsynced,
 * renamed over the old one, and the directory fsynced, so a crash leaves
 * either the old file or the new one, never a torn one. */
static sto_status write_durable(const char *dir, const char *name,
                                void (*body)(FILE *f, const void *arg), const void *arg)
{
    size_t len = strlen(dir) + strlen(name) + sizeof("/.tmp");
    char *path = malloc(len), *tmp = malloc(len);
    if (!path || !tmp) {
        free(path);
        free(tmp);
        return sto_error_oom();
    }
    sprintf(path, "%s/%s", dir, name);
    sprintf(tmp, "%s/%s.tmp", dir, name);
    sto_status st = STO_OK;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        st = io_error("create", tmp);
        goto out;
    }
    body(f, arg);
    bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (fclose(f) != 0) ok = false;
    if (!ok || rename(tmp, path) != 0) {
        st = io_error(ok ? "rename" : "write", tmp);
        unlink(tmp);
        goto out;
    }
    st = sync_dir(dir);
out:
    free(path);
    free(tmp);
    return st;
}

typedef struct {
    const eng_catalog *c;
    const char *skip;
    size_t nadd;
    const char *const *add_names;
    sto_table *const *add_tables;
} catalog_file;

static void views_body(FILE *f, const void *arg)
{
    const catalog_file *cf = arg;
    fputs("-- rackdb views, written on every change; read back at open.\n", f);
    for (size_t i = 0; i < eng_catalog_view_count(cf->c); i++) {
        const eng_view *v = eng_catalog_view_at(cf->c, i);
        if (cf->skip && strcmp(v->name, cf->skip) == 0) continue;
        fputs("CREATE VIEW ", f);
        write_ident(f, v->name);
        if (v->ncols) {
            fputs(" (", f);
            for (uint32_t k = 0; k < v->ncols; k++) {
                if (k) fputs(", ", f);
                write_ident(f, v->column_names[k]);
            }
            fputc(')', f);
        }
        fprintf(f, " AS %s;\n", v->sql);
    }
}

sto_status eng_persist_views(const char *dir, const eng_catalog *c, const char *skip)
{
    if (!dir) return STO_OK;
    catalog_file cf = {.c = c, .skip = skip};
    return write_durable(dir, VIEWS_FILE, views_body, &cf);
}

/* dir/replicated: the names of the replicated tables (catalog.h), one a
 * line, so a cluster's server that restarts from its directory plans them
 * as before. A table left out (skip) or replaced by an added one (another
 * table under its name) is chunked again; one changed in place stays. */
static void placement_body(FILE *f, const void *arg)
{
    const catalog_file *cf = arg;
    for (size_t i = 0; i < eng_catalog_table_count(cf->c); i++) {
        const char *name = eng_catalog_table_name(cf->c, i);
        bool keep =
            eng_catalog_replicated(cf->c, name) && !(cf->skip && strcmp(name, cf->skip) == 0);
        for (size_t k = 0; keep && k < cf->nadd; k++)
            keep = strcmp(cf->add_names[k], name) != 0 ||
                   cf->add_tables[k] == eng_catalog_table_at(cf->c, i);
        if (keep) fprintf(f, "%s\n", name);
    }
}

static sto_status write_placement(const char *dir, const eng_catalog *c, const char *skip,
                                  size_t nadd, const char *const *add_names,
                                  sto_table *const *add_tables)
{
    catalog_file cf = {c, skip, nadd, add_names, add_tables};
    return write_durable(dir, PLACEMENT_FILE, placement_body, &cf);
}

sto_status eng_persist_placement(const char *dir, const eng_catalog *c)
{
    return dir ? write_placement(dir, c, NULL, 0, NULL, NULL) : STO_OK;
}

/* Whole file into a NUL-terminated buffer; *out NULL when it does not exist. */
static sto_status read_text_file(const char *path, char **out)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT ? STO_OK : io_error("open", path);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    sto_status st = STO_OK;
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, f);
        if (len < cap - 1) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    if (!buf) {
        st = sto_error_oom();
    } else if (ferror(f)) {
        st = io_error("read", path);
        free(buf);
    } else {
        buf[len] = '\0';
        *out = buf;
    }
    fclose(f);
    return st;
}

static sto_status load_views(const char *dir, eng_catalog *c)
{
    char *path = malloc(strlen(dir) + sizeof("/" VIEWS_FILE));
    if (!path) return sto_error_oom();
    sprintf(path, "%s/" VIEWS_FILE, dir);
    char *text;
    sto_status st = read_text_file(path, &text);
    if (st || !text) {
        free(path);
        return st;
    }
    sql_arena *arena = NULL;
    sql_stmt_list *stmts = NULL;
    if (rackdb_is_blank(text, strlen(text))) goto out; /* no views */
    arena = sql_arena_create();
    if (!arena) {
        st = sto_error_oom();
        goto out;
    }
    st = sql_parse(arena, text, &stmts);
    if (st) {
        st = sto_status_wrap(st, "%s is damaged", path);
        goto out;
    }
    for (int i = 0; i < stmts->count && !st; i++) {
        const sql_stmt *s = stmts->items[i];
        if (s->kind != SQL_STMT_CREATE_VIEW) {
            st = sto_error(STO_DATA_CORRUPTED, "%s holds a statement other than CREATE VIEW", path);
            break;
        }
        const char *cols[s->create_view.columns.count ? s->create_view.columns.count : 1];
        for (int k = 0; k < s->create_view.columns.count; k++)
            cols[k] = s->create_view.columns.items[k]->name;
        st = eng_catalog_create_view(c, s->create_view.name, s->create_view.query_text,
                                     (uint32_t)s->create_view.columns.count, cols, 0);
    }
out:
    sql_arena_destroy(arena);
    free(text);
    free(path);
    return st;
}

/* Marks the tables dir/replicated names (write_placement) replicated. */
static sto_status load_placement(const char *dir, eng_catalog *c)
{
    char *path = malloc(strlen(dir) + sizeof("/" PLACEMENT_FILE));
    if (!path) return sto_error_oom();
    sprintf(path, "%s/" PLACEMENT_FILE, dir);
    char *text = NULL;
    sto_status st = read_text_file(path, &text);
    free(path);
    for (char *line = text, *next; !st && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (*line && eng_catalog_table(c, line)) st = eng_catalog_set_replicated(c, line, true);
        if (!next) break;
    }
    free(text);
    return st;
}

/* True when dir holds anything besides ".", ".." and our LOCK file. */
static bool dir_has_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    bool any = false;
    struct dirent *e;
    while (!any && (e = readdir(d)) != NULL)
        any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "LOCK");
    closedir(d);
    return any;
}

sto_status eng_persist_load(const char *dir, eng_catalog *c)
{
    if (!dir || !dir_has_files(dir)) return STO_OK;
    char *manifest = malloc(strlen(dir) + sizeof("/MANIFEST"));
    if (!manifest) return sto_error_oom();
    sprintf(manifest, "%s/MANIFEST", dir);
    bool ours = access(manifest, F_OK) == 0;
    free(manifest);
    if (!ours)
        return sto_error(STO_UNDEFINED_FILE,
                         "\"%s\" is not a rackdb database directory: it holds other files and "
                         "no snapshot",
                         dir);
    sto_snapshot_entry *entries;
    size_t n;
    STO_TRY(sto_snapshot_open(dir, &entries, &n));
    sto_status st = STO_OK;
    size_t i = 0;
    for (; i < n && !st; i++) {
        st = eng_catalog_create_table(c, entries[i].name, entries[i].table, false, 0, NULL);
        if (!st) entries[i].table = NULL; /* the catalog owns it now */
    }
    sto_snapshot_entries_free(entries, n);
    if (st) return st;
    STO_TRY(load_placement(dir, c));
    return load_views(dir, c);
}
