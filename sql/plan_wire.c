/*
 * plan_wire.c — encoding an optimized plan to bytes and decoding it back.
 *
 * Layout (little-endian throughout):
 *   "RKPL" u32 version
 *   context: u32 ncols, per id 1..ncols: type, u8 nullable, str name;
 *            u32 nparams, a type each
 *   root operator, u32 ncols, ncols × u32 output id, ncols × str name
 * A type is u8 id, u8 precision, u8 scale, u32 length. A str is u32 length
 * (0xFFFFFFFF = NULL) and that many bytes. An operator or expression slot
 * starts with a tag: 0 = none, 1 = a node written here, 2 = u32 index of a
 * node written earlier. Nodes are numbered (operators and expressions each
 * from 0) when they are complete, children first, so a reference can only
 * name a finished node: a damaged string cannot make the decoded plan a
 * cycle. Operators: u8 kind, u32 nout, nout × u32 id, f64 est_rows, i32
 * join algorithm, u8 build_left, left, right, then the kind's fields in
 * plan.h's order. Expressions: u8 kind, type, u8 nullable, i32 pos, then
 * the kind's fields.
 */
#include "sql/plan_wire.h"

#include <stdlib.h>
#include <string.h>

#define NULL_STR    0xFFFFFFFFu
#define TAG_NONE    0
#define TAG_NEW     1
#define TAG_REF     2
#define MAX_NESTING 1000

/* ---------------------------------------------------------------- writer -- */

/* Pointer → node number, open addressing (no deletes). */
typedef struct memo {
    const void **keys;
    uint32_t *vals;
    size_t cap, count;
} memo;

typedef struct writer {
    uint8_t *buf;
    size_t len, cap;
    bool oom;
    memo lops, exprs;
    uint32_t next_lop, next_expr;
} writer;

static size_t memo_slot(const memo *m, const void *p)
{
    uintptr_t h = (uintptr_t)p;
    h ^= h >> 17;
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 7) & (m->cap - 1);
}

static bool memo_find(const memo *m, const void *p, uint32_t *val)
{
    if (!m->cap) return false;
    for (size_t i = memo_slot(m, p);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i]) return false;
        if (m->keys[i] == p) {
            *val = m->vals[i];
            return true;
        }
    }
}

static bool memo_put(memo *m, const void *p, uint32_t val)
{
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        memo n = {calloc(cap, sizeof(*n.keys)), calloc(cap, sizeof(*n.vals)), cap, 0};
        if (!n.keys || !n.vals) {
            free(n.keys);
            free(n.vals);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = memo_slot(&n, m->keys[i]);
                while (n.keys[j])
                    j = (j + 1) & (cap - 1);
                n.keys[j] = m->keys[i];
                n.vals[j] = m->vals[i];
                n.count++;
            }
        free(m->keys);
        free(m->vals);
        *m = n;
    }
    size_t j = memo_slot(m, p);
    while (m->keys[j])
        j = (j + 1) & (m->cap - 1);
    m->keys[j] = p;
    m->vals[j] = val;
    m->count++;
    return true;
}

static void put_bytes(writer *w, const void *p, size_t n)
{
    if (w->oom) return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap < w->len + n)
            cap *= 2;
        uint8_t *b = realloc(w->buf, cap);
        if (!b) {
            w->oom = true;
            return;
        }
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void put_u8(writer *w, uint8_t v)
{
    put_bytes(w, &v, 1);
}

static void put_u32(writer *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put_bytes(w, b, 4);
}

static void put_u64(writer *w, uint64_t v)
{
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}

static void put_f64(writer *w, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof(v));
    put_u64(w, v);
}

static void put_str(writer *w, const char *s)
{
    if (!s) {
        put_u32(w, NULL_STR);
        return;
    }
    size_t n = strlen(s);
    put_u32(w, (uint32_t)n);
    put_bytes(w, s, n);
}

static void put_type(writer *w, sto_type t)
{
    put_u8(w, t.id);
    put_u8(w, t.precision);
    put_u8(w, t.scale);
    put_u32(w, t.length);
}

