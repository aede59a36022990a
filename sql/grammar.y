/*
 * grammar.y — rackdb's SQL grammar, for the lemon parser generator.
 *
 * Read this file as the specification of the SQL rackdb accepts. Each rule
 * has one action, and each action is one call into sql/ast_build.h, which
 * allocates the node in the statement's arena and fills it in. Builders never
 * fail loudly: when memory runs out they return NULL and the arena remembers
 * it, and when they find an error (an unknown type name, a second ORDER BY)
 * they record it in the sql_build context; the driver in sql/parse.c checks
 * both after every token and stops.
 *
 * Tokens come from the hand-written tokenizer in sql/token.c. Some keywords
 * are not reserved (%fallback ID below): where the keyword makes no sense the
 * parser takes it as a plain identifier, so `value`, `year` or `key` still
 * work as column names. DATE, INTERVAL, EXTRACT, SUBSTRING, POSITION and TRIM
 * are keywords only where the next token makes them one (sql/parse.c looks
 * ahead).
 *
 * Operator precedence follows PostgreSQL, loosest first.
 */

%name sql_lemon
%token_prefix TK_
%token_type {sql_token}
%default_type {sql_expr *}
%extra_argument {sql_build *B}
%stack_size 1000

%include {
#include <assert.h>
#include <stdlib.h>

#include "sql/ast_build.h"
#include "sql/token.h"
}

%syntax_error {
    sql_build_syntax_error(B, &TOKEN);
}

%stack_overflow {
    sql_build_too_deep(B);
}

/* The code sql/parse.c gives a look-ahead token that failed to scan; no rule
 * accepts it. */
%token ILLEGAL.

%fallback ID
    ASC DESC NULLS FIRST LAST NEXT ROW ROWS ONLY
    VIEW IF KEY PRECISION VARYING
    DATE INTERVAL EXTRACT SUBSTRING POSITION TRIM BOTH LEADING TRAILING
    COPY CALL EXPLAIN ANALYZE SET SHOW
    BEGIN COMMIT ROLLBACK TRANSACTION WORK START STDIN STDOUT
    INSERT DROP CASCADE RESTRICT.

%left UNION EXCEPT.
%left INTERSECT.
%left OR.
%left AND.
%right NOT.
%nonassoc IS.
%nonassoc EQ NE LT LE GT GE.
%nonassoc BETWEEN IN LIKE ILIKE.
%nonassoc ESCAPE.
%left CONCAT.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%right UMINUS.
%right RP.     /* only to settle ((SELECT ..)) and POSITION(a IN (b)): see the rules marked [RP] and [IN] */
%left TYPECAST.

/* ------------------------------------------------------- statement list -- */

input ::= cmdlist.
cmdlist ::= cmdlist ecmd.
cmdlist ::= .
ecmd ::= SEMI.
ecmd ::= cmd(C) SEMI(S).                  { sql_build_add_stmt(B, C, &S); }

%type cmd {sql_stmt *}

/* ------------------------------------------------------------- queries -- */

cmd(A) ::= select_stmt(Q).                { A = sql_build_select_stmt(B, Q); }

%type select_stmt {sql_query *}
%type select_no_parens {sql_query *}
%type select_with_parens {sql_query *}
%type select_clause {sql_query *}
%type simple_select {sql_query *}

select_stmt(A) ::= select_no_parens(Q).   { A = Q; }
select_stmt(A) ::= select_with_parens(Q). { A = Q; }

select_with_parens(A) ::= LP select_no_parens(Q) RP.   { A = Q; }
select_with_parens(A) ::= LP select_with_parens(Q) RP. { A = Q; }

/* ORDER BY, LIMIT and WITH attach to the query they follow or precede. */
select_no_parens(A) ::= simple_select(Q).                      { A = Q; }
select_no_parens(A) ::= select_clause(Q) sort_clause(O).
    { A = sql_build_query_tail(B, NULL, Q, O, NULL); }
select_no_parens(A) ::= select_clause(Q) opt_sort_clause(O) limit_clause(L).
    { A = sql_build_query_tail(B, NULL, Q, O, &L); }
select_no_parens(A) ::= with_clause(W) select_clause(Q).
    { A = sql_build_query_tail(B, W, Q, NULL, NULL); }
select_no_parens(A) ::= with_clause(W) select_clause(Q) sort_clause(O).
    { A = sql_build_query_tail(B, W, Q, O, NULL); }
select_no_parens(A) ::= with_clause(W) select_clause(Q) opt_sort_clause(O) limit_clause(L).
    { A = sql_build_query_tail(B, W, Q, O, &L); }

select_clause(A) ::= simple_select(Q).      { A = Q; }
select_clause(A) ::= select_with_parens(Q). { A = Q; }

simple_select(A) ::= SELECT(S) opt_distinct(D) select_list(L) from_clause(F)
                     where_clause(W) group_clause(G) having_clause(H).
    { A = sql_build_select(B, &S, D, L, F, W, G, H); }
