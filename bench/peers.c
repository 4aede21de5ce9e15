/* peers_lammps: one evaluation of projective_pd's local step (F, directions, energy, gradient
 * added into g at both ends) per bond against a whole explicit step of LAMMPS's peri/lps and
 * peri/pmb per bond, on a block of the same lattice, particle count and horizon, with the same
 * number of workers (OpenMP threads here, MPI ranks there). LAMMPS is Debian's `lmp` (package
 * lammps, with openmpi-bin), driven through its input language; none of its code is in this
 * repository. Skipped with a message when `lmp` or `mpirun` is missing. */
#define _POSIX_C_SOURCE 200809L

#include "peers.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peridot/peridot.h"

/* The block: 29 x 29 x 30 particles at 1 cm (25,230, the 25K bunny's size), horizon 2.01
 * spacings (projective_pd's default: the 32 neighbours of a simple cubic lattice), E 1e5 Pa,
 * nu 0.25 (K = 66.7 kPa, G = 40 kPa). */
#define PEERS_NX       29
#define PEERS_NY       29
#define PEERS_NZ       30
#define PEERS_SPACING  0.01
#define PEERS_HORIZON  2.01
#define PEERS_E        1e5
#define PEERS_NU       0.25
#define PEERS_STEPS    5   /* ours, after one warm-up step */
#define PEERS_LMP_RUNS 100 /* LAMMPS steps */

/* snprintf that may truncate on purpose (a note into its fixed buffer). */
static void note_to(char* out, size_t size, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

/* Our local step on the block, falling freely: each step evaluates the local step at its
 * start points (the bond kernels do the same work whatever the deformation). */
static int ours(int threads, peers_result* r) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.001,\"fps\":1000,"
             "\"frames\":10},\"gravity\":[0,-9.81,0],\"materials\":{\"m\":{\"density\":1000,"
             "\"youngs_modulus\":%g,\"poisson_ratio\":%g}},\"bodies\":[{\"name\":\"block\","
             "\"material\":\"m\",\"spacing\":%g,\"shape\":{\"type\":\"box\",\"min\":[0,0,0],"
             "\"max\":[%g,%g,%g]}}]}",
             PEERS_E, PEERS_NU, PEERS_SPACING, PEERS_NX * PEERS_SPACING, PEERS_NY * PEERS_SPACING,
             PEERS_NZ * PEERS_SPACING);
    pd_scene scene;
    pd_error err;
    memset(&err, 0, sizeof err);
    if (pd_scene_parse(json, "peers", ".", NULL, 0, &scene, &err) != PD_OK) {
        note_to(r->note, sizeof r->note, "our block: %s", err.message);
        return 0;
    }
    pd_set_threads(threads);
    pd_world* w = NULL;
    int ok = pd_create_world(&scene, &w, &err) == PD_OK;
    double seconds = 0, bond_evals = 0;
    for (int k = 0; ok && k <= PEERS_STEPS; ++k) {
        ok = pd_world_step(w, &err) == PD_OK;
        if (ok && k > 0) { /* the first is a warm-up */
            pd_step_timing t = pd_world_last_timing(w);
            seconds += t.bond_forces;
            bond_evals += (double)t.local_evaluations * (double)t.bonds;
        }
    }
    if (ok && bond_evals > 0) {
        r->particles = pd_world_get_info(w).particles;
        r->ours_bonds = (double)pd_world_get_info(w).bonds;
        r->ours_ns_per_bond = 1e9 * seconds / bond_evals;
    } else {
        note_to(r->note, sizeof r->note, "our block: %s", err.message);
        ok = 0;
    }
    if (w)
        pd_destroy_world(w);
    pd_scene_free(&scene);
    return ok;
}

