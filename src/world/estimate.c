/* What a scene will cost before anything is sampled: particles from the bodies' volumes,
 * bonds, bytes (the world's arrays plus the method's own), the output's bytes, steps. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/param.h"
#include "geometry/sampling.h"
#include "world/fields.h"
#include "world/world.h"

/* Bytes per particle of the world's own arrays (world/particles.c, step scratch). */
#define PD_WORLD_BYTES_PER_PARTICLE (6 * sizeof(pd_vec3) + 3 * sizeof(pd_real) + 4 * 4 + 2)

static double lattice_points(pd_vec3 lo, pd_vec3 hi, pd_real h) {
    double n = 1;
    for (int k = 0; k < 3; ++k)
        n *= floor((pd_v3_comp(hi, k) - pd_v3_comp(lo, k)) / h) + 1;
    return n;
}

/* About the particles a body's sampling makes. A lattice of spacing h (or the Poisson
 * sampling, at least 0.85 h apart) holds about one point per h^3 of a solid's inside, whatever
 * its shape: its volume over h^3 (a bounding box's lattice overcounted a mesh body 36 times:
 * the flower at 3 mm). A box's lattice, and the shells (one layer) and rods (a line and its
 * ghosts) sampled on their bounding lattice, are counted exactly. */
static pd_status body_particles(const pd_body_def* body, const char* path, double* n, double* area,
                                pd_vec3* extent, pd_error* err) {
    double volume = 0;
    pd_vec3 lo, hi;
    pd_status st = pd_shape_measure(&body->shape, &lo, &hi, &volume, area, path, err);
    if (st != PD_OK)
        return st;
    double h = body->spacing, lattice = lattice_points(lo, hi, h);
    *extent = pd_v3_sub(hi, lo);
    if (body->kind == PD_BODY_ROD)
        *n = 5 * lattice;
    else if (body->kind == PD_BODY_SHELL || body->shape.type == PD_SHAPE_BOX)
        *n = lattice;
    else
        *n = fmin(lattice, volume / (h * h * h));
    return PD_OK;
}

/* Lattice points within `horizon` spacings of one, itself left out: a full family in a
 * `dims`-dimensional lattice (the sampled interior; 33 at 2.01 in 3D, 12 in 2D). */
static double family_size(pd_real horizon, int dims) {
    int r = (int)floor(horizon), count = 0;
    for (int i = -r; i <= r; ++i)
        for (int j = -r; j <= r; ++j)
            for (int k = dims == 3 ? -r : 0; k <= (dims == 3 ? r : 0); ++k)
                count += i * i + j * j + k * k <= horizon * horizon;
    return count - 1;
}

/* Bonds (family members, each pair counted from both ends) of a body of n particles. A solid's
 * particle within a horizon of a flat surface lacks, averaged over the layer's depth, 3/16 of a
 * full family (the spherical cap cut off at depth d, integrated over d from 0 to the horizon),
 * that layer `area` horizon h deep (each side of a thin part counted: its particles lack bonds
 * on both). A shell's families are discs in its layer: within a horizon of its rim a particle
 * lacks 2 / (3 pi) of one (the circular segment cut off at distance d, averaged the same way),
 * the rim's length taken from the two larger sides of its bounds. A rod (a line and its ghosts)
 * is counted as a solid of surface only, a bound. */
static double body_bonds(const pd_body_def* body, double n, double area, pd_vec3 extent,
                         pd_real horizon) {
    double h = body->spacing;
    if (body->kind == PD_BODY_SHELL) {
        double a[3] = {extent.x, extent.y, extent.z}, thinnest = fmin(a[0], fmin(a[1], a[2]));
        double rim = 2 * (a[0] + a[1] + a[2] - thinnest) / h * horizon;
        double lacking = 2 / (3 * PD_PI) * fmin(rim, n);
        return (n - lacking) * family_size(horizon, 2);
    }
    double near = body->kind == PD_BODY_ROD ? n : area * horizon * h / (h * h * h);
    return fmax(0.25 * n, n - 3.0 / 16.0 * near) * family_size(horizon, 3);
}

/* Bytes one frame file takes per particle, and its header's, for the formats asked. */
static void frame_bytes(const pd_scene* scene, double* per_particle, double* header) {
    int values = 3;
    for (unsigned bit = 1; bit <= PD_ATTR_ID; bit <<= 1) {
        const pd_field_info* f = (scene->output.attributes & bit)
                                     ? pd_field_publisher(scene->solver, bit, NULL, NULL)
                                     : NULL;
        values += f ? f->components : 0;
    }
    *per_particle = *header = 0;
    if (scene->output.formats & PD_FORMAT_PLY)
        *per_particle += 4.0 * values, *header += 200 + 32 * values;
    if (scene->output.formats & PD_FORMAT_VTK) /* and a VERTICES cell of two ints */
        *per_particle += 4.0 * values + 8, *header += 300 + 64 * values;
    /* and a vertex cell of an Int32 point, an Int32 offset and a UInt8 type; the .pvd's line */
    if (scene->output.formats & PD_FORMAT_VTU)
        *per_particle += 4.0 * values + 9, *header += 1000 + 96 * values + 100;
}

