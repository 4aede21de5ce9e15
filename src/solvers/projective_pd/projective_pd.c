/* Projective peridynamics: He, Wang, Wu 2017, "Projective Peridynamics for Modeling Versatile
 * Elastoplastic Materials", IEEE TVCG 24(9). Sec. 3-4: elasticity.
 *
 * Each step solves the implicit Euler system of Eq. 12 by local/global iterations: the local
 * step computes, for every bond, the target of Y<xi> from dir(F xi) (Eq. 10, deviatoric) and
 * dir(Y) (Eq. 11, isotropic); the global step solves the constant linear system those targets
 * leave; Eq. 13 takes the step with a backtracking (Armijo) line search. */
#include "solvers/projective_pd/projective_pd_data.h"
#include "solvers/solver.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/timer.h"
#include "math/svd3.h"
#include "parallel/parallel.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "world/world.h"

#define PPD_GRAIN 512

/* ---------------------------------------------------------------- local step (Eq. 8-11) */

/* F = (Y*X)(X*X)^+ over i's family (Sec. 3), with the inversion fix of Sec. 4.1. */
static pd_mat3 deformation_gradient(const pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_family* f = &s->fam;
    pd_mat3 yx = pd_m3_zero();
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 yb = pd_v3_sub(y[f->j[b]], y[i]);
        pd_m3_add_outer(&yx, f->w[b] * s->volume[f->j[b]], yb, f->xi[b]);
    }
    pd_mat3 F = pd_m3_mul(yx, s->kinv[i]);
    if (s->prm.inversion_fix && !s->planar[i] && pd_m3_det(F) < 0) {
        for (int c = 0; c < 3; ++c) { /* permute the first two rows (Sec. 4.1, Fig. 3) */
            pd_real t = F.m[0][c];
            F.m[0][c] = F.m[1][c];
            F.m[1][c] = t;
        }
    }
    return F;
}

static pd_vec3 unit_or(pd_vec3 v, pd_vec3 fallback) {
    pd_real len = pd_v3_len(v);
    return len > 1e-300 ? pd_v3_scale(v, 1.0 / len) : fallback;
}

/* Projects every bond of particle i: the target p of Y<xi> blends |X| dir(F xi) (Eq. 10,
 * weight mu), |X| dir(Y) (Eq. 11, weight lambda/2) and, with the dilatation option, F xi
 * scaled to unit volume (weight kv). */
static void project_particle(pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_family* f = &s->fam;
    const pd_ppd_material* m = &s->mat[s->material[i]];
    pd_mat3 F = deformation_gradient(s, y, i);
    pd_real kv = s->planar[i] ? 0 : m->kv;
    pd_real jscale = kv > 0 ? 1.0 / cbrt(fmax(pd_m3_det(F), 1e-6)) : 1;
    pd_real inv = 1.0 / (m->mu + 0.5 * m->lambda + kv);
    pd_real wdev = m->mu * inv, wiso = 0.5 * m->lambda * inv, wvol = kv * jscale * inv;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 X = f->xi[b], Y = pd_v3_sub(y[f->j[b]], y[i]);
        pd_real len = s->len[b];
        pd_vec3 fx = pd_m3_mulv(F, X), xdir = pd_v3_scale(X, 1.0 / len);
        pd_vec3 ddev = unit_or(fx, unit_or(Y, xdir));
        pd_vec3 diso = unit_or(Y, unit_or(fx, xdir));
        pd_vec3 p = pd_v3_scale(fx, wvol);
        p = pd_v3_madd(p, wdev * len, ddev);
        s->p[b] = pd_v3_madd(p, wiso * len, diso);
    }
}

/* q_i = sum_j (a_ji p_ji - a_ij p_ij): the targets' push on i, gathered without atomics. */
static void gather_targets(pd_ppd_state* s, uint32_t i) {
    const pd_family* f = &s->fam;
    pd_vec3 q = pd_v3(0, 0, 0);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        uint32_t rb = f->rev[b];
        q = pd_v3_madd(q, s->a[rb], s->p[rb]);
        q = pd_v3_madd(q, -s->a[b], s->p[b]);
    }
    s->q[i] = q;
}

typedef struct ppd_ctx {
    pd_ppd_state* s;
    const pd_vec3* y;
    const uint8_t* flags;
    pd_real alpha;
    const pd_vec3* from;
    const pd_vec3* dir;
    pd_vec3* out;
    pd_real omega;
} ppd_ctx;

static int is_free(const ppd_ctx* c, size_t i) {
    return !(c->flags[i] & PD_P_CONSTRAINED);
}

static void local_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    for (size_t i = begin; i < end; ++i)
        project_particle(c->s, c->y, (uint32_t)i);
}

static void gather_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    for (size_t i = begin; i < end; ++i)
        gather_targets(c->s, (uint32_t)i);
}

static pd_real sum_partials(const pd_ppd_state* s) {
    pd_real sum = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        sum += s->partial[k];
    return sum;
}

