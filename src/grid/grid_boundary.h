/* The scene's colliders as grid boundary conditions (Fang 2019 Sec. 6; Stomakhin et al. 2013
 * Sec. 8): at every node with mass whose material has reached a collider's surface (its local
 * centre of mass within PD_GRID_COLLIDER_REACH cells of the solid, below), the velocity relative
 * to the collider's surface is
 *   no_slip: zero (the node sticks, moving with a moving collider), up to what the material
 *            there bears along the surface (pd_grid_wall, below);
 *   slip:    when approaching (v_n < 0), its normal part removed and its tangential part
 *            reduced by Coulomb friction: v_t <- v_t max(0, 1 + mu v_n / |v_t|); a node moving
 *            away is left free (the body may separate).
 * The `slip` of SCENE.md ("project out, tangential velocity kept, Coulomb friction") is the
 * separating condition of the MPM literature. */
#ifndef PD_GRID_BOUNDARY_H
#define PD_GRID_BOUNDARY_H

#include "boundary/collider.h"
#include "grid/grid.h"
#include "grid/grid_fields.h"

/* The reach of a collider's condition, in cells: a body resting on a flat surface fills the
 * half-space above it, and a node on the surface then carries material whose centre lies
 * int_0^1.5 u N(u) du / int_0^1.5 N(u) du = (13/64) / (1/2) = 13/32 of a cell above it (N the
 * quadratic B-spline). A node whose material comes that close to a solid carries its condition:
 * a body resting on the surface is held by the nodes in the solid (unit.grid: a slab whose
 * lowest layer is 0.1 cell up), as when the condition followed the nodes' own positions, but a
 * falling one only once it has come down to the surface, not once its stencil reaches a node
 * in the solid (1.5 cells before: bodies rested about a cell above the surface). */
#define PD_GRID_COLLIDER_REACH (13.0 / 32.0)

/* A rough (no_slip) surface against a material that slides on itself by Coulomb friction (a
 * cohesionless sand): the grains touching it stay, and the material above them slides where its
 * own strength gives out. Sheared along the surface, a Drucker-Prager sand of cone sqrt(J2) <= b
 * I1 whose flow keeps the volume (Klar's return) carries an isotropic stress plus the shear, so
 * its shear traction there is at most 3 b times the normal one (Mohr-Coulomb's sin phi in plane
 * strain; tan phi, the bound on the plane of largest obliquity, is more than such a sand bears
 * along the plane it shears on: tests/physics/mpm_sand_layer.c), and the surface bears no more
 * than that. A held node would bear any traction: it removes its material's whole
 * momentum each step (m_i v_i, however weak the sand), and the grains take 72 % of their velocity
 * from held nodes a quarter cell above the surface, 28 % three quarters up (the bottom two
 * grains at dx = 2 spacings): a bottom cell stuck to the floor whatever its load. So a no_slip node
 * whose material has a wall friction mu keeps the slip condition with Coulomb's mu (it sticks while
 * its tangential impulse is within mu of its normal one) and may lift off (the material carries no
 * tension). Each material's wall friction: 3 b of a cohesionless sand, INFINITY (held)
 * otherwise; a node's, its material's mass-weighted mean, INFINITY where any of it is held. */
typedef struct pd_grid_wall {
    const int32_t* particle_material; /* one field: each particle's material */
    const pd_real* material_friction; /* ... and each material's wall friction */
    const pd_real* field_friction;    /* a field per body: each field's */
} pd_grid_wall;

/* Applies every collider, in the scene's order, to the velocities of the grid's nodes with mass
 * (the colliders posed for the step's end), where the material a node carries lies within
 * `reach` of a collider's solid: its local centre of mass, x_i - sum_p m_p w_ip (x_i - x_p) /
 * m_i (particle_mass: the particles' masses of the last transfer). wall NULL: no_slip holds
 * every node. */
void pd_grid_apply_colliders(pd_grid* g, const pd_real* particle_mass, const pd_grid_wall* wall,
                             pd_real reach, const pd_colliders* colliders);

/* The same for every field of f (each body its own velocity, grid_fields.h), at each field's
 * own centre of mass at the node. */
void pd_grid_fields_apply_colliders(const pd_grid* g, pd_grid_fields* f, const pd_grid_wall* wall,
                                    pd_real reach, const pd_colliders* colliders);

/* The local centre of mass of the material node n carries (its own position without mass). */
pd_vec3 pd_grid_node_material_centre(const pd_grid* g, const pd_real* particle_mass, size_t n);

/* The same, and in *wall_friction the wall friction of that material (pd_grid_wall, one field:
 * its particles' mass-weighted mean; INFINITY where any of it is held, or wall NULL). */
pd_vec3 pd_grid_node_material(const pd_grid* g, const pd_real* particle_mass,
                              const pd_grid_wall* wall, size_t n, pd_real* wall_friction);

/* The velocity a node whose material lies at x, with velocity v, keeps against collider col (v
 * itself when x lies farther than reach outside its solid); a material of wall friction mu
 * (finite, pd_grid_wall) slips on a no_slip collider with Coulomb's mu. */
pd_vec3 pd_grid_collider_velocity(const pd_collider* col, pd_vec3 x, pd_real reach, pd_vec3 v,
                                  pd_real wall_friction);

#endif
