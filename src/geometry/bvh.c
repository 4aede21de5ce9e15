/* Closest point on a triangle mesh through a bounding volume hierarchy of axis-aligned boxes.
 * The point-triangle test follows the Voronoi-region construction of Ericson, Real-Time
 * Collision Detection (2005), sec. 5.1.5: the barycentric-style dot products d1..d6 decide
 * whether p projects onto a vertex, an edge or the face. The tree is a median split along the
 * longest axis of the triangle centroids; a query descends nearer child first and prunes boxes
 * farther than the best distance so far. */
#include "geometry/bvh.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "geometry/median_split.h"

enum { BVH_LEAF_SIZE = 4, BVH_STACK = 128 };

/* ---- point-triangle ---- */

/* Closest point to p on the segment ab (a zero-length segment gives a). */
static pd_vec3 closest_on_segment(pd_vec3 p, pd_vec3 a, pd_vec3 b, pd_real* t_out) {
    pd_vec3 ab = pd_v3_sub(b, a);
    pd_real len2 = pd_v3_len2(ab);
    pd_real t = len2 > 0 ? pd_v3_dot(pd_v3_sub(p, a), ab) / len2 : 0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    *t_out = t;
    return pd_v3_madd(a, t, ab);
}

/* Feature of a segment point at parameter t: its first end, its second end, or the edge. */
static pd_tri_feature segment_feature(pd_real t, pd_tri_feature v0, pd_tri_feature v1,
                                      pd_tri_feature edge) {
    return t <= 0 ? v0 : (t >= 1 ? v1 : edge);
}

/* A triangle without area: the nearest of its three edges. */
static pd_vec3 closest_on_degenerate(pd_vec3 p, pd_vec3 a, pd_vec3 b, pd_vec3 c,
                                     pd_tri_feature* feature) {
    pd_real t0, t1, t2;
    pd_vec3 q0 = closest_on_segment(p, a, b, &t0);
    pd_vec3 q1 = closest_on_segment(p, b, c, &t1);
    pd_vec3 q2 = closest_on_segment(p, c, a, &t2);
    pd_real e0 = pd_v3_len2(pd_v3_sub(p, q0)), e1 = pd_v3_len2(pd_v3_sub(p, q1)),
            e2 = pd_v3_len2(pd_v3_sub(p, q2));
    if (e0 <= e1 && e0 <= e2) {
        *feature = segment_feature(t0, PD_TRI_VERTEX_A, PD_TRI_VERTEX_B, PD_TRI_EDGE_AB);
        return q0;
    }
    if (e1 <= e2) {
        *feature = segment_feature(t1, PD_TRI_VERTEX_B, PD_TRI_VERTEX_C, PD_TRI_EDGE_BC);
        return q1;
    }
    *feature = segment_feature(t2, PD_TRI_VERTEX_C, PD_TRI_VERTEX_A, PD_TRI_EDGE_CA);
    return q2;
}

pd_vec3 pd_closest_point_on_triangle(pd_vec3 p, pd_vec3 a, pd_vec3 b, pd_vec3 c,
                                     pd_tri_feature* feature) {
    pd_vec3 ab = pd_v3_sub(b, a), ac = pd_v3_sub(c, a);
    pd_real cross2 = pd_v3_len2(pd_v3_cross(ab, ac));
    if (!(cross2 > 1e-24 * pd_v3_len2(ab) * pd_v3_len2(ac)))
        return closest_on_degenerate(p, a, b, c, feature);
    /* Vertex region of a: p - a points away from both edges leaving a. */
    pd_vec3 ap = pd_v3_sub(p, a);
    pd_real d1 = pd_v3_dot(ab, ap), d2 = pd_v3_dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) {
        *feature = PD_TRI_VERTEX_A;
        return a;
    }
    pd_vec3 bp = pd_v3_sub(p, b);
    pd_real d3 = pd_v3_dot(ab, bp), d4 = pd_v3_dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) {
        *feature = PD_TRI_VERTEX_B;
        return b;
    }
    /* Edge ab: vc is (twice) the signed area of p's projection with a and b. d1 - d3 = |ab|^2. */
    pd_real vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        *feature = PD_TRI_EDGE_AB;
        return pd_v3_madd(a, d1 / (d1 - d3), ab);
    }
    pd_vec3 cp = pd_v3_sub(p, c);
    pd_real d5 = pd_v3_dot(ab, cp), d6 = pd_v3_dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) {
        *feature = PD_TRI_VERTEX_C;
        return c;
    }
    /* Edge ca: d2 - d6 = |ac|^2. */
    pd_real vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        *feature = PD_TRI_EDGE_CA;
        return pd_v3_madd(a, d2 / (d2 - d6), ac);
    }
    /* Edge bc: (d4 - d3) + (d5 - d6) = |bc|^2. */
    pd_real va = d3 * d6 - d5 * d4;
    if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        *feature = PD_TRI_EDGE_BC;
        pd_real w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return pd_v3_madd(b, w, pd_v3_sub(c, b));
    }
    /* Inside the face: barycentric (u, v, w) proportional to (va, vb, vc). */
    pd_real inv = 1 / (va + vb + vc);
    *feature = PD_TRI_FACE;
    return pd_v3_add(a, pd_v3_add(pd_v3_scale(ab, vb * inv), pd_v3_scale(ac, vc * inv)));
}