static void put_lop(writer *w, const sql_lop *op);
static void put_expr(writer *w, const sql_bexpr *e);

static void put_list(writer *w, const sql_bexpr_list *l)
{
    put_u32(w, l->count);
    for (uint32_t i = 0; i < l->count; i++)
        put_expr(w, l->items[i]);
}

static void put_value(writer *w, sto_type t, const sto_value *v)
{
    put_u8(w, v->is_null);
    if (v->is_null) return;
    switch ((sto_type_id)t.id) {
    case STO_TYPE_DOUBLE:
        put_f64(w, v->v.f64);
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        put_u32(w, v->v.str.len);
        put_bytes(w, sto_str_data(&v->v.str), v->v.str.len);
        break;
    default:
        put_u64(w, (uint64_t)v->v.i64);
        break;
    }
}

/* Writes a slot: none, a back reference, or the node and then its number. */
static bool put_tag(writer *w, memo *m, const void *p)
{
    uint32_t idx;
    if (!p) {
        put_u8(w, TAG_NONE);
        return false;
    }
    if (memo_find(m, p, &idx)) {
        put_u8(w, TAG_REF);
        put_u32(w, idx);
        return false;
    }
    put_u8(w, TAG_NEW);
    return true;
}

static void put_expr(writer *w, const sql_bexpr *e)
{
    if (!put_tag(w, &w->exprs, e)) return;
    put_u8(w, (uint8_t)e->kind);
    put_type(w, e->type);
    put_u8(w, e->nullable);
    put_u32(w, (uint32_t)e->pos);
    switch (e->kind) {
    case SQL_BEXPR_CONST:
        put_value(w, e->type, &e->value);
        break;
    case SQL_BEXPR_COLUMN:
        put_u32(w, e->column);
        break;
    case SQL_BEXPR_PARAM:
        put_u32(w, (uint32_t)e->param);
        break;
    case SQL_BEXPR_OP:
        put_u8(w, (uint8_t)e->op.op);
        put_expr(w, e->op.args[0]);
        put_expr(w, e->op.args[1]);
        break;
    case SQL_BEXPR_FUNC:
        put_u32(w, (uint32_t)e->func.id);
        put_list(w, &e->func.args);
        break;
    case SQL_BEXPR_CASE:
        put_list(w, &e->case_.conds);
        put_list(w, &e->case_.results);
        put_expr(w, e->case_.else_result);
        break;
    case SQL_BEXPR_CAST:
        put_expr(w, e->cast.arg);
        break;
    case SQL_BEXPR_IN_LIST:
        put_expr(w, e->in_list.arg);
        put_list(w, &e->in_list.list);
        put_u8(w, e->in_list.negated);
        break;
    case SQL_BEXPR_IS_NULL:
        put_expr(w, e->is_null.arg);
        put_u8(w, e->is_null.negated);
        break;
    case SQL_BEXPR_SUBQUERY:
        put_u8(w, (uint8_t)e->subquery.kind);
        put_u8(w, (uint8_t)e->subquery.cmp);
        put_expr(w, e->subquery.left);
        put_lop(w, e->subquery.plan);
        put_u32(w, e->subquery.col);
        put_u32(w, e->subquery.nouter);
        for (uint32_t i = 0; i < e->subquery.nouter; i++)
            put_u32(w, e->subquery.outer[i]);
        break;
    case SQL_BEXPR_KIND_COUNT:
        break;
    }
    if (!memo_put(&w->exprs, e, w->next_expr++)) w->oom = true;
}

static void put_item(writer *w, const sql_proj_item *it)
{
    put_expr(w, it->expr);
    put_u32(w, it->id);
}

