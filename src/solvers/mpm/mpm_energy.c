/* mpm's elastic energies Psi_E (Fang et al. 2019 Eq. 2 and 6, with the neo-Hookean and fixed
 * corotated alternatives of the material key elastic_energy) in the stretches of F_E, from the
 * shared src/constitutive/energies.h: one switch per call, per material, never a function
 * pointer per particle. */
#include "constitutive/energies.h"
#include "solvers/mpm/mpm_internal.h"

/* The neo-Hookean's bulk modulus K = lambda + 2 mu / 3: the same small-strain law as the others
 * with the same lambda and mu. */
static pd_real bulk(const pd_mpm_material* m) {
    return m->lambda + 2 * m->mu / 3;
}

pd_real pd_mpm_energy(const pd_mpm_material* m, pd_vec3 s) {
    switch (m->energy) {
        case PD_MPM_NEO_HOOKEAN:
            return pd_neo_hookean_energy(m->mu, bulk(m), s);
        case PD_MPM_FIXED_COROTATED:
            return pd_fixed_corotated_principal_energy(m->lambda, m->mu, s);
        default:
            return pd_hencky_energy(m->lambda, m->mu, s); /* Eq. 6 */
    }
}

pd_vec3 pd_mpm_kirchhoff(const pd_mpm_material* m, pd_vec3 s) {
    switch (m->energy) {
        case PD_MPM_NEO_HOOKEAN:
            return pd_neo_hookean_kirchhoff(m->mu, bulk(m), s);
        case PD_MPM_FIXED_COROTATED:
            return pd_fixed_corotated_kirchhoff(m->lambda, m->mu, s);
        default:
            return pd_hencky_kirchhoff(m->lambda, m->mu, s);
    }
}

static pd_mat3 kirchhoff_derivative(const pd_mpm_material* m, pd_vec3 s) {
    switch (m->energy) {
        case PD_MPM_NEO_HOOKEAN:
            return pd_neo_hookean_kirchhoff_derivative(m->mu, bulk(m), s);
        case PD_MPM_FIXED_COROTATED:
            return pd_fixed_corotated_kirchhoff_derivative(m->lambda, m->mu, s);
        default:
            return pd_hencky_kirchhoff_derivative(m->lambda, m->mu, s);
    }
}

void pd_mpm_gradient_hessian(const pd_mpm_material* m, const pd_real s[3], pd_real g[3],
                             pd_real h[3][3]) {
    pd_vec3 sv = pd_v3(s[0], s[1], s[2]), gv;
    pd_mat3 hm;
    pd_principal_gradient_hessian(sv, pd_mpm_kirchhoff(m, sv), kirchhoff_derivative(m, sv), &gv,
                                  &hm);
    g[0] = gv.x, g[1] = gv.y, g[2] = gv.z;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            h[a][b] = hm.m[a][b];
}
