#include "linalg/cholmod_solver.h"

#include <cholmod.h>

#include "core/alloc.h"

typedef struct impl {
    cholmod_common c;
    cholmod_factor* factor;
    cholmod_dense *b, *x, *y, *e; /* cholmod_solve2 reuses x, y, e between calls */
} impl;

/* The upper triangle as a CHOLMOD matrix (NULL when it cannot be allocated). */
static cholmod_sparse* sparse_of(impl* m, size_t n, const uint32_t* col, const uint32_t* row,
                                 const double* val) {
    size_t nnz = col[n];
    cholmod_sparse* a = cholmod_allocate_sparse(n, n, nnz, 1, 1, 1, CHOLMOD_REAL, &m->c);
    if (!a)
        return NULL;
    int* ap = a->p;
    int* ai = a->i;
    double* ax = a->x;
    for (size_t k = 0; k <= n; ++k)
        ap[k] = (int)col[k];
    for (size_t k = 0; k < nnz; ++k) {
        ai[k] = (int)row[k];
        ax[k] = val[k];
    }
    return a;
}

/* The solver's impl, its common started on first use (cholmod_start: once per solver). */
static impl* started(pd_cholmod_solver* s) {
    if (s->impl)
        return s->impl;
    impl* m = pd_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    cholmod_start(&m->c);
    m->c.print = 0;
    s->starts++;
    s->impl = m;
    return m;
}

pd_status pd_cholmod_factor(pd_cholmod_solver* s, size_t n, const uint32_t* col,
                            const uint32_t* row, const double* val) {
    pd_cholmod_release(s);
    impl* m = started(s);
    if (!m)
        return PD_ERR_OUT_OF_MEMORY;
    s->n = n;
    cholmod_sparse* a = sparse_of(m, n, col, row, val);
    if (!a)
        return PD_ERR_OUT_OF_MEMORY;
    m->factor = cholmod_analyze(a, &m->c);
    int ok = m->factor && cholmod_factorize(a, m->factor, &m->c) && m->c.status == CHOLMOD_OK;
    cholmod_free_sparse(&a, &m->c);
    m->b = cholmod_allocate_dense(n, 3, n, CHOLMOD_REAL, &m->c);
    return ok && m->b ? PD_OK : PD_ERR_SOLVER;
}

pd_status pd_cholmod_refactor(pd_cholmod_solver* s, const uint32_t* col, const uint32_t* row,
                              const double* val) {
    impl* m = s->impl;
    if (!m || !m->factor)
        return PD_ERR_INVALID_ARGUMENT;
    cholmod_sparse* a = sparse_of(m, s->n, col, row, val);
    if (!a)
        return PD_ERR_OUT_OF_MEMORY;
    int ok = cholmod_factorize(a, m->factor, &m->c) && m->c.status == CHOLMOD_OK;
    cholmod_free_sparse(&a, &m->c);
    return ok ? PD_OK : PD_ERR_SOLVER;
}

pd_status pd_cholmod_solve3(pd_cholmod_solver* s, const pd_vec3* rhs, pd_vec3* x) {
    impl* m = s->impl;
    double* b = m->b->x;
    size_t n = s->n;
    for (size_t i = 0; i < n; ++i) {
        b[i] = rhs[i].x;
        b[n + i] = rhs[i].y;
        b[2 * n + i] = rhs[i].z;
    }
    if (!cholmod_solve2(CHOLMOD_A, m->factor, m->b, NULL, &m->x, NULL, &m->y, &m->e, &m->c))
        return PD_ERR_SOLVER;
    const double* xs = m->x->x;
    for (size_t i = 0; i < n; ++i)
        x[i] = pd_v3(xs[i], xs[n + i], xs[2 * n + i]);
    return PD_OK;
}

int pd_cholmod_factored(const pd_cholmod_solver* s) {
    const impl* m = s->impl;
    return m && m->factor;
}

void pd_cholmod_release(pd_cholmod_solver* s) {
    impl* m = s->impl;
    if (!m)
        return;
    cholmod_free_factor(&m->factor, &m->c);
    cholmod_free_dense(&m->b, &m->c);
    cholmod_free_dense(&m->x, &m->c);
    cholmod_free_dense(&m->y, &m->c);
    cholmod_free_dense(&m->e, &m->c);
}

void pd_cholmod_free(pd_cholmod_solver* s) {
    impl* m = s->impl;
    if (!m)
        return;
    pd_cholmod_release(s);
    cholmod_finish(&m->c);
    pd_free(m, sizeof *m);
    s->impl = NULL;
}
