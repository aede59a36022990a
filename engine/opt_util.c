/*
 * opt_util.c — the small tools every optimizer rule uses: id sets, conjunct
 * lists, expression substitution and operator output bookkeeping.
 *
 * Everything allocates from the plan's arena: rules build many short-lived
 * sets, and the arena frees them all with the statement.
 */
#include <string.h>

#include "engine/opt_int.h"

/* ------------------------------------------------------------ id sets -- */

void eng_idset_init(eng_idset *s)
{
    s->nwords = 0;
    s->w = NULL;
}

static bool grow(sql_plan_ctx *ctx, eng_idset *s, uint32_t words)
{
    if (words <= s->nwords) return true;
    uint32_t n = s->nwords ? s->nwords : 4;
    while (n < words)
        n *= 2;
    uint64_t *w = sql_arena_alloc(ctx->arena, n * sizeof(uint64_t));
    if (!w) return false;
    if (s->nwords) memcpy(w, s->w, s->nwords * sizeof(uint64_t));
    s->w = w;
    s->nwords = n;
    return true;
}

bool eng_idset_add(sql_plan_ctx *ctx, eng_idset *s, sql_colid id)
{
    if (!grow(ctx, s, id / 64 + 1)) return false;
    s->w[id / 64] |= (uint64_t)1 << (id % 64);
    return true;
}

bool eng_idset_has(const eng_idset *s, sql_colid id)
{
    uint32_t word = id / 64;
    return word < s->nwords && ((s->w[word] >> (id % 64)) & 1);
}

bool eng_idset_add_all(sql_plan_ctx *ctx, eng_idset *s, const eng_idset *from)
{
    for (uint32_t i = from->nwords; i-- > 0;) {
        if (!from->w[i]) continue;
        if (!grow(ctx, s, i + 1)) return false;
        s->w[i] |= from->w[i];
    }
    return true;
}

bool eng_idset_subset(const eng_idset *a, const eng_idset *b)
{
    for (uint32_t i = 0; i < a->nwords; i++) {
        uint64_t bw = i < b->nwords ? b->w[i] : 0;
        if (a->w[i] & ~bw) return false;
    }
    return true;
}

bool eng_idset_intersects(const eng_idset *a, const eng_idset *b)
{
    uint32_t n = a->nwords < b->nwords ? a->nwords : b->nwords;
    for (uint32_t i = 0; i < n; i++)
        if (a->w[i] & b->w[i]) return true;
    return false;
}

bool eng_idset_empty(const eng_idset *s)
{
    for (uint32_t i = 0; i < s->nwords; i++)
        if (s->w[i]) return false;
    return true;
}

bool eng_idset_of_out(sql_plan_ctx *ctx, eng_idset *s, const sql_lop *op)
{
    for (uint32_t i = 0; i < op->nout; i++)
        if (!eng_idset_add(ctx, s, op->out[i])) return false;
    return true;
}

/* ------------------------------------------------------ expressions -- */

typedef struct refs_walk {
    sql_plan_ctx *ctx;
    eng_idset *set;
    bool oom;
} refs_walk;

static sql_walk refs_fn(sql_bexpr **slot, void *arg)
{
    refs_walk *w = arg;
    const sql_bexpr *e = *slot;
    if (e->kind == SQL_BEXPR_COLUMN) {
        if (!eng_idset_add(w->ctx, w->set, e->column)) w->oom = true;
    } else if (e->kind == SQL_BEXPR_SUBQUERY) {
        for (uint32_t i = 0; i < e->subquery.nouter; i++)
            if (!eng_idset_add(w->ctx, w->set, e->subquery.outer[i])) w->oom = true;
    }
    return w->oom ? SQL_WALK_STOP : SQL_WALK_CONTINUE;
}

bool eng_expr_refs(sql_plan_ctx *ctx, const sql_bexpr *e, eng_idset *s)
{
    if (!e) return true;
    refs_walk w = {ctx, s, false};
    sql_bexpr *root = (sql_bexpr *)e; /* the walk only reads */
    sql_bexpr_walk(&root, refs_fn, &w);
    return !w.oom;
}

static sql_walk has_subquery_fn(sql_bexpr **slot, void *arg)
{
    (void)arg;
    return (*slot)->kind == SQL_BEXPR_SUBQUERY ? SQL_WALK_STOP : SQL_WALK_CONTINUE;
}

