/* Quadratic B-spline weights of MPM (Stomakhin et al. 2013, Eq. 121-123 of Jiang et al.'s
 * course notes; Fang 2019 Sec. 6): a particle at x touches the 3 x 3 x 3 nodes from its base
 * node floor(x / dx - 1/2) on; per axis, with f = x / dx - base in [0.5, 1.5),
 *   N0 = (1.5 - f)^2 / 2,  N1 = 3/4 - (f - 1)^2,  N2 = (f - 0.5)^2 / 2,
 * and dN/dx = ((f - 1.5), -2 (f - 1), (f - 0.5)) / dx. The weights sum to 1, reproduce linear
 * fields (sum N (x_i - x) = 0) and their second moment is dx^2 / 4 per axis, the D_p of APIC. */
#ifndef PD_GRID_BSPLINE_H
#define PD_GRID_BSPLINE_H

#include <math.h>

#include "peridot/math.h"

/* The per-axis weights of one particle: node base[a] + k has weight w[a][k]. */
typedef struct pd_bspline {
    int base[3];
    pd_real w[3][3];  /* [axis][k] */
    pd_real dw[3][3]; /* [axis][k]: dN/dx along that axis (1/m) */
} pd_bspline;

/* Node k's (0..2) weight along one axis at f = x / dx - base in [0.5, 1.5): N0, N1, N2 above. */
static inline pd_real pd_bspline_w(pd_real f, int k) {
    pd_real t = k == 0 ? (pd_real)1.5 - f : k == 1 ? f - 1 : f - (pd_real)0.5;
    return k == 1 ? (pd_real)0.75 - t * t : (pd_real)0.5 * t * t;
}

/* The stencil of position x on a grid with origin `origin` (the position of node 0) and cell
 * size dx. */
static inline pd_bspline pd_bspline_at(pd_vec3 x, pd_vec3 origin, pd_real dx) {
    pd_bspline s;
    pd_real inv = 1 / dx,
            g[3] = {(x.x - origin.x) * inv, (x.y - origin.y) * inv, (x.z - origin.z) * inv};
    for (int a = 0; a < 3; ++a) {
        pd_real b = floor(g[a] - (pd_real)0.5), f = g[a] - b;
        s.base[a] = (int)b;
        for (int k = 0; k < 3; ++k)
            s.w[a][k] = pd_bspline_w(f, k);
        s.dw[a][0] = (f - (pd_real)1.5) * inv;
        s.dw[a][1] = -2 * (f - 1) * inv;
        s.dw[a][2] = (f - (pd_real)0.5) * inv;
    }
    return s;
}

/* Weight of node base + (i, j, k). */
static inline pd_real pd_bspline_weight(const pd_bspline* s, int i, int j, int k) {
    return s->w[0][i] * s->w[1][j] * s->w[2][k];
}

/* Gradient of that node's weight (1/m). */
static inline pd_vec3 pd_bspline_gradient(const pd_bspline* s, int i, int j, int k) {
    return pd_v3(s->dw[0][i] * s->w[1][j] * s->w[2][k], s->w[0][i] * s->dw[1][j] * s->w[2][k],
                 s->w[0][i] * s->w[1][j] * s->dw[2][k]);
}

#endif
