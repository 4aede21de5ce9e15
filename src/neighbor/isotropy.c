#include "neighbor/isotropy.h"

#include <string.h>

#define NQ PD_QUARTIC_TERMS

/* The index sets a <= b <= c <= d of the quartic monomials. */
static const unsigned char k_index[NQ][4] = {{0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 2}, {0, 0, 1, 1},
                                             {0, 0, 1, 2}, {0, 0, 2, 2}, {0, 1, 1, 1}, {0, 1, 1, 2},
                                             {0, 1, 2, 2}, {0, 2, 2, 2}, {1, 1, 1, 1}, {1, 1, 1, 2},
                                             {1, 1, 2, 2}, {1, 2, 2, 2}, {2, 2, 2, 2}};

/* Component k of the isotropic fourth-order tensor d_ab d_cd + d_ac d_bd + d_ad d_bc. */
static double isotropic_term(int k) {
    const unsigned char* i = k_index[k];
    return (double)(i[0] == i[1] && i[2] == i[3]) + (i[0] == i[2] && i[1] == i[3]) +
           (i[0] == i[3] && i[1] == i[2]);
}

/* Family i with bond weights c_b (c NULL: c_b = w_i V_j), normalised to a sum of 1. */
static void add_family(pd_moment_fit* fit, const pd_family* f, const pd_real* volume,
                       const pd_real* c, uint32_t i) {
    double total = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        total += c ? c[b] : f->w[i] * volume[f->j[b]];
    if (total <= 0)
        return;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        double cb = (c ? c[b] : f->w[i] * volume[f->j[b]]) / total, phi[NQ];
        pd_vec3 X = pd_family_xi(f, i, b);
        pd_quartic_terms(pd_v3_scale(X, 1.0 / pd_v3_len(X)), phi);
        for (int k = 0; k < NQ; ++k) {
            fit->m[k] += cb * phi[k];
            for (int l = 0; l < NQ; ++l)
                fit->K[k][l] += cb * phi[k] * phi[l];
        }
    }
    fit->families += 1;
}

void pd_moment_fit_add(pd_moment_fit* fit, const pd_family* f, const pd_real* volume, uint32_t i) {
    add_family(fit, f, volume, NULL, i);
}

void pd_moment_fit_add_weighted(pd_moment_fit* fit, const pd_family* f, const pd_real* c,
                                uint32_t i) {
    add_family(fit, f, NULL, c, i);
}

/* Cyclic Jacobi rotations: a = q diag(l) q^T for a symmetric a (overwritten). */
static void eigen_sym(double a[NQ][NQ], double l[NQ], double q[NQ][NQ]) {
    for (int i = 0; i < NQ; ++i)
        for (int j = 0; j < NQ; ++j)
            q[i][j] = i == j;
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0, diag = 0;
        for (int i = 0; i < NQ; ++i) {
            diag += a[i][i] * a[i][i];
            for (int j = i + 1; j < NQ; ++j)
                off += a[i][j] * a[i][j];
        }
        if (off <= 1e-30 * diag)
            break;
        for (int p = 0; p < NQ; ++p)
            for (int r = p + 1; r < NQ; ++r) {
                if (a[p][r] == 0)
                    continue;
                double theta = (a[r][r] - a[p][p]) / (2 * a[p][r]);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < NQ; ++k) { /* columns p, r */
                    double akp = a[k][p], akr = a[k][r];
                    a[k][p] = c * akp - s * akr;
                    a[k][r] = s * akp + c * akr;
                }
                for (int k = 0; k < NQ; ++k) { /* rows p, r */
                    double apk = a[p][k], ark = a[r][k];
                    a[p][k] = c * apk - s * ark;
                    a[r][k] = s * apk + c * ark;
                }
                for (int k = 0; k < NQ; ++k) {
                    double qkp = q[k][p], qkr = q[k][r];
                    q[k][p] = c * qkp - s * qkr;
                    q[k][r] = s * qkp + c * qkr;
                }
            }
    }
    for (int i = 0; i < NQ; ++i)
        l[i] = a[i][i];
}

pd_real pd_moment_fit_solve(const pd_moment_fit* fit, pd_direction_weight* out) {
    memset(out, 0, sizeof *out);
    if (fit->families <= 0)
        return 0;
    double K[NQ][NQ], A[NQ][NQ], q[NQ][NQ], l[NQ], rhs[NQ], m[NQ], lmax = 0;
    for (int k = 0; k < NQ; ++k) {
        m[k] = fit->m[k] / fit->families;
        rhs[k] = isotropic_term(k) / 15 - m[k]; /* trace kept: s = sum c / 15 = 1/15 */
        for (int j = 0; j < NQ; ++j)
            K[k][j] = A[k][j] = fit->K[k][j] / fit->families;
    }
    eigen_sym(A, l, q);
    for (int i = 0; i < NQ; ++i)
        lmax = fmax(lmax, l[i]);
    for (int i = 0; i < NQ; ++i) { /* pseudo-inverse: the minimum-norm least-squares beta */
        if (l[i] <= 1e-9 * lmax)
            continue;
        double proj = 0;
        for (int k = 0; k < NQ; ++k)
            proj += q[k][i] * rhs[k];
        for (int k = 0; k < NQ; ++k)
            out->beta[k] += q[k][i] * proj / l[i];
    }
    double dev = 0;
    for (int k = 0; k < NQ; ++k) {
        double mk = m[k];
        for (int j = 0; j < NQ; ++j)
            mk += K[k][j] * out->beta[j];
        dev = fmax(dev, fabs(mk - isotropic_term(k) / 15));
    }
    return dev;
}

void pd_quartic_add(pd_real m[NQ], pd_real c, pd_vec3 n) {
    double phi[NQ];
    pd_quartic_terms(n, phi);
    pd_quartic_add_terms(m, c, phi);
}

pd_real pd_quartic_at(const pd_real m[NQ], pd_vec3 u) {
    double phi[NQ];
    pd_quartic_terms(u, phi);
    return pd_quartic_at_terms(m, phi);
}

pd_real pd_direction_weight_at(const pd_direction_weight* dw, pd_vec3 n) {
    double phi[NQ];
    pd_quartic_terms(n, phi);
    return pd_direction_weight_terms(dw, phi);
}
