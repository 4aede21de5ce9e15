/* Peridot: particle simulation of elastoplastic, hyperelastic, viscoelastic and granular
 * materials. Umbrella header of the public API. */
#ifndef PERIDOT_H
#define PERIDOT_H

#include <stddef.h>

#include "docs.h"
#include "io.h"
#include "math.h"
#include "memory.h"
#include "parallel.h"
#include "render.h"
#include "surface.h"
#include "scene.h"
#include "status.h"
#include "types.h"
#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

const char* pd_version(void);
/* sizeof a public struct by its name ("pd_error", "pd_world_info", ...; 0 for another name):
 * a binding that lays the structs out itself (python/peridot) checks its layout with it. */
size_t pd_type_size(const char* name);

/* What a scene will need, computed without sampling or allocating it. */
typedef struct pd_estimate {
    size_t particles;    /* about: the bodies' volumes over spacing^3 (boxes, shells, rods exact) */
    size_t bonds;        /* particles * expected family size */
    size_t bytes;        /* memory the world will allocate, about */
    size_t output_bytes; /* what a run writes: frames, stats.csv, the resolved scene, about */
    size_t steps;        /* time steps for the whole run */
} pd_estimate;
pd_status pd_scene_estimate(const pd_scene* scene, pd_estimate* out, pd_error* err);
/* PD_ERR_TOO_LARGE (err at "bodies", with both numbers) when the estimate's bytes exceed 80 %
 * of what this process may use (pd_memory_limit_read, or world.memory_limit_bytes when set):
 * what `peridot run` and the Python module refuse before building. */
pd_status pd_scene_check_memory(const pd_scene* scene, const pd_estimate* est, pd_error* err);

/* Samples the bodies, builds colliders, pins and the method's solver. */
pd_status pd_create_world(const pd_scene* scene, pd_world** out, pd_error* err);
void pd_destroy_world(pd_world* world);

/* One time step of scene->world.dt. PD_ERR_UNSTABLE (with err saying when and where) when
 * a position or velocity becomes non-finite or runs away. */
pd_status pd_world_step(pd_world* world, pd_error* err);

#ifdef __cplusplus
}
#endif

#endif
