/*
 * sched.c — the morsel-driven worker pool (see sched.h for the model).
 *
 * Three kinds of state, three kinds of synchronization:
 *
 *  - The hot path (taking and finishing a morsel) is lock-free. A phase (the
 *    morsels of a pipeline, or of its finalize) gives every pool worker a
 *    share: morsel indexes [lo, hi) packed into one 64-bit word. The owner
 *    takes lo with a compare-and-swap; a thief moves hi down by half of
 *    what is left and keeps the upper half as its own new share. Since
 *    only an owner ever grows its share, and only when it is empty, a plain
 *    store suffices there. Finished morsels are counted down in the phase's
 *    `remaining`; the worker that brings it to zero moves the pipeline on.
 *
 *  - Which job a worker serves, which pipelines are open, and when a job is
 *    over change rarely and are guarded by the pool's mutex. Workers look
 *    at the job list when they run out of work, when the pool's `epoch`
 *    moves (a job arrived, a pipeline opened, a job ended) and every
 *    QUANTUM morsels while more than one job runs.
 *
 *  - A job's completion is published under the job's own mutex, so that
 *    waiting for a job never touches the pool (which may be gone by then).
 *
 * Stopping: the first error (or the cancel flag) marks the job stopped.
 * Workers that see it drain every open phase of the job, counting the
 * morsels they throw away as finished; so every phase still reaches zero
 * exactly once, its pipeline ends (states destroyed, finalize skipped), and
 * no further pipeline opens. A job is complete when no pipeline is open and
 * no worker is attached to it; only then may the caller free it.
 */
#include "engine/sched.h"

#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "cancel flags must be lock-free to be signal-safe");

#define DEFAULT_MORSEL_ROWS 16384
#define MIN_ADAPTIVE_MORSEL 1024
#define MORSELS_PER_WORKER  4  /* what adaptive sizing aims for at least */
#define QUANTUM             16 /* morsels before a worker looks at other jobs */

/* ---- return codes ------------------------------------------------------------ */

#define RC_SQLSTATE_(name, code) code,
static const char *const rc_sqlstates[] = {STO_SQLSTATE_LIST(RC_SQLSTATE_)};
#undef RC_SQLSTATE_

const char *eng_rc_sqlstate(int rc)
{
    if (rc < 0 || rc >= ENG_RC_COUNT_) return STO_INTERNAL_ERROR;
    return rc_sqlstates[rc];
}

/* ---- data structures ------------------------------------------------------- */

/* One worker's share of a phase: morsel indexes [lo, hi) in one word. */
typedef struct share {
    _Atomic uint64_t range;
} __attribute__((aligned(64))) share;

static inline uint64_t pack(uint32_t lo, uint32_t hi)
{
    return (uint64_t)hi << 32 | lo;
}
static inline uint32_t lo_of(uint64_t v)
{
    return (uint32_t)v;
}
static inline uint32_t hi_of(uint64_t v)
{
    return (uint32_t)(v >> 32);
}

/* A run of input rows that morsels may not cross: a chunk, or the whole
 * range of an unchunked pipeline. */
typedef struct segment {
    uint32_t chunk;
    int node; /* the node whose workers get it first */
    uint64_t rows;
    uint32_t first; /* its first morsel index */
    uint32_t count; /* its morsels */
} segment;

typedef struct phase {
    share *shares; /* one per pool worker */
    segment *segs;
    unsigned n_segs;
    uint32_t morsel_rows;
    int chunked;                /* positions carry the chunk index */
    _Atomic uint32_t remaining; /* morsels not finished */
} phase;

enum { PIPE_PENDING, PIPE_RUNNING, PIPE_FINALIZING, PIPE_DONE };

typedef struct job_pipeline {
    eng_pipeline spec; /* chunk arrays point at the copies below */
    uint32_t *chunk_rows;
    int *chunk_nodes;
    unsigned *deps;
    unsigned n_deps;
    _Atomic int state; /* PIPE_*; changed under the pool lock */
    phase main, fin;
    void **states;      /* per pool worker; made by the worker itself */
    void **done_states; /* the non-NULL ones, for finalize */
    unsigned n_done_states;
} job_pipeline;

/* What a job keeps per pool worker. */
typedef struct slot {
    eng_mem_cache mem;
    uint64_t morsels, steals;
} __attribute__((aligned(64))) slot;

struct eng_job {
    unsigned threads_wanted;
    eng_mem *mem;
    atomic_int own_cancel;
    atomic_int *cancel;
    job_pipeline *pipes;
    unsigned n_pipes, cap_pipes;

    unsigned threads;
    slot *slots;
    unsigned n_slots;
    _Atomic int stopped;
    sto_status status; /* written by whoever stopped the job first */

    /* Under the pool lock. */
    unsigned attached; /* workers serving it now */
    unsigned open;     /* pipelines running or finalizing */
    int finished;      /* no pipeline will open any more */
    uint64_t last_served;
    eng_job *next;

