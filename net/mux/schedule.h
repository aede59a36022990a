/*
 * schedule.h — the round-robin phase schedule of the all-to-all shuffle.
 *
 * With n servers a round has n-1 phases. In phase p (1..n-1) server i sends
 * only to (i+p) mod n and receives only from (i-p) mod n. Each phase's
 * senders form a permutation, so no receiver ever has two senders competing
 * for its link, and over one round every ordered pair (i, j), i != j, talks
 * exactly once. The multiplexer moves to the next phase after it has sent
 * its share and received the sync frame of the server it receives from.
 */
#ifndef RACKDB_NET_MUX_SCHEDULE_H
#define RACKDB_NET_MUX_SCHEDULE_H

/* Phases per round: n-1 (0 for a single server). */
int mux_schedule_phases(int n);

/* The server `rank` sends to in phase p: (rank + p) mod n. */
int mux_schedule_dest(int rank, int n, int phase);

/* The server `rank` receives from in phase p: (rank - p) mod n. */
int mux_schedule_src(int rank, int n, int phase);

#endif
