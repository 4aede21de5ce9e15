/* The memory this process may use: the least of the machine's physical memory, the address
 * space ulimit -v allows (RLIMIT_AS) and the memory its cgroup allows (v2 memory.max, or v1
 * memory.limit_in_bytes, along the cgroup's path up to the root), with which of them it is. */
#ifndef PD_MEMORY_LIMIT_H
#define PD_MEMORY_LIMIT_H

typedef struct pd_memory_limit {
    double bytes;
    const char* source; /* "physical memory", "ulimit -v" or "the cgroup's memory limit" */
} pd_memory_limit;

/* proc_cgroup and cgroup_root: "/proc/self/cgroup" and "/sys/fs/cgroup" (other paths for
 * tests). */
pd_memory_limit pd_memory_limit_read(const char* proc_cgroup, const char* cgroup_root);

#endif
