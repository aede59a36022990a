/*
 * rackdb.h — the public C API of rackdb.
 *
 * An application opens an instance (rackdb_open: in memory, or on a snapshot
 * directory whose tables it loads and to which every committed change is
 * checkpointed), opens one or more sessions on it (rackdb_session_open: the
 * per-connection state — settings such as threads, join_algorithm and
 * memory_limit, and the cancel flag of the running statement), and runs SQL
 * text through a session. Text may hold several statements separated by `;`;
 * rackdb_next runs them one at a time so a caller can show each result or
 * error in turn, rackdb_exec runs them all and keeps the last result.
 *
 * A statement produces a result: a query's rows (columns with names and
 * types, values read as text or typed), or for other statements just a
 * PostgreSQL command tag ("CREATE TABLE", "COPY 60175", "INSERT 0 3").
 * A failure produces an error object: SQLSTATE, message, a 1-based position
 * in the statement's text and a copy of that text, so a printer can point a
 * caret at the spot.
 *
 * Threads: an instance may be shared by many threads, each using its own
 * session; the catalog inside takes a read lock for queries and a write lock
 * for DDL and loads. A session (and the results it returns) belongs to one
 * thread at a time, except rackdb_interrupt, which any thread or a signal
 * handler may call at any moment.
 */
#ifndef RACKDB_H
#define RACKDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rackdb rackdb;                 /* an instance: catalog + storage */
typedef struct rackdb_session rackdb_session; /* one connection's state */
typedef struct rackdb_result rackdb_result;   /* the outcome of one statement */
typedef struct rackdb_error rackdb_error;     /* what went wrong, and where */

/* Return codes. Error details are in the rackdb_error object. */
typedef enum rackdb_code {
    RACKDB_OK = 0,
    RACKDB_DONE = 1, /* rackdb_next: no statement left in the text */
    RACKDB_ERROR = -1,
} rackdb_code;

/* Broad classes of errors, derived from the SQLSTATE class. */
typedef enum rackdb_error_class {
    RACKDB_ERR_SYNTAX,      /* 42xxx: syntax, names, types */
    RACKDB_ERR_DATA,        /* 22xxx/23xxx: bad values, bad input files */
    RACKDB_ERR_UNSUPPORTED, /* 0A000: not (yet) implemented */
    RACKDB_ERR_CANCELED,    /* 57014: rackdb_interrupt */
    RACKDB_ERR_RESOURCE,    /* 53xxx: out of memory, disk full */
    RACKDB_ERR_IO,          /* 58xxx: files */
    RACKDB_ERR_INTERNAL,    /* XX: corruption, bugs */
    RACKDB_ERR_OTHER,
} rackdb_error_class;

/* Version string of the library ("0.1.0"). */
const char *rackdb_version(void);

/* --- instances and sessions ------------------------------------------------ */

/* Opens an instance. dir == NULL: in memory, nothing persists. Otherwise a
 * directory: its snapshot is loaded when it holds one; a missing or empty
 * directory is created and becomes the instance's home. */
rackdb_code rackdb_open(const char *dir, rackdb **out, rackdb_error **err);

/* Closes the instance and frees its tables. All sessions must be closed. */
void rackdb_close(rackdb *db);

/* A new session with default settings (threads = cores, join_algorithm =
 * auto, memory_limit = 80% of RAM). */
rackdb_code rackdb_session_open(rackdb *db, rackdb_session **out, rackdb_error **err);
void rackdb_session_close(rackdb_session *s);

/* Sets a setting as SET would ("threads", "8"). */
rackdb_code rackdb_session_set(rackdb_session *s, const char *name, const char *value,
                               rackdb_error **err);

/* --- COPY FROM STDIN / TO STDOUT --------------------------------------------- */

/* How a session exchanges COPY data with its client, so that the engine
 * needs no files and knows nothing of terminals or wire protocols: the shell
 * passes stdin/stdout, the pgwire server CopyData messages. COPY ... FROM
 * STDIN reads the whole input before it takes the catalog's write lock (the
 * loader parses one buffer in parallel), so its input is held in memory once
 * and may not exceed the session's memory_limit (53200); the load stays
 * atomic. COPY ... TO STDOUT streams the rows out through `write`. */
typedef enum rackdb_copy_dir {
    RACKDB_COPY_IN,  /* COPY ... FROM STDIN */
    RACKDB_COPY_OUT, /* COPY ... TO STDOUT */
} rackdb_copy_dir;

typedef struct rackdb_copy_io {
    /* The statement checked out and is about to exchange data: `columns`
     * columns, in text form (csv: CSV). Nonzero fails the statement (08006). */
    int (*begin)(void *arg, rackdb_copy_dir dir, uint32_t columns, bool csv);
    /* COPY FROM STDIN: the next bytes into buf[0, cap). Returns how many, 0
     * at the end of the data, or -1 when the client gave up: *message (set
     * by read, valid until the statement ends) says why; the statement then
     * fails with 57014 "COPY from stdin failed: <message>". A line holding
     * only \. also ends the data, as in PostgreSQL. */
    long (*read)(void *arg, char *buf, size_t cap, const char **message);
    /* COPY TO STDOUT: the next bytes of output. Nonzero: the client is
     * gone, the statement fails (08006). */
    int (*write)(void *arg, const char *data, size_t len);
    void *arg;
} rackdb_copy_io;

/* Sets (copies *io) or clears (io == NULL) the session's COPY data channel.
 * Without one, COPY FROM STDIN / TO STDOUT fail with 0A000. */
