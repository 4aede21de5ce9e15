/* Triangle meshes: import into one triangle soup (PLY by our reader, geometry/ply_mesh.h; OBJ
 * and STL through Assimp's C API), and the generalised winding number of Jacobson, Kavan,
 * Sorkine-Hornung 2013 ("Robust Inside-Outside Segmentation using Generalized Winding
 * Numbers", eq. 2-3), with each triangle's signed solid angle from Van Oosterom & Strackee 1983
 * (tan(Omega/2) = det[a b c] / (|a||b||c| + (a.b)|c| + (b.c)|a| + (c.a)|b|)). The tree
 * evaluates it fast with the far-field Taylor expansion of Barill, Dickson, Schmidt, Levin,
 * Jacobson 2018 ("Fast Winding Numbers for Soups and Clouds", sec. 3.2-3.3), kept to second
 * order. */
#define _POSIX_C_SOURCE 200809L /* stat */
#include "geometry/mesh.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "core/alloc.h"
#include "core/error.h"
#include "geometry/median_split.h"
#include "geometry/ply_mesh.h"

/* ---- loading ---- */

/* JSON path of a key inside the shape object, e.g. "bodies[1].shape" + "path". */
static void key_path(char* out, size_t cap, const char* shape_path, const char* key) {
    if (shape_path && shape_path[0])
        snprintf(out, cap, "%s.%s", shape_path, key);
    else
        snprintf(out, cap, "%s", key);
}

/* Rodrigues' formula: v rotated by `radians` about the unit axis k. */
static pd_vec3 rotate_about(pd_vec3 v, pd_vec3 k, pd_real radians) {
    pd_real c = cos(radians), s = sin(radians);
    pd_vec3 r = pd_v3_scale(v, c);
    r = pd_v3_madd(r, s, pd_v3_cross(k, v));
    return pd_v3_madd(r, pd_v3_dot(k, v) * (1 - c), k);
}

static pd_vec3 transform_vertex(const pd_shape_def* shape, pd_vec3 v, pd_vec3 unit_axis,
                                int rotate) {
    v = pd_v3_scale(v, shape->scale);
    if (rotate)
        v = rotate_about(v, unit_axis, shape->rotate_degrees * (PD_PI / 180.0));
    return pd_v3_add(v, shape->translate);
}

/* Triangles of a mesh's faces: a polygon of k corners as a fan of k - 2 (points and lines
 * none). Ours, not Assimp's Triangulate step, which asserted and aborted the program on faces
 * its own validation let through (fuzzing, tests/bad_input/fuzz/mesh/). */
static size_t count_triangles(const struct aiMesh* m) {
    size_t n = 0;
    for (unsigned f = 0; f < m->mNumFaces; ++f)
        n += m->mFaces[f].mNumIndices >= 3 ? m->mFaces[f].mNumIndices - 2 : 0;
    return n;
}

/* Copies the scene's vertices and its faces as triangles (count_triangles). */
static void copy_scene(const struct aiScene* scene, pd_mesh* out) {
    size_t nv = 0, nt = 0;
    for (unsigned i = 0; i < scene->mNumMeshes; ++i) {
        const struct aiMesh* m = scene->mMeshes[i];
        for (unsigned v = 0; v < m->mNumVertices; ++v)
            out->vertices[nv + v] = pd_v3(m->mVertices[v].x, m->mVertices[v].y, m->mVertices[v].z);
        for (unsigned f = 0; f < m->mNumFaces; ++f) {
            const struct aiFace* face = &m->mFaces[f];
            for (unsigned c = 2; c < face->mNumIndices; ++c, ++nt) {
                out->triangles[3 * nt] = (uint32_t)(nv + face->mIndices[0]);
                out->triangles[3 * nt + 1] = (uint32_t)(nv + face->mIndices[c - 1]);
                out->triangles[3 * nt + 2] = (uint32_t)(nv + face->mIndices[c]);
            }
        }
        nv += m->mNumVertices;
    }
}

