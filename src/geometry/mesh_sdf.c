/* Signed distance to a triangle mesh: closest point from the BVH, sign from the angle-weighted
 * pseudo-normals of Baerentzen & Aanaes 2005 (face normal for a face, the sum of the two face
 * normals for an edge, sec. 3, and sum_i alpha_i n_i over the incident faces for a vertex,
 * eq. 1), from the generalised winding number for defective closed meshes, or a wall behind an
 * open mesh (see mesh_sdf.h for why). Topology (which edges are open, non-manifold or
 * misoriented) is read after welding vertices at identical positions, because importers keep
 * vertices apart that differ only in texture coordinates or normals. */
#include "geometry/mesh_sdf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "parallel/parallel.h"

enum { PSEUDO_PER_TRIANGLE = 7 };

/* ---- welding ---- */

typedef struct weld_key {
    pd_vec3 p;
    uint32_t index;
} weld_key;

static int same_position(pd_vec3 a, pd_vec3 b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

static int compare_positions(const void* a, const void* b) {
    const weld_key *x = a, *y = b;
    if (x->p.x != y->p.x)
        return x->p.x < y->p.x ? -1 : 1;
    if (x->p.y != y->p.y)
        return x->p.y < y->p.y ? -1 : 1;
    if (x->p.z != y->p.z)
        return x->p.z < y->p.z ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

/* weld[v] = the lowest index of a vertex at v's exact position. */
static pd_status weld_vertices(const pd_mesh* mesh, uint32_t* weld) {
    size_t n = mesh->vertex_count;
    weld_key* keys = PD_NEW_ARRAY(weld_key, n);
    if (!keys)
        return PD_ERR_OUT_OF_MEMORY;
    for (size_t v = 0; v < n; ++v)
        keys[v] = (weld_key){mesh->vertices[v], (uint32_t)v};
    qsort(keys, n, sizeof(weld_key), compare_positions);
    for (size_t i = 0; i < n; ++i) {
        int same = i > 0 && same_position(keys[i].p, keys[i - 1].p);
        weld[keys[i].index] = same ? weld[keys[i - 1].index] : keys[i].index;
    }
    PD_FREE_ARRAY(keys, weld_key, n);
    return PD_OK;
}

/* ---- edges ---- */

typedef struct edge_rec {
    uint32_t lo, hi; /* welded end vertices, lo < hi */
    uint32_t slot;   /* triangle in tree order */
    uint8_t k;       /* edge k runs from corner k to corner k+1 */
    uint8_t forward; /* 1 if it runs lo -> hi */
} edge_rec;

static int compare_edges(const void* a, const void* b) {
    const edge_rec *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return x->k < y->k ? -1 : (x->k > y->k);
}

static pd_vec3 unit_or_zero(pd_vec3 v) {
    pd_real len = pd_v3_len(v);
    return len > 0 ? pd_v3_scale(v, 1 / len) : pd_v3(0, 0, 0);
}

static pd_vec3 face_normal(const pd_vec3* c) {
    return unit_or_zero(pd_v3_cross(pd_v3_sub(c[1], c[0]), pd_v3_sub(c[2], c[0])));
}

/* Interior angle of the triangle at corner k (rad); 0 for a degenerate corner. */
static pd_real corner_angle(const pd_vec3* c, int k) {
    pd_vec3 u = pd_v3_sub(c[(k + 1) % 3], c[k]), v = pd_v3_sub(c[(k + 2) % 3], c[k]);
    return atan2(pd_v3_len(pd_v3_cross(u, v)), pd_v3_dot(u, v));
}

static uint32_t welded_corner(const pd_mesh* mesh, const uint32_t* weld, const pd_bvh* bvh,
                              size_t slot, int k) {
    return weld[mesh->triangles[3 * (size_t)bvh->triangle[slot] + (size_t)k]];
}

/* Sums the face normals over each run of equal edges into every triangle's edge pseudo-normal,
 * and counts open, non-manifold and misoriented edges. */
static void edge_pseudo_normals(pd_mesh_sdf* sdf, edge_rec* edges, size_t m) {
    for (size_t i = 0; i < m;) {
        size_t j = i;
        pd_vec3 sum = pd_v3(0, 0, 0);
        int forward = 0;
        while (j < m && edges[j].lo == edges[i].lo && edges[j].hi == edges[i].hi) {
            sum = pd_v3_add(sum, sdf->pseudo[PSEUDO_PER_TRIANGLE * edges[j].slot + PD_TRI_FACE]);
            forward += edges[j].forward;
            ++j;
        }
        size_t count = j - i;
        sdf->boundary_edges += count == 1;
        sdf->nonmanifold_edges += count > 2;
        sdf->misoriented_edges += count == 2 && forward != 1;
        pd_vec3 n = unit_or_zero(sum);
        for (size_t e = i; e < j; ++e)
            sdf->pseudo[PSEUDO_PER_TRIANGLE * edges[e].slot + PD_TRI_EDGE_AB + edges[e].k] = n;
        i = j;
    }
}

static pd_status build_edges(pd_mesh_sdf* sdf, const pd_mesh* mesh, const uint32_t* weld) {
    size_t nt = sdf->bvh.triangle_count, m = 3 * nt;
    edge_rec* edges = PD_NEW_ARRAY(edge_rec, m);
    if (!edges)
        return PD_ERR_OUT_OF_MEMORY;
    for (size_t s = 0; s < nt; ++s)
        for (int k = 0; k < 3; ++k) {
            uint32_t u = welded_corner(mesh, weld, &sdf->bvh, s, k);
            uint32_t v = welded_corner(mesh, weld, &sdf->bvh, s, (k + 1) % 3);
            edges[3 * s + (size_t)k] =
                (edge_rec){u < v ? u : v, u < v ? v : u, (uint32_t)s, (uint8_t)k, u < v};
        }
    qsort(edges, m, sizeof(edge_rec), compare_edges);
    edge_pseudo_normals(sdf, edges, m);
    PD_FREE_ARRAY(edges, edge_rec, m);
    return PD_OK;
}

/* Vertex pseudo-normals: sum over incident faces of angle * face normal (Baerentzen eq. 1). */
static pd_status build_vertex_normals(pd_mesh_sdf* sdf, const pd_mesh* mesh, const uint32_t* weld) {
    pd_vec3* acc = PD_NEW_ARRAY(pd_vec3, mesh->vertex_count);
    if (!acc)
        return PD_ERR_OUT_OF_MEMORY;
    size_t nt = sdf->bvh.triangle_count;
    for (size_t s = 0; s < nt; ++s) {
        const pd_vec3* c = &sdf->bvh.corners[3 * s];
        pd_vec3 n = sdf->pseudo[PSEUDO_PER_TRIANGLE * s + PD_TRI_FACE];
        for (int k = 0; k < 3; ++k) {
            uint32_t v = welded_corner(mesh, weld, &sdf->bvh, s, k);
            acc[v] = pd_v3_madd(acc[v], corner_angle(c, k), n);
        }
    }
    for (size_t s = 0; s < nt; ++s)
        for (int k = 0; k < 3; ++k)
            sdf->pseudo[PSEUDO_PER_TRIANGLE * s + PD_TRI_VERTEX_A + k] =
                unit_or_zero(acc[welded_corner(mesh, weld, &sdf->bvh, s, k)]);
    PD_FREE_ARRAY(acc, pd_vec3, mesh->vertex_count);
    return PD_OK;
}

static pd_status build_pseudo_normals(pd_mesh_sdf* sdf, const pd_mesh* mesh) {
    size_t nt = sdf->bvh.triangle_count;
    sdf->pseudo = PD_NEW_ARRAY(pd_vec3, PSEUDO_PER_TRIANGLE * nt);
    uint32_t* weld = PD_NEW_ARRAY(uint32_t, mesh->vertex_count);
    pd_status st = sdf->pseudo && weld ? weld_vertices(mesh, weld) : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK) {
        for (size_t s = 0; s < nt; ++s)
            sdf->pseudo[PSEUDO_PER_TRIANGLE * s + PD_TRI_FACE] =
                face_normal(&sdf->bvh.corners[3 * s]);
        st = build_edges(sdf, mesh, weld);
    }
    if (st == PD_OK)
        st = build_vertex_normals(sdf, mesh, weld);
    if (weld)
        PD_FREE_ARRAY(weld, uint32_t, mesh->vertex_count);
    return st;
}

/* ---- building ---- */

static pd_status choose_sign(pd_mesh_sdf* sdf, const pd_mesh* mesh, pd_real thickness,
                             const char* path, pd_error* err) {
    char key[256];
    snprintf(key, sizeof key, "%s%sthickness", path && path[0] ? path : "",
             path && path[0] ? "." : "");
    if (sdf->boundary_edges > 0) {
        if (!(thickness > 0) || !isfinite(thickness))
            return pd_fail(err, PD_ERR_BAD_SCENE, key,
                           "the mesh is open (%zu edges belong to one triangle only), so it has "
                           "no inside: give the thickness (m) of the wall behind its faces, at "
                           "least twice the distance a particle moves in one step",
                           sdf->boundary_edges);
        sdf->sign = PD_MESH_SIGN_SHELL;
        sdf->thickness = thickness;
        return PD_OK;
    }
    if (thickness != 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, key,
                       "the mesh is closed, so it is a solid: thickness is only for open meshes");
    sdf->orientation = pd_mesh_signed_volume(mesh) < 0 ? -1 : 1;
    if (sdf->nonmanifold_edges == 0 && sdf->misoriented_edges == 0) {
        sdf->sign = PD_MESH_SIGN_PSEUDO_NORMAL;
        return PD_OK;
    }
    sdf->sign = PD_MESH_SIGN_WINDING;
    if (pd_mesh_tree_build(mesh, &sdf->winding) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, path, "out of memory indexing the mesh");
    return PD_OK;
}

/* ---- the coarse lattice of pd_mesh_sdf_lower_bound ---- */

/* Cells along the bounds' longest side, and the margin around the bounds in cells. */
#define COARSE_CELLS  32
#define COARSE_MARGIN 2

static size_t coarse_count(const pd_mesh_sdf* sdf) {
    return (size_t)sdf->nodes[0] * (size_t)sdf->nodes[1] * (size_t)sdf->nodes[2];
}

static void coarse_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    pd_mesh_sdf* sdf = ctx;
    size_t nx = (size_t)sdf->nodes[0], ny = (size_t)sdf->nodes[1];
    for (size_t k = begin; k < end; ++k) {
        pd_vec3 c = pd_v3((pd_real)(k % nx), (pd_real)(k / nx % ny), (pd_real)(k / (nx * ny)));
        sdf->coarse[k] = pd_mesh_sdf_eval(sdf, pd_v3_madd(sdf->origin, sdf->cell, c), NULL);
    }
}