    /* Under done_lock. */
    pthread_mutex_t done_lock;
    pthread_cond_t done_cv;
    int submitted, complete;
};

typedef struct worker {
    eng_sched *pool;
    unsigned id;
    pthread_t thread;
    unsigned *victims; /* other workers, same node first */
} worker;

struct eng_sched {
    unsigned n;
    uint32_t morsel_rows;
    eng_worker_info *info;
    worker *workers;
    unsigned started;
    int *nodes; /* distinct nodes that have workers */
    unsigned n_nodes;

    pthread_mutex_t lock;
    pthread_cond_t work_cv; /* work appeared, or the pool exits */
    pthread_cond_t idle_cv; /* a job completed (shutdown waits on it) */
    eng_job *jobs;
    _Atomic unsigned n_jobs;
    _Atomic uint64_t epoch;
    uint64_t tick;
    unsigned sleepers;
    int shutdown, exit;
};

/* ---- pool set-up --------------------------------------------------------------- */

static void *worker_main(void *arg);

/* The CPUs this process may run on, in order. */
static unsigned allowed_cpus(int **out)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    *out = NULL;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
    unsigned n = (unsigned)CPU_COUNT(&set);
    if (!n) return 0;
    int *cpus = malloc(n * sizeof(*cpus));
    if (!cpus) return 0;
    unsigned k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < n; c++)
        if (CPU_ISSET(c, &set)) cpus[k++] = c;
    *out = cpus;
    return k;
}

static int node_of_cpu(int cpu, int numa_ok)
{
    if (!numa_ok || cpu < 0) return 0;
    int node = numa_node_of_cpu(cpu);
    return node < 0 ? 0 : node;
}

/* Steal order: workers on my node after me, then the rest after me. */
static sto_status plan_victims(eng_sched *s)
{
    for (unsigned w = 0; w < s->n; w++) {
        unsigned *v = malloc((s->n ? s->n : 1) * sizeof(*v));
        if (!v) return sto_error_oom();
        unsigned k = 0;
        for (int pass = 0; pass < 2; pass++)
            for (unsigned i = 1; i < s->n; i++) {
                unsigned o = (w + i) % s->n;
                int same = s->info[o].node == s->info[w].node;
                if (same == (pass == 0)) v[k++] = o;
            }
        s->workers[w].victims = v;
    }
    return STO_OK;
}

static sto_status plan_nodes(eng_sched *s)
{
    s->nodes = malloc(s->n * sizeof(*s->nodes));
    if (!s->nodes) return sto_error_oom();
    for (unsigned w = 0; w < s->n; w++) {
        unsigned i = 0;
        while (i < s->n_nodes && s->nodes[i] != s->info[w].node)
            i++;
        if (i == s->n_nodes) s->nodes[s->n_nodes++] = s->info[w].node;
    }
    return STO_OK;
}

static sto_status start_worker(eng_sched *s, unsigned w, int pin)
{
    worker *wk = &s->workers[w];
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return sto_error(STO_INTERNAL_ERROR, "pthread_attr_init");
    cpu_set_t set;
    if (pin && s->info[w].cpu >= 0) {
        CPU_ZERO(&set);
        CPU_SET(s->info[w].cpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    }
    int rc = pthread_create(&wk->thread, &attr, worker_main, wk);
    if (rc != 0 && pin) {
        /* Pinning refused (a container may hide CPUs): run unpinned. */
        pthread_attr_destroy(&attr);
        pthread_attr_init(&attr);
        s->info[w].cpu = -1;
        rc = pthread_create(&wk->thread, &attr, worker_main, wk);
    }
    pthread_attr_destroy(&attr);
    if (rc != 0) return sto_error(STO_INTERNAL_ERROR, "cannot start worker thread %u", w);
    return STO_OK;
}

sto_status eng_sched_create(const eng_sched_options *opt, eng_sched **out)
{
    eng_sched_options o = {0};
    if (opt) o = *opt;
    *out = NULL;
    int *cpus = NULL;
    unsigned n_cpus = allowed_cpus(&cpus);
    unsigned n = o.threads;
    if (!n) n = n_cpus;
    if (!n) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (unsigned)c : 1;
    }
    sto_status st = STO_OK;
    eng_sched *s = calloc(1, sizeof(*s));
    if (!s) {
        free(cpus);
        return sto_error_oom();
    }
    s->n = n;
    s->morsel_rows = o.morsel_rows ? o.morsel_rows : DEFAULT_MORSEL_ROWS;
    s->info = calloc(n, sizeof(*s->info));
    s->workers = calloc(n, sizeof(*s->workers));
    if (!s->info || !s->workers) {
        st = sto_error_oom();
        goto fail;
    }
    int numa_ok = numa_available() >= 0;
    for (unsigned w = 0; w < n; w++) {
        s->info[w].id = w;
        s->info[w].cpu = n_cpus ? cpus[w % n_cpus] : -1;
        s->info[w].node = node_of_cpu(s->info[w].cpu, numa_ok);
        if (o.no_pinning || !n_cpus) s->info[w].cpu = -1;
        s->workers[w].pool = s;
        s->workers[w].id = w;
    }
    if ((st = plan_nodes(s)) || (st = plan_victims(s))) goto fail;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work_cv, NULL);
    pthread_cond_init(&s->idle_cv, NULL);
    for (unsigned w = 0; w < n; w++) {
        if ((st = start_worker(s, w, !o.no_pinning))) {
            eng_sched_destroy(s);
            free(cpus);
            return st;
        }
        s->started++;
    }
    free(cpus);
    *out = s;
    return STO_OK;
