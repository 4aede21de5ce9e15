/* mpm's implicit step by the shared optimiser (solver.mpm.integrator "newton" or "lbfgs"):
 * backward Euler on the grid as the minimisation of the incremental potential over the grid
 * velocity change dv (Gast et al. 2015, Optimization integrator for large time steps; Klar et
 * al. 2016; Fang 2019 Eq. 9 without its auxiliary F):
 *   E(dv) = 1/2 dv^T M dv - dt g^T M dv + sum_p V_p^0 Psi(F_p(dv)),
 *   F_p(dv) = (D dv)_p + b_p,  (D dv)_p = dt (sum_i dv_i grad w_ip^T) F_p^n,
 *   b_p = (I + dt sum_i v_i^n grad w_ip^T) F_p^n,
 * the same D (pd_grid_gradient, adjoint pd_grid_divergence) and boundary conditions (Sec. 7.2)
 * as the ADMM of mpm_admm.c, so both minimise one E. dE/d dv = M dv - dt M g + D^T (V0 P(F)) is
 * backward Euler's momentum balance. The optimiser is src/optim/descent.h over one vec3 per node
 * (padded to its capacity with zeros): newton takes the direction of H z = r, H = M + D^T (V0
 * dP/dF) D with dP/dF projected onto positive semi-definite in the stretches
 * (pd_principal_piola_differential), by Jacobi-preconditioned conjugate gradients; lbfgs keeps
 * `history` pairs over the ADMM's grid matrix (by conjugate gradients) or its diagonal. Both with
 * the Armijo line search on E. Coulomb friction at slip nodes and the pins' reactions take the
 * constraint's impulse, +dE/d dv there, after the solve, as the ADMM's do. A von Mises material
 * enters E by the incremental potential of its return (incremental_density: Ortiz and Stainier
 * 1999), the Maxwell branch by that of Eq. 8 (branch_density: Eq. 9's second term, F_N = D_N dv +
 * b_N), each with its corrected stress as gradient. Drucker-Prager's return keeps the volume
 * (non-associated): its stress is no potential's gradient, so the residual stays the momentum
 * balance with the returned stress, E (the same density) is only reported, and the descent's line
 * search follows |r| where a particle is on the cone (descent.h's not_gradient); lbfgs keeps its
 * pairs there as secant pairs of r = 0 (descent.h's secant_pairs). */
#include <math.h>
#include <string.h>

#include "constitutive/energies.h"
#include "core/alloc.h"
#include "grid/grid_boundary.h"
#include "grid/grid_cg.h"
#include "math/svd3.h"
#include "optim/descent.h"
#include "parallel/parallel.h"
#include "solvers/mpm/mpm_internal.h"

#define OPT_GRAIN 256

typedef struct pd_mpm_optimiser {
    pd_descent d;
    size_t cap; /* nodes the descent and the node arrays hold */
    size_t n;   /* particles */
    /* per particle: a matrix of D or D^T, and the last evaluation's F = U diag(s) V^T with W's
     * gradient g and Hessian h in the stretches (b_p and F_p^n: the ADMM's admm_b, admm_fn) */
    pd_mat3 *pm, *u, *v, *h;
    pd_vec3 *s, *g;
    /* ... the same for F_N of the Maxwell branch (NULL without it; b_N and F_N^n are the ADMM's
     * mx_b and mx_fn) */
    pd_mat3 *un, *vn, *hn;
    pd_vec3 *sn, *gn;
    pd_real* chunk_energy;
    /* per chunk: particles with det F <= 0; particles on a cone (stress not W's gradient) */
    size_t *chunk_inverted, *chunk_associated;
    /* per node */
    pd_vec3 *force, *gradient, *cg_r, *cg_z, *cg_d, *cg_ad;
    pd_real* diag;
    /* the step */
    pd_mpm_state* st;
    const pd_particles* p;
    pd_real dt;
    pd_vec3 gdt;
    int cg_total;
    size_t inverted, inverted_at_search; /* of the last evaluation; of the line search's start */
} pd_mpm_optimiser;

#define OPT_PARTICLE_ARRAYS(X)                                                                     \
    X(pm, pd_mat3)                                                                                 \
    X(u, pd_mat3) X(v, pd_mat3) X(h, pd_mat3) X(s, pd_vec3) X(g, pd_vec3)
#define OPT_BRANCH_ARRAYS(X)                                                                       \
    X(un, pd_mat3) X(vn, pd_mat3) X(hn, pd_mat3) X(sn, pd_vec3) X(gn, pd_vec3)
