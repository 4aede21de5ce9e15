/* The `stream_triad` case of peridot_bench: the machine's memory bandwidth as the kernels see
 * it, a[i] = b[i] + s c[i] over arrays far larger than the caches, through pd_parallel_for
 * (McCalpin's STREAM triad; docs/benchmarks.md, "Roofline"). */
#ifndef PERIDOT_BENCH_STREAM_H
#define PERIDOT_BENCH_STREAM_H

#include <stdio.h>

typedef struct stream_result {
    int threads;
    double mib;    /* per array */
    double best;   /* GB/s (1e9 bytes), best of the repetitions */
    double median; /* GB/s */
    int ok;
} stream_result;

void stream_run(int threads, stream_result* out);
void stream_print(FILE* f, const stream_result* r, int n);
void stream_markdown(FILE* f, const stream_result* r, int n);

#endif
