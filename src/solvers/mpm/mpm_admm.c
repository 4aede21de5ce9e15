/* mpm's implicit step: the augmented Lagrangian solver of Fang 2019 Sec. 7 (ADMM, after Overby
 * et al. 2017) for backward Euler on the grid. This file holds the constraint on F_E (with the
 * plastic return Z_E); the Maxwell branch's constraint on F_N is mpm_admm_maxwell.c's:
 *   min over dv, F:  1/2 dv^T M dv - dt dv^T M g + sum_p V_p^0 Psi(F_p)
 *   subject to  w_p (F_p - (D dv)_p - b_p) = 0,                                   (Eq. 9)
 * with (D dv)_p = dt (sum_i dv_i grad w_ip^T) F_p^n and b_p = (I + dt sum_i v_i^n grad w_ip^T)
 * F_p^n. Each iteration: the particle step (Eq. 10: V0 P(F) + rho w^2 F = rho w^2 (D dv + b) -
 * w y, solved per particle by Newton on the singular values of the right-hand side), the grid
 * step (A dv = dt M g + D^T (w y + rho w^2 (F - b)), A = M + rho D^T w^2 D stored, by conjugate
 * gradients with a diagonal preconditioner and the boundary conditions projected inside), the
 * dual step (y += rho w (F - D dv - b)); over-relaxation alpha in the last two (Sec. 7.3); the
 * weights w_p^2 = V_p^0 |d^2 Psi / d Sigma^2|_F at the step's start (SEW, Sec. 7.3). At the end
 * (Fig. 8) F is discarded: v^{n+1} = v^n + dv goes back to the particles as in the explicit
 * step, whose (I + dt C) F^n is then D dv + b. */
#include <math.h>
#include <string.h>

#include "constitutive/energies.h"
#include "core/alloc.h"
#include "core/timer.h"
#include "grid/bspline.h"
#include "grid/grid_boundary.h"
#include "grid/grid_cg.h"
#include "math/svd3.h"
#include "parallel/parallel.h"
#include "solvers/mpm/mpm_internal.h"
#include "world/world.h"

/* ---------------------------------------------------------------- the particle step */

/* Solves the 3 x 3 system h x = r (Cramer; h is the particle step's SPD-ish Hessian). */
static int solve3(pd_real h[3][3], const pd_real r[3], pd_real x[3]) {
    pd_mat3 m = {
        {{h[0][0], h[0][1], h[0][2]}, {h[1][0], h[1][1], h[1][2]}, {h[2][0], h[2][1], h[2][2]}}};
    pd_real det = pd_m3_det(m);
    if (!(fabs(det) > 0))
        return 0;
    for (int c = 0; c < 3; ++c) {
        pd_mat3 mc = m;
        for (int a = 0; a < 3; ++a)
            mc.m[a][c] = r[a];
        x[c] = pd_m3_det(mc) / det;
    }
    return 1;
}

/* dPsi/ds at Z(s) and its derivative in s, H(Z(s)) dZ/ds (Eq. 10's Hessian, Sec. 7.1), for a
 * material with a plastic return (Z with the particle's volume correction, its dilation as at
 * the step's start: the step's end updates it); the elastic ones when Z is the identity. */
static void projected_gradient_hessian(const pd_mpm_material* m, pd_real dilation,
                                       const pd_real s[3], pd_real g[3], pd_real h[3][3]) {
    if (!m->plastic) {
        pd_mpm_gradient_hessian(m, s, g, h);
        return;
    }
    pd_vec3 z;
    pd_mat3 dz;
    if (m->volume_correction)
        pd_hencky_return_corrected(&m->yield, pd_v3(s[0], s[1], s[2]), dilation, &z, &dz, NULL);
    else
        pd_hencky_return(&m->yield, pd_v3(s[0], s[1], s[2]), &z, &dz);
    pd_real zs[3] = {z.x, z.y, z.z}, hz[3][3];
    pd_mpm_gradient_hessian(m, zs, g, hz);
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            h[a][b] = hz[a][0] * dz.m[0][b] + hz[a][1] * dz.m[1][b] + hz[a][2] * dz.m[2][b];
}

/* Eq. 10 in the singular values for one constraint: V0 dPsi/ds(Z(s)) + k s = r (k = rho w^2),
 * by Newton from s, at most PD_MPM_NEWTON_STEPS steps, each halved until every s stays > 0;
 * `law` gives dPsi/ds at Z(s) and its derivative (F_E's here, F_N's in mpm_admm_maxwell.c).
 * It stops at a residual of 1e-12 of the right-hand side, or after a full step shorter than
 * PD_MPM_NEWTON_STEP_TOL of s without evaluating the law again (Newton's next residual is then
 * of the step's square where the law is smooth, of the step at a kink of the return: far below
 * the ADMM's tolerance either way, and a law evaluation less a particle; docs/methods/mpm.md).
 * Returns the steps taken. */
int pd_mpm_principal_newton(pd_mpm_principal_law law, const void* ctx, pd_real v0, pd_real k,
                            const pd_real r[3], pd_real s[3]) {
    int step = 0;
    for (; step < PD_MPM_NEWTON_STEPS; ++step) {
        pd_real g[3], h[3][3], res[3], dx[3], norm = 0, scale = 0;
        law(ctx, s, g, h);
        for (int a = 0; a < 3; ++a) {
            res[a] = r[a] - v0 * g[a] - k * s[a];
            norm += res[a] * res[a], scale += r[a] * r[a] + k * k * s[a] * s[a];
            for (int b = 0; b < 3; ++b)
                h[a][b] *= v0;
            h[a][a] += k;
        }
        if (norm <= 1e-24 * scale || !solve3(h, res, dx))
            break;
        pd_real t = 1, moved = 0, size = 0;
        for (int a = 0; a < 3; ++a)
            while (s[a] + t * dx[a] <= 0.05 * s[a])
                t *= 0.5;
        for (int a = 0; a < 3; ++a) {
            s[a] += t * dx[a];
            moved = fmax(moved, fabs(dx[a])), size = fmax(size, fabs(s[a]));
        }
        if (t == 1 && moved <= PD_MPM_NEWTON_STEP_TOL * size)
            return step + 1;
    }
    return step;
}

/* F_E's law for the Newton above: the material and the particle's dilation. */
typedef struct elastic_law {
    const pd_mpm_material* m;
    pd_real dilation;
} elastic_law;

static void elastic_law_at(const void* ctx, const pd_real s[3], pd_real g[3], pd_real h[3][3]) {
    const elastic_law* e = ctx;
    projected_gradient_hessian(e->m, e->dilation, s, g, h);
}

/* Eq. 10 for one particle: F_p = argmin V0 Xi(F) + rho w^2 / 2 |F - Z|^2 with Z = D dv + b - y /
 * (rho w): the minimiser shares Z's singular vectors (Klar 2016, Overby 2017). Z's SVD starts
 * its rotations from the last iteration's V (*v_last, updated; the first iteration's from the
 * SEW weight's SVD of b): Z moves little between iterations, so its columns are nearly
 * orthogonal already (the same SVD, in fewer sweeps). The Newton starts from Z's singular
 * values (the last iteration's took more law evaluations on Fig. 16's column: 2.28 for 1.77 a
 * particle step with a step rule of 1e-6, 1.51 for 1.36 with 1e-3). */
static pd_mat3 particle_step(const pd_mpm_material* m, pd_real dilation, pd_real v0, pd_real k,
                             pd_mat3 target, pd_mat3* v_last) {
    pd_mat3 u, v;
    pd_vec3 sz;
    pd_svd3_near(target, *v_last, &u, &sz, &v);
    *v_last = v;
    pd_real r[3] = {k * sz.x, k * sz.y, k * sz.z};
    pd_real s[3] = {fmax(fabs(sz.x), 1e-3), fmax(fabs(sz.y), 1e-3), fmax(fabs(sz.z), 1e-3)};
    elastic_law law = {m, dilation};
    pd_mpm_principal_newton(elastic_law_at, &law, v0, k, r, s);
    return pd_m3_from_svd(u, pd_v3(s[0], s[1], s[2]), v);
}

typedef struct admm_ctx {
    pd_mpm_state* s;
    const pd_particles* p;
    pd_real dt, rho, alpha;
    int ad_fresh; /* cg_ad holds A admm_dv (the friction split's product): the next grid step's */
    int contacts_changed; /* the last iteration changed the unilateral contact's set */
} admm_ctx;

/* ---------------------------------------------------------------- D and D^T with F^n */

/* F^n is kept in admm_fn (the step's end replaces s->f). out_p = m_p F_p^n dt, or m_p F_p^n^T dt
 * (transpose), per particle in parallel. */
typedef struct fn_job {
    const admm_ctx* c;
    const pd_mat3* m;
    pd_mat3* out;
    int transpose;
} fn_job;

static void fn_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const fn_job* job = ctx;
    const pd_mat3* fn = job->c->s->admm_fn;
    for (size_t p = begin; p < end; ++p)
        job->out[p] = pd_m3_scale(
            pd_m3_mul(job->m[p], job->transpose ? pd_m3_transpose(fn[p]) : fn[p]), job->c->dt);
}

static void times_fn(const admm_ctx* c, const pd_mat3* m, pd_mat3* out, int transpose) {
    fn_job job = {c, m, out, transpose};
    pd_parallel_for(c->s->n, 256, fn_range, &job);
}

/* out_p = dt G(u)_p F_p^n (Eq. 9's D applied to a node field u), G(u)_p = (4 / dx^2) sum_i w_ip
 * u_i (x_i - x_p)^T by the explicit step's transfer back (mpm.c, axis by axis), one pass per
 * particle. */
typedef struct gradient_job {
    const admm_ctx* c;
    const pd_vec3* u;
    pd_mat3* out;
} gradient_job;

static void gradient_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const gradient_job* job = ctx;
    const pd_mpm_state* s = job->c->s;
    for (size_t p = begin; p < end; ++p) {
        pd_mat3 g;
        pd_mpm_grid_to_particle(&s->grid, job->u, p, &g);
        job->out[p] = pd_m3_scale(pd_m3_mul(g, s->admm_fn[p]), job->c->dt);
    }
}

static void apply_d(const admm_ctx* c, const pd_vec3* u, pd_mat3* out) {
    gradient_job job = {c, u, out};
    pd_parallel_for(c->s->n, 256, gradient_range, &job);
}

/* D^T's sum, out_n = (4 / dx^2) sum_p w_np M_p (x_n - x_p), by columns of nodes along k as the
 * explicit step's transfer to the grid (mpm.c's p2g_range): each column its own, the 9 columns of
 * bins that reach it walked once, a particle giving its 3 nodes there at once. */
typedef struct divergence_job {
    const pd_grid* g;
    const pd_mat3* m;
    pd_vec3* out;
} divergence_job;

