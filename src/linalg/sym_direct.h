/* A pd_sym_csr system solved by its sparse Cholesky factor (CHOLMOD) over the points that
 * move: fixed points are left out of the factor and get z = 0. Factor once while the matrix
 * stays (an elastic run), again after it changes (renewed families, a new time step). */
#ifndef PD_SYM_DIRECT_H
#define PD_SYM_DIRECT_H

#include "linalg/cholmod_solver.h"
#include "linalg/sym_csr.h"

typedef struct pd_sym_direct {
    pd_cholmod_solver chol;
    size_t n, rows;
    int32_t* row_of;  /* point -> row of the factor, -1 for fixed points */
    pd_vec3 *rhs, *x; /* rows */
} pd_sym_direct;

/* Allocates for n points, `rows` of which move (fixed points never change during a run). */
pd_status pd_sym_direct_init(pd_sym_direct* d, size_t n, size_t rows);
/* The same for a new n and rows, the factor released but CHOLMOD's common kept (a caller whose
 * system changes size, e.g. mpm's grid every step). */
pd_status pd_sym_direct_resize(pd_sym_direct* d, size_t n, size_t rows);
/* Numbers the moving points in index order and factors A over them (the previous factor is
 * released first). */
pd_status pd_sym_direct_factor(pd_sym_direct* d, const pd_sym_csr* a, const uint8_t* fixed);
/* Factors again an A of the last factor's pattern with new values (a changed diagonal),
 * keeping its ordering and symbolic analysis: cheaper than pd_sym_direct_factor. After a
 * pd_sym_direct_permute the analysis is made anew once (the rows follow the points again). */
pd_status pd_sym_direct_refactor(pd_sym_direct* d, const pd_sym_csr* a);
/* Factors A anew with the rows numbered as row_of already numbers them, in any order (a
 * restored checkpoint's numbering: the factor is the one the numbering was made for, bit for
 * bit, whatever the points' order now). */
pd_status pd_sym_direct_factor_rows(pd_sym_direct* d, const pd_sym_csr* a);
/* z = A^-1 b on the moving points, 0 on fixed ones. */
pd_status pd_sym_direct_solve(pd_sym_direct* d, const pd_vec3* b, pd_vec3* z);
/* The points were renumbered (new i = old perm[i]): the factor keeps its rows. */
void pd_sym_direct_permute(pd_sym_direct* d, const uint32_t* perm, int32_t* scratch);
void pd_sym_direct_free(pd_sym_direct* d);

#endif
