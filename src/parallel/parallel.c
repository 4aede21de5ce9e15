#define _POSIX_C_SOURCE 200809L /* setenv, execv */

#include "parallel/parallel.h"

#include <omp.h>
#include <stdlib.h>
#include <unistd.h>

void pd_parallel_for(size_t n, size_t grain, pd_range_fn* fn, void* ctx) {
    if (n == 0)
        return;
    if (grain == 0)
        grain = 1;
    long chunks = (long)((n + grain - 1) / grain);
    /* The chunks are the same whether they run on one thread or many, so a kernel that
     * reduces per chunk gives the same bytes for any thread count. Small loops stay serial:
     * waking the team costs more than they do. */
    if (chunks < 4 || omp_get_max_threads() == 1) {
        for (long c = 0; c < chunks; ++c) {
            size_t begin = (size_t)c * grain;
            fn(ctx, begin, begin + grain < n ? begin + grain : n, 0);
        }
        return;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (long c = 0; c < chunks; ++c) {
        size_t begin = (size_t)c * grain;
        size_t end = begin + grain < n ? begin + grain : n;
        fn(ctx, begin, end, omp_get_thread_num());
    }
}

void pd_set_threads(int threads) {
    if (threads > 0)
        omp_set_num_threads(threads);
}

int pd_thread_count(void) {
    return omp_get_max_threads();
}

/* Measured: 6 demo frames took 52 s with spinning threads on a loaded 2-core machine, 3.8 s
 * with passive waiting; an 8K xpbi bench case on 2 threads burned 8.6 x the 1-thread CPU. The
 * policy is read when the OpenMP runtime loads, before main, hence the re-execution. */
void pd_prefer_passive_waiting(char** argv) {
    if (getenv("OMP_WAIT_POLICY"))
        return;
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv); /* returns only on failure: then carry on as we are */
}
