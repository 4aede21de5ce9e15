/* Anderson acceleration of a fixed-point iteration x <- G(x) (Walker & Ni 2011; as Zhang, Peng,
 * Zhang & Deng 2019, "Accelerating ADMM for efficient simulation and optimization", ACM TOG
 * 38(6), apply it to ADMM, Sec. 3-4): with the residuals f_j = W (G(x_j) - x_j) of the last m + 1
 * iterates, W a diagonal weight (0 for entries carried along but not measured), the next iterate
 * is sum_j theta_j G(x_j) with the theta (summing to 1) that minimise |sum_j theta_j f_j|. In
 * differences (their Eq. 5-6): dF_j = f_{j+1} - f_j, dG_j = G_{j+1} - G_j,
 *   gamma = argmin |f_k - dF gamma|,   x_{k+1} = G(x_k) - dG gamma.
 * The safeguard (Zhang 2019 Alg. 1: an accelerated iterate kept only if its own residual falls
 * below the last accepted one's, else back to the plain G of that one) is the caller's: it
 * owns the residual; pd_anderson_plain gives the plain G to go back to. Serial, in a fixed
 * order: the same bits on any thread count. */
#ifndef PD_ANDERSON_H
#define PD_ANDERSON_H

#include <stddef.h>

#include "peridot/math.h"
#include "peridot/status.h"

#define PD_ANDERSON_MAX_HISTORY 8

typedef struct pd_anderson {
    size_t n, cap;   /* entries of x; room for */
    int m;           /* differences kept at most */
    int count, head; /* differences held; where the next goes (a ring) */
    pd_real* g_last; /* G(x) of the last call (the plain iterate) */
    pd_real* f_last; /* its residual W (G(x) - x) */
    pd_real* dg;     /* m columns of n: dG */
    pd_real* df;     /* m columns of n: dF */
    pd_real gram[PD_ANDERSON_MAX_HISTORY][PD_ANDERSON_MAX_HISTORY]; /* dF_i . dF_j */
} pd_anderson;

/* Room for n entries and m differences (1 <= m <= PD_ANDERSON_MAX_HISTORY); forgets the
 * history. */
pd_status pd_anderson_reserve(pd_anderson* a, size_t n, int m);

/* Forgets the history (a new fixed-point problem, or the safeguard's restart). */
void pd_anderson_restart(pd_anderson* a);

/* One step: x the iterate, g = G(x) on entry, the accelerated iterate on return (g itself on
 * the first call after a restart, or when the least-squares problem is singular); w the
 * weights W. Returns the differences used. */
int pd_anderson_mix(pd_anderson* a, const pd_real* x, pd_real* g, const pd_real* w);

/* The plain G(x) of the last pd_anderson_mix, for the safeguard's return. */
const pd_real* pd_anderson_plain(const pd_anderson* a);

void pd_anderson_free(pd_anderson* a);

#endif
