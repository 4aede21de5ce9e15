/* Projective peridynamics, granular matter: He, Wang, Wu 2017 Sec. 7 (Eq. 25-28) and the
 * repulsive distance constraint of Sec. 8.
 *
 * A granular material is Drucker-Prager plastic (Sec. 5) whose isotropic constant lambda of
 * Eq. 8 is no longer constant: lambda = k_f(rho) + k_c(rho), a friction stiffness that
 * vanishes when the grains lose contact (Eq. 25) and a cohesion stiffness from the capillary
 * bridges of wet sand (Eq. 26-27), with rho the particle's kernel density (Poly6 over its
 * family, which renews every step). We scale lambda and the dilatation constant kv (the
 * volume stiffness beyond the paper) of particle i by s_i = (k_f + k_c) / K_f, with
 * K_f the material's Lame lambda: at the rest density a dry grain is as stiff as the
 * material's E and nu say. s_i is evaluated once per step, at the step's start, where the
 * paper may re-evaluate k_f per iteration (Sec. 7.2): then the energy of a step is one
 * function and the line search and L-BFGS pairs stay valid.
 * Two readings, stated in docs/methods/projective_pd.md:
 * - rho_0 is the kernel sum of an interior family at rest (the lattice the body was sampled
 *   on), so rho / rho_0 = 1 in a body at rest and the ratio is what Eq. 25-26 compare.
 * - Eq. 26 prints k_c = K_c exp(H_c (1 - rho/rho_0)) for rho_1 <= rho < rho_0, which grows
 *   as the grains separate; H_c is called a falloff coefficient and the capillary force model
 *   cited decays with separation, so we take k_c = K_c exp(-H_c (1 - rho/rho_0)).
 * After the solve: static friction (Eq. 28, eta = 0.8) puts a particle the solve pushed back
 * by at least eta of its predicted move at its start position, and the repulsive distance
 * constraint keeps two grains of a family at least `repulsion` spacings apart. The pressure
 * the density constraints carried enters the yield check's I1 (projective_pd_plastic.c). */
#include <math.h>
#include <string.h>

#include "constitutive/elastic_constants.h"
#include "core/timer.h"
#include "optim/implicit_step.h"
#include "parallel/parallel.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "sph/kernels.h"
#include "sph/redistribution.h"
#include "sph/viscosity.h"
#include "sph/wall_density.h"
#include "world/world.h"

#define GRANULAR_GRAIN   512
#define REPULSION_PASSES 2 /* Jacobi passes of the distance constraint per step */
/* in_solve: the repulsion's pair energy k (d - |y_ij|)^3 / (3 s) stiffens from 0 at d to k at an
 * overlap s = REPULSION_SOFT d; a quadratic one, its stiffness jumping from 0 to k at d where a
 * settled lattice's axis pairs sit (repulsion 1 spacing), stalled the line search of a resting
 * column (relative residual 0.1-0.2 after 1-2 iterations a step). */
#define REPULSION_SOFT 0.1

void pd_ppd_granular_constants(const pd_material_def* m, pd_ppd_material* out) {
    const pd_ppd_material_params* mp = (const pd_ppd_material_params*)m->method_params;
    pd_real lame = pd_material_elastic(m).lambda; /* K_f */
    out->granular = mp->granular;
    out->fluid = mp->fluid;
    out->kinematic_viscosity = mp->fluid ? mp->viscosity / m->density : 0;
    out->redistribution = mp->fluid ? mp->redistribution : 0;
    out->rest_density = m->density;
    out->hardening = mp->hardening;
    out->cohesion_ratio = mp->cohesion_stiffness / lame;
    out->cohesion_decay =
        mp->saturation > 0 ? mp->cohesion_falloff / sqrt(mp->saturation) : INFINITY; /* Eq. 27 */
    out->debond_ratio = 1 - mp->debonding * mp->saturation;
    out->compaction = mp->compaction;
    out->static_friction = mp->static_friction;
    out->static_threshold = mp->static_threshold;
    out->repulsion = mp->repulsion;
}

pd_real pd_ppd_granular_factor(const pd_ppd_material* m, pd_real ratio) {
    pd_real kf = ratio >= 1 ? exp(m->hardening * (ratio - 1)) : 0; /* Eq. 25, / K_f */
    pd_real kc = 0;                                                /* Eq. 26, / K_f */
    if (ratio >= 1)
        kc = m->cohesion_ratio;
    else if (ratio >= m->debond_ratio && isfinite(m->cohesion_decay))
        kc = m->cohesion_ratio * exp(-m->cohesion_decay * (1 - ratio));
    return kf + kc;
}

