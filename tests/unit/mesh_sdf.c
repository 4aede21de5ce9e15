/* Mesh colliders: the BVH closest point against brute force over every triangle (bunny, a
 * sphere mesh) and against a dense sampling of one triangle; the signed distance of a sphere
 * mesh against the analytic sphere within the mesh's own Hausdorff (chord) error; a box mesh,
 * which has no chord error, against the analytic box to rounding, signs at points just off
 * edges and corners included; the winding-number fallback on a misoriented closed mesh; the
 * open-mesh wall (the bowl); refusals with their JSON paths; a moving / rotating mesh collider
 * against the analytic collider moved the same way; thread-count independence; no leak. */
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boundary/collider.h"
#include "core/alloc.h"
#include "geometry/bvh.h"
#include "geometry/mesh.h"
#include "geometry/mesh_sdf.h"
#include "parallel/parallel.h"
#include "peridot/scene.h"

#define BUNNY_PATH PD_SOURCE_DIR "/scenes/meshes/bunny.obj"
#define BOWL_PATH  PD_SOURCE_DIR "/scenes/meshes/bowl.obj"

static pd_real rand01(uint64_t* s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (pd_real)(*s >> 11) * (1.0 / 9007199254740992.0);
}

static pd_vec3 rand_in(uint64_t* s, pd_vec3 lo, pd_vec3 hi) {
    pd_real a = rand01(s), b = rand01(s), c = rand01(s);
    return pd_v3(lo.x + (hi.x - lo.x) * a, lo.y + (hi.y - lo.y) * b, lo.z + (hi.z - lo.z) * c);
}

/* ---- meshes built in memory ---- */

static int mesh_alloc(pd_mesh* m, size_t nv, size_t nt) {
    m->vertex_count = nv;
    m->triangle_count = nt;
    m->vertices = PD_NEW_ARRAY(pd_vec3, nv);
    m->triangles = PD_NEW_ARRAY(uint32_t, 3 * nt);
    return m->vertices && m->triangles;
}

static void tri(pd_mesh* m, size_t* t, uint32_t a, uint32_t b, uint32_t c) {
    m->triangles[3 * *t] = a;
    m->triangles[3 * *t + 1] = b;
    m->triangles[3 * *t + 2] = c;
    ++*t;
}

/* Latitude-longitude sphere of radius r about c, closed, wound outward. */
static int uv_sphere(pd_mesh* m, pd_vec3 c, pd_real r, int rings, int segs) {
    size_t nv = 2 + (size_t)(rings - 1) * (size_t)segs, nt = 2 * (size_t)segs * (size_t)(rings - 1);
    if (!mesh_alloc(m, nv, nt))
        return 0;
    m->vertices[0] = pd_v3(c.x, c.y - r, c.z);
    m->vertices[nv - 1] = pd_v3(c.x, c.y + r, c.z);
    for (int i = 1; i < rings; ++i)
        for (int j = 0; j < segs; ++j) {
            pd_real th = PD_PI * i / rings, ph = 2 * PD_PI * j / segs;
            m->vertices[1 + (size_t)(i - 1) * segs + j] =
                pd_v3(c.x + r * sin(th) * cos(ph), c.y - r * cos(th), c.z + r * sin(th) * sin(ph));
        }
    size_t t = 0;
    uint32_t top = (uint32_t)(nv - 1);
    for (int j = 0; j < segs; ++j) {
        uint32_t a0 = 1 + j, a1 = 1 + (j + 1) % segs;
        tri(m, &t, 0, a0, a1);
        uint32_t z0 = 1 + (rings - 2) * segs + j, z1 = 1 + (rings - 2) * segs + (j + 1) % segs;
        tri(m, &t, top, z1, z0);
    }
    for (int i = 1; i < rings - 1; ++i)
        for (int j = 0; j < segs; ++j) {
            uint32_t a0 = 1 + (i - 1) * segs + j, a1 = 1 + (i - 1) * segs + (j + 1) % segs;
            uint32_t b0 = a0 + segs, b1 = a1 + segs;
            tri(m, &t, a1, a0, b0);
            tri(m, &t, a1, b0, b1);
        }
    return t == nt;
}

