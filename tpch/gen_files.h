/*
 * gen_files.h — writes TPC-H tables as dbgen's .tbl files ('|' after every
 * field, '\n' after every row), byte-identical to dbgen 2.14.0.
 *
 * Each table is cut into morsels of units; worker threads take morsels in
 * order, format them into buffers of their own and hand them to the file in
 * morsel order: the thread whose morsel is next appends it and any that
 * follow it already finished; a thread whose morsel is not next parks it
 * (up to 8 ahead) and takes another, so memory stays bounded at any
 * scale and no thread idles while an earlier morsel is still being made.
 * The text goes to the files through tpch/file_writer.h: a background
 * thread writes it, past the page cache (O_DIRECT) where the file system
 * allows. A file is written as <name>.tmp and renamed when complete,
 * so a failed run never leaves a partial file under a final name.
 */
#ifndef RACKDB_TPCH_GEN_FILES_H
#define RACKDB_TPCH_GEN_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "tpch/file_writer.h"
#include "tpch/gen.h"

/* Upper bound of one formatted row's bytes. */
#define TPCH_TBL_ROW_MAX 1024

typedef struct tpch_files_options {
    const char *dir;          /* output directory, created with its parents if missing */
    unsigned tables;          /* TPCH_BIT() mask */
    int parts, part;          /* dbgen -C parts -S part; 1, 1 = whole tables */
    int threads;              /* >= 1 */
    bool progress;            /* a progress line on stderr */
    bool buffered;            /* write through the page cache even where O_DIRECT works */
    tpch_writer_stats *stats; /* when not NULL, set to the bytes written each way */
} tpch_files_options;

/* File name dbgen gives a table: "lineitem.tbl", or "lineitem.tbl.3" for
 * part 3 of several (nation and region are never split). */
void tpch_tbl_file_name(tpch_table_id t, int parts, int part, char *buf, size_t size);

/* Formats one row as .tbl text into out (TPCH_TBL_ROW_MAX bytes); returns
 * the bytes written. */
size_t tpch_tbl_format_row(tpch_table_id t, const tpch_value *values, char *out);

/* Makes sure `dir` is a directory, creating it and any missing parents
 * (mkdir -p); fails when it cannot be created or is not a directory. */
sto_status tpch_make_dir(const char *dir);

/* Writes the requested tables into opt->dir (created when missing). */
sto_status tpch_gen_files(const tpch_gen *g, const tpch_files_options *opt);

#endif
