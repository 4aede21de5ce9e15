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
 * ghosts) sampled on their bounding lattice, are counted exactly. *surface gets the particles
 * within a horizon of the surface (twice where a part is thinner than two horizons), which
 * hold fewer bonds than a full family. */
static pd_status body_particles(const pd_body_def* body, const char* path, pd_real horizon,
                                double* n, double* surface, pd_error* err) {
    double volume = 0, area = 0;
    pd_vec3 lo, hi;
    pd_status st = pd_shape_measure(&body->shape, &lo, &hi, &volume, &area, path, err);
    if (st != PD_OK)
        return st;
    double h = body->spacing, lattice = lattice_points(lo, hi, h);
    if (body->kind == PD_BODY_ROD)
        *n = 5 * lattice;
    else if (body->kind == PD_BODY_SHELL || body->shape.type == PD_SHAPE_BOX)
        *n = lattice;
    else
        *n = fmin(lattice, volume / (h * h * h));
    /* a layer of depth horizon * h under the surface, each side of a thin part counted (its
     * particles lack bonds on both); shells and rods are all surface */
    int thin = body->kind == PD_BODY_SHELL || body->kind == PD_BODY_ROD;
    *surface = thin ? *n : area * horizon * h / (h * h * h);
    return PD_OK;
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

/* A particle within a horizon of a flat surface lacks, averaged over the layer's depth, 3/16
 * of a full family's bonds (the spherical cap cut off at depth d, integrated over d from 0 to
 * the horizon); the bulk has them all. */
static double bond_fraction(double particles, double surface) {
    return particles > 0 ? fmax(0.25, 1 - 3.0 / 16.0 * surface / particles) : 1;
}

pd_status pd_scene_estimate(const pd_scene* scene, pd_estimate* out, pd_error* err) {
    double particles = 0, surface = 0;
    pd_real horizon = scene_horizon(scene);
    char path[64];
    for (int b = 0; b < scene->body_count; ++b) {
        snprintf(path, sizeof path, "bodies[%d].shape", b);
        double n = 0, near = 0;
        pd_status st = body_particles(&scene->bodies[b], path, horizon, &n, &near, err);
        if (st != PD_OK)
            return st;
        particles += n, surface += near;
    }
    const pd_solver_vtable* solver = scene->solver;
    double fraction = bond_fraction(particles, surface);
    size_t per = PD_WORLD_BYTES_PER_PARTICLE + solver->bytes_per_particle(scene, fraction);
    particles = ceil(particles);
    out->particles = clamp_size(particles);
    /* a method without a horizon key builds no families (the grid methods) */
    int bonded = pd_param_find(scene->solver->params, "horizon") != NULL;
    out->bonds = bonded ? clamp_size(particles * fraction * 4.2 * horizon * horizon * horizon) : 0;
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
    return pd_fail(err, PD_ERR_TOO_LARGE, "bodies",
                   "the scene needs up to about %.3g GiB for about %zu particles, more than the "
                   "%.3g GiB (80 %% of %s, %.3g GiB) this process can use; use a larger spacing "
                   "or smaller bodies",
                   (double)est->bytes / gib, est->particles, 0.8 * limit.bytes / gib, limit.source,
                   limit.bytes / gib);
}
