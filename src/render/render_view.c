/* The box the camera fits (pd_render_view_box): robust to a few far particles, and reaching
 * down to the collider a body rests on or falls towards. */
#include <stddef.h>

#include "core/alloc.h"
#include "render/render_internal.h"

/* Share of the points cut from each end of every axis, and how much the remaining box grows
 * on each side (of its size): a body loses 1 % per end and gets half its size back, so that a
 * thin part (a bunny's ears: under 1 % of its particles) stays in view, while a particle more
 * than half a body size away falls outside. The camera then fits the points inside the box, not
 * the box. */
#define PD_VIEW_PERCENTILE 0.01
#define PD_VIEW_GROW       0.50
/* How far below the box (in box diagonals) a collider surface still joins the view. */
#define PD_VIEW_GROUND_REACH 2.0

/* The k-th smallest of v[0..count) (Wirth's selection, Algorithms + Data Structures =
 * Programs, 1976: Hoare's partition about v[k], which copes with many equal values; reorders
 * v). */
static float select_kth(float* v, size_t count, size_t kth) {
    ptrdiff_t left = 0, right = (ptrdiff_t)count - 1, k = (ptrdiff_t)kth;
    while (left < right) {
        float pivot = v[k];
        ptrdiff_t i = left, j = right;
        do {
            while (v[i] < pivot)
                ++i;
            while (pivot < v[j])
                --j;
            if (i <= j) {
                float t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        } while (i <= j);
        if (j < k)
            left = i;
        if (k < i)
            right = j;
    }
    return v[k];
}

/* Fills v with the finite points' coordinate `axis`; returns how many. */
static size_t gather_axis(size_t n, const float* x, const float* y, const float* z, int axis,
                          float* v) {
    const float* c = axis == 0 ? x : (axis == 1 ? y : z);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i)
        if (pd_finite3(x[i], y[i], z[i]))
            v[m++] = c[i];
    return m;
}

static void set_axis(pd_vec3* v, int axis, double value) {
    if (axis == 0)
        v->x = value;
    else if (axis == 1)
        v->y = value;
    else
        v->z = value;
}

/* The percentile box, grown; 0 when no memory (then the whole box). */
static int robust_box(size_t n, const float* x, const float* y, const float* z, double radius,
                      pd_vec3* lo, pd_vec3* hi) {
    float* v = pd_alloc(n * sizeof(float));
    if (!v)
        return 0;
    for (int axis = 0; axis < 3; ++axis) {
        size_t m = gather_axis(n, x, y, z, axis, v);
        size_t cut = (size_t)(PD_VIEW_PERCENTILE * (double)m);
        double a = select_kth(v, m, cut), b = select_kth(v, m, m - 1 - cut);
        double grow = PD_VIEW_GROW * (b - a) + radius;
        set_axis(lo, axis, a - grow);
        set_axis(hi, axis, b + grow);
    }
    pd_free(v, n * sizeof(float));
    return 1;
}

size_t pd_view_box(const pd_render_stage* stage, size_t n, const float* x, const float* y,
                   const float* z, double radius, pd_vec3* lo, pd_vec3* hi, int* extended) {
    pd_render_point_bounds(n, x, y, z, lo, hi);
    *extended = 0;
    size_t finite = 0;
    for (size_t i = 0; i < n; ++i)
        finite += pd_finite3(x[i], y[i], z[i]);
    if (finite == 0)
        return 0;
    if (!robust_box(n, x, y, z, radius, lo, hi)) {
        *lo = pd_v3_sub(*lo, pd_v3(radius, radius, radius));
        *hi = pd_v3_add(*hi, pd_v3(radius, radius, radius));
    }
    double below;
    pd_vec3 foot = pd_v3(0.5 * (lo->x + hi->x), lo->y, 0.5 * (lo->z + hi->z));
    double reach = PD_VIEW_GROUND_REACH * pd_v3_len(pd_v3_sub(*hi, *lo));
    if (stage && pd_stage_surface_below(stage, foot, reach, &below) && below < lo->y) {
        lo->y = below;
        *extended = 1;
    }
    size_t outside = 0;
    for (size_t i = 0; i < n; ++i)
        outside += pd_finite3(x[i], y[i], z[i]) && !pd_in_box(*lo, *hi, x[i], y[i], z[i]);
    return outside;
}

size_t pd_render_view_box(const pd_render_stage* stage, size_t n, const float* x, const float* y,
                          const float* z, float radius, float lo[3], float hi[3]) {
    pd_vec3 l, h;
    int extended;
    size_t outside = pd_view_box(stage, n, x, y, z, radius, &l, &h, &extended);
    lo[0] = (float)l.x, lo[1] = (float)l.y, lo[2] = (float)l.z;
    hi[0] = (float)h.x, hi[1] = (float)h.y, hi[2] = (float)h.z;
    return outside;
}
