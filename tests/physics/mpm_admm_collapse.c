/* mpm's ADMM (Fang 2019 Sec. 7) against its explicit step on a granular collapse (issue 32:
 * "the explicit and ADMM runouts within 20 % of each other"), the channel column of
 * physics.channel_collapse at a = 3; the two integrators are compared with each other, not with
 * Lube 2005 (channel_collapse.c does that). The test (last in this file) runs the column
 * as channel_collapse.c does, 16 grains across, until at rest; the tests before it take the
 * column coarser (8 grains across L0 = 8 cm) and stop mid-flow, to ask why the two differ. The
 * CPU time of each run is printed: the cost ratio is the other question
 * (docs/benchmarks.md).
 *
 * Why the ADMM at 10 x the explicit bound runs out farther (docs/methods/mpm.md, "The ADMM's
 * collapse and the time step"): not its solve nor its plastic step, but the transfers. Each step
 * takes one round trip particles -> grid -> particles (Fig. 8's steps 2 and 5), and a round trip
 * damps what the grid cannot carry (Sec. 8 derives RPIC's as a viscosity nu = dx^2 / (8 dt): a
 * damping per step, so per second it falls as dt grows; APIC's, of the modes beyond the affine,
 * is per step too: round trips added move the runout as the step does). At 10 x the step the
 * ADMM takes a tenth of the explicit step's round trips a second: given 9 more APIC round trips
 * a step without force (the explicit step's count a second), it runs out within the issue's
 * 20 %. At the explicit bound the ADMM follows the explicit step on a frictionless floor; on the
 * rough floor the two floors' rules differ (docs/methods/mpm.md, "The ADMM at the explicit bound
 * and the floor"). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grid/grid.h"
#include "solvers/mpm/mpm_data.h"
#include "methods.h"
#include "runout.h"

#define SPACING 0.01
#define ACROSS  8                  /* grains across the column's length L0 */
#define L0      (ACROSS * SPACING) /* 8 cm */
#define DEPTH   (4 * SPACING)      /* the channel: four grains deep */
#define ASPECT  3.0

/* channel_collapse.c's channel: friction angle 30 on the extension cone (plane strain's match),
 * E 3e5 Pa, nu 0.3, 1600 kg/m^3; a no-slip floor, the channel's walls slip without friction. */
static const char* k_column =
    "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":50,\"frames\":100},"
    "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,\"poisson_ratio\":0.3,"
    "\"plasticity\":{\"model\":\"drucker_prager\",\"friction_angle\":30,\"cohesion\":0,\"cone\":"
    "\"extension\"}}},"
    "\"bodies\":[{\"name\":\"column\",\"material\":\"sand\",\"spacing\":%.17g,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[%.17g,%.17g,%.17g]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"boundary\":\"no_slip\"},"
    "{\"type\":\"box\",\"min\":[0,-1,0],\"max\":[2,2,%.17g],\"inside\":true,"
    "\"boundary\":\"slip\",\"friction\":0}],\"output\":{\"dir\":\"unused\"}}";

typedef struct collapse_run {
    int ok;
    double dl;        /* dL / L0 */
    double front;     /* the farthest grain's x, less L0, over L0 */
    double seconds;   /* simulated, until at rest */
    double cpu;       /* s of CPU */
    double dt;        /* s, the last step */
    double released;  /* J of potential energy, start to end */
    double trip_loss; /* J of kinetic energy the added round trips took */
    long steps;
} collapse_run;

static double front(const pd_particles* p) {
    double x = -INFINITY;
    for (size_t i = 0; i < p->count; ++i)
        x = fmax(x, p->pos[i].x);
    return (x - L0) / L0;
}

static double kinetic_energy(const pd_particles* p) {
    double ke = 0;
    for (size_t i = 0; i < p->count; ++i)
        ke += 0.5 * p->mass[i] * pd_v3_len2(p->vel[i]);
    return ke;
}

/* `trips` APIC round trips without force (grid.h: affine momentum m C, then v and C back) at the
 * particles' present positions: the transfers' damping of that many extra steps, nothing else. */
static int apic_round_trips(pd_world* w, int trips) {
    pd_mpm_state* s = w->solver_state;
    pd_particles* p = &w->particles;
    size_t runaway = (s->n + 1) * (size_t)4096; /* mpm.c's bound on the grid's nodes */
    if (pd_grid_fit(&s->grid, p->pos, s->n, 2, runaway, NULL) != PD_OK)
        return 0;
    for (int k = 0; k < trips; ++k) {
        for (size_t i = 0; i < s->n; ++i)
            s->affine[i] = pd_m3_scale(s->c[i], p->mass[i]);
        pd_grid_from_particles(&s->grid, p->mass, p->vel, s->affine);
        pd_grid_to_particles(&s->grid, p->vel, s->c);
    }
    return 1;
}

