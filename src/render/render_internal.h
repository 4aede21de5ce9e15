/* What the renderer's files share: the camera, the supersampled raster, the shadow map, and the
 * passes each file draws. */
#ifndef PD_RENDER_INTERNAL_H
#define PD_RENDER_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "render/render.h"

typedef struct pd_camera {
    pd_vec3 eye, forward, right, up;
    double focal;  /* pixels per unit of tan(angle) */
    double cx, cy; /* image centre (pixels) */
} pd_camera;

typedef struct pd_raster {
    int w, h;
    uint8_t* rgb; /* w * h * 3 */
    float* depth; /* w * h: view depth (along forward); FLT_MAX where only background */
} pd_raster;

/* Heights of the particles seen from straight above: a lattice over the view box's x-z
 * extent holding, per cell, the highest particle centre over it (-FLT_MAX where none). */
typedef struct pd_shadow_map {
    int nx, nz;
    double x0, z0, cell; /* lower corner and cell size (m) */
    double soft;         /* half-width of the penumbra (m) */
    float* top;          /* nx * nz */
    float highest;       /* the largest of top */
} pd_shadow_map;

static inline int pd_finite3(float a, float b, float c) {
    return isfinite(a) && isfinite(b) && isfinite(c);
}

/* Box of the finite points (0 when there is none). */
void pd_render_point_bounds(size_t n, const float* x, const float* y, const float* z, pd_vec3* lo,
                            pd_vec3* hi);
/* pd_render_view_box in doubles; *extended: 1 when it reached down to a collider. */
size_t pd_view_box(const pd_render_stage* stage, size_t n, const float* x, const float* y,
                   const float* z, double radius, pd_vec3* lo, pd_vec3* hi, int* extended);
static inline int pd_in_box(pd_vec3 lo, pd_vec3 hi, float x, float y, float z) {
    return x >= lo.x && x <= hi.x && y >= lo.y && y <= hi.y && z >= lo.z && z <= hi.z;
}

/* Direction (not unit: its forward component is 1) of the ray through sample (px, py), so
 * that the ray's parameter is the view depth the z-buffer holds. */
pd_vec3 pd_camera_ray(const pd_camera* cam, double px, double py);

/* render_stage.c: colliders, drawn where they are nearer than what the raster holds (lit, grid
 * on planes within a few view sizes of `centre`, darkened by the shadow map when given). */
void pd_stage_draw(const pd_render_stage* stage, const pd_camera* cam, pd_vec3 centre,
                   double view_size, const pd_shadow_map* shadow, pd_raster* r);
/* Height of the nearest collider surface straight below p (within `reach`); 0 when none. */
int pd_stage_surface_below(const pd_render_stage* stage, pd_vec3 p, double reach, double* y);

/* render_shadow.c */
int pd_shadow_map_build(pd_shadow_map* m, pd_vec3 lo, pd_vec3 hi, double radius, size_t n,
                        const float* x, const float* y, const float* z);
void pd_shadow_map_free(pd_shadow_map* m);
/* Fraction (0..1) of the light from above that the particles take from point p. */
float pd_shadow_at(const pd_shadow_map* m, pd_vec3 p);

/* render_text.c: overlays on the final image (rows top to bottom, 3 bytes per pixel). */
/* Width in pixels the legend takes at the right edge (0: none). */
int pd_legend_width(int w, int h, const char* title, float lo, float hi);
void pd_draw_legend(uint8_t* rgb, int w, int h, const char* title, float lo, float hi);
/* A one-line note at the bottom-left corner. */
void pd_draw_note(uint8_t* rgb, int w, int h, const char* text);

#endif
