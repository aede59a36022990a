/*
 * server_catalog.c — the answers PostgreSQL's catalog would give, for the
 * questions real tools ask.
 *
 * rackdb has no pg_catalog schema. Instead, a statement is normalized
 * (lowercase outside quotes, blanks collapsed, trailing `;` dropped) and
 * compared with the few shapes tools send:
 *   - version(), current_schema(), current_database(), current_user,
 *     session_user, user;
 *   - SHOW of client-visible PostgreSQL parameters (server_version,
 *     DateStyle, TimeZone, ...) and SET of the parameters drivers set
 *     (application_name, client_encoding, DateStyle, TimeZone,
 *     extra_float_digits, search_path, ...); rackdb's own settings (threads,
 *     memory_limit, ...) go on to the engine;
 *   - the queries psql 15 sends for \dt, \dv, \d (list), \d NAME, \l and \dn
 *     (recorded with `psql -E` against PostgreSQL 15), answered from
 *     rackdb_tables and the column lists of rackdb_schema. Tables get OIDs
 *     16384 + their position in the sorted table list.
 * Everything else goes to the engine; a different catalog query fails there
 * like any unknown table (42P01).
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/server.h"

#define FIRST_OID 16384

/* Lowercase outside quotes, runs of blanks as one space, no blanks at the
 * ends and no trailing semicolons. malloc'd. */
static char *normalize(const char *sql)
{
    size_t n = strlen(sql);
    char *out = malloc(n + 1), *o = out;
    if (!out) return NULL;
    char quote = 0;
    bool space = false;
    for (const char *p = sql; *p; p++) {
        char ch = *p;
        if (quote) {
            *o++ = ch;
            if (ch == quote) quote = 0;
            continue;
        }
        if (isspace((unsigned char)ch)) {
            space = true;
            continue;
        }
        if (space && o > out) {
            /* no blank after "(" or before ")" and ",": psql's layout varies */
            if (o[-1] != '(' && ch != ')' && ch != ',') *o++ = ' ';
        }
        space = false;
        if (ch == '\'' || ch == '"') quote = ch;
        *o++ = (char)tolower((unsigned char)ch);
    }
    while (o > out && (o[-1] == ';' || o[-1] == ' '))
        o--;
    *o = '\0';
    return out;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static srv_result *one_value(const char *column, uint32_t oid, const char *value)
{
    srv_result *r = srv_result_new(1, &column, &oid);
    if (r && !srv_result_add_row(r, &value)) {
        srv_result_free(r);
        return NULL;
    }
    if (r) srv_result_finish(r);
    return r;
}

/* --- SHOW and SET ----------------------------------------------------------------- */

/* PostgreSQL parameters a client may read; values are fixed except
 * application_name. */
static const char *const shown[][2] = {
    {"server_version", SRV_SERVER_VERSION},
    {"server_version_num", "150000"},
    {"server_encoding", "UTF8"},
    {"client_encoding", "UTF8"},
    {"DateStyle", "ISO, MDY"},
    {"IntervalStyle", "postgres"},
    {"TimeZone", "UTC"},
    {"integer_datetimes", "on"},
    {"standard_conforming_strings", "on"},
    {"transaction_isolation", "read committed"},
    {"default_transaction_isolation", "read committed"},
    {"transaction_read_only", "off"},
    {"search_path", "\"$user\", public"},
    {"max_identifier_length", "63"},
    {"is_superuser", "on"},
    {"lc_collate", "C"},
    {"lc_ctype", "C"},
    {"extra_float_digits", "1"},
    {"statement_timeout", "0"},
    {"application_name", NULL},
};

/* Parameters SET accepts and ignores (their only meaningful value is the
 * one rackdb always has, or they tune things rackdb does not have). */
static const char *const ignored_sets[] = {
    "extra_float_digits",
    "search_path",
    "statement_timeout",
    "lock_timeout",
    "client_min_messages",
    "intervalstyle",
    "bytea_output",
    "synchronous_commit",
    "idle_in_transaction_session_timeout",
    "jit",
    "geqo",
    "work_mem",
    "default_transaction_isolation",
    "transaction_isolation",
    "standard_conforming_strings",
    "escape_string_warning",
    "row_security",
    "check_function_bodies",
    "xmloption",
    "lc_messages",
    "lc_monetary",
    "lc_numeric",
    "lc_time",
    "session_authorization",
    "role",
};

static srv_result *answer_show(srv_client_info *info, const char *name)
{
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
        if (strcasecmp(shown[i][0], name) != 0) continue;
        return one_value(shown[i][0], PGW_OID_TEXT,
                         shown[i][1] ? shown[i][1] : info->application_name);
    }
    return NULL;
}