static void divergence_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const divergence_job* job = ctx;
    const pd_grid* g = job->g;
    int ny = g->dim[1];
    size_t nz = (size_t)g->dim[2];
    pd_real dx = g->dx, scale = 4 / (dx * dx);
    for (size_t c = begin; c < end; ++c) {
        int i = (int)(c / (size_t)ny), j = (int)(c % (size_t)ny);
        pd_vec3* out = &job->out[c * nz];
        memset(out, 0, nz * sizeof *out);
        for (int di = 0; di < 3 && di <= i; ++di)
            for (int dj = 0; dj < 3 && dj <= j; ++dj) {
                size_t b0 = pd_grid_index(g, i - di, j - dj, 0);
                for (uint32_t at = g->cell_start[b0]; at < g->cell_start[b0 + nz]; ++at) {
                    uint32_t p = g->sorted[at];
                    const pd_real(*a)[3] = job->m[p].m;
                    pd_vec3 off = g->offset[p], f = pd_v3_scale(off, g->inv_dx);
                    pd_real w01 = pd_bspline_w(f.x, di) * pd_bspline_w(f.y, dj);
                    pd_real ex = di * dx - off.x, ey = dj * dx - off.y; /* x_n - x_p */
                    pd_real bx = a[0][0] * ex + a[0][1] * ey, by = a[1][0] * ex + a[1][1] * ey,
                            bz = a[2][0] * ex + a[2][1] * ey;
                    pd_vec3* o = &out[g->base[p] - b0];
                    for (int dk = 0; dk < 3; ++dk) {
                        pd_real wk = w01 * pd_bspline_w(f.z, dk), ez = dk * dx - off.z;
                        o[dk].x += wk * (bx + a[0][2] * ez);
                        o[dk].y += wk * (by + a[1][2] * ez);
                        o[dk].z += wk * (bz + a[2][2] * ez);
                    }
                }
            }
        for (size_t k = 0; k < nz; ++k)
            out[k] = pd_v3_scale(out[k], scale);
    }
}

static void divergence(const pd_grid* g, const pd_mat3* m, pd_vec3* out) {
    divergence_job job = {g, m, out};
    pd_parallel_for((size_t)g->dim[0] * (size_t)g->dim[1], 8, divergence_range, &job);
}

/* ---------------------------------------------------------------- boundary conditions */

pd_real pd_mpm_node_friction(const pd_mpm_state* s, const pd_collider* col, size_t n) {
    if (col->def.boundary != PD_BOUNDARY_NO_SLIP)
        return col->def.friction;
    pd_grid_wall wall = {s->particles->material, s->wall_friction, NULL};
    pd_real mu;
    pd_grid_node_material(&s->grid, s->particles->mass, &wall, n, &mu);
    return mu;
}

/* A node that a second collider reaches too (the channel's floor and a side wall) holds that
 * collider's normal velocity as well, as the explicit step applies every collider in turn
 * (grid_boundary.c): the normal made orthogonal to the first (bc_normal2), held through the
 * solve without friction or let-go. Holding the first alone left the floor's row of nodes free
 * across the channel: the solve carried the bottom row's grains into the walls at about 5 mm/s,
 * F recorded the widening, and the world's projection clipped the positions (docs/methods/mpm.md,
 * "The ADMM's slip walls"). A normal parallel to the first adds nothing. */
static int hold_second_normal(pd_mpm_state* s, size_t n, pd_vec3 normal, pd_vec3 vc) {
    pd_vec3 first = s->bc_normal[n];
    pd_vec3 other = pd_v3_sub(normal, pd_v3_scale(first, pd_v3_dot(normal, first)));
    pd_real len = pd_v3_len(other);
    if (len < 0.1)
        return 0;
    other = pd_v3_scale(other, 1 / len);
    s->bc_normal2[n] = other;
    s->bc_target2[n] = pd_v3_scale(other, pd_v3_dot(pd_v3_sub(vc, s->grid.velocity[n]), other));
    return 1;
}

/* Holds node n's velocity along collider q's (col) normal (vc the collider's velocity there): the
 * first normal as Sec. 7.2 below, a second by hold_second_normal, a third independent one
 * whole (a corner of three faces). 0 when the normal adds nothing (parallel to those held). */
static int hold_normal(pd_mpm_state* s, size_t n, int q, const pd_collider* col, pd_vec3 normal,
                       pd_vec3 vc) {
    pd_vec3 v = s->grid.velocity[n];
    if (s->bc_kind[n] == PD_MPM_BC_NORMAL) {
        if (pd_v3_len2(s->bc_normal2[n]) == 0)
            return hold_second_normal(s, n, normal, vc);
        pd_vec3 a = s->bc_normal[n], b = s->bc_normal2[n];
        pd_vec3 other = pd_v3_sub(normal, pd_v3_scale(a, pd_v3_dot(normal, a)));
        other = pd_v3_sub(other, pd_v3_scale(b, pd_v3_dot(other, b)));
        if (pd_v3_len(other) < 0.1)
            return 0;
        s->bc_kind[n] = PD_MPM_BC_FULL; /* three faces: every component held */
        s->bc_target[n] = pd_v3_sub(vc, v);
        s->bc_normal2[n] = s->bc_target2[n] = pd_v3(0, 0, 0);
        return 1;
    }
    s->bc_collider[n] = q;
    if (col->def.boundary == PD_BOUNDARY_NO_SLIP && !isfinite(pd_mpm_node_friction(s, col, n))) {
        s->bc_kind[n] = PD_MPM_BC_FULL;
        s->bc_target[n] = pd_v3_sub(vc, v); /* dv that sticks */
        return 1;
    }
    s->bc_kind[n] = PD_MPM_BC_NORMAL;
    s->bc_normal[n] = normal;
    s->bc_target[n] = pd_v3_scale(normal, pd_v3_dot(pd_v3_sub(vc, v), normal));
    s->bc_stick[n] = pd_v3_sub(vc, v);
    s->bc_friction[n] = pd_v3(0, 0, 0);
    s->bc_slide[n] = pd_v3(0, 0, 0); /* the split starts stuck */
    s->bc_mu[n] = pd_mpm_node_friction(s, col, n);
    return 1;
}

/* Sec. 7.2: the nodes whose material lies within reach of a collider's solid at the step's start
 * (grid_boundary.h, as in the explicit step) keep, through the solve, the collider's velocity
 * along its normal (no_slip: all of it, but a sand's node only the normal part, as the explicit
 * step's floor bears no more than 3 b of the sand's load along it); Coulomb friction acts
 * after the solve with the normal impulse the constraint took (friction_after_solve). */
static void find_constraints(admm_ctx* c, const pd_colliders* colliders) {
    pd_mpm_state* s = c->s;
    const pd_grid* g = &s->grid;
    int ny = g->dim[1], nz = g->dim[2];
    pd_real reach = PD_GRID_COLLIDER_REACH * g->dx, margin = reach + 1.5 * sqrt(3.0) * g->dx;
    for (size_t n = 0; n < g->nodes; ++n) {
        s->bc_kind[n] = PD_MPM_BC_FREE;
        s->bc_flips[n] = 0;
        s->bc_normal2[n] = s->bc_target2[n] = pd_v3(0, 0, 0);
        if (!(g->mass[n] > 0))
            continue;
        if (s->has_pins && s->pin_node_hold[n] > 0) { /* moves with its pins (mpm_pins.c) */
            s->bc_kind[n] = s->pin_local[n] >= 0 ? PD_MPM_BC_PIN : PD_MPM_BC_FULL;
            s->bc_target[n] = pd_v3_sub(s->pin_node_velocity[n], g->velocity[n]);
            continue;
        }
        int i = (int)(n / ((size_t)ny * nz)), j = (int)(n / nz % ny), k = (int)(n % nz);
        pd_vec3 x = pd_grid_node(g, i, j, k), centre = x;
        int gathered = 0;
        for (int q = 0; q < colliders->count && s->bc_kind[n] != PD_MPM_BC_FULL; ++q) {
            const pd_collider* col = &colliders->items[q];
            if (pd_collider_sdf(col, x, NULL) > margin)
                continue;    /* the node's material is out of reach */
            if (!gathered++) /* where its material lies (grid_boundary.h) */
                centre = pd_grid_node_material_centre(g, c->p->mass, n);
            pd_vec3 vc = pd_collider_velocity_at(col, centre), at = centre, normal;
            /* each of the collider's faces within reach: a box's edge holds two, its corner
             * three; the next face seen from the centre moved off the faces found */
            for (int face = 0; face < 3 && s->bc_kind[n] != PD_MPM_BC_FULL; ++face) {
                if (pd_collider_sdf(col, at, &normal) > reach)
                    break;
                if (!hold_normal(s, n, q, col, normal, vc))
                    break; /* a face already held: no other within reach */
                at = pd_v3_madd(at, 2 * reach, normal);
            }
        }
    }
    if (s->has_pins) /* a shared node's target: what the pins' constraint fixes of v_pin */
        pd_mpm_pin_project(s, s->bc_target, 1);
}

/* u at node n without what the constraints fix there. */
static pd_vec3 free_part(const pd_mpm_state* s, size_t n, pd_vec3 u) {
    if (s->bc_kind[n] == PD_MPM_BC_FULL)
        return pd_v3(0, 0, 0);
    if (s->bc_kind[n] == PD_MPM_BC_NORMAL)
        u = pd_v3_sub(u, pd_v3_scale(s->bc_normal[n], pd_v3_dot(u, s->bc_normal[n])));
    if (s->bc_kind[n] != PD_MPM_BC_FREE) /* a corner's second normal, let go or not */
        u = pd_v3_sub(u, pd_v3_scale(s->bc_normal2[n], pd_v3_dot(u, s->bc_normal2[n])));
    return u;
}

/* Removes from u what the constraints fix (a search direction or a residual). */
static void project_free(const pd_mpm_state* s, pd_vec3* u) {
    for (size_t n = 0; n < s->grid.nodes; ++n)
        u[n] = free_part(s, n, u[n]);
    pd_mpm_pin_project(s, u, 0); /* the pins' constraint: over several nodes */
}

/* The conjugate gradients' preconditioned residual kept in the pins' free subspace. */
static void project_pins(void* ctx, pd_vec3* z) {
    pd_mpm_pin_project(((const admm_ctx*)ctx)->s, z, 0);
}

/* dv with the constrained parts set to what the constraints fix. */
static void impose_constraints(const pd_mpm_state* s, pd_vec3* dv) {
    project_free(s, dv);
    for (size_t n = 0; n < s->grid.nodes; ++n)
        if (s->bc_kind[n] != PD_MPM_BC_FREE)
            dv[n] = pd_v3_add(pd_v3_add(dv[n], s->bc_target[n]), s->bc_target2[n]);
}