#define OPT_NODE_ARRAYS(X)                                                                         \
    X(force, pd_vec3)                                                                              \
    X(gradient, pd_vec3)                                                                           \
    X(cg_r, pd_vec3) X(cg_z, pd_vec3) X(cg_d, pd_vec3) X(cg_ad, pd_vec3) X(diag, pd_real)

/* ---------------------------------------------------------------- storage */

static void free_nodes(pd_mpm_optimiser* o) {
#define FREE_NODE(f, T) PD_FREE_ARRAY(o->f, T, o->cap);
    OPT_NODE_ARRAYS(FREE_NODE)
#undef FREE_NODE
    pd_descent_free(&o->d);
    o->cap = 0;
}

void pd_mpm_optimiser_free(pd_mpm_state* s) {
    pd_mpm_optimiser* o = s->opt;
    if (!o)
        return;
    free_nodes(o);
#define FREE_ONE(f, T) PD_FREE_ARRAY(o->f, T, o->n + 1);
    OPT_PARTICLE_ARRAYS(FREE_ONE)
    OPT_BRANCH_ARRAYS(FREE_ONE)
#undef FREE_ONE
    PD_FREE_ARRAY(o->chunk_energy, pd_real, o->n / OPT_GRAIN + 1);
    PD_FREE_ARRAY(o->chunk_inverted, size_t, o->n / OPT_GRAIN + 1);
    PD_FREE_ARRAY(o->chunk_associated, size_t, o->n / OPT_GRAIN + 1);
    pd_free(o, sizeof *o);
    s->opt = NULL;
}

const pd_vec3* pd_mpm_optimiser_residual(const pd_mpm_state* s) {
    return s->opt ? s->opt->d.r : NULL;
}

static pd_descent_def descent_def(const pd_mpm_params* prm) {
    pd_descent_def def = pd_default_descent_def();
    def.iterations = prm->optimiser_iterations;
    def.tolerance = prm->optimiser_tolerance;
    def.history = prm->integrator == PD_MPM_LBFGS ? prm->history : 0;
    def.secant_pairs = 1; /* Drucker-Prager's returned stress: r = 0 as an equation (descent.h) */
    return def;
}

/* The optimiser's state, with room for `nodes` nodes (grown by half again when short: the
 * descent is re-made then, a step whose grid outgrew the last). */
static pd_status reserve(pd_mpm_state* s, size_t nodes) {
    if (!s->opt) {
        pd_mpm_optimiser* o = pd_calloc(1, sizeof *o);
        if (!o)
            return PD_ERR_OUT_OF_MEMORY;
        s->opt = o;
        o->n = s->cap; /* room for the particles emitters add */
#define ALLOC_ONE(f, T) o->f = PD_NEW_ARRAY(T, o->n + 1);
        OPT_PARTICLE_ARRAYS(ALLOC_ONE)
        if (s->has_maxwell) {
            OPT_BRANCH_ARRAYS(ALLOC_ONE)
        }
#undef ALLOC_ONE
        o->chunk_energy = PD_NEW_ARRAY(pd_real, o->n / OPT_GRAIN + 1);
        o->chunk_inverted = PD_NEW_ARRAY(size_t, o->n / OPT_GRAIN + 1);
        o->chunk_associated = PD_NEW_ARRAY(size_t, o->n / OPT_GRAIN + 1);
#define CHECK_ONE(f, T) || !o->f
        if (!o->chunk_energy || !o->chunk_inverted ||
            !o->chunk_associated OPT_PARTICLE_ARRAYS(CHECK_ONE))
            return PD_ERR_OUT_OF_MEMORY;
        if (s->has_maxwell && (0 OPT_BRANCH_ARRAYS(CHECK_ONE)))
            return PD_ERR_OUT_OF_MEMORY;
#undef CHECK_ONE
    }
    pd_mpm_optimiser* o = s->opt;
    if (nodes <= o->cap)
        return PD_OK;
    free_nodes(o);
    size_t cap = nodes + nodes / 2;
#define ALLOC_NODE(f, T) o->f = PD_NEW_ARRAY(T, cap);
    OPT_NODE_ARRAYS(ALLOC_NODE)
#undef ALLOC_NODE
    o->cap = cap;
    pd_descent_def def = descent_def(&s->prm);
#define CHECK_NODE(f, T) || !o->f
    if (0 OPT_NODE_ARRAYS(CHECK_NODE))
        return PD_ERR_OUT_OF_MEMORY;
#undef CHECK_NODE
    return pd_descent_init(&o->d, cap, &def);
}

/* ---------------------------------------------------------------- E and its gradient */

