/*
 * bind_expr.c — expressions: names to column ids, literals to typed
 * constants, operators to typed nodes, subqueries to subplans.
 *
 * Name lookup walks the scope chain outward (see bind_int.h). A name found
 * in an enclosing level is a correlated reference: the id is recorded as an
 * outer reference of every level between, and the subquery expression that
 * owns the innermost of those levels lists it as a free variable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/bind_int.h"

static const char *const op_spellings[SQL_OP_COUNT] = {
#define SQL_OP_SPELL(id, spelling, arity) spelling,
    SQL_OP_LIST(SQL_OP_SPELL)
#undef SQL_OP_SPELL
};

sto_status sql_bind_oom(binder *b)
{
    return sql_arena_failed(b->arena) ? sto_error_oom() : STO_OK;
}

bool sql_bind_make_list(binder *b, sql_bexpr_list *l, uint32_t n)
{
    l->count = n;
    l->items = sql_arena_alloc(b->arena, (n ? n : 1) * sizeof(*l->items));
    return l->items != NULL;
}

sto_status sql_bind_add_rel(binder *b, bind_scope *s, bind_rel *r)
{
    if (s->nrels == s->caprels) {
        uint32_t cap = s->caprels ? s->caprels * 2 : 8;
        bind_rel **rels = sql_arena_alloc(b->arena, cap * sizeof(*rels));
        if (!rels) return sto_error_oom();
        if (s->nrels) memcpy(rels, s->rels, s->nrels * sizeof(*rels));
        s->rels = rels;
        s->caprels = cap;
    }
    s->rels[s->nrels++] = r;
    return STO_OK;
}

sto_status sql_bind_note_outer(binder *b, bind_scope *s, sql_colid id)
{
    for (uint32_t i = 0; i < s->nouter; i++) {
        if (s->outer[i] == id) return STO_OK;
    }
    if (s->nouter == s->capouter) {
        uint32_t cap = s->capouter ? s->capouter * 2 : 8;
        sql_colid *o = sql_arena_alloc(b->arena, cap * sizeof(*o));
        if (!o) return sto_error_oom();
        if (s->nouter) memcpy(o, s->outer, s->nouter * sizeof(*o));
        s->outer = o;
        s->capouter = cap;
    }
    s->outer[s->nouter++] = id;
    return STO_OK;
}

const bind_rel *sql_bind_rel_of(const bind_scope *s, sql_colid id, const bind_col **col)
{
    for (uint32_t r = 0; r < s->nrels; r++) {
        const bind_rel *rel = s->rels[r];
        for (uint32_t c = 0; c < rel->ncols; c++) {
            if (rel->cols[c].id == id) {
                if (col) *col = &rel->cols[c];
                return rel;
            }
        }
    }
    return NULL;
}

static bool name_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Looks name (qualified by table when not NULL) up at one level. Returns
 * 1 found, 0 not here, or an error (ambiguous; table found but no such
 * column). *rel_found says whether a relation named table exists here. */
static sto_status lookup_level(const bind_scope *s, const char *table, const char *name, int pos,
                               sql_colid *id, bool *rel_found)
{
    *id = 0;
    for (uint32_t r = 0; r < s->nrels; r++) {
        const bind_rel *rel = s->rels[r];
        if (table) {
            if (!name_eq(rel->name, table)) continue;
            *rel_found = true;
        }
        for (uint32_t c = 0; c < rel->ncols; c++) {
            const bind_col *col = &rel->cols[c];
            if (!name_eq(col->name, name) || (!table && col->using_hidden)) continue;
            if (*id && *id != col->id) {
                if (table)
                    return sto_error_at(STO_AMBIGUOUS_COLUMN, pos,
                                        "column reference \"%s.%s\" is ambiguous", table, name);
                return sto_error_at(STO_AMBIGUOUS_COLUMN, pos,
                                    "column reference \"%s\" is ambiguous", name);
            }
            *id = col->id;
        }
        if (table && *rel_found) break;
    }
    return STO_OK;
}

/* A subquery refers to a column of level: remember it where the grouping
 * rule will apply (see bind_scope.inner_refs). */