simple_select(A) ::= values_clause(V).      { A = V; }
simple_select(A) ::= select_clause(L) UNION(T) opt_all(D) select_clause(R).
    { A = sql_build_setop(B, &T, SQL_SETOP_UNION, D, L, R); }
simple_select(A) ::= select_clause(L) INTERSECT(T) opt_all(D) select_clause(R).
    { A = sql_build_setop(B, &T, SQL_SETOP_INTERSECT, D, L, R); }
simple_select(A) ::= select_clause(L) EXCEPT(T) opt_all(D) select_clause(R).
    { A = sql_build_setop(B, &T, SQL_SETOP_EXCEPT, D, L, R); }

%type opt_distinct {bool}
opt_distinct(A) ::= .                     { A = false; }
opt_distinct(A) ::= DISTINCT.             { A = true; }
opt_distinct(A) ::= ALL.                  { A = false; }

%type opt_all {bool}
opt_all(A) ::= .                          { A = false; }
opt_all(A) ::= ALL.                       { A = true; }
opt_all(A) ::= DISTINCT.                  { A = false; }

%type select_list {sql_select_list *}
%type select_item {sql_select_item *}
select_list(A) ::= select_item(I).                      { A = sql_build_select_list(B, NULL, I); }
select_list(A) ::= select_list(L) COMMA select_item(I). { A = sql_build_select_list(B, L, I); }

select_item(A) ::= expr(E).               { A = sql_build_select_item(B, E, NULL); }
select_item(A) ::= expr(E) AS ID(N).      { A = sql_build_select_item(B, E, &N); }
select_item(A) ::= expr(E) ID(N).         { A = sql_build_select_item(B, E, &N); }
select_item(A) ::= STAR(S).               { A = sql_build_star_item(B, &S, NULL); }
select_item(A) ::= ID(T) DOT STAR.        { A = sql_build_star_item(B, &T, &T); }

/* VALUES (1, 'a'), (2, 'b') */
%type values_clause {sql_query *}
values_clause(A) ::= VALUES(V) LP expr_list(L) RP.    { A = sql_build_values(B, &V, NULL, L); }
values_clause(A) ::= values_clause(Q) COMMA LP expr_list(L) RP.
    { A = sql_build_values(B, NULL, Q, L); }

/* WITH name [(cols)] AS (query), ... */
%type with_clause {sql_cte_list *}
%type cte {sql_cte *}
with_clause(A) ::= WITH cte(C).                  { A = sql_build_cte_list(B, NULL, C); }
with_clause(A) ::= with_clause(L) COMMA cte(C).  { A = sql_build_cte_list(B, L, C); }
cte(A) ::= ID(N) opt_name_list(C) AS select_with_parens(Q). { A = sql_build_cte(B, &N, C, Q); }

/* ---------------------------------------------------------------- FROM -- */

%type from_clause {sql_table_ref_list *}
%type from_list {sql_table_ref_list *}
%type table_ref {sql_table_ref *}
%type table_primary {sql_table_ref *}

from_clause(A) ::= .                          { A = NULL; }
from_clause(A) ::= FROM from_list(L).         { A = L; }
from_list(A) ::= table_ref(T).                { A = sql_build_from_list(B, NULL, T); }
from_list(A) ::= from_list(L) COMMA table_ref(T). { A = sql_build_from_list(B, L, T); }

table_ref(A) ::= table_primary(T).            { A = T; }
table_ref(A) ::= table_ref(L) join_type(J) JOIN(T) table_primary(R) ON expr(E).
    { A = sql_build_join(B, &T, J, L, R, E, NULL); }
table_ref(A) ::= table_ref(L) join_type(J) JOIN(T) table_primary(R) USING LP name_list(U) RP.
    { A = sql_build_join(B, &T, J, L, R, NULL, U); }
table_ref(A) ::= table_ref(L) CROSS(T) JOIN table_primary(R).
    { A = sql_build_join(B, &T, SQL_JOIN_CROSS, L, R, NULL, NULL); }

%type join_type {sql_join_type}
join_type(A) ::= .                            { A = SQL_JOIN_INNER; }
join_type(A) ::= INNER.                       { A = SQL_JOIN_INNER; }
join_type(A) ::= LEFT opt_outer.              { A = SQL_JOIN_LEFT; }
join_type(A) ::= RIGHT opt_outer.             { A = SQL_JOIN_RIGHT; }
join_type(A) ::= FULL opt_outer.              { A = SQL_JOIN_FULL; }
opt_outer ::= .
opt_outer ::= OUTER.

table_primary(A) ::= ID(N) opt_alias(L).      { A = sql_build_table_named(B, &N, &L); }
table_primary(A) ::= select_with_parens(Q) alias(L).
    { A = sql_build_table_subquery(B, Q, &L); }
