/* A world as a program sees it: its clock and counters, the pins' forces, frames and
 * checkpoints written from it, and what the registered methods are. The world itself is made
 * by pd_create_world and advanced by pd_world_step (peridot.h). */
#ifndef PERIDOT_WORLD_H
#define PERIDOT_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "scene.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pd_world pd_world;

/* The world's clock and counters, and what its last step reported. */
typedef struct pd_world_info {
    size_t particles;
    size_t bonds; /* directed bonds of the method's families (0 for a method without) */
    int pins;
    double time;         /* simulated (s) */
    double dt;           /* the step in use (s): time.dt, or what "auto" chose */
    uint64_t steps;      /* steps taken since the start (a resumed run counts the earlier ones) */
    int steps_per_frame; /* of the current frame (time.dt "auto" may change it per frame) */
    int step_in_frame;   /* steps taken of the current frame: 0 at a frame's start */
    /* steps that stopped at the iteration cap with their tolerance's measure above 10 times
     * the tolerance, the worst of them (that measure over the tolerance) and when */
    uint64_t unconverged_steps;
    double worst_unconverged_by, worst_unconverged_time;
    /* the last step: iterations, relative residual, the objective of its implicit solve and
     * Xu 2018 Eq. 25's relative error (NaN when the method reports none) */
    int iterations;
    double residual, energy, relative_error;
    int colliders; /* the scene's colliders */
} pd_world_info;
pd_world_info pd_world_get_info(const pd_world* w);

/* Pin k (0 <= k < info.pins) of the scene's bodies[body].pins[index_in_body]: the force it
 * exerted on its body during the last step (N), and its pose now as its keyframes give it (an
 * offset from where its particles were sampled, and a rotation about its region's centre). */
typedef struct pd_pin_info {
    int body;
    int index_in_body;
    pd_vec3 force;
    int released;          /* let go (its release time passed): its particles move freely */
    pd_vec3 translate;     /* m */
    pd_vec3 rotate_axis;   /* unit */
    double rotate_degrees; /* [0, 180] */
} pd_pin_info;
pd_pin_info pd_world_pin(const pd_world* w, int k);

/* stats.csv's per-frame numbers of the current state. */
typedef struct pd_frame_stats {
    double kinetic_energy; /* J, dynamic particles */
    pd_vec3 lo, hi;        /* bounding box of all particles */
} pd_frame_stats;
pd_frame_stats pd_world_frame_stats(const pd_world* w);

/* Writes the current state as one frame file at path, atomically: format PD_FORMAT_PLY,
 * PD_FORMAT_VTK or PD_FORMAT_VTU (its arrays named as the attributes, its time the world's),
 * with the attributes (PD_ATTR_* bits) besides the positions; particles in id order whatever
 * order the world keeps them in. PD_ERR_UNSUPPORTED when an attribute is not
 * published by the world's method. */
pd_status pd_world_write_frame(pd_world* w, const char* path, unsigned format, unsigned attributes,
                               pd_error* err);

/* ---- Reading and driving a world between steps (the Python module, python/peridot) ---- */

/* The particles as the world stores them: positions and velocities in storage order (which a
 * step may change: the world reorders its particles along a Z-curve), and order[id], the
 * storage index of the particle with that id, so that positions[order[id]] is particle id's.
 * The pointers stay valid, and the values current, until the next step or the world's
 * destruction. */
typedef struct pd_particle_view {
    size_t count;
    const pd_vec3* positions;  /* m */
    const pd_vec3* velocities; /* m/s */
    const uint32_t* order;
} pd_particle_view;
pd_particle_view pd_world_particles(const pd_world* w);

/* One published attribute of the frames (output.attributes: "velocity", "stress", ...), as the
 * world or its method holds it: `components` values per particle, interleaved
 * (data[i * components + c], i in storage order as pd_particle_view's), pd_real (double) or
 * int32_t; names[c] are the frame's column names. Valid until the next step. */
typedef struct pd_field_view {
    int components;
    int is_integer; /* 1: int32_t values; 0: pd_real */
    const void* data;
    const char* names[6];
    const char* unit;
} pd_field_view;
/* The attribute of that name: PD_ERR_INVALID_ARGUMENT for a name that is no attribute,
 * PD_ERR_UNSUPPORTED for one the world's method does not publish (err names those it does). */
pd_status pd_world_field(pd_world* w, const char* name, pd_field_view* out, pd_error* err);
/* The PD_ATTR_* bit of an attribute's scene name, or 0. */
unsigned pd_attribute_bit(const char* name);
/* Every attribute's scene name, "|"-separated, in bit order (PD_ATTRIBUTE_NAMES). */
const char* pd_attribute_names(void);

