/* Projective peridynamics, plasticity: He, Wang, Wu 2017 Sec. 5 (Eq. 14-19).
 *
 * After a step, a particle whose bond strains leave the Drucker-Prager surface
 * sqrt(J2) <= A + B I1 (Eq. 14, A and B from the friction angle and cohesion by Eq. 15) moves
 * its reference vectors: X <- R X + D_p (Sec. 5), R the rotation of F's polar decomposition,
 * D = Y - R X the co-rotational displacement state and D_p = alpha D_iso + beta D_dev its
 * plastic part (Eq. 18-19). `von_mises` is the cohesion-only limit: A = yield_stress / sqrt(3),
 * B = 0. Three readings where the paper's text is loose and one departure, each stated in
 * docs/methods/projective_pd.md:
 * - Units of Eq. 17. With e = |Y|/|X| - 1 the bond strains, e_iso their weighted mean and
 *   e_dev = e - e_iso, the invariants are taken as I1 = -9 K e_iso and J2 = 15 G^2 <e_dev^2>
 *   (K, G the material's bulk and shear moduli, < > the family's weighted mean): for a
 *   homogeneous small strain of an isotropic family these are -tr sigma and the J2 of the
 *   Cauchy stress (<e_dev^2> = 2/15 eps_dev : eps_dev). The paper's -lambda e_iso and
 *   mu int e_dev^2 have the same form; as printed, sqrt(J2) is not a stress while A is.
 * - Departure (solver.plastic_invariants; auto: for plastic solids): e_iso and <e_dev^2>
 *   from the principal stretches of the family's F, as an isotropic family's bonds would show
 *   them. A cubic family's bond strains are not isotropic (along a lattice axis sqrt(J2) reads
 *   8 % high, and clay yielded 7.7 % below Mohr-Coulomb's q / p in triaxial compression);
 *   "bond_strains" keeps Eq. 16-17 as printed, as granular matter does under auto in the
 *   paper's order (plastic_return after_solve; in_solve it reads F) and fluids (Sec. 6) always.
 * - Eq. 18's first case, beta = sqrt(J2 - A - B I1) / sqrt(J2), read as
 *   (sqrt(J2) - A - B I1) / sqrt(J2): the text requires beta = 0 where A + B I1 = sqrt(J2), and
 *   this beta scales the deviatoric strain back onto the surface (radial return).
 * - D_iso of Eq. 19 is the isotropic part of the displacement state, e_iso R X: the literal
 *   weighted mean of the vectors D vanishes on a symmetric family.
 * - Granular matter: I1 adds 3 p, p the pressure the density constraints carried in the last
 *   step (projective_pd_granular.c). Eq. 14's I1 is that of the Cauchy stress, and where the
 *   constraints hold the grains apart the bonds carry little of the weight: with the bonds'
 *   I1 alone a sand layer tilted 5 degrees below its friction angle slid 6-14 mm in 0.3 s. */
#include <math.h>
#include <string.h>

#include "constitutive/elastic_constants.h"
#include "constitutive/drucker_prager.h"
#include "core/alloc.h"
#include "math/svd3.h"
#include "parallel/parallel.h"
#include "sph/kernels.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "world/world.h"

#define PLASTIC_GRAIN 512 /* as projective_pd.c: one partial sum per chunk */
/* Corrections per particle and step, and how far outside the surface the last may leave it */
#define PLASTIC_RETURNS    4
#define PLASTIC_RETURN_TOL 1e-3

void pd_ppd_yield_constants(const pd_material_def* m, pd_ppd_material* out) {
    pd_elastic el = pd_material_elastic(m);
    out->bulk = el.K;
    out->shear = el.mu;
    out->plastic =
        m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER || m->plasticity == PD_PLASTICITY_VON_MISES;
    out->yield_a = out->yield_b = 0;
    if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER) { /* Eq. 14-15, the material's cone */
        pd_dp_cone cone = pd_dp_material_cone(m);
        out->yield_a = cone.a;
        out->yield_b = cone.b;
    } else if (m->plasticity == PD_PLASTICITY_VON_MISES) {
        out->yield_a = pd_von_mises_cone(m->yield_stress).a;
    }
}