/* The collapse under the given overrides, with `trips` extra APIC round trips before each step,
 * until the kinetic energy is below 1e-6 of the initial potential energy (after 0.2 s; at most
 * 2 s), or until t_end when it is positive. */
static collapse_run collapse_with(const char* const* sets, int count, int trips, double t_end) {
    collapse_run r = {0};
    char json[4096];
    snprintf(json, sizeof json, k_column, SPACING, L0, ASPECT * L0, DEPTH, DEPTH);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, count))
        return r;
    const pd_particles* p = &t.world->particles;
    double pe0 = 0, ke = INFINITY;
    for (size_t i = 0; i < p->count; ++i)
        pe0 += p->mass[i] * 9.81 * p->pos[i].y;
    pd_error err = {0};
    clock_t start = clock();
    double end = t_end > 0 ? t_end : 2.0;
    while (t.world->time < end - 1e-9 && (t_end > 0 || !(t.world->time > 0.2 && ke < 1e-6 * pe0))) {
        double before = trips > 0 ? kinetic_energy(p) : 0;
        int tripped = trips == 0 || apic_round_trips(t.world, trips);
        r.trip_loss += trips > 0 ? before - kinetic_energy(p) : 0;
        if (!tripped || pd_world_step(t.world, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            pd_test_sim_close(&t);
            return r;
        }
        ke = kinetic_energy(p);
        r.steps++;
    }
    for (size_t i = 0; i < p->count; ++i)
        r.released -= p->mass[i] * 9.81 * p->pos[i].y;
    r.released += pe0;
    r.ok = 1, r.dl = pd_channel_runout(p, SPACING, L0), r.front = front(p),
    r.seconds = t.world->time;
    r.cpu = (double)(clock() - start) / CLOCKS_PER_SEC, r.dt = t.world->def.dt;
    char label[256] = "explicit";
    for (int k = 0, at = 0; k < count && at < (int)sizeof label; ++k)
        at += snprintf(label + at, sizeof label - (size_t)at, "%s%s", k ? " " : "", sets[k]);
    printf("  %s%s: %zu grains, %ld steps (last dt %.3g s), %s %.2f s (KE / PE0 %.1e): dL/L0 = "
           "%.3f (farthest grain %.3f), %.1f s of CPU\n",
           label, trips ? " + APIC round trips" : "", p->count, r.steps, r.dt,
           t_end > 0         ? "until"
           : ke < 1e-6 * pe0 ? "at rest at"
                             : "stopped at",
           r.seconds, ke / pe0, r.dl, r.front, r.cpu);
    pd_test_sim_close(&t);
    return r;
}

/* The rows in measured.csv of `test` under mpm (methods.h), Drucker-Prager's capability. */
static void mpm_row(const char* test) {
    for (const pd_solver_vtable* const* m = pd_solver_all(); *m; ++m)
        if (strcmp((*m)->name, "mpm") == 0)
            g_pd_method = (pd_test_method_ctx){*m, test, PD_CAP_DRUCKER_PRAGER, 0};
}

/* The ADMM at the explicit bound (solver.mpm.auto_step_factor 1; 15 iterations) against the
 * explicit step, both until 0.3 s, mid-flow, on the column's rough floor: the farthest grain
 * within 2 %. A known failure since the ADMM holds both normals at the channel's corners (the
 * floor's row on the side walls' planes, the box's edges; mpm_admm.c's hold_normal): 1.847
 * against 1.892 (-2.4 %), runout 1.875 for 1.875. Tried (one run each): the box's edges left at
 * one normal, 1.832 (-3.2 %); its three-face corners not held whole, 1.847; the second normal
 * freed where the node leaves its collider at the step's start, 1.848. The explicit step applies
 * each collider in turn (both normals, each let go where the node leaves), so the gap is not the
 * second normal's being held but, left to find, how the floor's friction split shares the corner
 * node with it. 1.858 (-1.8 %) while the ADMM held one collider a node (the floor's row free
 * across the channel: docs/methods/mpm.md, "The ADMM's channel corners"); a known failure
 * before that too, while the floor held every node whose material reached it through the solve
 * (collider_normal held; the floor bearing 3 b): 1.837 (-2.9 %; converged, 100 iterations to
 * 1e-8, 1.849), the held nodes pulling the front's grains down (docs/methods/mpm.md, "The ADMM
 * at the explicit bound and the floor"; the explicit step so held, tried: 1.826, -3.5 %). */
