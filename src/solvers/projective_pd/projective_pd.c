/* Projective peridynamics: He, Wang, Wu 2017, "Projective Peridynamics for Modeling
 * Versatile Elastoplastic Materials", IEEE TVCG, Sec. 3-4 (elasticity). */
#include "solvers/projective_pd/projective_pd_data.h"
#include "solvers/solver.h"

#include "core/error.h"

static pd_status ppd_check_material(const pd_material_def* m, const void* params, const char* path,
                                    pd_error* err) {
    (void)m;
    (void)params;
    (void)path;
    (void)err;
    return PD_OK;
}

static pd_status ppd_create(struct pd_world* world, const void* params, void** state,
                            pd_error* err) {
    (void)world;
    (void)params;
    (void)state;
    return pd_fail(err, PD_ERR_UNSUPPORTED, "method", "projective_pd: work in progress");
}

const pd_solver_vtable pd_projective_pd_solver = {
    .name = "projective_pd",
    .paper = "He, Wang, Wu 2017, Projective Peridynamics",
    .params = &pd_ppd_param_table,
    .material_params = NULL,
    .check_material = ppd_check_material,
    .create = ppd_create,
};
