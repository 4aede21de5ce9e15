/* The `peers_cantilever` case of peridot_bench: time to solution on a stiff cantilever, implicit
 * projective_pd against explicit peridynamics (LAMMPS peri/lps, sbpd) at their stable steps
 * (issue 36 item 3; docs/benchmarks.md, "Time to solution against explicit peers"). */
#ifndef PERIDOT_BENCH_CANTILEVER_H
#define PERIDOT_BENCH_CANTILEVER_H

#include <stdio.h>

#define CANTILEVER_MAX_RUNS 12

/* One run of the beam to 1 s of simulated time. */
typedef struct cantilever_run {
    char who[40];      /* "lammps peri/lps", "sbpd", "projective_pd accurate", ... */
    int ran;           /* 0: skipped or failed (see note) */
    double dt;         /* s */
    long steps;        /* to 1 s */
    double wall_s;     /* world creation and every step (LAMMPS: the whole process) */
    double cpu_s;      /* CPU time of the same (all threads; LAMMPS: its processes) */
    double iterations; /* mean iterations a step (implicit), passes (sbpd), 1 (LAMMPS) */
    double sag;        /* static tip sag (m): Aitken's extrapolation of the last three extrema */
    int extrema;       /* extrema of the tip's swing seen (fewer than 3: the final sag) */
    char note[200];
} cantilever_run;

typedef struct cantilever_result {
    int threads;
    size_t particles;
    int count;
    cantilever_run runs[CANTILEVER_MAX_RUNS];
} cantilever_result;

/* Every run at `threads` workers (OpenMP threads for us, MPI ranks for LAMMPS). */
void cantilever_bench(int threads, cantilever_result* out);
/* Euler-Bernoulli's static sag plus Timoshenko's shear term (m). */
double cantilever_reference_sag(void);
void cantilever_print(FILE* f, const cantilever_result* r);
/* Appends one row per run to <dir>/peers_cantilever.csv; 0 or -1. */
int cantilever_record(const char* dir, const cantilever_result* r, const char* date,
                      const char* commit, const char* label);

#endif