/* Without an alias, ((SELECT ..)) is one parenthesized query, not a query
 * inside a parenthesized FROM item: the [RP] precedence says "shift". */
table_primary(A) ::= select_with_parens(Q). [RP]
    { A = sql_build_table_subquery(B, Q, NULL); }
table_primary(A) ::= LP table_ref(T) RP.      { A = T; }

/* [AS] alias [(col, ...)] */
%type opt_alias {sql_alias}
%type alias {sql_alias}
opt_alias(A) ::= .                            { A = sql_build_no_alias(); }
opt_alias(A) ::= alias(L).                    { A = L; }
alias(A) ::= ID(N) opt_name_list(C).          { A = sql_build_alias(&N, C); }
alias(A) ::= AS ID(N) opt_name_list(C).       { A = sql_build_alias(&N, C); }

%type opt_name_list {sql_ident_list *}
%type name_list {sql_ident_list *}
opt_name_list(A) ::= .                        { A = NULL; }
opt_name_list(A) ::= LP name_list(L) RP.      { A = L; }
name_list(A) ::= ID(N).                       { A = sql_build_name_list(B, NULL, &N); }
name_list(A) ::= name_list(L) COMMA ID(N).    { A = sql_build_name_list(B, L, &N); }

/* ------------------------------------------- WHERE, GROUP BY, ORDER BY -- */

where_clause(A) ::= .                         { A = NULL; }
where_clause(A) ::= WHERE expr(E).            { A = E; }

%type group_clause {sql_expr_list *}
group_clause(A) ::= .                         { A = NULL; }
group_clause(A) ::= GROUP BY expr_list(L).    { A = L; }

having_clause(A) ::= .                        { A = NULL; }
having_clause(A) ::= HAVING expr(E).          { A = E; }

%type sort_clause {sql_order_list *}
%type opt_sort_clause {sql_order_list *}
%type sort_list {sql_order_list *}
%type sort_item {sql_order_item *}
opt_sort_clause(A) ::= .                      { A = NULL; }
opt_sort_clause(A) ::= sort_clause(O).        { A = O; }
sort_clause(A) ::= ORDER BY sort_list(L).     { A = L; }
sort_list(A) ::= sort_item(I).                { A = sql_build_order_list(B, NULL, I); }
sort_list(A) ::= sort_list(L) COMMA sort_item(I). { A = sql_build_order_list(B, L, I); }
sort_item(A) ::= expr(E) opt_direction(D) opt_nulls(N). { A = sql_build_order_item(B, E, D, N); }

%type opt_direction {bool}
opt_direction(A) ::= .                        { A = false; }
opt_direction(A) ::= ASC.                     { A = false; }
opt_direction(A) ::= DESC.                    { A = true; }

%type opt_nulls {sql_nulls_order}
opt_nulls(A) ::= .                            { A = SQL_NULLS_DEFAULT; }
opt_nulls(A) ::= NULLS FIRST.                 { A = SQL_NULLS_FIRST; }
opt_nulls(A) ::= NULLS LAST.                  { A = SQL_NULLS_LAST; }

/* LIMIT n|ALL [OFFSET m], OFFSET m [LIMIT n],
 * [OFFSET m {ROW|ROWS}] FETCH {FIRST|NEXT} [n] {ROW|ROWS} ONLY */
%type limit_clause {sql_limit}
limit_clause(A) ::= LIMIT expr(L).            { A = sql_build_limit(L, NULL); }
limit_clause(A) ::= LIMIT expr(L) OFFSET expr(O). { A = sql_build_limit(L, O); }
limit_clause(A) ::= LIMIT ALL.                { A = sql_build_limit(NULL, NULL); }
limit_clause(A) ::= LIMIT ALL OFFSET expr(O). { A = sql_build_limit(NULL, O); }
limit_clause(A) ::= OFFSET expr(O) opt_rows.  { A = sql_build_limit(NULL, O); }
limit_clause(A) ::= OFFSET expr(O) opt_rows LIMIT expr(L). { A = sql_build_limit(L, O); }
limit_clause(A) ::= fetch_first(L).           { A = sql_build_limit(L, NULL); }
limit_clause(A) ::= OFFSET expr(O) opt_rows fetch_first(L). { A = sql_build_limit(L, O); }

fetch_first(A) ::= FETCH first_or_next expr(N) row_or_rows ONLY. { A = N; }
fetch_first(A) ::= FETCH(F) first_or_next row_or_rows ONLY.     { A = sql_build_integer_one(B, &F); }
first_or_next ::= FIRST.
first_or_next ::= NEXT.
row_or_rows ::= ROW.
row_or_rows ::= ROWS.
opt_rows ::= .
opt_rows ::= row_or_rows.

/* ---------------------------------------------------------- expressions -- */

%type expr_list {sql_expr_list *}
/* [IN]: in POSITION(a IN (b)) the parenthesis is b's own, not an IN list
 * of one; IN is looser than RP, so lemon shifts the RP of (b). */
