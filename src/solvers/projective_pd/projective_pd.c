/* Projective peridynamics: He, Wang, Wu 2017, "Projective Peridynamics for Modeling Versatile
 * Elastoplastic Materials", IEEE TVCG 24(9). Sec. 3-4: elasticity.
 *
 * Each step solves the implicit Euler system of Eq. 12 as the paper reads it in Sec. 4.2: a
 * preconditioned descent on the energy of Eq. 12 with the system matrix as preconditioner.
 * The local step computes F, the directions dir(F xi) (Eq. 10) and dir(Y) (Eq. 11), the energy
 * and its exact gradient (Eq. 9, the derivative Eq. 10 drops kept); the global step applies
 * the constant matrix to the residual (Chebyshev-Jacobi sweeps or the Cholesky factor); Eq. 13
 * takes the step with a backtracking line search (Armijo). L-BFGS pairs on top (beyond the
 * paper), contact with the colliders inside the solve: blocked along their normals, Coulomb
 * friction in the merit (boundary/collider_contact.h). docs/methods/projective_pd.md has the
 * derivations and the measurements behind each choice. */
#include "solvers/projective_pd/projective_pd_data.h"

#include <math.h>
#include <string.h>

#include "boundary/collider_contact.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/timer.h"
#include "linalg/chebyshev.h"
#include "math/svd3.h"
#include "neighbor/scatter_plan.h"
#include "optim/implicit_step.h"
#include "optim/semi_iterative.h"
#include "parallel/parallel.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "solvers/solver.h"
#include "world/world.h"

#define PPD_GRAIN 512
/* det F below which a particle counts as inverted for the fix of Sec. 4.1 (see local_particle) */
#define PPD_INVERTED 0.05
/* Times a step may renew its friction limits from the normal forces it converged to, and
 * from an iterate on the way there (solve_with_friction) */
#define PPD_FRICTION_REFRESHES 2
#define PPD_FRICTION_IN_SOLVE  2

/* ---------------------------------------------------------------- local step (Eq. 8-11) */

/* F = (Y*X)(X*X)^+ over i's family (Sec. 3). Between a step's last plastic correction and the
 * next renewal (system_stale) the stored (X*X)^+ are those of the references before it: F is
 * then taken with the family's own, as the stress read between steps must be. */
pd_mat3 pd_ppd_deformation_gradient(const pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    pd_mat3 kinv =
        s->system_stale ? pd_ppd_sym3_full(pd_ppd_family_kinv(s, i, NULL)) : pd_ppd_kinv(s, i);
    return pd_family_deformation_gradient(&s->fam, i, NULL, s->volume, y, kinv);
}

/* dir(F xi) and dir(Y) of one bond (Eq. 10, 11); a vanishing one borrows the other, or X's. */
static void directions(pd_vec3 fx, pd_real lfx, pd_vec3 Y, pd_real ly, pd_vec3 X, pd_real len,
                       pd_vec3* dfx, pd_vec3* dy) {
    const pd_real tiny = 1e-12 * len;
    if (lfx > tiny && ly > tiny) {
        *dfx = pd_v3_scale(fx, 1.0 / lfx);
        *dy = pd_v3_scale(Y, 1.0 / ly);
    } else if (lfx > tiny) {
        *dfx = *dy = pd_v3_scale(fx, 1.0 / lfx);
    } else if (ly > tiny) {
        *dfx = *dy = pd_v3_scale(Y, 1.0 / ly);
    } else {
        *dfx = *dy = pd_v3_scale(X, 1.0 / len);
    }
}

/* The vector with its first two components exchanged: F' xi when F' is F with its first two
 * rows permuted (the inversion fix). */
static pd_vec3 swap01(pd_vec3 v) {
    return pd_v3(v.y, v.x, v.z);
}

static pd_mat3 cofactor(pd_mat3 a) {
    pd_mat3 c;
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) {
            int r1 = (r + 1) % 3, r2 = (r + 2) % 3, k1 = (k + 1) % 3, k2 = (k + 2) % 3;
            c.m[r][k] = a.m[r1][k1] * a.m[r2][k2] - a.m[r1][k2] * a.m[r2][k1];
        }
    return c;
}

/* The gradient of Eq. 12's energy gathers each bond's t = dE_i/dY at both ends: y_j gets +t,
 * y_i gets -t. Particles add into their neighbours' g directly, in the order of the scatter
 * plan (neighbor/scatter_plan.h: no two particles that run at once share a neighbour, and
 * every g_j receives its terms in one order on any number of threads); i's own terms are
 * summed first and subtracted once. */
static void scatter_bond(pd_vec3* g, uint32_t j, pd_vec3 t, pd_vec3* own) {
    g[j] = pd_v3_add(g[j], t);
    *own = pd_v3_add(*own, t);
}

/* The inverted particle's bond forces a (Y - p) of the paper's local/global step, p from the
 * row-permuted F' (see local_particle); Jt = det F' > 0. */
static void inverted_forces(pd_ppd_state* s, pd_real mu, pd_real lambda, pd_mat3 F, pd_real kv,
                            pd_real Jt, const pd_vec3* y, uint32_t i) {
    const pd_family* f = &s->fam;
    pd_real jscale = kv > 0 ? 1.0 / cbrt(fmax(Jt, 1e-3)) : 1;
    pd_real inv = 1.0 / (mu + 0.5 * lambda + kv);
    pd_real wdev = mu * inv, wiso = 0.5 * lambda * inv, wvol = kv * jscale * inv;
    pd_vec3 own = pd_v3(0, 0, 0);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 X = pd_family_xi(f, i, b), Y = pd_v3_sub(y[f->j[b]], y[i]), fx = pd_m3_mulv(F, X);
        pd_real len = pd_v3_len(X), lfx = pd_v3_len(fx), ly = pd_v3_len(Y);
        pd_vec3 dfx, diso;
        directions(fx, lfx, Y, ly, X, len, &dfx, &diso);
        pd_vec3 ddev = lfx > 1e-12 * len ? swap01(dfx) : dfx; /* a borrowed one is not turned */
        pd_vec3 p = pd_v3_madd(pd_v3_scale(swap01(fx), wvol), wdev * len, ddev);
        p = pd_v3_madd(p, wiso * len, diso);
        pd_vec3 a = pd_v3_scale(pd_v3_sub(Y, p),
                                2 * pd_ppd_bond_kb(s, i, b) * pd_ppd_kq(s, i)); /* a_ij (Y - p) */
        scatter_bond(s->g, f->j[b], a, &own);
    }
    s->g[i] = pd_v3_sub(s->g[i], own);
}

/* One bond of i at y for the scalar form: Eq. 8's terms, and the part of t = dE_i/dY in Y
 * directly. */
typedef struct ppd_bond {
    pd_vec3 X, Y, dfx, off; /* X, Y, dir(F xi), Y - |X| dir(F xi) */
    pd_real len, lfx, k;    /* |X|, |F xi|, the bond's kb */
    pd_vec3 t;
    pd_real e; /* the bond's energy */
} ppd_bond;

static ppd_bond scalar_bond(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, uint32_t b,
                            pd_mat3 F, pd_real mu, pd_real lambda) {
    const pd_family* f = &s->fam;
    ppd_bond o;
    o.X = pd_family_xi(f, i, b), o.Y = pd_v3_sub(y[f->j[b]], y[i]);
    pd_vec3 fx = pd_m3_mulv(F, o.X), diso;
    o.len = pd_v3_len(o.X), o.k = pd_ppd_bond_kb(s, i, b), o.lfx = pd_v3_len(fx);
    pd_real ly = pd_v3_len(o.Y);
    directions(fx, o.lfx, o.Y, ly, o.X, o.len, &o.dfx, &diso); /* Eq. 10 and 11 */
    o.off = pd_v3_madd(o.Y, -o.len, o.dfx);
    o.e = o.k * (mu * pd_v3_len2(o.off) + 0.5 * lambda * (ly - o.len) * (ly - o.len));
    o.t = pd_v3_madd(pd_v3_scale(o.off, 2 * o.k * mu), o.k * lambda * (ly - o.len), diso);
    return o;
}

/* Particle i's part of the energy (J), with k = V_i V_j w / |X|^2 per bond:
 *   Eq. 8:        sum k (mu |Y - |X| dir(F xi)|^2 + lambda/2 (|Y| - |X|)^2)
 *   dilatation:   kv/9 (J - 1)^2 sum k |X|^2      (beyond the paper; 0 when off)
 * The deviatoric term is Eq. 8's (|F xi| - |X|)^2 with the paper's approximation Y* ~ Y taken
 * in the energy: its gradient with the derivative of dir(F xi) dropped is Eq. 10, and unlike
 * (|F xi| - |X|)^2 it resists a bond leaving the plane its family's F fits (one-layer shells
 * bend through mu only so, Fig. 5). Per bond, t = dE_i/dY: the parts in Y directly, the parts
 * in F (the dropped derivative kept) through dE/dF (X*X)^+ w V_j xi; t goes into g at both
 * ends (scatter_bond).
 * Inversion (Sec. 4.1): a clearly inverted particle (det F < -PPD_INVERTED) takes instead the
 * force of the paper's local step, a (Y - p), with the projection p built from F' (F with its
 * first two rows permuted): |X| dir(F' xi) (Eq. 10, weight mu), |X| dir(Y) (Eq. 11, weight
 * lambda/2), J'^(-1/3) F' xi (dilatation, weight kv); this force steers a mirrored family
 * back. The energy keeps F itself: with F' in it the energy would jump where det F crosses
 * the threshold, and the dilatation term must see the true J (with the permuted one a
 * mirrored body was an equilibrium: measured, an inverted block came back mirrored). Near-zero
 * determinants are left alone: the permutation turns targets by 90 degrees about z, and at
 * the momentary near-zero determinants of an impact it set a dropped ball spinning (measured).
 * Returns the energy; *inverted is set when the fix acted. This is the reference form, taken
 * by the families local_particle cannot vectorise (see there); it evaluates each bond twice,
 * once for dE/dF and once for t, rather than keep t per bond. */
