/* Projective peridynamics: He, Wang, Wu 2017, "Projective Peridynamics for Modeling Versatile
 * Elastoplastic Materials", IEEE TVCG 24(9). Sec. 3-4: elasticity.
 *
 * Each step solves the implicit Euler system of Eq. 12. The local step computes, for every
 * bond, the target of Y<xi> from dir(F xi) (Eq. 10, deviatoric) and dir(Y) (Eq. 11,
 * isotropic); the global step solves the constant linear system those targets leave. As the
 * paper says (Sec. 4.2), this is a preconditioned descent on the energy of Eq. 12 with the
 * system matrix as preconditioner: Eq. 13 takes the step with a backtracking line search
 * (Armijo) on that energy, whose exact gradient we also compute. */
#include "solvers/projective_pd/projective_pd_data.h"

#include <math.h>
#include <string.h>

#include "boundary/collider.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/timer.h"
#include "math/svd3.h"
#include "parallel/parallel.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "solvers/solver.h"
#include "world/world.h"

#define PPD_GRAIN 512
/* det F below which a particle counts as inverted for the fix of Sec. 4.1 (see local_particle) */
#define PPD_INVERTED 0.05

/* ---------------------------------------------------------------- local step (Eq. 8-11) */

static void swap_rows01(pd_mat3* m) {
    for (int c = 0; c < 3; ++c) {
        pd_real t = m->m[0][c];
        m->m[0][c] = m->m[1][c];
        m->m[1][c] = t;
    }
}

/* F = (Y*X)(X*X)^+ over i's family (Sec. 3). */
static pd_mat3 deformation_gradient(const pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_family* f = &s->fam;
    pd_mat3 yx = pd_m3_zero();
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 yb = pd_v3_sub(y[f->j[b]], y[i]);
        pd_m3_add_outer(&yx, f->w[b] * s->volume[f->j[b]], yb, f->xi[b]);
    }
    return pd_m3_mul(yx, s->kinv[i]);
}

/* dir(F xi) and dir(Y) of one bond; a vanishing one takes the other's, or X's. */
static void directions(pd_vec3 fx, pd_real lfx, pd_vec3 Y, pd_real ly, pd_vec3 X, pd_real len,
                       pd_vec3* ddev, pd_vec3* diso) {
    const pd_real tiny = 1e-12 * len;
    if (lfx > tiny && ly > tiny) {
        *ddev = pd_v3_scale(fx, 1.0 / lfx);
        *diso = pd_v3_scale(Y, 1.0 / ly);
        return;
    }
    pd_vec3 x = pd_v3_scale(X, 1.0 / len);
    *ddev = lfx > tiny ? pd_v3_scale(fx, 1.0 / lfx) : (ly > tiny ? pd_v3_scale(Y, 1.0 / ly) : x);
    *diso = ly > tiny ? pd_v3_scale(Y, 1.0 / ly) : (lfx > tiny ? pd_v3_scale(fx, 1.0 / lfx) : x);
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

/* Particle i's part of the energy (J), with k = V_i V_j w / |X|^2 per bond:
 *   Eq. 8:        sum k (mu (|F xi| - |X|)^2 + lambda/2 (|Y| - |X|)^2)
 *   dilatation:   kv/9 (J - 1)^2 sum k |X|^2      (beyond the paper; 0 when off)
 * For each bond it stores the projection p (the target of Y: |X| dir(F' xi), Eq. 10, weight
 * mu; |X| dir(Y), Eq. 11, weight lambda/2; J'^(-1/3) F' xi, weight kv) and t = dE_i/dY, the
 * exact gradient: the isotropic part directly, the F parts through dE/dF (X*X)^+ w V_j xi.
 * F' is F with the inversion fix of Sec. 4.1 (first two rows permuted when det F < 0). It
 * steers the targets only: Eq. 8 cannot tell F' from F (a permutation keeps |F xi|), and the
 * dilatation energy must see the true J, or a mirrored body would cost nothing. Only clearly
 * inverted particles (det F < -PPD_INVERTED) get it: the permutation turns targets by 90
 * degrees about z, and applied to the momentary near-zero determinants of an impact it set a
 * dropped ball spinning (measured: angular momentum 5e-3 per particle at h = 1/30 s). */
static pd_real local_particle(pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_family* f = &s->fam;
    const pd_ppd_material* m = &s->mat[s->material[i]];
    pd_mat3 F = deformation_gradient(s, y, i), Ft = F;
    pd_real kv = s->planar[i] ? 0 : m->kv, J = pd_m3_det(F), Jt = J;
    if (s->prm.inversion_fix && !s->planar[i] && J < -PPD_INVERTED)
        swap_rows01(&Ft), Jt = -J;
    pd_real jscale = kv > 0 ? 1.0 / cbrt(fmax(Jt, 1e-3)) : 1;
    pd_real inv = 1.0 / (m->mu + 0.5 * m->lambda + kv);
    pd_real wdev = m->mu * inv, wiso = 0.5 * m->lambda * inv, wvol = kv * jscale * inv;
    pd_mat3 dEdF = pd_m3_zero();
    pd_real e = 0, sum_kl2 = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 X = f->xi[b], Y = pd_v3_sub(y[f->j[b]], y[i]);
        pd_real len = s->len[b], k = s->kb[b];
        pd_vec3 fx = pd_m3_mulv(F, X), ftx = pd_m3_mulv(Ft, X);
        pd_real lfx = pd_v3_len(fx), ly = pd_v3_len(Y);
        pd_vec3 ddev, diso, dtrue; /* Eq. 10 and 11; degenerate bonds borrow a direction */
        directions(ftx, lfx, Y, ly, X, len, &ddev, &diso);
        directions(fx, lfx, Y, ly, X, len, &dtrue, &diso);
        pd_vec3 p = pd_v3_madd(pd_v3_scale(ftx, wvol), wdev * len, ddev);
        s->p[b] = pd_v3_madd(p, wiso * len, diso);
        e += k * (m->mu * (lfx - len) * (lfx - len) + 0.5 * m->lambda * (ly - len) * (ly - len));
        pd_m3_add_outer(&dEdF, 2 * k * m->mu * (lfx - len), dtrue, X);
        sum_kl2 += k * len * len;
        s->t[b] = pd_v3_scale(diso, k * m->lambda * (ly - len));
    }
    if (kv > 0) { /* dJ/dF = cof F */
        e += kv / 9 * (J - 1) * (J - 1) * sum_kl2;
        dEdF = pd_m3_add(dEdF, pd_m3_scale(cofactor(F), 2 * kv / 9 * (J - 1) * sum_kl2));
    }
    pd_mat3 H = pd_m3_mul(dEdF, s->kinv[i]);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        s->t[b] = pd_v3_madd(s->t[b], f->w[b] * s->volume[f->j[b]], pd_m3_mulv(H, f->xi[b]));
    return e;
}

