/* Isotropic elastic constants (elastic_constants.h). */
#include "constitutive/elastic_constants.h"

pd_elastic pd_elastic_from_e_nu(pd_real E, pd_real nu) {
    pd_elastic c;
    c.E = E;
    c.nu = nu;
    c.lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    c.mu = E / (2 * (1 + nu));
    c.K = E / (3 * (1 - 2 * nu));
    return c;
}

pd_elastic pd_elastic_from_lame(pd_real lambda, pd_real mu) {
    pd_elastic c;
    c.lambda = lambda;
    c.mu = mu;
    c.E = mu * (3 * lambda + 2 * mu) / (lambda + mu);
    c.nu = lambda / (2 * (lambda + mu));
    c.K = lambda + 2 * mu / 3;
    return c;
}

pd_elastic pd_material_elastic(const pd_material_def* m) {
    return m->has_lame ? pd_elastic_from_lame(m->lame_lambda, m->lame_mu)
                       : pd_elastic_from_e_nu(m->youngs_modulus, m->poisson_ratio);
}
