/* Every method, by its scene key. Add a method here and in its own folder
 * (docs/adding-a-solver.md). */
#include <string.h>

#include "peridot/scene.h"
#include "peridot/world.h"
#include "solvers/solver.h"

extern const pd_solver_vtable pd_projective_pd_solver;
extern const pd_solver_vtable pd_hyperelastic_pd_solver;
extern const pd_solver_vtable pd_sbpd_solver;
extern const pd_solver_vtable pd_mpm_solver;

static const pd_solver_vtable* const k_solvers[] = {
    &pd_projective_pd_solver,
    &pd_hyperelastic_pd_solver,
    &pd_sbpd_solver,
    &pd_mpm_solver,
    NULL,
};

_Static_assert(sizeof k_solvers / sizeof k_solvers[0] - 1 <= PD_MAX_METHODS,
               "pd_scene.other_solver_params holds PD_MAX_METHODS methods");

const pd_solver_vtable* const* pd_solver_all(void) {
    return k_solvers;
}

const pd_solver_vtable* pd_solver_find(const char* name) {
    for (int i = 0; k_solvers[i]; ++i)
        if (strcmp(k_solvers[i]->name, name) == 0)
            return k_solvers[i];
    return NULL;
}

static pd_method_info method_info(const pd_solver_vtable* v) {
    return (pd_method_info){v->name, v->paper, v->max_time_step != NULL, v->auto_time_step};
}

int pd_method_at(int k, pd_method_info* out) {
    for (int i = 0; k_solvers[i]; ++i)
        if (i == k) {
            *out = method_info(k_solvers[i]);
            return 1;
        }
    return 0;
}

int pd_method_find(const char* name, pd_method_info* out) {
    const pd_solver_vtable* v = pd_solver_find(name);
    if (v)
        *out = method_info(v);
    return v != NULL;
}