static int all_vertices_finite(const pd_mesh* mesh, size_t* bad) {
    for (size_t i = 0; i < mesh->vertex_count; ++i) {
        pd_vec3 v = mesh->vertices[i];
        if (!isfinite(v.x) || !isfinite(v.y) || !isfinite(v.z)) {
            *bad = i;
            return 0;
        }
    }
    return 1;
}

static pd_status allocate_mesh(pd_mesh* out, size_t nv, size_t nt) {
    out->vertex_count = nv;
    out->triangle_count = nt;
    out->vertices = PD_NEW_ARRAY(pd_vec3, nv);
    out->triangles = PD_NEW_ARRAY(uint32_t, 3 * nt);
    if (!out->vertices || !out->triangles) {
        pd_mesh_free(out);
        return PD_ERR_OUT_OF_MEMORY;
    }
    return PD_OK;
}

static pd_status import_scene(const struct aiScene* scene, const char* file, pd_mesh* out,
                              const char* jpath, pd_error* err) {
    size_t nv = 0, nt = 0;
    for (unsigned i = 0; i < scene->mNumMeshes; ++i) {
        nv += scene->mMeshes[i]->mNumVertices;
        nt += count_triangles(scene->mMeshes[i]);
    }
    if (nt == 0)
        return pd_fail(err, PD_ERR_MESH, jpath, "mesh file '%s' has no triangles", file);
    if (nv >= UINT32_MAX)
        return pd_fail(err, PD_ERR_TOO_LARGE, jpath, "mesh file '%s' has too many vertices (%zu)",
                       file, nv);
    if (allocate_mesh(out, nv, nt) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, jpath, "out of memory loading mesh file '%s'",
                       file);
    copy_scene(scene, out);
    return PD_OK;
}

/* An OBJ or STL file through Assimp. PreTransformVertices bakes node transforms (formats with
 * a node hierarchy) into the vertices, so that merging meshes keeps them where the file places
 * them. ValidateDataStructure runs first and refuses a scene whose faces index vertices that
 * are not there; polygons are made triangles here (count_triangles): Assimp's Triangulate
 * asserted and aborted the program on PLY faces it had let through (fuzzing,
 * tests/bad_input/fuzz/mesh/). */
static pd_status import_with_assimp(const char* file, pd_mesh* out, const char* jpath,
                                    pd_error* err) {
    const struct aiScene* scene =
        aiImportFile(file, aiProcess_ValidateDataStructure | aiProcess_JoinIdenticalVertices |
                               aiProcess_PreTransformVertices);
    if (!scene)
        return pd_fail(err, PD_ERR_MESH, jpath, "cannot read mesh file '%s': %s", file,
                       aiGetErrorString());
    pd_status st = import_scene(scene, file, out, jpath, err);
    aiReleaseImport(scene);
    return st;
}

/* The shape's scale, rotation and translation applied to every vertex, which must then be
 * finite. */
static pd_status place_mesh(const pd_shape_def* shape, pd_mesh* mesh, const char* jpath,
                            pd_error* err) {
    pd_real axis_len = pd_v3_len(shape->rotate_axis);
    int rotate = axis_len > 0 && shape->rotate_degrees != 0;
    pd_vec3 unit_axis = rotate ? pd_v3_scale(shape->rotate_axis, 1 / axis_len) : pd_v3(0, 0, 1);
    for (size_t v = 0; v < mesh->vertex_count; ++v)
        mesh->vertices[v] = transform_vertex(shape, mesh->vertices[v], unit_axis, rotate);
    size_t bad = 0;
    if (!all_vertices_finite(mesh, &bad)) {
        pd_mesh_free(mesh);
        return pd_fail(err, PD_ERR_MESH, jpath,
                       "mesh file '%s' has a non-finite vertex (index %zu, after scale/rotate/"
                       "translate)",
                       shape->path, bad);
    }
    return PD_OK;
}

