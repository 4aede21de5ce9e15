/* What mpm's files share beyond mpm_data.h: the implicit step's pieces (mpm_admm.c). */
#ifndef PD_MPM_INTERNAL_H
#define PD_MPM_INTERNAL_H

#include "boundary/collider.h"
#include "solvers/mpm/mpm_data.h"

/* u's part tangent to node n's held collider normals (bc_normal, and bc_normal2 at a corner;
 * zero where none): the slip friction acts on, in the ADMM and in the optimiser's step. */
static inline pd_vec3 pd_mpm_slip_part(const pd_mpm_state* s, size_t n, pd_vec3 u) {
    u = pd_v3_sub(u, pd_v3_scale(s->bc_normal[n], pd_v3_dot(u, s->bc_normal[n])));
    return pd_v3_sub(u, pd_v3_scale(s->bc_normal2[n], pd_v3_dot(u, s->bc_normal2[n])));
}

/* Psi_E of a material in the stretches s > 0 of F_E (mpm_energy.c): the energy density (Pa), the
 * principal Kirchhoff stress tau_a = s_a dPsi/ds_a (Pa), and the gradient dPsi/ds and Hessian
 * d^2 Psi / ds^2 (the ADMM's particle step, Eq. 10, and the optimiser's step). */
pd_real pd_mpm_energy(const pd_mpm_material* m, pd_vec3 s);
pd_vec3 pd_mpm_kirchhoff(const pd_mpm_material* m, pd_vec3 s);
void pd_mpm_gradient_hessian(const pd_mpm_material* m, const pd_real s[3], pd_real g[3],
                             pd_real h[3][3]);

/* Newton steps of the particle step (Eq. 10) at most. */
#define PD_MPM_NEWTON_STEPS 12
/* ... and the particle step's Newton stops after a full step shorter than this of s */
#define PD_MPM_NEWTON_STEP_TOL 1e-4

/* A node's boundary condition in the implicit solve (Sec. 7.2); PIN: a node only pinned particles
 * reach, held at their velocity (mpm_pins.c); RELEASED: a NORMAL node the ADMM's unilateral
 * contact let go within the step (its reaction would pull; mpm_admm.c's update_contacts), free
 * until it moves into its collider again. */
enum { PD_MPM_BC_FREE, PD_MPM_BC_NORMAL, PD_MPM_BC_FULL, PD_MPM_BC_PIN, PD_MPM_BC_RELEASED };

/* The pins on the grid (mpm_pins.c; docs/methods/mpm.md "Pins"). pd_mpm_pin_share, before the
 * transfer: each pin's velocity gradient fitted to its particles and the pinned particles'
 * APIC transfer alone, v_pin, which gives every pinned particle its velocity wherever its pin
 * moves rigidly (affinely within a step); pd_mpm_pin_nodes marks every node a pinned particle
 * reaches (pin_node_hold 1, else 0). The implicit steps hold those nodes (Sec. 7.2's
 * projection inside CG) but for W's null space on the shared ones (below). pd_mpm_pin_constrain,
 * the explicit step with one field: after the grid update the least change of the nodes' kinetic
 * energy that gives every pinned particle its velocity (its reaction, in pin_reaction per mass). */
pd_status pd_mpm_pin_share(pd_mpm_state* s, const pd_particles* p);
pd_status pd_mpm_pin_constrain(pd_mpm_state* s, const pd_particles* p);
void pd_mpm_pin_nodes(pd_mpm_state* s);
/* The explicit step with a field per body: pd_mpm_pin_constrain on each pinned body's own field
 * (its mass and velocity; the other bodies' fields are the contact's), after the contact and
 * the colliders. pd_mpm_pin_free: the pins' node arrays. */
