/*
 * protocol.h — the PostgreSQL frontend/backend protocol v3 as pure functions
 * over byte buffers: framing, decoding what a client sends, encoding what a
 * server answers. Nothing here touches sockets or the engine.
 *
 * Data flow: the server reads bytes from a socket into its own buffer and
 * asks pgw_frame whether a whole message is there (and whether its length is
 * sane). A complete message body goes to the pgw_read_* decoder for its type,
 * which checks every length and terminator and fills a small struct whose
 * strings point into the body (the body must stay alive while the struct is
 * used). Answers are appended to a pgw_buf with the pgw_put_* builders, each
 * writing one complete message, and the server sends the buffer when it
 * must (before waiting for input, or when it grows large).
 *
 * Malformed input is an error value with SQLSTATE 08P01; the server then
 * closes that one connection.
 */
#ifndef RACKDB_NET_PGWIRE_PROTOCOL_H
#define RACKDB_NET_PGWIRE_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/status.h"

/* Protocol codes found where a startup packet's version goes. */
#define PGW_PROTOCOL_V3     196608u   /* 3.0 */
#define PGW_CANCEL_CODE     80877102u /* CancelRequest */
#define PGW_SSL_CODE        80877103u /* SSLRequest */
#define PGW_GSSENC_CODE     80877104u /* GSSENCRequest */
#define PGW_STARTUP_MAX     10000u    /* as PostgreSQL: larger startup packets are refused */
#define PGW_DEFAULT_MAX_MSG (64u << 20)

/* PostgreSQL type OIDs rackdb produces or accepts as parameters. */
#define PGW_OID_BOOL    16u
#define PGW_OID_BYTEA   17u
#define PGW_OID_NAME    19u
#define PGW_OID_INT8    20u
#define PGW_OID_INT2    21u
#define PGW_OID_INT4    23u
#define PGW_OID_TEXT    25u
#define PGW_OID_OID     26u
#define PGW_OID_FLOAT4  700u
#define PGW_OID_FLOAT8  701u
#define PGW_OID_UNKNOWN 705u
#define PGW_OID_BPCHAR  1042u
#define PGW_OID_VARCHAR 1043u
#define PGW_OID_DATE    1082u
#define PGW_OID_NUMERIC 1700u

/* --- output ---------------------------------------------------------------- */

/* A growable byte buffer. After an allocation failure it stops growing and
 * remembers it (oom); pgw_buf_status reports that once at the end, so the
 * builders need no error checks in between. */
typedef struct pgw_buf {
    char *data;
    size_t len, cap;
    bool oom;
} pgw_buf;

void pgw_buf_free(pgw_buf *b);
void pgw_buf_clear(pgw_buf *b); /* len = 0, keeps the memory, clears oom */
sto_status pgw_buf_status(const pgw_buf *b);
void pgw_buf_append(pgw_buf *b, const void *data, size_t len);
void pgw_buf_append_str(pgw_buf *b, const char *s); /* without the NUL */

/* Building one message: begin writes the type byte (0: none, for replies
 * that have none) and a length placeholder; end patches the length. */
size_t pgw_msg_begin(pgw_buf *b, char type);
void pgw_msg_end(pgw_buf *b, size_t start);
void pgw_put_u8(pgw_buf *b, uint8_t v);
void pgw_put_i16(pgw_buf *b, int16_t v);
void pgw_put_i32(pgw_buf *b, int32_t v);
void pgw_put_cstr(pgw_buf *b, const char *s); /* with its NUL */

/* Whole messages. */
void pgw_put_auth_ok(pgw_buf *b);
void pgw_put_auth_sasl(pgw_buf *b, const char *mechanism);
void pgw_put_auth_sasl_continue(pgw_buf *b, const char *data, size_t len);
void pgw_put_auth_sasl_final(pgw_buf *b, const char *data, size_t len);
void pgw_put_parameter_status(pgw_buf *b, const char *name, const char *value);
void pgw_put_backend_key(pgw_buf *b, int32_t pid, int32_t secret);
void pgw_put_ready(pgw_buf *b, char txn_status); /* 'I', 'T' or 'E' */
void pgw_put_command_complete(pgw_buf *b, const char *tag);
void pgw_put_empty_query(pgw_buf *b);
void pgw_put_parse_complete(pgw_buf *b);
void pgw_put_bind_complete(pgw_buf *b);
void pgw_put_close_complete(pgw_buf *b);
void pgw_put_no_data(pgw_buf *b);
void pgw_put_portal_suspended(pgw_buf *b);
void pgw_put_parameter_description(pgw_buf *b, uint16_t n, const uint32_t *oids);

/* One column of a RowDescription. */
typedef struct pgw_field {
    const char *name;
    uint32_t type_oid;
    int16_t type_len; /* -1 variable */
    int32_t typmod;   /* -1 none */
    int16_t format;   /* 0 text, 1 binary */
} pgw_field;
void pgw_put_row_description(pgw_buf *b, uint16_t n, const pgw_field *fields);