expr_list(A) ::= expr(E). [IN]                { A = sql_build_expr_list(B, NULL, E); }
expr_list(A) ::= expr_list(L) COMMA expr(E).  { A = sql_build_expr_list(B, L, E); }

expr(A) ::= literal(L).                       { A = L; }
expr(A) ::= LP expr(E) RP.                    { A = E; }
expr(A) ::= ID(N).                            { A = sql_build_column(B, NULL, &N); }
expr(A) ::= ID(T) DOT ID(N).                  { A = sql_build_column(B, &T, &N); }
expr(A) ::= PARAM(P).                         { A = sql_build_param(B, &P); }

expr(A) ::= expr(X) OR(O) expr(Y).            { A = sql_build_binary(B, &O, SQL_OP_OR, X, Y); }
expr(A) ::= expr(X) AND(O) expr(Y).           { A = sql_build_binary(B, &O, SQL_OP_AND, X, Y); }
expr(A) ::= NOT(O) expr(X).                   { A = sql_build_unary(B, &O, SQL_OP_NOT, X); }
expr(A) ::= expr(X) EQ(O) expr(Y).            { A = sql_build_binary(B, &O, SQL_OP_EQ, X, Y); }
expr(A) ::= expr(X) NE(O) expr(Y).            { A = sql_build_binary(B, &O, SQL_OP_NE, X, Y); }
expr(A) ::= expr(X) LT(O) expr(Y).            { A = sql_build_binary(B, &O, SQL_OP_LT, X, Y); }
expr(A) ::= expr(X) LE(O) expr(Y).            { A = sql_build_binary(B, &O, SQL_OP_LE, X, Y); }
expr(A) ::= expr(X) GT(O) expr(Y).            { A = sql_build_binary(B, &O, SQL_OP_GT, X, Y); }
expr(A) ::= expr(X) GE(O) expr(Y).            { A = sql_build_binary(B, &O, SQL_OP_GE, X, Y); }
expr(A) ::= expr(X) CONCAT(O) expr(Y).        { A = sql_build_binary(B, &O, SQL_OP_CONCAT, X, Y); }
expr(A) ::= expr(X) PLUS(O) expr(Y).          { A = sql_build_binary(B, &O, SQL_OP_ADD, X, Y); }
expr(A) ::= expr(X) MINUS(O) expr(Y).         { A = sql_build_binary(B, &O, SQL_OP_SUB, X, Y); }
expr(A) ::= expr(X) STAR(O) expr(Y).          { A = sql_build_binary(B, &O, SQL_OP_MUL, X, Y); }
expr(A) ::= expr(X) SLASH(O) expr(Y).         { A = sql_build_binary(B, &O, SQL_OP_DIV, X, Y); }
expr(A) ::= expr(X) PERCENT(O) expr(Y).       { A = sql_build_binary(B, &O, SQL_OP_MOD, X, Y); }
expr(A) ::= MINUS(O) expr(X). [UMINUS]        { A = sql_build_unary(B, &O, SQL_OP_NEG, X); }
expr(A) ::= PLUS(O) expr(X). [UMINUS]         { A = sql_build_unary(B, &O, SQL_OP_PLUS, X); }

expr(A) ::= expr(X) IS(O) NULL.               { A = sql_build_is_null(B, &O, X, false); }
expr(A) ::= expr(X) IS(O) NOT NULL.           { A = sql_build_is_null(B, &O, X, true); }

expr(A) ::= expr(X) BETWEEN(O) expr(L) AND expr(H). [BETWEEN]
    { A = sql_build_between(B, &O, X, L, H, false); }
expr(A) ::= expr(X) NOT(O) BETWEEN expr(L) AND expr(H). [BETWEEN]
    { A = sql_build_between(B, &O, X, L, H, true); }

expr(A) ::= expr(X) IN(O) LP expr_list(L) RP.        { A = sql_build_in_list(B, &O, X, L, false); }
expr(A) ::= expr(X) NOT(O) IN LP expr_list(L) RP. [IN] { A = sql_build_in_list(B, &O, X, L, true); }
expr(A) ::= expr(X) IN(O) select_with_parens(Q).     { A = sql_build_in_subquery(B, &O, X, Q, false); }
expr(A) ::= expr(X) NOT(O) IN select_with_parens(Q). [IN]
    { A = sql_build_in_subquery(B, &O, X, Q, true); }

expr(A) ::= expr(X) LIKE(O) expr(P).          { A = sql_build_like(B, &O, X, P, NULL, false, false); }
expr(A) ::= expr(X) LIKE(O) expr(P) ESCAPE expr(E).
    { A = sql_build_like(B, &O, X, P, E, false, false); }
expr(A) ::= expr(X) NOT(O) LIKE expr(P). [LIKE]
    { A = sql_build_like(B, &O, X, P, NULL, true, false); }