static sto_status note_inner_ref(binder *b, bind_scope *level, sql_colid id, int pos)
{
    bind_clause c = level->clause;
    if (level->in_agg_arg || (c != CLAUSE_SELECT && c != CLAUSE_HAVING && c != CLAUSE_ORDER_BY))
        return STO_OK;
    if (level->ninner == level->capinner) {
        uint32_t cap = level->capinner ? level->capinner * 2 : 8;
        struct bind_inner_ref *r = sql_arena_alloc(b->arena, cap * sizeof(*r));
        if (!r) return sto_error_oom();
        if (level->ninner) memcpy(r, level->inner_refs, level->ninner * sizeof(*r));
        level->inner_refs = r;
        level->capinner = cap;
    }
    level->inner_refs[level->ninner].id = id;
    level->inner_refs[level->ninner].pos = pos;
    level->ninner++;
    return STO_OK;
}

static sto_status lookup_column(binder *b, bind_scope *s, const char *table, const char *name,
                                int pos, sql_colid *out)
{
    bool skip_rels = false;
    bool any_rel = false;
    for (bind_scope *level = s; level; level = level->parent) {
        sql_colid id = 0;
        bool rel_found = false;
        if (!skip_rels) STO_TRY(lookup_level(level, table, name, pos, &id, &rel_found));
        any_rel |= rel_found;
        if (id) {
            for (bind_scope *p = s; p != level; p = p->parent)
                STO_TRY(sql_bind_note_outer(b, p, id));
            if (level != s) STO_TRY(note_inner_ref(b, level, id, pos));
            *out = id;
            return STO_OK;
        }
        if (table && rel_found)
            return sto_error_at(STO_UNDEFINED_COLUMN, pos, "column %s.%s does not exist", table,
                                name);
        skip_rels = level->parent_hidden;
    }
    if (table && !any_rel)
        return sto_error_at(STO_UNDEFINED_TABLE, pos, "missing FROM-clause entry for table \"%s\"",
                            table);
    return sto_error_at(STO_UNDEFINED_COLUMN, pos, "column \"%s\" does not exist", name);
}

/* ------------------------------------------------------------ literals -- */

static sto_status bind_decimal_literal(binder *b, const sql_expr *e, sql_bexpr **out)
{
    const char *t = e->lit.text;
    size_t len = strlen(t);
    int int_digits = 0, frac_digits = 0;
    bool seen_dot = false, leading = true;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '.') {
            seen_dot = true;
        } else if (t[i] >= '0' && t[i] <= '9') {
            if (seen_dot) {
                frac_digits++;
            } else if (!(leading && t[i] == '0')) {
                leading = false;
                int_digits++;
            }
        }
    }
    int p = int_digits + frac_digits;
    if (p == 0) p = 1;
    sql_bexpr *c;
    if (p > STO_DECIMAL_MAX_PRECISION) {
        /* Too many digits for an int64: a DOUBLE, as DuckDB does. */
        c = sql_bexpr_new(b->ctx, SQL_BEXPR_CONST, sto_type_make(STO_TYPE_DOUBLE), false, e->pos);
        if (!c) return sto_error_oom();
        if (sto_double_parse(t, len, &c->value.v.f64) != STO_PARSE_OK)
            return sto_error_at(STO_INVALID_TEXT_REPRESENTATION, e->pos,
                                "invalid input syntax for type numeric: \"%s\"", t);
    } else {
        c = sql_bexpr_new(b->ctx, SQL_BEXPR_CONST, sto_type_decimal(p, frac_digits), false, e->pos);
        if (!c) return sto_error_oom();
        if (sto_decimal_parse(t, len, p, frac_digits, &c->value.v.i64) != STO_PARSE_OK)
            return sto_error_at(STO_INVALID_TEXT_REPRESENTATION, e->pos,
                                "invalid input syntax for type numeric: \"%s\"", t);
    }
    *out = c;
    return STO_OK;
}