PD_TEST(known_failure_admm_at_the_explicit_bound_collapses_with_the_explicit_step) {
    collapse_run ex = collapse_with(NULL, 0, 0, 0.3);
    const char* admm[] = {"solver.mpm.integrator=admm", "solver.mpm.iterations=15",
                          "solver.mpm.auto_step_factor=1"};
    collapse_run im = collapse_with(admm, 3, 0, 0.3);
    PD_REQUIRE(ex.ok && im.ok);
    printf("  ADMM / explicit at 0.3 s: runout %.3f, farthest grain %.4f\n", im.dl / ex.dl,
           im.front / ex.front);
    mpm_row("admm_at_the_explicit_bound_collapses_with_the_explicit_step");
    g_pd_method.known = 1;
    pd_test_method_check("at the bound on the rough floor: the ADMM's farthest grain at 0.3 s "
                         "against the explicit step's (dL/L0)",
                         im.front, ex.front, 0.02, 1);
}

/* The same on a frictionless floor (slip, friction 0), so that only the floor's normal rule and
 * the bulk are left: the farthest grain within 2 % at 0.3 s. Measured 3.431 against 3.472
 * (-1.2 %), runout 2.875 for 2.875, with the ADMM's unilateral floor (mpm_admm.c's
 * update_contacts: a node let go inside the iterations where its reaction would pull). A known
 * failure while the floor held every node whose material reached it through the solve
 * (collider_normal held: 3.272, -5.7 %, runout 2.750): the front, whose grains leave the floor
 * and land again, was held down (the explicit step whose floor holds a leaving node so, tried:
 * 3.323, -4.3 %). Freed by the explicit step's own velocity at the step's start (tried, not
 * kept: it freed a held block's nodes at 100 x) 3.441 (-0.9 %). */
PD_TEST(admm_at_the_bound_on_a_frictionless_floor_collapses_with_the_explicit_step) {
    const char* floor_sets[] = {"colliders[0].boundary=slip", "colliders[0].friction=0",
                                "solver.mpm.integrator=admm", "solver.mpm.iterations=15",
                                "solver.mpm.auto_step_factor=1"};
    collapse_run ex = collapse_with(floor_sets, 2, 0, 0.3);
    collapse_run im = collapse_with(floor_sets, 5, 0, 0.3);
    PD_REQUIRE(ex.ok && im.ok);
    printf("  ADMM / explicit at 0.3 s on a frictionless floor: runout %.3f, farthest grain %.4f\n",
           im.dl / ex.dl, im.front / ex.front);
    mpm_row("admm_at_the_bound_on_a_frictionless_floor_collapses_with_the_explicit_step");
    pd_test_method_check("at the bound on a frictionless floor: the ADMM's farthest grain at 0.3 "
                         "s against the explicit step's (dL/L0)",
                         im.front, ex.front, 0.02, 1);
}

/* The ADMM at 10 x the explicit bound (the tests above at the bound, Fig. 16's 15 iterations)
 * given 9 APIC round trips without force before each step, so that its particles go through the
 * grid as often a second as the explicit step's, against the explicit step, both until 0.8 s
 * (both all but at rest: the fronts move by about 0.01 L0 from 0.6 s on). The 20 % on
 * the runout and on the farthest grain; measured 2.250 against 2.250 and 2.550 against 2.649
 * (-3.7 %) on the rough floor bearing 3 b (2.125 against 2.125 and 2.344 against 2.426 while it
 * bore tan phi) with the friction split inside the iterations (the stick-or-slip
 * switch: 2.125 and 2.384; after the solve: 2.375,
 * +11.8 %, and 2.621, +8.0 %; on the held floor 1.875 against 1.750 and 2.010 against 1.874, +7 %,
 * where without the round trips 2.500, +43 %, and 2.477, +32 %). The added round trips take
 * 0.086 J of kinetic energy over the run, 8 % of the 1.107 J of potential energy released (the
 * explicit step releases 1.041 J). */