pd_status pd_mpm_pin_constrain_fields(pd_mpm_state* s, const pd_particles* p);
void pd_mpm_pin_free(pd_mpm_state* s);
/* The pins' constraint W v = v_p exactly inside the implicit steps (mpm_pins.c; docs/methods/
 * mpm.md "Pins"). A node only pinned particles reach is held at v_pin (FULL); the nodes the pins
 * share with the free body (pd_mpm_pin_shared_node; PIN) keep W's null space there free:
 * pd_mpm_pin_basis finds it block by block (Z, or its complement Q, orthonormal; kept while the
 * pinned particles and the shared nodes stay), after pd_mpm_pin_share and pd_mpm_pin_nodes on a
 * grid that holds the step's start; pd_mpm_pin_project sets u <- Z Z^T u on those nodes (the
 * free part: a direction, a residual), or with `range` u <- u - Z Z^T u (what the constraint
 * fixes: the target, the reaction). Where W has full rank there (a block of pinned particles
 * two or more layers thick: Z is empty) the shared nodes are held, as the constraint then
 * says. pd_mpm_pin_impulses: the pins' impulse per pinned mass at each node from the
 * constraint's reaction (its range part) at the held and shared nodes. */
int pd_mpm_pin_shared_node(const pd_mpm_state* s, size_t n);
pd_status pd_mpm_pin_basis(pd_mpm_state* s, const pd_particles* p);
void pd_mpm_pin_project(const pd_mpm_state* s, pd_vec3* u, int range);
void pd_mpm_pin_impulses(pd_mpm_state* s, const pd_vec3* reaction);

/* Room in the ADMM's per-node arrays for `nodes` nodes (grown, never shrunk). */
pd_status pd_mpm_admm_reserve(pd_mpm_state* s, size_t nodes);
void pd_mpm_admm_free(pd_mpm_state* s);
/* The ADMM solve of Sec. 7 for the grid velocity change s->admm_dv, on a grid that holds the
 * particles' transfer (mass and v^n) at the step's start. */
pd_status pd_mpm_admm_solve(pd_mpm_state* s, const pd_step_context* ctx, int* iterations,
                            pd_real* residual);
/* The ADMM's grid matrix A = M + D^T w^2 D (rho 1) stored for the step about to run (its grid
 * holds the step's start, the constraints found), and z = A^-1 b in the constraints' free
 * subspace by conjugate gradients (returns the products taken): the optimiser's L-BFGS takes it
 * as its initial Hessian (solver.mpm.lbfgs_preconditioner grid_matrix). trial: the step's b_p
 * = (I + dt G(v^n)) F^n, where plastic materials' weights are taken. */
pd_status pd_mpm_grid_matrix(pd_mpm_state* s, const pd_particles* particles, pd_real dt,
                             const pd_mat3* trial);
int pd_mpm_grid_matrix_solve(pd_mpm_state* s, const pd_vec3* b, pd_vec3* z);
/* dPsi/ds at Z(s) and its derivative in s, for the particle steps' Newton (Eq. 10). */
typedef void (*pd_mpm_principal_law)(const void* ctx, const pd_real s[3], pd_real g[3],
                                     pd_real h[3][3]);
int pd_mpm_principal_newton(pd_mpm_principal_law law, const void* ctx, pd_real v0, pd_real k,
                            const pd_real r[3], pd_real s[3]);

/* The boundary conditions of an implicit step (Sec. 7.2), shared by the ADMM and the optimiser's
 * step, in bc_kind, bc_normal, bc_target (room from pd_mpm_admm_reserve): find them on a grid
 * that holds the step's start; remove what they fix from a node field (a direction, a residual);
 * set what they fix in a velocity change. */
void pd_mpm_find_constraints(pd_mpm_state* s, const pd_particles* p, const pd_colliders* colliders);
/* The Coulomb coefficient of node n against collider col: a slip collider's friction; against a
 * no_slip one, the wall friction of the material there (grid_boundary.h's pd_grid_wall: 3 b
 * of a cohesionless sand, INFINITY where the node is held). */
pd_real pd_mpm_node_friction(const pd_mpm_state* s, const pd_collider* col, size_t n);
void pd_mpm_project_free(const pd_mpm_state* s, pd_vec3* u);
void pd_mpm_impose_constraints(const pd_mpm_state* s, pd_vec3* dv);

/* The optimiser's implicit step (mpm_implicit.c): backward Euler on the grid as the minimisation
 * of the incremental potential over the grid velocity change, left in s->admm_dv, by the shared
 * optimiser (src/optim/descent.h), Newton or L-BFGS (solver.mpm.integrator). */
