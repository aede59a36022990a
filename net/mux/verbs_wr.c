/*
 * verbs_wr.c — the work-request table (see verbs_wr.h).
 *
 * Ids are (generation << 32) | slot. Free slots form a stack; each reuse of
 * a slot bumps its generation, so an id completes at most once.
 */
#include "net/mux/verbs_wr.h"
#include <stdlib.h>

typedef struct slot {
    mux_wr wr;
    uint32_t gen;
    bool used;
} slot;

struct mux_wrtab {
    slot *s;
    int *free; /* stack of free slot indices */
    int nfree, nslots, npeers, depth;
    int *out; /* outstanding sends per peer */
};

sto_status mux_wrtab_create(int slots, int npeers, int depth, mux_wrtab **out)
{
    *out = NULL;
    if (slots < 1 || npeers < 1 || depth < 1)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "work-request table %d/%d/%d", slots, npeers,
                         depth);
    mux_wrtab *t = calloc(1, sizeof *t);
    if (!t) return sto_error_oom();
    t->s = calloc((size_t)slots, sizeof *t->s);
    t->free = calloc((size_t)slots, sizeof *t->free);
    t->out = calloc((size_t)npeers, sizeof *t->out);
    if (!t->s || !t->free || !t->out) {
        mux_wrtab_destroy(t);
        return sto_error_oom();
    }
    t->nslots = slots;
    t->npeers = npeers;
    t->depth = depth;
    for (int i = 0; i < slots; i++)
        t->free[i] = slots - 1 - i;
    t->nfree = slots;
    *out = t;
    return STO_OK;
}

void mux_wrtab_destroy(mux_wrtab *t)
{
    if (!t) return;
    free(t->s);
    free(t->free);
    free(t->out);
    free(t);
}

bool mux_wrtab_post(mux_wrtab *t, const mux_wr *wr, uint64_t *id)
{
    if (!t->nfree) return false;
    if (wr->kind == MUX_WR_SEND) {
        if (wr->peer < 0 || wr->peer >= t->npeers || t->out[wr->peer] >= t->depth) return false;
        t->out[wr->peer]++;
    }
    int i = t->free[--t->nfree];
    slot *s = &t->s[i];
    s->wr = *wr;
    s->used = true;
    s->gen++;
    *id = (uint64_t)s->gen << 32 | (uint32_t)i;
    return true;
}

static bool lookup(mux_wrtab *t, uint64_t id, slot **out)
{
    uint32_t i = (uint32_t)id;
    if (i >= (uint32_t)t->nslots) return false;
    slot *s = &t->s[i];
    if (!s->used || s->gen != (uint32_t)(id >> 32)) return false;
    *out = s;
    return true;
}

static void release(mux_wrtab *t, slot *s)
{
    if (s->wr.kind == MUX_WR_SEND) t->out[s->wr.peer]--;
    s->used = false;
    t->free[t->nfree++] = (int)(s - t->s);
}

void mux_wrtab_unpost(mux_wrtab *t, uint64_t id)
{
    slot *s;
    if (lookup(t, id, &s)) release(t, s);
}

bool mux_wrtab_complete(mux_wrtab *t, uint64_t id, mux_wr *out)
{
    slot *s;
    if (!lookup(t, id, &s)) return false;
    *out = s->wr;
    release(t, s);
    return true;
}

int mux_wrtab_outstanding(const mux_wrtab *t, int peer)
{
    return peer >= 0 && peer < t->npeers ? t->out[peer] : 0;
}

int mux_wrtab_drain(mux_wrtab *t, int peer, void (*fn)(void *arg, const mux_wr *wr), void *arg)
{
    int n = 0;
    for (int i = 0; i < t->nslots; i++) {
        slot *s = &t->s[i];
        if (!s->used || s->wr.peer != peer) continue;
        mux_wr wr = s->wr;
        release(t, s);
        if (fn) fn(arg, &wr);
        n++;
    }
    return n;
}
