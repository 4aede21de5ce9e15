/* Direction weights that make the fourth moment of sampled families isotropic.
 *
 * A bond-stretch energy sum_j c_j (n_j . e n_j)^2 (c_j = w V_j) has the stiffness tensor
 * C = 2 k M with M = sum_j c_j n n n n, the family's fourth moment ("fabric" tensor of a
 * central-force lattice: Ostoja-Starzewski 2002, Lattice models in micromechanics, Appl. Mech.
 * Rev. 55(1), Sec. 2). An isotropic solid needs M = s (d_ab d_cd + d_ac d_bd + d_ad d_bc); a
 * cubic lattice has M_xxxx > 3 M_xxyy (stiffer along its axes). We give each bond the factor
 * f(n) = 1 + beta . phi(n), phi the 15 quartic monomials n_a n_b n_c n_d (a <= b <= c <= d),
 * with beta the smallest change of the bond weights, min sum_j c_j (f_j - 1)^2, that makes M
 * isotropic with its trace kept (s = sum c / 15): by Lagrange multipliers f - 1 is a quartic
 * in n, and beta solves K beta = s iso - m, K = sum c phi phi^T, m = sum c phi (minimum norm
 * solution: K is singular when the family has fewer than 15 bond directions, as a cubic
 * lattice's 13). Fitted once on the interior families of a material, f is then a function of
 * direction applied to every bond of it, surface bonds included. */
#ifndef PD_ISOTROPY_H
#define PD_ISOTROPY_H

#include "neighbor/family.h"

#define PD_QUARTIC_TERMS 15

/* Sums over the families added so far, each normalised to sum_j c_j = 1. */
typedef struct pd_moment_fit {
    double K[PD_QUARTIC_TERMS][PD_QUARTIC_TERMS];
    double m[PD_QUARTIC_TERMS];
    double families;
} pd_moment_fit;

/* f(n) = 1 + beta . phi(n); beta = 0 is no correction. */
typedef struct pd_direction_weight {
    pd_real beta[PD_QUARTIC_TERMS];
} pd_direction_weight;

/* Adds family i (bond weights c_j = w_j V_j) to the fit. */
void pd_moment_fit_add(pd_moment_fit* fit, const pd_family* f, const pd_real* volume, uint32_t i);
/* The same with a weight per bond, c[b] for i's bond b (a weight that varies along the bond,
 * such as a kernel, times V_j). */
void pd_moment_fit_add_weighted(pd_moment_fit* fit, const pd_family* f, const pd_real* c,
                                uint32_t i);

/* The weights of the fit (beta = 0 when no family was added); returns the largest deviation
 * of a component of the corrected mean moment from the isotropic one (~1e-16 when exact). */
pd_real pd_moment_fit_solve(const pd_moment_fit* fit, pd_direction_weight* out);

/* The fourth moment of bonds as a quartic form: pd_quartic_add adds a bond of weight c and
 * unit direction n to m (15 coefficients, zero to start); pd_quartic_at gives
 * S(u) = sum c (n . u)^4, the stiffness of those bonds under a uniform stretch along u. */
void pd_quartic_add(pd_real m[PD_QUARTIC_TERMS], pd_real c, pd_vec3 n);
pd_real pd_quartic_at(const pd_real m[PD_QUARTIC_TERMS], pd_vec3 u);

/* f(n) for a unit vector n. */
pd_real pd_direction_weight_at(const pd_direction_weight* dw, pd_vec3 n);

/* The three above from n's 15 quartic monomials (pd_quartic_terms), the same arithmetic: one
 * evaluation of a bond's monomials serves its weight f(n) and its share of a quartic sum.
 * Inline: the rebuild of a plastic body runs them for every bond after every correction. */

/* phi_k(n) = n_a n_b n_c n_d for the index sets a <= b <= c <= d in lexicographic order:
 * xxxx xxxy xxxz xxyy xxyz xxzz xyyy xyyz xyzz xzzz yyyy yyyz yyzz yzzz zzzz, multiplied in
 * that order. */
/* The same, term k into phi[k * stride]: a block of bonds as lanes, term by term. */
static inline void pd_quartic_terms_strided(pd_vec3 n, pd_real* phi, size_t stride) {
    const pd_real x = n.x, y = n.y, z = n.z, x2 = x * x, xy = x * y, xz = x * z, y2 = y * y;
    const pd_real x3 = x2 * x, x2y = x2 * y, xy2 = xy * y, y3 = y2 * y, yz = y * z;
    phi[0 * stride] = x3 * x;
    phi[1 * stride] = x3 * y;
    phi[2 * stride] = x3 * z;
    phi[3 * stride] = x2y * y;
    phi[4 * stride] = x2y * z;
    phi[5 * stride] = (x2 * z) * z;
    phi[6 * stride] = xy2 * y;
    phi[7 * stride] = xy2 * z;
    phi[8 * stride] = (xy * z) * z;
    phi[9 * stride] = (xz * z) * z;
    phi[10 * stride] = y3 * y;
    phi[11 * stride] = y3 * z;
    phi[12 * stride] = (y2 * z) * z;
    phi[13 * stride] = (yz * z) * z;
    phi[14 * stride] = ((z * z) * z) * z;
}

static inline void pd_quartic_terms(pd_vec3 n, pd_real phi[PD_QUARTIC_TERMS]) {
    pd_quartic_terms_strided(n, phi, 1);
}

/* Number of distinct orderings of index set k (4! / the factorials of its repeated indices):
 * (n.u)^4 = sum_k count_k phi_k(n) phi_k(u). */
static const pd_real pd_quartic_orderings[PD_QUARTIC_TERMS] = {1,  4, 4, 6, 12, 6, 4, 12,
                                                               12, 4, 1, 4, 6,  4, 1};

static inline void pd_quartic_add_terms(pd_real m[PD_QUARTIC_TERMS], pd_real c,
                                        const pd_real phi[PD_QUARTIC_TERMS]) {
    for (int k = 0; k < PD_QUARTIC_TERMS; ++k)
        m[k] += c * pd_quartic_orderings[k] * phi[k];
}

static inline pd_real pd_quartic_at_terms(const pd_real m[PD_QUARTIC_TERMS],
                                          const pd_real phi[PD_QUARTIC_TERMS]) {
    pd_real s = 0;
    for (int k = 0; k < PD_QUARTIC_TERMS; ++k)
        s += m[k] * phi[k];
    return s;
}

static inline pd_real pd_direction_weight_terms(const pd_direction_weight* dw,
                                                const pd_real phi[PD_QUARTIC_TERMS]) {
    pd_real f = 1;
    for (int k = 0; k < PD_QUARTIC_TERMS; ++k)
        f += dw->beta[k] * phi[k];
    return f;
}

#endif
