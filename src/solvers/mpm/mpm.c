/* mpm: Fang, Li, Gao, Jiang 2019, "Silly Rubber: An Implicit Material Point Method for
 * Simulating Non-equilibrated Viscoelastic and Elastoplastic Solids". This file holds the
 * explicit step of Sec. 6 with MLS-MPM forces (Hu et al. 2018) and APIC transfers (the core's
 * src/grid/), symplectic Euler, and StVK with Hencky strain for Psi_E (Eq. 6); the RPIC damping
 * of Sec. 8 as round trips before the step; with two bodies or more a velocity field per body
 * and the contact between them (Bardenhagen et al. 2000; src/grid/grid_fields.h). The implicit
 * ADMM of Sec. 7, the viscoelastic branch (Eq. 1-8) and the plastic return Z_E follow
 * (docs/methods/mpm.md). */
#include <math.h>
#include <string.h>

#include "constitutive/energies.h"
#include "core/alloc.h"
#include "core/timer.h"
#include "grid/grid_boundary.h"
#include "math/svd3.h"
#include "neighbor/morton.h"
#include "parallel/parallel.h"
#include "solvers/mpm/mpm_internal.h"
#include "world/world.h"

/* A grid this many times the particles' count is a runaway (a few flew apart). */
#define MPM_MAX_NODES_PER_PARTICLE 4096
/* A return's smallest stretch at least this times its largest: the result from F without V
 * (return_frame), its rounding magnified at most this much less. */
#define MPM_FLAT 1e-3

/* Kirchhoff stress of a material's Psi_E (StVK with Hencky strain, Eq. 6, by default) at F = U
 * Sigma V^T: tau = U diag(tau_a) U^T (tau = P F^T), tau_a from the constitutive room at the
 * stretches |Sigma|. An isotropic function of F F^T: V is not needed, nor Sigma's order or
 * signs (pd_left_singular3). */
static pd_mat3 kirchhoff(const pd_mpm_material* m, pd_mat3 f) {
    pd_mat3 u;
    pd_vec3 sig;
    pd_left_singular3(f, &u, &sig);
    return pd_m3_from_eigen(u, pd_mpm_kirchhoff(m, sig));
}

/* The Maxwell branch's Psi_N: StVK with Hencky strain (Eq. 6) with mu_N and lambda_N. */
static pd_mat3 branch_kirchhoff(const pd_mpm_material* m, pd_mat3 fn) {
    pd_mpm_material branch = {
        .energy = PD_MPM_HENCKY, .mu = m->branch.mu, .lambda = m->branch.lambda};
    return kirchhoff(&branch, fn);
}

typedef struct stress_job {
    pd_mpm_state* s;
    const pd_particles* p;
    pd_real dt;
    int one_field; /* 1: A dx for p2g_range; 0: A (a field per body, grid_fields.h) */
} stress_job;

/* Per particle: the affine momentum of the P2G, A_i = m_i C_i - dt V_i^0 (4 / dx^2) tau_i
 * (MLS-MPM, Hu 2018 Eq. 16 with D_p^-1 = 4 / dx^2), written over C_i (the transfer back gives
 * C anew; mpm_data.h); for one field as A_i dx, the change of A_i (x_n - x_i) per node along
 * each axis (p2g_row). */
static void stress_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const stress_job* job = ctx;
    pd_mpm_state* s = job->s;
    pd_real scale = 4 / (s->dx * s->dx);
    for (size_t i = begin; i < end; ++i) {
        const pd_mpm_material* m = &s->mat[job->p->material[i]];
        pd_mat3 tau = kirchhoff(m, s->f[i]);
        if (m->maxwell) /* Eq. 2: Psi = Psi_E(F_E) + Psi_N(F_N) */
            tau = pd_m3_add(tau, branch_kirchhoff(m, s->fn[i]));
        pd_real mass = job->p->mass[i];
        pd_mat3 a = pd_m3_sub(pd_m3_scale(s->c[i], mass),
                              pd_m3_scale(tau, job->dt * s->volume0[i] * scale));
        s->affine[i] = job->one_field ? pd_m3_scale(a, s->grid.dx) : a;
    }
}