static pd_status build_coarse_lattice(pd_mesh_sdf* sdf) {
    /* Only a closed manifold mesh's signed distance is 1-Lipschitz: an open mesh's wall jumps
     * by its thickness where a point passes from behind the faces to beside them, and a
     * defective mesh's winding number need not change sign at the mesh. */
    if (sdf->sign != PD_MESH_SIGN_PSEUDO_NORMAL)
        return PD_OK;
    pd_vec3 e = pd_v3_sub(sdf->hi, sdf->lo);
    pd_real longest = fmax(fmax(e.x, e.y), e.z);
    if (!(longest > 0))
        return PD_OK; /* a degenerate mesh: no bound, every query exact */
    sdf->cell = longest / COARSE_CELLS;
    pd_real margin = COARSE_MARGIN * sdf->cell;
    sdf->origin = pd_v3_sub(sdf->lo, pd_v3(margin, margin, margin));
    pd_real extent[3] = {e.x, e.y, e.z};
    for (int a = 0; a < 3; ++a)
        sdf->nodes[a] = (int)ceil(extent[a] / sdf->cell) + 2 * COARSE_MARGIN + 1;
    sdf->coarse = PD_NEW_ARRAY(pd_real, coarse_count(sdf));
    if (!sdf->coarse)
        return PD_ERR_OUT_OF_MEMORY;
    pd_parallel_for(coarse_count(sdf), 256, coarse_range, sdf);
    return PD_OK;
}

