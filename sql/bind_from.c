/*
 * bind_from.c — FROM clauses: tables, views, CTE references, derived tables
 * and joins become GET / JOIN operators, and the relations they make
 * visible (names → column ids) are added to the query level's scope.
 *
 * A view is parsed from its stored text and bound in place, a CTE's query is
 * bound again at each reference: either way every reference gets its own
 * column ids and its own subplan. Comma-separated items become CROSS joins
 * in written order; the optimizer chooses the real order.
 */
#include <stdio.h>
#include <string.h>

#include "sql/bind_int.h"
#include "sql/parse.h"

#define MAX_VIEW_DEPTH 32

/* Every reference to a CTE or view binds its body again (fresh column ids,
 * its own plan), so a CTE that names the previous one four times, ten levels
 * deep, would bind 4^10 bodies: a few hundred bytes of SQL that never finish
 * binding (found running tests/sql/fuzz_bind.c on crafted input). Real
 * queries stay far below this cap; past it the statement fails with 54001. */
#define MAX_EXPANSIONS 4096

/* Counts one more CTE or view body to bind; 54001 past the cap. */
static sto_status count_expansion(binder *b, const sql_table_ref *ref)
{
    if (++b->expansions <= MAX_EXPANSIONS) return STO_OK;
    return sto_error_at(STO_STATEMENT_TOO_COMPLEX, ref->pos,
                        "statement too complex: its CTE and view references expand to more than "
                        "%d copies",
                        MAX_EXPANSIONS);
}

/* A relation for a FROM item whose columns are ids (names from the ids'
 * debug names unless aliased). */
sto_status sql_bind_make_rel(binder *b, const char *name, uint32_t ncols, const sql_colid *ids,
                             const char *const *names, const sql_ident_list *aliases, int alias_pos,
                             bind_rel **out)
{
    if (aliases && aliases->count > (int)ncols)
        return sto_error_at(STO_INVALID_COLUMN_REFERENCE, alias_pos,
                            "table \"%s\" has %u columns available but %d columns specified",
                            name ? name : "?", ncols, aliases->count);
    bind_rel *r = sql_arena_alloc(b->arena, sizeof(*r));
    if (!r) return sto_error_oom();
    r->name = name;
    r->ncols = ncols;
    r->cols = sql_arena_alloc(b->arena, (ncols ? ncols : 1) * sizeof(*r->cols));
    if (!r->cols) return sto_error_oom();
    for (uint32_t i = 0; i < ncols; i++) {
        r->cols[i].id = ids[i];
        r->cols[i].name = names ? names[i] : sql_plan_col(b->ctx, ids[i])->name;
        if (aliases && (int)i < aliases->count) r->cols[i].name = aliases->items[i]->name;
    }
    *out = r;
    return STO_OK;
}

/* ------------------------------------------------------------------ FROM -- */

static const bind_cte *find_cte(const bind_cte *env, const char *name)
{
    for (; env; env = env->next) {
        if (strcmp(env->def->name, name) == 0) return env;
    }
    return NULL;
}

static sto_status bind_table(binder *b, bind_scope *s, const sql_table_ref *ref,
                             const sql_table_info *ti, sql_lop **out)
{
    const sto_schema *sch = ti->schema;
    sql_lop *get = sql_lop_new(b->ctx, SQL_LOP_GET, NULL, NULL, sch->ncols);
    if (!get) return sto_error_oom();
    get->get.table = ti->table;
    get->get.table_name = sql_arena_strndup(b->arena, ti->name, strlen(ti->name));
    get->get.alias = ref->alias ? ref->alias : ref->name;
    get->get.rows = ti->rows;
    get->get.stats = ti->stats;
    get->get.columns = sql_arena_alloc(b->arena, (sch->ncols ? sch->ncols : 1) * sizeof(uint32_t));
    if (!get->get.columns || !get->get.table_name) return sto_error_oom();
    for (uint32_t i = 0; i < sch->ncols; i++) {
        const sto_column_def *c = &sch->cols[i];
        char *name = sql_arena_strndup(b->arena, c->name, strlen(c->name));
        if (!name) return sto_error_oom();
        sql_colid id = sql_plan_new_col(b->ctx, c->type, !c->not_null, name);
        if (!id) return sto_error_oom();
        get->out[i] = id;
        get->get.columns[i] = i;
    }
    bind_rel *r;
    STO_TRY(sql_bind_make_rel(b, get->get.alias, get->nout, get->out, NULL, &ref->columns,
                              ref->alias_pos, &r));
    STO_TRY(sql_bind_add_rel(b, s, r));
    *out = get;
    return STO_OK;
}

