/* The quasi-2D column collapse (issues 7 and 32) for every method with Drucker-Prager
 * plasticity, against Lube et al. 2005 (PRE 72:041301; VALIDATION.md, "Granular"): a column
 * of sand of length L0 and height a L0 against the back wall of a channel, released at once on
 * a rough floor, runs out by dL/L0 = 1.2 a for a <~ 1.8 and 1.9 a^(2/3) for a >~ 2.8; continuum
 * simulations land within -25 % / +50 % of these. The runout is read at the deposit's front as
 * issue 37 defines it, independent of the resolution (runout.h's pd_channel_front: the farthest
 * slice holding 1 % of the column's mass per L0 length); the two-grains-thick rule it replaced
 * (VALIDATION.md's, pd_channel_runout) is printed beside it: at 16 grains across it cuts the a =
 * 0.5 column's flank 2 s cot(phi) = 0.22 L0 short of its toe (physics.channel_front). */
#include <stdlib.h>
#include <time.h>

#include "methods.h"
#include "runout.h"

#define L0     0.08 /* the column's length: 8 cm */
#define ACROSS 16   /* grains across L0 (5 mm), but for the low column's finer runs below */
#define DEEP   4    /* the channel: four grains deep */

/* Friction angle 30 degrees, no cohesion, E 3e5 Pa, nu 0.3, 1600 kg/m^3; a no-slip floor and
 * the channel's walls (a box collider open upward, the sand inside) slip without friction. The
 * channel holds the sand in plane strain, where the Drucker-Prager cone that fails with
 * Mohr-Coulomb at phi is the plane-strain one: b = sin phi / 3 = 0.167 at 30 degrees for a flow
 * without dilation (Klar's return keeps the volume), tan phi / sqrt(9 + 12 tan^2 phi) = 0.160
 * for associated flow. The extension cone (b = 0.165) is within 3 % of both; the compression
 * cone (0.231, triaxial compression's match) is 40 % stronger there: mpm runs out 2.50 on it
 * at a = 3, measured once (docs/validation.md).
 * Every method steps "auto" but projective_pd, which keeps the step and the four plastic
 * corrections of its granular tests (granular.c) and its own `granular` block (set for it
 * alone: the others refuse the key). */
static const char* k_channel = PD_CHANNEL_SCENE; /* runout.h */

typedef struct runout {
    int ok;
    double dl;      /* dL / L0, two grains thick (pd_channel_runout) */
    double front;   /* dL / L0 at 1 % of the column's mass per L0 (pd_channel_front) */
    double seconds; /* simulated until at rest */
} runout;

/* Runs the collapse of aspect ratio a, `across` grains across L0, until at rest
 * (runout.h: the kinetic energy below 1e-6 of the initial potential energy after 0.2 s; at most
 * 2 s). */
static runout collapse(double a, int across) {
    runout r = {0};
    char json[4096];
    double spacing = L0 / across, depth = DEEP * spacing;
    snprintf(json, sizeof json, k_channel, spacing, L0, a * L0, depth, depth);
    const char* own[] = {"materials.sand.granular={}"};
    int n = strcmp(g_pd_method.method->name, "projective_pd") == 0;
    pd_test_sim t;
    if (!pd_test_method_open(&t, json, own, n))
        return r;
    const pd_particles* p = &t.world->particles;
    double rest = pd_channel_run_to_rest(t.world);
    if (rest < 0) {
        pd_test_sim_close(&t);
        return r;
    }
    r = (runout){1, pd_channel_runout(p, spacing, L0), pd_channel_front(p, L0), t.world->time};
    printf("  %s a = %.1f: %zu grains, dt %.3g s, %s at %.2f s (KE / PE0 %.1e): dL/L0 = %.3f "
           "(two grains thick %.3f)\n",
           g_pd_method.method->name, a, p->count, t.world->def.dt,
           rest < 1e-6 ? "at rest" : "stopped", r.seconds, rest, r.front, r.dl);
    pd_test_sim_close(&t);
    return r;
}

/* Lube 2005's runout for aspect ratio a (the two regimes; between them the nearer). */
static double lube2005(double a) {
    return a < 2.3 ? 1.2 * a : 1.9 * pow(a, 2.0 / 3.0);
}