fail:
    if (s->workers)
        for (unsigned w = 0; w < n; w++)
            free(s->workers[w].victims);
    free(s->workers);
    free(s->info);
    free(s->nodes);
    free(s);
    free(cpus);
    return st;
}

unsigned eng_sched_threads(const eng_sched *s)
{
    return s->n;
}

eng_worker_info eng_sched_worker(const eng_sched *s, unsigned i)
{
    eng_worker_info w = s->info[i];
    w.mem = NULL;
    return w;
}

/* ---- jobs: building ---------------------------------------------------------- */

sto_status eng_job_create(const eng_job_options *opt, eng_job **out)
{
    *out = NULL;
    eng_job *j = calloc(1, sizeof(*j));
    if (!j) return sto_error_oom();
    if (opt) {
        j->threads_wanted = opt->threads;
        j->mem = opt->mem;
        j->cancel = opt->cancel;
    }
    atomic_init(&j->own_cancel, 0);
    if (!j->cancel) j->cancel = &j->own_cancel;
    atomic_init(&j->stopped, 0);
    pthread_mutex_init(&j->done_lock, NULL);
    pthread_cond_init(&j->done_cv, NULL);
    *out = j;
    return STO_OK;
}

sto_status eng_job_add(eng_job *job, const eng_pipeline *p, const unsigned *deps, unsigned n_deps,
                       unsigned *id)
{
    if (job->submitted)
        return sto_error(STO_INTERNAL_ERROR, "pipeline added to a job already submitted");
    if (!p->run) return sto_error(STO_INTERNAL_ERROR, "pipeline without a morsel function");
    if (p->n_chunks && !p->chunk_rows)
        return sto_error(STO_INTERNAL_ERROR, "pipeline with chunks but no chunk sizes");
    for (unsigned i = 0; i < n_deps; i++)
        if (deps[i] >= job->n_pipes)
            return sto_error(STO_INTERNAL_ERROR, "pipeline depends on unknown pipeline %u",
                             deps[i]);
    if (job->n_pipes == job->cap_pipes) {
        unsigned cap = job->cap_pipes ? 2 * job->cap_pipes : 4;
        job_pipeline *np = realloc(job->pipes, cap * sizeof(*np));
        if (!np) return sto_error_oom();
        job->pipes = np;
        job->cap_pipes = cap;
    }
    job_pipeline *pp = &job->pipes[job->n_pipes];
    memset(pp, 0, sizeof(*pp));
    pp->spec = *p;
    if (p->n_chunks) {
        pp->chunk_rows = malloc(p->n_chunks * sizeof(*pp->chunk_rows));
        pp->chunk_nodes = malloc(p->n_chunks * sizeof(*pp->chunk_nodes));
        if (!pp->chunk_rows || !pp->chunk_nodes) goto oom;
        for (unsigned c = 0; c < p->n_chunks; c++) {
            pp->chunk_rows[c] = p->chunk_rows[c];
            pp->chunk_nodes[c] = p->chunk_nodes ? p->chunk_nodes[c] : -1;
        }
    }
    pp->spec.chunk_rows = pp->chunk_rows;
    pp->spec.chunk_nodes = pp->chunk_nodes;
    if (n_deps) {
        pp->deps = malloc(n_deps * sizeof(*pp->deps));
        if (!pp->deps) goto oom;
        memcpy(pp->deps, deps, n_deps * sizeof(*deps));
        pp->n_deps = n_deps;
    }
    atomic_init(&pp->state, PIPE_PENDING);
    if (id) *id = job->n_pipes;
    job->n_pipes++;
    return STO_OK;
oom:
    free(pp->chunk_rows);
    free(pp->chunk_nodes);
    return sto_error_oom();
}

/* ---- phases ---------------------------------------------------------------- */

