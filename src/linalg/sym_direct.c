/* Sparse Cholesky of a pd_sym_csr system over its moving points (sym_direct.h). */
#include "linalg/sym_direct.h"

#include <string.h>

#include "core/alloc.h"

static void free_arrays(pd_sym_direct* d) {
    PD_FREE_ARRAY(d->row_of, int32_t, d->n + 1);
    PD_FREE_ARRAY(d->rhs, pd_vec3, d->rows + 1);
    PD_FREE_ARRAY(d->x, pd_vec3, d->rows + 1);
    d->row_of = NULL, d->rhs = d->x = NULL;
}

static pd_status allocate_arrays(pd_sym_direct* d, size_t n, size_t rows) {
    d->n = n;
    d->rows = rows;
    d->row_of = PD_NEW_ARRAY(int32_t, n + 1);
    d->rhs = PD_NEW_ARRAY(pd_vec3, rows + 1);
    d->x = PD_NEW_ARRAY(pd_vec3, rows + 1);
    if (d->row_of && d->rhs && d->x)
        return PD_OK;
    pd_sym_direct_free(d);
    return PD_ERR_OUT_OF_MEMORY;
}

pd_status pd_sym_direct_init(pd_sym_direct* d, size_t n, size_t rows) {
    memset(d, 0, sizeof *d);
    return allocate_arrays(d, n, rows);
}

pd_status pd_sym_direct_resize(pd_sym_direct* d, size_t n, size_t rows) {
    pd_cholmod_release(&d->chol);
    free_arrays(d);
    return allocate_arrays(d, n, rows);
}

/* Rows in point order: compressed columns need the numbering to follow i, and a reordering
 * permutes row_of with the points. */
static size_t number_rows(pd_sym_direct* d, const uint8_t* fixed) {
    size_t rows = 0;
    for (size_t i = 0; i < d->n; ++i)
        d->row_of[i] = fixed && fixed[i] ? -1 : (int32_t)rows++;
    return rows;
}

/* The upper triangle over the moving points, in compressed columns. */
static size_t upper_triangle(const pd_sym_direct* d, const pd_sym_csr* a, uint32_t* col,
                             uint32_t* row, double* val) {
    size_t nnz = 0;
    for (size_t i = 0; i < a->n; ++i) {
        int32_t ri = d->row_of[i];
        if (ri < 0)
            continue;
        col[ri] = (uint32_t)nnz;
        for (uint32_t k = a->offsets[i]; k < pd_sym_csr_end(a, i); ++k) {
            int32_t rj = d->row_of[a->cols[k]];
            if (rj >= 0 && rj < ri) {
                row[nnz] = (uint32_t)rj;
                val[nnz++] = -pd_sym_csr_weight(a, k);
            }
        }
        row[nnz] = (uint32_t)ri;
        val[nnz++] = a->diag[i];
    }
    col[d->rows] = (uint32_t)nnz;
    return nnz;
}

/* Builds A's upper triangle over the moving points and hands it to CHOLMOD: a fresh factor,
 * or (refactor) new values on the last factor's pattern. */
static pd_status factor_upper(pd_sym_direct* d, const pd_sym_csr* a, int refactor) {
    size_t nnz_max = d->rows + a->offsets[a->n];
    uint32_t* col = PD_NEW_ARRAY(uint32_t, d->rows + 1);
    uint32_t* row = PD_NEW_ARRAY(uint32_t, nnz_max + 1);
    double* val = PD_NEW_ARRAY(double, nnz_max + 1);
    pd_status st = col && row && val ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK) {
        upper_triangle(d, a, col, row, val);
        if (d->rows)
            st = refactor ? pd_cholmod_refactor(&d->chol, col, row, val)
                          : pd_cholmod_factor(&d->chol, d->rows, col, row, val);
    }
    PD_FREE_ARRAY(col, uint32_t, d->rows + 1);
    PD_FREE_ARRAY(row, uint32_t, nnz_max + 1);
    PD_FREE_ARRAY(val, double, nnz_max + 1);
    return st;
}

/* The upper triangle for any numbering of the rows: columns in row order, each column's
 * entries sorted by row, as upper_triangle gives them when the rows follow the points. */
