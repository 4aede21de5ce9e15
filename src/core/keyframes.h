/* Piecewise-linear keyframe motion shared by pins and colliders: translation and rotation
 * (axis-angle, degrees) interpolated between keys, held after the last and before the first. */
#ifndef PD_KEYFRAMES_H
#define PD_KEYFRAMES_H

#include "peridot/types.h"

/* Pose at time t: p' = center + R (p - center) + translate. */
void pd_keyframes_pose(const pd_keyframe* keys, int count, pd_real t, pd_vec3* translate,
                       pd_mat3* rotation);
/* Rotation matrix of `degrees` about unit `axis` (Rodrigues). */
pd_mat3 pd_rotation_axis_angle(pd_vec3 axis, pd_real degrees);

#endif
