/* Sparse Cholesky through SuiteSparse CHOLMOD: factor a symmetric positive definite matrix
 * once, then solve for three right-hand sides (x, y, z) at a time. A solver starts CHOLMOD's
 * common once, at its first factor, and finishes it in pd_cholmod_free: a caller that factors
 * anew every step (mpm's grid, a renewed family's system) does not start it every time. */
#ifndef PD_CHOLMOD_SOLVER_H
#define PD_CHOLMOD_SOLVER_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/math.h"
#include "peridot/status.h"

typedef struct pd_cholmod_solver {
    void* impl; /* CHOLMOD's common, factor and reusable dense workspaces */
    size_t n;
    size_t starts; /* times CHOLMOD's common was started (a test reads it: 1 per solver) */
} pd_cholmod_solver;

/* The upper triangle in compressed columns: column k has rows row[col[k] .. col[k+1]) (all
 * <= k) with values val. The last factor, if any, is released first. */
pd_status pd_cholmod_factor(pd_cholmod_solver* s, size_t n, const uint32_t* col,
                            const uint32_t* row, const double* val);
/* Factors again a matrix of the same pattern (new values: e.g. a changed diagonal), keeping
 * the ordering and symbolic analysis of pd_cholmod_factor. */
pd_status pd_cholmod_refactor(pd_cholmod_solver* s, const uint32_t* col, const uint32_t* row,
                              const double* val);
/* Solves A x = rhs for the three components at once; no allocation after the first call. */
pd_status pd_cholmod_solve3(pd_cholmod_solver* s, const pd_vec3* rhs, pd_vec3* x);
/* 1 when the solver holds a factor (pd_cholmod_factor succeeded since the last release). */
int pd_cholmod_factored(const pd_cholmod_solver* s);
/* Releases the factor and the workspaces, keeping CHOLMOD's common for the next factor. */
void pd_cholmod_release(pd_cholmod_solver* s);
/* Releases everything, the common finished. */
void pd_cholmod_free(pd_cholmod_solver* s);

#endif