/* The density constraints of the particles (src/sph): granular ones resist compression past
 * the rest density, a fluid's (Sec. 6) hold it both ways; the arrays are refilled per use, the
 * family changes every step. Without granular matter or a fluid only the kernel radius and
 * rest sum are needed, for the published density (the walls' rows then at the sampling
 * spacing), and only while it is computed: they are written into the Chebyshev scratch then
 * (free between solves; 16 bytes a particle less than arrays). The walls' share is the
 * particle's lattice rows continued past them (wall_density.h), which holds a fluid column's
 * edges within 1.6 %; granular matter keeps the half-space, which reads a grain half a spacing
 * from a wall 2.5 % heavy: with the rows, the in_solve layer between slip walls 4 grains apart
 * lost the confining pressure that over-reading gave it (the penalty's 500-1000 Pa against its
 * weight's 118-275) and yielded at 25 degrees, below its plane-strain angle, 3.1 mm in 0.3 s
 * before it stopped at 3.9 mm (docs/validation.md). */
static pd_density_constraint_def density_def(pd_ppd_state* s, const pd_world* w) {
    const pd_particles* p = &w->particles;
    pd_real* radius = s->granular ? s->dens_radius : (pd_real*)s->cheb_b;
    pd_real* rest = s->granular ? s->dens_rest : radius + s->n; /* cheb_b holds 3 n reals */
    for (size_t i = 0; i < s->n; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        radius[i] = s->prm.horizon * p->spacing[i];
        rest[i] = m->rest_sum;
        if (!s->granular)
            continue;
        s->dens_wall[i] = m->granular ? 0 : p->spacing[i];
        s->dens_inv_mass[i] = s->fixed[i] ? 0 : 1 / s->mass[i];
        s->fluid_nu[i] = m->kinematic_viscosity;
        s->fluid_delta[i] = m->redistribution;
        int active = m->granular ? !pd_ppd_granular_in_solve(s) : m->fluid;
        s->dens_kind[i] = !s->fixed[i] && active ? PD_DENSITY_ACTIVE | PD_DENSITY_UNILATERAL : 0;
    }
    return (pd_density_constraint_def){.count = s->n,
                                       .offsets = s->fam.offsets,
                                       .nbr = s->fam.j,
                                       .volume = s->volume,
                                       .inv_mass = s->dens_inv_mass,
                                       .radius = radius,
                                       .rest_sum = rest,
                                       .kind = s->dens_kind,
                                       .colliders = &w->colliders,
                                       .relaxation = s->prm.density_relaxation,
                                       /* without granular matter every wall is rows */
                                       .wall_spacing = s->granular ? s->dens_wall : p->spacing};
}

int pd_ppd_granular_in_solve(const pd_ppd_state* s) {
    return s->prm.granular_constraints == PD_PPD_GRANULAR_IN_SOLVE;
}

/* Whether a material of the scene is granular (a fluid alone takes no in-solve terms). */
static int any_granular(const pd_ppd_state* s) {
    for (int m = 0; m < s->material_count; ++m)
        if (s->mat[m].granular)
            return 1;
    return 0;
}

typedef struct density_ctx {
    pd_ppd_state* s;
    const pd_world* w;
    pd_density_constraint_def def;
    const pd_vec3* predicted;
} density_ctx;

/* granular.compaction reference_kernel (issue 37): rho / rho_0 as the family's Poly6 sum at y
 * over its sum at the reference vectors, sum_j V_j W(|y_j - y_i|) / sum_j V_j W(|X_ij|). A
 * grain at a free surface misses the same neighbours in both, so it reads 1 at rest where the
 * kernel density reads 0.6-0.8 (its kernel's deficiency, not loose sand) and Eq. 25 took its
 * friction away; compaction (neighbours closer than their references) reads above 1, separation
 * below, and a grain without neighbours 0. A Shepard-type normalisation by the family's own
 * reference sum. */
static pd_real reference_ratio(const pd_ppd_state* s, const pd_vec3* y, size_t i) {
    const pd_family* f = &s->fam;
    pd_real H = s->dens_radius[i], now = 0, ref = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_real v = s->volume[f->j[b]];
        now += v * pd_sph_poly6(pd_v3_len2(pd_v3_sub(y[f->j[b]], y[i])), H);
        ref += v * pd_sph_poly6(pd_v3_len2(pd_family_xi(f, (uint32_t)i, b)), H);
    }
    return ref > 0 ? now / ref : 0;
}

