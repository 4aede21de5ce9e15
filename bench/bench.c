/* peridot_bench: times the benchmark scenes of bench/scenes step by step and prints ms/step,
 * particle-steps/s and a per-stage breakdown beside the paper's own figure for the same scene
 * (He, Wang, Wu 2017, Projective Peridynamics, Sec. 8, Table 1, on a 4-core Intel i7-2600
 * 3.4 GHz: Bunny, 25K particles, h = 1/30 s, t_sum = 41.1 ms per step; Honey, 72K, h = 1/250 s,
 * 125.4 ms; Dry sand, 1177K, h = 1/500 s, 1081.7 ms), and for hyperelastic_pd beside Xu, He,
 * Chen, Li, Wang 2018, Table 1 (t_f, the average time per frame, on an Intel i5-7500 3.4 GHz
 * for the linear solve and a GTX 1060 for the rest; the frame's length is not stated). How to
 * run it and how to read every column: docs/benchmarks.md. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "convergence.h"
#include "peers.h"
#include "stream.h"

#include "core/alloc.h"
#include "core/timer.h"
#include "neighbor/family.h"
#include "parallel/parallel.h"
#include "peridot/peridot.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"
#include "solvers/projective_pd/projective_pd_data.h"
#include "solvers/sbpd/sbpd_data.h"
#include "world/world.h"

#define BENCH_MAX_THREADS 16
#define BENCH_MAX_RESULTS 64

#define BENCH_MAX_SETS 8

/* One benchmark: a scene file, the overrides that make it, and the paper's number for it. */
typedef struct bench_case {
    const char* name;         /* what --filter matches */
    const char* file;         /* in the scenes folder */
    const char* overrides[2]; /* `--set` strings applied to the scene */
    int override_count;
    int warmup, steps;     /* defaults; --warmup / --steps replace them */
    double paper_ms;       /* the paper's t_sum per step (t_f per frame) for this scene, 0: none */
    int paper_threads;     /* cores the paper's figure used; 0: not a CPU-only figure (no
                              core-ms comparison) */
    const char* paper_ref; /* where the figure comes from */
    int paper_per_frame;   /* 1: paper_ms is per frame of unstated length (Xu 2018's t_f), not
                              per step */
} bench_case;

static const bench_case k_cases[] = {
    {"bunny_25k_chebyshev",
     "bunny_25k.json",
     {"solver.global_solve=chebyshev"},
     1,
     3,
     6,
     41.1,
     4,
     "He 2017 Table 1, Bunny (Fig. 3), 25K, h=1/30 s",
     0},
    {"bunny_25k_direct",
     "bunny_25k.json",
     {"solver.global_solve=direct"},
     1,
     3,
     6,
     41.1,
     4,
     "He 2017 Table 1, Bunny (Fig. 3), 25K, h=1/30 s",
     0},
    {"bunny_250k_chebyshev",
     "bunny_250k.json",
     {"solver.global_solve=chebyshev"},
     1,
     1,
     3,
     0,
     0,
     "none (Table 1 has no 250K elastic scene)",
     0},
    {"dry_sand_100k",
     "dry_sand_100k.json",
     {"solver.plastic_passes=4"},
     1,
     1,
     2,
     0,
     0,
     "none of its size: He 2017 Table 1, Dry sand (Fig. 14), 1177K at h=1/500 s, 1081.7 ms on 4 "
     "cores (3.7 core-us per particle-step; docs/benchmarks.md compares per particle)",
     0},
    {"honey_72k",
     "honey_72k.json",
     {"solver.plastic_passes=4"},
     1,
     2,
     4,
     125.4,
     4,
     "He 2017 Table 1, Honey (Fig. 8), 72K, h=1/250 s: t_n 34.0, t_rho 26.9, t_d 32.4, t_p 4.9, "
     "t_e 24.0 ms",
     0},
    {"dry_sand_1m",
     "dry_sand_1m.json",
     {"solver.plastic_passes=4"},
     1,
     1,
     2,
     1081.7,
     4,
     "He 2017 Table 1, Dry sand (Fig. 14), 1177K, h=1/500 s: t_n 481.0, t_rho 340.2, t_p 81.7, "
     "t_e 124.5 ms",
     0},
    /* hyperelastic_pd beside Xu 2018 Table 1: t_f per frame, i5-7500 (linear solve) + GTX 1060
     * (the rest), so no core-ms; the frame's length is not stated (docs/benchmarks.md) */
    {"xu_armadillo_6k",
     "xu_armadillo_6k.json",
     {NULL},
     0,
     7,
     6,
     323,
     0,
     "Xu 2018 Table 1, Armadillo (Fig. 5, A4), 18K DOF (6K particles), dt=0.01 s, 9.6 "
     "iterations, t_f = 323 ms per frame on an i5-7500 + GTX 1060; our scene is the bunny mesh "
     "(no armadillo mesh)",
     1},
    {"xu_bunny_12k",
     "xu_bunny_12k.json",
     {NULL},
     0,
     6,
     6,
     1300,
     0,
     "Xu 2018 Table 1, Bunny (Fig. 14, StVK), 35K DOF (11.7K particles), dt=0.01 s, 16.8 "
     "iterations, t_f = 1300 ms per frame on an i5-7500 + GTX 1060",
     1},
    {"xu_cylinder_twist",
     "xu_cylinder_twist.json",
     {NULL},
     0,
     45,
     10,
     57,
     0,
     "Xu 2018 Table 1, Cylinder (Fig. 10, twisted), 2.5K DOF (830 particles), dt=0.04 s, 10.4 "
     "iterations, t_f = 57 ms per frame on an i5-7500 + GTX 1060",
     1},
    {"xu_cloth_3600",
     "xu_cloth_3600.json",
     {NULL},
     0,
     5,
     10,
     146,
     0,
     "Xu 2018 Table 1, Wrinkle Cloth (Fig. 9), 10.8K DOF (3.6K particles), dt=0.01 s, 6.2 "
     "iterations, t_f = 146 ms per frame on an i5-7500 + GTX 1060",
     1},
    /* sbpd beside Wang et al. 2025 Table 1: FPS on an RTX 4090 (no core-ms), frames or steps
     * not stated; the paper's dt (5 ms at E_0 1e7-1e8) is far past our stable step for a
     * physical E (docs/methods/sbpd.md), so ours steps at 0.2 ms */
    {"wang_fig6_30k",
     "wang_fig6_30k.json",
     {NULL},
     0,
     20,
     50,
     1000 / 102.48,
     0,
     "Wang 2025 Table 1, Fig. 6 (creep and relaxation), 30K particles, dt 5 ms, 102.48 FPS "
     "(9.76 ms) on an RTX 4090; ours at dt 0.2 ms, E_0 1e5 Pa (Fig. 5's high-viscosity set)",
     1},
    {"wang_fig4_80k",
     "wang_fig4_80k.json",
     {NULL},
     0,
     10,
     30,
     1000 / 68.67,
     0,
     "Wang 2025 Table 1, Fig. 4 (rotational stretch), 80K particles, dt 5 ms, 68.67 FPS (14.6 "
     "ms) on an RTX 4090; ours at dt 0.2 ms, E_0 1e5 Pa (Fig. 4's viscoelastic set)",
     1},
    {"wang_fig7_348k",
     "wang_fig7_348k.json",
     {NULL},
     0,
     2,
     5,
     1000 / 13.19,
     0,
     "Wang 2025 Table 1, Fig. 7 (sand piles), 348K particles, dt 2 ms, 13.19 FPS (75.8 ms) on an "
     "RTX 4090; ours at dt 0.15 ms, E 3e5 Pa as Table 1 (three collapsing columns of sand)",
     1},
};
#define BENCH_CASE_COUNT ((int)(sizeof k_cases / sizeof k_cases[0]))