static sto_status bind_literal(binder *b, const sql_expr *e, sql_bexpr **out)
{
    const sql_literal *l = &e->lit;
    sql_bexpr *c = NULL;
    switch (l->kind) {
    case SQL_LIT_NULL:
        c = sql_bexpr_null(b->ctx, sto_type_make(BIND_TYPE_UNKNOWN), e->pos);
        break;
    case SQL_LIT_BOOL:
        c = sql_bexpr_new(b->ctx, SQL_BEXPR_CONST, sto_type_make(STO_TYPE_BOOLEAN), false, e->pos);
        if (c) c->value.v.i64 = l->boolean;
        break;
    case SQL_LIT_INTEGER: {
        bool small = l->integer >= INT32_MIN && l->integer <= INT32_MAX;
        c = sql_bexpr_new(b->ctx, SQL_BEXPR_CONST,
                          sto_type_make(small ? STO_TYPE_INTEGER : STO_TYPE_BIGINT), false, e->pos);
        if (c) c->value.v.i64 = l->integer;
        break;
    }
    case SQL_LIT_DECIMAL:
        return bind_decimal_literal(b, e, out);
    case SQL_LIT_FLOAT:
        c = sql_bexpr_new(b->ctx, SQL_BEXPR_CONST, sto_type_make(STO_TYPE_DOUBLE), false, e->pos);
        if (c && sto_double_parse(l->text, strlen(l->text), &c->value.v.f64) != STO_PARSE_OK)
            return sto_error_at(STO_INVALID_TEXT_REPRESENTATION, e->pos,
                                "invalid input syntax for type double precision: \"%s\"", l->text);
        break;
    case SQL_LIT_STRING: {
        size_t len = strlen(l->text);
        char *bytes = sql_arena_strndup(b->arena, l->text, len);
        c = sql_bexpr_new(b->ctx, SQL_BEXPR_CONST, sto_type_string(STO_TYPE_VARCHAR, 0), false,
                          e->pos);
        if (c && bytes) c->value.v.str = sto_str_make(bytes, (uint32_t)len);
        break;
    }
    case SQL_LIT_DATE: {
        int32_t d;
        if (!sto_date_parse(l->text, strlen(l->text), &d))
            return sql_date_error(l->text, strlen(l->text), e->pos);
        c = sql_bexpr_new(b->ctx, SQL_BEXPR_CONST, sto_type_make(STO_TYPE_DATE), false, e->pos);
        if (c) c->value.v.i64 = d;
        break;
    }
    case SQL_LIT_INTERVAL:
        return sto_error_at(STO_FEATURE_NOT_SUPPORTED, e->pos,
                            "INTERVAL values can only be added to or subtracted from a date");
    }
    if (!c) return sto_error_oom();
    *out = c;
    return STO_OK;
}

/* ----------------------------------------------------------- operators -- */

static sto_status want_boolean(binder *b, sql_bexpr **e, const char *what)
{
    if ((*e)->type.id == BIND_TYPE_UNKNOWN)
        return sql_types_coerce(b, e, sto_type_make(STO_TYPE_BOOLEAN));
    if ((*e)->type.id != STO_TYPE_BOOLEAN)
        return sto_error_at(STO_DATATYPE_MISMATCH, (*e)->pos,
                            "argument of %s must be type boolean, not type %s", what,
                            sql_type_pg_name((*e)->type));
    return STO_OK;
}

sto_status sql_bind_condition(binder *b, bind_scope *s, const sql_expr *e, const char *what,
                              sql_bexpr **out)
{
    STO_TRY(sql_bind_expr(b, s, e, out));
    return want_boolean(b, out, what);
}

static sto_status make_bool_op(binder *b, sql_op op, sql_bexpr *l, sql_bexpr *r, int pos,
                               sql_bexpr **out)
{
    *out = sql_bexpr_op(b->ctx, op, sto_type_make(STO_TYPE_BOOLEAN), l, r, pos);
    return *out ? STO_OK : sto_error_oom();
}

static sto_status make_comparison(binder *b, sql_op op, sql_bexpr *l, sql_bexpr *r, int pos,
                                  sql_bexpr **out)
{
    STO_TRY(sql_types_unify(b, &l, &r, op_spellings[op], pos));
    STO_TRY(sql_types_resolve_unknown(b, &l));
    STO_TRY(sql_types_resolve_unknown(b, &r));
    return make_bool_op(b, op, l, r, pos, out);
}

static bool is_interval(const sql_expr *e)
{
    return e->kind == SQL_EXPR_LITERAL && e->lit.kind == SQL_LIT_INTERVAL;
}

