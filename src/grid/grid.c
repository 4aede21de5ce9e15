/* The background grid: fitting, binning, and the APIC / MLS-MPM transfers (grid.h). */
#include "grid/grid.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "grid/bspline.h"
#include "grid/grid_cursor.h"
#include "parallel/parallel.h"

void pd_grid_init(pd_grid* g, pd_real dx) {
    memset(g, 0, sizeof *g);
    g->dx = dx;
    g->inv_dx = 1 / dx;
}

void pd_grid_free(pd_grid* g) {
    PD_FREE_ARRAY(g->mass, pd_real, g->node_cap);
    PD_FREE_ARRAY(g->velocity, pd_vec3, g->node_cap);
    PD_FREE_ARRAY(g->cell_start, uint32_t, g->node_cap + 1);
    PD_FREE_ARRAY(g->sorted, uint32_t, g->particle_cap);
    PD_FREE_ARRAY(g->base, uint32_t, g->particle_cap);
    PD_FREE_ARRAY(g->offset, pd_vec3, g->particle_cap);
    pd_grid_init(g, g->dx);
}

/* Room for `nodes` nodes and `n` particles; arrays only grow (by half again), so a grid that
 * has reached its size allocates nothing more. */
static pd_status reserve(pd_grid* g, size_t nodes, size_t n, pd_error* err) {
    if (nodes > g->node_cap) {
        size_t cap = nodes + nodes / 2;
        PD_FREE_ARRAY(g->mass, pd_real, g->node_cap);
        PD_FREE_ARRAY(g->velocity, pd_vec3, g->node_cap);
        PD_FREE_ARRAY(g->cell_start, uint32_t, g->node_cap + 1);
        g->node_cap = cap;
        g->mass = PD_NEW_ARRAY(pd_real, cap);
        g->velocity = PD_NEW_ARRAY(pd_vec3, cap);
        g->cell_start = PD_NEW_ARRAY(uint32_t, cap + 1);
        if (!g->mass || !g->velocity || !g->cell_start)
            return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "the grid's %zu nodes", cap);
    }
    if (n > g->particle_cap) {
        size_t old = g->particle_cap;
        PD_FREE_ARRAY(g->sorted, uint32_t, old);
        PD_FREE_ARRAY(g->base, uint32_t, old);
        PD_FREE_ARRAY(g->offset, pd_vec3, old);
        g->particle_cap = n;
        g->sorted = PD_NEW_ARRAY(uint32_t, n);
        g->base = PD_NEW_ARRAY(uint32_t, n);
        g->offset = PD_NEW_ARRAY(pd_vec3, n);
        if (!g->sorted || !g->base || !g->offset)
            return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "the grid's %zu particles", n);
    }
    return PD_OK;
}

/* The smallest and largest base node over the particles; PD_ERR_UNSTABLE for a non-finite
 * position. */
static pd_status base_bounds(const pd_grid* g, const pd_vec3* x, size_t n, double lo[3],
                             double hi[3], pd_error* err) {
    for (int a = 0; a < 3; ++a)
        lo[a] = INFINITY, hi[a] = -INFINITY;
    for (size_t p = 0; p < n; ++p) {
        double c[3] = {x[p].x / g->dx, x[p].y / g->dx, x[p].z / g->dx};
        for (int a = 0; a < 3; ++a) {
            if (!isfinite(c[a]))
                return pd_fail(err, PD_ERR_UNSTABLE, "", "particle %zu is not at a finite position",
                               p);
            double b = floor(c[a] - 0.5); /* finite: compared directly (fmin is a call) */
            lo[a] = b < lo[a] ? b : lo[a], hi[a] = b > hi[a] ? b : hi[a];
        }
    }
    return PD_OK;
}

typedef struct stencil_job {
    pd_grid* g;
    const pd_vec3* x;
} stencil_job;