/* The value of a SET: 'quoted', "quoted", a word or a list; quotes
 * removed. */
static void set_value(const char *v, char *out, size_t cap)
{
    while (isspace((unsigned char)*v))
        v++;
    size_t n = strlen(v);
    while (n && (isspace((unsigned char)v[n - 1]) || v[n - 1] == ';'))
        n--;
    if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) v++, n -= 2;
    snprintf(out, cap, "%.*s", (int)n, v);
}

/* SET [SESSION|LOCAL] name {TO|=} value for a client parameter: true when
 * handled here. */
static bool answer_set(srv_client_info *info, const char *norm, const char *orig, srv_result **out,
                       sto_status *err, pgw_buf *notices)
{
    const char *p = norm + 4, *o = orig;
    /* the same position in the original text: skip "set" there too */
    while (isspace((unsigned char)*o))
        o++;
    o += 3;
    if (starts(p, "session "))
        p += 8;
    else if (starts(p, "local "))
        p += 6;
    char name[64];
    size_t n = 0;
    while ((isalnum((unsigned char)p[n]) || p[n] == '_') && n + 1 < sizeof(name)) {
        name[n] = p[n];
        n++;
    }
    name[n] = '\0';
    if (!n) return false;
    /* the value starts after TO or = in the original text */
    const char *eq = NULL;
    for (const char *q = o; *q; q++) {
        if (*q == '=') {
            eq = q + 1;
            break;
        }
        if ((q[0] == 't' || q[0] == 'T') && (q[1] == 'o' || q[1] == 'O') &&
            isspace((unsigned char)q[-1]) && (isspace((unsigned char)q[2]) || q[2] == '\'')) {
            eq = q + 2;
            break;
        }
    }
    bool known = false;
    for (size_t i = 0; i < sizeof(ignored_sets) / sizeof(ignored_sets[0]); i++)
        if (!strcmp(name, ignored_sets[i])) known = true;
    bool special = !strcmp(name, "application_name") || !strcmp(name, "client_encoding") ||
                   !strcmp(name, "datestyle") || !strcmp(name, "timezone") ||
                   !strcmp(name, "names");
    if (!known && !special) return false;
    if (!eq && strcmp(name, "names")) return false;
    char value[128];
    set_value(eq ? eq : p + 5, value, sizeof(value));
    if (!strcmp(name, "application_name")) {
        snprintf(info->application_name, sizeof(info->application_name), "%.63s", value);
        pgw_put_parameter_status(notices, "application_name", info->application_name);
    } else if (!strcmp(name, "client_encoding") || !strcmp(name, "names")) {
        if (strcasecmp(value, "utf8") && strcasecmp(value, "utf-8") &&
            strcasecmp(value, "unicode")) {
            *err = sto_error("22023", "invalid value for parameter \"client_encoding\": \"%s\"",
                             value);
            return true;
        }
        pgw_put_parameter_status(notices, "client_encoding", "UTF8");
    } else if (!strcmp(name, "datestyle")) {
        if (!strcasestr(value, "iso")) {
            *err = sto_error("22023", "rackdb supports only DateStyle ISO (not \"%s\")", value);
            return true;
        }
        pgw_put_parameter_status(notices, "DateStyle", "ISO, MDY");
    } else if (!strcmp(name, "timezone")) {
        if (strcasecmp(value, "utc") && strcasecmp(value, "gmt") && strcasecmp(value, "etc/utc") &&
            strcasecmp(value, "z")) {
            *err = sto_error("22023", "rackdb supports only TimeZone UTC (not \"%s\")", value);
            return true;
        }
    }
    *out = srv_result_new_tag("SET");
    return true;
}