/* The conditions above for the optimiser's step (mpm_implicit.c), on the same node arrays. */
void pd_mpm_find_constraints(pd_mpm_state* s, const pd_particles* p,
                             const pd_colliders* colliders) {
    admm_ctx c = {.s = s, .p = p}; /* p: the nodes' material centres (grid_boundary.h) */
    find_constraints(&c, colliders);
}

void pd_mpm_project_free(const pd_mpm_state* s, pd_vec3* u) {
    project_free(s, u);
}

void pd_mpm_impose_constraints(const pd_mpm_state* s, pd_vec3* dv) {
    impose_constraints(s, dv);
}

/* ---------------------------------------------------------------- the grid step */

/* A = M + rho sum over the constraints D^T w^2 D, stored (the paper stores A, Sec. 7.1). D =
 * dt G F^n for F_E and F_N alike, so A u = M u + G^T (G(u) k_p) with one weight per particle,
 * k_p = rho dt^2 (w_E^2 F_E^n F_E^n^T + w_N^2 F_N^n F_N^n^T) (symmetric). With G(u)_p = sum_j u_j
 * grad w_jp^T, node i's row is sum_j u_j (grad w_jp^T k_p grad w_ip): k_p acts on the kernel
 * gradients, not on u's components, so A's block between nodes i and j stays a multiple of the
 * identity even with a full 3 x 3 k_p:
 *   A_ij = m_i delta_ij + sum_p grad w_ip^T k_p grad w_jp,   grad w_ip = (4 / dx^2) w_ip (x_i -
 * x_p), and j lies within 2 nodes of i on every axis: 125 numbers a node, A_ij at node_row_slot(j -
 * i). A is fixed through the step's iterations, so a conjugate gradient product costs 125
 * multiply-adds a node instead of a transfer to the particles and back. Each node sums its own
 * row over the particles in its 27 bins, in the grid's fixed order: no atomics, the same bits
 * on any thread count. */
static int node_row_slot(int a, int b, int c) {
    return (a + 2) * 25 + (b + 2) * 5 + (c + 2);
}

/* Where A's slot q of node n is stored: by blocks of 4 nodes, each block's slots one after
 * the other and each slot's 4 numbers side by side (a product reads a block in sequence). */
static size_t row_at(size_t n, int q) {
    return (n / 4 * PD_MPM_ROW + (size_t)q) * 4 + n % 4;
}

/* How far (in node indices) a row's slots reach either side: 2 nodes on each axis. */
static size_t admm_row_reach(const pd_grid* g) {
    return (size_t)2 * g->dim[1] * g->dim[2] + (size_t)2 * g->dim[2] + 2;
}

typedef struct assemble_job {
    pd_mpm_state* s;
    pd_real scale; /* (4 / dx^2)^2: the two kernel gradients' factor */
} assemble_job;

/* Row n of A: for each particle p near n, v = w_np k_p (x_n - x_p) (times the scale), then
 * w_jp (x_j - x_p) . v for p's 27 nodes j. */
static void assemble_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const assemble_job* job = ctx;
    pd_mpm_state* s = job->s;
    const pd_grid* g = &s->grid;
    int ny = g->dim[1], nz = g->dim[2];
    pd_real dx = g->dx;
    for (size_t n = begin; n < end; ++n) {
        pd_real row[PD_MPM_ROW] = {0}; /* summed here, then stored by slot */
        int i = (int)(n / ((size_t)ny * nz)), j = (int)(n / nz % ny), k = (int)(n % nz);
        for (int di = 0; di < 3 && di <= i; ++di)
            for (int dj = 0; dj < 3 && dj <= j; ++dj)
                for (int dk = 0; dk < 3 && dk <= k; ++dk) {
                    size_t b = pd_grid_index(g, i - di, j - dj, k - dk);
                    for (uint32_t q = g->cell_start[b]; q < g->cell_start[b + 1]; ++q) {
                        uint32_t p = g->sorted[q];
                        pd_real w[3][3];
                        pd_grid_weights(g, p, w);
                        pd_vec3 off = g->offset[p];
                        pd_vec3 d = pd_v3_sub(pd_v3(di * dx, dj * dx, dk * dx), off);
                        pd_real wi = w[0][di] * w[1][dj] * w[2][dk] * job->scale;
                        pd_vec3 v = pd_v3_scale(pd_m3_mulv(s->admm_k[p], d), wi);
                        pd_real v0 = -pd_v3_dot(v, off);
                        for (int a = 0; a < 3; ++a)
                            for (int bb = 0; bb < 3; ++bb) {
                                pd_real wab = w[0][a] * w[1][bb],
                                        vab = v0 + dx * (a * v.x + bb * v.y);
                                pd_real* out = &row[node_row_slot(a - di, bb - dj, -dk)];
                                for (int cc = 0; cc < 3; ++cc)
                                    out[cc] += wab * w[2][cc] * (vab + dx * cc * v.z);
                            }
                    }
                }
        row[node_row_slot(0, 0, 0)] += g->mass[n];
        for (int q = 0; q < PD_MPM_ROW; ++q)
            s->admm_a[row_at(n, q)] = row[q];
    }
}

/* A u: u's components apart (admm_u, zeros PD_MPM_ROW_REACH nodes either side) so that slot q
 * of nodes n..n+3 and their neighbours u[n + offset_q] are each 4 consecutive numbers: the
 * product is 125 4-wide multiply-adds per component for 4 nodes. The sum over q runs in slot
 * order as a row's did (slots out of the grid hold 0: no particle reaches both nodes). */
typedef double pd_admm_v4 __attribute__((vector_size(32)));

typedef struct apply_job {
    const pd_mpm_state* s;
    const pd_vec3* u;
    pd_vec3* out;
    int free_only;          /* drop what the constraints fix (the conjugate gradients' product) */
    const pd_real* comp[3]; /* u's components, node n at comp[a][n] */
    ptrdiff_t off[PD_MPM_ROW]; /* slot q's neighbour of node n is n + off[q] */
} apply_job;

/* Through a pointer, not a returned value: a 32-byte vector returned by value changes the ABI
 * where AVX is off (the portable build, -Wpsabi). */
static inline void load4(pd_admm_v4* v, const pd_real* x) {
    memcpy(v, x, sizeof *v);
}

static void split_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const apply_job* job = ctx;
    pd_real *x = (pd_real*)job->comp[0], *y = (pd_real*)job->comp[1], *z = (pd_real*)job->comp[2];
    for (size_t n = begin; n < end; ++n)
        x[n] = job->u[n].x, y[n] = job->u[n].y, z[n] = job->u[n].z;
}

static void apply_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const apply_job* job = ctx;
    const pd_mpm_state* s = job->s;
    const pd_real* mass = s->grid.mass;
    for (size_t n = begin; n < end; n += 4) {
        size_t width = end - n < 4 ? end - n : 4;
        pd_admm_v4 sx = {0, 0, 0, 0}, sy = sx, sz = sx;
        int empty = 1; /* a node without mass has an empty row */
        for (size_t t = 0; t < width; ++t)
            empty &= !(mass[n + t] > 0);
        if (!empty && width == 4) {
            const pd_real* block = &s->admm_a[row_at(n, 0)];
            for (int q = 0; q < PD_MPM_ROW; ++q) {
                pd_admm_v4 a, ux, uy, uz;
                size_t m = n + (size_t)job->off[q];
                load4(&a, &block[4 * q]);
                load4(&ux, &job->comp[0][m]), load4(&uy, &job->comp[1][m]);
                load4(&uz, &job->comp[2][m]);
                sx += a * ux, sy += a * uy, sz += a * uz;
            }
        } else if (!empty) { /* the last nodes, fewer than 4 */
            for (size_t t = 0; t < width; ++t)
                for (int q = 0; q < PD_MPM_ROW; ++q) {
                    pd_real a = s->admm_a[row_at(n + t, q)];
                    size_t m = n + t + (size_t)job->off[q];
                    sx[t] += a * job->comp[0][m], sy[t] += a * job->comp[1][m];
                    sz[t] += a * job->comp[2][m];
                }
        }
        for (size_t t = 0; t < width; ++t) {
            pd_vec3 sum = pd_v3(sx[t], sy[t], sz[t]);
            job->out[n + t] = job->free_only ? free_part(s, n + t, sum) : sum;
        }
    }
}

/* out = A u (free_only: without what the constraints fix). */
static void product(admm_ctx* c, const pd_vec3* u, pd_vec3* out, int free_only) {
    const pd_mpm_state* s = c->s;
    const pd_grid* g = &s->grid;
    size_t nn = g->nodes, reach = admm_row_reach(g);
    apply_job job = {s, u, out, free_only, {NULL, NULL, NULL}, {0}};
    for (int a = 0; a < 3; ++a) {
        pd_real* comp = s->admm_u + (size_t)a * (s->admm_rows + 2 * reach) + reach;
        memset(comp - reach, 0, reach * sizeof *comp); /* the zeros beyond the grid */
        memset(comp + nn, 0, reach * sizeof *comp);
        job.comp[a] = comp;
    }
    ptrdiff_t ny = g->dim[1], nz = g->dim[2];
    for (int a = -2; a <= 2; ++a)
        for (int b = -2; b <= 2; ++b)
            for (int cc = -2; cc <= 2; ++cc)
                job.off[node_row_slot(a, b, cc)] = a * ny * nz + b * nz + cc;
    split_range(&job, 0, nn, 0); /* a copy: cheaper than a parallel region's barrier */
    pd_parallel_for(nn, 256, apply_range, &job);
    if (free_only) /* the pins' constraint: over several nodes */
        pd_mpm_pin_project(s, out, 0);
}

/* out = A u from the stored rows. */
static void apply_a(admm_ctx* c, const pd_vec3* u, pd_vec3* out) {
    product(c, u, out, 0);
}