expr(A) ::= expr(X) NOT(O) LIKE expr(P) ESCAPE expr(E). [LIKE]
    { A = sql_build_like(B, &O, X, P, E, true, false); }
expr(A) ::= expr(X) ILIKE(O) expr(P).         { A = sql_build_like(B, &O, X, P, NULL, false, true); }
expr(A) ::= expr(X) ILIKE(O) expr(P) ESCAPE expr(E).
    { A = sql_build_like(B, &O, X, P, E, false, true); }
expr(A) ::= expr(X) NOT(O) ILIKE expr(P). [ILIKE]
    { A = sql_build_like(B, &O, X, P, NULL, true, true); }
expr(A) ::= expr(X) NOT(O) ILIKE expr(P) ESCAPE expr(E). [ILIKE]
    { A = sql_build_like(B, &O, X, P, E, true, true); }

expr(A) ::= EXISTS(O) select_with_parens(Q).  { A = sql_build_subquery(B, &O, SQL_EXPR_EXISTS, Q); }
/* ((SELECT ..)) is a parenthesized query, not a parenthesized expression:
 * with equal precedence and right associativity, [RP] makes lemon shift. */
expr(A) ::= select_with_parens(Q). [RP]       { A = sql_build_subquery(B, NULL, SQL_EXPR_SUBQUERY, Q); }

/* x = ANY (SELECT ...), x < ALL (SELECT ...) */
expr(A) ::= expr(X) EQ(O) quantifier(Q) select_with_parens(S).
    { A = sql_build_quantified(B, &O, SQL_OP_EQ, Q, X, S); }
expr(A) ::= expr(X) NE(O) quantifier(Q) select_with_parens(S).
    { A = sql_build_quantified(B, &O, SQL_OP_NE, Q, X, S); }
expr(A) ::= expr(X) LT(O) quantifier(Q) select_with_parens(S).
    { A = sql_build_quantified(B, &O, SQL_OP_LT, Q, X, S); }
expr(A) ::= expr(X) LE(O) quantifier(Q) select_with_parens(S).
    { A = sql_build_quantified(B, &O, SQL_OP_LE, Q, X, S); }
expr(A) ::= expr(X) GT(O) quantifier(Q) select_with_parens(S).
    { A = sql_build_quantified(B, &O, SQL_OP_GT, Q, X, S); }
expr(A) ::= expr(X) GE(O) quantifier(Q) select_with_parens(S).
    { A = sql_build_quantified(B, &O, SQL_OP_GE, Q, X, S); }
%type quantifier {bool}
quantifier(A) ::= ANY.                        { A = false; }
quantifier(A) ::= SOME.                       { A = false; }
quantifier(A) ::= ALL.                        { A = true; }

/* CASE [operand] WHEN .. THEN .. [ELSE ..] END */
expr(A) ::= CASE(C) case_operand(X) when_list(W) case_else(E) END.
    { A = sql_build_case(B, &C, X, W, E); }
case_operand(A) ::= .                         { A = NULL; }
case_operand(A) ::= expr(X).                  { A = X; }
%type when_list {sql_when_list *}
when_list(A) ::= WHEN(W) expr(C) THEN expr(R).  { A = sql_build_when(B, NULL, &W, C, R); }
when_list(A) ::= when_list(L) WHEN(W) expr(C) THEN expr(R). { A = sql_build_when(B, L, &W, C, R); }
case_else(A) ::= .                            { A = NULL; }
case_else(A) ::= ELSE expr(E).                { A = E; }

expr(A) ::= CAST(C) LP expr(X) AS type_name(T) RP. { A = sql_build_cast(B, &C, X, T); }
expr(A) ::= expr(X) TYPECAST(C) type_name(T). { A = sql_build_cast(B, &C, X, T); }

/* f(), f(a, b), f(*), f(DISTINCT a) */
expr(A) ::= ID(F) LP RP.                      { A = sql_build_func(B, &F, NULL, false, false); }
expr(A) ::= ID(F) LP STAR RP.                 { A = sql_build_func(B, &F, NULL, false, true); }
expr(A) ::= ID(F) LP expr_list(L) RP.         { A = sql_build_func(B, &F, L, false, false); }
expr(A) ::= ID(F) LP ALL expr_list(L) RP.     { A = sql_build_func(B, &F, L, false, false); }
expr(A) ::= ID(F) LP DISTINCT expr_list(L) RP. { A = sql_build_func(B, &F, L, true, false); }

expr(A) ::= EXTRACT(E) LP ID(F) FROM expr(X) RP. { A = sql_build_extract(B, &E, &F, X); }

/* SUBSTRING(s FROM a [FOR b]) is substring(s, a [, b]). */
expr(A) ::= SUBSTRING(F) LP expr(S) FROM expr(X) RP.
    { A = sql_build_substring(B, &F, S, X, NULL); }
