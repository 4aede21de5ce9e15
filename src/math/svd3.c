/* Robust 3x3 decompositions: sign-fixed SVD by one-sided (Hestenes) Jacobi, polar
 * decomposition from the SVD, symmetric eigen-decomposition by cyclic two-sided Jacobi,
 * inverse and symmetric pseudo-inverse.
 *
 * The SVD never forms A^T A: it rotates the columns of C = A V until they are mutually
 * orthogonal (relative to their own lengths), so small singular values keep their relative
 * accuracy. U is then built by Gram-Schmidt on the two longest columns and closed with a
 * cross product, which makes det U = +1 by construction and lets the third singular value
 * carry the sign of det A. All work is done in double on a copy scaled to max |a_ij| = 1,
 * so huge, tiny and PD_REAL_FLOAT inputs go through the same path. */
#include "math/svd3.h"

#include <float.h>
#include <stddef.h>

/* Columns are |c_i . c_j| <= this * |c_i| |c_j| apart when the one-sided sweep stops. */
#define SVD_ORTHO_TOL     1e-15
#define JACOBI_MAX_SWEEPS 40
/* On the scaled problem (max |a_ij| = 1) a column shorter than this is treated as zero. */
#define SVD_ZERO_COLUMN 1e-150
/* pd_m3_inverse refuses |det| <= INVERSE_TINY * (max |a_ij|)^3. */
#define INVERSE_TINY 1e-14

typedef struct dvec3 {
    double e[3];
} dvec3;

static double d_dot(const double* a, const double* b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double d_norm(const double* a) {
    return sqrt(d_dot(a, a));
}

static void d_cross(const double* a, const double* b, double* out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* max |a_ij|, or NaN when an entry is NaN (fmax alone would hide it). */
static double max_abs_entry(pd_mat3 a) {
    double m = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double x = fabs((double)a.m[i][j]);
            if (isnan(x))
                return x;
            m = x > m ? x : m; /* fmax without its libm call (no NaN here) */
        }
    return m;
}

/* Rotation (c, s) with tangent t that zeroes the off-diagonal g of the symmetric 2x2
 * [[a, g], [g, b]] under J^T M J, J = [[c, s], [-s, c]]; the smaller of the two angles. */
static void jacobi_angle(double a, double b, double g, double* c, double* s, double* t) {
    double theta = (b - a) / (2.0 * g);
    double tt = 1.0 / (fabs(theta) + hypot(theta, 1.0));
    if (theta < 0)
        tt = -tt;
    *t = tt;
    *c = 1.0 / sqrt(tt * tt + 1.0);
    *s = tt * *c;
}

/* jacobi_angle with sqrt(theta^2 + 1) for hypot(theta, 1) where theta^2 cannot overflow (a
 * libm call less; the rotation is as orthogonal, c = 1 / sqrt(t^2 + 1), s = t c, its angle
 * within an ulp or two of jacobi_angle's). */
static void jacobi_angle_sqrt(double a, double b, double g, double* c, double* s, double* t) {
    double theta = (b - a) / (2.0 * g), at = fabs(theta);
    double tt = 1.0 / (at + (at < 1e150 ? sqrt(theta * theta + 1.0) : at));
    if (theta < 0)
        tt = -tt;
    *t = tt;
    *c = 1.0 / sqrt(tt * tt + 1.0);
    *s = tt * *c;
}

/* x_p <- c x_p - s x_q, x_q <- s x_p + c x_q on two 3-vectors. */
static void rotate_pair(double* xp, double* xq, double c, double s) {
    for (int k = 0; k < 3; ++k) {
        double p = xp[k], q = xq[k];
        xp[k] = c * p - s * q;
        xq[k] = s * p + c * q;
    }
}

/* One-sided Jacobi: rotates columns col[] (of C = A V) and v[] (of V) until every pair of
 * columns is orthogonal relative to its lengths. */
static void orthogonalize_columns_by(dvec3 col[3], dvec3 v[3], int sqrt_angle) {
    static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; ++sweep) {
        int rotated = 0;
        for (int k = 0; k < 3; ++k) {
            int p = pairs[k][0], q = pairs[k][1];
            double a = d_dot(col[p].e, col[p].e), b = d_dot(col[q].e, col[q].e);
            double g = d_dot(col[p].e, col[q].e);
            if (!(fabs(g) > SVD_ORTHO_TOL * sqrt(a * b)))
                continue;
            double c, s, t;
            if (sqrt_angle)
                jacobi_angle_sqrt(a, b, g, &c, &s, &t);
            else
                jacobi_angle(a, b, g, &c, &s, &t);
            rotate_pair(col[p].e, col[q].e, c, s);
            rotate_pair(v[p].e, v[q].e, c, s);
            rotated = 1;
        }
        if (!rotated)
            break;
    }
}