static pd_real local_particle_scalar(pd_ppd_state* s, const pd_vec3* y, uint32_t i, int* inverted) {
    const pd_family* f = &s->fam;
    const pd_ppd_material* m = &s->mat[s->material[i]];
    pd_mat3 F = pd_ppd_deformation_gradient(s, y, i);
    pd_real vs = pd_ppd_vscale(s, i), lambda = m->lambda * vs; /* granular: Sec. 7 */
    pd_real kv = s->planar[i] ? 0 : m->kv * vs, J = pd_m3_det(F);
    int fix = s->prm.inversion_fix && !s->fix_off && !s->planar[i] && J < -PPD_INVERTED;
    pd_mat3 dEdF = pd_m3_zero();
    pd_real e = 0, sum_kl2 = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        ppd_bond o = scalar_bond(s, y, i, b, F, m->mu, lambda);
        e += o.e;
        if (o.lfx > 1e-12 * o.len) /* d dir(F xi) / dF, through |X|/|F xi| (I - d d^T) */
            pd_m3_add_outer(&dEdF, -2 * o.k * m->mu * o.len / o.lfx,
                            pd_v3_madd(o.Y, -pd_v3_dot(o.dfx, o.Y), o.dfx), o.X);
        sum_kl2 += o.k * o.len * o.len;
    }
    if (kv > 0) { /* dJ/dF = cof F */
        e += kv / 9 * (J - 1) * (J - 1) * sum_kl2;
        dEdF = pd_m3_add(dEdF, pd_m3_scale(cofactor(F), 2 * kv / 9 * (J - 1) * sum_kl2));
    }
    if (fix) {
        *inverted = 1;
        inverted_forces(s, m->mu, lambda, F, kv, -J, y, i);
        return e;
    }
    pd_mat3 H = pd_m3_mul(dEdF, pd_ppd_kinv(s, i));
    pd_vec3 own = pd_v3(0, 0, 0);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        ppd_bond o = scalar_bond(s, y, i, b, F, m->mu, lambda);
        pd_vec3 t = pd_v3_madd(o.t, f->w[i] * s->volume[f->j[b]], pd_m3_mulv(H, o.X));
        scatter_bond(s->g, f->j[b], t, &own);
    }
    s->g[i] = pd_v3_sub(s->g[i], own);
    return e;
}

/* The pressure i's own bonds exert at y, -tr(sigma_i) / 3 with sigma_i the virial of the forces
 * of its energy E_i (Eq. 8, the dilatation term included): sigma_i V_i = sum_b t_b (x) Y_b, t_b =
 * dE_i/dY_b the bond's force (local_particle_scalar's). For E_i a function of F alone this is
 * dE_i/dF F^T / V_i, the Cauchy stress to first order (Lehoucq and Silling 2008's peridynamic
 * stress of a homogeneous deformation). With the part of t through F, sum_b w V_j H X_b (x) Y_b
 * = dE/dF F^T, so the trace needs one pass over the bonds. */
pd_real pd_ppd_bond_pressure(const pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_family* f = &s->fam;
    const pd_ppd_material* m = &s->mat[s->material[i]];
    if (f->offsets[i] == f->offsets[i + 1] || !(s->volume[i] > 0))
        return 0;
    pd_mat3 F = pd_ppd_deformation_gradient(s, y, i), dEdF = pd_m3_zero();
    pd_real vs = pd_ppd_vscale(s, i), lambda = m->lambda * vs;
    pd_real kv = s->planar[i] ? 0 : m->kv * vs, J = pd_m3_det(F);
    pd_real direct = 0, sum_kl2 = 0; /* sum t_b . Y_b of the parts in Y directly */
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        ppd_bond o = scalar_bond(s, y, i, b, F, m->mu, lambda);
        direct += pd_v3_dot(o.t, o.Y);
        if (o.lfx > 1e-12 * o.len)
            pd_m3_add_outer(&dEdF, -2 * o.k * m->mu * o.len / o.lfx,
                            pd_v3_madd(o.Y, -pd_v3_dot(o.dfx, o.Y), o.dfx), o.X);
        sum_kl2 += o.k * o.len * o.len;
    }
    if (kv > 0)
        dEdF = pd_m3_add(dEdF, pd_m3_scale(cofactor(F), 2 * kv / 9 * (J - 1) * sum_kl2));
    pd_real through_f = 0; /* dE/dF : F */
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k)
            through_f += dEdF.m[r][k] * F.m[r][k];
    return -(direct + through_f) / (3 * s->volume[i]);
}

/* ---------------------------------------------------------------- the vectorised local step */

/* Bonds a family may have for the vectorised path (larger ones take the scalar form). */
#define PPD_STAGE 160
/* The staged loops run over a multiple of this many lanes (AVX-512's doubles; a multiple of
 * AVX2's and SSE2's): the bonds past the family's last are padding that adds nothing, so that
 * no bond goes through a scalar remainder loop (5 of a 29-bond family did). */
#define PPD_LANES 8

/* One particle's bonds staged as structure of arrays, so that the loops below run over
 * contiguous lanes (`omp simd`: SSE2 in a portable build, AVX2 or AVX-512 with PD_NATIVE).
 * g = w V_j (X*X)^+ xi is the bond's weight in F: F = sum Y g^T (Sec. 3, (X*X)^+ symmetric). */
typedef struct ppd_stage {
    pd_real yx[PPD_STAGE], yy[PPD_STAGE], yz[PPD_STAGE]; /* Y */
    pd_real xx[PPD_STAGE], xy[PPD_STAGE], xz[PPD_STAGE]; /* X */
    pd_real gx[PPD_STAGE], gy[PPD_STAGE], gz[PPD_STAGE]; /* g */
    pd_real len[PPD_STAGE], kb[PPD_STAGE];               /* |X|, the bond's kb */
    pd_real tx[PPD_STAGE], ty[PPD_STAGE], tz[PPD_STAGE]; /* t = dE_i/dY */
    uint32_t lanes;                                      /* the bonds rounded up to PPD_LANES */
} ppd_stage;

/* Pads i's staged bonds up to st->lanes with copies of its first bond (X, Y: values the loops
 * already handle) of zero weight and stiffness, which add nothing to F, the energy, dE/dF or
 * the shortest bond, and whose t is not written out. */
static void pad_family(ppd_stage* st, uint32_t nb) {
    st->lanes = (nb + PPD_LANES - 1) / PPD_LANES * PPD_LANES;
    for (uint32_t b = nb; b < st->lanes; ++b) {
        st->yx[b] = st->yx[0], st->yy[b] = st->yy[0], st->yz[b] = st->yz[0];
        st->xx[b] = st->xx[0], st->xy[b] = st->xy[0], st->xz[b] = st->xz[0];
        st->gx[b] = 0, st->kb[b] = 0; /* gx holds V_j until stage_family's loop */
        st->tx[b] = 1;                /* a derived kb's denominator until then */
    }
}

/* X of i's bonds into st: the bonds' own, or the differences of the reference positions they
 * share (pd_family_share_rest), which are read from cache where a bond's X streams from
 * memory. */
static void stage_references(const pd_family* f, uint32_t i, ppd_stage* st) {
    uint32_t o = f->offsets[i], nb = f->offsets[i + 1] - o;
    if (f->xi) {
        for (uint32_t b = 0; b < nb; ++b) {
            pd_vec3 X = f->xi[o + b];
            st->xx[b] = X.x, st->xy[b] = X.y, st->xz[b] = X.z;
        }
        return;
    }
    pd_vec3 ri = f->ref[i];
    for (uint32_t b = 0; b < nb; ++b) {
        pd_vec3 rj = f->ref[f->j[o + b]];
        st->xx[b] = rj.x - ri.x, st->xy[b] = rj.y - ri.y, st->xz[b] = rj.z - ri.z;
    }
}