/* The strain state of particle i's family at y: e_iso, I1 and sqrt(J2) (Eq. 16-17). */
typedef struct strain_state {
    pd_real e_iso, i1, sqrt_j2;
    pd_real shear; /* the shear modulus sqrt(J2) was taken with (Pa) */
} strain_state;

/* e_iso and <e_dev^2> as Eq. 16-17 print them: the weighted mean and spread of the bond
 * strains e = |Y|/|X| - 1. On a cubic family the spread is not isotropic: along a lattice axis
 * it reads 8 % above a homogeneous strain's 2/15 eps_dev : eps_dev. Returns 0 on an empty
 * family. */
static int bond_strain_moments(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, pd_real* e_iso,
                               pd_real* dev2) {
    const pd_family* f = &s->fam;
    pd_real sw = 0, se = 0, se2 = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_real e = pd_v3_len(pd_v3_sub(y[f->j[b]], y[i])) / pd_v3_len(pd_family_xi(f, i, b)) - 1;
        pd_real wv = f->w[i] * s->volume[f->j[b]];
        sw += wv, se += wv * e, se2 += wv * e * e;
    }
    if (!(sw > 0))
        return 0;
    *e_iso = se / sw;
    *dev2 = fmax(se2 / sw - *e_iso * *e_iso, 0);
    return 1;
}

/* The range of i's bond strains e = |Y|/|X| - 1. */
static void bond_strain_range(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, pd_real* lo,
                              pd_real* hi) {
    const pd_family* f = &s->fam;
    *lo = INFINITY, *hi = -INFINITY;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_real e = pd_v3_len(pd_v3_sub(y[f->j[b]], y[i])) / pd_v3_len(pd_family_xi(f, i, b)) - 1;
        *lo = fmin(*lo, e), *hi = fmax(*hi, e);
    }
}

/* The same moments from the family's deformation gradient (beyond the paper, the default for
 * solids): with eps_k = s_k - 1 the principal strains of F (first order in the bond strains, as
 * e), e_iso = tr(eps) / 3 and <e_dev^2> = 2/15 eps_dev : eps_dev, what an isotropic family's
 * bonds show; exact for a homogeneous strain on any family. A renewed family's F is a least-
 * squares fit that can stretch far beyond any of its bonds (Eq. 20's references need not agree),
 * so each s_k - 1 is held within the range of the bond strains, where a homogeneous strain's lie
 * (unclamped, two colliding clay bunnies blew up after the impact: he2017_fig9). An inverted or
 * flat F has no principal strains: the bond strains stand in. */
static int gradient_strain_moments(const pd_ppd_state* s, const pd_vec3* y, uint32_t i,
                                   pd_real* e_iso, pd_real* dev2) {
    pd_mat3 F = pd_ppd_deformation_gradient(s, y, i), u, v;
    if (!(pd_m3_det(F) > 0) || s->fam.offsets[i] == s->fam.offsets[i + 1])
        return bond_strain_moments(s, y, i, e_iso, dev2);
    pd_real lo, hi;
    bond_strain_range(s, y, i, &lo, &hi);
    pd_vec3 sv;
    pd_svd3(F, &u, &sv, &v);
    sv = pd_v3(fmin(fmax(sv.x - 1, lo), hi), fmin(fmax(sv.y - 1, lo), hi),
               fmin(fmax(sv.z - 1, lo), hi)); /* the principal strains */
    pd_real mean = (sv.x + sv.y + sv.z) / 3;
    pd_vec3 d = pd_v3(sv.x - mean, sv.y - mean, sv.z - mean);
    *e_iso = mean;
    *dev2 = 2.0 / 15.0 * pd_v3_len2(d);
    return 1;
}