/* The density ratio Eq. 25-26 compare, by the material's granular.compaction. reference_kernel
 * corrects the kernel density for the kernel's deficiency only, up to rho_0: max(kernel,
 * min(reference, 1)). A family whose reference vectors are long (new neighbours placed by Eq.
 * 20 far out) reads any ratio over them, and exp(H_f (ratio - 1)) of Eq. 25 overflowed: the
 * a = 2 column's solve went non-finite at 0.21 s. */
static pd_real compaction_ratio(const pd_ppd_state* s, const pd_ppd_material* m,
                                const pd_density_constraint_def* def, const pd_vec3* y, size_t i) {
    pd_real kernel = pd_density_ratio(def, y, i);
    if (m->compaction == PD_PPD_COMPACTION_REFERENCE)
        return fmax(kernel, fmin(reference_ratio(s, y, i), 1));
    return kernel;
}

static void density_kernel(void* vctx, size_t begin, size_t end, int thread) {
    density_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        if (!c->predicted) {
            s->density[i] = m->rest_density * pd_density_ratio(&c->def, c->w->particles.pos, i);
            continue;
        }
        s->vscale[i] = 1;
        if (m->granular && !s->fixed[i])
            s->vscale[i] =
                pd_ppd_granular_factor(m, compaction_ratio(s, m, &c->def, c->predicted, i));
    }
}

void pd_ppd_publish_density(pd_ppd_state* s, const pd_world* w) {
    density_ctx c = {s, w, density_def(s, w), NULL};
    pd_parallel_for(s->n, GRANULAR_GRAIN, density_kernel, &c);
}

/* The factors on lambda and kv from the density at the inertial prediction y*: the density
 * constraints leave rho <= rho_0 at the end of every step, so at x a grain in contact sits at rho_0
 * or just below it and Eq. 25 would find it loose; at y* gravity and the grains' momentum press it
 * past rho_0, which is where the paper, which re-evaluates k_f in the iterations (Sec. 7.2), finds
 * its friction stiffness. */
void pd_ppd_granular_stiffness(pd_ppd_state* s, const pd_world* w) {
    if (!s->granular)
        return; /* no factors (pd_ppd_vscale) */
    pd_ppd_granular_prepare(s, w);
    density_ctx c = {s, w, s->dens_def, s->cheb_a}; /* Chebyshev scratch: free here */
    pd_implicit_predict(&w->particles, w->def.dt, w->def.gravity, s->cheb_a);
    pd_parallel_for(s->n, GRANULAR_GRAIN, density_kernel, &c);
}

int pd_ppd_static_friction_holds(pd_vec3 x, pd_vec3 ystar, pd_vec3 y, pd_real eta) {
    pd_vec3 d = pd_v3_sub(x, ystar);
    pd_real d2 = pd_v3_len2(d);
    return d2 > 0 && pd_v3_dot(pd_v3_sub(y, ystar), d) >= eta * d2;
}

/* Eq. 28 holds a grain the solve pushed back by eta of its predicted move. From rest that move
 * is h^2 g, so the test reads the push along gravity (the grains below carrying its weight) and
 * not its sideways motion: every grain of a standing column passes it, however far beyond the
 * cone its shear lies (docs/methods/projective_pd.md, "Eq. 28 and the return in the solve").
 * With plastic_return in_solve the solve knows which grains are on the cone at its solution:
 * there the friction is saturated (Coulomb: sliding), and Eq. 28, the paper's stand-in for
 * sticking, leaves them alone. */
static int friction_saturated(const pd_ppd_state* s, size_t i) {
    return s->ret_active && s->ret_moved[i] & 1;
}

static void static_friction(pd_ppd_state* s, const pd_vec3* x, pd_vec3* y) {
    for (size_t i = 0; i < s->n; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        if (m->granular && m->static_friction && !s->fixed[i] && !friction_saturated(s, i) &&
            pd_ppd_static_friction_holds(x[i], s->ystar[i], y[i], m->static_threshold))
            y[i] = x[i];
    }
}

typedef struct repulsion_ctx {
    pd_ppd_state* s;
    const pd_particles* p;
    const pd_vec3* y;
    pd_vec3* out;
} repulsion_ctx;

/* One Jacobi pass of the distance constraints |y_j - y_i| >= d on i's bonds: each violated one
 * moves i by its mass share of the overlap, averaged over them (constraint averaging keeps a
 * crowded particle from overshooting). A fixed neighbour takes no share. */