/* ---- building ---- */

typedef struct bvh_builder {
    const pd_mesh* mesh;
    pd_bvh* bvh;
    uint32_t* order; /* mesh triangle indices, permuted into tree order */
    pd_split_key* keys;
    pd_vec3* centroids;
    size_t next_node;
} bvh_builder;

static size_t bvh_node_count(size_t n) {
    if (n <= BVH_LEAF_SIZE)
        return 1;
    return 1 + bvh_node_count(n / 2) + bvh_node_count(n - n / 2);
}

static pd_vec3 corner(const pd_mesh* mesh, size_t t, int k) {
    return mesh->vertices[mesh->triangles[3 * t + (size_t)k]];
}

static void node_box(bvh_builder* b, size_t begin, size_t end, pd_bvh_node* node) {
    pd_vec3 lo = corner(b->mesh, b->order[begin], 0), hi = lo;
    for (size_t i = begin; i < end; ++i)
        for (int k = 0; k < 3; ++k) {
            lo = pd_v3_min(lo, corner(b->mesh, b->order[i], k));
            hi = pd_v3_max(hi, corner(b->mesh, b->order[i], k));
        }
    node->lo = lo;
    node->hi = hi;
}

/* Nodes in pre-order; depth is about log2(n / leaf size) + 1, far below BVH_STACK. */
static void build_node(bvh_builder* b, size_t begin, size_t end) {
    size_t id = b->next_node++;
    pd_bvh_node* node = &b->bvh->nodes[id];
    node_box(b, begin, end, node);
    if (end - begin <= BVH_LEAF_SIZE) {
        node->first = (uint32_t)begin;
        node->count = (uint32_t)(end - begin);
        node->right = 0;
        return;
    }
    node->first = 0;
    node->count = 0;
    pd_sort_along_longest_axis(b->centroids, b->order, b->keys, begin, end);
    size_t mid = begin + (end - begin) / 2;
    build_node(b, begin, mid);
    b->bvh->nodes[id].right = (uint32_t)b->next_node;
    build_node(b, mid, end);
}

static void free_builder(bvh_builder* b, size_t n) {
    if (b->keys)
        PD_FREE_ARRAY(b->keys, pd_split_key, n);
    if (b->centroids)
        PD_FREE_ARRAY(b->centroids, pd_vec3, n);
}

pd_status pd_bvh_build(const pd_mesh* mesh, pd_bvh* bvh) {
    memset(bvh, 0, sizeof *bvh);
    size_t n = mesh->triangle_count;
    if (n == 0)
        return PD_ERR_MESH;
    if (n >= UINT32_MAX / 3)
        return PD_ERR_TOO_LARGE;
    bvh->triangle_count = n;
    bvh->node_count = bvh_node_count(n);
    bvh->nodes = PD_NEW_ARRAY(pd_bvh_node, bvh->node_count);
    bvh->corners = PD_NEW_ARRAY(pd_vec3, 3 * n);
    bvh->triangle = PD_NEW_ARRAY(uint32_t, n);
    bvh_builder b = {
        mesh, bvh, bvh->triangle, PD_NEW_ARRAY(pd_split_key, n), PD_NEW_ARRAY(pd_vec3, n), 0};
    if (!bvh->nodes || !bvh->corners || !bvh->triangle || !b.keys || !b.centroids) {
        free_builder(&b, n);
        pd_bvh_free(bvh);
        return PD_ERR_OUT_OF_MEMORY;
    }
    for (size_t t = 0; t < n; ++t) {
        b.order[t] = (uint32_t)t;
        pd_vec3 sum =
            pd_v3_add(pd_v3_add(corner(mesh, t, 0), corner(mesh, t, 1)), corner(mesh, t, 2));
        b.centroids[t] = pd_v3_scale(sum, 1.0 / 3.0);
    }
    build_node(&b, 0, n);
    for (size_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k)
            bvh->corners[3 * i + (size_t)k] = corner(mesh, bvh->triangle[i], k);
    free_builder(&b, n);
    return PD_OK;
}