/* The LAMMPS input for `style` (lps or pmb) on the periodic block. */
static int write_input(const char* path, const char* style) {
    FILE* f = fopen(path, "w");
    if (!f)
        return 0;
    double h = PEERS_HORIZON * PEERS_SPACING, pi = 3.14159265358979323846;
    double K = PEERS_E / (3 * (1 - 2 * PEERS_NU)), G = PEERS_E / (2 * (1 + PEERS_NU));
    fprintf(f, "units si\nboundary p p p\natom_style peri\natom_modify map array\n");
    fprintf(f, "lattice sc %g\nregion box block 0 %d 0 %d 0 %d\n", PEERS_SPACING, PEERS_NX,
            PEERS_NY, PEERS_NZ);
    fprintf(f, "create_box 1 box\ncreate_atoms 1 region box\n");
    if (!strcmp(style, "lps"))
        fprintf(f, "pair_style peri/lps\npair_coeff * * %.6g %.6g %.6g 1.0 0.0\n", K, G, h);
    else /* the bond constant of the prototype microelastic brittle model, c = 18 K / (pi d^4) */
        fprintf(f, "pair_style peri/pmb\npair_coeff * * %.6g %.6g 1.0 0.0\n",
                18 * K / (pi * h * h * h * h), h);
    fprintf(f, "set group all density 1000\nset group all volume %g\n",
            PEERS_SPACING * PEERS_SPACING * PEERS_SPACING);
    fprintf(f, "velocity all create 1.0e-3 87287 dist gaussian\nfix 1 all nve\n");
    fprintf(f, "neighbor %g bin\ntimestep 1.0e-6\nthermo %d\nrun %d\n", 0.2 * PEERS_SPACING,
            PEERS_LMP_RUNS, PEERS_LMP_RUNS);
    return fclose(f) == 0;
}

/* Runs one style; *loop and *pair get ns per bond per step (whole step, pair part). */
static int lammps(const char* dir, const char* style, int ranks, double* bonds, double* loop,
                  double* pair, char* note, size_t note_size) {
    char input[512], screen[512], cmd[2048];
    snprintf(input, sizeof input, "%s/in.%s", dir, style);
    snprintf(screen, sizeof screen, "%s/screen.%s", dir, style);
    if (!write_input(input, style)) {
        note_to(note, note_size, "cannot write %s", input);
        return 0;
    }
    snprintf(cmd, sizeof cmd,
             "cd '%s' && OMP_NUM_THREADS=1 mpirun %s -np %d lmp -in in.%s -log none -screen "
             "screen.%s >/dev/null 2>&1",
             dir, geteuid() == 0 ? "--allow-run-as-root" : "", ranks, style, style);
    if (system(cmd) != 0) {
        note_to(note, note_size, "lmp (%s) failed: see %s", style, screen);
        return 0;
    }
    FILE* f = fopen(screen, "r");
    if (!f)
        return 0;
    char line[512];
    double seconds = -1, pair_s = -1, b = -1;
    int steps = 0;
    while (fgets(line, sizeof line, f)) {
        double v1, v2;
        int procs, n;
        if (sscanf(line, " total # of bonds = %lf", &v1) == 1)
            b = v1;
        else if (sscanf(line, "Loop time of %lf on %d procs for %d steps", &v1, &procs, &n) == 3)
            seconds = v1, steps = n;
        else if (sscanf(line, "Pair | %lf | %lf", &v1, &v2) == 2)
            pair_s = v2; /* min | avg | max over ranks: the average */
    }
    fclose(f);
    if (b <= 0 || seconds < 0 || pair_s < 0 || steps <= 0) {
        note_to(note, note_size, "could not read bonds and times from %s", screen);
        return 0;
    }
    *bonds = b;
    *loop = 1e9 * seconds / (steps * b);
    *pair = 1e9 * pair_s / (steps * b);
    return 1;
}

