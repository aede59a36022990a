/*
 * perf_map.h — names for generated code in `perf` profiles.
 *
 * perf sees JIT'd machine code as anonymous memory and reports its samples
 * as bare addresses. For such code it reads /tmp/perf-<pid>.map, one line
 * per function: "<start hex> <size hex> <name>". With RACKDB_PERF_MAP=1 in
 * the environment the JIT (jit.h) keeps that file for its process: after
 * linking a module it reads each function's size from the module's object
 * code and appends one line per function with its address, named
 * rackdb_<module>_<mode> (a pipeline module is named p<pipeline number>), or
 * rackdb_<module>_<function>_<mode> for functions other than "pipeline".
 *
 *   object code → cg_perf_map_sizes() → link → addresses
 *     → cg_perf_map_write() per function → the map file
 *
 * The file is only appended to: code that is freed keeps its lines, and a
 * later module mapped at the same addresses adds lines that overlap them,
 * so in a process running many queries perf may credit a sample to an
 * earlier query's function. Profile one query per process for exact names.
 */
#ifndef RACKDB_CODEGEN_PERF_MAP_H
#define RACKDB_CODEGEN_PERF_MAP_H

#include <stdint.h>

#include <llvm-c/Types.h>

#include "storage/status.h"

typedef struct cg_perf_map cg_perf_map;

/* Opens (creating or appending to) the map file at `path`. */
sto_status cg_perf_map_open(const char *path, cg_perf_map **out);

/* Closes the file. NULL-safe. */
void cg_perf_map_close(cg_perf_map *map);

/* For each of the n symbols, the size in bytes of the function the object
 * code `obj` defines under that name, 0 when it defines none. */
void cg_perf_map_sizes(LLVMMemoryBufferRef obj, unsigned n, const char *const *symbols,
                       uint64_t *sizes);

/* Appends one line for code at [addr, addr + size) named `name`, in one
 * write, so that JITs on several threads do not mix their lines. A failed
 * write only loses the line. */
void cg_perf_map_write(cg_perf_map *map, const void *addr, uint64_t size, const char *name);

#endif