static int seg_cmp(const void *a, const void *b)
{
    const segment *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

static int pool_has_node(const eng_sched *s, int node)
{
    for (unsigned i = 0; i < s->n_nodes; i++)
        if (s->nodes[i] == node) return 1;
    return 0;
}

/* Deals morsels [a, b) out evenly to the workers on `node` (all workers when
 * node < 0). */
static void deal(eng_sched *s, phase *ph, uint32_t a, uint32_t b, int node)
{
    unsigned k = 0, n = 0;
    for (unsigned w = 0; w < s->n; w++)
        if (node < 0 || s->info[w].node == node) n++;
    for (unsigned w = 0; w < s->n; w++) {
        if (node >= 0 && s->info[w].node != node) continue;
        uint32_t lo = a + (uint32_t)((uint64_t)(b - a) * k / n);
        uint32_t hi = a + (uint32_t)((uint64_t)(b - a) * (k + 1) / n);
        atomic_store_explicit(&ph->shares[w].range, pack(lo, hi), memory_order_relaxed);
        k++;
    }
}

/* Cuts segments into morsels and deals them to the workers' shares. The
 * segments are ordered by node so that each node's morsels are one range. */
static sto_status build_phase(eng_sched *s, phase *ph, segment *segs, unsigned n_segs,
                              uint32_t morsel_rows, int chunked)
{
    ph->shares = aligned_alloc(64, s->n * sizeof(share));
    if (!ph->shares) {
        free(segs);
        return sto_error_oom();
    }
    for (unsigned w = 0; w < s->n; w++)
        atomic_init(&ph->shares[w].range, 0);
    ph->segs = segs;
    ph->n_segs = n_segs;
    ph->morsel_rows = morsel_rows;
    ph->chunked = chunked;

    int numa = 0;
    for (unsigned i = 0; i < n_segs; i++)
        if (segs[i].node >= 0) numa = 1;
    if (numa) {
        /* Chunks on nodes without workers (or unknown) go round-robin. */
        for (unsigned i = 0; i < n_segs; i++)
            if (segs[i].node < 0 || !pool_has_node(s, segs[i].node))
                segs[i].node = s->nodes[i % s->n_nodes];
        qsort(segs, n_segs, sizeof(*segs), seg_cmp);
    }
    uint64_t total = 0;
    for (unsigned i = 0; i < n_segs; i++) {
        segs[i].first = (uint32_t)total;
        uint64_t count = segs[i].rows / morsel_rows + (segs[i].rows % morsel_rows != 0);
        segs[i].count = (uint32_t)count;
        total += count;
        if (total >= UINT32_MAX)
            return sto_error(STO_INTERNAL_ERROR, "input too large: %llu morsels",
                             (unsigned long long)total);
    }
    atomic_init(&ph->remaining, (uint32_t)total);
    if (!numa) {
        deal(s, ph, 0, (uint32_t)total, -1);
        return STO_OK;
    }
    for (unsigned i = 0; i < n_segs;) {
        unsigned j = i;
        while (j < n_segs && segs[j].node == segs[i].node)
            j++;
        deal(s, ph, segs[i].first, segs[j - 1].first + segs[j - 1].count, segs[i].node);
        i = j;
    }
    return STO_OK;
}

/* Rows per morsel: the pipeline's own choice, else the pool's, shrunk so
 * that each of the job's workers still gets a few morsels of a small input. */
static uint32_t morsel_rows_for(const eng_sched *s, const eng_job *job, const eng_pipeline *p,
                                uint64_t total)
{
    if (p->morsel_rows) return p->morsel_rows;
    uint64_t fair = total / ((uint64_t)job->threads * MORSELS_PER_WORKER);
    if (fair < MIN_ADAPTIVE_MORSEL) fair = MIN_ADAPTIVE_MORSEL;
    return fair < s->morsel_rows ? (uint32_t)fair : s->morsel_rows;
}

static sto_status open_main(eng_sched *s, eng_job *job, job_pipeline *p)
{
    unsigned n = p->spec.n_chunks ? p->spec.n_chunks : 1;
    segment *segs = calloc(n, sizeof(*segs));
    if (!segs) return sto_error_oom();
    unsigned k = 0;
    uint64_t total = 0;
    if (p->spec.n_chunks) {
        for (unsigned c = 0; c < p->spec.n_chunks; c++) {
            if (!p->chunk_rows[c]) continue; /* empty chunks have no morsels */
            segs[k++] = (segment){.chunk = c, .node = p->chunk_nodes[c], .rows = p->chunk_rows[c]};
            total += p->chunk_rows[c];
        }
    } else if (p->spec.rows) {
        segs[k++] = (segment){.chunk = 0, .node = -1, .rows = p->spec.rows};
        total = p->spec.rows;
    }
    return build_phase(s, &p->main, segs, k, morsel_rows_for(s, job, &p->spec, total),
                       p->spec.n_chunks > 0);
}

static sto_status open_fin(eng_sched *s, job_pipeline *p)
{
    segment *seg = calloc(1, sizeof(*seg));
    if (!seg) return sto_error_oom();
    seg->node = -1;
    seg->rows = p->spec.finalize_parts ? p->spec.finalize_parts : 1;
    return build_phase(s, &p->fin, seg, 1, 1, 0);
}

/* ---- jobs: state changes (under the pool lock) ------------------------------- */

static int is_stopped(eng_job *job)
{
    return atomic_load_explicit(&job->stopped, memory_order_acquire);
}

/* Records the job's first error and stops it; later errors are dropped. */
static void job_fail(eng_job *job, sto_status st)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&job->stopped, &expected, 1))
        job->status = st;
    else
        sto_status_free(st);
}