/* A fluid (Sec. 6) keeps Eq. 16-17: its renewed families hold their strain in the bonds'
 * disorder, which F's affine fit does not see (read from F, an elastic cube turned fluid stood
 * instead of slumping: material_change.c). Granular matter (Sec. 7) keeps them under `auto`
 * in the paper's order: read from F, settled sand compacted to 2091 kg/m^3 (bound 1632) and wet
 * sand stood only 0.87 spacings above dry (granular.c). With the return in the solve it reads
 * F: the density penalty's pressure alternates by row in a settled layer, and from the bonds
 * alone the uncompressed rows' I1 let a layer tilted 5 degrees below its angle slide 2.3 mm in
 * 0.3 s (repose.c; from F 0.77 mm, 1.44 since the repeated corrections read F right). */
static int granular_invariants(const pd_ppd_state* s) {
    return s->prm.plastic_return == PD_PPD_RETURN_IN_SOLVE ? PD_PPD_INVARIANTS_DEFORMATION_GRADIENT
                                                           : PD_PPD_INVARIANTS_BOND_STRAINS;
}

static int strain_moments(const pd_ppd_state* s, const pd_ppd_material* m, const pd_vec3* y,
                          uint32_t i, pd_real* e_iso, pd_real* dev2) {
    int mode = s->prm.plastic_invariants;
    if (mode == PD_PPD_INVARIANTS_AUTO)
        mode = m->granular ? granular_invariants(s) : PD_PPD_INVARIANTS_DEFORMATION_GRADIENT;
    if (m->fluid || mode == PD_PPD_INVARIANTS_BOND_STRAINS)
        return bond_strain_moments(s, y, i, e_iso, dev2);
    return gradient_strain_moments(s, y, i, e_iso, dev2);
}

/* The bulk and shear moduli Eq. 8's energy has where Eq. 25-27 scale lambda and kv by the
 * granular factor vs: the mu term keeps its share, 2 mu (A + 2 B) / 3 of the bulk modulus (10/9
 * G on an isotropic family) and 2 mu B of the shear modulus (2/3 G), the rest scales with vs.
 * Scaling the whole bulk modulus by vs (the paper's order's reading) drops the tension the mu
 * term carries where vs is 0: a layer whose density penalty (in_solve) carried 1500 Pa against
 * its bonds' tension read I1 six times its weight's and stood at 45 degrees with phi 30
 * (plastic_return in_solve, granular.compaction reference_kernel). */
static void moduli_at_granular_factor(const pd_ppd_material* m, pd_real vs, pd_real* bulk,
                                      pd_real* shear) {
    pd_real k_mu = 2 * m->mu * (m->moment_a + 2 * m->moment_b) / 3, g_mu = 2 * m->mu * m->moment_b;
    *bulk = k_mu + vs * (m->bulk - k_mu);
    *shear = g_mu + vs * (m->shear - g_mu);
}

/* The density penalty's pressure the yield check adds to grain i's I1. `own`: its K max(C, 0).
 * `kernel_mean` (yield_pressure): the Shepard mean of the grains' pressures over i's density
 * kernel, sum_j V_j p_j W_ij / sum_j V_j W_ij (Poly6, i included): an SPH pressure pushes a grain
 * with the pressures of its whole neighbourhood (the penalty's force on i is sum_k V_k p_k
 * grad_i C_k), and the stress it carries at i is that field's, not i's own. In a settled
 * lattice layer the penalty compresses alternate rows (817, 0, 440, 0, 0 Pa from the floor up),
 * whose own pressure is 2-2.5 times the weight above them (docs/methods/projective_pd.md). */
static pd_real yield_pressure(const pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_density_constraint_def* d = &s->dens_def;
    if (s->prm.yield_pressure != PD_PPD_YIELD_PRESSURE_KERNEL_MEAN || !d->offsets ||
        s->prm.plastic_return != PD_PPD_RETURN_IN_SOLVE)
        return s->dens_pressure[i];
    pd_real H = d->radius[i], w0 = pd_sph_poly6(0, H) * d->volume[i];
    pd_real sw = w0, sp = w0 * s->dens_pressure[i];
    for (uint32_t b = d->offsets[i]; b < d->offsets[i + 1]; ++b) {
        uint32_t j = d->nbr[b];
        pd_real w = pd_sph_poly6(pd_v3_len2(pd_v3_sub(y[i], y[j])), H) * d->volume[j];
        sw += w, sp += w * s->dens_pressure[j];
    }
    return sw > 0 ? sp / sw : s->dens_pressure[i];
}

