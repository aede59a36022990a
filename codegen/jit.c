/*
 * jit.c — the engine's JIT: one ORC LLJIT, per-mode target machines, and
 * per-module resource trackers (see jit.h for the design).
 */
#include "codegen/jit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "codegen/perf_map.h"

/* Idle target machines kept per mode; more compile at once create extra
 * ones and dispose of them afterwards. */
#define TM_POOL_MAX 8

/* ORC's symbol string pool keeps entries of removed code until asked to drop
 * them; every module adds unique names, so they are dropped this often. */
#define CLEAR_DEAD_SYMBOLS_EVERY 64

typedef struct binding {
    char *name;
    void *addr;
} binding;

/* One cached code object and the IR text it was compiled from. */
typedef struct cache_entry {
    uint64_t hash;
    char *key; /* malloc */
    size_t keylen;
    cg_code *code; /* the cache's reference */
    uint64_t last_used;
} cache_entry;

struct cg_jit {
    LLVMOrcLLJITRef lljit;
    LLVMOrcJITDylibRef main;
    LLVMTargetRef target;
    char *triple;      /* LLVMDisposeMessage */
    char *cpu;         /* LLVMDisposeMessage */
    char *features;    /* LLVMDisposeMessage */
    char *data_layout; /* malloc */

    pthread_mutex_t lock; /* guards the target machine pool and the bindings */
    LLVMTargetMachineRef idle[CG_MODE_COUNT][TM_POOL_MAX];
    size_t nidle[CG_MODE_COUNT];
    binding *bindings;
    size_t nbindings, capbindings;
    pthread_mutex_t error_lock; /* guards session_error */
    char session_error[256];    /* latest error ORC reported on its own */

    pthread_mutex_t cache_lock; /* guards the cache */
    cache_entry cache[CG_CODE_CACHE_MAX];
    size_t ncache;
    uint64_t cache_clock, cache_hits, cache_misses;

    /* RACKDB_JIT_STATS set when the JIT was made: one line per compile on
     * stderr (cg_compile_stats), to see where compile time goes */
    bool log_stats;
    /* RACKDB_JIT_DUMP=dir: every module's IR, as built, goes to
     * dir/<symbol>.<mode>.ll (malloc; NULL: not dumped) */
    char *dump_dir;
    /* RACKDB_PERF_MAP=1 or cg_jit_options.perf_map_path: names for the
     * generated functions in perf profiles (perf_map.h); NULL: none */
    cg_perf_map *perf_map;
    /* RACKDB_JIT_MODE=fast|opt: cg_jit_mode answers that mode, whatever
     * the engine's rule chose (to measure what the rule trades; -1: off) */
    int forced_mode;
    /* RACKDB_JIT_LEAN_START=on|off: cg_jit_lean_start (-1: not set) */
    int lean_start;

    atomic_uint_fast64_t next_module_id;
    atomic_size_t live_code;
    atomic_uint_fast64_t compiled;
    atomic_uint_fast64_t freed;
};

typedef struct code_fn {
    const char *name; /* points into the names block */
    void *addr;
} code_fn;

struct cg_code {
    cg_jit *jit;
    atomic_uint refs; /* holders: compilers' callers and the cache */
    LLVMOrcResourceTrackerRef tracker;
    cg_compile_stats stats;
    unsigned nfns;
    code_fn *fns;
    char *names;
};

/* LLVM's target registry is process-wide and its initializers are not
 * thread-safe; they run once (idempotent, so this is no mutable state). */
static pthread_once_t targets_once = PTHREAD_ONCE_INIT;
static int targets_failed;

static void init_targets(void)
{
    targets_failed = LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter();
}

