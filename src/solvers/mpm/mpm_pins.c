/* mpm's pins on the grid (docs/methods/mpm.md "Pins"; beyond Fang 2019, whose scenes hold
 * their bars' ends without saying how). A pinned particle p's velocity is prescribed, v_p (the
 * world moves it along its pin's keyframes); the grid must give it that velocity,
 *
 *   sum_i w_ip v_i = v_p,                                                  (1)
 *
 * so that the body around it moves with it (the transfer back reads the nodes, not v_p).
 * Two ways, both here:
 *  - held nodes (the implicit integrators, and a field per body): every node a pinned particle
 *    reaches is held at the pins' APIC transfer, v_i = sum_p w_ip m_p (v_p + L_k (x_i - x_p)) /
 *    sum_p w_ip m_p, L_k the velocity gradient of pin k fitted to its particles' velocities (least
 *    squares; exact for a pin's rigid motion, which is affine within a step). Where the pins'
 *    velocities are that affine field the nodes carry it exactly and (1) holds at every pinned
 *    particle (APIC reproduces an affine field: sum_i w_ip (x_i - x_p) = 0). The PIC transfer
 *    held a rotating pin at its particles' average, sum_p w_ip m_p v_p / m_i, off by L times the
 *    offset of the node's pinned centre of mass from the node (about a quarter cell at the pin's
 *    faces). The hold reaches every node the pinned particles reach, up to 1.5 cells past them.
 *  - a multiplier per pinned particle (the explicit step, one field): the grid velocity after the
 *    update, v*, changed by the least kinetic energy that meets (1), min sum_i m_i |v_i - v*_i|^2 /
 * 2 subject to (1): v_i = v*_i + sum_p w_ip lambda_p / m_i, the impulses lambda solving
 *
 *      sum_q G_pq lambda_q = v_p - sum_i w_ip v*_i,   G_pq = sum_i w_ip w_iq / m_i,      (2)
 *
 *    by conjugate gradients with G's diagonal as preconditioner from the last step's lambda (G is
 *    symmetric positive semi-definite; (2) is consistent wherever the pins' motion is affine,
 *    which an affine node field meets; near-singular with 8 pinned particles to a node, so the
 *    warm start matters). Nodes only pinned particles reach take the affine field at once. The
 *    nodes change in proportion to the pins' share of them, so the clamp ends at the pinned
 *    particles instead of 1.5 cells past them. The impulse the nodes take is the pins' reaction.
 * All loops here are sequential over the pinned particles, in their order: the same bytes on
 * any thread count. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "math/svd3.h"
#include "solvers/mpm/mpm_internal.h"
#include "world/world.h"

/* Conjugate gradients on (2): stop once the constraint's residual is below this fraction of
 * its start (over the three components: one that starts at round-off need not fall), or after
 * this many iterations. */
#define PIN_CG_TOLERANCE  1e-3
#define PIN_CG_ITERATIONS 200

/* The per-node arrays for `nodes` nodes (grown by half again, never shrunk). */
static pd_status reserve_nodes(pd_mpm_state* s, size_t nodes) {
    if (nodes <= s->pin_nodes)
        return PD_OK;
    size_t cap = nodes + nodes / 2;
    PD_FREE_ARRAY(s->pin_node_mass, pd_real, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_node_velocity, pd_vec3, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_node_impulse, pd_vec3, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_node_hold, pd_real, s->pin_nodes);
    s->pin_nodes = cap;
    s->pin_node_mass = PD_NEW_ARRAY(pd_real, cap);
    s->pin_node_velocity = PD_NEW_ARRAY(pd_vec3, cap);
    s->pin_node_impulse = PD_NEW_ARRAY(pd_vec3, cap);
    s->pin_node_hold = PD_NEW_ARRAY(pd_real, cap);
    return s->pin_node_mass && s->pin_node_velocity && s->pin_node_impulse && s->pin_node_hold
               ? PD_OK
               : PD_ERR_OUT_OF_MEMORY;
}

