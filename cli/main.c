/*
 * main.c — the rackdb program: options, then the shell (or a subcommand).
 *
 *   rackdb [DIR] [-c SQL]... [-f FILE]... [--mode MODE] [--threads N] [-q]
 *   rackdb --version | --help
 *   rackdb tpch gen|run ...
 *   rackdb server ...
 *
 * -c and -f run in the order given; without them SQL comes from stdin, or
 * from a person when stdin is a terminal. Exit status: 0 when everything
 * ran, 1 when a statement or dot command failed, 2 for bad usage or a
 * database that cannot be opened.
 */
#include <llvm-c/Core.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/shell.h"

#define EXIT_FAILED 1
#define EXIT_USAGE  2

static const char usage_text[] =
    "usage: rackdb [DIR] [options]\n"
    "       rackdb tpch gen|run [options]   (rackdb tpch gen --help, ...)\n"
    "       rackdb server [options] [DIR]    (PostgreSQL protocol server)\n"
    "\n"
    "DIR is a database directory: its tables are loaded, and every change is\n"
    "saved there before the statement returns. Without DIR, data lives in memory.\n"
    "\n"
    "options:\n"
    "  -c SQL           run SQL (or a dot command); may be repeated\n"
    "  -f FILE          run the SQL in FILE; may be repeated\n"
    "  --mode MODE      output mode: table (default), csv, json, markdown\n"
    "  --threads N      worker threads (default: all cores)\n"
    "  -q, --quiet      do not print command tags (CREATE TABLE, COPY n, ...)\n"
    "  -V, --version    print the version and exit\n"
    "  -h, --help       print this help and exit\n"
    "\n"
    "Without -c or -f, SQL is read from stdin; at a terminal, interactively.\n"
    "Scripts stop at the first error and exit with status 1.\n";

/* One -c or -f, in command-line order. */
typedef struct action {
    bool is_file;
    const char *arg;
} action;

static void print_version(void)
{
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    printf("rackdb %s (LLVM %u.%u.%u)\n", RACKDB_VERSION, major, minor, patch);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("rackdb: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry \"rackdb --help\".\n", stderr);
    return EXIT_USAGE;
}

/* The value of an option given as "--opt value" or "--opt=value". */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=') return argv[*i] + n + 1;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

static bool is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static int run_shell(int argc, char **argv)
{
    const char *dir = NULL, *mode = NULL, *threads = NULL;
    bool quiet = false;
    action *actions = calloc((size_t)argc, sizeof(*actions));
    int nactions = 0;
    if (!actions) return EXIT_USAGE;
    int status = EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-c") == 0 || strcmp(a, "-f") == 0) {
            if (i + 1 >= argc) {
                status = usage_error("%s needs an argument", a);
                goto out;
            }
            actions[nactions++] = (action){a[1] == 'f', argv[++i]};
        } else if (is_option(a, "--mode")) {
            if (!(mode = option_value(argc, argv, &i, "--mode"))) {
                status = usage_error("%s needs an argument", "--mode");
                goto out;
            }
        } else if (is_option(a, "--threads")) {
            if (!(threads = option_value(argc, argv, &i, "--threads"))) {
                status = usage_error("%s needs an argument", "--threads");
                goto out;
            }
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            status = usage_error("unknown option \"%s\"", a);
            goto out;
        } else if (!dir) {
            dir = a;
        } else {
            status = usage_error("more than one directory given (\"%s\")", a);
            goto out;
        }
    }

    cli_mode m = CLI_MODE_TABLE;
    if (mode && !cli_mode_parse(mode, &m)) {
        status = usage_error("unknown mode \"%s\" (table, csv, json or markdown)", mode);
        goto out;
    }
    rackdb *db = NULL;
    rackdb_session *session = NULL;
    rackdb_error *err = NULL;
    if (rackdb_open(dir, &db, &err) != RACKDB_OK ||
        rackdb_session_open(db, &session, &err) != RACKDB_OK) {
        fprintf(stderr, "rackdb: cannot open %s: %s\n", dir ? dir : "an in-memory database",
                rackdb_error_message(err));
        rackdb_error_free(err);
        rackdb_close(db);
        goto out;
    }
    if (threads && rackdb_session_set(session, "threads", threads, &err) != RACKDB_OK) {
        fprintf(stderr, "rackdb: --threads: %s\n", rackdb_error_message(err));
        rackdb_error_free(err);
    } else {
        cli_shell sh;
        cli_shell_init(&sh, db, session);
        sh.mode = m;
        sh.quiet = quiet;
        bool ok = true;
        if (nactions) {
            for (int i = 0; ok && !sh.quit && i < nactions; i++)
                ok = actions[i].is_file ? cli_shell_run_file(&sh, actions[i].arg)
                                        : cli_shell_run_sql(&sh, actions[i].arg);
        } else if (isatty(STDIN_FILENO)) {
            sh.interactive = true;
            cli_shell_interactive(&sh);
        } else {
            ok = cli_shell_run_stream(&sh, stdin, "stdin");
        }
        status = ok ? 0 : EXIT_FAILED;
    }
    rackdb_session_close(session);
    rackdb_close(db);
out:
    free(actions);
    fflush(stdout);
    return status;
}

/* rackdb tpch SUBCOMMAND ... */
static int run_tpch(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "gen") == 0) return cli_tpch_gen(argc, argv);
    if (argc >= 1 && strcmp(argv[0], "run") == 0) return cli_tpch_run(argc, argv);
    fprintf(stderr, "rackdb tpch: unknown command \"%s\" (commands: gen, run)\n",
            argc >= 1 ? argv[0] : "");
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "tpch") == 0) return run_tpch(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "server") == 0) return cli_server(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "-f") == 0) {
            i++; /* an SQL text or file name is never an option */
        } else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
            print_version();
            return 0;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
    }
    return run_shell(argc, argv);
}
