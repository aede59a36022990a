/*
 * exchange.h — exchange operators at run time: the rows an EXCHANGE sink
 * materialized go out as multiplexer messages, and what every server sent
 * comes back as the rows the next pipeline reads.
 *
 *   pipeline ─► ENG_SINK_EXCHANGE rows (the columns, then the shuffle keys)
 *      ─► sender (this thread, mux worker 0): per row its destination
 *         (crc32c of the keys mod n, every server, or the coordinator),
 *         encoded into that destination's open 512 KB message; a full
 *         message is handed to the multiplexer and a new one opened;
 *         mux_exchange_done at the end (a server without rows still ends
 *         its stream, so no receiver waits for it)
 *      ║  at the same time
 *      ─► receiver (a thread of its own, mux worker 1): mux_recv until every
 *         server's stream ended, each message decoded into rows of the
 *         executor's row format and released at once (its credit goes back
 *         to the sender), so sending and receiving never wait on each other
 *      ─► the received rows: the next pipeline's PIPE source.
 *
 * Message payload: a u32 row count, then the rows, each one
 *   1. the fixed-size columns that are never NULL, in column order, at
 *      their width (1, 4 or 8 bytes, little-endian);
 *   2. the nullable columns: a null-indicator byte (1 = NULL), and for a
 *      fixed-size column that is not NULL its value;
 *   3. the strings that are not NULL: u32 length, then the bytes.
 * Only the operator's columns travel; shuffle keys are computed by the
 * sending pipeline and dropped after hashing. A row never spans messages.
 *
 * Errors: a multiplexer failure (a peer died, hung or sent garbage) comes
 * back as the multiplexer's error, naming the server. Any local failure
 * (memory, cancel) aborts the multiplexer, so every server fails the query
 * rather than waiting for rows that will never come.
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

/* The cluster a distributed query runs on (eng_exec_env.dist). */
typedef struct eng_dist_env {
    mux_ctx *mux;
    uint32_t query_id;
    int rank, nservers, coordinator;
    /* Bytes of received strings: rows downstream point into them until the
     * query's result has been copied out (eng_dist_env_free). */
    void **blocks;
    size_t nblocks, capblocks;
    uint8_t *cur; /* the block strings go into now */
    size_t cur_used, cur_cap;
} eng_dist_env;

/* An environment for mux (rank and size from it). */
void eng_dist_env_init(eng_dist_env *d, mux_ctx *mux, uint32_t query_id, int coordinator);
void eng_dist_env_free(eng_dist_env *d);

/* The stream id exchange `id` of query `query_id` uses on the multiplexer. */
static inline uint32_t eng_exchange_stream(uint32_t query_id, uint32_t id)
{
    return (query_id << 8) | (id & 0xffu);
}

/* Runs the EXCHANGE that pipeline p ends in over its materialized rows:
 * *rows (p->nexprs columns) is replaced by the rows this server received
 * (p->nout columns). Without env->dist the rows stay here and only lose
 * their key columns. */
sto_status eng_exchange_rows(const eng_exec_env *env, const eng_physical *ph, const eng_pipe *p,
                             eng_rowset *rows);

/* The server a row goes to under a shuffle on key slots [first, first +
 * nkeys) of a row of ncols columns typed types[0..nkeys). Equal key values
 * of one type give the same server on every machine. */
int eng_exchange_dest(const uint8_t *row, uint32_t ncols, uint32_t first, uint32_t nkeys,
                      const sto_type *types, int nservers);

#endif
