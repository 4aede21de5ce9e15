/* Fang 2019's viscoelastic corrector (hencky_viscoelastic.h). */
#include "constitutive/hencky_viscoelastic.h"

#include <math.h>

#define DIM 3 /* d of Eq. 7-8 */

pd_hencky_maxwell_step pd_hencky_maxwell_coefficients(const pd_hencky_maxwell* m, pd_real dt) {
    /* Eq. 8's alpha and beta (an infinite viscosity, which never flows, gives 0) */
    pd_real alpha = 2 * m->mu / m->deviatoric_viscosity;
    pd_real beta = 2 * (2 * m->mu + DIM * m->lambda) / (9 * m->volumetric_viscosity) - alpha / DIM;
    pd_hencky_maxwell_step k;
    k.a = 1 / (1 + dt * alpha);
    k.b = dt * beta / (1 + dt * (alpha + DIM * beta));
    return k;
}

pd_vec3 pd_hencky_maxwell_project(pd_hencky_maxwell_step k, pd_vec3 sigma_trial, pd_mat3* dz) {
    pd_real s[3] = {sigma_trial.x, sigma_trial.y, sigma_trial.z}, eps[3], out[3];
    for (int i = 0; i < 3; ++i)
        eps[i] = log(s[i]);
    pd_real tr = eps[0] + eps[1] + eps[2];
    for (int i = 0; i < 3; ++i) /* Eq. 8 */
        out[i] = exp(k.a * (eps[i] - k.b * tr));
    if (dz) /* the derivative after Eq. 8 */
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) /* d out_i / d s_j = out_i A (delta_ij - B) / s_j */
                dz->m[i][j] = out[i] * k.a * ((i == j) - k.b) / s[j];
    return pd_v3(out[0], out[1], out[2]);
}