/* Each pin's velocity gradient L_k, the least-squares fit v_p = v_k + L_k (x_p - x_k) over its
 * pinned particles (x_k, v_k their centres of mass): L_k = K S^+, K = sum m (v - v_k) (x -
 * x_k)^T, S = sum m (x - x_k) (x - x_k)^T (its pseudo-inverse: a pin of one layer fits the
 * gradient in its plane; of one particle, none). */
static void fit_pins(pd_mpm_state* s, const pd_particles* p) {
    pd_mpm_pin_fit* fit = s->pin_fit;
    memset(fit, 0, (size_t)s->pin_count * sizeof *fit);
    for (size_t i = 0; i < s->n; ++i) {
        if (!(p->flags[i] & PD_P_PINNED))
            continue;
        pd_mpm_pin_fit* f = &fit[p->pin[i]];
        f->mass += p->mass[i];
        f->x = pd_v3_madd(f->x, p->mass[i], p->pos[i]);
        f->v = pd_v3_madd(f->v, p->mass[i], p->vel[i]);
    }
    for (int k = 0; k < s->pin_count; ++k)
        if (fit[k].mass > 0)
            fit[k].x = pd_v3_scale(fit[k].x, 1 / fit[k].mass),
            fit[k].v = pd_v3_scale(fit[k].v, 1 / fit[k].mass);
    for (size_t i = 0; i < s->n; ++i) {
        if (!(p->flags[i] & PD_P_PINNED))
            continue;
        pd_mpm_pin_fit* f = &fit[p->pin[i]];
        pd_vec3 d = pd_v3_sub(p->pos[i], f->x);
        pd_m3_add_outer(&f->xx, p->mass[i], d, d);
        pd_m3_add_outer(&f->vx, p->mass[i], pd_v3_sub(p->vel[i], f->v), d);
    }
    for (int k = 0; k < s->pin_count; ++k)
        fit[k].grad = pd_m3_mul(fit[k].vx, pd_m3_pinv_sym(fit[k].xx, 1e-9));
}

/* Node index and weight of particle p's stencil entry (di, dj, dk), and x_i - x_p. */
typedef struct stencil {
    size_t si, sj;
    pd_real w[3][3];
} stencil;

static stencil stencil_of(const pd_grid* g, size_t p) {
    stencil st = {(size_t)g->dim[1] * (size_t)g->dim[2], (size_t)g->dim[2], {{0}}};
    pd_grid_weights(g, p, st.w);
    return st;
}

/* The held nodes' velocities: the pinned particles' APIC transfer alone with each pin's fitted
 * gradient, m_i = sum w m_p, v_i = sum w m_p (v_p + L_k (x_i - x_p)) / m_i (the file's head). */
static void scatter_pins(pd_mpm_state* s, const pd_particles* p) {
    const pd_grid* g = &s->grid;
    memset(s->pin_node_mass, 0, g->nodes * sizeof *s->pin_node_mass);
    memset(s->pin_node_velocity, 0, g->nodes * sizeof *s->pin_node_velocity);
    for (size_t q = 0; q < s->n; ++q) {
        if (!(p->flags[q] & PD_P_PINNED))
            continue;
        stencil st = stencil_of(g, q);
        pd_mat3 grad = s->pin_fit[p->pin[q]].grad;
        pd_real m = p->mass[q];
        for (int di = 0; di < 3; ++di)
            for (int dj = 0; dj < 3; ++dj)
                for (int dk = 0; dk < 3; ++dk) {
                    size_t n = g->base[q] + di * st.si + dj * st.sj + (size_t)dk;
                    pd_real w = st.w[0][di] * st.w[1][dj] * st.w[2][dk] * m;
                    pd_vec3 r = pd_v3_sub(pd_v3_scale(pd_v3(di, dj, dk), g->dx), g->offset[q]);
                    pd_vec3 v = pd_v3_add(p->vel[q], pd_m3_mulv(grad, r));
                    s->pin_node_mass[n] += w;
                    s->pin_node_velocity[n] = pd_v3_madd(s->pin_node_velocity[n], w, v);
                }
    }
    for (size_t n = 0; n < g->nodes; ++n)
        if (s->pin_node_mass[n] > 0)
            s->pin_node_velocity[n] = pd_v3_scale(s->pin_node_velocity[n], 1 / s->pin_node_mass[n]);
}

