/* Jacobi-preconditioned conjugate gradients on a grid's node field (mpm's ADMM grid step and its
 * optimiser's Newton step solve with it). */
#ifndef PD_GRID_CG_H
#define PD_GRID_CG_H

#include <stddef.h>

#include "peridot/types.h"

/* out = A u for a symmetric A, positive definite on the solve's free subspace, with the fixed
 * directions already removed from out. */
typedef void (*pd_grid_cg_apply)(void* ctx, const pd_vec3* u, pd_vec3* out);

typedef struct pd_grid_cg {
    pd_grid_cg_apply apply;
    void* ctx;
    const pd_real* diag; /* A's diagonal: z = r / diag where diag > 0, else 0 */
    int max_iterations;
    pd_real tolerance;   /* stop once |r| fell by this factor */
    pd_vec3 *z, *d, *ad; /* scratch, n each */
    /* NULL, or z <- P z after the preconditioner, P the orthogonal projector onto the free
     * subspace where that is not node by node (mpm's pins): the preconditioner P D^-1 P, r . z
     * unchanged as r = P r */
    void (*project)(void* ctx, pd_vec3* z);
} pd_grid_cg;

/* Improves x from the residual r = b - A x (free directions only; overwritten) over n nodes.
 * Returns the products with A taken. */
int pd_grid_cg_solve(const pd_grid_cg* cg, size_t n, pd_vec3* r, pd_vec3* x);

#endif