expr(A) ::= SUBSTRING(F) LP expr(S) FROM expr(X) FOR expr(Y) RP.
    { A = sql_build_substring(B, &F, S, X, Y); }
expr(A) ::= SUBSTRING(F) LP expr_list(L) RP.  { A = sql_build_func(B, &F, L, false, false); }
/* Accepted so that the binder reports 42883 (no such function), as
 * PostgreSQL does. */
expr(A) ::= SUBSTRING(F) LP RP.               { A = sql_build_func(B, &F, NULL, false, false); }

/* POSITION(sub IN s) is position(s, sub), i.e. strpos(s, sub). */
expr(A) ::= POSITION(F) LP expr(X) IN expr(S) RP.
    { A = sql_build_special_call(B, &F, "position", S, X); }

/* TRIM([BOTH | LEADING | TRAILING] [chars] FROM s) and TRIM(s) are
 * btrim / ltrim / rtrim(s [, chars]). */
expr(A) ::= TRIM(F) LP expr(S) RP.           { A = sql_build_special_call(B, &F, "btrim", S, NULL); }
expr(A) ::= TRIM(F) LP expr(C) FROM expr(S) RP.
    { A = sql_build_special_call(B, &F, "btrim", S, C); }
expr(A) ::= TRIM(F) LP FROM expr(S) RP.      { A = sql_build_special_call(B, &F, "btrim", S, NULL); }
expr(A) ::= TRIM(F) LP trim_side(D) FROM expr(S) RP.
    { A = sql_build_special_call(B, &F, D, S, NULL); }
expr(A) ::= TRIM(F) LP trim_side(D) expr(C) FROM expr(S) RP.
    { A = sql_build_special_call(B, &F, D, S, C); }
%type trim_side {const char *}
trim_side(A) ::= BOTH.                        { A = "btrim"; }
trim_side(A) ::= LEADING.                     { A = "ltrim"; }
trim_side(A) ::= TRAILING.                    { A = "rtrim"; }

/* left(s, n) and right(s, n): functions named by join keywords. */
expr(A) ::= LEFT(F) LP expr_list(L) RP.       { A = sql_build_func(B, &F, L, false, false); }
expr(A) ::= RIGHT(F) LP expr_list(L) RP.      { A = sql_build_func(B, &F, L, false, false); }

literal(A) ::= INTEGER(T).                    { A = sql_build_number(B, &T); }
literal(A) ::= NUMBER(T).                     { A = sql_build_number(B, &T); }
literal(A) ::= STRING(T).                     { A = sql_build_string(B, &T); }
literal(A) ::= TRUE(T).                       { A = sql_build_bool(B, &T, true); }
literal(A) ::= FALSE(T).                      { A = sql_build_bool(B, &T, false); }
literal(A) ::= NULL(T).                       { A = sql_build_null(B, &T); }
literal(A) ::= DATE(D) STRING(T).             { A = sql_build_date(B, &D, &T); }
literal(A) ::= INTERVAL(I) STRING(T) ID(U).   { A = sql_build_interval(B, &I, &T, &U); }
/* INTERVAL '90' DAY (3): a field precision, as TPC-H writes it; ignored. */
literal(A) ::= INTERVAL(I) STRING(T) ID(U) LP INTEGER RP. { A = sql_build_interval(B, &I, &T, &U); }

/* ---------------------------------------------------------------- types -- */

/* INT, DECIMAL(15,2), DOUBLE PRECISION, CHARACTER VARYING(25), ... — the
 * builder maps the names onto storage/types.h. */
%type type_name {sql_type_spec}
type_name(A) ::= ID(N).                       { A = sql_build_type(B, &N, NULL, -1, -1); }
type_name(A) ::= ID(N) LP INTEGER(P) RP.      { A = sql_build_type(B, &N, NULL, sql_build_int_arg(B, &P), -1); }
type_name(A) ::= ID(N) LP INTEGER(P) COMMA INTEGER(S) RP.
    { A = sql_build_type(B, &N, NULL, sql_build_int_arg(B, &P), sql_build_int_arg(B, &S)); }
type_name(A) ::= ID(N) PRECISION(W).          { A = sql_build_type(B, &N, &W, -1, -1); }
type_name(A) ::= ID(N) VARYING(W).            { A = sql_build_type(B, &N, &W, -1, -1); }
type_name(A) ::= ID(N) VARYING(W) LP INTEGER(P) RP.
    { A = sql_build_type(B, &N, &W, sql_build_int_arg(B, &P), -1); }

/* ------------------------------------------------------------------ DDL -- */

cmd(A) ::= CREATE(T) TABLE opt_if_not_exists(E) ID(N) LP table_elems(L) RP.
    { A = sql_build_create_table(B, &T, E, &N, L, NULL); }
cmd(A) ::= CREATE(T) TABLE opt_if_not_exists(E) ID(N) AS select_stmt(Q).
    { A = sql_build_create_table(B, &T, E, &N, NULL, Q); }
