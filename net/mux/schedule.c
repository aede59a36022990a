/*
 * schedule.c — phase arithmetic of the round-robin shuffle (see schedule.h).
 */
#include "net/mux/schedule.h"

int mux_schedule_phases(int n)
{
    return n > 1 ? n - 1 : 0;
}

int mux_schedule_dest(int rank, int n, int phase)
{
    return (rank + phase) % n;
}

int mux_schedule_src(int rank, int n, int phase)
{
    return ((rank - phase) % n + n) % n;
}
