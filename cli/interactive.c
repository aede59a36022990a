/*
 * interactive.c — the shell at a terminal: libedit line editing, history,
 * continuation prompts, Ctrl-C.
 *
 * Ctrl-C has two meanings. While a statement runs, it cancels that
 * statement (rackdb_interrupt: the statement fails with 57014 and the shell
 * stays). At the prompt, it throws away the input typed so far. The SIGINT
 * handler can only reach the session through a static pointer: signal
 * handlers take no arguments, and this program runs one shell at a time.
 * The handler is installed without SA_RESTART, so the terminal read inside
 * readline() returns and the loop sees the flag.
 */
#include <editline/readline.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/shell.h"

#define HISTORY_FILE ".rackdb_history"
#define HISTORY_MAX  2000

static rackdb_session *volatile sigint_session; /* for the SIGINT handler */
static volatile sig_atomic_t sigint_running;    /* a statement is running */
static volatile sig_atomic_t sigint_seen;       /* Ctrl-C since last look */

static void on_sigint(int sig)
{
    (void)sig;
    sigint_seen = 1;
    if (sigint_running) rackdb_interrupt(sigint_session);
}

/* ~/.rackdb_history, or NULL without a home directory. */
static char *history_path(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    char *path = malloc(strlen(home) + sizeof("/" HISTORY_FILE));
    if (path) sprintf(path, "%s/" HISTORY_FILE, home);
    return path;
}

/* Appends line (+ '\n') to the pending input. */
static bool add_line(char **pending, size_t *len, const char *line)
{
    size_t n = strlen(line);
    char *s = realloc(*pending, *len + n + 2);
    if (!s) return false;
    memcpy(s + *len, line, n);
    s[*len + n] = '\n';
    s[*len + n + 1] = '\0';
    *pending = s;
    *len += n + 1;
    return true;
}

/* The history entry for a run of input: its lines joined by blanks. */
static void remember(const char *text, size_t len)
{
    char *entry = strndup(text, len);
    if (!entry) return;
    for (char *p = entry; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    size_t n = strlen(entry);
    while (n && entry[n - 1] == ' ')
        entry[--n] = '\0';
    if (n) add_history(entry);
    free(entry);
}

/* Runs the complete statements at the front of the pending input. */
static void run_complete(cli_shell *sh, char **pending, size_t *len)
{
    size_t n;
    while (!sh->quit && (n = rackdb_statement_length(*pending, *len)) > 0) {
        char saved = (*pending)[n];
        (*pending)[n] = '\0';
        remember(*pending, n);
        sigint_running = 1;
        cli_shell_run_sql(sh, *pending);
        sigint_running = 0;
        (*pending)[n] = saved;
        memmove(*pending, *pending + n, *len - n + 1);
        *len -= n;
    }
    if (rackdb_is_blank(*pending, *len)) *len = 0;
    if (*pending) (*pending)[*len] = '\0';
}

void cli_shell_interactive(cli_shell *sh)
{
    char *hist = history_path();
    using_history();
    stifle_history(HISTORY_MAX);
    if (hist) read_history(hist);

    sigint_session = sh->session;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: Ctrl-C must end the terminal read */
    sigaction(SIGINT, &sa, &old);

    fprintf(sh->out, "rackdb %s. Enter \".help\" for usage hints.\n", rackdb_version());
    char *pending = NULL;
    size_t len = 0;
    while (!sh->quit) {
        sigint_seen = 0;
        char *line = readline(len ? "   ...> " : "rackdb> ");
        if (sigint_seen) { /* Ctrl-C at the prompt: drop the input */
            free(line);
            len = 0;
            if (pending) pending[0] = '\0';
            fputc('\n', sh->out);
            continue;
        }
        if (!line) { /* Ctrl-D */
            fputc('\n', sh->out);
            break;
        }
        const char *p = line + strspn(line, " \t");
        if (len == 0 && *p == '.') {
            add_history(p);
            cli_shell_dot(sh, p);
        } else if (!add_line(&pending, &len, line)) {
            fprintf(sh->err, "Error: out of memory\n");
            len = 0;
        } else {
            run_complete(sh, &pending, &len);
        }
        free(line);
    }
    free(pending);
    sigaction(SIGINT, &old, NULL);
    sigint_session = NULL;
    if (hist) {
        write_history(hist);
        free(hist);
    }
}