cmd(A) ::= DROP(T) TABLE opt_if_exists(E) ID(N) opt_drop_behavior(C).
    { A = sql_build_drop(B, &T, SQL_STMT_DROP_TABLE, E, &N, C); }
cmd(A) ::= CREATE(T) VIEW ID(N) opt_name_list(C) AS(S) select_stmt(Q).
    { A = sql_build_create_view(B, &T, &N, C, &S, Q); }
cmd(A) ::= DROP(T) VIEW opt_if_exists(E) ID(N) opt_drop_behavior(C).
    { A = sql_build_drop(B, &T, SQL_STMT_DROP_VIEW, E, &N, C); }

/* CASCADE also drops the views that depend on the object; RESTRICT (the
 * default) refuses while any exist. */
%type opt_drop_behavior {bool}
opt_drop_behavior(A) ::= .                    { A = false; }
opt_drop_behavior(A) ::= CASCADE.             { A = true; }
opt_drop_behavior(A) ::= RESTRICT.            { A = false; }

%type opt_if_not_exists {bool}
opt_if_not_exists(A) ::= .                    { A = false; }
opt_if_not_exists(A) ::= IF NOT EXISTS.       { A = true; }
%type opt_if_exists {bool}
opt_if_exists(A) ::= .                        { A = false; }
opt_if_exists(A) ::= IF EXISTS.               { A = true; }

%type table_elems {sql_table_def *}
%type table_elem {sql_table_elem}
table_elems(A) ::= table_elem(E).             { A = sql_build_table_elems(B, NULL, E); }
table_elems(A) ::= table_elems(L) COMMA table_elem(E). { A = sql_build_table_elems(B, L, E); }
table_elem(A) ::= ID(N) type_name(T) col_constraints(C). { A = sql_build_column_def(B, &N, T, C); }
table_elem(A) ::= PRIMARY KEY LP name_list(L) RP.        { A = sql_build_primary_key(L); }

%type col_constraints {int}
%type col_constraint {int}
col_constraints(A) ::= .                              { A = 0; }
col_constraints(A) ::= col_constraints(L) col_constraint(C). { A = L | C; }
col_constraint(A) ::= NOT NULL.                       { A = SQL_COLUMN_NOT_NULL; }
col_constraint(A) ::= NULL.                           { A = SQL_COLUMN_NULL; }
col_constraint(A) ::= PRIMARY KEY.                    { A = SQL_COLUMN_PRIMARY_KEY; }

/* ------------------------------------------------------------------ DML -- */

cmd(A) ::= INSERT(T) INTO ID(N) select_stmt(Q).
    { A = sql_build_insert(B, &T, &N, NULL, Q); }
cmd(A) ::= INSERT(T) INTO ID(N) LP name_list(C) RP select_stmt(Q).
    { A = sql_build_insert(B, &T, &N, C, Q); }

/* COPY t [(cols)] FROM 'file'|STDIN [options];
 * COPY t|(query) TO 'file'|STDOUT [options].
 * Options: [WITH] (name value, ...) or PostgreSQL's older bare words
 * (DELIMITER '|' CSV HEADER). STDIN and STDOUT are the client's copy stream. */
cmd(A) ::= COPY(T) ID(N) opt_name_list(C) FROM copy_source(F) copy_options(O).
    { A = sql_build_copy(B, &T, SQL_STMT_COPY_FROM, &N, C, NULL, &F, O); }
cmd(A) ::= COPY(T) ID(N) opt_name_list(C) TO copy_dest(F) copy_options(O).
    { A = sql_build_copy(B, &T, SQL_STMT_COPY_TO, &N, C, NULL, &F, O); }
cmd(A) ::= COPY(T) select_with_parens(Q) TO copy_dest(F) copy_options(O).
    { A = sql_build_copy(B, &T, SQL_STMT_COPY_TO, NULL, NULL, Q, &F, O); }

%type copy_source {sql_token}
%type copy_dest {sql_token}
copy_source(A) ::= STRING(F).                     { A = F; }
copy_source(A) ::= STDIN(F).                      { A = F; }
copy_dest(A) ::= STRING(F).                       { A = F; }
copy_dest(A) ::= STDOUT(F).                       { A = F; }