/* A bound query used as a FROM item named name. */
static sto_status add_query_rel(binder *b, bind_scope *s, const char *name, const bound_query *bq,
                                const sql_ident_list *aliases1, const sql_ident_list *aliases2,
                                int alias_pos)
{
    bind_rel *r;
    STO_TRY(sql_bind_make_rel(b, name, bq->ncols, bq->cols, bq->names, aliases1, alias_pos, &r));
    if (aliases2 && aliases2->count) {
        if (aliases2->count > (int)r->ncols)
            return sto_error_at(STO_INVALID_COLUMN_REFERENCE, alias_pos,
                                "table \"%s\" has %u columns available but %d columns specified",
                                name, r->ncols, aliases2->count);
        for (int i = 0; i < aliases2->count; i++)
            r->cols[i].name = aliases2->items[i]->name;
    }
    return sql_bind_add_rel(b, s, r);
}

static sto_status bind_view(binder *b, bind_scope *s, const sql_table_ref *ref,
                            const sql_view_info *vi, sql_lop **out)
{
    if (b->view_depth >= MAX_VIEW_DEPTH)
        return sto_error_at(STO_INVALID_PARAMETER_VALUE, ref->pos,
                            "infinite recursion detected in rules for relation \"%s\"", ref->name);
    STO_TRY(count_expansion(b, ref));
    sql_stmt_list *stmts;
    sto_status st = sql_parse(b->arena, vi->sql, &stmts);
    if (!st && (stmts->count != 1 || stmts->items[0]->kind != SQL_STMT_SELECT))
        st = sto_error(STO_WRONG_OBJECT_TYPE, "view text is not one query");
    bound_query bq;
    if (!st) {
        b->view_depth++;
        st = sql_bind_level(b, NULL, false, NULL, stmts->items[0]->query, &bq, NULL);
        b->view_depth--;
    }
    if (st) {
        /* The position was in the view's text; point at the reference. */
        st = sto_status_wrap(st, "in view \"%s\"", vi->name);
        if (st != sto_error_oom()) st->position = ref->pos;
        return st;
    }
    if (vi->ncols > bq.ncols)
        return sto_error_at(STO_INVALID_COLUMN_REFERENCE, ref->pos,
                            "view \"%s\" names %u columns but its query has %u", vi->name,
                            vi->ncols, bq.ncols);
    const char **names = sql_arena_alloc(b->arena, (bq.ncols ? bq.ncols : 1) * sizeof(*names));
    if (!names) return sto_error_oom();
    for (uint32_t i = 0; i < bq.ncols; i++)
        names[i] = i < vi->ncols ? vi->column_names[i] : bq.names[i];
    bq.names = names;
    STO_TRY(add_query_rel(b, s, ref->alias ? ref->alias : ref->name, &bq, &ref->columns, NULL,
                          ref->alias_pos));
    *out = bq.root;
    return STO_OK;
}

static sto_status bind_from_item(binder *b, bind_scope *s, const sql_table_ref *ref, sql_lop **out);

