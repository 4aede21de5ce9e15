/* bench/results/<machine>/: one history per case (<case>.csv, a row appended per run and thread
 * count, with its date and commit) and latest.md, the table of each case's latest run. */
#ifndef PD_BENCH_RESULTS_H
#define PD_BENCH_RESULTS_H

#include <stddef.h>

/* The folder of this machine's results under root: "<root>/<slug>-<cores>c", the slug from the
 * CPU model ("epyc", "xeon", else its first word). Creates it. 0, or -1 (printed). */
int results_machine_dir(const char* root, const char* model, int cores, char* dir, size_t size);

/* Appends row (the values of the comma-separated columns of header, each already CSV-quoted
 * where needed) to <dir>/<name>.csv, writing the header first into a new file. A file whose
 * header differs is left alone (-1, printed): its history has other columns. */
int results_append(const char* dir, const char* name, const char* header, const char* row);

/* Rewrites <dir>/latest.md from every history in dir: per case the rows of its newest date. */
int results_write_latest(const char* dir);

#endif
