/*
 * exchange.c — sending an EXCHANGE sink's rows and receiving the rows of
 * every server (exchange.h): the row codec, the destination hash, and the
 * sender / receiver pair that runs one exchange.
 */
#include "engine/exchange.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/pipeline.h"
#include "storage/crc32c.h"

#define STRING_BLOCK (64u * 1024u)

void eng_dist_env_init(eng_dist_env *d, mux_ctx *mux, uint32_t query_id, int coordinator)
{
    memset(d, 0, sizeof(*d));
    d->mux = mux;
    d->query_id = query_id;
    d->coordinator = coordinator;
    d->rank = mux ? mux_rank(mux) : 0;
    d->nservers = mux ? mux_size(mux) : 1;
}

void eng_dist_env_free(eng_dist_env *d)
{
    for (size_t i = 0; i < d->nblocks; i++)
        free(d->blocks[i]);
    free(d->blocks);
    d->blocks = NULL;
    d->nblocks = d->capblocks = 0;
    d->cur = NULL;
}

static sto_status keep_block(eng_dist_env *d, void *b)
{
    if (d->nblocks == d->capblocks) {
        size_t cap = d->capblocks ? 2 * d->capblocks : 16;
        void **nb = realloc(d->blocks, cap * sizeof(*nb));
        if (!nb) {
            free(b);
            return sto_error_oom();
        }
        d->blocks = nb;
        d->capblocks = cap;
    }
    d->blocks[d->nblocks++] = b;
    return STO_OK;
}

/* Room for len string bytes that live as long as the query. */
static sto_status string_room(eng_dist_env *d, uint32_t len, char **out)
{
    if (len > STRING_BLOCK / 4) {
        char *b = malloc(len);
        if (!b) return sto_error_oom();
        STO_TRY(keep_block(d, b));
        *out = b;
        return STO_OK;
    }
    if (!d->cur || d->cur_used + len > d->cur_cap) {
        uint8_t *b = malloc(STRING_BLOCK);
        if (!b) return sto_error_oom();
        STO_TRY(keep_block(d, b));
        d->cur = b;
        d->cur_used = 0;
        d->cur_cap = STRING_BLOCK;
    }
    *out = (char *)d->cur + d->cur_used;
    d->cur_used += len;
    return STO_OK;
}

/* --- the destination ------------------------------------------------------------- */

static bool is_string(sto_type t)
{
    return t.id == STO_TYPE_CHAR || t.id == STO_TYPE_VARCHAR;
}

int eng_exchange_dest(const uint8_t *row, uint32_t ncols, uint32_t first, uint32_t nkeys,
                      const sto_type *types, int nservers)
{
    uint32_t crc = 0;
    for (uint32_t k = 0; k < nkeys; k++) {
        uint32_t slot = first + k;
        const uint8_t *p = row + (size_t)slot * CG_ROW_SLOT;
        if (row[cg_row_null_offset(ncols, slot)]) {
            static const uint8_t null_mark = 0xff;
            crc = sto_crc32c(crc, &null_mark, 1);
            continue;
        }
        sto_type t = types[k];
        if (is_string(t)) {
            sto_str s;
            memcpy(&s, p, sizeof(s));
            crc = sto_crc32c(crc, &s.len, 4);
            crc = sto_crc32c(crc, sto_str_data(&s), s.len);
            continue;
        }
        /* every integer-like type hashes as int64, so INTEGER and BIGINT
         * keys of equal value agree */
        int64_t v = 0;
        switch (t.id) {
        case STO_TYPE_BOOLEAN:
            v = p[0];
            break;
        case STO_TYPE_INTEGER:
        case STO_TYPE_DATE: {
            int32_t x;
            memcpy(&x, p, 4);
            v = x;
            break;
        }
        case STO_TYPE_DOUBLE: {
            double x;
            memcpy(&x, p, 8);
            if (x == 0) x = 0; /* -0.0 equals 0.0 */
            memcpy(&v, &x, 8);
            break;
        }
        default:
            memcpy(&v, p, 8);
            break;
        }
        crc = sto_crc32c(crc, &v, 8);
    }
    return (int)(crc % (uint32_t)nservers);
}

