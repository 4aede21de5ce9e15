/* Unit tests of shape sampling and mesh import: particle counts times spacing^3 against exact
 * volumes (box, sphere, tilted cylinder, the Stanford bunny by the divergence theorem), the
 * winding number's robustness on open and non-manifold variants of the bunny, error statuses
 * for bad meshes, determinism of the random samplings, and thin bodies (one layer, one line). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "geometry/mesh.h"
#include "geometry/sampling.h"
#include "parallel/parallel.h"
#include "test.h"

#define BUNNY_PATH PD_SOURCE_DIR "/scenes/meshes/bunny.obj"
/* The bunny is 9.66 units tall: this makes it 0.2 m. */
#define BUNNY_SCALE (0.2 / 9.657897)

static pd_shape_def blank_shape(pd_shape_type type) {
    pd_shape_def s;
    memset(&s, 0, sizeof s);
    s.type = type;
    s.scale = 1;
    s.rotate_axis = pd_v3(0, 1, 0);
    return s;
}

static pd_shape_def box_shape(pd_vec3 lo, pd_vec3 hi) {
    pd_shape_def s = blank_shape(PD_SHAPE_BOX);
    s.min = lo;
    s.max = hi;
    return s;
}

static pd_shape_def mesh_shape(const char* file, pd_real scale) {
    pd_shape_def s = blank_shape(PD_SHAPE_MESH);
    snprintf(s.path, sizeof s.path, "%s", file);
    s.scale = scale;
    return s;
}

static void temp_path(char* out, size_t cap, const char* name) {
    snprintf(out, cap, "/tmp/pd_sampling_%ld_%s", (long)getpid(), name);
}

static void free_points(pd_vec3* p, size_t n) {
    if (p)
        PD_FREE_ARRAY(p, pd_vec3, n);
}

/* Samples and returns the particle count (0 on error, with the status in *st). */
static size_t sample_count(const pd_shape_def* s, pd_real spacing, pd_sampling mode, uint64_t seed,
                           pd_status* st) {
    pd_vec3* p = NULL;
    size_t n = 0;
    pd_error err = {0};
    *st = pd_sample_shape(s, spacing, mode, seed, &p, &n, "bodies[0]", &err);
    if (*st != PD_OK)
        printf("  sample error: %s: %s\n", err.path, err.message);
    free_points(p, n);
    return n;
}

/* Enclosed volume by the divergence theorem, computed here independently of the library. */
static double divergence_volume(const pd_mesh* m) {
    double v = 0;
    for (size_t t = 0; t < m->triangle_count; ++t) {
        pd_vec3 a = m->vertices[m->triangles[3 * t]], b = m->vertices[m->triangles[3 * t + 1]],
                c = m->vertices[m->triangles[3 * t + 2]];
        v += (a.x * (b.y * c.z - b.z * c.y) - a.y * (b.x * c.z - b.z * c.x) +
              a.z * (b.x * c.y - b.y * c.x)) /
             6;
    }
    return v;
}

PD_TEST(box_count_is_exact) {
    pd_shape_def s = box_shape(pd_v3(0, 0, 0), pd_v3(0.1, 0.2, 0.05));
    pd_vec3* p = NULL;
    size_t n = 0;
    pd_error err = {0};
    PD_REQUIRE(pd_sample_shape(&s, 0.01, PD_SAMPLING_GRID, 1, &p, &n, "bodies[0]", &err) == PD_OK);
    PD_CHECK_NEAR(n, 10 * 20 * 5, 0);
    PD_CHECK_NEAR(p[0].x, 0.005, 1e-12);
    PD_CHECK_NEAR(p[0].y, 0.005, 1e-12);
    PD_CHECK_NEAR(p[1].x, 0.015, 1e-12); /* x runs fastest */
    PD_CHECK_NEAR(p[n - 1].z, 0.045, 1e-12);
    free_points(p, n);
}

PD_TEST(sphere_volume_within_3_percent) {
    pd_shape_def s = blank_shape(PD_SHAPE_SPHERE);
    s.center = pd_v3(0.013, -0.2, 0.4);
    s.radius = 0.15;
    pd_real h = 0.01; /* r / spacing = 15 */
    pd_status st;
    size_t n = sample_count(&s, h, PD_SAMPLING_GRID, 0, &st);
    PD_CHECK(st == PD_OK);
    PD_CHECK_REL(n * h * h * h, 4.0 / 3.0 * PD_PI * 0.15 * 0.15 * 0.15, 0.03);
}

