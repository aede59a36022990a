/*
 * shell.c — running SQL text, scripts and dot commands, and printing what
 * each statement returns.
 */
#include "cli/shell.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/error_print.h"

#define MAX_READ_DEPTH 16

/* --- COPY FROM STDIN / TO STDOUT -------------------------------------------------- */

static int copy_begin(void *arg, rackdb_copy_dir dir, uint32_t columns, bool csv)
{
    cli_shell *sh = arg;
    (void)columns;
    (void)csv;
    if (dir == RACKDB_COPY_OUT) {
        sh->copied_out = true;
        return 0;
    }
    sh->copy_in_ended = false;
    sh->copy_line_start = true;
    sh->copy_pos = sh->copy_len = 0;
    /* A script's data is followed by more script, and a person types it: read
     * lines and stop at \. so that what follows stays unread. */
    sh->copy_by_line = sh->copy_in != stdin || sh->reading_stdin || sh->interactive;
    if (sh->interactive && sh->copy_in == stdin)
        fprintf(sh->err, "Enter data to be copied followed by a newline.\n"
                         "End with a backslash and a period on a line by itself, or an EOF "
                         "signal.\n");
    return 0;
}

/* True when s (a whole line, with its newline if any) is the \. end marker. */
static bool is_end_marker(const char *s)
{
    return strcmp(s, "\\.\n") == 0 || strcmp(s, "\\.\r\n") == 0 || strcmp(s, "\\.") == 0;
}

static long copy_read(void *arg, char *buf, size_t cap, const char **message)
{
    cli_shell *sh = arg;
    if (!sh->copy_by_line) {
        /* nothing else reads this stream: whole blocks, straight into the
         * engine's buffer (it finds a \. line itself) */
        size_t n = sh->copy_in_ended ? 0 : fread(buf, 1, cap, sh->copy_in);
        if (n > 0) return (long)n;
        sh->copy_in_ended = true;
        if (!ferror(sh->copy_in)) return 0;
        *message = "could not read the input";
        return -1;
    }
    while (sh->copy_pos == sh->copy_len) {
        if (sh->copy_in_ended) return 0;
        if (!fgets(sh->copy_buf, sizeof(sh->copy_buf), sh->copy_in)) {
            sh->copy_in_ended = true;
            if (!ferror(sh->copy_in)) return 0;
            *message = "could not read the input";
            return -1;
        }
        bool line_start = sh->copy_line_start;
        size_t n = strlen(sh->copy_buf);
        sh->copy_line_start = n > 0 && sh->copy_buf[n - 1] == '\n';
        if (line_start && is_end_marker(sh->copy_buf)) {
            sh->copy_in_ended = true;
            return 0;
        }
        sh->copy_pos = 0;
        sh->copy_len = n;
    }
    size_t n = sh->copy_len - sh->copy_pos;
    if (n > cap) n = cap;
    memcpy(buf, sh->copy_buf + sh->copy_pos, n);
    sh->copy_pos += n;
    return (long)n;
}

static int copy_write(void *arg, const char *data, size_t len)
{
    cli_shell *sh = arg;
    return fwrite(data, 1, len, sh->out) == len ? 0 : -1;
}

void cli_shell_init(cli_shell *sh, rackdb *db, rackdb_session *session)
{
    memset(sh, 0, sizeof(*sh));
    sh->db = db;
    sh->session = session;
    sh->mode = CLI_MODE_TABLE;
    sh->out = stdout;
    sh->err = stderr;
    sh->copy_in = stdin;
    rackdb_copy_io io = {copy_begin, copy_read, copy_write, sh};
    rackdb_session_set_copy_io(session, &io);
}

/* Rows in the current mode; a command tag in table mode unless quiet, the
 * way psql reports statements that return no rows. */