void pd_bvh_free(pd_bvh* bvh) {
    if (bvh->nodes)
        PD_FREE_ARRAY(bvh->nodes, pd_bvh_node, bvh->node_count);
    if (bvh->corners)
        PD_FREE_ARRAY(bvh->corners, pd_vec3, 3 * bvh->triangle_count);
    if (bvh->triangle)
        PD_FREE_ARRAY(bvh->triangle, uint32_t, bvh->triangle_count);
    memset(bvh, 0, sizeof *bvh);
}

/* ---- query ---- */

/* The larger of a and b, for finite arguments (fmax's NaN rules make it a library call). */
static inline pd_real larger(pd_real a, pd_real b) {
    return a > b ? a : b;
}

/* Squared distance from p to the box (0 inside). */
static pd_real box_dist2(const pd_bvh_node* node, pd_vec3 p) {
    pd_real dx = larger(larger(node->lo.x - p.x, p.x - node->hi.x), 0);
    pd_real dy = larger(larger(node->lo.y - p.y, p.y - node->hi.y), 0);
    pd_real dz = larger(larger(node->lo.z - p.z, p.z - node->hi.z), 0);
    return dx * dx + dy * dy + dz * dz;
}

static void leaf_closest(const pd_bvh* bvh, const pd_bvh_node* node, pd_vec3 p, pd_bvh_hit* best) {
    for (uint32_t i = node->first; i < node->first + node->count; ++i) {
        const pd_vec3* c = &bvh->corners[3 * (size_t)i];
        pd_tri_feature f;
        pd_vec3 q = pd_closest_point_on_triangle(p, c[0], c[1], c[2], &f);
        pd_real d2 = pd_v3_len2(pd_v3_sub(p, q));
        if (d2 < best->dist2) {
            best->dist2 = d2;
            best->point = q;
            best->slot = i;
            best->feature = f;
        }
    }
}

/* A node waiting to be searched and its box's squared distance, found when it was pushed (its
 * parent compares both children's to order them): popped, it is pruned by that same number
 * against the best found since, not recomputed. */
typedef struct bvh_pending {
    uint32_t node;
    pd_real dist2;
} bvh_pending;

pd_bvh_hit pd_bvh_closest(const pd_bvh* bvh, pd_vec3 p) {
    pd_bvh_hit best = {0, p, INFINITY, PD_TRI_FACE};
    if (bvh->node_count == 0)
        return best;
    bvh_pending stack[BVH_STACK];
    int top = 0;
    stack[top++] = (bvh_pending){0, box_dist2(&bvh->nodes[0], p)};
    while (top > 0) {
        bvh_pending at = stack[--top];
        if (!(at.dist2 < best.dist2))
            continue;
        const pd_bvh_node* node = &bvh->nodes[at.node];
        if (node->count > 0) {
            leaf_closest(bvh, node, p, &best);
            continue;
        }
        uint32_t left = at.node + 1, right = node->right;
        pd_real dl = box_dist2(&bvh->nodes[left], p), dr = box_dist2(&bvh->nodes[right], p);
        /* The nearer child is pushed last, so it is searched first and prunes the other. */
        if (dl <= dr) {
            stack[top++] = (bvh_pending){right, dr};
            stack[top++] = (bvh_pending){left, dl};
        } else {
            stack[top++] = (bvh_pending){left, dl};
            stack[top++] = (bvh_pending){right, dr};
        }
    }
    return best;
}