PD_TEST(admm_with_the_explicit_steps_transfers_runs_out_within_20_percent) {
    collapse_run ex = collapse_with(NULL, 0, 0, 0.8);
    const char* admm[] = {"solver.mpm.integrator=admm", "solver.mpm.iterations=15"};
    collapse_run im = collapse_with(admm, 2, 9, 0.8);
    PD_REQUIRE(ex.ok && im.ok);
    printf("  ADMM with the round trips / explicit at 0.8 s: runout %.3f, farthest grain %.3f; the "
           "round trips took %.4f J of kinetic energy, of %.4f J of potential energy released "
           "(the explicit step %.4f J)\n",
           im.dl / ex.dl, im.front / ex.front, im.trip_loss, im.released, ex.released);
    PD_CHECK_REL(im.dl, ex.dl, 0.2);
    PD_CHECK_REL(im.front, ex.front, 0.2);
}

/* Issue 32's test as it asks: channel_collapse.c's column (16 grains across L0 = 8 cm at 5 mm;
 * its scene, runout.h's) under the explicit step at its bound and under the ADMM at
 * WORKING_FACTOR x that bound (solver.mpm.auto_step_factor) with rho WORKING_RHO and
 * WORKING_ITERATIONS iterations a step, its grid step by conjugate gradients: the working point
 * docs/benchmarks.md measured for the ADMM's time to solution on Fig. 16's column (1.2-1.4 x
 * faster than the explicit step there). The grid step by A's factor (grid_solver cholesky), the
 * same runout on the held floor, factors again at each iteration whose unilateral contact set
 * changed: the same 4.625 as the conjugate gradients before the let-go fix (mpm_admm.c's
 * friction_rhs), in 148.5 s of the ADMM's CPU for their 60.2. Each runs
 * until at rest (runout.h: KE below 1e-6 of the initial potential energy, or 2 s); the runouts to
 * issue 37's front (pd_channel_front) within the 20 %. */
#define WORKING_FACTOR     "30"
#define WORKING_RHO        "0.3"
#define WORKING_ITERATIONS "10"
#define CROSS_SPACING      0.005 /* 16 grains across L0 */

typedef struct cross_run {
    double front, dl, seconds, rest, cpu, dt;
    double floor_density, mean_density; /* grains per occupied bin (floor_row_density) */
} cross_run;

/* The deposit's packing on a grid of bins a spacing square in x and y (the channel's depth
 * collapsed: 4 grains a bin at the start): the grains per occupied bin of the floor's row (y
 * below a spacing) in *row, and per occupied bin of the whole deposit in *mean. A deposit
 * that keeps the sand's density has the two alike (its free surface's part-filled bins lower the
 * mean a little); grains crowding onto the floor raise the first. */
static void floor_row_density(const pd_particles* p, double spacing, double* row, double* mean) {
    enum { NX = PD_RUNOUT_BINS, NY = 64 };
    static int count[NX][NY];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < p->count; ++i) {
        int c = (int)floor(p->pos[i].x / spacing), r = (int)floor(p->pos[i].y / spacing);
        if (c >= 0 && c < NX && r >= 0 && r < NY)
            count[c][r]++;
    }
    int bottom = 0, bottom_bins = 0, all = 0, bins = 0;
    for (int c = 0; c < NX; ++c)
        for (int r = 0; r < NY; ++r) {
            if (!count[c][r])
                continue;
            all += count[c][r], bins++;
            if (r == 0)
                bottom += count[c][r], bottom_bins++;
        }
    *row = bottom_bins ? (double)bottom / bottom_bins : 0;
    *mean = bins ? (double)all / bins : 0;
}

static int cross_collapse(double aspect, const char* const* sets, int count, cross_run* r) {
    char json[4096];
    snprintf(json, sizeof json, PD_CHANNEL_SCENE, CROSS_SPACING, L0, aspect * L0, 4 * CROSS_SPACING,
             4 * CROSS_SPACING);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, count))
        return 0;
    clock_t start = clock();
    r->rest = pd_channel_run_to_rest(t.world);
    r->cpu = (double)(clock() - start) / CLOCKS_PER_SEC;
    const pd_particles* p = &t.world->particles;
    r->front = pd_channel_front(p, L0), r->dl = pd_channel_runout(p, CROSS_SPACING, L0);
    r->seconds = t.world->time, r->dt = t.world->def.dt;
    floor_row_density(p, CROSS_SPACING, &r->floor_density, &r->mean_density);
    printf("  a = %g, %s: the floor row's grains per bin %.2f, the deposit's %.2f (ratio %.3f)\n",
           aspect, count ? "admm" : "explicit", r->floor_density, r->mean_density,
           r->floor_density / r->mean_density);
    printf("  a = %g, %s: %zu grains, last dt %.3g s, %s %.2f s (KE / PE0 %.1e): dL/L0 = %.4f to "
           "the 1 %% front (two grains thick %.4f), %.1f s of CPU\n",
           aspect, count ? "admm" : "explicit", p->count, r->dt,
           r->rest < 1e-6 ? "at rest at" : "stopped at", r->seconds, r->rest, r->front, r->dl,
           r->cpu);
    pd_test_sim_close(&t);
    return r->rest >= 0;
}

