/*
 * jit.h — turns cg_modules into machine code the engine can call.
 *
 * One cg_jit per engine instance wraps one ORC LLJIT, created once and used by
 * every query. Compiling a module goes:
 *
 *   cg_module (own LLVM context) → verify → IR passes of the mode (opt.h)
 *     → object code from a target machine of the mode → added to the JIT's
 *     main JITDylib under a ResourceTracker of its own → linked → addresses
 *
 * The JIT's own IR layer is not used: LLJIT compiles with one target machine
 * whose optimization level is fixed, and the C API cannot ask it for
 * concurrent compilation. Doing the code generation here lets each compile
 * pick its mode, measure each step, and run on the calling thread with a
 * target machine it has to itself (taken from a small pool), so compile
 * requests from many threads proceed in parallel; ORC's linking and symbol
 * tables are thread-safe. The module's LLVM context is freed as soon as its
 * object code exists, so only machine code outlives compilation.
 *
 * Each compiled module is a cg_code. cg_code_free() removes its resource
 * tracker, which unmaps its code and data and drops its symbols: memory stays
 * flat across any number of queries. Symbols of a module carry a JIT-wide
 * unique prefix, so modules of concurrent queries never clash. Runtime helper
 * names (cg_extern, cg_jit_bind) are defined once, engine-wide, as absolute
 * symbols. LLJIT also links the process's own exported symbols into its
 * main JITDylib (LLJITBuilder's default, which the C API cannot change), which
 * is where the calls LLVM's code generator emits by itself (memcpy, memset,
 * fmod, i128 division in libgcc) are resolved.
 *
 * With the cache (cg_jit_compile_cached), code is looked up by the text of
 * its module's IR, the module's own symbol prefix left out: the same text
 * is the same program, addresses it calls or reads included (they are
 * constants in the text), so the code compiled for it the first time is
 * shared, reference-counted, by every later request. The cache keeps
 * CG_CODE_CACHE_MAX entries and drops the least recently used first.
 *
 * Looking inside (read when the JIT is created): RACKDB_JIT_STATS=1 in the
 * environment makes every compile write its module's name and its
 * cg_compile_stats as one line to stderr; RACKDB_JIT_DUMP=dir writes every
 * module's IR, as built, to dir/<prefix>pipeline.<mode>.ll; RACKDB_PERF_MAP=1 writes the names and
 * address ranges of all generated functions to /tmp/perf-<pid>.map, where
 * perf finds them (perf_map.h); RACKDB_JIT_MODE=fast or =opt makes
 * cg_jit_mode() answer that mode for every pipeline, whatever the engine's
 * rule chose (to measure what the rule trades, engine/jit_cost.h);
 * RACKDB_JIT_LEAN_START=on or off switches the executor's lean adaptive
 * start (cg_jit_lean_start).
 *
 * The target is x86-64-v3 (AVX2, BMI2, FMA) unless native_cpu is asked for,
 * so the code runs anywhere the rest of rackdb (-march=x86-64-v3) runs,
 * valgrind included.
 */
#ifndef RACKDB_CODEGEN_JIT_H
#define RACKDB_CODEGEN_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/ir.h"
#include "codegen/opt.h"
#include "storage/status.h"

typedef struct cg_jit cg_jit;
typedef struct cg_code cg_code;

typedef struct cg_jit_options {
    bool native_cpu; /* compile for this machine's CPU instead of x86-64-v3 */
    /* Keep a perf map (perf_map.h) in this file; NULL: /tmp/perf-<pid>.map
     * when RACKDB_PERF_MAP=1 is in the environment, else none. */
    const char *perf_map_path;
} cg_jit_options;

/* Where a compile spent its time, in microseconds, and what it produced. */
typedef struct cg_compile_stats {
    cg_mode mode;
    unsigned ir_instructions; /* in the module as built, before any pass */
    size_t object_bytes;      /* size of the object file */
    int64_t verify_us;        /* IR verifier */
    int64_t optimize_us;      /* IR passes (0 in FAST) */
    int64_t codegen_us;       /* IR → object code */
    int64_t link_us;          /* object → callable code in memory */
    int64_t total_us;         /* all of the above and the bookkeeping */
    int64_t cpu_us;           /* the compiling thread's CPU time for total_us */
} cg_compile_stats;

/* Counters a test or a monitoring view can read. */
typedef struct cg_jit_counters {
    size_t live_code;            /* distinct compiled code objects not yet freed */
    uint64_t compiled;           /* modules compiled successfully, ever */
    size_t runtime_symbols;      /* names bound by cg_jit_bind / cg_extern */
    size_t idle_target_machines; /* pooled target machines, both modes */
    size_t cache_entries;        /* code objects the cache holds */
    uint64_t cache_hits, cache_misses;
} cg_jit_counters;

/* Code objects the cache keeps at most. */
#define CG_CODE_CACHE_MAX 128

/* Creates the engine's JIT; `options` may be NULL for the defaults. */
sto_status cg_jit_create(const cg_jit_options *options, cg_jit **out);

/* Destroys the JIT. Every cg_code must have been freed before; code still
 * live is unmapped anyway and reported as an error. */
sto_status cg_jit_destroy(cg_jit *jit);

/* Binds runtime helper `name` to `addr` for all code compiled from now on.
 * Binding a name again to the same address does nothing; to another address
 * is an error. Thread-safe. */
sto_status cg_jit_bind(cg_jit *jit, const char *name, void *addr);

/* Compiles `m` in `mode` and links it; *out is callable code. Consumes m, also
 * on error. Thread-safe: call it from any number of threads. */
sto_status cg_jit_compile(cg_jit *jit, cg_module *m, cg_mode mode, cg_code **out);

/* Like cg_jit_compile, but first looks for code compiled from the same IR in
 * the same mode and shares it (*hit = true); code it compiles is kept for
 * later requests. Each *out is freed with cg_code_free as usual. */
sto_status cg_jit_compile_cached(cg_jit *jit, cg_module *m, cg_mode mode, cg_code **out, bool *hit);

/* Empties the cache (code still in use stays until freed). */
void cg_jit_cache_clear(cg_jit *jit);

/* The mode to compile a pipeline in, given the one the engine's rule
 * chose: RACKDB_JIT_MODE's when it was set as the JIT was created. */
cg_mode cg_jit_mode(const cg_jit *jit, cg_mode chosen);

/* RACKDB_JIT_LEAN_START as the JIT was created: 1 for "on", 0 for "off",
 * -1 when unset (the engine's default). Switches the executor's adaptive
 * start without a spare core (engine/executor.c), for measurement. */
int cg_jit_lean_start(const cg_jit *jit);

/* The address of function `name` (as given to cg_fn_begin), NULL if none. */
void *cg_code_fn(const cg_code *code, const char *name);

/* How the compile of `code` went. */
const cg_compile_stats *cg_code_stats(const cg_code *code);

/* Drops the caller's reference; the last one unmaps the code and frees it
 * (the caller must be done calling into it). The reference is gone even
 * when an error is returned. */
sto_status cg_code_free(cg_code *code);

void cg_jit_get_counters(cg_jit *jit, cg_jit_counters *out);

/* The target CPU name and triple ("x86-64-v3", "x86_64-pc-linux-gnu"). */
const char *cg_jit_cpu(const cg_jit *jit);
const char *cg_jit_triple(const cg_jit *jit);

/* For cg_module_create: the data layout modules are built for, and a fresh
 * number for their symbol prefix. */
const char *cg_jit_data_layout(const cg_jit *jit);
uint64_t cg_jit_next_module_id(cg_jit *jit);

#endif
