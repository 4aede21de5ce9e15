/* The keyframe interpolator (core/keyframes.c) that pins follow, against closed-form poses:
 * a turn of 270 degrees about one axis is interpolated by its angle (135 degrees half way, not
 * the shortest arc's -45), keys about different axes turn along the shortest arc (half of the
 * 120-degree relative turn of 90 deg about x then 90 deg about y), velocities are the segment's
 * rates, and the motion is held outside the keys. */
#include "core/keyframes.h"
#include "test.h"

static pd_real angle_between(pd_mat3 a, pd_mat3 b) {
    pd_vec3 axis;
    pd_real deg;
    pd_rotation_to_axis_angle(pd_m3_mul(a, pd_m3_transpose(b)), &axis, &deg);
    return deg;
}

PD_TEST(turn_beyond_180_degrees_is_kept) {
    pd_keyframe keys[2] = {{0, {0, 0, 0}, {0, 0, 1}, 0}, {2, {2, 4, 0}, {0, 0, 1}, 270}};
    pd_keyframe_motion m = pd_keyframes_motion(keys, 2, 1.0);
    pd_vec3 x = pd_m3_mulv(m.rotation, pd_v3(1, 0, 0));
    PD_CHECK_NEAR(x.x, cos(135 * PD_PI / 180), 1e-12);
    PD_CHECK_NEAR(x.y, sin(135 * PD_PI / 180), 1e-12);
    PD_CHECK_NEAR(m.translate.x, 1, 1e-12);
    PD_CHECK_NEAR(m.translate.y, 2, 1e-12);
    PD_CHECK_NEAR(m.velocity.y, 2, 1e-12);                                /* 4 m over 2 s */
    PD_CHECK_NEAR(m.angular_velocity.z, 1.5 * PD_PI / 2, 1e-12);          /* 270 deg over 2 s */
    pd_keyframe flipped[2] = {keys[0], {2, {2, 4, 0}, {0, 0, -1}, -270}}; /* same turn */
    pd_keyframe_motion f = pd_keyframes_motion(flipped, 2, 1.0);
    PD_CHECK_NEAR(angle_between(f.rotation, m.rotation), 0, 1e-6);
}

PD_TEST(different_axes_turn_along_the_shortest_arc) {
    pd_keyframe keys[2] = {{1, {0, 0, 0}, {1, 0, 0}, 90}, {3, {0, 0, 0}, {0, 1, 0}, 90}};
    pd_mat3 r0 = pd_rotation_axis_angle(pd_v3(1, 0, 0), 90);
    pd_mat3 r1 = pd_rotation_axis_angle(pd_v3(0, 1, 0), 90);
    PD_CHECK_NEAR(angle_between(r1, r0), 120, 1e-9); /* the relative turn */
    pd_keyframe_motion m = pd_keyframes_motion(keys, 2, 2.0);
    PD_CHECK_NEAR(angle_between(m.rotation, r0), 60, 1e-9);
    PD_CHECK_NEAR(angle_between(r1, m.rotation), 60, 1e-9);
    PD_CHECK_NEAR(pd_v3_len(m.angular_velocity), 120 * PD_PI / 180 / 2, 1e-12);
}

PD_TEST(motion_is_held_outside_the_keys) {
    pd_keyframe keys[2] = {{0.5, {1, 0, 0}, {0, 1, 0}, 30}, {1.5, {3, 0, 0}, {0, 1, 0}, 60}};
    pd_keyframe_motion before = pd_keyframes_motion(keys, 2, 0.0);
    pd_keyframe_motion after = pd_keyframes_motion(keys, 2, 9.0);
    PD_CHECK_NEAR(before.translate.x, 1, 0);
    PD_CHECK_NEAR(after.translate.x, 3, 0);
    PD_CHECK_NEAR(pd_v3_len(before.velocity) + pd_v3_len(after.angular_velocity), 0, 0);
    PD_CHECK_NEAR(angle_between(after.rotation, pd_rotation_axis_angle(pd_v3(0, 1, 0), 60)), 0,
                  1e-6);
    pd_keyframe_motion none = pd_keyframes_motion(NULL, 0, 1.0);
    PD_CHECK_NEAR(angle_between(none.rotation, pd_m3_identity()), 0, 0);
}

PD_TEST(axis_of_a_half_turn_is_recovered) {
    pd_vec3 a = pd_v3(1.0 / 3, 2.0 / 3, 2.0 / 3), axis;
    pd_real deg;
    pd_rotation_to_axis_angle(pd_rotation_axis_angle(a, 180), &axis, &deg);
    PD_CHECK_NEAR(deg, 180, 1e-9);
    PD_CHECK_NEAR(fabs(pd_v3_dot(axis, a)), 1, 1e-12);
}
