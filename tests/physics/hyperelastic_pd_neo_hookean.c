/* hyperelastic_pd (Xu 2018): the neo_hookean preset against the compressible neo-Hookean law
 * (issue 34 item 2). The bulk analysis (a homogeneous uniaxial stretch of an isotropic family,
 * docs/methods/hyperelastic_pd.md) and a bar's bulk measured (surface fitted out). */
#include "bar.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"

#define E_0  1e5
#define NU_0 0.3

/* The compressible neo-Hookean law W = mu/2 (I_1 - 3) - mu ln J + lambda/2 (ln J)^2 under a
 * uniaxial stretch l with free sides: the lateral stretch t from mu (t^2 - 1) + lambda
 * ln(l t^2) = 0 (Newton), the nominal stress mu (l - 1/l) + lambda ln(J) / l. */
static double law_stress(double l) {
    double mu = E_0 / (2 * (1 + NU_0)), lambda = E_0 * NU_0 / ((1 + NU_0) * (1 - 2 * NU_0));
    double t = 1;
    for (int k = 0; k < 50; ++k)
        t -= (mu * (t * t - 1) + lambda * log(l * t * t)) / (2 * mu * t + 2 * lambda / t);
    return mu * (l - 1 / l) + lambda * log(l * t * t) / l;
}

/* The bulk analysis: under F = diag(l, t, t) every bond of direction n has tau = |F n|
 * whatever its length, so with sum_j w V = 1 and an isotropic family Eq. 12-14 give
 * W = lambda g(<tau>) + mu <h(tau)>, <.> the mean over the sphere, here over c = n_x in [0, 1]
 * by the midpoint rule, tau(c) = sqrt(l^2 c^2 + t^2 (1 - c^2)). t makes dW/dt = 0 (bisection;
 * W is convex in t), and P = dW/dl there. lambda, mu by the consistent mapping. */
#define ANALYSIS_POINTS 512

static double analysis_derivative(const pd_hpd_basis* f, double l, double t, int by_l) {
    double lambda, mu, theta = 0, dtheta = 0, dh = 0;
    pd_hpd_lame(PD_HPD_LAME_CONSISTENT, E_0, NU_0, &lambda, &mu);
    for (int k = 0; k < ANALYSIS_POINTS; ++k) {
        double c = (k + 0.5) / ANALYSIS_POINTS, tau = sqrt(l * l * c * c + t * t * (1 - c * c));
        double dtau = by_l ? l * c * c / tau : t * (1 - c * c) / tau;
        theta += tau / ANALYSIS_POINTS, dtheta += dtau / ANALYSIS_POINTS;
        dh += pd_hpd_basis_slope(f, tau) * dtau / ANALYSIS_POINTS;
    }
    return lambda * pd_hpd_basis_slope(f, theta) * dtheta + mu * dh;
}

static double analysis_stress(const pd_hpd_basis* f, double l) {
    double lo = 0.3, hi = 2;
    for (int k = 0; k < 60; ++k) {
        double mid = 0.5 * (lo + hi);
        if (analysis_derivative(f, l, mid, 0) > 0)
            hi = mid;
        else
            lo = mid;
    }
    return analysis_derivative(f, l, 0.5 * (lo + hi), 1);
}

/* g = h of a material: the preset's when coefficients is NULL. */
static pd_hpd_basis basis(int preset, const double* coefficients) {
    pd_hpd_material_params mp;
    memset(&mp, 0, sizeof mp);
    mp.preset = preset;
    if (coefficients) {
        mp.h.count = 2 * PD_HPD_ORDERS;
        for (int k = 0; k < 2 * PD_HPD_ORDERS; ++k)
            mp.h.v[k] = coefficients[k];
    }
    return pd_hpd_basis_of(&mp, 1);
}

static const double k_stretches[3] = {0.8, 1.2, 1.5};

/* The analysis at l = 0.8, 1.2, 1.5 for the preset, the paper's A_1 (Eq. 27) and the issue's
 * (A_1 - 0.49 B_1) / 0.51. The preset within 12 % of the law at each (0.95 / 1.04 / 1.10);
 * A_1 (0.78 / 1.20 / 1.47) and the issue's (0.83 / 1.14 / 1.30) would fail. The preset's
 * h'' > 0 on [0.05, 20] (convex far beyond the set-up's check), least 0.80 near 1.41. */