/* Particle p's share of the nodes base + (di, dj, 0..2), a row along k from its base node's
 * column shifted by (di, dj), added to the column's mass m and momentum mv at row kb (its base
 * node's): w (m v + A dx ((di, dj, dk) - f)), that is w (m v + A (x_n - x_p)), with f = (x_p -
 * x_base) / dx and w = w0[di] w1[dj] w2[dk], each the B-spline at f (the weights and the
 * momentum at the base node are computed here, not stored: grid.h). */
static void p2g_row(pd_vec3 f, pd_real mass, pd_vec3 v, const pd_real (*a)[3], int di, int dj,
                    pd_real* m, pd_vec3* mv) {
    pd_real w01 = pd_bspline_w(f.x, di) * pd_bspline_w(f.y, dj);
    pd_real ex = di - f.x, ey = dj - f.y; /* (x_n - x_p) / dx along i and j */
    pd_real bx = mass * v.x + a[0][0] * ex + a[0][1] * ey,
            by = mass * v.y + a[1][0] * ex + a[1][1] * ey,
            bz = mass * v.z + a[2][0] * ex + a[2][1] * ey;
    for (int dk = 0; dk < 3; ++dk) {
        pd_real wk = w01 * pd_bspline_w(f.z, dk), ez = dk - f.z;
        m[dk] += wk * mass;
        mv[dk].x += wk * (bx + a[0][2] * ez);
        mv[dk].y += wk * (by + a[1][2] * ez);
        mv[dk].z += wk * (bz + a[2][2] * ez);
    }
}

/* One field's transfer to the grid (APIC, Jiang 2015; src/grid/grid.h states it): a particle
 * gives node base + (di, dj, dk) w m and w (m v + A (x_n - x_p)). By columns of nodes along k (i, j
 * fixed; contiguous in the node arrays), each column its own (no atomics, the same sums for any
 * thread count): the 9 columns of bins (i - di, j - dj) are walked once each, in the grid's bin
 * order (near in memory after mpm_order), each particle giving its 3 nodes of the column at once; a
 * node's sum runs over (di, dj), then the bins from k - 2 to k. */
static void p2g_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const stress_job* job = ctx;
    pd_grid* g = &job->s->grid;
    const pd_mat3* a_dx = job->s->affine;
    const pd_vec3* vel = job->p->vel;
    const pd_real* mass = job->p->mass;
    int ny = g->dim[1];
    size_t nz = (size_t)g->dim[2];
    for (size_t c = begin; c < end; ++c) {
        int i = (int)(c / (size_t)ny), j = (int)(c % (size_t)ny);
        pd_real* m = &g->mass[c * nz];
        pd_vec3* mv = &g->velocity[c * nz]; /* the momentum, until divided by the mass */
        memset(m, 0, nz * sizeof *m);
        memset(mv, 0, nz * sizeof *mv);
        for (int di = 0; di < 3 && di <= i; ++di)
            for (int dj = 0; dj < 3 && dj <= j; ++dj) {
                size_t b0 = pd_grid_index(g, i - di, j - dj, 0);
                for (uint32_t at = g->cell_start[b0]; at < g->cell_start[b0 + nz]; ++at) {
                    uint32_t p = g->sorted[at];
                    size_t kb = g->base[p] - b0;
                    p2g_row(pd_v3_scale(g->offset[p], g->inv_dx), mass[p], vel[p], a_dx[p].m, di,
                            dj, &m[kb], &mv[kb]);
                }
            }
        for (size_t k = 0; k < nz; ++k)
            mv[k] = m[k] > 0 ? pd_v3_scale(mv[k], 1 / m[k]) : pd_v3(0, 0, 0);
    }
}

typedef struct grid_job {
    pd_grid* g;
    pd_vec3 dv; /* gravity times dt */
} grid_job;

/* Grid momentum update (Sec. 6): v_i += dt g where the node has mass; the stress's share came
 * in through the affine momentum. */