/* Room for A's rows: the ADMM's alone (the optimiser shares the other node arrays). */
static pd_status reserve_rows(pd_mpm_state* s, size_t nodes) {
    if (nodes <= s->admm_rows)
        return PD_OK;
    size_t cap = nodes + nodes / 2;
    PD_FREE_ARRAY(s->admm_a, pd_real, PD_MPM_ROW * s->admm_rows);
    PD_FREE_ARRAY(s->admm_u, pd_real, 9 * s->admm_rows);
    cap = (cap + 3) / 4 * 4; /* whole blocks of 4 rows */
    s->admm_a = PD_NEW_ARRAY(pd_real, PD_MPM_ROW * cap);
    s->admm_u = PD_NEW_ARRAY(pd_real, 9 * cap); /* 3 x (nodes + 2 reach), reach < nodes */
    s->admm_rows = s->admm_a && s->admm_u ? cap : 0;
    return s->admm_rows ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

/* A's weight k_p and A (above), and A's diagonal m_i + sum_p grad w_ip^T k_p grad w_ip (the
 * same for the three components) for the Jacobi preconditioner. */
static void assemble_a(admm_ctx* c) {
    pd_mpm_state* s = c->s;
    pd_real scale = c->rho * c->dt * c->dt;
    for (size_t p = 0; p < s->n; ++p) /* F_E's constraint: rho dt^2 w^2 F F^T */
        s->admm_k[p] = pd_m3_scale(pd_m3_mul(s->admm_fn[p], pd_m3_transpose(s->admm_fn[p])),
                                   scale * s->admm_w2[p]);
    if (s->has_maxwell) /* F_N's (Eq. 9's second constraint) */
        pd_mpm_maxwell_add_weight(s, scale, s->admm_k);
    pd_real k = 4 / (s->grid.dx * s->grid.dx);
    assemble_job job = {s, k * k};
    pd_parallel_for(s->grid.nodes, 64, assemble_range, &job);
    for (size_t n = 0; n < s->grid.nodes; ++n)
        s->admm_diag[n] = s->admm_a[row_at(n, node_row_slot(0, 0, 0))];
}

/* A u with the constraints' directions removed, for the conjugate gradients. */
static void apply_a_free(void* ctx, const pd_vec3* u, pd_vec3* out) {
    product(ctx, u, out, 1);
}

/* ---------------------------------------------------------------- the grid step by Cholesky */

/* grid_solver cholesky (beyond the paper, which solves the grid step by conjugate gradients):
 * A is fixed through a step's iterations (Sec. 7.1) and its block between nodes i and j is a
 * multiple of the identity (assemble_a), so with constraints along the axes each velocity
 * component a is one scalar system A_a x_a = r_a over the nodes where that component is free.
 * Each system is factored once a step (the core's sparse Cholesky, linalg/sym_direct.h) and
 * every iteration's grid step is then solved exactly by the factor, in place of about 29
 * conjugate gradient products (Fig. 16's column at 30 x the explicit bound, cg_tolerance 1e-3). */

/* The axis a collider node's normal lies along, -1 when oblique (its components coupled). */
static int normal_axis(pd_vec3 n) {
    for (int a = 0; a < 3; ++a)
        if (fabs(pd_v3_comp(n, a)) > 1 - 1e-12)
            return a;
    return -1;
}

/* Whether velocity component a of node n is solved for by the grid step. */
static int component_free(const pd_mpm_state* s, size_t n, int a) {
    if (!(s->grid.mass[n] > 0) || s->bc_kind[n] == PD_MPM_BC_FULL)
        return 0;
    if (pd_v3_len2(s->bc_normal2[n]) > 0 && normal_axis(s->bc_normal2[n]) == a)
        return 0; /* a corner's second normal, held let go or not */
    return s->bc_kind[n] != PD_MPM_BC_NORMAL || normal_axis(s->bc_normal[n]) != a;
}

/* Whether components a and b have the same free nodes (one factor serves both). */
static int same_free_nodes(const pd_mpm_state* s, int a, int b) {
    for (size_t n = 0; n < s->grid.nodes; ++n)
        if (component_free(s, n, a) != component_free(s, n, b))
            return 0;
    return 1;
}

/* A's rows over the nodes with mass in pd_sym_csr's form (minus the off-diagonal entries):
 * node n's neighbours within 2 nodes on every axis, from the stored rows. */
static pd_sym_csr grid_matrix_csr(pd_mpm_state* s) {
    const pd_grid* g = &s->grid;
    size_t nn = g->nodes, e = 0;
    int ny = g->dim[1], nz = g->dim[2];
    for (size_t n = 0; n < nn; ++n) {
        s->direct_offsets[n] = (uint32_t)e;
        s->direct_diag[n] = s->admm_a[row_at(n, node_row_slot(0, 0, 0))];
        if (!(g->mass[n] > 0))
            continue;
        int c[3] = {(int)(n / ((size_t)ny * nz)), (int)(n / nz % ny), (int)(n % nz)};
        for (int da = -2; da <= 2; ++da)
            for (int db = -2; db <= 2; ++db)
                for (int dc = -2; dc <= 2; ++dc) {
                    int i = c[0] + da, j = c[1] + db, k = c[2] + dc;
                    if ((da | db | dc) == 0 || i < 0 || j < 0 || k < 0 || i >= g->dim[0] ||
                        j >= ny || k >= nz)
                        continue;
                    size_t m = pd_grid_index(g, i, j, k);
                    if (!(g->mass[m] > 0))
                        continue;
                    s->direct_cols[e] = (uint32_t)m;
                    s->direct_weight[e++] = -s->admm_a[row_at(n, node_row_slot(da, db, dc))];
                }
    }
    s->direct_offsets[nn] = (uint32_t)e;
    return (pd_sym_csr){
        nn, s->direct_offsets, s->direct_cols, s->direct_weight, s->direct_diag, NULL, NULL};
}

/* Room for grid_matrix_csr and the factors' fixed nodes. */
static int reserve_direct(pd_mpm_state* s, size_t nn) {
    return pd_reserve_scratch((void**)&s->direct_offsets, &s->direct_caps[0], nn + 1,
                              sizeof *s->direct_offsets) &&
           pd_reserve_scratch((void**)&s->direct_cols, &s->direct_caps[1], PD_MPM_ROW * nn,
                              sizeof *s->direct_cols) &&
           pd_reserve_scratch((void**)&s->direct_weight, &s->direct_caps[2], PD_MPM_ROW * nn,
                              sizeof *s->direct_weight) &&
           pd_reserve_scratch((void**)&s->direct_diag, &s->direct_caps[3], nn,
                              sizeof *s->direct_diag) &&
           pd_reserve_scratch((void**)&s->direct_fixed, &s->direct_caps[4], nn,
                              sizeof *s->direct_fixed);
}

/* Whether A's pattern (csr over nn nodes) is the last step's: then its factors can keep their
 * ordering and symbolic analysis. */
static int same_pattern(const pd_mpm_state* s, const pd_sym_csr* csr) {
    size_t nn = csr->n;
    return s->direct_last_factors > 0 && nn == s->direct_nodes &&
           !memcmp(csr->offsets, s->direct_last_offsets, (nn + 1) * sizeof *csr->offsets) &&
           !memcmp(csr->cols, s->direct_last_cols, csr->offsets[nn] * sizeof *csr->cols);
}

/* Keeps csr's pattern for the next step's same_pattern; 0 when out of memory. */
static int keep_pattern(pd_mpm_state* s, const pd_sym_csr* csr) {
    size_t nn = csr->n, e = csr->offsets[nn];
    if (!pd_reserve_scratch((void**)&s->direct_last_offsets, &s->direct_last_caps[0], nn + 1,
                            sizeof *s->direct_last_offsets) ||
        !pd_reserve_scratch((void**)&s->direct_last_cols, &s->direct_last_caps[1], e + 1,
                            sizeof *s->direct_last_cols))
        return 0;
    memcpy(s->direct_last_offsets, csr->offsets, (nn + 1) * sizeof *csr->offsets);
    memcpy(s->direct_last_cols, csr->cols, e * sizeof *csr->cols);
    s->direct_nodes = nn;
    return 1;
}

/* Factor f over component a's free nodes. Where A's pattern is the last step's (kept: the last
 * step's count of factors, 0 for a new pattern) and so are f's fixed nodes (a deposit at rest),
 * f's last factor is refactored on its ordering and symbolic analysis: the same factor as a
 * fresh one, without AMD and the symbolic pass. Else a fresh factor. */
static pd_status factor_component(pd_mpm_state* s, const pd_sym_csr* csr, int f, int a, int kept) {
    size_t rows = 0, nn = s->grid.nodes;
    for (size_t n = 0; n < nn; ++n) {
        s->direct_fixed[n] = !component_free(s, n, a);
        rows += !s->direct_fixed[n];
    }
    s->direct_factors++;
    if (f < kept && pd_cholmod_factored(&s->direct[f].chol) &&
        !memcmp(s->direct_fixed, s->direct_last_fixed[f], nn) &&
        pd_sym_direct_refactor(&s->direct[f], csr) == PD_OK) {
        s->direct_refactors++;
        return PD_OK;
    }
    if (!pd_reserve_scratch((void**)&s->direct_last_fixed[f], &s->direct_last_caps[2 + f], nn, 1))
        return PD_ERR_OUT_OF_MEMORY;
    memcpy(s->direct_last_fixed[f], s->direct_fixed, nn);
    pd_status st = pd_sym_direct_resize(&s->direct[f], nn, rows); /* CHOLMOD started once */
    return st == PD_OK ? pd_sym_direct_factor(&s->direct[f], csr, s->direct_fixed) : st;
}

/* After A's assembly: the factors for grid_solver cholesky, or direct_of -1 (conjugate
 * gradients) with pins (their constraint spans several nodes), an oblique collider normal, or
 * a factor that failed. */
static void factor_grid_matrix(admm_ctx* c) {
    pd_mpm_state* s = c->s;
    size_t nn = s->grid.nodes;
    s->direct_of[0] = s->direct_of[1] = s->direct_of[2] = -1;
    if (s->prm.grid_solver != PD_MPM_GRID_CHOLESKY || s->has_pins)
        return;
    for (size_t n = 0; n < nn; ++n)
        if ((s->bc_kind[n] == PD_MPM_BC_NORMAL && normal_axis(s->bc_normal[n]) < 0) ||
            (pd_v3_len2(s->bc_normal2[n]) > 0 && normal_axis(s->bc_normal2[n]) < 0))
            return;
    if (!reserve_direct(s, nn))
        return;
    pd_sym_csr csr = grid_matrix_csr(s);
    int factor_of[3], factors = 0, kept = same_pattern(s, &csr) ? s->direct_last_factors : 0;
    s->direct_last_factors = 0; /* until every factor below is made */
    for (int a = 0; a < 3; ++a) {
        factor_of[a] = -1;
        for (int b = 0; b < a && factor_of[a] < 0; ++b)
            if (same_free_nodes(s, a, b))
                factor_of[a] = factor_of[b];
        if (factor_of[a] < 0) {
            if (factor_component(s, &csr, factors, a, kept) != PD_OK)
                return;
            factor_of[a] = factors++;
        }
    }
    if (!kept && !keep_pattern(s, &csr))
        return;
    s->direct_last_factors = factors;
    for (int a = 0; a < 3; ++a)
        s->direct_of[a] = factor_of[a];
}

/* dv += A^-1 r by the factors (r's constrained parts removed): each factor solves the three
 * components at once (CHOLMOD's), the ones it serves kept. */
static void solve_by_factors(pd_mpm_state* s, const pd_vec3* r, pd_vec3* dv) {
    size_t nn = s->grid.nodes;
    for (int f = 0; f < 3; ++f) {
        int keep[3] = {s->direct_of[0] == f, s->direct_of[1] == f, s->direct_of[2] == f};
        if (!(keep[0] || keep[1] || keep[2]))
            continue;
        pd_sym_direct_solve(&s->direct[f], r, s->cg_z);
        for (size_t n = 0; n < nn; ++n) {
            pd_vec3 z = s->cg_z[n];
            dv[n] =
                pd_v3_add(dv[n], pd_v3(keep[0] ? z.x : 0, keep[1] ? z.y : 0, keep[2] ? z.z : 0));
        }
    }
}

/* Preconditioned conjugate gradients on A dv = rhs in the constraints' free subspace, from the
 * dv given (which satisfies them): the grid step of Sec. 7.1 (a diagonal preconditioner) with
 * the boundary conditions projected inside (Sec. 7.2). Returns the products with A taken (the
 * conjugate gradients'; by the factors, the right-hand side's A dv when the friction split's
 * product did not leave it). */
static int grid_solve(admm_ctx* c, const pd_vec3* rhs, pd_vec3* dv) {
    pd_mpm_state* s = c->s;
    size_t nn = s->grid.nodes;
    pd_vec3* r = s->cg_r;
    int products = !c->ad_fresh;
    if (!c->ad_fresh || dv != s->admm_dv)
        apply_a(c, dv, s->cg_ad);
    c->ad_fresh = 0;
    for (size_t i = 0; i < nn; ++i)
        r[i] = pd_v3_sub(rhs[i], s->cg_ad[i]);
    project_free(s, r);
    if (s->direct_of[0] >= 0) { /* grid_solver cholesky: exact */
        solve_by_factors(s, r, dv);
        return products;
    }
    pd_grid_cg cg = {apply_a_free, c,       s->admm_diag, s->prm.cg_iterations, s->prm.cg_tolerance,
                     s->cg_z,      s->cg_d, s->cg_ad,     project_pins};
    return pd_grid_cg_solve(&cg, nn, r, dv);
}

/* u in the tangent plane of the normals node n holds: the first, and a corner's second
 * (bc_normal2, zero where none). The slip along the second is the second collider's, held: a cut
 * of it would undo the held normal (a piston moving along its normal beside a rough floor). */
/* Coulomb friction at the constrained nodes of a slip collider: the constraint's normal impulse
 * per mass, j = (A dv - rhs) . n / m (the reaction of the last grid step: A dv = rhs + j m where
 * the constraint holds dv), takes up to mu j of the tangential speed relative to the collider
 * (all of it when less; tangent to both normals at a corner, pd_mpm_slip_part). */
static void friction_after_solve(admm_ctx* c, const pd_colliders* colliders) {
    pd_mpm_state* s = c->s;
    const pd_grid* g = &s->grid;
    if (!c->ad_fresh)
        apply_a(c, s->admm_dv, s->cg_ad);
    /* the pins' impulse per mass of the pins there: a fixed node's A dv - rhs */
    if (s->has_pins) {
        for (size_t n = 0; n < g->nodes; ++n)
            s->cg_r[n] = pd_v3_sub(s->cg_ad[n], s->admm_rhs[n]);
        pd_mpm_pin_impulses(s, s->cg_r);
    }
    for (size_t n = 0; n < g->nodes && !s->prm.friction_in_solve; ++n) { /* else inside */
        if (s->bc_kind[n] != PD_MPM_BC_NORMAL)
            continue;
        const pd_collider* col = &colliders->items[s->bc_collider[n]];
        pd_vec3 vc = pd_collider_velocity_at(col, pd_grid_node_material_centre(g, c->p->mass, n));
        pd_vec3 nrm = s->bc_normal[n];
        pd_real jn = pd_v3_dot(pd_v3_sub(s->cg_ad[n], s->admm_rhs[n]), nrm) / g->mass[n];
        pd_vec3 rel = pd_v3_sub(pd_v3_add(g->velocity[n], s->admm_dv[n]), vc);
        pd_vec3 vt = pd_mpm_slip_part(s, n, rel);
        pd_real speed = pd_v3_len(vt);
        if (jn <= 0 || speed == 0)
            continue;
        pd_real keep = fmax(0, 1 - pd_mpm_node_friction(s, col, n) * jn / speed);
        s->admm_dv[n] = pd_v3_sub(s->admm_dv[n], pd_v3_scale(vt, 1 - keep));
    }
}

/* Coulomb friction inside the iterations (friction_in_solve) as one more splitting of the
 * augmented Lagrangian (Boyd et al. 2011 Sec. 6.3, the l1 term's soft threshold; beyond the
 * paper, as the friction is): at a collider node n with friction mu, the tangential velocity
 * relative to the collider v_t = P_t (dv_n - dv_stick) is copied into a variable z_n that
 * carries the dissipation mu j_n m |z| (j_n: the normal reaction per mass of the last grid
 * step), with the constraint v_t = z_n, its multiplier lambda_n (an impulse, bc_friction) and a
 * penalty k_n (bc_penalty) in A's diagonal. Each iteration after the grid step:
 *   z = shrink(v_t + lambda / k, mu j_n m / k),   lambda += k (v_t - z)   (the z and dual steps),
 * and the next grid step's right-hand side takes k (P_t dv_stick + z) - lambda. At convergence
 * lambda is Coulomb's impulse: |lambda| <= mu j_n m, against the sliding where z != 0. The
 * stick-or-slip switch this replaces cycled at long steps (tens of nodes flipping each
 * iteration, the residual stuck at 2e-3 on Fig. 16's column at 30 x; docs/methods/mpm.md). */
static pd_vec3 tangential(pd_vec3 u, pd_vec3 nrm) {
    return pd_v3_sub(u, pd_v3_scale(nrm, pd_v3_dot(u, nrm)));
}

/* k_n = m_n, the node's mass (k |v_t - z|^2 / 2 a kinetic energy), added to A's diagonal and
 * the preconditioner's. Measured on the block of tests/physics/mpm_admm_friction.c sliding at mu
 * 0.2 and 30 x the bound: k = m_n reaches the ADMM's tolerance in 24 iterations and Coulomb's
 * 1.5115 m/s^2 (1.5117); k = A_nn (the stiffness's scale, 30 times m_n or more there) stopped
 * at the cap of 30 with the friction unconverged (1.30), 3 A_nn at 0.79. */
static void friction_penalties(admm_ctx* c) {
    pd_mpm_state* s = c->s;
    int centre = node_row_slot(0, 0, 0);
    for (size_t n = 0; n < s->grid.nodes; ++n) {
        s->bc_penalty[n] = 0;
        if (s->bc_kind[n] != PD_MPM_BC_NORMAL || !(s->bc_mu[n] > 0))
            continue;
        pd_real k = s->grid.mass[n];
        s->bc_penalty[n] = k;
        s->admm_a[row_at(n, centre)] += k;
        s->admm_diag[n] += k;
    }
}

/* The grid step's right-hand side at the friction nodes: k (P_t dv_stick + z) - lambda. k sits
 * in A's diagonal block, k I, so it acts along the normal too: at a held node the normal
 * component is the collider's and the reaction takes k dv . n out (friction_step,
 * update_contacts); at a let-go node (unilateral floor) the normal row is free, and the target
 * takes the last iterate's normal component k (dv^k . n) n as well, so that the normal equation
 * is A dv = rhs at convergence (a proximal term until then) and A and its factors stay as they
 * are. Without it the block thrown off a floor of friction 0.5 at 30 x the bound left at 0.4121
 * m/s for the ballistic 0.4114 (tests/physics/mpm_admm_contact.c). */
static void friction_rhs(const pd_mpm_state* s, pd_vec3* rhs) {
    for (size_t n = 0; n < s->grid.nodes; ++n) {
        pd_real k = s->bc_penalty[n];
        if (!(k > 0))
            continue;
        pd_vec3 nrm = s->bc_normal[n];
        pd_vec3 target = pd_v3_add(tangential(s->bc_stick[n], nrm), s->bc_slide[n]);
        if (s->bc_kind[n] == PD_MPM_BC_RELEASED)
            target = pd_v3_add(target, pd_v3_scale(nrm, pd_v3_dot(s->admm_dv[n], nrm)));
        rhs[n] = pd_v3_add(rhs[n], pd_v3_sub(pd_v3_scale(target, k), s->bc_friction[n]));
    }
}

/* The z and dual steps above, from the grid step's dv. The normal reaction is A dv - rhs along
 * the normal less the penalty's own k dv . n (the penalty's normal part, which friction_rhs
 * balances only at a let-go node). Adds
 * the split's share of the residuals (iterate's, in the same units: k |v|^2 is an energy as
 * w^2 |F|^2 is) to sums: primal k |v_t - z|^2, dual k |z - z_last|^2, scale k |v_t^n|^2. */
static void friction_step(admm_ctx* c, pd_real sums[3]) {
    pd_mpm_state* s = c->s;
    apply_a(c, s->admm_dv, s->cg_ad);
    c->ad_fresh = 1; /* dv stays until the next grid step, which starts from A dv */
    for (size_t n = 0; n < s->grid.nodes; ++n) {
        pd_real k = s->bc_penalty[n], m = s->grid.mass[n];
        if (!(k > 0))
            continue;
        pd_vec3 nrm = s->bc_normal[n], dv = s->admm_dv[n];
        pd_real jn =
            (pd_v3_dot(pd_v3_sub(s->cg_ad[n], s->admm_rhs[n]), nrm) - k * pd_v3_dot(dv, nrm)) / m;
        pd_vec3 vt = pd_mpm_slip_part(s, n, pd_v3_sub(dv, s->bc_stick[n]));
        pd_vec3 u = pd_v3_add(vt, pd_v3_scale(s->bc_friction[n], 1 / k));
        int held = s->bc_kind[n] == PD_MPM_BC_NORMAL; /* a let-go node bears nothing */
        pd_real speed = pd_v3_len(u), limit = held && jn > 0 ? s->bc_mu[n] * jn * m / k : 0;
        pd_vec3 last = s->bc_slide[n];
        s->bc_slide[n] = speed > limit ? pd_v3_scale(u, 1 - limit / speed) : pd_v3(0, 0, 0);
        s->bc_friction[n] =
            pd_v3_add(s->bc_friction[n], pd_v3_scale(pd_v3_sub(vt, s->bc_slide[n]), k));
        sums[0] += k * pd_v3_len2(pd_v3_sub(vt, s->bc_slide[n]));
        sums[1] += k * pd_v3_len2(pd_v3_sub(s->bc_slide[n], last));
        sums[2] += k * pd_v3_len2(pd_mpm_slip_part(s, n, s->bc_stick[n]));
    }
}

/* The unilateral contact (collider_normal unilateral; beyond the paper, whose Sec. 7.2 holds a
 * collider node's normal velocity through the solve): an active set updated after each grid
 * step. The grid step's reaction at a held node is r_n = (A dv - rhs) . n (A dv = rhs + r_n n
 * there; less the friction split's penalty k dv . n, its normal part: friction_rhs): the
 * collider pushes while r_n >= 0 and would pull (hold material that leaves it) where r_n < 0,
 * and such a node is let go; a let-go node whose velocity points into the collider, (dv -
 * dv_target) . n < 0, is held again at the target (Signorini's conditions v . n >= v_c . n,
 * r_n >= 0, r_n (v - v_c) . n = 0 at convergence). Per ADMM iteration, not inside the
 * conjugate gradients: the grid step stays one linear solve on a fixed subspace (its
 * conjugate gradients or its Cholesky factor, which a set changed within a solve would
 * break), and the set follows the ADMM's own convergence. A node is let go at most once a step
 * and, held again, stays held (bc_flips): the set then settles. Without that rule (measured on
 * Fig. 16's column at 1 cm, 75 x, rho 0.1, 8 iterations) 10 to 125 nodes changed at nearly
 * every iteration of every step, the held nodes above the floor's first layer taking the load
 * in turn. Returns the nodes changed; dv of a node held again is set to its target (A dv then
 * stale). */
static int update_contacts(admm_ctx* c) {
    pd_mpm_state* s = c->s;
    if (s->prm.collider_normal != PD_MPM_CONTACT_UNILATERAL)
        return 0;
    if (!c->ad_fresh)
        apply_a(c, s->admm_dv, s->cg_ad);
    c->ad_fresh = 1;
    int changed = 0;
    for (size_t n = 0; n < s->grid.nodes; ++n) {
        uint8_t kind = s->bc_kind[n];
        if (kind != PD_MPM_BC_NORMAL && kind != PD_MPM_BC_RELEASED)
            continue;
        pd_vec3 nrm = s->bc_normal[n], dv = s->admm_dv[n];
        if (kind == PD_MPM_BC_NORMAL) {
            pd_real k = s->prm.friction_in_solve ? s->bc_penalty[n] : 0;
            pd_real reaction =
                pd_v3_dot(pd_v3_sub(s->cg_ad[n], s->admm_rhs[n]), nrm) - k * pd_v3_dot(dv, nrm);
            if (reaction < 0 && s->bc_flips[n] == 0)
                s->bc_kind[n] = PD_MPM_BC_RELEASED, s->bc_flips[n] = 1, changed++;
        } else if (pd_v3_dot(pd_v3_sub(dv, s->bc_target[n]), nrm) < 0) {
            s->bc_kind[n] = PD_MPM_BC_NORMAL, s->bc_flips[n] = 2, changed++;
            s->admm_dv[n] = pd_v3_add(tangential(dv, nrm), s->bc_target[n]);
            c->ad_fresh = 0;
        }
    }
    return changed;
}

/* ---------------------------------------------------------------- the iteration */

/* SEW (Sec. 7.3): w_p^2 = V_p^0 |d^2 Psi / d Sigma^2|_F at F_p^n for an elastic material. A
 * plastic one takes the projected stiffness the paper asks for, V_p^0 |H(Z(Sigma)) dZ/dSigma|_F
 * (Eq. 10's Hessian without rho w^2, projected_gradient_hessian), at the stretches of the trial
 * b_p = (I + dt G(v^n)) F^n: F^n itself sits on the yield surface after a return, where dZ/dSigma
 * is the identity or the cone's by round-off, and b_p is where the particle step starts; where
 * dZ/dSigma is 0 (Drucker-Prager's apex) the unprojected Hessian there, as the paper does. */
static pd_real sew_weight(const pd_mpm_material* m, pd_real dilation, pd_real v0, pd_mat3 f,
                          pd_mat3 trial, pd_mat3* v) {
    pd_mat3 u;
    pd_vec3 sv;
    pd_svd3(m->plastic ? trial : f, &u, &sv, v);
    pd_real sig[3] = {fmax(fabs(sv.x), 1e-3), fmax(fabs(sv.y), 1e-3), fmax(fabs(sv.z), 1e-3)};
    pd_real g[3], h[3][3], norm = 0;
    projected_gradient_hessian(m, dilation, sig, g, h);
    for (int pass = 0; pass < 2 && !(norm > 0); ++pass) {
        if (pass == 1) /* the apex: dZ/dSigma = 0 */
            pd_mpm_gradient_hessian(m, sig, g, h);
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                norm += h[a][b] * h[a][b];
    }
    return v0 * sqrt(norm);
}

/* The weights above for every particle, plastic ones at `trial` (b). */
typedef struct sew_job {
    const admm_ctx* c;
    const pd_mat3* trial;
} sew_job;

static void sew_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const sew_job* job = ctx;
    pd_mpm_state* s = job->c->s;
    for (size_t p = begin; p < end; ++p)
        s->admm_w2[p] =
            sew_weight(&s->mat[job->c->p->material[p]], s->dilation ? s->dilation[p] : 0,
                       s->volume0[p], s->f[p], job->trial[p], &s->admm_v[p]);
}