/* Tells the workers that something changed: look again. */
static void publish(eng_sched *s)
{
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_relaxed);
    pthread_cond_broadcast(&s->work_cv);
}

static int deps_done(const eng_job *job, job_pipeline *p)
{
    for (unsigned i = 0; i < p->n_deps; i++)
        if (atomic_load(&job->pipes[p->deps[i]].state) != PIPE_DONE) return 0;
    return 1;
}

static sto_status open_pipeline(eng_sched *s, eng_job *job, job_pipeline *p)
{
    p->states = calloc(s->n, sizeof(*p->states));
    if (!p->states) return sto_error_oom();
    STO_TRY(open_main(s, job, p));
    if (atomic_load(&p->main.remaining)) {
        atomic_store_explicit(&p->state, PIPE_RUNNING, memory_order_release);
        job->open++;
    } else if (p->spec.finalize) {
        /* An empty input still finalizes (count(*) of nothing is 0). */
        STO_TRY(open_fin(s, p));
        atomic_store_explicit(&p->state, PIPE_FINALIZING, memory_order_release);
        job->open++;
    } else {
        atomic_store_explicit(&p->state, PIPE_DONE, memory_order_release);
    }
    return STO_OK;
}

/* Opens every pipeline whose dependencies are done, until none is left. */
static void open_ready(eng_sched *s, eng_job *job)
{
    int changed = 1;
    while (changed && !is_stopped(job)) {
        changed = 0;
        for (unsigned i = 0; i < job->n_pipes; i++) {
            job_pipeline *p = &job->pipes[i];
            if (atomic_load(&p->state) != PIPE_PENDING || !deps_done(job, p)) continue;
            sto_status st = open_pipeline(s, job, p);
            if (st) {
                job_fail(job, st);
                return;
            }
            changed = 1;
        }
    }
}

static int phase_has_work(const eng_sched *s, phase *ph)
{
    for (unsigned w = 0; w < s->n; w++) {
        uint64_t v = atomic_load_explicit(&ph->shares[w].range, memory_order_relaxed);
        if (lo_of(v) < hi_of(v)) return 1;
    }
    return 0;
}

/* The phase of a pipeline that hands out morsels now, if any. */
static phase *open_phase(job_pipeline *p)
{
    int st = atomic_load_explicit(&p->state, memory_order_acquire);
    return st == PIPE_RUNNING ? &p->main : st == PIPE_FINALIZING ? &p->fin : NULL;
}

static int job_has_work(const eng_sched *s, eng_job *job)
{
    for (unsigned i = 0; i < job->n_pipes; i++) {
        phase *ph = open_phase(&job->pipes[i]);
        if (ph && phase_has_work(s, ph)) return 1;
    }
    return 0;
}

/* The job has ended and no worker is on it: hand it back to its waiter. */
static void complete_job(eng_sched *s, eng_job *job)
{
    eng_job **pp = &s->jobs;
    while (*pp && *pp != job)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = job->next;
        atomic_fetch_sub(&s->n_jobs, 1);
    }
    for (unsigned w = 0; w < s->n; w++)
        eng_mem_cache_flush(&job->slots[w].mem);
    publish(s);
    if (s->shutdown) pthread_cond_broadcast(&s->idle_cv);
    pthread_mutex_lock(&job->done_lock);
    job->complete = 1;
    pthread_cond_broadcast(&job->done_cv);
    pthread_mutex_unlock(&job->done_lock);
}

/* The job with the fewest workers that has work and room, the least
 * recently served first; the caller becomes one of its workers. */
static eng_job *pick_job(eng_sched *s)
{
    eng_job *best = NULL;
    for (eng_job *j = s->jobs; j; j = j->next) {
        if (j->finished || j->attached >= j->threads || !job_has_work(s, j)) continue;
        if (!best || j->attached < best->attached ||
            (j->attached == best->attached && j->last_served < best->last_served))
            best = j;
    }
    if (best) {
        best->attached++;
        best->last_served = ++s->tick;
    }
    return best;
}

static void detach(eng_sched *s, eng_job *job)
{
    job->attached--;
    if (job->finished && job->attached == 0)
        complete_job(s, job);
    else if (s->sleepers && job_has_work(s, job))
        pthread_cond_broadcast(&s->work_cv); /* a place on the job came free */
}

/* ---- running morsels (no lock) ------------------------------------------------- */

