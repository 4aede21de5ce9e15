/* Preconditioned conjugate gradients on node fields (grid_cg.h). */
#include "grid/grid_cg.h"

#include <math.h>

static pd_real dot_nodes(const pd_vec3* a, const pd_vec3* b, size_t n) {
    pd_real sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += pd_v3_dot(a[i], b[i]);
    return sum;
}

int pd_grid_cg_solve(const pd_grid_cg* cg, size_t n, pd_vec3* r, pd_vec3* x) {
    pd_vec3 *z = cg->z, *d = cg->d, *ad = cg->ad;
    pd_real r0 = sqrt(dot_nodes(r, r, n)), rz = 0;
    int products = 0;
    for (int it = 0; it < cg->max_iterations && r0 > 0; ++it) {
        for (size_t i = 0; i < n; ++i)
            z[i] = cg->diag[i] > 0 ? pd_v3_scale(r[i], 1 / cg->diag[i]) : pd_v3(0, 0, 0);
        pd_real rz_new = dot_nodes(r, z, n);
        for (size_t i = 0; i < n; ++i)
            d[i] = it == 0 ? z[i] : pd_v3_add(z[i], pd_v3_scale(d[i], rz_new / rz));
        rz = rz_new;
        cg->apply(cg->ctx, d, ad);
        ++products;
        pd_real dad = dot_nodes(d, ad, n);
        if (!(dad > 0))
            break;
        pd_real step = rz / dad;
        for (size_t i = 0; i < n; ++i) {
            x[i] = pd_v3_add(x[i], pd_v3_scale(d[i], step));
            r[i] = pd_v3_sub(r[i], pd_v3_scale(ad[i], step));
        }
        if (sqrt(dot_nodes(r, r, n)) <= cg->tolerance * r0)
            break;
    }
    return products;
}