pd_status pd_mpm_pin_share(pd_mpm_state* s, const pd_particles* p) {
    pd_status st = reserve_nodes(s, s->grid.nodes);
    if (st != PD_OK)
        return st;
    fit_pins(s, p);
    scatter_pins(s, p);
    return PD_OK;
}

void pd_mpm_pin_nodes(pd_mpm_state* s) {
    for (size_t n = 0; n < s->grid.nodes; ++n)
        s->pin_node_hold[n] = s->grid.mass[n] > 0 && s->pin_node_mass[n] > 0 ? 1 : 0;
}

/* ---- the multiplier per pinned particle (the explicit step's, one field) ---- */

/* The pinned particles' indices (their count can only fall: a pin let go frees its particles);
 * the solve's vectors sized for them. */
static pd_status list_pinned(pd_mpm_state* s, const pd_particles* p) {
    size_t count = 0;
    for (size_t i = 0; i < s->n; ++i)
        count += (p->flags[i] & PD_P_PINNED) != 0;
    if (count > s->pin_cap) {
        PD_FREE_ARRAY(s->pin_index, uint32_t, s->pin_cap);
        PD_FREE_ARRAY(s->pin_cg, pd_vec3, 5 * s->pin_cap);
        PD_FREE_ARRAY(s->pin_diag, pd_real, s->pin_cap);
        s->pin_cap = count;
        s->pin_index = PD_NEW_ARRAY(uint32_t, count);
        s->pin_cg = PD_NEW_ARRAY(pd_vec3, 5 * count);
        s->pin_diag = PD_NEW_ARRAY(pd_real, count);
        if (!s->pin_index || !s->pin_cg || !s->pin_diag)
            return PD_ERR_OUT_OF_MEMORY;
    }
    s->pinned = 0;
    for (size_t i = 0; i < s->n; ++i)
        if (p->flags[i] & PD_P_PINNED)
            s->pin_index[s->pinned++] = (uint32_t)i;
    return PD_OK;
}

/* sum_i w_ip u_i at pinned particle q (the transfer back's v_p of a node field), or with
 * inv_mass sum_i w_ip u_i inv_mass_i. */
static pd_vec3 gather(const pd_grid* g, const pd_vec3* u, size_t q, const pd_real* inv_mass) {
    stencil st = stencil_of(g, q);
    pd_vec3 sum = pd_v3(0, 0, 0);
    for (int di = 0; di < 3; ++di)
        for (int dj = 0; dj < 3; ++dj)
            for (int dk = 0; dk < 3; ++dk) {
                size_t n = g->base[q] + di * st.si + dj * st.sj + (size_t)dk;
                pd_real w = st.w[0][di] * st.w[1][dj] * st.w[2][dk];
                sum = pd_v3_madd(sum, inv_mass ? w * inv_mass[n] : w, u[n]);
            }
    return sum;
}

/* u = W^T lambda on the nodes the pinned particles reach, u_i = sum_p w_ip lambda_p (cleared,
 * then filled, stencil by stencil; u stays zero elsewhere). */
static void spread(const pd_mpm_state* s, const pd_vec3* lambda, pd_vec3* u) {
    const pd_grid* g = &s->grid;
    for (int pass = 0; pass < 2; ++pass)
        for (size_t k = 0; k < s->pinned; ++k) {
            size_t q = s->pin_index[k];
            stencil st = stencil_of(g, q);
            for (int di = 0; di < 3; ++di)
                for (int dj = 0; dj < 3; ++dj)
                    for (int dk = 0; dk < 3; ++dk) {
                        size_t n = g->base[q] + di * st.si + dj * st.sj + (size_t)dk;
                        u[n] = pass == 0 ? pd_v3(0, 0, 0)
                                         : pd_v3_madd(u[n], st.w[0][di] * st.w[1][dj] * st.w[2][dk],
                                                      lambda[k]);
                    }
        }
}

