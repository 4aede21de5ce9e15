/* Triangle meshes: import (PLY by our reader, OBJ and STL via Assimp) and a robust inside
 * test. */
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
 * of `shape` (in that order). A file named .ply or starting with "ply" is read by
 * geometry/ply_mesh.h, any other by Assimp. Errors name `path` (JSON path) and the file:
 * `path` is the JSON path of the shape object (e.g. "bodies[1].shape"), errors point at
 * "<path>.path" (or "<path>.scale"). Missing/unreadable file: PD_ERR_IO; a file its reader
 * refuses, without triangles, or with non-finite vertices: PD_ERR_MESH. */
pd_status pd_mesh_load(const pd_shape_def* shape, pd_mesh* out, const char* path, pd_error* err);
void pd_mesh_free(pd_mesh* mesh);
void pd_mesh_bounds(const pd_mesh* mesh, pd_vec3* lo, pd_vec3* hi);
/* Generalised winding number (Jacobson et al. 2013): ~1 inside a closed mesh, ~0 outside;
 * degrades gracefully on open or non-manifold meshes. Exact sum over all triangles. */
pd_real pd_mesh_winding_number(const pd_mesh* mesh, pd_vec3 p);
/* Enclosed volume by the divergence theorem (m^3); negative when faces wind inward. */
pd_real pd_mesh_signed_volume(const pd_mesh* mesh);
/* |volume| of the cones from the vertex centroid to every triangle: the enclosed volume of a
 * closed mesh, and exactly 0 (up to rounding) for a flat one, open or not, wherever it lies. */
pd_real pd_mesh_enclosed_volume(const pd_mesh* mesh);

/* A bounding-volume tree over a mesh's triangles that evaluates the winding number in about
 * O(log n) per query: clusters far from the query use a second-order far-field expansion
 * (Barill et al. 2018), near ones are summed exactly. Self-contained (copies the triangles),
 * read-only after building, so queries may run in parallel. */
typedef struct pd_mesh_tree_node pd_mesh_tree_node;
typedef struct pd_mesh_tree {
    size_t node_count, triangle_count;
    pd_mesh_tree_node* nodes;
    pd_vec3* corners; /* 3 per triangle, in tree order */
} pd_mesh_tree;

pd_status pd_mesh_tree_build(const pd_mesh* mesh, pd_mesh_tree* tree);
void pd_mesh_tree_free(pd_mesh_tree* tree);
/* Within ~1e-2 of pd_mesh_winding_number (tested on the bunny); ~5 us per query there. */
pd_real pd_mesh_tree_winding_number(const pd_mesh_tree* tree, pd_vec3 p);

#endif
