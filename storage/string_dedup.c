/*
 * string_dedup.c — the table of a column's stored long strings (see
 * string_dedup.h).
 */
#include "storage/string_dedup.h"

#include <stdlib.h>

bool sto_dedup_init(sto_dedup *d)
{
    memset(d, 0, sizeof(*d));
    d->slots = calloc((size_t)1 << STO_DEDUP_BITS, sizeof(*d->slots));
    return d->slots != NULL;
}

void sto_dedup_free(sto_dedup *d)
{
    free(d->slots);
    memset(d, 0, sizeof(*d));
}

void sto_dedup_reset(sto_dedup *d)
{
    if (d->slots) memset(d->slots, 0, ((size_t)1 << STO_DEDUP_BITS) * sizeof(*d->slots));
    d->seen = d->hits = 0;
    d->off = false;
}
