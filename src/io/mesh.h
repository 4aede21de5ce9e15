/* Triangle meshes: import (OBJ, PLY, STL via Assimp) and a robust inside test. */
#ifndef PD_MESH_H
#define PD_MESH_H

#include <stddef.h>

#include "peridot/types.h"

typedef struct pd_mesh {
    size_t vertex_count, triangle_count;
    pd_vec3* vertices;
    uint32_t* triangles; /* 3 per triangle */
} pd_mesh;

/* Loads every mesh in the file as one triangle soup, then applies scale, rotation, translation
 * of `shape` (in that order). Errors name `path` (JSON path) and the file. */
pd_status pd_mesh_load(const pd_shape_def* shape, pd_mesh* out, const char* path, pd_error* err);
void pd_mesh_free(pd_mesh* mesh);
void pd_mesh_bounds(const pd_mesh* mesh, pd_vec3* lo, pd_vec3* hi);
/* Generalised winding number (Jacobson et al. 2013): ~1 inside a closed mesh, ~0 outside;
 * degrades gracefully on open or non-manifold meshes. */
pd_real pd_mesh_winding_number(const pd_mesh* mesh, pd_vec3 p);

#endif