static sto_status bind_named(binder *b, bind_scope *s, const sql_table_ref *ref, sql_lop **out)
{
    const bind_cte *cte = find_cte(s->ctes, ref->name);
    if (cte) {
        /* Every reference binds the CTE afresh: its own ids, its own plan. */
        STO_TRY(count_expansion(b, ref));
        bound_query bq;
        STO_TRY(sql_bind_level(b, s, true, cte->env, cte->def->query, &bq, NULL));
        STO_TRY(add_query_rel(b, s, ref->alias ? ref->alias : ref->name, &bq, &cte->def->columns,
                              &ref->columns, ref->alias_pos ? ref->alias_pos : ref->pos));
        *out = bq.root;
        return STO_OK;
    }
    const sql_catalog *cat = b->catalog;
    sql_table_info ti;
    if (cat && cat->lookup_table && cat->lookup_table(cat->ctx, ref->name, &ti))
        return bind_table(b, s, ref, &ti, out);
    sql_view_info vi;
    if (cat && cat->lookup_view && cat->lookup_view(cat->ctx, ref->name, &vi))
        return bind_view(b, s, ref, &vi, out);
    return sto_error_at(STO_UNDEFINED_TABLE, ref->pos, "relation \"%s\" does not exist", ref->name);
}

/* The column named name among rels [first_rel, end_rel) of s: one side of
 * a join, for USING. */
static bind_col *find_using_col(bind_scope *s, uint32_t first_rel, uint32_t end_rel,
                                const char *name, int pos, sto_status *st)
{
    bind_col *found = NULL;
    *st = STO_OK;
    for (uint32_t r = first_rel; r < end_rel; r++) {
        bind_rel *rel = s->rels[r];
        for (uint32_t c = 0; c < rel->ncols; c++) {
            if (rel->cols[c].using_hidden || strcmp(rel->cols[c].name, name) != 0) continue;
            if (found) {
                *st = sto_error_at(STO_AMBIGUOUS_COLUMN, pos,
                                   "common column name \"%s\" appears more than once", name);
                return NULL;
            }
            found = &rel->cols[c];
        }
    }
    if (!found)
        *st = sto_error_at(STO_UNDEFINED_COLUMN, pos,
                           "column \"%s\" specified in USING clause does not exist", name);
    return found;
}

static void mark_nullable(binder *b, const sql_lop *side)
{
    for (uint32_t i = 0; i < side->nout; i++)
        sql_plan_col(b->ctx, side->out[i])->nullable = true;
}