static void put_lop(writer *w, const sql_lop *op)
{
    if (!put_tag(w, &w->lops, op)) return;
    put_u8(w, (uint8_t)op->kind);
    put_u32(w, op->nout);
    for (uint32_t i = 0; i < op->nout; i++)
        put_u32(w, op->out[i]);
    put_f64(w, op->est_rows);
    put_u32(w, (uint32_t)op->phys.algorithm);
    put_u8(w, op->phys.build_left);
    put_lop(w, op->left);
    put_lop(w, op->right);
    switch (op->kind) {
    case SQL_LOP_GET:
        put_str(w, op->get.table_name);
        put_str(w, op->get.alias);
        for (uint32_t i = 0; i < op->nout; i++)
            put_u32(w, op->get.columns[i]);
        put_u64(w, op->get.rows);
        break;
    case SQL_LOP_FILTER:
        put_expr(w, op->filter.pred);
        break;
    case SQL_LOP_PROJECT:
        put_u32(w, op->project.count);
        for (uint32_t i = 0; i < op->project.count; i++)
            put_item(w, &op->project.items[i]);
        break;
    case SQL_LOP_JOIN:
        put_u8(w, (uint8_t)op->join.kind);
        put_expr(w, op->join.cond);
        put_u32(w, op->join.mark);
        break;
    case SQL_LOP_AGGREGATE:
        put_u32(w, op->aggregate.ngroups);
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            put_item(w, &op->aggregate.groups[i]);
        put_u32(w, op->aggregate.naggs);
        for (uint32_t i = 0; i < op->aggregate.naggs; i++) {
            const sql_agg_item *a = &op->aggregate.aggs[i];
            put_u8(w, (uint8_t)a->func);
            put_u8(w, a->distinct);
            put_expr(w, a->arg);
            put_u32(w, a->id);
        }
        break;
    case SQL_LOP_SORT:
        put_u32(w, op->sort.count);
        for (uint32_t i = 0; i < op->sort.count; i++) {
            put_expr(w, op->sort.keys[i].expr);
            put_u8(w, op->sort.keys[i].desc);
            put_u8(w, op->sort.keys[i].nulls_first);
        }
        break;
    case SQL_LOP_LIMIT:
        put_u64(w, (uint64_t)op->limit.limit);
        put_u64(w, (uint64_t)op->limit.offset);
        break;
    case SQL_LOP_DISTINCT:
        break;
    case SQL_LOP_SETOP:
        put_u8(w, (uint8_t)op->setop.op);
        put_u8(w, op->setop.all);
        break;
    case SQL_LOP_VALUES:
        put_u32(w, op->values.nrows);
        for (uint32_t r = 0; r < op->values.nrows; r++)
            put_list(w, &op->values.rows[r]);
        break;
    case SQL_LOP_EXCHANGE:
        put_u8(w, (uint8_t)op->exchange.kind);
        put_u32(w, op->exchange.nkeys);
        for (uint32_t i = 0; i < op->exchange.nkeys; i++)
            put_expr(w, op->exchange.keys[i]);
        put_u32(w, op->exchange.id);
        break;
    case SQL_LOP_KIND_COUNT:
        break;
    }
    if (!memo_put(&w->lops, op, w->next_lop++)) w->oom = true;
}

sto_status sql_plan_encode(const sql_plan *p, uint8_t **bytes, size_t *len)
{
    *bytes = NULL;
    *len = 0;
    writer w = {0};
    put_bytes(&w, SQL_PLAN_WIRE_MAGIC, 4);
    put_u32(&w, SQL_PLAN_WIRE_VERSION);
    const sql_plan_ctx *ctx = p->ctx;
    put_u32(&w, ctx->ncols);
    for (uint32_t id = 1; id <= ctx->ncols; id++) {
        put_type(&w, ctx->cols[id].type);
        put_u8(&w, ctx->cols[id].nullable);
        put_str(&w, ctx->cols[id].name);
    }
    put_u32(&w, ctx->nparams);
    for (uint32_t i = 0; i < ctx->nparams; i++)
        put_type(&w, ctx->param_types[i]);
    put_lop(&w, p->root);
    put_u32(&w, p->ncols);
    for (uint32_t i = 0; i < p->ncols; i++)
        put_u32(&w, p->cols[i]);
    for (uint32_t i = 0; i < p->ncols; i++)
        put_str(&w, p->names ? p->names[i] : NULL);
    free(w.lops.keys);
    free(w.lops.vals);
    free(w.exprs.keys);
    free(w.exprs.vals);
    if (w.oom) {
        free(w.buf);
        return sto_error_oom();
    }
    *bytes = w.buf;
    *len = w.len;
    return STO_OK;
}

