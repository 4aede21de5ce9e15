/* Closed triangle surfaces around particles, for fluids, sand and snow in Blender and Houdini
 * (`peridot surface`). Each particle is a sphere of `radius` in a narrow-band level set; the
 * union of the spheres is then eroded by radius - spacing / 2, so that the surface sits up to half
 * a spacing beyond the outer particles, where their cells end (a flat layer's top, a sampled
 * sphere's radius; 0.37 spacing measured, as the union dips between its spheres), and the gaps
 * between neighbouring spheres stay filled; optional smoothing;
 * then a mesh of the zero level. Needs OpenVDB at build time (libopenvdb-dev); without it
 * pd_surface_mesh_points returns PD_ERR_UNSUPPORTED and pd_surface_unavailable_hint says how to
 * get it. */
#ifndef PERIDOT_SURFACE_H
#define PERIDOT_SURFACE_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pd_surface_def {
    double spacing; /* particle spacing h (m), > 0 */
    double radius;  /* each particle's sphere (m), > spacing / 2 */
    double voxel;   /* level-set voxel edge (m), at most radius / 3 */
    int smooth;     /* iterations of a Gaussian filter (width one voxel) on the level set */
} pd_surface_def;

/* radius = 1.5 spacings, voxel = spacing / 2, smooth = 1. Spheres of sqrt(3)/2 spacing
 * already close a cubic lattice's gaps; 1.5 spans a disordered flow's gaps too, and at half a
 * spacing per voxel gives the three voxels per radius the erosion needs (measured on a flat
 * layer: with 2 voxels per radius it ate 0.3 spacing into the particles, with 3 or 4 it stops
 * 0.34 to 0.37 spacing above them). Hollows narrower than about two spacings are filled. */
pd_surface_def pd_surface_default_def(double spacing);

typedef struct pd_surface_mesh {
    size_t vertex_count, triangle_count;
    float* vertices;     /* x y z per vertex */
    uint32_t* triangles; /* three vertex indices per triangle, counter-clockwise from outside */
} pd_surface_mesh;

/* 1 when this build has OpenVDB. */
int pd_surface_available(void);
/* What to do when it has not: install libopenvdb-dev and rebuild. */
const char* pd_surface_unavailable_hint(void);

/* The surface around n points (non-finite ones skipped); *out is empty when no point is
 * finite. PD_ERR_INVALID_ARGUMENT for a bad def (why in err), PD_ERR_UNSUPPORTED without
 * OpenVDB. Free *out with pd_surface_mesh_free. */
pd_status pd_surface_mesh_points(const pd_surface_def* def, size_t n, const float* x,
                                 const float* y, const float* z, pd_surface_mesh* out,
                                 pd_error* err);
void pd_surface_mesh_free(pd_surface_mesh* mesh);

/* Writes the mesh atomically: binary little-endian PLY (vertex x y z, face vertex_indices)
 * when path ends in .ply, Wavefront OBJ when it ends in .obj. */
pd_status pd_surface_write(const char* path, const pd_surface_mesh* mesh, pd_error* err);

#ifdef __cplusplus
}
#endif

#endif