static void gravity_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const grid_job* job = ctx;
    for (size_t n = begin; n < end; ++n)
        if (job->g->mass[n] > 0)
            job->g->velocity[n] = pd_v3_add(job->g->velocity[n], job->dv);
}

typedef struct advect_job {
    pd_mpm_state* s;
    pd_particles* p;
    pd_real dt;
    pd_vec3 gravity;
    const pd_vec3* vel_before; /* the step's start, before the pins */
} advect_job;

/* A return's trial F = U diag(s) V^T, s its stretches |Sigma|: U and s alone
 * (pd_left_singular3, about half the work) where F is not inverted and its stretches are within
 * MPM_FLAT of each other, since then U diag(s') V^T = U diag(s' / s) U^T F needs no V (returns
 * 1); else pd_svd3's U, |Sigma| and V (returns 0), where s' / s would magnify F's rounding. */
static int return_frame(pd_mat3 f, pd_mat3* u, pd_vec3* s, pd_mat3* v) {
    if (pd_m3_det(f) > 0) {
        pd_left_singular3(f, u, s);
        if (fmin(s->x, fmin(s->y, s->z)) >= MPM_FLAT * fmax(s->x, fmax(s->y, s->z)))
            return 1;
    }
    pd_svd3(f, u, s, v);
    *s = pd_v3(fabs(s->x), fabs(s->y), fabs(s->z));
    return 0;
}

/* The returned U diag(s_new) V^T in return_frame's frame (left: without V, from f). */
static pd_mat3 returned(int left, pd_mat3 f, pd_mat3 u, pd_vec3 s, pd_mat3 v, pd_vec3 s_new) {
    if (!left)
        return pd_m3_from_svd(u, s_new, v);
    pd_vec3 ratio = pd_v3(s_new.x / s.x, s_new.y / s.y, s_new.z / s.z);
    return pd_m3_mul(pd_m3_from_eigen(u, ratio), f);
}

/* The corrector Z_E (Sec. 5.2) of a plastic material: F = U diag(Z(Sigma)) V^T, the return of
 * the constitutive room on the Hencky strain, with Tampubolon 2017's volume correction where the
 * material has it (the dilation v carried and updated); the plastic strain grows by |ln s_tr -
 * ln s| (the dilation a compression closes counts: a plastic change of volume). */
static pd_mat3 plastic_return(const pd_mpm_material* m, pd_mat3 f_tr, pd_real* plastic,
                              pd_real* dilation) {
    pd_mat3 u, v;
    pd_vec3 st, sn;
    int left = return_frame(f_tr, &u, &st, &v);
    pd_real gained = m->volume_correction ? *dilation : 0; /* the array only then (mpm_setup.c) */
    pd_dp_case c = m->volume_correction
                       ? pd_hencky_return_corrected(&m->yield, st, gained, &sn, NULL, dilation)
                       : pd_hencky_return(&m->yield, st, &sn, NULL);
    if (c == PD_DP_ELASTIC && gained == 0)
        return f_tr;
    *plastic += fabs(log(st.x / sn.x)) + fabs(log(st.y / sn.y)) + fabs(log(st.z / sn.z));
    return returned(left, f_tr, u, st, v, sn);
}

/* Z_N of Eq. 8: F_N = U diag(Sigma^{n+1}) V^T with the Hencky strain of the trial's singular
 * values relaxed in closed form (src/constitutive/hencky_viscoelastic.h). */
static pd_mat3 viscous_return(const pd_mpm_material* m, pd_mat3 fn_tr) {
    pd_mat3 u, v;
    pd_vec3 st;
    int left = return_frame(fn_tr, &u, &st, &v);
    return returned(left, fn_tr, u, st, v, pd_hencky_maxwell_project(m->step, st, NULL));
}