/* Per particle, without atomics: q_i = sum_j (a_ji p_ji - a_ij p_ij), the targets' push, and
 * g_i = dE/dy_i = sum_j (t_ji - t_ij). */
static void gather_particle(pd_ppd_state* s, uint32_t i) {
    const pd_family* f = &s->fam;
    pd_vec3 q = pd_v3(0, 0, 0), g = pd_v3(0, 0, 0);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        uint32_t rb = f->rev[b];
        q = pd_v3_madd(pd_v3_madd(q, s->a[rb], s->p[rb]), -s->a[b], s->p[b]);
        g = pd_v3_add(g, pd_v3_sub(s->t[rb], s->t[b]));
    }
    s->q[i] = q;
    s->g[i] = g;
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

/* Pinned particles and fixed bodies keep their place. */
static int is_free(const ppd_ctx* c, size_t i) {
    return !(c->flags[i] & PD_P_CONSTRAINED);
}

/* Outward normal of the collider a touching particle rests on (the nearest one). */
static pd_vec3 contact_normal(const pd_ppd_state* s, pd_vec3 y) {
    pd_vec3 best = pd_v3(0, 0, 0), n;
    pd_real dmin = INFINITY;
    for (int k = 0; k < s->colliders->count; ++k) {
        pd_real d = pd_collider_sdf(&s->colliders->items[k], y, &n);
        if (d < dmin)
            dmin = d, best = n;
    }
    return best;
}

static pd_real sum_partials(const pd_ppd_state* s) {
    pd_real sum = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        sum += s->partial[k];
    return sum;
}

static void local_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_real e = 0;
    for (size_t i = begin; i < end; ++i)
        e += local_particle(c->s, c->y, (uint32_t)i);
    c->s->partial[begin / PPD_GRAIN] = e;
}

/* Gathers q and g, then the residual of Eq. 12 with the exact forces, r = M (y - y*)/h^2 + g,
 * and the inertia energy; partial sums of |r|^2 (first half) and inertia (second half). */