/* G lambda of (2): W M^-1 W^T lambda (u: node scratch). */
static void apply_g(const pd_mpm_state* s, const pd_vec3* lambda, pd_vec3* u, pd_vec3* out) {
    spread(s, lambda, u);
    for (size_t k = 0; k < s->pinned; ++k)
        out[k] = gather(&s->grid, u, s->pin_index[k], s->pin_node_hold);
}

static pd_vec3 v3_mul(pd_vec3 a, pd_vec3 b) {
    return pd_v3(a.x * b.x, a.y * b.y, a.z * b.z);
}

/* Componentwise sum_k a_k b_k (three systems with the one matrix G, one per axis). */
static pd_vec3 dots(const pd_vec3* a, const pd_vec3* b, size_t n) {
    pd_vec3 sum = pd_v3(0, 0, 0);
    for (size_t k = 0; k < n; ++k)
        sum = pd_v3_add(sum, v3_mul(a[k], b[k]));
    return sum;
}

static pd_real ratio(pd_real a, pd_real b) {
    return b > 0 ? a / b : 0;
}

/* (2) by Jacobi-preconditioned conjugate gradients, one per axis, from lambda as given (the
 * last step's impulses); returns the iterations. r holds the right-hand side on entry, the
 * residual on return. */
static int solve_g(pd_mpm_state* s, pd_vec3* lambda, pd_vec3* r, pd_vec3* z, pd_vec3* d, pd_vec3* q,
                   pd_vec3* u) {
    size_t np = s->pinned;
    pd_vec3 b = dots(r, r, np);
    apply_g(s, lambda, u, q);
    for (size_t k = 0; k < np; ++k) {
        r[k] = s->pin_diag[k] > 0 ? pd_v3_sub(r[k], q[k]) : pd_v3(0, 0, 0);
        d[k] = z[k] = pd_v3_scale(r[k], s->pin_diag[k]);
    }
    pd_vec3 rz = dots(r, z, np);
    pd_real tol2 = PIN_CG_TOLERANCE * PIN_CG_TOLERANCE * (b.x + b.y + b.z);
    int it = 0;
    for (; it < PIN_CG_ITERATIONS; ++it) {
        pd_vec3 rr = dots(r, r, np);
        if (rr.x + rr.y + rr.z <= tol2)
            break;
        apply_g(s, d, u, q);
        pd_vec3 dq = dots(d, q, np);
        pd_vec3 alpha = pd_v3(ratio(rz.x, dq.x), ratio(rz.y, dq.y), ratio(rz.z, dq.z));
        for (size_t k = 0; k < np; ++k) {
            lambda[k] = pd_v3_add(lambda[k], v3_mul(alpha, d[k]));
            r[k] = pd_v3_sub(r[k], v3_mul(alpha, q[k]));
            z[k] = pd_v3_scale(r[k], s->pin_diag[k]);
        }
        pd_vec3 rz_new = dots(r, z, np);
        pd_vec3 beta = pd_v3(ratio(rz_new.x, rz.x), ratio(rz_new.y, rz.y), ratio(rz_new.z, rz.z));
        rz = rz_new;
        for (size_t k = 0; k < np; ++k)
            d[k] = pd_v3_add(z[k], v3_mul(beta, d[k]));
    }
    return it;
}

/* The nodes only pinned particles reach (no free mass there, to round-off) take the pins'
 * affine field at once (pd_mpm_pin_share's), which meets (1) wherever only they count, and leave
 * their change in pin_node_velocity (0 elsewhere: the pins' share of the reaction there). (2)
 * then acts on the nodes the pins share with the free body, pin_node_hold their 1 / m_i (0 at
 * the others), over the pinned particles that reach one of them: fewer unknowns, and none where
 * every particle is pinned. */