/* Grid to particle for one field (APIC; src/grid/grid.h states it): v_p = sum_i w_ip v_i and
 * C_p = (4 / dx^2) sum_i w_ip v_i (x_i - x_p)^T, the latter as (4 / dx^2) (dx sum_i w_ip v_i
 * (di, dj, dk)^T - v_p (x_p - x_base)^T). The weight is a product over the axes, w_ip =
 * w0[di] w1[dj] w2[dk], so the sums go axis by axis: along k first (each row of 3 nodes to its
 * sum and its sum times dk), then along j, then i. Any node field in place of v_i (the ADMM's D:
 * mpm_internal.h). */
pd_vec3 pd_mpm_grid_to_particle(const pd_grid* g, const pd_vec3* field, size_t p, pd_mat3* c) {
    size_t sj = (size_t)g->dim[2], si = (size_t)g->dim[1] * sj;
    pd_real w[3][3];
    pd_grid_weights(g, p, w);
    pd_vec3 zero = pd_v3(0, 0, 0), v = zero, ui = zero, uj = zero, uk = zero; /* sum w v_i,
                                                                               * times di, dj, dk */
    for (int di = 0; di < 3; ++di) {
        pd_vec3 a = zero, aj = zero, ak = zero; /* over j and k: w1 w2 v_i, times dj, dk */
        for (int dj = 0; dj < 3; ++dj) {
            const pd_vec3* u = &field[g->base[p] + di * si + dj * sj];
            pd_vec3 r1 = pd_v3_scale(u[1], w[2][1]), r2 = pd_v3_scale(u[2], w[2][2]);
            pd_vec3 row = pd_v3_add(pd_v3_madd(r1, w[2][0], u[0]), r2);
            pd_vec3 row_k = pd_v3_madd(r1, 2, r2); /* sum over dk of dk w2 v_i */
            a = pd_v3_madd(a, w[1][dj], row);
            aj = pd_v3_madd(aj, w[1][dj] * dj, row);
            ak = pd_v3_madd(ak, w[1][dj], row_k);
        }
        v = pd_v3_madd(v, w[0][di], a);
        ui = pd_v3_madd(ui, w[0][di] * di, a);
        uj = pd_v3_madd(uj, w[0][di], aj);
        uk = pd_v3_madd(uk, w[0][di], ak);
    }
    pd_real scale = 4 / (g->dx * g->dx), dx = g->dx;
    pd_vec3 off = g->offset[p], col[3] = {ui, uj, uk};
    pd_real vr[3] = {v.x, v.y, v.z}, offr[3] = {off.x, off.y, off.z};
    for (int b = 0; b < 3; ++b) {
        pd_real cb[3] = {col[b].x, col[b].y, col[b].z};
        for (int a = 0; a < 3; ++a)
            c->m[a][b] = scale * (dx * cb[a] - vr[a] * offr[b]);
    }
    return v;
}

/* v_p and C_p from the grid (one field: here; a field per body: v_grid and C from
 * pd_grid_fields_to_particles), F <- (I + dt C) F (Eq. 4's predictor with C, MLS-MPM's velocity
 * gradient; the correctors follow in return_range), x <- x + dt v; a pinned particle keeps the
 * position and velocity its pin gave it and leaves in `force` what the world's pin reaction m a
 * - f - m g turns into its share of the impulse its held nodes took, m_p sum_i w_ip j_i / dt. */
static void advect_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const advect_job* job = ctx;
    pd_mpm_state* s = job->s;
    pd_particles* p = job->p;
    int one_field = s->fields.count == 0;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 v = one_field ? pd_mpm_grid_to_particle(&s->grid, s->grid.velocity, i, &s->c[i])
                              : s->v_grid[i];
        pd_mat3 grow = pd_m3_add(pd_m3_identity(), pd_m3_scale(s->c[i], job->dt));
        s->f[i] = pd_m3_mul(grow, s->f[i]);
        if (s->mat[p->material[i]].maxwell) /* Eq. 4's predictor for F_N */
            s->fn[i] = pd_m3_mul(grow, s->fn[i]);
        if (p->flags[i] & PD_P_PINNED) {
            pd_vec3 ma =
                pd_v3_scale(pd_v3_sub(p->vel[i], job->vel_before[i]), p->mass[i] / job->dt);
            pd_vec3 share = pd_v3_scale(s->pin_reaction[i], p->mass[i] / job->dt);
            p->force[i] = pd_v3_sub(pd_v3_sub(ma, pd_v3_scale(job->gravity, p->mass[i])), share);
            continue;
        }
        p->vel[i] = v;
        p->pos[i] = pd_v3_add(p->pos[i], pd_v3_scale(p->vel[i], job->dt));
    }
}