/* Lube 2005's runout (VALIDATION.md; channel_collapse.c's band): 1.2 a for a <~ 1.8, 1.9 a^(2/3)
 * for a >~ 2.8, within -25 % / +50 %. */
static double lube2005(double a) {
    return a < 2.3 ? 1.2 * a : 1.9 * pow(a, 2.0 / 3.0);
}

/* The column of aspect ratio a under both integrators; the rows in measured.csv under mpm
 * (methods.h). The ADMM's front in Lube 2005's band, as channel_collapse.c asks of the explicit
 * step; against the explicit step within the 20 % where `against_explicit` (a = 3), else
 * reported: at a = 0.5 the explicit step's own front lies below the band (0.3125 for 0.45;
 * channel_collapse.c's known failure), stopped in part by its transfers' damping, which the
 * ADMM's thirtieth of the transfers a second does not have (docs/methods/mpm.md, "The ADMM's
 * energy budget on the low column"). */
static void cross(const char* test, double aspect, int against_explicit, int check_floor) {
    mpm_row(test);
    cross_run ex = {0}, im = {0};
    const char* admm[] = {"solver.mpm.integrator=admm",
                          "solver.mpm.auto_step_factor=" WORKING_FACTOR,
                          "solver.mpm.rho=" WORKING_RHO,
                          "solver.mpm.iterations=" WORKING_ITERATIONS, "solver.mpm.grid_solver=cg"};
    PD_METHOD_REQUIRE(cross_collapse(aspect, NULL, 0, &ex) && cross_collapse(aspect, admm, 5, &im));
    printf("  ADMM / explicit: front %.3f, two grains thick %.3f, CPU %.2f\n", im.front / ex.front,
           im.dl / ex.dl, im.cpu / ex.cpu);
    char what[160];
    snprintf(what, sizeof what,
             "a = %g at 16 grains across: the ADMM's dL/L0 to the 1 %% front against the explicit "
             "step's",
             aspect);
    if (against_explicit)
        pd_test_method_check(what, im.front, ex.front, 0.2, 1);
    else
        pd_test_method_report(what, im.front, ex.front);
    double want = lube2005(aspect);
    snprintf(what, sizeof what,
             "a = %g at 16 grains across: the ADMM's dL/L0 to the 1 %% front (Lube 2005 %.2f)",
             aspect, want);
    pd_test_method_bound(what, im.front, 0.75 * want, 1.5 * want);
    if (!check_floor)
        return;
    snprintf(what, sizeof what,
             "a = %g at 16 grains across: the ADMM's floor row's grains per bin over the "
             "deposit's mean",
             aspect);
    pd_test_method_bound(what, im.floor_density / im.mean_density, 0.8, 1.2);
}

/* The ADMM's floor row packed like the rest of its deposit, and the deposit at rest: the bounds
 * of the two known failures below when the ADMM's step converges further (30 iterations for 10);
 * a corner of two colliders held along one normal fails both (mpm_admm.c's hold_normal). */
static void low_column_at_rest(const char* test, const char* iterations, int known) {
    mpm_row(test);
    g_pd_method.known = known;
    cross_run im = {0};
    const char* admm[] = {"solver.mpm.integrator=admm",
                          "solver.mpm.auto_step_factor=" WORKING_FACTOR,
                          "solver.mpm.rho=" WORKING_RHO, iterations, "solver.mpm.grid_solver=cg"};
    PD_METHOD_REQUIRE(cross_collapse(0.5, admm, 5, &im));
    pd_test_method_bound("a = 0.5 at 16 grains across: the ADMM's kinetic energy over the initial "
                         "potential at rest or 2 s",
                         im.rest, 0, 1e-6);
    pd_test_method_bound("a = 0.5 at 16 grains across: the ADMM's floor row's grains per bin over "
                         "the deposit's mean",
                         im.floor_density / im.mean_density, 0.8, 1.2);
}

