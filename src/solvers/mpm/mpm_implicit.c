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
 * 1999); Drucker-Prager and the Maxwell branch are refused (their correctors inside E make it no
 * potential). */
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
    /* per particle: b_p, a matrix of D or D^T, and the last evaluation's F = U diag(s) V^T with
     * Psi's gradient g and Hessian h in the stretches */
    pd_mat3 *b, *pm, *u, *v, *h;
    pd_vec3 *s, *g;
    pd_real* chunk_energy;
    size_t* chunk_inverted; /* particles with det F <= 0, per chunk */
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
    X(b, pd_mat3)                                                                                  \
    X(pm, pd_mat3) X(u, pd_mat3) X(v, pd_mat3) X(h, pd_mat3) X(s, pd_vec3) X(g, pd_vec3)
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
#undef FREE_ONE
    PD_FREE_ARRAY(o->chunk_energy, pd_real, o->n / OPT_GRAIN + 1);
    PD_FREE_ARRAY(o->chunk_inverted, size_t, o->n / OPT_GRAIN + 1);
    pd_free(o, sizeof *o);
    s->opt = NULL;
}

static pd_descent_def descent_def(const pd_mpm_params* prm) {
    pd_descent_def def = pd_default_descent_def();
    def.iterations = prm->optimiser_iterations;
    def.tolerance = prm->optimiser_tolerance;
    def.history = prm->integrator == PD_MPM_LBFGS ? prm->history : 0;
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
        o->n = s->n;
#define ALLOC_ONE(f, T) o->f = PD_NEW_ARRAY(T, o->n + 1);
        OPT_PARTICLE_ARRAYS(ALLOC_ONE)
#undef ALLOC_ONE
        o->chunk_energy = PD_NEW_ARRAY(pd_real, o->n / OPT_GRAIN + 1);
        o->chunk_inverted = PD_NEW_ARRAY(size_t, o->n / OPT_GRAIN + 1);
#define CHECK_ONE(f, T) || !o->f
        if (!o->chunk_energy || !o->chunk_inverted OPT_PARTICLE_ARRAYS(CHECK_ONE))
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

/* The incremental potential's density at F's stretches s (> 0), with its gradient g and
 * Hessian h in s. Elastic: Psi_E(s). Plastic (von Mises): the variational constitutive update of
 * Ortiz and Stainier 1999, which Fang 2019 Sec. 7.1 names as the potential its Xi_E stands for,
 * with Z_E the Hencky return (hencky_plasticity.h): W(s) = Psi(Z(s)) + tau(Z(s)) . (ln s - ln
 * Z(s)), the elastic energy the return leaves plus the work the step's flow dissipates. In the
 * Hencky strain e = ln s, dW/de = tau(Z) + dZ_e^T C (e - ln Z) and the second term vanishes for
 * von Mises: e - ln Z lies along the deviator's normal n, and the return's derivative dZ_e =
 * 1/3 1 1^T + c (P_dev - n n^T) maps n to 0. So dW/ds_a = tau_a(Z(s)) / s_a, P = tau(Z(F)) F^-T:
 * the returned Kirchhoff stress (Eq. 6 at Z, Sec. 5.2), pulled back by the trial F, where Eq. 10
 * takes P(Z(F)) = tau(Z) Z^-T (the two differ by the step's plastic stretch). W is the Moreau
 * envelope of a convex Psi over the yield set, C^1 and convex in e, with the symmetric Hessian
 * d tau / de = C dZ_e (h below, from d tau / ds = C diag(1 / Z) dZ). Drucker-Prager's return
 * keeps the volume (non-associated): dZ_e^T n != 0 and no W has its stress (refused,
 * mpm_setup.c). */
static pd_real incremental_density(const pd_mpm_material* m, pd_vec3 s, pd_real g[3],
                                   pd_real h[3][3]) {
    pd_real sa[3] = {s.x, s.y, s.z};
    if (!m->plastic) {
        pd_mpm_gradient_hessian(m, sa, g, h);
        return pd_mpm_energy(m, s);
    }
    pd_vec3 z, gv;
    pd_mat3 dz, hm;
    pd_hencky_return(&m->yield, s, &z, &dz);
    pd_vec3 tau = pd_hencky_kirchhoff(m->lambda, m->mu, z);
    pd_mat3 dtau = pd_m3_mul(pd_hencky_kirchhoff_derivative(m->lambda, m->mu, z), dz);
    pd_principal_gradient_hessian(s, tau, dtau, &gv, &hm);
    g[0] = gv.x, g[1] = gv.y, g[2] = gv.z;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            h[a][b] = 0.5 * (hm.m[a][b] + hm.m[b][a]); /* symmetric but for round-off */
    return pd_hencky_energy(m->lambda, m->mu, z) + tau.x * log(s.x / z.x) + tau.y * log(s.y / z.y) +
           tau.z * log(s.z / z.z);
}

/* Per particle at F = D dv + b (D dv's G in pm): V0 W(F) summed per chunk (the density above),
 * F's SVD with W's gradient and Hessian in the stretches kept for the Hessian, and pm <- dt V0 P
 * F^n^T (what pd_grid_divergence turns into D^T (V0 P)). W of |Sigma| with F's rotation, as the
 * explicit step and the ADMM take it. */
static void particle_energy(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    pd_mpm_optimiser* o = ctx;
    const pd_mpm_state* s = o->st;
    const pd_particles* p = o->p;
    pd_real sum = 0;
    size_t inverted = 0;
    for (size_t i = begin; i < end; ++i) {
        const pd_mpm_material* m = &s->mat[p->material[i]];
        pd_mat3 f = pd_m3_add(pd_m3_scale(pd_m3_mul(o->pm[i], s->f[i]), o->dt), o->b[i]);
        pd_vec3 sv;
        pd_svd3(f, &o->u[i], &sv, &o->v[i]);
        inverted += !(sv.z > 0);
        sv = pd_v3(fmax(fabs(sv.x), 1e-6), fmax(fabs(sv.y), 1e-6), fmax(fabs(sv.z), 1e-6));
        pd_real ga[3], ha[3][3];
        sum += s->volume0[i] * incremental_density(m, sv, ga, ha);
        o->s[i] = sv, o->g[i] = pd_v3(ga[0], ga[1], ga[2]);
        for (int a = 0; a < 3; ++a)
            for (int c = 0; c < 3; ++c)
                o->h[i].m[a][c] = ha[a][c];
        pd_mat3 piola = pd_m3_from_svd(o->u[i], o->g[i], o->v[i]);
        o->pm[i] = pd_m3_scale(pd_m3_mul(piola, pd_m3_transpose(s->f[i])), o->dt * s->volume0[i]);
    }
    o->chunk_energy[begin / OPT_GRAIN] = sum;
    o->chunk_inverted[begin / OPT_GRAIN] = inverted;
}

/* E at dv = y and r = S dE/d dv (the unfiltered gradient kept in o->gradient: the constraints'
 * impulses); nodes past the grid's stay 0. */
static pd_real evaluate(void* ctx, const pd_vec3* y, pd_vec3* r, pd_real* r_norm,
                        int* not_gradient) {
    (void)not_gradient;
    pd_mpm_optimiser* o = ctx;
    pd_mpm_state* s = o->st;
    const pd_grid* grid = &s->grid;
    pd_grid_gradient(grid, y, o->pm);
    pd_parallel_for(s->n, OPT_GRAIN, particle_energy, o);
    pd_real e = 0;
    o->inverted = 0;
    for (size_t k = 0; k * OPT_GRAIN < s->n; ++k)
        e += o->chunk_energy[k], o->inverted += o->chunk_inverted[k];
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
        pd_real k = pd_mpm_pin_stiffness(s, i); /* the pins' penalty (mpm_internal.h) */
        if (k > 0) {
            pd_vec3 off = pd_v3_sub(y[i], pd_mpm_pin_target(s, i));
            e += 0.5 * k * pd_v3_dot(off, off);
            o->gradient[i] = pd_v3_madd(o->gradient[i], k, off);
        }
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
    }
    pd_grid_quadratic_sum(&s->grid, o->pm, o->diag);
    for (size_t i = 0; i < s->grid.nodes; ++i)
        o->diag[i] += s->grid.mass[i] + pd_mpm_pin_stiffness(s, i);
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
        pd_mat3 df = pd_m3_scale(pd_m3_mul(o->pm[i], s->f[i]), o->dt);
        pd_mat3 dp =
            pd_principal_piola_differential(o->u[i], o->s[i], o->v[i], o->g[i], o->h[i], df, 1);
        o->pm[i] = pd_m3_scale(pd_m3_mul(dp, pd_m3_transpose(s->f[i])), o->dt * s->volume0[i]);
    }
}