PD_TEST(tilted_cylinder_volume_within_3_percent) {
    pd_shape_def s = blank_shape(PD_SHAPE_CYLINDER);
    pd_vec3 a = pd_v3(1, 2, 0.5);
    s.axis = pd_v3_scale(a, 1 / pd_v3_len(a));
    s.base = pd_v3(0.1, 0, -0.05);
    s.radius = 0.05;
    s.height = 0.15;
    pd_real h = 0.005;
    pd_status st;
    size_t n = sample_count(&s, h, PD_SAMPLING_GRID, 0, &st);
    PD_CHECK(st == PD_OK);
    PD_CHECK_REL(n * h * h * h, PD_PI * 0.05 * 0.05 * 0.15, 0.03);
}

PD_TEST(cylinder_bounds_are_exact) {
    pd_shape_def s = blank_shape(PD_SHAPE_CYLINDER);
    pd_vec3 a = pd_v3(0.3, -1, 0.7);
    s.axis = pd_v3_scale(a, 1 / pd_v3_len(a));
    s.base = pd_v3(1, 2, 3);
    s.radius = 0.2;
    s.height = 0.5;
    pd_vec3 lo, hi;
    PD_REQUIRE(pd_shape_bounds(&s, &lo, &hi, "bodies[0].shape", NULL) == PD_OK);
    /* Brute force over the rims: two unit vectors perpendicular to the axis. */
    pd_vec3 u = pd_v3_cross(s.axis, pd_v3(1, 0, 0));
    u = pd_v3_scale(u, 1 / pd_v3_len(u));
    pd_vec3 v = pd_v3_cross(s.axis, u);
    pd_vec3 blo = pd_v3(1e9, 1e9, 1e9), bhi = pd_v3(-1e9, -1e9, -1e9);
    for (int cap = 0; cap < 2; ++cap)
        for (int k = 0; k < 20000; ++k) {
            double t = 2 * PD_PI * k / 20000.0;
            pd_vec3 q = pd_v3_madd(s.base, cap * s.height, s.axis);
            q = pd_v3_madd(pd_v3_madd(q, s.radius * cos(t), u), s.radius * sin(t), v);
            blo = pd_v3_min(blo, q);
            bhi = pd_v3_max(bhi, q);
        }
    PD_CHECK_NEAR(lo.x, blo.x, 1e-6);
    PD_CHECK_NEAR(lo.y, blo.y, 1e-6);
    PD_CHECK_NEAR(lo.z, blo.z, 1e-6);
    PD_CHECK_NEAR(hi.x, bhi.x, 1e-6);
    PD_CHECK_NEAR(hi.y, bhi.y, 1e-6);
    PD_CHECK_NEAR(hi.z, bhi.z, 1e-6);
}