static void print_result(cli_shell *sh, rackdb_result *r)
{
    if (rackdb_result_has_rows(r)) {
        if (!cli_print_result(sh->out, r, sh->mode)) fprintf(sh->err, "ERROR:  out of memory\n");
    } else if (sh->mode == CLI_MODE_TABLE && !sh->quiet && !sh->copied_out) {
        fprintf(sh->out, "%s\n", rackdb_result_tag(r));
    }
    if (sh->timer && rackdb_result_compile_ms(r) > 0)
        fprintf(sh->out, "Time: %.3f ms (compile %.3f ms)\n", rackdb_result_elapsed_ms(r),
                rackdb_result_compile_ms(r));
    else if (sh->timer)
        fprintf(sh->out, "Time: %.3f ms\n", rackdb_result_elapsed_ms(r));
    fflush(sh->out);
}

bool cli_shell_run_sql(cli_shell *sh, const char *text)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '.') return cli_shell_dot(sh, p);
    for (;;) {
        rackdb_result *r;
        rackdb_error *e;
        sh->copied_out = false;
        rackdb_code rc = rackdb_next(sh->session, &p, &r, &e);
        if (rc == RACKDB_DONE) return true;
        if (rc == RACKDB_ERROR) {
            cli_print_error(sh->err, e);
            rackdb_error_free(e);
            return false;
        }
        print_result(sh, r);
        rackdb_result_free(r);
    }
}

/* --- dot commands ------------------------------------------------------------------ */

static const char help_text[] =
    ".help                 this text\n"
    ".mode [MODE]          output mode: table, csv, json or markdown (no MODE: show it)\n"
    ".timer on|off         print the time each statement takes\n"
    ".tables               list tables and views\n"
    ".schema [NAME]        CREATE statements of all tables and views, or of NAME\n"
    ".read FILE            run the SQL and dot commands in FILE\n"
    ".quit, .exit          leave the shell (Ctrl-D too)\n"
    "SQL statements end with ';'. Ctrl-C cancels the running statement.\n";

/* Splits a dot-command line into words (in place); returns the count. */
static int split_words(char *line, char **words, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p) break;
        char quote = (*p == '\'' || *p == '"') ? *p++ : 0;
        words[n++] = p;
        while (*p && (quote ? *p != quote : !isspace((unsigned char)*p)))
            p++;
        if (!*p) break;
        *p++ = '\0';
    }
    return n;
}

static bool dot_error(cli_shell *sh, const char *fmt, const char *arg)
{
    fputs("Error: ", sh->err);
    fprintf(sh->err, fmt, arg);
    fputc('\n', sh->err);
    return false;
}

static bool api_error(cli_shell *sh, rackdb_error *e)
{
    cli_print_error(sh->err, e);
    rackdb_error_free(e);
    return false;
}

static bool dot_tables(cli_shell *sh)
{
    rackdb_result *r;
    rackdb_error *e;
    if (rackdb_tables(sh->db, &r, &e) != RACKDB_OK) return api_error(sh, e);
    cli_print_result(sh->out, r, sh->mode);
    rackdb_result_free(r);
    return true;
}

/* .schema NAME takes NAME as SQL writes an identifier (psql's \d does the
 * same): lower-cased, unless "double quoted", which keeps it as written. */