/* Box [lo, hi] with every face cut into k x k squares of two triangles, wound outward. */
static int box_mesh(pd_mesh* m, pd_vec3 lo, pd_vec3 hi, int k) {
    size_t per = (size_t)(k + 1) * (k + 1);
    if (!mesh_alloc(m, 6 * per, 12 * (size_t)k * k))
        return 0;
    size_t t = 0;
    for (int f = 0; f < 6; ++f) {
        int ax = f / 2, u = (ax + 1) % 3, v = (ax + 2) % 3, high = f % 2;
        pd_real l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
        uint32_t base = (uint32_t)(f * per);
        for (int i = 0; i <= k; ++i)
            for (int j = 0; j <= k; ++j) {
                pd_real x[3];
                x[ax] = high ? h[ax] : l[ax];
                /* Ends exact, so that neighbouring faces share their edge vertices. */
                x[u] = i == k ? h[u] : l[u] + (h[u] - l[u]) * i / k;
                x[v] = j == k ? h[v] : l[v] + (h[v] - l[v]) * j / k;
                m->vertices[base + i * (k + 1) + j] = pd_v3(x[0], x[1], x[2]);
            }
        for (int i = 0; i < k; ++i)
            for (int j = 0; j < k; ++j) {
                uint32_t a = base + i * (k + 1) + j, b = a + (k + 1), c = b + 1, d = a + 1;
                /* e_u x e_v = e_ax: (a, b, c) turns from u to v, outward on the high face. */
                if (high) {
                    tri(m, &t, a, b, c);
                    tri(m, &t, a, c, d);
                } else {
                    tri(m, &t, a, c, b);
                    tri(m, &t, a, d, c);
                }
            }
    }
    return 1;
}

static int write_obj(const char* path, const pd_mesh* m) {
    FILE* f = fopen(path, "w");
    if (!f)
        return 0;
    for (size_t i = 0; i < m->vertex_count; ++i)
        fprintf(f, "v %.17g %.17g %.17g\n", m->vertices[i].x, m->vertices[i].y, m->vertices[i].z);
    for (size_t t = 0; t < m->triangle_count; ++t)
        fprintf(f, "f %u %u %u\n", m->triangles[3 * t] + 1, m->triangles[3 * t + 1] + 1,
                m->triangles[3 * t + 2] + 1);
    return fclose(f) == 0;
}

static int load(const char* path, pd_real scale, pd_mesh* m) {
    pd_shape_def s = pd_default_shape_def();
    s.type = PD_SHAPE_MESH;
    snprintf(s.path, sizeof s.path, "%s", path);
    s.scale = scale;
    pd_error err = {0};
    pd_status st = pd_mesh_load(&s, m, "mesh", &err);
    if (st != PD_OK)
        printf("  load failed: %s\n", err.message);
    return st == PD_OK;
}

static int build_sdf(const pd_mesh* m, pd_real thickness, int flip, pd_mesh_sdf* sdf) {
    pd_error err = {0};
    pd_status st = pd_mesh_sdf_build(m, thickness, flip, sdf, "colliders[0]", &err);
    if (st != PD_OK)
        printf("  sdf build failed: %s: %s\n", err.path, err.message);
    return st == PD_OK;
}

/* Hausdorff distance of an inscribed sphere mesh to its sphere: R minus the nearest approach
 * of any triangle to the centre. */
static pd_real sphere_chord_error(const pd_mesh* m, pd_vec3 c, pd_real r) {
    pd_real nearest = INFINITY;
    for (size_t t = 0; t < m->triangle_count; ++t) {
        const uint32_t* k = &m->triangles[3 * t];
        pd_tri_feature f;
        pd_vec3 q = pd_closest_point_on_triangle(c, m->vertices[k[0]], m->vertices[k[1]],
                                                 m->vertices[k[2]], &f);
        nearest = fmin(nearest, pd_v3_len(pd_v3_sub(q, c)));
    }
    return r - nearest;
}

/* ---- closest point ---- */

static pd_real brute_dist2(const pd_mesh* m, pd_vec3 p) {
    pd_real best = INFINITY;
    for (size_t t = 0; t < m->triangle_count; ++t) {
        const uint32_t* k = &m->triangles[3 * t];
        pd_tri_feature f;
        pd_vec3 q = pd_closest_point_on_triangle(p, m->vertices[k[0]], m->vertices[k[1]],
                                                 m->vertices[k[2]], &f);
        best = fmin(best, pd_v3_len2(pd_v3_sub(p, q)));
    }
    return best;
}

/* The region tests against the minimum over a dense barycentric grid of the triangle: the
 * exact distance is at most the sampled one and at least it minus the grid's spacing. */
