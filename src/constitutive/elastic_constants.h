/* The isotropic elastic constants of a material, computed once from what the scene gave
 * (youngs_modulus + poisson_ratio, or lame [lambda, mu]) and read by every method, so that no
 * method converts E and nu on its own. */
#ifndef PD_ELASTIC_CONSTANTS_H
#define PD_ELASTIC_CONSTANTS_H

#include "peridot/types.h"

typedef struct pd_elastic {
    pd_real E;      /* Pa: Young's modulus */
    pd_real nu;     /* 1: Poisson's ratio */
    pd_real lambda; /* Pa: Lame's first parameter */
    pd_real mu;     /* Pa: the shear modulus G */
    pd_real K;      /* Pa: the bulk modulus lambda + 2 mu / 3 */
} pd_elastic;

/* lambda = E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 + nu)), K = E / (3 (1 - 2 nu)). */
pd_elastic pd_elastic_from_e_nu(pd_real E, pd_real nu);
/* E = mu (3 lambda + 2 mu) / (lambda + mu), nu = lambda / (2 (lambda + mu)),
 * K = lambda + 2 mu / 3; lambda and mu kept as given. */
pd_elastic pd_elastic_from_lame(pd_real lambda, pd_real mu);
/* A material's constants: from its lame pair when the scene gave one (has_lame), else from
 * youngs_modulus and poisson_ratio. */
pd_elastic pd_material_elastic(const pd_material_def* m);

#endif
