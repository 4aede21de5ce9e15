/* Robust 3x3 decompositions. */
#ifndef PD_SVD3_H
#define PD_SVD3_H

#include "peridot/math.h"

/* A = U diag(s) V^T with U, V proper rotations (det +1) and s sorted by decreasing
 * magnitude, s0 >= s1 >= |s2|; s2 < 0 exactly when det A < 0 (sign-fixed for inverted
 * matrices). Correct for singular, rank-deficient and zero matrices. */
void pd_svd3(pd_mat3 a, pd_mat3* u, pd_vec3* s, pd_mat3* v);

/* pd_svd3 with its Jacobi rotations started from the rotation v_near (det +1) instead of the
 * identity: the same decomposition to the sweep's tolerance, in fewer sweeps when v_near is
 * close to A's V (the V of a nearby matrix: an iteration's last). Its angles take sqrt(theta^2
 * + 1) for hypot, as pd_left_singular3_near's. */
void pd_svd3_near(pd_mat3 a, pd_mat3 v_near, pd_mat3* u, pd_vec3* s, pd_mat3* v);

/* A = U diag(s) V^T's U and s >= 0 alone, without V: one-sided Jacobi on the columns of A^T
 * (A^T U = V diag(s)), so small singular values keep their relative accuracy as in pd_svd3. The
 * s are unsorted and U is orthogonal but not always proper (det -1 possible), which is all an
 * isotropic function of A A^T needs (a Kirchhoff stress U diag(tau(s)) U^T). NaN s for a
 * non-finite A. About half pd_svd3's work. */
void pd_left_singular3(pd_mat3 a, pd_mat3* u, pd_vec3* s);
/* pd_left_singular3 with its rotations started from the orthogonal u_near instead of the
 * identity: the same U and s to the sweep's tolerance, in fewer sweeps when u_near is close to
 * A's U (a nearby matrix's: an iteration's last). Its angles take sqrt(theta^2 + 1) for
 * hypot (cheaper; the same to an ulp or two), so from the identity it is not pd_left_singular3's
 * bits. */
void pd_left_singular3_near(pd_mat3 a, pd_mat3 u_near, pd_mat3* u, pd_vec3* s);

/* Q diag(l) Q^T, exactly symmetric (its upper triangle mirrored). */
static inline pd_mat3 pd_m3_from_eigen(pd_mat3 q, pd_vec3 l) {
    pd_real d[3] = {l.x, l.y, l.z};
    pd_mat3 r;
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j)
            r.m[i][j] = r.m[j][i] = q.m[i][0] * d[0] * q.m[j][0] + q.m[i][1] * d[1] * q.m[j][1] +
                                    q.m[i][2] * d[2] * q.m[j][2];
    return r;
}

/* U diag(s) V^T: a matrix from its singular vectors and values (a return mapping's result). */
static inline pd_mat3 pd_m3_from_svd(pd_mat3 u, pd_vec3 s, pd_mat3 v) {
    return pd_m3_mul(pd_m3_mul(u, pd_m3_diag(s.x, s.y, s.z)), pd_m3_transpose(v));
}

/* A = R S with R a proper rotation and S symmetric (S is indefinite when det A < 0). */
void pd_polar3(pd_mat3 a, pd_mat3* r, pd_mat3* s);

/* Symmetric A = Q diag(l) Q^T, l ascending, Q's columns the eigenvectors (det Q = +1). */
void pd_eigen_sym3(pd_mat3 a, pd_vec3* l, pd_mat3* q);

/* Inverse; returns 0 (and leaves *inv unchanged) when |det| <= tiny * scale^3. */
int pd_m3_inverse(pd_mat3 a, pd_mat3* inv);

/* Pseudo-inverse of a symmetric positive semi-definite A: eigenvalues below
 * rel_tol * max eigenvalue are treated as zero (planar / linear neighbourhoods). */
pd_mat3 pd_m3_pinv_sym(pd_mat3 a, pd_real rel_tol);
/* The same from A's eigen-decomposition (pd_eigen_sym3's l and q), for a caller that needs
 * the eigenvalues too. */
pd_mat3 pd_m3_pinv_sym_eigen(pd_vec3 l, pd_mat3 q, pd_real rel_tol);

#endif