static void sew_weights(admm_ctx* c, const pd_mat3* trial) {
    sew_job job = {c, trial};
    pd_parallel_for(c->s->n, 256, sew_range, &job);
}

static void start_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const admm_ctx* c = ctx;
    pd_mpm_state* s = c->s;
    for (size_t p = begin; p < end; ++p) {
        s->admm_b[p] =
            pd_m3_mul(pd_m3_add(pd_m3_identity(), pd_m3_scale(s->admm_b[p], c->dt)), s->f[p]);
        s->admm_y[p] = pd_m3_zero();
        s->admm_f[p] = s->admm_b[p];
    }
}

/* Eq. 9's b_p (Eq. 4's predictor at v^n); the SEW weights (above), whose SVD's V starts the
 * first particle step's; y = 0; F = b. */
static void start(admm_ctx* c) {
    pd_mpm_state* s = c->s;
    pd_grid_gradient(&s->grid, s->grid.velocity, s->admm_b);
    memcpy(s->admm_fn, s->f, s->n * sizeof *s->f);
    pd_parallel_for(s->n, 256, start_range, c);
    sew_weights(c, s->admm_b);
}

/* The grid step's right-hand side for particle p: F_hat over-relaxed (Sec. 7.3) and kept for the
 * dual step, and D^T's particle term (w y + rho w^2 (F_hat - b)) F^n^T dt into `affine`. */