/* --- the tables, as pg_class rows ------------------------------------------------------- */

typedef struct relation {
    char name[128];
    bool is_view;
    uint32_t oid;
} relation;

/* rackdb's tables and views in name order; *n set. NULL on error. */
static relation *relations(rackdb *db, size_t *n, sto_status *err)
{
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    *n = 0;
    if (rackdb_tables(db, &r, &e) != RACKDB_OK) {
        *err = sto_error(rackdb_error_sqlstate(e), "%s", rackdb_error_message(e));
        rackdb_error_free(e);
        return NULL;
    }
    uint64_t rows = rackdb_result_row_count(r);
    relation *rel = calloc(rows ? rows : 1, sizeof(*rel));
    if (!rel) {
        *err = sto_error_oom();
    } else {
        for (uint64_t i = 0; i < rows; i++) {
            snprintf(rel[i].name, sizeof(rel[i].name), "%s", rackdb_result_text(r, i, 0));
            const char *kind = rackdb_result_text(r, i, 1);
            rel[i].is_view = kind && !strcmp(kind, "view");
            rel[i].oid = FIRST_OID + (uint32_t)i;
        }
        *n = rows;
    }
    rackdb_result_free(r);
    return rel;
}

/* The string literal after `marker` in norm (its content, quotes removed),
 * into out; false when absent. */
static bool literal_after(const char *norm, const char *marker, char *out, size_t cap)
{
    const char *p = strstr(norm, marker);
    if (!p) return false;
    p += strlen(marker);
    while (*p == ' ')
        p++;
    if (*p != '\'') return false;
    const char *end = strchr(p + 1, '\'');
    if (!end) return false;
    snprintf(out, cap, "%.*s", (int)(end - p - 1), p + 1);
    return true;
}