static void repulsion_kernel(void* vctx, size_t begin, size_t end, int thread) {
    repulsion_ctx* c = vctx;
    const pd_ppd_state* s = c->s;
    const pd_family* f = &s->fam;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        c->out[i] = c->y[i];
        if (!m->granular || m->repulsion <= 0 || s->fixed[i])
            continue;
        pd_vec3 move = pd_v3(0, 0, 0);
        int count = 0;
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            uint32_t j = f->j[b];
            pd_real d = m->repulsion * 0.5 * (c->p->spacing[i] + c->p->spacing[j]);
            pd_vec3 r = pd_v3_sub(c->y[i], c->y[j]);
            pd_real len = pd_v3_len(r);
            if (len >= d || len <= 0)
                continue;
            pd_real share = s->fixed[j] ? 1 : s->mass[j] / (s->mass[i] + s->mass[j]);
            move = pd_v3_madd(move, share * (d - len) / len, r);
            ++count;
        }
        if (count)
            c->out[i] = pd_v3_madd(c->y[i], 1.0 / count, move);
    }
}

static void repel(pd_ppd_state* s, const pd_particles* p, pd_vec3* y) {
    repulsion_ctx c = {s, p, y, s->cheb_a}; /* Chebyshev scratch: free after the solve */
    for (int pass = 0; pass < REPULSION_PASSES; ++pass) {
        pd_parallel_for(s->n, GRANULAR_GRAIN, repulsion_kernel, &c);
        memcpy(y, c.out, s->n * sizeof(pd_vec3));
    }
}

/* Redistribution moves the particles of the step's end, not the step's displacement: it
 * resamples the fluid (the paper sets it against re-sampling, Sec. 6) and adds no velocity;
 * otherwise each iteration's shift, a few percent of a spacing, would come back as kinetic
 * energy every step. The density constraints of the next step absorb what it changes. */
void pd_ppd_fluid_redistribute(pd_ppd_state* s, pd_world* w) {
    if (!s->fluid || s->prm.redistribution_iterations == 0)
        return;
    pd_density_constraint_def def = density_def(s, w);
    pd_density_scratch sc = {s->dens_lambda, s->cheb_a, s->cheb_b, s->dens_partial, NULL};
    s->redistribution_error = pd_redistribute(&def, s->fluid_delta, w->particles.pos,
                                              s->prm.redistribution_iterations, &sc);
}

/* The pressure the step's density constraints carried, p_i = -(sum of lambda_i over the
 * iterations) / (V_i h^2): their force on i is lambda grad C / h^2, and an SPH pressure p_i
 * exerts p_i V_i grad C_i. Eq. 14 compares sqrt(J2) with the Cauchy stress's I1, and where the
 * constraints hold the grains apart the bonds carry little of it
 * (projective_pd_plastic.c). */
static void constraint_pressure(pd_ppd_state* s, pd_real dt) {
    for (size_t i = 0; i < s->n; ++i)
        s->dens_pressure[i] =
            s->prm.density_iterations > 0 ? -s->dens_pressure[i] / (s->volume[i] * dt * dt) : 0;
}

/* ------------------------------------------------ granular_constraints in_solve (issue 37)
 * The density constraints and the repulsion as energies of the step's solve, as contact is:
 *   E_rho = sum_i V_i K_i / 2 max(C_i, 0)^2,  C_i = rho_i / rho_0 - 1 (Sec. 8's constraint, the
 *           kernel sum of src/sph with the colliders' share), K_i = density_stiffness x the
 *           material's bulk modulus: an equation of state p_i = K_i max(C_i, 0);
 *   E_rep = sum over family pairs closer than d = repulsion x spacing of k_r (d - |y_ij|)^3 /
 *           (3 REPULSION_SOFT d), k_r = contact_stiffness E d, the stiffness of contact between
 *           bodies (contact.h), reached at an overlap of REPULSION_SOFT d.
 * Why energies and not constraints projected at each iterate: both are smooth (C1) functions
 * of y, so the merit stays one function for the Armijo search and L-BFGS; a projection would
 * move every trial off the line the search measures, and is what the corrections after the
 * solve did: moving grains against their bonds every step, which the plastic return then
 * absorbs as flow (a settled layer churned 0.078 plastic strain in 0.6 s). As energies, the
 * solve's result is the equilibrium of bonds, gravity, pressure and repulsion. */