/* Gathers i's bonds into st; returns F = sum Y g^T (pd_ppd_deformation_gradient's F). */
static pd_mat3 stage_family(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, ppd_stage* st) {
    const pd_family* f = &s->fam;
    uint32_t o = f->offsets[i], nb = f->offsets[i + 1] - o;
    pd_vec3 yi = y[i];
    pd_real* vj = st->gx; /* V_j until g overwrites it */
    const pd_real wi = f->w[i];
    if (s->kb) {
        for (uint32_t b = 0; b < nb; ++b)
            st->kb[b] = s->kb[o + b];
    } else {
        /* pd_ppd_bond_kb with the same operations: c into kb, the denominator into tx (free
         * until bond_terms), divided over the lanes below. A family that shares its rest
         * positions is of one material, its particles' only (no material flows or changes,
         * a body has one): q_j is i's material's, planar or not, and vscale 1. */
        const pd_ppd_material* m = &s->mat[s->material[i]];
        const pd_real wkqi = wi * pd_ppd_kq(s, i), q_solid = pd_ppd_material_kq(m, 0, 1),
                      q_planar = pd_ppd_material_kq(m, 1, 1);
        for (uint32_t b = 0; b < nb; ++b) {
            uint32_t j = f->j[o + b];
            st->kb[b] = s->c[o + b];
            st->tx[b] = 2 * (wkqi + f->w[j] * (s->planar[j] ? q_planar : q_solid));
        }
    }
    for (uint32_t b = 0; b < nb; ++b) {
        uint32_t j = f->j[o + b];
        pd_vec3 yj = y[j];
        st->yx[b] = yj.x - yi.x, st->yy[b] = yj.y - yi.y, st->yz[b] = yj.z - yi.z;
        vj[b] = s->volume[j];
    }
    stage_references(f, i, st);
    pad_family(st, nb);
    if (!s->kb) {
#pragma omp simd
        for (uint32_t b = 0; b < st->lanes; ++b)
            st->kb[b] = st->kb[b] * wi / st->tx[b];
    }
    const pd_ppd_sym3 K = s->kinv[i];
    const pd_real k00 = K.xx, k01 = K.xy, k02 = K.xz, k11 = K.yy, k12 = K.yz, k22 = K.zz;
    pd_real f00 = 0, f01 = 0, f02 = 0, f10 = 0, f11 = 0, f12 = 0, f20 = 0, f21 = 0, f22 = 0;
#pragma omp simd reduction(+ : f00, f01, f02, f10, f11, f12, f20, f21, f22)
    for (uint32_t b = 0; b < st->lanes; ++b) {
        pd_real X0 = st->xx[b], X1 = st->xy[b], X2 = st->xz[b], w = wi * vj[b];
        st->len[b] = sqrt(X0 * X0 + X1 * X1 + X2 * X2);
        pd_real g0 = w * (k00 * X0 + k01 * X1 + k02 * X2);
        pd_real g1 = w * (k01 * X0 + k11 * X1 + k12 * X2);
        pd_real g2 = w * (k02 * X0 + k12 * X1 + k22 * X2);
        st->gx[b] = g0, st->gy[b] = g1, st->gz[b] = g2;
        pd_real Y0 = st->yx[b], Y1 = st->yy[b], Y2 = st->yz[b];
        f00 += Y0 * g0, f01 += Y0 * g1, f02 += Y0 * g2;
        f10 += Y1 * g0, f11 += Y1 * g1, f12 += Y1 * g2;
        f20 += Y2 * g0, f21 += Y2 * g1, f22 += Y2 * g2;
    }
    return (pd_mat3){{{f00, f01, f02}, {f10, f11, f12}, {f20, f21, f22}}};
}

/* The bond loop of local_particle_scalar over staged lanes: t of Eq. 8's two terms into st,
 * dE/dF (the derivative of dir(F xi)) into *dEdF, sum k |X|^2 into *kl2; returns the energy,
 * or -1 when some bond has a vanishing F xi or Y (the scalar form borrows directions then). */
static pd_real bond_terms(pd_mat3 F, pd_real mu, pd_real lambda, ppd_stage* st, pd_mat3* dEdF,
                          pd_real* kl2) {
    const pd_real *len = st->len, *kb = st->kb;
    const pd_real F00 = F.m[0][0], F01 = F.m[0][1], F02 = F.m[0][2], F10 = F.m[1][0],
                  F11 = F.m[1][1], F12 = F.m[1][2], F20 = F.m[2][0], F21 = F.m[2][1],
                  F22 = F.m[2][2];
    pd_real e = 0, sum_kl2 = 0;
    pd_real d00 = 0, d01 = 0, d02 = 0, d10 = 0, d11 = 0, d12 = 0, d20 = 0, d21 = 0, d22 = 0;
    pd_real shortest = 1; /* the shortest F xi or Y in |X| */
#pragma omp simd reduction(+ : e, sum_kl2, d00, d01, d02, d10, d11, d12, d20, d21, d22)        \
    reduction(min : shortest)
    for (uint32_t b = 0; b < st->lanes; ++b) {
        pd_real X0 = st->xx[b], X1 = st->xy[b], X2 = st->xz[b];
        pd_real Y0 = st->yx[b], Y1 = st->yy[b], Y2 = st->yz[b], L = len[b], k = kb[b];
        pd_real p0 = F00 * X0 + F01 * X1 + F02 * X2; /* F xi */
        pd_real p1 = F10 * X0 + F11 * X1 + F12 * X2;
        pd_real p2 = F20 * X0 + F21 * X1 + F22 * X2;
        pd_real lfx = sqrt(p0 * p0 + p1 * p1 + p2 * p2), ly = sqrt(Y0 * Y0 + Y1 * Y1 + Y2 * Y2);
        pd_real m = (lfx < ly ? lfx : ly) / L;
        shortest = m < shortest ? m : shortest;
        pd_real ifx = 1 / lfx, iy = 1 / ly;
        pd_real u0 = p0 * ifx, u1 = p1 * ifx, u2 = p2 * ifx; /* dir(F xi), Eq. 10 */
        pd_real o0 = Y0 - L * u0, o1 = Y1 - L * u1, o2 = Y2 - L * u2, dl = ly - L;
        e += k * (mu * (o0 * o0 + o1 * o1 + o2 * o2) + 0.5 * lambda * dl * dl);
        pd_real c = -2 * k * mu * L * ifx, uy = u0 * Y0 + u1 * Y1 + u2 * Y2;
        pd_real v0 = c * (Y0 - uy * u0), v1 = c * (Y1 - uy * u1), v2 = c * (Y2 - uy * u2);
        d00 += v0 * X0, d01 += v0 * X1, d02 += v0 * X2;
        d10 += v1 * X0, d11 += v1 * X1, d12 += v1 * X2;
        d20 += v2 * X0, d21 += v2 * X1, d22 += v2 * X2;
        sum_kl2 += k * L * L;
        pd_real a = 2 * k * mu, q = k * lambda * dl * iy; /* dir(Y), Eq. 11 */
        st->tx[b] = a * o0 + q * Y0, st->ty[b] = a * o1 + q * Y1, st->tz[b] = a * o2 + q * Y2;
    }
    *dEdF = (pd_mat3){{{d00, d01, d02}, {d10, d11, d12}, {d20, d21, d22}}};
    *kl2 = sum_kl2;
    return shortest > 1e-12 ? e : -1;
}

/* t += dE/dF g per bond (the part of t through F, local_particle_scalar's H xi w V_j), then t
 * into g at both ends (scatter_bond). */
static void finish_bonds(pd_ppd_state* s, uint32_t i, pd_mat3 D, ppd_stage* st) {
    uint32_t o = s->fam.offsets[i], nb = s->fam.offsets[i + 1] - o;
    const pd_real D00 = D.m[0][0], D01 = D.m[0][1], D02 = D.m[0][2], D10 = D.m[1][0],
                  D11 = D.m[1][1], D12 = D.m[1][2], D20 = D.m[2][0], D21 = D.m[2][1],
                  D22 = D.m[2][2];
#pragma omp simd
    for (uint32_t b = 0; b < st->lanes; ++b) {
        pd_real g0 = st->gx[b], g1 = st->gy[b], g2 = st->gz[b];
        st->tx[b] += D00 * g0 + D01 * g1 + D02 * g2;
        st->ty[b] += D10 * g0 + D11 * g1 + D12 * g2;
        st->tz[b] += D20 * g0 + D21 * g1 + D22 * g2;
    }
    const uint32_t* j = s->fam.j + o;
    pd_vec3 own = pd_v3(0, 0, 0);
    for (uint32_t b = 0; b < nb; ++b)
        scatter_bond(s->g, j[b], pd_v3(st->tx[b], st->ty[b], st->tz[b]), &own);
    s->g[i] = pd_v3_sub(s->g[i], own);
}

/* local_particle_scalar's energy and forces, its bond loops vectorised over the staged family.
 * Families larger than the stage, bonds whose F xi or Y vanishes, and particles the inversion
 * fix takes go to the scalar form (the same formulas). */
static pd_real local_particle(pd_ppd_state* s, const pd_vec3* y, uint32_t i, int* inverted,
                              ppd_stage* st) {
    const pd_family* f = &s->fam;
    if (f->offsets[i + 1] - f->offsets[i] > PPD_STAGE || s->scalar_local)
        return local_particle_scalar(s, y, i, inverted);
    const pd_ppd_material* m = &s->mat[s->material[i]];
    pd_mat3 F = stage_family(s, y, i, st);
    pd_real vs = pd_ppd_vscale(s, i), lambda = m->lambda * vs; /* granular: Sec. 7 */
    pd_real kv = s->planar[i] ? 0 : m->kv * vs, J = pd_m3_det(F);
    if (s->prm.inversion_fix && !s->fix_off && !s->planar[i] && J < -PPD_INVERTED)
        return local_particle_scalar(s, y, i, inverted);
    pd_mat3 dEdF;
    pd_real sum_kl2, e = bond_terms(F, m->mu, lambda, st, &dEdF, &sum_kl2);
    if (e < 0)
        return local_particle_scalar(s, y, i, inverted);
    if (kv > 0) { /* dJ/dF = cof F */
        e += kv / 9 * (J - 1) * (J - 1) * sum_kl2;
        dEdF = pd_m3_add(dEdF, pd_m3_scale(cofactor(F), 2 * kv / 9 * (J - 1) * sum_kl2));
    }
    finish_bonds(s, i, dEdF, st);
    return e;
}

typedef struct ppd_ctx {
    pd_ppd_state* s;
    const pd_vec3* y;
    const uint8_t* flags;
    pd_real ih2; /* 1/h^2 of the inertia term (1/s^2) */
    pd_vec3* r;  /* residual out */
} ppd_ctx;