/* date ± INTERVAL 'n' unit, INTERVAL + date. */
static sto_status bind_interval_arith(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    const sql_expr *iv = is_interval(e->binary.right) ? e->binary.right : e->binary.left;
    const sql_expr *other = iv == e->binary.right ? e->binary.left : e->binary.right;
    if (is_interval(other) || (iv == e->binary.left && e->binary.op != SQL_OP_ADD) ||
        (e->binary.op != SQL_OP_ADD && e->binary.op != SQL_OP_SUB))
        return sto_error_at(STO_FEATURE_NOT_SUPPORTED, e->pos,
                            "INTERVAL values can only be added to or subtracted from a date");
    sql_bexpr *d;
    STO_TRY(sql_bind_expr(b, s, other, &d));
    if (d->type.id == BIND_TYPE_UNKNOWN ||
        (sto_type_is_string(d->type.id) && d->kind == SQL_BEXPR_CONST))
        STO_TRY(sql_types_coerce(b, &d, sto_type_make(STO_TYPE_DATE)));
    if (d->type.id != STO_TYPE_DATE)
        return sto_error_at(STO_UNDEFINED_FUNCTION, e->pos,
                            "operator does not exist: %s %s interval", sql_type_pg_name(d->type),
                            op_spellings[e->binary.op]);
    int64_t n = iv->lit.interval.count;
    sql_func f;
    if (iv->lit.interval.unit == SQL_FIELD_DAY) {
        f = e->binary.op == SQL_OP_ADD ? SQL_FUNC_DATE_ADD_DAYS : SQL_FUNC_DATE_SUB_DAYS;
    } else {
        f = SQL_FUNC_DATE_ADD_MONTHS;
        if (iv->lit.interval.unit == SQL_FIELD_YEAR) n *= 12;
        if (e->binary.op == SQL_OP_SUB) n = -n;
    }
    if (n > INT32_MAX || n < -INT32_MAX)
        return sto_error_at(STO_DATETIME_FIELD_OVERFLOW, iv->pos, "interval out of range");
    sql_bexpr *cnt =
        sql_bexpr_new(b->ctx, SQL_BEXPR_CONST, sto_type_make(STO_TYPE_INTEGER), false, iv->pos);
    if (!cnt) return sto_error_oom();
    cnt->value.v.i64 = n;
    sql_bexpr *args[2] = {d, cnt};
    return sql_bind_make_func(b, f, args, 2, e->pos, out);
}

static sto_status bind_binary(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    sql_op op = e->binary.op;
    if (is_interval(e->binary.left) || is_interval(e->binary.right))
        return bind_interval_arith(b, s, e, out);
    sql_bexpr *l, *r;
    STO_TRY(sql_bind_expr(b, s, e->binary.left, &l));
    STO_TRY(sql_bind_expr(b, s, e->binary.right, &r));
    if (op == SQL_OP_AND || op == SQL_OP_OR) {
        STO_TRY(want_boolean(b, &l, op_spellings[op]));
        STO_TRY(want_boolean(b, &r, op_spellings[op]));
        return make_bool_op(b, op, l, r, e->pos, out);
    }
    if (sql_op_is_comparison(op)) return make_comparison(b, op, l, r, e->pos, out);
    return sql_types_arith(b, op, l, r, e->pos, out);
}

static sto_status bind_unary(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    sql_bexpr *a;
    STO_TRY(sql_bind_expr(b, s, e->unary.arg, &a));
    if (e->unary.op == SQL_OP_NOT) {
        STO_TRY(want_boolean(b, &a, "NOT"));
        return make_bool_op(b, SQL_OP_NOT, a, NULL, e->pos, out);
    }
    if (a->type.id == BIND_TYPE_UNKNOWN)
        STO_TRY(sql_types_coerce(b, &a, sto_type_make(STO_TYPE_INTEGER)));
    if (!type_is_numeric(a->type.id))
        return sto_error_at(STO_UNDEFINED_FUNCTION, e->pos, "operator does not exist: %s %s",
                            op_spellings[e->unary.op], sql_type_pg_name(a->type));
    *out = sql_bexpr_op(b->ctx, e->unary.op, a->type, a, NULL, e->pos);
    if (!*out) return sto_error_oom();
    return sql_fold_expr(b, out);
}

