/* Software point renderer for `peridot render`. Every particle is drawn as a sphere impostor:
 * a screen-space disc whose per-pixel normal is that of the sphere, depth-tested in a z-buffer
 * and lit with ambient + Lambert + a small Blinn-Phong highlight. The camera looks at the view
 * box's centre (pd_render_view_box: robust to outliers) from a 3/4 view above and fits the
 * points' bounding sphere about it. The colliders are drawn into the same z-buffer
 * (render_stage.c), shadowed from above (render_shadow.c); the legend is drawn on the final
 * image (render_text.c). The image is drawn at `supersample` times the size and box-filtered
 * down for anti-aliasing. Serial: a frame costs a few pixel writes per particle and a few ray
 * tests per pixel, far below the simulation that produced it. */
#include "render/render_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

/* Scene-independent look: view direction (azimuth 35 deg, elevation 25 deg), vertical field
 * of view, margin around the bounding sphere, light direction in camera space. */
#define PD_VIEW_AZIMUTH_DEG   35.0
#define PD_VIEW_ELEVATION_DEG 25.0
#define PD_FOV_Y_DEG          30.0
#define PD_FIT_MARGIN         1.08
#define PD_AMBIENT            0.30f
#define PD_DIFFUSE            0.70f
#define PD_SPECULAR           0.18f

pd_render_def pd_default_render_def(void) {
    pd_render_def d;
    memset(&d, 0, sizeof d);
    d.width = 800;
    d.height = 600;
    d.supersample = 2;
    d.shadow = 1;
    return d;
}

/* ---- colormap ---- */

/* Control points of a perceptually ordered dark-violet -> blue -> teal -> green -> yellow
 * ramp (in the spirit of viridis), interpolated linearly. */
void pd_colormap(float t, float rgb[3]) {
    static const float k_ramp[][3] = {
        {0.27f, 0.01f, 0.33f}, {0.28f, 0.17f, 0.48f}, {0.23f, 0.32f, 0.55f},
        {0.17f, 0.45f, 0.56f}, {0.13f, 0.57f, 0.55f}, {0.16f, 0.69f, 0.50f},
        {0.37f, 0.79f, 0.38f}, {0.67f, 0.86f, 0.20f}, {0.99f, 0.91f, 0.15f},
    };
    const int last = (int)(sizeof k_ramp / sizeof k_ramp[0]) - 1;
    if (!(t > 0.0f)) /* also NaN */
        t = 0.0f;
    if (t > 1.0f)
        t = 1.0f;
    float s = t * (float)last;
    int i = (int)s;
    if (i >= last)
        i = last - 1;
    float w = s - (float)i;
    for (int c = 0; c < 3; ++c)
        rgb[c] = k_ramp[i][c] * (1.0f - w) + k_ramp[i + 1][c] * w;
}

/* ---- bounds and radius ---- */

void pd_render_point_bounds(size_t n, const float* x, const float* y, const float* z, pd_vec3* lo,
                            pd_vec3* hi) {
    *lo = pd_v3(DBL_MAX, DBL_MAX, DBL_MAX);
    *hi = pd_v3(-DBL_MAX, -DBL_MAX, -DBL_MAX);
    for (size_t i = 0; i < n; ++i)
        if (pd_finite3(x[i], y[i], z[i])) {
            pd_vec3 p = pd_v3(x[i], y[i], z[i]);
            *lo = pd_v3_min(*lo, p);
            *hi = pd_v3_max(*hi, p);
        }
    if (lo->x > hi->x) /* no finite point */
        *lo = *hi = pd_v3(0, 0, 0);
}

static double nearest_distance2(size_t n, const float* x, const float* y, const float* z,
                                size_t i) {
    double best = DBL_MAX;
    for (size_t j = 0; j < n; ++j) {
        if (j == i)
            continue;
        double dx = (double)x[j] - x[i], dy = (double)y[j] - y[i], dz = (double)z[j] - z[i];
        double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > 0 && d2 < best) /* duplicates say nothing about spacing */
            best = d2;
    }
    return best;
}

static void sort_doubles(double* v, int count) {
    for (int i = 1; i < count; ++i) {
        double key = v[i];
        int j = i - 1;
        for (; j >= 0 && v[j] > key; --j)
            v[j + 1] = v[j];
        v[j + 1] = key;
    }
}