/* The correctors after the predictors: Z_E (Sec. 5.2) on F of a plastic material, Eq. 8's Z_N
 * on F_N of one with the Maxwell branch. */
static void return_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const advect_job* job = ctx;
    pd_mpm_state* s = job->s;
    for (size_t i = begin; i < end; ++i) {
        const pd_mpm_material* m = &s->mat[job->p->material[i]];
        if (m->plastic)
            s->f[i] = plastic_return(m, s->f[i], &s->plastic_strain[i], &s->dilation[i]);
        if (m->maxwell)
            s->fn[i] = viscous_return(m, s->fn[i]);
    }
}

/* The held nodes' impulses back at the particles: j_p = sum_i w_ip j_i (pinned ones use it). */
static void pin_reactions(pd_mpm_state* s) {
    pd_vec3* saved = s->grid.velocity; /* G2P of the impulse field through the same weights */
    s->grid.velocity = s->pin_node_impulse;
    pd_grid_to_particles(&s->grid, s->pin_reaction, NULL);
    s->grid.velocity = saved;
}

/* The fields' share of the explicit grid update (a field per body): gravity dv, the contact
 * between the bodies (grid_fields.h), the colliders on each field, the pins. */
static pd_status fields_update(pd_mpm_state* s, const pd_step_context* ctx, pd_vec3 dv,
                               const pd_grid_wall* wall) {
    pd_grid_fields_add_velocity(&s->grid, &s->fields, dv);
    pd_grid_contact_normal normal = (pd_grid_contact_normal)s->prm.contact_normal;
    pd_grid_contact contact = {ctx->particles->body,  s->field_friction, s->field_body_mass,
                               s->field_half_spacing, ctx->dt,           normal};
    if (s->prm.contact) /* else each body its own way: they pass through each other */
        pd_grid_fields_contact(&s->grid, &s->fields, &contact);
    pd_grid_fields_apply_colliders(&s->grid, &s->fields, wall, PD_GRID_COLLIDER_REACH * s->dx,
                                   ctx->colliders);
    return s->has_pins ? pd_mpm_pin_constrain_fields(s, ctx->particles) : PD_OK;
}

/* Particle to grid (APIC with MLS-MPM's stress in the affine momentum, Sec. 6; dt 0: the
 * implicit step's, affine = m C): one field by p2g_range, a field per body through
 * pd_grid_fields_from_particles. */
static pd_status transfer_to_grid(pd_mpm_state* s, const pd_step_context* ctx, pd_real dt) {
    pd_particles* p = ctx->particles;
    stress_job sj = {s, p, dt, s->fields.count == 0};
    pd_parallel_for(s->n, PD_MPM_GRAIN, stress_range, &sj);
    if (s->fields.count == 0) {
        pd_parallel_for((size_t)s->grid.dim[0] * (size_t)s->grid.dim[1], 8, p2g_range, &sj);
        return PD_OK;
    }
    return pd_grid_fields_from_particles(&s->grid, &s->fields, p->body, p->mass, p->vel, s->affine);
}

/* The explicit grid update (Sec. 6): the stress came in with the transfer; gravity, the pins,
 * then (with a field per body) the contact between the bodies, and the colliders. */
