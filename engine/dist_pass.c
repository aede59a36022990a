/*
 * dist_pass.c — the distribution pass: EXCHANGE operators into an optimized
 * plan so that it is correct whatever rows each server holds (dist.h).
 *
 * The pass walks the plan bottom-up and knows, for every operator, how its
 * output rows lie across the servers (a "placement"):
 *   ANY         each row on exactly one server, no rule known (a table scan)
 *   HASH(keys)  each row on server crc32(keys) mod n; a key position may
 *               have several equal columns (both sides of an equi join)
 *   REPLICATED  every server has every row (a replicated table, VALUES, a
 *               broadcast, whatever is computed from replicated inputs only)
 *   SINGLE      the coordinator has every row, the others none that count
 *               (after a GATHER; only on the way to the result)
 * Each operator asks for the placement it needs and an exchange is put
 * below it when its input does not have it:
 *   join        co-located inputs (HASH on matching keys, or one side
 *               replicated where that side may be: never the side whose
 *               unmatched rows are kept) need nothing; otherwise the
 *               cheapest of broadcasting the small side (bytes × (n-1))
 *               and hash-shuffling both sides, or only the side not yet
 *               hashed on its keys ((bytes) × (n-1)/n each), by estimates.
 *   aggregate   a partial aggregate per server, a shuffle of the partial
 *               states on the group keys, the final aggregate (SUM/COUNT
 *               add up, MIN/MAX again, AVG as SUM and COUNT divided after);
 *               DISTINCT aggregates shuffle the raw rows instead. Without
 *               groups the partial rows go to one place. An input already
 *               hashed on a subset of the group columns needs nothing.
 *   DISTINCT    as a group-by over every column.
 *   SORT/LIMIT  a local top-k (LIMIT: a local limit) then the final one in
 *               one place; a plain SORT just moves its input there first.
 * "One place" is the coordinator (GATHER) on the path from the root, where
 * nothing but the result depends on the other servers' rows; anywhere else
 * (a scalar subquery's aggregate under a join) it is every server
 * (BROADCAST), so each server's copy can meet its own rows. The root gets a
 * GATHER unless its rows are already in one place.
 */
#include <stdio.h>
#include <string.h>

#include "engine/catalog.h"
#include "engine/dist.h"
#include "engine/optimize.h"

#define MAX_KEYS 8 /* key positions a placement tracks */
#define MAX_EQ   4 /* equal columns per key position */

typedef enum place_kind { P_ANY, P_HASH, P_REPL, P_SINGLE } place_kind;

typedef struct place {
    place_kind kind;
    uint32_t nkeys;
    uint8_t neq[MAX_KEYS];
    sql_colid eq[MAX_KEYS][MAX_EQ];
} place;

typedef struct dist {
    sql_plan *plan;
    sql_plan_ctx *ctx;
    const eng_catalog *catalog; /* placement of tables; NULL: all chunked */
    int n;                      /* servers, at least 2 for costs */
    uint32_t next_id;           /* exchange ids */
} dist;

static bool in_one_place(const place *p)
{
    return p->kind == P_REPL || p->kind == P_SINGLE;
}

static bool has_id(const sql_lop *op, sql_colid id)
{
    for (uint32_t i = 0; i < op->nout; i++)
        if (op->out[i] == id) return true;
    return false;
}

/* Keeps only the equal columns op still outputs; a key position left
 * without any makes the placement ANY. */
static void restrict_to(place *p, const sql_lop *op)
{
    if (p->kind != P_HASH) return;
    for (uint32_t k = 0; k < p->nkeys; k++) {
        uint8_t m = 0;
        for (uint8_t e = 0; e < p->neq[k]; e++)
            if (has_id(op, p->eq[k][e])) p->eq[k][m++] = p->eq[k][e];
        p->neq[k] = m;
        if (!m) {
            p->kind = P_ANY;
            return;
        }
    }
}

static bool place_has(const place *p, uint32_t k, sql_colid id)
{
    for (uint8_t e = 0; e < p->neq[k]; e++)
        if (p->eq[k][e] == id) return true;
    return false;
}

static void eq_add(place *p, uint32_t k, sql_colid id)
{
    if (id && p->neq[k] < MAX_EQ && !place_has(p, k, id)) p->eq[k][p->neq[k]++] = id;
}

