/*
 * values.h — PostgreSQL's binary wire formats for the types rackdb speaks.
 *
 * Parameters may arrive in binary; rackdb binds parameters as SQL literals,
 * so binary values are first turned into their text form here. Results are
 * produced as text (PostgreSQL's output format); a client that asks for
 * binary result columns gets them re-encoded here. Supported: bool, int2,
 * int4, int8, oid, float4, float8, numeric, date, and the string types
 * (text, varchar, bpchar, name, unknown), whose binary form is their text.
 */
#ifndef RACKDB_NET_PGWIRE_VALUES_H
#define RACKDB_NET_PGWIRE_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/pgwire/protocol.h"
#include "storage/status.h"

/* True when oid has a binary format implemented here. */
bool pgw_binary_supported(uint32_t oid);

/* Appends the text form of a binary value of type oid (no NUL). A value of
 * the wrong size or with invalid content is 22P03 (invalid binary
 * representation, reported as 22P02 here for lack of a separate code). */
sto_status pgw_binary_to_text(uint32_t oid, const char *data, size_t len, pgw_buf *out);

/* Appends the binary form of the text value `text` of type oid. */
sto_status pgw_text_to_binary(uint32_t oid, const char *text, pgw_buf *out);

#endif
