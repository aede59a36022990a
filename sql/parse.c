/*
 * parse.c — drives the tokenizer and the lemon parser over a text.
 *
 * The loop reads one token ahead, for two reasons. First, DATE, INTERVAL,
 * EXTRACT, SUBSTRING, POSITION and TRIM are keywords only when followed by what makes them
 * one (a string, or a parenthesis); otherwise they are plain names, so a
 * column may be called `date`. Second, a lexical error in the look-ahead
 * token must not hide a syntax error in the token before it: it is kept
 * pending and reported only if the parser accepts everything before it.
 *
 * The driver also records where each statement starts and ends (for
 * sql_stmt.text_start/text_end and a view's query text) and ends the last
 * statement with a synthetic, zero-length ';' when the text does not, so a
 * statement cut short reports "syntax error at end of input".
 */
#include "sql/parse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sql/ast_build.h"

/* The parser lemon generates from sql/grammar.y (%name sql_lemon). */
void *sql_lemonAlloc(void *(*malloc_fn)(size_t));
void sql_lemonFree(void *parser, void (*free_fn)(void *));
void sql_lemon(void *parser, int major, sql_token minor, sql_build *B);

/* Characters in text[offset .. offset+len). */
static int char_count(const char *text, int offset, int len)
{
    int n = 0;
    for (int i = offset; i < offset + len; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80) n++;
    return n;
}

/* Turns a context-dependent keyword into a name when the next token does not
 * make it a keyword. */
static int contextual_type(const sql_token *tok, const sql_token *next)
{
    switch (tok->type) {
    case TK_DATE:
    case TK_INTERVAL:
        return next->type == TK_STRING ? tok->type : TK_ID;
    case TK_EXTRACT:
    case TK_SUBSTRING:
    case TK_POSITION:
    case TK_TRIM:
        return next->type == TK_LP ? tok->type : TK_ID;
    default:
        return tok->type;
    }
}

static void push_bounds(sql_build *B, int start, int end, int start_pos)
{
    if (B->nbounds + 3 > B->cap_bounds) {
        int ncap = B->cap_bounds ? B->cap_bounds * 2 : 16;
        int *n = sql_arena_alloc(B->arena, (size_t)ncap * sizeof(int));
        if (!n) return;
        if (B->nbounds) memcpy(n, B->bounds, (size_t)B->nbounds * sizeof(int));
        B->bounds = n;
        B->cap_bounds = ncap;
    }
    B->bounds[B->nbounds++] = start;
    B->bounds[B->nbounds++] = end;
    B->bounds[B->nbounds++] = start_pos;
}

sto_status sql_parse(sql_arena *arena, const char *text, sql_stmt_list **out)
{
    *out = NULL;
    size_t text_len = strlen(text);
    if (text_len > INT_MAX / 2)
        return sto_error(STO_PROGRAM_LIMIT_EXCEEDED, "statement text is too long");

    sql_build B;
    memset(&B, 0, sizeof(B));
    B.arena = arena;
    B.text = text;
    B.stmts = sql_arena_alloc(arena, sizeof(*B.stmts));
    if (!B.stmts) return sto_error_oom();
    void *parser = sql_lemonAlloc(malloc);
    if (!parser) return sto_error_oom();

    sql_lexer lx;
    sql_lexer_init(&lx, text);
    sql_token tok, next;
    sto_status pending = sql_lexer_next(&lx, &next);
    int stmt_start = -1, stmt_start_pos = 0, last_end = 0, last_end_pos = 1;
    bool done = false;

    while (!done && !pending && !B.error && !sql_arena_failed(arena)) {
        tok = next;
        if (tok.type != SQL_TOKEN_EOF) pending = sql_lexer_next(&lx, &next);
        if (pending) next.type = TK_ILLEGAL;

        if (tok.type == SQL_TOKEN_EOF) {
            if (stmt_start >= 0) {
                /* The last statement has no ';': end it here. */
                sql_token semi = {TK_SEMI, last_end, 0, last_end_pos};
                push_bounds(&B, stmt_start, last_end, stmt_start_pos);
                sql_lemon(parser, TK_SEMI, semi, &B);
                if (B.error || sql_arena_failed(arena)) break;
            }
            sql_lemon(parser, SQL_TOKEN_EOF, tok, &B);
            done = true;
            break;
        }
        tok.type = contextual_type(&tok, &next);
        if (tok.type == TK_SEMI) {
            if (stmt_start >= 0) push_bounds(&B, stmt_start, last_end, stmt_start_pos);
            stmt_start = -1;
        } else {
            if (stmt_start < 0) {
                stmt_start = tok.offset;
                stmt_start_pos = tok.pos;
            }
            last_end = tok.offset + tok.len;
            last_end_pos = tok.pos + char_count(text, tok.offset, tok.len);
        }
        sql_lemon(parser, tok.type, tok, &B);
    }
    sql_lemonFree(parser, free);

    /* Out of memory first: a tree built with failed allocations may also
     * have produced follow-on errors that mean nothing. */
    if (sql_arena_failed(arena)) {
        sto_status_free(B.error);
        sto_status_free(pending);
        return sto_error_oom();
    }
    if (B.error) {
        sto_status_free(pending);
        return B.error;
    }
    if (pending) return pending;
    for (int i = 0; i < B.stmts->count; i++)
        STO_TRY(sql_check_depth(B.stmts->items[i]));
    *out = B.stmts;
    return STO_OK;
}