/* Offsets of each particle and its base node (each particle its own: in parallel). */
static void stencil_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const stencil_job* job = ctx;
    pd_grid* g = job->g;
    for (size_t p = begin; p < end; ++p) {
        pd_bspline s = pd_bspline_at(job->x[p], g->origin, g->dx);
        g->offset[p] = pd_v3_sub(job->x[p], pd_grid_node(g, s.base[0], s.base[1], s.base[2]));
        g->base[p] = (uint32_t)pd_grid_index(g, s.base[0], s.base[1], s.base[2]);
    }
}

/* The stencils, then the stable counting sort by base node. */
static void bin_particles(pd_grid* g, const pd_vec3* x, size_t n) {
    stencil_job job = {g, x};
    pd_parallel_for(n, 1024, stencil_range, &job);
    memset(g->cell_start, 0, (g->nodes + 1) * sizeof *g->cell_start);
    for (size_t p = 0; p < n; ++p)
        g->cell_start[g->base[p] + 1]++;
    for (size_t c = 0; c < g->nodes; ++c)
        g->cell_start[c + 1] += g->cell_start[c];
    for (size_t p = 0; p < n; ++p) /* cell_start[c] runs ahead while filling ... */
        g->sorted[g->cell_start[g->base[p]]++] = (uint32_t)p;
    for (size_t c = g->nodes; c > 0; --c) /* ... and is moved back */
        g->cell_start[c] = g->cell_start[c - 1];
    g->cell_start[0] = 0;
}

pd_status pd_grid_fit(pd_grid* g, const pd_vec3* x, size_t n, int margin, size_t max_nodes,
                      pd_error* err) {
    double lo[3], hi[3];
    margin = margin > 1 ? margin : 1; /* one node for rounding: base nodes are found again from
                                       * x - origin, which may round across a node */
    pd_status st = base_bounds(g, x, n, lo, hi, err);
    if (st != PD_OK)
        return st;
    double nodes = 1;
    for (int a = 0; a < 3; ++a) {
        if (n == 0)
            lo[a] = hi[a] = 0;
        double count = hi[a] - lo[a] + 3 + 2.0 * margin; /* a stencil spans 3 nodes */
        nodes *= count;
        g->dim[a] = count < 2e9 ? (int)count : 0;
    }
    if (!(nodes <= (double)max_nodes) || nodes >= 4e9)
        return pd_fail(err, PD_ERR_UNSTABLE, "",
                       "the particles spread over %.3g grid nodes (at most %zu): a runaway", nodes,
                       max_nodes);
    g->origin = pd_v3((pd_real)((lo[0] - margin) * g->dx), (pd_real)((lo[1] - margin) * g->dx),
                      (pd_real)((lo[2] - margin) * g->dx));
    g->nodes = (size_t)nodes;
    g->particles = n;
    if ((st = reserve(g, g->nodes, n, err)) != PD_OK)
        return st;
    bin_particles(g, x, n);
    return PD_OK;
}

/* ------------------------------------------------------------ gathers */

/* ------------------------------------------------------------ particle to grid */

typedef struct p2g_job {
    pd_grid* g;
    const pd_real* mass;
    const pd_vec3* v;
    const pd_mat3* affine;
} p2g_job;

static void p2g_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const p2g_job* job = ctx;
    pd_grid* g = job->g;
    for (size_t n = begin; n < end; ++n) {
        pd_real m = 0, w;
        pd_vec3 mv = pd_v3(0, 0, 0), d;
        uint32_t p;
        for (node_cursor c = node_cursor_at(g, n); node_cursor_next(g, &c, &p, &w, &d);) {
            pd_vec3 mom = pd_v3_scale(job->v[p], job->mass[p]);
            if (job->affine) /* A_p (x_i - x_p) */
                mom = pd_v3_add(mom, pd_m3_mulv(job->affine[p], d));
            m += w * job->mass[p];
            mv = pd_v3_add(mv, pd_v3_scale(mom, w));
        }
        g->mass[n] = m;
        g->velocity[n] = m > 0 ? pd_v3_scale(mv, 1 / m) : pd_v3(0, 0, 0);
    }
}

