#include "core/keyframes.h"

pd_mat3 pd_rotation_axis_angle(pd_vec3 axis, pd_real degrees) {
    pd_real len = pd_v3_len(axis);
    if (len == 0 || degrees == 0)
        return pd_m3_identity();
    pd_vec3 a = pd_v3_scale(axis, 1.0 / len);
    pd_real th = degrees * PD_PI / 180.0, c = cos(th), s = sin(th), t = 1 - c;
    pd_mat3 r = {{{t * a.x * a.x + c, t * a.x * a.y - s * a.z, t * a.x * a.z + s * a.y},
                  {t * a.x * a.y + s * a.z, t * a.y * a.y + c, t * a.y * a.z - s * a.x},
                  {t * a.x * a.z - s * a.y, t * a.y * a.z + s * a.x, t * a.z * a.z + c}}};
    return r;
}

/* Rotation of one key as a rotation vector (axis * degrees), so that two keys blend linearly. */
static pd_vec3 rotation_vector(const pd_keyframe* k) {
    pd_real len = pd_v3_len(k->rotate_axis);
    return len > 0 ? pd_v3_scale(k->rotate_axis, k->rotate_degrees / len) : pd_v3(0, 0, 0);
}

void pd_keyframes_pose(const pd_keyframe* keys, int count, pd_real t, pd_vec3* translate,
                       pd_mat3* rotation) {
    if (count == 0) {
        *translate = pd_v3(0, 0, 0);
        *rotation = pd_m3_identity();
        return;
    }
    int k = 0;
    while (k + 1 < count && keys[k + 1].t <= t)
        ++k;
    pd_vec3 tr = keys[k].translate, rv = rotation_vector(&keys[k]);
    if (k + 1 < count && t > keys[k].t) {
        pd_real s = (t - keys[k].t) / (keys[k + 1].t - keys[k].t);
        tr = pd_v3_madd(pd_v3_scale(tr, 1 - s), s, keys[k + 1].translate);
        rv = pd_v3_madd(pd_v3_scale(rv, 1 - s), s, rotation_vector(&keys[k + 1]));
    }
    *translate = tr;
    *rotation = pd_rotation_axis_angle(rv, pd_v3_len(rv));
}