/* ---------------------------------------------------------- subqueries -- */

static int cmp_colid(const void *a, const void *b)
{
    sql_colid x = *(const sql_colid *)a, y = *(const sql_colid *)b;
    return (x > y) - (x < y);
}

/* Binds a subquery at a new level below s into a SUBQUERY expression.
 * want_one: it must have exactly one column. */
static sto_status bind_subquery(binder *b, bind_scope *s, const sql_query *q, int pos,
                                sql_subquery_kind kind, sql_bexpr **out)
{
    bound_query bq;
    bind_scope *child = NULL;
    STO_TRY(sql_bind_level(b, s, false, s->ctes, q, &bq, &child));
    if (kind != SQL_SUBQ_EXISTS && bq.ncols != 1)
        return sto_error_at(STO_SYNTAX_ERROR, pos,
                            bq.ncols > 1 ? "subquery has too many columns"
                                         : "subquery has too few columns");
    sto_type t = sto_type_make(STO_TYPE_BOOLEAN);
    bool nullable = false;
    if (kind != SQL_SUBQ_EXISTS) {
        const sql_col_info *c = sql_plan_col(b->ctx, bq.cols[0]);
        t = c->type;
        nullable = kind == SQL_SUBQ_SCALAR || c->nullable;
    }
    sql_bexpr *x = sql_bexpr_new(b->ctx, SQL_BEXPR_SUBQUERY, t, nullable, pos);
    if (!x) return sto_error_oom();
    x->subquery.kind = kind;
    x->subquery.plan = bq.root;
    x->subquery.col = kind == SQL_SUBQ_EXISTS ? 0 : bq.cols[0];
    x->subquery.nouter = child->nouter;
    if (child->nouter) {
        x->subquery.outer = sql_arena_alloc(b->arena, child->nouter * sizeof(sql_colid));
        if (!x->subquery.outer) return sto_error_oom();
        memcpy(x->subquery.outer, child->outer, child->nouter * sizeof(sql_colid));
        qsort(x->subquery.outer, child->nouter, sizeof(sql_colid), cmp_colid);
    }
    *out = x;
    return STO_OK;
}

/* left op ANY|ALL (subquery); IN is = ANY. The subplan's column is cast
 * under a PROJECT when the comparison needs another type. */
static sto_status bind_quantified(binder *b, bind_scope *s, const sql_expr *arg, const sql_query *q,
                                  sql_op cmp, bool all, int pos, sql_bexpr **out)
{
    sql_bexpr *left, *sub;
    STO_TRY(sql_bind_expr(b, s, arg, &left));
    STO_TRY(bind_subquery(b, s, q, pos, all ? SQL_SUBQ_ALL : SQL_SUBQ_ANY, &sub));
    sql_bexpr *right = sql_bexpr_column(b->ctx, sub->subquery.col, pos);
    if (!right) return sto_error_oom();
    sql_bexpr *r0 = right;
    STO_TRY(sql_types_unify(b, &left, &right, op_spellings[cmp], pos));
    STO_TRY(sql_types_resolve_unknown(b, &left));
    if (right != r0) {
        sql_colid id = sql_plan_new_col(b->ctx, right->type, right->nullable,
                                        sql_plan_col(b->ctx, sub->subquery.col)->name);
        sql_lop *p = sql_lop_new(b->ctx, SQL_LOP_PROJECT, sub->subquery.plan, NULL, 1);
        if (!id || !p) return sto_error_oom();
        p->out[0] = id;
        p->project.count = 1;
        p->project.items = sql_arena_alloc(b->arena, sizeof(sql_proj_item));
        if (!p->project.items) return sto_error_oom();
        p->project.items[0].expr = right;
        p->project.items[0].id = id;
        sub->subquery.plan = p;
        sub->subquery.col = id;
        sub->type = right->type;
    }
    sub->subquery.cmp = cmp;
    sub->subquery.left = left;
    sub->type = sto_type_make(STO_TYPE_BOOLEAN);
    sub->nullable = sub->nullable || left->nullable;
    *out = sub;
    return STO_OK;
}

/* ------------------------------------------------- the other constructs -- */

