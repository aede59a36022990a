/*
 * gen_cli_main.c — a stand-alone `tpch gen` for the tpch tests: the same
 * cli_tpch_gen the rackdb program runs, without the rest of the program, so
 * the generator's command line is testable on its own.
 *
 *   tpch_gen_cli gen --sf 0.01 --out DIR ...
 */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "gen") != 0) {
        fputs("usage: tpch_gen_cli gen [options]\n", stderr);
        return 2;
    }
    return cli_tpch_gen(argc - 1, argv + 1);
}
