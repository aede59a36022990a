/*
 * shell.h — the rackdb shell: reading SQL and dot commands, printing results.
 *
 * Input arrives from -c strings, -f files, stdin or an interactive terminal
 * (libedit line editing, history in ~/.rackdb_history). SQL is collected
 * until a `;` outside quotes and comments ends a statement
 * (rackdb_statement_length), then each statement runs through the public
 * API (rackdb_next) and its result or error is printed before the next one
 * starts. A line starting with `.` while no statement is pending is a dot
 * command (.mode, .timer, .tables, .schema, .read, .help, .quit).
 *
 * COPY ... FROM STDIN and TO STDOUT exchange their data with the shell's
 * input stream and stdout (rackdb_session_set_copy_io).
 *
 * Scripts (stdin, -f, -c, .read) stop at the first failing statement; the
 * interactive loop reports the error and goes on.
 */
#ifndef RACKDB_CLI_SHELL_H
#define RACKDB_CLI_SHELL_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/output.h"
#include "rackdb.h"

typedef struct cli_shell {
    rackdb *db;
    rackdb_session *session;
    cli_mode mode;
    bool timer;       /* print "Time: x ms" after each statement */
    bool quiet;       /* no command tags */
    bool interactive; /* a person at a terminal */
    bool quit;        /* .quit was given */
    int read_depth;   /* nesting of .read */
    FILE *out, *err;
    /* COPY FROM STDIN reads the stream the shell reads its input from (so a
     * script's data lines follow the statement, ending at a \. line or
     * EOF); COPY TO STDOUT writes to `out`, without the "COPY n" tag. */
    FILE *copy_in;
    bool copy_in_ended;   /* \. or EOF seen */
    bool copy_line_start; /* the next byte of copy_in starts a line */
    bool copied_out;      /* the running statement wrote COPY TO STDOUT data */
    bool copy_by_line;    /* read copy_in line by line (else in blocks) */
    bool reading_stdin;   /* statements are being read from stdin */
    size_t copy_pos, copy_len;
    char copy_buf[16384]; /* copy_buf[copy_pos, copy_len): read, not yet handed on */
} cli_shell;

void cli_shell_init(cli_shell *sh, rackdb *db, rackdb_session *session);

/* Runs every statement of text in order, printing each result; stops at and
 * prints the first error (false). Text starting with '.' is a dot command. */
bool cli_shell_run_sql(cli_shell *sh, const char *text);

/* Runs one dot-command line; false when it failed (message printed). */
bool cli_shell_dot(cli_shell *sh, const char *line);

/* Runs a script (SQL and dot-command lines) from a stream; false at the
 * first error. `name` is used in messages. */
bool cli_shell_run_stream(cli_shell *sh, FILE *in, const char *name);

/* Runs a script file by name (.read, -f). */
bool cli_shell_run_file(cli_shell *sh, const char *path);

/* The interactive loop; returns when the user quits (Ctrl-D, .quit). */
void cli_shell_interactive(cli_shell *sh);

#endif