/* Pinned particles and fixed bodies keep their place. */
static int is_free(const ppd_ctx* c, size_t i) {
    return !(c->flags[i] & PD_P_CONSTRAINED);
}

static pd_real sum_partials(const pd_real* partial, size_t count) {
    pd_real sum = 0;
    for (size_t k = 0; k < count; ++k)
        sum += partial[k];
    return sum;
}

static void zero_gradient(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    ppd_ctx* c = vctx;
    memset(c->s->g + begin, 0, (end - begin) * sizeof(pd_vec3));
}

/* One task of the scatter plan: its particles' energies and their bonds' t into g. Partial
 * sums per task (energy, then the inversion flag). */
static void local_task(void* vctx, const uint32_t* particles, size_t count, size_t task,
                       int thread) {
    (void)thread;
    ppd_ctx* c = vctx;
    pd_real e = 0;
    int inverted = 0;
    ppd_stage st;
    for (size_t k = 0; k < count; ++k)
        e += local_particle(c->s, c->y, particles[k], &inverted, &st);
    c->s->partial[task] = e;
    c->s->partial[c->s->plan.tasks + task] = inverted;
}

/* The energy of every family at y and its gradient in s->g (without the contact). */
static pd_real bond_energy(pd_ppd_state* s, ppd_ctx* c) {
    pd_parallel_for(s->n, PPD_GRAIN, zero_gradient, c);
    if (!pd_scatter_plan_current(&s->plan, &s->fam)) { /* no plan (out of memory): one thread */
        pd_real e = 0;
        int inverted = 0;
        ppd_stage st;
        for (uint32_t i = 0; i < s->n; ++i)
            e += local_particle(s, c->y, i, &inverted, &st);
        s->inverted = inverted;
        return e;
    }
    pd_scatter_for(&s->plan, local_task, c);
    size_t tasks = s->plan.tasks;
    s->inverted = 0;
    for (size_t k = 0; k < tasks; ++k)
        s->inverted |= s->partial[tasks + k] != 0;
    return sum_partials(s->partial, tasks);
}

/* The residual of Eq. 12 with the exact forces, r = M (y - y*)/h^2 + g (g with the gradient of
 * the contact energy, src/contact, when contact is on), and the inertia energy; then the
 * collider contact (boundary/collider_contact.h): friction's force and (smoothed) potential,
 * and a touching particle whose residual pushes into its collider blocked along the normal.
 * Partial sums of |r|^2 (first half) and inertia + friction potential. */
static void residual_kernel(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    ppd_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    pd_real r2 = 0, inertia = 0, ih2 = c->ih2;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 r = pd_v3(0, 0, 0);
        if (is_free(c, i)) {
            pd_vec3 d = pd_v3_sub(c->y[i], s->ystar[i]);
            r = pd_v3_madd(s->g[i], s->mass[i] * ih2, d);
            inertia += 0.5 * s->mass[i] * ih2 * pd_v3_len2(d);
        }
        inertia += pd_collider_contact_apply(&s->cc, i, c->y[i], &r);
        c->r[i] = r;
        r2 += pd_v3_len2(r);
    }
    s->partial[begin / PPD_GRAIN] = r2;
    s->partial[s->chunks + begin / PPD_GRAIN] = inertia;
}

/* Gershgorin bound of the Jacobi iteration matrix with the contact springs added to A (see
 * precondition): a particle's off-diagonal sum grows by its pair stiffnesses K_i, its
 * diagonal too, so (sum c + K) / (diag + K) may exceed the constant bound s->rho. */
static pd_real contact_jacobi_bound(const pd_ppd_state* s) {
    pd_real rho = s->rho, ih2 = 1.0 / (s->matrix_dt * s->matrix_dt); /* diag's m/h^2 */
    const pd_contact* c = &s->contact;
    for (size_t i = 0; i < s->n; ++i) {
        pd_real K = c->diag[i];
        if (K > 0 && !s->fixed[i])
            rho = fmax(rho, (s->diag[i] - s->mass[i] * ih2 + K) / (s->diag[i] + K));
    }
    return rho;
}

/* The contact energy between bodies at y (src/contact): its gradient added into g (NULL:
 * none), its diagonal and pairs kept in s->contact for the Jacobi sweeps. */
static pd_real contact_energy(pd_ppd_state* s, const pd_vec3* y, pd_vec3* g) {
    if (!s->prm.contact)
        return 0;
    pd_real e;
    s->contact.grad = g; /* pd_contact_add_gradient_to_callers (set-up) */
    pd_status st = pd_contact_evaluate(&s->contact, y, &e);
    if (st != PD_OK)
        s->contact_status = st;
    s->rho_contact = contact_jacobi_bound(s);
    return e;
}

/* Everything at y: energy, gradient, residual r, blocked contacts. Returns the merit of Eq. 12
 * (inertia + elastic energy, J); *r_norm gets |r| (N). */
static pd_real evaluate_at(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags, pd_real ih2,
                           pd_vec3* r, pd_real* r_norm) {
    double t0 = pd_now();
    ppd_ctx c = {.s = s, .y = y, .flags = flags, .ih2 = ih2, .r = r};
    pd_real energy = bond_energy(s, &c);
    double t1 = pd_now();
    /* g = (bonds + granular) + contact, as when the contact's gradient was added last in
     * residual_kernel; the energy summed in its order too */
    pd_real granular = pd_ppd_granular_energy(s, y); /* Sec. 8's density and repulsion */
    energy += contact_energy(s, y, s->g);
    energy += granular;
    double t2 = pd_now();
    pd_parallel_for(s->n, PPD_GRAIN, residual_kernel, &c);
    pd_real r2 = sum_partials(s->partial, s->chunks);
    pd_real inertia = sum_partials(s->partial + s->chunks, s->chunks);
    *r_norm = sqrt(r2);
    double t3 = pd_now();
    s->t_local += t3 - t0;
    s->t_bond_forces += (t1 - t0) + (t3 - t2); /* the bond kernels without the contact */
    s->local_evaluations++;
    s->last_merit = energy + inertia, s->last_r_norm = *r_norm;
    return energy + inertia;
}
/* local_step at y in the step under way (its flags and h). */
static pd_real local_step(pd_ppd_state* s, const pd_vec3* y, pd_vec3* r, pd_real* r_norm) {
    pd_real ih2 = 1.0 / (s->step->dt * s->step->dt);
    return evaluate_at(s, y, s->step->particles->flags, ih2, r, r_norm);
}

/* ---------------------------------------------------------------- the step as a descent */

/* The global step of Eq. 12 applied to b: z = A^-1 b, by the method chosen (the optimiser
 * filters b and z; Chebyshev sweeps keep blocked particles in their contact plane). */
static pd_status precondition(void* ctx, const pd_vec3* b, pd_vec3* z) {
    pd_ppd_state* s = ctx;
    double t0 = pd_now();
    pd_status st = PD_OK;
    pd_sym_csr a = pd_ppd_matrix(s);
    /* semi_iterative: one Jacobi sweep; the acceleration is on the outer iterates (solve_semi) */
    int sweeps = s->prm.iteration == PD_PPD_SEMI_ITERATIVE ? 1 : s->prm.linear_iterations;
    pd_chebyshev_def cheb = {.sweeps = sweeps,
                             .rho = s->rho,
                             .fixed = s->fixed,
                             .scratch_a = s->cheb_a,
                             .scratch_b = s->cheb_b};
    pd_collider_contact_sweeps(&s->cc, &cheb);
    /* The sweeps run on A plus the Laplacian of the contact pairs at the current iterate, each
     * pair a spring of its penalty stiffness (the penalty's Hessian is k n n^T plus a smaller
     * tangential part), so that the preconditioner couples bodies in contact as A couples the
     * particles of one body; it stays symmetric positive definite. The Cholesky factor keeps A
     * alone. */
    const pd_contact* ct = &s->contact;
    pd_sym_csr pairs = {s->n, ct->near.offsets, ct->near.indices, ct->pair_k, NULL, NULL, NULL};
    if (s->prm.contact) {
        cheb.extra = &pairs;
        cheb.extra_diag = ct->diag;
        cheb.rho = s->rho_contact;
    }
    switch (s->prm.global_solve) {
        case PD_PPD_DIRECT:
            st = pd_sym_direct_solve(&s->direct, b, z);
            break;
        case PD_PPD_POSITION_BASED:
            /* Fig. 7's position-based solve: one plain Jacobi sweep, each particle moving to
             * the average of what its neighbourhood suggests. */
            cheb.sweeps = 1;
            pd_chebyshev_jacobi(&a, &cheb, b, z);
            break;
        default:
            pd_chebyshev_jacobi(&a, &cheb, b, z);
    }
    s->t_global += pd_now() - t0;
    return st;
}

static pd_real evaluate(void* ctx, const pd_vec3* y, pd_vec3* r, pd_real* r_norm,
                        int* not_gradient) {
    pd_ppd_state* s = ctx;
    int yielded = pd_ppd_return_at(s, y); /* plastic_return in_solve: X returned at y */
    pd_real merit = local_step(s, y, r, r_norm);
    /* the inversion fix's force is no gradient, nor is the returned stress's */
    *not_gradient = s->inverted || yielded;
    return merit;
}