%type copy_options {sql_option_list *}
%type copy_list {sql_option_list *}
%type copy_words {sql_option_list *}
%type copy_item {sql_option *}
%type copy_word {sql_option *}
copy_options(A) ::= .                             { A = NULL; }
copy_options(A) ::= opt_with LP copy_list(L) RP.  { A = L; }
copy_options(A) ::= opt_with copy_words(L).       { A = L; }
opt_with ::= .
opt_with ::= WITH.
copy_list(A) ::= copy_item(O).                    { A = sql_build_option_list(B, NULL, O); }
copy_list(A) ::= copy_list(L) COMMA copy_item(O). { A = sql_build_option_list(B, L, O); }
copy_item(A) ::= ID(N).                           { A = sql_build_option(B, &N, NULL); }
copy_item(A) ::= ID(N) option_value(V).           { A = sql_build_option(B, &N, V); }
copy_item(A) ::= NULL(N) STRING(V).               { A = sql_build_option(B, &N, sql_build_string(B, &V)); }
copy_words(A) ::= copy_word(O).                   { A = sql_build_option_list(B, NULL, O); }
copy_words(A) ::= copy_words(L) copy_word(O).     { A = sql_build_option_list(B, L, O); }
copy_word(A) ::= ID(N).                           { A = sql_build_copy_word(B, &N, NULL); }
copy_word(A) ::= ID(N) opt_as STRING(V).          { A = sql_build_copy_word(B, &N, &V); }
copy_word(A) ::= NULL(N) opt_as STRING(V).        { A = sql_build_copy_word(B, &N, &V); }
opt_as ::= .
opt_as ::= AS.

/* A value in COPY options and SET: literals, and bare words as strings. */
option_value(A) ::= STRING(T).                { A = sql_build_string(B, &T); }
option_value(A) ::= INTEGER(T).               { A = sql_build_number(B, &T); }
option_value(A) ::= NUMBER(T).                { A = sql_build_number(B, &T); }
option_value(A) ::= MINUS(O) INTEGER(T).      { A = sql_build_unary(B, &O, SQL_OP_NEG, sql_build_number(B, &T)); }
option_value(A) ::= MINUS(O) NUMBER(T).       { A = sql_build_unary(B, &O, SQL_OP_NEG, sql_build_number(B, &T)); }
option_value(A) ::= TRUE(T).                  { A = sql_build_bool(B, &T, true); }
option_value(A) ::= FALSE(T).                 { A = sql_build_bool(B, &T, false); }
option_value(A) ::= ID(T).                    { A = sql_build_word(B, &T); }
option_value(A) ::= ON(T).                    { A = sql_build_word(B, &T); }

/* ---------------------------------------------------- everything else -- */

/* CALL dbgen(sf = 0.1) */
cmd(A) ::= CALL(T) ID(N) LP RP.               { A = sql_build_call(B, &T, &N, NULL); }
cmd(A) ::= CALL(T) ID(N) LP call_args(L) RP.  { A = sql_build_call(B, &T, &N, L); }
%type call_args {sql_option_list *}
%type call_arg {sql_option *}
call_args(A) ::= call_arg(O).                 { A = sql_build_option_list(B, NULL, O); }
call_args(A) ::= call_args(L) COMMA call_arg(O). { A = sql_build_option_list(B, L, O); }
call_arg(A) ::= ID(N) EQ expr(V).             { A = sql_build_option(B, &N, V); }
call_arg(A) ::= ID(N) ARROW expr(V).          { A = sql_build_option(B, &N, V); }
call_arg(A) ::= literal(V).                   { A = sql_build_option(B, NULL, V); }

cmd(A) ::= EXPLAIN(T) cmd(S).                 { A = sql_build_explain(B, &T, false, S); }
cmd(A) ::= EXPLAIN(T) ANALYZE cmd(S).         { A = sql_build_explain(B, &T, true, S); }

cmd(A) ::= SET(T) ID(N) EQ option_value(V).   { A = sql_build_set(B, &T, &N, V); }
cmd(A) ::= SET(T) ID(N) TO option_value(V).   { A = sql_build_set(B, &T, &N, V); }
cmd(A) ::= SET(T) ID(N) EQ DEFAULT.           { A = sql_build_set(B, &T, &N, NULL); }
cmd(A) ::= SET(T) ID(N) TO DEFAULT.           { A = sql_build_set(B, &T, &N, NULL); }
cmd(A) ::= SHOW(T) ID(N).                     { A = sql_build_show(B, &T, &N); }
cmd(A) ::= SHOW(T) ALL.                       { A = sql_build_show(B, &T, NULL); }

/* Transaction control is accepted for clients that send it. */
cmd(A) ::= BEGIN(T) opt_transaction.          { A = sql_build_simple(B, &T, SQL_STMT_BEGIN); }
cmd(A) ::= START(T) TRANSACTION.              { A = sql_build_simple(B, &T, SQL_STMT_BEGIN); }
cmd(A) ::= COMMIT(T) opt_transaction.         { A = sql_build_simple(B, &T, SQL_STMT_COMMIT); }
cmd(A) ::= END(T) opt_transaction.            { A = sql_build_simple(B, &T, SQL_STMT_COMMIT); }
cmd(A) ::= ROLLBACK(T) opt_transaction.       { A = sql_build_simple(B, &T, SQL_STMT_ROLLBACK); }
opt_transaction ::= .
opt_transaction ::= TRANSACTION.
opt_transaction ::= WORK.
