/* Isotropic hyperelastic energies, stresses and their derivatives (energies.h). */
#include "constitutive/energies.h"

#include <math.h>

#include "math/svd3.h"

static pd_real ddot(pd_mat3 a, pd_mat3 b) {
    pd_real s = 0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            s += a.m[r][c] * b.m[r][c];
    return s;
}

/* cof(F) = J F^-T, also for singular F. */
static pd_mat3 cofactor(pd_mat3 f) {
    pd_mat3 c;
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) {
            int r1 = (r + 1) % 3, r2 = (r + 2) % 3, k1 = (k + 1) % 3, k2 = (k + 2) % 3;
            c.m[r][k] = f.m[r1][k1] * f.m[r2][k2] - f.m[r1][k2] * f.m[r2][k1];
        }
    return c;
}

static pd_mat3 add_identity(pd_mat3 a, pd_real s) {
    for (int k = 0; k < 3; ++k)
        a.m[k][k] += s;
    return a;
}

/* ---- linear */

static pd_mat3 small_strain(pd_mat3 F) {
    return add_identity(pd_m3_scale(pd_m3_add(F, pd_m3_transpose(F)), 0.5), -1);
}

pd_real pd_linear_energy(pd_real lambda, pd_real mu, pd_mat3 F) {
    pd_mat3 e = small_strain(F);
    pd_real tr = pd_m3_trace(e);
    return mu * pd_m3_frob2(e) + 0.5 * lambda * tr * tr;
}

pd_mat3 pd_linear_piola(pd_real lambda, pd_real mu, pd_mat3 F) {
    pd_mat3 e = small_strain(F);
    return add_identity(pd_m3_scale(e, 2 * mu), lambda * pd_m3_trace(e));
}

pd_mat3 pd_linear_piola_differential(pd_real lambda, pd_real mu, pd_mat3 dF) {
    return add_identity(pd_m3_scale(pd_m3_add(dF, pd_m3_transpose(dF)), mu),
                        lambda * pd_m3_trace(dF));
}

/* ---- StVK */

static pd_mat3 green_strain(pd_mat3 F) {
    return add_identity(pd_m3_scale(pd_m3_mul(pd_m3_transpose(F), F), 0.5), -0.5);
}

pd_real pd_stvk_energy(pd_real lambda, pd_real mu, pd_mat3 F) {
    pd_mat3 E = green_strain(F);
    pd_real tr = pd_m3_trace(E);
    return mu * pd_m3_frob2(E) + 0.5 * lambda * tr * tr;
}

/* The second Piola-Kirchhoff stress S = 2 mu E + lambda tr(E) I. */
static pd_mat3 stvk_second(pd_real lambda, pd_real mu, pd_mat3 E) {
    return add_identity(pd_m3_scale(E, 2 * mu), lambda * pd_m3_trace(E));
}

pd_mat3 pd_stvk_piola(pd_real lambda, pd_real mu, pd_mat3 F) {
    return pd_m3_mul(F, stvk_second(lambda, mu, green_strain(F)));
}

/* dP = dF S + F dS, dS = 2 mu dE + lambda tr(dE) I, dE = (dF^T F + F^T dF) / 2. */
pd_mat3 pd_stvk_piola_differential(pd_real lambda, pd_real mu, pd_mat3 F, pd_mat3 dF) {
    pd_mat3 ftdf = pd_m3_mul(pd_m3_transpose(F), dF);
    pd_mat3 dE = pd_m3_scale(pd_m3_add(ftdf, pd_m3_transpose(ftdf)), 0.5);
    pd_mat3 S = stvk_second(lambda, mu, green_strain(F));
    return pd_m3_add(pd_m3_mul(dF, S), pd_m3_mul(F, stvk_second(lambda, mu, dE)));
}

/* ---- fixed corotated */

pd_real pd_fixed_corotated_energy(pd_real lambda, pd_real mu, pd_mat3 F) {
    pd_mat3 U, V;
    pd_vec3 s;
    pd_svd3(F, &U, &s, &V);
    pd_real J = s.x * s.y * s.z, a = s.x - 1, b = s.y - 1, c = s.z - 1; /* ||F - R|| = ||s - 1|| */
    return mu * (a * a + b * b + c * c) + 0.5 * lambda * (J - 1) * (J - 1);
}

pd_mat3 pd_fixed_corotated_piola(pd_real lambda, pd_real mu, pd_mat3 F) {
    pd_mat3 U, V;
    pd_vec3 s;
    pd_svd3(F, &U, &s, &V);
    pd_mat3 R = pd_m3_mul(U, pd_m3_transpose(V));
    pd_real J = s.x * s.y * s.z;
    return pd_m3_add(pd_m3_scale(pd_m3_sub(F, R), 2 * mu),
                     pd_m3_scale(cofactor(F), lambda * (J - 1)));
}