bool eng_expr_has_subquery(const sql_bexpr *e)
{
    if (!e) return false;
    sql_bexpr *root = (sql_bexpr *)e;
    return !sql_bexpr_walk(&root, has_subquery_fn, NULL);
}

bool eng_conj_push(sql_plan_ctx *ctx, eng_conj *l, sql_bexpr *e)
{
    if (!e) return false;
    if (l->count == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 8;
        sql_bexpr **items = sql_arena_alloc(ctx->arena, cap * sizeof(*items));
        if (!items) return false;
        if (l->count) memcpy(items, l->items, l->count * sizeof(*items));
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count++] = e;
    return true;
}

bool eng_conj_split(sql_plan_ctx *ctx, eng_conj *l, sql_bexpr *e)
{
    if (!e) return true;
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_AND)
        return eng_conj_split(ctx, l, e->op.args[0]) && eng_conj_split(ctx, l, e->op.args[1]);
    return eng_conj_push(ctx, l, e);
}

sql_bexpr *eng_expr_and(sql_plan_ctx *ctx, sql_bexpr *a, sql_bexpr *b)
{
    if (!a) return b;
    if (!b) return a;
    return sql_bexpr_op(ctx, SQL_OP_AND, sto_type_make(STO_TYPE_BOOLEAN), a, b, 0);
}

sql_bexpr *eng_conj_and(sql_plan_ctx *ctx, const eng_conj *l, bool *oom)
{
    sql_bexpr *r = NULL;
    for (uint32_t i = 0; i < l->count; i++) {
        r = eng_expr_and(ctx, r, l->items[i]);
        if (!r) {
            *oom = true;
            return NULL;
        }
    }
    return r;
}

sql_bexpr *eng_bool_const(sql_plan_ctx *ctx, bool v)
{
    sql_bexpr *e = sql_bexpr_new(ctx, SQL_BEXPR_CONST, sto_type_make(STO_TYPE_BOOLEAN), false, 0);
    if (e) e->value.v.i64 = v;
    return e;
}

bool eng_expr_is_bool_const(const sql_bexpr *e, bool v)
{
    return e && e->kind == SQL_BEXPR_CONST && e->type.id == STO_TYPE_BOOLEAN && !e->value.is_null &&
           (e->value.v.i64 != 0) == v;
}

sql_bexpr *eng_expr_not(sql_plan_ctx *ctx, sql_bexpr *e)
{
    return sql_bexpr_op(ctx, SQL_OP_NOT, sto_type_make(STO_TYPE_BOOLEAN), e, NULL, 0);
}

sql_bexpr *eng_expr_is_null(sql_plan_ctx *ctx, sql_bexpr *e, bool negated)
{
    if (!e) return NULL;
    sql_bexpr *r = sql_bexpr_new(ctx, SQL_BEXPR_IS_NULL, sto_type_make(STO_TYPE_BOOLEAN), false, 0);
    if (!r) return NULL;
    r->is_null.arg = e;
    r->is_null.negated = negated;
    return r;
}

typedef struct subst_walk {
    sql_plan_ctx *ctx;
    sql_bexpr *const *map;
    uint32_t nmap;
    bool oom;
} subst_walk;

static sql_walk subst_fn(sql_bexpr **slot, void *arg)
{
    subst_walk *w = arg;
    sql_bexpr *e = *slot;
    if (e->kind != SQL_BEXPR_COLUMN || e->column >= w->nmap || !w->map[e->column])
        return SQL_WALK_CONTINUE;
    sql_bexpr *r = sql_bexpr_copy(w->ctx, w->map[e->column]);
    if (!r) {
        w->oom = true;
        return SQL_WALK_STOP;
    }
    *slot = r;
    return SQL_WALK_SKIP;
}

sql_bexpr *eng_expr_subst(sql_plan_ctx *ctx, const sql_bexpr *e, sql_bexpr *const *map,
                          uint32_t nmap)
{
    sql_bexpr *c = sql_bexpr_copy(ctx, e);
    if (!c) return NULL;
    subst_walk w = {ctx, map, nmap, false};
    sql_bexpr_walk(&c, subst_fn, &w);
    return w.oom ? NULL : c;
}

typedef struct rename_walk {
    sql_colid from, to;
} rename_walk;

