/*
 * params.h — binding $n parameters of the extended query protocol.
 *
 * rackdb's public API runs SQL text, so a bound statement is the prepared
 * text with every $n outside strings, quoted identifiers and comments
 * replaced by a literal of the parameter's type. The value is validated
 * against that type first and strings are quoted by doubling their single
 * quotes (standard_conforming_strings is on: a backslash is an ordinary
 * character), so a parameter can never change the statement's structure.
 * Parameters whose type the client left unspecified become string literals,
 * whose type the engine infers from their context like PostgreSQL's
 * "unknown" literals.
 */
#ifndef RACKDB_NET_PGWIRE_PARAMS_H
#define RACKDB_NET_PGWIRE_PARAMS_H

#include <stdint.h>

#include "storage/status.h"

/* The highest n of a $n in sql (0 when there is none). */
int pgw_param_max(const char *sql);

/* One value in text form (NULL = SQL NULL) with its type OID (0 = unknown). */
typedef struct pgw_param {
    const char *text;
    uint32_t oid;
} pgw_param;

/* *out (malloc'd) = sql with $1..$n replaced; a $k with k > n is 08P01. */
sto_status pgw_substitute(const char *sql, int n, const pgw_param *params, char **out);

#endif