pd_real pd_mesh_sdf_lower_bound(const pd_mesh_sdf* sdf, pd_vec3 p) {
    if (!sdf->coarse || !(isfinite(p.x) && isfinite(p.y) && isfinite(p.z)))
        return -INFINITY; /* a runaway particle's NaN would index anywhere: the exact query */
    pd_real f[3] = {(p.x - sdf->origin.x) / sdf->cell, (p.y - sdf->origin.y) / sdf->cell,
                    (p.z - sdf->origin.z) / sdf->cell};
    int base[3];
    for (int a = 0; a < 3; ++a) { /* the cell holding p, or the nearest one outside */
        pd_real lo = floor(f[a]), top = (pd_real)(sdf->nodes[a] - 2);
        base[a] = (int)(lo < 0 ? 0 : lo > top ? top : lo);
    }
    pd_real best = -INFINITY;
    for (int corner = 0; corner < 8; ++corner) {
        int i = base[0] + (corner & 1), j = base[1] + (corner >> 1 & 1),
            k = base[2] + (corner >> 2);
        pd_vec3 c = pd_v3_madd(sdf->origin, sdf->cell, pd_v3((pd_real)i, (pd_real)j, (pd_real)k));
        size_t at =
            ((size_t)k * (size_t)sdf->nodes[1] + (size_t)j) * (size_t)sdf->nodes[0] + (size_t)i;
        pd_real bound = sdf->coarse[at] - pd_v3_len(pd_v3_sub(p, c));
        best = bound > best ? bound : best;
    }
    return best;
}