static void particle_rhs(const admm_ctx* c, size_t p) {
    pd_mpm_state* s = c->s;
    pd_mat3 dvb = pd_m3_add(s->admm_du[p], s->admm_b[p]);
    pd_mat3 fhat = pd_m3_add(pd_m3_scale(s->admm_f[p], c->alpha), pd_m3_scale(dvb, 1 - c->alpha));
    s->admm_fhat[p] = fhat;
    pd_real w = sqrt(s->admm_w2[p]);
    pd_mat3 m = pd_m3_add(pd_m3_scale(s->admm_y[p], w),
                          pd_m3_scale(pd_m3_sub(fhat, s->admm_b[p]), c->rho * s->admm_w2[p]));
    s->affine[p] = pd_m3_scale(pd_m3_mul(m, pd_m3_transpose(s->admm_fn[p])), c->dt);
}

/* The particle step (Eq. 10) for F_E, each particle alone: R / (rho w^2) is the target; then the
 * particle's share of the grid step's right-hand side (particle_rhs), in the same pass over the
 * particles (the Maxwell branch's step and share come after and add theirs). */
static void particle_steps(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const admm_ctx* c = ctx;
    pd_mpm_state* s = c->s;
    for (size_t p = begin; p < end; ++p) {
        pd_real w = sqrt(s->admm_w2[p]), k = c->rho * s->admm_w2[p];
        pd_mat3 target = pd_m3_sub(pd_m3_add(s->admm_du[p], s->admm_b[p]),
                                   pd_m3_scale(s->admm_y[p], w > 0 ? 1 / (c->rho * w) : 0));
        s->admm_f[p] = particle_step(&s->mat[c->p->material[p]], s->dilation ? s->dilation[p] : 0,
                                     s->volume0[p], k, target, &s->admm_v[p]);
        particle_rhs(c, p);
    }
}

/* The dual step (Sec. 7.1) with F_hat (Sec. 7.3), admm_du = D dv^{k+1} and cg_m = D dv^k;
 * each chunk of PD_MPM_ADMM_GRAIN particles writes its sums of the residuals' squares (below)
 * to admm_sums: summed in order after, the same bytes on any thread count. */
static void dual_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const admm_ctx* c = ctx;
    pd_mpm_state* s = c->s;
    pd_real primal = 0, dual = 0, scale = 0;
    for (size_t p = begin; p < end; ++p) {
        pd_real w = sqrt(s->admm_w2[p]);
        pd_mat3 gap = pd_m3_sub(pd_m3_sub(s->admm_fhat[p], s->admm_du[p]), s->admm_b[p]);
        s->admm_y[p] = pd_m3_add(s->admm_y[p], pd_m3_scale(gap, c->rho * w));
        pd_mat3 plain = pd_m3_sub(pd_m3_sub(s->admm_f[p], s->admm_du[p]), s->admm_b[p]);
        primal += s->admm_w2[p] * pd_m3_frob2(plain);
        dual += s->admm_w2[p] * pd_m3_frob2(pd_m3_sub(s->admm_du[p], s->cg_m[p]));
        scale += s->admm_w2[p] * pd_m3_frob2(s->admm_b[p]);
    }
    pd_real* out = &s->admm_sums[3 * (begin / PD_MPM_ADMM_GRAIN)];
    out[0] = primal, out[1] = dual, out[2] = scale;
}