static int has_extension(const char* file, const char* ext) {
    size_t n = strlen(file), e = strlen(ext);
    return n >= e && strcasecmp(file + n - e, ext) == 0;
}

/* Before a reader sees a file: it must be a regular file. A PLY (named .ply, or whose bytes
 * start with "ply", which Assimp would take for one) goes to our reader, which bounds its
 * counts by the file's size itself; no byte of it reaches Assimp. For Assimp, a binary STL's
 * triangle count must fit in the file's size, so that a short file cannot make the importer
 * reserve gigabytes. OBJ and ascii STL have no counts: their size bounds them. */
static pd_status check_mesh_file(const char* file, const char* jpath, int* is_ply, pd_error* err) {
    struct stat info;
    if (stat(file, &info) != 0)
        return pd_fail(err, PD_ERR_IO, jpath, "cannot open mesh file '%s': %s", file,
                       strerror(errno));
    if (!S_ISREG(info.st_mode))
        return pd_fail(err, PD_ERR_MESH, jpath, "mesh file '%s' is not a regular file", file);
    FILE* f = fopen(file, "rb");
    if (!f)
        return pd_fail(err, PD_ERR_IO, jpath, "cannot open mesh file '%s': %s", file,
                       strerror(errno));
    char head[84] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    *is_ply = (got >= 3 && strncmp(head, "ply", 3) == 0) || has_extension(file, ".ply");
    if (*is_ply || got < 84 || !has_extension(file, ".stl") || strncmp(head, "solid", 5) == 0)
        return PD_OK;
    /* binary STL: 80 bytes of header, a count, 50 bytes per triangle */
    uint32_t n = (uint32_t)(unsigned char)head[80] | (uint32_t)(unsigned char)head[81] << 8 |
                 (uint32_t)(unsigned char)head[82] << 16 | (uint32_t)(unsigned char)head[83] << 24;
    if (50.0 * n > (double)info.st_size - 84)
        return pd_fail(err, PD_ERR_MESH, jpath,
                       "mesh file '%s' declares more elements than its %lld bytes can hold", file,
                       (long long)info.st_size);
    return PD_OK;
}

pd_status pd_mesh_load(const pd_shape_def* shape, pd_mesh* out, const char* path, pd_error* err) {
    memset(out, 0, sizeof *out);
    char jpath[256];
    if (!(shape->scale > 0) || !isfinite(shape->scale)) {
        key_path(jpath, sizeof jpath, path, "scale");
        return pd_fail(err, PD_ERR_BAD_SCENE, jpath,
                       "mesh scale must be a finite number > 0, got %g", shape->scale);
    }
    key_path(jpath, sizeof jpath, path, "path");
    /* Checked first so that a missing file is an I/O error, not a reader's generic message. */
    int is_ply = 0;
    pd_status st = check_mesh_file(shape->path, jpath, &is_ply, err);
    if (st == PD_OK)
        st = is_ply ? pd_ply_mesh_read(shape->path, out, jpath, err)
                    : import_with_assimp(shape->path, out, jpath, err);
    return st == PD_OK ? place_mesh(shape, out, jpath, err) : st;
}

void pd_mesh_free(pd_mesh* mesh) {
    if (mesh->vertices)
        PD_FREE_ARRAY(mesh->vertices, pd_vec3, mesh->vertex_count);
    if (mesh->triangles)
        PD_FREE_ARRAY(mesh->triangles, uint32_t, 3 * mesh->triangle_count);
    memset(mesh, 0, sizeof *mesh);
}

void pd_mesh_bounds(const pd_mesh* mesh, pd_vec3* lo, pd_vec3* hi) {
    pd_vec3 a = pd_v3(INFINITY, INFINITY, INFINITY), b = pd_v3(-INFINITY, -INFINITY, -INFINITY);
    for (size_t i = 0; i < mesh->vertex_count; ++i) {
        a = pd_v3_min(a, mesh->vertices[i]);
        b = pd_v3_max(b, mesh->vertices[i]);
    }
    *lo = a;
    *hi = b;
}