/* Why a method is left out of the collapse of aspect ratio a (NULL: it runs). Each method's
 * run is to stay within about a minute of CPU: sbpd's explicit passes step at 3.7e-5 s here (a
 * fifth of mpm's step; 10800 steps, 2.5 min on the shared 2-core machine, for the first 0.4 s
 * of the 512-grain a = 0.5 column, which runs up to 2 s); projective_pd runs its columns with
 * the return in the solve (the scene below, end of file; the paper's order with four plastic
 * corrections crept to 0.3125 at a = 0.5 in 2 s, 43 s of CPU), a = 3 as a scene; xpbi steps at
 * 2.8e-4 s here (courant 1) and takes 7 s of CPU for the a = 0.5 column (25 s at the 24 grains
 * across it runs, 1.9e-4 s a step), 172 s for the 3072
 * grains of a = 3 (measured once where xpbi's Drucker-Prager was declared: 4.12 for 3.95, at rest
 * at 0.59 s, in the band; docs/methods/xpbi.md). */
static const char* left_out(double a) {
    const char* name = g_pd_method.method->name;
    if (strcmp(name, "sbpd") == 0)
        return "its stable step is 3.7e-5 s: minutes of CPU for either column";
    if (strcmp(name, "projective_pd") == 0)
        return a > 1 ? "the return in the solve: scenes/lube2005_channel_a3.json (CPU)"
                     : "the return in the solve: known_failure_return_in_the_solve_channel_"
                       "low_column_runs_out_as_lube2005";
    if (strcmp(name, "xpbi") == 0 && a > 1)
        return "about 3 min of CPU for the 3072 grains of a = 3 (4.12 once, in the band)";
    return NULL;
}

/* Grains across L0 for the column of aspect ratio a. The low column's failing wedge is a few
 * grains wide at 16 across, and its front grows with the grains across (docs/methods/mpm.md,
 * "Resolution, particles per cell, transfer and cone"): xpbi reads 0.4375 / 0.625 / 0.500 at
 * 16 / 24 / 32 across (the farthest grain 0.428 / 0.567 / 0.474), in the band from 24 on, and
 * runs at 24 (25 s of CPU, one thread). mpm's does not converge: 0.3125 / 0.375 / 0.4375 /
 * 0.5625 / 0.625 / 0.8125 / 0.9375 at 16 / 24 / 32 / 48 / 64 / 96 / 128 across, into the band
 * at 48 and out of it at 128, so no one resolution stands for it: it runs at the 16, a
 * known failure. */
static int grains_across(double a) {
    if (a < 1 && strcmp(g_pd_method.method->name, "xpbi") == 0)
        return 24;
    return ACROSS;
}

/* The runout of the column of aspect ratio a in Lube 2005's band. */
static void channel(double a) {
    const char* why = left_out(a);
    if (why) {
        printf("  %s: left out at a = %g (%s)\n", g_pd_method.method->name, a, why);
        return;
    }
    double want = lube2005(a);
    int across = grains_across(a);
    runout r = collapse(a, across);
    PD_METHOD_REQUIRE(r.ok);
    char what[128], grains[40] = "";
    if (across != ACROSS)
        snprintf(grains, sizeof grains, " with %d grains across", across);
    snprintf(what, sizeof what, "dL/L0 to the 1 %% front at a = %g%s (Lube 2005 %.2f)", a, grains,
             want);
    pd_test_method_bound(what, r.front, 0.75 * want, 1.5 * want);
}

static void tall_column(void) {
    channel(3);
}

static void low_column(void) {
    channel(0.5);
}

/* a = 3: the runout regime 1.9 a^(2/3) = 3.95. mpm runs out 3.875 to the front (3.50 two grains
 * thick), at rest at 0.57 s, on the rough floor as grid_boundary.h's pd_grid_wall has it: the floor
 * holds the grains on it and the sand slides over them at its own friction, tan phi of the normal
 * load along the floor. While the no_slip floor held its nodes whatever their load (the bottom
 * cell, two grains, stuck to it under a front 2-4 cells thick) the column ran out 2.56 two grains
 * thick, at rest at 1.43 s (3.25 at half the spacing); docs/methods/mpm.md, "The collapse and the
 * floor". */
PD_TEST_EACH_METHOD(channel_collapse_tall_column_runs_out_as_lube2005, PD_CAP_DRUCKER_PRAGER,
                    tall_column)