/* dP = 2 mu (dF - dR) + lambda (cof F : dF) cof F + lambda (J - 1) d cof F, where cof is
 * quadratic in F: d cof F = (cof(F + dF) - cof(F - dF)) / 2 exactly. */
pd_mat3 pd_fixed_corotated_piola_differential(pd_real lambda, pd_real mu, pd_mat3 F, pd_mat3 dF) {
    pd_mat3 U, V;
    pd_vec3 s;
    pd_svd3(F, &U, &s, &V);
    pd_real sv[3] = {s.x, s.y, s.z}, J = s.x * s.y * s.z;
    pd_mat3 M = pd_m3_mul(pd_m3_mul(pd_m3_transpose(U), dF), V), W = pd_m3_zero();
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            if (a != b)
                W.m[a][b] = (M.m[a][b] - M.m[b][a]) / (sv[a] + sv[b]);
    pd_mat3 dR = pd_m3_mul(pd_m3_mul(U, W), pd_m3_transpose(V));
    pd_mat3 cof = cofactor(F);
    pd_mat3 dcof =
        pd_m3_scale(pd_m3_sub(cofactor(pd_m3_add(F, dF)), cofactor(pd_m3_sub(F, dF))), 0.5);
    pd_mat3 out = pd_m3_scale(pd_m3_sub(dF, dR), 2 * mu);
    out = pd_m3_add(out, pd_m3_scale(cof, lambda * ddot(cof, dF)));
    return pd_m3_add(out, pd_m3_scale(dcof, lambda * (J - 1)));
}

/* ---- StVK with Hencky strain (principal) */

pd_real pd_hencky_energy(pd_real lambda, pd_real mu, pd_vec3 s) {
    pd_real a = log(s.x), b = log(s.y), c = log(s.z), tr = a + b + c;
    return mu * (a * a + b * b + c * c) + 0.5 * lambda * tr * tr;
}

pd_vec3 pd_hencky_kirchhoff(pd_real lambda, pd_real mu, pd_vec3 s) { /* Fang 2019 Eq. 6 */
    pd_real a = log(s.x), b = log(s.y), c = log(s.z), v = lambda * (a + b + c);
    return pd_v3(2 * mu * a + v, 2 * mu * b + v, 2 * mu * c + v);
}

pd_real pd_hencky_energy_kirchhoff(pd_real lambda, pd_real mu, pd_vec3 s, pd_vec3* tau) {
    pd_real a = log(s.x), b = log(s.y), c = log(s.z), tr = a + b + c, v = lambda * tr;
    *tau = pd_v3(2 * mu * a + v, 2 * mu * b + v, 2 * mu * c + v);
    return mu * (a * a + b * b + c * c) + 0.5 * lambda * tr * tr;
}

pd_mat3 pd_hencky_kirchhoff_derivative(pd_real lambda, pd_real mu, pd_vec3 s) {
    pd_real inv[3] = {1 / s.x, 1 / s.y, 1 / s.z};
    pd_mat3 d;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            d.m[a][b] = ((a == b ? 2 * mu : 0) + lambda) * inv[b];
    return d;
}

/* ---- neo-Hookean (principal) */

pd_real pd_neo_hookean_energy(pd_real mu, pd_real kappa, pd_vec3 s) {
    pd_real J = s.x * s.y * s.z, b = s.x * s.x + s.y * s.y + s.z * s.z;
    return 0.5 * mu * (pow(J, -2.0 / 3.0) * b - 3) + 0.25 * kappa * (J * J - 1 - 2 * log(J));
}

/* Wang et al. 2025 Eq. 15, as sbpd's return mapping has always computed it (|J|: an inverted
 * trial reaches it before the mapping sends it to the apex). */
pd_vec3 pd_neo_hookean_kirchhoff(pd_real mu, pd_real kappa, pd_vec3 s) {
    pd_real J = s.x * s.y * s.z, b0 = s.x * s.x, b1 = s.y * s.y, b2 = s.z * s.z;
    pd_real m = mu * pow(fabs(J), -2 / 3.0), tr = (b0 + b1 + b2) / 3.0;
    pd_real vol = 0.5 * kappa * (J * J - 1);
    return pd_v3(m * (b0 - tr) + vol, m * (b1 - tr) + vol, m * (b2 - tr) + vol);
}

/* tau_a = m (s_a^2 - B / 3) + kappa / 2 (J^2 - 1), m = mu J^(-2/3), B = sum s^2:
 * d tau_a / d s_b = -2/3 m (s_a^2 - B / 3) / s_b + m (2 s_a [a = b] - 2 s_b / 3)
 * + kappa J^2 / s_b. */