/* ---------------------------------------------------------------- reader -- */

typedef struct reader {
    const uint8_t *p;
    size_t len, at;
    sql_arena *arena;
    sql_plan_ctx *ctx;
    sql_table_lookup lookup;
    void *lookup_arg;
    sto_status err;
    int depth;
    /* finished nodes by number, for back references */
    sql_lop **lops;
    uint32_t nlops, cap_lops;
    sql_bexpr **exprs;
    uint32_t nexprs, cap_exprs;
} reader;

/* The first damage found wins; later reads then return zeros. */
static void damaged(reader *r, const char *what)
{
    if (!r->err)
        r->err = sto_error(STO_DATA_CORRUPTED, "damaged plan at byte %zu: %s", r->at, what);
}

static void oom(reader *r)
{
    if (!r->err) r->err = sto_error_oom();
}

static const uint8_t *take(reader *r, size_t n)
{
    if (r->err) return NULL;
    if (n > r->len - r->at) {
        damaged(r, "truncated");
        return NULL;
    }
    const uint8_t *b = r->p + r->at;
    r->at += n;
    return b;
}

static uint8_t get_u8(reader *r)
{
    const uint8_t *b = take(r, 1);
    return b ? b[0] : 0;
}

static uint32_t get_u32(reader *r)
{
    const uint8_t *b = take(r, 4);
    if (!b) return 0;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t get_u64(reader *r)
{
    uint64_t lo = get_u32(r);
    return lo | (uint64_t)get_u32(r) << 32;
}

static double get_f64(reader *r)
{
    uint64_t v = get_u64(r);
    double d;
    memcpy(&d, &v, sizeof(d));
    return d;
}

static bool get_bool(reader *r)
{
    uint8_t v = get_u8(r);
    if (v > 1) damaged(r, "flag is neither 0 nor 1");
    return v == 1;
}

/* A count of items that each take at least `min_bytes`: bounded by what is
 * left, so a damaged count cannot ask for a huge allocation. */
static uint32_t get_count(reader *r, size_t min_bytes)
{
    uint32_t n = get_u32(r);
    if (!r->err && (uint64_t)n * min_bytes > r->len - r->at) {
        damaged(r, "count larger than the rest of the plan");
        return 0;
    }
    return n;
}

static void *alloc(reader *r, size_t size)
{
    if (r->err) return NULL;
    void *p = sql_arena_alloc(r->arena, size ? size : 1);
    if (!p) oom(r);
    return p;
}

static const char *get_str(reader *r)
{
    uint32_t n = get_u32(r);
    if (r->err || n == NULL_STR) return NULL;
    const uint8_t *b = take(r, n);
    if (!b) return NULL;
    if (memchr(b, 0, n)) {
        damaged(r, "NUL inside a name");
        return NULL;
    }
    char *s = sql_arena_strndup(r->arena, (const char *)b, n);
    if (!s) oom(r);
    return s;
}

static sto_type get_type(reader *r)
{
    sto_type t;
    t.id = get_u8(r);
    t.precision = get_u8(r);
    t.scale = get_u8(r);
    t.length = get_u32(r);
    if (t.id >= STO_TYPE_COUNT) damaged(r, "unknown type");
    if (t.id == STO_TYPE_DECIMAL &&
        (t.precision > STO_DECIMAL_MAX_PRECISION || t.scale > STO_DECIMAL_MAX_PRECISION))
        damaged(r, "DECIMAL precision or scale out of range");
    return t;
}

/* A column id; 0 only where the plan allows "no column". */
static sql_colid get_col(reader *r, bool zero_ok)
{
    uint32_t id = get_u32(r);
    if (r->err) return 0;
    if (id > r->ctx->ncols || (!zero_ok && id == 0)) {
        damaged(r, "column id out of range");
        return 0;
    }
    return id;
}

static unsigned get_enum(reader *r, unsigned count, const char *what)
{
    uint8_t v = get_u8(r);
    if (!r->err && v >= count) damaged(r, what);
    return v < count ? v : 0;
}

static sql_lop *get_lop(reader *r);
static sql_bexpr *get_expr(reader *r);

static sql_bexpr *need_expr(reader *r)
{
    sql_bexpr *e = get_expr(r);
    if (!e && !r->err) damaged(r, "missing expression");
    return e;
}

static void get_list(reader *r, sql_bexpr_list *l)
{
    l->count = get_count(r, 1);
    l->items = alloc(r, (size_t)l->count * sizeof(*l->items));
    for (uint32_t i = 0; i < l->count && !r->err; i++)
        l->items[i] = need_expr(r);
    if (r->err) l->count = 0;
}

static void get_value(reader *r, sto_type t, sto_value *v)
{
    memset(v, 0, sizeof(*v));
    v->is_null = get_bool(r);
    if (v->is_null || r->err) return;
    switch ((sto_type_id)t.id) {
    case STO_TYPE_DOUBLE:
        v->v.f64 = get_f64(r);
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR: {
        uint32_t n = get_u32(r);
        const uint8_t *b = take(r, n);
        if (!b) return;
        char *s = alloc(r, n);
        if (!s) return;
        memcpy(s, b, n);
        v->v.str = sto_str_make(s, n);
        break;
    }
    default:
        v->v.i64 = (int64_t)get_u64(r);
        break;
    }
}

/* Reads a slot's tag: returns true when a new node follows; *ref is set to
 * the earlier node a reference names (NULL for none). */
static bool get_tag(reader *r, void **table, uint32_t n, void **ref)
{
    *ref = NULL;
    uint8_t tag = get_u8(r);
    if (r->err || tag == TAG_NONE) return false;
    if (tag == TAG_REF) {
        uint32_t i = get_u32(r);
        if (!r->err && i >= n) damaged(r, "reference to a node not yet written");
        if (!r->err) *ref = table[i];
        return false;
    }
    if (tag != TAG_NEW) {
        damaged(r, "bad node tag");
        return false;
    }
    if (++r->depth > MAX_NESTING) {
        damaged(r, "plan nested too deeply");
        return false;
    }
    return true;
}

static bool remember(reader *r, void ***table, uint32_t *n, uint32_t *cap, void *node)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 64;
        void **t = realloc(*table, c * sizeof(*t));
        if (!t) {
            oom(r);
            return false;
        }
        *table = t;
        *cap = c;
    }
    (*table)[(*n)++] = node;
    return true;
}