static void hold_pin_interior(pd_mpm_state* s) {
    pd_grid* g = &s->grid;
    for (size_t n = 0; n < g->nodes; ++n) {
        pd_real m = g->mass[n], free = m - s->pin_node_mass[n];
        int interior = m > 0 && !(free > 1e-9 * m) && s->pin_node_mass[n] > 0;
        s->pin_node_hold[n] = m > 0 && free > 1e-9 * m ? 1 / m : 0;
        pd_vec3 dv = interior ? pd_v3_sub(s->pin_node_velocity[n], g->velocity[n]) : pd_v3(0, 0, 0);
        g->velocity[n] = pd_v3_add(g->velocity[n], dv);
        s->pin_node_velocity[n] = dv;
    }
}

/* G's inverse diagonal at pinned particle q (0 where it reaches no shared node: left out), or
 * with share the weight sum_i w_iq over the shared nodes (the part of lambda_q the nodes take:
 * W^T lambda spreads it there only). */
static pd_real inverse_diagonal(const pd_mpm_state* s, size_t q, int share) {
    const pd_grid* g = &s->grid;
    stencil st = stencil_of(g, q);
    pd_real diag = 0, sum = 0;
    for (int di = 0; di < 3; ++di)
        for (int dj = 0; dj < 3; ++dj)
            for (int dk = 0; dk < 3; ++dk) {
                pd_real w = st.w[0][di] * st.w[1][dj] * st.w[2][dk];
                pd_real h = s->pin_node_hold[g->base[q] + di * st.si + dj * st.sj + (size_t)dk];
                diag += w * w * h;
                sum += h > 0 ? w : 0;
            }
    return share ? sum : diag > 0 ? 1 / diag : 0;
}

pd_status pd_mpm_pin_constrain(pd_mpm_state* s, const pd_particles* p) {
    pd_status st = pd_mpm_pin_share(s, p);
    if (st == PD_OK)
        st = list_pinned(s, p);
    if (st != PD_OK)
        return st;
    hold_pin_interior(s);
    size_t np = s->pinned, cap = s->pin_cap;
    pd_vec3 *lambda = s->pin_cg, *r = lambda + cap, *z = r + cap, *d = z + cap, *q = d + cap;
    pd_vec3* u = s->pin_node_impulse; /* node scratch */
    pd_grid* g = &s->grid;
    memset(u, 0, g->nodes * sizeof *u);
    for (size_t k = 0; k < np; ++k) { /* (2)'s right-hand side and G's inverse diagonal */
        size_t i = s->pin_index[k];
        s->pin_diag[k] = inverse_diagonal(s, i, 0);
        r[k] = s->pin_diag[k] > 0 ? pd_v3_sub(p->vel[i], gather(g, g->velocity, i, NULL))
                                  : pd_v3(0, 0, 0);
        lambda[k] = s->pin_lambda[i]; /* the last step's */
    }
    s->pin_iterations = solve_g(s, lambda, r, z, d, q, u);
    spread(s, lambda, u);
    for (size_t n = 0; n < g->nodes; ++n)
        g->velocity[n] = pd_v3_madd(g->velocity[n], s->pin_node_hold[n], u[n]);
    for (size_t k = 0; k < np; ++k) { /* the reaction per mass (advect_range): the impulse the
                                       * shared nodes took of lambda and the interior nodes'
                                       * change, shared by the weights */
        size_t i = s->pin_index[k];
        s->pin_lambda[i] = lambda[k];
        s->pin_reaction[i] = pd_v3_madd(gather(g, s->pin_node_velocity, i, NULL),
                                        inverse_diagonal(s, i, 1) / p->mass[i], lambda[k]);
    }
    return PD_OK;
}
