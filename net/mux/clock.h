/*
 * clock.h — the multiplexer's one notion of time: CLOCK_MONOTONIC, so
 * heartbeats, peer timeouts and waits never jump with the wall clock.
 * The condition variables that wait on mux_deadline() are created with
 * pthread_condattr_setclock(CLOCK_MONOTONIC) for the same reason.
 */
#ifndef RACKDB_NET_MUX_CLOCK_H
#define RACKDB_NET_MUX_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds on the monotonic clock. */
static inline int64_t mux_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The monotonic time `ms` milliseconds from now, for pthread_cond_timedwait. */
static inline struct timespec mux_deadline(int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return until;
}

#endif
