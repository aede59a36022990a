/*
 * exchange.c — streaming an EXCHANGE sink's rows to the other servers and
 * receiving the rows of every server (exchange.h): the row codec, the
 * destination hash, the per-worker senders and the receivers.
 */
#include "engine/exchange.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    d->receivers = 1;
}

static void str_store_free(eng_str_store *s)
{
    for (size_t i = 0; i < s->nblocks; i++)
        free(s->blocks[i]);
    free(s->blocks);
    memset(s, 0, sizeof(*s));
}

void eng_dist_env_free(eng_dist_env *d)
{
    str_store_free(&d->strings);
}

static sto_status keep_block(eng_str_store *d, void *b)
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
static sto_status string_room(eng_str_store *d, uint32_t len, char **out)
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

/* Moves the blocks of from into to (from is left empty). */
static sto_status str_store_move(eng_str_store *to, eng_str_store *from)
{
    sto_status st = STO_OK;
    for (size_t i = 0; i < from->nblocks; i++) {
        if (st)
            free(from->blocks[i]);
        else
            st = keep_block(to, from->blocks[i]);
    }
    free(from->blocks);
    memset(from, 0, sizeof(*from));
    return st;
}

/* --- the destination ------------------------------------------------------------- */

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
        if (sto_type_is_string(t.id)) {
            sto_str s;
            memcpy(&s, p, sizeof(s));
            crc = sto_crc32c(crc, &s.len, 4);
            crc = sto_crc32c(crc, sto_str_data(&s), s.len);
            continue;
        }
        /* every integer-like type hashes as int64, so INTEGER and BIGINT
         * keys of equal value agree */
        int64_t v = cg_row_slot_int(t.id, p);
        if (t.id == STO_TYPE_DOUBLE) {
            double x;
            memcpy(&x, p, 8);
            if (x == 0) x = 0; /* -0.0 equals 0.0 */
            memcpy(&v, &x, 8);
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
        if (sto_type_is_string(ci->type.id)) {
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
        if (!row[cg_row_null_offset(c->in_ncols, col)] && !sto_type_is_string(c->types[col].id))
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
        if (!isnull && !sto_type_is_string(c->types[col].id)) {
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
                             eng_str_store *d)
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
        if (!isnull && !sto_type_is_string(c->types[col].id)) {
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

/* --- one exchange's run ------------------------------------------------------------ */

/* A producer: the open message per destination of one mux worker. */
typedef struct sender {
    eng_xrun *x;
    int mux_worker;
    mux_msg **open; /* [nservers]: per server; [nservers]: broadcast or gather */
} sender;

typedef struct receiver {
    eng_xrun *x;
    eng_rows_sink sink;
    eng_str_store strings;
    sto_status st;
    pthread_t thread;
    bool started;
} receiver;

struct eng_xrun {
    eng_dist_env *d;
    const eng_pipe *p;
    uint32_t stream;
    atomic_int *cancel;
    codec c;
    sto_type *types, *key_types; /* [nout], then [nkeys] */
    sender main;
    sender *workers; /* per pool worker that has a mux worker of its own */
    unsigned nworkers;
    receiver *recv;
    unsigned nrecv;
};

static sto_status flush(sender *s, int slot, int dest)
{
    mux_msg *m = s->open[slot];
    s->open[slot] = NULL;
    if (!m) return STO_OK;
    m->exchange = s->x->stream;
    return mux_send(s->x->d->mux, s->mux_worker, m, dest);
}

static sto_status send_row(sender *s, const uint8_t *row, int slot, int dest)
{
    const codec *c = &s->x->c;
    for (int attempt = 0; attempt < 2; attempt++) {
        mux_msg *m = s->open[slot];
        if (!m) {
            STO_TRY(mux_msg_get(s->x->d->mux, s->mux_worker, &m));
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

/* Encodes rows [0, count) of data (row_bytes apart) into s's messages. */
static sto_status send_rows(sender *s, const uint8_t *data, uint64_t count, uint32_t row_bytes)
{
    eng_xrun *x = s->x;
    const sql_lop *op = x->p->sink_op;
    int n = x->d->nservers;
    for (uint64_t i = 0; i < count; i++) {
        if ((i & 1023) == 0 && x->cancel && atomic_load_explicit(x->cancel, memory_order_relaxed))
            return sto_error(STO_QUERY_CANCELED, "canceling statement due to user request");
        const uint8_t *row = data + i * row_bytes;
        int slot, dest;
        switch (op->exchange.kind) {
        case SQL_EXCH_SHUFFLE:
            slot = dest = eng_exchange_dest(row, x->p->nexprs, x->p->nout, op->exchange.nkeys,
                                            x->key_types, n);
            break;
        case SQL_EXCH_BROADCAST:
            slot = n;
            dest = MUX_BROADCAST;
            break;
        default:
            slot = n;
            dest = x->d->coordinator;
            break;
        }
        STO_TRY(send_row(s, row, slot, dest));
    }
    return STO_OK;
}

/* The compact hook of a streaming worker's rows sink: its batch goes out. */
static sto_status drain_batch(void *arg, eng_rows_sink *rows)
{
    sender *s = arg;
    STO_TRY(send_rows(s, rows->data, rows->rows, rows->row_bytes));
    atomic_fetch_add_explicit(&s->x->d->rows_streamed, rows->rows, memory_order_relaxed);
    rows->rows = 0;
    return STO_OK;
}

static sto_status flush_all(sender *s)
{
    eng_xrun *x = s->x;
    int n = x->d->nservers;
    for (int i = 0; i < n; i++)
        STO_TRY(flush(s, i, i));
    return flush(s, n,
                 x->p->sink_op->exchange.kind == SQL_EXCH_BROADCAST ? MUX_BROADCAST
                                                                    : x->d->coordinator);
}

static void release_open(sender *s, int n)
{
    for (int i = 0; s->open && i <= n; i++)
        if (s->open[i]) {
            mux_msg_release(s->open[i]);
            s->open[i] = NULL;
        }
    free(s->open);
    s->open = NULL;
}

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
        STO_TRY(decode_row(&r->x->c, &pos, end, row, &r->strings));
    }
    if (pos != end)
        return sto_error(STO_PROTOCOL_VIOLATION,
                         "exchange message from server %d has %zu stray bytes", (int)m->src,
                         (size_t)(end - pos));
    return STO_OK;
}

/* A receiver thread: messages until every server's stream ended. It also
 * watches the cancel flag: a worker may be waiting for a free message, and
 * only failing the multiplexer wakes it. */
static void *receive_all(void *arg)
{
    receiver *r = arg;
    eng_xrun *x = r->x;
    bool aborted = false;
    for (;;) {
        mux_msg *m = NULL;
        bool pending = false;
        sto_status st = mux_recv_for(x->d->mux, ENG_DIST_MUX_RECV, x->stream, 50, &m, &pending);
        if (st) {
            r->st = st;
            break;
        }
        if (pending) {
            if (!aborted && x->cancel && atomic_load(x->cancel)) {
                mux_abort(x->d->mux, "query canceled");
                aborted = true;
            }
            continue;
        }
        if (!m) break;
        st = receive_msg(r, m);
        mux_msg_release(m);
        if (st) {
            /* nobody else can tell the others: they would wait for us */
            mux_abort(x->d->mux, st->message);
            r->st = st;
            break;
        }
    }
    return NULL;
}

static void xrun_free(eng_xrun *x)
{
    if (!x) return;
    int n = x->d->nservers;
    release_open(&x->main, n);
    for (unsigned i = 0; x->workers && i < x->nworkers; i++)
        release_open(&x->workers[i], n);
    for (unsigned i = 0; x->recv && i < x->nrecv; i++) {
        eng_rows_sink_free(&x->recv[i].sink);
        str_store_free(&x->recv[i].strings);
        sto_status_free(x->recv[i].st);
    }
    free(x->recv);
    free(x->workers);
    codec_free(&x->c);
    free(x->types);
    free(x);
}

static sto_status sender_init(eng_xrun *x, sender *s, int mux_worker)
{
    s->x = x;
    s->mux_worker = mux_worker;
    s->open = calloc((size_t)x->d->nservers + 1, sizeof(*s->open));
    return s->open ? STO_OK : sto_error_oom();
}

/* Stops the receivers (after a failure the multiplexer has been aborted,
 * so they return) and takes the first error. */
static sto_status join_receivers(eng_xrun *x, sto_status st)
{
    for (unsigned i = 0; i < x->nrecv; i++) {
        receiver *r = &x->recv[i];
        if (r->started) pthread_join(r->thread, NULL);
        r->started = false;
        if (!st && r->st) {
            st = r->st;
            r->st = NULL;
        }
    }
    return st;
}

sto_status eng_exchange_begin(const eng_exec_env *env, const eng_physical *ph, const eng_pipe *p)
{
    eng_dist_env *d = env->dist;
    if (!d) return STO_OK;
    const sql_lop *op = p->sink_op;
    eng_xrun *x = calloc(1, sizeof(*x));
    if (!x) {
        mux_abort(d->mux, "out of memory");
        return sto_error_oom();
    }
    x->d = d;
    x->p = p;
    x->stream = eng_exchange_stream(d->query_id, op->exchange.id);
    x->cancel = env->cancel;
    x->types = calloc((size_t)p->nout + op->exchange.nkeys + 1, sizeof(*x->types));
    sto_status st = x->types ? codec_init(&x->c, ph, p, x->types) : sto_error_oom();
    if (!st) {
        x->key_types = x->types + p->nout;
        for (uint32_t k = 0; k < op->exchange.nkeys; k++)
            x->key_types[k] = p->exprs[p->nout + k]->type;
    }
    unsigned pool = eng_sched_threads(env->shared->sched);
    int spare = mux_workers(d->mux) - ENG_DIST_MUX_WORKER0;
    x->nworkers = spare > 0 ? (pool < (unsigned)spare ? pool : (unsigned)spare) : 0;
    if (!st) st = sender_init(x, &x->main, ENG_DIST_MUX_MAIN);
    if (!st && x->nworkers && !(x->workers = calloc(x->nworkers, sizeof(*x->workers))))
        st = sto_error_oom();
    for (unsigned i = 0; !st && i < x->nworkers; i++)
        st = sender_init(x, &x->workers[i], ENG_DIST_MUX_WORKER0 + (int)i);
    /* every sender reports done: this thread's and each worker's */
    if (!st) st = mux_exchange_open(d->mux, x->stream, 1 + (int)x->nworkers);
    x->nrecv = d->receivers ? d->receivers : 1;
    if (!st && !(x->recv = calloc(x->nrecv, sizeof(*x->recv)))) st = sto_error_oom();
    for (unsigned i = 0; !st && i < x->nrecv; i++) {
        receiver *r = &x->recv[i];
        r->x = x;
        eng_rows_sink_init(&r->sink, (eng_rt_mem){env->mem, NULL, -1}, cg_row_bytes(p->nout));
        r->started = pthread_create(&r->thread, NULL, receive_all, r) == 0;
        if (!r->started) st = sto_error(STO_OUT_OF_MEMORY, "cannot start an exchange receiver");
    }
    if (st) {
        mux_abort(d->mux, st->message); /* the others must not wait for us */
        st = join_receivers(x, st);
        if (x->types) mux_exchange_close(d->mux, x->stream);
        xrun_free(x);
        return st;
    }
    d->active = x;
    return STO_OK;
}

sto_status eng_exchange_attach(eng_dist_env *d, unsigned worker, eng_rows_sink *rows)
{
    eng_xrun *x = d ? d->active : NULL;
    if (!x || worker >= x->nworkers) return STO_OK; /* its rows go at the end */
    rows->compact = drain_batch;
    rows->compact_arg = &x->workers[worker];
    rows->compact_min = ENG_EXCHANGE_BATCH;
    return STO_OK;
}

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

sto_status eng_exchange_end(const eng_exec_env *env, const eng_physical *ph, const eng_pipe *p,
                            sto_status st, eng_rowset *rows)
{
    (void)ph;
    eng_dist_env *d = env->dist;
    if (!d) return st ? st : drop_keys(env, p, rows);
    eng_xrun *x = d->active;
    d->active = NULL;
    if (!x) {
        if (!st) st = sto_error(STO_INTERNAL_ERROR, "an exchange ends that never began");
        mux_abort(d->mux, st->message);
        return st;
    }
    /* The workers are done (the pipeline's job has finished), so this
     * thread may submit on their mux workers: each one's queue is FIFO, so
     * its done follows its last message. */
    if (!st && rows->rows) st = send_rows(&x->main, rows->data, rows->rows, rows->row_bytes);
    if (!st) d->rows_at_end += rows->rows;
    if (!st) st = flush_all(&x->main);
    for (unsigned i = 0; !st && i < x->nworkers; i++)
        st = flush_all(&x->workers[i]);
    if (!st) st = mux_exchange_done(d->mux, ENG_DIST_MUX_MAIN, x->stream);
    for (unsigned i = 0; !st && i < x->nworkers; i++)
        st = mux_exchange_done(d->mux, x->workers[i].mux_worker, x->stream);
    if (st) mux_abort(d->mux, st->message); /* the others must not wait for us */
    st = join_receivers(x, st);
    mux_exchange_close(d->mux, x->stream);

    eng_rowset out;
    memset(&out, 0, sizeof(out));
    eng_rows_sink **sinks = calloc(x->nrecv, sizeof(*sinks));
    if (!st && !sinks) st = sto_error_oom();
    for (unsigned i = 0; !st && i < x->nrecv; i++) {
        sinks[i] = &x->recv[i].sink;
        st = str_store_move(&d->strings, &x->recv[i].strings);
    }
    for (unsigned i = 0; !st && i < x->nrecv; i++)
        d->rows_received += x->recv[i].sink.rows;
    if (!st) st = eng_rowset_gather(sinks, x->nrecv, false, env->mem, &out);
    free(sinks);
    if (!st) {
        out.row_bytes = cg_row_bytes(p->nout);
        eng_rowset_free(rows);
        *rows = out;
    }
    xrun_free(x);
    return st;
}
