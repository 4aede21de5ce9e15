/* Threads: the one place Peridot runs loops in parallel (OpenMP underneath). Work is split into
 * fixed, contiguous ranges that depend only on n and grain, never on timing, so a kernel that
 * writes only its own range gives the same bytes whatever the scheduling. */
#ifndef PERIDOT_PARALLEL_H
#define PERIDOT_PARALLEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void pd_range_fn(void* ctx, size_t begin, size_t end, int thread);

/* Calls fn(ctx, begin, end, thread) over [0, n) in chunks of `grain` (>= 1). */
void pd_parallel_for(size_t n, size_t grain, pd_range_fn* fn, void* ctx);

void pd_set_threads(int threads); /* 0: OpenMP's default */
int pd_thread_count(void);

/* For a program's main, before anything else: re-executes the program once with
 * OMP_WAIT_POLICY=PASSIVE unless the user set a policy. Threads that spin while waiting steal
 * the cores from each other and from anything else running, and count as CPU time. Returns
 * only when the policy was already set or the re-execution failed (then nothing changed). */
void pd_prefer_passive_waiting(char** argv);

/* Monotonic wall clock in seconds. */
double pd_now(void);

#ifdef __cplusplus
}
#endif

#endif
