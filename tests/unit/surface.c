/* Particle surfaces (peridot/surface.h, OpenVDB): a sampled sphere's mesh is closed and holds
 * the sphere's volume; a flat layer's top surface sits where its particles' cells end; a build
 * without OpenVDB refuses with the hint. */
#include <stdlib.h>
#include <string.h>

#include "peridot/surface.h"
#include "test.h"

/* Points of the lattice (i + 1/2) h inside the sphere of radius R about the origin. */
static size_t sample_sphere(double h, double R, float* x, float* y, float* z) {
    int m = (int)(R / h) + 1;
    size_t n = 0;
    for (int i = -m; i < m; ++i)
        for (int j = -m; j < m; ++j)
            for (int k = -m; k < m; ++k) {
                double px = (i + 0.5) * h, py = (j + 0.5) * h, pz = (k + 0.5) * h;
                if (px * px + py * py + pz * pz <= R * R) {
                    if (x)
                        x[n] = (float)px, y[n] = (float)py, z[n] = (float)pz;
                    ++n;
                }
            }
    return n;
}

static int compare_edge(const void* p, const void* q) {
    const uint64_t a = *(const uint64_t*)p, b = *(const uint64_t*)q;
    return (a > b) - (a < b);
}

/* Edges used by other than exactly two triangles, plus directed edges used twice (two
 * triangles that disagree on the orientation): 0 for a closed, consistently oriented mesh. */
static size_t open_edges(const pd_surface_mesh* m) {
    size_t e = 3 * m->triangle_count, bad = 0;
    uint64_t* directed = malloc(e * sizeof *directed);
    uint64_t* undirected = malloc(e * sizeof *undirected);
    for (size_t t = 0; t < m->triangle_count; ++t)
        for (int c = 0; c < 3; ++c) {
            uint64_t a = m->triangles[3 * t + c], b = m->triangles[3 * t + (c + 1) % 3];
            directed[3 * t + c] = a << 32 | b;
            undirected[3 * t + c] = a < b ? a << 32 | b : b << 32 | a;
        }
    qsort(directed, e, sizeof *directed, compare_edge);
    qsort(undirected, e, sizeof *undirected, compare_edge);
    for (size_t i = 0; i + 1 < e; ++i)
        bad += directed[i] == directed[i + 1];
    for (size_t i = 0; i < e;) {
        size_t j = i;
        while (j < e && undirected[j] == undirected[i])
            ++j;
        bad += j - i != 2;
        i = j;
    }
    free(directed);
    free(undirected);
    return bad;
}

/* Divergence theorem: the sum over triangles of v0 . (v1 x v2) / 6; > 0 when the triangles
 * turn counter-clockwise seen from outside. */
static double enclosed_volume(const pd_surface_mesh* m) {
    double v = 0;
    for (size_t t = 0; t < m->triangle_count; ++t) {
        const float* a = m->vertices + 3 * m->triangles[3 * t];
        const float* b = m->vertices + 3 * m->triangles[3 * t + 1];
        const float* c = m->vertices + 3 * m->triangles[3 * t + 2];
        v += (a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) +
              a[1] * ((double)b[2] * c[0] - (double)b[0] * c[2]) +
              a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0])) /
             6.0;
    }
    return v;
}

PD_TEST(unavailable_build_says_how_to_get_openvdb) {
    const char* hint = pd_surface_unavailable_hint();
    printf("  OpenVDB in this build: %d\n  hint: %s\n", pd_surface_available(), hint);
    PD_CHECK(strstr(hint, "apt-get install libopenvdb-dev") != NULL);
    PD_CHECK(strstr(hint, "rebuild") != NULL);
    float p[3] = {0, 0, 0};
    pd_surface_def def = pd_surface_default_def(0.1);
    pd_surface_mesh m;
    pd_error err = {0};
    pd_status s = pd_surface_mesh_points(&def, 1, p, p + 1, p + 2, &m, &err);
    if (!pd_surface_available()) {
        PD_CHECK(s == PD_ERR_UNSUPPORTED);
        PD_CHECK(strstr(err.message, "libopenvdb-dev") != NULL);
    } else {
        PD_CHECK(s == PD_OK);
        pd_surface_mesh_free(&m);
    }
    def.radius = 0.05; /* half the spacing: the erosion would leave nothing */
    s = pd_surface_mesh_points(&def, 1, p, p + 1, p + 2, &m, &err);
    PD_CHECK(s == (pd_surface_available() ? PD_ERR_INVALID_ARGUMENT : PD_ERR_UNSUPPORTED));
    printf("  radius = spacing / 2: %s\n", err.message);
}

