/* Colliders as grid boundary conditions (grid_boundary.h). */
#include "grid/grid_boundary.h"

#include <math.h>

#include "grid/grid_cursor.h"
#include "parallel/parallel.h"

pd_vec3 pd_grid_collider_velocity(const pd_collider* col, pd_vec3 x, pd_real reach, pd_vec3 v,
                                  pd_real wall_friction) {
    pd_vec3 n;
    if (pd_collider_sdf(col, x, &n) > reach)
        return v;
    pd_vec3 vc = pd_collider_velocity_at(col, x);
    pd_real mu = col->def.friction;
    if (col->def.boundary == PD_BOUNDARY_NO_SLIP) {
        if (!isfinite(wall_friction))
            return vc;
        mu = wall_friction; /* the material slides on its own grains (grid_boundary.h) */
    }
    pd_vec3 rel = pd_v3_sub(v, vc);
    pd_real vn = pd_v3_dot(rel, n);
    if (vn >= 0)
        return v; /* moving away: free to separate */
    pd_vec3 vt = pd_v3_sub(rel, pd_v3_scale(n, vn));
    pd_real speed = pd_v3_len(vt), keep = 0;
    if (speed > 0) /* Coulomb: the tangential impulse is at most mu times the normal one */
        keep = fmax(0, 1 + mu * vn / speed);
    return pd_v3_add(vc, pd_v3_scale(vt, keep));
}

pd_vec3 pd_grid_node_material(const pd_grid* g, const pd_real* mass, const pd_grid_wall* wall,
                              size_t n, pd_real* mu) {
    pd_vec3 moment = pd_v3(0, 0, 0), d;
    pd_real w, weighted = 0;
    uint32_t p;
    int held = wall == NULL;
    for (node_cursor c = node_cursor_at(g, n); node_cursor_next(g, &c, &p, &w, &d);) {
        moment = pd_v3_madd(moment, w * mass[p], d);
        if (held || !(w > 0))
            continue;
        pd_real f = wall->material_friction[wall->particle_material[p]];
        held = !isfinite(f);
        weighted += w * mass[p] * f;
    }
    int ny = g->dim[1], nz = g->dim[2];
    pd_vec3 x = pd_grid_node(g, (int)(n / ((size_t)ny * nz)), (int)(n / nz % ny), (int)(n % nz));
    if (!(g->mass[n] > 0)) {
        *mu = INFINITY;
        return x;
    }
    *mu = held ? INFINITY : weighted / g->mass[n];
    return pd_v3_madd(x, -1 / g->mass[n], moment);
}

pd_vec3 pd_grid_node_material_centre(const pd_grid* g, const pd_real* mass, size_t n) {
    pd_real mu;
    return pd_grid_node_material(g, mass, NULL, n, &mu);
}

/* 1 when no collider's solid comes within `margin` of x (the node's material lies within the
 * stencil's reach of it, so a node farther than that from every solid keeps its velocity). */
static int far_from_colliders(const pd_colliders* colliders, pd_vec3 x, pd_real margin) {
    for (int c = 0; c < colliders->count; ++c)
        if (pd_collider_sdf(&colliders->items[c], x, NULL) <= margin)
            return 0;
    return 1;
}

typedef struct boundary_job {
    const pd_grid* g;
    const pd_real* particle_mass; /* one field: the node's material centre by a gather */
    const pd_grid_fields* f;      /* fields: each one's centre from its moment */
    const pd_grid_wall* wall;     /* the materials' wall friction (NULL: no_slip holds) */
    pd_vec3* velocity;            /* the grid's, or the fields' */
    pd_real reach;
    const pd_colliders* colliders;
} boundary_job;

/* Where field b's material at node n lies, or the grid's (b = 0 without fields), and its wall
 * friction in *mu. */
static pd_vec3 material_centre(const boundary_job* job, size_t n, size_t b, pd_vec3 x,
                               pd_real* mu) {
    if (!job->f)
        return pd_grid_node_material(job->g, job->particle_mass, job->wall, n, mu);
    size_t i = n * (size_t)job->f->count + b;
    *mu = job->wall ? job->wall->field_friction[b] : INFINITY;
    return pd_v3_madd(x, -1 / job->f->mass[i], job->f->moment[i]);
}

static void boundary_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const boundary_job* job = ctx;
    const pd_grid* g = job->g;
    int ny = g->dim[1], nz = g->dim[2];
    size_t k = job->f ? (size_t)job->f->count : 1;
    const pd_real* mass = job->f ? job->f->mass : g->mass;
    pd_real margin = job->reach + 1.5 * sqrt(3.0) * g->dx; /* a stencil's reach */
    for (size_t n = begin; n < end; ++n) {
        if (!(g->mass[n] > 0))
            continue;
        pd_vec3 x =
            pd_grid_node(g, (int)(n / ((size_t)ny * nz)), (int)(n / nz % ny), (int)(n % nz));
        if (far_from_colliders(job->colliders, x, margin))
            continue;
        for (size_t b = 0; b < k; ++b) {
            if (!(mass[n * k + b] > 0))
                continue;
            pd_real mu;
            pd_vec3 centre = material_centre(job, n, b, x, &mu), v = job->velocity[n * k + b];
            for (int c = 0; c < job->colliders->count; ++c)
                v = pd_grid_collider_velocity(&job->colliders->items[c], centre, job->reach, v, mu);
            job->velocity[n * k + b] = v;
        }
    }
}

static void apply(boundary_job* job) {
    if (job->colliders->count > 0)
        pd_parallel_for(job->g->nodes, 512, boundary_range, job);
}

void pd_grid_apply_colliders(pd_grid* g, const pd_real* particle_mass, const pd_grid_wall* wall,
                             pd_real reach, const pd_colliders* colliders) {
    boundary_job job = {g, particle_mass, NULL, wall, g->velocity, reach, colliders};
    apply(&job);
}

void pd_grid_fields_apply_colliders(const pd_grid* g, pd_grid_fields* f, const pd_grid_wall* wall,
                                    pd_real reach, const pd_colliders* colliders) {
    boundary_job job = {g, NULL, f, wall, f->velocity, reach, colliders};
    apply(&job);
}
