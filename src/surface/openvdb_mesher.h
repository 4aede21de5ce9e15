/* The OpenVDB half of pd_surface_mesh_points: openvdb_mesher.cpp, compiled only when CMake
 * finds OpenVDB (PD_HAVE_OPENVDB). Plain C types only: peridot/types.h is C11, not C++. */
#ifndef PD_OPENVDB_MESHER_H
#define PD_OPENVDB_MESHER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pd_openvdb_mesh {
    size_t vertex_count, triangle_count;
    float* vertices;     /* pd_alloc'd, x y z per vertex */
    uint32_t* triangles; /* pd_alloc'd, counter-clockwise seen from outside */
} pd_openvdb_mesh;

enum { PD_OPENVDB_OK, PD_OPENVDB_NO_MEMORY, PD_OPENVDB_FAILED };

/* The surface of pd_surface_mesh_points with its (checked) definition; PD_OPENVDB_FAILED with
 * OpenVDB's reason in why. On a failure *out holds nothing. */
int pd_openvdb_mesh_points(double spacing, double radius, double voxel, int smooth, size_t n,
                           const float* x, const float* y, const float* z, pd_openvdb_mesh* out,
                           char* why, size_t why_cap);

#ifdef __cplusplus
}
#endif

#endif