/* Projects all bonds at y and gathers q. */
static void local_step(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags) {
    ppd_ctx c = {.s = s, .y = y, .flags = flags};
    pd_parallel_for(s->n, PPD_GRAIN, local_kernel, &c);
    pd_parallel_for(s->n, PPD_GRAIN, gather_kernel, &c);
}

/* ---------------------------------------------------------------- residual and global step */

/* sum_j c_ij y_j + m y* / h^2 + q_i: everything of row i but the diagonal. */
static pd_vec3 row_rhs(const pd_ppd_state* s, const pd_vec3* y, size_t i) {
    const pd_family* f = &s->fam;
    pd_vec3 acc = pd_v3_madd(s->q[i], s->mass[i] / (s->dt * s->dt), s->ystar[i]);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        acc = pd_v3_madd(acc, s->c[b], y[f->j[b]]);
    return acc;
}

/* r = A y - b (Eq. 12 as a force balance); partial sums of |r|^2. */
static void residual_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    pd_real sum = 0;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 r = pd_v3(0, 0, 0);
        if (is_free(c, i))
            r = pd_v3_sub(pd_v3_scale(c->y[i], s->diag[i]), row_rhs(s, c->y, i));
        s->r[i] = r;
        sum += pd_v3_len2(r);
    }
    s->partial[begin / PPD_GRAIN] = sum;
}

static pd_real residual_norm(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags) {
    ppd_ctx c = {.s = s, .y = y, .flags = flags};
    pd_parallel_for(s->n, PPD_GRAIN, residual_kernel, &c);
    return sqrt(sum_partials(s));
}

/* One Jacobi sweep with Chebyshev weight omega (Wang 2015): out = omega (J(y) - yprev) + yprev;
 * omega = 1 is plain Jacobi. Constrained particles keep their place. */
static void jacobi_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    for (size_t i = begin; i < end; ++i) {
        if (!is_free(c, i)) {
            c->out[i] = c->y[i];
            continue;
        }
        pd_vec3 jac = pd_v3_scale(row_rhs(s, c->y, i), 1.0 / s->diag[i]);
        c->out[i] = pd_v3_madd(c->from[i], c->omega, pd_v3_sub(jac, c->from[i]));
    }
}

/* Chebyshev semi-iteration on Jacobi, warm-started at y (Golub-Varga weights, spectrum of the
 * Jacobi matrix in [-rho, rho]). Result in s->yhat. */
static void solve_chebyshev(pd_ppd_state* s, const uint8_t* flags, int sweeps) {
    pd_vec3 *cur = s->ytrial, *prev = s->yprev, *next = s->yhat;
    memcpy(cur, s->y, s->n * sizeof(pd_vec3));
    memcpy(prev, s->y, s->n * sizeof(pd_vec3));
    pd_real omega = 1, rho2 = s->rho * s->rho;
    for (int k = 0; k < sweeps; ++k) {
        omega = k == 0 ? 1 : (k == 1 ? 2 / (2 - rho2) : 4 / (4 - rho2 * omega));
        ppd_ctx c = {.s = s, .y = cur, .flags = flags, .from = prev, .out = next, .omega = omega};
        pd_parallel_for(s->n, PPD_GRAIN, jacobi_kernel, &c);
        pd_vec3* t = prev;
        prev = cur;
        cur = next;
        next = t;
    }
    if (cur != s->yhat)
        memcpy(s->yhat, cur, s->n * sizeof(pd_vec3));
}

static pd_status global_step(pd_ppd_state* s, const uint8_t* flags) {
    switch (s->prm.global_solve) {
        case PD_PPD_DIRECT:
            return pd_ppd_solve_direct(s, flags);
        case PD_PPD_POSITION_BASED:
            /* Fig. 7's position-based solve: each particle moves to the average of the
             * positions its neighbourhood suggests (one plain Jacobi sweep). */
            solve_chebyshev(s, flags, 1);
            return PD_OK;
        default:
            solve_chebyshev(s, flags, s->prm.linear_iterations);
            return PD_OK;
    }
}

/* ---------------------------------------------------------------- line search (Eq. 13) */

static void axpy_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    for (size_t i = begin; i < end; ++i)
        c->out[i] = pd_v3_madd(c->from[i], c->alpha, pd_v3_sub(c->dir[i], c->from[i]));
}

/* y_trial = y + alpha (yhat - y), then its projections and residual norm. */
static pd_real evaluate_trial(pd_ppd_state* s, const uint8_t* flags, pd_real alpha) {
    ppd_ctx c = {.s = s, .from = s->y, .dir = s->yhat, .out = s->ytrial, .alpha = alpha};
    s->trials++;
    pd_parallel_for(s->n, PPD_GRAIN, axpy_kernel, &c);
    local_step(s, s->ytrial, flags);
    return residual_norm(s, s->ytrial, flags);
}

