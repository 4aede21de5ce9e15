/* Colliders as grid boundary conditions (grid_boundary.h). */
#include "grid/grid_boundary.h"

#include <math.h>

#include "parallel/parallel.h"

pd_vec3 pd_grid_collider_velocity(const pd_collider* col, pd_vec3 x, pd_vec3 v) {
    pd_vec3 n;
    if (pd_collider_sdf(col, x, &n) > 0)
        return v;
    pd_vec3 vc = pd_collider_velocity_at(col, x);
    if (col->def.boundary == PD_BOUNDARY_NO_SLIP)
        return vc;
    pd_vec3 rel = pd_v3_sub(v, vc);
    pd_real vn = pd_v3_dot(rel, n);
    if (vn >= 0)
        return v; /* moving away: free to separate */
    pd_vec3 vt = pd_v3_sub(rel, pd_v3_scale(n, vn));
    pd_real speed = pd_v3_len(vt), keep = 0;
    if (speed > 0) /* Coulomb: the tangential impulse is at most mu times the normal one */
        keep = fmax(0, 1 + col->def.friction * vn / speed);
    return pd_v3_add(vc, pd_v3_scale(vt, keep));
}

typedef struct boundary_job {
    const pd_grid* g;
    const pd_real* mass; /* k values per node (fields), as velocity */
    pd_vec3* velocity;
    size_t k;
    const pd_colliders* colliders;
} boundary_job;

static void boundary_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const boundary_job* job = ctx;
    const pd_grid* g = job->g;
    int ny = g->dim[1], nz = g->dim[2];
    for (size_t n = begin; n < end; ++n) {
        int i = (int)(n / ((size_t)ny * nz)), j = (int)(n / nz % ny), k = (int)(n % nz);
        pd_vec3 x = pd_grid_node(g, i, j, k);
        for (size_t b = n * job->k; b < (n + 1) * job->k; ++b) {
            if (!(job->mass[b] > 0))
                continue;
            pd_vec3 v = job->velocity[b];
            for (int c = 0; c < job->colliders->count; ++c)
                v = pd_grid_collider_velocity(&job->colliders->items[c], x, v);
            job->velocity[b] = v;
        }
    }
}

static void apply(const pd_grid* g, const pd_real* mass, pd_vec3* velocity, size_t k,
                  const pd_colliders* colliders) {
    if (colliders->count == 0)
        return;
    boundary_job job = {g, mass, velocity, k, colliders};
    pd_parallel_for(g->nodes, 512, boundary_range, &job);
}

void pd_grid_apply_colliders(pd_grid* g, const pd_colliders* colliders) {
    apply(g, g->mass, g->velocity, 1, colliders);
}

void pd_grid_fields_apply_colliders(const pd_grid* g, pd_grid_fields* f,
                                    const pd_colliders* colliders) {
    apply(g, f->mass, f->velocity, (size_t)f->count, colliders);
}
