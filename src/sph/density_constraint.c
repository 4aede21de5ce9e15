#include "sph/density_constraint.h"

#include <math.h>

#include "parallel/parallel.h"
#include "sph/kernels.h"
#include "sph/wall_density.h"

/* rho_i / rho_0, and grad_i C_i (1/m) when grad is not NULL. */
static pd_real ratio_of(const pd_density_constraint_def* d, const pd_vec3* y, size_t i,
                        pd_vec3* grad) {
    pd_real H = d->radius[i], inv_r = 1.0 / d->rest_sum[i];
    pd_real sum = d->volume[i] * pd_sph_poly6(0, H);
    pd_vec3 g = pd_v3(0, 0, 0);
    for (uint32_t b = d->offsets[i]; b < d->offsets[i + 1]; ++b) {
        uint32_t j = d->nbr[b];
        pd_vec3 r = pd_v3_sub(y[i], y[j]);
        sum += d->volume[j] * pd_sph_poly6(pd_v3_len2(r), H);
        if (grad)
            g = pd_v3_madd(g, d->volume[j], pd_sph_spiky_gradient(r, H));
    }
    pd_real wall = 0;
    pd_vec3 wall_grad = pd_v3(0, 0, 0);
    if (d->colliders)
        wall = grad ? pd_sph_collider_share_gradient(d->colliders, y[i], H,
                                                     pd_density_wall_spacing(d, i), &wall_grad)
                    : pd_sph_collider_share(d->colliders, y[i], H, pd_density_wall_spacing(d, i));
    if (grad)
        *grad = pd_v3_madd(wall_grad, inv_r, g);
    return sum * inv_r + wall;
}

/* A family up to this many neighbours keeps its Spiky gradients for the denominator of lambda
 * (a stack buffer of 3 KB); a larger one computes them again. */
#define PD_DENSITY_STAGE 128

/* grad_i C_i alone, as ratio_of computes it: a unilateral constraint needs it only where
 * compressed (the ratio's loop with the gradient costs twice the ratio's alone). The neighbours'
 * gradients W(y_i - y_j, H_i) go to `staged` when the family fits it. */
static pd_vec3 gradient_of(const pd_density_constraint_def* d, const pd_vec3* y, size_t i,
                           pd_vec3 staged[PD_DENSITY_STAGE]) {
    pd_real H = d->radius[i], inv_r = 1.0 / d->rest_sum[i];
    pd_vec3 g = pd_v3(0, 0, 0), wall_grad = pd_v3(0, 0, 0);
    uint32_t first = d->offsets[i], keep = d->offsets[i + 1] - first <= PD_DENSITY_STAGE;
    for (uint32_t b = first; b < d->offsets[i + 1]; ++b) {
        uint32_t j = d->nbr[b];
        pd_vec3 w = pd_sph_spiky_gradient(pd_v3_sub(y[i], y[j]), H);
        if (keep)
            staged[b - first] = w;
        g = pd_v3_madd(g, d->volume[j], w);
    }
    if (d->colliders)
        pd_sph_collider_share_gradient(d->colliders, y[i], H, pd_density_wall_spacing(d, i),
                                       &wall_grad);
    return pd_v3_madd(wall_grad, inv_r, g);
}

pd_real pd_density_ratio(const pd_density_constraint_def* def, const pd_vec3* y, size_t i) {
    return ratio_of(def, y, i, NULL);
}

pd_real pd_density_ratio_gradient(const pd_density_constraint_def* def, const pd_vec3* y, size_t i,
                                  pd_vec3* grad) {
    return ratio_of(def, y, i, grad);
}

size_t pd_density_chunks(size_t count) {
    return (count + PD_DENSITY_GRAIN - 1) / PD_DENSITY_GRAIN;
}

typedef struct solve_ctx {
    const pd_density_constraint_def* d;
    pd_vec3* y;
    pd_density_scratch* sc;
} solve_ctx;