/* ---- winding number ---- */

/* Signed solid angle of triangle abc seen from q (Van Oosterom & Strackee 1983); positive when
 * q is behind the triangle's counter-clockwise (outward) side. 0 when q is on a corner. */
static pd_real solid_angle(pd_vec3 a, pd_vec3 b, pd_vec3 c, pd_vec3 q) {
    a = pd_v3_sub(a, q);
    b = pd_v3_sub(b, q);
    c = pd_v3_sub(c, q);
    pd_real la = pd_v3_len(a), lb = pd_v3_len(b), lc = pd_v3_len(c);
    pd_real det = pd_v3_dot(a, pd_v3_cross(b, c));
    pd_real den = la * lb * lc + pd_v3_dot(a, b) * lc + pd_v3_dot(b, c) * la + pd_v3_dot(c, a) * lb;
    return 2 * atan2(det, den);
}

pd_real pd_mesh_winding_number(const pd_mesh* mesh, pd_vec3 p) {
    pd_real sum = 0;
    const uint32_t* t = mesh->triangles;
    for (size_t i = 0; i < mesh->triangle_count; ++i, t += 3)
        sum += solid_angle(mesh->vertices[t[0]], mesh->vertices[t[1]], mesh->vertices[t[2]], p);
    return sum / (4 * PD_PI);
}

pd_real pd_mesh_signed_volume(const pd_mesh* mesh) {
    pd_real sum = 0;
    const uint32_t* t = mesh->triangles;
    for (size_t i = 0; i < mesh->triangle_count; ++i, t += 3) {
        pd_vec3 a = mesh->vertices[t[0]], b = mesh->vertices[t[1]], c = mesh->vertices[t[2]];
        sum += pd_v3_dot(a, pd_v3_cross(b, c));
    }
    return sum / 6;
}

pd_real pd_mesh_enclosed_volume(const pd_mesh* mesh) {
    pd_vec3 c = pd_v3(0, 0, 0);
    for (size_t i = 0; i < mesh->vertex_count; ++i)
        c = pd_v3_add(c, mesh->vertices[i]);
    c = pd_v3_scale(c, 1.0 / (pd_real)(mesh->vertex_count ? mesh->vertex_count : 1));
    pd_real sum = 0;
    const uint32_t* t = mesh->triangles;
    for (size_t i = 0; i < mesh->triangle_count; ++i, t += 3) {
        pd_vec3 a = pd_v3_sub(mesh->vertices[t[0]], c), b = pd_v3_sub(mesh->vertices[t[1]], c);
        pd_vec3 d = pd_v3_sub(mesh->vertices[t[2]], c);
        sum += pd_v3_dot(a, pd_v3_cross(b, d));
    }
    return fabs(sum / 6);
}

/* ---- winding-number tree ---- */

enum { TREE_LEAF_SIZE = 8, TREE_STACK = 96 };
/* A cluster is expanded unless the query is farther than BETA times its radius. Barill 2018
 * use 2 with one more term; with two terms, 4 keeps the bunny's worst error under 1e-2
 * (measured: beta 2 -> 0.045, 3 -> 0.019, 4 -> 0.0086, 6 -> 0.0012, at 1.7/3.1/5.7/12.7 us). */
static const pd_real TREE_BETA = 4.0;

struct pd_mesh_tree_node {
    pd_vec3 center;       /* area-weighted centroid of the cluster (m) */
    pd_vec3 area_normal;  /* sum of area * unit normal (m^2) */
    pd_real moment[3][3]; /* sum of area * (centroid - center) normal^T (m^3) */
    pd_real radius;       /* max distance from center to a corner of the cluster (m) */
    size_t first, count;  /* leaf: triangles [first, first + count); inner: count 0 */
    size_t right;         /* inner: right child (left child is the next node) */
};

