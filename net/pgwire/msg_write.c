/*
 * msg_write.c — building the server's protocol messages into a pgw_buf.
 *
 * Every multi-byte integer on the wire is big-endian. A message is a type
 * byte and an int32 length that counts itself and the body but not the type;
 * pgw_msg_begin leaves room for the length and pgw_msg_end fills it in.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/pgwire/protocol.h"

void pgw_buf_free(pgw_buf *b)
{
    free(b->data);
    *b = (pgw_buf){0};
}

void pgw_buf_clear(pgw_buf *b)
{
    b->len = 0;
    b->oom = false;
}

sto_status pgw_buf_status(const pgw_buf *b)
{
    return b->oom ? sto_error(STO_OUT_OF_MEMORY, "out of memory building a protocol message")
                  : STO_OK;
}

static bool reserve(pgw_buf *b, size_t more)
{
    if (b->oom) return false;
    if (b->len + more <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void pgw_buf_append(pgw_buf *b, const void *data, size_t len)
{
    if (!len || !reserve(b, len)) return;
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

void pgw_buf_append_str(pgw_buf *b, const char *s)
{
    pgw_buf_append(b, s, strlen(s));
}

void pgw_put_u8(pgw_buf *b, uint8_t v)
{
    pgw_buf_append(b, &v, 1);
}

void pgw_put_i16(pgw_buf *b, int16_t v)
{
    uint16_t n = htons((uint16_t)v);
    pgw_buf_append(b, &n, 2);
}

void pgw_put_i32(pgw_buf *b, int32_t v)
{
    uint32_t n = htonl((uint32_t)v);
    pgw_buf_append(b, &n, 4);
}

void pgw_put_cstr(pgw_buf *b, const char *s)
{
    pgw_buf_append(b, s, strlen(s) + 1);
}

size_t pgw_msg_begin(pgw_buf *b, char type)
{
    if (type) pgw_put_u8(b, (uint8_t)type);
    size_t start = b->len;
    pgw_put_i32(b, 0);
    return start;
}

void pgw_msg_end(pgw_buf *b, size_t start)
{
    if (b->oom) return;
    uint32_t n = htonl((uint32_t)(b->len - start));
    memcpy(b->data + start, &n, 4);
}

/* A message whose body is one int32 or nothing. */
static void put_simple(pgw_buf *b, char type)
{
    pgw_msg_end(b, pgw_msg_begin(b, type));
}

static void put_auth(pgw_buf *b, int32_t code, const char *data, size_t len)
{
    size_t m = pgw_msg_begin(b, 'R');
    pgw_put_i32(b, code);
    pgw_buf_append(b, data, len);
    pgw_msg_end(b, m);
}

void pgw_put_auth_ok(pgw_buf *b)
{
    put_auth(b, 0, NULL, 0);
}

void pgw_put_auth_sasl(pgw_buf *b, const char *mechanism)
{
    size_t m = pgw_msg_begin(b, 'R');
    pgw_put_i32(b, 10);
    pgw_put_cstr(b, mechanism);
    pgw_put_u8(b, 0); /* end of the list */
    pgw_msg_end(b, m);
}

void pgw_put_auth_sasl_continue(pgw_buf *b, const char *data, size_t len)
{
    put_auth(b, 11, data, len);
}

void pgw_put_auth_sasl_final(pgw_buf *b, const char *data, size_t len)
{
    put_auth(b, 12, data, len);
}

void pgw_put_parameter_status(pgw_buf *b, const char *name, const char *value)
{
    size_t m = pgw_msg_begin(b, 'S');
    pgw_put_cstr(b, name);
    pgw_put_cstr(b, value);
    pgw_msg_end(b, m);
}

void pgw_put_backend_key(pgw_buf *b, int32_t pid, int32_t secret)
{
    size_t m = pgw_msg_begin(b, 'K');
    pgw_put_i32(b, pid);
    pgw_put_i32(b, secret);
    pgw_msg_end(b, m);
}

void pgw_put_ready(pgw_buf *b, char txn_status)
{
    size_t m = pgw_msg_begin(b, 'Z');
    pgw_put_u8(b, (uint8_t)txn_status);
    pgw_msg_end(b, m);
}

void pgw_put_command_complete(pgw_buf *b, const char *tag)
{
    size_t m = pgw_msg_begin(b, 'C');
    pgw_put_cstr(b, tag);
    pgw_msg_end(b, m);
}

