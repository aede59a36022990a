/*
 * test_mux_schedule.c — the round-robin phases for n = 2..5 (and larger):
 * each phase is a permutation without self-sends, and over a round every
 * ordered pair of servers talks exactly once.
 */
#include "net/mux/schedule.h"
#include "test.h"

static void check_n(int n)
{
    int phases = mux_schedule_phases(n);
    CHECK_EQ_INT(phases, n - 1);
    int pairs[16][16] = {{0}};
    for (int p = 1; p <= phases; p++) {
        int hits[16] = {0};
        for (int i = 0; i < n; i++) {
            int d = mux_schedule_dest(i, n, p);
            CHECK(d >= 0 && d < n && d != i);
            hits[d]++;
            pairs[i][d]++;
            /* The receiver agrees on who sends to it in this phase. */
            CHECK_EQ_INT(mux_schedule_src(d, n, p), i);
        }
        for (int d = 0; d < n; d++)
            CHECK_EQ_INT(hits[d], 1); /* one sender per receiver */
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            CHECK_EQ_INT(pairs[i][j], i == j ? 0 : 1);
}

static void phases_2_to_5(void)
{
    for (int n = 2; n <= 5; n++)
        check_n(n);
    check_n(16);
}

static void single_server(void)
{
    CHECK_EQ_INT(mux_schedule_phases(1), 0);
}

static void known_values(void)
{
    /* n = 4, phase 1: 0->1, 1->2, 2->3, 3->0; phase 3: 0->3, receives from 1. */
    CHECK_EQ_INT(mux_schedule_dest(3, 4, 1), 0);
    CHECK_EQ_INT(mux_schedule_dest(0, 4, 3), 3);
    CHECK_EQ_INT(mux_schedule_src(0, 4, 3), 1);
    CHECK_EQ_INT(mux_schedule_src(0, 4, 1), 3);
}

int main(void)
{
    RUN(phases_2_to_5);
    RUN(single_server);
    RUN(known_values);
    return TEST_REPORT();
}