static void swap_columns(dvec3 col[3], dvec3 v[3], int i, int j) {
    dvec3 t = col[i];
    col[i] = col[j];
    col[j] = t;
    t = v[i];
    v[i] = v[j];
    v[j] = t;
}

/* Orders columns by decreasing length; a swap flips det V, so the last column of both C
 * and V is negated with it (C = A V stays true). */
static void sort_columns_by_length(dvec3 col[3], dvec3 v[3]) {
    double n[3] = {d_norm(col[0].e), d_norm(col[1].e), d_norm(col[2].e)};
    int flips = 0;
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < 2 - pass; ++i)
            if (n[i] < n[i + 1]) {
                double t = n[i];
                n[i] = n[i + 1];
                n[i + 1] = t;
                swap_columns(col, v, i, i + 1);
                flips++;
            }
    if (flips & 1)
        for (int k = 0; k < 3; ++k) {
            col[2].e[k] = -col[2].e[k];
            v[2].e[k] = -v[2].e[k];
        }
}

/* Some unit vector orthogonal to the unit vector u (for rank-deficient completions). */
static void any_orthogonal(const double* u, double* out) {
    int k = 0;
    if (fabs(u[1]) < fabs(u[k]))
        k = 1;
    if (fabs(u[2]) < fabs(u[k]))
        k = 2;
    double axis[3] = {0, 0, 0};
    axis[k] = 1;
    d_cross(u, axis, out);
    double n = d_norm(out);
    for (int i = 0; i < 3; ++i)
        out[i] /= n;
}

/* w <- w - (w . u) u for unit u. */
static void remove_component(double* w, const double* u) {
    double d = d_dot(w, u);
    for (int k = 0; k < 3; ++k)
        w[k] -= d * u[k];
}

/* From orthogonal, length-sorted columns c_i = s_i u_i: U's first two columns by
 * Gram-Schmidt (or any completion where a column vanishes), the third as u0 x u1 so that
 * det U = +1, and s2 = u2 . c2 signed. */
static void build_u(const dvec3 col[3], dvec3 u[3], double s[3]) {
    double n0 = d_norm(col[0].e);
    if (!(n0 > SVD_ZERO_COLUMN)) {
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k)
                u[i].e[k] = i == k ? 1.0 : 0.0;
        s[0] = s[1] = s[2] = 0;
        return;
    }
    for (int k = 0; k < 3; ++k)
        u[0].e[k] = col[0].e[k] / n0;
    s[0] = n0;

    double w[3] = {col[1].e[0], col[1].e[1], col[1].e[2]};
    remove_component(w, u[0].e);
    remove_component(w, u[0].e); /* second pass restores orthogonality lost to rounding */
    double n1 = d_norm(w);
    if (n1 > SVD_ZERO_COLUMN) {
        for (int k = 0; k < 3; ++k)
            u[1].e[k] = w[k] / n1;
        s[1] = fmin(n1, n0);
    } else {
        any_orthogonal(u[0].e, u[1].e);
        s[1] = 0;
    }
    d_cross(u[0].e, u[1].e, u[2].e);
    double n2 = d_norm(u[2].e);
    for (int k = 0; k < 3; ++k)
        u[2].e[k] /= n2;
    double s2 = d_dot(u[2].e, col[2].e);
    s[2] = fabs(s2) > s[1] ? copysign(s[1], s2) : s2;
}

static pd_mat3 columns_to_mat(const dvec3 col[3]) {
    pd_mat3 r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r.m[i][j] = (pd_real)col[j].e[i];
    return r;
}

/* The SVD from the rotation v0 (NULL: the identity, pd_svd3's start): C = A v0 is rotated on,
 * its angles by sqrt for hypot when started from v0 (as left_singular_from). */
