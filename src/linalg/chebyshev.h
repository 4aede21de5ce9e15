/* Jacobi sweeps with Chebyshev acceleration (Wang 2015, A Chebyshev semi-iterative approach
 * for accelerating projective and position-based dynamics, Eq. 13 with Golub & Varga's
 * weights) on a pd_sym_csr system A z = b, from z = 0. From zero, the result is a fixed
 * polynomial in A applied to b, symmetric positive definite when rho bounds the spectrum of
 * the Jacobi iteration: usable as a preconditioner of a descent (optim/descent.h). Fixed
 * points stay at zero; a point with a blocked unit normal n moves only in its plane, one with
 * a line only along it (both: not at all, when they are the same vector). */
#ifndef PD_CHEBYSHEV_H
#define PD_CHEBYSHEV_H

#include "linalg/sym_csr.h"

typedef struct pd_chebyshev_def {
    int sweeps;              /* 1: one plain Jacobi sweep */
    pd_real rho;             /* bound of the Jacobi iteration's spectral radius (< 1) */
    const uint8_t* fixed;    /* nonzero: the point does not move (may be NULL) */
    const pd_vec3* blocked;  /* unit normal the point may not move along, or 0 (may be NULL) */
    const pd_vec3* blocked2; /* a second one, orthogonal to blocked (may be NULL) */
    /* unit vector the point may move along only, or 0 (may be NULL): a contact that sticks;
     * applied before `blocked` */
    const pd_vec3* line;
    pd_vec3 *scratch_a, *scratch_b; /* n points each */
    /* Couplings added to A for this solve (contact pairs: a spring Laplacian), their diagonal
     * sums in extra_diag; both NULL: A alone. rho must bound the sum's Jacobi spectrum. */
    const pd_sym_csr* extra;
    const pd_real* extra_diag;
    /* A stiffness added to a point's diagonal in its tangent plane only, k (I - n n^T) (a
     * contact's friction), with the unit normal n; both NULL: none. Adding a positive
     * semi-definite block to the diagonal keeps rho a bound. */
    const pd_real* tangent_k;
    const pd_vec3* tangent_n;
    /* nonzero where blocked, blocked2, line or tangent_k may be set (may be NULL: anywhere);
     * the sweeps read those arrays at these points only (most points of a scene touch
     * nothing, and the arrays are 100 bytes a point) */
    const uint8_t* active;
} pd_chebyshev_def;

/* z = P b after def->sweeps sweeps. Parallel; the same bits on any thread count. */
void pd_chebyshev_jacobi(const pd_sym_csr* a, const pd_chebyshev_def* def, const pd_vec3* b,
                         pd_vec3* z);

/* Gershgorin bound of the Jacobi iteration's spectral radius: max_i sum_k weight / diag over
 * the points that move. */
pd_real pd_jacobi_bound(const pd_sym_csr* a, const uint8_t* fixed);

#endif