PD_TEST(contains_counts_surface_points) {
    pd_shape_def box = box_shape(pd_v3(-0.1, 0, 0.3), pd_v3(0.2, 0.7, 0.9));
    PD_CHECK(pd_shape_contains(&box, pd_v3(-0.1, 0, 0.3)));
    PD_CHECK(pd_shape_contains(&box, pd_v3(0.2, 0.35, 0.6)));
    PD_CHECK(!pd_shape_contains(&box, pd_v3(0.2 + 1e-6, 0.35, 0.6)));
    pd_shape_def sph = blank_shape(PD_SHAPE_SPHERE);
    sph.center = pd_v3(0.1, 0.2, 0.3);
    sph.radius = 0.37;
    pd_shape_def cyl = blank_shape(PD_SHAPE_CYLINDER);
    cyl.base = pd_v3(0.5, 0, 0);
    cyl.axis = pd_v3(0.6, 0, 0.8);
    cyl.radius = 0.1;
    cyl.height = 0.4;
    pd_vec3 u = pd_v3(0, 1, 0), v = pd_v3(0.8, 0, -0.6); /* perpendicular to the axis */
    int on = 0, off = 0;
    for (int k = 0; k < 1000; ++k) {
        double t = 0.001 + 2 * PD_PI * k / 1000.0, z = -1 + 2 * (k + 0.5) / 1000.0;
        pd_vec3 dir = pd_v3(sqrt(1 - z * z) * cos(t), sqrt(1 - z * z) * sin(t), z);
        on += pd_shape_contains(&sph, pd_v3_madd(sph.center, sph.radius, dir));
        off += pd_shape_contains(&sph, pd_v3_madd(sph.center, sph.radius * 1.0001, dir));
        pd_vec3 rim = pd_v3_madd(pd_v3_madd(cyl.base, 0.1 * cos(t), u), 0.1 * sin(t), v);
        pd_vec3 side = pd_v3_madd(rim, 0.4 * (k + 0.5) / 1000.0, cyl.axis);
        pd_vec3 top = pd_v3_madd(cyl.base, 0.4, cyl.axis);
        on += pd_shape_contains(&cyl, rim) + pd_shape_contains(&cyl, side);
        on += pd_shape_contains(&cyl, pd_v3_madd(top, 0.1 * (k / 1000.0), u));
        off += pd_shape_contains(&cyl, pd_v3_madd(top, 1e-5, cyl.axis));
        off += pd_shape_contains(&cyl, pd_v3_madd(side, 1e-4, pd_v3_sub(rim, cyl.base)));
    }
    PD_CHECK_NEAR(on, 4000, 0);
    PD_CHECK_NEAR(off, 0, 0);
}

PD_TEST(thin_bodies_get_one_layer_or_one_line) {
    pd_shape_def shell = box_shape(pd_v3(0, 0.1, 0), pd_v3(0.1, 0.103, 0.05));
    pd_vec3* p = NULL;
    size_t n = 0;
    PD_REQUIRE(pd_sample_shape(&shell, 0.01, PD_SAMPLING_GRID, 0, &p, &n, "bodies[0]", NULL) ==
               PD_OK);
    PD_CHECK_NEAR(n, 10 * 5, 0);
    double ymin = 1, ymax = -1;
    for (size_t i = 0; i < n; ++i) {
        ymin = fmin(ymin, p[i].y);
        ymax = fmax(ymax, p[i].y);
    }
    PD_CHECK_NEAR(ymin, 0.1015, 1e-12);
    PD_CHECK_NEAR(ymax, 0.1015, 1e-12);
    free_points(p, n);
    /* Jitter stays in the layer. */
    PD_REQUIRE(pd_sample_shape(&shell, 0.01, PD_SAMPLING_JITTERED, 5, &p, &n, "b", NULL) == PD_OK);
    PD_CHECK_NEAR(p[n / 2].y, 0.1015, 1e-12);
    free_points(p, n);
    pd_shape_def rod = box_shape(pd_v3(0, 0, 0), pd_v3(0.004, 0.3, 0.002));
    PD_REQUIRE(pd_sample_shape(&rod, 0.01, PD_SAMPLING_GRID, 0, &p, &n, "bodies[0]", NULL) ==
               PD_OK);
    PD_CHECK_NEAR(n, 30, 0);
    PD_CHECK_NEAR(p[7].x, 0.002, 1e-12);
    PD_CHECK_NEAR(p[7].z, 0.001, 1e-12);
    free_points(p, n);
}

static int same_points(const pd_vec3* a, size_t na, const pd_vec3* b, size_t nb) {
    return na == nb && memcmp(a, b, na * sizeof(pd_vec3)) == 0;
}