static sql_bexpr *get_expr(reader *r)
{
    void *ref;
    if (!get_tag(r, (void **)r->exprs, r->nexprs, &ref)) return ref;
    sql_bexpr *e = alloc(r, sizeof(*e));
    if (!e) return NULL;
    e->kind = (sql_bexpr_kind)get_enum(r, SQL_BEXPR_KIND_COUNT, "unknown expression kind");
    e->type = get_type(r);
    e->nullable = get_bool(r);
    e->pos = (int)get_u32(r);
    switch (e->kind) {
    case SQL_BEXPR_CONST:
        get_value(r, e->type, &e->value);
        break;
    case SQL_BEXPR_COLUMN:
        e->column = get_col(r, false);
        break;
    case SQL_BEXPR_PARAM:
        e->param = (int)get_u32(r);
        if (!r->err && (e->param < 1 || (uint32_t)e->param > r->ctx->nparams))
            damaged(r, "parameter number out of range");
        break;
    case SQL_BEXPR_OP:
        e->op.op = (sql_op)get_enum(r, SQL_OP_COUNT, "unknown operator");
        e->op.args[0] = need_expr(r);
        e->op.args[1] = get_expr(r);
        break;
    case SQL_BEXPR_FUNC:
        e->func.id = (sql_func)get_u32(r);
        if (!r->err && (uint32_t)e->func.id >= SQL_FUNC_COUNT) damaged(r, "unknown function");
        get_list(r, &e->func.args);
        break;
    case SQL_BEXPR_CASE:
        get_list(r, &e->case_.conds);
        get_list(r, &e->case_.results);
        if (!r->err && e->case_.conds.count != e->case_.results.count)
            damaged(r, "CASE with unequal WHEN and THEN lists");
        e->case_.else_result = need_expr(r);
        break;
    case SQL_BEXPR_CAST:
        e->cast.arg = need_expr(r);
        break;
    case SQL_BEXPR_IN_LIST:
        e->in_list.arg = need_expr(r);
        get_list(r, &e->in_list.list);
        e->in_list.negated = get_bool(r);
        break;
    case SQL_BEXPR_IS_NULL:
        e->is_null.arg = need_expr(r);
        e->is_null.negated = get_bool(r);
        break;
    case SQL_BEXPR_SUBQUERY:
        e->subquery.kind = (sql_subquery_kind)get_enum(r, SQL_SUBQ_ALL + 1, "bad subquery kind");
        e->subquery.cmp = (sql_op)get_enum(r, SQL_OP_COUNT, "unknown operator");
        e->subquery.left = get_expr(r);
        if (!r->err && !e->subquery.left &&
            (e->subquery.kind == SQL_SUBQ_ANY || e->subquery.kind == SQL_SUBQ_ALL))
            damaged(r, "ANY/ALL without a left operand");
        e->subquery.plan = get_lop(r);
        if (!r->err && !e->subquery.plan) damaged(r, "subquery without a plan");
        e->subquery.col = get_col(r, true);
        e->subquery.nouter = get_count(r, 4);
        e->subquery.outer = alloc(r, (size_t)e->subquery.nouter * sizeof(sql_colid));
        for (uint32_t i = 0; i < e->subquery.nouter && !r->err; i++)
            e->subquery.outer[i] = get_col(r, false);
        break;
    case SQL_BEXPR_KIND_COUNT:
        break;
    }
    r->depth--;
    if (r->err) return NULL;
    remember(r, (void ***)&r->exprs, &r->nexprs, &r->cap_exprs, e);
    return r->err ? NULL : e;
}