/* W's gradient g = dW/ds and Hessian h (symmetrised: d tau / de = C dZ_e is symmetric for von
 * Mises and the Maxwell branch, round-off aside; for Drucker-Prager its symmetric part) of the
 * returned Kirchhoff stress tau(Z(s)) with d tau / ds = dtau, at the trial's stretches s. */
static void returned_gradient_hessian(pd_vec3 s, pd_vec3 tau, pd_mat3 dtau, pd_real g[3],
                                      pd_real h[3][3]) {
    pd_vec3 gv;
    pd_mat3 hm;
    pd_principal_gradient_hessian(s, tau, dtau, &gv, &hm);
    g[0] = gv.x, g[1] = gv.y, g[2] = gv.z;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            h[a][b] = 0.5 * (hm.m[a][b] + hm.m[b][a]);
}

/* Drucker-Prager's Newton tangent on its cone: dZ/ds of von Mises' return on the cylinder
 * through Z (the cone's radius at this trial's pressure held), trial stretches s times grow.
 * C dZ_e itself is not symmetric there (the deviator's radius follows the pressure, the pressure
 * not the deviator), and its symmetric part is indefinite along (n, 1): projected, Newton's
 * direction did not lower |r| (physics.mpm_optimiser's column stalled at 1.2e-2 after 3
 * iterations). This block-diagonal part is positive semi-definite, and the step converges (20
 * iterations to 8e-7). */
static pd_mat3 cone_tangent(const pd_mpm_material* m, pd_vec3 s, pd_real grow) {
    pd_hencky_yield held = m->yield;
    pd_real e = log(grow * s.x) + log(grow * s.y) + log(grow * s.z);
    held.cone = (pd_dp_cone){m->yield.cone.a - 3 * m->yield.kappa * m->yield.cone.b * e, 0};
    pd_vec3 same;
    pd_mat3 dz;
    pd_hencky_return(&held, pd_v3_scale(s, grow), &same, &dz);
    return pd_m3_scale(dz, grow);
}

/* The incremental potential's density at F's stretches s (> 0), with the returned stress as g
 * and its Hessian h in s. Elastic: Psi_E(s). Plastic: W(e) = Psi(Z(e))
 * + tau(Z(e)) . (e - ln Z(e)) in the (volume-corrected) trial Hencky strain e = ln s + v / 3
 * (Ortiz and Stainier 1999, the potential Fang 2019 Sec. 7.1 names for its Xi_E), whose gradient
 * is dW/de = tau(Z) + dZ_e^T C (e - ln Z). Von Mises and the apex: the second term is 0 (dZ_e
 * maps the deviator's normal n to 0; at the apex dZ_e = 0), so g_a = tau_a(Z) / s_a is W's
 * gradient and P = tau(Z(F)) F^-T. Drucker-Prager on its cone: the return keeps tr e and scales
 * the deviator to r_y = (a - 3 K b tr e) / (sqrt 2 mu), so dZ_e^T n = -3 K b / (sqrt 2 mu) 1 and
 * dW/de = tau(Z) - 3 sqrt 2 K b (|dev e| - r_y) 1: W's gradient carries the pressure the
 * associated flow's dilation would make, the non-associated model's stress does not, and no
 * potential has it. g stays the returned stress (the model's momentum balance), W is E's density
 * (reported), *cone is set, and the optimiser follows the residual (descent.h's not_gradient);
 * Newton's Hessian there is cone_tangent's. */
static pd_real incremental_density(const pd_mpm_material* m, pd_vec3 s, pd_real dilation,
                                   pd_real g[3], pd_real h[3][3], int* cone) {
    *cone = 0;
    if (!m->plastic) {
        pd_real sa[3] = {s.x, s.y, s.z};
        pd_mpm_gradient_hessian(m, sa, g, h);
        return pd_mpm_energy(m, s);
    }
    pd_vec3 z;
    pd_mat3 dz;
    pd_real grow = m->volume_correction ? exp(dilation / 3) : 1; /* Tampubolon's correction */
    pd_dp_case c = m->volume_correction
                       ? pd_hencky_return_corrected(&m->yield, s, dilation, &z, &dz, NULL)
                       : pd_hencky_return(&m->yield, s, &z, &dz);
    *cone = c == PD_DP_CONE && m->yield.cone.b > 0;
    if (*cone)
        dz = cone_tangent(m, s, grow);
    pd_vec3 tau = pd_hencky_kirchhoff(m->lambda, m->mu, z);
    pd_mat3 dtau = pd_m3_mul(pd_hencky_kirchhoff_derivative(m->lambda, m->mu, z), dz);
    returned_gradient_hessian(s, tau, dtau, g, h);
    return pd_hencky_energy(m->lambda, m->mu, z) + tau.x * log(grow * s.x / z.x) +
           tau.y * log(grow * s.y / z.y) + tau.z * log(grow * s.z / z.z);
}

