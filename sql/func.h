/*
 * func.h — the scalar functions and aggregates rackdb knows, listed once.
 *
 * SQL_FUNC_LIST is every scalar function a bound expression may call: the
 * ones users write by name (coalesce, substring, ...) and the ones the binder
 * makes from special syntax (LIKE, EXTRACT, date arithmetic). The binder
 * (argument checks and result types, sql/bind_func.c), the printer, the code
 * generator and the tests expand this list; adding a function is one line
 * here plus its typing rule and its run-time code.
 *
 * SQL_AGG_LIST is the same for aggregates.
 */
#ifndef RACKDB_SQL_FUNC_H
#define RACKDB_SQL_FUNC_H

#include <stdbool.h>

/*  id              name           by name  min max args
 *  name is what SQL spells (for callable ones) and what the printer shows.
 *  max -1: variadic. Internal ones (by name = false) come from syntax:
 *    LIKE family      a [NOT] [I]LIKE p [ESCAPE e]      (a, p[, e])
 *    EXTRACT_*        EXTRACT(field FROM d)             (d); in the order of
 *                     SQL_DATE_FIELD_LIST (sql_func_extract)
 *    DATE_ADD_DAYS    date + integer, date + INTERVAL 'n' DAY   (d, n)
 *    DATE_SUB_DAYS    date - integer, date - INTERVAL 'n' DAY   (d, n)
 *    DATE_ADD_MONTHS  date ± INTERVAL 'n' MONTH|YEAR (n in months, negated
 *                     for '-'); the day is clamped to the month's end
 *    DATE_DIFF_DAYS   date - date → INTEGER days
 *  POSITION(sub IN s) is position(s, sub) = strpos(s, sub); TRIM([BOTH|LEADING|TRAILING]
 *  [chars] FROM s) is btrim/ltrim/rtrim(s [, chars]); mod(a, b) binds to
 *  the % operator. */
#define SQL_FUNC_LIST(X)                                                                           \
    X(COALESCE, "coalesce", true, 1, -1)                                                           \
    X(NULLIF, "nullif", true, 2, 2)                                                                \
    X(SUBSTRING, "substring", true, 2, 3)                                                          \
    X(ABS, "abs", true, 1, 1)                                                                      \
    X(ROUND, "round", true, 1, 2)                                                                  \
    X(UPPER, "upper", true, 1, 1)                                                                  \
    X(LOWER, "lower", true, 1, 1)                                                                  \
    X(LENGTH, "length", true, 1, 1)                                                                \
    X(LIKE, "like", false, 2, 3)                                                                   \
    X(NOT_LIKE, "not like", false, 2, 3)                                                           \
    X(ILIKE, "ilike", false, 2, 3)                                                                 \
    X(NOT_ILIKE, "not ilike", false, 2, 3)                                                         \
    X(EXTRACT_YEAR, "extract year", false, 1, 1)                                                   \
    X(EXTRACT_MONTH, "extract month", false, 1, 1)                                                 \
    X(EXTRACT_DAY, "extract day", false, 1, 1)                                                     \
    X(EXTRACT_QUARTER, "extract quarter", false, 1, 1)                                             \
    X(EXTRACT_WEEK, "extract week", false, 1, 1)                                                   \
    X(EXTRACT_DOW, "extract dow", false, 1, 1)                                                     \
    X(EXTRACT_ISODOW, "extract isodow", false, 1, 1)                                               \
    X(EXTRACT_DOY, "extract doy", false, 1, 1)                                                     \
    X(EXTRACT_ISOYEAR, "extract isoyear", false, 1, 1)                                             \
    X(DATE_ADD_DAYS, "date_add_days", false, 2, 2)                                                 \
    X(DATE_SUB_DAYS, "date_sub_days", false, 2, 2)                                                 \
    X(DATE_ADD_MONTHS, "date_add_months", false, 2, 2)                                             \
    X(DATE_DIFF_DAYS, "date_diff_days", false, 2, 2)                                               \
    X(STRPOS, "strpos", true, 2, 2)                                                                \
    X(BTRIM, "btrim", true, 1, 2)                                                                  \
    X(LTRIM, "ltrim", true, 1, 2)                                                                  \
    X(RTRIM, "rtrim", true, 1, 2)                                                                  \
    X(REPLACE, "replace", true, 3, 3)                                                              \
    X(LEFT, "left", true, 2, 2)                                                                    \
    X(RIGHT, "right", true, 2, 2)                                                                  \
    X(GREATEST, "greatest", true, 1, -1)                                                           \
    X(LEAST, "least", true, 1, -1)                                                                 \
    X(FLOOR, "floor", true, 1, 1)                                                                  \
    X(CEIL, "ceil", true, 1, 1)                                                                    \
    X(MOD, "mod", true, 2, 2)                                                                      \
    X(SIGN, "sign", true, 1, 1)                                                                    \
    X(SQRT, "sqrt", true, 1, 1)                                                                    \
    X(POWER, "power", true, 2, 2)                                                                  \
    X(EXP, "exp", true, 1, 1)                                                                      \
    X(LN, "ln", true, 1, 1)                                                                        \
    X(LOG, "log", true, 1, 1)                                                                      \
    X(PI, "pi", true, 0, 0)                                                                        \
    X(OCTET_LENGTH, "octet_length", true, 1, 1)