static void svd_from(pd_mat3 a, const dvec3* v0, pd_mat3* u, pd_vec3* s, pd_mat3* v) {
    double scale = max_abs_entry(a);
    dvec3 col[3], vc[3], uc[3];
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            vc[j].e[i] = v0 ? v0[j].e[i] : i == j ? 1.0 : 0.0;
            col[j].e[i] = scale > 0 ? (double)a.m[i][j] / scale : 0.0;
        }
    if (v0 && scale > 0) /* C = (A / scale) v0 */
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 3; ++i)
                col[j].e[i] = ((double)a.m[i][0] * v0[j].e[0] + (double)a.m[i][1] * v0[j].e[1] +
                               (double)a.m[i][2] * v0[j].e[2]) /
                              scale;
    double sv[3] = {0, 0, 0};
    if (!isfinite(scale)) { /* NaN or infinite input: report it, with valid U and V */
        sv[0] = sv[1] = sv[2] = NAN;
        for (int j = 0; j < 3; ++j)
            uc[j] = vc[j];
    } else if (scale > 0) {
        orthogonalize_columns_by(col, vc, v0 != NULL);
        sort_columns_by_length(col, vc);
        build_u(col, uc, sv);
    } else {
        for (int j = 0; j < 3; ++j)
            uc[j] = vc[j];
    }
    *u = columns_to_mat(uc);
    *v = columns_to_mat(vc);
    *s = pd_v3((pd_real)(sv[0] * scale), (pd_real)(sv[1] * scale), (pd_real)(sv[2] * scale));
}

void pd_svd3(pd_mat3 a, pd_mat3* u, pd_vec3* s, pd_mat3* v) {
    svd_from(a, NULL, u, s, v);
}

void pd_svd3_near(pd_mat3 a, pd_mat3 v_near, pd_mat3* u, pd_vec3* s, pd_mat3* v) {
    dvec3 v0[3];
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i)
            v0[j].e[i] = (double)v_near.m[i][j];
    svd_from(a, v0, u, s, v);
}

/* The left singular vectors from the rotation u0 (NULL: the identity, pd_left_singular3's
 * start): the columns of A^T u0 are rotated on. */
static void left_singular_from(pd_mat3 a, const dvec3* u0, pd_mat3* u, pd_vec3* s) {
    double scale = max_abs_entry(a);
    dvec3 col[3], uc[3]; /* col: the columns of A^T U, rotated towards V diag(s) */
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            uc[j].e[i] = u0 ? u0[j].e[i] : i == j ? 1.0 : 0.0;
            col[j].e[i] = scale > 0 ? (double)a.m[j][i] / scale : 0.0;
        }
    if (u0 && scale > 0) /* A^T u0, scaled */
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 3; ++i)
                col[j].e[i] = ((double)a.m[0][i] * u0[j].e[0] + (double)a.m[1][i] * u0[j].e[1] +
                               (double)a.m[2][i] * u0[j].e[2]) /
                              scale;
    double sv[3] = {0, 0, 0};
    if (!isfinite(scale)) {
        sv[0] = sv[1] = sv[2] = NAN;
    } else if (scale > 0) {
        orthogonalize_columns_by(col, uc, u0 != NULL);
        for (int j = 0; j < 3; ++j)
            sv[j] = d_norm(col[j].e);
    }
    *u = columns_to_mat(uc);
    *s = pd_v3((pd_real)(sv[0] * scale), (pd_real)(sv[1] * scale), (pd_real)(sv[2] * scale));
}

void pd_left_singular3(pd_mat3 a, pd_mat3* u, pd_vec3* s) {
    left_singular_from(a, NULL, u, s);
}

void pd_left_singular3_near(pd_mat3 a, pd_mat3 u_near, pd_mat3* u, pd_vec3* s) {
    dvec3 u0[3];
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i)
            u0[j].e[i] = (double)u_near.m[i][j];
    left_singular_from(a, u0, u, s);
}

void pd_polar3(pd_mat3 a, pd_mat3* r, pd_mat3* s) {
    pd_mat3 u, v;
    pd_vec3 sig;
    pd_svd3(a, &u, &sig, &v);
    *r = pd_m3_mul(u, pd_m3_transpose(v));
    /* S = V diag(sig) V^T, written out so it comes out exactly symmetric. */
    pd_real d[3] = {sig.x, sig.y, sig.z};
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) {
            pd_real x = 0;
            for (int k = 0; k < 3; ++k)
                x += v.m[i][k] * d[k] * v.m[j][k];
            s->m[i][j] = s->m[j][i] = x;
        }
}

/* Cyclic two-sided Jacobi on the symmetric m (in place), accumulating rotations in q
 * (row-major, columns = eigenvectors). */