/* Bytes one output row of op is estimated to take. */
static double row_width(const dist *d, const sql_lop *op)
{
    double w = 0;
    for (uint32_t i = 0; i < op->nout; i++) {
        sto_type t = sql_plan_col(d->ctx, op->out[i])->type;
        if (t.id == STO_TYPE_CHAR || t.id == STO_TYPE_VARCHAR)
            w += 4 + (t.length ? (t.length < 64 ? t.length : 64) : 16);
        else
            w += (double)sto_type_width(t.id);
    }
    return w + 1;
}

static double bytes_of(const dist *d, const sql_lop *op)
{
    double rows = op->est_rows > 1 ? op->est_rows : 1;
    return rows * row_width(d, op);
}

/* A new EXCHANGE above input (its ids unchanged). keys are copied. */
static sto_status exchange(dist *d, sql_lop *input, sql_exchange_kind kind, uint32_t nkeys,
                           sql_bexpr *const *keys, sql_lop **out)
{
    sql_lop *x = sql_lop_new(d->ctx, SQL_LOP_EXCHANGE, input, NULL, 0);
    if (!x) return sto_error_oom();
    x->nout = input->nout;
    x->out = input->out;
    x->est_rows = input->est_rows;
    if (kind == SQL_EXCH_BROADCAST) x->est_rows *= d->n;
    x->exchange.kind = kind;
    x->exchange.id = ++d->next_id;
    if (d->next_id > 255)
        return sto_error(STO_PROGRAM_LIMIT_EXCEEDED,
                         "a distributed plan has at most 255 exchanges");
    if (nkeys) {
        x->exchange.keys = sql_arena_alloc(d->ctx->arena, nkeys * sizeof(*x->exchange.keys));
        if (!x->exchange.keys) return sto_error_oom();
        for (uint32_t i = 0; i < nkeys; i++)
            if (!(x->exchange.keys[i] = sql_bexpr_copy(d->ctx, keys[i]))) return sto_error_oom();
        x->exchange.nkeys = nkeys;
    }
    *out = x;
    return STO_OK;
}

/* Moves *slot's rows to one place: the coordinator on the result's path
 * (top), every server elsewhere. */
static sto_status to_one_place(dist *d, sql_lop **slot, bool top, place *out)
{
    STO_TRY(exchange(d, *slot, top ? SQL_EXCH_GATHER : SQL_EXCH_BROADCAST, 0, NULL, slot));
    memset(out, 0, sizeof(*out));
    out->kind = top ? P_SINGLE : P_REPL;
    return STO_OK;
}

/* A hash placement over the columns keys[i] (0 = an expression: the rows
 * are hashed on it but no column holds it, so it cannot be tracked). */
static void hash_place(place *p, uint32_t n, const sql_colid *keys)
{
    memset(p, 0, sizeof(*p));
    p->kind = P_HASH;
    p->nkeys = n < MAX_KEYS ? n : MAX_KEYS;
    for (uint32_t k = 0; k < p->nkeys; k++) {
        if (!keys[k]) {
            p->kind = P_ANY;
            return;
        }
        eq_add(p, k, keys[k]);
    }
    if (n > MAX_KEYS) p->kind = P_ANY;
}

static sql_colid column_of(const sql_bexpr *e)
{
    return e && e->kind == SQL_BEXPR_COLUMN ? e->column : 0;
}

/* Whether rows hashed by p keep equal values of the columns cols[0..n)
 * together: every key position holds one of them. */
static bool hashed_within(const place *p, const sql_colid *cols, uint32_t n)
{
    if (p->kind != P_HASH) return false;
    for (uint32_t k = 0; k < p->nkeys; k++) {
        bool found = false;
        for (uint32_t i = 0; i < n && !found; i++)
            found = cols[i] && place_has(p, k, cols[i]);
        if (!found) return false;
    }
    return true;
}

static sto_status distribute(dist *d, sql_lop **slot, bool top, place *out);

/* --- aggregation ----------------------------------------------------------------- */

static sql_bexpr *col(dist *d, sql_colid id)
{
    return sql_bexpr_column(d->ctx, id, 0);
}

/* An aggregate item func(arg) into a fresh column of type t. */
static sto_status agg_item(dist *d, sql_agg_item *it, sql_agg func, sql_bexpr *arg, sto_type t,
                           bool nullable)
{
    memset(it, 0, sizeof(*it));
    it->func = func;
    it->arg = arg;
    it->id = sql_plan_new_col(d->ctx, t, nullable, sql_agg_name(func));
    return it->id ? STO_OK : sto_error_oom();
}

/* The partial aggregate of op over its input, in fresh ids: group
 * expressions, then per aggregate its partial state (AVG: sum and count). */