PD_TEST(jittered_is_deterministic_per_seed) {
    pd_shape_def s = blank_shape(PD_SHAPE_SPHERE);
    s.radius = 0.1;
    pd_vec3 *a = NULL, *b = NULL, *c = NULL, *g = NULL;
    size_t na = 0, nb = 0, nc = 0, ng = 0;
    int threads = pd_thread_count();
    pd_set_threads(1);
    PD_REQUIRE(pd_sample_shape(&s, 0.01, PD_SAMPLING_JITTERED, 42, &a, &na, "b", NULL) == PD_OK);
    pd_set_threads(threads > 1 ? threads : 2);
    PD_REQUIRE(pd_sample_shape(&s, 0.01, PD_SAMPLING_JITTERED, 42, &b, &nb, "b", NULL) == PD_OK);
    PD_REQUIRE(pd_sample_shape(&s, 0.01, PD_SAMPLING_JITTERED, 43, &c, &nc, "b", NULL) == PD_OK);
    PD_REQUIRE(pd_sample_shape(&s, 0.01, PD_SAMPLING_GRID, 0, &g, &ng, "b", NULL) == PD_OK);
    pd_set_threads(threads);
    PD_CHECK(same_points(a, na, b, nb));
    PD_CHECK(!same_points(a, na, c, nc));
    /* Each jittered point is within 0.25 spacing (per axis) of a grid point, every point is
     * inside, and the count stays near the grid's. */
    double worst = 0, mean_abs = 0;
    int outside = 0;
    for (size_t i = 0; i < na; ++i) {
        pd_vec3 q = pd_v3_scale(pd_v3_add(a[i], pd_v3(0.1, 0.1, 0.1)), 100); /* lattice units */
        pd_real d[3] = {q.x - floor(q.x) - 0.5, q.y - floor(q.y) - 0.5, q.z - floor(q.z) - 0.5};
        for (int k = 0; k < 3; ++k) {
            worst = fmax(worst, fabs(d[k]));
            mean_abs += fabs(d[k]) / (3.0 * na);
        }
        outside += !pd_shape_contains(&s, a[i]);
    }
    PD_CHECK_NEAR(worst, 0.125, 0.125 + 1e-9);
    PD_CHECK_NEAR(mean_abs, 0.125, 0.01); /* uniform on [-0.25, 0.25] */
    PD_CHECK_NEAR(outside, 0, 0);
    PD_CHECK_REL(na, ng, 0.02);
    /* 1 and 2 threads on a sphere of radius 0.2 m: 41^3 candidates, five chunks of the
     * inside test's 16384 (the radius 0.1 m above has one, which pd_parallel_for runs
     * serially: a and b compare the seed with itself, not the thread counts). */
    pd_shape_def big = blank_shape(PD_SHAPE_SPHERE);
    big.radius = 0.2;
    pd_vec3 *one = NULL, *two = NULL;
    size_t n1 = 0, n2 = 0;
    pd_set_threads(1);
    PD_REQUIRE(pd_sample_shape(&big, 0.01, PD_SAMPLING_JITTERED, 42, &one, &n1, "b", NULL) ==
               PD_OK);
    pd_set_threads(threads > 1 ? threads : 2);
    PD_REQUIRE(pd_sample_shape(&big, 0.01, PD_SAMPLING_JITTERED, 42, &two, &n2, "b", NULL) ==
               PD_OK);
    pd_set_threads(threads);
    printf("  radius 0.2 m: %zu points on 1 thread, %zu on 2\n", n1, n2);
    PD_CHECK(n1 > 30000);
    PD_CHECK(same_points(one, n1, two, n2));
    free_points(one, n1);
    free_points(two, n2);
    free_points(a, na);
    free_points(b, nb);
    free_points(c, nc);
    free_points(g, ng);
}

PD_TEST(poisson_disk_keeps_min_distance) {
    pd_shape_def s = blank_shape(PD_SHAPE_SPHERE);
    s.radius = 0.08;
    pd_real h = 0.01;
    pd_vec3 *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    PD_REQUIRE(pd_sample_shape(&s, h, PD_SAMPLING_POISSON_DISK, 7, &a, &na, "b", NULL) == PD_OK);
    PD_REQUIRE(pd_sample_shape(&s, h, PD_SAMPLING_POISSON_DISK, 7, &b, &nb, "b", NULL) == PD_OK);
    PD_CHECK(same_points(a, na, b, nb));
    double dmin = 1;
    int outside = 0;
    for (size_t i = 0; i < na; ++i) {
        outside += !pd_shape_contains(&s, a[i]);
        for (size_t j = i + 1; j < na; ++j)
            dmin = fmin(dmin, pd_v3_len(pd_v3_sub(a[i], a[j])));
    }
    PD_CHECK(dmin >= 0.85 * h * (1 - 1e-12));
    PD_CHECK_NEAR(dmin / h, 0.875, 0.025);
    PD_CHECK_NEAR(outside, 0, 0);
    /* Near-saturated random packing: about one particle per spacing^3. */
    double per_cell = na * h * h * h / (4.0 / 3.0 * PD_PI * 0.08 * 0.08 * 0.08);
    PD_CHECK_NEAR(per_cell, 1.0, 0.06);
    free_points(a, na);
    free_points(b, nb);
}