static sto_status bind_between(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    sql_bexpr *a, *lo, *hi, *lo_cmp, *hi_cmp;
    STO_TRY(sql_bind_expr(b, s, e->between.arg, &a));
    STO_TRY(sql_bind_expr(b, s, e->between.low, &lo));
    STO_TRY(sql_bind_expr(b, s, e->between.high, &hi));
    sql_bexpr *a2 = sql_bexpr_copy(b->ctx, a);
    if (!a2) return sto_error_oom();
    bool neg = e->between.negated;
    STO_TRY(make_comparison(b, neg ? SQL_OP_LT : SQL_OP_GE, a, lo, e->pos, &lo_cmp));
    STO_TRY(make_comparison(b, neg ? SQL_OP_GT : SQL_OP_LE, a2, hi, e->pos, &hi_cmp));
    return make_bool_op(b, neg ? SQL_OP_OR : SQL_OP_AND, lo_cmp, hi_cmp, e->pos, out);
}

static sto_status bind_in_list(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    sql_bexpr *a;
    STO_TRY(sql_bind_expr(b, s, e->in_list.arg, &a));
    sql_bexpr *x = sql_bexpr_new(b->ctx, SQL_BEXPR_IN_LIST, sto_type_make(STO_TYPE_BOOLEAN),
                                 a->nullable, e->pos);
    if (!x || !sql_bind_make_list(b, &x->in_list.list, (uint32_t)e->in_list.list.count))
        return sto_error_oom();
    sto_type t = a->type;
    bool date_vs_strings = a->type.id == STO_TYPE_DATE;
    for (int i = 0; i < e->in_list.list.count; i++) {
        sql_bexpr *item;
        STO_TRY(sql_bind_expr(b, s, e->in_list.list.items[i], &item));
        x->in_list.list.items[i] = item;
        x->nullable |= item->nullable;
        if (date_vs_strings && item->kind == SQL_BEXPR_CONST && sto_type_is_string(item->type.id))
            continue;
        if (!sql_types_common(t, item->type, &t))
            return sto_error_at(STO_UNDEFINED_FUNCTION, e->pos, "operator does not exist: %s = %s",
                                sql_type_pg_name(a->type), sql_type_pg_name(item->type));
    }
    if (t.id == BIND_TYPE_UNKNOWN) t = sto_type_string(STO_TYPE_VARCHAR, 0);
    STO_TRY(sql_types_coerce(b, &a, t));
    for (uint32_t i = 0; i < x->in_list.list.count; i++) {
        /* each item as if compared with a = item */
        sql_bexpr *probe = a;
        STO_TRY(sql_types_unify(b, &probe, &x->in_list.list.items[i], "=", e->pos));
        STO_TRY(sql_types_coerce(b, &x->in_list.list.items[i], t));
    }
    x->in_list.arg = a;
    x->in_list.negated = e->in_list.negated;
    *out = x;
    return STO_OK;
}

static sto_status bind_like(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    sql_bexpr *args[3];
    uint32_t n = 2;
    STO_TRY(sql_bind_expr(b, s, e->like.arg, &args[0]));
    STO_TRY(sql_bind_expr(b, s, e->like.pattern, &args[1]));
    if (e->like.escape) STO_TRY(sql_bind_expr(b, s, e->like.escape, &args[n++]));
    sql_func f = e->like.case_insensitive ? (e->like.negated ? SQL_FUNC_NOT_ILIKE : SQL_FUNC_ILIKE)
                                          : (e->like.negated ? SQL_FUNC_NOT_LIKE : SQL_FUNC_LIKE);
    return sql_bind_make_func(b, f, args, n, e->pos, out);
}