void rackdb_session_set_copy_io(rackdb_session *s, const rackdb_copy_io *io);

/* --- running SQL ------------------------------------------------------------- */

/* Runs the first statement of *sql and advances *sql past it (and its `;`).
 * RACKDB_OK: *result is set (free it). RACKDB_DONE: only blanks and
 * comments were left. RACKDB_ERROR: *err is set and *sql still advances, so
 * a caller may go on with the next statement. */
rackdb_code rackdb_next(rackdb_session *s, const char **sql, rackdb_result **result,
                        rackdb_error **err);

/* Runs every statement of sql in order, stopping at the first error.
 * *result (may be NULL if not wanted) gets the last statement's result. */
rackdb_code rackdb_exec(rackdb_session *s, const char *sql, rackdb_result **result,
                        rackdb_error **err);

/* Cancels the statement running in s (it fails with SQLSTATE 57014); a
 * no-op when none runs. Async-signal-safe and thread-safe: it only stores
 * to an atomic flag that long loops poll. */
void rackdb_interrupt(rackdb_session *s);

/* Byte length of the first complete statement in text[0, len) including its
 * `;`, or 0 when the text ends inside a statement, a string or a comment.
 * Shells use it to decide whether to ask for another line. */
size_t rackdb_statement_length(const char *text, size_t len);

/* True when text[0, len) holds only blanks and comments. */
bool rackdb_is_blank(const char *text, size_t len);

/* --- the catalog, for shells ---------------------------------------------------- */

/* The tables and views, sorted by name: a result with columns name, kind
 * ("table" or "view") and rows (NULL for views). */
rackdb_code rackdb_tables(rackdb *db, rackdb_result **out, rackdb_error **err);

/* CREATE statements for the table or view `name`, or for all of them when
 * name is NULL ("" when there are none), one per paragraph. *out is
 * malloc'd: free it with rackdb_free. Missing name: 42P01. */
rackdb_code rackdb_schema(rackdb *db, const char *name, char **out, rackdb_error **err);

void rackdb_free(void *p);

/* --- results ------------------------------------------------------------------ */

void rackdb_result_free(rackdb_result *r);

/* PostgreSQL command tag: "SELECT 3", "CREATE TABLE", "COPY 60175",
 * "INSERT 0 3", "SET", "SHOW". */
const char *rackdb_result_tag(const rackdb_result *r);

/* True when the statement returns rows (a query, SHOW), even zero of them. */
bool rackdb_result_has_rows(const rackdb_result *r);

/* Milliseconds spent executing the statement (parse to result). */
double rackdb_result_elapsed_ms(const rackdb_result *r);

/* Of those, milliseconds spent compiling the query (0 when nothing was
 * compiled). */
double rackdb_result_compile_ms(const rackdb_result *r);

uint32_t rackdb_result_column_count(const rackdb_result *r);
uint64_t rackdb_result_row_count(const rackdb_result *r);

const char *rackdb_result_column_name(const rackdb_result *r, uint32_t col);

/* SQL type name: "INTEGER", "DECIMAL(15,2)", "CHAR(25)". */
const char *rackdb_result_column_type(const rackdb_result *r, uint32_t col);

/* PostgreSQL type OID (23 INTEGER, 1700 DECIMAL, 1082 DATE ...). */
uint32_t rackdb_result_column_oid(const rackdb_result *r, uint32_t col);

/* DECIMAL columns: digits after the point (values are scaled by 10^scale). */
int rackdb_result_column_scale(const rackdb_result *r, uint32_t col);

/* True for INTEGER, BIGINT, DECIMAL and DOUBLE: printers align these right
 * and JSON writes them unquoted (BOOLEAN has OID 16: JSON true/false). */
bool rackdb_result_column_is_numeric(const rackdb_result *r, uint32_t col);

bool rackdb_result_is_null(const rackdb_result *r, uint64_t row, uint32_t col);

/* The value as text in PostgreSQL's output format ("t"/"f", "12.50",
 * "1998-09-02"), NULL for SQL NULL. The pointer stays valid until the next
 * rackdb_result_text call on r or rackdb_result_free. */
const char *rackdb_result_text(rackdb_result *r, uint64_t row, uint32_t col);

/* Typed values; 0 for NULL. int64: BOOLEAN, INTEGER, BIGINT, DATE (days since
 * 1970-01-01) and DECIMAL (the scaled integer). double: every numeric type,
 * DECIMAL divided by its scale. */
int64_t rackdb_result_int64(const rackdb_result *r, uint64_t row, uint32_t col);
double rackdb_result_double(const rackdb_result *r, uint64_t row, uint32_t col);
bool rackdb_result_bool(const rackdb_result *r, uint64_t row, uint32_t col);
int32_t rackdb_result_date(const rackdb_result *r, uint64_t row, uint32_t col);

/* --- errors ------------------------------------------------------------------- */

void rackdb_error_free(rackdb_error *e);

const char *rackdb_error_sqlstate(const rackdb_error *e); /* "42P01" */
const char *rackdb_error_message(const rackdb_error *e);
rackdb_error_class rackdb_error_class_of(const rackdb_error *e);

/* 1-based character position in rackdb_error_statement, 0 when none. */
int rackdb_error_position(const rackdb_error *e);

/* The text of the statement that failed ("" for errors outside one). */
const char *rackdb_error_statement(const rackdb_error *e);

#ifdef __cplusplus
}
#endif

#endif
