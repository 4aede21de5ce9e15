/* A bounding volume hierarchy over a triangle mesh for closest-point queries (mesh colliders'
 * signed distance). Axis-aligned boxes, median split along the longest axis of the centroids,
 * built once; queries allocate nothing, only read the tree (so they may run in parallel) and
 * are deterministic: the same point gives the same triangle whatever the thread count. */
#ifndef PD_BVH_H
#define PD_BVH_H

#include <stddef.h>
#include <stdint.h>

#include "geometry/mesh.h"
#include "peridot/types.h"

/* Which part of a triangle (a, b, c) the closest point lies on. */
typedef enum pd_tri_feature {
    PD_TRI_FACE,
    PD_TRI_VERTEX_A,
    PD_TRI_VERTEX_B,
    PD_TRI_VERTEX_C,
    PD_TRI_EDGE_AB,
    PD_TRI_EDGE_BC,
    PD_TRI_EDGE_CA,
} pd_tri_feature;

/* Closest point to p on triangle abc, by the Voronoi regions of its vertices, edges and face
 * (Ericson, Real-Time Collision Detection, 2005, sec. 5.1.5); *feature says which region. A
 * degenerate (zero-area) triangle gives the closest point of its edges. */
pd_vec3 pd_closest_point_on_triangle(pd_vec3 p, pd_vec3 a, pd_vec3 b, pd_vec3 c,
                                     pd_tri_feature* feature);

typedef struct pd_bvh_node {
    pd_vec3 lo, hi; /* box of the node's triangles (m) */
    uint32_t first; /* leaf: first triangle (tree order); inner: 0 */
    uint32_t count; /* leaf: triangle count; inner: 0 */
    uint32_t right; /* inner: right child (the left child is the next node) */
} pd_bvh_node;

typedef struct pd_bvh {
    size_t node_count, triangle_count;
    pd_bvh_node* nodes;
    pd_vec3* corners;   /* 3 per triangle, in tree order */
    uint32_t* triangle; /* tree order -> the mesh's triangle index */
} pd_bvh;

typedef struct pd_bvh_hit {
    size_t slot;   /* the triangle's position in tree order (index into corners / 3) */
    pd_vec3 point; /* closest point on the mesh (m) */
    pd_real dist2; /* squared distance to it (m^2) */
    pd_tri_feature feature;
} pd_bvh_hit;

/* PD_ERR_MESH without triangles, PD_ERR_TOO_LARGE beyond 2^32 - 1 triangles,
 * PD_ERR_OUT_OF_MEMORY. */
pd_status pd_bvh_build(const pd_mesh* mesh, pd_bvh* bvh);
void pd_bvh_free(pd_bvh* bvh);

/* The closest point of the mesh to p. Of equally close triangles the one met first in the
 * fixed traversal order wins. */
pd_bvh_hit pd_bvh_closest(const pd_bvh* bvh, pd_vec3 p);

#endif
