/* Fang 2019's viscoelastic corrector (src/constitutive/hencky_viscoelastic.h), Eq. 8 exact: with
 * F held, the deviatoric Hencky strain shrinks by 1 / (1 + dt / tau_d) and its trace by
 * 1 / (1 + 2 dt K_N / nu_v) each step; a branch without moduli never changes; the derivative
 * matches finite differences. */
#include <math.h>

#include "constitutive/hencky_viscoelastic.h"
#include "test.h"

static pd_vec3 log3(pd_vec3 s) {
    return pd_v3(log(s.x), log(s.y), log(s.z));
}

/* Ten steps on a held F: each step's deviatoric and volumetric strain against the analytic
 * factors (a corrector that mixed them up, or used 2 mu where mu belongs, misses by far more). */
PD_TEST(corrector_relaxes_deviatoric_and_volumetric_strain_at_their_rates) {
    pd_hencky_maxwell m = {
        .mu = 2e4, .lambda = 5e4, .deviatoric_viscosity = 300, .volumetric_viscosity = 2000};
    double dt = 4e-3, tau_d = m.deviatoric_viscosity / (2 * m.mu), k = m.lambda + 2 * m.mu / 3;
    double dev_factor = 1 / (1 + dt / tau_d),
           vol_factor = 1 / (1 + 2 * dt * k / m.volumetric_viscosity);
    pd_hencky_maxwell_step c = pd_hencky_maxwell_coefficients(&m, dt);
    pd_vec3 sigma = pd_v3(1.3, 0.8, 1.1);
    double worst = 0;
    for (int step = 0; step < 10; ++step) {
        pd_vec3 e0 = log3(sigma);
        sigma = pd_hencky_maxwell_project(c, sigma, NULL);
        pd_vec3 e1 = log3(sigma);
        double tr0 = e0.x + e0.y + e0.z, tr1 = e1.x + e1.y + e1.z;
        double d0[3] = {e0.x - tr0 / 3, e0.y - tr0 / 3, e0.z - tr0 / 3};
        double d1[3] = {e1.x - tr1 / 3, e1.y - tr1 / 3, e1.z - tr1 / 3};
        worst = fmax(worst, fabs(tr1 - vol_factor * tr0));
        for (int i = 0; i < 3; ++i)
            worst = fmax(worst, fabs(d1[i] - dev_factor * d0[i]));
    }
    printf("  factors per step: deviatoric %.6f, volumetric %.6f\n", dev_factor, vol_factor);
    PD_CHECK_NEAR(worst, 0, 1e-14);
    PD_CHECK(fabs(dev_factor - vol_factor) > 0.05); /* the two rates differ in this set-up */
}

/* Without moduli the non-equilibrated branch stores nothing and the corrector changes nothing;
 * an infinite viscosity never flows. */
PD_TEST(corrector_without_flow_keeps_the_trial_state) {
    pd_vec3 trial = pd_v3(1.2, 0.7, 1.05);
    pd_hencky_maxwell none = {
        .mu = 0, .lambda = 0, .deviatoric_viscosity = 10, .volumetric_viscosity = 10};
    pd_vec3 s = pd_hencky_maxwell_project(pd_hencky_maxwell_coefficients(&none, 0.01), trial, NULL);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, trial)), 0, 1e-15);
    pd_hencky_maxwell stiff = {.mu = 1e5,
                               .lambda = 1e5,
                               .deviatoric_viscosity = INFINITY,
                               .volumetric_viscosity = INFINITY};
    s = pd_hencky_maxwell_project(pd_hencky_maxwell_coefficients(&stiff, 0.01), trial, NULL);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, trial)), 0, 1e-15);
}

/* dZ_N / dSigma (the formula after Eq. 8) against central differences. */
PD_TEST(corrector_derivative_matches_finite_differences) {
    pd_hencky_maxwell m = {
        .mu = 3e4, .lambda = 1e4, .deviatoric_viscosity = 50, .volumetric_viscosity = 400};
    pd_hencky_maxwell_step c = pd_hencky_maxwell_coefficients(&m, 5e-3);
    pd_vec3 trial = pd_v3(1.4, 0.6, 0.9);
    pd_mat3 dz;
    pd_hencky_maxwell_project(c, trial, &dz);
    double h = 1e-6, worst = 0, scale = 0;
    for (int j = 0; j < 3; ++j) {
        pd_vec3 up = trial, down = trial;
        (&up.x)[j] += h, (&down.x)[j] -= h;
        pd_vec3 fu = pd_hencky_maxwell_project(c, up, NULL);
        pd_vec3 fd = pd_hencky_maxwell_project(c, down, NULL);
        for (int i = 0; i < 3; ++i) {
            double fdiff = ((&fu.x)[i] - (&fd.x)[i]) / (2 * h);
            worst = fmax(worst, fabs(fdiff - dz.m[i][j]));
            scale = fmax(scale, fabs(dz.m[i][j]));
        }
    }
    printf("  largest entry %.4f, worst difference %.2e\n", scale, worst);
    PD_CHECK(worst < 1e-8 * scale);
    PD_CHECK(fabs(dz.m[0][1]) > 1e-3); /* the volumetric coupling is there to be checked */
}
