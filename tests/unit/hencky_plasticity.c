/* Plastic returns on the Hencky strain (src/constitutive/hencky_plasticity.h): a state outside
 * lands on the cone with its volume kept, one inside is untouched, sand in tension goes to the
 * apex, von Mises keeps det F, ds/ds_tr matches finite differences, and the volume correction
 * (Tampubolon 2017) gives back the volume sand gained past the apex. */
#include <math.h>

#include "constitutive/hencky_plasticity.h"
#include "test.h"

/* sqrt(J2) - (a + b I1) of the Hencky StVK stress at stretches s (> 0 outside). */
static double yield_of(const pd_hencky_yield* y, pd_vec3 s) {
    double e[3] = {log(s.x), log(s.y), log(s.z)}, tr = e[0] + e[1] + e[2], n = 0;
    for (int a = 0; a < 3; ++a)
        n += (e[a] - tr / 3) * (e[a] - tr / 3);
    return sqrt(2.0) * y->mu * sqrt(n) - (y->cone.a - 3 * y->kappa * y->cone.b * tr);
}

static pd_hencky_yield sand(void) {
    pd_hencky_yield y = {4e5, 6e5, pd_dp_cone_of(30, 0, PD_CONE_COMPRESSION)};
    return y;
}

PD_TEST(return_lands_on_the_cone_keeping_volume) {
    pd_hencky_yield y = sand();
    pd_vec3 trial = pd_v3(1.05, 0.97, 0.93), s; /* compressed and sheared: outside */
    PD_REQUIRE(yield_of(&y, trial) > 0);
    PD_CHECK(pd_hencky_return(&y, trial, &s, NULL) == PD_DP_CONE);
    printf("  yield before %.4g Pa, after %.3g Pa\n", yield_of(&y, trial), yield_of(&y, s));
    PD_CHECK_NEAR(yield_of(&y, s), 0, 1e-6 * y.mu);
    PD_CHECK_NEAR(s.x * s.y * s.z, trial.x * trial.y * trial.z, 1e-12);
    pd_vec3 inside = pd_v3(0.995, 0.99, 0.992); /* mostly compressed: inside */
    PD_REQUIRE(yield_of(&y, inside) < 0);
    PD_CHECK(pd_hencky_return(&y, inside, &s, NULL) == PD_DP_ELASTIC);
    PD_CHECK(s.x == inside.x && s.y == inside.y && s.z == inside.z);
}

PD_TEST(sand_in_tension_goes_to_the_apex) {
    pd_hencky_yield y = sand();
    pd_vec3 s;
    PD_CHECK(pd_hencky_return(&y, pd_v3(1.02, 1.01, 0.999), &s, NULL) == PD_DP_APEX);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, pd_v3(1, 1, 1))), 0, 1e-15); /* cohesionless apex */
}

PD_TEST(von_mises_keeps_volume_and_yields_at_its_stress) {
    pd_hencky_yield y = {1e6, 2e6, pd_von_mises_cone(5e4)};
    pd_vec3 trial = pd_v3(1.2, 0.9, 1 / (1.2 * 0.9)), s;
    PD_CHECK(pd_hencky_return(&y, trial, &s, NULL) == PD_DP_CONE);
    double e[3] = {log(s.x), log(s.y), log(s.z)}, tr = e[0] + e[1] + e[2], n = 0;
    for (int a = 0; a < 3; ++a)
        n += (e[a] - tr / 3) * (e[a] - tr / 3);
    /* von Mises stress sqrt(3 J2) = sqrt(3) sqrt(2) mu |dev eps| */
    PD_CHECK_REL(sqrt(6.0) * y.mu * sqrt(n), 5e4, 1e-12);
    PD_CHECK_NEAR(s.x * s.y * s.z, 1, 1e-12);
}

PD_TEST(return_derivative_matches_finite_differences) {
    pd_hencky_yield y = sand();
    pd_vec3 trial = pd_v3(1.05, 0.97, 0.93), s;
    pd_mat3 dz;
    PD_REQUIRE(pd_hencky_return(&y, trial, &s, &dz) == PD_DP_CONE);
    double h = 1e-7, worst = 0, scale = 0;
    for (int j = 0; j < 3; ++j) {
        pd_vec3 up = trial, down = trial, su, sd;
        (&up.x)[j] += h, (&down.x)[j] -= h;
        pd_hencky_return(&y, up, &su, NULL), pd_hencky_return(&y, down, &sd, NULL);
        for (int i = 0; i < 3; ++i) {
            worst = fmax(worst, fabs(((&su.x)[i] - (&sd.x)[i]) / (2 * h) - dz.m[i][j]));
            scale = fmax(scale, fabs(dz.m[i][j]));
        }
    }
    printf("  largest entry %.4f, worst difference %.2e\n", scale, worst);
    PD_CHECK(worst < 1e-6 * scale);
    PD_CHECK(fabs(dz.m[0][1]) > 1e-3);
}