static LLVMTargetMachineRef create_tm(const cg_jit *jit, cg_mode mode)
{
    LLVMTargetMachineOptionsRef o = LLVMCreateTargetMachineOptions();
    LLVMTargetMachineOptionsSetCPU(o, jit->cpu);
    LLVMTargetMachineOptionsSetFeatures(o, jit->features);
    LLVMTargetMachineOptionsSetCodeGenOptLevel(o, cg_mode_codegen_level(mode));
    /* What ORC's JITLink expects on ELF x86-64: calls to far helpers go
     * through stubs it builds. */
    LLVMTargetMachineOptionsSetRelocMode(o, LLVMRelocPIC);
    LLVMTargetMachineOptionsSetCodeModel(o, LLVMCodeModelSmall);
    LLVMTargetMachineRef tm = LLVMCreateTargetMachineWithOptions(jit->target, jit->triple, o);
    LLVMDisposeTargetMachineOptions(o);
    return tm;
}

static LLVMTargetMachineRef acquire_tm(cg_jit *jit, cg_mode mode)
{
    LLVMTargetMachineRef tm = NULL;
    pthread_mutex_lock(&jit->lock);
    if (jit->nidle[mode] > 0) tm = jit->idle[mode][--jit->nidle[mode]];
    pthread_mutex_unlock(&jit->lock);
    return tm ? tm : create_tm(jit, mode);
}

static void release_tm(cg_jit *jit, cg_mode mode, LLVMTargetMachineRef tm)
{
    pthread_mutex_lock(&jit->lock);
    if (jit->nidle[mode] < TM_POOL_MAX) {
        jit->idle[mode][jit->nidle[mode]++] = tm;
        tm = NULL;
    }
    pthread_mutex_unlock(&jit->lock);
    if (tm) LLVMDisposeTargetMachine(tm);
}

/* --- creation ----------------------------------------------------------- */

static char *copy_message(const char *s)
{
    /* Strings freed with LLVMDisposeMessage must come from LLVM. */
    return LLVMCreateMessage(s);
}

static sto_status choose_target(cg_jit *jit, const cg_jit_options *options)
{
    jit->triple = LLVMGetDefaultTargetTriple();
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(jit->triple, &jit->target, &msg)) {
        sto_status st = sto_error(STO_INTERNAL_ERROR, "codegen: no LLVM target for %s: %s",
                                  jit->triple, msg ? msg : "");
        LLVMDisposeMessage(msg);
        return st;
    }
    if (options && options->native_cpu) {
        jit->cpu = LLVMGetHostCPUName();
        jit->features = LLVMGetHostCPUFeatures();
    } else {
        bool x86_64 = strncmp(jit->triple, "x86_64", 6) == 0;
        jit->cpu = copy_message(x86_64 ? "x86-64-v3" : "generic");
        jit->features = copy_message("");
    }
    return STO_OK;
}

/* ORC reports link failures (the missing symbol's name) here rather than
 * in the failed lookup's error; keep the latest for that error's message.
 * Linking runs on the thread that looks up, so with concurrent failures the
 * text may belong to a neighbour: it is for humans only. */
static void report_session_error(void *ctx, LLVMErrorRef err)
{
    cg_jit *jit = ctx;
    char *msg = LLVMGetErrorMessage(err);
    pthread_mutex_lock(&jit->error_lock);
    snprintf(jit->session_error, sizeof(jit->session_error), "%s", msg ? msg : "");
    pthread_mutex_unlock(&jit->error_lock);
    LLVMDisposeErrorMessage(msg);
}

static sto_status create_lljit(cg_jit *jit)
{
    /* LLJIT compiles nothing itself here (jit.h), but its data layout and
     * linker settings follow this target machine. */
    LLVMTargetMachineRef tm = create_tm(jit, CG_MODE_OPT);
    if (!tm) return sto_error(STO_INTERNAL_ERROR, "codegen: cannot create a target machine");
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
    LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit->lljit, builder);
    if (err) {
        jit->lljit = NULL;
        return cg_llvm_error(err, "codegen: cannot create the JIT");
    }
    jit->main = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
    const char *dl = LLVMOrcLLJITGetDataLayoutStr(jit->lljit);
    jit->data_layout = malloc(strlen(dl) + 1);
    if (!jit->data_layout) return sto_error_oom();
    strcpy(jit->data_layout, dl);

    LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit->lljit),
                                            report_session_error, jit);
    return STO_OK;
}

