/* The particles' shadow from a light straight above: a height map (the highest particle over
 * each cell of an x-z lattice, a shadow map seen from above) against which a collider point is
 * tested; 25 taps spread over two splat radii soften its edge (percentage-closer
 * filtering, Reeves, Salesin, Cook 1987). */
#include <float.h>

#include "core/alloc.h"
#include "render/render_internal.h"

#define PD_SHADOW_MAX_CELLS 512 /* per side: finer than the splats of any frame we draw */

static int cell_index(const pd_shadow_map* m, double x, double z, int* ix, int* iz) {
    *ix = (int)floor((x - m->x0) / m->cell);
    *iz = (int)floor((z - m->z0) / m->cell);
    return *ix >= 0 && *iz >= 0 && *ix < m->nx && *iz < m->nz;
}

/* Raises the cells under the disc of `radius` about (x, z) to `top`. */
static void splat_top(pd_shadow_map* m, double x, double z, double radius, float top) {
    int x0, z0, x1, z1;
    cell_index(m, x - radius, z - radius, &x0, &z0);
    cell_index(m, x + radius, z + radius, &x1, &z1);
    for (int iz = z0 < 0 ? 0 : z0; iz <= z1 && iz < m->nz; ++iz)
        for (int ix = x0 < 0 ? 0 : x0; ix <= x1 && ix < m->nx; ++ix) {
            double dx = m->x0 + (ix + 0.5) * m->cell - x, dz = m->z0 + (iz + 0.5) * m->cell - z;
            float* t = &m->top[(size_t)iz * (size_t)m->nx + (size_t)ix];
            if (dx * dx + dz * dz <= radius * radius && top > *t)
                *t = top;
        }
}

int pd_shadow_map_build(pd_shadow_map* m, pd_vec3 lo, pd_vec3 hi, double radius, size_t n,
                        const float* x, const float* y, const float* z) {
    double ext = fmax(hi.x - lo.x, hi.z - lo.z);
    m->soft = radius;
    m->cell = fmax(ext / PD_SHADOW_MAX_CELLS, 1e-9);
    if (m->cell < radius / 3) /* finer than a third of a splat shows nothing more */
        m->cell = fmin(radius / 3, ext / 8);
    m->x0 = lo.x - m->soft;
    m->z0 = lo.z - m->soft;
    m->nx = (int)ceil((hi.x - lo.x + 2 * m->soft) / m->cell);
    m->nz = (int)ceil((hi.z - lo.z + 2 * m->soft) / m->cell);
    m->nx = m->nx < 1 ? 1 : (m->nx > 2 * PD_SHADOW_MAX_CELLS ? 2 * PD_SHADOW_MAX_CELLS : m->nx);
    m->nz = m->nz < 1 ? 1 : (m->nz > 2 * PD_SHADOW_MAX_CELLS ? 2 * PD_SHADOW_MAX_CELLS : m->nz);
    size_t cells = (size_t)m->nx * (size_t)m->nz;
    m->top = pd_alloc(cells * sizeof(float));
    if (!m->top)
        return 0;
    for (size_t k = 0; k < cells; ++k)
        m->top[k] = -FLT_MAX;
    m->highest = -FLT_MAX;
    for (size_t i = 0; i < n; ++i)
        if (pd_finite3(x[i], y[i], z[i]) && pd_in_box(lo, hi, x[i], y[i], z[i])) {
            splat_top(m, x[i], z[i], 1.25 * radius, y[i]); /* 1.25: closes a lattice's gaps */
            m->highest = y[i] > m->highest ? y[i] : m->highest;
        }
    return 1;
}

void pd_shadow_map_free(pd_shadow_map* m) {
    pd_free(m->top, (size_t)m->nx * (size_t)m->nz * sizeof(float));
    m->top = NULL;
}

float pd_shadow_at(const pd_shadow_map* m, pd_vec3 p) {
    if (!(p.y < m->highest)) /* above every particle: lit (most of a ground) */
        return 0.0f;
    int ix, iz;
    cell_index(m, p.x, p.z, &ix, &iz);
    int step = (int)(0.5 * m->soft / m->cell + 0.5);
    step = step < 1 ? 1 : step;
    if (ix < -2 * step || iz < -2 * step || ix >= m->nx + 2 * step || iz >= m->nz + 2 * step)
        return 0.0f;
    int dark = 0;
    for (int j = -2; j <= 2; ++j)
        for (int i = -2; i <= 2; ++i) {
            int cx = ix + i * step, cz = iz + j * step;
            dark += cx >= 0 && cz >= 0 && cx < m->nx && cz < m->nz &&
                    m->top[(size_t)cz * (size_t)m->nx + (size_t)cx] > p.y;
        }
    return (float)dark / 25.0f;
}
