/*
 * msg_read.c — framing and decoding what a client sends.
 *
 * Every decoder walks the body with a cursor that refuses to read past its
 * end, requires each string to be NUL-terminated inside the body, and
 * requires the body to be consumed exactly: a message that is short, long or
 * inconsistent is a protocol violation (08P01), never a crash.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "net/pgwire/protocol.h"

typedef struct cursor {
    const char *p;
    size_t len, pos;
    bool bad;
} cursor;

static uint32_t load_u32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

static bool need(cursor *c, size_t n)
{
    if (c->bad || c->len - c->pos < n) {
        c->bad = true;
        return false;
    }
    return true;
}

static uint8_t get_u8(cursor *c)
{
    return need(c, 1) ? (uint8_t)c->p[c->pos++] : 0;
}

static int16_t get_i16(cursor *c)
{
    if (!need(c, 2)) return 0;
    uint16_t v;
    memcpy(&v, c->p + c->pos, 2);
    c->pos += 2;
    return (int16_t)ntohs(v);
}

static int32_t get_i32(cursor *c)
{
    if (!need(c, 4)) return 0;
    int32_t v = (int32_t)load_u32(c->p + c->pos);
    c->pos += 4;
    return v;
}

static const char *get_cstr(cursor *c)
{
    if (c->bad) return "";
    const char *s = c->p + c->pos;
    const char *nul = memchr(s, '\0', c->len - c->pos);
    if (!nul) {
        c->bad = true;
        return "";
    }
    c->pos += (size_t)(nul - s) + 1;
    return s;
}

static const char *get_bytes(cursor *c, size_t n)
{
    if (!need(c, n)) return NULL;
    const char *s = c->p + c->pos;
    c->pos += n;
    return s;
}

static sto_status finish(cursor *c, const char *what)
{
    if (c->bad) return sto_error(STO_PROTOCOL_VIOLATION, "invalid %s message format", what);
    if (c->pos != c->len)
        return sto_error(STO_PROTOCOL_VIOLATION, "invalid %s message format: %zu extra bytes", what,
                         c->len - c->pos);
    return STO_OK;
}

pgw_frame_result pgw_frame(const char *data, size_t avail, size_t max_len, size_t *total,
                           sto_status *err)
{
    if (avail < 5) return PGW_FRAME_NEED_MORE;
    uint32_t len = load_u32(data + 1);
    if (len < 4) {
        *err = sto_error(STO_PROTOCOL_VIOLATION, "invalid message length %u", len);
        return PGW_FRAME_BAD;
    }
    if (len - 4 > max_len) {
        *err = sto_error(STO_PROTOCOL_VIOLATION,
                         "message of %u bytes exceeds the limit of %zu bytes", len, max_len);
        return PGW_FRAME_BAD;
    }
    if (avail < (size_t)len + 1) return PGW_FRAME_NEED_MORE;
    *total = (size_t)len + 1;
    return PGW_FRAME_OK;
}

pgw_frame_result pgw_frame_startup(const char *data, size_t avail, size_t *total, sto_status *err)
{
    if (avail < 4) return PGW_FRAME_NEED_MORE;
    uint32_t len = load_u32(data);
    if (len < 8 || len > PGW_STARTUP_MAX) {
        *err = sto_error(STO_PROTOCOL_VIOLATION, "invalid length of startup packet (%u)", len);
        return PGW_FRAME_BAD;
    }
    if (avail < len) return PGW_FRAME_NEED_MORE;
    *total = len;
    return PGW_FRAME_OK;
}

sto_status pgw_read_startup(const char *body, size_t len, pgw_startup *out)
{
    *out = (pgw_startup){0};
    cursor c = {body, len, 0, false};
    get_i32(&c); /* the length, already checked by the framer */
    out->code = (uint32_t)get_i32(&c);
    switch (out->code) {
    case PGW_SSL_CODE:
    case PGW_GSSENC_CODE:
        return finish(&c, "startup");
    case PGW_CANCEL_CODE:
        out->cancel_pid = get_i32(&c);
        out->cancel_key = get_i32(&c);
        return finish(&c, "cancel request");
    case PGW_PROTOCOL_V3:
        break;
    default:
        if (c.bad) break;
        return sto_error(STO_FEATURE_NOT_SUPPORTED,
                         "unsupported frontend protocol %u.%u: server supports 3.0 to 3.0",
                         out->code >> 16, out->code & 0xffff);
    }
    /* name, value pairs up to an empty name */
    for (;;) {
        const char *name = get_cstr(&c);
        if (c.bad) break;
        if (!*name) break;
        const char *value = get_cstr(&c);
        if (c.bad) break;
        if (out->nparams == PGW_STARTUP_MAX_PARAMS)
            return sto_error(STO_PROTOCOL_VIOLATION, "too many startup parameters");
        out->names[out->nparams] = name;
        out->values[out->nparams++] = value;
    }
    return finish(&c, "startup");
}

const char *pgw_startup_param(const pgw_startup *s, const char *name)
{
    for (int i = 0; i < s->nparams; i++)
        if (strcmp(s->names[i], name) == 0) return s->values[i];
    return NULL;
}

sto_status pgw_read_query(const char *body, size_t len, const char **sql)
{
    cursor c = {body, len, 0, false};
    *sql = get_cstr(&c);
    return finish(&c, "Query");
}