/* Eq. 13 with a backtracking line search. The merit is the squared residual of Eq. 12,
 * |r|^2: with the directions of Eq. 10-11 frozen, its slope along yhat - y = -A^-1 r is
 * -|r|^2, so the Armijo condition reads |r(y + a d)|^2 <= (1 - 2 c a) |r(y)|^2. (The
 * deviatoric force of Eq. 10 is not the exact gradient of Eq. 8, so the energy itself is
 * no reliable merit.) When no step length up to 1/64 satisfies it, the full step is taken, as
 * plain projective dynamics would. Leaves the accepted point in s->y with its projections and
 * residual; returns its residual norm. */
static pd_real line_search(pd_ppd_state* s, const uint8_t* flags, pd_real r_norm, int* failed) {
    pd_real alpha = 1, trial = evaluate_trial(s, flags, 1);
    *failed = 0;
    while (s->prm.line_search &&
           trial * trial > (1 - 2 * s->prm.armijo * alpha) * r_norm * r_norm) {
        if (alpha < 1.0 / 64) {
            *failed = 1;
            trial = evaluate_trial(s, flags, 1);
            break;
        }
        alpha *= 0.5;
        trial = evaluate_trial(s, flags, alpha);
    }
    pd_vec3* t = s->y;
    s->y = s->ytrial;
    s->ytrial = t;
    return trial;
}

/* ---------------------------------------------------------------- one time step */

static void predict(pd_ppd_state* s, const pd_particles* p) {
    pd_real h = s->dt;
    for (size_t i = 0; i < s->n; ++i) {
        int constrained = p->flags[i] & PD_P_CONSTRAINED;
        s->ystar[i] = constrained
                          ? p->pos[i]
                          : pd_v3_madd(pd_v3_madd(p->pos[i], h, p->vel[i]), h * h, s->gravity);
        s->y[i] = s->ystar[i];
    }
}

static void finish(pd_ppd_state* s, pd_particles* p) {
    for (size_t i = 0; i < s->n; ++i) {
        if (p->flags[i] & PD_P_CONSTRAINED) {
            /* internal force on a held particle, -dE/dy_i = q_i + sum_j c_ij (y_j - y_i),
             * from which the world measures the pin's reaction */
            pd_real inertia = s->mass[i] / (s->dt * s->dt);
            pd_vec3 f = pd_v3_madd(row_rhs(s, s->y, i), -inertia, s->ystar[i]);
            p->force[i] = pd_v3_madd(f, -(s->diag[i] - inertia), s->y[i]);
            continue;
        }
        p->vel[i] = pd_v3_scale(pd_v3_sub(s->y[i], p->pos[i]), 1.0 / s->dt);
        p->pos[i] = s->y[i];
    }
}

static pd_status ppd_step(void* state, struct pd_world* w, pd_step_stats* stats) {
    pd_ppd_state* s = state;
    pd_particles* p = &w->particles;
    const uint8_t* flags = p->flags;
    double t0 = pd_now();
    predict(s, p);
    local_step(s, s->y, flags);
    pd_real r0 = residual_norm(s, s->y, flags), r = r0;
    double t_local = pd_now() - t0, t_global = 0;
    s->line_search_failures = 0;
    s->residual_increases = 0;
    s->trials = 0;
    int it = 0;
    while (it < s->prm.iterations && r > s->prm.tolerance * r0) {
        double ta = pd_now();
        pd_status st = global_step(s, flags);
        if (st != PD_OK)
            return st;
        double tb = pd_now();
        int failed = 0;
        pd_real next = line_search(s, flags, r, &failed);
        s->line_search_failures += failed;
        s->residual_increases += next > r;
        r = next;
        t_global += tb - ta;
        t_local += pd_now() - tb;
        ++it;
    }
    finish(s, p);
    s->last_iterations = it;
    s->last_residual = r0 > 0 ? r / r0 : 0;
    stats->iterations = it;
    stats->residual = s->last_residual;
    stats->t_local = t_local;
    stats->t_global = t_global;
    return PD_OK;
}

static void ppd_destroy(void* state) {
    pd_ppd_destroy_state(state);
}

static size_t ppd_bytes_per_particle(const void* params) {
    const pd_ppd_params* prm = params;
    /* about 33 bonds of j, rev, xi, w, a, c, p; plus the per-particle arrays */
    size_t bonds = (size_t)(4.2 * prm->horizon * prm->horizon * prm->horizon) + 1;
    size_t per_bond = 2 * sizeof(uint32_t) + 2 * sizeof(pd_vec3) + 3 * sizeof(pd_real);
    size_t per_particle = sizeof(pd_mat3) + 8 * sizeof(pd_vec3) + 2 * sizeof(pd_real) + 16;
    size_t direct = prm->global_solve == PD_PPD_DIRECT ? bonds * 40 : 0; /* factor fill-in */
    return bonds * per_bond + per_particle + direct;
}

const pd_solver_vtable pd_projective_pd_solver = {
    .name = "projective_pd",
    .paper = "He, Wang, Wu 2017, Projective Peridynamics",
    .params = &pd_ppd_param_table,
    .material_params = &pd_ppd_material_table,
    .check_material = pd_ppd_check_material,
    .create = pd_ppd_create,
    .destroy = ppd_destroy,
    .step = ppd_step,
    .bytes_per_particle = ppd_bytes_per_particle,
};