static sto_status split_aggregate(dist *d, sql_lop *op, sql_lop **partial_out, sql_lop **final_out,
                                  sql_lop **top_out)
{
    uint32_t ng = op->aggregate.ngroups, na = op->aggregate.naggs, np = 0, navg = 0;
    for (uint32_t j = 0; j < na; j++)
        navg += op->aggregate.aggs[j].func == SQL_AGG_AVG;
    np = na + navg;
    sql_lop *partial = sql_lop_new(d->ctx, SQL_LOP_AGGREGATE, op->left, NULL, ng + np);
    if (!partial) return sto_error_oom();
    partial->est_rows =
        op->est_rows * d->n < op->left->est_rows ? op->est_rows * d->n : op->left->est_rows;
    partial->aggregate.ngroups = ng;
    partial->aggregate.naggs = np;
    partial->aggregate.groups =
        sql_arena_alloc(d->ctx->arena, (ng ? ng : 1) * sizeof(sql_proj_item));
    partial->aggregate.aggs = sql_arena_alloc(d->ctx->arena, np * sizeof(sql_agg_item));
    if (!partial->aggregate.groups || !partial->aggregate.aggs) return sto_error_oom();
    for (uint32_t i = 0; i < ng; i++) {
        const sql_proj_item *g = &op->aggregate.groups[i];
        const sql_col_info *ci = sql_plan_col(d->ctx, g->id);
        sql_colid id = sql_plan_new_col(d->ctx, ci->type, ci->nullable, ci->name);
        if (!id) return sto_error_oom();
        partial->aggregate.groups[i] = (sql_proj_item){g->expr, id};
        partial->out[i] = id;
    }
    uint32_t p = 0;
    for (uint32_t j = 0; j < na; j++) {
        const sql_agg_item *a = &op->aggregate.aggs[j];
        const sql_col_info *ci = sql_plan_col(d->ctx, a->id);
        sql_agg_item *it = &partial->aggregate.aggs[p];
        if (a->func == SQL_AGG_AVG) {
            sto_type st = a->arg->type;
            if (st.id == STO_TYPE_INTEGER || st.id == STO_TYPE_BIGINT || st.id == STO_TYPE_BOOLEAN)
                st = sto_type_make(STO_TYPE_BIGINT);
            else if (st.id == STO_TYPE_DECIMAL)
                st = sto_type_decimal(STO_DECIMAL_MAX_PRECISION, st.scale);
            STO_TRY(agg_item(d, &it[0], SQL_AGG_SUM, a->arg, st, true));
            STO_TRY(
                agg_item(d, &it[1], SQL_AGG_COUNT, a->arg, sto_type_make(STO_TYPE_BIGINT), false));
            p += 2;
        } else {
            STO_TRY(agg_item(d, it, a->func, a->arg, ci->type, ci->nullable));
            p++;
        }
    }
    for (uint32_t j = 0; j < np; j++)
        partial->out[ng + j] = partial->aggregate.aggs[j].id;

    /* The final aggregate combines the partial states into op's ids (AVG's
     * sum and count into fresh ones, divided by a projection above). */
    sql_lop *final = sql_lop_new(d->ctx, SQL_LOP_AGGREGATE, NULL, NULL, ng + np);
    if (!final) return sto_error_oom();
    final->est_rows = op->est_rows;
    final->aggregate.ngroups = ng;
    final->aggregate.naggs = np;
    final->aggregate.groups = sql_arena_alloc(d->ctx->arena, (ng ? ng : 1) * sizeof(sql_proj_item));
    final->aggregate.aggs = sql_arena_alloc(d->ctx->arena, np * sizeof(sql_agg_item));
    if (!final->aggregate.groups || !final->aggregate.aggs) return sto_error_oom();
    for (uint32_t i = 0; i < ng; i++) {
        sql_bexpr *e = col(d, partial->out[i]);
        if (!e) return sto_error_oom();
        final->aggregate.groups[i] = (sql_proj_item){e, op->aggregate.groups[i].id};
        final->out[i] = op->aggregate.groups[i].id;
    }
    p = 0;
    sql_proj_item *avgs = navg ? sql_arena_alloc(d->ctx->arena, navg * sizeof(*avgs)) : NULL;
    if (navg && !avgs) return sto_error_oom();
    uint32_t nav = 0;
    for (uint32_t j = 0; j < na; j++) {
        const sql_agg_item *a = &op->aggregate.aggs[j];
        const sql_agg_item *pa = &partial->aggregate.aggs[p];
        sql_agg_item *it = &final->aggregate.aggs[p];
        if (a->func == SQL_AGG_AVG) {
            const sql_col_info *si = sql_plan_col(d->ctx, pa[0].id);
            sql_bexpr *s = col(d, pa[0].id), *c = col(d, pa[1].id);
            if (!s || !c) return sto_error_oom();
            STO_TRY(agg_item(d, &it[0], SQL_AGG_SUM, s, si->type, true));
            STO_TRY(agg_item(d, &it[1], SQL_AGG_SUM, c, sto_type_make(STO_TYPE_BIGINT), true));
            /* avg = CASE WHEN count > 0 THEN sum / count END, in DOUBLE as
             * AVG itself computes it */
            sto_type dbl = sto_type_make(STO_TYPE_DOUBLE);
            sql_bexpr *sd = sql_bexpr_new(d->ctx, SQL_BEXPR_CAST, dbl, true, 0);
            sql_bexpr *cd = sql_bexpr_new(d->ctx, SQL_BEXPR_CAST, dbl, true, 0);
            sql_bexpr *s2 = col(d, it[0].id), *c2 = col(d, it[1].id), *c3 = col(d, it[1].id);
            sql_bexpr *zero =
                sql_bexpr_new(d->ctx, SQL_BEXPR_CONST, sto_type_make(STO_TYPE_BIGINT), false, 0);
            if (!sd || !cd || !s2 || !c2 || !c3 || !zero) return sto_error_oom();
            sd->cast.arg = s2;
            cd->cast.arg = c2;
            memset(&zero->value, 0, sizeof(zero->value));
            sql_bexpr *div = sql_bexpr_op(d->ctx, SQL_OP_DIV, dbl, sd, cd, 0);
            sql_bexpr *gt =
                sql_bexpr_op(d->ctx, SQL_OP_GT, sto_type_make(STO_TYPE_BOOLEAN), c3, zero, 0);
            sql_bexpr *cs = sql_bexpr_new(d->ctx, SQL_BEXPR_CASE, dbl, true, 0);
            sql_bexpr *nul = sql_bexpr_null(d->ctx, dbl, 0);
            sql_bexpr **conds = sql_arena_alloc(d->ctx->arena, sizeof(*conds));
            sql_bexpr **res = sql_arena_alloc(d->ctx->arena, sizeof(*res));
            if (!div || !gt || !cs || !nul || !conds || !res) return sto_error_oom();
            div->nullable = true;
            gt->nullable = true;
            conds[0] = gt;
            res[0] = div;
            cs->case_.conds = (sql_bexpr_list){1, conds};
            cs->case_.results = (sql_bexpr_list){1, res};
            cs->case_.else_result = nul;
            avgs[nav++] = (sql_proj_item){cs, a->id};
            p += 2;
        } else {
            sql_agg f =
                a->func == SQL_AGG_COUNT || a->func == SQL_AGG_COUNT_STAR ? SQL_AGG_SUM : a->func;
            sql_bexpr *arg = col(d, pa->id);
            if (!arg) return sto_error_oom();
            *it = (sql_agg_item){f, false, arg, a->id};
            p++;
        }
    }
    for (uint32_t j = 0; j < np; j++)
        final->out[ng + j] = final->aggregate.aggs[j].id;

    sql_lop *top = final;
    if (navg) {
        /* op's ids in op's order: groups, then each aggregate */
        sql_lop *proj = sql_lop_new(d->ctx, SQL_LOP_PROJECT, final, NULL, op->nout);
        if (!proj) return sto_error_oom();
        proj->est_rows = op->est_rows;
        proj->project.count = op->nout;
        proj->project.items = sql_arena_alloc(d->ctx->arena, op->nout * sizeof(sql_proj_item));
        if (!proj->project.items) return sto_error_oom();
        for (uint32_t i = 0; i < op->nout; i++) {
            sql_colid id = op->out[i];
            proj->out[i] = id;
            sql_bexpr *e = NULL;
            for (uint32_t v = 0; v < navg && !e; v++)
                if (avgs[v].id == id) e = avgs[v].expr;
            if (!e && !(e = col(d, id))) return sto_error_oom();
            proj->project.items[i] = (sql_proj_item){e, id};
        }
        top = proj;
    }
    *partial_out = partial;
    *final_out = final;
    *top_out = top;
    return STO_OK;
}