/* What a run writes: its frames (frame 0, every output.every-th and the last), a stats.csv
 * row per frame (three numbers a pin) and the resolved scene. */
static double output_bytes(const pd_scene* scene, double particles) {
    int frames = scene->world.frames, every = scene->output.every;
    double written = 1 + frames / every + (frames % every != 0);
    double per_particle, header;
    frame_bytes(scene, &per_particle, &header);
    int pins = 0;
    for (int b = 0; b < scene->body_count; ++b)
        pins += scene->bodies[b].pin_count;
    double row = 160 + 3 * 16 * pins;
    double resolved = scene->resolved_json ? (double)strlen(scene->resolved_json) : 4096;
    return written * (header + particles * per_particle) + (frames + 2) * row + resolved;
}

static size_t clamp_size(double v) {
    return v > 1e18 ? (size_t)1e18 : (size_t)v;
}

/* The method's horizon in spacings (every bonded method declares `horizon`; 2 otherwise). */
static pd_real scene_horizon(const pd_scene* scene) {
    const pd_param_info* row = pd_param_find(scene->solver->params, "horizon");
    return row ? pd_param_get_number(row, scene->solver_params) : 2;
}

pd_status pd_scene_estimate(const pd_scene* scene, pd_estimate* out, pd_error* err) {
    double particles = 0, bonds = 0;
    pd_real horizon = scene_horizon(scene);
    char path[64];
    for (int b = 0; b < scene->body_count; ++b) {
        snprintf(path, sizeof path, "bodies[%d].shape", b);
        double n = 0, area = 0;
        pd_vec3 extent;
        pd_status st = body_particles(&scene->bodies[b], path, &n, &area, &extent, err);
        if (st != PD_OK)
            return st;
        particles += n;
        bonds += body_bonds(&scene->bodies[b], n, area, extent, horizon);
    }
    particles += (double)pd_scene_emitted_particles(scene); /* reserved at the start */
    const pd_solver_vtable* solver = scene->solver;
    /* the methods size their bond arrays as fraction * 4.2 horizon^3 a particle */
    double full = 4.2 * horizon * horizon * horizon;
    double fraction = particles > 0 ? bonds / (particles * full) : 1;
    size_t per = PD_WORLD_BYTES_PER_PARTICLE + solver->bytes_per_particle(scene, fraction);
    particles = ceil(particles);
    out->particles = clamp_size(particles);
    /* a method without a horizon key builds no families (the grid methods) */
    int bonded = pd_param_find(scene->solver->params, "horizon") != NULL;
    out->bonds = bonded ? clamp_size(bonds) : 0;
    out->bytes = clamp_size(particles * (double)per);
    out->output_bytes = clamp_size(output_bytes(scene, particles));
    double steps_per_frame = ceil(1.0 / (scene->world.fps * scene->world.dt) - 1e-9);
    out->steps = (size_t)(steps_per_frame * scene->world.frames);
    return PD_OK;
}

pd_status pd_scene_check_memory(const pd_scene* scene, const pd_estimate* est, pd_error* err) {
    pd_memory_limit limit = pd_memory_limit_read("/proc/self/cgroup", "/sys/fs/cgroup");
    if (scene->world.memory_limit_bytes)
        limit = (pd_memory_limit){(double)scene->world.memory_limit_bytes, "the set limit"};
    if (!((double)est->bytes > 0.8 * limit.bytes))
        return PD_OK;
    const double gib = 1073741824.0;
    /* most of them poured by emitters: say so, where they are given */
    int poured = 2 * (double)pd_scene_emitted_particles(scene) > (double)est->particles;
    return pd_fail(err, PD_ERR_TOO_LARGE, poured ? "emitters" : "bodies",
                   "the scene needs up to about %.3g GiB for about %zu particles, more than the "
                   "%.3g GiB (80 %% of %s, %.3g GiB) this process can use; use a larger spacing "
                   "or %s",
                   (double)est->bytes / gib, est->particles, 0.8 * limit.bytes / gib, limit.source,
                   limit.bytes / gib,
                   poured ? "narrower, slower or shorter-lived emitters" : "smaller bodies");
}
