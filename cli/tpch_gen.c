/*
 * tpch_gen.c — `rackdb tpch gen`: writes the TPC-H tables as .tbl files,
 * byte-identical to dbgen 2.14.0 (`dbgen -s SF`, `-C N -S I` for parts).
 *
 * Options are checked before anything is generated; the generator itself
 * writes each file under a temporary name and renames it when complete, so
 * a failed run leaves no partial .tbl file behind.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "tpch/gen.h"
#include "tpch/gen_files.h"

#define EXIT_FAILED 1
#define EXIT_USAGE  2

static const char gen_usage[] =
    "usage: rackdb tpch gen --sf SF [options]\n"
    "\n"
    "Writes the TPC-H tables as dbgen's .tbl files (identical to dbgen 2.14.0).\n"
    "\n"
    "options:\n"
    "  --sf SF          scale factor (required), e.g. 0.01, 1, 10\n"
    "  --out DIR        output directory, created if missing (default: the current\n"
    "                   directory)\n"
    "  --tables LIST    comma-separated tables (default: all eight):\n"
    "                   part,partsupp,supplier,customer,orders,lineitem,nation,region\n"
    "  --parts N        split each table into N parts like dbgen -C N ...\n"
    "  --part I         ... and write part I (1..N) like dbgen -S I; files are\n"
    "                   named <table>.tbl.I; nation and region are always whole\n"
    "  --threads N      worker threads (default: all cores)\n"
    "  -h, --help       print this help\n";

static int usage_error(const char *fmt, const char *arg)
{
    fputs("rackdb tpch gen: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry \"rackdb tpch gen --help\".\n", stderr);
    return EXIT_USAGE;
}

/* "--name value" or "--name=value"; NULL when `arg` is not this option. */
static const char *option(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static bool parse_int(const char *s, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) return false;
    *out = (int)v;
    return true;
}

/* Table names in `list` into a mask; on an unknown name, false with the
 * name in `bad` (64 bytes). */
static bool parse_tables(const char *list, unsigned *mask, char *bad)
{
    char name[64];
    *mask = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n >= sizeof(name)) n = sizeof(name) - 1;
        memcpy(name, p, n);
        name[n] = '\0';
        tpch_table_id t;
        if (!tpch_table_by_name(name, &t)) {
            memcpy(bad, name, n + 1);
            return false;
        }
        *mask |= TPCH_BIT(t);
        if (!comma) return true;
        p = comma + 1;
    }
}

int cli_tpch_gen(int argc, char **argv)
{
    const char *sf_text = NULL, *out = ".", *tables_text = NULL;
    int parts = 1, part = 0, threads = 0;
    bool have_parts = false;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);

    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(gen_usage, stdout);
            return 0;
        } else if ((v = option(argc, argv, &i, "--sf", &missing))) {
            sf_text = v;
        } else if ((v = option(argc, argv, &i, "--out", &missing))) {
            out = v;
        } else if ((v = option(argc, argv, &i, "--tables", &missing))) {
            tables_text = v;
        } else if ((v = option(argc, argv, &i, "--parts", &missing))) {
            if (!parse_int(v, 1, INT_MAX, &parts))
                return usage_error("--parts needs a whole number of at least 1, not \"%s\"", v);
            have_parts = true;
        } else if ((v = option(argc, argv, &i, "--part", &missing))) {
            if (!parse_int(v, 1, INT_MAX, &part))
                return usage_error("--part needs a whole number of at least 1, not \"%s\"", v);
        } else if ((v = option(argc, argv, &i, "--threads", &missing))) {
            if (!parse_int(v, 1, 1024, &threads))
                return usage_error("--threads needs a number from 1 to 1024, not \"%s\"", v);
        } else if (missing) {
            return usage_error("option %s needs a value", argv[i]);
        } else {
            return usage_error("unknown option \"%s\"", argv[i]);
        }
    }

    if (!sf_text) return usage_error("%s", "missing --sf (the scale factor, e.g. --sf 1)");
    char *end;
    errno = 0;
    double sf = strtod(sf_text, &end);
    if (end == sf_text || *end || errno == ERANGE)
        return usage_error("--sf needs a number, not \"%s\"", sf_text);
    sto_status st = tpch_scale_check(sf);
    if (st) {
        fprintf(stderr, "rackdb tpch gen: %s (--sf %s)\n", st->message, sf_text);
        sto_status_free(st);
        return EXIT_USAGE;
    }
    unsigned tables = TPCH_ALL_TABLES;
    char bad[64];
    if (tables_text && !parse_tables(tables_text, &tables, bad))
        return usage_error("unknown table \"%s\" (tables: part, partsupp, supplier, customer, "
                           "orders, lineitem, nation, region)",
                           bad);
    if (have_parts && part == 0)
        return usage_error("%s", "--parts needs --part I to say which part to write");
    if (part == 0) part = 1;
    if (part > parts) {
        char range[64];
        snprintf(range, sizeof(range), "%d is outside 1..%d", part, parts);
        return usage_error("--part %s", range);
    }
    /* a missing directory is created (mkdir -p), before the costly text pool */
    st = tpch_make_dir(out);
    if (st) {
        fprintf(stderr, "rackdb tpch gen: %s\n", st->message);
        sto_status_free(st);
        return EXIT_FAILED;
    }
    if (threads == 0) threads = cores > 0 ? (int)cores : 1;

    bool progress = isatty(STDERR_FILENO) == 1;
    if (progress) fputs("text pool (300 MiB) ...", stderr);
    tpch_gen *g = NULL;
    st = tpch_gen_create(sf, threads, &g);
    if (progress) fputs(st ? "\n" : "\rtext pool (300 MiB) done\n", stderr);
    if (!st) {
        tpch_files_options opt = {out, tables, parts, part, threads, progress};
        st = tpch_gen_files(g, &opt);
    }
    tpch_gen_free(g);
    if (st) {
        fprintf(stderr, "rackdb tpch gen: %s\n", st->message);
        sto_status_free(st);
        return EXIT_FAILED;
    }
    return 0;
}