/* --- the row codec ------------------------------------------------------------------ */

typedef struct codec {
    uint32_t ncols;        /* columns that travel */
    uint32_t in_ncols;     /* columns of a sent row (plus the keys) */
    const sto_type *types; /* [ncols] */
    uint32_t nfixed, nnull, nstr;
    uint32_t *fixed, *nulls, *strs; /* column lists of the three parts */
    uint32_t fixed_bytes;
} codec;

static uint32_t width(sto_type t)
{
    return (uint32_t)sto_type_width(t.id);
}

static sto_status codec_init(codec *c, const eng_physical *ph, const eng_pipe *p, sto_type *types)
{
    memset(c, 0, sizeof(*c));
    c->ncols = p->nout;
    c->in_ncols = p->nexprs;
    c->types = types;
    uint32_t n = p->nout ? p->nout : 1;
    c->fixed = malloc(n * sizeof(uint32_t));
    c->nulls = malloc(n * sizeof(uint32_t));
    c->strs = malloc(n * sizeof(uint32_t));
    if (!c->fixed || !c->nulls || !c->strs) return sto_error_oom();
    for (uint32_t i = 0; i < p->nout; i++) {
        const sql_col_info *ci = sql_plan_col(ph->plan->ctx, p->out_ids[i]);
        types[i] = ci->type;
        if (ci->nullable) c->nulls[c->nnull++] = i;
        if (is_string(ci->type)) {
            c->strs[c->nstr++] = i;
        } else if (!ci->nullable) {
            c->fixed[c->nfixed++] = i;
            c->fixed_bytes += width(ci->type);
        }
    }
    return STO_OK;
}

static void codec_free(codec *c)
{
    free(c->fixed);
    free(c->nulls);
    free(c->strs);
}

static sto_str str_at(const uint8_t *row, uint32_t col)
{
    sto_str s;
    memcpy(&s, row + (size_t)col * CG_ROW_SLOT, sizeof(s));
    return s;
}

/* Encodes row into buf[0, cap): the bytes used (a row of no columns uses
 * none), SIZE_MAX when it does not fit. A NULL in a column the plan says is
 * never NULL sets *bad. */
static size_t encode_row(const codec *c, const uint8_t *row, uint8_t *buf, size_t cap, bool *bad)
{
    size_t need = c->fixed_bytes;
    for (uint32_t i = 0; i < c->nnull; i++) {
        uint32_t col = c->nulls[i];
        need += 1;
        if (!row[cg_row_null_offset(c->in_ncols, col)] && !is_string(c->types[col]))
            need += width(c->types[col]);
    }
    for (uint32_t i = 0; i < c->nstr; i++) {
        uint32_t col = c->strs[i];
        if (!row[cg_row_null_offset(c->in_ncols, col)]) need += 4 + str_at(row, col).len;
    }
    if (need > cap) return SIZE_MAX;
    uint8_t *o = buf;
    for (uint32_t i = 0; i < c->nfixed; i++) {
        uint32_t col = c->fixed[i], w = width(c->types[col]);
        if (row[cg_row_null_offset(c->in_ncols, col)]) *bad = true;
        memcpy(o, row + (size_t)col * CG_ROW_SLOT, w);
        o += w;
    }
    for (uint32_t i = 0; i < c->nnull; i++) {
        uint32_t col = c->nulls[i];
        uint8_t isnull = row[cg_row_null_offset(c->in_ncols, col)] ? 1 : 0;
        *o++ = isnull;
        if (!isnull && !is_string(c->types[col])) {
            uint32_t w = width(c->types[col]);
            memcpy(o, row + (size_t)col * CG_ROW_SLOT, w);
            o += w;
        }
    }
    for (uint32_t i = 0; i < c->nstr; i++) {
        uint32_t col = c->strs[i];
        if (row[cg_row_null_offset(c->in_ncols, col)]) continue;
        sto_str s = str_at(row, col);
        memcpy(o, &s.len, 4);
        memcpy(o + 4, sto_str_data(&s), s.len);
        o += 4 + s.len;
    }
    return (size_t)(o - buf);
}

