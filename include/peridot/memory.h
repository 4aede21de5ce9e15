/* Memory: what the library has allocated, a hook to replace its allocator, and what this
 * process may use (for estimates before a long build). */
#ifndef PERIDOT_MEMORY_H
#define PERIDOT_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes the library holds now, and the most it held at once since the process started. */
size_t pd_bytes_in_use(void);
size_t pd_peak_bytes(void);

/* Replaces malloc/free for every allocation the library makes (before any is made). */
typedef void* (*pd_alloc_fn)(size_t bytes);
typedef void (*pd_free_fn)(void* p);
void pd_set_allocator(pd_alloc_fn alloc_fn, pd_free_fn free_fn);

/* The memory this process may use: the least of the machine's physical memory, the address
 * space ulimit -v allows (RLIMIT_AS) and the memory its cgroup allows (v2 memory.max, or v1
 * memory.limit_in_bytes, along the cgroup's path up to the root), with which of them it is. */
typedef struct pd_memory_limit {
    double bytes;
    const char* source; /* "physical memory", "ulimit -v" or "the cgroup's memory limit" */
} pd_memory_limit;

/* proc_cgroup and cgroup_root: "/proc/self/cgroup" and "/sys/fs/cgroup" (other paths for
 * tests). */
pd_memory_limit pd_memory_limit_read(const char* proc_cgroup, const char* cgroup_root);

#ifdef __cplusplus
}
#endif

#endif