static sto_status dist_aggregate(dist *d, sql_lop **slot, bool top, place *out)
{
    sql_lop *op = *slot;
    place in;
    STO_TRY(distribute(d, &op->left, top, &in));
    bool distinct_set = op->kind == SQL_LOP_DISTINCT;
    uint32_t ng = distinct_set ? op->nout : op->aggregate.ngroups;
    sql_colid gcols[64];
    uint32_t ngc = ng < 64 ? ng : 64;
    for (uint32_t i = 0; i < ngc; i++)
        gcols[i] = distinct_set ? op->out[i] : column_of(op->aggregate.groups[i].expr);
    if (in_one_place(&in) || (ng && hashed_within(&in, gcols, ngc))) {
        *out = in;
        restrict_to(out, op);
        return STO_OK;
    }
    bool has_distinct = false;
    for (uint32_t j = 0; !distinct_set && j < op->aggregate.naggs; j++)
        has_distinct |= op->aggregate.aggs[j].distinct;

    /* Out ids of the groups, for the placement made by a shuffle. */
    sql_colid gout[MAX_KEYS];
    for (uint32_t i = 0; i < ng && i < MAX_KEYS; i++)
        gout[i] = op->out[i];

    if (distinct_set) {
        /* DISTINCT: a local DISTINCT, a shuffle on every column, again */
        sql_lop *local = sql_lop_new(d->ctx, SQL_LOP_DISTINCT, op->left, NULL, op->nout);
        sql_bexpr **keys = sql_arena_alloc(d->ctx->arena, (ng ? ng : 1) * sizeof(*keys));
        if (!local || !keys) return sto_error_oom();
        memcpy(local->out, op->out, op->nout * sizeof(*op->out));
        local->est_rows =
            op->est_rows * d->n < op->left->est_rows ? op->est_rows * d->n : op->left->est_rows;
        for (uint32_t i = 0; i < ng; i++)
            if (!(keys[i] = col(d, op->out[i]))) return sto_error_oom();
        STO_TRY(exchange(d, local, SQL_EXCH_SHUFFLE, ng, keys, &op->left));
        hash_place(out, ng, gout);
        return STO_OK;
    }
    if (has_distinct) {
        /* DISTINCT aggregates need every row of a group in one place */
        if (!ng) return to_one_place(d, &op->left, top, out);
        sql_bexpr **keys = sql_arena_alloc(d->ctx->arena, ng * sizeof(*keys));
        if (!keys) return sto_error_oom();
        for (uint32_t i = 0; i < ng; i++)
            keys[i] = op->aggregate.groups[i].expr;
        STO_TRY(exchange(d, op->left, SQL_EXCH_SHUFFLE, ng, keys, &op->left));
        hash_place(out, ng, gout);
        return STO_OK;
    }
    sql_lop *partial = NULL, *final = NULL, *topop = NULL;
    STO_TRY(split_aggregate(d, op, &partial, &final, &topop));
    if (!ng) {
        STO_TRY(to_one_place(d, &partial, top, out));
        final->left = partial;
    } else {
        sql_bexpr **keys = sql_arena_alloc(d->ctx->arena, ng * sizeof(*keys));
        if (!keys) return sto_error_oom();
        for (uint32_t i = 0; i < ng; i++)
            if (!(keys[i] = col(d, partial->out[i]))) return sto_error_oom();
        STO_TRY(exchange(d, partial, SQL_EXCH_SHUFFLE, ng, keys, &final->left));
        hash_place(out, ng, gout);
    }
    *slot = topop;
    return STO_OK;
}