/* poisson_disk_relaxed: the same darts as poisson_disk (same count), shifted (sampling.c): the
 * same points twice, none outside the shape, each moved less than a spacing, no pair closer
 * than 0.75 spacing (where xpbi's Eq. 21 would push them apart at rest; the darts' 0.85 is not
 * kept: measured 0.77 on a sphere of radius 0.08 m, mean move 0.23 spacing, 14 s of CPU at load
 * 26). A sphere of radius 0.05 m at 1 cm, seed 7. */
PD_TEST(poisson_disk_relaxed_shifts_the_darts_inside_the_shape) {
    pd_shape_def s = blank_shape(PD_SHAPE_SPHERE);
    s.radius = 0.05;
    pd_real h = 0.01;
    pd_vec3 *a = NULL, *b = NULL, *d = NULL;
    size_t na = 0, nb = 0, nd = 0;
    PD_REQUIRE(pd_sample_shape(&s, h, PD_SAMPLING_POISSON_DISK_RELAXED, 7, &a, &na, "b", NULL) ==
               PD_OK);
    PD_REQUIRE(pd_sample_shape(&s, h, PD_SAMPLING_POISSON_DISK_RELAXED, 7, &b, &nb, "b", NULL) ==
               PD_OK);
    PD_REQUIRE(pd_sample_shape(&s, h, PD_SAMPLING_POISSON_DISK, 7, &d, &nd, "b", NULL) == PD_OK);
    PD_CHECK(same_points(a, na, b, nb));
    PD_REQUIRE(na == nd);
    double dmin = 1, moved = 0, worst = 0;
    int outside = 0;
    for (size_t i = 0; i < na; ++i) {
        outside += !pd_shape_contains(&s, a[i]);
        double m = pd_v3_len(pd_v3_sub(a[i], d[i]));
        moved += m, worst = fmax(worst, m);
        for (size_t j = i + 1; j < na; ++j)
            dmin = fmin(dmin, pd_v3_len(pd_v3_sub(a[i], a[j])));
    }
    printf("  %zu points: closest pair %.4f spacing, mean move %.4f, largest %.4f spacing\n", na,
           dmin / h, moved / (double)na / h, worst / h);
    PD_CHECK_NEAR(outside, 0, 0);
    PD_CHECK(dmin >= 0.75 * h);
    PD_CHECK(moved / (double)na > 0.01 * h); /* it moved */
    PD_CHECK(worst < h);
    free_points(a, na);
    free_points(b, nb);
    free_points(d, nd);
}

PD_TEST(absurd_lattice_is_too_large) {
    pd_shape_def s = box_shape(pd_v3(0, 0, 0), pd_v3(1, 1, 1));
    pd_status st;
    sample_count(&s, 1e-4, PD_SAMPLING_GRID, 0, &st);
    PD_CHECK(st == PD_ERR_TOO_LARGE);
    sample_count(&s, 0, PD_SAMPLING_GRID, 0, &st);
    PD_CHECK(st == PD_ERR_BAD_SCENE);
}

PD_TEST(tilted_hair_cylinder_yields_no_particles) {
    pd_shape_def s = blank_shape(PD_SHAPE_CYLINDER);
    pd_vec3 a = pd_v3(1, 2, 3);
    s.axis = pd_v3_scale(a, 1 / pd_v3_len(a));
    s.radius = 0.0005;
    s.height = 0.1;
    pd_vec3* p = NULL;
    size_t n = 0;
    pd_error err = {0};
    pd_status st = pd_sample_shape(&s, 0.01, PD_SAMPLING_GRID, 0, &p, &n, "bodies[3]", &err);
    printf("  %s: %s\n", err.path, err.message);
    PD_CHECK(st == PD_ERR_BAD_SCENE);
    PD_CHECK(strstr(err.message, "no particles") != NULL);
    PD_CHECK(strncmp(err.path, "bodies[3]", 9) == 0);
    PD_CHECK(p == NULL && n == 0);
}