static sto_status bind_case(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    uint32_t n = (uint32_t)e->case_.whens.count;
    sql_bexpr *x =
        sql_bexpr_new(b->ctx, SQL_BEXPR_CASE, sto_type_make(BIND_TYPE_UNKNOWN), false, e->pos);
    if (!x || !sql_bind_make_list(b, &x->case_.conds, n) ||
        !sql_bind_make_list(b, &x->case_.results, n))
        return sto_error_oom();
    sql_bexpr *operand = NULL;
    if (e->case_.operand) STO_TRY(sql_bind_expr(b, s, e->case_.operand, &operand));
    for (uint32_t i = 0; i < n; i++) {
        const sql_when *w = e->case_.whens.items[i];
        sql_bexpr *cond;
        if (operand) {
            /* CASE x WHEN v ... is CASE WHEN x = v ... */
            sql_bexpr *v, *xc = sql_bexpr_copy(b->ctx, operand);
            if (!xc) return sto_error_oom();
            STO_TRY(sql_bind_expr(b, s, w->cond, &v));
            STO_TRY(make_comparison(b, SQL_OP_EQ, xc, v, w->pos, &cond));
        } else {
            STO_TRY(sql_bind_condition(b, s, w->cond, "CASE/WHEN", &cond));
        }
        x->case_.conds.items[i] = cond;
        STO_TRY(sql_bind_expr(b, s, w->result, &x->case_.results.items[i]));
    }
    sql_bexpr *els;
    if (e->case_.else_result)
        STO_TRY(sql_bind_expr(b, s, e->case_.else_result, &els));
    else if (!(els = sql_bexpr_null(b->ctx, sto_type_make(BIND_TYPE_UNKNOWN), e->pos)))
        return sto_error_oom();
    /* PostgreSQL's order: ELSE first, then the THEN arms as written. */
    sto_type t = els->type;
    for (uint32_t i = 0; i < n; i++) {
        sto_type rt = x->case_.results.items[i]->type;
        if (!sql_types_common(t, rt, &t))
            return sto_error_at(STO_DATATYPE_MISMATCH, x->case_.results.items[i]->pos,
                                "CASE types %s and %s cannot be matched", sql_type_pg_name(t),
                                sql_type_pg_name(rt));
    }
    if (t.id == BIND_TYPE_UNKNOWN) t = sto_type_string(STO_TYPE_VARCHAR, 0);
    STO_TRY(sql_types_coerce(b, &els, t));
    x->nullable = els->nullable;
    for (uint32_t i = 0; i < n; i++) {
        STO_TRY(sql_types_coerce(b, &x->case_.results.items[i], t));
        x->nullable |= x->case_.results.items[i]->nullable;
    }
    x->case_.else_result = els;
    x->type = t;
    *out = x;
    return STO_OK;
}

static sto_status bind_param(binder *b, const sql_expr *e, sql_bexpr **out)
{
    sql_plan_ctx *ctx = b->ctx;
    uint32_t n = (uint32_t)e->param.index;
    if (e->param.index < 1 || n > 65535)
        return sto_error_at(STO_UNDEFINED_OBJECT, e->pos, "there is no parameter $%d",
                            e->param.index);
    if (n > ctx->nparams) {
        sto_type *t = sql_arena_alloc(b->arena, n * sizeof(*t));
        if (!t) return sto_error_oom();
        if (ctx->nparams) memcpy(t, ctx->param_types, ctx->nparams * sizeof(*t));
        for (uint32_t i = ctx->nparams; i < n; i++)
            t[i] = sto_type_make(BIND_TYPE_UNKNOWN);
        ctx->param_types = t;
        ctx->nparams = n;
    }
    *out = sql_bexpr_new(ctx, SQL_BEXPR_PARAM, ctx->param_types[n - 1], true, e->pos);
    if (!*out) return sto_error_oom();
    (*out)->param = (int)n;
    return STO_OK;
}

