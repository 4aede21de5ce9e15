/* Drucker-Prager's strength in triaxial compression, for every method with Drucker-Prager
 * plasticity (issue 31). Reference: Mohr-Coulomb's compression corner, q_f = 6 sin phi /
 * (3 - sin phi) p at yield for a cohesionless material (Drucker-Prager's compression cone
 * meets it there: src/constitutive/drucker_prager.h), within 2 %, at friction angles 20, 30
 * and 40 degrees. q / p is read where each method's yield function first flows under a
 * confining strain of 1e-3 and a growing isochoric axial one (p and q Hooke's for the imposed
 * strain, or the method's stress of it): each method's own probe (plasticity.c, sbpd_sand.c,
 * mpm.c, xpbi.c), called per method here; a method that declares Drucker-Prager without a probe
 * fails. */
#include "methods.h"
#include "triaxial.h"
#include "constitutive/hencky_plasticity.h"

double pd_test_hencky_triaxial_ratio(const pd_hencky_yield* yield, double mu, double lambda) {
    double er = 1e-3, lo = 0, hi = 0.01;
    for (int it = 0; it < 60; ++it) {
        double mid = 0.5 * (lo + hi);
        pd_vec3 s;
        pd_vec3 trial = pd_v3(1 - er - mid, 1 - er + mid / 2, 1 - er + mid / 2);
        if (pd_hencky_return(yield, trial, &s, NULL) != PD_DP_ELASTIC)
            hi = mid;
        else
            lo = mid;
    }
    double ta = 0.5 * (lo + hi);
    double e[3] = {log(1 - er - ta), log(1 - er + ta / 2), log(1 - er + ta / 2)};
    double tr = e[0] + e[1] + e[2], tau[3];
    for (int a = 0; a < 3; ++a)
        tau[a] = 2 * mu * e[a] + lambda * tr;
    return (tau[1] - tau[0]) / (-(tau[0] + tau[1] + tau[2]) / 3);
}

static const struct {
    const char* method;
    double (*ratio)(double phi);
} k_probes[] = {
    {"projective_pd", pd_test_ppd_triaxial_ratio},
    {"sbpd", pd_test_sbpd_triaxial_ratio},
    {"mpm", pd_test_mpm_triaxial_ratio},
    {"xpbi", pd_test_xpbi_triaxial_ratio},
};

static void triaxial(void) {
    double (*ratio)(double) = NULL;
    for (size_t k = 0; k < sizeof k_probes / sizeof k_probes[0]; ++k)
        if (strcmp(k_probes[k].method, g_pd_method.method->name) == 0)
            ratio = k_probes[k].ratio;
    PD_METHOD_REQUIRE(ratio != NULL); /* a method with Drucker-Prager needs its probe here */
    const double phis[] = {20, 30, 40};
    for (int k = 0; k < 3; ++k) {
        double sp = sin(phis[k] * PD_PI / 180);
        char what[64];
        snprintf(what, sizeof what, "q / p at yield at friction angle %g", phis[k]);
        pd_test_method_check(what, ratio(phis[k]), 6 * sp / (3 - sp), 0.02, 1);
    }
}

PD_TEST_EACH_METHOD(triaxial_compression_fails_on_mohr_coulombs_compression_corner,
                    PD_CAP_DRUCKER_PRAGER, triaxial)