/* a = 0.5: 1.2 a = 0.60, band from 0.45. The sand's flank stops at its angle in flow, atan(3 b)
 * = 26.3 degrees on the extension cone (Klar's return keeps the volume: a flowing layer shears at
 * sin phi, physics.mpm_sand_layer), so a deposit at rest without momentum runs out a / (6 b) =
 * 0.505 (0.500 to the front; physics.channel_front's Coulomb shape at phi, 0.433, is a sand that
 * stops at phi). A method reads short of it while the failing wedge is a few grains wide: at 16
 * across mpm's stops at 0.3125 (its wedge 2.3 cells wide shears as one), xpbi's at 0.4375 (a
 * grain short), projective_pd's crept to 0.3125 in 2 s with the return after the solve (with it
 * in the solve, below, 0.3125, not converged); xpbi at 24 across runs into the band
 * (grains_across); mpm's runout grows with the grains across past the band (a known failure
 * until it converges; docs/methods/mpm.md, "Resolution, particles per cell, transfer and
 * cone"). */
PD_TEST_EACH_METHOD_KNOWN(channel_collapse_low_column_runs_out_as_lube2005, PD_CAP_DRUCKER_PRAGER,
                          "mpm", low_column)

/* projective_pd with the plastic return in the solve (issue 37 item 2): the channel's column
 * under lube_column.c's settings (the return, the density penalty and the repulsion in the
 * solve, compaction read against the family's reference sum, the invariants from F, the
 * repulsion at half a spacing, Eq. 28 on, 20 iterations, dt 2 ms) and the channel's own (the
 * extension cone, plane strain's match; the no_slip floor; the slip side walls without
 * friction). scenes/lube2005_channel_a0_5.json (a = 1 and 3: _a1, _a3). What does not carry
 * over as it stands: the walls' density share. Granular matter reads a collider's share as the
 * half-space beyond it, whose grains at rest sit 0.5545 spacings from it, not the lattice's
 * half spacing (pd_sph_poly6_rest_height; a grain half a spacing off a wall reads 2.5 %
 * compressed). The lube column has that on its floor's bottom row only; in a channel four grains
 * deep every grain is within 1.5 spacings of a side wall, the back wall and the floor add theirs,
 * and the column released at the lattice's half spacing from them expanded as the penalty let
 * go: its potential energy rose 2.9 % in the first 10 steps, kinetic plus potential reaching
 * 1.038 of the initial potential. The scenes place the walls, the back wall and the floor at the
 * rest height from the lattice (the column raised, the channel widened by 0.0545 spacings a
 * side: 0.27 mm at 5 mm), where the start is at rest with the penalty. */
static const char* k_in_solve_low = "lube2005_channel_a0_5.json";

typedef struct in_solve_run {
    int ok;
    double front;   /* dL / L0 to the 1 % front */
    double height;  /* the deposit's height over a L0 (deposit_height) */
    double height0; /* the same at the start (the top row's centres half a spacing down) */
    double seconds; /* at rest at (the run's end) */
    double rest;    /* KE / PE0 at the end */
    double e_max;   /* the most kinetic plus potential energy over the initial potential */
    double cpu;     /* seconds of CPU */
} in_solve_run;

/* The deposit's height over h0 (runout.h's: the grains above 90 % of the highest). */
static double deposit_height(const pd_particles* p, double h0) {
    return pd_deposit_top_height(p) / h0;
}

/* Runs the scene's column (aspect ratio a) until at rest (runout.h's measure: KE below 1e-6 of
 * the initial potential energy after 0.2 s; at most 2 s), with the energy check beside it. */