/* lambda_i = -C_i / ((1 + relaxation) sum_k w_k |grad_k C_i|^2) */
static void lambda_kernel(void* vctx, size_t begin, size_t end, int thread) {
    solve_ctx* c = vctx;
    const pd_density_constraint_def* d = c->d;
    pd_real worst = 0;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        c->sc->lambda[i] = 0;
        if (!(d->kind[i] & PD_DENSITY_ACTIVE))
            continue;
        pd_real C = ratio_of(d, c->y, i, NULL) - 1;
        if (d->kind[i] & PD_DENSITY_UNILATERAL)
            C = fmax(C, 0);
        worst = fmax(worst, C);
        if (C == 0) /* lambda 0: grad_i C_i is not read (move_kernel) */
            continue;
        pd_vec3 staged[PD_DENSITY_STAGE];
        pd_vec3 gi = gradient_of(d, c->y, i, staged);
        c->sc->grad[i] = gi;
        pd_real H = d->radius[i], inv_r = 1.0 / d->rest_sum[i];
        pd_real denom = d->inv_mass[i] * pd_v3_len2(gi);
        uint32_t first = d->offsets[i], keep = d->offsets[i + 1] - first <= PD_DENSITY_STAGE;
        for (uint32_t b = first; b < d->offsets[i + 1]; ++b) {
            uint32_t j = d->nbr[b];
            pd_vec3 gj =
                keep ? staged[b - first] : pd_sph_spiky_gradient(pd_v3_sub(c->y[i], c->y[j]), H);
            denom += d->inv_mass[j] * pd_v3_len2(gj) * d->volume[j] * d->volume[j] * inv_r * inv_r;
        }
        if (denom > 0)
            c->sc->lambda[i] = -C / ((1 + d->relaxation) * denom);
    }
    c->sc->partial[begin / PD_DENSITY_GRAIN] = worst;
}

/* dy_i = w_i (lambda_i grad_i C_i + sum_j lambda_j grad_i C_j),
 * grad_i C_j = V_i gradW(y_i - y_j, H_j) / R_j. */
static void move_kernel(void* vctx, size_t begin, size_t end, int thread) {
    solve_ctx* c = vctx;
    const pd_density_constraint_def* d = c->d;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        c->sc->move[i] = pd_v3(0, 0, 0);
        if (d->inv_mass[i] <= 0)
            continue;
        pd_vec3 m = pd_v3(0, 0, 0);
        if (c->sc->lambda[i] != 0)
            m = pd_v3_scale(c->sc->grad[i], c->sc->lambda[i]);
        for (uint32_t b = d->offsets[i]; b < d->offsets[i + 1]; ++b) {
            uint32_t j = d->nbr[b];
            pd_real lj = c->sc->lambda[j];
            if (lj == 0)
                continue;
            pd_vec3 g = pd_sph_spiky_gradient(pd_v3_sub(c->y[i], c->y[j]), d->radius[j]);
            m = pd_v3_madd(m, lj * d->volume[i] / d->rest_sum[j], g);
        }
        c->sc->move[i] = pd_v3_scale(m, d->inv_mass[i]);
    }
}

static void apply_kernel(void* vctx, size_t begin, size_t end, int thread) {
    solve_ctx* c = vctx;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        c->y[i] = pd_v3_add(c->y[i], c->sc->move[i]);
        if (c->sc->lambda_sum)
            c->sc->lambda_sum[i] += c->sc->lambda[i];
    }
}

static int all_zero(const pd_real* a, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (a[i] != 0)
            return 0;
    return 1;
}

pd_real pd_density_constraint_solve(const pd_density_constraint_def* def, pd_vec3* y,
                                    int iterations, pd_density_scratch* scratch) {
    size_t chunks = pd_density_chunks(def->count);
    pd_real worst_all = 0;
    solve_ctx c = {def, y, scratch};
    if (scratch->lambda_sum)
        for (size_t i = 0; i < def->count; ++i)
            scratch->lambda_sum[i] = 0;
    for (int it = 0; it < iterations; ++it) {
        pd_parallel_for(def->count, PD_DENSITY_GRAIN, lambda_kernel, &c);
        worst_all = 0;
        for (size_t k = 0; k < chunks; ++k)
            worst_all = fmax(worst_all, scratch->partial[k]);
        if (all_zero(scratch->lambda, def->count))
            break; /* nothing moves: every later iteration would find the same */
        pd_parallel_for(def->count, PD_DENSITY_GRAIN, move_kernel, &c);
        pd_parallel_for(def->count, PD_DENSITY_GRAIN, apply_kernel, &c);
    }
    return worst_all;
}