/* The strain state of i at y with `pressure` the density constraints carry (granular: added to
 * I1; yield_pressure). */
static strain_state strain_at(const pd_ppd_state* s, const pd_ppd_material* m, const pd_vec3* y,
                              uint32_t i, pd_real pressure) {
    strain_state out = {0, 0, 0, 0};
    pd_real dev2 = 0;
    if (!strain_moments(s, m, y, i, &out.e_iso, &dev2))
        return out;
    pd_real shear = m->shear;
    if (m->granular && s->prm.plastic_return == PD_PPD_RETURN_IN_SOLVE) {
        pd_real bulk;
        moduli_at_granular_factor(m, pd_ppd_vscale(s, i), &bulk, &shear);
        out.i1 = -9 * bulk * out.e_iso;
    } else {
        out.i1 = -9 * m->bulk * pd_ppd_vscale(s, i) * out.e_iso; /* granular: lambda = k_f + k_c */
    }
    if (m->granular) /* and the pressure the density constraints carry */
        out.i1 += 3 * pressure;
    out.sqrt_j2 = sqrt(15 * dev2) * shear;
    out.shear = shear;
    return out;
}

static strain_state strain_of(const pd_ppd_state* s, const pd_ppd_material* m, const pd_vec3* y,
                              uint32_t i) {
    return strain_at(s, m, y, i, m->granular ? yield_pressure(s, y, i) : 0);
}

pd_mat3 pd_ppd_new_bond_map(const pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_ppd_material* m = &s->mat[s->material[i]];
    strain_state st = strain_of(s, m, y, i);
    pd_real dev = st.sqrt_j2 / (st.shear * sqrt(15.0)); /* ||e_dev|| = sqrt(<e_dev^2>) */
    pd_real lo = fmax(1 + st.e_iso - dev, 1e-3), hi = fmax(1 + st.e_iso + dev, lo);
    pd_mat3 u, v;
    pd_vec3 sv;
    pd_svd3(pd_ppd_deformation_gradient(s, y, i), &u, &sv, &v);
    pd_vec3 inv = pd_v3(1 / fmin(fmax(sv.x, lo), hi), 1 / fmin(fmax(sv.y, lo), hi),
                        1 / fmin(fmax(sv.z, lo), hi));
    return pd_m3_mul(pd_m3_mul(v, pd_m3_diag(inv.x, inv.y, inv.z)), pd_m3_transpose(u));
}

void pd_ppd_stress_invariants(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, pd_real* i1,
                              pd_real* sqrt_j2) {
    strain_state st = strain_of(s, &s->mat[s->material[i]], y, i);
    *i1 = st.i1, *sqrt_j2 = st.sqrt_j2;
}

pd_real pd_ppd_yield_excess(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, pd_real* limit) {
    const pd_ppd_material* m = &s->mat[s->material[i]];
    strain_state st = strain_of(s, m, y, i);
    *limit = m->yield_a + m->yield_b * st.i1;
    return st.sqrt_j2 - *limit;
}

/* flow_fractions' answer for a state past the apex under apex_return after_solve: its deviator
 * returns and nothing else at the iterates, so one correction is the whole of it (the repeated
 * corrections' test, sqrt(J2) within the cone, cannot hold past the apex). */
#define FLOWS_DEVIATOR_ONLY 2

/* alpha and beta of Eq. 18 (beta as radial return, see the file's comment); 0 when inside.
 * With apex_return after_solve a state past the apex at an iterate of the solve (ret_active)
 * has its deviator removed and keeps its isotropic part (alpha = 0), so the solve resists its
 * tension elastically; the correction after the solve (pd_ppd_plastic_flow_at_step_end) takes
 * it to the apex. Returned to the apex at every iterate, a state has no stiffness in further
 * tension, and a transient's tension became volume for good: the indented clay at 30 degrees
 * gained ln J_p 0.18 under the sphere and ended 2.66 mm above its far surface, with the apex
 * after the solve 0.687 mm below it (ln J_p 0.0085 while it took four corrections)
 * (docs/validation.md). */
