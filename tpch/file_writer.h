/*
 * file_writer.h — the output side of `rackdb tpch gen`: appends bytes to
 * files in order, while a background thread writes them out.
 *
 * Callers append each file's bytes in order; the bytes are copied into
 * 4 MiB staging buffers, and every full buffer goes to the writer thread,
 * which writes it at its offset while the callers go on generating. Memory
 * is bounded: when the disk falls behind, a caller waits for it, but only
 * briefly (20 ms); after that it writes its full buffer through the page
 * cache itself, so a slow disk costs CPU instead of setting the pace.
 *
 * Where the file system allows it, the files are opened with O_DIRECT and
 * the full, aligned buffers go straight from these buffers to the disk,
 * bypassing the page cache. That is the point of this module: on the virtual
 * machines rackdb is measured on, every fresh page-cache page costs a host
 * fault on first touch (docs/tpch_gen.md), more than generating its text.
 * The unaligned tail of a file is written through the page cache when the
 * file is closed. Where O_DIRECT is refused (tmpfs before Linux 6.6, some
 * network file systems, alignment the kernel will not take), writes go
 * through the page cache instead, with the same results.
 */
#ifndef RACKDB_TPCH_FILE_WRITER_H
#define RACKDB_TPCH_FILE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/status.h"

typedef struct tpch_writer tpch_writer;
typedef struct tpch_out tpch_out;

/* Bytes written each way so far (for tests and measurements). */
typedef struct tpch_writer_stats {
    uint64_t direct_bytes;   /* with O_DIRECT, past the page cache */
    uint64_t buffered_bytes; /* through the page cache */
    double disk_wait_s;      /* appenders' time waiting for the disk */
} tpch_writer_stats;

/* Starts a writer thread; `direct` = false writes every file through the
 * page cache. */
sto_status tpch_writer_create(bool direct, tpch_writer **out);

/* Creates (or truncates) the file at `path` for appending. */
sto_status tpch_writer_open(tpch_writer *w, const char *path, tpch_out **out);

/* Appends len bytes to the file. One thread at a time per file; different
 * files may be appended to from different threads. Fails once any write of
 * this file has failed. */
sto_status tpch_out_append(tpch_out *f, const char *bytes, size_t len);

/* Writes what is left, waits until every byte is written, closes the file
 * and frees f. Returns the file's first error, if any (f is freed anyway). */
sto_status tpch_out_close(tpch_out *f);

/* Buffers queued or being written at most (default 8), and how long an
 * appender that finds them all out waits before it writes its full buffer
 * itself (milliseconds, default 20; 0 = never waits). */
void tpch_writer_set_limits(tpch_writer *w, int max_in_flight, int patience_ms);

tpch_writer_stats tpch_writer_stats_get(tpch_writer *w);

/* Stops the thread and frees the writer; every file must be closed first. */
void tpch_writer_free(tpch_writer *w);

#endif
