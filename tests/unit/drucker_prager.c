/* The Drucker-Prager cone every method takes (src/constitutive/drucker_prager.h): the
 * compression cone meets Mohr-Coulomb on its triaxial-compression meridian, the extension cone
 * on its extension meridian, and each misses the other meridian (so that a swapped sign or
 * convention fails); the triaxial and unconfined strengths follow. */
#include <math.h>

#include "constitutive/drucker_prager.h"
#include "test.h"

/* The largest |yield| / |sigma_3| over points of Mohr-Coulomb's line (friction angle phi,
 * cohesion c) on the meridian where two principal stresses are equal: compression has the
 * equal pair less compressive than the third (sigma_1 = sigma_2 > sigma_3, tension positive),
 * extension more. */
static double off_meridian(pd_dp_cone cone, double phi_deg, double c, int compression) {
    double phi = phi_deg * PD_PI / 180, worst = 0;
    for (double s_hi = -1000; s_hi <= 0; s_hi += 250) {
        /* Mohr-Coulomb: (s_hi - s_lo) = -(s_hi + s_lo) sin phi + 2 c cos phi */
        double s_lo = (s_hi * (1 + sin(phi)) - 2 * c * cos(phi)) / (1 - sin(phi));
        pd_vec3 sigma = compression ? pd_v3(s_hi, s_hi, s_lo) : pd_v3(s_hi, s_lo, s_lo);
        worst = fmax(worst, fabs(pd_dp_yield(cone, sigma)) / (fabs(s_lo) + 1));
    }
    return worst;
}

PD_TEST(cones_meet_mohr_coulomb_on_their_meridians) {
    const double phis[] = {20, 30, 40};
    double on = 0, off = INFINITY;
    for (int k = 0; k < 3; ++k) {
        pd_dp_cone comp = pd_dp_cone_of(phis[k], 100, PD_CONE_COMPRESSION);
        pd_dp_cone ext = pd_dp_cone_of(phis[k], 100, PD_CONE_EXTENSION);
        on =
            fmax(on, fmax(off_meridian(comp, phis[k], 100, 1), off_meridian(ext, phis[k], 100, 0)));
        off = fmin(off,
                   fmin(off_meridian(comp, phis[k], 100, 0), off_meridian(ext, phis[k], 100, 1)));
    }
    printf("  on its own meridian |y| / |sigma_3| <= %.2e; on the other >= %.3f\n", on, off);
    PD_CHECK(on < 1e-12);
    PD_CHECK(off > 0.05);
}

/* Cohesionless triaxial compression fails at q = 6 sin phi / (3 - sin phi) p; with cohesion
 * and no confinement at q = 2 c cos phi / (1 - sin phi) (Mohr-Coulomb's unconfined strength). */
PD_TEST(triaxial_and_unconfined_strengths) {
    double worst = 0;
    for (double phi_deg = 10; phi_deg <= 45; phi_deg += 5) {
        double phi = phi_deg * PD_PI / 180, c = 250;
        pd_dp_cone sand = pd_dp_cone_of(phi_deg, 0, PD_CONE_COMPRESSION);
        worst = fmax(worst, fabs(pd_dp_triaxial_ratio(sand) / (6 * sin(phi) / (3 - sin(phi))) - 1));
        pd_dp_cone clay = pd_dp_cone_of(phi_deg, c, PD_CONE_COMPRESSION);
        double qu = 2 * c * cos(phi) / (1 - sin(phi)); /* sigma = (0, 0, -qu) is on the cone */
        worst = fmax(worst, fabs(pd_dp_yield(clay, pd_v3(0, 0, -qu))) / qu);
    }
    printf("  worst relative miss %.2e\n", worst);
    PD_CHECK(worst < 1e-12);
}

/* He 2017 Eq. 18's radial return on the invariants (pd_dp_radial_return), as projective_pd
 * takes it: a state inside is left alone (returns 0, alpha and beta untouched); one outside
 * below the apex keeps I1 (alpha = 0) and lands on the cone, (1 - beta) sqrt(J2) = a + b I1;
 * one in tension past the apex loses its deviator (beta = 1) and the share alpha of I1 that
 * brings it onto the apex, a + b (1 - alpha) I1 = 0. */
PD_TEST(radial_return_lands_on_the_cone_or_its_apex) {
    pd_dp_cone cone = pd_dp_cone_of(30, 100, PD_CONE_COMPRESSION);
    pd_real alpha = -7, beta = -7;
    PD_CHECK(!pd_dp_radial_return(cone, 1000, 0.5 * (cone.a + cone.b * 1000), &alpha, &beta));
    PD_CHECK(alpha == -7 && beta == -7);
    pd_real worst_cone = 0, worst_apex = 0;
    int apex = 0, onto = 0;
    for (int k = 0; k < 40; ++k) {
        pd_real i1 = -2000 + 100 * k, j = 50 + 37 * k; /* tension (I1 < 0) to compression */
        if (!pd_dp_radial_return(cone, i1, j, &alpha, &beta))
            continue;
        if (cone.a + cone.b * i1 > 0) {
            ++onto;
            PD_CHECK(alpha == 0);
            worst_cone = fmax(worst_cone, fabs((1 - beta) * j / (cone.a + cone.b * i1) - 1));
        } else {
            ++apex;
            PD_CHECK(beta == 1 && alpha > 0 && alpha <= 1);
            worst_apex = fmax(worst_apex, fabs(cone.a + cone.b * (1 - alpha) * i1) / cone.a);
        }
    }
    printf("  %d onto the cone (|ratio - 1| <= %.2e), %d onto the apex (|a + b I1'| / a <= "
           "%.2e)\n",
           onto, worst_cone, apex, worst_apex);
    PD_CHECK(onto > 10 && apex > 5);
    PD_CHECK(worst_cone < 1e-12);
    PD_CHECK(worst_apex < 1e-12);
}