/* Sphere of radius 8 spacings (2.1K particles): watertight, outward, its volume within 5 %. */
PD_TEST(sphere_of_particles_gives_closed_mesh_of_its_volume) {
    if (!pd_surface_available()) {
        printf("  skipped: no OpenVDB in this build\n");
        return;
    }
    const double h = 0.01, R = 0.08;
    size_t n = sample_sphere(h, R, NULL, NULL, NULL);
    float* x = malloc(3 * n * sizeof *x);
    sample_sphere(h, R, x, x + n, x + 2 * n);
    pd_surface_def def = pd_surface_default_def(h);
    pd_surface_mesh m;
    pd_error err = {0};
    PD_REQUIRE(pd_surface_mesh_points(&def, n, x, x + n, x + 2 * n, &m, &err) == PD_OK);
    double sphere = 4.0 / 3.0 * 3.14159265358979323846 * R * R * R, volume = enclosed_volume(&m);
    printf("  %zu particles (n h^3 = %.4g of the sphere's volume) -> %zu vertices, %zu "
           "triangles\n",
           n, n * h * h * h / sphere, m.vertex_count, m.triangle_count);
    PD_CHECK(m.triangle_count > 0);
    size_t open = open_edges(&m);
    printf("  edges not shared by exactly two triangles of opposite directions: %zu\n", open);
    PD_CHECK(open == 0);
    PD_CHECK_REL(volume, sphere, 0.05);
    pd_surface_mesh_free(&m);
    free(x);
}

/* A layer of 16 x 3 x 16 particles: away from its sides, the top surface lies between the top
 * particles (y_top) and half a spacing above them, where their cells end. */
PD_TEST(flat_layer_surface_lies_within_half_a_spacing_of_its_top) {
    if (!pd_surface_available()) {
        printf("  skipped: no OpenVDB in this build\n");
        return;
    }
    const double h = 0.02;
    enum { nx = 16, ny = 3, nz = 16, n = nx * ny * nz };
    static float x[n], y[n], z[n];
    int p = 0;
    for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j)
            for (int k = 0; k < nz; ++k, ++p)
                x[p] = (float)(i * h), y[p] = (float)(j * h), z[p] = (float)(k * h);
    const double top = (ny - 1) * h, inner = 3 * h, outer = (nx - 1) * h - 3 * h;
    pd_surface_def def = pd_surface_default_def(h);
    pd_surface_mesh m;
    pd_error err = {0};
    PD_REQUIRE(pd_surface_mesh_points(&def, n, x, y, z, &m, &err) == PD_OK);
    double lo = 1e30, hi = -1e30, sum = 0;
    size_t count = 0;
    for (size_t v = 0; v < m.vertex_count; ++v) {
        const float* q = m.vertices + 3 * v;
        if (q[1] < top - 0.5 * h || q[0] < inner || q[0] > outer || q[2] < inner || q[2] > outer)
            continue; /* the bottom, or near the sides */
        lo = q[1] < lo ? q[1] : lo;
        hi = q[1] > hi ? q[1] : hi;
        sum += q[1];
        ++count;
    }
    printf("  %zu top vertices: height above the top particles from %.4f to %.4f spacings, "
           "mean %.4f\n",
           count, (lo - top) / h, (hi - top) / h, (sum / (double)count - top) / h);
    PD_CHECK(count > 100);
    PD_CHECK_NEAR((lo - top) / h, 0.25, 0.25);
    PD_CHECK_NEAR((hi - top) / h, 0.25, 0.25);
    PD_CHECK(open_edges(&m) == 0);
    pd_surface_mesh_free(&m);
}
