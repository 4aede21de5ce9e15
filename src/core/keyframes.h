/* Piecewise-linear keyframe motion, the one interpolator for everything that follows keyframes
 * (pins, colliders, ...): translation and rotation (axis-angle, degrees) interpolated between
 * keys, held before the first and after the last. */
#ifndef PD_KEYFRAMES_H
#define PD_KEYFRAMES_H

#include "peridot/types.h"

/* Where keyframed motion is at one time: p' = center + R (p - center) + translate, moving with
 * `velocity` (of the pivot) and `angular_velocity` (rad/s) on the current segment. */
typedef struct pd_keyframe_motion {
    pd_vec3 translate;        /* m */
    pd_mat3 rotation;         /* about the pivot */
    pd_vec3 velocity;         /* m/s, 0 while held */
    pd_vec3 angular_velocity; /* rad/s, 0 while held */
} pd_keyframe_motion;

/* Motion at time t. Between keys k0 and k1 the translation is linear; the rotation turns the
 * angle itself when both keys share an axis (or one does not rotate), so that turns beyond
 * 180 degrees between keys are kept, and otherwise along the shortest arc from R0 to R1,
 * R(s) = rot(b, s phi) R0. count 0: identity, at rest. */
pd_keyframe_motion pd_keyframes_motion(const pd_keyframe* keys, int count, pd_real t);
/* The same, but at a key's time the motion of the segment that ends there rather than of the
 * one that starts: the velocity a thing had during a step that ended at t (a collider a
 * program drives step by step, pd_collider_move_to, moves during the step that arrives). */
pd_keyframe_motion pd_keyframes_motion_ending(const pd_keyframe* keys, int count, pd_real t);
/* The pose part of pd_keyframes_motion. */
void pd_keyframes_pose(const pd_keyframe* keys, int count, pd_real t, pd_vec3* translate,
                       pd_mat3* rotation);
/* Checks a key a program moves something to from time t0 (pd_world_move_collider, _pin): its
 * time after t0, every number finite, an axis when it turns (made unit here). */
pd_status pd_keyframe_check_move(pd_keyframe* to, pd_real t0, const char* path, pd_error* err);
/* Rotation matrix of `degrees` about `axis` (normalised here; Rodrigues). */
pd_mat3 pd_rotation_axis_angle(pd_vec3 axis, pd_real degrees);
/* Unit axis and angle in [0, 180] degrees of a rotation matrix. */
void pd_rotation_to_axis_angle(pd_mat3 r, pd_vec3* axis, pd_real* degrees);

#endif