/* Every start point and line-search trial is projected out of the colliders (Sec. 8; y*
 * itself stays the inertial target: projected, it took part of the weight off every particle
 * within h^2 g of a surface, 11 mm at h = 1/30 s, touching or not; measured, a block whose
 * grid-sampled bottom hovers in steps over a ramp pressed on it with 95 % of its weight and
 * slid 6 % too fast), and particles touching a collider whose residual pushes into it are
 * blocked along its normal (residual_kernel): handled only after the solve, contact acts as a
 * spring of stiffness m/h^2, far too soft at h = 1/30 s (a resting ball sank to half its
 * height). */
static void project_contacts(pd_ppd_state* s, pd_vec3* y) {
    pd_collider_contact_project(&s->cc, y);
}

/* The descent's constraints (contact/contact_hooks.h): directions filtered by the blocked
 * normals, trials projected out of the colliders, and contact pairs no closer than
 * PD_CONTACT_FLOOR d_c in a trial (a pair that starts the search near that floor by
 * PD_CONTACT_SLACK at most: contact.h says why). */
static pd_descent_problem problem(pd_ppd_state* s) {
    s->hooks = (pd_contact_hooks){&s->cc, s->prm.contact ? &s->contact : NULL};
    return (pd_descent_problem){s,
                                evaluate,
                                precondition,
                                pd_contact_hooks_filter,
                                pd_contact_hooks_project,
                                pd_contact_hooks_search_begins,
                                pd_contact_hooks_admissible,
                                &s->hooks};
}

/* ---------------------------------------------------------------- one time step */

/* Coulomb friction's limits mu lambda from the optimiser's iterate (lambda = the normal force
 * its contacts take there); 1 when they changed (boundary/collider_contact.h). */
static int friction_limits(pd_ppd_state* s, const pd_particles* p) {
    return pd_collider_contact_renew_friction(&s->cc, p->pos, s->opt.y, s->opt.r);
}

/* The contacts (held) of an admissible point y, without moving it: a copy is projected. */
static void contact_set_of(pd_ppd_state* s, const pd_vec3* y) {
    memcpy(s->opt.yold, y, s->n * sizeof(pd_vec3));
    project_contacts(s, s->opt.yold);
}

/* A start point into y, projected out of the colliders: the inertial prediction y* (which
 * stays the inertial target) or x + h v (y* without gravity's h^2 g). */
static void start_candidate(pd_ppd_state* s, const pd_particles* p, int inertial, pd_vec3* y) {
    for (size_t i = 0; i < s->n; ++i)
        y[i] = inertial || p->flags[i] & PD_P_CONSTRAINED
                   ? s->ystar[i]
                   : pd_v3_madd(p->pos[i], s->step->dt, p->vel[i]);
    project_contacts(s, y);
}

/* start_point for solver.iteration semi_iterative, at most two force evaluations with the
 * friction set-up's: the same choice between y* and x + h v, but x + h v is not evaluated
 * again where colliders are: the friction set-up (optim/implicit_step.c) evaluated it last, so
 * its merit (with the last step's friction limits) and residual are at hand
 * (s->last_merit, d->r). When x + h v wins, its residual is that evaluation's (d->rold) and its
 * contact set is marked anew without an evaluation: the first iteration's sweep sees the
 * blocked normals of y*, every later one its own iterate's. */
static pd_real semi_start_point(pd_ppd_state* s, const pd_particles* p, pd_real* r) {
    pd_descent* d = &s->opt;
    pd_descent_problem pr = problem(s);
    pd_real r_motion, m_motion;
    if (s->cc.colliders->count) {
        m_motion = s->last_merit, r_motion = s->last_r_norm;
    } else {
        start_candidate(s, p, 0, d->y);
        m_motion = pd_descent_evaluate(d, &pr, &r_motion);
    }
    memcpy(d->ytrial, d->y, s->n * sizeof(pd_vec3));
    memcpy(d->rold, d->r, s->n * sizeof(pd_vec3));
    start_candidate(s, p, 1, d->y);
    pd_real m_star = pd_descent_evaluate(d, &pr, r);
    s->r_star = *r;
    s->motion_start = m_motion < m_star;
    if (!s->motion_start)
        return m_star;
    memcpy(d->y, d->ytrial, s->n * sizeof(pd_vec3));
    memcpy(d->r, d->rold, s->n * sizeof(pd_vec3));
    contact_set_of(s, d->y);
    *r = r_motion;
    return m_motion;
}

/* Where the iterations start: the inertial prediction y* or, if its merit is lower, x + h v.
 * For a body resting on the floor the second is nearly the answer, while y* sinks it by g h^2
 * (11 mm at h = 1/30 s) and the iterations spend the step lifting it back (measured: the demo at
 * h = 1/30 s ended every resting step at a relative residual of 0.0067 and kept turning).
 * s->r_star gets |r(y*)|, the residual's yardstick. The chosen candidate must be the last one
 * evaluated, with its own contact set (held): the one that won the last step is evaluated
 * second, so that when it wins again (a body at rest, one in flight) it need not be evaluated
 * a third time. Returns the merit at the start; the state is that of the optimiser's y. */
static pd_real start_point(pd_ppd_state* s, const pd_particles* p, pd_real* r) {
    pd_descent* d = &s->opt;
    pd_descent_problem pr = problem(s);
    if (s->prm.iteration == PD_PPD_SEMI_ITERATIVE)
        return semi_start_point(s, p, r);
    int star_last = !s->motion_start;
    start_candidate(s, p, !star_last, d->y);
    pd_real r1, m1 = pd_descent_evaluate(d, &pr, &r1);
    memcpy(d->ytrial, d->y, s->n * sizeof(pd_vec3)); /* the first candidate, projected */
    start_candidate(s, p, star_last, d->y);
    if (!star_last)
        contact_set_of(s, d->y);
    pd_real r2, m2 = pd_descent_evaluate(d, &pr, &r2);
    pd_real m_star = star_last ? m2 : m1, m_motion = star_last ? m1 : m2;
    s->r_star = star_last ? r2 : r1;
    int star_wins = m_star <= m_motion;
    s->motion_start = !star_wins;
    if (star_wins == star_last) {
        *r = r2;
        return m2;
    }
    if (star_wins)
        start_candidate(s, p, 1, d->y);
    else {
        memcpy(d->y, d->ytrial, s->n * sizeof(pd_vec3));
        contact_set_of(s, d->y);
    }
    return pd_descent_evaluate(d, &pr, r);
}

/* A crushed start moved back from y0 (in ytrial) toward x along its own motion: the
 * first of x + t (y0 - x), t = 1/2, 1/4, ... 1/2^PPD_SEMI_BACKTRACKS, projected out of the
 * colliders, whose pairs are no closer than PD_CONTACT_FLOOR d_c (only the closest pair found
 * for each: no bond loop, no contact energy, which the evaluation there computes; on the 25K
 * squashed bunny, whose six trials a step all fail, 4-5 % of the step's CPU saved).
 * x itself leaves the whole step's motion to the iteration, and one
 * Jacobi sweep moves a body's translation by M (y - y*) / h^2 over its diagonal, about
 * 1 - rho of the way (1e-4 on a stiff body): measured on a 2.4K ball landing at 1 m/s
 * (h = 1/30 s), which the floor's projection of x + h v crushes onto itself (closest 0), the
 * step from x ended 20 iterations at 1.82 times the converged merit, from x + h v / 2 at 1.011
 * (docs/methods/projective_pd.md, "Why the residual did not fall"); the accurate mode's line
 * search does carry the motion from x, but the same step took 63 iterations to 1e-4 from x and 42
 * from here. Returns 1 with y there. */
#define PPD_SEMI_BACKTRACKS 6
static int semi_start_toward_x(pd_ppd_state* s, const pd_particles* p) {
    pd_descent* d = &s->opt;
    pd_real t = 1;
    for (int k = 0; k < PPD_SEMI_BACKTRACKS; ++k) {
        t *= 0.5;
        for (size_t i = 0; i < s->n; ++i)
            d->y[i] = s->fixed[i] ? s->ystar[i]
                                  : pd_v3_madd(p->pos[i], t, pd_v3_sub(d->ytrial[i], p->pos[i]));
        project_contacts(s, d->y);
        pd_status st = pd_contact_closest(&s->contact, d->y); /* no energy: the evaluation's */
        if (st != PD_OK)
            s->contact_status = st;
        if (s->contact.closest >= PD_CONTACT_FLOOR)
            return 1;
    }
    return 0;
}

/* With contact, a start where some pair is closer than PD_CONTACT_FLOOR d_c (a fast impact
 * puts y* inside the other body) is replaced by the step's start positions x, which the last
 * step left apart: the line search then keeps pairs apart (contact_admissible), as a
 * continuous collision check would; first the points between are tried (semi_start_toward_x:
 * semi_iterative has no line search to carry the body's motion from x, and the accurate
 * mode's carries it at a cost in iterations). Returns the merit
 * at the start; the state is that of the optimiser's y. */
static pd_real contact_start(pd_ppd_state* s, const pd_particles* p, pd_real merit, pd_real* r) {
    if (!s->prm.contact || s->contact.closest >= PD_CONTACT_FLOOR)
        return merit;
    pd_descent* d = &s->opt;
    pd_descent_problem pr = problem(s);
    pd_real closest = s->contact.closest;
    memcpy(d->ytrial, d->y, s->n * sizeof(pd_vec3)); /* the start point, kept */
    if (semi_start_toward_x(s, p))
        return pd_descent_evaluate(d, &pr, r);
    for (size_t i = 0; i < s->n; ++i)
        d->y[i] = s->fixed[i] ? s->ystar[i] : p->pos[i];
    project_contacts(s, d->y);
    pd_real r_x, m_x = pd_descent_evaluate(d, &pr, &r_x);
    if (s->contact.closest > closest) {
        *r = r_x;
        return m_x;
    }
    memcpy(d->y, d->ytrial, s->n * sizeof(pd_vec3));
    contact_set_of(s, d->y);
    return pd_descent_evaluate(d, &pr, r);
}