void pgw_put_empty_query(pgw_buf *b)
{
    put_simple(b, 'I');
}

void pgw_put_parse_complete(pgw_buf *b)
{
    put_simple(b, '1');
}

void pgw_put_bind_complete(pgw_buf *b)
{
    put_simple(b, '2');
}

void pgw_put_close_complete(pgw_buf *b)
{
    put_simple(b, '3');
}

void pgw_put_no_data(pgw_buf *b)
{
    put_simple(b, 'n');
}

void pgw_put_portal_suspended(pgw_buf *b)
{
    put_simple(b, 's');
}

void pgw_put_parameter_description(pgw_buf *b, uint16_t n, const uint32_t *oids)
{
    size_t m = pgw_msg_begin(b, 't');
    pgw_put_i16(b, (int16_t)n);
    for (uint16_t i = 0; i < n; i++)
        pgw_put_i32(b, (int32_t)oids[i]);
    pgw_msg_end(b, m);
}

void pgw_put_row_description(pgw_buf *b, uint16_t n, const pgw_field *fields)
{
    size_t m = pgw_msg_begin(b, 'T');
    pgw_put_i16(b, (int16_t)n);
    for (uint16_t i = 0; i < n; i++) {
        const pgw_field *f = &fields[i];
        pgw_put_cstr(b, f->name);
        pgw_put_i32(b, 0); /* table OID: not a column of a catalog table */
        pgw_put_i16(b, 0); /* attribute number */
        pgw_put_i32(b, (int32_t)f->type_oid);
        pgw_put_i16(b, f->type_len);
        pgw_put_i32(b, f->typmod);
        pgw_put_i16(b, f->format);
    }
    pgw_msg_end(b, m);
}

size_t pgw_data_row_begin(pgw_buf *b, uint16_t ncols)
{
    size_t m = pgw_msg_begin(b, 'D');
    pgw_put_i16(b, (int16_t)ncols);
    return m;
}

void pgw_put_value(pgw_buf *b, const char *data, int32_t len)
{
    if (len < 0) {
        pgw_put_i32(b, -1);
        return;
    }
    pgw_put_i32(b, len);
    pgw_buf_append(b, data, (size_t)len);
}

static void put_field(pgw_buf *b, char code, const char *value)
{
    pgw_put_u8(b, (uint8_t)code);
    pgw_put_cstr(b, value);
}

void pgw_put_error(pgw_buf *b, bool notice, const char *severity, const char *sqlstate,
                   const char *message, int position)
{
    size_t m = pgw_msg_begin(b, notice ? 'N' : 'E');
    put_field(b, 'S', severity);
    put_field(b, 'V', severity);
    put_field(b, 'C', sqlstate);
    put_field(b, 'M', message);
    if (position > 0) {
        char pos[16];
        snprintf(pos, sizeof(pos), "%d", position);
        put_field(b, 'P', pos);
    }
    pgw_put_u8(b, 0);
    pgw_msg_end(b, m);
}

/* --- COPY -------------------------------------------------------------------------- */

static void put_copy_response(pgw_buf *b, char type, uint16_t ncols)
{
    size_t m = pgw_msg_begin(b, type);
    pgw_put_u8(b, 0);
    pgw_put_i16(b, (int16_t)ncols);
    for (uint16_t i = 0; i < ncols; i++)
        pgw_put_i16(b, 0);
    pgw_msg_end(b, m);
}

void pgw_put_copy_in_response(pgw_buf *b, uint16_t ncols)
{
    put_copy_response(b, 'G', ncols);
}

void pgw_put_copy_out_response(pgw_buf *b, uint16_t ncols)
{
    put_copy_response(b, 'H', ncols);
}

void pgw_put_copy_data(pgw_buf *b, const char *data, size_t len)
{
    size_t m = pgw_msg_begin(b, 'd');
    pgw_buf_append(b, data, len);
    pgw_msg_end(b, m);
}

void pgw_put_copy_done(pgw_buf *b)
{
    put_simple(b, 'c');
}

void pgw_put_copy_fail(pgw_buf *b, const char *message)
{
    size_t m = pgw_msg_begin(b, 'f');
    pgw_put_cstr(b, message);
    pgw_msg_end(b, m);
}