/* Takes a morsel index: the front of my share, or else half of someone
 * else's (the upper half, so the victim keeps going where it was). */
static int take(const eng_sched *s, phase *ph, unsigned w, uint32_t *k, slot *sl)
{
    _Atomic uint64_t *own = &ph->shares[w].range;
    uint64_t v = atomic_load_explicit(own, memory_order_relaxed);
    while (lo_of(v) < hi_of(v)) {
        if (atomic_compare_exchange_weak_explicit(own, &v, pack(lo_of(v) + 1, hi_of(v)),
                                                  memory_order_relaxed, memory_order_relaxed)) {
            *k = lo_of(v);
            return 1;
        }
    }
    const unsigned *victims = s->workers[w].victims;
    for (unsigned i = 0; i + 1 < s->n; i++) {
        _Atomic uint64_t *q = &ph->shares[victims[i]].range;
        v = atomic_load_explicit(q, memory_order_relaxed);
        while (lo_of(v) < hi_of(v)) {
            uint32_t lo = lo_of(v), hi = hi_of(v);
            uint32_t mid = lo + (hi - lo) / 2;
            if (atomic_compare_exchange_weak_explicit(q, &v, pack(lo, mid), memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *k = mid;
                /* My share is empty and only I refill it: a store will do. */
                if (mid + 1 < hi)
                    atomic_store_explicit(own, pack(mid + 1, hi), memory_order_relaxed);
                sl->steals++;
                return 1;
            }
        }
    }
    return 0;
}

/* The rows of morsel k: its segment is the last one starting at or before k. */
static void morsel_bounds(const phase *ph, uint32_t k, uint64_t *begin, uint64_t *end)
{
    unsigned lo = 0, hi = ph->n_segs;
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (ph->segs[mid].first <= k)
            lo = mid;
        else
            hi = mid;
    }
    const segment *sg = &ph->segs[lo];
    uint64_t b = (uint64_t)(k - sg->first) * ph->morsel_rows;
    uint64_t e = b + ph->morsel_rows;
    if (e > sg->rows) e = sg->rows;
    *begin = ph->chunked ? ENG_MORSEL_POS(sg->chunk, b) : b;
    *end = ph->chunked ? ENG_MORSEL_POS(sg->chunk, e) : e;
}

