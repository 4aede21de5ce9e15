/* Preconditioned conjugate gradients on node fields (grid_cg.h). The vector passes are fused
 * three to a sweep and run on the calling thread: a parallel region each (three a product) cost
 * more at their barriers than they saved (Fig. 7's bar on 2 threads of a loaded machine: the
 * solve 2.2 times slower); the product is the caller's, in parallel. Each dot product sums fixed
 * chunks of nodes and then the chunks in order. */
#include "grid/grid_cg.h"

#include <math.h>

#define CG_MAX_CHUNKS 64 /* the partial sums live on the stack: no allocation per solve */

typedef struct cg_pass {
    const pd_grid_cg* cg;
    pd_vec3 *r, *x;
    pd_real step, beta;
    size_t grain;
    pd_real partial[CG_MAX_CHUNKS][2];
} cg_pass;

/* Calls fn over [0, n) in chunks of the pass's grain, in order. */
static void sweep(size_t n, cg_pass* pass, void (*fn)(void*, size_t, size_t, int)) {
    for (size_t begin = 0; begin < n; begin += pass->grain)
        fn(pass, begin, begin + pass->grain < n ? begin + pass->grain : n, 0);
}

static size_t chunk_grain(size_t n) {
    size_t grain = (n + CG_MAX_CHUNKS - 1) / CG_MAX_CHUNKS;
    return grain > 1024 ? grain : 1024;
}

static void sum_chunks(const cg_pass* pass, size_t n, pd_real out[2]) {
    size_t chunks = (n + pass->grain - 1) / pass->grain;
    out[0] = out[1] = 0;
    for (size_t c = 0; c < chunks; ++c)
        out[0] += pass->partial[c][0], out[1] += pass->partial[c][1];
}

/* x += step d, r -= step A d, z = r / diag; partial sums of r . r and r . z. */
static void update_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    cg_pass* pass = ctx;
    const pd_grid_cg* cg = pass->cg;
    pd_real rr = 0, rz = 0;
    for (size_t i = begin; i < end; ++i) {
        if (pass->step != 0) {
            pass->x[i] = pd_v3_add(pass->x[i], pd_v3_scale(cg->d[i], pass->step));
            pass->r[i] = pd_v3_sub(pass->r[i], pd_v3_scale(cg->ad[i], pass->step));
        }
        pd_vec3 r = pass->r[i];
        cg->z[i] = cg->diag[i] > 0 ? pd_v3_scale(r, 1 / cg->diag[i]) : pd_v3(0, 0, 0);
        rr += pd_v3_dot(r, r), rz += pd_v3_dot(r, cg->z[i]);
    }
    pass->partial[begin / pass->grain][0] = rr, pass->partial[begin / pass->grain][1] = rz;
}

/* d = z + beta d (beta 0: d = z). */
static void direction_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const cg_pass* pass = ctx;
    const pd_grid_cg* cg = pass->cg;
    for (size_t i = begin; i < end; ++i)
        cg->d[i] =
            pass->beta == 0 ? cg->z[i] : pd_v3_add(cg->z[i], pd_v3_scale(cg->d[i], pass->beta));
}

/* partial sums of d . A d */
static void curvature_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    cg_pass* pass = ctx;
    const pd_grid_cg* cg = pass->cg;
    pd_real sum = 0;
    for (size_t i = begin; i < end; ++i)
        sum += pd_v3_dot(cg->d[i], cg->ad[i]);
    pass->partial[begin / pass->grain][0] = sum, pass->partial[begin / pass->grain][1] = 0;
}

int pd_grid_cg_solve(const pd_grid_cg* cg, size_t n, pd_vec3* r, pd_vec3* x) {
    cg_pass pass = {.cg = cg, .r = r, .x = x, .step = 0, .grain = chunk_grain(n)};
    pd_real sums[2];
    sweep(n, &pass, update_range); /* z = M^-1 r, |r|^2, r . z */
    if (cg->project)
        cg->project(cg->ctx, cg->z);
    sum_chunks(&pass, n, sums);
    pd_real r0 = sqrt(sums[0]), rz = sums[1];
    int products = 0;
    for (int it = 0; it < cg->max_iterations && r0 > 0; ++it) {
        pass.beta = it == 0 ? 0 : sums[1] / rz;
        rz = sums[1];
        sweep(n, &pass, direction_range);
        cg->apply(cg->ctx, cg->d, cg->ad);
        ++products;
        sweep(n, &pass, curvature_range);
        pd_real dad[2];
        sum_chunks(&pass, n, dad);
        if (!(dad[0] > 0))
            break;
        pass.step = rz / dad[0];
        sweep(n, &pass, update_range);
        if (cg->project)
            cg->project(cg->ctx, cg->z);
        sum_chunks(&pass, n, sums);
        if (sqrt(sums[0]) <= cg->tolerance * r0)
            break;
    }
    return products;
}