static void jacobi_symmetric(double m[3][3], double q[3][3]) {
    static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; ++sweep) {
        double off = m[0][1] * m[0][1] + m[0][2] * m[0][2] + m[1][2] * m[1][2];
        if (off == 0)
            break;
        for (int k = 0; k < 3; ++k) {
            int p = pairs[k][0], r = pairs[k][1], o = 3 - p - r;
            double g = m[p][r];
            if (g == 0)
                continue;
            /* Past the first sweeps an off-diagonal lost against both diagonals is zero. */
            if (sweep > 3 && fabs(m[p][p]) + 1e3 * fabs(g) == fabs(m[p][p]) &&
                fabs(m[r][r]) + 1e3 * fabs(g) == fabs(m[r][r])) {
                m[p][r] = m[r][p] = 0;
                continue;
            }
            double c, s, t;
            jacobi_angle(m[p][p], m[r][r], g, &c, &s, &t);
            m[p][p] -= t * g;
            m[r][r] += t * g;
            m[p][r] = m[r][p] = 0;
            double mop = m[o][p], mor = m[o][r];
            m[o][p] = m[p][o] = c * mop - s * mor;
            m[o][r] = m[r][o] = s * mop + c * mor;
            for (int i = 0; i < 3; ++i) {
                double qp = q[i][p], qr = q[i][r];
                q[i][p] = c * qp - s * qr;
                q[i][r] = s * qp + c * qr;
            }
        }
    }
}

void pd_eigen_sym3(pd_mat3 a, pd_vec3* l, pd_mat3* q) {
    double scale = max_abs_entry(a);
    double m[3][3], qd[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            /* Symmetrize so rounding-level asymmetry in the input cannot matter. */
            double x = 0.5 * ((double)a.m[i][j] + (double)a.m[j][i]);
            m[i][j] = scale > 0 ? x / scale : 0.0;
            qd[i][j] = i == j ? 1.0 : 0.0;
        }
    if (!isfinite(scale)) {
        for (int i = 0; i < 3; ++i)
            m[i][i] = NAN;
        scale = 1;
    } else if (scale > 0) {
        jacobi_symmetric(m, qd);
    }
    double ev[3] = {m[0][0], m[1][1], m[2][2]};
    int order[3] = {0, 1, 2};
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < 2 - pass; ++i)
            if (ev[order[i]] > ev[order[i + 1]]) {
                int t = order[i];
                order[i] = order[i + 1];
                order[i + 1] = t;
            }
    pd_mat3 out;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            out.m[i][j] = (pd_real)qd[i][order[j]];
    if (pd_m3_det(out) < 0)
        for (int i = 0; i < 3; ++i)
            out.m[i][2] = -out.m[i][2];
    *q = out;
    *l = pd_v3((pd_real)(ev[order[0]] * scale), (pd_real)(ev[order[1]] * scale),
               (pd_real)(ev[order[2]] * scale));
}

int pd_m3_inverse(pd_mat3 a, pd_mat3* inv) {
    double scale = max_abs_entry(a);
    if (!(scale > 0) || !isfinite(scale))
        return 0;
    double m[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            m[i][j] = (double)a.m[i][j] / scale;
    /* Cofactors of the scaled matrix: adj(m)[j][i] = cof[i][j]. */
    double cof[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            cof[i][j] = m[i1][j1] * m[i2][j2] - m[i1][j2] * m[i2][j1];
        }
    double det = m[0][0] * cof[0][0] + m[0][1] * cof[0][1] + m[0][2] * cof[0][2];
    if (!(fabs(det) > INVERSE_TINY))
        return 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            inv->m[i][j] = (pd_real)(cof[j][i] / det / scale);
    return 1;
}

pd_mat3 pd_m3_pinv_sym(pd_mat3 a, pd_real rel_tol) {
    pd_vec3 l;
    pd_mat3 q;
    pd_eigen_sym3(a, &l, &q);
    return pd_m3_pinv_sym_eigen(l, q, rel_tol);
}

pd_mat3 pd_m3_pinv_sym_eigen(pd_vec3 l, pd_mat3 q, pd_real rel_tol) {
    pd_real ev[3] = {l.x, l.y, l.z};
    pd_real cut = rel_tol * ev[2]; /* ascending: ev[2] is the largest */
    pd_mat3 r = pd_m3_zero();
    if (!(ev[2] > 0))
        return r;
    for (int k = 0; k < 3; ++k) {
        if (!(ev[k] > cut))
            continue;
        pd_real w = 1 / ev[k];
        for (int i = 0; i < 3; ++i)
            for (int j = i; j < 3; ++j)
                r.m[i][j] += w * q.m[i][k] * q.m[j][k];
    }
    for (int i = 0; i < 3; ++i) /* filled the upper triangle only: exactly symmetric */
        for (int j = 0; j < i; ++j)
            r.m[i][j] = r.m[j][i];
    return r;
}