PD_TEST(closest_point_matches_dense_sampling) {
    pd_vec3 a = pd_v3(0.1, -0.2, 0.05), b = pd_v3(1.1, 0.3, -0.2), c = pd_v3(0.4, 0.9, 0.6);
    const int g = 300;
    pd_real cell = fmax(fmax(pd_v3_len(pd_v3_sub(b, a)), pd_v3_len(pd_v3_sub(c, a))),
                        pd_v3_len(pd_v3_sub(c, b))) /
                   g;
    uint64_t seed = 5;
    pd_real worst_low = 0, worst_high = 0;
    int features[7] = {0};
    for (int n = 0; n < 200; ++n) {
        pd_vec3 p = rand_in(&seed, pd_v3(-1, -1, -1), pd_v3(2, 2, 2));
        pd_tri_feature f;
        pd_vec3 q = pd_closest_point_on_triangle(p, a, b, c, &f);
        features[f]++;
        pd_real d = pd_v3_len(pd_v3_sub(p, q)), sampled = INFINITY;
        for (int i = 0; i <= g; ++i)
            for (int j = 0; i + j <= g; ++j) {
                pd_real u = (pd_real)i / g, v = (pd_real)j / g;
                pd_vec3 s = pd_v3_add(
                    a, pd_v3_add(pd_v3_scale(pd_v3_sub(b, a), u), pd_v3_scale(pd_v3_sub(c, a), v)));
                sampled = fmin(sampled, pd_v3_len(pd_v3_sub(p, s)));
            }
        worst_low = fmax(worst_low, d - sampled);   /* must be <= 0 */
        worst_high = fmax(worst_high, sampled - d); /* must be <= cell */
    }
    printf("  regions hit (face, A, B, C, AB, BC, CA): %d %d %d %d %d %d %d\n", features[0],
           features[1], features[2], features[3], features[4], features[5], features[6]);
    PD_CHECK_NEAR(worst_low, 0, 1e-12);
    PD_CHECK(worst_high <= cell);
    printf("  sampled - exact <= %.3g (grid cell %.3g)\n", worst_high, cell);
    for (int k = 0; k < 7; ++k)
        PD_CHECK(features[k] > 0); /* every Voronoi region was exercised */
}

static void check_bvh_against_brute(const pd_mesh* m, int count, uint64_t seed) {
    pd_bvh bvh;
    PD_REQUIRE(pd_bvh_build(m, &bvh) == PD_OK);
    pd_vec3 lo, hi;
    pd_mesh_bounds(m, &lo, &hi);
    pd_vec3 e = pd_v3_scale(pd_v3_sub(hi, lo), 0.25);
    pd_real worst = 0;
    for (int n = 0; n < count; ++n) {
        pd_vec3 p = rand_in(&seed, pd_v3_sub(lo, e), pd_v3_add(hi, e));
        pd_bvh_hit hit = pd_bvh_closest(&bvh, p);
        pd_real ref = brute_dist2(m, p);
        worst = fmax(worst, fabs(sqrt(hit.dist2) - sqrt(ref)));
        /* The reported point is the one the distance belongs to. */
        worst = fmax(worst, fabs(pd_v3_len(pd_v3_sub(p, hit.point)) - sqrt(hit.dist2)));
    }
    clock_t start = clock();
    pd_real sink = 0;
    for (int n = 0; n < 20000; ++n)
        sink += pd_bvh_closest(&bvh, rand_in(&seed, pd_v3_sub(lo, e), pd_v3_add(hi, e))).dist2;
    double us = 1e6 * (double)(clock() - start) / CLOCKS_PER_SEC / 20000;
    printf("  %zu triangles, %zu nodes: worst |bvh - brute force| over %d points = %.3g; "
           "%.2f us per query (informative, sum %.3g)\n",
           m->triangle_count, bvh.node_count, count, worst, us, sink);
    PD_CHECK_NEAR(worst, 0, 0);
    pd_bvh_free(&bvh);
}

PD_TEST(bvh_closest_equals_brute_force) {
    pd_mesh bunny, sphere = {0};
    PD_REQUIRE(load(BUNNY_PATH, 0.0207, &bunny));
    check_bvh_against_brute(&bunny, 1500, 11);
    PD_REQUIRE(uv_sphere(&sphere, pd_v3(0.1, 0.2, -0.3), 0.5, 24, 48));
    check_bvh_against_brute(&sphere, 1500, 12);
    pd_mesh_free(&bunny);
    pd_mesh_free(&sphere);
}

/* ---- signed distance of closed meshes ---- */