/* The Maxwell branch's incremental potential at F_N's trial stretches s. Eq. 5 with Eq. 7's
 * quadratic Phi_V and Eq. 6's linear tau_N = C_N e is the optimality condition of e* = argmin_e
 * Psi_N(e) + 1 / (2 dt) (e_tr - e)^T K (e_tr - e), K = (d^2 Phi_V / d tau^2)^-1 (SPD for finite
 * nu_d, nu_v): C_N e* = K (e_tr - e*) / dt, i.e. e* = e_tr - dt dPhi_V/dtau(tau(e*)), whose
 * solution is Eq. 8. The minimum, W_N(e_tr) = Psi_N(Z_N) + 1/2 tau_N(Z_N) . (e_tr - ln Z_N) (the
 * quadratic term is half the stress times the viscous strain), is Psi_N's Moreau envelope,
 * convex, with gradient K (e_tr - e*) / dt = tau_N(Z_N(e_tr)): the projected branch's stress, the
 * force Fang 2019's Xi_N integrates (Sec. 7.1), and Hessian C_N dZ_N (symmetric). */
static pd_real branch_density(const pd_mpm_material* m, pd_vec3 s, pd_real g[3], pd_real h[3][3]) {
    pd_mat3 dz;
    pd_vec3 z = pd_hencky_maxwell_project(m->step, s, &dz);
    pd_real lambda = m->branch.lambda, mu = m->branch.mu;
    pd_vec3 tau = pd_hencky_kirchhoff(lambda, mu, z);
    pd_mat3 dtau = pd_m3_mul(pd_hencky_kirchhoff_derivative(lambda, mu, z), dz);
    returned_gradient_hessian(s, tau, dtau, g, h);
    return pd_hencky_energy(lambda, mu, z) +
           0.5 * (tau.x * log(s.x / z.x) + tau.y * log(s.y / z.y) + tau.z * log(s.z / z.z));
}

pd_real pd_mpm_incremental_density(const pd_mpm_material* m, pd_vec3 s, pd_real dilation,
                                   pd_real g[3], int* cone) {
    pd_real h[3][3];
    return incremental_density(m, s, dilation, g, h, cone);
}

pd_real pd_mpm_branch_density(const pd_mpm_material* m, pd_vec3 s, pd_real g[3]) {
    pd_real h[3][3];
    return branch_density(m, s, g, h);
}

/* F's SVD into u, s, v (stretches clamped to 1e-6: W of |Sigma| with F's rotation, as the
 * explicit step and the ADMM take it); returns 1 if F is inverted or flat. */
static int stretches(pd_mat3 f, pd_mat3* u, pd_vec3* s, pd_mat3* v) {
    pd_vec3 sv;
    pd_svd3(f, u, &sv, v);
    *s = pd_v3(fmax(fabs(sv.x), 1e-6), fmax(fabs(sv.y), 1e-6), fmax(fabs(sv.z), 1e-6));
    return !(sv.z > 0);
}

static void store_hessian(pd_mat3* out, pd_real h[3][3]) {
    for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c)
            out->m[a][c] = h[a][c];
}

/* Per particle at F = D dv + b (D dv's G in pm) and, with the Maxwell branch, F_N = D_N dv +
 * b_N: V0 (W(F) + W_N(F_N)) summed per chunk, each F's SVD with its density's gradient and
 * Hessian in the stretches kept for the Hessian, and pm <- dt V0 (P F^n^T + P_N F_N^n^T) (what
 * pd_grid_divergence turns into D^T (V0 P) + D_N^T (V0 P_N), Eq. 9's two terms). */