typedef struct tree_builder {
    const pd_mesh* mesh;
    pd_mesh_tree* tree;
    uint32_t* order;    /* triangle indices, permuted into tree order */
    pd_split_key* keys; /* scratch for sorting */
    pd_vec3* centroids;
    size_t next_node;
} tree_builder;

static size_t tree_node_count(size_t n) {
    if (n <= TREE_LEAF_SIZE)
        return 1;
    return 1 + tree_node_count(n / 2) + tree_node_count(n - n / 2);
}

static void triangle_corners(const pd_mesh* mesh, size_t t, pd_vec3 c[3]) {
    for (int k = 0; k < 3; ++k)
        c[k] = mesh->vertices[mesh->triangles[3 * t + k]];
}

/* Half the cross product: area times unit normal. */
static pd_vec3 area_vector(const pd_vec3 c[3]) {
    return pd_v3_scale(pd_v3_cross(pd_v3_sub(c[1], c[0]), pd_v3_sub(c[2], c[0])), 0.5);
}

/* Far-field data of triangles order[begin, end): Barill 2018 eq. 8-10 for triangles. */
static void cluster_moments(tree_builder* b, size_t begin, size_t end, pd_mesh_tree_node* node) {
    pd_real area = 0;
    pd_vec3 weighted = pd_v3(0, 0, 0), mean = pd_v3(0, 0, 0);
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 c[3];
        triangle_corners(b->mesh, b->order[i], c);
        pd_real a = pd_v3_len(area_vector(c));
        area += a;
        weighted = pd_v3_madd(weighted, a, b->centroids[b->order[i]]);
        mean = pd_v3_add(mean, b->centroids[b->order[i]]);
    }
    node->center = area > 0 ? pd_v3_scale(weighted, 1 / area)
                            : pd_v3_scale(mean, 1.0 / (pd_real)(end - begin));
    node->area_normal = pd_v3(0, 0, 0);
    memset(node->moment, 0, sizeof node->moment);
    node->radius = 0;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 c[3];
        triangle_corners(b->mesh, b->order[i], c);
        pd_vec3 an = area_vector(c);
        pd_vec3 d = pd_v3_sub(b->centroids[b->order[i]], node->center);
        node->area_normal = pd_v3_add(node->area_normal, an);
        pd_real dv[3] = {d.x, d.y, d.z}, nv[3] = {an.x, an.y, an.z};
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k)
                node->moment[j][k] += dv[j] * nv[k];
        for (int k = 0; k < 3; ++k)
            node->radius = fmax(node->radius, pd_v3_len(pd_v3_sub(c[k], node->center)));
    }
}

/* Median split, nodes in pre-order; depth is log2(n / leaf size) + 1. */
static void build_node(tree_builder* b, size_t begin, size_t end) {
    size_t id = b->next_node++;
    pd_mesh_tree_node* node = &b->tree->nodes[id];
    cluster_moments(b, begin, end, node);
    if (end - begin <= TREE_LEAF_SIZE) {
        node->first = begin;
        node->count = end - begin;
        return;
    }
    node->count = 0;
    pd_sort_along_longest_axis(b->centroids, b->order, b->keys, begin, end);
    size_t mid = begin + (end - begin) / 2;
    build_node(b, begin, mid);
    b->tree->nodes[id].right = b->next_node;
    build_node(b, mid, end);
}

static void free_builder_scratch(tree_builder* b, size_t n) {
    if (b->order)
        PD_FREE_ARRAY(b->order, uint32_t, n);
    if (b->keys)
        PD_FREE_ARRAY(b->keys, pd_split_key, n);
    if (b->centroids)
        PD_FREE_ARRAY(b->centroids, pd_vec3, n);
}

