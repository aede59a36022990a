/*
 * settings.h — per-session settings that SET, SHOW and RESET touch.
 *
 * ENG_SETTING_LIST names each setting once with its description; the
 * parser of each value, its printer and SHOW ALL all follow that list. A
 * session owns one eng_settings; a statement copies it at its start, so a
 * SET in one session never changes a query running in another.
 *
 *   threads         worker threads a query uses; 1..1024, default: the
 *                   cores this process may run on
 *   join_algorithm  auto | hash | radix | sortmerge (what the planner picks)
 *   memory_limit    '8GB', '512MB', '64KB', '1TB' (units of 1024) or a
 *                   percentage of physical memory; default 80%
 *   jit_compile_ahead  on | off: compile a query's later pipelines on the
 *                   compile pool's threads while earlier ones compile or
 *                   run (codegen/compile_pool.h); default on
 *   jit_cache       on | off: reuse the machine code of a pipeline whose IR
 *                   was compiled before (codegen/code_cache.h); default off
 */
#ifndef RACKDB_ENGINE_SETTINGS_H
#define RACKDB_ENGINE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/status.h"

/*  name            description */
#define ENG_SETTING_LIST(X)                                                                        \
    X(threads, "Worker threads a query uses (1..1024).")                                           \
    X(join_algorithm, "Join algorithm: auto, hash, radix or sortmerge.")                           \
    X(memory_limit, "Memory a query may use, e.g. '8GB', '512MB' or '80%'.")                       \
    X(jit_compile_ahead, "Compile later pipelines while earlier ones run: on or off.")             \
    X(jit_cache, "Reuse machine code compiled before from the same IR: on or off.")

typedef enum eng_join_algorithm {
    ENG_JOIN_AUTO,
    ENG_JOIN_HASH,
    ENG_JOIN_RADIX,
    ENG_JOIN_SORTMERGE,
} eng_join_algorithm;

typedef struct eng_settings {
    int threads;
    eng_join_algorithm join_algorithm;
    uint64_t memory_limit; /* bytes */
    bool jit_compile_ahead;
    bool jit_cache;
} eng_settings;

/* The defaults for this machine. */
void eng_settings_init(eng_settings *s);

/* Sets `name` (case-insensitive) from its text form. Unknown names fail with
 * 42704, bad values with 22023; `position` (0 = none) is put on the error. */
sto_status eng_settings_set(eng_settings *s, const char *name, const char *value, int position);

/* Back to the default (RESET name, SET name TO DEFAULT). */
sto_status eng_settings_reset(eng_settings *s, const char *name, int position);

/* The current value as SHOW prints it ("8", "hash", "12GB") into buf. */
sto_status eng_settings_get(const eng_settings *s, const char *name, char *buf, size_t size,
                            int position);

/* Settings in list order, for SHOW ALL. */
size_t eng_settings_count(void);
const char *eng_settings_name(size_t i);
const char *eng_settings_description(size_t i);

/* Text of a join algorithm ("radix"). */
const char *eng_join_algorithm_name(eng_join_algorithm a);

/* Default thread count: cores in this process's CPU affinity mask. */
int eng_default_threads(void);

/* Physical memory in bytes (0 when unknown). */
uint64_t eng_physical_memory(void);

#endif
