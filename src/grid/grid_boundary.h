/* The scene's colliders as grid boundary conditions (Fang 2019 Sec. 6; Stomakhin et al. 2013
 * Sec. 8): at every node with mass that lies in a collider's solid (signed distance <= 0), the
 * velocity relative to the collider's surface is
 *   no_slip: zero (the node sticks, moving with a moving collider);
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

/* Applies every collider, in the scene's order, to the velocities of the grid's nodes with mass
 * (the colliders posed for the step's end). */
void pd_grid_apply_colliders(pd_grid* g, const pd_colliders* colliders);

/* The same for every field of f (each body its own velocity, grid_fields.h). */
void pd_grid_fields_apply_colliders(const pd_grid* g, pd_grid_fields* f,
                                    const pd_colliders* colliders);

/* The velocity a node at x with velocity v keeps against collider col (v itself when x lies
 * outside its solid). */
pd_vec3 pd_grid_collider_velocity(const pd_collider* col, pd_vec3 x, pd_vec3 v);

#endif
