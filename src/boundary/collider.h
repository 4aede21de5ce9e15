/* Colliders shared by every method: signed-distance shapes (analytic plane, box, sphere,
 * cylinder, and triangle meshes through a BVH, src/geometry/mesh_sdf.h), as obstacles or
 * containers (`inside`), moving by velocity, angular velocity or keyframes; slip with Coulomb
 * friction, or no-slip. Every collider is a signed distance in its rest frame moved by one rigid
 * motion, so a method that calls pd_collider_sdf / pd_colliders_project gets all of them. */
#ifndef PD_COLLIDER_H
#define PD_COLLIDER_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/types.h"

struct pd_mesh_sdf;

typedef struct pd_collider {
    pd_collider_def def;
    struct pd_mesh_sdf* mesh; /* mesh colliders: the distance field in the rest pose */
    pd_vec3 center;           /* rest centre (rotation pivot) */
    pd_vec3 translation;      /* current offset from the rest pose (m) */
    pd_mat3 rotation;         /* current rotation about `center` */
    pd_vec3 lin_vel;          /* current linear velocity of the pivot (m/s) */
    pd_vec3 ang_vel;          /* current angular velocity (rad/s) */
} pd_collider;

typedef struct pd_colliders {
    int count;
    pd_collider* items;
} pd_colliders;

/* `path` prefix for errors is "colliders[k]". Normalises plane normals, cylinder axes and
 * keyframe axes; copies the keyframes (the defs need not outlive the colliders). Poses at
 * t = 0. A mesh collider loads its file (pd_mesh_load: scale, rotate, translate) and builds its
 * distance field once; its rest centre (the pivot of angular_velocity and keyframe rotations)
 * is the centre of the loaded mesh's bounding box. A closed mesh is a solid (`inside`: a
 * container) and refuses `thickness`; an open mesh needs `thickness` (mesh_sdf.h says why). */
pd_status pd_colliders_create(const pd_collider_def* defs, int count, pd_colliders* out,
                              pd_error* err);
void pd_colliders_destroy(pd_colliders* c);

/* Poses every collider at time t (s), the end of the step being taken: rest pose moved by
 * velocity*t and turned by angular_velocity*t about its centre, or, when keyframes are given
 * (they take the place of velocity and angular_velocity), interpolated between them and held
 * outside their range. A keyframed collider moves with the segment that ends at or after t: a
 * step ending exactly on a key moved with the segment arriving there, not the next one. */
void pd_colliders_update(pd_colliders* c, pd_real t);

/* Replaces the collider's motion by two keyframes: its pose now (time t0, where
 * pd_colliders_update last put it) and `to` (to.t > t0); it holds at `to` after. For a program
 * that drives it between steps (pd_world_move_collider). PD_ERR_INVALID_ARGUMENT (err at
 * `path`) for to.t not after t0 or a rotation without an axis. */
pd_status pd_collider_move_to(pd_collider* col, pd_real t0, pd_keyframe to, const char* path,
                              pd_error* err);

/* Signed distance of p to collider k (negative inside the solid, i.e. where particles must
 * not be) and the outward unit normal there (towards the allowed side; normal may be NULL).
 * A container (`inside`, box / sphere / cylinder / closed mesh) negates both; a plane ignores
 * `inside`; an open mesh moves its wall to the front of its faces. */
pd_real pd_collider_sdf(const pd_collider* col, pd_vec3 p, pd_vec3* normal);

/* The walls collider col presents to a particle at p, for the share of a kernel inside the
 * solid (src/sph/wall_density.c): a container box's solid, the box's outside, is the union of
 * the half-spaces beyond its six faces, so it presents the six, each a plane (dist[k] the signed
 * distance to face k, normal[k] its normal towards the inside); any other collider presents
 * one, its signed distance and normal (pd_collider_sdf). The nearest face alone misses the
 * second wall where two meet: a particle on a container's edge counted half its walls.
 * Returns the count (at most PD_COLLIDER_MAX_FACES). */
#define PD_COLLIDER_MAX_FACES 6
int pd_collider_faces(const pd_collider* col, pd_vec3 p, pd_real dist[PD_COLLIDER_MAX_FACES],
                      pd_vec3 normal[PD_COLLIDER_MAX_FACES]);

/* 1 when p is surely farther than margin from collider k's solid (pd_collider_sdf(p) >= margin),
 * known without a distance query (a mesh's coarse lattice, pd_mesh_sdf_lower_bound); 0 when
 * it may be nearer, or for analytic shapes (their exact distance is as cheap). */
int pd_collider_clear_of(const pd_collider* col, pd_vec3 p, pd_real margin);

/* Where a point given in the collider's rest pose (its def's coordinates) is now. */
pd_vec3 pd_collider_to_world(const pd_collider* col, pd_vec3 rest_point);

/* Velocity of the collider's surface at p. */
pd_vec3 pd_collider_velocity_at(const pd_collider* col, pd_vec3 p);

/* After a solver step of length dt: moves every particle i with skip[i] == 0 that lies
 * inside a collider back onto its surface, and corrects its velocity: the normal
 * approach relative to the collider is removed; slip keeps the tangential relative velocity
 * reduced by Coulomb friction (|dv_t| <= friction * |dv_n|), no-slip sets it to the
 * collider's velocity. With vel == NULL only positions are projected (solvers do that inside
 * their iterations). touched (may be NULL) gets 1 for every particle that was projected.
 * Returns the number of particles in contact. Parallel, and the same result for any thread
 * count. */
size_t pd_colliders_project(const pd_colliders* c, size_t n, pd_vec3* pos, pd_vec3* vel,
                            const uint8_t* skip, uint8_t* touched, pd_real dt);

#endif