static int flow_fractions(const pd_ppd_state* s, const pd_ppd_material* m, strain_state st,
                          pd_real* alpha, pd_real* beta) {
    pd_dp_cone cone = {m->yield_a, m->yield_b};
    int flows = pd_dp_radial_return(cone, st.i1, st.sqrt_j2, alpha, beta);
    if (flows && s->ret_active && s->prm.apex_return == PD_PPD_APEX_AFTER_SOLVE &&
        m->yield_a + m->yield_b * st.i1 <= 0) {
        *alpha = 0;
        return FLOWS_DEVIATOR_ONLY;
    }
    return flows;
}

typedef struct flow_ctx {
    pd_ppd_state* s;
    const pd_vec3* y;
    int flowed; /* per chunk in s->partial */
} flow_ctx;

/* X <- R X + alpha D_iso + beta D_dev for every bond of i (Sec. 5); returns the weighted
 * RMS of |D_p| / |X|. */
static pd_real move_references(pd_ppd_state* s, const pd_vec3* y, uint32_t i, pd_mat3 R,
                               strain_state st, pd_real alpha, pd_real beta) {
    pd_family* f = &s->fam;
    pd_real sp = 0, sw = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 rx = pd_m3_mulv(R, f->xi[b]), Y = pd_v3_sub(y[f->j[b]], y[i]);
        pd_vec3 d_iso = pd_v3_scale(rx, st.e_iso);
        pd_vec3 d_dev = pd_v3_sub(pd_v3_sub(Y, rx), d_iso);
        pd_vec3 dp = pd_v3_madd(pd_v3_scale(d_iso, alpha), beta, d_dev);
        pd_real wv = f->w[i] * s->volume[f->j[b]];
        sw += wv, sp += wv * pd_v3_len2(dp) / pd_v3_len2(f->xi[b]);
        f->xi[b] = pd_v3_add(rx, dp);
    }
    return sw > 0 ? sqrt(sp / sw) : 0;
}

/* plastic_return in_solve, cohesionless granular matter: a grain whose family holds fewer than
 * LOOSE_BONDS bonds has left the packing (at horizon 2.01 a lattice grain has 32 inside, 22 on a
 * face and 10 at a corner, 7 when its three bonds of exactly 2 spacings stretch past the
 * horizon): a grain of the spreading front or in flight. Cohesionless sand carries no stress
 * without confinement, so the return takes it to the cone's apex, the stress-free state: its
 * references become its bond vectors (X = Y). Left elastic (a family of 1-2 bonds is planar and
 * never yields; one of 3-4 fits F exactly), such grains kept the strains Eq. 20 gave their new
 * bonds from a few-bond F: in the a = 2 column they were thrown at 2.5-6 m/s (sqrt(g H) is
 * 0.6 m/s), each with 1-4 bonds, and the run gained energy until it blew up
 * (docs/methods/projective_pd.md, "Eq. 28 and the return in the solve"). Its contacts (the
 * density penalty, the repulsion) still act on it. With 8, the corners of a settled layer
 * (7 bonds) were returned at rest.
 * So is a grain whose family spans no volume: its references planar, or its bond vectors at y
 * flat or inverted (det F <= 0), as in a single layer of grains spreading on a floor, which
 * confines nothing across it. Left to the return (which skips both: no rotation, no cone of a
 * flat F), such a grain kept its step-start stress: on a slip floor the front's monolayer (5-7
 * bonds, references nearly coplanar, every Y in the floor's plane) started steps at forces of
 * 55-133 N against 0.8 N elsewhere, and a solve stopped at 4 N (20 iterations) threw grains at 23
 * m/s (kinetic plus potential 0.46 -> 9.1 of the initial potential in a step). */