static pd_status explicit_grid(pd_mpm_state* s, const pd_step_context* ctx, pd_step_stats* stats) {
    pd_real dt = ctx->dt;
    pd_particles* p = ctx->particles;
    int fields = s->fields.count > 0;
    grid_job gj = {&s->grid, pd_v3_scale(ctx->gravity, dt)};
    pd_parallel_for(s->grid.nodes, 1024, gravity_range, &gj);
    if (s->has_pins && !fields) { /* the least change that meets the pins (mpm_pins.c) */
        pd_status st = pd_mpm_pin_constrain(s, p);
        if (st != PD_OK)
            return st;
    }
    stats->iterations = 1;
    stats->residual = 0;
    /* no_slip bears what the materials bear along it (grid_boundary.h) */
    pd_grid_wall wall = {p->material, s->wall_friction, s->field_wall_friction};
    if (!fields) {
        pd_grid_apply_colliders(&s->grid, p->mass, &wall, PD_GRID_COLLIDER_REACH * s->dx,
                                ctx->colliders);
        return PD_OK;
    }
    return fields_update(s, ctx, gj.dv, &wall); /* the pins last, on their bodies' fields */
}

/* The implicit grid update (Sec. 7) after the transfer without stress: the velocity change of
 * the ADMM or of the optimiser (mpm_implicit.c). */
static pd_status implicit_grid(pd_mpm_state* s, const pd_step_context* ctx, pd_step_stats* stats) {
    if (s->has_pins) { /* the constraint's null space on the shared nodes (mpm_pins.c) */
        pd_mpm_pin_nodes(s);
        pd_status st = pd_mpm_pin_basis(s, ctx->particles);
        if (st != PD_OK)
            return st;
    }
    pd_real residual;
    int admm = s->prm.integrator == PD_MPM_ADMM;
    pd_status st = admm ? pd_mpm_admm_solve(s, ctx, &stats->iterations, &residual)
                        : pd_mpm_optimiser_solve(s, ctx, &stats->iterations, &residual);
    if (st != PD_OK)
        return st;
    stats->residual = residual;
    int cap = admm ? s->prm.iterations : s->prm.optimiser_iterations;
    pd_real tol = admm ? s->prm.tolerance : s->prm.optimiser_tolerance;
    if (stats->iterations >= cap && residual > 10 * tol)
        stats->unconverged_by = tol > 0 ? residual / tol : INFINITY;
    for (size_t n = 0; n < s->grid.nodes; ++n)
        if (s->grid.mass[n] > 0)
            s->grid.velocity[n] = pd_v3_add(s->grid.velocity[n], s->admm_dv[n]);
    return PD_OK;
}

/* The step's stages for peridot_bench (docs/benchmarks.md): fit (the grid's fit and binning,
 * RPIC round trips, the pins' share), p2g (stress and transfer), the grid update (explicit:
 * gravity, pins, contact, colliders; newton, lbfgs: their solve; admm: its start with A
 * assembled, particle, grid and dual steps), g2p (transfer back, F's predictor, x) and return
 * (the plastic and viscous correctors). */
static void report_stages(const pd_mpm_state* s, pd_step_stats* stats, const double t[6]) {
    static const char* const names[] = {"fit", "p2g", "grid", "g2p", "return"};
    static const char* const admm_names[] = {"fit", "p2g",  "assemble", "particle",
                                             "cg",  "dual", "g2p",      "return"};
    if (s->prm.integrator != PD_MPM_ADMM) {
        double seconds[] = {t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4]};
        pd_step_stats_stages(stats, names, seconds, 5);
        return;
    }
    const double* a = s->admm_seconds;
    double seconds[] = {t[1] - t[0],
                        t[2] - t[1],
                        a[PD_MPM_ADMM_ASSEMBLE],
                        a[PD_MPM_ADMM_PARTICLE],
                        a[PD_MPM_ADMM_GRID],
                        a[PD_MPM_ADMM_DUAL],
                        t[4] - t[3],
                        t[5] - t[4]};
    pd_step_stats_stages(stats, admm_names, seconds, 8);
}