float pd_render_estimate_radius(size_t n, const float* x, const float* y, const float* z) {
    enum { k_samples = 128 };
    double d2[k_samples];
    int count = 0;
    size_t samples = n < k_samples ? n : k_samples;
    /* Brute force over sampled points: O(128 n), a fraction of a second even for 10^6. */
    for (size_t s = 0; s < samples; ++s) {
        size_t i = s * n / samples;
        if (!pd_finite3(x[i], y[i], z[i]))
            continue;
        double best = nearest_distance2(n, x, y, z, i);
        if (best < DBL_MAX)
            d2[count++] = best;
    }
    if (count > 0) {
        sort_doubles(d2, count);
        return (float)(0.6 * sqrt(d2[count / 2]));
    }
    pd_vec3 lo, hi;
    pd_render_point_bounds(n, x, y, z, &lo, &hi);
    double diag = pd_v3_len(pd_v3_sub(hi, lo));
    return diag > 0 ? (float)(0.5 * diag / cbrt((double)(n > 0 ? n : 1))) : 0.05f;
}

/* ---- camera ---- */

/* Radius about `centre` of the sphere holding every finite point inside the view box: tighter
 * than half the box diagonal for shapes that leave the box's corners empty. */
static double points_sphere(size_t n, const float* x, const float* y, const float* z,
                            pd_vec3 centre, pd_vec3 lo, pd_vec3 hi) {
    double r2 = 0;
    for (size_t i = 0; i < n; ++i)
        if (pd_finite3(x[i], y[i], z[i]) && pd_in_box(lo, hi, x[i], y[i], z[i])) {
            double d2 = pd_v3_len2(pd_v3_sub(pd_v3(x[i], y[i], z[i]), centre));
            r2 = d2 > r2 ? d2 : r2;
        }
    return sqrt(r2);
}

/* Camera looking at `centre` that fits the sphere of radius `sphere` in both directions of an
 * image w x h whose right `legend` pixels are kept for the legend. */
static pd_camera fit_camera(pd_vec3 centre, double sphere, double radius, int w, int h,
                            int legend) {
    pd_camera cam;
    sphere += radius;
    if (sphere < 4 * radius)
        sphere = 4 * radius;
    if (!(sphere > 1e-9))
        sphere = 1e-3;
    int used_w = w - legend;
    double az = PD_VIEW_AZIMUTH_DEG * PD_PI / 180, el = PD_VIEW_ELEVATION_DEG * PD_PI / 180;
    pd_vec3 back = pd_v3(cos(el) * sin(az), sin(el), cos(el) * cos(az));
    double half_y = 0.5 * PD_FOV_Y_DEG * PD_PI / 180;
    double half_x = atan(tan(half_y) * (double)used_w / (double)h);
    double half = half_x < half_y ? half_x : half_y;
    double dist = PD_FIT_MARGIN * sphere / sin(half);
    cam.eye = pd_v3_madd(centre, dist, back);
    cam.forward = pd_v3_scale(back, -1.0);
    pd_vec3 right = pd_v3_cross(cam.forward, pd_v3(0, 1, 0));
    cam.right = pd_v3_scale(right, 1.0 / pd_v3_len(right));
    cam.up = pd_v3_cross(cam.right, cam.forward);
    cam.focal = 0.5 * h / tan(half_y);
    cam.cx = 0.5 * used_w;
    cam.cy = 0.5 * h;
    return cam;
}

pd_vec3 pd_camera_ray(const pd_camera* cam, double px, double py) {
    pd_vec3 d = pd_v3_madd(cam->forward, (px - cam->cx) / cam->focal, cam->right);
    return pd_v3_madd(d, -(py - cam->cy) / cam->focal, cam->up);
}

/* Screen position (pixels, y down) and view depth of p; 0 when behind the camera. */
static int project(const pd_camera* cam, pd_vec3 p, double* sx, double* sy, double* depth) {
    pd_vec3 q = pd_v3_sub(p, cam->eye);
    double zc = pd_v3_dot(q, cam->forward);
    if (zc <= 1e-9)
        return 0;
    *sx = cam->cx + cam->focal * pd_v3_dot(q, cam->right) / zc;
    *sy = cam->cy - cam->focal * pd_v3_dot(q, cam->up) / zc;
    *depth = zc;
    return 1;
}

/* ---- raster target ---- */

