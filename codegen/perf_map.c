/*
 * perf_map.c — the perf map file for generated code (see perf_map.h).
 */
#include "codegen/perf_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/Object.h>

struct cg_perf_map {
    int fd;
};

sto_status cg_perf_map_open(const char *path, cg_perf_map **out)
{
    *out = NULL;
    cg_perf_map *map = malloc(sizeof(*map));
    if (!map) return sto_error_oom();
    /* O_APPEND: every line lands whole at the end, whoever else writes */
    map->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (map->fd < 0) {
        int e = errno;
        free(map);
        return sto_error(STO_IO_ERROR, "codegen: cannot open the perf map %s: %s", path,
                         strerror(e));
    }
    *out = map;
    return STO_OK;
}

void cg_perf_map_close(cg_perf_map *map)
{
    if (!map) return;
    close(map->fd);
    free(map);
}

void cg_perf_map_sizes(LLVMMemoryBufferRef obj, unsigned n, const char *const *symbols,
                       uint64_t *sizes)
{
    memset(sizes, 0, n * sizeof(*sizes));
    char *msg = NULL;
    LLVMBinaryRef bin = LLVMCreateBinary(obj, NULL, &msg);
    LLVMDisposeMessage(msg);
    if (!bin) return;
    LLVMSymbolIteratorRef it = LLVMObjectFileCopySymbolIterator(bin);
    for (; it && !LLVMObjectFileIsSymbolIteratorAtEnd(bin, it); LLVMMoveToNextSymbol(it)) {
        const char *name = LLVMGetSymbolName(it);
        if (!name) continue;
        for (unsigned i = 0; i < n; i++)
            if (strcmp(name, symbols[i]) == 0) sizes[i] = LLVMGetSymbolSize(it);
    }
    if (it) LLVMDisposeSymbolIterator(it);
    LLVMDisposeBinary(bin);
}

void cg_perf_map_write(cg_perf_map *map, const void *addr, uint64_t size, const char *name)
{
    char line[512];
    int len = snprintf(line, sizeof(line), "%llx %llx %s\n", (unsigned long long)(uintptr_t)addr,
                       (unsigned long long)size, name);
    if (len <= 0) return;
    if ((size_t)len >= sizeof(line)) {
        len = (int)sizeof(line) - 1;
        line[len - 1] = '\n';
    }
    ssize_t w = write(map->fd, line, (size_t)len);
    (void)w;
}