static pd_status mpm_step(void* state, pd_world* w, const pd_step_context* ctx,
                          pd_step_stats* stats) {
    (void)w;
    pd_mpm_state* s = state;
    pd_particles* p = ctx->particles;
    pd_real dt = ctx->dt;
    double t0 = pd_now();
    for (int k = 0; k < s->material_count; ++k) { /* Eq. 8's A and B for this dt */
        if (s->mat[k].maxwell)
            s->mat[k].step = pd_hencky_maxwell_coefficients(&s->mat[k].branch, dt);
        s->mat[k].yield.rate.dt = dt; /* mu(I)'s plastic rate: the increment over dt */
    }
    pd_status st = pd_grid_fit(&s->grid, p->pos, s->n, 2,
                               (s->n + 1) * (size_t)MPM_MAX_NODES_PER_PARTICLE, NULL);
    if (st != PD_OK)
        return st;
    for (int k = 0; k < s->prm.damping_round_trips && st == PD_OK; ++k) /* Sec. 8 */
        if (s->fields.count > 0) /* each body through its own field: no exchange between them */
            st = pd_grid_fields_rpic_round_trip(&s->grid, &s->fields, p->body, p->mass, p->vel,
                                                s->c, s->affine);
        else
            pd_grid_rpic_round_trip(&s->grid, p->mass, p->vel, s->c, s->affine);
    if (st != PD_OK)
        return st;
    int explicit_step = s->prm.integrator == PD_MPM_EXPLICIT;
    /* held nodes: the implicit steps (the explicit one takes its pins' reaction directly) */
    int held_pins = s->has_pins && !explicit_step;
    if (held_pins && (st = pd_mpm_pin_share(s, p)) != PD_OK)
        return st;
    double t1 = pd_now();
    if ((st = transfer_to_grid(s, ctx, explicit_step ? dt : 0)) != PD_OK)
        return st;
    double t2 = pd_now();
    st = explicit_step ? explicit_grid(s, ctx, stats)
                       : implicit_grid(s, ctx, stats); /* the colliders inside (Sec. 7.2) */
    if (st != PD_OK)
        return st;
    double t3 = pd_now();
    if (s->fields.count > 0) /* each particle from its body's field; one field: in advect_range */
        pd_grid_fields_to_particles(&s->grid, &s->fields, p->body, s->v_grid, s->c);
    if (held_pins)
        pin_reactions(s);
    advect_job aj = {s, p, dt, ctx->gravity, ctx->step_start_vel};
    pd_parallel_for(s->n, PD_MPM_GRAIN, advect_range, &aj);
    double t4 = pd_now();
    if (s->has_returns)
        pd_parallel_for(s->n, PD_MPM_GRAIN, return_range, &aj);
    double t5 = pd_now();
    report_stages(s, stats, (double[]){t0, t1, t2, t3, t4, t5});
    return PD_OK;
}

/* The particles in the grid's bin order (base node by base node, the order of
 * pd_grid_from_particles' stable counting sort), so that the stress pass and the transfer back,
 * which walk that order, read the particle arrays in sequence (they drift out of it by a bin
 * as particles cross cells between reorderings). A spread the grid refuses takes the Z-curve. */
static pd_status mpm_order(void* state, const pd_world* w, const pd_vec3* x, uint32_t* perm) {
    pd_mpm_state* s = state;
    pd_status st =
        pd_grid_fit(&s->grid, x, s->n, 2, (s->n + 1) * (size_t)MPM_MAX_NODES_PER_PARTICLE, NULL);
    if (st == PD_OK)
        memcpy(perm, s->grid.sorted, s->n * sizeof *perm);
    else if (st == PD_ERR_UNSTABLE) /* a runaway: the Z-curve, and the step says what went wrong */
        st = pd_morton_order(x, s->n, pd_world_order_cell(w), perm);
    return st;
}

const pd_material_support pd_mpm_material_support = {
    .plasticity = (1u << PD_PLASTICITY_DRUCKER_PRAGER) | (1u << PD_PLASTICITY_VON_MISES),
    .viscoelasticity = 1u << PD_VISCO_HENCKY_MAXWELL,
    .volume_correction = 1u << PD_PLASTICITY_DRUCKER_PRAGER, /* Tampubolon 2017 Sec. 4.3.1 */
    .rate_dependence = 1u << PD_PLASTICITY_DRUCKER_PRAGER};  /* mu(I): hencky_plasticity.h */