/* ---- meshes ---- */

static double bunny_particle_volume(const char* file, pd_real h, pd_status* st) {
    pd_shape_def s = mesh_shape(file, BUNNY_SCALE);
    return sample_count(&s, h, PD_SAMPLING_GRID, 0, st) * h * h * h;
}

static double bunny_volume(void) {
    pd_shape_def s = mesh_shape(BUNNY_PATH, BUNNY_SCALE);
    pd_mesh m;
    if (pd_mesh_load(&s, &m, "bodies[0].shape", NULL) != PD_OK)
        return 0;
    double v = divergence_volume(&m);
    pd_mesh_free(&m);
    return v;
}

PD_TEST(bunny_loads_scaled_rotated_translated) {
    pd_shape_def s = mesh_shape(BUNNY_PATH, 2);
    pd_mesh plain, moved;
    PD_REQUIRE(pd_mesh_load(&s, &plain, "bodies[0].shape", NULL) == PD_OK);
    PD_CHECK_NEAR(plain.triangle_count, 3674, 0);
    PD_CHECK_NEAR(plain.vertex_count, 1839, 0);
    s.rotate_axis = pd_v3(0, 0, 1);
    s.rotate_degrees = 90;
    s.translate = pd_v3(1, 2, 3);
    PD_REQUIRE(pd_mesh_load(&s, &moved, "bodies[0].shape", NULL) == PD_OK);
    pd_vec3 lo, hi, mlo, mhi;
    pd_mesh_bounds(&plain, &lo, &hi);
    pd_mesh_bounds(&moved, &mlo, &mhi);
    PD_CHECK_NEAR(hi.y - lo.y, 2 * 9.657897, 1e-4);
    /* 90 degrees about z: (x, y) -> (-y, x), then + (1, 2, 3). */
    PD_CHECK_NEAR(mlo.x, -hi.y + 1, 1e-9);
    PD_CHECK_NEAR(mhi.x, -lo.y + 1, 1e-9);
    PD_CHECK_NEAR(mlo.y, lo.x + 2, 1e-9);
    PD_CHECK_NEAR(mlo.z, lo.z + 3, 1e-9);
    PD_CHECK_REL(pd_mesh_signed_volume(&moved), divergence_volume(&plain), 1e-9);
    pd_mesh_free(&plain);
    pd_mesh_free(&moved);
}

PD_TEST(tree_winding_number_matches_exact) {
    pd_shape_def s = mesh_shape(BUNNY_PATH, BUNNY_SCALE);
    pd_mesh m;
    pd_mesh_tree t;
    PD_REQUIRE(pd_mesh_load(&s, &m, "bodies[0].shape", NULL) == PD_OK);
    PD_REQUIRE(pd_mesh_tree_build(&m, &t) == PD_OK);
    pd_vec3 lo, hi;
    pd_mesh_bounds(&m, &lo, &hi);
    uint64_t x = 12345;
    double worst = 0, inside = 0;
    for (int i = 0; i < 2000; ++i) {
        pd_real u[3];
        for (int k = 0; k < 3; ++k) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            u[k] = -0.2 + 1.4 * (double)(x >> 11) / 9007199254740992.0;
        }
        pd_vec3 p = pd_v3(lo.x + u[0] * (hi.x - lo.x), lo.y + u[1] * (hi.y - lo.y),
                          lo.z + u[2] * (hi.z - lo.z));
        double exact = pd_mesh_winding_number(&m, p);
        worst = fmax(worst, fabs(pd_mesh_tree_winding_number(&t, p) - exact));
        inside += exact >= 0.5;
    }
    PD_CHECK_NEAR(worst, 0, 0.012);
    PD_CHECK(inside > 100);
    PD_CHECK_NEAR(pd_mesh_winding_number(&m, pd_v3(0, 0.05, 0)), 1, 1e-9);
    PD_CHECK_NEAR(pd_mesh_winding_number(&m, pd_v3(0, 0.5, 0)), 0, 1e-9);
    pd_mesh_tree_free(&t);
    pd_mesh_free(&m);
}

PD_TEST(bunny_volume_within_3_percent) {
    double exact = bunny_volume();
    PD_REQUIRE(exact > 0);
    pd_status st;
    double v = bunny_particle_volume(BUNNY_PATH, 0.004, &st);
    PD_CHECK(st == PD_OK);
    PD_CHECK_REL(v, exact, 0.03);
}

