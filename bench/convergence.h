/* peridot_bench --convergence FILE: the relative residual of Eq. 12 against wall and CPU time,
 * iteration by iteration, for each global_solve option of the accurate mode and for the
 * semi_iterative mode on the 25K bunny's landing step; FILE.csv, and FILE.png (against CPU
 * time) when gnuplot is installed (docs/benchmarks.md, "Convergence against time"). */
#ifndef PERIDOT_BENCH_CONVERGENCE_H
#define PERIDOT_BENCH_CONVERGENCE_H

/* scenes: the folder of bunny_25k.json; threads: workers. Returns 0 when every option ran and
 * the CSV was written (the PNG is skipped with a message without gnuplot). */
int convergence_run(const char* scenes, int threads, const char* out);

#endif
