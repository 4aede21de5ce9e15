/* mpm's optimiser step (solver.mpm.integrator newton and lbfgs, src/solvers/mpm/mpm_implicit.c)
 * with Drucker-Prager inside it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/mpm/mpm_internal.h"
#include "support.h"

/* A cohesionless sand column (phi 30, E 1e6 Pa, nu 0.3, 1600 kg/m^3) 0.1 x 0.2 x 0.04 m,
 * spacing 1 cm, on a no_slip floor, collapsing under gravity: 0.05 s of explicit steps of
 * 1.25e-4 s (0.6 x the explicit bound), then one step of 2.5e-3 s (12 x the bound) by
 * `integrator`, or 20 explicit steps of 1.25e-4 s over the same time ("explicit"). */
#define SAND_COLUMN                                                                                \
    "{\"version\": 1, \"method\": \"mpm\", \"solver\": {\"mpm\": {\"iterations\": 300, "           \
    "\"tolerance\": 0}}, \"time\": {\"dt\": 1.25e-4, \"fps\": 40, \"frames\": 3}, \"gravity\": "   \
    "[0, -9.81, 0], \"materials\": {\"sand\": {\"density\": 1600, \"youngs_modulus\": 1e6, "       \
    "\"poisson_ratio\": 0.3, \"plasticity\": {\"model\": \"drucker_prager\", \"friction_angle\": " \
    "30, \"cohesion\": 0}}}, \"bodies\": [{\"name\": \"column\", \"material\": \"sand\", "         \
    "\"spacing\": 0.01, \"shape\": {\"type\": \"box\", \"min\": [0, 0, 0], \"max\": [0.1, 0.2, "   \
    "0.04]}}], \"colliders\": [{\"type\": \"plane\", \"normal\": [0, 1, 0], \"boundary\": "        \
    "\"no_slip\"}], \"output\": {\"dir\": \"unused\"}}"

typedef struct sand_step {
    pd_vec3 *before, *after; /* the particles' velocities by id (allocated) */
    size_t count;
    double dt, bound, residual, seconds;
    int iterations, yielded; /* the step's; particles whose plastic strain grew in it */
} sand_step;

static void velocities_by_id(const pd_world* w, pd_vec3* out) {
    for (size_t id = 0; id < w->particles.count; ++id)
        out[id] = w->particles.vel[w->order[id]];
}

static int sand_step_run(const char* integrator, sand_step* out) {
    memset(out, 0, sizeof *out);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, SAND_COLUMN, NULL, 0))
        return 0;
    pd_world* w = t.world;
    pd_mpm_state* s = w->solver_state;
    pd_error err = {0};
    int ok = pd_test_sim_run(&t, 0.05);
    out->count = w->particles.count;
    out->before = malloc(out->count * sizeof *out->before);
    out->after = malloc(out->count * sizeof *out->after);
    double* plastic = malloc(out->count * sizeof *plastic);
    ok = ok && out->before && out->after && plastic;
    if (ok) {
        out->bound = pd_mpm_max_time_step(s, w);
        velocities_by_id(w, out->before);
        memcpy(plastic, s->plastic_strain, out->count * sizeof *plastic);
    }
    int explicit_step = strcmp(integrator, "explicit") == 0;
    if (!explicit_step)
        s->prm.integrator = strcmp(integrator, "newton") == 0  ? PD_MPM_NEWTON
                            : strcmp(integrator, "lbfgs") == 0 ? PD_MPM_LBFGS
                                                               : PD_MPM_ADMM;
    ok = ok && (explicit_step || pd_world_set_time_step(w, 2.5e-3, &err) == PD_OK);
    double t0 = pd_now();
    for (int k = 0; ok && k < (explicit_step ? 20 : 1); ++k) {
        ok = pd_world_step(w, &err) == PD_OK;
        out->iterations = w->last_stats.iterations;
        out->residual = w->last_stats.residual;
    }
    out->seconds = pd_now() - t0;
    out->dt = explicit_step ? 2.5e-3 : w->def.dt;
    if (ok) {
        velocities_by_id(w, out->after);
        for (size_t i = 0; i < out->count; ++i) /* the particles keep their order in one step */
            out->yielded += s->plastic_strain[i] > plastic[i];
    }
    free(plastic);
    pd_test_sim_close(&t);
    return ok;
}

/* rms |a.after - b.after| over the rms of the step's velocity change in b. */
static double apart(const sand_step* a, const sand_step* b) {
    double d = 0, change = 0;
    for (size_t i = 0; i < a->count; ++i) {
        d += pd_v3_len2(pd_v3_sub(a->after[i], b->after[i]));
        change += pd_v3_len2(pd_v3_sub(b->after[i], b->before[i]));
    }
    return sqrt(d / change);
}

/* Drucker-Prager inside the optimiser: the column's step at 12 x the explicit bound by newton
 * (the returned stress tau(Z(F)) F^-T as the residual, W as the merit, the line search on |r|
 * where a particle is on the cone: mpm_implicit.c) converges to 1e-6 of the momentum, and the
 * reference is the ADMM's step (300 iterations, to its round-off): both solve backward Euler with
 * the returned stress, the ADMM's Eq. 10 with P(Z(F)) = tau(Z) Z^-T, so they differ by the step's
 * plastic stretch. Their particle velocities within 1 % of the step's velocity change. The
 * explicit steps over the same time are printed, not asserted: backward Euler at 12 x the bound
 * is not the explicit course within one step. */
PD_TEST(drucker_prager_step_under_newton_matches_the_admm) {
    const char* names[] = {"newton", "admm", "explicit"};
    sand_step r[3];
    for (int k = 0; k < 3; ++k) {
        PD_REQUIRE(sand_step_run(names[k], &r[k]));
        printf("  %s: dt %.3g s (%.1f x the explicit bound %.3g s), %d iterations, residual %.3g, "
               "%d of %zu particles yielded in the step, %.2f s\n",
               names[k], r[k].dt, r[k].dt / r[k].bound, r[k].bound, r[k].iterations, r[k].residual,
               r[k].yielded, r[k].count, r[k].seconds);
    }
    double admm = apart(&r[1], &r[0]), explicit_step = apart(&r[2], &r[0]);
    printf("  rms apart from newton over the rms of its step's velocity change: admm %.3g, "
           "explicit %.3g\n",
           admm, explicit_step);
    PD_CHECK(r[0].dt / r[0].bound > 10);
    PD_CHECK(r[0].residual <= 1e-6);
    PD_CHECK(r[0].yielded > (int)r[0].count / 2);
    PD_CHECK(admm < 0.01);
    for (int k = 0; k < 3; ++k)
        free(r[k].before), free(r[k].after);
}
