/* Peridot public math types: the real type, 3-vectors and 3x3 matrices (row-major), with
 * the small inline operations every module uses. Heavier routines (SVD, polar) live in
 * src/math/. */
#ifndef PERIDOT_MATH_H
#define PERIDOT_MATH_H

#include <math.h>

#ifdef PD_REAL_FLOAT
typedef float pd_real;
#else
typedef double pd_real;
#endif

typedef struct pd_vec3 {
    pd_real x, y, z;
} pd_vec3;

/* Row-major: m[row][col]. */
typedef struct pd_mat3 {
    pd_real m[3][3];
} pd_mat3;

#define PD_PI 3.14159265358979323846

static inline pd_vec3 pd_v3(pd_real x, pd_real y, pd_real z) {
    pd_vec3 r = {x, y, z};
    return r;
}
static inline pd_vec3 pd_v3_add(pd_vec3 a, pd_vec3 b) {
    return pd_v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline pd_vec3 pd_v3_sub(pd_vec3 a, pd_vec3 b) {
    return pd_v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline pd_vec3 pd_v3_scale(pd_vec3 a, pd_real s) {
    return pd_v3(a.x * s, a.y * s, a.z * s);
}
/* a + s b */
static inline pd_vec3 pd_v3_madd(pd_vec3 a, pd_real s, pd_vec3 b) {
    return pd_v3(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z);
}
static inline pd_real pd_v3_dot(pd_vec3 a, pd_vec3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline pd_vec3 pd_v3_cross(pd_vec3 a, pd_vec3 b) {
    return pd_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline pd_real pd_v3_len2(pd_vec3 a) {
    return pd_v3_dot(a, a);
}
static inline pd_real pd_v3_len(pd_vec3 a) {
    return sqrt(pd_v3_dot(a, a));
}
static inline pd_vec3 pd_v3_min(pd_vec3 a, pd_vec3 b) {
    return pd_v3(fmin(a.x, b.x), fmin(a.y, b.y), fmin(a.z, b.z));
}
static inline pd_vec3 pd_v3_max(pd_vec3 a, pd_vec3 b) {
    return pd_v3(fmax(a.x, b.x), fmax(a.y, b.y), fmax(a.z, b.z));
}
static inline pd_real pd_v3_comp(pd_vec3 a, int k) {
    return k == 0 ? a.x : (k == 1 ? a.y : a.z);
}

static inline pd_mat3 pd_m3_zero(void) {
    pd_mat3 r = {{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
    return r;
}
static inline pd_mat3 pd_m3_identity(void) {
    pd_mat3 r = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    return r;
}
static inline pd_mat3 pd_m3_diag(pd_real a, pd_real b, pd_real c) {
    pd_mat3 r = {{{a, 0, 0}, {0, b, 0}, {0, 0, c}}};
    return r;
}
/* a b^T */
static inline pd_mat3 pd_m3_outer(pd_vec3 a, pd_vec3 b) {
    pd_mat3 r = {{{a.x * b.x, a.x * b.y, a.x * b.z},
                  {a.y * b.x, a.y * b.y, a.y * b.z},
                  {a.z * b.x, a.z * b.y, a.z * b.z}}};
    return r;
}
/* m += s a b^T */
static inline void pd_m3_add_outer(pd_mat3* m, pd_real s, pd_vec3 a, pd_vec3 b) {
    pd_real av[3] = {a.x, a.y, a.z}, bv[3] = {b.x, b.y, b.z};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            m->m[i][j] += s * av[i] * bv[j];
}
static inline pd_mat3 pd_m3_add(pd_mat3 a, pd_mat3 b) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            a.m[i][j] += b.m[i][j];
    return a;
}
static inline pd_mat3 pd_m3_sub(pd_mat3 a, pd_mat3 b) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            a.m[i][j] -= b.m[i][j];
    return a;
}
static inline pd_mat3 pd_m3_scale(pd_mat3 a, pd_real s) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            a.m[i][j] *= s;
    return a;
}
static inline pd_mat3 pd_m3_mul(pd_mat3 a, pd_mat3 b) {
    pd_mat3 r = pd_m3_zero();
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k)
                r.m[i][j] += a.m[i][k] * b.m[k][j];
    return r;
}
static inline pd_mat3 pd_m3_transpose(pd_mat3 a) {
    pd_mat3 r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r.m[i][j] = a.m[j][i];
    return r;
}
static inline pd_vec3 pd_m3_mulv(pd_mat3 a, pd_vec3 v) {
    return pd_v3(a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
                 a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
                 a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z);
}
static inline pd_real pd_m3_det(pd_mat3 a) {
    return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) -
           a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
           a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}
static inline pd_real pd_m3_trace(pd_mat3 a) {
    return a.m[0][0] + a.m[1][1] + a.m[2][2];
}
static inline pd_real pd_m3_frob2(pd_mat3 a) {
    pd_real s = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            s += a.m[i][j] * a.m[i][j];
    return s;
}

#endif