static sql_walk rename_fn(sql_bexpr **slot, void *arg)
{
    rename_walk *w = arg;
    sql_bexpr *e = *slot;
    if (e->kind == SQL_BEXPR_COLUMN && e->column == w->from) e->column = w->to;
    if (e->kind == SQL_BEXPR_SUBQUERY) {
        for (uint32_t i = 0; i < e->subquery.nouter; i++)
            if (e->subquery.outer[i] == w->from) e->subquery.outer[i] = w->to;
    }
    return SQL_WALK_CONTINUE;
}

void eng_expr_rename(sql_bexpr *e, sql_colid from, sql_colid to)
{
    if (!e) return;
    rename_walk w = {from, to};
    sql_bexpr_walk(&e, rename_fn, &w);
}

bool eng_expr_strict(const sql_bexpr *e)
{
    switch (e->kind) {
    case SQL_BEXPR_CONST:
    case SQL_BEXPR_COLUMN:
    case SQL_BEXPR_PARAM:
        return true;
    case SQL_BEXPR_OP:
        /* NULL OR true is true and NULL AND false is false: only the
         * comparison and arithmetic operators pass NULL through. */
        if (e->op.op == SQL_OP_OR || e->op.op == SQL_OP_AND) return false;
        return eng_expr_strict(e->op.args[0]) && (!e->op.args[1] || eng_expr_strict(e->op.args[1]));
    case SQL_BEXPR_FUNC:
        if (sql_func_skips_nulls(e->func.id) || e->func.id == SQL_FUNC_NULLIF) return false;
        for (uint32_t i = 0; i < e->func.args.count; i++)
            if (!eng_expr_strict(e->func.args.items[i])) return false;
        return true;
    case SQL_BEXPR_CAST:
        return eng_expr_strict(e->cast.arg);
    case SQL_BEXPR_IN_LIST:
        return eng_expr_strict(e->in_list.arg);
    case SQL_BEXPR_CASE:
    case SQL_BEXPR_IS_NULL:
    case SQL_BEXPR_SUBQUERY:
    case SQL_BEXPR_KIND_COUNT:
        return false;
    }
    return false;
}

static sql_walk refresh_fn(sql_bexpr **slot, void *arg)
{
    const sql_plan_ctx *ctx = arg;
    sql_bexpr *e = *slot;
    if (e->kind == SQL_BEXPR_COLUMN) e->nullable = sql_plan_col(ctx, e->column)->nullable;
    return SQL_WALK_CONTINUE;
}

/* Children first, so parents see their operands' new flags. */
static void refresh_up(sql_bexpr *e)
{
    switch (e->kind) {
    case SQL_BEXPR_OP:
        refresh_up(e->op.args[0]);
        if (e->op.args[1]) refresh_up(e->op.args[1]);
        if (e->op.op != SQL_OP_AND && e->op.op != SQL_OP_OR)
            e->nullable = e->op.args[0]->nullable || (e->op.args[1] && e->op.args[1]->nullable);
        else
            e->nullable = e->nullable || e->op.args[0]->nullable || e->op.args[1]->nullable;
        break;
    case SQL_BEXPR_CAST:
        refresh_up(e->cast.arg);
        e->nullable = e->nullable || e->cast.arg->nullable;
        break;
    case SQL_BEXPR_FUNC:
        for (uint32_t i = 0; i < e->func.args.count; i++) {
            refresh_up(e->func.args.items[i]);
            if (!sql_func_skips_nulls(e->func.id) && e->func.args.items[i]->nullable)
                e->nullable = true;
        }
        break;
    case SQL_BEXPR_IN_LIST:
        refresh_up(e->in_list.arg);
        e->nullable = e->nullable || e->in_list.arg->nullable;
        break;
    case SQL_BEXPR_CASE:
        for (uint32_t i = 0; i < e->case_.conds.count; i++) {
            refresh_up(e->case_.conds.items[i]);
            refresh_up(e->case_.results.items[i]);
            e->nullable = e->nullable || e->case_.results.items[i]->nullable;
        }
        refresh_up(e->case_.else_result);
        e->nullable = e->nullable || e->case_.else_result->nullable;
        break;
    case SQL_BEXPR_IS_NULL:
        refresh_up(e->is_null.arg);
        break;
    default:
        break;
    }
}

void eng_expr_refresh_nullable(const sql_plan_ctx *ctx, sql_bexpr *e)
{
    if (!e) return;
    sql_bexpr_walk(&e, refresh_fn, (void *)ctx);
    refresh_up(e);
}

/* ------------------------------------------------------- operators -- */

