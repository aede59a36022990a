/*
 * numa_alloc.c — node-local allocation of column arrays (see numa_alloc.h).
 *
 * With NUMA support, memory comes straight from mmap (zeroed, backed only
 * when touched) and gets a libnuma memory policy: "local" (a page goes to
 * the node of the thread that first writes it, which for a chunk is the
 * thread filling it) or a fixed node. Without NUMA support
 * (numa_available() < 0) the same calls fall back to 64-byte-aligned heap
 * memory, zeroed to keep the contract the same. The support check is libnuma's own (it caches it),
 * so this file keeps no state.
 */
#include "storage/numa_alloc.h"

#include <numa.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) & ~(to - 1);
}

/* Anonymous memory: zeroed, and backed page by page as it is written.
 *
 * Transparent huge pages (2 MiB-aligned regions, MADV_HUGEPAGE) were tried
 * twice for chunk regions and lost both times. The column arrays are
 * written and scanned sequentially, so huge pages save page-table work and
 * TLB misses that barely show (a sequential read of 512 MiB: no difference
 * beyond the noise), while on this virtual machine the 2 MiB blocks a huge
 * page needs are exactly what the guest hands back to the host as free
 * (virtio-balloon free page reporting, order 9 and up); touching one again
 * makes the host back it again, at a cost that looks like one host fault
 * per 4 KiB. Measured here (November 2026): 1 GiB populated in 4 KiB pages
 * took 0.5 to 0.7 s of system time every time, in huge pages 0.12 s when
 * the blocks had just been freed by another process and 0.6 to 2.9 s
 * otherwise; the whole in-memory SF 1 generation took 1.6 to 4.9 s of
 * system time instead of 0.8 to 0.9. Compaction was never the cost
 * (compact_stall stayed 0). See docs/tpch_gen.md, session 5. */
static void *map_region(size_t bytes)
{
    void *p = mmap(NULL, round_up(bytes, 4096), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *sto_numa_alloc_onnode(size_t bytes, int node)
{
    if (bytes == 0) bytes = 1;
    if (numa_available() < 0) {
        void *p = aligned_alloc(64, round_up(bytes, 64));
        if (p) memset(p, 0, bytes);
        return p;
    }
    void *p = map_region(bytes);
    if (!p) return NULL;
    size_t len = round_up(bytes, 4096);
    if (node < 0)
        numa_setlocal_memory(p, len);
    else
        numa_tonode_memory(p, len, node);
    return p;
}

void *sto_numa_alloc(size_t bytes)
{
    return sto_numa_alloc_onnode(bytes, -1);
}

void sto_numa_free(void *p, size_t bytes)
{
    if (!p) return;
    if (bytes == 0) bytes = 1;
    if (numa_available() < 0)
        free(p);
    else
        munmap(p, round_up(bytes, 4096));
}

int sto_numa_current_node(void)
{
    if (numa_available() < 0) return 0;
    int cpu = sched_getcpu();
    if (cpu < 0) return 0;
    int node = numa_node_of_cpu(cpu);
    return node < 0 ? 0 : node;
}