static void gather_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    pd_real r2 = 0, inertia = 0, ih2 = 1.0 / (s->dt * s->dt);
    for (size_t i = begin; i < end; ++i) {
        gather_particle(s, (uint32_t)i);
        pd_vec3 r = pd_v3(0, 0, 0);
        if (is_free(c, i)) {
            pd_vec3 d = pd_v3_sub(c->y[i], s->ystar[i]);
            r = pd_v3_madd(s->g[i], s->mass[i] * ih2, d);
            inertia += 0.5 * s->mass[i] * ih2 * pd_v3_len2(d);
        }
        if (s->held[i]) { /* a collider takes the push along its normal (KKT: r = l n, l >= 0) */
            pd_vec3 n = contact_normal(s, c->y[i]);
            r = pd_v3_madd(r, -fmax(pd_v3_dot(r, n), 0), n);
        }
        s->r[i] = r;
        r2 += pd_v3_len2(r);
    }
    s->partial[begin / PPD_GRAIN] = r2;
    s->partial[s->chunks + begin / PPD_GRAIN] = inertia;
}

/* Everything at y: projections, energy, gradient, residual. Returns the merit of Eq. 12
 * (inertia + elastic energy, J); *r_norm gets |r| (N). */
static pd_real local_step(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags,
                          pd_real* r_norm) {
    ppd_ctx c = {.s = s, .y = y, .flags = flags};
    pd_parallel_for(s->n, PPD_GRAIN, local_kernel, &c);
    pd_real energy = sum_partials(s);
    pd_parallel_for(s->n, PPD_GRAIN, gather_kernel, &c);
    pd_real r2 = sum_partials(s), inertia = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        inertia += s->partial[s->chunks + k];
    *r_norm = sqrt(r2);
    return energy + inertia;
}

/* ---------------------------------------------------------------- global step */

/* The constant part B of row i of the global system A y = sum_j c_ij y_j + B (off-diagonal
 * terms aside): m y* / h^2 + q for the projective step of Eq. 12. */
static void projective_rhs(pd_ppd_state* s) {
    pd_real ih2 = 1.0 / (s->dt * s->dt);
    for (size_t i = 0; i < s->n; ++i)
        s->rhs_b[i] = pd_v3_madd(s->q[i], s->mass[i] * ih2, s->ystar[i]);
}

static pd_vec3 row_rhs(const pd_ppd_state* s, const pd_vec3* y, size_t i) {
    const pd_family* f = &s->fam;
    pd_vec3 acc = s->rhs_b[i];
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        acc = pd_v3_madd(acc, s->c[b], y[f->j[b]]);
    return acc;
}

/* B = A y - r - sum_j c_ij y_j, so that the solve gives y - A^-1 r: the preconditioned
 * gradient step, used when the projective step is no descent direction. */
static void gradient_rhs(pd_ppd_state* s) {
    const pd_family* f = &s->fam;
    for (size_t i = 0; i < s->n; ++i) {
        pd_vec3 b = pd_v3_sub(pd_v3_scale(s->y[i], s->diag[i]), s->r[i]);
        for (uint32_t k = f->offsets[i]; k < f->offsets[i + 1]; ++k)
            b = pd_v3_madd(b, -s->c[k], s->y[f->j[k]]);
        s->rhs_b[i] = b;
    }
}

static void project_contacts(pd_ppd_state* s, pd_vec3* y);

/* One Jacobi sweep with Chebyshev weight omega (Wang 2015): out = omega (J(y) - yprev) + yprev;
 * omega = 1 is plain Jacobi. Constrained particles keep their place. */
static void jacobi_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    for (size_t i = begin; i < end; ++i) {
        if (c->flags[i] & PD_P_CONSTRAINED) {
            c->out[i] = c->y[i];
            continue;
        }
        pd_vec3 jac = pd_v3_scale(row_rhs(s, c->y, i), 1.0 / s->diag[i]);
        c->out[i] = pd_v3_madd(c->from[i], c->omega, pd_v3_sub(jac, c->from[i]));
    }
}

/* Chebyshev semi-iteration on Jacobi, warm-started at `start` (Golub-Varga weights, spectrum
 * of the Jacobi matrix in [-rho, rho]), every sweep projected out of the colliders. Result in
 * s->yhat (start may be s->yhat). */