static bool set_out(sql_plan_ctx *ctx, sql_lop *op, uint32_t n)
{
    if (n > op->nout || !op->out) {
        sql_colid *out = sql_arena_alloc(ctx->arena, (n ? n : 1) * sizeof(sql_colid));
        if (!out) return false;
        op->out = out;
    }
    op->nout = n;
    return true;
}

bool eng_lop_recompute_out(sql_plan_ctx *ctx, sql_lop *op)
{
    switch (op->kind) {
    case SQL_LOP_FILTER:
    case SQL_LOP_SORT:
    case SQL_LOP_LIMIT:
    case SQL_LOP_DISTINCT: {
        const sql_lop *in = op->left;
        if (!set_out(ctx, op, in->nout)) return false;
        if (in->nout) memcpy(op->out, in->out, in->nout * sizeof(sql_colid));
        return true;
    }
    case SQL_LOP_PROJECT:
        if (!set_out(ctx, op, op->project.count)) return false;
        for (uint32_t i = 0; i < op->project.count; i++)
            op->out[i] = op->project.items[i].id;
        return true;
    case SQL_LOP_AGGREGATE: {
        uint32_t n = op->aggregate.ngroups + op->aggregate.naggs;
        if (!set_out(ctx, op, n)) return false;
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            op->out[i] = op->aggregate.groups[i].id;
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            op->out[op->aggregate.ngroups + i] = op->aggregate.aggs[i].id;
        return true;
    }
    case SQL_LOP_JOIN: {
        sql_join_kind k = op->join.kind;
        bool left_only = k == SQL_JOINK_SEMI || k == SQL_JOINK_ANTI || k == SQL_JOINK_MARK;
        uint32_t n =
            op->left->nout + (left_only ? 0 : op->right->nout) + (k == SQL_JOINK_MARK ? 1 : 0);
        if (!set_out(ctx, op, n)) return false;
        if (op->left->nout) memcpy(op->out, op->left->out, op->left->nout * sizeof(sql_colid));
        uint32_t at = op->left->nout;
        if (!left_only && op->right->nout) {
            memcpy(op->out + at, op->right->out, op->right->nout * sizeof(sql_colid));
            at += op->right->nout;
        }
        if (k == SQL_JOINK_MARK) op->out[at] = op->join.mark;
        return true;
    }
    default:
        return true;
    }
}

sql_lop *eng_lop_passthrough(sql_plan_ctx *ctx, sql_lop *input, const sql_colid *out, uint32_t n)
{
    sql_lop *p = sql_lop_new(ctx, SQL_LOP_PROJECT, input, NULL, n);
    if (!p) return NULL;
    p->project.count = n;
    p->project.items = sql_arena_alloc(ctx->arena, (n ? n : 1) * sizeof(sql_proj_item));
    if (!p->project.items) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        p->project.items[i].expr = sql_bexpr_column(ctx, out[i], 0);
        if (!p->project.items[i].expr) return NULL;
        p->project.items[i].id = out[i];
        p->out[i] = out[i];
    }
    return p;
}

sql_lop *eng_lop_filter(sql_plan_ctx *ctx, sql_lop *input, sql_bexpr *pred)
{
    if (!input || !pred) return NULL;
    sql_lop *f = sql_lop_new(ctx, SQL_LOP_FILTER, input, NULL, 0);
    if (!f) return NULL;
    f->filter.pred = pred;
    return eng_lop_recompute_out(ctx, f) ? f : NULL;
}

sql_lop *eng_lop_join(sql_plan_ctx *ctx, sql_join_kind kind, sql_lop *l, sql_lop *r,
                      sql_bexpr *cond)
{
    if (!l || !r) return NULL;
    sql_lop *j = sql_lop_new(ctx, SQL_LOP_JOIN, l, r, 0);
    if (!j) return NULL;
    j->join.kind = kind;
    j->join.cond = cond;
    if (kind == SQL_JOINK_MARK) {
        j->join.mark = sql_plan_new_col(ctx, sto_type_make(STO_TYPE_BOOLEAN), true, "mark");
        if (!j->join.mark) return NULL;
    }
    return eng_lop_recompute_out(ctx, j) ? j : NULL;
}

