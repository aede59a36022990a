/*
 * func.c — names and arities of the function and aggregate lists.
 */
#include "sql/func.h"

#include <string.h>

typedef struct func_desc {
    const char *name;
    bool by_name;
    int min_args, max_args;
} func_desc;

static const func_desc funcs[SQL_FUNC_COUNT] = {
#define SQL_FUNC_DESC(id, name, by_name, min_args, max_args) {name, by_name, min_args, max_args},
    SQL_FUNC_LIST(SQL_FUNC_DESC)
#undef SQL_FUNC_DESC
};

static const char *const agg_names[SQL_AGG_COUNT_] = {
#define SQL_AGG_NAME(id, name) name,
    SQL_AGG_LIST(SQL_AGG_NAME)
#undef SQL_AGG_NAME
};

const char *sql_func_name(sql_func f)
{
    return (unsigned)f < SQL_FUNC_COUNT ? funcs[f].name : "?";
}

int sql_func_min_args(sql_func f)
{
    return funcs[f].min_args;
}

int sql_func_max_args(sql_func f)
{
    return funcs[f].max_args;
}

bool sql_func_lookup(const char *name, sql_func *out)
{
    static const char *const aliases[][2] = {
        {"substr", "substring"},
        {"ceiling", "ceil"},
        {"position", "strpos"},
        {"pow", "power"},
        {"log10", "log"},
        {"char_length", "length"},
        {"character_length", "length"},
    };
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(name, aliases[i][0]) == 0) name = aliases[i][1];
    for (int f = 0; f < SQL_FUNC_COUNT; f++) {
        if (funcs[f].by_name && strcmp(funcs[f].name, name) == 0) {
            *out = (sql_func)f;
            return true;
        }
    }
    return false;
}

const char *sql_agg_name(sql_agg a)
{
    return (unsigned)a < SQL_AGG_COUNT_ ? agg_names[a] : "?";
}

bool sql_agg_lookup(const char *name, sql_agg *out)
{
    /* COUNT_STAR shares "count" with COUNT and comes first; skip it. */
    for (int a = SQL_AGG_COUNT; a < SQL_AGG_COUNT_; a++) {
        if (strcmp(agg_names[a], name) == 0) {
            *out = (sql_agg)a;
            return true;
        }
    }
    return false;
}
