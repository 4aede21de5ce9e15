#ifndef PD_BODIES_H
#define PD_BODIES_H

#include "neighbor/family.h"
#include "world/world.h"

/* Two unit vectors perpendicular to `axis` (and to each other): a rod's ghosts, an emitter's
 * disc. */
void pd_perpendicular_pair(pd_vec3 axis, pd_vec3* u, pd_vec3* v);

/* Samples every body of w->scene into particles and attaches pins. */
pd_status pd_world_add_bodies(pd_world* w, pd_error* err);

/* Refuses (PD_ERR_BAD_SCENE) a body that starts inside a collider: the first projection would
 * throw its particles out at once (kinetic energy from nothing). Names the body's and the
 * collider's JSON paths. Fixed, pinned and ghost particles, which colliders leave alone, are
 * not checked. */
pd_status pd_world_check_clear_of_colliders(const pd_world* w, pd_error* err);

/* Refuses (PD_ERR_BAD_SCENE, at bodies[b]) two bodies a < b that start interpenetrated: whose
 * particles come closer than their contact distance (s_a + s_b) / 2 by more than half of it,
 * measured as the depth by which the particles near the other body pass each other along x,
 * y, z or the line between the bodies' centres. Names both bodies and the depth. Bodies that
 * touch (a stack of grid-sampled bodies: outer layers one spacing apart) are accepted. Pairs of
 * two fixed or pinned particles, and rod ghosts, are not checked. Pairs found through the hash
 * grid. */
pd_status pd_world_check_bodies_apart(const pd_world* w, pd_error* err);

/* Refuses (PD_ERR_BAD_SCENE, at solver.horizon) families a bonded method cannot use: a free
 * particle with fewer than 2 neighbours within the horizon (names the particle and body), and
 * a solid body (not a shell or a rod) whose bonds span too few directions for shear stiffness,
 * such as a grid's below a horizon of sqrt(2) spacings, axis bonds only (names the body and
 * the smallest horizon a grid takes). `horizon`: the method's solver.horizon, in spacings. One
 * check for every bonded method, called once its families are built. */
pd_status pd_world_check_families(const pd_world* w, const pd_family* f, pd_real horizon,
                                  pd_error* err);

#endif