static size_t raster_pixels(const pd_raster* r) {
    return (size_t)r->w * (size_t)r->h;
}

static void free_raster(pd_raster* r) {
    size_t px = raster_pixels(r);
    pd_free(r->rgb, px * 3);
    pd_free(r->depth, px * sizeof(float));
}

static int alloc_raster(pd_raster* r, int w, int h) {
    memset(r, 0, sizeof *r);
    r->w = w;
    r->h = h;
    size_t px = raster_pixels(r);
    r->rgb = pd_alloc(px * 3);
    r->depth = pd_alloc(px * sizeof(float));
    if (!r->rgb || !r->depth) {
        free_raster(r);
        return 0;
    }
    for (size_t i = 0; i < px; ++i)
        r->depth[i] = FLT_MAX;
    return 1;
}

static uint8_t to_byte(float v) {
    if (!(v > 0.0f))
        return 0;
    return v >= 1.0f ? 255 : (uint8_t)(v * 255.0f + 0.5f);
}

/* ---- splats ---- */

typedef struct pd_splat {
    double sx, sy, depth; /* centre on screen, view depth */
    double rp;            /* radius in pixels */
    double radius;        /* radius in scene units */
    float albedo[3];
} pd_splat;

static void shade_pixel(const pd_splat* s, double u, double v, double nz, uint8_t* out) {
    /* Normal in camera space (x right, y up, z toward the viewer); light from the upper left
     * in front, half-vector for the highlight between it and the view direction (0, 0, 1). */
    static const float k_light[3] = {-0.40f, 0.70f, 0.59f};
    float n[3] = {(float)u, (float)-v, (float)nz};
    float lambert = n[0] * k_light[0] + n[1] * k_light[1] + n[2] * k_light[2];
    if (lambert < 0)
        lambert = 0;
    float hx = k_light[0], hy = k_light[1], hz = k_light[2] + 1.0f;
    float hl = sqrtf(hx * hx + hy * hy + hz * hz);
    float nh = (n[0] * hx + n[1] * hy + n[2] * hz) / hl;
    float spec = nh > 0 ? PD_SPECULAR * powf(nh, 40.0f) : 0.0f;
    for (int c = 0; c < 3; ++c)
        out[c] = to_byte(s->albedo[c] * (PD_AMBIENT + PD_DIFFUSE * lambert) + spec);
}

static void draw_splat(pd_raster* r, const pd_splat* s) {
    int y0 = (int)floor(s->sy - s->rp), y1 = (int)ceil(s->sy + s->rp);
    int x0 = (int)floor(s->sx - s->rp), x1 = (int)ceil(s->sx + s->rp);
    y0 = y0 < 0 ? 0 : y0;
    x0 = x0 < 0 ? 0 : x0;
    y1 = y1 > r->h - 1 ? r->h - 1 : y1;
    x1 = x1 > r->w - 1 ? r->w - 1 : x1;
    for (int py = y0; py <= y1; ++py)
        for (int px = x0; px <= x1; ++px) {
            double u = (px + 0.5 - s->sx) / s->rp, v = (py + 0.5 - s->sy) / s->rp;
            double r2 = u * u + v * v;
            if (r2 > 1.0)
                continue;
            double nz = sqrt(1.0 - r2);
            size_t k = (size_t)py * (size_t)r->w + (size_t)px;
            float depth = (float)(s->depth - s->radius * nz);
            if (depth >= r->depth[k])
                continue;
            r->depth[k] = depth;
            shade_pixel(s, u, v, nz, r->rgb + 3 * k);
        }
}

/* Light grey vertical gradient where nothing was drawn. */
static void fill_background(pd_raster* r) {
    static const float k_top[3] = {0.94f, 0.945f, 0.955f}, k_bottom[3] = {0.76f, 0.775f, 0.80f};
    for (int y = 0; y < r->h; ++y) {
        float t = r->h > 1 ? (float)y / (float)(r->h - 1) : 0.0f;
        for (int x = 0; x < r->w; ++x) {
            size_t k = (size_t)y * (size_t)r->w + (size_t)x;
            if (r->depth[k] < FLT_MAX)
                continue;
            for (int c = 0; c < 3; ++c)
                r->rgb[3 * k + c] = to_byte(k_top[c] * (1 - t) + k_bottom[c] * t);
        }
    }
}