static void solve_chebyshev(pd_ppd_state* s, const uint8_t* flags, int sweeps,
                            const pd_vec3* start) {
    pd_vec3 *cur = s->ytrial, *prev = s->yprev, *next = s->yhat;
    memcpy(cur, start, s->n * sizeof(pd_vec3));
    memcpy(prev, start, s->n * sizeof(pd_vec3));
    pd_real omega = 1, rho2 = s->rho * s->rho;
    for (int k = 0; k < sweeps; ++k) {
        omega = k == 0 ? 1 : (k == 1 ? 2 / (2 - rho2) : 4 / (4 - rho2 * omega));
        ppd_ctx c = {.s = s, .y = cur, .flags = flags, .from = prev, .out = next, .omega = omega};
        pd_parallel_for(s->n, PPD_GRAIN, jacobi_kernel, &c);
        project_contacts(s, next);
        pd_vec3* t = prev;
        prev = cur;
        cur = next;
        next = t;
    }
    if (cur != s->yhat)
        memcpy(s->yhat, cur, s->n * sizeof(pd_vec3));
}

static int any_contact(const pd_ppd_state* s) {
    for (size_t i = 0; i < s->n; ++i)
        if (s->held[i])
            return 1;
    return 0;
}

static pd_status solve_global(pd_ppd_state* s, const uint8_t* flags) {
    switch (s->prm.global_solve) {
        case PD_PPD_DIRECT:
            /* The factor knows nothing of contacts (a projected direct solution is no
             * descent direction: measured, a dropped ball collapsed), so a step in which
             * particles touch a collider uses the projected Chebyshev sweeps instead. */
            if (!any_contact(s))
                return pd_ppd_solve_direct(s, flags);
            solve_chebyshev(s, flags, s->prm.linear_iterations, s->y);
            return PD_OK;
        case PD_PPD_POSITION_BASED:
            /* Fig. 7's position-based solve: each particle moves to the average of the
             * positions its neighbourhood suggests (one plain Jacobi sweep). */
            solve_chebyshev(s, flags, 1, s->y);
            return PD_OK;
        default:
            solve_chebyshev(s, flags, s->prm.linear_iterations, s->y);
            return PD_OK;
    }
}

/* ---------------------------------------------------------------- line search (Eq. 13) */

static void axpy_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_real slope = 0;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 d = pd_v3_sub(c->dir[i], c->from[i]);
        c->out[i] = pd_v3_madd(c->from[i], c->alpha, d);
        slope += pd_v3_dot(c->s->r[i], d);
    }
    c->s->partial[begin / PPD_GRAIN] = slope;
}

/* y_trial = y + alpha (yhat - y); returns r . (yhat - y), the merit's slope at alpha = 0. */
static pd_real trial_point(pd_ppd_state* s, pd_real alpha) {
    ppd_ctx c = {.s = s, .from = s->y, .dir = s->yhat, .out = s->ytrial, .alpha = alpha};
    pd_parallel_for(s->n, PPD_GRAIN, axpy_kernel, &c);
    pd_real slope = sum_partials(s);
    project_contacts(s, s->ytrial);
    return slope;
}

/* The global step's direction: the projective one (Eq. 10-12) when it descends the merit,
 * else the preconditioned gradient -A^-1 r (Sec. 4.2). Returns the slope (< 0), or 0 when
 * neither descends (converged to round-off). */
static pd_real search_direction(pd_ppd_state* s, const uint8_t* flags, pd_status* st) {
    *st = solve_global(s, flags); /* rhs_b holds the projective right-hand side */
    pd_real slope = trial_point(s, 1);
    if (*st != PD_OK || slope < 0)
        return slope;
    gradient_rhs(s);
    *st = solve_global(s, flags);
    slope = trial_point(s, 1);
    s->gradient_steps++;
    return slope < 0 ? slope : 0;
}

/* Eq. 13: y <- y + alpha (yhat - y), alpha halved from 1 until the Armijo condition holds on
 * the merit (at most 12 times; then no move, and the step's iterations stop). On return the
 * state (projections, gradient, residual) is that of s->y; returns 0 if no move was made. */
static int line_search(pd_ppd_state* s, const uint8_t* flags, pd_real slope, pd_real* merit,
                       pd_real* r_norm) {
    pd_real alpha = 1;
    for (int k = 0; k <= 12; ++k, alpha *= 0.5) {
        if (k > 0)
            trial_point(s, alpha);
        pd_real r_trial, m = local_step(s, s->ytrial, flags, &r_trial);
        if (!s->prm.line_search || m <= *merit + s->prm.armijo * alpha * slope) {
            pd_vec3* t = s->y;
            s->y = s->ytrial;
            s->ytrial = t;
            *merit = m;
            *r_norm = r_trial;
            return 1;
        }
    }
    memcpy(s->ytrial, s->y, s->n * sizeof(pd_vec3));
    project_contacts(s, s->ytrial); /* the contact set of y */
    *merit = local_step(s, s->y, flags, r_norm);
    return 0;
}

/* ---------------------------------------------------------------- one time step */

