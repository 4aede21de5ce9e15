#include "sph/redistribution.h"

#include <math.h>

#include "parallel/parallel.h"
#include "sph/kernels.h"
#include "sph/wall_density.h"

/* A particle whose kernel density falls below this share of the rest density lies at a free
 * surface and takes no part (redistribution.h). */
#define SURFACE_RATIO 0.95

typedef struct redistribution_ctx {
    const pd_density_constraint_def* d;
    const pd_real* strength;
    pd_vec3* y;
    pd_density_scratch* sc;
} redistribution_ctx;

static int redistributed(const redistribution_ctx* c, size_t i) {
    return c->strength[i] > 0 && c->d->inv_mass[i] > 0;
}

/* sum_l |grad_l C_i|^2 of Eq. 23 over the particles that move, with grad_i rho = g:
 * grad_i C_i = 2 (sum_j V_j/R_i Hess W_ij) g, grad_j C_i = -2 V_j/R_i (Hess W_ij) g. */
static pd_real constraint_gradient_norm2(const redistribution_ctx* c, size_t i, pd_vec3 g) {
    const pd_density_constraint_def* d = c->d;
    pd_real H = d->radius[i], inv_r = 1.0 / d->rest_sum[i], sum = 0;
    pd_vec3 own = pd_v3(0, 0, 0);
    for (uint32_t b = d->offsets[i]; b < d->offsets[i + 1]; ++b) {
        uint32_t j = d->nbr[b];
        pd_vec3 hg = pd_sph_spiky_hessian_times(pd_v3_sub(c->y[i], c->y[j]), H, g);
        hg = pd_v3_scale(hg, 2 * d->volume[j] * inv_r);
        own = pd_v3_add(own, hg);
        if (d->inv_mass[j] > 0)
            sum += pd_v3_len2(hg);
    }
    return sum + pd_v3_len2(own);
}

/* tau_i of Eq. 22 in kernel units: C_i H^2 / ((1 + relaxation) H^6 sum_l |grad_l C_i|^2). */
static void tau_kernel(void* vctx, size_t begin, size_t end, int thread) {
    redistribution_ctx* c = vctx;
    const pd_density_constraint_def* d = c->d;
    pd_real error = 0;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        c->sc->lambda[i] = 0;
        if (!redistributed(c, i))
            continue;
        pd_vec3 g;
        pd_real ratio = pd_density_ratio_gradient(d, c->y, i, &g);
        pd_real C = pd_v3_len2(g), H = d->radius[i];
        if (ratio < SURFACE_RATIO)
            continue;
        error += C * H * H;
        pd_real denom = constraint_gradient_norm2(c, i, g);
        if (C > 0 && denom > 0)
            c->sc->lambda[i] = C / ((1 + d->relaxation) * H * H * H * H * denom);
    }
    c->sc->partial[begin / PD_DENSITY_GRAIN] = error;
}

/* Eq. 24 in kernel units, back in metres: dy_i = -delta_i H^2 sum_j (tau_i + tau_j) / 2
 * V_j / R_i grad W(y_i - y_j, H). */
static void move_kernel(void* vctx, size_t begin, size_t end, int thread) {
    redistribution_ctx* c = vctx;
    const pd_density_constraint_def* d = c->d;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        c->sc->move[i] = pd_v3(0, 0, 0);
        if (!redistributed(c, i) || c->sc->lambda[i] == 0)
            continue;
        pd_real H = d->radius[i], inv_r = 1.0 / d->rest_sum[i];
        pd_vec3 m = pd_v3(0, 0, 0);
        for (uint32_t b = d->offsets[i]; b < d->offsets[i + 1]; ++b) {
            uint32_t j = d->nbr[b];
            pd_real t = 0.5 * (c->sc->lambda[i] + c->sc->lambda[j]);
            if (t == 0)
                continue;
            pd_vec3 gw = pd_sph_spiky_gradient(pd_v3_sub(c->y[i], c->y[j]), H);
            m = pd_v3_madd(m, t * d->volume[j] * inv_r, gw);
        }
        if (d->colliders && c->sc->lambda[i] != 0) { /* the solid as a neighbour at tau_i */
            pd_vec3 wall;
            pd_sph_collider_share_gradient(d->colliders, c->y[i], H, pd_density_wall_spacing(d, i),
                                           &wall);
            m = pd_v3_madd(m, c->sc->lambda[i], wall);
        }
        c->sc->move[i] = pd_v3_scale(m, -c->strength[i] * H * H);
    }
}

static void apply_kernel(void* vctx, size_t begin, size_t end, int thread) {
    redistribution_ctx* c = vctx;
    (void)thread;
    for (size_t i = begin; i < end; ++i)
        c->y[i] = pd_v3_add(c->y[i], c->sc->move[i]);
}

pd_real pd_redistribute(const pd_density_constraint_def* def, const pd_real* strength, pd_vec3* y,
                        int iterations, pd_density_scratch* scratch) {
    redistribution_ctx c = {def, strength, y, scratch};
    size_t chunks = pd_density_chunks(def->count), active = 0;
    for (size_t i = 0; i < def->count; ++i)
        active += redistributed(&c, i);
    pd_real error = 0;
    for (int it = 0; it < iterations && active > 0; ++it) {
        pd_parallel_for(def->count, PD_DENSITY_GRAIN, tau_kernel, &c);
        error = 0;
        for (size_t k = 0; k < chunks; ++k)
            error += scratch->partial[k];
        pd_parallel_for(def->count, PD_DENSITY_GRAIN, move_kernel, &c);
        pd_parallel_for(def->count, PD_DENSITY_GRAIN, apply_kernel, &c);
    }
    return active ? error / (pd_real)active : 0;
}
