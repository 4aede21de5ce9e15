/* hyperelastic_pd's surface correction (solver.surface_correction; beyond the paper): per
 * particle, factors of the bond directions computed at set-up so that a homogeneous deformation
 * gives the bulk's energy density in a family cut by a free surface. After the corrections
 * reviewed by Le & Bobaru 2018 (Surface corrections for peridynamic models in elasticity and
 * fracture, Comput. Mech. 61, 499-518), in the form of the position-aware linear solid
 * (Mitchell, Silling & Littlewood 2015, J. Mech. Mater. Struct. 10(5), 539-557): the least
 * change of a point's influence function under which its moments are the bulk's.
 *
 * Under a small strain e, with g''(1) = h''(1) = 2 (every A_n, B_n), W_i of Eq. 12 is
 * lambda (e : D_i)^2 + mu e : M_i : e with D_i = sum_j c_j q_j n n^T (theta_i - 1 of Eq. 14)
 * and M_i = sum_j c_j G_j n n n n (n = xi / |xi|, c_j = w_ij V_j, sum_j c_j = 1 by Eq. 19). In
 * the bulk D = I / 3 and, with the lattice's direction factor, M = (d d + d d + d d) / 15, which
 * the consistent Lame mapping assumes. A family cut by a surface keeps its sum of 1 but not
 * these moments: the bonds across the surface are missing, so the rest weigh more along it
 * and a surface layer is stiffer along the surface (the cantilever's beam: 1.25 times linear
 * elasticity's energy under the uniaxial stress of a bending fibre at nu 0.25, 1.63 at 0.45,
 * tests/physics/hyperelastic_pd_surface.c). Each cut family gets
 *  - q_j = 1 + alpha_i . psi(n) (psi the 6 quadratic monomials), the least sum_j c_j (q - 1)^2
 *    with D_i = I / 3, on its bonds' shares of theta_i (bond_q), and
 *  - f_i(n) = 1 + beta_i . phi(n) (phi the 15 quartic monomials), the least sum_j c_j G_j
 *    (f - 1)^2 with M_i the bulk's (neighbor/isotropy.h's fit on one family, to the bulk's
 *    absolute moment), multiplied into G (bond_g).
 * The energy sums each particle's own family, so the factors need not be symmetric in i and
 * j: i's bond carries i's. Both are bounded to [1/4, 4] (a corner's family may have too few
 * directions for an exact fit) and q is scaled back to sum_j c_j q_j = 1, so that theta_i = 1
 * at rest. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "math/svd3.h"
#include "neighbor/isotropy.h"
#include "parallel/parallel.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"
#include "world/world.h"

/* Bounds of the factors: no bond turns soft or rigid where the fit is not exact. */
#define HPD_SURFACE_MIN 0.25
#define HPD_SURFACE_MAX 4.0

typedef struct surface_job {
    pd_hpd_state* s;
    const pd_particles* p;
    const pd_real* fullest; /* per body: the largest family volume */
} surface_job;

/* c_b = w_ij V_j G_ij of i's bond b: the bond term's weight (G: the lattice's factor so far). */
static pd_real bond_weight(const pd_hpd_state* s, uint32_t i, uint32_t b, pd_vec3* n) {
    pd_vec3 X = pd_family_xi(&s->fam, i, b);
    pd_real len = pd_v3_len(X);
    *n = pd_v3_scale(X, 1 / len);
    return pd_hpd_bond_weight(s, i, len) * s->volume[s->fam.j[b]] * s->bond_g[b];
}

/* A family spanning no volume (a cloth, a rod): its second moment's smallest eigenvalue below
 * 1e-6 of its largest. No volumetric moment can be made of it. */
static int planar_family(const pd_hpd_state* s, uint32_t i) {
    pd_mat3 m = pd_m3_zero();
    for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
        pd_vec3 n;
        pd_real c = bond_weight(s, i, b, &n);
        pd_real v[3] = {n.x, n.y, n.z};
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k)
                m.m[r][k] += c * v[r] * v[k];
    }
    pd_vec3 l;
    pd_mat3 q;
    pd_eigen_sym3(m, &l, &q);
    return !(l.x > 1e-6 * l.z);
}

/* f_i fitted on i's family alone: unnormalised sums, so that the fit's target (d d + d d +
 * d d) / 15 is the bulk's absolute moment (a bulk family's sum_j c_j is 1). */
static void fit_family(const pd_hpd_state* s, uint32_t i, pd_direction_weight* dw) {
    pd_moment_fit fit;
    memset(&fit, 0, sizeof fit);
    for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
        pd_vec3 n;
        pd_real c = bond_weight(s, i, b, &n), phi[PD_QUARTIC_TERMS];
        pd_quartic_terms(n, phi);
        for (int k = 0; k < PD_QUARTIC_TERMS; ++k) {
            fit.m[k] += c * phi[k];
            for (int l = 0; l < PD_QUARTIC_TERMS; ++l)
                fit.K[k][l] += c * phi[k] * phi[l];
        }
    }
    fit.families = 1;
    pd_moment_fit_solve(&fit, dw);
}

/* The least G / q a bond may take with lambda < 0: a quarter above the bound G / q > -lambda
 * g''(1) / (mu h''(1)) under which W_i stays bounded below (by Jensen with the weights
 * w V q: sum_j w V G h(tau) >= min(G / q) h(theta)) (check_bond_couplings in
 * hyperelastic_pd_setup.c; 0.6 at nu = 0); 0 with lambda >= 0. */
