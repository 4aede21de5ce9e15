/* Options of the mpm method (Fang et al. 2019). One table drives parsing, `--set`, the resolved
 * scene and docs/scene-format.md. */
#include <stddef.h>

#include "solvers/mpm/mpm_data.h"

#define P(field) offsetof(pd_mpm_params, field)

static const pd_param_info k_params[] = {
    {"dx", PD_PARAM_REAL, P(dx), 2.0, 0.5, 8.0, "spacing", NULL,
     "Grid cell size in particle spacings (of the body with the smallest spacing): 2 puts 2 x 2 x "
     "2 "
     "= 8 particles in a cell, the usual density (Fang 2019 Sec. 9 and Table 2: 8 per cell)."},
    {"cfl", PD_PARAM_REAL, P(cfl), 0.3, 0.01, 1.0, "1", NULL,
     "time.dt \"auto\": the step is at most this fraction of dx over the fastest speed a "
     "particle has plus the material's elastic P-wave speed sqrt((lambda + 2 mu) / rho), taken "
     "at each frame's start."},
    {"damping_round_trips", PD_PARAM_INT, P(damping_round_trips), 0, 0, 100, "1", NULL,
     "RPIC round trips before each step (Sec. 8): each is a Newtonian viscosity nu = dx^2 / (8 "
     "dt) (Eq. 11) that keeps linear and angular momentum. 0: none."},
};

const pd_param_table pd_mpm_param_table = {k_params, (int)(sizeof k_params / sizeof k_params[0]),
                                           sizeof(pd_mpm_params)};
