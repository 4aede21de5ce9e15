/* Signed distance and outward unit normal of a point to a triangle mesh (mesh colliders).
 *
 * The distance is to the closest point of the mesh (pd_bvh). Its sign depends on the mesh:
 * - Closed, manifold, consistently oriented (every edge in exactly two triangles that run it in
 *   opposite directions): negative where the point lies behind the angle-weighted pseudo-normal
 *   of the closest feature (face, edge or vertex), the test of Baerentzen & Aanaes 2005 ("Signed
 *   distance computation using the angle weighted pseudonormal", IEEE TVCG 11(3), Theorem 1),
 *   exact for such meshes. A mesh wound inward (negative enclosed volume) is turned outward.
 * - Closed but not manifold or not consistently oriented (edges with more than two triangles,
 *   or a pair running an edge the same way): negative where the generalised winding number is
 *   >= 1/2 (pd_mesh_tree, the same test the sampler fills meshes with), which tolerates such
 *   defects.
 * - Open (some edge belongs to one triangle only; a bowl, a sheet, a scan with holes): an open
 *   surface encloses nothing, and far from it neither the pseudo-normal nor the winding number
 *   tells a side (a point beside a bowl is "behind" its wall by the one and "half inside" by the
 *   other). So an open mesh is a wall of the given `thickness` on the back side of its faces
 *   (the side opposite the counter-clockwise normal): the solid is every point behind the
 *   surface within `thickness` of it. Its front face is the mesh itself, so particles rest
 *   exactly on the mesh (as on an analytic plane), and its signed distance is the slab's:
 *   -min(s, thickness - s) inside, s - thickness beyond it. A particle that penetrates more than
 *   thickness / 2 in one step leaves through the back face, so choose thickness at least twice
 *   the largest distance a particle moves in a step (a ball dropped 0.3 m moves 8 cm in a step
 *   of 1/30 s: thickness 0.2 m). A one-sided wall (everything within thickness behind the faces
 *   pushed to the front) would forgive deeper steps but teleport particles that meet the mesh
 *   from behind (a ball falling beside a bowl onto its outside) through it; the slab does not.
 * `flip` exchanges the sides: for a closed mesh the solid becomes everything outside it (a
 * container), for an open mesh the wall moves to the front of the faces.
 *
 * Built once (pd_alloc); a query allocates nothing and only reads, so queries may run in
 * parallel, and it is deterministic. */
#ifndef PD_MESH_SDF_H
#define PD_MESH_SDF_H

#include <stddef.h>

#include "geometry/bvh.h"
#include "geometry/mesh.h"
#include "peridot/types.h"

typedef enum pd_mesh_sign {
    PD_MESH_SIGN_PSEUDO_NORMAL, /* closed manifold mesh */
    PD_MESH_SIGN_WINDING,       /* closed, non-manifold or inconsistently oriented */
    PD_MESH_SIGN_SHELL,         /* open mesh: a wall of `thickness` behind the faces */
} pd_mesh_sign;

typedef struct pd_mesh_sdf {
    pd_bvh bvh;
    pd_mesh_tree winding; /* PD_MESH_SIGN_WINDING only */
    pd_vec3* pseudo;      /* 7 per triangle in tree order, by pd_tri_feature: unit normals */
    pd_mesh_sign sign;
    pd_real orientation; /* +1, or -1 for a closed mesh wound inward */
    pd_real flip;        /* +1, or -1 when the sides are exchanged */
    pd_real thickness;   /* m, open meshes */
    pd_real tiny;        /* below this distance (m) the normal is the pseudo-normal */
    size_t boundary_edges, nonmanifold_edges, misoriented_edges;
    pd_vec3 lo, hi; /* the mesh's bounds (m) */
    /* A coarse lattice of exact signed distances over the bounds and a margin around them
     * (pd_mesh_sdf_lower_bound): nodes origin + cell * (i, j, k), i fastest. */
    pd_real* coarse;
    int nodes[3];
    pd_vec3 origin;
    pd_real cell;
} pd_mesh_sdf;

/* Builds the distance field of `mesh` (which need not outlive it). thickness (m): the wall of an
 * open mesh; must be > 0 for an open mesh and 0 for a closed one. Errors point at
 * "<path>.thickness" (PD_ERR_BAD_SCENE); out of memory: PD_ERR_OUT_OF_MEMORY. */
pd_status pd_mesh_sdf_build(const pd_mesh* mesh, pd_real thickness, int flip, pd_mesh_sdf* out,
                            const char* path, pd_error* err);
void pd_mesh_sdf_free(pd_mesh_sdf* sdf);

/* Signed distance of p (negative in the solid) and the unit normal towards the allowed side
 * (normal may be NULL): off the surface the direction from the closest point to p (reversed in
 * the solid), on it the closest feature's pseudo-normal, so that p - d n is the nearest point
 * of the solid's surface (the mesh, or for an open mesh possibly its wall's back face). */
pd_real pd_mesh_sdf_eval(const pd_mesh_sdf* sdf, pd_vec3 p, pd_vec3* normal);

/* A lower bound on pd_mesh_sdf_eval(sdf, p) from the coarse lattice, without a distance query:
 * the signed distance changes by at most the distance moved (it is 1-Lipschitz), so it is at
 * least d(c) - |p - c| at each corner c of p's lattice cell. A caller that only needs to know
 * whether p is within some distance of the solid (a collider's projection) skips the exact
 * query when the bound says it is not: deep inside a container (a point on an hourglass's axis
 * is nearly equally far from a whole ring of triangles) that query visits most of the mesh.
 * Kept for closed manifold meshes only (others: -infinity, every query exact). */
pd_real pd_mesh_sdf_lower_bound(const pd_mesh_sdf* sdf, pd_vec3 p);

#endif
