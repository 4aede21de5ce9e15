/* The background grid of the grid methods (mpm; Fang 2019 Sec. 6): a bounded box of nodes at
 * spacing dx, refitted to the particles every step (its origin on multiples of dx, so nodes
 * never drift) and grown, never shrunk, as they move; particles binned by their base node (a
 * stable counting sort) so that a node gathers its particles' contributions itself: the
 * transfers need no atomics and give the same bytes for any thread count. */
#ifndef PD_GRID_H
#define PD_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "grid/bspline.h"
#include "peridot/types.h"

typedef struct pd_grid {
    pd_real dx, inv_dx;
    pd_vec3 origin; /* position of node (0, 0, 0) */
    int dim[3];     /* nodes per axis */
    size_t nodes;   /* dim[0] dim[1] dim[2] */
    /* per node (capacity node_cap) */
    pd_real* mass;
    pd_vec3* velocity; /* momentum / mass where mass > 0, else 0 (the momentum is not kept:
                        * mass times velocity) */
    /* particles binned by base node: those of node c are sorted[cell_start[c] .. cell_start[c +
     * 1]); base[p] is particle p's base node */
    uint32_t* cell_start; /* nodes + 1 */
    uint32_t* sorted;
    uint32_t* base;
    /* per particle, from the positions of the last fit: its position relative to its base node
     * (m); its B-spline weights follow from it (pd_grid_weight; computed where they are used,
     * not stored: 72 bytes a particle less) */
    pd_vec3* offset;
    size_t node_cap, particle_cap, particles;
} pd_grid;

/* Node index of (i, j, k). */
static inline size_t pd_grid_index(const pd_grid* g, int i, int j, int k) {
    return ((size_t)i * (size_t)g->dim[1] + (size_t)j) * (size_t)g->dim[2] + (size_t)k;
}

/* Position of node (i, j, k). */
static inline pd_vec3 pd_grid_node(const pd_grid* g, int i, int j, int k) {
    return pd_v3(g->origin.x + i * g->dx, g->origin.y + j * g->dx, g->origin.z + k * g->dx);
}

/* Particle p's weight along axis a at node base + k (k 0..2): pd_bspline_w at f = offset / dx. */
static inline pd_real pd_grid_weight(const pd_grid* g, size_t p, int a, int k) {
    pd_vec3 o = g->offset[p];
    return pd_bspline_w((a == 0 ? o.x : a == 1 ? o.y : o.z) * g->inv_dx, k);
}

/* All 9 of particle p's weights, w[axis][k]. */
static inline void pd_grid_weights(const pd_grid* g, size_t p, pd_real w[3][3]) {
    pd_real f[3] = {g->offset[p].x * g->inv_dx, g->offset[p].y * g->inv_dx,
                    g->offset[p].z * g->inv_dx};
    for (int a = 0; a < 3; ++a)
        for (int k = 0; k < 3; ++k)
            w[a][k] = pd_bspline_w(f[a], k);
}

void pd_grid_init(pd_grid* g, pd_real dx);
void pd_grid_free(pd_grid* g);

/* Fits the grid to the stencils of the n particles at x with `margin` (at least 1) more nodes on
 * every side (room for motion within a step and for boundary nodes), grows its arrays when needed,
 * and bins the particles by base node. PD_ERR_OUT_OF_MEMORY, or PD_ERR_UNSTABLE when a position is
 * not finite or the box exceeds max_nodes (a runaway). */
pd_status pd_grid_fit(pd_grid* g, const pd_vec3* x, size_t n, int margin, size_t max_nodes,
                      pd_error* err);

/* Particle to grid (APIC, Jiang et al. 2015; MLS-MPM, Hu et al. 2018): with the quadratic
 * B-spline weights w_ip,
 *   m_i = sum_p w_ip m_p,   (m v)_i = sum_p w_ip (m_p v_p + A_p (x_i - x_p)),
 * where A_p is the caller's affine momentum (APIC: m_p C_p; MLS-MPM adds the force term
 * -dt V_p (4 / dx^2) P_p F_p^T); affine NULL: PIC. Then velocity = (m v)_i / m_i. At the
 * positions of the last pd_grid_fit. */
void pd_grid_from_particles(pd_grid* g, const pd_real* mass, const pd_vec3* v,
                            const pd_mat3* affine);

/* Grid to particle: v_p = sum_i w_ip v_i and, when c is not NULL, the APIC affine velocity
 * C_p = (4 / dx^2) sum_i w_ip v_i (x_i - x_p)^T (D_p^-1 B_p of Jiang et al. 2015 for quadratic
 * B-splines), which is also MLS-MPM's velocity gradient. At the positions of the last fit. */
void pd_grid_to_particles(const pd_grid* g, pd_vec3* v, pd_mat3* c);

/* The MLS-MPM gradient operator of Fang 2019 Eq. 9 (D without dt and F^n) and its adjoint, with
 * the MLS kernel gradient grad w_ip = (4 / dx^2) w_ip (x_i - x_p) (Hu et al. 2018):
 *   gradient:   G_p = sum_i u_i grad w_ip^T        (a node field to a matrix per particle),
 *   divergence: d_i = sum_p M_p grad w_ip          (a matrix per particle to a node field),
 * so that sum_p G_p : M_p = sum_i u_i . d_i. The gradient of the grid velocity is APIC's C; the
 * divergence of -V_p^0 tau_p is the grid force. At the positions of the last fit. */
void pd_grid_gradient(const pd_grid* g, const pd_vec3* node_field, pd_mat3* out);
void pd_grid_divergence(const pd_grid* g, const pd_mat3* particle_field, pd_vec3* out);

/* out_i = sum_p grad w_ip^T M_p grad w_ip: the diagonal of D^T M D (a node scalar per node), for
 * preconditioners. At the positions of the last fit. */
void pd_grid_quadratic_sum(const pd_grid* g, const pd_mat3* particle_field, pd_real* out);

/* One RPIC round trip (Jiang et al. 2015; Fang 2019 Sec. 8): to the grid with the affine
 * momentum m_p (C_p - C_p^T) / 2, the rotational part of C_p, and back, giving new v and C.
 * Linear and angular momentum are kept; the stretching and shearing modes lose what a Newtonian
 * viscosity nu = dx^2 / (8 dt) takes in a step dt (Eq. 11): a shear wave of number k keeps
 * exp(-k^2 dx^2 / 8) of its amplitude. affine: scratch of one matrix per particle. At the
 * positions of the last fit. */
void pd_grid_rpic_round_trip(pd_grid* g, const pd_real* mass, pd_vec3* v, pd_mat3* c,
                             pd_mat3* affine);

#endif