/* Whether an environment switch is on: set, not empty and not "0". */
static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* The perf map, when asked for by the options or RACKDB_PERF_MAP. */
static sto_status open_perf_map(cg_jit *jit, const cg_jit_options *options)
{
    const char *path = options ? options->perf_map_path : NULL;
    char tmp[64];
    if (!path && env_on("RACKDB_PERF_MAP")) {
        /* where perf looks for the names of a process's JIT'd code */
        snprintf(tmp, sizeof(tmp), "/tmp/perf-%ld.map", (long)getpid());
        path = tmp;
    }
    return path ? cg_perf_map_open(path, &jit->perf_map) : STO_OK;
}

sto_status cg_jit_create(const cg_jit_options *options, cg_jit **out)
{
    *out = NULL;
    pthread_once(&targets_once, init_targets);
    if (targets_failed) return sto_error(STO_INTERNAL_ERROR, "codegen: LLVM has no native target");
    cg_jit *jit = calloc(1, sizeof(*jit));
    if (!jit) return sto_error_oom();
    if (pthread_mutex_init(&jit->lock, NULL) != 0) {
        free(jit);
        return sto_error(STO_INTERNAL_ERROR, "codegen: cannot create a mutex");
    }
    if (pthread_mutex_init(&jit->error_lock, NULL) != 0) {
        pthread_mutex_destroy(&jit->lock);
        free(jit);
        return sto_error(STO_INTERNAL_ERROR, "codegen: cannot create a mutex");
    }
    if (pthread_mutex_init(&jit->cache_lock, NULL) != 0) {
        pthread_mutex_destroy(&jit->error_lock);
        pthread_mutex_destroy(&jit->lock);
        free(jit);
        return sto_error(STO_INTERNAL_ERROR, "codegen: cannot create a mutex");
    }
    jit->log_stats = env_on("RACKDB_JIT_STATS");
    const char *dump = getenv("RACKDB_JIT_DUMP");
    if (dump && *dump) jit->dump_dir = strdup(dump); /* NULL: no dump */
    const char *forced = getenv("RACKDB_JIT_MODE");
    jit->forced_mode = -1;
    if (forced && strcmp(forced, "fast") == 0) jit->forced_mode = CG_MODE_FAST;
    if (forced && strcmp(forced, "opt") == 0) jit->forced_mode = CG_MODE_OPT;
    const char *lean = getenv("RACKDB_JIT_LEAN_START");
    jit->lean_start = -1;
    if (lean && strcmp(lean, "on") == 0) jit->lean_start = 1;
    if (lean && strcmp(lean, "off") == 0) jit->lean_start = 0;
    atomic_init(&jit->next_module_id, 1);
    atomic_init(&jit->live_code, 0);
    atomic_init(&jit->compiled, 0);
    atomic_init(&jit->freed, 0);
    sto_status st = choose_target(jit, options);
    if (!st) st = create_lljit(jit);
    if (!st) st = open_perf_map(jit, options);
    if (st) {
        sto_status_free(cg_jit_destroy(jit));
        return st;
    }
    *out = jit;
    return STO_OK;
}

sto_status cg_jit_destroy(cg_jit *jit)
{
    if (!jit) return STO_OK;
    sto_status st = STO_OK;
    cg_jit_cache_clear(jit);
    size_t live = atomic_load(&jit->live_code);
    if (live)
        st = sto_error(STO_INTERNAL_ERROR, "codegen: JIT destroyed with %zu compiled modules live",
                       live);
    if (jit->lljit) {
        LLVMErrorRef err = LLVMOrcDisposeLLJIT(jit->lljit);
        if (err) {
            sto_status e = cg_llvm_error(err, "codegen: disposing the JIT");
            if (st)
                sto_status_free(e);
            else
                st = e;
        }
    }
    for (int mode = 0; mode < CG_MODE_COUNT; mode++)
        for (size_t i = 0; i < jit->nidle[mode]; i++)
            LLVMDisposeTargetMachine(jit->idle[mode][i]);
    for (size_t i = 0; i < jit->nbindings; i++)
        free(jit->bindings[i].name);
    free(jit->bindings);
    LLVMDisposeMessage(jit->triple);
    LLVMDisposeMessage(jit->cpu);
    LLVMDisposeMessage(jit->features);
    free(jit->data_layout);
    free(jit->dump_dir);
    cg_perf_map_close(jit->perf_map);
    pthread_mutex_destroy(&jit->lock);
    pthread_mutex_destroy(&jit->error_lock);
    pthread_mutex_destroy(&jit->cache_lock);
    free(jit);
    return st;
}