static size_t upper_triangle_any(const pd_sym_direct* d, const pd_sym_csr* a,
                                 const uint32_t* point_of, uint32_t* col, uint32_t* row,
                                 double* val) {
    size_t nnz = 0;
    for (size_t ri = 0; ri < d->rows; ++ri) {
        uint32_t i = point_of[ri];
        col[ri] = (uint32_t)nnz;
        size_t first = nnz;
        for (uint32_t k = a->offsets[i]; k < pd_sym_csr_end(a, i); ++k) {
            int32_t rj = d->row_of[a->cols[k]];
            if (rj < 0 || (size_t)rj >= ri)
                continue;
            size_t at = nnz++; /* insertion: a family's few dozen entries */
            for (; at > first && row[at - 1] > (uint32_t)rj; --at)
                row[at] = row[at - 1], val[at] = val[at - 1];
            row[at] = (uint32_t)rj;
            val[at] = -pd_sym_csr_weight(a, k);
        }
        row[nnz] = (uint32_t)ri;
        val[nnz++] = a->diag[i];
    }
    col[d->rows] = (uint32_t)nnz;
    return nnz;
}

pd_status pd_sym_direct_factor_rows(pd_sym_direct* d, const pd_sym_csr* a) {
    pd_cholmod_release(&d->chol);
    size_t nnz_max = d->rows + a->offsets[a->n];
    uint32_t* point_of = PD_NEW_ARRAY(uint32_t, d->rows + 1);
    uint32_t* col = PD_NEW_ARRAY(uint32_t, d->rows + 1);
    uint32_t* row = PD_NEW_ARRAY(uint32_t, nnz_max + 1);
    double* val = PD_NEW_ARRAY(double, nnz_max + 1);
    pd_status st = point_of && col && row && val ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PD_OK && i < d->n; ++i)
        if (d->row_of[i] >= 0)
            point_of[d->row_of[i]] = (uint32_t)i;
    if (st == PD_OK) {
        upper_triangle_any(d, a, point_of, col, row, val);
        if (d->rows)
            st = pd_cholmod_factor(&d->chol, d->rows, col, row, val);
    }
    PD_FREE_ARRAY(point_of, uint32_t, d->rows + 1);
    PD_FREE_ARRAY(col, uint32_t, d->rows + 1);
    PD_FREE_ARRAY(row, uint32_t, nnz_max + 1);
    PD_FREE_ARRAY(val, double, nnz_max + 1);
    return st;
}

pd_status pd_sym_direct_factor(pd_sym_direct* d, const pd_sym_csr* a, const uint8_t* fixed) {
    pd_cholmod_release(&d->chol);
    if (number_rows(d, fixed) != d->rows)
        return PD_ERR_INVALID_ARGUMENT;
    return factor_upper(d, a, 0);
}

/* 1 when the moving points' rows follow the point order (no pd_sym_direct_permute since the
 * factor): compressed columns are then built in row order, on the factor's own pattern. */
static int rows_in_point_order(const pd_sym_direct* d) {
    int32_t last = -1;
    for (size_t i = 0; i < d->n; ++i) {
        if (d->row_of[i] < 0)
            continue;
        if (d->row_of[i] < last)
            return 0;
        last = d->row_of[i];
    }
    return 1;
}

pd_status pd_sym_direct_refactor(pd_sym_direct* d, const pd_sym_csr* a) {
    if (!pd_cholmod_factored(&d->chol))
        return PD_ERR_INVALID_ARGUMENT;
    if (rows_in_point_order(d))
        return factor_upper(d, a, 1);
    /* renumbered since: number the rows in point order again (fixed points keep -1) and
     * analyse anew, once; the next refactorisations reuse it */
    pd_cholmod_release(&d->chol);
    size_t rows = 0;
    for (size_t i = 0; i < d->n; ++i)
        if (d->row_of[i] >= 0)
            d->row_of[i] = (int32_t)rows++;
    return factor_upper(d, a, 0);
}

pd_status pd_sym_direct_solve(pd_sym_direct* d, const pd_vec3* b, pd_vec3* z) {
    for (size_t i = 0; i < d->n; ++i)
        if (d->row_of[i] >= 0)
            d->rhs[d->row_of[i]] = b[i];
    pd_status st = d->rows ? pd_cholmod_solve3(&d->chol, d->rhs, d->x) : PD_OK;
    for (size_t i = 0; i < d->n; ++i)
        z[i] = d->row_of[i] < 0 ? pd_v3(0, 0, 0) : d->x[d->row_of[i]];
    return st;
}

void pd_sym_direct_permute(pd_sym_direct* d, const uint32_t* perm, int32_t* scratch) {
    for (size_t i = 0; i < d->n; ++i)
        scratch[i] = d->row_of[perm[i]];
    memcpy(d->row_of, scratch, d->n * sizeof(int32_t));
}

void pd_sym_direct_free(pd_sym_direct* d) {
    pd_cholmod_free(&d->chol);
    free_arrays(d);
    memset(d, 0, sizeof *d);
}