pd_status pd_mesh_tree_build(const pd_mesh* mesh, pd_mesh_tree* tree) {
    memset(tree, 0, sizeof *tree);
    size_t n = mesh->triangle_count;
    if (n == 0)
        return PD_ERR_MESH;
    tree_builder b = {mesh,
                      tree,
                      PD_NEW_ARRAY(uint32_t, n),
                      PD_NEW_ARRAY(pd_split_key, n),
                      PD_NEW_ARRAY(pd_vec3, n),
                      0};
    tree->triangle_count = n;
    tree->node_count = tree_node_count(n);
    tree->nodes = PD_NEW_ARRAY(pd_mesh_tree_node, tree->node_count);
    tree->corners = PD_NEW_ARRAY(pd_vec3, 3 * n);
    if (!b.order || !b.keys || !b.centroids || !tree->nodes || !tree->corners) {
        free_builder_scratch(&b, n);
        pd_mesh_tree_free(tree);
        return PD_ERR_OUT_OF_MEMORY;
    }
    for (size_t t = 0; t < n; ++t) {
        pd_vec3 c[3];
        triangle_corners(mesh, t, c);
        b.order[t] = (uint32_t)t;
        b.centroids[t] = pd_v3_scale(pd_v3_add(pd_v3_add(c[0], c[1]), c[2]), 1.0 / 3.0);
    }
    build_node(&b, 0, n);
    for (size_t i = 0; i < n; ++i)
        triangle_corners(mesh, b.order[i], &tree->corners[3 * i]);
    free_builder_scratch(&b, n);
    return PD_OK;
}

void pd_mesh_tree_free(pd_mesh_tree* tree) {
    if (tree->nodes)
        PD_FREE_ARRAY(tree->nodes, pd_mesh_tree_node, tree->node_count);
    if (tree->corners)
        PD_FREE_ARRAY(tree->corners, pd_vec3, 3 * tree->triangle_count);
    memset(tree, 0, sizeof *tree);
}

/* Solid angle of a far cluster: the flux of (x - q)/|x - q|^3 through it, Taylor-expanded about
 * its center to second order: N.r/d^3 + sum_jk J_jk M_jk with J = I/d^3 - 3 r r^T/d^5. */
static pd_real far_field_solid_angle(const pd_mesh_tree_node* node, pd_vec3 r, pd_real d2) {
    pd_real d = sqrt(d2), inv3 = 1 / (d2 * d), inv5 = inv3 / d2;
    pd_real rv[3] = {r.x, r.y, r.z};
    pd_real trace = node->moment[0][0] + node->moment[1][1] + node->moment[2][2];
    pd_real rmr = 0;
    for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k)
            rmr += rv[j] * node->moment[j][k] * rv[k];
    return pd_v3_dot(node->area_normal, r) * inv3 + trace * inv3 - 3 * rmr * inv5;
}

static pd_real leaf_solid_angle(const pd_mesh_tree* tree, const pd_mesh_tree_node* node,
                                pd_vec3 p) {
    pd_real sum = 0;
    const pd_vec3* c = &tree->corners[3 * node->first];
    for (size_t i = 0; i < node->count; ++i, c += 3)
        sum += solid_angle(c[0], c[1], c[2], p);
    return sum;
}

pd_real pd_mesh_tree_winding_number(const pd_mesh_tree* tree, pd_vec3 p) {
    if (tree->node_count == 0)
        return 0;
    size_t stack[TREE_STACK];
    int top = 0;
    stack[top++] = 0;
    pd_real sum = 0;
    while (top > 0) {
        size_t id = stack[--top];
        const pd_mesh_tree_node* node = &tree->nodes[id];
        pd_vec3 r = pd_v3_sub(node->center, p);
        pd_real d2 = pd_v3_len2(r), reach = TREE_BETA * node->radius;
        if (d2 > reach * reach)
            sum += far_field_solid_angle(node, r, d2);
        else if (node->count > 0)
            sum += leaf_solid_angle(tree, node, p);
        else {
            /* Depth <= log2(n) + 1 < TREE_STACK - 1 for any size_t count. */
            stack[top++] = node->right;
            stack[top++] = id + 1;
        }
    }
    return sum / (4 * PD_PI);
}