const char *cg_jit_cpu(const cg_jit *jit)
{
    return jit->cpu;
}

const char *cg_jit_triple(const cg_jit *jit)
{
    return jit->triple;
}

const char *cg_jit_data_layout(const cg_jit *jit)
{
    return jit->data_layout;
}

uint64_t cg_jit_next_module_id(cg_jit *jit)
{
    return atomic_fetch_add(&jit->next_module_id, 1);
}

void cg_jit_get_counters(cg_jit *jit, cg_jit_counters *out)
{
    pthread_mutex_lock(&jit->lock);
    out->runtime_symbols = jit->nbindings;
    out->idle_target_machines = jit->nidle[CG_MODE_FAST] + jit->nidle[CG_MODE_OPT];
    pthread_mutex_unlock(&jit->lock);
    out->live_code = atomic_load(&jit->live_code);
    out->compiled = atomic_load(&jit->compiled);
    pthread_mutex_lock(&jit->cache_lock);
    out->cache_entries = jit->ncache;
    out->cache_hits = jit->cache_hits;
    out->cache_misses = jit->cache_misses;
    pthread_mutex_unlock(&jit->cache_lock);
}

/* --- runtime symbols ---------------------------------------------------- */

/* Defines name = addr in the main JITDylib, once. Caller holds jit->lock. */
static sto_status bind_locked(cg_jit *jit, const char *name, void *addr)
{
    for (size_t i = 0; i < jit->nbindings; i++) {
        if (strcmp(jit->bindings[i].name, name) != 0) continue;
        if (jit->bindings[i].addr == addr) return STO_OK;
        return sto_error(STO_INTERNAL_ERROR,
                         "codegen: runtime symbol %s is already bound to another address", name);
    }
    if (jit->nbindings == jit->capbindings) {
        size_t cap = jit->capbindings ? jit->capbindings * 2 : 32;
        binding *b = realloc(jit->bindings, cap * sizeof(*b));
        if (!b) return sto_error_oom();
        jit->bindings = b;
        jit->capbindings = cap;
    }
    size_t len = strlen(name) + 1;
    char *copy = malloc(len);
    if (!copy) return sto_error_oom();
    memcpy(copy, name, len);

    LLVMOrcCSymbolMapPair pair = {
        .Name = LLVMOrcLLJITMangleAndIntern(jit->lljit, name), /* owned by the MU */
        .Sym = {.Address = (LLVMOrcExecutorAddress)(uintptr_t)addr,
                .Flags = {.GenericFlags =
                              LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable,
                          .TargetFlags = 0}},
    };
    LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(&pair, 1);
    LLVMErrorRef err = LLVMOrcJITDylibDefine(jit->main, mu);
    if (err) {
        LLVMOrcDisposeMaterializationUnit(mu);
        free(copy);
        return sto_status_wrap(cg_llvm_error(err, "defining the symbol"), "codegen: cannot bind %s",
                               name);
    }
    jit->bindings[jit->nbindings++] = (binding){copy, addr};
    return STO_OK;
}

sto_status cg_jit_bind(cg_jit *jit, const char *name, void *addr)
{
    pthread_mutex_lock(&jit->lock);
    sto_status st = bind_locked(jit, name, addr);
    pthread_mutex_unlock(&jit->lock);
    return st;
}

/* --- compiling ---------------------------------------------------------- */

static unsigned count_instructions(LLVMModuleRef mod)
{
    unsigned n = 0;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
                n++;
    return n;
}

/* The new code object with the module's function names copied (the module
 * is gone once its object code exists). */