/* Whether a pass of the descent stopped at its iteration cap, neither converged nor stuck. */
static int stopped_at_cap(const pd_ppd_state* s, const pd_descent_report* part, int cap,
                          pd_real r0) {
    return part->iterations == cap && !part->line_search_failures &&
           part->residual > s->prm.tolerance * r0;
}

/* How far the lagged problem is from the one at the iterate: the change of friction's limits a
 * renewal at y would make (N, 2-norm over the particles), which bounds the change of the
 * residual at y that the renewal makes. */
static pd_real friction_lag_error(pd_ppd_state* s) {
    return pd_collider_contact_friction_change(&s->cc, s->opt.y, s->opt.r);
}

/* After friction's limits changed: the merit evaluated again at the iterate (another
 * function now), its L-BFGS pairs dropped (a sticking contact's tangential spring, stiffness
 * up to 2 mu lambda / eps, is in their curvature with the old lambda). */
static pd_real after_renewal(pd_ppd_state* s, pd_real* r) {
    pd_descent* d = &s->opt;
    pd_descent_problem pr = problem(s);
    project_contacts(s, d->y); /* a new no-slip contact is put at its anchor */
    d->keep_history = 0;
    return pd_descent_evaluate(d, &pr, r);
}

/* The descent with friction's normal forces lagged (Li et al. 2020 Sec. 5). The lagged lambda
 * (the start point's, implicit_step.c) is renewed from an iterate when the renewal would change
 * the residual there by more than the residual itself (friction_lag_error > |r|): the
 * iterations then solve a problem farther from the one at their own iterate than they are
 * from its solution. Checked after every iteration, at most PPD_FRICTION_IN_SOLVE times a step.
 * A body placed on a slope or landing needs it (its start knows only the touching particles'
 * own weight: a block released on a 35 degree plane takes 1.00 N there, 4.02 N converged);
 * one at rest does not (the dress's heap: renewed after the first iteration whatever the
 * change, the worst step ended at 0.0633; docs/methods/projective_pd.md, lambda). When the
 * solve converges with other normal forces than it used (an impact, a body that bounces), they
 * are renewed and the iterations go on, at most PPD_FRICTION_REFRESHES times; all within the
 * step's iteration budget. */
static pd_status solve_with_friction(pd_ppd_state* s, const pd_particles* p, pd_real merit,
                                     pd_real r, pd_real r0, int budget) {
    pd_descent* d = &s->opt;
    pd_descent_problem pr = problem(s);
    pd_descent_report part;
    for (int renewals = 0, in_solve = 0;;) {
        int left = budget - s->report.iterations;
        /* one iteration at a time while a renewal on the way may come */
        int watch = s->cc.colliders->count && in_solve < PPD_FRICTION_IN_SOLVE && left > 1;
        d->def.iterations = watch ? 1 : left;
        pd_status st = pd_descent_solve(d, &pr, merit, r, r0, &part);
        pd_descent_report_add(&s->report, &part);
        if (st == PD_OK)
            st = s->contact_status; /* a contact buffer that could not grow */
        if (st != PD_OK)
            return st;
        r = part.residual;
        merit = part.merit;
        if (s->report.iterations >= budget)
            return PD_OK;
        if (part.line_search_failures && s->inverted && !s->fix_off) {
            /* the fix's force (no gradient) stopped the descent: the energy takes over for
             * the rest of the step (docs/methods/projective_pd.md, "Inversion fix") */
            s->fix_off = 1;
            merit = pd_descent_evaluate(d, &pr, &r);
            continue;
        }
        if (!s->cc.colliders->count)
            return PD_OK;
        if (watch && stopped_at_cap(s, &part, 1, r0)) {
            d->keep_history = 1; /* the same descent goes on */
            if (friction_lag_error(s) > r) {
                friction_limits(s, p);
                merit = after_renewal(s, &r);
                in_solve++;
            }
            continue;
        }
        if (!friction_limits(s, p) || ++renewals > PPD_FRICTION_REFRESHES)
            return PD_OK;
        merit = after_renewal(s, &r);
    }
}

/* The Jacobi sweep of the global system at y (z = D^-1 S r, blocked directions filtered) and
 * the accelerated iterate: y <- omega (y - z - yprev) + yprev, yprev <- the old y; projected
 * out of the colliders (Wang 2015 Eq. 12-13 on He 2017's local/global iteration). */
typedef struct ppd_semi_ctx {
    pd_descent* d;
    pd_real omega;
} ppd_semi_ctx;

static void semi_kernel(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const ppd_semi_ctx* c = vctx;
    pd_descent* d = c->d;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 y = d->y[i], yhat = pd_v3_sub(y, d->dir[i]);
        d->y[i] = pd_v3_madd(d->yold[i], c->omega, pd_v3_sub(yhat, d->yold[i]));
        d->yold[i] = y;
    }
}

static pd_status semi_update(pd_ppd_state* s, const pd_descent_problem* pr, pd_real omega) {
    pd_descent* d = &s->opt;
    void* cctx = pr->constraint_ctx;
    pr->filter(cctx, d->r, s->n);
    pd_status st = pr->precondition(pr->ctx, d->r, d->dir);
    if (st != PD_OK)
        return st;
    pr->filter(cctx, d->dir, s->n);
    ppd_semi_ctx c = {d, omega};
    pd_parallel_for(s->n, PPD_GRAIN, semi_kernel, &c);
    pr->project(cctx, d->y);
    return PD_OK;
}

/* Back to the last energy check's iterate (ytrial), the acceleration restarted with rho lowered
 * by 10 % (a rho too large for the nonlinear iteration overshoots again at the same rho);
 * returns the merit there, evaluated anew (the contacts and g are the iterate's). */
static pd_real semi_restart(pd_ppd_state* s, const pd_descent_problem* pr, pd_semi_iterative* w,
                            pd_real* r) {
    pd_descent* d = &s->opt;
    memcpy(d->y, d->ytrial, s->n * sizeof(pd_vec3));
    memcpy(d->yold, d->y, s->n * sizeof(pd_vec3));
    *w = pd_semi_iterative_start(0.9 * w->rho);
    s->semi_restarts++;
    return pd_descent_evaluate(d, pr, r);
}

/* The world's observer of iterations (pd_world_observe_iterations), as the accurate mode's
 * descent calls it: the iteration and |r| relative to the step's yardstick r0. */
static void semi_observe(const pd_descent* d, int it, pd_real r, pd_real r0) {
    if (d->on_iteration)
        d->on_iteration(d->on_iteration_ctx, it, r0 > 0 ? r / r0 : r);
}

/* solver.iteration semi_iterative: He 2017's local/global iteration as the paper runs it (one
 * local step, one Jacobi sweep of the global system per outer iteration), the outer iterates
 * Chebyshev-accelerated (optim/semi_iterative.h) with rho = semi_rho or the Gershgorin bound of
 * the Jacobi iteration. Every semi_check iterations the merit of Eq. 12 (the local step computes
 * it with the gradient, in the same loop) is compared with the last check's: a rise restarts
 * from there (semi_restart), which, like every iteration, counts against the budget. Contact and
 * friction as in the accurate mode: iterates projected out of the colliders, blocked normals
 * filtered from r and from the sweep, friction's force in r with the limits of the step's start
 * (not renewed within the step). Stops at the budget or at |r| <= tolerance r0. */
static pd_status solve_semi(pd_ppd_state* s, pd_real merit, pd_real r, pd_real r0, int budget) {
    pd_descent* d = &s->opt;
    pd_descent_problem pr = problem(s);
    pd_real rho = s->prm.semi_rho > 0 ? s->prm.semi_rho : s->prm.contact ? s->rho_contact : s->rho;
    pd_semi_iterative w = pd_semi_iterative_start(rho);
    pd_real checked = merit;
    s->semi_merit0 = merit;
    memcpy(d->yold, d->y, s->n * sizeof(pd_vec3));
    memcpy(d->ytrial, d->y, s->n * sizeof(pd_vec3)); /* the last check's iterate */
    int it = s->report.iterations;
    while (it < budget && r > s->prm.tolerance * r0) {
        pd_status st = semi_update(s, &pr, pd_semi_iterative_next(&w));
        if (st != PD_OK)
            return st;
        merit = pd_descent_evaluate(d, &pr, &r);
        semi_observe(d, ++it, r, r0);
        if (w.k % s->prm.semi_check)
            continue;
        if (merit > checked && it < budget) {
            merit = semi_restart(s, &pr, &w, &r);
            semi_observe(d, ++it, r, r0);
            continue;
        }
        checked = merit;
        memcpy(d->ytrial, d->y, s->n * sizeof(pd_vec3));
    }
    s->report.iterations = it;
    s->report.residual = r;
    s->report.merit = merit;
    s->semi_rho_used = w.rho;
    return s->contact_status;
}

/* The step's solve in solver.plastic_passes parts, the iteration budget split evenly, with the
 * plastic flow (Sec. 5) at the iterate between them: the reference vectors then follow the
 * flow within the step, and the solve sees a stress bounded by the yield surface rather than
 * the step's elastic trial stress (which resists flow like a viscosity of about G h). The energy
 * changes at each correction: its L-BFGS pairs are dropped. One pass is the paper's order. */