#define LOOSE_BONDS 5

static int loose_grain(const pd_ppd_state* s, const pd_ppd_material* m, const pd_vec3* y,
                       uint32_t i) {
    if (!m->granular || m->yield_a != 0 || s->fixed[i] ||
        s->prm.plastic_return != PD_PPD_RETURN_IN_SOLVE)
        return 0;
    return s->fam.offsets[i + 1] - s->fam.offsets[i] < LOOSE_BONDS || s->planar[i] ||
           !(pd_m3_det(pd_ppd_deformation_gradient(s, y, i)) > 0);
}

/* X = Y on every bond of i; returns the weighted RMS of |D_p| / |X|, as move_references. */
static pd_real return_to_apex(pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    pd_family* f = &s->fam;
    pd_real sp = 0, sw = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 Y = pd_v3_sub(y[f->j[b]], y[i]);
        pd_real wv = f->w[i] * s->volume[f->j[b]];
        sw += wv, sp += wv * pd_v3_len2(pd_v3_sub(Y, f->xi[b])) / pd_v3_len2(f->xi[b]);
        f->xi[b] = Y;
    }
    return sw > 0 ? sqrt(sp / sw) : 0;
}

/* The plastic correction of particle i; returns its increment of plastic strain, the
 * weighted RMS of |D_p| / |X|. Eq. 18 returns the strain state onto the surface to first
 * order in the strain; the correction is repeated (with R = I: the first one took the
 * rotation out) until it lies within PLASTIC_RETURN_TOL of it (measured on the indented clay
 * of tests/physics/plasticity.c: 4.9 % outside after one correction). Each correction moves
 * the references, so i's shape tensor (X*X)^+ is refreshed before F is read again: with the
 * one of the references before the move, the in-solve layer of repose.c outran its cone. */
static pd_real flow_particle(pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_ppd_material* m = &s->mat[s->material[i]];
    pd_real alpha, beta, dp = 0;
    if (loose_grain(s, m, y, i)) {
        dp = return_to_apex(s, y, i);
        pd_ppd_shape_tensor(s, i);
        return dp;
    }
    if (!m->plastic || s->planar[i] || s->fixed[i])
        return 0;
    /* the pressure at y, the same for every correction (kernel_mean: a loop over neighbours) */
    pd_real pressure = m->granular ? yield_pressure(s, y, i) : 0;
    strain_state st = strain_at(s, m, y, i, pressure);
    int flows = flow_fractions(s, m, st, &alpha, &beta);
    if (!flows)
        return 0;
    pd_mat3 F = pd_ppd_deformation_gradient(s, y, i), R, S;
    if (!(pd_m3_det(F) > 0)) /* inverted or flat: the inversion fix steers it first */
        return 0;
    pd_polar3(F, &R, &S);
    for (int pass = 0; pass < PLASTIC_RETURNS; ++pass) {
        dp += move_references(s, y, i, R, st, alpha, beta);
        pd_ppd_shape_tensor(s, i);
        if (flows == FLOWS_DEVIATOR_ONLY)
            break;
        R = pd_m3_identity();
        st = strain_at(s, m, y, i, pressure);
        pd_real lim = m->yield_a + m->yield_b * st.i1;
        if (st.sqrt_j2 <= lim + PLASTIC_RETURN_TOL * fabs(lim) ||
            !(flows = flow_fractions(s, m, st, &alpha, &beta)))
            break;
    }
    return dp;
}

static void flow_kernel(void* vctx, size_t begin, size_t end, int thread) {
    flow_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    int flowed = 0;
    for (size_t i = begin; i < end; ++i) {
        pd_real dp = flow_particle(s, c->y, (uint32_t)i);
        s->plastic_strain[i] += dp;
        flowed |= dp > 0;
    }
    s->partial[begin / PLASTIC_GRAIN] = flowed;
}

/* Sec. 5's correction of every plastic particle at y; whether any reference moved. */
static int flow_all(pd_ppd_state* s, const pd_vec3* y) {
    flow_ctx c = {s, y, 0};
    pd_parallel_for(s->n, PLASTIC_GRAIN, flow_kernel, &c);
    int flowed = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        flowed |= s->partial[k] != 0;
    return flowed;
}

