/* What the grid's gathers share (grid.c, grid_fields.c; private to src/grid/): a node visits the
 * particles whose stencils reach it in a fixed order, so that every node sums its own
 * contributions (no atomics, the same bytes for any thread count). */
#ifndef PD_GRID_CURSOR_H
#define PD_GRID_CURSOR_H

#include "grid/grid.h"

/* The particles whose stencils reach node n = (i, j, k), one after the other: those binned at
 * base node n - (di, dj, dk), di, dj, dk in 0..2, in a fixed order. Each comes with its weight w
 * at n and d = x_n - x_p. */
typedef struct node_cursor {
    int i, j, k;
    int cell;           /* (di, dj, dk) as 9 di + 3 dj + dk; 27 at the end */
    int di, dj, dk;     /* the cell's, kept while its bin is walked */
    pd_vec3 node;       /* (di, dj, dk) dx: x_n less the bin's base node */
    uint32_t at, until; /* the bin's range in sorted */
} node_cursor;

static inline node_cursor node_cursor_at(const pd_grid* g, size_t n) {
    int ny = g->dim[1], nz = g->dim[2];
    node_cursor c = {(int)(n / ((size_t)ny * nz)),
                     (int)(n / nz % ny),
                     (int)(n % nz),
                     -1,
                     0,
                     0,
                     0,
                     pd_v3(0, 0, 0),
                     0,
                     0};
    return c;
}

static inline int node_cursor_next(const pd_grid* g, node_cursor* c, uint32_t* p, pd_real* w,
                                   pd_vec3* d) {
    while (c->at == c->until) { /* the next bin in range */
        if (++c->cell >= 27)
            return 0;
        c->di = c->cell / 9, c->dj = c->cell / 3 % 3, c->dk = c->cell % 3;
        if (c->i - c->di < 0 || c->j - c->dj < 0 || c->k - c->dk < 0)
            continue;
        size_t b = pd_grid_index(g, c->i - c->di, c->j - c->dj, c->k - c->dk);
        c->at = g->cell_start[b], c->until = g->cell_start[b + 1];
        c->node = pd_v3(c->di * g->dx, c->dj * g->dx, c->dk * g->dx);
    }
    *p = g->sorted[c->at++];
    pd_vec3 o = g->offset[*p];
    *w = pd_bspline_w(o.x * g->inv_dx, c->di) * pd_bspline_w(o.y * g->inv_dx, c->dj) *
         pd_bspline_w(o.z * g->inv_dx, c->dk);
    *d = pd_v3_sub(c->node, o);
    return 1;
}

/* Particle p's sums over its 27 nodes of a node field u, node i's value at u[i * stride +
 * offset] (one field of several, grid_fields.h): sum w u and sum w u d^T (d = x_i - x_p); outer
 * NULL: the first only. */
static inline pd_vec3 pd_grid_particle_sums(const pd_grid* g, size_t p, const pd_vec3* u,
                                            size_t stride, size_t offset, pd_mat3* outer) {
    size_t sj = (size_t)g->dim[2], si = (size_t)g->dim[1] * sj;
    pd_real w[3][3];
    pd_grid_weights(g, p, w);
    pd_vec3 sum = pd_v3(0, 0, 0);
    if (outer)
        *outer = pd_m3_zero();
    for (int di = 0; di < 3; ++di)
        for (int dj = 0; dj < 3; ++dj)
            for (int dk = 0; dk < 3; ++dk) {
                pd_vec3 ui = u[(g->base[p] + di * si + dj * sj + (size_t)dk) * stride + offset];
                pd_real wi = w[0][di] * w[1][dj] * w[2][dk];
                sum = pd_v3_add(sum, pd_v3_scale(ui, wi));
                if (outer) {
                    pd_vec3 d = pd_v3_sub(pd_v3(di * g->dx, dj * g->dx, dk * g->dx), g->offset[p]);
                    pd_m3_add_outer(outer, wi, ui, d);
                }
            }
    return sum;
}

#endif