/* True when name matches the psql pattern regex (or there is none). */
static bool name_matches(const char *regex, const char *name)
{
    if (!regex) return true;
    regex_t re;
    if (regcomp(&re, regex, REG_EXTENDED | REG_NOSUB)) return false;
    bool ok = regexec(&re, name, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

/* \dt, \dv, \d: Schema, Name, Type, Owner of the matching relations. */
static srv_result *answer_list(rackdb *db, srv_client_info *info, const char *norm, sto_status *err)
{
    const char *kinds = strstr(norm, "c.relkind in (");
    bool tables = kinds && strstr(kinds, "'r'") && strstr(kinds, "'r'") < strchr(kinds, ')');
    bool views = kinds && strstr(kinds, "'v'") && strstr(kinds, "'v'") < strchr(kinds, ')');
    char pattern[256], schema[256];
    bool has_pattern =
        literal_after(norm, "c.relname operator(pg_catalog.~)", pattern, sizeof(pattern));
    bool has_schema =
        literal_after(norm, "n.nspname operator(pg_catalog.~)", schema, sizeof(schema));
    static const char *const names[] = {"Schema", "Name", "Type", "Owner"};
    static const uint32_t oids[] = {PGW_OID_NAME, PGW_OID_NAME, PGW_OID_TEXT, PGW_OID_NAME};
    size_t n;
    relation *rel = relations(db, &n, err);
    if (!rel) return NULL;
    srv_result *r = srv_result_new(4, names, oids);
    for (size_t i = 0; r && i < n; i++) {
        if (!(rel[i].is_view ? views : tables)) continue;
        if (has_pattern && !name_matches(pattern, rel[i].name)) continue;
        if (has_schema && !name_matches(schema, "public")) continue;
        const char *row[] = {"public", rel[i].name, rel[i].is_view ? "view" : "table", info->user};
        if (!srv_result_add_row(r, row)) {
            srv_result_free(r);
            r = NULL;
        }
    }
    free(rel);
    if (r) srv_result_finish(r);
    return r;
}

/* \d NAME, first step: oid, schema and name of the matching relations. */
static srv_result *answer_lookup(rackdb *db, const char *norm, sto_status *err)
{
    char pattern[256];
    bool has_pattern =
        literal_after(norm, "c.relname operator(pg_catalog.~)", pattern, sizeof(pattern));
    static const char *const names[] = {"oid", "nspname", "relname"};
    static const uint32_t oids[] = {PGW_OID_OID, PGW_OID_NAME, PGW_OID_NAME};
    size_t n;
    relation *rel = relations(db, &n, err);
    if (!rel) return NULL;
    srv_result *r = srv_result_new(3, names, oids);
    for (size_t i = 0; r && i < n; i++) {
        if (has_pattern && !name_matches(pattern, rel[i].name)) continue;
        char oid[16];
        snprintf(oid, sizeof(oid), "%u", rel[i].oid);
        const char *row[] = {oid, "public", rel[i].name};
        if (!srv_result_add_row(r, row)) {
            srv_result_free(r);
            r = NULL;
        }
    }
    free(rel);
    if (r) srv_result_finish(r);
    return r;
}

/* The relation whose oid is quoted after marker ("c.oid = '16384'"). */
static bool relation_by_oid(rackdb *db, const char *norm, const char *marker, relation *out,
                            sto_status *err)
{
    char text[32];
    if (!literal_after(norm, marker, text, sizeof(text))) return false;
    unsigned long oid = strtoul(text, NULL, 10);
    size_t n;
    relation *rel = relations(db, &n, err);
    if (!rel) return false;
    bool found = false;
    for (size_t i = 0; i < n; i++)
        if (rel[i].oid == oid) *out = rel[i], found = true;
    free(rel);
    return found;
}

/* \d NAME, second step: the pg_class flags of one relation. */
static srv_result *answer_relinfo(rackdb *db, const char *norm, sto_status *err)
{
    static const char *const names[] = {"relchecks",
                                        "relkind",
                                        "relhasindex",
                                        "relhasrules",
                                        "relhastriggers",
                                        "relrowsecurity",
                                        "relforcerowsecurity",
                                        "relhasoids",
                                        "relispartition",
                                        "?column?",
                                        "reltablespace",
                                        "reloftype",
                                        "relpersistence",
                                        "relreplident",
                                        "amname"};
    static const uint32_t oids[] = {PGW_OID_INT2, 18,           PGW_OID_BOOL, PGW_OID_BOOL,
                                    PGW_OID_BOOL, PGW_OID_BOOL, PGW_OID_BOOL, PGW_OID_BOOL,
                                    PGW_OID_BOOL, PGW_OID_TEXT, PGW_OID_OID,  PGW_OID_TEXT,
                                    18,           18,           PGW_OID_NAME};
    srv_result *r = srv_result_new(15, names, oids);
    relation rel;
    if (r && relation_by_oid(db, norm, "c.oid =", &rel, err)) {
        const char *row[] = {
            "0", rel.is_view ? "v" : "r",    "f", "f", "f", "f", "f", "f", "f", "", "0", "", "p",
            "d", rel.is_view ? NULL : "heap"};
        if (!srv_result_add_row(r, row)) {
            srv_result_free(r);
            return NULL;
        }
    }
    if (r) srv_result_finish(r);
    return r;
}

/* PostgreSQL's format_type for a rackdb type name ("DECIMAL(15,2)"). */
static void pg_type_name(const char *t, char *out, size_t cap)
{
    static const char *const map[][2] = {
        {"INTEGER", "integer"},   {"BIGINT", "bigint"},
        {"SMALLINT", "smallint"}, {"DOUBLE", "double precision"},
        {"BOOLEAN", "boolean"},   {"DATE", "date"},
        {"TEXT", "text"},         {"DECIMAL", "numeric"},
        {"NUMERIC", "numeric"},   {"VARCHAR", "character varying"},
        {"CHAR", "character"},
    };
    size_t base = strcspn(t, "( ");
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (strlen(map[i][0]) == base && !strncasecmp(t, map[i][0], base)) {
            const char *args = strchr(t, '(');
            snprintf(out, cap, "%s%s", map[i][1], args ? args : "");
            return;
        }
    }
    snprintf(out, cap, "%s", t);
    for (char *p = out; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

/* A view's columns: its CREATE statement has no column list, so they are
 * read from the result of `SELECT * FROM view LIMIT 0` in a session of its
 * own (views are never NOT NULL). */
static srv_result *view_columns(rackdb *db, const relation *rel, srv_result *r, sto_status *err)
{
    char sql[320];
    size_t n = (size_t)snprintf(sql, sizeof(sql), "SELECT * FROM \"");
    for (const char *p = rel->name; *p && n + 16 < sizeof(sql); p++) {
        if (*p == '"') sql[n++] = '"';
        sql[n++] = *p;
    }
    snprintf(sql + n, sizeof(sql) - n, "\" LIMIT 0");
    rackdb_session *s = NULL;
    rackdb_result *res = NULL;
    rackdb_error *e = NULL;
    if (rackdb_session_open(db, &s, &e) != RACKDB_OK ||
        rackdb_exec(s, sql, &res, &e) != RACKDB_OK) {
        *err = sto_error(rackdb_error_sqlstate(e), "%s", rackdb_error_message(e));
        rackdb_error_free(e);
        rackdb_session_close(s);
        srv_result_free(r);
        return NULL;
    }
    for (uint32_t i = 0; r && i < rackdb_result_column_count(res); i++) {
        char pgtype[160];
        pg_type_name(rackdb_result_column_type(res, i), pgtype, sizeof(pgtype));
        const char *row[] = {rackdb_result_column_name(res, i), pgtype, NULL, "f", NULL, "", ""};
        if (!srv_result_add_row(r, row)) {
            srv_result_free(r);
            r = NULL;
        }
    }
    rackdb_result_free(res);
    rackdb_session_close(s);
    if (r) srv_result_finish(r);
    return r;
}

/* \d NAME, third step: the columns (name, type, default, not null, ...),
 * read from the CREATE statement rackdb_schema writes: one column a line,
 * "    name TYPE [NOT NULL],". */
static srv_result *answer_columns(rackdb *db, const char *norm, sto_status *err)
{
    static const char *const names[] = {"attname",      "format_type", "pg_get_expr", "attnotnull",
                                        "attcollation", "attidentity", "attgenerated"};
    static const uint32_t oids[] = {
        PGW_OID_NAME, PGW_OID_TEXT, PGW_OID_TEXT, PGW_OID_BOOL, PGW_OID_NAME, 18, 18};
    srv_result *r = srv_result_new(7, names, oids);
    relation rel;
    if (!r || !relation_by_oid(db, norm, "a.attrelid =", &rel, err)) {
        if (r) srv_result_finish(r);
        return r;
    }
    if (rel.is_view) return view_columns(db, &rel, r, err);
    char *ddl = NULL;
    rackdb_error *e = NULL;
    if (rackdb_schema(db, rel.name, &ddl, &e) != RACKDB_OK) {
        *err = sto_error(rackdb_error_sqlstate(e), "%s", rackdb_error_message(e));
        rackdb_error_free(e);
        srv_result_free(r);
        return NULL;
    }
    /* column lines sit between the first "(\n" and the closing ");" */
    const char *p = strstr(ddl, "(\n");
    p = p ? p + 2 : ddl + strlen(ddl);
    while (*p && *p != ')') {
        const char *eol = strchr(p, '\n');
        if (!eol) break;
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)(eol - p), p);
        p = eol + 1;
        char *s = line;
        while (*s == ' ')
            s++;
        size_t len = strlen(s);
        if (len && s[len - 1] == ',') s[--len] = '\0';
        char name[256], type[128], pgtype[160];
        if (*s == '"') { /* a quoted name, "" inside */
            size_t k = 0;
            for (s++; *s && k + 1 < sizeof(name); s++) {
                if (*s == '"' && s[1] != '"') break;
                if (*s == '"') s++;
                name[k++] = *s;
            }
            name[k] = '\0';
            if (*s == '"') s++;
        } else {
            size_t k = strcspn(s, " ");
            snprintf(name, sizeof(name), "%.*s", (int)k, s);
            s += k;
        }
        while (*s == ' ')
            s++;
        const char *nn = strstr(s, " NOT NULL");
        size_t tlen = nn ? (size_t)(nn - s) : strlen(s);
        snprintf(type, sizeof(type), "%.*s", (int)tlen, s);
        pg_type_name(type, pgtype, sizeof(pgtype));
        const char *row[] = {name, pgtype, NULL, nn ? "t" : "f", NULL, "", ""};
        if (!srv_result_add_row(r, row)) {
            srv_result_free(r);
            r = NULL;
            break;
        }
        if (*p == ')') break;
    }
    rackdb_free(ddl);
    if (r) srv_result_finish(r);
    return r;
}

/* \l: every database name a client connects with reaches the same
 * instance, so the list is the one it asked for. */
static srv_result *answer_databases(srv_client_info *info)
{
    static const char *const names[] = {
        "Name",  "Owner",      "Encoding",        "Collate",
        "Ctype", "ICU Locale", "Locale Provider", "Access privileges"};
    static const uint32_t oids[] = {PGW_OID_NAME, PGW_OID_NAME, PGW_OID_NAME, PGW_OID_NAME,
                                    PGW_OID_NAME, PGW_OID_TEXT, PGW_OID_TEXT, PGW_OID_TEXT};
    const char *row[] = {info->database, info->user, "UTF8", "C", "C", NULL, "libc", NULL};
    srv_result *r = srv_result_new(8, names, oids);
    if (r && !srv_result_add_row(r, row)) {
        srv_result_free(r);
        return NULL;
    }
    if (r) srv_result_finish(r);
    return r;
}

/* An empty result with ncols unnamed text columns: what psql's follow-up
 * queries (policies, statistics, publications, inheritance) get, as
 * rackdb has none of those. */
static srv_result *empty_result(uint32_t ncols)
{
    static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
    static const uint32_t oids[] = {25, 25, 25, 25, 25, 25, 25, 25, 25};
    srv_result *r = srv_result_new(ncols, names, oids);
    if (r) srv_result_finish(r);
    return r;
}

/* Every shape answered here starts with SELECT, SHOW or SET and is a few
 * KB at most (psql's longest is under 2 KB): anything else goes to the
 * engine without being copied and lowercased first, which matters for a
 * multi-megabyte INSERT. */
#define CATALOG_MAX_TEXT 16384

static bool may_be_catalog(const char *stmt)
{
    while (isspace((unsigned char)*stmt))
        stmt++;
    size_t n = 0;
    while (isalpha((unsigned char)stmt[n]))
        n++;
    bool word = (n == 6 && !strncasecmp(stmt, "select", 6)) ||
                (n == 4 && !strncasecmp(stmt, "show", 4)) ||
                (n == 3 && !strncasecmp(stmt, "set", 3));
    return word && strnlen(stmt, CATALOG_MAX_TEXT + 1) <= CATALOG_MAX_TEXT;
}

bool srv_catalog_answer(rackdb *db, srv_client_info *info, const char *stmt, srv_result **out,
                        sto_status *err, pgw_buf *notices)
{
    *out = NULL;
    if (!may_be_catalog(stmt)) return false;
    char *norm = normalize(stmt);
    if (!norm) {
        *err = sto_error_oom();
        return true;
    }
    bool handled = true;
    char version[128];
    if (!strcmp(norm, "select version()") || !strcmp(norm, "select pg_catalog.version()")) {
        snprintf(version, sizeof(version),
                 "PostgreSQL " SRV_SERVER_VERSION " (rackdb %s) on x86_64-pc-linux-gnu, 64-bit",
                 rackdb_version());
        *out = one_value("version", PGW_OID_TEXT, version);
    } else if (!strcmp(norm, "select current_schema()") || !strcmp(norm, "select current_schema") ||
               !strcmp(norm, "select pg_catalog.current_schema()")) {
        *out = one_value("current_schema", PGW_OID_NAME, "public");
    } else if (!strcmp(norm, "select current_database()") ||
               !strcmp(norm, "select pg_catalog.current_database()")) {
        *out = one_value("current_database", PGW_OID_NAME, info->database);
    } else if (!strcmp(norm, "select current_user") || !strcmp(norm, "select session_user") ||
               !strcmp(norm, "select user")) {
        *out = one_value(norm + 7, PGW_OID_NAME, info->user);
    } else if (starts(norm, "show ") && !strchr(norm + 5, ' ')) {
        *out = answer_show(info, norm + 5);
        handled = *out != NULL;
    } else if (starts(norm, "set ")) {
        handled = answer_set(info, norm, stmt, out, err, notices);
    } else if (starts(norm,
                      "select n.nspname as \"Schema\", c.relname as \"Name\", case c.relkind") &&
               strstr(norm, "from pg_catalog.pg_class c")) {
        *out = answer_list(db, info, norm, err);
    } else if (starts(norm, "select c.oid, n.nspname, c.relname from pg_catalog.pg_class c")) {
        *out = answer_lookup(db, norm, err);
    } else if (starts(norm, "select c.relchecks, c.relkind, c.relhasindex,")) {
        *out = answer_relinfo(db, norm, err);
    } else if (starts(norm, "select a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),")) {
        *out = answer_columns(db, norm, err);
    } else if (starts(norm, "select d.datname as \"Name\", pg_catalog.pg_get_userbyid(d.datdba) as "
                            "\"Owner\",")) {
        *out = answer_databases(info);
    } else if (starts(norm,
                      "select n.nspname as \"Name\", pg_catalog.pg_get_userbyid(n.nspowner) as "
                      "\"Owner\" from pg_catalog.pg_namespace n")) {
        static const char *const names[] = {"Name", "Owner"};
        static const uint32_t oids[] = {PGW_OID_NAME, PGW_OID_NAME};
        const char *row[] = {"public", info->user};
        *out = srv_result_new(2, names, oids);
        if (*out && !srv_result_add_row(*out, row)) srv_result_free(*out), *out = NULL;
        if (*out) srv_result_finish(*out);
    } else if (starts(norm, "select n.nspname as \"Schema\", p.proname as \"Name\", "
                            "pg_catalog.pg_get_function_result(p.oid)") &&
               strstr(norm, "from pg_catalog.pg_proc p")) {
        /* \df lists user-defined functions; rackdb's are all built in, as
         * pg_catalog's are in PostgreSQL, which \df leaves out too (with a
         * pattern PostgreSQL would list matching built-ins; we list none) */
        static const char *const names[] = {"Schema", "Name", "Result data type",
                                            "Argument data types", "Type"};
        static const uint32_t oids[] = {PGW_OID_NAME, PGW_OID_NAME, 25, 25, 25};
        *out = srv_result_new(5, names, oids);
        if (*out) srv_result_finish(*out);
    } else if (starts(norm, "select pol.polname, pol.polpermissive,")) {
        *out = empty_result(6);
    } else if (starts(norm, "select oid, stxrelid::pg_catalog.regclass,")) {
        *out = empty_result(9);
    } else if (starts(norm, "select pubname ,") || starts(norm, "select pubname,")) {
        *out = empty_result(3);
    } else if (starts(norm, "select c.oid::pg_catalog.regclass from pg_catalog.pg_class c, "
                            "pg_catalog.pg_inherits i")) {
        *out = empty_result(1);
    } else if (starts(norm, "select c.oid::pg_catalog.regclass, c.relkind, inhdetachpending,")) {
        *out = empty_result(4);
    } else {
        handled = false;
    }
    free(norm);
    if (handled && !*out && !*err) *err = sto_error_oom();
    return handled;
}
