/* The memory limits a process runs under (memory_limit.h). A scene refused by the physical
 * memory alone would still be killed by a container's cgroup or a shell's ulimit -v: the run
 * then dies mid-way, where a refusal up front costs nothing. */
#define _DEFAULT_SOURCE
#include "core/memory_limit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double physical_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 8e9;
}

/* The number in a cgroup file ("max", absent or unreadable: none, 0). */
static double read_limit_file(const char* path) {
    FILE* f = fopen(path, "r");
    if (!f)
        return 0;
    char text[64] = "";
    int got = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    if (!got || strncmp(text, "max", 3) == 0)
        return 0;
    char* end = NULL;
    double v = strtod(text, &end);
    /* cgroup v1 writes "no limit" as the largest page-aligned 64-bit number */
    return end != text && v > 0 && v < 1e18 ? v : 0;
}

/* The least limit in `file` from root/path up to root, 0 when none. */
static double least_along(const char* root, char* path, const char* file) {
    double least = 0;
    char full[4096];
    for (;;) {
        snprintf(full, sizeof full, "%s%s/%s", root, path, file);
        double v = read_limit_file(full);
        if (v > 0 && (least == 0 || v < least))
            least = v;
        char* slash = strrchr(path, '/');
        if (!slash || !path[0])
            return least;
        *slash = '\0';
    }
}

/* The cgroup's limit: v2 ("0::/path") or v1's memory controller ("N:...memory...:/path"). */
static double cgroup_limit(const char* proc_cgroup, const char* root) {
    FILE* f = fopen(proc_cgroup, "r");
    if (!f)
        return 0;
    char line[4096];
    double least = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char* first = strchr(line, ':');
        char* second = first ? strchr(first + 1, ':') : NULL;
        if (!second)
            continue;
        *first = *second = '\0'; /* line: the hierarchy's number */
        const char* controllers = first + 1;
        char path[2048];
        snprintf(path, sizeof path, "%s", strcmp(second + 1, "/") == 0 ? "" : second + 1);
        double v = 0;
        if (strncmp(line, "0", 2) == 0 && controllers[0] == '\0')
            v = least_along(root, path, "memory.max");
        else if (strstr(controllers, "memory")) {
            char v1_root[2048];
            snprintf(v1_root, sizeof v1_root, "%s/memory", root);
            v = least_along(v1_root, path, "memory.limit_in_bytes");
        }
        if (v > 0 && (least == 0 || v < least))
            least = v;
    }
    fclose(f);
    return least;
}

pd_memory_limit pd_memory_limit_read(const char* proc_cgroup, const char* cgroup_root) {
    pd_memory_limit m = {physical_memory(), "physical memory"};
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (double)rl.rlim_cur < m.bytes)
        m = (pd_memory_limit){(double)rl.rlim_cur, "ulimit -v"};
    double cg = cgroup_limit(proc_cgroup, cgroup_root);
    if (cg > 0 && cg < m.bytes)
        m = (pd_memory_limit){cg, "the cgroup's memory limit"};
    return m;
}
