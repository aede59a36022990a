/*
 * fuzz_pgw.c — libFuzzer target over the pgwire message decoders.
 *
 * The first input byte picks how the rest is read: as a startup packet, or
 * as a stream of regular messages framed and decoded the way the server
 * does (each type to its decoder, SCRAM messages to a SCRAM exchange, Bind
 * values through the binary decoders and $n substitution). Any crash,
 * sanitizer report or leak is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/pgwire/params.h"
#include "net/pgwire/protocol.h"
#include "net/pgwire/scram.h"
#include "net/pgwire/values.h"

static void one_message(char type, const char *body, size_t len)
{
    sto_status st = NULL;
    switch (type) {
    case 'Q': {
        const char *sql;
        st = pgw_read_query(body, len, &sql);
        if (!st) {
            pgw_param p[2] = {{"x'y", 0}, {"12", PGW_OID_INT4}};
            char *out = NULL;
            (void)pgw_param_max(sql);
            sto_status s2 = pgw_substitute(sql, 2, p, &out);
            sto_status_free(s2);
            free(out);
        }
        break;
    }
    case 'P': {
        pgw_parse_msg m;
        st = pgw_read_parse(body, len, &m);
        if (!st) pgw_parse_msg_free(&m);
        break;
    }
    case 'B': {
        pgw_bind_msg m;
        st = pgw_read_bind(body, len, &m);
        if (!st) {
            static const uint32_t oids[] = {PGW_OID_INT4, PGW_OID_INT8,   PGW_OID_NUMERIC,
                                            PGW_OID_DATE, PGW_OID_FLOAT8, PGW_OID_BOOL,
                                            PGW_OID_TEXT, PGW_OID_INT2};
            for (uint16_t i = 0; i < m.nparams; i++) {
                if (!m.values[i]) continue;
                pgw_buf text = {0}, bin = {0};
                uint32_t oid = oids[i % 8];
                sto_status s2 = pgw_binary_to_text(oid, m.values[i], (size_t)m.lengths[i], &text);
                if (!s2) {
                    pgw_buf_append(&text, "", 1);
                    if (!text.oom) s2 = pgw_text_to_binary(oid, text.data, &bin);
                }
                sto_status_free(s2);
                pgw_buf_free(&text);
                pgw_buf_free(&bin);
            }
            pgw_bind_msg_free(&m);
        }
        break;
    }
    case 'D':
    case 'C': {
        char kind;
        const char *name;
        st = pgw_read_target(body, len, &kind, &name);
        break;
    }
    case 'E': {
        const char *portal;
        int32_t max;
        st = pgw_read_execute(body, len, &portal, &max);
        break;
    }
    case 'G':
    case 'H': {
        int format;
        uint16_t ncols;
        st = pgw_read_copy_response(body, len, &format, &ncols);
        break;
    }
    case 'f': {
        const char *message;
        st = pgw_read_copy_fail(body, len, &message);
        break;
    }
    case 'c':
        st = pgw_read_copy_done(body, len);
        break;
    case 'p': {
        const char *mech, *data;
        size_t dlen;
        st = pgw_read_sasl_initial(body, len, &mech, &data, &dlen);
        pgw_scram s;
        if (pgw_scram_begin(&s, "u", "pw") == NULL) {
            pgw_buf out = {0};
            sto_status s2 = pgw_scram_server_first(&s, body, len, &out);
            if (!s2) {
                pgw_buf v = {0};
                s2 = pgw_scram_server_final(&s, body, len, &v);
                pgw_buf_free(&v);
            }
            sto_status_free(s2);
            pgw_buf_free(&out);
        }
        pgw_scram_end(&s);
        break;
    }
    default:
        break;
    }
    sto_status_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    /* a private copy, so reads past the end are caught */
    char *buf = malloc(size - 1 ? size - 1 : 1);
    if (!buf) return 0;
    memcpy(buf, data + 1, size - 1);
    size_t len = size - 1;
    sto_status st = NULL;
    if (data[0] & 1) {
        size_t total;
        if (pgw_frame_startup(buf, len, &total, &st) == PGW_FRAME_OK) {
            pgw_startup s;
            sto_status s2 = pgw_read_startup(buf, total, &s);
            if (!s2) (void)pgw_startup_param(&s, "user");
            sto_status_free(s2);
        }
    } else {
        size_t pos = 0, total;
        while (pos < len) {
            pgw_frame_result fr = pgw_frame(buf + pos, len - pos, 1 << 20, &total, &st);
            if (fr != PGW_FRAME_OK) break;
            one_message(buf[pos], buf + pos + 5, total - 5);
            pos += total;
        }
    }
    sto_status_free(st);
    free(buf);
    return 0;
}
