/* The interface every method implements. A method lives in its own folder under
 * src/solvers/, keeps its data in a header apart from its algorithm, declares its options in
 * parameter tables, and is registered by name in registry.c (docs/adding-a-solver.md). */
#ifndef PD_SOLVER_H
#define PD_SOLVER_H

#include "core/param.h"
#include "peridot/types.h"

struct pd_world;

/* What one step reports (stats.csv, progress, bench). Times in seconds. */
typedef struct pd_step_stats {
    int iterations;     /* nonlinear (local/global) iterations of the last step */
    double residual;    /* relative residual at the end of the last step */
    double t_neighbors; /* neighbourhood renewal */
    double t_local;     /* local (projection) step */
    double t_global;    /* global (linear) step */
    double t_other;     /* line search, collisions, bookkeeping */
} pd_step_stats;

typedef struct pd_solver_vtable {
    const char* name;                      /* method key in the scene */
    const char* paper;                     /* "He, Wang, Wu 2017, Projective Peridynamics" */
    const pd_param_table* params;          /* keys of the scene's `solver` object */
    const pd_param_table* material_params; /* method keys inside a material (REAL only) */
    /* Refuses a material the method cannot honour (e.g. a Poisson ratio); path is the JSON
     * path of the material for the message. */
    pd_status (*check_material)(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err);
    pd_status (*create)(struct pd_world* world, const void* params, void** state, pd_error* err);
    void (*destroy)(void* state);
    /* Advances positions and velocities of the world's particles by one time step, without
     * colliders (the world projects them after) unless contact_in_solve. */
    pd_status (*step)(void* state, struct pd_world* world, pd_step_stats* stats);
    /* The world reordered its particles: new index i holds old particle perm[i]. */
    pd_status (*on_reorder)(void* state, struct pd_world* world, const uint32_t* perm);
    /* Bytes per particle the method needs beyond the world's own arrays (for estimates). */
    size_t (*bytes_per_particle)(const void* params);
    /* 1: step resolves collider contact and Coulomb friction itself (inside an implicit
     * solve, boundary/friction.h) and writes the velocity each particle moved with; the
     * world then only projects a particle that still ended inside a collider and takes its
     * velocity from its motion. 0: the world projects and applies friction to velocities. */
    int contact_in_solve;
} pd_solver_vtable;

const pd_solver_vtable* pd_solver_find(const char* name);
/* NULL-terminated list of every registered method. */
const pd_solver_vtable* const* pd_solver_all(void);

#endif
