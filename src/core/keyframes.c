/* The keyframe interpolator (core/keyframes.h): one definition of how keyframed things move. */
#include "core/keyframes.h"

#include "core/error.h"

static const pd_real DEG = PD_PI / 180.0;

pd_status pd_keyframe_check_move(pd_keyframe* to, pd_real t0, const char* path, pd_error* err) {
    if (!(to->t > t0) || !isfinite(to->t))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path,
                       "a move must arrive after the time now (t = %.9g s), got t = %.9g s",
                       (double)t0, (double)to->t);
    pd_vec3 tr = to->translate;
    if (!isfinite(tr.x) || !isfinite(tr.y) || !isfinite(tr.z) || !isfinite(to->rotate_degrees))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path,
                       "a move's translate and rotation must be finite numbers");
    pd_real axis = pd_v3_len(to->rotate_axis);
    if (to->rotate_degrees == 0)
        return PD_OK;
    if (!(axis > 0 && isfinite(axis)))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "a rotation needs a non-zero axis");
    to->rotate_axis = pd_v3_scale(to->rotate_axis, 1 / axis);
    return PD_OK;
}

pd_mat3 pd_rotation_axis_angle(pd_vec3 axis, pd_real degrees) {
    pd_real len = pd_v3_len(axis);
    if (len == 0 || degrees == 0)
        return pd_m3_identity();
    pd_vec3 a = pd_v3_scale(axis, 1.0 / len);
    pd_real th = degrees * DEG, c = cos(th), s = sin(th), t = 1 - c;
    pd_mat3 r = {{{t * a.x * a.x + c, t * a.x * a.y - s * a.z, t * a.x * a.z + s * a.y},
                  {t * a.x * a.y + s * a.z, t * a.y * a.y + c, t * a.y * a.z - s * a.x},
                  {t * a.x * a.z - s * a.y, t * a.y * a.z + s * a.x, t * a.z * a.z + c}}};
    return r;
}

void pd_rotation_to_axis_angle(pd_mat3 r, pd_vec3* axis, pd_real* degrees) {
    pd_real c = 0.5 * (pd_m3_trace(r) - 1);
    c = c > 1 ? 1 : (c < -1 ? -1 : c);
    pd_real phi = acos(c);
    pd_vec3 w = pd_v3(r.m[2][1] - r.m[1][2], r.m[0][2] - r.m[2][0], r.m[1][0] - r.m[0][1]);
    pd_real wl = pd_v3_len(w);
    *degrees = phi / DEG;
    if (phi < 1e-12) {
        *axis = pd_v3(0, 1, 0);
        return;
    }
    if (phi < PD_PI - 1e-6 && wl > 1e-12) {
        *axis = pd_v3_scale(w, 1 / wl);
        return;
    }
    /* Near 180 degrees the skew part vanishes: read the axis from (R + I) / 2 = a a^T. */
    pd_real d[3] = {0.5 * (r.m[0][0] + 1), 0.5 * (r.m[1][1] + 1), 0.5 * (r.m[2][2] + 1)};
    int k = d[1] > d[0] ? 1 : 0;
    k = d[2] > d[k] ? 2 : k;
    pd_real ak = sqrt(fmax(d[k], 0)), col[3];
    for (int i = 0; i < 3; ++i)
        col[i] = i == k ? ak : 0.25 * (r.m[i][k] + r.m[k][i]) / ak;
    pd_vec3 a = pd_v3(col[0], col[1], col[2]);
    if (pd_v3_dot(a, w) < 0)
        a = pd_v3_scale(a, -1); /* just below 180 degrees the skew part still tells the sense */
    *axis = pd_v3_scale(a, 1 / pd_v3_len(a));
}

static pd_vec3 unit_or_zero(pd_vec3 v) {
    pd_real len = pd_v3_len(v);
    return len > 0 ? pd_v3_scale(v, 1 / len) : pd_v3(0, 0, 0);
}

/* Both keys turn about one axis (or one of them does not turn): the common unit axis and the
 * two signed angles (degrees). */