/* --- joins ---------------------------------------------------------------------- */

typedef struct only_in {
    const sql_lop *side;
    bool all, any;
} only_in;

static sql_walk check_col(sql_bexpr **slot, void *arg)
{
    only_in *c = arg;
    if ((*slot)->kind != SQL_BEXPR_COLUMN) return SQL_WALK_CONTINUE;
    c->any = true;
    if (!has_id(c->side, (*slot)->column)) c->all = false;
    return SQL_WALK_CONTINUE;
}

static bool only_cols(const sql_bexpr *e, const sql_lop *side)
{
    only_in c = {side, true, false};
    sql_bexpr_walk((sql_bexpr **)&e, check_col, &c);
    return c.all && c.any;
}

typedef struct pairs {
    uint32_t n;
    sql_bexpr *l[MAX_KEYS], *r[MAX_KEYS];
} pairs;

/* The equi conjuncts of a join condition: left expr = right expr of one
 * type (as the physical planner pairs them). */
static void find_pairs(sql_bexpr *e, const sql_lop *left, const sql_lop *right, pairs *ps)
{
    if (!e || ps->n == MAX_KEYS) return;
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_AND) {
        find_pairs(e->op.args[0], left, right, ps);
        find_pairs(e->op.args[1], left, right, ps);
        return;
    }
    if (e->kind != SQL_BEXPR_OP || e->op.op != SQL_OP_EQ || !e->op.args[1]) return;
    sql_bexpr *a = e->op.args[0], *b = e->op.args[1];
    if (only_cols(a, right) && only_cols(b, left)) {
        sql_bexpr *t = a;
        a = b;
        b = t;
    }
    if (only_cols(a, left) && only_cols(b, right) && a->type.id == b->type.id &&
        a->type.scale == b->type.scale) {
        ps->l[ps->n] = a;
        ps->r[ps->n++] = b;
    }
}