pd_status pd_mesh_sdf_build(const pd_mesh* mesh, pd_real thickness, int flip, pd_mesh_sdf* out,
                            const char* path, pd_error* err) {
    memset(out, 0, sizeof *out);
    out->orientation = 1;
    out->flip = flip ? -1 : 1;
    pd_status st = pd_bvh_build(mesh, &out->bvh);
    if (st == PD_OK)
        st = build_pseudo_normals(out, mesh);
    if (st != PD_OK) {
        pd_mesh_sdf_free(out);
        return pd_fail(err, st, path, "cannot index the mesh (%s)", pd_status_string(st));
    }
    pd_mesh_bounds(mesh, &out->lo, &out->hi);
    out->tiny = 1e-12 * pd_v3_len(pd_v3_sub(out->hi, out->lo));
    st = choose_sign(out, mesh, thickness, path, err);
    if (st == PD_OK && build_coarse_lattice(out) != PD_OK)
        st = pd_fail(err, PD_ERR_OUT_OF_MEMORY, path, "out of memory");
    if (st != PD_OK)
        pd_mesh_sdf_free(out);
    return st;
}

void pd_mesh_sdf_free(pd_mesh_sdf* sdf) {
    if (sdf->coarse)
        PD_FREE_ARRAY(sdf->coarse, pd_real, coarse_count(sdf));
    if (sdf->pseudo)
        PD_FREE_ARRAY(sdf->pseudo, pd_vec3, PSEUDO_PER_TRIANGLE * sdf->bvh.triangle_count);
    pd_bvh_free(&sdf->bvh);
    pd_mesh_tree_free(&sdf->winding);
    memset(sdf, 0, sizeof *sdf);
}

/* ---- query ---- */

/* Open mesh: the wall occupies [0, thickness) behind the (possibly flipped) faces. */
static pd_real shell_distance(const pd_mesh_sdf* sdf, pd_real s, int behind, pd_vec3 away,
                              pd_vec3* n) {
    pd_real t = sdf->thickness;
    if (!behind) {
        *n = away;
        return s;
    }
    if (s <= 0.5 * t) { /* nearer the front face: out through the mesh itself */
        *n = pd_v3_scale(away, -1);
        return -s;
    }
    *n = away; /* nearer the back face, or beyond the wall */
    return s < t ? -(t - s) : s - t;
}

pd_real pd_mesh_sdf_eval(const pd_mesh_sdf* sdf, pd_vec3 p, pd_vec3* normal) {
    pd_bvh_hit hit = pd_bvh_closest(&sdf->bvh, p);
    pd_real s = sqrt(hit.dist2);
    /* The pseudo-normal of the closest feature, turned to the mesh's outward side. */
    pd_real side = sdf->orientation * (sdf->sign == PD_MESH_SIGN_SHELL ? sdf->flip : 1);
    pd_vec3 pn = pd_v3_scale(sdf->pseudo[PSEUDO_PER_TRIANGLE * hit.slot + hit.feature], side);
    pd_vec3 diff = pd_v3_sub(p, hit.point);
    int behind;
    if (sdf->sign == PD_MESH_SIGN_WINDING)
        behind = sdf->orientation * pd_mesh_tree_winding_number(&sdf->winding, p) >= 0.5;
    else
        behind = pd_v3_dot(diff, pn) < 0;
    /* Unit direction from the surface towards p (on the surface: the side p is counted on). */
    pd_vec3 away = s > sdf->tiny ? pd_v3_scale(diff, 1 / s) : pd_v3_scale(pn, behind ? -1 : 1);
    pd_vec3 n;
    pd_real d;
    if (sdf->sign == PD_MESH_SIGN_SHELL) {
        d = shell_distance(sdf, s, behind, away, &n);
    } else {
        d = behind ? -s : s;
        n = behind ? pd_v3_scale(away, -1) : away;
        d *= sdf->flip;
        n = pd_v3_scale(n, sdf->flip);
    }
    if (normal)
        *normal = n;
    return d;
}