typedef enum sql_func {
#define SQL_FUNC_ENUM(id, name, by_name, min_args, max_args) SQL_FUNC_##id,
    SQL_FUNC_LIST(SQL_FUNC_ENUM)
#undef SQL_FUNC_ENUM
        SQL_FUNC_COUNT
} sql_func;

/*  id          name     */
#define SQL_AGG_LIST(X)                                                                            \
    X(COUNT_STAR, "count")                                                                         \
    X(COUNT, "count")                                                                              \
    X(SUM, "sum")                                                                                  \
    X(AVG, "avg")                                                                                  \
    X(MIN, "min")                                                                                  \
    X(MAX, "max")

typedef enum sql_agg {
#define SQL_AGG_ENUM(id, name) SQL_AGG_##id,
    SQL_AGG_LIST(SQL_AGG_ENUM)
#undef SQL_AGG_ENUM
        SQL_AGG_COUNT_
} sql_agg;

/* COALESCE, GREATEST and LEAST skip NULL arguments: not strict, and NULL
 * only when every argument is. */
static inline bool sql_func_skips_nulls(sql_func f)
{
    return f == SQL_FUNC_COALESCE || f == SQL_FUNC_GREATEST || f == SQL_FUNC_LEAST;
}

/* EXTRACT(field FROM d)'s function, and whether f is one. */
static inline sql_func sql_func_extract(int date_field)
{
    return (sql_func)(SQL_FUNC_EXTRACT_YEAR + date_field);
}
static inline bool sql_func_is_extract(sql_func f)
{
    return f >= SQL_FUNC_EXTRACT_YEAR && f <= SQL_FUNC_EXTRACT_ISOYEAR;
}

/* "coalesce", "like", ... */
const char *sql_func_name(sql_func f);
int sql_func_min_args(sql_func f);
int sql_func_max_args(sql_func f); /* -1: variadic */

/* The function users call by this (lowercased) name; false when there is
 * none. Internal functions are never found. Other names: substr
 * (substring), ceiling (ceil), position (strpos), pow (power), log10 (log),
 * char_length and character_length (length). */
bool sql_func_lookup(const char *name, sql_func *out);

/* "sum", "count", ... */
const char *sql_agg_name(sql_agg a);

/* The aggregate of that name (count → COUNT; count(*) is the caller's
 * business); false when name is not an aggregate. */
bool sql_agg_lookup(const char *name, sql_agg *out);

#endif