static pd_real lowest_factor(const pd_hpd_material* m) {
    pd_real bound = m->mu * m->h2 > 0 ? -m->lambda * m->g2 / (m->mu * m->h2) : 0;
    return 1.05 * fmax(bound, 0);
}

/* The 6 quadratic monomials xx yy zz xy xz yz of n. */
static void quadratic_terms(pd_vec3 n, double psi[6]) {
    psi[0] = n.x * n.x, psi[1] = n.y * n.y, psi[2] = n.z * n.z;
    psi[3] = n.x * n.y, psi[4] = n.x * n.z, psi[5] = n.y * n.z;
}

/* Solves the symmetric 6 x 6 system a x = r by elimination with partial pivoting; 0 when a
 * pivot falls below 1e-12 of the largest diagonal (then x is left 0). */
static int solve6(double a[6][6], double r[6], double x[6]) {
    double scale = 0;
    for (int k = 0; k < 6; ++k)
        scale = fmax(scale, fabs(a[k][k])), x[k] = 0;
    for (int c = 0; c < 6; ++c) {
        int piv = c;
        for (int k = c + 1; k < 6; ++k)
            piv = fabs(a[k][c]) > fabs(a[piv][c]) ? k : piv;
        if (!(fabs(a[piv][c]) > 1e-12 * scale))
            return 0;
        for (int k = 0; k < 6; ++k) {
            double t = a[c][k];
            a[c][k] = a[piv][k], a[piv][k] = t;
        }
        double t = r[c];
        r[c] = r[piv], r[piv] = t;
        for (int k = c + 1; k < 6; ++k) {
            double m = a[k][c] / a[c][c];
            for (int l = c; l < 6; ++l)
                a[k][l] -= m * a[c][l];
            r[k] -= m * r[c];
        }
    }
    for (int c = 5; c >= 0; --c) {
        double sum = r[c];
        for (int l = c + 1; l < 6; ++l)
            sum -= a[c][l] * x[l];
        x[c] = sum / a[c][c];
    }
    return 1;
}

/* q_ij = 1 + alpha_i . psi(n) with the least sum_j c_j (q - 1)^2 (c_j = w_ij V_j) under which
 * sum_j c_j q_ij n n^T = I / 3, the bulk's second moment: theta_i - 1 = tr(e) / 3 under any
 * small homogeneous strain, as in the bulk. Bounded like f, then scaled to sum_j c_j q_ij = 1
 * so that theta_i = 1 at rest (Eq. 19's condition). */
static void fit_dilatation(pd_hpd_state* s, uint32_t i) {
    double K[6][6] = {{0}}, r[6] = {1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0, 0}, alpha[6];
    for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
        pd_real len = pd_v3_len(pd_family_xi(&s->fam, i, b));
        double c = pd_hpd_bond_weight(s, i, len) * s->volume[s->fam.j[b]], psi[6];
        quadratic_terms(pd_v3_scale(pd_family_xi(&s->fam, i, b), 1 / len), psi);
        for (int k = 0; k < 6; ++k) {
            r[k] -= c * psi[k];
            for (int l = 0; l < 6; ++l)
                K[k][l] += c * psi[k] * psi[l];
        }
    }
    if (!solve6(K, r, alpha))
        return;
    double sum = 0;
    for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
        pd_real len = pd_v3_len(pd_family_xi(&s->fam, i, b));
        double psi[6], q = 1;
        quadratic_terms(pd_v3_scale(pd_family_xi(&s->fam, i, b), 1 / len), psi);
        for (int k = 0; k < 6; ++k)
            q += alpha[k] * psi[k];
        s->bond_q[b] = fmin(fmax(q, HPD_SURFACE_MIN), HPD_SURFACE_MAX);
        sum += pd_hpd_bond_weight(s, i, len) * s->volume[s->fam.j[b]] * s->bond_q[b];
    }
    for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b)
        s->bond_q[b] /= sum;
}

static void correct_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const surface_job* job = ctx;
    pd_hpd_state* s = job->s;
    for (uint32_t i = (uint32_t)begin; i < end; ++i) {
        pd_real v = pd_family_volume(&s->fam, job->p->volume, i);
        if (v >= 0.99 * job->fullest[job->p->body[i]] || planar_family(s, i))
            continue; /* a full family (the lattice's factor made it isotropic) or no volume */
        fit_dilatation(s, i);
        pd_direction_weight dw;
        fit_family(s, i, &dw);
        pd_real floor = lowest_factor(&s->mat[s->material[i]]);
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            pd_vec3 n;
            bond_weight(s, i, b, &n);
            pd_real f = pd_direction_weight_at(&dw, n);
            f = fmin(fmax(f, HPD_SURFACE_MIN), HPD_SURFACE_MAX);
            s->bond_g[b] *= fmax(f, floor * s->bond_q[b] / s->bond_g[b]);
        }
    }
}

pd_status pd_hpd_surface_correction(pd_hpd_state* s, const pd_particles* p) {
    size_t count;
    pd_real* fullest = pd_hpd_fullest_families(s, p, &count);
    if (!fullest)
        return PD_ERR_OUT_OF_MEMORY;
    surface_job job = {s, p, fullest};
    pd_parallel_for(s->n, PD_HPD_GRAIN, correct_range, &job);
    pd_free(fullest, count * sizeof *fullest);
    return PD_OK;
}