/* Decodes one row from [*pos, end) into out (c->ncols columns, zeroed). */
static sto_status decode_row(const codec *c, const uint8_t **pos, const uint8_t *end, uint8_t *out,
                             eng_dist_env *d)
{
    const uint8_t *in = *pos;
    uint32_t nc = c->ncols;
#define NEED(n)                                                                                    \
    do {                                                                                           \
        if ((size_t)(end - in) < (size_t)(n))                                                      \
            return sto_error(STO_PROTOCOL_VIOLATION, "exchange message ends inside a row");        \
    } while (0)
    for (uint32_t i = 0; i < c->nfixed; i++) {
        uint32_t col = c->fixed[i], w = width(c->types[col]);
        NEED(w);
        memcpy(out + (size_t)col * CG_ROW_SLOT, in, w);
        in += w;
    }
    for (uint32_t i = 0; i < c->nnull; i++) {
        uint32_t col = c->nulls[i];
        NEED(1);
        uint8_t isnull = *in++;
        out[cg_row_null_offset(nc, col)] = isnull;
        if (!isnull && !is_string(c->types[col])) {
            uint32_t w = width(c->types[col]);
            NEED(w);
            memcpy(out + (size_t)col * CG_ROW_SLOT, in, w);
            in += w;
        }
    }
    for (uint32_t i = 0; i < c->nstr; i++) {
        uint32_t col = c->strs[i];
        if (out[cg_row_null_offset(nc, col)]) continue;
        uint32_t len;
        NEED(4);
        memcpy(&len, in, 4);
        in += 4;
        NEED(len);
        sto_str s;
        if (len <= STO_STR_INLINE_MAX) {
            s = sto_str_make((const char *)in, len);
        } else {
            char *room = NULL;
            STO_TRY(string_room(d, len, &room));
            memcpy(room, in, len);
            s = sto_str_make(room, len);
        }
        memcpy(out + (size_t)col * CG_ROW_SLOT, &s, sizeof(s));
        in += len;
    }
#undef NEED
    *pos = in;
    return STO_OK;
}

/* --- the receiver ---------------------------------------------------------------- */

typedef struct receiver {
    eng_dist_env *d;
    const codec *c;
    uint32_t stream;
    eng_rows_sink sink;
    sto_status st;
} receiver;

static sto_status receive_msg(receiver *r, const mux_msg *m)
{
    if (m->len == 0) return STO_OK; /* the end-of-stream frame */
    if (m->len < 4)
        return sto_error(STO_PROTOCOL_VIOLATION, "exchange message from server %d too short",
                         (int)m->src);
    uint32_t nrows;
    memcpy(&nrows, m->data, 4);
    const uint8_t *pos = m->data + 4, *end = m->data + m->len;
    for (uint32_t i = 0; i < nrows; i++) {
        uint8_t *row;
        cg_error err = cg_error_none();
        if (eng_rt_rows_append(&err, &r->sink, &row)) return err.detail;
        memset(row, 0, r->sink.row_bytes);
        STO_TRY(decode_row(r->c, &pos, end, row, r->d));
    }
    if (pos != end)
        return sto_error(STO_PROTOCOL_VIOLATION,
                         "exchange message from server %d has %zu stray bytes", (int)m->src,
                         (size_t)(end - pos));
    return STO_OK;
}

