/* mpm's ADMM (Fang 2019 Sec. 7) against its explicit step on a granular collapse (issue 32:
 * "the explicit and ADMM runouts within 20 % of each other"). The channel column of
 * physics.channel_collapse at a = 3, coarser (8 grains across L0 = 8 cm instead of 16) so that
 * the ADMM's run fits in CI; the two integrators are compared with each other, not with Lube
 * 2005 (channel_collapse.c does that). The CPU time of each run is printed: the cost ratio is
 * the other question (docs/benchmarks.md).
 *
 * Why the ADMM at 10 x the explicit bound runs out farther (docs/methods/mpm.md, "The ADMM's
 * collapse and the time step"): not its solve nor its plastic step, but the transfers. Each step
 * takes one round trip particles -> grid -> particles (Fig. 8's steps 2 and 5), and a round trip
 * damps what the grid cannot carry (Sec. 8 derives RPIC's as a viscosity nu = dx^2 / (8 dt): a
 * damping per step, so per second it falls as dt grows; APIC's, of the modes beyond the affine,
 * is per step too: round trips added move the runout as the step does). At 10 x the step the
 * ADMM takes a tenth of the explicit step's round trips a second. The tests below measure it: at
 * the explicit bound the ADMM runs out with the explicit step; at 10 x, given 9 more APIC round
 * trips a step without force (the explicit step's count a second), within the 20 %. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grid/grid.h"
#include "solvers/mpm/mpm_data.h"
#include "support.h"
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

static collapse_run collapse(const char* const* sets, int count) {
    return collapse_with(sets, count, 0, 0);
}

/* a = 3, 8 grains across (768 grains): the ADMM at "auto" (10 x the explicit bound) with
 * Fig. 16's 15 iterations a step, the explicit step at its bound; the ADMM's runout within 20 %
 * of the explicit one (the issue's). Measured 2.500 against 2.250 (+11.1 %; a grain is 0.125),
 * the farthest grain 3.333 against 2.650 (+26 %), on the rough floor that bears 3 b of the
 * sand's load (grid_boundary.h), with the ADMM's Coulomb friction split inside its iterations
 * (mpm_admm.c's friction_step); 31 and 10 s of CPU (while the floor bore tan phi: 2.250 against
 * 2.125; the stick-or-slip switch before the split: 2.500, +17.6 %, and 3.128). A known failure
 * until 2026-11-28, with the friction after the solve: 2.625 (+23.5 %), the farthest grain 3.59, as
 * the body above the floor's nodes slid over them for the whole step (physics.mpm_admm_friction).
 * The rest of the gap is the transfers' damping, a tenth as many round trips a second (above, and
 * the two tests below). The ADMM converged (80 iterations to 1.5e-7) runs as with 15 (its farthest
 * grain 1.172 for 1.163 at 0.2 s, held floor). Neither integrator is converged in dt: the explicit
 * step at half its bound runs out 2.000 (farthest grain 2.169), the ADMM at 3 and 5 x (friction
 * after the solve) 2.500 and 2.625 (docs/methods/mpm.md). */
PD_TEST(admm_collapse_runs_out_within_20_percent_of_the_explicit_step) {
    collapse_run ex = collapse(NULL, 0);
    const char* admm[] = {"solver.mpm.integrator=admm", "solver.mpm.iterations=15"};
    collapse_run im = collapse(admm, 2);
    PD_REQUIRE(ex.ok && im.ok);
    printf("  ADMM / explicit: runout %.3f, farthest grain %.3f, CPU %.2f, steps %.3f\n",
           im.dl / ex.dl, im.front / ex.front, im.cpu / ex.cpu,
           (double)im.steps / (double)ex.steps);
    PD_CHECK_REL(im.dl, ex.dl, 0.2);
}

/* The ADMM at the explicit bound (solver.mpm.auto_step_factor 1; 15 iterations, which reach the
 * tolerance there in about 4.5) against the explicit step, both until 0.3 s, mid-flow: the same
 * backward Euler, particle step and return as at 10 x, with the explicit step's round trips a
 * second. The farthest grain within 2 %: a difference in the ADMM's plastic handling (its particle
 * step, F discarded and re-projected, the dilation) would show here, the time step would not. A
 * known failure since the floor bears 3 b of the sand's load (2026-11-28, docs/validation.md):
 * 1.837 against 1.892 (-2.9 %), runout 1.875 for 1.875; while it bore tan phi 1.810 against
 * 1.810 (with the stick-or-slip switch 1.823, +0.7 %; on the held floor 1.680 against 1.686, and
 * at 2 x the bound 1.740, +3.2 %, at 10 x 2.045, +21 %). Not the iteration cap: converged (100
 * iterations to 1e-8) the ADMM's farthest grain is 1.849 (-2.3 %). */
PD_TEST(known_failure_admm_at_the_explicit_bound_collapses_with_the_explicit_step) {
    collapse_run ex = collapse_with(NULL, 0, 0, 0.3);
    const char* admm[] = {"solver.mpm.integrator=admm", "solver.mpm.iterations=15",
                          "solver.mpm.auto_step_factor=1"};
    collapse_run im = collapse_with(admm, 3, 0, 0.3);
    PD_REQUIRE(ex.ok && im.ok);
    printf("  ADMM / explicit at 0.3 s: runout %.3f, farthest grain %.4f\n", im.dl / ex.dl,
           im.front / ex.front);
    PD_CHECK_REL(im.front, ex.front, 0.02);
}

/* The ADMM at 10 x the explicit bound (as the known failure above, Fig. 16's 15 iterations)
 * given 9 APIC round trips without force before each step, so that its particles go through the
 * grid as often a second as the explicit step's, against the explicit step, both until 0.8 s
 * (both all but at rest: the fronts move by about 0.01 L0 from 0.6 s on). The 20 % on
 * the runout and on the farthest grain; measured 2.250 against 2.250 and 2.510 against 2.649
 * (-5.2 %) on the rough floor bearing 3 b (2.125 against 2.125 and 2.344 against 2.426 while it
 * bore tan phi) with the friction split inside the iterations (the stick-or-slip
 * switch: 2.125 and 2.384; after the solve: 2.375,
 * +11.8 %, and 2.621, +8.0 %; on the held floor 1.875 against 1.750 and 2.010 against 1.874, +7 %,
 * where without the round trips 2.500, +43 %, and 2.477, +32 %). The added round trips take
 * 0.094 J of kinetic energy over the run, 9 % of the 1.090 J of potential energy released (the
 * explicit step releases 1.022 J). */
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
