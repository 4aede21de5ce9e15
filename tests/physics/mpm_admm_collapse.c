/* mpm's ADMM (Fang 2019 Sec. 7) against its explicit step on a granular collapse (issue 32:
 * "the explicit and ADMM runouts within 20 % of each other"). The channel column of
 * physics.channel_collapse at a = 3, coarser (8 grains across L0 = 8 cm instead of 16) so that
 * the ADMM's run fits in CI; the two integrators are compared with each other, not with Lube
 * 2005 (channel_collapse.c does that). The CPU time of each run is printed: the cost ratio is
 * the other question (docs/benchmarks.md). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    double dl;      /* dL / L0 */
    double front;   /* the farthest grain's x, less L0, over L0 */
    double seconds; /* simulated, until at rest */
    double cpu;     /* s of CPU */
    double dt;      /* s, the last step */
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

/* The collapse under the given overrides, until the kinetic energy is below 1e-6 of the initial
 * potential energy (after 0.2 s; at most 2 s). */
static collapse_run collapse(const char* const* sets, int count) {
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
    while (t.world->time < 2.0 - 1e-9 && !(t.world->time > 0.2 && ke < 1e-6 * pe0)) {
        if (pd_world_step(t.world, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            pd_test_sim_close(&t);
            return r;
        }
        ke = kinetic_energy(p);
        r.steps++;
    }
    r.ok = 1, r.dl = pd_channel_runout(p, SPACING, L0), r.front = front(p),
    r.seconds = t.world->time;
    r.cpu = (double)(clock() - start) / CLOCKS_PER_SEC, r.dt = t.world->def.dt;
    printf("  %s: %zu grains, %ld steps (last dt %.3g s), %s at %.2f s (KE / PE0 %.1e): dL/L0 = "
           "%.3f (farthest grain %.2f), %.1f s of CPU\n",
           count ? sets[0] : "explicit", p->count, r.steps, r.dt,
           ke < 1e-6 * pe0 ? "at rest" : "stopped", r.seconds, ke / pe0, r.dl, r.front, r.cpu);
    pd_test_sim_close(&t);
    return r;
}

/* a = 3, 8 grains across (768 grains): the ADMM at "auto" (10 x the explicit bound) with
 * Fig. 16's 15 iterations a step, the explicit step at its bound; the ADMM's runout within 20 %
 * of the explicit one (the issue's). A known failure: measured 2.500 against 1.875 (+33 %), the
 * farthest grain 2.53 against 1.91: the ADMM's front runs out farther in a layer two grains
 * thick (2.250, +20.0 %, where the test was written, before this session's other mpm changes
 * merged; the same at rest with 30 iterations then); 51.9 and 10.7 s of CPU (docs/validation.md).
 */
PD_TEST(known_failure_admm_collapse_runs_out_within_20_percent_of_the_explicit_step) {
    collapse_run ex = collapse(NULL, 0);
    const char* admm[] = {"solver.mpm.integrator=admm", "solver.mpm.iterations=15"};
    collapse_run im = collapse(admm, 2);
    PD_REQUIRE(ex.ok && im.ok);
    printf("  ADMM / explicit: runout %.3f, farthest grain %.3f, CPU %.2f, steps %.3f\n",
           im.dl / ex.dl, im.front / ex.front, im.cpu / ex.cpu,
           (double)im.steps / (double)ex.steps);
    PD_CHECK_REL(im.dl, ex.dl, 0.2);
}