static void *receive_all(void *arg)
{
    receiver *r = arg;
    for (;;) {
        mux_msg *m = NULL;
        sto_status st = mux_recv(r->d->mux, 1, r->stream, &m);
        if (st) {
            r->st = st;
            break;
        }
        if (!m) break;
        st = receive_msg(r, m);
        mux_msg_release(m);
        if (st) {
            /* nobody else can tell the others: they would wait for us */
            mux_abort(r->d->mux, st->message);
            r->st = st;
            break;
        }
    }
    return NULL;
}

/* --- the sender ---------------------------------------------------------------------- */

typedef struct sender {
    eng_dist_env *d;
    uint32_t stream;
    mux_msg **open; /* per destination; [nservers]: broadcast or gather */
} sender;

static sto_status flush(sender *s, int slot, int dest)
{
    mux_msg *m = s->open[slot];
    s->open[slot] = NULL;
    if (!m) return STO_OK;
    m->exchange = s->stream;
    return mux_send(s->d->mux, 0, m, dest);
}

static sto_status send_row(sender *s, const codec *c, const uint8_t *row, int slot, int dest)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        mux_msg *m = s->open[slot];
        if (!m) {
            STO_TRY(mux_msg_get(s->d->mux, 0, &m));
            m->len = 4;
            memset(m->data, 0, 4);
            s->open[slot] = m;
        }
        bool bad = false;
        size_t n = encode_row(c, row, m->data + m->len, m->cap - m->len, &bad);
        if (bad)
            return sto_error(STO_INTERNAL_ERROR, "a NULL in a column the plan says is never NULL");
        if (n != SIZE_MAX) {
            uint32_t count;
            memcpy(&count, m->data, 4);
            count++;
            memcpy(m->data, &count, 4);
            m->len += (uint32_t)n;
            return STO_OK;
        }
        if (m->len == 4) break; /* an empty message is too small */
        STO_TRY(flush(s, slot, dest));
    }
    return sto_error(STO_PROGRAM_LIMIT_EXCEEDED, "a row is wider than an exchange message");
}

static sto_status send_all(sender *s, const codec *c, const eng_pipe *p, const eng_rowset *rows,
                           const sto_type *key_types, atomic_int *cancel)
{
    const sql_lop *x = p->sink_op;
    int n = s->d->nservers;
    sto_status st = STO_OK;
    for (uint64_t i = 0; !st && i < rows->rows; i++) {
        if ((i & 1023) == 0 && cancel && atomic_load_explicit(cancel, memory_order_relaxed))
            return sto_error(STO_QUERY_CANCELED, "canceling statement due to user request");
        const uint8_t *row = rows->data + i * rows->row_bytes;
        int slot, dest;
        switch (x->exchange.kind) {
        case SQL_EXCH_SHUFFLE:
            slot = dest =
                eng_exchange_dest(row, p->nexprs, p->nout, x->exchange.nkeys, key_types, n);
            break;
        case SQL_EXCH_BROADCAST:
            slot = n;
            dest = MUX_BROADCAST;
            break;
        default:
            slot = n;
            dest = s->d->coordinator;
            break;
        }
        st = send_row(s, c, row, slot, dest);
    }
    for (int i = 0; !st && i < n; i++)
        st = flush(s, i, i);
    if (!st)
        st =
            flush(s, n, x->exchange.kind == SQL_EXCH_BROADCAST ? MUX_BROADCAST : s->d->coordinator);
    return st;
}

/* --- one exchange --------------------------------------------------------------------- */