/* A DataRow: begin, one pgw_put_value per column (len < 0: NULL), end. */
size_t pgw_data_row_begin(pgw_buf *b, uint16_t ncols);
void pgw_put_value(pgw_buf *b, const char *data, int32_t len);

/* ErrorResponse (notice = false) or NoticeResponse. severity "ERROR",
 * "FATAL", "NOTICE"...; position 1-based, 0 = none. */
void pgw_put_error(pgw_buf *b, bool notice, const char *severity, const char *sqlstate,
                   const char *message, int position);

/* COPY sub-protocol. CopyInResponse 'G' / CopyOutResponse 'H': overall
 * format 0 (text) and ncols column formats, all 0 — rackdb's COPY data is
 * always text (CSV included). CopyData 'd' carries any slice of the data
 * stream (not necessarily whole lines); CopyDone 'c' ends it; CopyFail 'f'
 * (client to server) aborts a COPY FROM STDIN with a message. */
void pgw_put_copy_in_response(pgw_buf *b, uint16_t ncols);
void pgw_put_copy_out_response(pgw_buf *b, uint16_t ncols);
void pgw_put_copy_data(pgw_buf *b, const char *data, size_t len);
void pgw_put_copy_done(pgw_buf *b);
void pgw_put_copy_fail(pgw_buf *b, const char *message);

/* --- input ----------------------------------------------------------------- */

/* Framing of a regular message (type byte + int32 length including itself).
 * PGW_FRAME_OK: the whole message is in data[0, *total). */
typedef enum pgw_frame_result { PGW_FRAME_NEED_MORE, PGW_FRAME_OK, PGW_FRAME_BAD } pgw_frame_result;
pgw_frame_result pgw_frame(const char *data, size_t avail, size_t max_len, size_t *total,
                           sto_status *err);

/* Framing of the first packet (no type byte). */
pgw_frame_result pgw_frame_startup(const char *data, size_t avail, size_t *total, sto_status *err);

/* The first packet of a connection. */
#define PGW_STARTUP_MAX_PARAMS 32
typedef struct pgw_startup {
    uint32_t code; /* PGW_PROTOCOL_V3, PGW_SSL_CODE, PGW_GSSENC_CODE, PGW_CANCEL_CODE */
    int32_t cancel_pid, cancel_key;
    int nparams;
    const char *names[PGW_STARTUP_MAX_PARAMS], *values[PGW_STARTUP_MAX_PARAMS];
} pgw_startup;

/* body = the whole packet including its length word. */
sto_status pgw_read_startup(const char *body, size_t len, pgw_startup *out);
const char *pgw_startup_param(const pgw_startup *s, const char *name); /* NULL if absent */

/* In the decoders below, body/len are the message after type and length. */

sto_status pgw_read_query(const char *body, size_t len, const char **sql);

typedef struct pgw_parse_msg {
    const char *name, *query;
    uint16_t nparams;
    uint32_t *param_oids; /* malloc'd (NULL when nparams == 0) */
} pgw_parse_msg;
sto_status pgw_read_parse(const char *body, size_t len, pgw_parse_msg *out);
void pgw_parse_msg_free(pgw_parse_msg *m);

typedef struct pgw_bind_msg {
    const char *portal, *statement;
    uint16_t nformats;
    int16_t *formats; /* 0 or 1 entries: all params alike; else one each */
    uint16_t nparams;
    const char **values; /* into the body; NULL for SQL NULL */
    int32_t *lengths;
    uint16_t nresult_formats;
    int16_t *result_formats;
} pgw_bind_msg;
sto_status pgw_read_bind(const char *body, size_t len, pgw_bind_msg *out);
void pgw_bind_msg_free(pgw_bind_msg *m);

/* The format code (0 text, 1 binary) for item i given a format list, as
 * Bind defines it: none = all text, one = all alike, else one per item. */
int16_t pgw_format_of(uint16_t nformats, const int16_t *formats, uint32_t i);

/* Describe and Close: kind 'S' (statement) or 'P' (portal) and a name. */
sto_status pgw_read_target(const char *body, size_t len, char *kind, const char **name);

sto_status pgw_read_execute(const char *body, size_t len, const char **portal, int32_t *max_rows);

/* CopyInResponse or CopyOutResponse body: the overall format and the number
 * of columns; every per-column format must equal the overall one. */
sto_status pgw_read_copy_response(const char *body, size_t len, int *format, uint16_t *ncols);

/* CopyFail: the client's message. CopyDone: must be empty. CopyData's body
 * is the data itself. */
sto_status pgw_read_copy_fail(const char *body, size_t len, const char **message);
sto_status pgw_read_copy_done(const char *body, size_t len);

/* SASLInitialResponse: mechanism and client-first-message (may be NULL/0). */
sto_status pgw_read_sasl_initial(const char *body, size_t len, const char **mechanism,
                                 const char **data, size_t *data_len);

#endif