void pd_grid_from_particles(pd_grid* g, const pd_real* mass, const pd_vec3* v,
                            const pd_mat3* affine) {
    p2g_job job = {g, mass, v, affine};
    pd_parallel_for(g->nodes, 256, p2g_range, &job);
}

/* ------------------------------------------------------------ grid to particle */

typedef struct g2p_job {
    const pd_grid* g;
    const pd_vec3* u;
    pd_vec3* v;   /* sum w u, or NULL */
    pd_mat3* out; /* (4 / dx^2) sum w u d^T, or NULL */
} g2p_job;

static void g2p_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const g2p_job* job = ctx;
    pd_real scale = 4 / (job->g->dx * job->g->dx);
    for (size_t p = begin; p < end; ++p) {
        pd_mat3 b;
        pd_vec3 v = pd_grid_particle_sums(job->g, p, job->u, 1, 0, job->out ? &b : NULL);
        if (job->v)
            job->v[p] = v;
        if (job->out)
            job->out[p] = pd_m3_scale(b, scale);
    }
}

void pd_grid_to_particles(const pd_grid* g, pd_vec3* v, pd_mat3* c) {
    g2p_job job = {g, g->velocity, v, c};
    pd_parallel_for(g->particles, 256, g2p_range, &job);
}

/* RPIC (Fang 2019 Sec. 8): APIC's transfer with C's rotational part alone, that is APIC's plus
 * the impulse I_i of Eq. 11, and back. */
void pd_grid_rpic_round_trip(pd_grid* g, const pd_real* mass, pd_vec3* v, pd_mat3* c,
                             pd_mat3* affine) {
    for (size_t p = 0; p < g->particles; ++p)
        affine[p] = pd_m3_scale(pd_m3_sub(c[p], pd_m3_transpose(c[p])), mass[p] / 2);
    pd_grid_from_particles(g, mass, v, affine);
    pd_grid_to_particles(g, v, c);
}

/* ------------------------------------------------------------ D and D^T */

void pd_grid_gradient(const pd_grid* g, const pd_vec3* node_field, pd_mat3* out) {
    g2p_job job = {g, node_field, NULL, out};
    pd_parallel_for(g->particles, 256, g2p_range, &job);
}

typedef struct divergence_job {
    const pd_grid* g;
    const pd_mat3* m;
    pd_vec3* out;
    pd_real* quadratic;
} divergence_job;

/* sum_p w M_p d (D^T) or sum_p w^2 d . M_p d (its diagonal), times 4 / dx^2 once or twice. */
static void divergence_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const divergence_job* job = ctx;
    const pd_grid* g = job->g;
    pd_real scale = 4 / (g->dx * g->dx);
    for (size_t n = begin; n < end; ++n) {
        pd_vec3 sum = pd_v3(0, 0, 0), d;
        pd_real quad = 0, w;
        uint32_t p;
        for (node_cursor c = node_cursor_at(g, n); node_cursor_next(g, &c, &p, &w, &d);) {
            pd_vec3 md = pd_m3_mulv(job->m[p], d);
            if (job->out)
                sum = pd_v3_add(sum, pd_v3_scale(md, w));
            else
                quad += w * w * pd_v3_dot(d, md);
        }
        if (job->out)
            job->out[n] = pd_v3_scale(sum, scale);
        else
            job->quadratic[n] = quad * scale * scale;
    }
}

void pd_grid_divergence(const pd_grid* g, const pd_mat3* particle_field, pd_vec3* out) {
    divergence_job job = {g, particle_field, out, NULL};
    pd_parallel_for(g->nodes, 256, divergence_range, &job);
}

void pd_grid_quadratic_sum(const pd_grid* g, const pd_mat3* particle_field, pd_real* out) {
    divergence_job job = {g, particle_field, NULL, out};
    pd_parallel_for(g->nodes, 256, divergence_range, &job);
}
