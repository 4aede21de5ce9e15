/* Chebyshev semi-iterative weights (Wang 2015 Eq. 12-13; optim/semi_iterative.h). */
#include "optim/semi_iterative.h"

pd_semi_iterative pd_semi_iterative_start(pd_real rho) {
    return (pd_semi_iterative){.rho = rho, .omega = 1, .k = 0};
}

pd_real pd_semi_iterative_next(pd_semi_iterative* w) {
    pd_real r2 = w->rho * w->rho;
    w->k++;
    if (w->k == 1)
        w->omega = 1;
    else if (w->k == 2)
        w->omega = 2 / (2 - r2);
    else
        w->omega = 4 / (4 - r2 * w->omega);
    return w->omega;
}
