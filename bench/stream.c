/* STREAM-like triad for peridot_bench (stream.h). Counted bytes: 24 per element (two reads,
 * one write), as STREAM counts them; write-allocate traffic is not counted. */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "peridot/parallel.h"

#define STREAM_ELEMENTS (16u << 20) /* 128 MiB per array: far beyond any cache here */
#define STREAM_REPEATS  9

typedef struct triad_job {
    double *a, *b, *c;
    double s;
} triad_job;

static void triad_range(void* ctx, size_t begin, size_t end, int thread) {
    triad_job* j = ctx;
    for (size_t i = begin; i < end; ++i)
        j->a[i] = j->b[i] + j->s * j->c[i];
}

static void fill_range(void* ctx, size_t begin, size_t end, int thread) {
    triad_job* j = ctx; /* first touch by the thread that will stream the range */
    for (size_t i = begin; i < end; ++i)
        j->a[i] = 0, j->b[i] = 1, j->c[i] = 2;
}

static int compare(const void* x, const void* y) {
    double a = *(const double*)x, b = *(const double*)y;
    return (a > b) - (a < b);
}

void stream_run(int threads, stream_result* r) {
    memset(r, 0, sizeof *r);
    r->threads = threads;
    size_t n = STREAM_ELEMENTS, grain = n / 64;
    r->mib = (double)n * sizeof(double) / 1048576.0;
    /* plain malloc: bench scratch, outside the counted memory of the worlds it reports */
    triad_job j = {malloc(n * sizeof(double)), malloc(n * sizeof(double)),
                   malloc(n * sizeof(double)), 3.0};
    if (j.a && j.b && j.c) {
        pd_set_threads(threads);
        pd_parallel_for(n, grain, fill_range, &j);
        double gbs[STREAM_REPEATS];
        for (int k = 0; k < STREAM_REPEATS; ++k) {
            double t0 = pd_now();
            pd_parallel_for(n, grain, triad_range, &j);
            gbs[k] = 24.0 * (double)n / (pd_now() - t0) * 1e-9;
        }
        qsort(gbs, STREAM_REPEATS, sizeof gbs[0], compare);
        r->best = gbs[STREAM_REPEATS - 1];
        r->median = gbs[STREAM_REPEATS / 2];
        r->ok = j.a[n / 2] == 1 + 3.0 * 2; /* the loop ran (and was not optimised away) */
    }
    free(j.a);
    free(j.b);
    free(j.c);
}

void stream_print(FILE* f, const stream_result* r, int n) {
    fprintf(f, "\n%-13s %3s %10s %10s %10s\n", "stream", "thr", "MiB/array", "best_GB/s",
            "median_GB/s");
    for (int k = 0; k < n; ++k)
        fprintf(f, "%-13s %3d %10.0f %10.2f %10.2f%s\n", "stream_triad", r[k].threads, r[k].mib,
                r[k].best, r[k].median, r[k].ok ? "" : "  (failed)");
}

void stream_markdown(FILE* f, const stream_result* r, int n) {
    fprintf(f, "\n## Memory bandwidth: STREAM-like triad\n\n");
    fprintf(f,
            "a[i] = b[i] + 3 c[i] over three arrays of %.0f MiB, through pd_parallel_for; 24 "
            "bytes per element counted; %d repetitions.\n\n",
            n > 0 ? r[0].mib : 0.0, STREAM_REPEATS);
    fprintf(f, "| threads | best GB/s | median GB/s |\n|---:|---:|---:|\n");
    for (int k = 0; k < n; ++k)
        fprintf(f, "| %d | %.2f | %.2f |\n", r[k].threads, r[k].best, r[k].median);
}