/* Whether side placement p is HASH on keys that pair up with the join
 * pairs: sel[k] is the pair for key position k. */
static bool hashed_on_pairs(const place *p, const pairs *ps, bool left, uint32_t *sel)
{
    if (p->kind != P_HASH) return false;
    for (uint32_t k = 0; k < p->nkeys; k++) {
        bool found = false;
        for (uint32_t j = 0; j < ps->n && !found; j++) {
            sql_colid c = column_of(left ? ps->l[j] : ps->r[j]);
            if (c && place_has(p, k, c)) {
                sel[k] = j;
                found = true;
            }
        }
        if (!found) return false;
    }
    return true;
}

static bool co_located(const place *l, const place *r, const pairs *ps)
{
    uint32_t sl[MAX_KEYS], sr[MAX_KEYS];
    if (!hashed_on_pairs(l, ps, true, sl) || !hashed_on_pairs(r, ps, false, sr)) return false;
    if (l->nkeys != r->nkeys) return false;
    for (uint32_t k = 0; k < l->nkeys; k++)
        if (sl[k] != sr[k]) return false;
    return true;
}

static sto_status shuffle_side(dist *d, sql_lop **slot, sql_bexpr *const *keys, uint32_t n)
{
    return exchange(d, *slot, SQL_EXCH_SHUFFLE, n, keys, slot);
}

