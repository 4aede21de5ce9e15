/* projective_pd on the stiff cantilever of `peridot_bench` peers_cantilever (bench/cantilever.c,
 * issue 36 item 3): the large steps an implicit method is for must still solve the step. */
#include "projective_pd_support.h"

#define BEAM_L       0.40
#define BEAM_H       0.06
#define BEAM_E       1e7
#define BEAM_NU      0.25
#define BEAM_RHO     1000.0
#define BEAM_SPACING 0.01

/* 42 x 6 x 7 particles at 1 cm, the two layers at x < 0 clamped, from rest under gravity; the
 * direct global step (the cheapest accurate solve of this beam, bench peers_cantilever). */
static const char* k_beam =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"projective_pd\":{\"iterations\":"
    "100,\"global_solve\":\"direct\"}},\"time\":{\"dt\":0.01,\"fps\":100,\"frames\":100},"
    "\"gravity\":[0,-9.81,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e7,"
    "\"poisson_ratio\":0.25}},\"bodies\":[{\"name\":\"beam\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[-0.02,0,0],\"max\":[0.4,0.06,0.07]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0,1,1]}}]}]}";

/* Euler-Bernoulli's sag plus Timoshenko's shear term (Cowper's kappa). */
static double reference_sag(void) {
    double g = 9.81, G = BEAM_E / (2 * (1 + BEAM_NU));
    double kappa = 10 * (1 + BEAM_NU) / (12 + 11 * BEAM_NU);
    double bending = 3 * BEAM_RHO * g * pow(BEAM_L, 4) / (2 * BEAM_E * BEAM_H * BEAM_H);
    return bending + BEAM_RHO * g * BEAM_L * BEAM_L / (2 * kappa * G);
}

static double tip_sag(const pd_particles* p) {
    double sum = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->rest[i].x > BEAM_L - BEAM_SPACING)
            sum += p->rest[i].y - p->pos[i].y, n += 1;
    return sum / n;
}

/* The beam run to 1 s at step h: its tip's sag then (implicit Euler damps the swing away). */
static int sag_after_one_second(const char* dt, const char* fps, double* sag, int* iterations) {
    const char* sets[] = {dt, fps};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_beam, sets, 2))
        return 0;
    *iterations = 0;
    int ok = 1;
    while (ok && t.world->time < 1 - 1e-9) {
        ok = pd_test_sim_run(&t, t.world->time + t.world->def.dt);
        *iterations += t.world->last_stats.iterations;
    }
    *sag = tip_sag(&t.world->particles);
    pd_test_sim_close(&t);
    return ok;
}

/* The static sag does not depend on the step (implicit Euler's fixed point is the static
 * equilibrium): at h = 1/30 s the beam sags as at 1/100 s, within 1 %. Starting at rest at x,
 * whose residual (the weight) was 4.8e-5 of |r(y*)| (y* shears the layer beside the clamp by
 * h^2 g = 11 mm), every step at 1/30 s stopped before its first iteration and the beam never
 * moved (sag 0): the yardstick of the residual now takes the start's |r| when smaller. */
PD_TEST(stiff_cantilever_sags_alike_at_large_steps) {
    double sag30, sag100;
    int it30, it100;
    PD_REQUIRE(sag_after_one_second("time.dt=0.0333333333333333", "time.fps=30", &sag30, &it30));
    PD_REQUIRE(sag_after_one_second("time.dt=0.01", "time.fps=100", &sag100, &it100));
    double eb = reference_sag();
    printf("  tip sag after 1 s: h = 1/30 s %.5g m (%d iterations in 30 steps), h = 1/100 s "
           "%.5g m (%d in 100); Euler-Bernoulli + shear %.5g m (1/30: %+.1f %%)\n",
           sag30, it30, sag100, it100, eb, 100 * (sag30 / eb - 1));
    PD_CHECK_REL(sag30, sag100, 0.01);
    PD_CHECK(sag30 > 0.5 * eb); /* both could stand still: the beam must sag */
}