static sto_status new_code(cg_jit *jit, const cg_module *m, cg_code **out)
{
    unsigned n = cg_module_fn_count(m);
    size_t bytes = 0;
    for (unsigned i = 0; i < n; i++)
        bytes += strlen(cg_module_fn_name(m, i)) + 1;
    cg_code *code = calloc(1, sizeof(*code));
    if (!code) return sto_error_oom();
    code->fns = calloc(n ? n : 1, sizeof(*code->fns));
    code->names = malloc(bytes ? bytes : 1);
    if (!code->fns || !code->names) {
        free(code->fns);
        free(code->names);
        free(code);
        return sto_error_oom();
    }
    code->jit = jit;
    code->nfns = n;
    char *p = code->names;
    for (unsigned i = 0; i < n; i++) {
        size_t len = strlen(cg_module_fn_name(m, i)) + 1;
        memcpy(p, cg_module_fn_name(m, i), len);
        code->fns[i].name = p;
        p += len;
    }
    *out = code;
    return STO_OK;
}

static void free_code_memory(cg_code *code)
{
    free(code->fns);
    free(code->names);
    free(code);
}

/* IR → object code: verify, passes, code generation. */
static sto_status emit_object(cg_jit *jit, cg_module *m, cg_mode mode, cg_compile_stats *stats,
                              LLVMMemoryBufferRef *obj)
{
    LLVMModuleRef mod = cg_module_llvm(m);
    int64_t t0 = cg_clock_us();
    char *msg = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        sto_status st = sto_error(STO_INTERNAL_ERROR, "codegen: invalid IR: %s", msg);
        LLVMDisposeMessage(msg);
        return st;
    }
    LLVMDisposeMessage(msg);
    msg = NULL;
    int64_t t1 = cg_clock_us();
    stats->verify_us = t1 - t0;

    LLVMTargetMachineRef tm = acquire_tm(jit, mode);
    if (!tm) return sto_error(STO_INTERNAL_ERROR, "codegen: cannot create a target machine");
    sto_status st = cg_run_passes(mod, tm, mode, &stats->optimize_us);
    int64_t t2 = cg_clock_us();
    if (!st && LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &msg, obj)) {
        st = sto_error(STO_INTERNAL_ERROR, "codegen: code generation failed: %s", msg ? msg : "");
        *obj = NULL;
    }
    LLVMDisposeMessage(msg);
    release_tm(jit, mode, tm);
    stats->codegen_us = cg_clock_us() - t2;
    if (*obj) stats->object_bytes = LLVMGetBufferSize(*obj);
    return st;
}

/* Binds the module's helpers before its object is linked against them. */
static sto_status bind_externs(cg_jit *jit, const cg_module *m)
{
    sto_status st = STO_OK;
    pthread_mutex_lock(&jit->lock);
    for (unsigned i = 0; !st && i < cg_module_extern_count(m); i++)
        st = bind_locked(jit, cg_module_extern_name(m, i), cg_module_extern_addr(m, i));
    pthread_mutex_unlock(&jit->lock);
    return st;
}

/* Adds the object under a tracker of its own and looks up (which links) the
 * module's functions. Takes over obj. */
static sto_status link_object(cg_jit *jit, const cg_module *m, LLVMMemoryBufferRef obj,
                              cg_code *code)
{
    code->tracker = LLVMOrcJITDylibCreateResourceTracker(jit->main);
    LLVMErrorRef err = LLVMOrcLLJITAddObjectFileWithRT(jit->lljit, code->tracker, obj);
    if (err) return cg_llvm_error(err, "codegen: cannot add object code");
    for (unsigned i = 0; i < code->nfns; i++) {
        LLVMOrcExecutorAddress addr = 0;
        err = LLVMOrcLLJITLookup(jit->lljit, &addr, cg_module_fn_symbol(m, i));
        if (err) {
            char detail[sizeof(jit->session_error)];
            pthread_mutex_lock(&jit->error_lock);
            memcpy(detail, jit->session_error, sizeof(detail));
            pthread_mutex_unlock(&jit->error_lock);
            return sto_status_wrap(cg_llvm_error(err, detail),
                                   "codegen: cannot link generated code");
        }
        code->fns[i].addr = (void *)(uintptr_t)addr;
    }
    return STO_OK;
}