static int common_axis(const pd_keyframe* k0, const pd_keyframe* k1, pd_vec3* axis, pd_real* a0,
                       pd_real* a1) {
    pd_vec3 u0 = unit_or_zero(k0->rotate_axis), u1 = unit_or_zero(k1->rotate_axis);
    *a0 = k0->rotate_degrees;
    *a1 = k1->rotate_degrees;
    if (*a0 == 0 || *a1 == 0 || pd_v3_len2(u0) == 0 || pd_v3_len2(u1) == 0) {
        *axis = *a0 != 0 ? u0 : u1;
        return 1;
    }
    pd_real c = pd_v3_dot(u0, u1);
    *axis = u0;
    if (c < -1 + 1e-12)
        *a1 = -*a1; /* the opposite axis is the same axis with the angle negated */
    return fabs(c) > 1 - 1e-12;
}

static pd_keyframe_motion held(const pd_keyframe* k) {
    pd_keyframe_motion m = {k->translate, pd_rotation_axis_angle(k->rotate_axis, k->rotate_degrees),
                            pd_v3(0, 0, 0), pd_v3(0, 0, 0)};
    return m;
}

/* Motion at fraction s of the segment k0 -> k1 of length span (s). */
static pd_keyframe_motion segment(const pd_keyframe* k0, const pd_keyframe* k1, pd_real s,
                                  pd_real span) {
    pd_keyframe_motion m;
    pd_vec3 d = pd_v3_sub(k1->translate, k0->translate);
    m.translate = pd_v3_madd(k0->translate, s, d);
    m.velocity = pd_v3_scale(d, 1 / span);
    pd_vec3 axis;
    pd_real a0, a1;
    if (common_axis(k0, k1, &axis, &a0, &a1)) {
        m.rotation = pd_rotation_axis_angle(axis, a0 + s * (a1 - a0));
        m.angular_velocity = pd_v3_scale(axis, (a1 - a0) * DEG / span);
        return m;
    }
    pd_mat3 r0 = pd_rotation_axis_angle(k0->rotate_axis, k0->rotate_degrees);
    pd_mat3 r1 = pd_rotation_axis_angle(k1->rotate_axis, k1->rotate_degrees);
    pd_vec3 b;
    pd_real phi;
    pd_rotation_to_axis_angle(pd_m3_mul(r1, pd_m3_transpose(r0)), &b, &phi);
    m.rotation = pd_m3_mul(pd_rotation_axis_angle(b, s * phi), r0);
    m.angular_velocity = pd_v3_scale(b, phi * DEG / span);
    return m;
}

pd_keyframe_motion pd_keyframes_motion(const pd_keyframe* keys, int count, pd_real t) {
    if (count <= 0) {
        pd_keyframe none = {0, {0, 0, 0}, {0, 1, 0}, 0};
        return held(&none);
    }
    if (t < keys[0].t)
        return held(&keys[0]);
    if (t >= keys[count - 1].t)
        return held(&keys[count - 1]);
    int j = 0;
    while (j + 2 < count && t >= keys[j + 1].t)
        ++j;
    pd_real span = keys[j + 1].t - keys[j].t;
    return segment(&keys[j], &keys[j + 1], (t - keys[j].t) / span, span);
}

pd_keyframe_motion pd_keyframes_motion_ending(const pd_keyframe* keys, int count, pd_real t) {
    if (count < 2 || !(t > keys[0].t && t <= keys[count - 1].t))
        return pd_keyframes_motion(keys, count, t);
    int j = 0;
    while (j + 2 < count && t > keys[j + 1].t)
        ++j;
    pd_real span = keys[j + 1].t - keys[j].t;
    return segment(&keys[j], &keys[j + 1], (t - keys[j].t) / span, span);
}

void pd_keyframes_pose(const pd_keyframe* keys, int count, pd_real t, pd_vec3* translate,
                       pd_mat3* rotation) {
    pd_keyframe_motion m = pd_keyframes_motion(keys, count, t);
    *translate = m.translate;
    *rotation = m.rotation;
}