static const pd_field_info k_fields[] = {
    {PD_ATTR_STRESS,
     {"sxx", "syy", "szz", "sxy", "syz", "sxz"},
     6,
     PD_FIELD_REAL,
     "Pa",
     "The Cauchy stress tau / det F of the particle's elastic F after the last step (mpm: its "
     "material's elastic_energy, StVK with Hencky strain by default, Fang 2019 Eq. 6, plus the "
     "Maxwell branch's on F_N), tension positive."},
    {PD_ATTR_PLASTIC_STRAIN,
     {"plastic_strain"},
     1,
     PD_FIELD_REAL,
     "1",
     "mpm: the sum over the steps of the plastic return's |ln s_tr - ln s| over the principal "
     "stretches of the trial and the returned F_E; 0 for elastic materials."},
};

/* The published Cauchy stress tau / J of F (and F_N, Eq. 2), 6 per particle. */
static void cauchy_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    pd_mpm_state* s = ctx;
    for (size_t i = begin; i < end; ++i) {
        const pd_mpm_material* m = &s->mat[s->particles->material[i]];
        pd_mat3 tau = kirchhoff(m, s->f[i]);
        if (m->maxwell)
            tau = pd_m3_add(tau, branch_kirchhoff(m, s->fn[i]));
        pd_real j = pd_m3_det(s->f[i]), inv_j = j != 0 ? 1 / j : 0;
        pd_real* out = &s->stress[6 * i];
        out[0] = tau.m[0][0] * inv_j, out[1] = tau.m[1][1] * inv_j, out[2] = tau.m[2][2] * inv_j;
        out[3] = tau.m[0][1] * inv_j, out[4] = tau.m[1][2] * inv_j, out[5] = tau.m[0][2] * inv_j;
    }
}

/* The fields when asked (a frame written): the stress computed then, into an array allocated at
 * the first request (a run without it keeps none); the plastic strain kept by the returns, or
 * zeros (allocated then) when no material is plastic. */
static const void* mpm_publish_fields(void* state, int k) {
    pd_mpm_state* s = state;
    size_t n = s->cap + 1;
    if (k == 0) {
        if (!s->stress && !(s->stress = PD_NEW_ARRAY(pd_real, 6 * n)))
            return NULL;
        pd_parallel_for(s->n, PD_MPM_GRAIN, cauchy_range, s);
        return s->stress;
    }
    if (k == 1 && !s->plastic_strain)
        s->plastic_strain = PD_NEW_ARRAY(pd_real, n); /* zeroed */
    return k == 1 ? (const void*)s->plastic_strain : NULL;
}

const pd_solver_vtable pd_mpm_solver = {
    .name = "mpm",
    .paper = "Fang, Li, Gao, Jiang 2019, Silly Rubber: An Implicit Material Point Method for "
             "Simulating Non-equilibrated Viscoelastic and Elastoplastic Solids",
    .params = &pd_mpm_param_table,
    .material_params = &pd_mpm_material_table,
    .check_material = pd_mpm_check_material,
    .check_body_material = pd_mpm_check_body_material,
    .materials = &pd_mpm_material_support,
    .fields = k_fields,
    .field_count = 2,
    .publish_fields = mpm_publish_fields,
    .create = pd_mpm_create,
    .destroy = pd_mpm_destroy,
    .step = mpm_step,
    .on_reorder = pd_mpm_on_reorder,
    .on_emit = pd_mpm_on_emit,
    .order = mpm_order,
    .reorder_every = PD_MPM_REORDER_EVERY,
    .persistent = pd_mpm_persistent,
    .restored = pd_mpm_restored,
    .max_time_step = pd_mpm_max_time_step,
    .auto_step_each_step = 1,
    .bytes_per_particle = pd_mpm_bytes_per_particle,
    .contact_in_solve = 1,
    .releases_pins = 1,
    /* contact between bodies: a velocity field per body (solver.mpm.contact) */
    .capabilities = PD_CAP_ELASTIC | PD_CAP_CONTACT | PD_CAP_COLLIDER_FRICTION,
};