PD_TEST(sphere_mesh_sdf_within_chord_error) {
    pd_vec3 c = pd_v3(0.1, 0.2, -0.3);
    pd_real r = 0.5;
    pd_mesh m = {0};
    pd_mesh_sdf sdf;
    PD_REQUIRE(uv_sphere(&m, c, r, 48, 96));
    PD_REQUIRE(build_sdf(&m, 0, 0, &sdf));
    PD_CHECK(sdf.sign == PD_MESH_SIGN_PSEUDO_NORMAL);
    pd_real h = sphere_chord_error(&m, c, r);
    uint64_t seed = 21;
    pd_real worst = 0, worst_dir = 0;
    int inside = 0;
    for (int n = 0; n < 4000; ++n) {
        pd_vec3 p =
            rand_in(&seed, pd_v3(c.x - 1, c.y - 1, c.z - 1), pd_v3(c.x + 1, c.y + 1, c.z + 1));
        pd_vec3 nm, radial = pd_v3_sub(p, c);
        pd_real d = pd_mesh_sdf_eval(&sdf, p, &nm), ref = pd_v3_len(radial) - r;
        worst = fmax(worst, fabs(d - ref));
        inside += d < 0;
        if (fabs(ref) > 0.05) /* the normal is the sphere's radial direction, up to h / |d| */
            worst_dir =
                fmax(worst_dir, 1 - pd_v3_dot(nm, pd_v3_scale(radial, 1 / pd_v3_len(radial))));
    }
    printf("  chord (Hausdorff) error of the mesh h = %.4g m; %d of 4000 points inside\n", h,
           inside);
    PD_CHECK(worst <= h + 1e-12);
    printf("  worst |sdf_mesh - sdf_sphere| = %.4g <= h\n", worst);
    PD_CHECK(worst_dir < 0.02);
    printf("  worst 1 - n_mesh . n_sphere (|d| > 0.05) = %.3g\n", worst_dir);
    /* Just off every vertex and edge midpoint, along the radius: the sign is the side. */
    int wrong = 0;
    for (size_t t = 0; t < m.triangle_count; ++t)
        for (int k = 0; k < 3; ++k) {
            pd_vec3 v = m.vertices[m.triangles[3 * t + k]];
            pd_vec3 w = m.vertices[m.triangles[3 * t + (k + 1) % 3]];
            pd_vec3 mid = pd_v3_scale(pd_v3_add(v, w), 0.5);
            pd_vec3 pts[2] = {v, mid};
            for (int q = 0; q < 2; ++q) {
                pd_vec3 rad = pd_v3_sub(pts[q], c);
                wrong += pd_mesh_sdf_eval(&sdf, pd_v3_madd(c, 1 + 1e-7, rad), NULL) <= 0;
                wrong += pd_mesh_sdf_eval(&sdf, pd_v3_madd(c, 1 - 1e-7, rad), NULL) >= 0;
            }
        }
    printf("  wrong signs just off %zu vertices / edge midpoints: %d\n", 3 * m.triangle_count,
           wrong);
    PD_CHECK_NEAR(wrong, 0, 0);
    pd_mesh_sdf_free(&sdf);
    pd_mesh_free(&m);
}

static pd_real box_sdf_ref(pd_vec3 lo, pd_vec3 hi, pd_vec3 p) {
    pd_real q[3], out = 0, in = -INFINITY;
    pd_vec3 c = pd_v3_scale(pd_v3_add(lo, hi), 0.5), h = pd_v3_scale(pd_v3_sub(hi, lo), 0.5);
    for (int k = 0; k < 3; ++k) {
        q[k] = fabs(pd_v3_comp(p, k) - pd_v3_comp(c, k)) - pd_v3_comp(h, k);
        out += q[k] > 0 ? q[k] * q[k] : 0;
        in = fmax(in, q[k]);
    }
    return out > 0 ? sqrt(out) : in;
}

/* A box mesh has no chord error: its sdf is the box's to rounding, on both sides, including
 * points a hair off its edges and corners where the pseudo-normal decides the sign. */
PD_TEST(box_mesh_sdf_exact_and_signs_at_edges_and_corners) {
    pd_vec3 lo = pd_v3(-0.3, 0.1, -0.2), hi = pd_v3(0.5, 0.4, 0.6);
    pd_mesh m = {0};
    pd_mesh_sdf sdf;
    PD_REQUIRE(box_mesh(&m, lo, hi, 3));
    PD_REQUIRE(build_sdf(&m, 0, 0, &sdf));
    PD_CHECK(sdf.sign == PD_MESH_SIGN_PSEUDO_NORMAL);
    printf("  open %zu, non-manifold %zu, misoriented %zu edges\n", sdf.boundary_edges,
           sdf.nonmanifold_edges, sdf.misoriented_edges);
    uint64_t seed = 3;
    pd_real worst = 0;
    for (int n = 0; n < 4000; ++n) {
        pd_vec3 p = rand_in(&seed, pd_v3(-0.8, -0.4, -0.7), pd_v3(1, 0.9, 1.1));
        worst = fmax(worst, fabs(pd_mesh_sdf_eval(&sdf, p, NULL) - box_sdf_ref(lo, hi, p)));
    }
    printf("  worst |sdf_mesh - sdf_box| at random points = %.3g\n", worst);
    PD_CHECK(worst < 1e-12);
    /* Every corner and edge point of the 3x3 face grids, pushed 1e-6 along every one of the
     * 26 lattice directions: the sign must match the box's. */
    int wrong = 0, tried = 0;
    pd_real worst_near = 0;
    for (size_t v = 0; v < m.vertex_count; ++v)
        for (int dx = -1; dx <= 1; ++dx)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dz = -1; dz <= 1; ++dz) {
                    if (!dx && !dy && !dz)
                        continue;
                    pd_vec3 p = pd_v3_add(m.vertices[v], pd_v3(1e-6 * dx, 1e-6 * dy, 1e-6 * dz));
                    pd_real ref = box_sdf_ref(lo, hi, p), d = pd_mesh_sdf_eval(&sdf, p, NULL);
                    if (fabs(ref) < 1e-9) /* on the surface (a push along a face): no side */
                        continue;
                    tried++;
                    wrong += (d < 0) != (ref < 0);
                    worst_near = fmax(worst_near, fabs(d - ref));
                }
    printf("  %d points 1e-6 off vertices, edges and corners: %d wrong signs, worst error %.3g\n",
           tried, wrong, worst_near);
    PD_CHECK_NEAR(wrong, 0, 0);
    PD_CHECK(worst_near < 1e-12);
    pd_mesh_sdf_free(&sdf);
    pd_mesh_free(&m);
}