/* out = H u = M u + D^T (V0 dP/dF : D u), dP/dF projected (positive semi-definite) at the last
 * evaluation, constrained directions removed. */
static void apply_hessian(pd_mpm_optimiser* o, const pd_vec3* u, pd_vec3* out) {
    pd_mpm_state* s = o->st;
    pd_grid_gradient(&s->grid, u, o->pm);
    pd_parallel_for(s->n, OPT_GRAIN, hessian_range, o);
    pd_grid_divergence(&s->grid, o->pm, out);
    for (size_t i = 0; i < s->grid.nodes; ++i) /* + M u and the pins' penalty k u */
        out[i] = pd_v3_add(out[i], pd_v3_scale(u[i], s->grid.mass[i] + pd_mpm_pin_stiffness(s, i)));
    pd_mpm_project_free(s, out);
}

static void apply_hessian_cg(void* ctx, const pd_vec3* u, pd_vec3* out) {
    apply_hessian(ctx, u, out);
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
    pd_grid_cg cg = {apply_hessian_cg,    o,       o->diag, s->prm.cg_iterations,
                     s->prm.cg_tolerance, o->cg_z, o->cg_d, o->cg_ad};
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

/* b_p = (I + dt G(v^n)_p) F_p^n. */
static void start_of_step(pd_mpm_optimiser* o) {
    pd_mpm_state* s = o->st;
    pd_grid_gradient(&s->grid, s->grid.velocity, o->b);
    for (size_t i = 0; i < s->n; ++i)
        o->b[i] = pd_m3_mul(pd_m3_add(pd_m3_identity(), pd_m3_scale(o->b[i], o->dt)), s->f[i]);
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
 * up to mu j_n of the tangential speed relative to the collider, j_n = dE/d dv . n / m. */
static void friction_and_pins(pd_mpm_optimiser* o, const pd_colliders* colliders, pd_vec3* dv) {
    pd_mpm_state* s = o->st;
    const pd_grid* g = &s->grid;
    int ny = g->dim[1], nz = g->dim[2];
    for (size_t n = 0; n < g->nodes && s->has_pins; ++n) { /* fixed: +dE/d dv; partly: k (..) */
        pd_real k = pd_mpm_pin_stiffness(s, n),
                per = s->pin_node_mass[n] > 0 ? 1 / s->pin_node_mass[n] : 0;
        pd_vec3 j = s->pin_node_hold[n] >= PD_MPM_PIN_FULL
                        ? o->gradient[n]
                        : pd_v3_scale(pd_v3_sub(pd_mpm_pin_target(s, n), dv[n]), k);
        s->pin_node_impulse[n] = pd_v3_scale(j, per);
    }
    for (size_t n = 0; n < g->nodes; ++n) {
        if (s->bc_kind[n] != PD_MPM_BC_NORMAL)
            continue;
        const pd_collider* col = &colliders->items[s->bc_collider[n]];
        int i = (int)(n / ((size_t)ny * nz)), j = (int)(n / nz % ny), k = (int)(n % nz);
        pd_vec3 vc = pd_collider_velocity_at(col, pd_grid_node(g, i, j, k));
        pd_vec3 nrm = s->bc_normal[n];
        pd_real jn = pd_v3_dot(o->gradient[n], nrm) / g->mass[n];
        pd_vec3 rel = pd_v3_sub(pd_v3_add(g->velocity[n], dv[n]), vc);
        pd_vec3 vt = pd_v3_sub(rel, pd_v3_scale(nrm, pd_v3_dot(rel, nrm)));
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
    diagonal(o);
    if (s->prm.integrator == PD_MPM_LBFGS &&
        s->prm.lbfgs_preconditioner == PD_MPM_LBFGS_GRID_MATRIX &&
        (st = pd_mpm_grid_matrix(s, ctx->particles, ctx->dt, o->b)) != PD_OK)
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