/* One server: the rows stay, the key columns go. */
static sto_status drop_keys(const eng_exec_env *env, const eng_pipe *p, eng_rowset *rows)
{
    if (p->nexprs == p->nout) return STO_OK;
    uint32_t rb = cg_row_bytes(p->nout);
    eng_rowset out = {NULL, rows->rows, rb, (size_t)rows->rows * rb, env->mem};
    if (out.bytes) STO_TRY(eng_mem_alloc(env->mem, out.bytes, -1, (void **)&out.data));
    for (uint64_t i = 0; i < rows->rows; i++) {
        const uint8_t *src = rows->data + i * rows->row_bytes;
        uint8_t *dst = out.data + i * rb;
        memset(dst, 0, rb);
        memcpy(dst, src, (size_t)p->nout * CG_ROW_SLOT);
        for (uint32_t c = 0; c < p->nout; c++)
            dst[cg_row_null_offset(p->nout, c)] = src[cg_row_null_offset(p->nexprs, c)];
    }
    eng_rowset_free(rows);
    *rows = out;
    return STO_OK;
}

/* Waits for the receiver; a cancel meanwhile aborts the cluster's query. */
static void wait_receiver(pthread_t t, eng_dist_env *d, atomic_int *cancel)
{
    bool aborted = false;
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int rc = pthread_timedjoin_np(t, NULL, &ts);
        if (rc != ETIMEDOUT) return;
        if (!aborted && cancel && atomic_load(cancel)) {
            mux_abort(d->mux, "query canceled");
            aborted = true;
        }
    }
}

sto_status eng_exchange_rows(const eng_exec_env *env, const eng_physical *ph, const eng_pipe *p,
                             eng_rowset *rows)
{
    eng_dist_env *d = env->dist;
    if (!d) return drop_keys(env, p, rows);
    const sql_lop *x = p->sink_op;
    uint32_t stream = eng_exchange_stream(d->query_id, x->exchange.id);
    sto_type *types = calloc((size_t)p->nout + x->exchange.nkeys + 1, sizeof(*types));
    mux_msg **open = calloc((size_t)d->nservers + 1, sizeof(*open));
    codec c;
    memset(&c, 0, sizeof(c));
    sto_status st = types && open ? codec_init(&c, ph, p, types) : sto_error_oom();
    sto_type *key_types = types ? types + p->nout : NULL;
    for (uint32_t k = 0; !st && k < x->exchange.nkeys; k++)
        key_types[k] = p->exprs[p->nout + k]->type;
    if (!st) st = mux_exchange_open(d->mux, stream, 1);
    if (st) {
        codec_free(&c);
        free(types);
        free(open);
        mux_abort(d->mux, st->message);
        return st;
    }

    receiver r;
    memset(&r, 0, sizeof(r));
    r.d = d;
    r.c = &c;
    r.stream = stream;
    eng_rows_sink_init(&r.sink, (eng_rt_mem){env->mem, NULL, -1}, cg_row_bytes(p->nout));
    pthread_t thread;
    bool started = pthread_create(&thread, NULL, receive_all, &r) == 0;
    if (!started) st = sto_error(STO_OUT_OF_MEMORY, "cannot start an exchange receiver thread");

    sender s = {d, stream, open};
    if (!st) st = send_all(&s, &c, p, rows, key_types, env->cancel);
    for (int i = 0; i <= d->nservers; i++)
        if (open[i]) mux_msg_release(open[i]);
    if (!st) st = mux_exchange_done(d->mux, 0, stream);
    if (st) mux_abort(d->mux, st->message); /* the others must not wait for us */
    if (started) wait_receiver(thread, d, env->cancel);
    if (!st && r.st) {
        st = r.st;
        r.st = NULL;
    }
    sto_status_free(r.st);
    mux_exchange_close(d->mux, stream);

    eng_rowset out;
    memset(&out, 0, sizeof(out));
    if (!st) {
        eng_rows_sink *sp = &r.sink;
        st = eng_rowset_gather(&sp, 1, false, env->mem, &out);
    }
    eng_rows_sink_free(&r.sink);
    if (!st) {
        out.row_bytes = cg_row_bytes(p->nout);
        eng_rowset_free(rows);
        *rows = out;
    }
    codec_free(&c);
    free(types);
    free(open);
    return st;
}