PD_TEST(neo_hookean_preset_follows_the_law_in_the_bulk_analysis) {
    double a1[2 * PD_HPD_ORDERS] = {1}, issue[2 * PD_HPD_ORDERS] = {1 / 0.51};
    issue[PD_HPD_ORDERS] = -0.49 / 0.51;
    pd_hpd_basis f[3] = {basis(PD_HPD_NEO_HOOKEAN, NULL), basis(0, a1), basis(0, issue)};
    const char* names[3] = {"preset A1 + 3 A2 - 3 B1", "A1 (Eq. 27)", "(A1 - 0.49 B1) / 0.51"};
    double least = INFINITY, at = 0;
    for (int k = 0; k <= 1000; ++k) {
        double s = 0.05 * pow(400, k / 1000.0), c = pd_hpd_basis_curvature(&f[0], s);
        if (c < least)
            least = c, at = s;
    }
    printf("  preset: h''(1) %.4f, least h'' on [0.05, 20] %.4f at s = %.3f\n",
           pd_hpd_basis_curvature(&f[0], 1), least, at);
    PD_CHECK_NEAR(pd_hpd_basis_curvature(&f[0], 1), 2, 1e-12);
    PD_CHECK(least > 0.5);
    for (int b = 0; b < 3; ++b) {
        double r[3];
        for (int k = 0; k < 3; ++k)
            r[k] = analysis_stress(&f[b], k_stretches[k]) / law_stress(k_stretches[k]);
        printf("  %s: P / law %.3f / %.3f / %.3f at l = 0.8 / 1.2 / 1.5\n", names[b], r[0], r[1],
               r[2]);
        if (b == 0)
            for (int k = 0; k < 3; ++k)
                PD_CHECK_REL(r[k], 1, 0.12);
    }
}

/* Nominal stress P / law at the middle's own stretch of a bar of section W (the bar of
 * hyperelastic_pd.c: 0.4 m, E 1e5, nu 0.3, spacing 0.01, both ends pinned, one moved over 1 s
 * to l_end) under the neo_hookean preset. */
static double bar_ratio(double l_end, double W) {
    static const char* json =
        "{\"version\":1,\"method\":\"hyperelastic_pd\","
        "\"solver\":{\"iterations\":60,\"tolerance\":1e-6},"
        "\"time\":{\"dt\":0.05,\"fps\":20,\"frames\":30},\"gravity\":[0,0,0],"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,"
        "\"hyperelastic\":{\"preset\":\"neo_hookean\"}}},"
        "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.4,%g,%g]},"
        "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
        "{\"region\":{\"type\":\"box\",\"min\":[0.38,-1,-1],\"max\":[1,1,1]},"
        "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":1,\"translate\":[%g,0,0]}]}]}]}";
    char text[2048];
    snprintf(text, sizeof text, json, W, W, (l_end - 1) * 0.38);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, text, NULL, 0))
        return NAN;
    double r = NAN;
    if (pd_test_sim_run(&t, 1.5)) {
        pd_test_bar m = pd_test_bar_measure(&t, 0.4, W);
        r = m.force / (W * W) / law_stress(1 + m.axial);
        printf("  l = %.2f, W %.2f m (middle %.4f): P / law %.4f\n", l_end, W, 1 + m.axial, r);
    }
    pd_test_sim_close(&t);
    return r;
}

/* Issue 34: the bulk at nu = 0.3 within 35 % of the law at l = 1.5 (within 25 % at 1.2:
 * hyperelastic_pd.c's bulk_stress_at_stretch_1_2_within_25_percent, measured 1.048). Bars of
 * W = 6 and 10 spacings, P / law = a + c / W, the bulk a. Also within 10 % of the analysis
 * above: a bond loop that evaluated another basis than the set-up's, or a lattice that departs
 * from the sphere's mean, shows there. A_1 (the paper's) reads 1.47 in the analysis. */
PD_TEST(neo_hookean_bulk_follows_the_law_at_stretch_1_5) {
    double r6 = bar_ratio(1.5, 0.06), r10 = bar_ratio(1.5, 0.10);
    double c = (r6 - r10) / (1 / 0.06 - 1 / 0.10), bulk = r10 - c / 0.10;
    pd_hpd_basis f = basis(PD_HPD_NEO_HOOKEAN, NULL);
    double analysis = analysis_stress(&f, 1.5) / law_stress(1.5);
    printf("  bulk P / law %.4f (surface term %.4f m / W), analysis %.4f\n", bulk, c, analysis);
    PD_CHECK_REL(bulk, 1, 0.35);
    PD_CHECK_REL(bulk, analysis, 0.10);
}