static void particle_energy(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    pd_mpm_optimiser* o = ctx;
    const pd_mpm_state* s = o->st;
    const pd_particles* p = o->p;
    pd_real sum = 0;
    size_t inverted = 0, on_cone = 0;
    for (size_t i = begin; i < end; ++i) {
        const pd_mpm_material* m = &s->mat[p->material[i]];
        pd_mat3 grad = pd_m3_scale(o->pm[i], o->dt);
        pd_mat3 f = pd_m3_add(pd_m3_mul(grad, s->f[i]), s->admm_b[i]);
        inverted += stretches(f, &o->u[i], &o->s[i], &o->v[i]);
        pd_real ga[3], ha[3][3];
        int cone;
        sum += s->volume0[i] *
               incremental_density(m, o->s[i], s->dilation ? s->dilation[i] : 0, ga, ha, &cone);
        on_cone += cone;
        o->g[i] = pd_v3(ga[0], ga[1], ga[2]);
        store_hessian(&o->h[i], ha);
        pd_mat3 piola = pd_m3_from_svd(o->u[i], o->g[i], o->v[i]);
        pd_mat3 force = pd_m3_mul(piola, pd_m3_transpose(s->f[i]));
        if (m->maxwell) {
            pd_mat3 fn = pd_m3_add(pd_m3_mul(grad, s->fn[i]), s->mx_b[i]);
            inverted += stretches(fn, &o->un[i], &o->sn[i], &o->vn[i]);
            sum += s->volume0[i] * branch_density(m, o->sn[i], ga, ha);
            o->gn[i] = pd_v3(ga[0], ga[1], ga[2]);
            store_hessian(&o->hn[i], ha);
            piola = pd_m3_from_svd(o->un[i], o->gn[i], o->vn[i]);
            force = pd_m3_add(force, pd_m3_mul(piola, pd_m3_transpose(s->fn[i])));
        }
        o->pm[i] = pd_m3_scale(force, o->dt * s->volume0[i]);
    }
    o->chunk_energy[begin / OPT_GRAIN] = sum;
    o->chunk_inverted[begin / OPT_GRAIN] = inverted;
    o->chunk_associated[begin / OPT_GRAIN] = on_cone;
}

/* E at dv = y and r = S dE/d dv (the unfiltered gradient kept in o->gradient: the constraints'
 * impulses); nodes past the grid's stay 0. */
static pd_real evaluate(void* ctx, const pd_vec3* y, pd_vec3* r, pd_real* r_norm,
                        int* not_gradient) {
    pd_mpm_optimiser* o = ctx;
    pd_mpm_state* s = o->st;
    const pd_grid* grid = &s->grid;
    pd_grid_gradient(grid, y, o->pm);
    pd_parallel_for(s->n, OPT_GRAIN, particle_energy, o);
    pd_real e = 0;
    size_t on_cone = 0;
    o->inverted = 0;
    for (size_t k = 0; k * OPT_GRAIN < s->n; ++k)
        e += o->chunk_energy[k], o->inverted += o->chunk_inverted[k],
            on_cone += o->chunk_associated[k];
    *not_gradient = on_cone > 0; /* Drucker-Prager's stress is no gradient of E there */
    pd_grid_divergence(grid, o->pm, o->force);
    pd_real r2 = 0;
    for (size_t i = 0; i < o->cap; ++i) {
        pd_real m = i < grid->nodes ? grid->mass[i] : 0;
        if (!(m > 0)) {
            o->gradient[i] = r[i] = pd_v3(0, 0, 0);
            continue;
        }
        e += m * (0.5 * pd_v3_dot(y[i], y[i]) - pd_v3_dot(o->gdt, y[i]));
        o->gradient[i] = pd_v3_add(pd_v3_scale(pd_v3_sub(y[i], o->gdt), m), o->force[i]);
        r[i] = o->gradient[i];
    }
    pd_mpm_project_free(s, r);
    for (size_t i = 0; i < grid->nodes; ++i)
        r2 += pd_v3_len2(r[i]);
    *r_norm = sqrt(r2);
    return e;
}

static void filter(void* ctx, pd_vec3* v, size_t n) {
    (void)n;
    pd_mpm_optimiser* o = ctx;
    pd_mpm_project_free(o->st, v);
}

/* Psi of |Sigma| does not see an F turned inside out, and fixed corotated has no barrier
 * against it: a trial that inverts more particles than the line search's start is halved. */
static void search_begins(void* ctx) {
    pd_mpm_optimiser* o = ctx;
    o->inverted_at_search = o->inverted;
}

static int trial_admissible(void* ctx) {
    const pd_mpm_optimiser* o = ctx;
    return o->inverted <= o->inverted_at_search;
}

/* ---------------------------------------------------------------- preconditioners */

/* The diagonal of H at the step's start, for Jacobi: m_i + dt^2 sum_p k_p |F_p^n^T grad w_ip|^2
 * with k_p = V0 |d^2 Psi / d Sigma^2|_F at F^n (the ADMM's SEW weight, Sec. 7.3). */
