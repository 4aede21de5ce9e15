/* Plastic returns on the Hencky strain (hencky_plasticity.h). */
#include "constitutive/hencky_plasticity.h"

#include <math.h>

pd_dp_case pd_hencky_return(const pd_hencky_yield* y, pd_vec3 s_tr, pd_vec3* s, pd_mat3* dz) {
    pd_real e[3] = {log(s_tr.x), log(s_tr.y), log(s_tr.z)};
    pd_real tr = e[0] + e[1] + e[2], dev[3], norm = 0;
    for (int a = 0; a < 3; ++a)
        dev[a] = e[a] - tr / 3, norm += dev[a] * dev[a];
    norm = sqrt(norm);
    pd_real mu = y->mu, k3b = 3 * y->kappa * y->cone.b;
    pd_real limit = y->cone.a - k3b * tr;              /* a + b I1, I1 = -3 K tr(eps) */
    if (limit > 0 && sqrt(2.0) * mu * norm <= limit) { /* inside: elastic */
        *s = s_tr;
        if (dz)
            *dz = pd_m3_identity();
        return PD_DP_ELASTIC;
    }
    if (limit <= 0) { /* past the apex: tr(eps) = a / (3 K b), no deviator */
        pd_real t = y->cone.b > 0 ? y->cone.a / (3 * y->kappa * y->cone.b) : tr;
        pd_real stretch = exp(t / 3);
        *s = pd_v3(stretch, stretch, stretch);
        if (dz)
            *dz = pd_m3_zero();
        return PD_DP_APEX;
    }
    /* onto the cone: dev eps scaled by c = limit / (sqrt 2 mu |dev eps|), tr eps kept */
    pd_real c = limit / (sqrt(2.0) * mu * norm), out[3];
    for (int a = 0; a < 3; ++a)
        out[a] = exp(tr / 3 + c * dev[a]);
    *s = pd_v3(out[0], out[1], out[2]);
    if (dz) {
        pd_real sv[3] = {s_tr.x, s_tr.y, s_tr.z};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                /* d eps'_i / d eps_j = 1/3 + c ([i = j] - 1/3) + dev_i dc/d eps_j, with
                 * dc / d eps_j = -3 K b / (sqrt 2 mu |dev|) - c dev_j / |dev|^2 */
                pd_real dc = -k3b / (sqrt(2.0) * mu * norm) - c * dev[j] / (norm * norm);
                pd_real de = 1.0 / 3 + c * ((i == j) - 1.0 / 3) + dev[i] * dc;
                dz->m[i][j] = out[i] * de / sv[j];
            }
    }
    return PD_DP_CONE;
}

pd_dp_case pd_hencky_return_corrected(const pd_hencky_yield* y, pd_vec3 s_tr, pd_real dilation,
                                      pd_vec3* s, pd_mat3* dz, pd_real* dilation_out) {
    pd_real grow = exp(dilation / 3); /* eps_c = log s_tr + v / 3 */
    pd_vec3 s_c = pd_v3_scale(s_tr, grow);
    pd_dp_case c = pd_hencky_return(y, s_c, s, dz);
    if (dz)
        *dz = pd_m3_scale(*dz, grow);
    if (dilation_out) /* v' = tr eps_c - tr eps: the volume the apex dropped, else 0 */
        *dilation_out =
            c == PD_DP_APEX ? fmax(log(s_c.x * s_c.y * s_c.z) - log(s->x * s->y * s->z), 0) : 0;
    return c;
}
