/* The densities of mpm's optimiser step (src/solvers/mpm/mpm_implicit.c) against central finite
 * differences in the trial's stretches: the Maxwell branch's W_N (Eq. 8 as a variational update)
 * has the projected branch stress as its gradient; von Mises' W and Drucker-Prager's at its apex
 * have the returned stress as theirs; on Drucker-Prager's cone W's gradient is the returned stress
 * less the pressure 3 sqrt 2 K b (|dev e| - r_y) (the associated flow's), the derivation the
 * optimiser's choice to follow the residual there rests on. */
#include <math.h>

#include "constitutive/drucker_prager.h"
#include "solvers/mpm/mpm_internal.h"
#include "test.h"

static const double k_mu = 1e5 / 2.6, k_lambda = 1e5 * 0.3 / (1.3 * 0.4);

static pd_mpm_material plastic_material(pd_dp_cone cone, int volume_correction) {
    pd_mpm_material m = {.energy = PD_MPM_HENCKY, .mu = k_mu, .lambda = k_lambda, .density = 1000};
    m.plastic = 1;
    m.yield = (pd_hencky_yield){k_mu, k_lambda + 2 * k_mu / 3, cone};
    m.volume_correction = volume_correction;
    return m;
}

/* The largest |dW/de_a - (g_a s_a + extra)| over the three axes, by central differences in e =
 * ln s (step 1e-6), relative to |g s|; extra is added to every axis. */
static double gradient_error(pd_real (*w)(const pd_mpm_material*, pd_vec3, pd_real, pd_real*),
                             const pd_mpm_material* m, pd_vec3 s, pd_real dilation, double extra) {
    pd_real g[3], gp[3], e[3] = {log(s.x), log(s.y), log(s.z)}, worst = 0, size = 0;
    w(m, s, dilation, g);
    pd_real sa[3] = {s.x, s.y, s.z};
    for (int a = 0; a < 3; ++a)
        size = fmax(size, fabs(g[a] * sa[a]));
    for (int a = 0; a < 3; ++a) {
        pd_real ep[3] = {e[0], e[1], e[2]}, em[3] = {e[0], e[1], e[2]}, h = 1e-6;
        ep[a] += h, em[a] -= h;
        pd_real wp = w(m, pd_v3(exp(ep[0]), exp(ep[1]), exp(ep[2])), dilation, gp);
        pd_real wm = w(m, pd_v3(exp(em[0]), exp(em[1]), exp(em[2])), dilation, gp);
        worst = fmax(worst, fabs((wp - wm) / (2 * h) - (g[a] * sa[a] + extra)));
    }
    return worst / size;
}

static pd_real plastic_w(const pd_mpm_material* m, pd_vec3 s, pd_real dilation, pd_real* g) {
    int cone;
    return pd_mpm_incremental_density(m, s, dilation, g, &cone);
}

static pd_real branch_w(const pd_mpm_material* m, pd_vec3 s, pd_real dilation, pd_real* g) {
    (void)dilation;
    return pd_mpm_branch_density(m, s, g);
}

/* W_N's gradient is tau_N(Z_N(e)) to 1e-7 at a stretch that relaxes deviator and volume (a
 * gradient of Psi_N at the trial, or without the 1/2, misses by the branch's relaxed share). */
PD_TEST(maxwell_branch_density_has_the_projected_stress_as_gradient) {
    pd_mpm_material m = {.energy = PD_MPM_HENCKY, .mu = k_mu, .lambda = k_lambda, .density = 1000};
    m.maxwell = 1;
    m.branch = (pd_hencky_maxwell){.mu = 2 * k_mu,
                                   .lambda = 2 * k_lambda,
                                   .deviatoric_viscosity = 4 * k_mu * 0.01,
                                   .volumetric_viscosity = 6 * k_lambda * 0.01};
    double worst = 0;
    const double dts[] = {1e-3, 1e-2, 1e-1};
    for (int k = 0; k < 3; ++k) {
        m.step = pd_hencky_maxwell_coefficients(&m.branch, dts[k]);
        worst = fmax(worst, gradient_error(branch_w, &m, pd_v3(1.2, 0.9, 0.95), 0, 0));
        worst = fmax(worst, gradient_error(branch_w, &m, pd_v3(0.7, 1.1, 1.3), 0, 0));
    }
    printf("  W_N's finite-difference gradient against tau_N(Z_N): worst relative %.2e\n", worst);
    PD_CHECK(worst < 1e-7);
}

/* Von Mises past yield, Drucker-Prager (phi 30, cohesion 200 Pa) past its apex (in tension) and
 * inside its cone: W's gradient is the returned stress to 1e-7. On the cone (compressed and
 * sheared) it is the returned stress plus -3 sqrt 2 K b (|dev e| - r_y) on every axis to 1e-7,
 * and that term is not small (over 1 % of the stress), with and without a carried dilation. */
PD_TEST(plastic_density_gradient_is_the_returned_stress_but_on_the_cone) {
    pd_mpm_material vm = plastic_material(pd_von_mises_cone(1000), 0);
    pd_dp_cone cone = pd_dp_cone_of(30, 200, PD_CONE_COMPRESSION);
    pd_mpm_material dp = plastic_material(cone, 0), dpc = plastic_material(cone, 1);
    double vm_err = gradient_error(plastic_w, &vm, pd_v3(1.05, 0.97, 0.99), 0, 0);
    double apex_err = gradient_error(plastic_w, &dp, pd_v3(1.02, 1.03, 1.01), 0, 0);
    double inside_err = gradient_error(plastic_w, &dp, pd_v3(0.999, 0.998, 0.9985), 0, 0);
    double kappa = dp.yield.kappa, worst_cone = 0, share = INFINITY;
    const pd_vec3 trials[] = {pd_v3(0.945, 0.995, 1.045), pd_v3(0.975, 0.955, 1.035)};
    for (int k = 0; k < 2; ++k)
        for (int corrected = 0; corrected < 2; ++corrected) {
            const pd_mpm_material* m = corrected ? &dpc : &dp;
            pd_real v = corrected ? 0.004 : 0, g[3];
            pd_vec3 s = trials[k];
            int on_cone;
            pd_mpm_incremental_density(m, s, v, g, &on_cone);
            PD_CHECK(on_cone);
            double e[3] = {log(s.x) + v / 3, log(s.y) + v / 3, log(s.z) + v / 3};
            double tr = e[0] + e[1] + e[2], r = 0;
            for (int a = 0; a < 3; ++a)
                r += (e[a] - tr / 3) * (e[a] - tr / 3);
            r = sqrt(r);
            double ry = (cone.a - 3 * kappa * cone.b * tr) / (sqrt(2.0) * k_mu);
            double extra = -3 * sqrt(2.0) * kappa * cone.b * (r - ry);
            worst_cone = fmax(worst_cone, gradient_error(plastic_w, m, s, v, extra));
            share = fmin(share, fabs(extra) / fmax(fabs(g[0] * s.x), fabs(g[1] * s.y)));
        }
    printf("  W's finite-difference gradient against the returned stress: von Mises %.2e, "
           "Drucker-Prager apex %.2e, inside %.2e; on the cone, with the dilation's pressure: "
           "%.2e (that pressure at least %.1f %% of the stress)\n",
           vm_err, apex_err, inside_err, worst_cone, 100 * share);
    PD_CHECK(vm_err < 1e-7);
    PD_CHECK(apex_err < 1e-7);
    PD_CHECK(inside_err < 1e-7);
    PD_CHECK(worst_cone < 1e-7);
    PD_CHECK(share > 0.01);
}