static void downsample(const pd_raster* r, int ss, uint8_t* out, int w, int h) {
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < 3; ++c) {
                int sum = 0;
                for (int j = 0; j < ss; ++j)
                    for (int i = 0; i < ss; ++i)
                        sum += r->rgb[3 * ((size_t)(y * ss + j) * (size_t)r->w +
                                           (size_t)(x * ss + i)) +
                                      (size_t)c];
                out[3 * ((size_t)y * (size_t)w + (size_t)x) + (size_t)c] =
                    (uint8_t)((sum + ss * ss / 2) / (ss * ss));
            }
}

/* ---- frame ---- */

/* The caller's range, else the scalar's over the particles in the view box: a far particle
 * with a wild value (one that flew off) would otherwise squeeze the body's colours together. */
static void scalar_range(const pd_render_def* def, size_t n, const float* x, const float* y,
                         const float* z, const float* scalar, pd_vec3 box_lo, pd_vec3 box_hi,
                         float* lo, float* hi) {
    *lo = def->scalar_min;
    *hi = def->scalar_max;
    if (*lo < *hi)
        return;
    *lo = FLT_MAX;
    *hi = -FLT_MAX;
    for (size_t i = 0; i < n; ++i)
        if (isfinite(scalar[i]) && pd_in_box(box_lo, box_hi, x[i], y[i], z[i])) {
            *lo = scalar[i] < *lo ? scalar[i] : *lo;
            *hi = scalar[i] > *hi ? scalar[i] : *hi;
        }
    if (*lo > *hi) /* no finite value */
        *lo = *hi = 0;
}

static void point_albedo(const float* scalar, size_t i, float lo, float hi, float albedo[3]) {
    static const float k_plain[3] = {0.55f, 0.70f, 0.28f}; /* peridot green */
    if (!scalar) {
        memcpy(albedo, k_plain, sizeof k_plain);
        return;
    }
    float t = hi > lo ? (scalar[i] - lo) / (hi - lo) : 0.5f;
    pd_colormap(t, albedo);
}

static void draw_points(pd_raster* r, const pd_camera* cam, double radius, size_t n, const float* x,
                        const float* y, const float* z, const float* scalar, float lo, float hi) {
    for (size_t i = 0; i < n; ++i) {
        if (!pd_finite3(x[i], y[i], z[i]))
            continue;
        pd_splat s;
        if (!project(cam, pd_v3(x[i], y[i], z[i]), &s.sx, &s.sy, &s.depth))
            continue;
        s.radius = radius;
        s.rp = radius * cam->focal / s.depth;
        if (s.rp < 0.75) /* every particle covers at least about one sample */
            s.rp = 0.75;
        point_albedo(scalar, i, lo, hi, s.albedo);
        draw_splat(r, &s);
    }
}

static size_t count_outside(size_t n, const float* x, const float* y, const float* z, pd_vec3 lo,
                            pd_vec3 hi) {
    size_t out = 0;
    for (size_t i = 0; i < n; ++i)
        out += pd_finite3(x[i], y[i], z[i]) && !pd_in_box(lo, hi, x[i], y[i], z[i]);
    return out;
}

/* The box the camera fits: the caller's, or the view box of the points (*extended: it reaches
 * down to a collider). */
static void frame_box(const pd_render_def* def, size_t n, const float* x, const float* y,
                      const float* z, double radius, pd_vec3* lo, pd_vec3* hi, int* extended) {
    *extended = 0;
    if (!def->use_bounds) {
        pd_view_box(def->stage, n, x, y, z, radius, lo, hi, extended);
        return;
    }
    *lo = pd_v3(def->bounds_min[0], def->bounds_min[1], def->bounds_min[2]);
    *hi = pd_v3(def->bounds_max[0], def->bounds_max[1], def->bounds_max[2]);
}

/* The camera of a frame, fitted to its box (to the points inside a view box of their own). */
static pd_camera frame_camera(const pd_render_def* def, size_t n, const float* x, const float* y,
                              const float* z, double radius, int legend, int ss, pd_vec3 lo,
                              pd_vec3 hi, int extended) {
    pd_vec3 centre = pd_v3_scale(pd_v3_add(lo, hi), 0.5);
    double sphere = 0.5 * pd_v3_len(pd_v3_sub(hi, lo));
    if (!def->use_bounds) {
        sphere = points_sphere(n, x, y, z, centre, lo, hi);
        if (extended) /* the ground below is in view too */
            sphere = fmax(sphere, 0.5 * (hi.y - lo.y));
    }
    return fit_camera(centre, sphere, radius, def->width * ss, def->height * ss, legend * ss);
}