/* Drops a code object's tracker: its machine code, data and symbols. */
static sto_status remove_tracker(cg_jit *jit, LLVMOrcResourceTrackerRef tracker)
{
    if (!tracker) return STO_OK;
    LLVMErrorRef err = LLVMOrcResourceTrackerRemove(tracker);
    LLVMOrcReleaseResourceTracker(tracker);
    if (atomic_fetch_add(&jit->freed, 1) % CLEAR_DEAD_SYMBOLS_EVERY == CLEAR_DEAD_SYMBOLS_EVERY - 1)
        LLVMOrcSymbolStringPoolClearDeadEntries(LLVMOrcExecutionSessionGetSymbolStringPool(
            LLVMOrcLLJITGetExecutionSession(jit->lljit)));
    return err ? cg_llvm_error(err, "codegen: cannot free generated code") : STO_OK;
}

/* Writes m's IR for RACKDB_JIT_DUMP; a failure only loses the dump. */
static void dump_module(const cg_jit *jit, cg_module *m, cg_mode mode)
{
    const char *fn = cg_module_fn_count(m) ? cg_module_fn_symbol(m, 0) : "module";
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.%s.ll", jit->dump_dir, fn, cg_mode_name(mode));
    char *msg = NULL;
    LLVMPrintModuleToFile(cg_module_llvm(m), path, &msg);
    LLVMDisposeMessage(msg);
}

/* One line for RACKDB_JIT_STATS, written whole (a single fprintf), so
 * that compiles on several threads do not mix their lines. */
static void log_compile(const cg_compile_stats *s, const char *module)
{
    fprintf(stderr,
            "jit: %s %s ir %u obj %zu verify %lld passes %lld codegen %lld link %lld total %lld "
            "cpu %lld us\n",
            module, cg_mode_name(s->mode), s->ir_instructions, s->object_bytes,
            (long long)s->verify_us, (long long)s->optimize_us, (long long)s->codegen_us,
            (long long)s->link_us, (long long)s->total_us, (long long)s->cpu_us);
}

/* For the perf map: the sizes of m's functions in obj (malloc; NULL when
 * there is no map or no memory, which only loses the map's lines). */
static uint64_t *perf_sizes(const cg_jit *jit, const cg_module *m, LLVMMemoryBufferRef obj)
{
    unsigned n = cg_module_fn_count(m);
    if (!jit->perf_map || !obj || n == 0) return NULL;
    uint64_t *sizes = malloc(n * sizeof(*sizes));
    const char **symbols = malloc(n * sizeof(*symbols));
    if (sizes && symbols) {
        for (unsigned i = 0; i < n; i++)
            symbols[i] = cg_module_fn_symbol(m, i);
        cg_perf_map_sizes(obj, n, symbols, sizes);
    }
    free(symbols);
    if (!symbols) {
        free(sizes);
        return NULL;
    }
    return sizes;
}

/* One perf map line per function of the linked code. */
static void perf_write(cg_jit *jit, const cg_code *code, const char *module, cg_mode mode,
                       const uint64_t *sizes)
{
    for (unsigned i = 0; sizes && i < code->nfns; i++) {
        char name[256];
        if (strcmp(code->fns[i].name, "pipeline") == 0)
            snprintf(name, sizeof(name), "rackdb_%s_%s", module, cg_mode_name(mode));
        else
            snprintf(name, sizeof(name), "rackdb_%s_%s_%s", module, code->fns[i].name,
                     cg_mode_name(mode));
        cg_perf_map_write(jit->perf_map, code->fns[i].addr, sizes[i], name);
    }
}