static void get_item(reader *r, sql_proj_item *it)
{
    it->expr = need_expr(r);
    it->id = get_col(r, false);
}

/* Resolves a GET's table on this server and checks that the plan's view of
 * it (column indexes and types) matches the local schema. */
static void resolve_table(reader *r, sql_lop *op)
{
    if (r->err || !r->lookup) return;
    sto_table *t = NULL;
    uint64_t rows = 0;
    const sto_column_stats *stats = NULL;
    sto_status st = r->lookup(r->lookup_arg, op->get.table_name, &t, &rows, &stats);
    if (st) {
        r->err = st;
        return;
    }
    op->get.table = t;
    op->get.stats = t ? stats : NULL;
    if (!t) return;
    op->get.rows = rows;
    const sto_schema *s = sto_table_schema(t);
    for (uint32_t i = 0; i < op->nout; i++) {
        if (op->get.columns[i] >= s->ncols) {
            r->err = sto_error(STO_DATA_CORRUPTED,
                               "plan reads column %u of table %s, which has %u columns here",
                               op->get.columns[i], op->get.table_name, s->ncols);
            return;
        }
        if (s->cols[op->get.columns[i]].type.id != sql_plan_col(r->ctx, op->out[i])->type.id) {
            r->err = sto_error(STO_DATA_CORRUPTED,
                               "plan's type of %s.%s differs from this server's table",
                               op->get.table_name, s->cols[op->get.columns[i]].name);
            return;
        }
    }
}