static void predict(pd_ppd_state* s, const pd_particles* p) {
    pd_real h = s->dt;
    for (size_t i = 0; i < s->n; ++i) {
        int constrained = p->flags[i] & PD_P_CONSTRAINED;
        s->ystar[i] = constrained
                          ? p->pos[i]
                          : pd_v3_madd(pd_v3_madd(p->pos[i], h, p->vel[i]), h * h, s->gravity);
    }
}

/* Sec. 8: slip boundaries "project particles out of the solids". The prediction y*, every
 * Jacobi sweep and every line-search trial are projected (a projected Jacobi iteration), so
 * that the solve sees the contact: handled only after the solve it acts as a spring of
 * stiffness m/h^2, far too soft at h = 1/30 s (a resting ball sank to half its height).
 * For particles in contact at the current iterate (held[]) the residual drops its part along
 * the collider's outward normal, which the contact force takes. Friction acts on velocities
 * after the step (world). */
static void project_contacts(pd_ppd_state* s, pd_vec3* y) {
    if (s->colliders && s->colliders->count)
        pd_colliders_project(s->colliders, s->n, y, NULL, s->near_skip, s->held, s->dt);
}

/* Only particles that start the step within three spacings of a collider are projected
 * during the iterations (the projection was a quarter of the step's time otherwise). */
static void mark_near_colliders(pd_ppd_state* s, const struct pd_world* w) {
    for (size_t i = 0; i < s->n; ++i) {
        int near = 0;
        for (int k = 0; k < w->colliders.count && !near; ++k)
            near = pd_collider_sdf(&w->colliders.items[k], s->ystar[i], NULL) <
                   3 * w->particles.spacing[i];
        s->near_skip[i] = (uint8_t)(!near || w->contact_skip[i]);
    }
}

static void project_prediction(pd_ppd_state* s, const struct pd_world* w) {
    memset(s->held, 0, s->n);
    s->colliders = &w->colliders;
    if (w->colliders.count) {
        pd_colliders_project(&w->colliders, s->n, s->ystar, NULL, w->contact_skip, s->held, s->dt);
        mark_near_colliders(s, w);
    }
    memcpy(s->y, s->ystar, s->n * sizeof(pd_vec3));
}

/* The force the step has to produce anyway, sqrt(sum (m (|g| + |v|/h))^2): the residual is
 * measured against max(|r(y*)|, this), so that a body in free flight, whose starting residual
 * is round-off, does not chase round-off. */
static pd_real force_scale(const pd_ppd_state* s, const pd_particles* p) {
    pd_real sum = 0, g = pd_v3_len(s->gravity);
    for (size_t i = 0; i < s->n; ++i) {
        pd_real f = p->mass[i] * (g + pd_v3_len(p->vel[i]) / s->dt);
        sum += f * f;
    }
    return sqrt(sum);
}

static void finish(pd_ppd_state* s, pd_particles* p) {
    for (size_t i = 0; i < s->n; ++i) {
        if (p->flags[i] & PD_P_CONSTRAINED) {
            p->force[i] = pd_v3_scale(s->g[i], -1); /* for the pin's reaction */
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
    double t0 = pd_now(), t_global = 0;
    predict(s, p);
    project_prediction(s, w);
    pd_real r, merit = local_step(s, s->y, flags, &r), r0 = fmax(r, force_scale(s, p));
    projective_rhs(s);
    s->line_search_failures = s->residual_increases = s->gradient_steps = 0;
    pd_status st = PD_OK;
    int it = 0;
    while (it < s->prm.iterations && r > s->prm.tolerance * r0) {
        double ta = pd_now();
        pd_real slope = search_direction(s, flags, &st), before = r;
        t_global += pd_now() - ta;
        if (st != PD_OK)
            return st;
        ++it;
        int moved = slope < 0 && line_search(s, flags, slope, &merit, &r);
        projective_rhs(s);
        if (!moved) {
            s->line_search_failures++;
            break;
        }
        s->residual_increases += r > before;
    }
    finish(s, p);
    s->last_iterations = it;
    s->last_residual = r / r0;
    s->last_force_scale = r0;
    s->last_merit = merit;
    stats->iterations = it;
    stats->residual = s->last_residual;
    stats->t_global = t_global;
    stats->t_local = pd_now() - t0 - t_global;
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

/* For tests: the elastic energy of Eq. 8 (+ dilatation) at y, its exact gradient in s->g. */
pd_real pd_ppd_elastic_energy(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags) {
    memcpy(s->ystar, y, s->n * sizeof(pd_vec3));
    pd_real r;
    return local_step(s, y, flags, &r);
}