/* One ADMM iteration from admm_du = D dv^k; returns its residual (below). */
static pd_real iterate(admm_ctx* c, pd_vec3 gravity_dv, int* cg_total, pd_real* combined) {
    pd_mpm_state* s = c->s;
    size_t nn = s->grid.nodes;
    double t0 = pd_now();
    /* Eq. 10, each particle alone, and the grid step's (Sec. 7.1) rhs = dt M g + D^T (w y + rho
     * w^2 (F_hat - b)) per particle */
    pd_parallel_for(s->n, 128, particle_steps, c);
    if (s->has_maxwell)
        pd_mpm_maxwell_particle_step(s, c->p, c->dt, c->rho);
    double t1 = pd_now();
    if (s->has_maxwell) /* + D_N^T (w_N y_N + rho w_N^2 (F_hat_N - b_N)) */
        pd_mpm_maxwell_add_rhs(s, c->dt, c->rho, c->alpha, s->affine);
    divergence(&s->grid, s->affine, s->admm_rhs);
    for (size_t n = 0; n < nn; ++n)
        s->admm_rhs[n] = pd_v3_add(s->admm_rhs[n], pd_v3_scale(gravity_dv, s->grid.mass[n]));
    if (s->prm.friction_in_solve) /* the friction split's terms (friction_step) */
        friction_rhs(s, s->admm_rhs);
    *cg_total += grid_solve(c, s->admm_rhs, s->admm_dv);
    pd_real sums[3] = {0, 0, 0};
    if (s->prm.friction_in_solve)
        friction_step(c, sums);
    if (update_contacts(c) > 0) {
        c->contacts_changed = 1;
        if (s->direct_of[0] >= 0) /* the factors' free nodes changed */
            factor_grid_matrix(c);
    }
    double t2 = pd_now();
    pd_mat3* previous = s->admm_du; /* D dv^k, for the dual residual: kept, not copied */
    s->admm_du = s->cg_m, s->cg_m = previous;
    apply_d(c, s->admm_dv, s->admm_du); /* D dv^{k+1}: the next iteration's D dv^k too */
    pd_parallel_for(s->n, PD_MPM_ADMM_GRAIN, dual_range, c);
    for (size_t q = 0; q < (s->n + PD_MPM_ADMM_GRAIN - 1) / PD_MPM_ADMM_GRAIN; ++q)
        for (int a = 0; a < 3; ++a)
            sums[a] += s->admm_sums[3 * q + a];
    if (s->has_maxwell) /* F_N's dual step and its share of the residuals */
        pd_mpm_maxwell_dual_step(s, c->p, c->dt, c->rho, sums);
    pd_real primal = sums[0], dual = sums[1], scale = sums[2];
    s->admm_seconds[PD_MPM_ADMM_PARTICLE] += t1 - t0;
    s->admm_seconds[PD_MPM_ADMM_GRID] += t2 - t1;
    s->admm_seconds[PD_MPM_ADMM_DUAL] += pd_now() - t2;
    /* the larger of the primal residual |w (F - D dv - b)| and the dual one |w D (dv^{k+1} -
     * dv^k)| (Boyd et al. 2011 Sec. 3.3, with rho's scale taken out), over |w b|; their sum
     * for the Anderson safeguard (Zhang et al. 2019's combined residual) */
    *combined = scale > 0 ? sqrt((primal + dual) / scale) : 0;
    return scale > 0 ? sqrt(fmax(primal, dual) / scale) : 0;
}

/* ---------------------------------------------------------------- Anderson acceleration */

/* anderson > 0 (beyond the paper): Zhang, Peng, Zhang and Deng 2019 ("Accelerating ADMM for
 * efficient simulation and optimization", ACM TOG 38(6)) treat an ADMM iteration as a fixed-point
 * map of the variables the next iteration starts from and accelerate it by Anderson's mixing
 * (linalg/anderson.h). Here an iteration starts from D dv^k and y^k (Eq. 10's target), the
 * friction split's z and lambda (friction_rhs), and dv^k for the conjugate gradients' start:
 * the iterate packs D dv and y per particle (9 each), dv per node with mass (3) and z and
 * lambda per friction node (3 each). Their residual is measured in the ADMM's own norm, rho |w D
 * dv|^2 + |y|^2 / rho (with scaled dual y / (rho w): Boyd 2011 Sec. 3.3's |B z|_rho and |u|_rho)
 * and k |z|^2 + |lambda|^2 / k for the split; dv is carried with weight 0 (D dv stands for it, and
 * the mix is linear: the mixed D dv is D of the mixed dv, and the mixed dv keeps the constraints
 * that every dv keeps). */
static size_t anderson_size(const pd_mpm_state* s) {
    return 18 * s->n + 3 * (s->aa_nodes + 2 * s->aa_friction_nodes);
}

/* Packs (unpack 0) or unpacks (1) the iterate: the particles' D dv and y, dv at the nodes with
 * mass (aa_node; the others' never change), z and lambda at the friction split's nodes
 * (aa_node's last aa_friction_nodes entries, listed again). */
static void anderson_move(pd_mpm_state* s, pd_real* x, int unpack) {
    size_t n = s->n, nodes = s->aa_nodes, fn = s->aa_friction_nodes;
    pd_vec3* dv = (pd_vec3*)(x + 18 * n);
    pd_vec3 *z = dv + nodes, *lambda = z + fn;
    const uint32_t* fnode = s->aa_node + nodes;
    if (unpack) {
        memcpy(s->admm_du, x, n * sizeof *s->admm_du);
        memcpy(s->admm_y, x + 9 * n, n * sizeof *s->admm_y);
        for (size_t q = 0; q < nodes; ++q)
            s->admm_dv[s->aa_node[q]] = dv[q];
        for (size_t q = 0; q < fn; ++q)
            s->bc_slide[fnode[q]] = z[q], s->bc_friction[fnode[q]] = lambda[q];
        return;
    }
    memcpy(x, s->admm_du, n * sizeof *s->admm_du);
    memcpy(x + 9 * n, s->admm_y, n * sizeof *s->admm_y);
    for (size_t q = 0; q < nodes; ++q)
        dv[q] = s->admm_dv[s->aa_node[q]];
    for (size_t q = 0; q < fn; ++q)
        z[q] = s->bc_slide[fnode[q]], lambda[q] = s->bc_friction[fnode[q]];
}

static void anderson_pack(pd_mpm_state* s, pd_real* x) {
    anderson_move(s, x, 0);
}

static void anderson_unpack(pd_mpm_state* s, const pd_real* x) {
    anderson_move(s, (pd_real*)x, 1);
}

/* The nodes with mass and the friction split's (aa_node), room for the history and three
 * packed vectors (the iterate, its map, the weights), and the weights above; the history
 * restarted (each step a new problem). */
static pd_status anderson_start(admm_ctx* c) {
    pd_mpm_state* s = c->s;
    size_t np = s->n, nn = s->grid.nodes, nodes = 0, fn = 0;
    if (!pd_reserve_scratch((void**)&s->aa_node, &s->aa_node_cap, 2 * nn, sizeof *s->aa_node))
        return PD_ERR_OUT_OF_MEMORY;
    for (size_t q = 0; q < nn; ++q)
        if (s->grid.mass[q] > 0)
            s->aa_node[nodes++] = (uint32_t)q;
    for (size_t q = 0; q < nn; ++q)
        if (s->prm.friction_in_solve && s->bc_penalty[q] > 0)
            s->aa_node[nodes + fn++] = (uint32_t)q;
    s->aa_nodes = nodes, s->aa_friction_nodes = fn;
    size_t n = anderson_size(s);
    pd_status st = pd_anderson_reserve(&s->aa, n, s->prm.anderson);
    if (st != PD_OK)
        return st;
    if (!pd_reserve_scratch((void**)&s->aa_x, &s->aa_cap, 3 * n, sizeof *s->aa_x))
        return PD_ERR_OUT_OF_MEMORY;
    s->aa_w = s->aa_x + 2 * n;
    for (size_t p = 0; p < np; ++p)
        for (int e = 0; e < 9; ++e) {
            s->aa_w[9 * p + e] = sqrt(c->rho * s->admm_w2[p]);
            s->aa_w[9 * (np + p) + e] = 1 / sqrt(c->rho);
        }
    pd_real* w = s->aa_w + 18 * np;
    for (size_t q = 0; q < 3 * nodes; ++q)
        w[q] = 0; /* dv: carried */
    w += 3 * nodes;
    for (size_t q = 0; q < fn; ++q) {
        pd_real k = s->bc_penalty[s->aa_node[nodes + q]];
        for (int e = 0; e < 3; ++e)
            w[3 * q + e] = sqrt(k), w[3 * (fn + q) + e] = 1 / sqrt(k);
    }
    return PD_OK;
}

/* After an iteration from the iterate in aa_x (whose combined residual it measured, r): Zhang
 * 2019's Alg. 1. If the iterate was a plain one (the step's first, or after a return) or its
 * residual fell below the last accepted one's, it is accepted and the next iterate is the mix
 * of the last anderson + 1 maps (or, with `last` set, its plain map: the step's last iteration
 * then starts from a checked iterate, so that the step never ends on an unchecked mix); else the
 * next is the last accepted iterate's plain map and the history restarts. *mixed: whether the
 * next iterate is a mix; *accepted: the last accepted residual. */
static void anderson_step(admm_ctx* c, pd_real r, int last, int* mixed, pd_real* accepted) {
    pd_mpm_state* s = c->s;
    pd_real* g = s->aa_x + anderson_size(s);
    if (*mixed && !(r < *accepted)) { /* the safeguard: back to the plain map */
        anderson_unpack(s, pd_anderson_plain(&s->aa));
        pd_anderson_restart(&s->aa);
        s->aa_rejected++;
        *mixed = 0;
        c->ad_fresh = 0;
        return;
    }
    *accepted = r;
    *mixed = 0;
    if (last)
        return;
    anderson_pack(s, g);
    *mixed = pd_anderson_mix(&s->aa, s->aa_x, g, s->aa_w) > 0;
    if (*mixed) {
        anderson_unpack(s, g);
        s->aa_accepted++;
        c->ad_fresh = 0; /* dv moved: the friction split's A dv is stale */
    }
}