typedef struct bench_options {
    int threads[BENCH_MAX_THREADS];
    int thread_count;
    int steps;  /* 0: the case's own */
    int warmup; /* -1: the case's own */
    const char* filter;
    const char* out;
    const char* convergence; /* --convergence FILE */
    char scenes[PD_PATH_MAX];
    const char* sets[BENCH_MAX_SETS]; /* --set KEY=VALUE, after each case's own overrides */
    int set_count;
} bench_options;

/* Per measured step (seconds; cpu: all threads). */
typedef struct step_sample {
    double wall, cpu, local, global, neighbors, density, viscosity, redistribution, plastic;
    int iterations;
    double residual;
    double relative_error; /* Xu 2018 Eq. 25 at the step's end; NaN when not reported */
    double bond_forces;    /* s in the local step's bond kernels */
    int evaluations;       /* local-step evaluations */
    double bonds;
} step_sample;

typedef struct bench_result {
    const bench_case* c;
    int threads;
    size_t particles, bonds;
    double mib;       /* bytes the world allocated */
    double setup_s;   /* pd_create_world: sampling, ordering, families, factorisation */
    double family_ms; /* one family build (neighbour search + bonds) on the rest positions */
    int warmup, steps, done;
    double wall_median, wall_mean, wall_min, wall_max; /* ms */
    /* ms, means over the measured steps: the stages, and CPU per step (all threads) */
    double local, global, neighbors, density, viscosity, redistribution, plastic, other, cpu;
    double iterations, residual_median, residual_max;
    double relative_error_median; /* Xu 2018 Eq. 25 (hyperelastic_pd); NaN: not reported */
    double evaluations;           /* local-step evaluations per step (mean) */
    double local_ns_per_bond; /* wall ns per bond per evaluation of the bond kernels (0: none) */
    double load_before, load_after; /* 1-minute load average of the machine */
    char error[512];                /* empty when the run went through */
} bench_result;

/* snprintf that may truncate on purpose (messages and paths into fixed buffers). */
static void format_to(char* out, size_t size, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------- machine */

static void machine_model(char* out, size_t size) {
    snprintf(out, size, "unknown CPU");
    FILE* f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char* colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        colon += 1 + strspn(colon + 1, " \t");
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, size, "%s", colon);
        break;
    }
    fclose(f);
}

static double load_average(void) {
    double load = -1;
    FILE* f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    return load;
}

/* The commit the binary measures, "+dirty" when the work tree has changes; PERIDOT_BENCH_COMMIT
 * names it when the sources are not a git work tree (an exported snapshot). */
