/* The inversion force of Xu 2018 Eq. 24, T_ij = k_ij [y_i - y_j - F_i (x_i - x_j)], with the
 * first two rows of F_i exchanged where det F_i < 0. The paper adds it as a force; here it is
 * the energy E_inv = sum_i sum_j k_ij / 2 |y_j - y_i - F_i xi_ij|^2 with F_i the fit that
 * minimises i's sum, F_i = (sum_j k_ij y_ij xi_ij^T) K_i^-1, K_i = sum_j k_ij xi_ij xi_ij^T:
 * at a minimiser the derivative through F_i vanishes (the envelope theorem), so Eq. 24 is
 * exactly its gradient and the line search and Eq. 25 see one energy. An affine deformation
 * leaves it 0 (E and nu are those of Eq. 12); a particle whose neighbourhood is mirrored has
 * F_i's rows exchanged, a rotation, and the energy pulls it there. With the exchange F_i is not
 * the minimiser, and the force is the gradient with F_i held (what Eq. 24 says). Families that
 * span no volume (a one-layer cloth) have no det F and take no inversion force. */
#include <math.h>

#include "math/svd3.h"
#include "parallel/parallel.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"

/* K_i^-1 of each particle from the bond stiffnesses k_ij (those of Eq. 23: s->k_bond), and
 * whether its family is planar (K_i's smallest eigenvalue below 1e-6 of its largest). */
void pd_hpd_inversion_setup(pd_hpd_state* s) {
    for (uint32_t i = 0; i < s->n; ++i) {
        pd_mat3 K = pd_family_shape_tensor(&s->fam, i, s->k_bond, NULL);
        pd_vec3 l;
        pd_mat3 q;
        pd_eigen_sym3(K, &l, &q);
        s->planar[i] = !(l.x > 1e-6 * l.z);
        s->kinv[i] = s->planar[i] ? pd_m3_zero() : pd_m3_pinv_sym_eigen(l, q, 1e-6);
    }
}

/* F_i at y, its rows 0 and 1 exchanged when det F_i < 0 (Eq. 24); 0 for a planar family. */
static pd_mat3 fit_deformation(const pd_hpd_state* s, const pd_vec3* y, uint32_t i) {
    if (s->planar[i])
        return pd_m3_zero();
    pd_mat3 F = pd_family_deformation_gradient(&s->fam, i, s->k_bond, NULL, y, s->kinv[i]);
    if (pd_m3_det(F) < 0)
        for (int c = 0; c < 3; ++c) {
            pd_real t = F.m[0][c];
            F.m[0][c] = F.m[1][c];
            F.m[1][c] = t;
        }
    return F;
}

typedef struct inv_ctx {
    pd_hpd_state* s;
    const pd_vec3* y;
} inv_ctx;

/* F_i into s->fbar and i's part of E_inv, summed per chunk. */
static void fit_kernel(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    inv_ctx* c = vctx;
    pd_hpd_state* s = c->s;
    pd_real energy = 0;
    for (uint32_t i = (uint32_t)begin; i < end; ++i) {
        pd_mat3 F = fit_deformation(s, c->y, i);
        s->fbar[i] = F;
        if (s->planar[i])
            continue;
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            pd_vec3 X = pd_family_xi(&s->fam, i, b);
            pd_vec3 r = pd_v3_sub(pd_v3_sub(c->y[s->fam.j[b]], c->y[i]), pd_m3_mulv(F, X));
            energy += 0.5 * s->inversion * s->k_bond[b] * pd_v3_len2(r);
        }
    }
    s->partial[begin / PD_HPD_GRAIN] = energy;
}

pd_real pd_hpd_inversion_energy(pd_hpd_state* s, const pd_vec3* y) {
    if (!(s->inversion > 0))
        return 0;
    inv_ctx c = {s, y};
    pd_parallel_for(s->n, PD_HPD_GRAIN, fit_kernel, &c);
    pd_real e = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        e += s->partial[k];
    return e;
}

pd_vec3 pd_hpd_inversion_gradient(const pd_hpd_state* s, const pd_vec3* y, uint32_t i) {
    pd_vec3 g = pd_v3(0, 0, 0);
    if (!(s->inversion > 0))
        return g;
    for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
        uint32_t j = s->fam.j[b], rb = s->fam.rev[b];
        pd_vec3 X = pd_family_xi(&s->fam, i, b), Y = pd_v3_sub(y[j], y[i]);
        if (!s->planar[i]) /* i's own term: d/dy_i of k/2 |Y - F_i X|^2 */
            g = pd_v3_madd(g, -s->k_bond[b], pd_v3_sub(Y, pd_m3_mulv(s->fbar[i], X)));
        if (!s->planar[j]) /* j's term of its bond to i: -Y - F_j (-X) */
            g = pd_v3_madd(g, s->k_bond[rb],
                           pd_v3_add(pd_v3_scale(Y, -1), pd_m3_mulv(s->fbar[j], X)));
    }
    return pd_v3_scale(g, s->inversion);
}