pd_status pd_ppd_plastic_flow(pd_ppd_state* s, const pd_world* w, const pd_vec3* y, int changed,
                              pd_error* err) {
    if (!s->plastic)
        return PD_OK;
    int flowed = flow_all(s, y) | changed;
    return flowed ? pd_ppd_build_system(s, w, err) : PD_OK; /* new X: new (X*X)^+, stiffness */
}

/* A plastic particle's body renews its families every step (pd_ppd_update_renewal), and the
 * renewal rebuilds the system before anything reads it: a rebuild after the step's last
 * correction was done twice, the first thrown away (a tenth of the 100K sand's semi_iterative
 * step, measured). What the renewal reads of it, the shape tensors of the families with new
 * neighbours (Eq. 20's map), it computes itself (projective_pd_renew.c); a step that does not
 * renew rebuilds at its start (advance). With the return in the solve the rebuild stays here:
 * its granular factor (at this step's end) enters the next renewal's Eq. 20 through the
 * moduli of the strain state (moduli_at_granular_factor). */
pd_status pd_ppd_plastic_flow_at_step_end(pd_ppd_state* s, const pd_world* w, const pd_vec3* y,
                                          int changed, pd_error* err) {
    if (s->prm.plastic_return == PD_PPD_RETURN_IN_SOLVE)
        return pd_ppd_plastic_flow(s, w, y, changed, err);
    if (s->plastic && (flow_all(s, y) | changed))
        s->system_stale = 1;
    return PD_OK;
}

/* ------------------------------------------- plastic_return in_solve (issue 37 item 1)
 * Implicit elastoplasticity (Simo & Hughes 1998, Sec. 3.3; the variational updates of Ortiz &
 * Stainier 1999): the return belongs to the step's equations, not after them. At every iterate
 * y each plastic particle's reference vectors are those of the step's start X_n returned at y
 * (Eq. 18-19, from X_n, never from the last iterate's), X^(y); the local step evaluates the
 * bonds with X^(y), so the residual is the momentum balance of backward Euler with the returned
 * stress, and the solution is the step's elastoplastic equilibrium: the solve never resists a
 * flow with the elastic trial stress (the viscosity G h of the paper's order). Where no particle
 * yields the merit is Eq. 12's energy and r its gradient. Where one does, r is no gradient of
 * E(y, X^(y)): Eq. 18's return is radial in the bond strains, which Eq. 8's energy does not
 * measure in the metric a closest-point projection would need (and Drucker-Prager's return keeps
 * the volume, non-associated, which no potential's gradient does: mpm_implicit.c), so the solve
 * is of r(y) = 0 as an equation: the line search on |r| and secant L-BFGS pairs (descent.h's
 * not_gradient, secant_pairs), as mpm's optimiser step does on the cone. The step's bond
 * stiffness and global matrix stay the start's (a preconditioner; the rebuild after the step
 * takes the new references). */

typedef struct return_ctx {
    pd_ppd_state* s;
    const pd_vec3* y;
} return_ctx;

static pd_status grow_return_arrays(pd_ppd_state* s) {
    size_t n = s->n, bonds = s->fam.bond_count;
    if (!s->ret_kinv) {
        s->ret_kinv = PD_NEW_ARRAY(pd_ppd_sym3, n + 1);
        s->ret_dp = PD_NEW_ARRAY(pd_real, n + 1);
        s->ret_moved = PD_NEW_ARRAY(uint8_t, n + 1);
        if (!s->ret_kinv || !s->ret_dp || !s->ret_moved)
            return PD_ERR_OUT_OF_MEMORY;
    }
    if (s->ret_capacity < bonds + 1) {
        PD_FREE_ARRAY(s->ret_xi, pd_vec3, s->ret_capacity);
        s->ret_capacity = bonds + bonds / 4 + 1; /* renewed families grow and shrink a little */
        s->ret_xi = PD_NEW_ARRAY(pd_vec3, s->ret_capacity);
        if (!s->ret_xi) {
            s->ret_capacity = 0;
            return PD_ERR_OUT_OF_MEMORY;
        }
    }
    return PD_OK;
}