/* One triangle turned over: pseudo-normals would call points just outside it inside. The
 * mesh is then misoriented, so the sign comes from the winding number, which outvotes one
 * triangle. */
PD_TEST(misoriented_mesh_falls_back_to_winding_number) {
    pd_vec3 c = pd_v3(0, 0, 0);
    pd_mesh m = {0};
    pd_mesh_sdf sdf;
    PD_REQUIRE(uv_sphere(&m, c, 0.5, 16, 32));
    size_t t = m.triangle_count / 2;
    uint32_t tmp = m.triangles[3 * t + 1];
    m.triangles[3 * t + 1] = m.triangles[3 * t + 2];
    m.triangles[3 * t + 2] = tmp;
    PD_REQUIRE(build_sdf(&m, 0, 0, &sdf));
    printf("  misoriented edges %zu\n", sdf.misoriented_edges);
    PD_CHECK_NEAR(sdf.misoriented_edges, 3, 0);
    PD_CHECK(sdf.sign == PD_MESH_SIGN_WINDING);
    pd_vec3 a = m.vertices[m.triangles[3 * t]], b = m.vertices[m.triangles[3 * t + 1]],
            e = m.vertices[m.triangles[3 * t + 2]];
    pd_vec3 cen = pd_v3_scale(pd_v3_add(pd_v3_add(a, b), e), 1.0 / 3.0);
    pd_real out = pd_mesh_sdf_eval(&sdf, pd_v3_scale(cen, 1.05), NULL);
    pd_real in = pd_mesh_sdf_eval(&sdf, pd_v3_scale(cen, 0.95), NULL);
    printf("  beside the turned triangle: outside %.4g, inside %.4g\n", out, in);
    PD_CHECK(out > 0 && in < 0);
    pd_mesh_sdf_free(&sdf);
    pd_mesh_free(&m);
}

/* ---- the open bowl ---- */

PD_TEST(bowl_is_a_wall_behind_its_faces) {
    pd_mesh m;
    pd_mesh_sdf sdf;
    PD_REQUIRE(load(BOWL_PATH, 0.3, &m));
    pd_error err = {0};
    PD_CHECK(pd_mesh_sdf_build(&m, 0, 1, &sdf, "colliders[2]", &err) == PD_ERR_BAD_SCENE);
    printf("  without thickness: %s: %s\n", err.path, err.message);
    PD_CHECK(strcmp(err.path, "colliders[2].thickness") == 0);
    const pd_real t = 0.04, r = 0.3;
    PD_REQUIRE(build_sdf(&m, t, 1, &sdf)); /* flip: the wall outside the sphere, the bowl open */
    PD_CHECK(sdf.sign == PD_MESH_SIGN_SHELL);
    PD_CHECK(sdf.misoriented_edges == 0 && sdf.nonmanifold_edges == 0);
    printf("  open edges %zu (the rim)\n", sdf.boundary_edges);
    PD_CHECK_NEAR(sdf.boundary_edges, 64, 0);
    pd_real h = sphere_chord_error(&m, pd_v3(0, 0, 0), r);
    /* Below the rim, at angles where the closest point is not on the rim: the bowl's concave
     * side is free (distance r - |p|), the wall is solid, and beyond it free again. */
    uint64_t seed = 8;
    pd_real worst_in = 0, worst_wall = 0, worst_back = 0, worst_beyond = 0;
    for (int n = 0; n < 3000; ++n) {
        pd_vec3 u = rand_in(&seed, pd_v3(-1, -1, -1), pd_v3(1, -0.3, 1));
        pd_real len = pd_v3_len(u);
        if (len < 0.2 || len > 1)
            continue;
        u = pd_v3_scale(u, 1 / len);
        pd_real rho = rand01(&seed) * (r + 2 * t);
        pd_vec3 p = pd_v3_scale(u, rho);
        pd_real d = pd_mesh_sdf_eval(&sdf, p, NULL), s = rho - r;
        if (s < -2 * h)
            worst_in = fmax(worst_in, fabs(d - (-s)));
        else if (s > 2 * h && s < 0.5 * t - 2 * h)
            worst_wall = fmax(worst_wall, fabs(d - (-s)));
        else if (s > 0.5 * t + 2 * h && s < t - 2 * h) /* nearer the back face: out there */
            worst_back = fmax(worst_back, fabs(d - (-(t - s))));
        else if (s > t + 2 * h)
            worst_beyond = fmax(worst_beyond, fabs(d - (s - t)));
    }
    printf("  chord error h = %.4g; worst errors: in the bowl %.3g, in the wall's front half "
           "%.3g, its back half %.3g, beyond %.3g\n",
           h, worst_in, worst_wall, worst_back, worst_beyond);
    PD_CHECK(worst_in <= h + 1e-12);
    PD_CHECK(worst_wall <= h + 1e-12);
    PD_CHECK(worst_back <= h + 1e-12);
    PD_CHECK(worst_beyond <= h + 1e-12);
    /* Above the bowl, on its axis: free, at the distance to the rim. */
    pd_vec3 n;
    pd_real d = pd_mesh_sdf_eval(&sdf, pd_v3(0, 0.4, 0), &n);
    PD_CHECK_NEAR(d, sqrt(0.4 * 0.4 + r * r), h); /* the rim is a 64-gon in the circle */
    pd_mesh_sdf_free(&sdf);
    pd_mesh_free(&m);
}