/* Tampubolon 2017 Sec. 4.3.1: sand stretched isotropically by 2 % past the apex (stress-free,
 * its volume gained) and then pushed back to the volume it had. With the correction the
 * dilation closes stress-free: F_E's volume is 1 (the sand has the volume it had, unstressed)
 * and nothing is left to close; a further 1 % squeeze is then elastic, det F_E = 0.99^3.
 * Without it the same push compacts F_E to 1 / 1.02^3 = 0.942, a pressure of K 0.059 the sand
 * never had (the bug the correction removes). */
PD_TEST(volume_correction_gives_back_the_dilation) {
    pd_hencky_yield y = sand();
    pd_real v = 0, v_half, v_back, v_squeezed;
    pd_vec3 pulled, half, back, squeezed, plain;
    double g = 1.02, gained = 3 * log(g);
    PD_CHECK(pd_hencky_return_corrected(&y, pd_v3(g, g, g), v, &pulled, NULL, &v) == PD_DP_APEX);
    PD_CHECK_NEAR(pulled.x * pulled.y * pulled.z, 1, 1e-14); /* at the cohesionless apex */
    PD_CHECK_REL(v, gained, 1e-12);
    /* half way back: still loose, at the apex, half the dilation left */
    double h = 1 / sqrt(g);
    PD_CHECK(pd_hencky_return_corrected(&y, pd_v3(h * pulled.x, h * pulled.y, h * pulled.z), v,
                                        &half, NULL, &v_half) == PD_DP_APEX);
    PD_CHECK_REL(v_half, gained / 2, 1e-12);
    /* the rest of the way: the volume it had, unstressed */
    pd_dp_case c = pd_hencky_return_corrected(&y, pd_v3(h * half.x, h * half.y, h * half.z), v_half,
                                              &back, NULL, &v_back);
    double j_back = back.x * back.y * back.z;
    PD_CHECK_NEAR(j_back, 1, 1e-12);
    PD_CHECK_NEAR(v_back, 0, 1e-12);
    /* one more percent: elastic, and only that percent is felt */
    c = pd_hencky_return_corrected(&y, pd_v3(0.99 * back.x, 0.99 * back.y, 0.99 * back.z), v_back,
                                   &squeezed, NULL, &v_squeezed);
    PD_CHECK(c == PD_DP_ELASTIC);
    PD_CHECK_REL(squeezed.x * squeezed.y * squeezed.z, 0.99 * 0.99 * 0.99, 1e-12);
    PD_CHECK(v_squeezed == 0);
    /* without the correction: the same push back compacts the sand */
    PD_CHECK(pd_hencky_return(&y, pd_v3(1 / g, 1 / g, 1 / g), &plain, NULL) == PD_DP_ELASTIC);
    double j_plain = plain.x * plain.y * plain.z;
    PD_CHECK_REL(j_plain, 1 / (g * g * g), 1e-12);
    printf("  dilation %.5f; back at the volume it had: det F_E %.6f with the correction, %.6f "
           "without (pressure %.0f Pa)\n",
           gained, j_back, j_plain, -y.kappa * log(j_plain));
}

/* A sheared trial with dilation left over: the cone return keeps the corrected volume (Klar's
 * flow), so the dilation is used up; ds/ds_tr of the corrected return matches finite
 * differences (the ADMM's particle step reads it). */
PD_TEST(volume_correction_cone_keeps_the_corrected_volume) {
    pd_hencky_yield y = sand();
    pd_vec3 trial = pd_v3(1.05, 0.95, 0.92), s;
    pd_real v = 0.02, after = -1;
    pd_mat3 dz;
    PD_REQUIRE(pd_hencky_return_corrected(&y, trial, v, &s, &dz, &after) == PD_DP_CONE);
    PD_CHECK_REL(s.x * s.y * s.z, trial.x * trial.y * trial.z * exp(v), 1e-12);
    PD_CHECK(after == 0);
    double step = 1e-7, worst = 0, scale = 0;
    for (int j = 0; j < 3; ++j) {
        pd_vec3 up = trial, down = trial, su, sd;
        (&up.x)[j] += step, (&down.x)[j] -= step;
        pd_hencky_return_corrected(&y, up, v, &su, NULL, NULL);
        pd_hencky_return_corrected(&y, down, v, &sd, NULL, NULL);
        for (int i = 0; i < 3; ++i) {
            worst = fmax(worst, fabs(((&su.x)[i] - (&sd.x)[i]) / (2 * step) - dz.m[i][j]));
            scale = fmax(scale, fabs(dz.m[i][j]));
        }
    }
    printf("  det F_E %.6f for %.6f; derivative: largest entry %.4f, worst difference %.2e\n",
           s.x * s.y * s.z, trial.x * trial.y * trial.z * exp(v), scale, worst);
    PD_CHECK(worst < 1e-6 * scale);
}

