/*
 * types.h — rackdb's SQL types, defined once.
 *
 * STO_TYPE_LIST is the single list of value types. Storage (column widths),
 * the binder (names, casts), the code generator (LLVM types), the printers
 * and the wire protocol (PostgreSQL OIDs) all expand it, so adding a type is
 * one line here plus its cases where behaviour differs.
 *
 * Representation in columns and in generated code:
 *   BOOLEAN    uint8_t 0/1
 *   INTEGER    int32_t
 *   BIGINT     int64_t
 *   DECIMAL    int64_t scaled by 10^scale, precision <= 18 (int128 in sums)
 *   DOUBLE     double
 *   DATE       int32_t days since 1970-01-01
 *   CHAR(n)    sto_str; trailing blanks are not stored, so CHAR values compare
 *   VARCHAR(n) sto_str   as plain bytes (PostgreSQL's bpchar semantics)
 * NULLs live in per-column validity bitmaps, never in the values.
 */
#ifndef RACKDB_STORAGE_TYPES_H
#define RACKDB_STORAGE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "storage/status.h"

/* A 16-byte string reference. Strings of up to 12 bytes live inside it
 * (prefix + rest); longer ones point to their bytes elsewhere (a string heap
 * owned by the chunk or the query), and prefix repeats their first 4 bytes so
 * most comparisons never follow the pointer. */
typedef struct sto_str {
    uint32_t len;
    char prefix[4];
    union {
        char rest[8];
        const char *ptr;
    } u;
} sto_str;

#define STO_STR_INLINE_MAX 12

/*  id       SQL name   C type  bytes  PostgreSQL type OID and name (messages) */
#define STO_TYPE_LIST(X)                                                                           \
    X(BOOLEAN, "BOOLEAN", uint8_t, 1, 16, "boolean")                                               \
    X(INTEGER, "INTEGER", int32_t, 4, 23, "integer")                                               \
    X(BIGINT, "BIGINT", int64_t, 8, 20, "bigint")                                                  \
    X(DECIMAL, "DECIMAL", int64_t, 8, 1700, "numeric")                                             \
    X(DOUBLE, "DOUBLE", double, 8, 701, "double precision")                                        \
    X(DATE, "DATE", int32_t, 4, 1082, "date")                                                      \
    X(CHAR, "CHAR", sto_str, 16, 1042, "character")                                                \
    X(VARCHAR, "VARCHAR", sto_str, 16, 1043, "character varying")

typedef enum sto_type_id {
#define STO_TYPE_ENUM(id, name, ctype, bytes, oid, pgname) STO_TYPE_##id,
    STO_TYPE_LIST(STO_TYPE_ENUM)
#undef STO_TYPE_ENUM
        STO_TYPE_COUNT
} sto_type_id;

/* A full type: the id plus its parameters. */
typedef struct sto_type {
    uint8_t id;        /* sto_type_id */
    uint8_t precision; /* DECIMAL: 1..18 */
    uint8_t scale;     /* DECIMAL: 0..precision */
    uint32_t length;   /* CHAR/VARCHAR: maximum characters, 0 = unbounded */
} sto_type;

#define STO_DECIMAL_MAX_PRECISION 18

/* Bytes one value occupies in a column array. */
size_t sto_type_width(sto_type_id id);

/* SQL name of a type id ("DECIMAL"). */
const char *sto_type_id_name(sto_type_id id);

/* PostgreSQL type OID for the wire protocol. */
uint32_t sto_type_pg_oid(sto_type_id id);

/* PostgreSQL's name of a type, as its messages spell it ("numeric",
 * "character varying"). */
const char *sto_type_pg_name(sto_type_id id);

/* 10^0 .. 10^18: DECIMAL scaling everywhere (parsers, casts, printers). */
extern const int64_t sto_pow10[19];

/* Full SQL spelling of a type into buf ("DECIMAL(15,2)", "CHAR(25)"). */
void sto_type_format(sto_type t, char *buf, size_t size);

/* Constructors. */
static inline sto_type sto_type_make(sto_type_id id)
{
    sto_type t = {(uint8_t)id, 0, 0, 0};
    return t;
}
static inline sto_type sto_type_decimal(int precision, int scale)
{
    sto_type t = {STO_TYPE_DECIMAL, (uint8_t)precision, (uint8_t)scale, 0};
    return t;
}
static inline sto_type sto_type_string(sto_type_id id, uint32_t length)
{
    sto_type t = {(uint8_t)id, 0, 0, length};
    return t;
}

/* --- strings ------------------------------------------------------------- */

/* CHAR and VARCHAR: the types whose values are sto_str references. */
static inline bool sto_type_is_string(sto_type_id id)
{
    return id == STO_TYPE_CHAR || id == STO_TYPE_VARCHAR;
}

/* Bytes of a string reference (inline or pointed-to). Not NUL-terminated. */
static inline const char *sto_str_data(const sto_str *s)
{
    return s->len <= STO_STR_INLINE_MAX ? s->prefix : s->u.ptr;
}

/* A reference to bytes that outlive it (copied inline when short). */
static inline sto_str sto_str_make(const char *bytes, uint32_t len)
{
    sto_str s;
    memset(&s, 0, sizeof(s));
    s.len = len;
    if (len <= STO_STR_INLINE_MAX) {
        memcpy(s.prefix, bytes, len);
    } else {
        memcpy(s.prefix, bytes, 4);
        s.u.ptr = bytes;
    }
    return s;
}

static inline bool sto_str_eq(const sto_str *a, const sto_str *b)
{
    if (a->len != b->len || memcmp(a->prefix, b->prefix, 4) != 0) return false;
    return memcmp(sto_str_data(a), sto_str_data(b), a->len) == 0;
}

/* memcmp order, shorter first on a tie: <0, 0, >0. */
int sto_str_cmp(const sto_str *a, const sto_str *b);

/* --- dates --------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date. */
int32_t sto_date_from_ymd(int year, int month, int day);
void sto_date_to_ymd(int32_t days, int *year, int *month, int *day);

/* Parses exactly "YYYY-MM-DD" (len bytes); false when malformed or invalid. */
bool sto_date_parse(const char *s, size_t len, int32_t *out);

/* Writes "YYYY-MM-DD" and a NUL; returns 10. buf needs 11 bytes. */
int sto_date_format(int32_t days, char *buf);

/* --- decimals ------------------------------------------------------------ */

typedef enum sto_parse_result {
    STO_PARSE_OK,
    STO_PARSE_INVALID,      /* not a number */
    STO_PARSE_OUT_OF_RANGE, /* a number that does not fit */
} sto_parse_result;

/* Parses "[-+]digits[.digits][e[-+]digits]" (the whole text: callers strip
 * surrounding blanks) into a value scaled by 10^scale that must fit in
 * precision digits. Extra fraction digits are rounded half away from 0. */
sto_parse_result sto_decimal_parse(const char *s, size_t len, int precision, int scale,
                                   int64_t *out);

/* Writes the scaled value with exactly `scale` fraction digits and a NUL;
 * returns the length. buf needs 22 bytes. */
int sto_decimal_format(int64_t value, int scale, char *buf);

/* Parses a whole number that must fit in [min, max]. */
sto_parse_result sto_int_parse(const char *s, size_t len, int64_t min, int64_t max, int64_t *out);

/* Parses a floating-point number (strtod syntax, whole field). */
sto_parse_result sto_double_parse(const char *s, size_t len, double *out);

#endif
