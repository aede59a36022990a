/*
 * rt.h — the C runtime that generated expression code calls by address.
 *
 * The expression compiler (codegen/expr.h) inlines everything that pays for
 * inlining; the rest lives here: work on string bytes that is too long or too
 * irregular for inline IR (a LIKE pattern with '_', memmem for '%x%'), the
 * building of new strings, and conversions between text and other types.
 * Generated code passes strings as pointers to sto_str values it spilled to
 * its stack; results come back through an out pointer.
 *
 * Helpers that can fail follow ir.h's protocol: they return an int32_t
 * cg_error_kind and leave an sto_status with PostgreSQL's message in
 * err->detail (the generated code records the row and returns the kind).
 *
 * New strings longer than STO_STR_INLINE_MAX bytes go into a cg_rt_strings
 * arena: one per worker, owned by whoever runs the generated code, reset
 * when the strings made for a morsel are no longer needed. Strings of up to
 * 12 bytes are stored inline and need no arena.
 *
 * Text is UTF-8 and characters are counted as PostgreSQL counts them in a
 * UTF8 database: SUBSTRING, LENGTH, LIKE's '_' and casts to CHAR(n)/
 * VARCHAR(n) work on characters. Each first checks whether the bytes it
 * looks at are ASCII (8 at a time), where characters are bytes, so ASCII
 * text (all of TPC-H) pays only that check. UPPER/LOWER change ASCII
 * letters only.
 */
#ifndef RACKDB_CODEGEN_RT_H
#define RACKDB_CODEGEN_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/ir.h"
#include "storage/types.h"

/* --- the string arena ------------------------------------------------------ */

typedef struct cg_rt_block cg_rt_block;

typedef struct cg_rt_strings {
    cg_rt_block *blocks; /* newest first */
    char *cur, *end;     /* free space in the newest block */
    size_t used;         /* bytes handed out since the last reset */
} cg_rt_strings;

void cg_rt_strings_init(cg_rt_strings *a);
/* Forgets every string made so far, keeping one block for reuse. */
void cg_rt_strings_reset(cg_rt_strings *a);
void cg_rt_strings_free(cg_rt_strings *a);
/* n bytes of space; NULL when memory is short. */
char *cg_rt_strings_alloc(cg_rt_strings *a, size_t n);

/* --- strings ---------------------------------------------------------------- */

/* memcmp order, shorter first on a tie: -1, 0, 1. */
int32_t cg_rt_str_cmp(const sto_str *a, const sto_str *b);
/* 1 when the n bytes at a and b are equal, else 0. */
int32_t cg_rt_mem_eq(const char *a, const char *b, uint64_t n);
/* Offset of the first occurrence of needle in hay, -1 if none. */
int64_t cg_rt_find(const char *hay, uint64_t hay_len, const char *needle, uint64_t needle_len);
/* The key hash of len bytes (only used for strings longer than 12 bytes). */
uint64_t cg_rt_hash_bytes(const char *p, uint64_t len);

/* s LIKE pattern (ILIKE when case_insensitive: ASCII folding). escape NULL
 * means the default backslash; an empty escape disables escaping. *out is
 * 0/1. Errors: a pattern ending in the escape character, an escape longer
 * than one byte (22025). */
int32_t cg_rt_like(cg_error *err, const sto_str *s, const sto_str *pattern, const sto_str *escape,
                   int32_t case_insensitive, uint8_t *out);

/* SUBSTRING(s FROM start [FOR count]) in characters, with PostgreSQL's rules
 * for starts before 1 and counts past the end (has_count 0: to the end). The
 * result points into s's bytes or is inline. A negative count is an error. */
int32_t cg_rt_substr(cg_error *err, const sto_str *s, int64_t start, int64_t count,
                     int32_t has_count, sto_str *out);

/* LENGTH(s): its UTF-8 characters. */
int32_t cg_rt_char_length(const sto_str *s);

/* a || b. */
int32_t cg_rt_concat(cg_error *err, cg_rt_strings *arena, const sto_str *a, const sto_str *b,
                     sto_str *out);

/* UPPER(s) (upper != 0) or LOWER(s), ASCII letters only. */
int32_t cg_rt_change_case(cg_error *err, cg_rt_strings *arena, const sto_str *s, int32_t upper,
                          sto_str *out);