pd_mat3 pd_neo_hookean_kirchhoff_derivative(pd_real mu, pd_real kappa, pd_vec3 s) {
    pd_real sv[3] = {s.x, s.y, s.z}, J = s.x * s.y * s.z;
    pd_real m = mu * pow(J, -2.0 / 3.0), B = s.x * s.x + s.y * s.y + s.z * s.z;
    pd_mat3 d;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            pd_real dev = sv[a] * sv[a] - B / 3;
            d.m[a][b] = -2.0 / 3.0 * m * dev / sv[b] +
                        m * ((a == b ? 2 * sv[a] : 0) - 2 * sv[b] / 3) + kappa * J * J / sv[b];
        }
    return d;
}

/* ---- fixed corotated (principal) */

pd_real pd_fixed_corotated_principal_energy(pd_real lambda, pd_real mu, pd_vec3 s) {
    pd_real J = s.x * s.y * s.z, a = s.x - 1, b = s.y - 1, c = s.z - 1;
    return mu * (a * a + b * b + c * c) + 0.5 * lambda * (J - 1) * (J - 1);
}

pd_vec3 pd_fixed_corotated_kirchhoff(pd_real lambda, pd_real mu, pd_vec3 s) {
    pd_real J = s.x * s.y * s.z, vol = lambda * (J - 1) * J;
    return pd_v3(2 * mu * (s.x - 1) * s.x + vol, 2 * mu * (s.y - 1) * s.y + vol,
                 2 * mu * (s.z - 1) * s.z + vol);
}

pd_mat3 pd_fixed_corotated_kirchhoff_derivative(pd_real lambda, pd_real mu, pd_vec3 s) {
    pd_real sv[3] = {s.x, s.y, s.z}, J = s.x * s.y * s.z;
    pd_mat3 d;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            d.m[a][b] = (a == b ? 2 * mu * (2 * sv[a] - 1) : 0) + lambda * (2 * J - 1) * J / sv[b];
    return d;
}

pd_mat3 pd_principal_piola(pd_mat3 U, pd_vec3 s, pd_mat3 V, pd_vec3 tau) {
    pd_mat3 d = pd_m3_diag(tau.x / s.x, tau.y / s.y, tau.z / s.z);
    return pd_m3_mul(pd_m3_mul(U, d), pd_m3_transpose(V));
}

void pd_principal_gradient_hessian(pd_vec3 s, pd_vec3 tau, pd_mat3 dtau, pd_vec3* g, pd_mat3* h) {
    pd_real sv[3] = {s.x, s.y, s.z}, tv[3] = {tau.x, tau.y, tau.z};
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            h->m[a][b] = dtau.m[a][b] / sv[a] - (a == b) * tv[a] / (sv[a] * sv[a]);
    *g = pd_v3(tv[0] / sv[0], tv[1] / sv[1], tv[2] / sv[2]);
}

/* h with its negative eigenvalues set to 0. */
static pd_mat3 definite_part(pd_mat3 h) {
    pd_vec3 l;
    pd_mat3 q;
    pd_eigen_sym3(h, &l, &q);
    return pd_m3_mul(pd_m3_mul(q, pd_m3_diag(fmax(l.x, 0), fmax(l.y, 0), fmax(l.z, 0))),
                     pd_m3_transpose(q));
}

/* Where two stretches meet, (g_a - g_b) / (s_a - s_b) loses its digits to cancellation; its
 * limit h_aa - h_ab is taken below this relative gap. */
#define PAIR_GAP 1e-6

pd_mat3 pd_principal_piola_differential(pd_mat3 U, pd_vec3 s, pd_mat3 V, pd_vec3 g, pd_mat3 h,
                                        pd_mat3 dF, int definite) {
    pd_real sv[3] = {s.x, s.y, s.z}, gv[3] = {g.x, g.y, g.z};
    pd_mat3 hd = definite ? definite_part(h) : h;
    pd_mat3 d = pd_m3_mul(pd_m3_mul(pd_m3_transpose(U), dF), V), out = pd_m3_zero();
    for (int a = 0; a < 3; ++a)
        out.m[a][a] = hd.m[a][0] * d.m[0][0] + hd.m[a][1] * d.m[1][1] + hd.m[a][2] * d.m[2][2];
    for (int a = 0; a < 3; ++a)
        for (int b = a + 1; b < 3; ++b) {
            pd_real gap = sv[a] - sv[b];
            pd_real anti = (gv[a] + gv[b]) / (sv[a] + sv[b]); /* rotations: 0 at rest */
            pd_real sym = fabs(gap) > PAIR_GAP * (fabs(sv[a]) + fabs(sv[b]))
                              ? (gv[a] - gv[b]) / gap
                              : h.m[a][a] - h.m[a][b];
            if (definite)
                sym = fmax(sym, 0), anti = fmax(anti, 0);
            pd_real ds = 0.5 * (d.m[a][b] + d.m[b][a]), da = 0.5 * (d.m[a][b] - d.m[b][a]);
            out.m[a][b] = sym * ds + anti * da;
            out.m[b][a] = sym * ds - anti * da;
        }
    return pd_m3_mul(pd_m3_mul(U, out), pd_m3_transpose(V));
}