static pd_status solve_with_plastic_passes(pd_ppd_state* s, struct pd_world* w, pd_real merit,
                                           pd_real r, pd_real r0) {
    int passes = s->plastic ? s->prm.plastic_passes : 1;
    s->report = (pd_descent_report){.shortest_step = 1};
    s->semi_restarts = 0;
    for (int k = 1;; ++k) {
        int budget = s->prm.iterations * k / passes;
        pd_status st = s->prm.iteration == PD_PPD_SEMI_ITERATIVE
                           ? solve_semi(s, merit, r, r0, budget)
                           : solve_with_friction(s, &w->particles, merit, r, r0, budget);
        if (st != PD_OK || k == passes)
            return st;
        pd_error err = {0};
        double t0 = pd_now();
        st = pd_ppd_plastic_flow(s, w, s->opt.y, 0, &err);
        s->t_plastic += pd_now() - t0;
        if (st != PD_OK)
            return st;
        pd_descent_problem pr = problem(s);
        s->opt.keep_history = 0;
        merit = pd_descent_evaluate(&s->opt, &pr, &r);
    }
}

/* The stages peridot_bench reports (docs/benchmarks.md), He 2017 Table 1's where it has them:
 * local and global (t_e together), density (t_rho: static friction, density constraints,
 * repulsion), viscosity (Sec. 6, apart from t_rho), redistribution (t_d, Eq. 21-24) and
 * plastic (t_p, Sec. 5 with the rebuild it needs). */
static const char* const k_stages[] = {"local",     "global",         "density",
                                       "viscosity", "redistribution", "plastic"};

/* The hooks of the shared implicit step (optim/implicit_step.h): the start point, a start moved
 * off a contact between bodies, the solve with its plastic passes, and the density
 * corrections of granular and fluid particles before the write-back. */
typedef struct ppd_step_hooks {
    pd_ppd_state* s;
    struct pd_world* w;
    pd_real r0; /* the residual's yardstick: max(|r(y*)|, the force scale) */
} ppd_step_hooks;

static pd_real hook_start_point(void* ctx, pd_real* r) {
    ppd_step_hooks* h = ctx;
    return start_point(h->s, h->s->step->particles, r);
}

static pd_status hook_before_solve(void* ctx, pd_real* merit, pd_real* r) {
    ppd_step_hooks* h = ctx;
    *merit = contact_start(h->s, h->s->step->particles, *merit, r);
    return PD_OK;
}

/* The residual's yardstick: |r(y*)|, or the start's |r| when that is smaller, floored by the
 * force scale. y* of a pinned stiff body shears the layer beside the pins by h^2 g: the 1.8K
 * cantilever of bench peers_cantilever (E 1e7 Pa, h = 1/30 s) starts at x with |r| = its
 * weight, 4.8e-5 of |r(y*)|, so against |r(y*)| alone every step stopped before its first
 * iteration and the beam never sagged (both modes). Never looser than |r(y*)|. */
static pd_status hook_solve(void* ctx, pd_real merit, pd_real r, pd_real force_scale) {
    ppd_step_hooks* h = ctx;
    h->r0 = fmax(fmin(h->s->r_star, r), force_scale);
    return solve_with_plastic_passes(h->s, h->w, merit, r, h->r0);
}

static void hook_after_solve(void* ctx) {
    ppd_step_hooks* h = ctx;
    pd_ppd_state* s = h->s;
    double t0 = pd_now();
    pd_ppd_granular_correct(s, h->w, s->opt.y); /* Sec. 7.2 and 8 */
    /* The corrections know the colliders' share of the density but not their contacts: a no_slip
     * contact would creep along the floor by what they move it each step (a sand layer slid as a
     * block at 10 degrees; a honey dome glided). Held contacts go back to their anchors, the
     * rest out of the solids, as every trial of the solve (nothing to undo without them). */
    if (s->granular)
        project_contacts(s, s->opt.y);
    /* a fluid's viscosity is timed inside it, and apart */
    s->t_density = pd_now() - t0 - s->t_viscosity;
}

/* A pin that let go makes pairs of two formerly pinned particles eligible: the kept contact
 * candidates (contact.keep_candidates) are then found anew. */
static void contact_follows_pins(pd_ppd_state* s, const pd_particles* p) {
    size_t pinned = 0;
    for (size_t i = 0; i < s->n; ++i)
        pinned += (p->flags[i] & PD_P_CONSTRAINED) != 0;
    if (pinned != s->contact_pinned)
        pd_contact_particles_reordered(&s->contact);
    s->contact_pinned = pinned;
}

static pd_status advance(pd_ppd_state* s, struct pd_world* w, pd_step_stats* stats) {
    pd_particles* p = s->step->particles;
    s->t_local = s->t_global = s->t_density = s->t_plastic = 0;
    s->t_viscosity = s->t_redistribution = s->t_bond_forces = 0;
    s->local_evaluations = 0;
    s->fix_off = 0;
    s->contact_status = PD_OK;
    pd_error err = {0};
    pd_status st = s->system_stale ? pd_ppd_build_system(s, w, &err) : PD_OK; /* no renewal */
    if (st == PD_OK)
        st = pd_ppd_plan_local_step(s, w); /* planned when the families changed */
    if (st != PD_OK)
        return st;
    contact_follows_pins(s, p);
    pd_ppd_granular_prepare(s, w);              /* before the start points' evaluations */
    if ((st = pd_ppd_return_begin(s)) != PD_OK) /* plastic_return in_solve */
        return st;
    s->opt.def.secant_pairs = s->ret_active; /* r = 0 solved where the return makes no gradient */
    ppd_step_hooks hooks = {s, w, 0};
    pd_implicit_step implicit = {.ctx = &hooks,
                                 .opt = &s->opt,
                                 .problem = problem(s),
                                 .cc = &s->cc,
                                 .contact = s->prm.contact ? &s->contact : NULL,
                                 .ystar = s->ystar,
                                 .gradient = s->g,
                                 .start_point = hook_start_point,
                                 .before_solve = hook_before_solve,
                                 .solve = hook_solve,
                                 .after_solve = hook_after_solve};
    st = pd_implicit_step_run(&implicit, s->step);
    int returned = pd_ppd_return_end(s); /* the last iterate's return is the step's */
    if (st != PD_OK)
        return st;
    pd_real r0 = hooks.r0;
    double t0 = pd_now();
    pd_ppd_fluid_redistribute(s, w); /* Sec. 6 */
    s->t_redistribution = pd_now() - t0;
    t0 = pd_now();
    /* Sec. 5, at the step's new positions (in_solve: what moved after the solve) */
    st = pd_ppd_plastic_flow_at_step_end(s, w, p->pos, returned, &err);
    s->t_plastic += pd_now() - t0;
    if (st != PD_OK)
        return st;
    s->last_residual = s->report.residual / r0;
    s->last_force_scale = r0;
    stats->iterations = s->report.iterations;
    stats->residual = s->last_residual;
    if (s->report.iterations >= s->prm.iterations && s->last_residual > 10 * s->prm.tolerance)
        stats->unconverged_by = s->last_residual / s->prm.tolerance;
    stats->energy = s->report.merit; /* the last pass's E at the accepted end iterate */
    const double seconds[] = {s->t_local,     s->t_global,         s->t_density,
                              s->t_viscosity, s->t_redistribution, s->t_plastic};
    pd_step_stats_stages(stats, k_stages, seconds, 6);
    stats->t_bond_forces = s->t_bond_forces;
    stats->local_evaluations = s->local_evaluations;
    stats->bonds = s->fam.bond_count;
    return PD_OK;
}

static pd_status ppd_step(void* state, struct pd_world* w, const pd_step_context* ctx,
                          pd_step_stats* stats) {
    pd_ppd_state* s = state;
    s->step = ctx;
    pd_status st = advance(s, w, stats);
    s->step = NULL;
    return st;
}

static void ppd_destroy(void* state) {
    pd_ppd_destroy_state(state);
}

/* Whether a material of the scene flows (plastic, granular, a fluid): its families keep their
 * opposite bonds and editable reference vectors. */
static int any_material_flows(const pd_scene* scene) {
    for (int m = 0; m < scene->material_count; ++m) {
        const pd_material_def* mat = &scene->materials[m];
        const pd_ppd_material_params* mp = (const pd_ppd_material_params*)mat->method_params;
        if (mat->plasticity != PD_PLASTICITY_NONE || mp->granular || mp->fluid)
            return 1;
    }
    return 0;
}

/* Whether some material is granular or a fluid: the density constraints' arrays. */
static int any_material_granular(const pd_scene* scene) {
    for (int m = 0; m < scene->material_count; ++m) {
        const pd_ppd_material_params* mp =
            (const pd_ppd_material_params*)scene->materials[m].method_params;
        if (mp->granular || mp->fluid)
            return 1;
    }
    return 0;
}

/* Whether some material has contact friction (the contact's friction pairs). */
static int any_material_has_friction(const pd_scene* scene) {
    for (int m = 0; m < scene->material_count; ++m)
        if (((const pd_ppd_material_params*)scene->materials[m].method_params)->contact_friction >
            0)
            return 1;
    return 0;
}

/* Whether some material is plastic (the in-solve plastic return's arrays). */
static int any_material_plastic(const pd_scene* scene) {
    for (int m = 0; m < scene->material_count; ++m)
        if (scene->materials[m].plasticity != PD_PLASTICITY_NONE)
            return 1;
    return 0;
}

