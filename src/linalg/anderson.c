/* Anderson acceleration (anderson.h): Walker & Ni 2011's form in differences, as Zhang et al.
 * 2019 Sec. 3 use it for ADMM. */
#include "linalg/anderson.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"

static void release(pd_anderson* a) {
    size_t cols = (size_t)PD_ANDERSON_MAX_HISTORY * a->cap;
    PD_FREE_ARRAY(a->g_last, pd_real, a->cap);
    PD_FREE_ARRAY(a->f_last, pd_real, a->cap);
    PD_FREE_ARRAY(a->dg, pd_real, cols);
    PD_FREE_ARRAY(a->df, pd_real, cols);
    a->g_last = a->f_last = a->dg = a->df = NULL;
    a->cap = 0;
}

pd_status pd_anderson_reserve(pd_anderson* a, size_t n, int m) {
    if (m < 1 || m > PD_ANDERSON_MAX_HISTORY)
        return PD_ERR_INVALID_ARGUMENT;
    a->n = n, a->m = m;
    pd_anderson_restart(a);
    if (n <= a->cap && a->g_last)
        return PD_OK;
    release(a);
    size_t cap = n + n / 4 + 1, cols = (size_t)PD_ANDERSON_MAX_HISTORY * cap;
    a->g_last = PD_NEW_ARRAY(pd_real, cap);
    a->f_last = PD_NEW_ARRAY(pd_real, cap);
    a->dg = PD_NEW_ARRAY(pd_real, cols);
    a->df = PD_NEW_ARRAY(pd_real, cols);
    a->cap = cap;
    if (!a->g_last || !a->f_last || !a->dg || !a->df) {
        release(a);
        return PD_ERR_OUT_OF_MEMORY;
    }
    return PD_OK;
}

void pd_anderson_restart(pd_anderson* a) {
    a->count = -1; /* no last iterate either */
    a->head = 0;
}

static pd_real dot(const pd_real* u, const pd_real* v, size_t n) {
    pd_real s = 0;
    for (size_t i = 0; i < n; ++i)
        s += u[i] * v[i];
    return s;
}

/* The normal equations (dF^T dF) gamma = dF^T f over the k columns held, by Cholesky with a
 * relative Tikhonov term of 1e-12 of the diagonal's largest (k <= 8: the squared condition
 * number is harmless where a column is not nearly a combination of the others, and that one
 * the term damps). Returns 0 when singular. */
static int solve_gamma(const pd_anderson* a, int k, const pd_real* rhs, pd_real* gamma) {
    pd_real l[PD_ANDERSON_MAX_HISTORY][PD_ANDERSON_MAX_HISTORY], big = 0;
    for (int i = 0; i < k; ++i)
        big = fmax(big, a->gram[i][i]);
    if (!(big > 0))
        return 0;
    for (int i = 0; i < k; ++i)
        for (int j = 0; j <= i; ++j) {
            pd_real s = a->gram[i][j] + (i == j ? 1e-12 * big : 0);
            for (int q = 0; q < j; ++q)
                s -= l[i][q] * l[j][q];
            if (i == j) {
                if (!(s > 0))
                    return 0;
                l[i][i] = sqrt(s);
            } else
                l[i][j] = s / l[j][j];
        }
    for (int i = 0; i < k; ++i) { /* L y = rhs, then L^T gamma = y */
        pd_real s = rhs[i];
        for (int q = 0; q < i; ++q)
            s -= l[i][q] * gamma[q];
        gamma[i] = s / l[i][i];
    }
    for (int i = k - 1; i >= 0; --i) {
        pd_real s = gamma[i];
        for (int q = i + 1; q < k; ++q)
            s -= l[q][i] * gamma[q];
        gamma[i] = s / l[i][i];
    }
    return 1;
}

int pd_anderson_mix(pd_anderson* a, const pd_real* x, pd_real* g, const pd_real* w) {
    size_t n = a->n;
    if (a->count < 0) { /* the first iterate: its residual and G kept, no mix */
        for (size_t i = 0; i < n; ++i)
            a->f_last[i] = w[i] * (g[i] - x[i]);
        memcpy(a->g_last, g, n * sizeof *g);
        a->count = 0;
        return 0;
    }
    /* the new column: dF = f - f_last, dG = g - g_last, in the ring's slot head */
    int h = a->head;
    pd_real *df = a->df + (size_t)h * a->cap, *dg = a->dg + (size_t)h * a->cap;
    for (size_t i = 0; i < n; ++i) {
        pd_real f = w[i] * (g[i] - x[i]);
        df[i] = f - a->f_last[i], a->f_last[i] = f;
        dg[i] = g[i] - a->g_last[i], a->g_last[i] = g[i];
    }
    if (a->count < a->m)
        a->count++;
    a->head = (h + 1) % a->m;
    for (int j = 0; j < a->count; ++j) { /* the Gram matrix's new row and column */
        pd_real v = dot(df, a->df + (size_t)j * a->cap, n);
        a->gram[h][j] = a->gram[j][h] = v;
    }
    pd_real rhs[PD_ANDERSON_MAX_HISTORY], gamma[PD_ANDERSON_MAX_HISTORY];
    for (int j = 0; j < a->count; ++j)
        rhs[j] = dot(a->df + (size_t)j * a->cap, a->f_last, n);
    if (!solve_gamma(a, a->count, rhs, gamma))
        return 0;
    for (int j = 0; j < a->count; ++j) {
        const pd_real* col = a->dg + (size_t)j * a->cap;
        for (size_t i = 0; i < n; ++i)
            g[i] -= gamma[j] * col[i];
    }
    return a->count;
}

const pd_real* pd_anderson_plain(const pd_anderson* a) {
    return a->g_last;
}

void pd_anderson_free(pd_anderson* a) {
    release(a);
}