static void diagonal(pd_mpm_optimiser* o) {
    pd_mpm_state* s = o->st;
    for (size_t i = 0; i < s->n; ++i) {
        pd_mat3 uu, vv;
        pd_vec3 sv;
        pd_svd3(s->f[i], &uu, &sv, &vv);
        pd_real sa[3] = {fmax(fabs(sv.x), 1e-3), fmax(fabs(sv.y), 1e-3), fmax(fabs(sv.z), 1e-3)};
        pd_real ga[3], ha[3][3], norm = 0;
        pd_mpm_gradient_hessian(&s->mat[o->p->material[i]], sa, ga, ha);
        for (int a = 0; a < 3; ++a)
            for (int c = 0; c < 3; ++c)
                norm += ha[a][c] * ha[a][c];
        pd_real k = s->volume0[i] * sqrt(norm) * o->dt * o->dt;
        o->pm[i] = pd_m3_scale(pd_m3_mul(s->f[i], pd_m3_transpose(s->f[i])), k);
        if (s->has_maxwell && s->mx_w2[i] > 0) /* + the branch's: its SEW weight w_N^2 */
            o->pm[i] =
                pd_m3_add(o->pm[i], pd_m3_scale(pd_m3_mul(s->fn[i], pd_m3_transpose(s->fn[i])),
                                                s->mx_w2[i] * o->dt * o->dt));
    }
    pd_grid_quadratic_sum(&s->grid, o->pm, o->diag);
    for (size_t i = 0; i < s->grid.nodes; ++i)
        o->diag[i] += s->grid.mass[i];
}

static void jacobi(const pd_mpm_optimiser* o, const pd_vec3* b, pd_vec3* z) {
    size_t nodes = o->st->grid.nodes;
    for (size_t i = 0; i < o->cap; ++i)
        z[i] = i < nodes && o->diag[i] > 0 ? pd_v3_scale(b[i], 1 / o->diag[i]) : pd_v3(0, 0, 0);
}

static void hessian_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    pd_mpm_optimiser* o = ctx;
    const pd_mpm_state* s = o->st;
    for (size_t i = begin; i < end; ++i) {
        pd_mat3 grad = pd_m3_scale(o->pm[i], o->dt);
        pd_mat3 df = pd_m3_mul(grad, s->f[i]);
        pd_mat3 dp =
            pd_principal_piola_differential(o->u[i], o->s[i], o->v[i], o->g[i], o->h[i], df, 1);
        pd_mat3 out = pd_m3_mul(dp, pd_m3_transpose(s->f[i]));
        if (s->mat[o->p->material[i]].maxwell) { /* + D_N^T (V0 dP_N/dF_N : D_N u) */
            df = pd_m3_mul(grad, s->fn[i]);
            dp = pd_principal_piola_differential(o->un[i], o->sn[i], o->vn[i], o->gn[i], o->hn[i],
                                                 df, 1);
            out = pd_m3_add(out, pd_m3_mul(dp, pd_m3_transpose(s->fn[i])));
        }
        o->pm[i] = pd_m3_scale(out, o->dt * s->volume0[i]);
    }
}

/* out = H u = M u + D^T (V0 dP/dF : D u), dP/dF projected (positive semi-definite) at the last
 * evaluation, constrained directions removed. */
static void apply_hessian(pd_mpm_optimiser* o, const pd_vec3* u, pd_vec3* out) {
    pd_mpm_state* s = o->st;
    pd_grid_gradient(&s->grid, u, o->pm);
    pd_parallel_for(s->n, OPT_GRAIN, hessian_range, o);
    pd_grid_divergence(&s->grid, o->pm, out);
    for (size_t i = 0; i < s->grid.nodes; ++i) /* + M u */
        out[i] = pd_v3_add(out[i], pd_v3_scale(u[i], s->grid.mass[i]));
    pd_mpm_project_free(s, out);
}

static void apply_hessian_cg(void* ctx, const pd_vec3* u, pd_vec3* out) {
    apply_hessian(ctx, u, out);
}

/* The conjugate gradients' preconditioned residual kept in the pins' free subspace. */
static void project_pins(void* ctx, pd_vec3* z) {
    pd_mpm_pin_project(((const pd_mpm_optimiser*)ctx)->st, z, 0);
}

/* newton: z = H^-1 b by Jacobi-preconditioned conjugate gradients from 0, at most cg_iterations,
 * until the residual fell by cg_tolerance (an inexact Newton step; CG's iterates from 0 are
 * descent directions of a positive definite H). */