/* The hash grid of a search over the particles (neighbor/hash_grid.c): sorted and sorted_pos
 * grown by a quarter, the cell table of 2 n starts grown by a quarter (the buckets are kept in
 * the rows' counts). */
#define PPD_GRID_BYTES (1.25 * (sizeof(uint32_t) + sizeof(pd_vec3)) + 2.5 * sizeof(uint32_t))
/* The contact's grid (src/contact, lean): sorted, a cell table of n / 2 starts. */
#define PPD_CONTACT_GRID_BYTES (1.25 * sizeof(uint32_t) + 0.625 * sizeof(uint32_t))

/* What projective_pd holds a particle between steps, array by array as allocated (the 25K
 * bunny's table in docs/benchmarks.md): `bonds` a particle. */
static size_t ppd_bytes_per_particle(const pd_scene* scene, double bond_fraction) {
    const pd_ppd_params* prm = scene->solver_params;
    double bonds = bond_fraction * 4.2 * prm->horizon * prm->horizon * prm->horizon + 1;
    int flows = any_material_flows(scene), granular = any_material_granular(scene);
    /* per bond: the family's j and c (single precision); kb (single precision) where a
     * material flows or changes (pd_ppd_bond_kb); where a material flows, the family's
     * opposite bond and X, and the rebuild's surface correction */
    double per_bond = sizeof(uint32_t) + sizeof(float);
    if (flows || pd_ppd_materials_change(scene))
        per_bond += sizeof(float);
    if (flows)
        per_bond += sizeof(uint32_t) + sizeof(pd_vec3) + sizeof(pd_real);
    /* a renewing body: the family before the last renewal, kept for the next to write into
     * (j, its opposite bond and X), and an eighth more room in the renewed arrays (allocated,
     * not touched: pd_family_renew_into) */
    if (flows)
        per_bond = 1.125 * (per_bond + 2 * sizeof(uint32_t) + sizeof(pd_vec3));
    /* per particle: the family's offsets and w, the scatter plan's order and task; kinv (upper
     * triangle), diag, ystar, g, plastic strain and density (made when the fields are asked
     * for: counted, as a run that writes them holds them), three flags (planar, fixed,
     * weighted); the Chebyshev scratch is the optimiser's (share_sweep_scratch) */
    double per_particle = 2 * sizeof(uint32_t) + sizeof(pd_real) + 2 * sizeof(uint32_t) +
                          sizeof(pd_ppd_sym3) + 3 * sizeof(pd_real) + 2 * sizeof(pd_vec3) + 3;
    if (flows) /* the spare family's offsets and w, the rebuild's stale marks */
        per_particle += sizeof(uint32_t) + sizeof(pd_real) + 1;
    /* the optimiser's y, r, ytrial, yold, rold, dir, work and its L-BFGS pairs in single
     * precision (none in semi_iterative, which runs no descent) */
    size_t pairs = prm->iteration == PD_PPD_SEMI_ITERATIVE ? 0 : (size_t)prm->history;
    per_particle += 7 * sizeof(pd_vec3) + 2 * pairs * sizeof(pd_descent_vec3f);
    /* the collider contact, for the features its colliders use */
    per_particle += pd_collider_contact_bytes(pd_collider_contact_features(
        scene->colliders, scene->collider_count, sizeof(pd_collider_def)));
    /* granular matter and fluids: vscale, the density constraints' kernel radius, rest sum,
     * inverse mass, lambda, pressure, hold and wall spacing, the fluid's nu and delta, the
     * constraints' kind */
    if (granular)
        per_particle += 10 * sizeof(pd_real) + 1;
    /* a flowing body's renewal grid, kept between renewals with its rows, and its Verlet
     * list: the positions of the last search, the offsets and every pair within the horizon
     * plus the skin */
    if (flows) {
        double reach = (prm->horizon + PPD_VERLET_SKIN) / prm->horizon;
        double listed = bonds * reach * reach * reach;
        per_particle += PPD_GRID_BYTES + pd_hash_grid_kept_row_bytes(listed) + sizeof(pd_vec3) +
                        sizeof(uint32_t) + listed * sizeof(uint32_t);
    }
    /* plastic_return in_solve: the step's start references (a quarter spare) and shape
     * tensors, the strain increments and the moved flags */
    if (prm->plastic_return == PD_PPD_RETURN_IN_SOLVE && any_material_plastic(scene))
        per_bond += 1.25 * sizeof(pd_vec3),
            per_particle += sizeof(pd_ppd_sym3) + sizeof(pd_real) + 1;
    double direct = prm->global_solve == PD_PPD_DIRECT ? bonds * 40 : 0; /* factor fill-in */
    /* src/contact: diagonal (its gradient added into g), the positions the candidates were
     * found at (single precision), the list's offsets and, where a material has friction, the
     * friction pairs' offsets; its candidate list, its grid's rows and its pair stiffnesses of
     * the eligible candidates only (the grid drops the bonded ones): about 4 a particle (the
     * 25K bunny's landing: 3.9 at its most), a quarter spare; its lean grid */
    double eligible = 1.25 * 4;
    double contact = prm->contact
                         ? 3 * sizeof(float) + sizeof(pd_real) +
                               (1 + any_material_has_friction(scene)) * sizeof(uint32_t) +
                               eligible * sizeof(uint32_t) + PPD_CONTACT_GRID_BYTES +
                               pd_hash_grid_kept_row_bytes(eligible) + eligible * sizeof(pd_real)
                         : 0;
    return (size_t)ceil(bonds * per_bond + per_particle + direct + contact);
}

/* What projective_pd publishes beyond the world's attributes. */
static const pd_field_info k_fields[] = {
    {PD_ATTR_PLASTIC_STRAIN,
     {"plastic_strain"},
     1,
     PD_FIELD_REAL,
     "1",
     "Accumulated plastic strain (Sec. 5): the sum over the steps of the weighted RMS of the "
     "bonds' plastic displacement over their length; 0 where a particle was never plastic (one "
     "a material change turned elastic keeps what it accumulated)."},
    {PD_ATTR_DENSITY,
     {"density"},
     1,
     PD_FIELD_REAL,
     "kg/m^3",
     "Kernel density (Poly6 over the particle's family, Sec. 7.1) relative to an interior "
     "family at rest (plus the colliders' share of its kernel), times the material's density; "
     "at the end of the frame's last step."},
};

/* The plastic strain, or zeros where no material is plastic; the density computed at the
 * world's positions (the end of the last step). The arrays are made at the first request. The
 * density's computation borrows the Chebyshev scratch: asked for within a step (an iteration
 * observer), the density of the last request is given, not computed, and none (NULL:
 * pd_world_fields fails) when there was no request since the particles were last reordered
 * (its array would be in their old order) or none at all (docs/methods/projective_pd.md). */
static const void* ppd_publish_fields(void* state, int k) {
    pd_ppd_state* s = state;
    if (k == 0 && !s->plastic_strain && !s->zero_strain)
        s->zero_strain = PD_NEW_ARRAY(pd_real, s->n + 1); /* zeroed */
    if (k == 0)
        return s->plastic_strain ? s->plastic_strain : s->zero_strain;
    if (k != 1 || s->step)
        return k == 1 && s->density_in_order ? s->density : NULL;
    if (!s->density && !(s->density = PD_NEW_ARRAY(pd_real, s->n + 1)))
        return NULL;
    pd_ppd_publish_density(s, s->world);
    s->density_in_order = 1;
    return s->density;
}

const pd_solver_vtable pd_projective_pd_solver = {
    .name = "projective_pd",
    .paper = "He, Wang, Wu 2017, Projective Peridynamics",
    .params = &pd_ppd_param_table,
    .material_params = &pd_ppd_material_table,
    .check_material = pd_ppd_check_material,
    .materials = &pd_ppd_material_support,
    .fields = k_fields,
    .field_count = 2,
    .publish_fields = ppd_publish_fields,
    .create = pd_ppd_create,
    .destroy = ppd_destroy,
    .step = ppd_step,
    .on_reorder = pd_ppd_on_reorder,
    .persistent = pd_ppd_persistent,
    .save = pd_ppd_save,
    .restored = pd_ppd_restored,
    .reserve_bonds = pd_ppd_reserve_bonds,
    .auto_time_step = PD_PPD_AUTO_DT,
    .on_time_step = pd_ppd_on_time_step,
    .renew_families = pd_ppd_renew_families,
    .break_bonds = pd_ppd_break_bonds,
    .change_materials = pd_ppd_change_materials,
    .check_body_material = pd_ppd_check_body_material,
    .contact_in_solve = 1,
    .bytes_per_particle = ppd_bytes_per_particle,
    .capabilities = PD_CAP_ELASTIC | PD_CAP_SHELL | PD_CAP_ROD | PD_CAP_FLUID | PD_CAP_CONTACT |
                    PD_CAP_COLLIDER_FRICTION,
};

/* For tests: the elastic energy (+ dilatation, + contact between bodies when on) at y, its
 * exact gradient in s->g (without the inversion fix, whose force is no gradient). */
pd_real pd_ppd_elastic_energy(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags) {
    memcpy(s->ystar, y, s->n * sizeof(pd_vec3));
    int fix = s->prm.inversion_fix;
    s->prm.inversion_fix = 0;
    pd_real r, e = evaluate_at(s, y, flags, 0, s->opt.r, &r); /* y* = y: no inertia */
    s->prm.inversion_fix = fix;
    return e;
}