/* mu(I) (hencky_plasticity.h's pd_mu_i): the sand of sand() with Jop 2006's glass beads' span,
 * I_0 and a grain of 1 mm at rho_s 2650, over a step of 1e-4 s. */
static pd_hencky_yield mu_i_sand(void) {
    pd_hencky_yield y = sand();
    y.rate = (pd_mu_i){PD_MU_I_JOP_SPAN, 0.279, 1e-3 * sqrt(2650.0), 1e-4};
    return y;
}

/* The returned state is on the cone of the friction mu(I) at the inertial number of the plastic
 * shear rate the return took (an independent evaluation of Jop 2006 Eq. 2 at I = sqrt 2 Delta /
 * dt d sqrt(rho_s / p), Delta the deviator's loss), with the volume kept, stronger than the
 * static cone's and weaker than mu_2's; a rate of 0 (dt -> infinity) gives Klar's return. A
 * return that took mu_s, or I from the trial's strain instead of the plastic increment, fails. */
PD_TEST(mu_i_return_lands_on_the_cone_of_its_own_rate) {
    pd_hencky_yield y = mu_i_sand(), klar = sand();
    pd_vec3 trial = pd_v3(1.05, 0.97, 0.93), s, sk;
    PD_REQUIRE(pd_hencky_return(&y, trial, &s, NULL) == PD_DP_CONE);
    pd_hencky_return(&klar, trial, &sk, NULL);
    double e[3] = {log(s.x), log(s.y), log(s.z)},
           et[3] = {log(trial.x), log(trial.y), log(trial.z)};
    double tr = e[0] + e[1] + e[2], n = 0, nt = 0;
    for (int a = 0; a < 3; ++a)
        n += (e[a] - tr / 3) * (e[a] - tr / 3), nt += (et[a] - tr / 3) * (et[a] - tr / 3);
    n = sqrt(n), nt = sqrt(nt);
    double p = -y.kappa * tr, rate = sqrt(2.0) * (nt - n) / y.rate.dt;
    double inertial = rate * 1e-3 / sqrt(p / 2650), mu_s = 3 * y.cone.b;
    double mu = mu_s + PD_MU_I_JOP_SPAN / (0.279 / inertial + 1);
    double friction = sqrt(2.0) * y.mu * n / p;
    printf("  I %.4g: sqrt(J2) / p %.6f, mu(I) %.6f (mu_s %.4f, mu_2 %.4f)\n", inertial, friction,
           mu, mu_s, mu_s + PD_MU_I_JOP_SPAN);
    PD_CHECK_REL(friction, mu, 1e-9);
    PD_CHECK(inertial > 0.01 && inertial < 10); /* a state where the rate matters */
    PD_CHECK_NEAR(s.x * s.y * s.z, trial.x * trial.y * trial.z, 1e-12);
    y.rate.dt = 1e9; /* I -> 0: Klar's cone */
    pd_hencky_return(&y, trial, &s, NULL);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, sk)), 0, 1e-9);
}

/* ds/ds_tr of the rate-dependent return (the implicit function's derivatives of its scalar
 * equation: dr/dn and dr/dtr) against central differences, where both are non-zero. */
PD_TEST(mu_i_return_derivative_matches_finite_differences) {
    pd_hencky_yield y = mu_i_sand();
    pd_vec3 trial = pd_v3(1.05, 0.97, 0.93), s;
    pd_mat3 dz, dk;
    PD_REQUIRE(pd_hencky_return(&y, trial, &s, &dz) == PD_DP_CONE);
    pd_hencky_yield klar = sand();
    pd_hencky_return(&klar, trial, &s, &dk);
    double h = 1e-7, worst = 0, scale = 0, apart = 0;
    for (int j = 0; j < 3; ++j) {
        pd_vec3 up = trial, down = trial, su, sd;
        (&up.x)[j] += h, (&down.x)[j] -= h;
        pd_hencky_return(&y, up, &su, NULL), pd_hencky_return(&y, down, &sd, NULL);
        for (int i = 0; i < 3; ++i) {
            worst = fmax(worst, fabs(((&su.x)[i] - (&sd.x)[i]) / (2 * h) - dz.m[i][j]));
            scale = fmax(scale, fabs(dz.m[i][j]));
            apart = fmax(apart, fabs(dz.m[i][j] - dk.m[i][j]));
        }
    }
    printf("  largest entry %.4f, worst difference %.2e, apart from Klar's %.3g\n", scale, worst,
           apart);
    PD_CHECK(worst < 1e-6 * scale);
    PD_CHECK(apart > 1e-2 * scale); /* the rate's terms are exercised */
}
