/*
 * literal.h — constant values of SQL text, before the expression evaluator.
 *
 * INSERT ... VALUES and SET take constants: literals, a sign in front of a
 * number, and casts of constants ('1998-12-01'::date). eng_const_eval folds
 * such an expression into an eng_const that keeps the literal's own kind
 * (a string stays text until it meets a column type, like PostgreSQL's
 * "unknown" literals); eng_const_assign then converts it to a column's type
 * with PostgreSQL's assignment rules and SQLSTATEs (22P02 bad text, 22003
 * out of range, 22007 bad date, 42804 wrong type). Anything that is not a
 * constant fails with 0A000: general expressions need the JIT evaluator.
 */
#ifndef RACKDB_ENGINE_LITERAL_H
#define RACKDB_ENGINE_LITERAL_H

#include <stdbool.h>
#include <stdint.h>

#include "sql/ast.h"
#include "storage/column.h"
#include "storage/status.h"
#include "storage/types.h"

typedef enum eng_const_kind {
    ENG_CONST_NULL,
    ENG_CONST_BOOL,
    ENG_CONST_INT,     /* i */
    ENG_CONST_NUMERIC, /* text: digits with a point, as written */
    ENG_CONST_FLOAT,   /* text: with an exponent */
    ENG_CONST_STRING,  /* text, len bytes */
    ENG_CONST_DATE,    /* i: days since 1970-01-01 */
} eng_const_kind;

typedef struct eng_const {
    eng_const_kind kind;
    int pos; /* where it was written */
    bool b;
    int64_t i;
    const char *text; /* NUMERIC, FLOAT, STRING: points into the AST or buf */
    uint32_t len;
    char buf[72]; /* text made here (a negated number, a cast) */
} eng_const;

/* Folds a constant expression. Not movable after the call (text may point
 * into buf): evaluate into its final place. */
sto_status eng_const_eval(const sql_expr *e, eng_const *out);

/* Converts to a value of type t. `column` names the target in messages
 * (NULL: "cannot cast" wording). Strings in *out point into c. */
sto_status eng_const_assign(const eng_const *c, sto_type t, const char *column, sto_value *out);

/* The constant as text, for SET ("8", "on", "8GB"); NULL value → "". */
void eng_const_text(const eng_const *c, char *buf, size_t size);

#endif