/* ---- colliders ---- */

static pd_collider_def mesh_def(const char* path) {
    pd_collider_def d = pd_default_collider_def();
    d.type = PD_COLLIDER_MESH;
    d.shape.type = PD_SHAPE_MESH;
    snprintf(d.shape.path, sizeof d.shape.path, "%s", path);
    return d;
}

PD_TEST(mesh_collider_refusals_name_the_path) {
    pd_colliders c;
    pd_error err = {0};
    size_t before = pd_bytes_in_use();
    pd_collider_def defs[2] = {pd_default_collider_def(), mesh_def(BOWL_PATH)};
    PD_CHECK(pd_colliders_create(defs, 2, &c, &err) == PD_ERR_BAD_SCENE);
    printf("  open mesh, no thickness: %s: %s\n", err.path, err.message);
    PD_CHECK(strcmp(err.path, "colliders[1].thickness") == 0);
    defs[1] = mesh_def(BUNNY_PATH);
    defs[1].thickness = 0.01;
    PD_CHECK(pd_colliders_create(defs, 2, &c, &err) == PD_ERR_BAD_SCENE);
    printf("  closed mesh with thickness: %s: %s\n", err.path, err.message);
    PD_CHECK(strcmp(err.path, "colliders[1].thickness") == 0);
    defs[1] = mesh_def("/nonexistent/pd_mesh.obj");
    PD_CHECK(pd_colliders_create(defs, 2, &c, &err) == PD_ERR_IO);
    printf("  missing file: %s: %s\n", err.path, err.message);
    PD_CHECK(strcmp(err.path, "colliders[1].path") == 0);
    defs[1] = mesh_def(BUNNY_PATH);
    defs[1].shape.scale = -1;
    PD_CHECK(pd_colliders_create(defs, 2, &c, &err) == PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, "colliders[1].scale") == 0);
    PD_CHECK_NEAR(pd_bytes_in_use(), before, 0);
    /* The parser refuses keys a mesh collider does not take. */
    const char* scene =
        "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.01,\"fps\":10,"
        "\"frames\":1},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
        "\"poisson_ratio\":0.3}},\"bodies\":[{\"material\":\"m\",\"spacing\":0.1,\"shape\":"
        "{\"type\":\"sphere\",\"center\":[0,1,0],\"radius\":0.2}}],\"colliders\":[{\"type\":"
        "\"mesh\",\"path\":\"meshes/bunny.obj\",\"radius\":0.3}]}";
    pd_scene s;
    PD_CHECK(pd_scene_parse(scene, "t.json", PD_SOURCE_DIR "/scenes", NULL, 0, &s, &err) ==
             PD_ERR_BAD_SCENE);
    printf("  radius on a mesh collider: %s: %s\n", err.path, err.message);
    PD_CHECK(strcmp(err.path, "colliders[0].radius") == 0);
}

/* The same box as an analytic collider and as a mesh file, moved by velocity + spin (as an
 * obstacle) and by keyframes (as a container, `inside`): the signed distances and normals agree
 * everywhere to rounding. */