static sto_status bind_join(binder *b, bind_scope *s, const sql_table_ref *ref, sql_lop **out)
{
    sql_lop *l, *r;
    uint32_t left_first = s->nrels;
    STO_TRY(bind_from_item(b, s, ref->left, &l));
    uint32_t right_first = s->nrels;
    STO_TRY(bind_from_item(b, s, ref->right, &r));
    uint32_t right_end = s->nrels;

    static const sql_join_kind kinds[] = {[SQL_JOIN_INNER] = SQL_JOINK_INNER,
                                          [SQL_JOIN_LEFT] = SQL_JOINK_LEFT,
                                          [SQL_JOIN_RIGHT] = SQL_JOINK_RIGHT,
                                          [SQL_JOIN_FULL] = SQL_JOINK_FULL,
                                          [SQL_JOIN_CROSS] = SQL_JOINK_CROSS};
    sql_lop *j = sql_lop_new(b->ctx, SQL_LOP_JOIN, l, r, l->nout + r->nout);
    if (!j) return sto_error_oom();
    memcpy(j->out, l->out, l->nout * sizeof(sql_colid));
    memcpy(j->out + l->nout, r->out, r->nout * sizeof(sql_colid));
    j->join.kind = kinds[ref->join_type];

    sql_bexpr *cond = NULL;
    if (ref->on) {
        bind_clause saved = s->clause;
        s->clause = CLAUSE_JOIN;
        sto_status st = sql_bind_condition(b, s, ref->on, "JOIN/ON", &cond);
        s->clause = saved;
        STO_TRY(st);
    }
    for (int i = 0; i < ref->using.count; i++) {
        const sql_ident *u = ref->using.items[i];
        sto_status st;
        if (ref->join_type == SQL_JOIN_FULL)
            return sto_error_at(STO_FEATURE_NOT_SUPPORTED, u->pos,
                                "FULL JOIN with USING is not supported");
        bind_col *lc = find_using_col(s, left_first, right_first, u->name, u->pos, &st);
        STO_TRY(st);
        bind_col *rc = find_using_col(s, right_first, right_end, u->name, u->pos, &st);
        STO_TRY(st);
        sql_bexpr *lx = sql_bexpr_column(b->ctx, lc->id, u->pos);
        sql_bexpr *rx = sql_bexpr_column(b->ctx, rc->id, u->pos);
        if (!lx || !rx) return sto_error_oom();
        STO_TRY(sql_types_unify(b, &lx, &rx, "=", u->pos));
        sql_bexpr *eq =
            sql_bexpr_op(b->ctx, SQL_OP_EQ, sto_type_make(STO_TYPE_BOOLEAN), lx, rx, u->pos);
        if (!eq) return sto_error_oom();
        cond = cond ? sql_bexpr_op(b->ctx, SQL_OP_AND, sto_type_make(STO_TYPE_BOOLEAN), cond, eq,
                                   u->pos)
                    : eq;
        if (!cond) return sto_error_oom();
        /* The merged column answers to the unqualified name: the left one
         * unless the right side is the preserved one. */
        if (ref->join_type == SQL_JOIN_RIGHT)
            lc->using_hidden = true;
        else
            rc->using_hidden = true;
    }
    j->join.cond = cond;
    if (ref->join_type == SQL_JOIN_LEFT || ref->join_type == SQL_JOIN_FULL) mark_nullable(b, r);
    if (ref->join_type == SQL_JOIN_RIGHT || ref->join_type == SQL_JOIN_FULL) mark_nullable(b, l);
    *out = j;
    return STO_OK;
}

static sto_status bind_from_item(binder *b, bind_scope *s, const sql_table_ref *ref, sql_lop **out)
{
    switch (ref->kind) {
    case SQL_TABLE_NAMED:
        return bind_named(b, s, ref, out);
    case SQL_TABLE_SUBQUERY: {
        bound_query bq;
        STO_TRY(sql_bind_level(b, s, true, s->ctes, ref->subquery, &bq, NULL));
        STO_TRY(add_query_rel(b, s, ref->alias, &bq, &ref->columns, NULL, ref->alias_pos));
        *out = bq.root;
        return STO_OK;
    }
    case SQL_TABLE_JOIN:
        return bind_join(b, s, ref, out);
    }
    return sto_error(STO_INTERNAL_ERROR, "unknown FROM item");
}

sto_status sql_bind_from(binder *b, bind_scope *s, const sql_table_ref_list *from, sql_lop **out)
{
    sql_lop *input = NULL;
    for (int i = 0; i < from->count; i++) {
        sql_lop *item;
        STO_TRY(bind_from_item(b, s, from->items[i], &item));
        if (!input) {
            input = item;
            continue;
        }
        sql_lop *j = sql_lop_new(b->ctx, SQL_LOP_JOIN, input, item, input->nout + item->nout);
        if (!j) return sto_error_oom();
        memcpy(j->out, input->out, input->nout * sizeof(sql_colid));
        memcpy(j->out + input->nout, item->out, item->nout * sizeof(sql_colid));
        j->join.kind = SQL_JOINK_CROSS;
        input = j;
    }
    if (!input) {
        /* SELECT without FROM reads one row of no columns. */
        input = sql_lop_new(b->ctx, SQL_LOP_VALUES, NULL, NULL, 0);
        if (!input) return sto_error_oom();
        input->values.nrows = 1;
        input->values.rows = sql_arena_alloc(b->arena, sizeof(sql_bexpr_list));
        if (!input->values.rows) return sto_error_oom();
    }
    *out = input;
    return STO_OK;
}