static sto_status dist_join(dist *d, sql_lop **slot, place *out)
{
    sql_lop *op = *slot;
    place L, R;
    STO_TRY(distribute(d, &op->left, false, &L));
    STO_TRY(distribute(d, &op->right, false, &R));
    sql_join_kind k = op->join.kind;
    bool keep_left = k == SQL_JOINK_LEFT || k == SQL_JOINK_FULL || k == SQL_JOINK_SEMI ||
                     k == SQL_JOINK_ANTI || k == SQL_JOINK_MARK || k == SQL_JOINK_SINGLE;
    bool keep_right = k == SQL_JOINK_RIGHT || k == SQL_JOINK_FULL;
    bool right_may_repl = !keep_right, left_may_repl = !keep_left;
    pairs ps;
    memset(&ps, 0, sizeof(ps));
    find_pairs(op->join.cond, op->left, op->right, &ps);
    bool may_shuffle = ps.n > 0;
    if (k == SQL_JOINK_MARK)
        /* a MARK join's NULLs depend on the whole build side: only keys
         * that are never NULL may be split across servers */
        for (uint32_t j = 0; j < ps.n; j++)
            if (ps.l[j]->nullable || ps.r[j]->nullable) may_shuffle = false;

    /* Already where they must be? */
    if (in_one_place(&L) && in_one_place(&R)) {
        *out = L;
        restrict_to(out, op);
        return STO_OK;
    }
    if (L.kind == P_REPL && left_may_repl) {
        *out = R;
        restrict_to(out, op);
        return STO_OK;
    }
    if (R.kind == P_REPL && right_may_repl) {
        *out = L;
        restrict_to(out, op);
        return STO_OK;
    }
    if (may_shuffle && co_located(&L, &R, &ps)) goto hashed_out;

    /* The cheapest way, by estimated bytes moved. A replicated side cannot
     * be shuffled (each server would send its whole copy). */
    double n = d->n, bl = bytes_of(d, op->left), br = bytes_of(d, op->right);
    double best = -1;
    enum { NONE, BCAST_L, BCAST_R, SHUF_BOTH, SHUF_L, SHUF_R } how = NONE;
    if (right_may_repl && R.kind != P_REPL) {
        best = br * (n - 1);
        how = BCAST_R;
    }
    if (left_may_repl && L.kind != P_REPL && (best < 0 || bl * (n - 1) < best)) {
        best = bl * (n - 1);
        how = BCAST_L;
    }
    uint32_t sel[MAX_KEYS];
    if (may_shuffle && L.kind != P_REPL && R.kind != P_REPL) {
        double c = (bl + br) * (n - 1) / n;
        if (best < 0 || c < best) {
            best = c;
            how = SHUF_BOTH;
        }
        if (hashed_on_pairs(&L, &ps, true, sel) && (c = br * (n - 1) / n) < best) {
            best = c;
            how = SHUF_R;
        }
        if (hashed_on_pairs(&R, &ps, false, sel) && (c = bl * (n - 1) / n) < best) {
            best = c;
            how = SHUF_L;
        }
    }
    if (how == NONE && (L.kind == P_REPL || R.kind == P_REPL)) {
        /* the replicated side must not be; the other follows it */
        if (L.kind == P_REPL)
            how = BCAST_R;
        else
            how = BCAST_L;
    }
    switch (how) {
    case NONE:
        return sto_error(STO_FEATURE_NOT_SUPPORTED,
                         "a %s join without an equality condition cannot run distributed",
                         sql_join_kind_name(k));
    case BCAST_R:
        STO_TRY(exchange(d, op->right, SQL_EXCH_BROADCAST, 0, NULL, &op->right));
        if (k == SQL_JOINK_INNER || k == SQL_JOINK_CROSS) op->phys.build_left = false;
        *out = L.kind == P_REPL ? (place){.kind = P_REPL} : L;
        restrict_to(out, op);
        return STO_OK;
    case BCAST_L:
        STO_TRY(exchange(d, op->left, SQL_EXCH_BROADCAST, 0, NULL, &op->left));
        if (k == SQL_JOINK_INNER || k == SQL_JOINK_CROSS) op->phys.build_left = true;
        *out = R.kind == P_REPL ? (place){.kind = P_REPL} : R;
        restrict_to(out, op);
        return STO_OK;
    case SHUF_BOTH:
        STO_TRY(shuffle_side(d, &op->left, ps.l, ps.n));
        STO_TRY(shuffle_side(d, &op->right, ps.r, ps.n));
        L.kind = P_HASH;
        L.nkeys = ps.n;
        for (uint32_t j = 0; j < ps.n; j++) {
            L.neq[j] = 0;
            eq_add(&L, j, column_of(ps.l[j]));
        }
        R = L;
        for (uint32_t j = 0; j < ps.n; j++) {
            R.neq[j] = 0;
            eq_add(&R, j, column_of(ps.r[j]));
        }
        break;
    case SHUF_R:
    case SHUF_L: {
        /* the other side's keys, in the order the hashed side is hashed */
        const place *h = how == SHUF_R ? &L : &R;
        hashed_on_pairs(h, &ps, how == SHUF_R, sel);
        sql_bexpr *keys[MAX_KEYS];
        for (uint32_t i = 0; i < h->nkeys; i++)
            keys[i] = how == SHUF_R ? ps.r[sel[i]] : ps.l[sel[i]];
        place *o = how == SHUF_R ? &R : &L;
        STO_TRY(shuffle_side(d, how == SHUF_R ? &op->right : &op->left, keys, h->nkeys));
        memset(o, 0, sizeof(*o));
        o->kind = P_HASH;
        o->nkeys = h->nkeys;
        for (uint32_t i = 0; i < h->nkeys; i++)
            eq_add(o, i, column_of(keys[i]));
        break;
    }
    }
hashed_out:
    /* Rows are hashed on matching keys of both sides: a padded side's
     * columns are NULL in some rows, so only the other side's count. */
    memset(out, 0, sizeof(*out));
    out->kind = P_HASH;
    {
        bool use_l = k != SQL_JOINK_RIGHT && k != SQL_JOINK_FULL;
        bool use_r = k == SQL_JOINK_INNER || k == SQL_JOINK_CROSS || k == SQL_JOINK_RIGHT;
        out->nkeys = L.kind == P_HASH ? L.nkeys : R.nkeys;
        for (uint32_t i = 0; use_l && L.kind == P_HASH && i < L.nkeys; i++)
            for (uint8_t e = 0; e < L.neq[i]; e++)
                eq_add(out, i, L.eq[i][e]);
        for (uint32_t i = 0; use_r && R.kind == P_HASH && i < R.nkeys; i++)
            for (uint8_t e = 0; e < R.neq[i]; e++)
                eq_add(out, i, R.eq[i][e]);
        if (L.nkeys != R.nkeys || (!use_l && !use_r)) out->kind = P_ANY;
    }
    restrict_to(out, op);
    return STO_OK;
}