void pd_ppd_return_free(pd_ppd_state* s) {
    size_t n = s->n;
    PD_FREE_ARRAY(s->ret_kinv, pd_ppd_sym3, n + 1);
    PD_FREE_ARRAY(s->ret_dp, pd_real, n + 1);
    PD_FREE_ARRAY(s->ret_moved, uint8_t, n + 1);
    PD_FREE_ARRAY(s->ret_xi, pd_vec3, s->ret_capacity);
    s->ret_capacity = 0;
}

pd_status pd_ppd_return_begin(pd_ppd_state* s) {
    s->ret_active = 0;
    if (!s->plastic || s->prm.plastic_return != PD_PPD_RETURN_IN_SOLVE)
        return PD_OK;
    pd_status st = grow_return_arrays(s);
    if (st != PD_OK)
        return st;
    memcpy(s->ret_xi, s->fam.xi, s->fam.bond_count * sizeof(pd_vec3));
    memcpy(s->ret_kinv, s->kinv, s->n * sizeof(pd_ppd_sym3));
    memset(s->ret_dp, 0, s->n * sizeof(pd_real));
    for (size_t i = 0; i < s->n; ++i) /* bit 1: the start's planar flag, for restore_start */
        s->ret_moved[i] = (uint8_t)(s->planar[i] << 1);
    s->ret_active = 1;
    return PD_OK;
}

/* Particle i's references and shape tensor back to the step's start. */
static void restore_start(pd_ppd_state* s, uint32_t i) {
    if (!(s->ret_moved[i] & 1))
        return;
    pd_family* f = &s->fam;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        f->xi[b] = s->ret_xi[b];
    s->kinv[i] = s->ret_kinv[i];
    s->planar[i] = s->ret_moved[i] >> 1; /* pd_ppd_shape_tensor set it from the returned X */
    s->ret_moved[i] &= 2;
}

static void return_kernel(void* vctx, size_t begin, size_t end, int thread) {
    return_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    int yielded = 0;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        restore_start(s, (uint32_t)i);
        s->ret_dp[i] = 0;
        if (!m->plastic)
            continue;
        pd_real dp = flow_particle(s, c->y, (uint32_t)i);
        if (dp > 0) { /* its shape tensor refreshed by flow_particle */
            s->ret_moved[i] |= 1;
            s->ret_dp[i] = dp;
            yielded = 1;
        }
    }
    s->partial[begin / PLASTIC_GRAIN] = yielded;
}

/* I1's pressure at y: the density penalty's at the iterate, every grain's before any returns
 * (yield_pressure's kernel mean reads the neighbours'). */
static void pressure_kernel(void* vctx, size_t begin, size_t end, int thread) {
    return_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        if (m->plastic && m->granular && !s->fixed[i])
            s->dens_pressure[i] = s->prm.density_stiffness * m->bulk *
                                  fmax(pd_density_ratio(&s->dens_def, c->y, i) - 1, 0);
    }
}

int pd_ppd_return_at(pd_ppd_state* s, const pd_vec3* y) {
    if (!s->ret_active)
        return 0;
    return_ctx c = {s, y};
    if (s->granular && pd_ppd_granular_in_solve(s))
        pd_parallel_for(s->n, PLASTIC_GRAIN, pressure_kernel, &c);
    pd_parallel_for(s->n, PLASTIC_GRAIN, return_kernel, &c);
    int yielded = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        yielded |= s->partial[k] != 0;
    return yielded;
}

int pd_ppd_return_end(pd_ppd_state* s) {
    if (!s->ret_active)
        return 0;
    s->ret_active = 0;
    int moved = 0;
    for (size_t i = 0; i < s->n; ++i) {
        s->plastic_strain[i] += s->ret_dp[i];
        moved |= s->ret_moved[i] & 1;
    }
    return moved;
}