static void fill_info(pd_render_info* info, const pd_camera* cam, int ss, size_t outside,
                      float s_lo, float s_hi) {
    pd_vec3 v[4] = {cam->eye, cam->forward, cam->right, cam->up};
    double* dst[4] = {info->eye, info->forward, info->right, info->up};
    for (int k = 0; k < 4; ++k) {
        dst[k][0] = v[k].x;
        dst[k][1] = v[k].y;
        dst[k][2] = v[k].z;
    }
    info->focal = cam->focal / ss;
    info->cx = cam->cx / ss;
    info->cy = cam->cy / ss;
    info->outside = outside;
    info->scalar_min = s_lo;
    info->scalar_max = s_hi;
}

/* Colliders and their shadow into the raster. */
static void draw_stage(const pd_render_def* def, const pd_camera* cam, double radius, pd_vec3 lo,
                       pd_vec3 hi, size_t n, const float* x, const float* y, const float* z,
                       pd_raster* r) {
    if (!def->stage)
        return;
    pd_shadow_map map;
    int shadow = def->shadow && pd_shadow_map_build(&map, lo, hi, radius, n, x, y, z);
    pd_stage_draw(def->stage, cam, pd_v3_scale(pd_v3_add(lo, hi), 0.5),
                  pd_v3_len(pd_v3_sub(hi, lo)), shadow ? &map : NULL, r);
    if (shadow)
        pd_shadow_map_free(&map);
}

static void draw_overlays(const pd_render_def* def, int legend, size_t outside, float s_lo,
                          float s_hi, uint8_t* rgb) {
    if (legend)
        pd_draw_legend(rgb, def->width, def->height, def->legend_title, s_lo, s_hi);
    if (outside > 0) {
        char note[96];
        snprintf(note, sizeof note, "%zu far particle%s outside the view", outside,
                 outside == 1 ? "" : "s");
        pd_draw_note(rgb, def->width, def->height, note);
    }
}

pd_status pd_render_frame(const pd_render_def* def, size_t n, const float* x, const float* y,
                          const float* z, const float* scalar, uint8_t* rgb, pd_render_info* info,
                          pd_error* err) {
    int ss = def->supersample < 1 ? 1 : (def->supersample > 4 ? 4 : def->supersample);
    if (def->width <= 0 || def->height <= 0 || def->width > 8192 || def->height > 8192 || !rgb ||
        (n > 0 && (!x || !y || !z)))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "bad render size %dx%d or missing data",
                       def->width, def->height);
    pd_raster r;
    if (!alloc_raster(&r, def->width * ss, def->height * ss))
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "no memory for a %dx%d image",
                       def->width * ss, def->height * ss);
    double radius = def->radius > 0 ? def->radius : pd_render_estimate_radius(n, x, y, z);
    pd_vec3 lo, hi;
    int extended;
    frame_box(def, n, x, y, z, radius, &lo, &hi, &extended);
    float s_lo = 0, s_hi = 0;
    if (scalar)
        scalar_range(def, n, x, y, z, scalar, lo, hi, &s_lo, &s_hi);
    int legend = scalar && def->legend_title
                     ? pd_legend_width(def->width, def->height, def->legend_title, s_lo, s_hi)
                     : 0;
    pd_camera cam = frame_camera(def, n, x, y, z, radius, legend, ss, lo, hi, extended);
    size_t outside = count_outside(n, x, y, z, lo, hi);
    draw_points(&r, &cam, radius, n, x, y, z, scalar, s_lo, s_hi);
    draw_stage(def, &cam, radius, lo, hi, n, x, y, z, &r);
    fill_background(&r);
    downsample(&r, ss, rgb, def->width, def->height);
    free_raster(&r);
    draw_overlays(def, legend, outside, s_lo, s_hi, rgb);
    if (info)
        fill_info(info, &cam, ss, outside, s_lo, s_hi);
    return PD_OK;
}

pd_status pd_render_points(const pd_render_def* def, size_t n, const float* x, const float* y,
                           const float* z, const float* scalar, uint8_t* rgb, pd_error* err) {
    return pd_render_frame(def, n, x, y, z, scalar, rgb, NULL, err);
}