/* a = 3 (3072 grains): the explicit step at rest at 0.58 s, 4.375 to the front (two grains thick
 * 4.000), 22.5 s of CPU; the ADMM at 30 x (5 ms steps) on the unilateral floor 4.8125 (+10.0 %;
 * two grains thick 4.1875), its kinetic energy at 1.5e-6 of PE0 at 2 s, 77.8 s of CPU (one
 * thread, load 17-22). While the channel's corners held one normal (docs/methods/mpm.md, "The
 * ADMM's channel corners"): 4.5625 (+4.3 %; two grains thick 3.6875), 1.5e-5 of PE0 at 2 s; on
 * the held floor, by A's factor, 4.5625 (+4.3 %) in 49.4 s. Which bug would fail it, as measured on
 * other columns: friction that lets the body above the floor slide for the whole step (after the
 * solve, the 8-grain column at 10 x ran out 2.625 for the explicit 2.125, +24 %), a friction
 * split that does not settle (Fig. 16's column at 30 x with the stick-or-slip switch: 4.00 for
 * 1.40), an ADMM cut far from convergence (the grid step capped at 3 products: 2.40 for 1.40);
 * a boundary not projected in the grid step would let the sand through the floor (not tried). */
PD_TEST(admm_at_16_grains_across_runs_out_within_20_percent_of_the_explicit_step) {
    cross("admm_at_16_grains_across_runs_out_within_20_percent_of_the_explicit_step", ASPECT, 1, 0);
}

/* a = 0.5 (512 grains): the ADMM at 30 x runs out 0.500 to the front, in Lube 2005's band
 * (0.45-0.90) and at the sand's deposit at rest a / (6 b) = 0.505 (channel_collapse.c); the
 * explicit step 0.3125 (the ADMM +60 %, reported: the 20 % against a front that is below
 * the band itself), at rest at 0.42 s; the ADMM's kinetic energy at 1.9e-6 of PE0 at 2 s (4.4e-5
 * while the channel's corners held one normal), its floor row 1.054 times the deposit's mean
 * packing (1.706 then; checked within 20 %); 2.8 and 12.3 s of CPU (load 17-20). Which bug would
 * fail it: a front stopped as the explicit step's is, by more damping (the ADMM given the explicit
 * step's transfers a second, 29 APIC round trips before each step, measured 0.4375 at 2 s, 0.3125
 * at 0.3 s). The known failure
 * known_failure_admm_at_16_grains_across_low_column_runs_out_within_20_percent until 2026-11-29:
 * the same runs, the comparison with the explicit step checked. */
PD_TEST(admm_at_16_grains_across_low_column_runs_out_in_lube2005s_band) {
    cross("admm_at_16_grains_across_low_column_runs_out_in_lube2005s_band", 0.5, 0, 1);
}

/* The ADMM's low column at 30 iterations a step: at rest at 0.27 s (KE below 1e-6 of the initial
 * potential; the explicit step at 0.42 s), its floor row at 1.01 times the deposit's mean
 * packing; 4.5 s of CPU. Before the corners of the channel held both normals (its floor and side
 * walls, its back and side walls: mpm_admm.c's hold_normal) the same run crept to 2 s (1.9e-5 of
 * PE0) with that row at 1.30 times the mean (docs/methods/mpm.md, "The ADMM's channel
 * corners"). */
PD_TEST(admm_low_column_at_30_iterations_comes_to_rest_at_the_sands_density) {
    low_column_at_rest("admm_low_column_at_30_iterations_comes_to_rest_at_the_sands_density",
                       "solver.mpm.iterations=30", 0);
}

/* The same at the working point's 10 iterations: a known failure, kinetic energy 1.9e-6 of PE0
 * at 2 s (1e-6 asked; 4.4e-5 before the corners were held), the deposit creeping by 0.3 mJ/s
 * from 0.4 s (the a = 3 column's plateau, 1.5e-5, alike: the iterations' residual), its floor
 * row at 1.05 times the mean (1.71 before; checked in the test above it at 10 iterations too:
 * admm_at_16_grains_across_low_column_runs_out_in_lube2005s_band). 11 s of CPU, outside make
 * test. */
PD_TEST(known_failure_admm_low_column_comes_to_rest_within_2_s) {
    low_column_at_rest("admm_low_column_comes_to_rest_within_2_s",
                       "solver.mpm.iterations=" WORKING_ITERATIONS, 1);
}