static pd_status newton_direction(pd_mpm_optimiser* o, const pd_vec3* b, pd_vec3* z) {
    pd_mpm_state* s = o->st;
    size_t nn = s->grid.nodes;
    memset(z, 0, o->cap * sizeof *z);
    memcpy(o->cg_r, b, nn * sizeof *o->cg_r);
    pd_mpm_project_free(s, o->cg_r);
    pd_grid_cg cg = {apply_hessian_cg, o,       o->diag,  s->prm.cg_iterations, s->prm.cg_tolerance,
                     o->cg_z,          o->cg_d, o->cg_ad, project_pins};
    o->cg_total += pd_grid_cg_solve(&cg, nn, o->cg_r, z);
    return PD_OK;
}

/* lbfgs's initial Hessian H0 (Nocedal and Wright Alg. 7.4; Liu et al. 2017 take a fixed SPD
 * matrix there): grid_matrix solves A z = b with the ADMM's stored A = M + D^T w^2 D (Fang 2019
 * Sec. 7.1), which has the incremental potential's Hessian's structure and scale (w^2 = V0
 * |d^2 Psi / d Sigma^2|_F for V0 dP/dF), so the pairs need only correct its stand-in for dP/dF;
 * diagonal divides by A's diagonal. */
static pd_status precondition(void* ctx, const pd_vec3* b, pd_vec3* z) {
    pd_mpm_optimiser* o = ctx;
    if (o->st->prm.integrator == PD_MPM_NEWTON)
        return newton_direction(o, b, z);
    if (o->st->prm.lbfgs_preconditioner == PD_MPM_LBFGS_DIAGONAL) {
        jacobi(o, b, z);
        return PD_OK;
    }
    size_t nodes = o->st->grid.nodes;
    o->cg_total += pd_mpm_grid_matrix_solve(o->st, b, z);
    memset(z + nodes, 0, (o->cap - nodes) * sizeof *z);
    return PD_OK;
}

/* ---------------------------------------------------------------- the step */

/* b_p = (I + dt G(v^n)_p) F_p^n, and F_p^n, in the ADMM's arrays (its D, the grid matrix and
 * pd_mpm_implicit_residual read them there). */
static void start_of_step(pd_mpm_optimiser* o) {
    pd_mpm_state* s = o->st;
    pd_mat3* b = s->admm_b;
    pd_grid_gradient(&s->grid, s->grid.velocity, b);
    for (size_t i = 0; i < s->n; ++i)
        b[i] = pd_m3_mul(pd_m3_add(pd_m3_identity(), pd_m3_scale(b[i], o->dt)), s->f[i]);
    memcpy(s->admm_fn, s->f, s->n * sizeof *s->f);
}

/* The start: the explicit guess y_g = dt g set to what the constraints fix, y_c, jumps at a
 * collider by the approach speed: at steps far beyond the explicit bound the cells between
 * constrained and free nodes would start crushed or inverted. So the start is the minimiser of
 * E's quadratic model at y_g over the free directions from y_c: y_c + z with
 * S H z = -S (dE/d dv(y_g) + H (y_c - y_g)), by the Newton step's conjugate gradients (for
 * lbfgs too). */
static void start_point(pd_mpm_optimiser* o, const pd_descent_problem* pr) {
    pd_mpm_state* s = o->st;
    size_t nodes = s->grid.nodes;
    pd_vec3 *y = o->d.y, *jump = o->d.work, *b = o->d.dir;
    for (size_t i = 0; i < o->cap; ++i) /* the explicit guess: gravity alone */
        y[i] = i < nodes && s->grid.mass[i] > 0 ? o->gdt : pd_v3(0, 0, 0);
    pd_real r_norm;
    pd_descent_evaluate(&o->d, pr, &r_norm); /* H and dE/d dv at y_g */
    memcpy(jump, y, o->cap * sizeof *jump);
    pd_mpm_impose_constraints(s, y);
    for (size_t i = 0; i < nodes; ++i)
        jump[i] = pd_v3_sub(y[i], jump[i]);
    apply_hessian(o, jump, b);
    for (size_t i = 0; i < o->cap; ++i)
        b[i] = pd_v3_scale(pd_v3_add(i < nodes ? b[i] : pd_v3(0, 0, 0), o->gradient[i]), -1);
    newton_direction(o, b, jump);
    for (size_t i = 0; i < nodes; ++i)
        y[i] = pd_v3_add(y[i], jump[i]);
}

/* The momentum the step moves, sqrt(sum_i (m_i (|v_i| + dt |g|))^2): the residual's yardstick. */
static pd_real momentum_scale(const pd_mpm_optimiser* o) {
    const pd_grid* g = &o->st->grid;
    pd_real sum = 0, gdt = pd_v3_len(o->gdt);
    for (size_t i = 0; i < g->nodes; ++i) {
        pd_real q = g->mass[i] * (pd_v3_len(g->velocity[i]) + gdt);
        sum += q * q;
    }
    return sqrt(sum);
}

