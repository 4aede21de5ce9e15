/* Stress relaxation after a ramp, for every method with Prony-series viscoelasticity
 * (VALIDATION.md, "Viscoelasticity"; issue 10). Reference: a linear Prony solid ramped at
 * eps = r t over t_r and held at eps_h = r t_r carries sigma(t) / eps_h = E_inf +
 * sum_k E_k c_k exp(-(t - t_r) / tau_k), c_k = (tau_k / t_r)(1 - exp(-t_r / tau_k)), with
 * E_inf = E_0 - sum_k E_k. A bar (0.2 x 0.05 x 0.05 m, 500 particles, E_0 = 1e5 Pa, nu 0.3)
 * is stretched by its pins to 1 % over 0.1 s and held; the moving pin's force, averaged over
 * 0.1 s windows (an explicit bar rings with a period of about 0.03 s), over the same bar's
 * with E_inf = E_0 held at the same strain, is E(t) / E_0 within 5 %. sbpd's bonds relax on
 * W = stretch^2 rather than on the strain: after a ramp of 0.2 tau its modes keep up to
 * (x / 6) E_k / E_0 more than the linear series (docs/methods/sbpd.md). */
#include "methods.h"

/* `visco` is the material's Prony block (or ""); every method steps "auto". */
static const char* k_bar =
    "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":\"auto\",\"fps\":50,\"frames\":10},"
    "\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
    "\"poisson_ratio\":0.3%s}},\"bodies\":[{\"name\":\"bar\",\"material\":\"m\","
    "\"spacing\":0.01,\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.2,0.05,0.05]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[0.18,-1,-1],\"max\":[1,1,1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":0.1,\"translate\":[0.0018,0,0]}]}]}]}";

#define RAMP 0.1 /* s */

static double prony_after_ramp(double E0, const double* Ek, const double* tau, int n, double tr,
                               double t) {
    double E = E0;
    for (int k = 0; k < n; ++k)
        E -= Ek[k];
    for (int k = 0; k < n; ++k)
        E += Ek[k] * tau[k] / tr * (1 - exp(-tr / tau[k])) * exp(-(t - tr) / tau[k]);
    return E;
}

/* Mean x force of pin 1 over the steps of [t0, t1). */
static int mean_force(pd_test_sim* t, double t0, double t1, double* force) {
    if (!pd_test_sim_run(t, t0))
        return 0;
    double f = 0, n = 0;
    while (t->world->time < t1 - 1e-9) {
        if (!pd_test_sim_run(t, t->world->time + t->world->def.dt))
            return 0;
        f += t->world->pins[1].force.x, n += 1;
    }
    *force = f / n;
    return 1;
}

static void check_relaxation(const char* visco, const double* Ek, const double* tau, int n,
                             const double* times, int count) {
    char json[2048];
    pd_test_sim t;
    double ref, f;
    snprintf(json, sizeof json, k_bar, "");
    PD_METHOD_REQUIRE(pd_test_method_open(&t, json, NULL, 0));
    int ok = mean_force(&t, 0.3, 1.0, &ref);
    pd_test_sim_close(&t);
    PD_METHOD_REQUIRE(ok);
    printf("  %s elastic: pin force %.4f N\n", g_pd_method.method->name, ref);
    snprintf(json, sizeof json, k_bar, visco);
    PD_METHOD_REQUIRE(pd_test_method_open(&t, json, NULL, 0));
    for (int k = 0; ok && k < count; ++k) {
        ok = mean_force(&t, times[k] - 0.05, times[k] + 0.05, &f);
        double law = prony_after_ramp(1e5, Ek, tau, n, RAMP, times[k]) / 1e5;
        char what[96];
        snprintf(what, sizeof what, "F / F_elastic over Prony's E(t) / E_0 at %.1f s (%d term%s)",
                 times[k], n, n > 1 ? "s" : "");
        pd_test_method_check(what, f / ref / law, 1.0, 0.05, 0);
    }
    pd_test_sim_close(&t);
    PD_METHOD_REQUIRE(ok);
}

static void one_term(void) {
    const double Ek[] = {5e4}, tau[] = {0.5}, times[] = {0.2, 0.5, 1.0, 1.5, 2.0};
    check_relaxation(",\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[5e4],\"times\":[0.5]}",
                     Ek, tau, 1, times, 5);
}

/* The high-viscosity set of Wang 2025 Fig. 5 (Sec. 8): E_inf = 0.3 E_0, E_k = 0.3, 0.2,
 * 0.2 E_0, theta_k = 0.5, 2, 5 s. */
static void three_terms(void) {
    const double Ek[] = {3e4, 2e4, 2e4}, tau[] = {0.5, 2, 5};
    const double times[] = {0.2, 0.5, 1.0, 2.0, 3.0};
    check_relaxation(",\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[3e4,2e4,2e4],"
                     "\"times\":[0.5,2,5]}",
                     Ek, tau, 3, times, 5);
}

PD_TEST_EACH_METHOD(relaxation_follows_one_prony_term, PD_CAP_PRONY, one_term)
PD_TEST_EACH_METHOD(relaxation_follows_three_prony_terms, PD_CAP_PRONY, three_terms)
