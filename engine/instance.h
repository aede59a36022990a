/*
 * instance.h — what an instance and a session are made of, for the engine's
 * own files (the public API in include/rackdb.h sees them as opaque).
 *
 * An instance (struct rackdb) is shared: its catalog, and the directory it
 * checkpoints to with an exclusive lock file so that two processes never
 * write one snapshot. A session (struct rackdb_session) belongs to one
 * connection: settings and the cancel flag of its running statement.
 *
 * How this grows: the pgwire server opens one session per client on one
 * shared instance; per-statement state (the query's memory tracker, its
 * worker team) is created by the executor from the session's settings when
 * the statement starts.
 */
#ifndef RACKDB_ENGINE_INSTANCE_H
#define RACKDB_ENGINE_INSTANCE_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/catalog.h"
#include "engine/settings.h"
#include "rackdb.h"
#include "storage/status.h"

struct rackdb {
    char *dir;   /* snapshot directory, NULL in memory */
    int lock_fd; /* holds flock on dir/LOCK, -1 in memory */
    eng_catalog *catalog;
    atomic_int sessions; /* open sessions, checked by rackdb_close */
    /* The JIT and worker pool (engine/executor.h), made by the first query. */
    pthread_mutex_t exec_lock;
    struct eng_exec_shared *exec;
};

struct rackdb_session {
    rackdb *db;
    eng_settings settings;
    atomic_int cancel; /* set by rackdb_interrupt, cleared per statement */
    /* The same flag for interfaces that poll an atomic_bool (the loader). */
    atomic_bool cancel_bool;
    /* Where COPY FROM STDIN / TO STDOUT data comes from and goes to; its
     * callbacks are NULL when the application set none. */
    rackdb_copy_io copy_io;
    /* Inside BEGIN ... COMMIT/ROLLBACK (engine/exec_stmt.c): statements that
     * change data are refused, and ROLLBACK restores the settings of BEGIN. */
    bool in_transaction;
    eng_settings settings_at_begin;
};

/* True once rackdb_interrupt was called for the running statement. Long
 * loops poll this at chunk granularity. */
static inline bool eng_session_canceled(rackdb_session *s)
{
    return atomic_load_explicit(&s->cancel, memory_order_relaxed) != 0;
}

/* The error a canceled statement fails with (57014). */
sto_status eng_canceled_error(void);

/* Bytes of blanks and comments at the start of text[0, len). */
size_t eng_blank_prefix(const char *text, size_t len);

/* A public error object made from a status (consumed) and the statement text
 * it belongs to (copied; may be NULL). Never NULL: falls back to a static
 * out-of-memory error. */
rackdb_error *eng_error_from_status(sto_status st, const char *stmt, size_t stmt_len);

#endif