pd_status pd_mpm_admm_solve(pd_mpm_state* s, const pd_step_context* ctx, int* iterations,
                            pd_real* residual) {
    pd_real dt = ctx->dt;
    pd_status st = pd_mpm_admm_reserve(s, s->grid.nodes);
    if (st == PD_OK)
        st = reserve_rows(s, s->grid.nodes);
    if (st == PD_OK && s->has_maxwell)
        st = pd_mpm_maxwell_reserve(s);
    if (st != PD_OK)
        return st;
    admm_ctx c = {s, ctx->particles, dt, s->prm.rho, s->prm.relaxation};
    size_t nn = s->grid.nodes;
    double t0 = pd_now();
    memset(s->admm_seconds, 0, sizeof s->admm_seconds);
    find_constraints(&c, ctx->colliders);
    start(&c);
    if (s->has_maxwell)
        pd_mpm_maxwell_start(s, c.p, dt, c.rho);
    assemble_a(&c);
    if (s->prm.friction_in_solve)
        friction_penalties(&c);
    factor_grid_matrix(&c);
    s->admm_seconds[PD_MPM_ADMM_ASSEMBLE] = pd_now() - t0;
    pd_vec3 gdv = pd_v3_scale(ctx->gravity, dt);
    for (size_t n = 0; n < nn; ++n) /* the explicit guess: gravity alone */
        s->admm_dv[n] = s->grid.mass[n] > 0 ? gdv : pd_v3(0, 0, 0);
    impose_constraints(s, s->admm_dv);
    apply_d(&c, s->admm_dv, s->admm_du); /* D dv^0; each iteration leaves D dv^{k+1} there */
    int cg = 0, k = 0, aa = s->prm.anderson > 0, mixed = 0;
    if (aa && (st = anderson_start(&c)) != PD_OK)
        return st;
    pd_real r = INFINITY, combined, accepted = INFINITY;
    for (; k < s->prm.iterations && !(r <= s->prm.tolerance); ++k) {
        if (aa)
            anderson_pack(s, s->aa_x);
        c.contacts_changed = 0;
        r = iterate(&c, gdv, &cg, &combined);
        if (aa && c.contacts_changed) { /* the iterates before hold other nodes: not mixed */
            pd_anderson_restart(&s->aa);
            mixed = 0;
        }
        if (aa && k + 1 < s->prm.iterations && !(r <= s->prm.tolerance))
            anderson_step(&c, combined, k + 2 == s->prm.iterations, &mixed, &accepted);
    }
    double t1 = pd_now();
    friction_after_solve(&c, ctx->colliders);
    s->admm_seconds[PD_MPM_ADMM_GRID] += pd_now() - t1;
    *iterations = k;
    *residual = r;
    s->last_cg_iterations = cg;
    return PD_OK;
}

/* The grid step's A = M + D^T w^2 D (rho 1, SEW weights at F^n; the optimiser refuses the
 * Maxwell branch) stored for the step about to run, for the optimiser's L-BFGS (mpm_implicit.c):
 * the incremental potential's Hessian M + D^T (V0 dP/dF) D with V0 dP/dF stood in for by w^2 = V0
 * |d^2 Psi / d Sigma^2|_F, SPD and fixed through the step. */
pd_status pd_mpm_grid_matrix(pd_mpm_state* s, const pd_particles* particles, pd_real dt,
                             const pd_mat3* trial) {
    pd_status st = reserve_rows(s, s->grid.nodes);
    if (st != PD_OK)
        return st;
    admm_ctx c = {s, particles, dt, 1, 1};
    memcpy(s->admm_fn, s->f, s->n * sizeof *s->f);
    sew_weights(&c, trial);
    assemble_a(&c);
    return PD_OK;
}

/* z = A^-1 b in the constraints' free subspace (b's constrained parts dropped) by the grid
 * step's Jacobi-preconditioned conjugate gradients from 0 (cg_iterations, cg_tolerance);
 * returns the products with A taken. */
int pd_mpm_grid_matrix_solve(pd_mpm_state* s, const pd_vec3* b, pd_vec3* z) {
    admm_ctx c = {s, NULL, 0, 1, 1};
    size_t nn = s->grid.nodes;
    memcpy(s->cg_r, b, nn * sizeof *s->cg_r);
    project_free(s, s->cg_r);
    memset(z, 0, nn * sizeof *z);
    pd_grid_cg cg = {apply_a_free, &c,      s->admm_diag, s->prm.cg_iterations, s->prm.cg_tolerance,
                     s->cg_z,      s->cg_d, s->cg_ad,     project_pins};
    return pd_grid_cg_solve(&cg, nn, s->cg_r, z);
}

/* The residual of backward Euler's momentum balance at the grid velocity change dv:
 * |M dv - dt M g + D^T (V0 P(D dv + b))| over |dt M g| + |D^T V0 P| (free nodes only): 0 at
 * the implicit step's solution. For tests. */
pd_real pd_mpm_implicit_residual(pd_mpm_state* s, const pd_particles* particles, pd_vec3 gravity,
                                 pd_real dt, const pd_vec3* dv) {
    admm_ctx c = {s, particles, dt, s->prm.rho, 1};
    apply_d(&c, dv, s->admm_du);
    for (size_t p = 0; p < s->n; ++p) {
        pd_mat3 f = pd_m3_add(s->admm_du[p], s->admm_b[p]), u, v;
        pd_vec3 sv;
        pd_svd3(f, &u, &sv, &v);
        pd_real sig[3] = {sv.x, sv.y, sv.z}, g[3], h[3][3];
        pd_mpm_gradient_hessian(&s->mat[particles->material[p]], sig, g, h);
        pd_mat3 piola = pd_m3_from_svd(u, pd_v3(g[0], g[1], g[2]), v);
        s->cg_m[p] = pd_m3_scale(piola, s->volume0[p]);
    }
    times_fn(&c, s->cg_m, s->affine, 1);
    if (s->has_maxwell) /* + D_N^T V0 P_N */
        pd_mpm_maxwell_add_stress(s, particles, dt, dv, s->affine);
    divergence(&s->grid, s->affine, s->cg_r);
    pd_vec3 gdv = pd_v3_scale(gravity, dt);
    for (size_t n = 0; n < s->grid.nodes; ++n)
        s->cg_z[n] = pd_v3_add(
            pd_v3_sub(pd_v3_scale(dv[n], s->grid.mass[n]), pd_v3_scale(gdv, s->grid.mass[n])),
            s->cg_r[n]);
    project_free(s, s->cg_z);
    pd_real res = 0, scale = 0;
    for (size_t n = 0; n < s->grid.nodes; ++n) {
        res += pd_v3_len2(s->cg_z[n]);
        scale += pd_v3_len2(pd_v3_scale(gdv, s->grid.mass[n])) + pd_v3_len2(s->cg_r[n]);
    }
    return scale > 0 ? sqrt(res / scale) : 0;
}

/* ---------------------------------------------------------------- storage */

#define ADMM_PARTICLE_ARRAYS(X)                                                                    \
    X(admm_b, pd_mat3)                                                                             \
    X(admm_fn, pd_mat3)                                                                            \
    X(admm_f, pd_mat3)                                                                             \
    X(admm_fhat, pd_mat3)                                                                          \
    X(admm_y, pd_mat3)                                                                             \
    X(admm_du, pd_mat3) X(cg_m, pd_mat3) X(admm_k, pd_mat3) X(admm_v, pd_mat3) X(admm_w2, pd_real)
#define ADMM_NODE_ARRAYS(X)                                                                        \
    X(admm_dv, pd_vec3)                                                                            \
    X(admm_rhs, pd_vec3)                                                                           \
    X(cg_r, pd_vec3)                                                                               \
    X(cg_z, pd_vec3)                                                                               \
    X(cg_d, pd_vec3)                                                                               \
    X(cg_ad, pd_vec3)                                                                              \
    X(bc_normal, pd_vec3)                                                                          \
    X(bc_target, pd_vec3)                                                                          \
    X(bc_normal2, pd_vec3)                                                                         \
    X(bc_target2, pd_vec3)                                                                         \
    X(bc_stick, pd_vec3)                                                                           \
    X(bc_friction, pd_vec3)                                                                        \
    X(bc_slide, pd_vec3)                                                                           \
    X(bc_mu, pd_real)                                                                              \
    X(bc_penalty, pd_real)                                                                         \
    X(admm_diag, pd_real) X(bc_kind, uint8_t) X(bc_flips, uint8_t) X(bc_collider, int32_t)

/* The dual step's three sums per chunk of PD_MPM_ADMM_GRAIN particles. */
static size_t admm_sum_count(size_t n) {
    return 3 * (n / PD_MPM_ADMM_GRAIN + 1);
}

pd_status pd_mpm_admm_reserve(pd_mpm_state* s, size_t nodes) {
    if (!s->admm_b) {
#define ALLOC_ONE(field, T) s->field = PD_NEW_ARRAY(T, s->cap + 1);
        ADMM_PARTICLE_ARRAYS(ALLOC_ONE)
#undef ALLOC_ONE
        s->admm_sums = PD_NEW_ARRAY(pd_real, admm_sum_count(s->cap));
#define CHECK_ONE(field, T) || !s->field
        if (!s->admm_sums ADMM_PARTICLE_ARRAYS(CHECK_ONE))
            return PD_ERR_OUT_OF_MEMORY;
#undef CHECK_ONE
    }
    if (nodes <= s->admm_nodes)
        return PD_OK;
    size_t cap = nodes + nodes / 2;
#define REGROW_ONE(field, T)                                                                       \
    PD_FREE_ARRAY(s->field, T, s->admm_nodes);                                                     \
    s->field = PD_NEW_ARRAY(T, cap);
    ADMM_NODE_ARRAYS(REGROW_ONE)
#undef REGROW_ONE
    s->admm_nodes = cap;
#define CHECK_ONE(field, T) || !s->field
    return (0 ADMM_NODE_ARRAYS(CHECK_ONE)) ? PD_ERR_OUT_OF_MEMORY : PD_OK;
#undef CHECK_ONE
}

void pd_mpm_admm_free(pd_mpm_state* s) {
#define FREE_ONE(field, T) PD_FREE_ARRAY(s->field, T, s->cap + 1);
    ADMM_PARTICLE_ARRAYS(FREE_ONE)
#undef FREE_ONE
    PD_FREE_ARRAY(s->admm_sums, pd_real, admm_sum_count(s->cap));
#define FREE_NODE(field, T) PD_FREE_ARRAY(s->field, T, s->admm_nodes);
    ADMM_NODE_ARRAYS(FREE_NODE)
#undef FREE_NODE
    PD_FREE_ARRAY(s->admm_a, pd_real, PD_MPM_ROW * s->admm_rows);
    PD_FREE_ARRAY(s->admm_u, pd_real, 9 * s->admm_rows);
    for (int f = 0; f < 3; ++f)
        pd_sym_direct_free(&s->direct[f]);
    pd_anderson_free(&s->aa);
    PD_FREE_ARRAY(s->aa_x, pd_real, s->aa_cap);
    PD_FREE_ARRAY(s->aa_node, uint32_t, s->aa_node_cap);
    PD_FREE_ARRAY(s->direct_offsets, uint32_t, s->direct_caps[0]);
    PD_FREE_ARRAY(s->direct_cols, uint32_t, s->direct_caps[1]);
    PD_FREE_ARRAY(s->direct_weight, pd_real, s->direct_caps[2]);
    PD_FREE_ARRAY(s->direct_diag, pd_real, s->direct_caps[3]);
    PD_FREE_ARRAY(s->direct_fixed, uint8_t, s->direct_caps[4]);
    PD_FREE_ARRAY(s->direct_last_offsets, uint32_t, s->direct_last_caps[0]);
    PD_FREE_ARRAY(s->direct_last_cols, uint32_t, s->direct_last_caps[1]);
    for (int f = 0; f < 3; ++f)
        PD_FREE_ARRAY(s->direct_last_fixed[f], uint8_t, s->direct_last_caps[2 + f]);
    pd_mpm_maxwell_free(s);
}
