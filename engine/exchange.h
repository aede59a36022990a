/*
 * exchange.h — exchange operators at run time: an EXCHANGE pipeline sink
 * streams its rows to the other servers as it makes them, and the rows
 * every server sent become the rows the next pipeline reads.
 *
 *   eng_exchange_begin: the stream opens and the receivers start (threads
 *      of their own, mux worker ENG_DIST_MUX_RECV), before any row is sent:
 *      the pools are bounded, so a sender may wait for a receiver
 *   the pipeline runs; each worker's rows sink (eng_exchange_attach) is
 *      drained every ENG_EXCHANGE_BATCH rows: per row its destination
 *      (crc32c of the keys mod n, every server, or the coordinator), the
 *      row encoded into that worker's open 512 KB message for it; a full
 *      message goes to the multiplexer on the worker's own mux worker
 *      (ENG_DIST_MUX_WORKER0 + worker id), so sending overlaps computing
 *      and no copy of the whole input is ever held
 *      ║  at the same time
 *      receivers: mux_recv until every server's stream ended, each message
 *      decoded into rows of the executor's row format and released at once
 *      (its credit goes back to the sender)
 *   eng_exchange_end: the rows a worker had not sent yet (the last part of
 *      a batch) go out from this thread (mux worker ENG_DIST_MUX_MAIN), the
 *      open messages are flushed, every sender reports done, the receivers
 *      finish; their rows are the next pipeline's PIPE source (the next
 *      pipeline starts once all have come: it may be a breaker).
 *
 * Message payload: a u32 row count, then the rows, each one
 *   1. the fixed-size columns that are never NULL, in column order, at
 *      their width (1, 4 or 8 bytes, little-endian);
 *   2. the nullable columns: a null-indicator byte (1 = NULL), and for a
 *      fixed-size column that is not NULL its value;
 *   3. the strings that are not NULL: u32 length, then the bytes.
 * Only the operator's columns travel; shuffle keys are computed by the
 * sending pipeline and dropped after hashing. A row never spans messages.
 * Row order is not kept (every consumer of an exchange sorts again).
 *
 * Errors: a multiplexer failure (a peer died, hung or sent garbage) comes
 * back as the multiplexer's error, naming the server. Any local failure
 * (memory, a worker's error, cancel) aborts the multiplexer, so every
 * server fails the query rather than waiting for rows that will never come.
 */
#ifndef RACKDB_ENGINE_EXCHANGE_H
#define RACKDB_ENGINE_EXCHANGE_H

#include <stdatomic.h>
#include <stdint.h>

#include "engine/executor.h"
#include "engine/physical.h"
#include "engine/rt_result.h"
#include "net/mux/mux.h"
#include "storage/status.h"

/* Multiplexer workers of a distributed query (mux_config.workers must be
 * at least ENG_DIST_MUX_WORKER0 + pool threads for every worker to stream;
 * a worker without one leaves its rows to eng_exchange_end). */
#define ENG_DIST_MUX_RECV    0 /* the receivers */
#define ENG_DIST_MUX_MAIN    1 /* the query's own thread */
#define ENG_DIST_MUX_CTRL    2 /* free for the caller's control streams */
#define ENG_DIST_MUX_WORKER0 3 /* + the pool worker's id: its sends */

/* Rows a worker's sink collects before they are sent. */
#define ENG_EXCHANGE_BATCH 1024

/* Bytes that received strings live in until the query ends. */
typedef struct eng_str_store {
    void **blocks;
    size_t nblocks, capblocks;
    uint8_t *cur; /* the block strings go into now */
    size_t cur_used, cur_cap;
} eng_str_store;

typedef struct eng_xrun eng_xrun;

/* The cluster a distributed query runs on (eng_exec_env.dist). */
typedef struct eng_dist_env {
    mux_ctx *mux;
    uint32_t query_id;
    int rank, nservers, coordinator;
    eng_str_store strings; /* rows downstream point into them until the
                            * query's result has been copied out */
    eng_xrun *active;      /* the exchange whose pipeline runs now */
    unsigned receivers;    /* receiver threads per exchange (1) */
    /* rows sent by the workers as they went, rows sent at an exchange's
     * end (ordered inputs, workers without a mux worker, the last part of
     * each batch), rows received */
    _Atomic uint64_t rows_streamed;
    uint64_t rows_at_end, rows_received;
} eng_dist_env;

/* An environment for mux (rank and size from it). */
void eng_dist_env_init(eng_dist_env *d, mux_ctx *mux, uint32_t query_id, int coordinator);
void eng_dist_env_free(eng_dist_env *d);

/* The stream id exchange `id` of query `query_id` uses on the multiplexer. */
static inline uint32_t eng_exchange_stream(uint32_t query_id, uint32_t id)
{
    return (query_id << 8) | (id & 0xffu);
}

/* Before pipeline p (an EXCHANGE sink) runs: opens its stream and starts
 * the receivers. Without env->dist nothing happens. On error the
 * multiplexer has been aborted. */
sto_status eng_exchange_begin(const eng_exec_env *env, const eng_physical *ph, const eng_pipe *p);

/* A worker's state of the exchange pipeline is made: its rows sink
 * streams (pool worker `worker`). Nothing without a running exchange. */
sto_status eng_exchange_attach(eng_dist_env *d, unsigned worker, eng_rows_sink *rows);

/* After the pipeline ran (st: how it went; taken over): sends the rows the
 * workers left in *rows (p->nexprs columns), ends the stream and replaces
 * *rows by the rows this server received (p->nout columns). Without
 * env->dist the rows stay here and only lose their key columns. On error
 * everything is stopped and the multiplexer aborted. */
sto_status eng_exchange_end(const eng_exec_env *env, const eng_physical *ph, const eng_pipe *p,
                            sto_status st, eng_rowset *rows);

/* The server a row goes to under a shuffle on key slots [first, first +
 * nkeys) of a row of ncols columns typed types[0..nkeys). Equal key values
 * of one type give the same server on every machine. */
int eng_exchange_dest(const uint8_t *row, uint32_t ncols, uint32_t first, uint32_t nkeys,
                      const sto_type *types, int nservers);

#endif