/* K_i V_i C_i / R_i of particle i (0 when not compressed, not granular or fixed) into
 * dens_lambda; the chunk's energy V K C^2 / 2 into dens_partial. */
static void penalty_kernel(void* vctx, size_t begin, size_t end, int thread) {
    density_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    const pd_density_constraint_def* d = &s->dens_def;
    pd_real e = 0;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        s->dens_lambda[i] = 0;
        if (!m->granular || s->fixed[i])
            continue;
        pd_real C = pd_density_ratio(d, c->predicted, i) - 1,
                K = s->prm.density_stiffness * m->bulk;
        if (C <= 0)
            continue;
        e += 0.5 * s->volume[i] * K * C * C;
        s->dens_lambda[i] = K * s->volume[i] * C / d->rest_sum[i];
    }
    s->dens_partial[begin / GRANULAR_GRAIN] = e;
}

static pd_real youngs_of(const pd_ppd_material* m) {
    return 9 * m->bulk * m->shear / (3 * m->bulk + m->shear);
}

/* The repulsion's energy on i's side of its pairs, its gradient into *g. */
static pd_real repulsion_terms(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, pd_vec3* g) {
    const pd_family* f = &s->fam;
    const pd_ppd_material* mi = &s->mat[s->material[i]];
    const pd_real* spacing = s->dens_spacing;
    pd_real e = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        uint32_t j = f->j[b];
        const pd_ppd_material* mj = &s->mat[s->material[j]];
        if (!mj->granular || mj->repulsion <= 0)
            continue;
        pd_real dist = fmin(mi->repulsion, mj->repulsion) * 0.5 * (spacing[i] + spacing[j]);
        pd_vec3 r = pd_v3_sub(y[i], y[j]);
        pd_real len = pd_v3_len(r);
        if (len >= dist || len <= 0)
            continue;
        pd_real k = s->prm.contact_stiffness * fmin(youngs_of(mi), youngs_of(mj)) * dist;
        pd_real gap = dist - len, soft = REPULSION_SOFT * dist;
        /* half the pair's energy, j counting the rest; all of it when j is fixed (skipped) */
        e += (s->fixed[j] ? 1 : 0.5) * k * gap * gap * gap / (3 * soft);
        *g = pd_v3_madd(*g, -k * gap * gap / (soft * len), r);
    }
    return e;
}

/* The gradient of Poly6 (pd_sph_poly6) with respect to x_i, r = x_i - x_j: the exact derivative
 * of the density the penalty measures (src/sph's constraints take Spiky's, Mueller 2003, which
 * is no gradient of it: the line search then refused the steps of a resting column). */
static pd_vec3 poly6_gradient(pd_vec3 r, pd_real H) {
    pd_real d = H * H - pd_v3_len2(r);
    if (d <= 0)
        return pd_v3(0, 0, 0);
    pd_real h3 = H * H * H;
    return pd_v3_scale(r, -945.0 / (32.0 * PD_PI * h3 * h3 * h3) * d * d);
}

/* grad_i C_i (1/m): Poly6's over i's neighbours and the colliders' share. */
static pd_vec3 own_gradient(const pd_density_constraint_def* d, const pd_vec3* y, size_t i) {
    pd_real H = d->radius[i];
    pd_vec3 g = pd_v3(0, 0, 0), wall = pd_v3(0, 0, 0);
    for (uint32_t b = d->offsets[i]; b < d->offsets[i + 1]; ++b)
        g = pd_v3_madd(g, d->volume[d->nbr[b]], poly6_gradient(pd_v3_sub(y[i], y[d->nbr[b]]), H));
    if (d->colliders)
        pd_sph_collider_share_gradient(d->colliders, y[i], H, pd_density_wall_spacing(d, i), &wall);
    return pd_v3_madd(wall, 1 / d->rest_sum[i], g);
}

/* Into g_i: grad_i of E_rho, K_i V_i C_i grad_i C_i + sum_j (K_j V_j C_j / R_j) V_i gradW(y_i -
 * y_j, H_j) (W Poly6, whose sums C is made of), and of E_rep; the chunk's repulsion energy added.
 */
