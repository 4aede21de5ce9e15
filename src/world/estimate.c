/* What a scene will cost before anything is sampled: particles from bounding boxes, bonds,
 * bytes (the world's arrays plus the method's own), steps. */
#include <stdio.h>

#include "core/error.h"
#include "geometry/sampling.h"
#include "world/world.h"

/* Bytes per particle of the world's own arrays (world/particles.c, step scratch). */
#define PD_WORLD_BYTES_PER_PARTICLE (6 * sizeof(pd_vec3) + 3 * sizeof(pd_real) + 4 * 4 + 2)

static double lattice_points(pd_vec3 lo, pd_vec3 hi, pd_real h) {
    double n = 1;
    for (int k = 0; k < 3; ++k)
        n *= floor((pd_v3_comp(hi, k) - pd_v3_comp(lo, k)) / h) + 1;
    return n;
}

pd_status pd_scene_estimate(const pd_scene* scene, pd_estimate* out, pd_error* err) {
    double particles = 0;
    char path[64];
    for (int b = 0; b < scene->body_count; ++b) {
        const pd_body_def* body = &scene->bodies[b];
        pd_vec3 lo, hi;
        snprintf(path, sizeof path, "bodies[%d].shape", b);
        pd_status st = pd_shape_bounds(&body->shape, &lo, &hi, path, err);
        if (st != PD_OK)
            return st;
        double n = lattice_points(lo, hi, body->spacing);
        particles += body->kind == PD_BODY_ROD ? 5 * n : n;
    }
    const pd_solver_vtable* solver = scene->solver;
    size_t per = PD_WORLD_BYTES_PER_PARTICLE + solver->bytes_per_particle(scene->solver_params);
    out->particles = particles > 1e18 ? (size_t)1e18 : (size_t)particles;
    out->bonds = out->particles * 32;
    out->bytes = particles * (double)per > 1e18 ? (size_t)1e18 : out->particles * per;
    double steps_per_frame = ceil(1.0 / (scene->world.fps * scene->world.dt) - 1e-9);
    out->steps = (size_t)(steps_per_frame * scene->world.frames);
    return PD_OK;
}
