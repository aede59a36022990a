/*
 * dists.h — the value lists TPC-H data is drawn from (clause 4.2.2.x and
 * dbgen's dists.dss): nations, regions, part types, containers, colors, order
 * priorities, ship modes, and the word lists and grammar of the comment text.
 *
 * The lists are constant data. Generators turn a list into a picker
 * (tpch/gen.c, tpch/text.c) that maps a uniform draw in [1, total weight] to
 * an entry, which is how every weighted choice in TPC-H is made.
 */
#ifndef RACKDB_TPCH_DISTS_H
#define RACKDB_TPCH_DISTS_H

#include <stdint.h>

// clang-format off
#define TPCH_DIST_LIST(X) \
    X(P_CNTR) \
    X(COLORS) \
    X(P_TYPES) \
    X(NATIONS) \
    X(REGIONS) \
    X(O_OPRIO) \
    X(INSTRUCT) \
    X(SMODE) \
    X(RFLAG) \
    X(MSEGMNT) \
    X(NOUNS) \
    X(VERBS) \
    X(ADJECTIVES) \
    X(ADVERBS) \
    X(AUXILLARIES) \
    X(TERMINATORS) \
    X(ARTICLES) \
    X(PREPOSITIONS) \
    X(GRAMMAR) \
    X(NP) \
    X(VP)
// clang-format on

typedef enum tpch_dist_id {
#define TPCH_DIST_ENUM(name) TPCH_DIST_##name,
    TPCH_DIST_LIST(TPCH_DIST_ENUM)
#undef TPCH_DIST_ENUM
        TPCH_DIST_COUNT
} tpch_dist_id;

typedef struct tpch_dist_item {
    const char *text;
    int32_t weight; /* this entry's own weight, not a running sum */
} tpch_dist_item;

typedef struct tpch_dist {
    const char *name;
    int count;
    const tpch_dist_item *items;
} tpch_dist;

extern const tpch_dist tpch_dists[TPCH_DIST_COUNT];

/* Largest total weight of any list; pickers are fixed-size tables. */
#define TPCH_PICKER_MAX_WEIGHT 512

/* A weighted choice made constant-time: entry[j] is the index of the first
 * entry whose running weight sum is >= j, for j in 1..total. */
typedef struct tpch_picker {
    const tpch_dist *dist;
    int32_t total;
    uint8_t len[256]; /* byte length of each entry's text */
    uint16_t entry[TPCH_PICKER_MAX_WEIGHT + 1];
    /* each entry's text, zero-padded to 32 bytes (all texts are shorter), so
     * it can be copied with fixed-size moves */
    char pad[256][32];
} tpch_picker;

/* Builds the picker of list `id` (all built-in lists fit). */
void tpch_picker_init(tpch_picker *p, tpch_dist_id id);

#endif