static void penalty_gradient_kernel(void* vctx, size_t begin, size_t end, int thread) {
    density_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    const pd_density_constraint_def* d = &s->dens_def;
    const pd_family* f = &s->fam;
    const pd_vec3* y = c->predicted;
    pd_real e = 0;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        if (s->fixed[i])
            continue;
        pd_vec3 g = pd_v3(0, 0, 0);
        if (s->dens_lambda[i] > 0)
            g = pd_v3_scale(own_gradient(d, y, i), s->dens_lambda[i] * d->rest_sum[i]);
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            uint32_t j = f->j[b];
            if (s->dens_lambda[j] > 0)
                g = pd_v3_madd(g, s->dens_lambda[j] * s->volume[i],
                               poly6_gradient(pd_v3_sub(y[i], y[j]), d->radius[j]));
        }
        if (m->granular && m->repulsion > 0)
            e += repulsion_terms(s, y, (uint32_t)i, &g);
        s->g[i] = pd_v3_add(s->g[i], g);
    }
    s->dens_partial[begin / GRANULAR_GRAIN] += e;
}

/* in_solve: a no_slip collider holds a grain within the height at which the density penalty
 * carries it on the collider's share (collider_contact.h's hold): the bottom row of a layer
 * resting at rho_0 sits at pd_sph_poly6_rest_height spacings (0.5545 at horizon 2.01), a loaded
 * one below it. Half a spacing, the grain's radius and the hold of a touching particle, fell
 * short of it: the penalty carried a layer's bottom row 2.77-2.80 mm above a no_slip floor at
 * 5 mm, never held, and the tilted layer slid on it as a block (docs/methods/projective_pd.md).
 * Other particles keep the half spacing. */
static void hold_distances(pd_ppd_state* s, const pd_world* w) {
    int in_solve = pd_ppd_granular_in_solve(s);
    for (size_t i = 0; i < s->n; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        pd_real h = m->granular && in_solve ? m->rest_height : 0.5;
        s->dens_hold[i] = h * w->particles.spacing[i];
    }
    s->cc.hold = s->dens_hold;
}

void pd_ppd_granular_prepare(pd_ppd_state* s, const pd_world* w) {
    if (!s->granular)
        return;
    s->dens_def = density_def(s, w);
    s->dens_spacing = w->particles.spacing;
    hold_distances(s, w);
}

pd_real pd_ppd_granular_energy(pd_ppd_state* s, const pd_vec3* y) {
    if (!s->granular || !pd_ppd_granular_in_solve(s) || !s->dens_def.offsets || !any_granular(s))
        return 0;
    double t0 = pd_now();
    density_ctx c = {s, NULL, s->dens_def, y};
    pd_parallel_for(s->n, GRANULAR_GRAIN, penalty_kernel, &c);
    pd_parallel_for(s->n, GRANULAR_GRAIN, penalty_gradient_kernel, &c);
    pd_real e = 0;
    for (size_t k = 0; k < pd_density_chunks(s->n); ++k)
        e += s->dens_partial[k];
    s->t_density += pd_now() - t0;
    return e;
}

/* The pressure of the in-solve density penalty at the solution, p_i = K_i max(C_i, 0) (its
 * force on the grains is that of an SPH pressure, p_i V_i grad C_i), for the yield check's I1. */
static void penalty_pressure(pd_ppd_state* s, const pd_vec3* y) {
    for (size_t i = 0; i < s->n; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        if (m->granular && !s->fixed[i])
            s->dens_pressure[i] = s->prm.density_stiffness * m->bulk *
                                  fmax(pd_density_ratio(&s->dens_def, y, i) - 1, 0);
    }
}

void pd_ppd_granular_correct(pd_ppd_state* s, const pd_world* w, pd_vec3* y) {
    if (!s->granular)
        return;
    static_friction(s, w->particles.pos, y); /* before the density constraints: a held grain
                                              * must not be left inside its neighbours */
    pd_density_constraint_def def = density_def(s, w);
    pd_density_scratch sc = {s->dens_lambda, s->cheb_a, s->cheb_b, s->dens_partial,
                             s->dens_pressure};
    if (s->fluid) { /* Sec. 6: the viscous velocity, before incompressibility */
        double t0 = pd_now();
        pd_sph_implicit_viscosity(&def, s->fluid_nu, w->particles.pos, s->step->dt, y,
                                  s->prm.viscosity_iterations, &sc);
        s->t_viscosity += pd_now() - t0;
    }
    if (s->prm.density_iterations > 0)
        s->density_error = pd_density_constraint_solve(&def, y, s->prm.density_iterations, &sc);
    constraint_pressure(s, s->step->dt);
    if (pd_ppd_granular_in_solve(s))
        penalty_pressure(s, y);
    else
        repel(s, &w->particles, y);
}