static sql_lop *get_lop(reader *r)
{
    void *ref;
    if (!get_tag(r, (void **)r->lops, r->nlops, &ref)) return ref;
    sql_lop *op = alloc(r, sizeof(*op));
    if (!op) return NULL;
    op->kind = (sql_lop_kind)get_enum(r, SQL_LOP_KIND_COUNT, "unknown operator kind");
    op->nout = get_count(r, 4);
    op->out = alloc(r, (size_t)op->nout * sizeof(*op->out));
    for (uint32_t i = 0; i < op->nout && !r->err; i++)
        op->out[i] = get_col(r, false);
    op->est_rows = get_f64(r);
    op->phys.algorithm = (int)get_u32(r);
    op->phys.build_left = get_bool(r);
    op->left = get_lop(r);
    op->right = get_lop(r);
    if (!r->err) {
        bool leaf = op->kind == SQL_LOP_GET || op->kind == SQL_LOP_VALUES;
        bool binary = op->kind == SQL_LOP_JOIN || op->kind == SQL_LOP_SETOP;
        if (leaf ? (op->left || op->right) : (!op->left || (binary != (op->right != NULL))))
            damaged(r, "operator with the wrong number of inputs");
    }
    switch (op->kind) {
    case SQL_LOP_GET:
        op->get.table_name = get_str(r);
        if (!r->err && !op->get.table_name) damaged(r, "GET without a table name");
        op->get.alias = get_str(r);
        op->get.columns = alloc(r, (size_t)op->nout * sizeof(*op->get.columns));
        for (uint32_t i = 0; i < op->nout && !r->err; i++)
            op->get.columns[i] = get_u32(r);
        op->get.rows = get_u64(r);
        resolve_table(r, op);
        break;
    case SQL_LOP_FILTER:
        op->filter.pred = need_expr(r);
        break;
    case SQL_LOP_PROJECT:
        op->project.count = get_count(r, 5);
        op->project.items = alloc(r, (size_t)op->project.count * sizeof(*op->project.items));
        for (uint32_t i = 0; i < op->project.count && !r->err; i++)
            get_item(r, &op->project.items[i]);
        break;
    case SQL_LOP_JOIN:
        op->join.kind = (sql_join_kind)get_enum(r, SQL_JOINK_COUNT, "unknown join kind");
        op->join.cond = get_expr(r);
        op->join.mark = get_col(r, op->join.kind != SQL_JOINK_MARK);
        break;
    case SQL_LOP_AGGREGATE:
        op->aggregate.ngroups = get_count(r, 5);
        op->aggregate.groups =
            alloc(r, (size_t)op->aggregate.ngroups * sizeof(*op->aggregate.groups));
        for (uint32_t i = 0; i < op->aggregate.ngroups && !r->err; i++)
            get_item(r, &op->aggregate.groups[i]);
        op->aggregate.naggs = get_count(r, 7);
        op->aggregate.aggs = alloc(r, (size_t)op->aggregate.naggs * sizeof(*op->aggregate.aggs));
        for (uint32_t i = 0; i < op->aggregate.naggs && !r->err; i++) {
            sql_agg_item *a = &op->aggregate.aggs[i];
            a->func = (sql_agg)get_enum(r, SQL_AGG_COUNT_, "unknown aggregate");
            a->distinct = get_bool(r);
            a->arg = get_expr(r);
            if (!r->err && !a->arg && a->func != SQL_AGG_COUNT_STAR)
                damaged(r, "aggregate without an argument");
            a->id = get_col(r, false);
        }
        break;
    case SQL_LOP_SORT:
        op->sort.count = get_count(r, 3);
        op->sort.keys = alloc(r, (size_t)op->sort.count * sizeof(*op->sort.keys));
        for (uint32_t i = 0; i < op->sort.count && !r->err; i++) {
            op->sort.keys[i].expr = need_expr(r);
            op->sort.keys[i].desc = get_bool(r);
            op->sort.keys[i].nulls_first = get_bool(r);
        }
        break;
    case SQL_LOP_LIMIT:
        op->limit.limit = (int64_t)get_u64(r);
        op->limit.offset = (int64_t)get_u64(r);
        break;
    case SQL_LOP_DISTINCT:
        break;
    case SQL_LOP_SETOP:
        op->setop.op = (sql_setop)get_enum(r, SQL_SETOP_EXCEPT + 1, "unknown set operation");
        op->setop.all = get_bool(r);
        break;
    case SQL_LOP_VALUES:
        op->values.nrows = get_count(r, 4);
        op->values.rows = alloc(r, (size_t)op->values.nrows * sizeof(*op->values.rows));
        for (uint32_t i = 0; i < op->values.nrows && !r->err; i++)
            get_list(r, &op->values.rows[i]);
        break;
    case SQL_LOP_EXCHANGE:
        op->exchange.kind =
            (sql_exchange_kind)get_enum(r, SQL_EXCH_GATHER + 1, "unknown exchange kind");
        op->exchange.nkeys = get_count(r, 1);
        op->exchange.keys = alloc(r, (size_t)op->exchange.nkeys * sizeof(*op->exchange.keys));
        for (uint32_t i = 0; i < op->exchange.nkeys && !r->err; i++)
            op->exchange.keys[i] = need_expr(r);
        op->exchange.id = get_u32(r);
        break;
    case SQL_LOP_KIND_COUNT:
        break;
    }
    r->depth--;
    if (r->err) return NULL;
    remember(r, (void ***)&r->lops, &r->nlops, &r->cap_lops, op);
    return r->err ? NULL : op;
}

