/* Data of the projective_pd method (He, Wang, Wu 2017): options, per-bond and per-particle
 * state. The algorithm is in projective_pd.c. */
#ifndef PD_PROJECTIVE_PD_DATA_H
#define PD_PROJECTIVE_PD_DATA_H

#include "core/param.h"

enum { PD_PPD_CHEBYSHEV, PD_PPD_DIRECT, PD_PPD_POSITION_BASED };

typedef struct pd_ppd_params {
    int iterations;
    pd_real tolerance;
    int global_solve;
    int linear_iterations;
    pd_real horizon;
    int line_search;
    pd_real armijo;
    int dilatation;
    int inversion_fix;
    int ghost_radius_layers;
} pd_ppd_params;

extern const pd_param_table pd_ppd_param_table;

#endif
