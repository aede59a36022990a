/*
 * loader.h — bulk loading of delimited text (dbgen .tbl, CSV) into tables.
 *
 * The file is mapped into memory and cut into one byte range per thread at
 * line boundaries (for CSV, at boundaries outside quoted fields). Each thread
 * parses its range straight into chunks of its own — numbers and dates are
 * parsed in place, fields are found with memchr, no per-field allocation —
 * and seals them; a long string that repeats in a chunk's column is stored
 * once (string_dedup.h), and the pages of the mapped file behind each thread
 * are dropped as it goes, so a load holds little more than the tables it
 * makes. When every thread has finished without error, all chunks
 * are appended to the table in file order in one step. Any bad input stops
 * the load with an error naming the file, the 1-based line and column (by
 * number and name), and the table keeps exactly the rows it had before.
 *
 * Field rules: in .tbl and CSV files an empty unquoted field is NULL (an
 * error for NOT NULL columns); in CSV mode a quoted field is a string even
 * when empty and "" inside quotes is one quote; in PostgreSQL's text format
 * NULL is \N, an empty field is the empty string and escapes are decoded
 * (see sto_text_format.raw). CHAR(n) values lose trailing blanks; values
 * longer than their CHAR(n)/VARCHAR(n) fail with 22001 unless the excess is
 * blanks (PostgreSQL's rule), numbers out of their type's range with 22003.
 */
#ifndef RACKDB_STORAGE_LOADER_H
#define RACKDB_STORAGE_LOADER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/status.h"
#include "storage/table.h"

/* The shape of delimited text, shared by the loader and the writer. */
typedef struct sto_text_format {
    char delimiter;          /* '|' for dbgen, ',' for CSV */
    bool header;             /* the first line names the columns (skipped) */
    bool csv;                /* "quoted" fields with "" escapes */
    bool trailing_delimiter; /* a delimiter after the last field (dbgen) */
    /* Without csv: raw (dbgen .tbl) fields are taken as they are and an empty
     * field is NULL; otherwise (false) it is PostgreSQL's text format: \N is
     * NULL, an empty field is the empty string, and backslash escapes (\t,
     * \n, \r, \\, \<delimiter>, \b \f \v, octal \ooo, \xhh) stand for
     * bytes. A zeroed format is therefore PostgreSQL's. */
    bool raw;
} sto_text_format;

/* dbgen .tbl: '|' after every field, no header, no quoting, no escapes. */
sto_text_format sto_text_format_tbl(void);
/* CSV: ',' between fields, quoting, optional header. */
sto_text_format sto_text_format_csv(bool header);

typedef struct sto_load_options {
    sto_text_format format;
    int threads;                 /* parser threads; <= 0 means 1 */
    size_t min_bytes_per_thread; /* no range gets less input; 0 = 1 MiB */
    const atomic_bool *cancel;   /* when it becomes true the load stops with
                                    57014 at the next chunk; NULL = never */
} sto_load_options;

/* Loads a file into `t`, adding its rows after the existing ones. Errors:
 * missing file 58P01, unreadable 58030, bad input 22P02/22P04/22007/22008/
 * 22001/22003/23502, canceled 57014. `rows_loaded` (may be NULL) receives the rows added. */
sto_status sto_load_file(sto_table *t, const char *path, const sto_load_options *opt,
                         uint64_t *rows_loaded);

/* The same for text already in memory; `name` is used in error messages. */
sto_status sto_load_buffer(sto_table *t, const char *name, const char *data, size_t len,
                           const sto_load_options *opt, uint64_t *rows_loaded);

#endif
