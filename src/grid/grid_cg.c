/* Preconditioned conjugate gradients on node fields (grid_cg.h). The vector passes run in
 * parallel, fused three to a sweep; each dot product sums fixed chunks of nodes (a count that
 * depends on n alone) and then the chunks in order, so a solve gives the same bytes on any
 * thread count. */
#include "grid/grid_cg.h"

#include <math.h>

#include "parallel/parallel.h"

#define CG_MAX_CHUNKS 64 /* the partial sums live on the stack: no allocation per solve */

typedef struct cg_pass {
    const pd_grid_cg* cg;
    pd_vec3 *r, *x;
    pd_real step, beta;
    size_t grain;
    pd_real partial[CG_MAX_CHUNKS][2];
} cg_pass;

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
    pd_parallel_for(n, pass.grain, update_range, &pass); /* z = M^-1 r, |r|^2, r . z */
    sum_chunks(&pass, n, sums);
    pd_real r0 = sqrt(sums[0]), rz = sums[1];
    int products = 0;
    for (int it = 0; it < cg->max_iterations && r0 > 0; ++it) {
        pass.beta = it == 0 ? 0 : sums[1] / rz;
        rz = sums[1];
        pd_parallel_for(n, pass.grain, direction_range, &pass);
        cg->apply(cg->ctx, cg->d, cg->ad);
        ++products;
        pd_parallel_for(n, pass.grain, curvature_range, &pass);
        pd_real dad[2];
        sum_chunks(&pass, n, dad);
        if (!(dad[0] > 0))
            break;
        pass.step = rz / dad[0];
        pd_parallel_for(n, pass.grain, update_range, &pass);
        sum_chunks(&pass, n, sums);
        if (sqrt(sums[0]) <= cg->tolerance * r0)
            break;
    }
    return products;
}