static sto_status rc_error(const job_pipeline *p, void *state, int rc)
{
    if (p->spec.error) return p->spec.error(p->spec.ctx, state, rc);
    const char *name = p->spec.name ? p->spec.name : "pipeline";
    switch (rc) {
    case ENG_RC_DIVISION_BY_ZERO:
        return sto_error(STO_DIVISION_BY_ZERO, "division by zero");
    case ENG_RC_NUMERIC_VALUE_OUT_OF_RANGE:
        return sto_error(STO_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range");
    case ENG_RC_OUT_OF_MEMORY:
        return sto_error(STO_OUT_OF_MEMORY, "out of memory in %s", name);
    case ENG_RC_QUERY_CANCELED:
        return sto_error(STO_QUERY_CANCELED, "canceling statement due to user request");
    default:
        return sto_error(eng_rc_sqlstate(rc), "%s failed with code %d (SQLSTATE %s)", name, rc,
                         eng_rc_sqlstate(rc));
    }
}

static sto_status make_state(eng_sched *s, eng_job *job, job_pipeline *p, unsigned w, void **out)
{
    size_t size = (p->spec.state_size + 63) & ~(size_t)63;
    void *st;
    STO_TRY(eng_mem_alloc_zero(job->mem, size, s->info[w].node, &st));
    if (p->spec.state_init) {
        eng_worker_info info = s->info[w];
        info.mem = &job->slots[w].mem;
        sto_status err = p->spec.state_init(p->spec.ctx, st, &info);
        if (err) {
            eng_mem_free(job->mem, st, size);
            return err;
        }
    }
    *out = st;
    return STO_OK;
}

static void run_morsel(eng_sched *s, eng_job *job, job_pipeline *p, phase *ph, unsigned w,
                       uint32_t k)
{
    slot *sl = &job->slots[w];
    void *state = NULL;
    int rc;
    sl->morsels++;
    if (ph == &p->main) {
        if (p->spec.state_size) {
            state = p->states[w];
            if (!state) {
                sto_status st = make_state(s, job, p, w, &state);
                if (st) {
                    job_fail(job, st);
                    return;
                }
                p->states[w] = state;
            }
        }
        uint64_t b, e;
        morsel_bounds(ph, k, &b, &e);
        rc = p->spec.run(p->spec.ctx, state, b, e);
    } else {
        rc = p->spec.finalize(p->spec.ctx, p->done_states, p->n_done_states, k, (uint64_t)k + 1);
    }
    if (rc && !is_stopped(job)) job_fail(job, rc_error(p, state, rc));
}

/* After finalize (or when the job stopped): states go, dependents open. */
static void end_pipeline(eng_sched *s, eng_job *job, job_pipeline *p)
{
    size_t size = (p->spec.state_size + 63) & ~(size_t)63;
    for (unsigned w = 0; w < s->n; w++) {
        if (!p->states[w]) continue;
        if (p->spec.state_destroy) p->spec.state_destroy(p->spec.ctx, p->states[w]);
        eng_mem_free(job->mem, p->states[w], size);
        p->states[w] = NULL;
    }
    pthread_mutex_lock(&s->lock);
    atomic_store_explicit(&p->state, PIPE_DONE, memory_order_release);
    job->open--;
    open_ready(s, job);
    if (job->open == 0) job->finished = 1;
    publish(s);
    pthread_mutex_unlock(&s->lock);
}

/* The last morsel of a phase is done (by whoever brought `remaining` to 0;
 * its acquire sees every other worker's states). */
static void phase_done(eng_sched *s, eng_job *job, job_pipeline *p, phase *ph)
{
    if (ph == &p->main && p->spec.finalize && !is_stopped(job)) {
        p->done_states = malloc(s->n * sizeof(*p->done_states));
        sto_status st = p->done_states ? STO_OK : sto_error_oom();
        if (!st) {
            for (unsigned w = 0; w < s->n; w++)
                if (p->states[w]) p->done_states[p->n_done_states++] = p->states[w];
            pthread_mutex_lock(&s->lock);
            st = open_fin(s, p);
            if (!st) {
                atomic_store_explicit(&p->state, PIPE_FINALIZING, memory_order_release);
                publish(s);
            }
            pthread_mutex_unlock(&s->lock);
            if (!st) return;
        }
        job_fail(job, st);
    }
    end_pipeline(s, job, p);
}

static void finish_morsels(eng_sched *s, eng_job *job, job_pipeline *p, phase *ph, uint32_t n)
{
    if (atomic_fetch_sub_explicit(&ph->remaining, n, memory_order_acq_rel) == n)
        phase_done(s, job, p, ph);
}

/* A stopped job: throw away every morsel not yet taken, as if finished. */
static void drain_job(eng_sched *s, eng_job *job)
{
    for (unsigned i = 0; i < job->n_pipes; i++) {
        job_pipeline *p = &job->pipes[i];
        phase *ph = open_phase(p);
        if (!ph) continue;
        for (unsigned w = 0; w < s->n; w++) {
            _Atomic uint64_t *q = &ph->shares[w].range;
            uint64_t v = atomic_load_explicit(q, memory_order_relaxed);
            while (lo_of(v) < hi_of(v)) {
                if (atomic_compare_exchange_weak_explicit(q, &v, pack(hi_of(v), hi_of(v)),
                                                          memory_order_relaxed,
                                                          memory_order_relaxed)) {
                    finish_morsels(s, job, p, ph, hi_of(v) - lo_of(v));
                    break;
                }
            }
        }
    }
}

/* Serves one job until it has nothing left for me or I should look again. */
static void work_on(eng_sched *s, eng_job *job, unsigned w, uint64_t epoch)
{
    slot *sl = &job->slots[w];
    job_pipeline *cur = NULL;
    phase *ph = NULL;
    unsigned budget = QUANTUM;
    for (;;) {
        if (atomic_load_explicit(job->cancel, memory_order_relaxed) && !is_stopped(job))
            job_fail(job, sto_error(STO_QUERY_CANCELED, "canceling statement due to user request"));
        if (is_stopped(job)) {
            drain_job(s, job);
            return;
        }
        uint32_t k;
        if (!ph || !take(s, ph, w, &k, sl)) {
            ph = NULL;
            for (unsigned i = 0; i < job->n_pipes && !ph; i++) {
                phase *q = open_phase(&job->pipes[i]);
                if (q && take(s, q, w, &k, sl)) {
                    cur = &job->pipes[i];
                    ph = q;
                }
            }
            if (!ph) return;
        }
        run_morsel(s, job, cur, ph, w, k);
        finish_morsels(s, job, cur, ph, 1);
        if (atomic_load_explicit(&s->epoch, memory_order_relaxed) != epoch) return;
        if (--budget == 0) {
            if (atomic_load_explicit(&s->n_jobs, memory_order_relaxed) > 1) return;
            budget = QUANTUM;
        }
    }
}

static void *worker_main(void *arg)
{
    worker *wk = arg;
    eng_sched *s = wk->pool;
    pthread_mutex_lock(&s->lock);
    while (!s->exit) {
        eng_job *job = pick_job(s);
        if (!job) {
            s->sleepers++;
            pthread_cond_wait(&s->work_cv, &s->lock);
            s->sleepers--;
            continue;
        }
        uint64_t epoch = atomic_load(&s->epoch);
        pthread_mutex_unlock(&s->lock);
        work_on(s, job, wk->id, epoch);
        pthread_mutex_lock(&s->lock);
        detach(s, job);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- jobs: the caller's side ------------------------------------------------------ */

sto_status eng_sched_submit(eng_sched *s, eng_job *job)
{
    pthread_mutex_lock(&job->done_lock);
    int again = job->submitted;
    job->submitted = 1;
    pthread_mutex_unlock(&job->done_lock);
    if (again) return sto_error(STO_INTERNAL_ERROR, "job submitted twice");

    job->threads = job->threads_wanted && job->threads_wanted < s->n ? job->threads_wanted : s->n;
    job->slots = aligned_alloc(64, s->n * sizeof(*job->slots));
    if (!job->slots) {
        job->submitted = 0;
        return sto_error_oom();
    }
    memset(job->slots, 0, s->n * sizeof(*job->slots));
    job->n_slots = s->n;
    for (unsigned w = 0; w < s->n; w++)
        eng_mem_cache_init(&job->slots[w].mem, job->mem);

    pthread_mutex_lock(&s->lock);
    if (s->shutdown) {
        pthread_mutex_unlock(&s->lock);
        free(job->slots);
        job->slots = NULL;
        job->n_slots = 0;
        job->submitted = 0;
        return sto_error(STO_QUERY_CANCELED, "canceling statement due to shutdown");
    }
    open_ready(s, job);
    if (job->open == 0) {
        /* Nothing to run (no pipelines, empty inputs, or opening failed). */
        job->finished = 1;
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_lock(&job->done_lock);
        job->complete = 1;
        pthread_mutex_unlock(&job->done_lock);
        return STO_OK;
    }
    job->next = s->jobs;
    s->jobs = job;
    atomic_fetch_add(&s->n_jobs, 1);
    publish(s);
    pthread_mutex_unlock(&s->lock);
    return STO_OK;
}

sto_status eng_job_wait(eng_job *job)
{
    pthread_mutex_lock(&job->done_lock);
    if (!job->submitted) {
        pthread_mutex_unlock(&job->done_lock);
        return sto_error(STO_INTERNAL_ERROR, "waiting for a job that was not submitted");
    }
    while (!job->complete)
        pthread_cond_wait(&job->done_cv, &job->done_lock);
    sto_status st = job->status;
    job->status = NULL;
    pthread_mutex_unlock(&job->done_lock);
    return st;
}

sto_status eng_sched_run(eng_sched *s, eng_job *job)
{
    STO_TRY(eng_sched_submit(s, job));
    return eng_job_wait(job);
}

void eng_job_cancel(eng_job *job)
{
    atomic_store(job->cancel, 1);
}

atomic_int *eng_job_cancel_flag(eng_job *job)
{
    return job->cancel;
}

eng_job_stats eng_job_get_stats(const eng_job *job)
{
    eng_job_stats st = {0};
    for (unsigned w = 0; w < job->n_slots; w++) {
        st.morsels += job->slots[w].morsels;
        st.steals += job->slots[w].steals;
        st.workers += job->slots[w].morsels > 0;
    }
    return st;
}

static void free_phase(phase *ph)
{
    free(ph->shares);
    free(ph->segs);
}

void eng_job_free(eng_job *job)
{
    if (!job) return;
    pthread_mutex_lock(&job->done_lock);
    int running = job->submitted && !job->complete;
    pthread_mutex_unlock(&job->done_lock);
    if (running) {
        eng_job_cancel(job);
        sto_status_free(eng_job_wait(job));
    }
    sto_status_free(job->status);
    for (unsigned i = 0; i < job->n_pipes; i++) {
        job_pipeline *p = &job->pipes[i];
        free(p->chunk_rows);
        free(p->chunk_nodes);
        free(p->deps);
        free_phase(&p->main);
        free_phase(&p->fin);
        free(p->states);
        free(p->done_states);
    }
    free(job->pipes);
    free(job->slots);
    pthread_cond_destroy(&job->done_cv);
    pthread_mutex_destroy(&job->done_lock);
    free(job);
}

void eng_sched_destroy(eng_sched *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    s->shutdown = 1;
    for (eng_job *j = s->jobs; j; j = j->next)
        if (!is_stopped(j))
            job_fail(j, sto_error(STO_QUERY_CANCELED, "canceling statement due to shutdown"));
    publish(s);
    while (s->jobs)
        pthread_cond_wait(&s->idle_cv, &s->lock);
    s->exit = 1;
    pthread_cond_broadcast(&s->work_cv);
    pthread_mutex_unlock(&s->lock);
    for (unsigned w = 0; w < s->started; w++)
        pthread_join(s->workers[w].thread, NULL);
    pthread_cond_destroy(&s->work_cv);
    pthread_cond_destroy(&s->idle_cv);
    pthread_mutex_destroy(&s->lock);
    for (unsigned w = 0; w < s->n; w++)
        free(s->workers[w].victims);
    free(s->workers);
    free(s->info);
    free(s->nodes);
    free(s);
}