sto_status cg_jit_compile(cg_jit *jit, cg_module *m, cg_mode mode, cg_code **out)
{
    *out = NULL;
    if (cg_module_jit(m) != jit) {
        cg_module_destroy(m);
        return sto_error(STO_INTERNAL_ERROR, "codegen: module was built for another JIT");
    }
    int64_t start = cg_clock_us(), cpu_start = cg_thread_cpu_us();
    cg_code *code = NULL;
    sto_status st = new_code(jit, m, &code);
    if (st) {
        cg_module_destroy(m);
        return st;
    }
    code->stats.mode = mode;
    code->stats.ir_instructions = count_instructions(cg_module_llvm(m));

    if (jit->dump_dir) dump_module(jit, m, mode);
    char module[64] = "";
    if (jit->perf_map || jit->log_stats) {
        size_t len = 0;
        const char *id = LLVMGetModuleIdentifier(cg_module_llvm(m), &len);
        snprintf(module, sizeof(module), "%.*s", (int)len, id);
    }
    LLVMMemoryBufferRef obj = NULL;
    st = emit_object(jit, m, mode, &code->stats, &obj);
    /* The IR is not needed any more: free its context before linking. */
    cg_module_drop_ir(m);
    uint64_t *sizes = st ? NULL : perf_sizes(jit, m, obj);
    if (!st) st = bind_externs(jit, m);
    int64_t t_link = cg_clock_us();
    if (!st) {
        st = link_object(jit, m, obj, code);
        obj = NULL;
    }
    code->stats.link_us = cg_clock_us() - t_link;
    if (obj) LLVMDisposeMemoryBuffer(obj);
    cg_module_destroy(m);
    if (!st) perf_write(jit, code, module, mode, sizes);
    free(sizes);
    if (st) {
        sto_status_free(remove_tracker(jit, code->tracker));
        free_code_memory(code);
        return st;
    }
    code->stats.total_us = cg_clock_us() - start;
    code->stats.cpu_us = cg_thread_cpu_us() - cpu_start;
    if (jit->log_stats) log_compile(&code->stats, module);
    atomic_init(&code->refs, 1);
    atomic_fetch_add(&jit->live_code, 1);
    atomic_fetch_add(&jit->compiled, 1);
    *out = code;
    return STO_OK;
}

cg_mode cg_jit_mode(const cg_jit *jit, cg_mode chosen)
{
    return jit->forced_mode >= 0 ? (cg_mode)jit->forced_mode : chosen;
}

int cg_jit_lean_start(const cg_jit *jit)
{
    return jit->lean_start;
}

void *cg_code_fn(const cg_code *code, const char *name)
{
    for (unsigned i = 0; i < code->nfns; i++)
        if (strcmp(code->fns[i].name, name) == 0) return code->fns[i].addr;
    return NULL;
}

const cg_compile_stats *cg_code_stats(const cg_code *code)
{
    return &code->stats;
}

sto_status cg_code_free(cg_code *code)
{
    if (!code) return STO_OK;
    if (atomic_fetch_sub(&code->refs, 1) > 1) return STO_OK;
    cg_jit *jit = code->jit;
    sto_status st = remove_tracker(jit, code->tracker);
    free_code_memory(code);
    atomic_fetch_sub(&jit->live_code, 1);
    return st;
}

/* --- the code cache ------------------------------------------------------ */

/* The cache's key: the mode and the module's IR text with the module's own
 * symbol prefix ("@cg17_pipeline" → "@pipeline") and its name (the
 * "; ModuleID" and source_filename lines) cut out, so that two modules
 * built alike have the same key. malloc'd; NULL when out of memory. */
