/* The Chebyshev semi-iterative weights on the outer iterates of a stationary iteration
 * (Wang 2015, "A Chebyshev semi-iterative approach for accelerating projective and
 * position-based dynamics", Eq. 12-13, after Golub & Varga 1961): with x_hat_{k+1} the plain
 * iterate from x_k,
 *   x_{k+1} = omega_{k+1} (x_hat_{k+1} - x_{k-1}) + x_{k-1},
 *   omega_1 = 1, omega_2 = 2 / (2 - rho^2), omega_{k+1} = 4 / (4 - rho^2 omega_k),
 * so that for a linear iteration whose matrix has its spectrum in [-rho, rho] the error after
 * k iterations is T_k(B / rho) / T_k(1 / rho) times the first (T_k the Chebyshev polynomial):
 * at most 1 / T_k(1 / rho) of it, against rho^k unaccelerated. */
#ifndef PD_SEMI_ITERATIVE_H
#define PD_SEMI_ITERATIVE_H

#include "peridot/math.h"

typedef struct pd_semi_iterative {
    pd_real rho;   /* the spectral radius the weights assume (< 1) */
    pd_real omega; /* the last weight handed out */
    int k;         /* weights handed out since the last restart */
} pd_semi_iterative;

/* A sequence for rho, starting (or restarting) at omega_1 = 1. */
pd_semi_iterative pd_semi_iterative_start(pd_real rho);

/* omega_{k+1}: the weight of the next outer iterate. */
pd_real pd_semi_iterative_next(pd_semi_iterative* w);

#endif
