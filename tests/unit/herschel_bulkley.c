/* Herschel-Bulkley's return (src/constitutive/herschel_bulkley.h, Yue et al. 2015) against its
 * steady flow curve in simple shear, tau_xy = sigma_Y / sqrt 3 + (eta / sqrt 2) (gamma' /
 * sqrt 2)^h: a material point sheared at a constant rate (F <- (I + dt L) F, the return on F's
 * stretches each step) settles on it for thinning, Bingham and thickening exponents and at two
 * rates; below the surface the return leaves the state alone. */
#include <math.h>

#include "constitutive/energies.h"
#include "constitutive/herschel_bulkley.h"
#include "math/svd3.h"
#include "test.h"

/* tau_xy (Kirchhoff) after shearing at `rate` for 1 s in steps of dt. */
static double sheared_stress(const pd_herschel_bulkley* m, double lambda, double rate, double dt) {
    pd_mat3 f = pd_m3_identity(), grow = pd_m3_identity(), u, v;
    grow.m[0][1] = dt * rate; /* L = rate e_x e_y^T */
    pd_vec3 s, z;
    int steps = (int)lround(1 / dt);
    for (int k = 0; k < steps; ++k) {
        pd_svd3(pd_m3_mul(grow, f), &u, &s, &v);
        pd_herschel_bulkley_return(m, dt, s, &z);
        f = pd_m3_from_svd(u, z, v);
    }
    pd_svd3(f, &u, &s, &v);
    pd_vec3 tau = pd_hencky_kirchhoff(lambda, m->mu, s); /* tau = U diag(tau_a) U^T */
    return u.m[0][0] * tau.x * u.m[1][0] + u.m[0][1] * tau.y * u.m[1][1] +
           u.m[0][2] * tau.z * u.m[1][2];
}

/* mu 1e5 Pa (elastic strains below 1e-3), sigma_Y 100 Pa, eta 50 Pa s^h, rates 1 and 4 /s,
 * h 0.3, 1, 3, dt 1 ms: within 1 % of the flow curve. A yield surface at sigma_Y instead of
 * sqrt(2/3) sigma_Y misses by 20 %, h read as 1 / h by 50 % at h = 3, a rate off by sqrt 2 by
 * 10 % or more. */
PD_TEST(steady_shear_follows_the_flow_curve) {
    const double exponents[] = {0.3, 1, 3}, rates[] = {1, 4};
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 2; ++b) {
            pd_herschel_bulkley m = {1e5, 100, 50, exponents[a]};
            double got = sheared_stress(&m, 2e5, rates[b], 1e-3);
            double want = 100 / sqrt(3.0) + 50 / sqrt(2.0) * pow(rates[b] / sqrt(2.0), m.exponent);
            printf("  h %.1f, rate %.0f /s: tau_xy %.3f Pa, flow curve %.3f Pa (%+.3f %%)\n",
                   m.exponent, rates[b], got, want, 100 * (got / want - 1));
            PD_CHECK_REL(got, want, 0.01);
        }
}

/* eta 0 is von Mises (tau_xy = sigma_Y / sqrt 3 at any rate); sigma_Y 0 and h 1 is Newtonian
 * with viscosity eta / 2. */
PD_TEST(limits_are_von_mises_and_newtonian) {
    pd_herschel_bulkley plastic = {1e5, 100, 0, 1}, newtonian = {1e5, 0, 50, 1};
    double vm = sheared_stress(&plastic, 2e5, 2, 1e-3),
           nw = sheared_stress(&newtonian, 2e5, 2, 1e-3);
    printf("  eta 0: tau_xy %.4f Pa (sigma_Y / sqrt 3 %.4f); sigma_Y 0: %.4f Pa (eta / 2 x rate "
           "%.4f)\n",
           vm, 100 / sqrt(3.0), nw, 50.0);
    PD_CHECK_REL(vm, 100 / sqrt(3.0), 0.01);
    PD_CHECK_REL(nw, 50.0, 0.01);
}

PD_TEST(inside_the_surface_nothing_changes) {
    pd_herschel_bulkley m = {1e5, 100, 50, 0.5};
    pd_vec3 s = pd_v3(1.0002, 0.9999, 1.0003), z; /* |s| = 2 mu |dev eps| = 59 Pa < 81.6 */
    int flowed = pd_herschel_bulkley_return(&m, 1e-3, s, &z);
    PD_CHECK(!flowed);
    PD_CHECK(z.x == s.x && z.y == s.y && z.z == s.z);
}