pd_status pd_mpm_optimiser_solve(pd_mpm_state* s, const pd_step_context* ctx, int* iterations,
                                 pd_real* residual);
void pd_mpm_optimiser_free(pd_mpm_state* s);
/* The last optimiser step's residual on the grid's nodes (free directions; NULL before one). */
const pd_vec3* pd_mpm_optimiser_residual(const pd_mpm_state* s);
/* The optimiser's densities at trial stretches s (mpm_implicit.c, for tests): W of F_E (the
 * incremental potential of the return; *cone set where Drucker-Prager's stress, in g = tau(Z) /
 * s, is not W's gradient) and W_N of F_N (Eq. 8's variational update; g = tau_N(Z_N) / s, its
 * gradient). dilation: the volume correction's v. */
pd_real pd_mpm_incremental_density(const pd_mpm_material* m, pd_vec3 s, pd_real dilation,
                                   pd_real g[3], int* cone);
pd_real pd_mpm_branch_density(const pd_mpm_material* m, pd_vec3 s, pd_real g[3]);

/* Backward Euler's relative momentum residual at the grid velocity change dv (tests). */
pd_real pd_mpm_implicit_residual(pd_mpm_state* s, const pd_particles* particles, pd_vec3 gravity,
                                 pd_real dt, const pd_vec3* dv);

/* The ADMM's F_N constraint (mpm_admm_maxwell.c, Sec. 7 with Eq. 8's Z_N), called by
 * mpm_admm.c when s->has_maxwell. Per particle arrays: */
#define PD_MPM_MAXWELL_ARRAYS(X)                                                                   \
    X(mx_b, pd_mat3)                                                                               \
    X(mx_fn, pd_mat3)                                                                              \
    X(mx_f, pd_mat3)                                                                               \
    X(mx_fhat, pd_mat3) X(mx_y, pd_mat3) X(mx_du, pd_mat3) X(mx_du_prev, pd_mat3) X(mx_w2, pd_real)
pd_status pd_mpm_maxwell_reserve(pd_mpm_state* s);
void pd_mpm_maxwell_free(pd_mpm_state* s);
/* At the step's start (the grid holds v^n): b_N, F_N^n, the SEW weight w_N^2, y_N = 0. */
void pd_mpm_maxwell_start(pd_mpm_state* s, const pd_particles* p, pd_real dt, pd_real rho);
/* k_p += scale w_N^2 F_N^n F_N^n^T: the branch's share of A = M + rho D^T W^T W D. */
void pd_mpm_maxwell_add_weight(pd_mpm_state* s, pd_real scale, pd_mat3* k);
/* The particle step (Eq. 10) for F_N at the current s->admm_dv. */
void pd_mpm_maxwell_particle_step(pd_mpm_state* s, const pd_particles* p, pd_real dt, pd_real rho);
/* affine_p += dt (w_N y_N + rho w_N^2 (F_hat_N - b_N)) F_N^n^T: D_N^T's argument in the grid
 * step's right-hand side, F_hat_N over-relaxed by alpha. */
void pd_mpm_maxwell_add_rhs(pd_mpm_state* s, pd_real dt, pd_real rho, pd_real alpha,
                            pd_mat3* affine);
/* The dual step at the new s->admm_dv; adds the branch's primal, dual and scale sums (squared,
 * weighted) to sums[0..2]. */
void pd_mpm_maxwell_dual_step(pd_mpm_state* s, const pd_particles* p, pd_real dt, pd_real rho,
                              pd_real sums[3]);
/* affine_p += dt V0 P_N(Z_N(D_N dv + b_N)) F_N^n^T (backward Euler's residual, tests). */
void pd_mpm_maxwell_add_stress(pd_mpm_state* s, const pd_particles* p, pd_real dt,
                               const pd_vec3* dv, pd_mat3* affine);

/* One field's transfer back at particle p (mpm.c): returns sum_i w_ip u_i and sets *c = (4 /
 * dx^2) sum_i w_ip u_i (x_i - x_p)^T, u = field (the velocity, or the ADMM's dv: its D). */
pd_vec3 pd_mpm_grid_to_particle(const pd_grid* g, const pd_vec3* field, size_t p, pd_mat3* c);

#endif
