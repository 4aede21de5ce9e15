/* peers_cantilever: time to solution on a stiff cantilever (issue 36 item 3). Implicit steps
 * exist to beat explicit ones on stiff bodies; this case measures whether projective_pd does,
 * on one beam: LAMMPS peri/lps (Debian's `lmp`, driven through its input language; none of its
 * code is here) and sbpd at their stable steps, projective_pd at h = 1/100 and 1/30 s in both
 * iteration modes, and projective_pd's accurate mode at h = 1 ms, the reference for its sag.
 * Each runs 1 s of simulated time; reported: wall and CPU time, and the tip's static sag
 * against Euler-Bernoulli. On a shared machine compare CPU times. */
#define _POSIX_C_SOURCE 200809L

#include "cantilever.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "peridot/peridot.h"
#include "results.h"

/* The beam: 42 x 6 x 7 particles at 1 cm (1,764), the two layers at x < 0 clamped, L = 0.40 m
 * from the clamp, h = 6 cm thick, 7 cm wide; E 1e7 Pa, nu 0.25, rho 1000 kg/m^3, under gravity
 * from rest. Euler-Bernoulli's first period 0.165 s, sag 10.7 mm (2.7 % of L). */
#define BEAM_L       0.40
#define BEAM_H       0.06
#define BEAM_E       1e7
#define BEAM_NU      0.25
#define BEAM_RHO     1000.0
#define BEAM_SPACING 0.01
#define T_END        1.0
#define MAX_SAMPLES  40000
/* LAMMPS peri/lps on this beam (horizon 2.01 spacings, velocity Verlet) ran 0.3 s at 9e-5 s and
 * blew up within 0.2 s at 1e-4 s (measured once, 2026-11-28): 0.9 of the stable one. */
#define LMP_DT 8e-5