PD_TEST(moving_mesh_collider_matches_analytic_collider) {
    /* Dyadic corners: the file's vertices survive Assimp's single-precision import exactly. */
    pd_vec3 lo = pd_v3(-0.25, 0.125, -0.375), hi = pd_v3(0.375, 0.25, 0.125);
    pd_mesh m = {0};
    PD_REQUIRE(box_mesh(&m, lo, hi, 2));
    const char* path = "/tmp/pd_mesh_sdf_box.obj";
    PD_REQUIRE(write_obj(path, &m));
    pd_mesh_free(&m);
    static pd_keyframe kf[3] = {
        {.t = 0, .rotate_axis = {0, 1, 0}},
        {.t = 1, .translate = {0.3, -0.1, 0.2}, .rotate_axis = {1, 1, 0}, .rotate_degrees = 70},
        {.t = 2, .translate = {0.1, 0.4, 0}, .rotate_axis = {0, 0, 1}, .rotate_degrees = -40}};
    for (int motion = 0; motion < 2; ++motion) {
        pd_collider_def d[2] = {pd_default_collider_def(), mesh_def(path)};
        d[0].type = PD_COLLIDER_BOX;
        d[0].shape.type = PD_SHAPE_BOX;
        d[0].shape.min = lo;
        d[0].shape.max = hi;
        for (int k = 0; k < 2; ++k) {
            d[k].inside = motion;
            if (motion == 0) {
                d[k].velocity = pd_v3(0.2, -0.5, 0.1);
                d[k].angular_velocity = pd_v3(0.7, -1.1, 2.0);
            } else {
                d[k].keyframes = kf;
                d[k].keyframe_count = 3;
            }
        }
        pd_colliders c;
        pd_error err = {0};
        PD_REQUIRE(pd_colliders_create(d, 2, &c, &err) == PD_OK);
        pd_real worst = 0, worst_n = 0;
        uint64_t seed = 40 + (uint64_t)motion;
        for (int step = 0; step < 5; ++step) {
            pd_colliders_update(&c, 0.45 * step);
            for (int n = 0; n < 800; ++n) {
                pd_vec3 p = rand_in(&seed, pd_v3(-1, -1, -1), pd_v3(1.2, 1.2, 1.2)), na, nm;
                pd_real da = pd_collider_sdf(&c.items[0], p, &na);
                pd_real dm = pd_collider_sdf(&c.items[1], p, &nm);
                worst = fmax(worst, fabs(da - dm));
                if (fabs(da) > 1e-6) /* on a box face the normal is ill-posed at edges */
                    worst_n = fmax(worst_n, pd_v3_len(pd_v3_sub(na, nm)));
            }
        }
        printf("  %s: worst |sdf_mesh - sdf_box| = %.3g, worst |n_mesh - n_box| = %.3g\n",
               motion ? "keyframes, container" : "velocity + spin", worst, worst_n);
        PD_CHECK(worst < 1e-12);
        PD_CHECK(worst_n < 1e-9);
        pd_colliders_destroy(&c);
    }
    remove(path);
}

/* Projection against a bunny collider: the same positions whatever the thread count, and no
 * particle left inside. */
PD_TEST(mesh_projection_is_thread_count_independent) {
    pd_collider_def d = mesh_def(BUNNY_PATH);
    d.shape.scale = 0.1;
    d.angular_velocity = pd_v3(0, 1, 0);
    pd_colliders c;
    pd_error err = {0};
    size_t before = pd_bytes_in_use();
    PD_REQUIRE(pd_colliders_create(&d, 1, &c, &err) == PD_OK);
    pd_colliders_update(&c, 0.3);
    const size_t n = 20000;
    pd_vec3* pos[2] = {PD_NEW_ARRAY(pd_vec3, n), PD_NEW_ARRAY(pd_vec3, n)};
    pd_vec3* vel[2] = {PD_NEW_ARRAY(pd_vec3, n), PD_NEW_ARRAY(pd_vec3, n)};
    PD_REQUIRE(pos[0] && pos[1] && vel[0] && vel[1]);
    pd_vec3 lo = c.items[0].mesh->lo, hi = c.items[0].mesh->hi;
    int threads_before = pd_thread_count();
    size_t touched[2];
    for (int run = 0; run < 2; ++run) {
        uint64_t seed = 77;
        for (size_t i = 0; i < n; ++i) {
            pos[run][i] = rand_in(&seed, lo, hi);
            vel[run][i] = rand_in(&seed, pd_v3(-1, -1, -1), pd_v3(1, 1, 1));
        }
        pd_set_threads(run + 1);
        touched[run] = pd_colliders_project(&c, n, pos[run], vel[run], NULL, NULL, 0.01);
    }
    pd_set_threads(threads_before);
    printf("  touched %zu (1 thread), %zu (2 threads) of %zu\n", touched[0], touched[1], n);
    PD_CHECK(touched[0] == touched[1] && touched[0] > n / 20);
    PD_CHECK(memcmp(pos[0], pos[1], n * sizeof(pd_vec3)) == 0);
    PD_CHECK(memcmp(vel[0], vel[1], n * sizeof(pd_vec3)) == 0);
    pd_real worst = 0;
    for (size_t i = 0; i < n; ++i)
        worst = fmin(worst, pd_collider_sdf(&c.items[0], pos[0][i], NULL));
    printf("  deepest particle after projection: %.3g m\n", worst);
    PD_CHECK(worst > -1e-12);
    for (int k = 0; k < 2; ++k) {
        PD_FREE_ARRAY(pos[k], pd_vec3, n);
        PD_FREE_ARRAY(vel[k], pd_vec3, n);
    }
    pd_colliders_destroy(&c);
    PD_CHECK_NEAR(pd_bytes_in_use(), before, 0);
}

