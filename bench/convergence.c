/* Convergence against time per global_solve option and iteration mode (convergence.h). */
#define _POSIX_C_SOURCE 200809L

#include "convergence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peridot/peridot.h"

#define CONV_WARMUP     3  /* the bunny's free fall; the fourth step is its landing */
#define CONV_ITERATIONS 60 /* beyond the default 20, to show where each option is heading */
#define CONV_MAX_POINTS 4096

typedef struct conv_trace {
    double t0, c0; /* wall and process CPU clocks at the step's start (s) */
    int count;
    double ms[CONV_MAX_POINTS], cpu_ms[CONV_MAX_POINTS], residual[CONV_MAX_POINTS];
    int iteration[CONV_MAX_POINTS];
} conv_trace;

/* One line of the figure: a label and the overrides that make it. The semi_iterative mode runs
 * its fixed count (tolerance 0), so that its curve goes as far as the others'. */
typedef struct conv_option {
    const char* label;
    const char* sets[3];
    int set_count;
} conv_option;

static const conv_option k_options[] = {
    {"chebyshev", {"solver.global_solve=chebyshev"}, 1},
    {"direct", {"solver.global_solve=direct"}, 1},
    {"position_based", {"solver.global_solve=position_based"}, 1},
    {"semi_iterative",
     {"solver.global_solve=chebyshev", "solver.projective_pd.iteration=semi_iterative",
      "solver.projective_pd.tolerance=0"},
     3},
};
#define CONV_OPTION_COUNT ((int)(sizeof k_options / sizeof k_options[0]))

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One point per iteration, counted on across the step's solves (a friction renewal restarts
 * the optimiser's own count). */
static void on_iteration(void* ctx, int iteration, pd_real relative) {
    conv_trace* t = ctx;
    (void)iteration;
    if (t->count < CONV_MAX_POINTS) {
        t->ms[t->count] = 1e3 * (pd_now() - t->t0);
        t->cpu_ms[t->count] = 1e3 * (cpu_now() - t->c0);
        t->residual[t->count] = relative;
        t->iteration[t->count] = t->count + 1;
        t->count++;
    }
}

/* The landing step of the bunny with `option`; its points appended to csv. */
static int trace_option(const char* scenes, const conv_option* option, int threads, FILE* csv) {
    char path[4096], set_iterations[64];
    snprintf(path, sizeof path, "%s/bunny_25k.json", scenes);
    snprintf(set_iterations, sizeof set_iterations, "solver.iterations=%d", CONV_ITERATIONS);
    const char* sets[4] = {set_iterations};
    for (int k = 0; k < option->set_count; ++k)
        sets[1 + k] = option->sets[k];
    pd_scene scene;
    pd_error err;
    memset(&err, 0, sizeof err);
    if (pd_scene_load(path, sets, 1 + option->set_count, &scene, &err) != PD_OK) {
        fprintf(stderr, "convergence: %s: %s\n", path, err.message);
        return 0;
    }
    pd_set_threads(threads);
    pd_world* w = NULL;
    int ok = pd_create_world(&scene, &w, &err) == PD_OK;
    for (int k = 0; ok && k < CONV_WARMUP; ++k)
        ok = pd_world_step(w, &err) == PD_OK;
    static conv_trace trace;
    memset(&trace, 0, sizeof trace);
    if (ok) {
        pd_world_observe_iterations(w, on_iteration, &trace);
        trace.t0 = pd_now();
        trace.c0 = cpu_now();
        ok = pd_world_step(w, &err) == PD_OK;
        pd_world_observe_iterations(w, NULL, NULL);
    }
    double total = 1e3 * (pd_now() - trace.t0), cpu = 1e3 * (cpu_now() - trace.c0);
    for (int k = 0; ok && k < trace.count; ++k)
        fprintf(csv, "%s,%d,%d,%.3f,%.3f,%.6g\n", option->label, threads, trace.iteration[k],
                trace.ms[k], trace.cpu_ms[k], trace.residual[k]);
    if (ok)
        fprintf(stderr,
                "  convergence %-14s %d iterations in %.0f ms (%.0f ms of CPU), residual %.3g\n",
                option->label, trace.count, total, cpu,
                trace.count ? trace.residual[trace.count - 1] : 0);
    else
        fprintf(stderr, "convergence: %s: %s\n", option->label, err.message);
    if (w)
        pd_destroy_world(w);
    pd_scene_free(&scene);
    return ok;
}

/* FILE.png from FILE.csv with gnuplot: log residual against the step's CPU ms (on a shared
 * machine wall time measures the other processes too), one line per option. */
static void plot(const char* out, int threads) {
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "convergence: gnuplot not found (apt-get install gnuplot-nox, or "
                        "scripts/setup.sh peers): no PNG\n");
        return;
    }
    char script[4200], cmd[4400];
    snprintf(script, sizeof script, "%s.gp", out);
    FILE* f = fopen(script, "w");
    if (!f)
        return;
    fprintf(f, "set terminal pngcairo size 900,560 font ',11' noenhanced\nset output '%s.png'\n",
            out);
    fprintf(f, "set datafile separator ','\nset logscale y\nset grid\nset key top right\n");
    fprintf(f, "set xlabel 'CPU time of the step (ms, all of its %d threads)'\n", threads);
    fprintf(f, "set ylabel 'relative residual of Eq. 12'\n");
    fprintf(f, "set title '25K bunny, landing step (h = 1/30 s): residual against time'\n");
    fprintf(f,
            "plot for [o in 'chebyshev direct position_based semi_iterative'] '%s.csv' using "
            "(strcol(1) eq o ? $5 : 1/0):6 with linespoints pt 7 ps 0.5 title o\n",
            out);
    fclose(f);
    snprintf(cmd, sizeof cmd, "gnuplot '%s'", script);
    if (system(cmd) != 0)
        fprintf(stderr, "convergence: gnuplot failed on %s\n", script);
    else
        fprintf(stderr, "wrote %s.png\n", out);
    remove(script);
}

int convergence_run(const char* scenes, int threads, const char* out) {
    char path[4200];
    snprintf(path, sizeof path, "%s.csv", out);
    FILE* csv = fopen(path, "w");
    if (!csv) {
        fprintf(stderr, "convergence: cannot write %s\n", path);
        return 1;
    }
    fprintf(csv, "option,threads,iteration,ms,cpu_ms,relative_residual\n");
    int ok = 1;
    for (int k = 0; k < CONV_OPTION_COUNT; ++k)
        ok &= trace_option(scenes, &k_options[k], threads, csv);
    ok &= fclose(csv) == 0;
    fprintf(stderr, "wrote %s\n", path);
    if (ok)
        plot(out, threads);
    return ok ? 0 : 1;
}