/* After the solve, as the ADMM's friction_after_solve: a held node's impulse per mass of its
 * pins is the constraint's, +dE/d dv there (M dv = dt M g - D^T V0 P + j: the impulse j that
 * holds the node is the residual the free equation leaves); at a slip node Coulomb friction takes
 * up to mu j_n of the tangential speed relative to the collider, j_n = dE/d dv . n / m (tangent
 * to a corner's second normal too: pd_mpm_slip_part). */
static void friction_and_pins(pd_mpm_optimiser* o, const pd_colliders* colliders, pd_vec3* dv) {
    pd_mpm_state* s = o->st;
    const pd_grid* g = &s->grid;
    int ny = g->dim[1], nz = g->dim[2];
    if (s->has_pins) /* a held node's +dE/d dv */
        pd_mpm_pin_impulses(s, o->gradient);
    for (size_t n = 0; n < g->nodes; ++n) {
        if (s->bc_kind[n] != PD_MPM_BC_NORMAL)
            continue;
        const pd_collider* col = &colliders->items[s->bc_collider[n]];
        int i = (int)(n / ((size_t)ny * nz)), j = (int)(n / nz % ny), k = (int)(n % nz);
        pd_vec3 vc = pd_collider_velocity_at(col, pd_grid_node(g, i, j, k));
        pd_vec3 nrm = s->bc_normal[n];
        pd_real jn = pd_v3_dot(o->gradient[n], nrm) / g->mass[n];
        pd_vec3 rel = pd_v3_sub(pd_v3_add(g->velocity[n], dv[n]), vc);
        pd_vec3 vt = pd_mpm_slip_part(s, n, rel);
        pd_real speed = pd_v3_len(vt);
        if (jn <= 0 || speed == 0)
            continue;
        pd_real keep = fmax(0, 1 - pd_mpm_node_friction(s, col, n) * jn / speed);
        dv[n] = pd_v3_sub(dv[n], pd_v3_scale(vt, 1 - keep));
    }
}

pd_status pd_mpm_optimiser_solve(pd_mpm_state* s, const pd_step_context* ctx, int* iterations,
                                 pd_real* residual) {
    size_t nodes = s->grid.nodes;
    pd_status st = pd_mpm_admm_reserve(s, nodes); /* the boundary conditions' arrays */
    if (st == PD_OK)
        st = reserve(s, nodes);
    if (st != PD_OK)
        return st;
    pd_mpm_optimiser* o = s->opt;
    o->st = s, o->p = ctx->particles, o->dt = ctx->dt, o->cg_total = 0;
    o->gdt = pd_v3_scale(ctx->gravity, ctx->dt);
    pd_mpm_find_constraints(s, ctx->particles, ctx->colliders);
    start_of_step(o);
    if (s->has_maxwell) { /* b_N = (I + dt G(v^n)) F_N^n, F_N^n and w_N^2, as the ADMM's */
        if ((st = pd_mpm_maxwell_reserve(s)) != PD_OK)
            return st;
        pd_mpm_maxwell_start(s, ctx->particles, ctx->dt, 1);
    }
    diagonal(o);
    if (s->prm.integrator == PD_MPM_LBFGS &&
        s->prm.lbfgs_preconditioner == PD_MPM_LBFGS_GRID_MATRIX &&
        (st = pd_mpm_grid_matrix(s, ctx->particles, ctx->dt, s->admm_b)) != PD_OK)
        return st;
    pd_descent_problem pr = {.ctx = o,
                             .evaluate = evaluate,
                             .precondition = precondition,
                             .filter = filter,
                             .search_begins = search_begins,
                             .trial_admissible = trial_admissible};
    start_point(o, &pr);
    pd_real r, scale = momentum_scale(o);
    pd_real merit = pd_descent_evaluate(&o->d, &pr, &r);
    pd_descent_report rep;
    st = pd_descent_solve(&o->d, &pr, merit, r, scale, &rep);
    if (st != PD_OK)
        return st;
    memcpy(s->admm_dv, o->d.y, nodes * sizeof *s->admm_dv);
    friction_and_pins(o, ctx->colliders, s->admm_dv);
    *iterations = rep.iterations;
    *residual = scale > 0 ? rep.residual / scale : rep.residual;
    s->last_cg_iterations = o->cg_total;
    return PD_OK;
}
