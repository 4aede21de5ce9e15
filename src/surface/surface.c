/* Particle surfaces: checks, files and the build without OpenVDB. The level set and the mesh
 * are OpenVDB's (openvdb_mesher.cpp, compiled only when CMake finds it: PD_HAVE_OPENVDB). */
#include "peridot/surface.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/output.h"
#include "surface/openvdb_mesher.h"

pd_surface_def pd_surface_default_def(double spacing) {
    pd_surface_def d = {
        .spacing = spacing, .radius = 1.5 * spacing, .voxel = 0.5 * spacing, .smooth = 1};
    return d;
}

int pd_surface_available(void) {
#ifdef PD_HAVE_OPENVDB
    return 1;
#else
    return 0;
#endif
}

const char* pd_surface_unavailable_hint(void) {
    return "this peridot was built without OpenVDB, which surfaces need: install it "
           "(apt-get install libopenvdb-dev, or scripts/setup.sh) and rebuild (make, or cmake "
           "--build build); CMake finds it on its own";
}

static pd_status check_def(const pd_surface_def* d, pd_error* err) {
    if (!(d->spacing > 0) || !isfinite(d->spacing))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "spacing %g must be > 0", d->spacing);
    if (!(d->radius > 0.5 * d->spacing) || !isfinite(d->radius))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "",
                       "radius %g must exceed half the spacing (%g): the spheres are eroded by "
                       "radius - spacing / 2",
                       d->radius, 0.5 * d->spacing);
    /* the erosion needs 3 voxels per radius (pd_surface_default_def); 1/50 of the radius bounds
     * the voxels a particle touches (about 10^6) */
    if (!(d->voxel * 3 <= d->radius * (1 + 1e-9)) || !(d->voxel >= d->radius / 50))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "",
                       "voxel %g must lie between radius / 50 and radius / 3 (radius %g)", d->voxel,
                       d->radius);
    if (d->smooth < 0 || d->smooth > 100)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "smooth %d must be 0 to 100", d->smooth);
    return PD_OK;
}

pd_status pd_surface_mesh_points(const pd_surface_def* def, size_t n, const float* x,
                                 const float* y, const float* z, pd_surface_mesh* out,
                                 pd_error* err) {
    memset(out, 0, sizeof *out);
    if (!pd_surface_available())
        return pd_fail(err, PD_ERR_UNSUPPORTED, "", "%s", pd_surface_unavailable_hint());
    pd_status s = check_def(def, err);
    if (s != PD_OK)
        return s;
#ifdef PD_HAVE_OPENVDB
    char why[256] = "";
    pd_openvdb_mesh m;
    int r = pd_openvdb_mesh_points(def->spacing, def->radius, def->voxel, def->smooth, n, x, y, z,
                                   &m, why, sizeof why);
    if (r == PD_OPENVDB_NO_MEMORY)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "out of memory meshing %zu particles", n);
    if (r != PD_OPENVDB_OK)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "%s", why);
    *out = (pd_surface_mesh){m.vertex_count, m.triangle_count, m.vertices, m.triangles};
#endif
    return PD_OK;
}

void pd_surface_mesh_free(pd_surface_mesh* m) {
    PD_FREE_ARRAY(m->vertices, float, 3 * m->vertex_count);
    PD_FREE_ARRAY(m->triangles, uint32_t, 3 * m->triangle_count);
    memset(m, 0, sizeof *m);
}

static int ends_with(const char* s, const char* suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void put_u32_le(FILE* f, uint32_t v) {
    unsigned char b[4] = {v & 255u, (v >> 8) & 255u, (v >> 16) & 255u, (v >> 24) & 255u};
    fwrite(b, 1, 4, f);
}

static void put_f32_le(FILE* f, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    put_u32_le(f, u);
}

/* Binary little-endian whatever the machine, so the bytes are the same everywhere. */
static void write_ply(FILE* f, const pd_surface_mesh* m) {
    fprintf(f,
            "ply\nformat binary_little_endian 1.0\ncomment peridot surface\n"
            "element vertex %zu\nproperty float x\nproperty float y\nproperty float z\n"
            "element face %zu\nproperty list uchar uint vertex_indices\nend_header\n",
            m->vertex_count, m->triangle_count);
    for (size_t i = 0; i < 3 * m->vertex_count; ++i)
        put_f32_le(f, m->vertices[i]);
    for (size_t t = 0; t < m->triangle_count; ++t) {
        fputc(3, f);
        for (int c = 0; c < 3; ++c)
            put_u32_le(f, m->triangles[3 * t + c]);
    }
}

/* %.9g keeps every float's bits. */
static void write_obj(FILE* f, const pd_surface_mesh* m) {
    fprintf(f, "# peridot surface\n");
    for (size_t i = 0; i < m->vertex_count; ++i)
        fprintf(f, "v %.9g %.9g %.9g\n", m->vertices[3 * i], m->vertices[3 * i + 1],
                m->vertices[3 * i + 2]);
    for (size_t t = 0; t < m->triangle_count; ++t) /* OBJ counts vertices from 1 */
        fprintf(f, "f %lu %lu %lu\n", (unsigned long)m->triangles[3 * t] + 1,
                (unsigned long)m->triangles[3 * t + 1] + 1,
                (unsigned long)m->triangles[3 * t + 2] + 1);
}

pd_status pd_surface_write(const char* path, const pd_surface_mesh* mesh, pd_error* err) {
    int ply = ends_with(path, ".ply"), obj = ends_with(path, ".obj");
    if (!ply && !obj)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "%s: a surface is written as .ply or .obj",
                       path);
    pd_atomic_file af;
    pd_status s = pd_atomic_open(&af, path, err);
    if (s != PD_OK)
        return s;
    if (ply)
        write_ply(af.f, mesh);
    else
        write_obj(af.f, mesh);
    return pd_atomic_commit(&af, err);
}