bool eng_lop_produced(sql_plan_ctx *ctx, const sql_lop *op, eng_idset *s)
{
    if (!op) return true;
    if (!eng_idset_of_out(ctx, s, op)) return false;
    if (op->kind == SQL_LOP_JOIN && op->join.kind == SQL_JOINK_MARK &&
        !eng_idset_add(ctx, s, op->join.mark))
        return false;
    return eng_lop_produced(ctx, op->left, s) && eng_lop_produced(ctx, op->right, s);
}

static bool list_refs(sql_plan_ctx *ctx, const sql_bexpr_list *l, eng_idset *s)
{
    for (uint32_t i = 0; i < l->count; i++)
        if (!eng_expr_refs(ctx, l->items[i], s)) return false;
    return true;
}

bool eng_lop_refs(sql_plan_ctx *ctx, const sql_lop *op, eng_idset *s)
{
    if (!op) return true;
    bool ok = true;
    switch (op->kind) {
    case SQL_LOP_FILTER:
        ok = eng_expr_refs(ctx, op->filter.pred, s);
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; ok && i < op->project.count; i++)
            ok = eng_expr_refs(ctx, op->project.items[i].expr, s);
        break;
    case SQL_LOP_JOIN:
        ok = eng_expr_refs(ctx, op->join.cond, s);
        break;
    case SQL_LOP_AGGREGATE:
        for (uint32_t i = 0; ok && i < op->aggregate.ngroups; i++)
            ok = eng_expr_refs(ctx, op->aggregate.groups[i].expr, s);
        for (uint32_t i = 0; ok && i < op->aggregate.naggs; i++)
            ok = eng_expr_refs(ctx, op->aggregate.aggs[i].arg, s);
        break;
    case SQL_LOP_SORT:
        for (uint32_t i = 0; ok && i < op->sort.count; i++)
            ok = eng_expr_refs(ctx, op->sort.keys[i].expr, s);
        break;
    case SQL_LOP_VALUES:
        for (uint32_t i = 0; ok && i < op->values.nrows; i++)
            ok = list_refs(ctx, &op->values.rows[i], s);
        break;
    case SQL_LOP_SETOP:
        ok = eng_idset_of_out(ctx, s, op->left) && eng_idset_of_out(ctx, s, op->right);
        break;
    default:
        break;
    }
    return ok && eng_lop_refs(ctx, op->left, s) && eng_lop_refs(ctx, op->right, s);
}

bool eng_lop_free(sql_plan_ctx *ctx, const sql_lop *op, eng_idset *s)
{
    eng_idset refs, prod;
    eng_idset_init(&refs);
    eng_idset_init(&prod);
    if (!eng_lop_refs(ctx, op, &refs) || !eng_lop_produced(ctx, op, &prod)) return false;
    for (uint32_t i = 0; i < refs.nwords; i++) {
        uint64_t pw = i < prod.nwords ? prod.w[i] : 0;
        uint64_t f = refs.w[i] & ~pw;
        for (; f; f &= f - 1)
            if (!eng_idset_add(ctx, s, i * 64 + (uint32_t)__builtin_ctzll(f))) return false;
    }
    return true;
}

/* Copies keep plans trees: a second use of a subtree (the magic set's
 * outer side, a semi-join reducer) gets its own operators and ids. */