/* --- sort and limit ----------------------------------------------------------------- */

static sto_status dist_sort(dist *d, sql_lop **slot, bool top, place *out)
{
    sql_lop *op = *slot;
    STO_TRY(distribute(d, &op->left, top, out));
    if (in_one_place(out)) return STO_OK;
    /* a full sort gains nothing from sorting each part first: the rows move
     * to one place and are sorted there */
    return to_one_place(d, &op->left, top, out);
}

static sto_status dist_limit(dist *d, sql_lop **slot, bool top, place *out)
{
    sql_lop *op = *slot;
    sql_lop *sort = op->left->kind == SQL_LOP_SORT ? op->left : NULL;
    sql_lop **below = sort ? &sort->left : &op->left;
    STO_TRY(distribute(d, below, top, out));
    if (in_one_place(out)) return STO_OK;
    if (op->limit.limit < 0) return to_one_place(d, below, top, out);
    /* each server keeps its first limit + offset rows (its top-k), then the
     * final LIMIT (and SORT) in one place */
    sql_lop *input = *below;
    if (sort) {
        sql_lop *s = sql_lop_new(d->ctx, SQL_LOP_SORT, input, NULL, 0);
        if (!s) return sto_error_oom();
        s->nout = sort->nout;
        s->out = sort->out;
        s->sort = sort->sort;
        s->est_rows = sort->est_rows;
        input = s;
    }
    sql_lop *l = sql_lop_new(d->ctx, SQL_LOP_LIMIT, input, NULL, 0);
    if (!l) return sto_error_oom();
    l->nout = input->nout;
    l->out = input->out;
    l->limit.limit = op->limit.limit + (op->limit.offset > 0 ? op->limit.offset : 0);
    l->limit.offset = 0;
    l->est_rows = op->est_rows;
    *below = l;
    return to_one_place(d, below, top, out);
}

/* --- the walk ------------------------------------------------------------------------ */

static sto_status distribute(dist *d, sql_lop **slot, bool top, place *out)
{
    sql_lop *op = *slot;
    switch (op->kind) {
    case SQL_LOP_GET:
        /* a replicated table is whole on every server: it meets chunked
         * rows where they are, and what is computed from it alone is
         * computed alike everywhere, so the coordinator's copy is the
         * answer (never gathered: that would count it n times) */
        memset(out, 0, sizeof(*out));
        out->kind = d->catalog && op->get.table_name &&
                            eng_catalog_replicated(d->catalog, op->get.table_name)
                        ? P_REPL
                        : P_ANY;
        return STO_OK;
    case SQL_LOP_VALUES:
        memset(out, 0, sizeof(*out));
        out->kind = P_REPL;
        return STO_OK;
    case SQL_LOP_FILTER:
        return distribute(d, &op->left, top, out);
    case SQL_LOP_PROJECT:
        STO_TRY(distribute(d, &op->left, top, out));
        restrict_to(out, op);
        return STO_OK;
    case SQL_LOP_AGGREGATE:
    case SQL_LOP_DISTINCT:
        return dist_aggregate(d, slot, top, out);
    case SQL_LOP_SORT:
        return dist_sort(d, slot, top, out);
    case SQL_LOP_LIMIT:
        return dist_limit(d, slot, top, out);
    case SQL_LOP_JOIN:
        return dist_join(d, slot, out);
    case SQL_LOP_SETOP:
        return sto_error(STO_FEATURE_NOT_SUPPORTED,
                         "UNION, INTERSECT and EXCEPT cannot run distributed yet");
    case SQL_LOP_EXCHANGE:
        return sto_error(STO_INTERNAL_ERROR, "the plan is distributed already");
    default:
        return sto_error(STO_INTERNAL_ERROR, "unknown plan operator %d", (int)op->kind);
    }
}

sto_status eng_distribute(sql_plan *plan, int nservers)
{
    return eng_distribute_placed(plan, nservers, NULL);
}

sto_status eng_distribute_placed(sql_plan *plan, int nservers, const eng_catalog *catalog)
{
    if (nservers < 1)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "a cluster of %d servers", nservers);
    dist d = {plan, plan->ctx, catalog, nservers < 2 ? 2 : nservers, 0};
    place p;
    STO_TRY(distribute(&d, &plan->root, true, &p));
    if (!in_one_place(&p)) STO_TRY(to_one_place(&d, &plan->root, true, &p));
    return STO_OK;
}