static in_solve_run in_solve_collapse(const char* scene, double a) {
    in_solve_run r = {0};
    pd_test_sim t;
    if (!pd_test_sim_open_scene(&t, scene, NULL, 0))
        return r;
    pd_world* w = t.world;
    const pd_particles* p = &w->particles;
    double pe0 = 0, ke = 0;
    for (size_t i = 0; i < p->count; ++i)
        pe0 += p->mass[i] * 9.81 * p->pos[i].y;
    double height0 = deposit_height(p, a * L0);
    pd_error err = {0};
    clock_t c0 = clock();
    while (w->time < 2.0 - 1e-9) {
        if (pd_world_step(w, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            pd_test_sim_close(&t);
            return r;
        }
        double pe = 0;
        ke = 0;
        for (size_t i = 0; i < p->count; ++i) {
            ke += 0.5 * p->mass[i] * pd_v3_len2(p->vel[i]);
            pe += p->mass[i] * 9.81 * p->pos[i].y;
        }
        r.e_max = fmax(r.e_max, (ke + pe) / pe0);
        if (w->time > 0.2 && ke < 1e-6 * pe0)
            break;
    }
    r = (in_solve_run){1,
                       pd_channel_front(p, L0),
                       deposit_height(p, a * L0),
                       height0,
                       w->time,
                       ke / pe0,
                       r.e_max,
                       (double)(clock() - c0) / CLOCKS_PER_SEC};
    printf("  projective_pd, the return in the solve, a = %g: %zu grains, %s at %.3f s (KE / PE0 "
           "%.1e; the most energy %.4f of PE0): dL/L0 = %.4f (two grains thick %.4f), Lube 2005 "
           "%.2f (band %.2f..%.2f); deposit height %.3f of a L0 (%.3f at the start); %.0f s of "
           "CPU\n",
           a, p->count, r.rest < 1e-6 ? "at rest" : "stopped", r.seconds, r.rest, r.e_max, r.front,
           pd_channel_runout(p, L0 / ACROSS, L0), lube2005(a), 0.75 * lube2005(a),
           1.5 * lube2005(a), r.height, r.height0, r.cpu);
    pd_test_sim_close(&t);
    return r;
}

/* A row of docs/measured.csv for projective_pd's test `test` (verdict "pass" or "known
 * failure"). */
static void record_in_solve(const char* test, const char* quantity, double measured,
                            const char* range, int ok) {
    const char* path = getenv("PD_MEASURED");
    if (!path || !*path)
        return;
    char key[256], row[512];
    snprintf(key, sizeof key, "drucker_prager,%s,projective_pd,%s,", test, quantity);
    snprintf(row, sizeof row, "%s%.4g,,%s,%s", key, measured, range, ok ? "pass" : "known failure");
    pd_test_record_row(path, key, row);
}

/* Runs the scene's column of aspect ratio a and checks its front in Lube 2005's band and no
 * energy gained (kinetic plus potential never above 1.01 of the initial potential: at the
 * lattice's half spacing from the walls the start alone gave 1.038, above); rows of
 * docs/measured.csv under `test`. */
static void in_solve_channel(const char* scene, double a, const char* test) {
    double want = lube2005(a);
    in_solve_run r = in_solve_collapse(scene, a);
    PD_REQUIRE(r.ok);
    int ok = r.front >= 0.75 * want && r.front <= 1.5 * want, kept = r.e_max < 1.01;
    char range[64], what[128];
    snprintf(range, sizeof range, "%g..%g", 0.75 * want, 1.5 * want);
    snprintf(what, sizeof what, "dL/L0 to the 1 %% front at a = %g (Lube 2005 %.2f)", a, want);
    record_in_solve(test, what, r.front, range, ok);
    record_in_solve(test, "most kinetic plus potential energy over the initial potential", r.e_max,
                    "< 1.01", kept);
    PD_CHECK(ok);
    PD_CHECK(kept);
}

/* a = 0.5: 1.2 a = 0.60, band 0.45..0.90. A known failure: 0.3125 at 16 grains across, at rest
 * by 0.2 s. The front does not converge with the grains across (the scene scaled: 0.3125 /
 * 0.500 / 0.375 at 16 / 24 / 32 across, 0.4375 at 24 with the walls moved by 1e-3 of their
 * offset), so no finer resolution confirms a passing one and the test stays at the scene's 16
 * (docs/validation.md, "Known failures"). */
PD_TEST(known_failure_return_in_the_solve_channel_low_column_runs_out_as_lube2005) {
    in_solve_channel(k_in_solve_low, 0.5,
                     "return_in_the_solve_channel_low_column_runs_out_as_"
                     "lube2005");
}

/* a = 1: 1.2 a = 1.20, band 0.90..1.80, at the scene's 16 grains across (1024 grains): 1.0625,
 * at rest at 0.28 s (0.9375 before friction's lambda renewal); 1.0625 / 1.1875 with the walls moved
 * by 1e-3 of their offset (x 0.999 / x 1.001), 1.1875 at 24 across (2304 grains, 135 s of CPU: the
 * suite's 16 across is confirmed in the band; 32 across not run). A known failure: the portable
 * build (SSE2) reads 0.8125, below the band, so the margin is less than the spread across
 * builds. */
PD_TEST(known_failure_return_in_the_solve_channel_unit_column_runs_out_as_lube2005) {
    in_solve_channel("lube2005_channel_a1.json", 1,
                     "return_in_the_solve_channel_unit_column_runs_out_as_lube2005");
}