sto_status sql_bind_expr(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    *out = NULL;
    switch (e->kind) {
    case SQL_EXPR_LITERAL:
        return bind_literal(b, e, out);
    case SQL_EXPR_COLUMN: {
        sql_colid id = 0;
        STO_TRY(lookup_column(b, s, e->column.table, e->column.name, e->pos, &id));
        *out = sql_bexpr_column(b->ctx, id, e->pos);
        break;
    }
    case SQL_EXPR_STAR:
        return sto_error_at(STO_SYNTAX_ERROR, e->pos, "\"*\" is not allowed here");
    case SQL_EXPR_PARAM:
        return bind_param(b, e, out);
    case SQL_EXPR_UNARY:
        return bind_unary(b, s, e, out);
    case SQL_EXPR_BINARY:
        return bind_binary(b, s, e, out);
    case SQL_EXPR_IS_NULL: {
        sql_bexpr *a;
        STO_TRY(sql_bind_expr(b, s, e->is_null.arg, &a));
        STO_TRY(sql_types_resolve_unknown(b, &a));
        *out = sql_bexpr_new(b->ctx, SQL_BEXPR_IS_NULL, sto_type_make(STO_TYPE_BOOLEAN), false,
                             e->pos);
        if (*out) {
            (*out)->is_null.arg = a;
            (*out)->is_null.negated = e->is_null.negated;
        }
        break;
    }
    case SQL_EXPR_BETWEEN:
        return bind_between(b, s, e, out);
    case SQL_EXPR_IN_LIST:
        return bind_in_list(b, s, e, out);
    case SQL_EXPR_IN_SUBQUERY: {
        sql_bexpr *q;
        STO_TRY(bind_quantified(b, s, e->in_subquery.arg, e->in_subquery.subquery, SQL_OP_EQ, false,
                                e->pos, &q));
        if (!e->in_subquery.negated) {
            *out = q;
            return STO_OK;
        }
        return make_bool_op(b, SQL_OP_NOT, q, NULL, e->pos, out);
    }
    case SQL_EXPR_LIKE:
        return bind_like(b, s, e, out);
    case SQL_EXPR_EXISTS:
        return bind_subquery(b, s, e->subquery.query, e->pos, SQL_SUBQ_EXISTS, out);
    case SQL_EXPR_SUBQUERY:
        return bind_subquery(b, s, e->subquery.query, e->pos, SQL_SUBQ_SCALAR, out);
    case SQL_EXPR_QUANTIFIED:
        return bind_quantified(b, s, e->quantified.arg, e->quantified.subquery, e->quantified.op,
                               e->quantified.all, e->pos, out);
    case SQL_EXPR_CASE:
        return bind_case(b, s, e, out);
    case SQL_EXPR_CAST: {
        sql_bexpr *a;
        STO_TRY(sql_bind_expr(b, s, e->cast.arg, &a));
        STO_TRY(sql_types_cast(b, &a, e->cast.type, e->pos));
        *out = a;
        return STO_OK;
    }
    case SQL_EXPR_FUNC:
        return sql_bind_func_call(b, s, e, out);
    case SQL_EXPR_EXTRACT: {
        sql_bexpr *a;
        STO_TRY(sql_bind_expr(b, s, e->extract.arg, &a));
        return sql_bind_make_func(b, sql_func_extract(e->extract.field), &a, 1, e->pos, out);
    }
    case SQL_EXPR_KIND_COUNT:
        break;
    }
    return *out ? STO_OK : sto_error_oom();
}

/* ------------------------------------------------------- derived names -- */

const char *sql_bind_derived_name(const sql_expr *e)
{
    switch (e->kind) {
    case SQL_EXPR_COLUMN:
        return e->column.name;
    case SQL_EXPR_FUNC:
        return strcmp(e->func.name, "substr") == 0 ? "substr" : e->func.name;
    case SQL_EXPR_CAST: {
        const char *n = sql_bind_derived_name(e->cast.arg);
        if (strcmp(n, "?column?") != 0) return n;
        static const char *const names[] = {"bool",   "int4", "int8",   "numeric",
                                            "float8", "date", "bpchar", "varchar"};
        return e->cast.type.id < STO_TYPE_COUNT ? names[e->cast.type.id] : "?column?";
    }
    case SQL_EXPR_CASE:
        return "case";
    case SQL_EXPR_EXTRACT:
        return "extract";
    case SQL_EXPR_EXISTS:
        return "exists";
    case SQL_EXPR_SUBQUERY: {
        const sql_query *q = e->subquery.query;
        while (q->kind == SQL_QUERY_SETOP)
            q = q->left;
        if (q->kind == SQL_QUERY_SELECT && q->select.count >= 1) {
            const sql_select_item *it = q->select.items[0];
            return it->alias ? it->alias : sql_bind_derived_name(it->expr);
        }
        return "?column?";
    }
    case SQL_EXPR_LITERAL:
        if (e->lit.kind == SQL_LIT_DATE) return "date";
        if (e->lit.kind == SQL_LIT_BOOL) return "bool";
        if (e->lit.kind == SQL_LIT_INTERVAL) return "interval";
        return "?column?";
    default:
        return "?column?";
    }
}
