/* Filling bodies with particles. */
#ifndef PD_SAMPLING_H
#define PD_SAMPLING_H

#include <stddef.h>

#include "peridot/types.h"

/* Samples the shape with particles `spacing` apart: grid (lattice min + spacing*(i+1/2) over
 * the bounding box, kept where inside), jittered (grid + uniform offsets of up to 0.25 spacing
 * from `seed`), poisson_disk. *points is allocated with pd_alloc (count * sizeof(pd_vec3)).
 * A shape thinner than spacing in one direction gives one layer (shells), in two a line
 * (rods). `path` is the JSON path of the body for errors ("<path>.spacing", "<path>.shape.path").
 * Meshes are inside where the winding number is >= 1/2 (<= -1/2 for inward-wound meshes), so
 * small holes and non-manifold faces are tolerated. Errors: bad spacing or no particles at this
 * spacing: PD_ERR_BAD_SCENE; lattice over 2^31 points: PD_ERR_TOO_LARGE; mesh file missing:
 * PD_ERR_IO; unreadable, flat or inside-less mesh: PD_ERR_MESH. Points come in lattice order (x
 * fastest) and are the same for the same seed whatever the thread count. poisson_disk keeps
 * particles >= 0.85 spacing apart at about one per spacing^3; poisson_disk_relaxed shifts those
 * points (a solid's: not a shell's or a rod's) until each one's Wendland kernel-gradient sum
 * over 2 spacings matches the shape's continuum, so that its neighbourhood is balanced. */
pd_status pd_sample_shape(const pd_shape_def* shape, pd_real spacing, pd_sampling sampling,
                          uint64_t seed, pd_vec3** points, size_t* count, const char* path,
                          pd_error* err);

/* Inside test for analytic shapes (box, sphere, cylinder); points on the surface count as
 * inside. Mesh shapes return 0 (use pd_mesh_winding_number). */
int pd_shape_contains(const pd_shape_def* shape, pd_vec3 p);

/* Axis-aligned bounds of an analytic shape (for meshes: the loaded, transformed mesh; `path` is
 * then the JSON path of the shape object, e.g. "colliders[2].shape", see pd_mesh_load). */
pd_status pd_shape_bounds(const pd_shape_def* shape, pd_vec3* lo, pd_vec3* hi, const char* path,
                          pd_error* err);
/* The same box, the volume the shape encloses (m^3; a mesh's by pd_mesh_enclosed_volume) and
 * its surface's area (m^2). */
pd_status pd_shape_measure(const pd_shape_def* shape, pd_vec3* lo, pd_vec3* hi, double* volume,
                           double* area, const char* path, pd_error* err);

/* The volume the shape occupies (m^3): pd_shape_measure's, but where a mesh's closed pieces
 * overlap, their union's (the region the sampler fills), measured on a lattice of `spacing`. */
pd_status pd_shape_occupied_volume(const pd_shape_def* shape, pd_real spacing, double* volume,
                                   const char* path, pd_error* err);

#endif
