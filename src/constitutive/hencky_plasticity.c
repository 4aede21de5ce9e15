/* Plastic returns on the Hencky strain (hencky_plasticity.h). */
#include "constitutive/hencky_plasticity.h"

#include <math.h>

pd_real pd_mu_i_friction(pd_real mu_s, const pd_mu_i* r, pd_real inertial, pd_real* dmu) {
    pd_real den = r->i0 + inertial;
    if (dmu)
        *dmu = r->span * r->i0 / (den * den);
    return mu_s + r->span * inertial / den;
}

/* The returned deviator's norm r (of dev eps) on the cone at tr(eps) = tr from a trial's norm n
 * (> r), with dr/dn and dr/dtr. Klar's cone: r = (a + b I1) / (sqrt 2 mu), I1 = -3 K tr, so
 * dr/dn = 0 and dr/dtr = -3 K b / (sqrt 2 mu). With mu(I) (pd_mu_i), where p = -K tr > 0: the
 * plastic decrement Delta = n - r of the deviator's norm over dt is the plastic shear rate
 * gamma_dot = sqrt 2 Delta / dt, so I = k Delta with k = sqrt 2 d sqrt(rho_s / p) / dt, and the
 * stress on the cone sqrt(J2) = sqrt 2 mu r = a + mu(I) p reads, with B = sqrt 2 mu, A = B n - a -
 * mu_s p (the static cone's excess, > 0 when yielding) and S = (mu_2 - mu_s) p,
 *   f(Delta) = A - B Delta - S k Delta / (I_0 + k Delta) = 0,
 * strictly decreasing from A > 0 at 0 to below 0 at A / B: one root, of the quadratic
 *   B k Delta^2 - c Delta - A I_0 = 0, c = A k - B I_0 - S k,
 * Delta = (c + sqrt(c^2 + 4 B k A I_0)) / (2 B k), written without cancellation for c < 0. Its
 * derivatives by the implicit function: f_Delta = -(B + mu' k p), f_n = B, f_tr = K (mu - mu' I /
 * 2) (k goes as p^-1/2). As k -> 0 (long steps, fine grains) Delta -> A / B, Klar's return. */
static void cone_radius(const pd_hencky_yield* y, pd_real tr, pd_real n, pd_real* r, pd_real* dr_dn,
                        pd_real* dr_dtr) {
    pd_real bm = sqrt(2.0) * y->mu, k3b = 3 * y->kappa * y->cone.b, p = -y->kappa * tr;
    const pd_mu_i* rate = &y->rate;
    if (!(rate->span > 0 && rate->dt > 0 && y->cone.b > 0 && p > 0)) {
        *r = (y->cone.a - k3b * tr) / bm, *dr_dn = 0, *dr_dtr = -k3b / bm;
        return;
    }
    pd_real mu_s = 3 * y->cone.b, a = bm * n - y->cone.a - mu_s * p;
    pd_real k = sqrt(2.0) * rate->d_root_rho / (rate->dt * sqrt(p)), sp = rate->span * p;
    pd_real c = a * k - bm * rate->i0 - sp * k;
    pd_real disc = sqrt(c * c + 4 * bm * k * a * rate->i0);
    pd_real delta = c >= 0 ? (c + disc) / (2 * bm * k) : 2 * a * rate->i0 / (disc - c);
    pd_real dmu, inertial = k * delta, mu = pd_mu_i_friction(mu_s, rate, inertial, &dmu);
    pd_real den = bm + dmu * k * p;
    *r = n - delta;
    *dr_dn = dmu * k * p / den;
    *dr_dtr = -y->kappa * (mu - 0.5 * dmu * inertial) / den;
}

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
    /* onto the cone: dev eps scaled by c = r / |dev eps| (Klar's r = limit / (sqrt 2 mu), or
     * mu(I)'s), tr eps kept */
    pd_real r, dr_dn, dr_dtr;
    cone_radius(y, tr, norm, &r, &dr_dn, &dr_dtr);
    pd_real c = r / norm, out[3];
    for (int a = 0; a < 3; ++a)
        out[a] = exp(tr / 3 + c * dev[a]);
    *s = pd_v3(out[0], out[1], out[2]);
    if (dz) {
        pd_real sv[3] = {s_tr.x, s_tr.y, s_tr.z};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                /* d eps'_i / d eps_j = 1/3 + c ([i = j] - 1/3) + dev_i dc/d eps_j, with
                 * dc / d eps_j = (dr/dn dev_j / |dev| + dr/dtr) / |dev| - c dev_j / |dev|^2
                 * (Klar's cone: dr/dn = 0, dr/dtr = -3 K b / (sqrt 2 mu)) */
                pd_real dc = (dr_dn * dev[j] / norm + dr_dtr) / norm - c * dev[j] / (norm * norm);
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
