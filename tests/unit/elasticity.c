/* The elastic constants every method reads (src/constitutive/elastic_constants.h): E, nu and
 * lame [lambda, mu] describe one material either way round, and the default material's two
 * descriptions agree bit for bit. */
#include <math.h>

#include "constitutive/elastic_constants.h"
#include "test.h"

/* Steel-like and rubber-like numbers: lambda = E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 +
 * nu)) worked by hand, K = E / (3 (1 - 2 nu)), and the lame route gives E and nu back. */
PD_TEST(e_nu_and_lame_describe_one_material) {
    pd_elastic c = pd_elastic_from_e_nu(200e9, 0.3);
    PD_CHECK_REL(c.lambda, 200e9 * 0.3 / (1.3 * 0.4), 1e-14); /* 115.38 GPa */
    PD_CHECK_REL(c.mu, 200e9 / 2.6, 1e-14);                   /* 76.92 GPa */
    PD_CHECK_REL(c.K, 200e9 / 1.2, 1e-14);                    /* 166.67 GPa */
    PD_CHECK_REL(c.K, c.lambda + 2 * c.mu / 3, 1e-14);
    pd_elastic back = pd_elastic_from_lame(c.lambda, c.mu);
    PD_CHECK_REL(back.E, 200e9, 1e-14);
    PD_CHECK_REL(back.nu, 0.3, 1e-14);
    PD_CHECK_REL(back.K, c.K, 1e-14);
    pd_elastic rubber = pd_elastic_from_lame(1e6, 1e4); /* nu near 1/2 */
    PD_CHECK(rubber.lambda == 1e6 && rubber.mu == 1e4);
    PD_CHECK_REL(rubber.nu, 1e6 / (2 * 1.01e6), 1e-14);
    PD_CHECK_REL(rubber.E, 1e4 * 3.02e6 / 1.01e6, 1e-14);
}

/* pd_material_elastic takes the lame pair when the scene gave one, and E, nu otherwise. */
PD_TEST(a_material_takes_what_it_was_given) {
    pd_material_def m = pd_default_material_def();
    pd_elastic c = pd_material_elastic(&m);
    PD_CHECK(c.E == 1e5 && c.nu == 0.25);
    PD_CHECK(c.lambda == m.lame_lambda && c.mu == m.lame_mu); /* 4e4 each, exactly */
    m.has_lame = 1, m.lame_lambda = 3e4, m.lame_mu = 2e4;     /* E, nu left stale */
    c = pd_material_elastic(&m);
    PD_CHECK(c.lambda == 3e4 && c.mu == 2e4);
    PD_CHECK_REL(c.E, 2e4 * 13e4 / 5e4, 1e-14);
    PD_CHECK_REL(c.nu, 0.3, 1e-14);
}