static char *cache_key(cg_module *m, cg_mode mode, size_t *len)
{
    char *text = LLVMPrintModuleToString(cg_module_llvm(m));
    if (!text) return NULL;
    const char *fn = cg_module_fn_count(m) ? cg_module_fn_symbol(m, 0) : "";
    const char *name = cg_module_fn_count(m) ? cg_module_fn_name(m, 0) : "";
    size_t plen = strlen(fn) - strlen(name); /* the prefix: "cg17_" */
    size_t n = strlen(text);
    char *key = malloc(n + 8);
    if (key) {
        char *w = key;
        w += sprintf(w, "%s\n", cg_mode_name(mode));
        const char *r = text;
        /* the name: the first two lines */
        for (int skip = 0; skip < 2 && (strncmp(r, "; ModuleID", 10) == 0 ||
                                        strncmp(r, "source_filename", 15) == 0);
             skip++) {
            const char *nl = strchr(r, '\n');
            r = nl ? nl + 1 : r + strlen(r);
        }
        while (*r) {
            if (plen && r[0] == '@' && strncmp(r + 1, fn, plen) == 0) {
                *w++ = '@';
                r += 1 + plen;
            } else {
                *w++ = *r++;
            }
        }
        *w = '\0';
        *len = (size_t)(w - key);
    }
    LLVMDisposeMessage(text);
    return key;
}

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* A new reference to the cached code for key, or NULL. */
static cg_code *cache_find(cg_jit *jit, uint64_t hash, const char *key, size_t len)
{
    cg_code *code = NULL;
    pthread_mutex_lock(&jit->cache_lock);
    for (size_t i = 0; i < jit->ncache && !code; i++) {
        cache_entry *e = &jit->cache[i];
        if (e->hash != hash || e->keylen != len || memcmp(e->key, key, len) != 0) continue;
        e->last_used = ++jit->cache_clock;
        atomic_fetch_add(&e->code->refs, 1);
        code = e->code;
    }
    if (code)
        jit->cache_hits++;
    else
        jit->cache_misses++;
    pthread_mutex_unlock(&jit->cache_lock);
    return code;
}

/* Keeps code under key (taking over key), evicting the least recently used
 * entry when full; *evicted is the reference to drop, if any. When another
 * compile put the same key in first, key is freed and nothing changes. */
static void cache_put(cg_jit *jit, uint64_t hash, char *key, size_t len, cg_code *code,
                      cg_code **evicted)
{
    *evicted = NULL;
    pthread_mutex_lock(&jit->cache_lock);
    for (size_t i = 0; i < jit->ncache; i++) {
        cache_entry *e = &jit->cache[i];
        if (e->hash == hash && e->keylen == len && memcmp(e->key, key, len) == 0) {
            pthread_mutex_unlock(&jit->cache_lock);
            free(key);
            return;
        }
    }
    size_t slot = jit->ncache;
    if (slot == CG_CODE_CACHE_MAX) {
        slot = 0;
        for (size_t i = 1; i < jit->ncache; i++)
            if (jit->cache[i].last_used < jit->cache[slot].last_used) slot = i;
        *evicted = jit->cache[slot].code;
        free(jit->cache[slot].key);
    } else {
        jit->ncache++;
    }
    atomic_fetch_add(&code->refs, 1);
    jit->cache[slot] = (cache_entry){hash, key, len, code, ++jit->cache_clock};
    pthread_mutex_unlock(&jit->cache_lock);
}

sto_status cg_jit_compile_cached(cg_jit *jit, cg_module *m, cg_mode mode, cg_code **out, bool *hit)
{
    *out = NULL;
    *hit = false;
    size_t len = 0;
    char *key = cg_module_jit(m) == jit ? cache_key(m, mode, &len) : NULL;
    if (!key) return cg_jit_compile(jit, m, mode, out); /* uncached, or its error */
    uint64_t hash = hash_bytes(key, len);
    cg_code *code = cache_find(jit, hash, key, len);
    if (code) {
        free(key);
        cg_module_destroy(m);
        *hit = true;
        *out = code;
        return STO_OK;
    }
    sto_status st = cg_jit_compile(jit, m, mode, &code);
    if (st) {
        free(key);
        return st;
    }
    cg_code *evicted = NULL;
    cache_put(jit, hash, key, len, code, &evicted);
    sto_status_free(cg_code_free(evicted));
    *out = code;
    return STO_OK;
}

void cg_jit_cache_clear(cg_jit *jit)
{
    pthread_mutex_lock(&jit->cache_lock);
    size_t n = jit->ncache;
    cache_entry entries[CG_CODE_CACHE_MAX];
    memcpy(entries, jit->cache, n * sizeof(entries[0]));
    jit->ncache = 0;
    pthread_mutex_unlock(&jit->cache_lock);
    for (size_t i = 0; i < n; i++) {
        free(entries[i].key);
        sto_status_free(cg_code_free(entries[i].code));
    }
}