static void source_commit(char* out, size_t size, const char* src_dir) {
    char cmd[PD_PATH_MAX + 128];
    const char* given = getenv("PERIDOT_BENCH_COMMIT");
    snprintf(out, size, "%s", given && *given ? given : "unknown");
    if (given && *given)
        return;
    format_to(cmd, sizeof cmd,
              "git -C '%s' rev-parse --short HEAD 2>/dev/null && "
              "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null | head -c1",
              src_dir, src_dir);
    FILE* p = popen(cmd, "r");
    if (!p)
        return;
    char hash[64] = "", dirty[8] = "";
    if (fgets(hash, sizeof hash, p)) {
        hash[strcspn(hash, "\n")] = '\0';
        int changed = fgets(dirty, sizeof dirty, p) != NULL;
        snprintf(out, size, "%s%s", hash, changed ? "+dirty" : "");
    }
    pclose(p);
}

/* ---------------------------------------------------------------- statistics */

static int compare_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double median(double* v, int n) {
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median, mean, extremes of the wall times and means of the stages, in ms. */
static void summarize(bench_result* r, const step_sample* s, double* scratch) {
    int n = r->done;
    double wall = 0, cpu = 0, local = 0, global = 0, nb = 0, dens = 0, visc = 0, redist = 0, pl = 0;
    double it = 0, rmax = 0, bond_s = 0, bond_evals = 0, evals = 0;
    r->wall_min = n ? 1e300 : 0;
    r->wall_max = 0;
    for (int k = 0; k < n; ++k) {
        wall += s[k].wall, cpu += s[k].cpu, local += s[k].local, global += s[k].global,
            nb += s[k].neighbors, dens += s[k].density, visc += s[k].viscosity,
            redist += s[k].redistribution, pl += s[k].plastic;
        it += s[k].iterations;
        bond_s += s[k].bond_forces, evals += s[k].evaluations;
        bond_evals += s[k].evaluations * s[k].bonds;
        rmax = s[k].residual > rmax ? s[k].residual : rmax;
        r->wall_min = s[k].wall < r->wall_min ? s[k].wall : r->wall_min;
        r->wall_max = s[k].wall > r->wall_max ? s[k].wall : r->wall_max;
        scratch[k] = s[k].wall;
    }
    double inv = n ? 1e3 / n : 0;
    r->wall_median = 1e3 * median(scratch, n);
    r->wall_mean = wall * inv, r->local = local * inv, r->global = global * inv;
    r->neighbors = nb * inv, r->density = dens * inv, r->plastic = pl * inv, r->cpu = cpu * inv;
    r->viscosity = visc * inv, r->redistribution = redist * inv;
    r->other = r->wall_mean - r->local - r->global - r->neighbors - r->density - r->viscosity -
               r->redistribution - r->plastic;
    r->wall_min *= 1e3, r->wall_max *= 1e3;
    r->iterations = n ? it / n : 0;
    r->evaluations = n ? evals / n : 0;
    r->local_ns_per_bond = bond_evals > 0 ? 1e9 * bond_s / bond_evals : 0;
    for (int k = 0; k < n; ++k)
        scratch[k] = s[k].residual;
    r->residual_median = median(scratch, n);
    r->residual_max = rmax;
    int m = 0;
    for (int k = 0; k < n; ++k)
        if (isfinite(s[k].relative_error))
            scratch[m++] = s[k].relative_error;
    r->relative_error_median = m ? median(scratch, m) : NAN;
}

/* ---------------------------------------------------------------- running one case */

static int is_projective_pd(const pd_world* w) {
    return strcmp(w->scene->method, "projective_pd") == 0;
}

static int is_hyperelastic_pd(const pd_world* w) {
    return strcmp(w->scene->method, "hyperelastic_pd") == 0;
}

static int is_sbpd(const pd_world* w) {
    return strcmp(w->scene->method, "sbpd") == 0;
}

/* Builds the families once more on the rest positions, as the solver's set-up does, to time
 * the neighbour search + bond construction alone (the elastic solvers renew nothing per step;
 * hyperelastic_pd never does). -1 for a method whose horizon it does not know. */
static double family_build_ms(const pd_world* w) {
    pd_real horizon;
    if (is_projective_pd(w))
        horizon = ((const pd_ppd_params*)w->scene->solver_params)->horizon;
    else if (is_hyperelastic_pd(w))
        horizon = ((const pd_hpd_params*)w->scene->solver_params)->horizon;
    else if (is_sbpd(w))
        horizon = ((const pd_sbpd_params*)w->scene->solver_params)->horizon;
    else
        return -1;
    const pd_particles* p = &w->particles;
    pd_family fam;
    pd_hash_grid grid;
    memset(&fam, 0, sizeof fam);
    memset(&grid, 0, sizeof grid);
    double t0 = pd_now();
    pd_status st =
        pd_family_build(&fam, &grid, p->rest, p->volume, p->spacing, p->body, p->count, horizon);
    double ms = 1e3 * (pd_now() - t0);
    pd_family_free(&fam);
    pd_hash_grid_destroy(&grid);
    return st == PD_OK ? ms : -1;
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static step_sample timed_step(pd_world* w, pd_status* st, pd_error* err) {
    step_sample s;
    double c0 = cpu_seconds(), t0 = pd_now();
    *st = pd_world_step(w, err);
    s.wall = pd_now() - t0;
    s.cpu = cpu_seconds() - c0;
    s.local = w->last_stats.t_local;
    s.global = w->last_stats.t_global;
    s.neighbors = w->last_stats.t_neighbors;
    s.density = w->last_stats.t_density;
    s.viscosity = w->last_stats.t_viscosity;
    s.redistribution = w->last_stats.t_redistribution;
    s.plastic = w->last_stats.t_plastic;
    s.iterations = w->last_stats.iterations;
    s.residual = w->last_stats.residual;
    s.relative_error = w->last_stats.relative_error;
    s.bond_forces = w->last_stats.t_bond_forces;
    s.evaluations = w->last_stats.local_evaluations;
    s.bonds = (double)w->last_stats.bonds;
    return s;
}

/* Warm-up steps, then the measured ones; stops at the first failing step. */
static void run_steps(pd_world* w, bench_result* r, step_sample* samples) {
    pd_error err;
    pd_status st = PD_OK;
    memset(&err, 0, sizeof err);
    for (int k = 0; k < r->warmup + r->steps && st == PD_OK; ++k) {
        step_sample s = timed_step(w, &st, &err);
        if (st == PD_OK && k >= r->warmup)
            samples[r->done++] = s;
        char eq25[48] = "";
        if (isfinite(s.relative_error))
            snprintf(eq25, sizeof eq25, ", Eq. 25 %.3g, %d evaluations", s.relative_error,
                     s.evaluations);
        fprintf(stderr, "  %s step %d/%d: %.1f ms, %d iterations, residual %.3g%s%s\n", r->c->name,
                k + 1, r->warmup + r->steps, 1e3 * s.wall, s.iterations, s.residual, eq25,
                k < r->warmup ? " (warm-up)" : "");
    }
    if (st != PD_OK)
        format_to(r->error, sizeof r->error, "step %d: %s: %s", r->warmup + r->done + 1,
                  pd_status_string(st), err.message);
}

static pd_status load_case(const bench_case* c, const bench_options* o, int threads,
                           pd_scene* scene, bench_result* r) {
    char path[2 * PD_PATH_MAX];
    pd_error err;
    memset(&err, 0, sizeof err);
    snprintf(path, sizeof path, "%s/%s", o->scenes, c->file);
    const char* sets[2 + BENCH_MAX_SETS];
    int count = 0;
    for (int k = 0; k < c->override_count; ++k)
        sets[count++] = c->overrides[k];
    for (int k = 0; k < o->set_count; ++k)
        sets[count++] = o->sets[k];
    pd_status st = pd_scene_load(path, sets, count, scene, &err);
    if (st != PD_OK) {
        format_to(r->error, sizeof r->error, "%s: %s: %s", path, err.path, err.message);
        return st;
    }
    scene->world.threads = threads;
    return PD_OK;
}

static void run_case(const bench_case* c, const bench_options* o, int threads, bench_result* r) {
    memset(r, 0, sizeof *r);
    r->c = c;
    r->threads = threads;
    r->warmup = o->warmup >= 0 ? o->warmup : c->warmup;
    r->steps = o->steps > 0 ? o->steps : c->steps;
    r->load_before = load_average();
    pd_scene scene;
    if (load_case(c, o, threads, &scene, r) != PD_OK)
        return;
    pd_world* w = NULL;
    pd_error err;
    memset(&err, 0, sizeof err);
    size_t bytes0 = pd_bytes_in_use();
    double t0 = pd_now();
    pd_status st = pd_create_world(&scene, &w, &err);
    r->setup_s = pd_now() - t0;
    if (st != PD_OK) {
        format_to(r->error, sizeof r->error, "create: %s: %s", pd_status_string(st), err.message);
        pd_scene_free(&scene);
        return;
    }
    r->mib = (double)(pd_bytes_in_use() - bytes0) / 1048576.0;
    r->threads = pd_thread_count();
    r->particles = w->particles.count;
    r->bonds = w->bond_count;
    r->family_ms = family_build_ms(w);
    step_sample* samples = PD_NEW_ARRAY(step_sample, (size_t)r->steps);
    double* scratch = PD_NEW_ARRAY(double, (size_t)r->steps);
    if (samples && scratch) {
        run_steps(w, r, samples);
        summarize(r, samples, scratch);
    } else {
        format_to(r->error, sizeof r->error, "out of memory for %d samples", r->steps);
    }
    PD_FREE_ARRAY(samples, step_sample, r->steps);
    PD_FREE_ARRAY(scratch, double, r->steps);
    pd_destroy_world(w);
    pd_scene_free(&scene);
    r->load_after = load_average();
}

/* ---------------------------------------------------------------- reporting */

static double core_ms(const bench_result* r) {
    return r->wall_median * r->threads;
}

/* 0 when the paper's figure is not a CPU core count's (Xu 2018: CPU + GPU). */
static double paper_core_ms(const bench_case* c) {
    return c->paper_ms * c->paper_threads;
}

static void print_header(FILE* f) {
    fprintf(f,
            "%-21s %3s %8s %9s %7s %7s %9s %9s %9s %8s %8s %8s %8s %8s %8s %8s %8s %8s %6s %8s "
            "%7s %5s %9s %9s %7s\n",
            "case", "thr", "particles", "bonds", "setup_s", "fam_ms", "ms_med", "ms_mean", "cpu_ms",
            "Mpstep/s", "neigh", "local", "global", "density", "visc", "redist", "plastic", "other",
            "iters", "resid", "ns/bond", "evals", "core_ms", "paper_ms", "p_core");
}

static void print_row(FILE* f, const bench_result* r) {
    if (r->done == 0) {
        fprintf(f, "%-21s %3d FAILED: %s\n", r->c->name, r->threads, r->error);
        return;
    }
    char paper[32] = "-", pcore[32] = "-";
    if (r->c->paper_ms > 0 && r->c->paper_threads > 0) {
        snprintf(paper, sizeof paper, "%.1f@%d", r->c->paper_ms, r->c->paper_threads);
        snprintf(pcore, sizeof pcore, "%.0f", paper_core_ms(r->c));
    } else if (r->c->paper_ms > 0) {
        snprintf(paper, sizeof paper, "%.0f%s", r->c->paper_ms,
                 r->c->paper_per_frame ? "/frame" : "");
    }
    fprintf(f,
            "%-21s %3d %8zu %9zu %7.2f %7.1f %9.1f %9.1f %9.1f %8.3f %8.1f %8.1f %8.1f %8.1f "
            "%8.1f %8.1f %8.1f %8.1f %6.1f %8.2g %7.2f %5.1f %9.0f %9s %7s\n",
            r->c->name, r->threads, r->particles, r->bonds, r->setup_s, r->family_ms,
            r->wall_median, r->wall_mean, r->cpu, r->particles / r->wall_median * 1e-3,
            r->neighbors, r->local, r->global, r->density, r->viscosity, r->redistribution,
            r->plastic, r->other, r->iterations, r->residual_median, r->local_ns_per_bond,
            r->evaluations, core_ms(r), paper, pcore);
    if (r->error[0])
        fprintf(f, "%-21s     stopped after %d measured steps: %s\n", "", r->done, r->error);
}

static void write_markdown_row(FILE* f, const bench_result* r) {
    if (r->done == 0) {
        fprintf(f, "| %s | %d | failed: %s |||||||||||||||||||||||\n", r->c->name, r->threads,
                r->error);
        return;
    }
    char paper[48] = "-", pcore[32] = "-", ratio[32] = "-", family[32] = "-", eq25[32] = "-";
    if (r->c->paper_ms > 0 && r->c->paper_threads > 0) {
        snprintf(paper, sizeof paper, "%.1f (%d cores)", r->c->paper_ms, r->c->paper_threads);
        snprintf(pcore, sizeof pcore, "%.0f", paper_core_ms(r->c));
        snprintf(ratio, sizeof ratio, "%.1fx", core_ms(r) / paper_core_ms(r->c));
    } else if (r->c->paper_ms > 0) {
        snprintf(paper, sizeof paper, "%.0f %s (CPU + GPU)", r->c->paper_ms,
                 r->c->paper_per_frame ? "per frame" : "per step");
    }
    if (r->family_ms >= 0)
        snprintf(family, sizeof family, "%.1f", r->family_ms);
    if (isfinite(r->relative_error_median))
        snprintf(eq25, sizeof eq25, "%.2g", r->relative_error_median);
    fprintf(f,
            "| %s | %d | %zu | %zu | %.2f | %s | %d+%d | %.1f | %.1f | %.1f..%.1f | %.1f | %.0f "
            "| %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2g | %s | %.2f "
            "| %.1f | %.0f | %s | %s | %s |\n",
            r->c->name, r->threads, r->particles, r->bonds, r->setup_s, family, r->warmup, r->done,
            r->wall_median, r->wall_mean, r->wall_min, r->wall_max, r->cpu,
            r->particles / r->wall_median * 1e3, r->neighbors, r->local, r->global, r->density,
            r->viscosity, r->redistribution, r->plastic, r->other, r->iterations,
            r->residual_median, eq25, r->local_ns_per_bond, r->evaluations, core_ms(r), paper,
            pcore, ratio);
}

static void write_markdown_header(FILE* f, const char* machine, int cores, const char* date,
                                  const char* commit, const char* sets) {
    fprintf(f, "# peridot_bench results\n\n");
    fprintf(f, "- machine: %s, %d logical cores online\n- date: %s\n- commit: %s\n", machine, cores,
            date, commit);
    if (sets[0])
        fprintf(f, "- overrides for every case (--set): %s\n", sets);
    fprintf(f, "\n");
}

static void write_markdown(FILE* f, const bench_result* res, int n) {
    fprintf(f, "| case | threads | particles | bonds | set-up s | family build ms | steps "
               "(warm-up+measured) | ms/step median | ms/step mean | ms/step min..max | "
               "CPU ms/step (all threads) | "
               "particle-steps/s | neighbours ms (t_n) | local ms | global ms | density ms (t_rho) "
               "| viscosity ms | redistribution ms (t_d) | plastic ms (t_p) | other ms | "
               "iterations/step | "
               "residual (median) | Eq. 25 relative error (median) | "
               "local ns/bond (per evaluation) | local evaluations/step | "
               "core-ms/step (ours) | paper "
               "ms/step | paper core-ms/step | ours / paper (core-ms) |\n");
    fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
               "---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n");
    for (int k = 0; k < n; ++k)
        write_markdown_row(f, &res[k]);
    fprintf(f, "\nStage times (neighbours, local, global, density, viscosity, redistribution, "
               "plastic, other) are means over the measured steps; they sum to the mean ms/step. "
               "He 2017 Table 1's t_e is local + global; Table 1 has no viscosity column. "
               "core-ms/step = median ms/step x threads. local ns/bond: wall time of the local "
               "step's bond kernels (F, directions, energy, gradient into g; contact apart) per "
               "bond and evaluation, on the row's threads.\n");
    int hpd = 0, sbpd = 0;
    for (int k = 0; k < n; ++k) {
        hpd |= strncmp(res[k].c->name, "xu_", 3) == 0;
        sbpd |= strncmp(res[k].c->name, "wang_", 5) == 0;
    }
    if (sbpd)
        fprintf(f, "sbpd (the wang_ cases): neighbours ms is the sand's step start (families "
                   "renewed, weights, shape tensors, hardening, the elastic F committed); local "
                   "ms is Eq. 9's histories, the advection and the passes of Algorithm 1 (F, the "
                   "return mapping and the force densities of Eq. 10-12 each); density ms is Eq. "
                   "28 against the colliders; other is mostly the collisions (Eq. 25-28 between "
                   "particles and with the rigid boundary particles); iterations are the passes; "
                   "residual is the last pass's largest move over the spacing. The paper's figure "
                   "is 1000 / FPS on an RTX 4090, frames or steps "
                   "not stated, at dt 5 ms: 25 of our 0.2 ms steps (docs/benchmarks.md).\n");
    if (hpd)
        fprintf(f, "hyperelastic_pd (the xu_ cases): local ms is every evaluation of E(q) of "
                   "Xu 2018 Eq. 21 and its gradient (dilatation and bond passes, Eq. 24's "
                   "inversion energy, the collider residual, the contact between bodies); global "
                   "ms is the solves with the prefactored L + M/dt^2 of Eq. 23 plus the numeric "
                   "refactorisations for friction; residual is |gradient| over the step's force "
                   "scale; the step stops on Eq. 25 (tolerance 1e-4) or at 25 iterations. The "
                   "paper's t_f is per frame, whose length the paper does not state, on an "
                   "i5-7500 (linear solve) + GTX 1060 (the rest): no core-ms ratio.\n");
    for (int k = 0; k < n; ++k) {
        if (res[k].c->paper_ms > 0 && (k == 0 || res[k].c != res[k - 1].c))
            fprintf(f, "Paper figure beside %s: %s.\n", res[k].c->name, res[k].c->paper_ref);
        if (res[k].error[0] && res[k].done > 0)
            fprintf(f, "Note: %s with %d threads stopped after %d measured steps: %s\n",
                    res[k].c->name, res[k].threads, res[k].done, res[k].error);
    }
    fprintf(f, "Load average (1 min) before..after each case:");
    for (int k = 0; k < n; ++k)
        fprintf(f, " %s/%d %.2f..%.2f;", res[k].c->name, res[k].threads, res[k].load_before,
                res[k].load_after);
    fprintf(f, "\n");
}

static void write_csv(FILE* f, const bench_result* res, int n, const char* machine, int cores,
                      const char* date, const char* commit, const char* sets) {
    fprintf(f, "machine,cores,date,commit,case,threads,particles,bonds,mib,setup_s,family_ms,"
               "warmup,steps,ms_median,ms_mean,ms_min,ms_max,cpu_ms,particle_steps_per_s,local_ms,"
               "global_ms,neighbors_ms,density_ms,viscosity_ms,redistribution_ms,plastic_ms,"
               "other_ms,iterations,local_ns_per_bond,evaluations,residual_median,"
               "residual_max,relative_error_median,core_ms,paper_ms,paper_threads,paper_core_ms,"
               "load_before,load_after,"
               "error,sets\n");
    for (int k = 0; k < n; ++k) {
        const bench_result* r = &res[k];
        char eq25[32] = ""; /* empty where the method does not report it, as in stats.csv */
        if (isfinite(r->relative_error_median))
            snprintf(eq25, sizeof eq25, "%.4g", r->relative_error_median);
        fprintf(
            f,
            "\"%s\",%d,%s,%s,%s,%d,%zu,%zu,%.1f,%.3f,%.2f,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f,%.3f,"
            "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.3f,%.2f,%.4g,%.4g,%s,%.2f,%.1f,%d,%.1f,"
            "%.2f,"
            "%.2f,"
            "\"%s\",\"%s\"\n",
            machine, cores, date, commit, r->c->name, r->threads, r->particles, r->bonds, r->mib,
            r->setup_s, r->family_ms, r->warmup, r->done, r->wall_median, r->wall_mean, r->wall_min,
            r->wall_max, r->cpu, r->wall_median > 0 ? r->particles / r->wall_median * 1e3 : 0,
            r->local, r->global, r->neighbors, r->density, r->viscosity, r->redistribution,
            r->plastic, r->other, r->iterations, r->local_ns_per_bond, r->evaluations,
            r->residual_median, r->residual_max, eq25, core_ms(r), r->c->paper_ms,
            r->c->paper_threads, paper_core_ms(r->c), r->load_before, r->load_after, r->error,
            sets);
    }
}

/* --out FILE: FILE.md (or FILE itself when it ends in .md) and the same stem with .csv. */
/* The cases outside the scene table: LAMMPS peers and the triad. */
typedef struct bench_extras {
    const peers_result* peers;
    int peer_count;
    const stream_result* streams;
    int stream_count;
    const char* sets; /* the --set overrides, joined by spaces ("" when none) */
} bench_extras;

static int write_outputs(const char* out, const bench_result* res, int n, const bench_extras* x,
                         const char* machine, int cores, const char* date, const char* commit) {
    char md[PD_PATH_MAX + 8], csv[PD_PATH_MAX + 8];
    size_t len = strlen(out);
    int has_md = len > 3 && strcmp(out + len - 3, ".md") == 0;
    snprintf(md, sizeof md, has_md ? "%s" : "%s.md", out);
    snprintf(csv, sizeof csv, "%.*s.csv", (int)(has_md ? len - 3 : len), out);
    FILE* fm = fopen(md, "w");
    FILE* fc = fopen(csv, "w");
    if (fm)
        write_markdown_header(fm, machine, cores, date, commit, x->sets);
    if (fm && n > 0)
        write_markdown(fm, res, n);
    if (fm && x->peer_count > 0)
        peers_markdown(fm, x->peers, x->peer_count);
    if (fm && x->stream_count > 0)
        stream_markdown(fm, x->streams, x->stream_count);
    if (fc)
        write_csv(fc, res, n, machine, cores, date, commit, x->sets);
    int ok = fm && fc;
    if (fm)
        ok &= fclose(fm) == 0;
    if (fc)
        ok &= fclose(fc) == 0;
    if (!ok)
        fprintf(stderr, "peridot_bench: cannot write %s / %s\n", md, csv);
    else
        fprintf(stderr, "wrote %s and %s\n", md, csv);
    return ok;
}

/* ---------------------------------------------------------------- command line */

static const char k_usage[] =
    "usage: peridot_bench [--threads N[,N...]] [--steps N] [--warmup N] [--filter NAME]\n"
    "                     [--out FILE] [--scenes DIR] [--set KEY=VALUE]... [--list]\n"
    "\n"
    "Runs the benchmark scenes, each with every thread count given (default: all cores),\n"
    "and prints ms/step (median and mean of the measured steps), particle-steps/s, the\n"
    "per-stage breakdown, iterations and residual beside the paper's figure.\n"
    "  --threads 1,2   thread counts to run (comma-separated)\n"
    "  --steps N       measured steps per case (default: the case's own)\n"
    "  --warmup N      untimed steps before them, 0 or more (default: the case's own)\n"
    "  --filter NAME   only cases whose name contains NAME\n"
    "  --out FILE      also write FILE.md (Markdown table) and FILE.csv\n"
    "  --scenes DIR    folder of the scene files (default: bench/scenes of the source tree)\n"
    "  --set KEY=VALUE a scene override for every case, after the case's own (up to 8)\n"
    "  --list          list the cases and exit\n"
    "  --convergence FILE  instead of the cases: the residual against wall time of each\n"
    "                  global_solve option on the 25K bunny's landing step (first --threads\n"
    "                  count), into FILE.csv and, with gnuplot, FILE.png\n"
    "The case peers_lammps times our local step against LAMMPS peri/lps and peri/pmb (Debian's\n"
    "lmp and mpirun; skipped with a message when they are missing); stream_triad measures the\n"
    "memory bandwidth (a STREAM-like triad) for the roofline of docs/benchmarks.md.\n"
    "See docs/benchmarks.md.\n";

static int parse_threads(const char* s, bench_options* o) {
    o->thread_count = 0;
    while (*s && o->thread_count < BENCH_MAX_THREADS) {
        char* end = NULL;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 1024 || (*end && *end != ','))
            return 0;
        o->threads[o->thread_count++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return o->thread_count > 0 && !*s;
}

static int count_at_least(const char* s, long lo, int* out) {
    char* end = NULL;
    long v = strtol(s, &end, 10);
    *out = (int)v;
    return end != s && !*end && v >= lo && v <= 1000000;
}

/* The bench folder of the source tree this binary was built from (CMake compiles with
 * absolute paths), else ./bench. */
static void bench_dir(char* out, size_t size) {
    const char* src = __FILE__;
    const char* slash = strrchr(src, '/');
    if (slash && src[0] == '/')
        format_to(out, size, "%.*s", (int)(slash - src), src);
    else
        format_to(out, size, "bench");
}

static void default_scenes(char* out, size_t size) {
    char dir[PD_PATH_MAX];
    bench_dir(dir, sizeof dir);
    format_to(out, size, "%s/scenes", dir);
}

static void source_dir(char* out, size_t size) {
    char dir[PD_PATH_MAX];
    bench_dir(dir, sizeof dir);
    format_to(out, size, "%s/..", dir);
}

static const char k_peers[] = "peers_lammps";
static const char k_stream[] = "stream_triad";

/* 0: go on; 1: exit 0 (help, list); 2: usage error. */
static int parse_args(int argc, char** argv, bench_options* o) {
    memset(o, 0, sizeof *o);
    o->warmup = -1;
    o->threads[0] = (int)sysconf(_SC_NPROCESSORS_ONLN);
    o->thread_count = 1;
    default_scenes(o->scenes, sizeof o->scenes);
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1, takes = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return fputs(k_usage, stdout), 1;
        else if (!strcmp(a, "--list")) {
            for (int k = 0; k < BENCH_CASE_COUNT; ++k)
                printf("%-22s %s %s\n", k_cases[k].name, k_cases[k].file,
                       k_cases[k].override_count > 0 ? k_cases[k].overrides[0] : "");
            printf("%-22s %s\n", k_peers, "(a block, against LAMMPS: needs lmp and mpirun)");
            printf("%-22s %s\n", k_stream, "(memory bandwidth: a STREAM-like triad)");
            return 1;
        } else if (!v)
            ok = 0;
        else if (!strcmp(a, "--threads"))
            ok = parse_threads(v, o);
        else if (!strcmp(a, "--steps"))
            ok = count_at_least(v, 1, &o->steps);
        else if (!strcmp(a, "--warmup"))
            ok = count_at_least(v, 0, &o->warmup);
        else if (!strcmp(a, "--filter"))
            o->filter = v;
        else if (!strcmp(a, "--out"))
            o->out = v;
        else if (!strcmp(a, "--convergence"))
            o->convergence = v;
        else if (!strcmp(a, "--scenes"))
            snprintf(o->scenes, sizeof o->scenes, "%s", v);
        else if (!strcmp(a, "--set") && o->set_count < BENCH_MAX_SETS && strchr(v, '='))
            o->sets[o->set_count++] = v;
        else
            ok = 0, takes = 0;
        if (!ok) {
            fprintf(stderr, "peridot_bench: bad or incomplete option '%s'\n%s", a, k_usage);
            return 2;
        }
        i += takes;
    }
    return 0;
}

int main(int argc, char** argv) {
    bench_options o;
    int code = parse_args(argc, argv, &o);
    if (code)
        return code == 1 ? 0 : 2;
    char machine[256], commit[96], date[32], src_dir[PD_PATH_MAX];
    machine_model(machine, sizeof machine);
    source_dir(src_dir, sizeof src_dir);
    source_commit(commit, sizeof commit, src_dir);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    printf("peridot_bench: %s, %d cores, %s, commit %s\n", machine, cores, date, commit);
    if (o.convergence)
        return convergence_run(o.scenes, o.threads[0], o.convergence);
    static bench_result res[BENCH_MAX_RESULTS];
    int n = 0, failed = 0;
    for (int k = 0; k < BENCH_CASE_COUNT; ++k) {
        if (o.filter && !strstr(k_cases[k].name, o.filter))
            continue;
        for (int t = 0; t < o.thread_count && n < BENCH_MAX_RESULTS; ++t) {
            run_case(&k_cases[k], &o, o.threads[t], &res[n]);
            failed |= res[n].error[0] != 0;
            if (n == 0)
                print_header(stdout);
            print_row(stdout, &res[n++]);
            fflush(stdout);
        }
    }
    static peers_result peers[BENCH_MAX_THREADS];
    int peer_count = 0;
    if (!o.filter || strstr(k_peers, o.filter)) {
        for (int t = 0; t < o.thread_count; ++t) {
            peers_run(o.threads[t], &peers[peer_count]);
            failed |= !peers[peer_count].ran && !strstr(peers[peer_count].note, "skipped");
            peer_count++;
        }
        peers_print(stdout, peers, peer_count);
    }
    static stream_result streams[BENCH_MAX_THREADS];
    int stream_count = 0;
    if (!o.filter || strstr(k_stream, o.filter)) {
        for (int t = 0; t < o.thread_count; ++t) {
            stream_run(o.threads[t], &streams[stream_count]);
            failed |= !streams[stream_count++].ok;
        }
        stream_print(stdout, streams, stream_count);
    }
    if (n == 0 && peer_count == 0 && stream_count == 0) {
        fprintf(stderr, "peridot_bench: no case matches '%s' (see --list)\n", o.filter);
        return 2;
    }
    char sets[BENCH_MAX_SETS * 128] = "";
    for (int k = 0; k < o.set_count; ++k)
        format_to(sets + strlen(sets), sizeof sets - strlen(sets), "%s%s", k ? " " : "", o.sets[k]);
    bench_extras extras = {peers, peer_count, streams, stream_count, sets};
    if (o.out && !write_outputs(o.out, res, n, &extras, machine, cores, date, commit))
        return 1;
    return failed ? 1 : 0;
}