/* Collider k (0 <= k < info.colliders) now: its pose, an offset from its rest pose and a
 * rotation (axis, degrees) about its rest centre, as keyframes give them, and the velocity and
 * angular velocity it moves with during the step that led here. */
typedef struct pd_collider_info {
    pd_vec3 translate;        /* m */
    pd_vec3 rotate_axis;      /* unit */
    double rotate_degrees;    /* [0, 180] */
    pd_vec3 center;           /* rest centre: the rotation's pivot (m) */
    pd_vec3 velocity;         /* of the pivot (m/s) */
    pd_vec3 angular_velocity; /* rad/s */
} pd_collider_info;
pd_collider_info pd_world_collider(const pd_world* w, int k);

/* Moves collider k, or pin k (the pins of pd_world_pin), from its pose now to `to` (its
 * translate and rotate; to.t, the time it arrives there, after the world's time) in a straight
 * line, as between two keyframes, and holds it there: what the scene gave it (velocity,
 * keyframes) no longer acts. Between steps, to drive it from a program; the next steps move
 * it. PD_ERR_INVALID_ARGUMENT (err at "colliders[k]" / "pins[k]") for a k out of range, a
 * time not after now, a rotation without an axis, or a released pin. Not kept in checkpoints. */
pd_status pd_world_move_collider(pd_world* w, int k, pd_keyframe to, pd_error* err);
pd_status pd_world_move_pin(pd_world* w, int k, pd_keyframe to, pd_error* err);

/* Checkpoints (docs/scene-format.md, output.checkpoint_every): everything the next step reads,
 * so that a world read back continues bit for bit. Written at the end of frame `frame`, with
 * the scene's pd_scene_fingerprint, atomically. */
pd_status pd_world_checkpoint_write(const pd_world* w, int frame, uint64_t scene_print,
                                    const char* path, pd_error* err);
/* Reads a checkpoint into w, made by pd_create_world from the same scene and not stepped:
 * PD_ERR_BAD_SCENE (why in err) when it is another scene's, method's or format's. *frame gets
 * the frame it was written at. */
pd_status pd_world_checkpoint_read(pd_world* w, uint64_t scene_print, const char* path, int* frame,
                                   pd_error* err);

/* One stage of a method's step as it names it ("local", "global", "passes") and the seconds it
 * took. A method declares its own stages; the interface knows none of them. */
typedef struct pd_stage_time {
    const char* name; /* a static string: a column of peridot_bench ("<name>_ms" in its CSV) */
    double seconds;
} pd_stage_time;
#define PD_MAX_STAGES 8

/* Where the last step's time went. */
typedef struct pd_step_timing {
    double neighbors; /* the world's stage: material changes and neighbourhood renewal (s) */
    pd_stage_time stages[PD_MAX_STAGES]; /* the method's own, as it names them */
    int stage_count;
    /* the bond kernels (F, directions, energy, gradient) alone: seconds over
     * local_evaluations evaluations of `bonds` bonds (0 when the method does not count them) */
    double bond_forces;
    int local_evaluations;
    size_t bonds;
} pd_step_timing;
pd_step_timing pd_world_last_timing(const pd_world* w);

/* Builds the method's families once more on the rest positions, with its horizon, and returns
 * the seconds it took (the families are discarded: for benchmarks). PD_ERR_UNSUPPORTED for a
 * method without families. */
pd_status pd_world_time_family_build(const pd_world* w, double* seconds, pd_error* err);

/* Called by an implicit method after each nonlinear iteration of a step (projective_pd,
 * hyperelastic_pd: the optimiser's), with the iteration's relative residual; counted on across
 * a step's solves. */
typedef void (*pd_iteration_fn)(void* ctx, int iteration, pd_real relative_residual);
/* From the next step on, fn (NULL: none) observes the iterations; for convergence studies. */
void pd_world_observe_iterations(pd_world* w, pd_iteration_fn fn, void* ctx);

/* A registered method (the scene's `method`). */
typedef struct pd_method_info {
    const char* name;      /* "projective_pd" */
    const char* paper;     /* "He, Wang, Wu 2017, Projective Peridynamics" */
    int explicit_step;     /* 1: time.dt "auto" follows its stability bound every frame */
    double auto_time_step; /* an implicit method's time.dt "auto" (s); 0 when explicit */
} pd_method_info;
/* The method of that name; 0 when none is registered under it. */
int pd_method_find(const char* name, pd_method_info* out);

#ifdef __cplusplus
}
#endif

#endif