sql_lop *eng_lop_copy_fresh(sql_plan_ctx *ctx, const sql_lop *op, sql_bexpr **map, uint32_t nmap)
{
    sql_lop *c = sql_lop_new(ctx, op->kind, NULL, NULL, 0);
    if (!c) return NULL;
    memcpy(c, op, sizeof(*c));
    c->out = NULL;
    c->nout = 0;
    if (op->left && !(c->left = eng_lop_copy_fresh(ctx, op->left, map, nmap))) return NULL;
    if (op->right && !(c->right = eng_lop_copy_fresh(ctx, op->right, map, nmap))) return NULL;
#define FRESH(id, dst)                                                                             \
    do {                                                                                           \
        const sql_col_info *ci_ = sql_plan_col(ctx, id);                                           \
        dst = sql_plan_new_col(ctx, ci_->type, ci_->nullable, ci_->name);                          \
        if (!dst) return NULL;                                                                     \
        if ((id) < nmap && !(map[id] = sql_bexpr_column(ctx, dst, 0))) return NULL;                \
    } while (0)
#define COPYX(dst, src)                                                                            \
    do {                                                                                           \
        if (src) {                                                                                 \
            if (eng_expr_has_subquery(src)) return NULL;                                           \
            if (!(dst = eng_expr_subst(ctx, src, map, nmap))) return NULL;                         \
        }                                                                                          \
    } while (0)
    switch (op->kind) {
    case SQL_LOP_GET:
    case SQL_LOP_SETOP:
    case SQL_LOP_VALUES:
        c->out = sql_arena_alloc(ctx->arena, (op->nout + 1) * sizeof(sql_colid));
        if (!c->out) return NULL;
        c->nout = op->nout;
        for (uint32_t i = 0; i < op->nout; i++)
            FRESH(op->out[i], c->out[i]);
        if (op->kind == SQL_LOP_GET) {
            /* Column pruning compacts get.columns in place: the copy needs
             * its own array. */
            c->get.columns = sql_arena_alloc(ctx->arena, (op->nout + 1) * sizeof(uint32_t));
            if (!c->get.columns) return NULL;
            memcpy(c->get.columns, op->get.columns, op->nout * sizeof(uint32_t));
        }
        if (op->kind == SQL_LOP_VALUES) {
            c->values.rows =
                sql_arena_alloc(ctx->arena, (op->values.nrows + 1) * sizeof(sql_bexpr_list));
            if (!c->values.rows) return NULL;
            for (uint32_t r = 0; r < op->values.nrows; r++) {
                const sql_bexpr_list *l = &op->values.rows[r];
                c->values.rows[r].count = l->count;
                c->values.rows[r].items =
                    sql_arena_alloc(ctx->arena, (l->count + 1) * sizeof(sql_bexpr *));
                if (!c->values.rows[r].items) return NULL;
                for (uint32_t k = 0; k < l->count; k++)
                    COPYX(c->values.rows[r].items[k], l->items[k]);
            }
        }
        return c;
    case SQL_LOP_FILTER:
        COPYX(c->filter.pred, op->filter.pred);
        break;
    case SQL_LOP_PROJECT:
        c->project.items =
            sql_arena_alloc(ctx->arena, (op->project.count + 1) * sizeof(sql_proj_item));
        if (!c->project.items) return NULL;
        for (uint32_t i = 0; i < op->project.count; i++) {
            const sql_proj_item *it = &op->project.items[i];
            COPYX(c->project.items[i].expr, it->expr);
            if (it->expr->kind == SQL_BEXPR_COLUMN && it->expr->column == it->id)
                c->project.items[i].id = c->project.items[i].expr->column;
            else
                FRESH(it->id, c->project.items[i].id);
        }
        break;
    case SQL_LOP_JOIN:
        COPYX(c->join.cond, op->join.cond);
        if (op->join.kind == SQL_JOINK_MARK) FRESH(op->join.mark, c->join.mark);
        break;
    case SQL_LOP_AGGREGATE:
        c->aggregate.groups =
            sql_arena_alloc(ctx->arena, (op->aggregate.ngroups + 1) * sizeof(sql_proj_item));
        c->aggregate.aggs =
            sql_arena_alloc(ctx->arena, (op->aggregate.naggs + 1) * sizeof(sql_agg_item));
        if (!c->aggregate.groups || !c->aggregate.aggs) return NULL;
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++) {
            const sql_proj_item *it = &op->aggregate.groups[i];
            COPYX(c->aggregate.groups[i].expr, it->expr);
            if (it->expr->kind == SQL_BEXPR_COLUMN && it->expr->column == it->id)
                c->aggregate.groups[i].id = c->aggregate.groups[i].expr->column;
            else
                FRESH(it->id, c->aggregate.groups[i].id);
        }
        for (uint32_t i = 0; i < op->aggregate.naggs; i++) {
            c->aggregate.aggs[i] = op->aggregate.aggs[i];
            COPYX(c->aggregate.aggs[i].arg, op->aggregate.aggs[i].arg);
            FRESH(op->aggregate.aggs[i].id, c->aggregate.aggs[i].id);
        }
        break;
    case SQL_LOP_SORT:
        c->sort.keys = sql_arena_alloc(ctx->arena, (op->sort.count + 1) * sizeof(sql_sort_key));
        if (!c->sort.keys) return NULL;
        for (uint32_t i = 0; i < op->sort.count; i++) {
            c->sort.keys[i] = op->sort.keys[i];
            COPYX(c->sort.keys[i].expr, op->sort.keys[i].expr);
        }
        break;
    default:
        break;
    }
#undef FRESH
#undef COPYX
    return eng_lop_recompute_out(ctx, c) ? c : NULL;
}