/* STRPOS(s, sub) = POSITION(sub IN s): the 1-based character position of
 * sub's first occurrence in s, 0 when there is none (1 for an empty sub). */
int32_t cg_rt_strpos(const sto_str *s, const sto_str *sub);

/* BTRIM/LTRIM/RTRIM(s [, chars]): s without the leading and/or trailing
 * characters (UTF-8) that occur in chars (NULL: the blank). Points into s's
 * bytes or is inline. */
enum { CG_TRIM_LEADING = 1, CG_TRIM_TRAILING = 2, CG_TRIM_BOTH = 3 };
int32_t cg_rt_trim(cg_error *err, const sto_str *s, const sto_str *chars, int32_t sides,
                   sto_str *out);

/* REPLACE(s, from, to): every non-overlapping occurrence of from, left to
 * right, replaced by to; an empty from changes nothing. */
int32_t cg_rt_replace(cg_error *err, cg_rt_strings *arena, const sto_str *s, const sto_str *from,
                      const sto_str *to, sto_str *out);

/* LEFT(s, n) / RIGHT(s, n) (right != 0): the first / last n characters, or
 * for a negative n all but the last / first -n. Points into s's bytes. */
int32_t cg_rt_left_right(cg_error *err, const sto_str *s, int64_t n, int32_t right, sto_str *out);

/* s cut to max_chars UTF-8 characters (an explicit cast to CHAR(n) or
 * VARCHAR(n)); is_char also drops trailing blanks, as CHAR values are stored.
 * No allocation: the result points into s's bytes or is inline. */
void cg_rt_str_truncate(const sto_str *s, uint32_t max_chars, int32_t is_char, sto_str *out);

/* SQRT, POWER, EXP, LN, LOG (base 10) of DOUBLE values (b: POWER's
 * exponent), with PostgreSQL's domain and range errors (rt_math.c). */
enum { CG_MATH_SQRT, CG_MATH_POWER, CG_MATH_EXP, CG_MATH_LN, CG_MATH_LOG10 };
int32_t cg_rt_math(cg_error *err, int32_t op, double a, double b, double *out);

/* --- conversions from text (casts; surrounding blanks are ignored) --------- */

/* type_id: STO_TYPE_INTEGER or STO_TYPE_BIGINT (its range and its name in
 * messages). */
int32_t cg_rt_str_to_int(cg_error *err, const sto_str *s, int32_t type_id, int64_t *out);
int32_t cg_rt_str_to_decimal(cg_error *err, const sto_str *s, int32_t precision, int32_t scale,
                             int64_t *out);
int32_t cg_rt_str_to_double(cg_error *err, const sto_str *s, double *out);
int32_t cg_rt_str_to_date(cg_error *err, const sto_str *s, int32_t *out);
int32_t cg_rt_str_to_bool(cg_error *err, const sto_str *s, uint8_t *out);

/* --- conversions to text ------------------------------------------------------ */

int32_t cg_rt_int_to_str(cg_error *err, cg_rt_strings *arena, int64_t v, sto_str *out);
int32_t cg_rt_decimal_to_str(cg_error *err, cg_rt_strings *arena, int64_t v, int32_t scale,
                             sto_str *out);
/* PostgreSQL's float8 output: shortest exact digits, exponent form below
 * 1e-4 and from 1e15; NaN, Infinity, -Infinity. */
int32_t cg_rt_double_to_str(cg_error *err, cg_rt_strings *arena, double v, sto_str *out);
/* "YYYY-MM-DD", always inline. */
void cg_rt_date_to_str(int32_t days, sto_str *out);

/* --- numbers ----------------------------------------------------------------- */

/* A DOUBLE as DECIMAL(precision, scale) the way PostgreSQL converts float8 to
 * numeric: through its 15 significant digits, rounded half away from zero. */
int32_t cg_rt_double_to_decimal(cg_error *err, double v, int32_t precision, int32_t scale,
                                int64_t *out);
/* round(x, n) for DOUBLE: x rounded to n decimal places (half to even, like
 * rint, which PostgreSQL uses for float8). */
double cg_rt_round_double(double x, int32_t n);
/* round(x, n) for integers with n < 0 (to tens, hundreds, ...), half away
 * from zero; type_id names the type in an overflow error. */
int32_t cg_rt_round_int(cg_error *err, int64_t x, int32_t n, int32_t type_id, int64_t *out);

#endif