/* Copies the bunny, dropping faces with keep(k) == 0, repeating those with keep(k) == 2, and
 * appending `extra` lines. */
static int write_bunny_variant(const char* out_path, int (*keep)(int), const char* extra) {
    FILE* in = fopen(BUNNY_PATH, "r");
    FILE* out = fopen(out_path, "w");
    if (!in || !out) {
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return 0;
    }
    char line[512];
    int face = 0;
    while (fgets(line, sizeof line, in)) {
        int copies = line[0] == 'f' && line[1] == ' ' ? keep(face++) : 1;
        for (int c = 0; c < copies; ++c)
            fputs(line, out);
    }
    fputs(extra, out);
    fclose(in);
    fclose(out);
    return 1;
}

static int drop_every_50th(int k) {
    return k % 50 != 17;
}
static int repeat_every_40th(int k) {
    return k % 40 == 3 ? 2 : 1;
}

PD_TEST(open_bunny_still_samples) {
    char path[256];
    temp_path(path, sizeof path, "open.obj");
    PD_REQUIRE(write_bunny_variant(path, drop_every_50th, ""));
    pd_status st;
    double v = bunny_particle_volume(path, 0.004, &st);
    remove(path);
    PD_CHECK(st == PD_OK);
    PD_CHECK_REL(v, bunny_volume(), 0.05);
}

PD_TEST(non_manifold_bunny_still_samples) {
    char path[256];
    temp_path(path, sizeof path, "nonmanifold.obj");
    /* Repeated faces plus a dangling fin hanging off vertices 1 and 2. */
    PD_REQUIRE(write_bunny_variant(path, repeat_every_40th, "v 1.2 3.5 2.6\nf 1 2 1840\n"));
    pd_status st;
    double v = bunny_particle_volume(path, 0.004, &st);
    remove(path);
    PD_CHECK(st == PD_OK);
    PD_CHECK_REL(v, bunny_volume(), 0.05);
}

static int write_text(const char* path, const char* text) {
    FILE* f = fopen(path, "w");
    if (!f)
        return 0;
    fputs(text, f);
    fclose(f);
    return 1;
}

/* Unit cubes shifted along x by shift[k], each closed: 12 triangles counter-clockwise seen from
 * outside (or reversed). */
