/* For projective_pd's own tests: its solver state (iterations, residuals, families). */
#ifndef PD_PROJECTIVE_PD_SUPPORT_H
#define PD_PROJECTIVE_PD_SUPPORT_H

#include "solvers/projective_pd/projective_pd_internal.h"
#include "support.h"

static inline pd_ppd_state* pd_test_ppd(pd_test_sim* t) {
    return (pd_ppd_state*)t->world->solver_state;
}

#endif