static void note_to(char* out, size_t size, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

double cantilever_reference_sag(void) {
    double g = 9.81, G = BEAM_E / (2 * (1 + BEAM_NU));
    double kappa = 10 * (1 + BEAM_NU) / (12 + 11 * BEAM_NU); /* Cowper 1966 */
    double bending = 3 * BEAM_RHO * g * pow(BEAM_L, 4) / (2 * BEAM_E * BEAM_H * BEAM_H);
    return bending + BEAM_RHO * g * BEAM_L * BEAM_L / (2 * kappa * G);
}

static double seconds_now(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Time and value of the extremum at sample k, by the parabola through k - 1, k, k + 1. */
static double vertex(const double* d, int k) {
    double a = d[k - 1], b = d[k], c = d[k + 1], den = a - 2 * b + c;
    double u = den != 0 ? 0.5 * (a - c) / den : 0;
    return b - 0.25 * (a - c) * u;
}

/* The static sag the tip swings about: the extrema of the swing (each confirmed once the tip
 * has come back by 20 % of the swing from the last one, which skips the higher modes' ripple),
 * and Aitken's extrapolation of the last three (exact for a geometrically decaying swing, the
 * midpoint for an undamped one); with fewer than three the swing has died: the last sample. */
static double static_sag(const double* d, int n, int* extrema) {
    double ext[3] = {0, 0, 0};
    int found = 0, k_ext = 0, seeking_max = 1;
    double last = 0;
    for (int k = 1; k < n; ++k) {
        if (seeking_max ? d[k] > d[k_ext] : d[k] < d[k_ext])
            k_ext = k;
        double swing = fabs(d[k_ext] - last);
        if (k_ext > 0 && k_ext < k && swing > 0 && fabs(d[k] - d[k_ext]) > 0.2 * swing) {
            ext[0] = ext[1], ext[1] = ext[2], ext[2] = vertex(d, k_ext);
            last = ext[2], ++found, seeking_max = !seeking_max, k_ext = k;
        }
    }
    *extrema = found;
    if (found < 3)
        return d[n - 1];
    double den = ext[0] + ext[2] - 2 * ext[1];
    return fabs(den) > 1e-15 ? (ext[0] * ext[2] - ext[1] * ext[1]) / den : ext[2];
}

/* ---------------------------------------------------------------- ours */

static void scene_json(char* out, size_t size, const char* method, const char* solver, double dt) {
    char time[160];
    if (dt > 0)
        note_to(time, sizeof time, "{\"dt\":%.17g,\"fps\":%.17g,\"frames\":%d}", dt, 1 / dt,
                (int)lround(T_END / dt));
    else
        note_to(time, sizeof time, "{\"dt\":\"auto\",\"fps\":100,\"frames\":%d}",
                (int)lround(T_END * 100));
    note_to(out, size,
            "{\"version\":1,\"method\":\"%s\",\"solver\":{%s},\"time\":%s,"
            "\"gravity\":[0,-9.81,0],\"materials\":{\"m\":{\"density\":%g,\"youngs_modulus\":%g,"
            "\"poisson_ratio\":%g}},\"bodies\":[{\"name\":\"beam\",\"material\":\"m\","
            "\"spacing\":%g,\"shape\":{\"type\":\"box\",\"min\":[%g,0,0],\"max\":[%g,%g,0.07]},"
            "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0,1,1]}}]}]}",
            method, solver, time, BEAM_RHO, BEAM_E, BEAM_NU, BEAM_SPACING, -2 * BEAM_SPACING,
            BEAM_L, BEAM_H);
}

/* The mean downward displacement of the tip layer (ids in tip[0..n)) from y0. */
static double tip_sag(const pd_world* w, const uint32_t* tip, int n, const double* y0) {
    pd_particle_view v = pd_world_particles(w);
    double sum = 0;
    for (int k = 0; k < n; ++k)
        sum += y0[k] - v.positions[v.order[tip[k]]].y;
    return sum / n;
}

static int tip_layer(const pd_world* w, uint32_t** tip, double** y0) {
    pd_particle_view v = pd_world_particles(w);
    *tip = malloc(v.count * sizeof **tip);
    *y0 = malloc(v.count * sizeof **y0);
    int n = 0;
    for (size_t id = 0; *tip && *y0 && id < v.count; ++id) {
        pd_vec3 p = v.positions[v.order[id]];
        if (p.x > BEAM_L - BEAM_SPACING)
            (*tip)[n] = (uint32_t)id, (*y0)[n++] = p.y;
    }
    return n;
}

static void run_ours(int threads, const char* who, const char* method, const char* solver,
                     double dt, cantilever_run* r, size_t* particles) {
    static double sags[MAX_SAMPLES];
    char json[2048];
    scene_json(json, sizeof json, method, solver, dt);
    note_to(r->who, sizeof r->who, "%s", who);
    pd_scene scene;
    pd_error err;
    memset(&err, 0, sizeof err);
    if (pd_scene_parse(json, "cantilever", ".", NULL, 0, &scene, &err) != PD_OK) {
        note_to(r->note, sizeof r->note, "scene: %s", err.message);
        return;
    }
    pd_set_threads(threads);
    double wall0 = seconds_now(CLOCK_MONOTONIC), cpu0 = seconds_now(CLOCK_PROCESS_CPUTIME_ID);
    pd_world* w = NULL;
    uint32_t* tip = NULL;
    double* y0 = NULL;
    int ok = pd_create_world(&scene, &w, &err) == PD_OK, tips = ok ? tip_layer(w, &tip, &y0) : 0;
    int n = 0;
    double iterations = 0;
    sags[n++] = 0;
    while (ok && tips > 0 && pd_world_get_info(w).time < T_END - 1e-9 && n < MAX_SAMPLES) {
        ok = pd_world_step(w, &err) == PD_OK;
        iterations += pd_world_get_info(w).iterations;
        sags[n++] = tip_sag(w, tip, tips, y0);
    }
    r->wall_s = seconds_now(CLOCK_MONOTONIC) - wall0;
    r->cpu_s = seconds_now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    if (ok && tips > 0) {
        pd_world_info info = pd_world_get_info(w);
        *particles = info.particles;
        r->ran = 1, r->dt = info.dt, r->steps = (long)info.steps;
        r->iterations = iterations / (double)(n - 1);
        r->sag = static_sag(sags, n, &r->extrema);
    } else
        note_to(r->note, sizeof r->note, "%s", tips > 0 ? err.message : "no tip layer");
    free(tip), free(y0);
    if (w)
        pd_destroy_world(w);
    pd_scene_free(&scene);
}

/* ---------------------------------------------------------------- LAMMPS */

/* The same beam: lattice points at 1 cm (x = 0 .. 41 spacings), the two layers at x < 1.5
 * spacings clamped (setforce 0, from rest), so the beam runs 0.40 m from the clamp's edge; the
 * tip's height (its layer's centre of mass) every millisecond. */
static int write_input(const char* path, int every, long steps) {
    FILE* f = fopen(path, "w");
    if (!f)
        return 0;
    double K = BEAM_E / (3 * (1 - 2 * BEAM_NU)), G = BEAM_E / (2 * (1 + BEAM_NU));
    double s = BEAM_SPACING, x_tip = 1.5 * s + BEAM_L - s;
    fprintf(f, "units si\nboundary s s s\natom_style peri\natom_modify map array\n");
    fprintf(f, "lattice sc %g\nregion box block -0.5 41.5 -0.5 5.5 -0.5 6.5\n", s);
    fprintf(f, "create_box 1 box\ncreate_atoms 1 region box\n");
    fprintf(f, "pair_style peri/lps\npair_coeff * * %.6g %.6g %.6g 1.0 0.0\n", K, G, 2.01 * s);
    fprintf(f, "set group all density %g\nset group all volume %g\n", BEAM_RHO, s * s * s);
    fprintf(f, "region clamp block INF %g INF INF INF INF units box\ngroup clamp region clamp\n",
            1.5 * s);
    fprintf(f, "region tip block %g INF INF INF INF INF units box\ngroup tip region tip\n", x_tip);
    fprintf(f, "variable ty equal xcm(tip,y)\nfix 1 all nve\nfix 2 all gravity 9.81 vector 0 -1 "
               "0\nfix 3 clamp setforce 0 0 0\n");
    fprintf(f, "neighbor %g bin\ntimestep %g\nthermo_style custom step v_ty\nthermo %d\nrun %ld\n",
            0.2 * s, LMP_DT, every, steps);
    return fclose(f) == 0;
}

static double child_cpu(void) {
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

/* The tip heights from the thermo lines (step, height) of the screen output. */
static int read_tip(const char* screen, double* sags, int max, char* note, size_t size) {
    FILE* f = fopen(screen, "r");
    if (!f)
        return 0;
    char line[512];
    int n = 0, in_run = 0;
    double y0 = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        long step;
        double y;
        if (!strncmp(line, "   Step", 7) || !strncmp(line, "Step", 4))
            in_run = 1;
        else if (!strncmp(line, "Loop time", 9))
            in_run = 0;
        else if (in_run && sscanf(line, "%ld %lf", &step, &y) == 2) {
            if (n == 0)
                y0 = y;
            sags[n++] = y0 - y;
        }
    }
    fclose(f);
    if (n < 10)
        note_to(note, size, "could not read the tip from %s", screen);
    return n >= 10 ? n : 0;
}

static void run_lammps(int ranks, cantilever_run* r) {
    static double sags[MAX_SAMPLES];
    note_to(r->who, sizeof r->who, "lammps peri/lps");
    if (system("command -v lmp >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1") != 0) {
        note_to(r->note, sizeof r->note,
                "skipped: lmp or mpirun not found (scripts/setup.sh peers installs them)");
        return;
    }
    char dir[] = "/tmp/peridot-cantilever-XXXXXX";
    if (!mkdtemp(dir)) {
        note_to(r->note, sizeof r->note, "cannot create a folder in /tmp");
        return;
    }
    long steps = lround(T_END / LMP_DT);
    int every = (int)lround(1e-3 / LMP_DT);
    char input[512], cmd[2048];
    note_to(input, sizeof input, "%s/in.beam", dir);
    if (!write_input(input, every, steps)) {
        note_to(r->note, sizeof r->note, "cannot write %s", input);
        return;
    }
    note_to(cmd, sizeof cmd,
            "cd '%s' && OMP_NUM_THREADS=1 mpirun %s -np %d lmp -in in.beam -log none -screen "
            "screen >/dev/null 2>&1",
            dir, geteuid() == 0 ? "--allow-run-as-root" : "", ranks);
    double wall0 = seconds_now(CLOCK_MONOTONIC), cpu0 = child_cpu();
    int ok = system(cmd) == 0;
    r->wall_s = seconds_now(CLOCK_MONOTONIC) - wall0;
    r->cpu_s = child_cpu() - cpu0;
    char screen[600];
    note_to(screen, sizeof screen, "%s/screen", dir);
    int n = ok ? read_tip(screen, sags, MAX_SAMPLES, r->note, sizeof r->note) : 0;
    if (!ok)
        note_to(r->note, sizeof r->note, "lmp failed: see %s", screen);
    if (n > 0) {
        r->ran = 1, r->dt = LMP_DT, r->steps = steps, r->iterations = 1;
        r->sag = static_sag(sags, n, &r->extrema);
        note_to(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            note_to(r->note, sizeof r->note, "could not remove %s", dir);
    }
}

/* ---------------------------------------------------------------- the case */

void cantilever_bench(int threads, cantilever_result* out) {
    memset(out, 0, sizeof *out);
    out->threads = threads;
    static const char accurate[] = "\"projective_pd\":{\"iterations\":100}";
    static const char direct[] =
        "\"projective_pd\":{\"iterations\":100,\"global_solve\":\"direct\"}";
    static const char semi20[] =
        "\"projective_pd\":{\"iteration\":\"semi_iterative\",\"iterations\":20}";
    static const char semi100[] =
        "\"projective_pd\":{\"iteration\":\"semi_iterative\",\"iterations\":100}";
    struct {
        const char *who, *method, *solver;
        double dt;
    } ours[] = {
        {"sbpd", "sbpd", "", 0}, /* dt "auto": 0.9 of its stability bound */
        {"projective_pd accurate", "projective_pd", accurate, 1e-3},
        {"projective_pd accurate", "projective_pd", accurate, 1.0 / 100},
        {"projective_pd accurate", "projective_pd", accurate, 1.0 / 30},
        {"projective_pd accurate direct", "projective_pd", direct, 1.0 / 100},
        {"projective_pd accurate direct", "projective_pd", direct, 1.0 / 30},
        {"projective_pd semi_iterative 20", "projective_pd", semi20, 1.0 / 100},
        {"projective_pd semi_iterative 20", "projective_pd", semi20, 1.0 / 30},
        {"projective_pd semi_iterative 100", "projective_pd", semi100, 1.0 / 30},
    };
    /* PD_CANTILEVER_RUNS=TEXT runs only the runs whose name contains TEXT (a re-measure of
     * some rows; the ratios to the reference and to the explicit peers then read 0). */
    const char* only = getenv("PD_CANTILEVER_RUNS");
    if (!only || strstr("lammps peri/lps", only))
        run_lammps(threads, &out->runs[out->count++]);
    for (size_t k = 0; k < sizeof ours / sizeof ours[0]; ++k)
        if (!only || strstr(ours[k].who, only))
            run_ours(threads, ours[k].who, ours[k].method, ours[k].solver, ours[k].dt,
                     &out->runs[out->count++], &out->particles);
}

/* The accurate mode at h = 1 ms: every projective_pd sag is compared with it. */
static const cantilever_run* reference_run(const cantilever_result* r) {
    for (int k = 0; k < r->count; ++k)
        if (r->runs[k].ran && !strcmp(r->runs[k].who, "projective_pd accurate") &&
            r->runs[k].dt < 2e-3)
            return &r->runs[k];
    return NULL;
}

static double fastest_explicit_cpu(const cantilever_result* r) {
    double best = 0;
    for (int k = 0; k < r->count; ++k)
        if (r->runs[k].ran && !strstr(r->runs[k].who, "projective_pd") &&
            (best == 0 || r->runs[k].cpu_s < best))
            best = r->runs[k].cpu_s;
    return best;
}

void cantilever_print(FILE* f, const cantilever_result* r) {
    const cantilever_run* ref = reference_run(r);
    double eb = cantilever_reference_sag(), fastest = fastest_explicit_cpu(r);
    fprintf(f,
            "\npeers_cantilever: %zu particles, %d thread(s), 1 s simulated; Euler-Bernoulli + "
            "shear sag %.4g m\n",
            r->particles, r->threads, eb);
    fprintf(f, "%-29s %9s %6s %8s %8s %6s %9s %7s %8s %9s %4s\n", "run", "dt_s", "steps", "wall_s",
            "cpu_s", "iters", "sag_m", "sag/EB", "sag/ref", "expl/cpu", "ext");
    for (int k = 0; k < r->count; ++k) {
        const cantilever_run* x = &r->runs[k];
        if (!x->ran) {
            fprintf(f, "%-29s %s\n", x->who, x->note);
            continue;
        }
        int ours = strstr(x->who, "projective_pd") != NULL;
        fprintf(f, "%-29s %9.3g %6ld %8.2f %8.2f %6.1f %9.5f %7.3f %8.3f %9.2f %4d\n", x->who,
                x->dt, x->steps, x->wall_s, x->cpu_s, x->iterations, x->sag, x->sag / eb,
                ours && ref ? x->sag / ref->sag : 0, fastest > 0 ? fastest / x->cpu_s : 0,
                x->extrema);
    }
}

int cantilever_record(const char* dir, const cantilever_result* r, const char* date,
                      const char* commit, const char* label) {
    static const char columns[] = "date,commit,label,threads,particles,run,dt_s,steps,wall_s,"
                                  "cpu_s,iterations,sag_m,sag_over_eb,sag_over_accurate_1ms,"
                                  "fastest_explicit_cpu_over_cpu,extrema";
    const cantilever_run* ref = reference_run(r);
    double eb = cantilever_reference_sag(), fastest = fastest_explicit_cpu(r);
    int failed = 0;
    for (int k = 0; k < r->count; ++k) {
        const cantilever_run* x = &r->runs[k];
        if (!x->ran)
            continue;
        int ours = strstr(x->who, "projective_pd") != NULL;
        char row[1024];
        note_to(row, sizeof row,
                "%s,%s,\"%s\",%d,%zu,\"%s\",%.6g,%ld,%.3f,%.3f,%.2f,%.6g,%.4f,%.4f,"
                "%.3f,%d",
                date, commit, label, r->threads, r->particles, x->who, x->dt, x->steps, x->wall_s,
                x->cpu_s, x->iterations, x->sag, x->sag / eb, ours && ref ? x->sag / ref->sag : 0,
                fastest > 0 ? fastest / x->cpu_s : 0, x->extrema);
        failed |= results_append(dir, "peers_cantilever", columns, row) != 0;
    }
    return failed ? -1 : 0;
}