static void write_cubes(const char* path, const double* shift, int cubes, int reversed) {
    static const char* faces[] = {"1 3 2", "1 4 3", "5 6 7", "5 7 8", "1 2 6", "1 6 5",
                                  "2 3 7", "2 7 6", "3 4 8", "3 8 7", "4 1 5", "4 5 8"};
    static const int corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                     {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
    char text[4096] = "";
    char line[64];
    for (int k = 0; k < cubes; ++k)
        for (int v = 0; v < 8; ++v) {
            snprintf(line, sizeof line, "v %g %d %d\n", corner[v][0] + shift[k], corner[v][1],
                     corner[v][2]);
            strcat(text, line);
        }
    for (int k = 0; k < cubes; ++k)
        for (int i = 0; i < 12; ++i) {
            int a, b, c;
            sscanf(faces[i], "%d %d %d", &a, &b, &c);
            a += 8 * k, b += 8 * k, c += 8 * k;
            snprintf(line, sizeof line, "f %d %d %d\n", a, reversed ? c : b, reversed ? b : c);
            strcat(text, line);
        }
    write_text(path, text);
}

static void write_cube(const char* path, int reversed) {
    const double none = 0;
    write_cubes(path, &none, 1, reversed);
}

PD_TEST(cube_mesh_matches_box_either_winding) {
    char path[256];
    temp_path(path, sizeof path, "cube.obj");
    for (int reversed = 0; reversed < 2; ++reversed) {
        write_cube(path, reversed);
        pd_shape_def s = mesh_shape(path, 0.1);
        pd_status st;
        size_t n = sample_count(&s, 0.01, PD_SAMPLING_GRID, 0, &st);
        PD_CHECK(st == PD_OK);
        PD_CHECK_NEAR(n, 1000, 0);
    }
    remove(path);
}

/* A mesh of two closed cubes overlapping by half (x in [0, 1] and [0.5, 1.5], scale 0.1):
 * the sampler fills their union, 1.5e-3 m^3, where the enclosed volume (the winding number's
 * integral) counts the overlap twice, 2e-3; a Poisson-disk body's particles share the occupied
 * volume (src/world/bodies.c), so the two would weigh it 33 % heavy. Side by side, the mesh
 * keeps its enclosed volume: the same, to round-off. */
PD_TEST(overlapping_mesh_pieces_occupy_their_union) {
    char path[256];
    temp_path(path, sizeof path, "cubes.obj");
    const double overlapping[2] = {0, 0.5}, apart[2] = {0, 2};
    const double* shifts[2] = {overlapping, apart};
    const double occupied[2] = {1.5e-3, 2e-3};
    for (int c = 0; c < 2; ++c) {
        write_cubes(path, shifts[c], 2, c);
        pd_shape_def s = mesh_shape(path, 0.1);
        pd_vec3 lo, hi;
        double enclosed, area, volume = 0;
        pd_error err = {0};
        PD_REQUIRE(pd_shape_measure(&s, &lo, &hi, &enclosed, &area, "bodies[0]", &err) == PD_OK);
        PD_REQUIRE(pd_shape_occupied_volume(&s, 0.01, &volume, "bodies[0]", &err) == PD_OK);
        printf("  cubes at x = 0 and %g: enclosed %.6g m^3, occupied %.6g (expected %.6g)\n",
               shifts[c][1], enclosed, volume, occupied[c]);
        PD_CHECK_REL(enclosed, 2e-3, 1e-12);
        PD_CHECK_REL(volume, occupied[c], 1e-9);
    }
    remove(path);
}

static void check_mesh_error(const char* file, const char* what) {
    pd_shape_def s = mesh_shape(file, 1);
    pd_vec3* p = NULL;
    size_t n = 0;
    pd_error err = {0};
    pd_status st = pd_sample_shape(&s, 0.01, PD_SAMPLING_GRID, 0, &p, &n, "bodies[2]", &err);
    printf("  %s: %s -> %s: %s\n", what, pd_status_string(st), err.path, err.message);
    PD_CHECK(st == PD_ERR_IO || st == PD_ERR_MESH);
    PD_CHECK(strstr(err.message, file) != NULL);
    PD_CHECK(strcmp(err.path, "bodies[2].shape.path") == 0);
    PD_CHECK(p == NULL && n == 0);
}

PD_TEST(bad_mesh_files_are_errors) {
    char path[256];
    temp_path(path, sizeof path, "missing.obj");
    check_mesh_error(path, "missing");
    pd_shape_def s = mesh_shape(path, 1);
    pd_mesh m;
    PD_CHECK(pd_mesh_load(&s, &m, "colliders[0].shape", NULL) == PD_ERR_IO);

    temp_path(path, sizeof path, "garbage.obj");
    PD_REQUIRE(write_text(path, "\x01\x02 this is not \xff a mesh\nf a b c\n\x7f\x7f"));
    check_mesh_error(path, "garbage obj");
    temp_path(path, sizeof path, "garbage.stl");
    PD_REQUIRE(write_text(path, "solid x\nfacet nonsense 1 2\n\x01\x02\x03"));
    check_mesh_error(path, "garbage stl");
    remove(path);
    temp_path(path, sizeof path, "garbage.obj");
    remove(path);

    /* A flat square: triangles but no inside. */
    temp_path(path, sizeof path, "flat.obj");
    PD_REQUIRE(write_text(path, "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf 1 2 3\nf 1 3 4\n"));
    pd_shape_def flat = mesh_shape(path, 0.1);
    pd_status st;
    sample_count(&flat, 0.01, PD_SAMPLING_GRID, 0, &st);
    PD_CHECK(st == PD_ERR_MESH);
    /* A lone triangle standing up: volume 0 but not thin. */
    PD_REQUIRE(write_text(path, "v 0 0 0\nv 1 0 0\nv 0 1 0.5\nf 1 2 3\n"));
    sample_count(&flat, 0.01, PD_SAMPLING_GRID, 0, &st);
    PD_CHECK(st == PD_ERR_MESH);
    remove(path);
}
