/* The simulated world: particles (SoA), bodies, pins, colliders and one solver. Internal to
 * the library; the public face is include/peridot/peridot.h. */
#ifndef PD_WORLD_H
#define PD_WORLD_H

#include <stdint.h>

#include "boundary/collider.h"
#include "core/arena.h"
#include "peridot/peridot.h"
#include "solvers/solver.h"
#include "world/emitters.h"
#include "world/particles.h"

typedef struct pd_pin {
    int body;
    int index_in_body; /* k in "<body>.pin<k>" */
    pd_pin_def def;    /* keyframes owned by the scene */
    pd_vec3 center;    /* rotation pivot: centre of the region */
    pd_vec3 force;     /* force the pin exerted on the body during the last step (N) */
    int released;      /* let go (def.release reached): its particles are free */
    /* pd_world_move_pin's two keyframes (def.keyframes points here once it was moved) */
    pd_keyframe moved[2];
} pd_pin;

struct pd_world {
    const pd_scene* scene;
    pd_world_def def;
    pd_particles particles;
    int pin_count;
    pd_pin* pins;
    pd_colliders colliders;
    const pd_solver_vtable* solver;
    void* solver_state;
    size_t bond_count; /* bonds (directed) of the method's families, 0 for gridded methods */
    pd_step_stats last_stats;
    /* steps that ended unconverged (pd_step_stats.unconverged_by > 0), and the worst of them */
    uint64_t unconverged_steps;
    double worst_unconverged_by;
    pd_real worst_unconverged_time;
    int steps_per_frame; /* ceil(1 / (fps dt)); def.dt is 1 / (fps steps_per_frame) */
    int step_in_frame;   /* steps taken of the current frame (0 at a frame's start) */
    pd_real time;
    uint64_t step_index;
    pd_real max_speed;   /* a velocity above this is a runaway (m/s) */
    pd_vec3* step_start; /* positions at the start of the step */
    /* particles colliders leave alone this step (held, ghosts): solvers that project contacts
     * inside their iterations pass it to pd_colliders_project */
    const uint8_t* contact_skip;
    uint32_t* order;   /* order[id] = index of the particle with that id (output order); like
                        * step_start, sized by particles.capacity (emitters add particles) */
    int reorder_every; /* steps between Morton reorderings (0: only at creation) */
    int steps_since_reorder;
    int* next_change;     /* per scene body: its next material change (NULL: no changes) */
    uint8_t* body_renews; /* per scene body: 1 renews its families (NULL: none renews) */
    int renew_every;      /* steps between renewals (0: never) */
    int steps_since_renewal;
    int emitter_count; /* the scene's emitters, as they run */
    pd_emitter_run* emitters;
    pd_arena arena; /* per-step scratch */
    /* pd_world_observe_iterations: handed to the methods in the step context */
    void (*on_iteration)(void* ctx, int iteration, pd_real relative_residual);
    void* on_iteration_ctx;
};

/* Steps between Morton reorderings of the particles by their current positions. */
#define PD_REORDER_EVERY 64

/* The cell of the Z-curve the particles are ordered along (their smallest spacing, m). */
pd_real pd_world_order_cell(const pd_world* w);
/* Reorders the particles along a Z-curve of `key` (one position per particle), tells the
 * solver, and updates the output order. */
pd_status pd_world_reorder(pd_world* w, const pd_vec3* key);
/* Puts the particles in the order perm gives (new i = old perm[i]) and tells the method, as a
 * reordering does; for a restored checkpoint's order. */
pd_status pd_world_permute(pd_world* w, const uint32_t* perm);

/* The context of the step about to run (solver.h): dt, gravity, the particles, the step's
 * start positions, collider skip mask, colliders and arena as they are now. */
pd_step_context pd_world_step_context(pd_world* w);

/* Changes the time step from the next step on (s, > 0; rounded, as at creation, to a whole
 * number of steps per frame); the method rebuilds what depends on it. */
pd_status pd_world_set_time_step(pd_world* w, pd_real dt, pd_error* err);
/* Renews the method's families of the bodies with body_renews[b] != 0 (one entry per scene
 * body) from the current positions. PD_ERR_UNSUPPORTED for a method without bonds. */
pd_status pd_world_renew_families(pd_world* w, const uint8_t* body_renews, pd_error* err);
/* From the next step on, renews the families of the bodies with body_renews[b] != 0 every
 * `every` steps (0 stops renewing); the world keeps a copy of the mask. */
pd_status pd_world_set_renewal(pd_world* w, const uint8_t* body_renews, int every, pd_error* err);
/* Breaks for good every bond of the method for which test() is nonzero. */
pd_status pd_world_break_bonds(pd_world* w, pd_bond_test test, void* ctx, size_t* removed,
                               pd_error* err);

/* Public-ish accessors used by the CLI and tests. */
static inline size_t pd_world_count(const pd_world* w) {
    return w->particles.count;
}

#endif
