#include "sph/viscosity.h"

#include "parallel/parallel.h"

typedef struct viscosity_ctx {
    const pd_density_constraint_def* d;
    const pd_real* nu;
    const pd_vec3* x;
    pd_real h;
    pd_vec3* y;
    pd_density_scratch* sc;
} viscosity_ctx;

static int viscous(const viscosity_ctx* c, size_t i) {
    return c->nu[i] > 0 && c->d->inv_mass[i] > 0;
}

static pd_vec3 velocity(const viscosity_ctx* c, size_t i) {
    return pd_v3_scale(pd_v3_sub(c->y[i], c->x[i]), 1 / c->h);
}

static void start_kernel(void* vctx, size_t begin, size_t end, int thread) {
    viscosity_ctx* c = vctx;
    (void)thread;
    for (size_t i = begin; i < end; ++i)
        c->sc->grad[i] = velocity(c, i);
}

/* One Jacobi update of v_i from the neighbours' previous velocities (in y). */
static void jacobi_kernel(void* vctx, size_t begin, size_t end, int thread) {
    viscosity_ctx* c = vctx;
    const pd_density_constraint_def* d = c->d;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        c->sc->move[i] = c->sc->grad[i];
        if (!viscous(c, i))
            continue;
        pd_real H = d->radius[i], h3 = H * H * H, lap = 45.0 / (PD_PI * h3 * h3);
        pd_real diag = 0;
        pd_vec3 off = pd_v3(0, 0, 0);
        for (uint32_t b = d->offsets[i]; b < d->offsets[i + 1]; ++b) {
            uint32_t j = d->nbr[b];
            pd_real r = pd_v3_len(pd_v3_sub(c->y[i], c->y[j]));
            if (r >= H)
                continue;
            pd_real a = c->h * c->nu[i] * d->volume[j] * lap * (H - r);
            diag += a;
            off = pd_v3_madd(off, a, velocity(c, j));
        }
        c->sc->move[i] = pd_v3_scale(pd_v3_add(c->sc->grad[i], off), 1 / (1 + diag));
    }
}

static void apply_kernel(void* vctx, size_t begin, size_t end, int thread) {
    viscosity_ctx* c = vctx;
    (void)thread;
    for (size_t i = begin; i < end; ++i)
        if (viscous(c, i))
            c->y[i] = pd_v3_madd(c->x[i], c->h, c->sc->move[i]);
}

void pd_sph_implicit_viscosity(const pd_density_constraint_def* def, const pd_real* nu,
                               const pd_vec3* x, pd_real h, pd_vec3* y, int iterations,
                               pd_density_scratch* scratch) {
    viscosity_ctx c = {def, nu, x, h, y, scratch};
    pd_parallel_for(def->count, PD_DENSITY_GRAIN, start_kernel, &c);
    for (int it = 0; it < iterations; ++it) {
        pd_parallel_for(def->count, PD_DENSITY_GRAIN, jacobi_kernel, &c);
        pd_parallel_for(def->count, PD_DENSITY_GRAIN, apply_kernel, &c);
    }
}