static void get_context(reader *r)
{
    sql_plan_ctx *ctx = r->ctx;
    uint32_t n = get_count(r, 8);
    if (!r->err && n == UINT32_MAX) damaged(r, "too many columns");
    if (r->err) return;
    ctx->cols = alloc(r, ((size_t)n + 1) * sizeof(*ctx->cols));
    if (!ctx->cols) return;
    ctx->cap = n + 1;
    for (uint32_t id = 1; id <= n && !r->err; id++) {
        ctx->cols[id].type = get_type(r);
        ctx->cols[id].nullable = get_bool(r);
        ctx->cols[id].name = get_str(r);
    }
    ctx->ncols = n;
    uint32_t np = get_count(r, 7);
    ctx->param_types = alloc(r, (size_t)np * sizeof(*ctx->param_types));
    for (uint32_t i = 0; i < np && !r->err; i++)
        ctx->param_types[i] = get_type(r);
    ctx->nparams = np;
}

sto_status sql_plan_decode(const uint8_t *bytes, size_t len, sql_table_lookup lookup, void *arg,
                           sql_plan **out)
{
    *out = NULL;
    if (len < 8 || memcmp(bytes, SQL_PLAN_WIRE_MAGIC, 4) != 0)
        return sto_error(STO_PROTOCOL_VIOLATION, "not a rackdb plan (bad magic)");
    uint32_t version = (uint32_t)bytes[4] | (uint32_t)bytes[5] << 8 | (uint32_t)bytes[6] << 16 |
                       (uint32_t)bytes[7] << 24;
    if (version != SQL_PLAN_WIRE_VERSION)
        return sto_error(STO_PROTOCOL_VIOLATION,
                         "plan format version %u, this server reads version %u", version,
                         SQL_PLAN_WIRE_VERSION);
    reader r = {.p = bytes, .len = len, .at = 8, .lookup = lookup, .lookup_arg = arg};
    r.arena = sql_arena_create();
    if (!r.arena) return sto_error_oom();
    r.ctx = sql_plan_ctx_new(r.arena);
    sql_plan *plan = alloc(&r, sizeof(*plan));
    if (!r.ctx) oom(&r);
    if (!r.err) get_context(&r);
    if (plan) {
        plan->ctx = r.ctx;
        plan->root = get_lop(&r);
        if (!r.err && !plan->root) damaged(&r, "plan without a root operator");
        plan->ncols = get_count(&r, 8);
        plan->cols = alloc(&r, (size_t)plan->ncols * sizeof(*plan->cols));
        for (uint32_t i = 0; i < plan->ncols && !r.err; i++)
            plan->cols[i] = get_col(&r, false);
        plan->names = alloc(&r, (size_t)plan->ncols * sizeof(*plan->names));
        for (uint32_t i = 0; i < plan->ncols && !r.err; i++)
            plan->names[i] = get_str(&r);
        if (!r.err && r.at != r.len) damaged(&r, "bytes after the end of the plan");
    }
    free(r.lops);
    free(r.exprs);
    if (r.err) {
        sql_arena_destroy(r.arena);
        return r.err;
    }
    *out = plan;
    return STO_OK;
}

void sql_plan_decoded_free(sql_plan *p)
{
    if (p && p->ctx) sql_arena_destroy(p->ctx->arena);
}
