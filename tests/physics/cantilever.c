/* Cantilever under self-weight (He 2017 Fig. 1: a beam at h = 0.001, 0.004, 0.016 s).
 * Reference (VALIDATION.md): Euler-Bernoulli tip sag 3 rho g L^4 / (2 E h^2) for a square
 * section of side h, plus Timoshenko's shear term rho g L^2 / (2 kappa G),
 * kappa = 10 (1 + nu) / (12 + 11 nu) (Cowper 1966). The tip deflection is averaged over the
 * second half of the run, where the beam oscillates about (or has settled at) its static
 * sag. */
#include "support.h"

#define BEAM_L   0.4
#define BEAM_H   0.05
#define BEAM_E   1.5e7
#define BEAM_NU  0.25
#define BEAM_RHO 1000.0
#define RUN_TIME 0.8
#define SPACING  (BEAM_H / 6) /* 6 particles through the thickness */

static const char* k_beam =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"global_solve\":\"direct\"},"
    "\"time\":{\"dt\":0.001,\"fps\":100,\"frames\":1},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1.5e7,\"poisson_ratio\":0.25}},"
    "\"bodies\":[{\"name\":\"beam\",\"material\":\"m\",\"spacing\":0.00833333333333333,"
    "\"shape\":{\"type\":\"box\",\"min\":[-0.0166666666666667,0,0],\"max\":[0.4,0.05,0.05]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0,1,1]}}]}]}";

static double reference_sag(void) {
    double g = 9.81, G = BEAM_E / (2 * (1 + BEAM_NU));
    double kappa = 10 * (1 + BEAM_NU) / (12 + 11 * BEAM_NU);
    double bending = 3 * BEAM_RHO * g * pow(BEAM_L, 4) / (2 * BEAM_E * BEAM_H * BEAM_H);
    double shear = BEAM_RHO * g * BEAM_L * BEAM_L / (2 * kappa * G);
    return bending + shear;
}

/* Mean downward displacement of the last layer of particles. */
static double tip_sag(const pd_particles* p) {
    double sum = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->rest[i].x > BEAM_L - SPACING)
            sum += p->rest[i].y - p->pos[i].y, n += 1;
    return sum / n;
}

static double run_beam(double dt) {
    char s_dt[64], s_fps[64];
    snprintf(s_dt, sizeof s_dt, "time.dt=%.17g", dt);
    snprintf(s_fps, sizeof s_fps, "time.fps=%.17g", 1.0 / dt);
    const char* sets[] = {s_dt, s_fps};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_beam, sets, 2))
        return NAN;
    double sum = 0, n = 0;
    while (t.world->time < RUN_TIME - 1e-9) {
        if (!pd_test_sim_run(&t, t.world->time + dt))
            break;
        if (t.world->time > 0.2 * RUN_TIME)
            sum += tip_sag(&t.world->particles), n += 1;
    }
    pd_test_sim_close(&t);
    printf("  h = %g s: mean tip sag %.5g m over t in [0.16, 0.8] s\n", dt, sum / n);
    return sum / n;
}

PD_TEST(cantilever_sag_matches_beam_theory_and_is_consistent_across_h) {
    double ref = reference_sag();
    double fine = run_beam(0.001), coarse = run_beam(0.016);
    printf("  Euler-Bernoulli + Timoshenko sag %.5g m\n", ref);
    PD_CHECK_REL(fine, ref, 0.35);
    PD_CHECK_REL(coarse, ref, 0.35);
    PD_CHECK_REL(coarse, fine, 0.20);
}
