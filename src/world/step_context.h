/* The context of one step, which the world builds before each and hands to the method's step
 * (solvers/solver.h) and the method to the implicit step the methods share
 * (optim/implicit_step.h). */
#ifndef PD_STEP_CONTEXT_H
#define PD_STEP_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "world/particles.h"

struct pd_arena;
struct pd_colliders;

/* What the world hands a method for one step, built afresh before each (as Box2D's
 * b2StepContext): the step's dt and gravity, the world's particle arrays, the colliders and
 * the step's scratch. A method reads them here rather than keeping copies in its state (a copy
 * of dt goes stale when time.dt "auto" or pd_world_set_time_step changes the step). Valid for
 * the duration of one step() call. */
typedef struct pd_step_context {
    pd_real dt;          /* this step (s) */
    pd_real inv_dt;      /* 1 / dt (1/s) */
    pd_vec3 gravity;     /* m/s^2 */
    pd_real time;        /* at the step's start (s); the step ends at time + dt */
    uint64_t step_index; /* steps taken before this one */
    size_t count;        /* particles */
    /* the world's particles: pos and vel to advance, force to fill for pinned particles,
     * mass, volume, material and flags to read (pinned ones already moved to time + dt) */
    pd_particles* particles;
    const pd_vec3* step_start;            /* positions at the step's start, before the pins */
    const pd_vec3* step_start_vel;        /* velocities at the step's start, before the pins */
    const uint8_t* contact_skip;          /* particles the colliders leave alone (held, ghosts) */
    const struct pd_colliders* colliders; /* at their places at time + dt */
    struct pd_arena* arena;               /* the step's scratch (the world's, reset before) */
    /* the world's observer of nonlinear iterations (pd_world_observe_iterations), or NULL:
     * an implicit method calls it after each iteration with the relative residual */
    void (*on_iteration)(void* ctx, int iteration, pd_real relative_residual);
    void* on_iteration_ctx;
} pd_step_context;

#endif