sto_status pgw_read_parse(const char *body, size_t len, pgw_parse_msg *out)
{
    *out = (pgw_parse_msg){0};
    cursor c = {body, len, 0, false};
    out->name = get_cstr(&c);
    out->query = get_cstr(&c);
    int16_t n = get_i16(&c);
    if (n < 0) c.bad = true;
    if (!c.bad && n > 0) {
        if (!need(&c, (size_t)n * 4)) return finish(&c, "Parse");
        out->param_oids = malloc((size_t)n * sizeof(uint32_t));
        if (!out->param_oids) return sto_error_oom();
        out->nparams = (uint16_t)n;
        for (int i = 0; i < n; i++)
            out->param_oids[i] = (uint32_t)get_i32(&c);
    }
    sto_status st = finish(&c, "Parse");
    if (st) pgw_parse_msg_free(out);
    return st;
}

void pgw_parse_msg_free(pgw_parse_msg *m)
{
    free(m->param_oids);
    m->param_oids = NULL;
    m->nparams = 0;
}

/* A list of int16 format codes, each 0 or 1. */
static sto_status get_formats(cursor *c, uint16_t *n_out, int16_t **out)
{
    int16_t n = get_i16(c);
    if (n < 0) c->bad = true;
    if (c->bad || n == 0) return STO_OK;
    if (!need(c, (size_t)n * 2)) return STO_OK;
    *out = malloc((size_t)n * sizeof(int16_t));
    if (!*out) return sto_error_oom();
    *n_out = (uint16_t)n;
    for (int i = 0; i < n; i++) {
        (*out)[i] = get_i16(c);
        if ((*out)[i] != 0 && (*out)[i] != 1)
            return sto_error(STO_PROTOCOL_VIOLATION, "unsupported format code: %d", (*out)[i]);
    }
    return STO_OK;
}

sto_status pgw_read_bind(const char *body, size_t len, pgw_bind_msg *out)
{
    *out = (pgw_bind_msg){0};
    cursor c = {body, len, 0, false};
    out->portal = get_cstr(&c);
    out->statement = get_cstr(&c);
    sto_status st = get_formats(&c, &out->nformats, &out->formats);
    if (st) goto fail;
    int16_t n = get_i16(&c);
    if (n < 0) c.bad = true;
    if (!c.bad && n > 0) {
        /* each value needs at least its length word */
        if (!need(&c, (size_t)n * 4)) goto done;
        out->values = calloc((size_t)n, sizeof(*out->values));
        out->lengths = calloc((size_t)n, sizeof(*out->lengths));
        if (!out->values || !out->lengths) {
            st = sto_error_oom();
            goto fail;
        }
        out->nparams = (uint16_t)n;
        for (int i = 0; i < n && !c.bad; i++) {
            int32_t l = get_i32(&c);
            out->lengths[i] = l;
            if (l < -1)
                c.bad = true;
            else if (l >= 0)
                out->values[i] = get_bytes(&c, (size_t)l);
        }
    }
    if (!c.bad && out->nformats > 1 && out->nformats != out->nparams) {
        st = sto_error(STO_PROTOCOL_VIOLATION,
                       "bind message has %u parameter formats but %u parameters", out->nformats,
                       out->nparams);
        goto fail;
    }
    st = get_formats(&c, &out->nresult_formats, &out->result_formats);
    if (st) goto fail;
done:
    st = finish(&c, "Bind");
    if (!st) return STO_OK;
fail:
    pgw_bind_msg_free(out);
    return st;
}

void pgw_bind_msg_free(pgw_bind_msg *m)
{
    free(m->formats);
    free(m->values);
    free(m->lengths);
    free(m->result_formats);
    m->formats = m->result_formats = NULL;
    m->values = NULL;
    m->lengths = NULL;
    m->nformats = m->nparams = m->nresult_formats = 0;
}

int16_t pgw_format_of(uint16_t nformats, const int16_t *formats, uint32_t i)
{
    if (nformats == 0) return 0;
    if (nformats == 1) return formats[0];
    return i < nformats ? formats[i] : 0;
}

sto_status pgw_read_target(const char *body, size_t len, char *kind, const char **name)
{
    cursor c = {body, len, 0, false};
    *kind = (char)get_u8(&c);
    *name = get_cstr(&c);
    if (!c.bad && *kind != 'S' && *kind != 'P')
        return sto_error(STO_PROTOCOL_VIOLATION, "invalid target type '%c'", *kind);
    return finish(&c, "Describe/Close");
}

sto_status pgw_read_execute(const char *body, size_t len, const char **portal, int32_t *max_rows)
{
    cursor c = {body, len, 0, false};
    *portal = get_cstr(&c);
    *max_rows = get_i32(&c);
    return finish(&c, "Execute");
}

sto_status pgw_read_sasl_initial(const char *body, size_t len, const char **mechanism,
                                 const char **data, size_t *data_len)
{
    cursor c = {body, len, 0, false};
    *mechanism = get_cstr(&c);
    int32_t n = get_i32(&c);
    *data = NULL;
    *data_len = 0;
    if (n < -1) c.bad = true;
    if (!c.bad && n >= 0) {
        *data = get_bytes(&c, (size_t)n);
        *data_len = (size_t)n;
    }
    return finish(&c, "SASLInitialResponse");
}

sto_status pgw_read_copy_response(const char *body, size_t len, int *format, uint16_t *ncols)
{
    cursor c = {body, len, 0, false};
    *format = get_u8(&c);
    int16_t n = get_i16(&c);
    if (n < 0) c.bad = true;
    for (int16_t i = 0; !c.bad && i < n; i++)
        if (get_i16(&c) != *format) c.bad = true;
    *ncols = c.bad ? 0 : (uint16_t)n;
    return finish(&c, "CopyInResponse/CopyOutResponse");
}

sto_status pgw_read_copy_fail(const char *body, size_t len, const char **message)
{
    cursor c = {body, len, 0, false};
    *message = get_cstr(&c);
    return finish(&c, "CopyFail");
}

sto_status pgw_read_copy_done(const char *body, size_t len)
{
    cursor c = {body, len, 0, false};
    return finish(&c, "CopyDone");
}
