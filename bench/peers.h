/* The `peers_lammps` case of peridot_bench: our local step against LAMMPS's peridynamic pair
 * styles on the same lattice (docs/benchmarks.md, "Peers"). */
#ifndef PERIDOT_BENCH_PEERS_H
#define PERIDOT_BENCH_PEERS_H

#include <stdio.h>

/* One comparison at `threads` workers (OpenMP threads for us, MPI ranks for LAMMPS). */
typedef struct peers_result {
    int threads;
    int ran;                 /* 0: skipped (no lmp / mpirun) or failed: see note */
    size_t particles;        /* the block's (both codes) */
    double ours_bonds;       /* our directed bonds */
    double ours_ns_per_bond; /* one evaluation of the local step's bond kernels */
    double lps_bonds;        /* LAMMPS's bond count (periodic block) */
    double lps_ns_loop;      /* peri/lps: whole step (loop time) per bond */
    double lps_ns_pair;      /* peri/lps: its pair time per bond */
    double pmb_ns_loop;      /* peri/pmb, the same */
    double pmb_ns_pair;
    char note[256];
} peers_result;

void peers_run(int threads, peers_result* out);
void peers_print(FILE* f, const peers_result* r, int n);
void peers_markdown(FILE* f, const peers_result* r, int n);

#endif