void peers_run(int threads, peers_result* r) {
    memset(r, 0, sizeof *r);
    r->threads = threads;
    if (system("command -v lmp >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1") != 0) {
        note_to(r->note, sizeof r->note,
                "skipped: lmp or mpirun not found (Debian: apt-get install lammps "
                "openmpi-bin, or scripts/setup.sh peers)");
        return;
    }
    char dir[] = "/tmp/peridot-peers-XXXXXX"; /* mkdtemp makes the six trailing Xs unique */
    if (!mkdtemp(dir)) {
        note_to(r->note, sizeof r->note, "cannot create a folder in /tmp");
        return;
    }
    double b;
    r->ran =
        ours(threads, r) &&
        lammps(dir, "lps", threads, &r->lps_bonds, &r->lps_ns_loop, &r->lps_ns_pair, r->note,
               sizeof r->note) &&
        lammps(dir, "pmb", threads, &b, &r->pmb_ns_loop, &r->pmb_ns_pair, r->note, sizeof r->note);
    if (r->ran) { /* keep the folder of a failed run: its screen output says why */
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            note_to(r->note, sizeof r->note, "could not remove %s", dir);
    }
}

static double ratio(double a, double b) {
    return b > 0 ? a / b : 0;
}

void peers_print(FILE* f, const peers_result* r, int n) {
    fprintf(f, "\n%-13s %3s %9s %10s %10s %11s %11s %11s %11s %9s\n", "peers", "thr", "particles",
            "our_ns/b", "lmp_bonds", "lps_loop_ns", "lps_pair_ns", "pmb_loop_ns", "pmb_pair_ns",
            "ours/lps");
    for (int k = 0; k < n; ++k) {
        if (!r[k].ran) {
            fprintf(f, "%-13s %3d %s\n", "peers_lammps", r[k].threads, r[k].note);
            continue;
        }
        fprintf(f, "%-13s %3d %9zu %10.2f %10.0f %11.2f %11.2f %11.2f %11.2f %9.3f\n",
                "peers_lammps", r[k].threads, r[k].particles, r[k].ours_ns_per_bond, r[k].lps_bonds,
                r[k].lps_ns_loop, r[k].lps_ns_pair, r[k].pmb_ns_loop, r[k].pmb_ns_pair,
                ratio(r[k].ours_ns_per_bond, r[k].lps_ns_loop));
    }
}

void peers_markdown(FILE* f, const peers_result* r, int n) {
    fprintf(f, "\n## Peers: LAMMPS peri/lps and peri/pmb (Debian's lmp)\n\n");
    fprintf(f,
            "A %d x %d x %d block at %g m, horizon %g spacings, E %g Pa, nu %g; LAMMPS "
            "periodic, %d steps of velocity Verlet, one MPI rank per worker; ours one "
            "evaluation of the local step's bond kernels, free block, %d steps.\n\n",
            PEERS_NX, PEERS_NY, PEERS_NZ, PEERS_SPACING, PEERS_HORIZON, PEERS_E, PEERS_NU,
            PEERS_LMP_RUNS, PEERS_STEPS);
    fprintf(f, "| workers | particles | our bonds | our local ns/bond | LAMMPS bonds | peri/lps "
               "ns/bond-step (loop) | peri/lps pair ns/bond | peri/pmb ns/bond-step (loop) | "
               "peri/pmb pair ns/bond | ours / peri/lps loop | ours / peri/lps pair |\n");
    fprintf(f, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < n; ++k) {
        if (!r[k].ran) {
            fprintf(f, "| %d | %s ||||||||||\n", r[k].threads, r[k].note);
            continue;
        }
        fprintf(f, "| %d | %zu | %.0f | %.2f | %.0f | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f |\n",
                r[k].threads, r[k].particles, r[k].ours_bonds, r[k].ours_ns_per_bond,
                r[k].lps_bonds, r[k].lps_ns_loop, r[k].lps_ns_pair, r[k].pmb_ns_loop,
                r[k].pmb_ns_pair, ratio(r[k].ours_ns_per_bond, r[k].lps_ns_loop),
                ratio(r[k].ours_ns_per_bond, r[k].lps_ns_pair));
    }
}