static void fold_identifier(char *name)
{
    size_t n = strlen(name);
    if (n >= 2 && name[0] == '"' && name[n - 1] == '"') {
        memmove(name, name + 1, n - 2);
        name[n - 2] = '\0';
        return;
    }
    for (char *p = name; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
}

static bool dot_schema(cli_shell *sh, char *name)
{
    char *text;
    rackdb_error *e;
    if (name) fold_identifier(name);
    if (rackdb_schema(sh->db, name, &text, &e) != RACKDB_OK) return api_error(sh, e);
    fputs(text, sh->out);
    rackdb_free(text);
    return true;
}

bool cli_shell_dot(cli_shell *sh, const char *line)
{
    char *copy = strdup(line);
    if (!copy) return dot_error(sh, "%s", "out of memory");
    char *w[4];
    int n = split_words(copy + 1, w, 4);
    bool ok = true;
    const char *cmd = n ? w[0] : "";
    if (strcmp(cmd, "quit") == 0 || strcmp(cmd, "exit") == 0 || strcmp(cmd, "q") == 0) {
        sh->quit = true;
    } else if (strcmp(cmd, "help") == 0) {
        fputs(help_text, sh->out);
    } else if (strcmp(cmd, "mode") == 0) {
        cli_mode m;
        if (n < 2)
            fprintf(sh->out, "%s\n", cli_mode_name(sh->mode));
        else if (cli_mode_parse(w[1], &m))
            sh->mode = m;
        else
            ok = dot_error(sh, "unknown mode \"%s\" (table, csv, json or markdown)", w[1]);
    } else if (strcmp(cmd, "timer") == 0) {
        if (n >= 2 && strcmp(w[1], "on") == 0)
            sh->timer = true;
        else if (n >= 2 && strcmp(w[1], "off") == 0)
            sh->timer = false;
        else
            ok = dot_error(sh, "%s", "usage: .timer on|off");
    } else if (strcmp(cmd, "tables") == 0) {
        ok = dot_tables(sh);
    } else if (strcmp(cmd, "schema") == 0) {
        ok = dot_schema(sh, n >= 2 ? w[1] : NULL);
    } else if (strcmp(cmd, "read") == 0) {
        ok = n >= 2 ? cli_shell_run_file(sh, w[1]) : dot_error(sh, "%s", "usage: .read FILE");
    } else {
        ok = dot_error(sh, "unknown command \".%s\" (.help lists them)", cmd);
    }
    fflush(sh->out);
    free(copy);
    return ok;
}

/* --- scripts ---------------------------------------------------------------------------- */

/* A growing text buffer. */
typedef struct text_buf {
    char *s;
    size_t len, cap;
} text_buf;

static bool buf_add(text_buf *b, const char *text, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) return false;
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
    return true;
}

/* Drops the first n bytes. */
static void buf_consume(text_buf *b, size_t n)
{
    memmove(b->s, b->s + n, b->len - n + 1);
    b->len -= n;
}

bool cli_shell_run_stream(cli_shell *sh, FILE *in, const char *name)
{
    FILE *outer_copy_in = sh->copy_in;
    bool outer_reading_stdin = sh->reading_stdin;
    sh->copy_in = in; /* a script's COPY FROM STDIN data follows in the script */
    sh->reading_stdin = sh->reading_stdin || in == stdin;
    text_buf pending = {0};
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t n;
    bool ok = true;
    while (ok && !sh->quit && (n = getline(&line, &line_cap, in)) >= 0) {
        if (rackdb_is_blank(pending.s ? pending.s : "", pending.len)) {
            const char *p = line;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p == '.') {
                pending.len = 0;
                ok = cli_shell_dot(sh, p);
                continue;
            }
        }
        if (!buf_add(&pending, line, (size_t)n)) {
            fprintf(sh->err, "Error: out of memory reading %s\n", name);
            ok = false;
            break;
        }
        /* Run every complete statement; keep the unfinished rest. */
        size_t len;
        while (ok && (len = rackdb_statement_length(pending.s, pending.len)) > 0) {
            char saved = pending.s[len];
            pending.s[len] = '\0';
            ok = cli_shell_run_sql(sh, pending.s);
            pending.s[len] = saved;
            buf_consume(&pending, len);
        }
    }
    if (ok && !sh->quit && ferror(in)) {
        fprintf(sh->err, "Error: could not read %s: %s\n", name, strerror(errno));
        ok = false;
    }
    /* A last statement without its ';'. */
    if (ok && !sh->quit && pending.len && !rackdb_is_blank(pending.s, pending.len))
        ok = cli_shell_run_sql(sh, pending.s);
    free(line);
    free(pending.s);
    sh->copy_in = outer_copy_in;
    sh->reading_stdin = outer_reading_stdin;
    return ok;
}

bool cli_shell_run_file(cli_shell *sh, const char *path)
{
    if (sh->read_depth >= MAX_READ_DEPTH) return dot_error(sh, "%s", ".read nested too deeply");
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(sh->err, "Error: could not open \"%s\": %s\n", path, strerror(errno));
        return false;
    }
    sh->read_depth++;
    bool ok = cli_shell_run_stream(sh, f, path);
    sh->read_depth--;
    fclose(f);
    return ok;
}