/* The coarse lattice's bound (pd_mesh_sdf_lower_bound) never exceeds the signed distance, for a
 * closed mesh as a solid and as a container (the hourglass: flipped) and points beyond the
 * lattice; an open mesh (the bowl's wall, whose distance jumps by its thickness beside the
 * rim: bound - distance 0.034 m when it had a lattice) has none; and it spares the exact query
 * where it should: inside the hourglass, most points more than two lattice cells from the glass are
 * known to be clear. */
static void check_lower_bound(const pd_mesh_sdf* sdf, pd_vec3 lo, pd_vec3 hi, uint64_t seed,
                              pd_real* worst, pd_real* spared, int* inside_far) {
    *worst = -INFINITY;
    int far = 0, clear = 0;
    for (int n = 0; n < 4000; ++n) {
        pd_vec3 p = rand_in(&seed, lo, hi);
        pd_real d = pd_mesh_sdf_eval(sdf, p, NULL), bound = pd_mesh_sdf_lower_bound(sdf, p);
        *worst = fmax(*worst, bound - d);
        if (d > 2 * sdf->cell) {
            ++far;
            clear += bound > 0;
        }
    }
    *spared = far ? (pd_real)clear / far : 0;
    *inside_far = far;
}

PD_TEST(coarse_lattice_bounds_the_distance_from_below) {
    pd_mesh glass, bunny, bowl;
    pd_mesh_sdf sdf;
    PD_REQUIRE(load(PD_SOURCE_DIR "/scenes/meshes/hourglass.obj", 1, &glass));
    PD_REQUIRE(load(BUNNY_PATH, 0.0207, &bunny));
    PD_REQUIRE(load(BOWL_PATH, 0.3, &bowl));
    pd_real worst, spared;
    int far;
    const pd_vec3 big = pd_v3(0.5, 0.5, 0.5);
    PD_REQUIRE(build_sdf(&glass, 0, 1, &sdf)); /* a container: free inside the glass */
    check_lower_bound(&sdf, pd_v3(-0.08, -0.2, -0.08), pd_v3(0.08, 0.2, 0.08), 3, &worst, &spared,
                      &far);
    printf("  hourglass (inside): bound - distance at most %.3g m; %d points more than two cells "
           "(%.1f mm) inside, %.0f %% of them known clear\n",
           worst, far, 2e3 * sdf.cell, 100 * spared);
    PD_CHECK(worst <= 1e-12);
    PD_CHECK(spared > 0.9);
    check_lower_bound(&sdf, pd_v3_scale(big, -1), big, 4, &worst, &spared, &far);
    printf("  hourglass, points up to 0.5 m away (beyond the lattice): at most %.3g m\n", worst);
    PD_CHECK(worst <= 1e-12);
    /* a runaway particle (NaN, infinite) gets no bound: it once indexed the lattice with
     * (int) NaN and crashed the projection */
    PD_CHECK(pd_mesh_sdf_lower_bound(&sdf, pd_v3(NAN, 0, 0)) == -INFINITY);
    PD_CHECK(pd_mesh_sdf_lower_bound(&sdf, pd_v3(0, INFINITY, 0)) == -INFINITY);
    pd_vec3 far_away = pd_v3(0, 0, 1e30);
    pd_real bound = pd_mesh_sdf_lower_bound(&sdf, far_away);
    PD_CHECK(isfinite(bound) && bound <= pd_mesh_sdf_eval(&sdf, far_away, NULL));
    pd_mesh_sdf_free(&sdf);
    PD_REQUIRE(build_sdf(&bunny, 0, 0, &sdf));
    check_lower_bound(&sdf, pd_v3(-0.15, -0.05, -0.15), pd_v3(0.15, 0.25, 0.15), 5, &worst, &spared,
                      &far);
    printf("  bunny (a solid): at most %.3g m\n", worst);
    PD_CHECK(worst <= 1e-12);
    pd_mesh_sdf_free(&sdf);
    PD_REQUIRE(build_sdf(&bowl, 0.04, 1, &sdf));
    check_lower_bound(&sdf, pd_v3(-0.4, -0.4, -0.4), pd_v3(0.4, 0.2, 0.4), 6, &worst, &spared,
                      &far);
    printf("  bowl (a wall behind an open mesh): at most %.3g m\n", worst);
    PD_CHECK(worst <= 1e-12 && !sdf.coarse);
    pd_mesh_sdf_free(&sdf);
    pd_mesh_free(&glass);
    pd_mesh_free(&bunny);
    pd_mesh_free(&bowl);
}
