/* A small software renderer for particle frames: each point is a shaded sphere splat seen by
 * an automatically fitted perspective camera, coloured by a scalar through a viridis-like
 * colormap with a legend, among the scene's colliders (a plane as a ground with a grid; boxes,
 * spheres, cylinders and meshes), which receive the particles' shadow from a light straight
 * above. Used by `peridot render`. */
#ifndef PERIDOT_RENDER_H
#define PERIDOT_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The colliders of a scene, ready to draw: built once (a mesh collider loads its file), posed
 * per frame. */
typedef struct pd_render_stage pd_render_stage;

/* Builds the stage from a scene's collider defs (pd_scene.colliders); count 0 gives an empty
 * stage. Errors name "colliders[k]" as pd_colliders_create does. */
pd_status pd_render_stage_create(const pd_collider_def* defs, int count, pd_render_stage** out,
                                 pd_error* err);
void pd_render_stage_destroy(pd_render_stage* stage);
/* Poses every collider at time t (s), as the run did (velocity, angular velocity, keyframes). */
void pd_render_stage_pose(pd_render_stage* stage, double t);

typedef struct pd_render_def {
    int width, height; /* output image (pixels) */
    int supersample;   /* samples per pixel side (1..4), box-filtered down: anti-aliasing */
    float radius;      /* splat radius (scene units, m); <= 0: pd_render_estimate_radius */
    /* Colour range of the scalar; scalar_min >= scalar_max: the scalar's own range over the
     * particles inside the view box. Values beyond the range take the colour of its end. */
    float scalar_min, scalar_max;
    /* 1: fit the camera to bounds_min/max instead of pd_render_view_box of the points, so that
     * every frame of a video is seen from the same place. */
    int use_bounds;
    float bounds_min[3], bounds_max[3];
    /* 1: the particles cast a soft shadow (light from straight above) on the colliders below
     * them; nothing receives it without colliders. */
    int shadow;
    pd_render_stage* stage; /* colliders to draw (posed by the caller); NULL: none */
    /* Legend of the scalar colours, e.g. "speed [m/s]": a colour bar with the range at the
     * image's right edge. NULL, or no scalar: no legend. */
    const char* legend_title;
} pd_render_def;

pd_render_def pd_default_render_def(void);

/* What a render did, for the caller to report and for tests to project points themselves:
 * a pinhole camera, pixel (sx, sy) = (cx + focal (q.right) / (q.forward),
 * cy - focal (q.up) / (q.forward)) with q = p - eye, in output pixels. */
typedef struct pd_render_info {
    double eye[3], forward[3], right[3], up[3];
    double focal, cx, cy;
    size_t outside;               /* particles beyond the view box, left out of the fit */
    float scalar_min, scalar_max; /* the colour range used */
} pd_render_info;

/* A splat radius that makes neighbouring particles touch: 0.6 x the median nearest-neighbour
 * distance over up to 128 sampled points, else from the bounding-box diagonal / cbrt(n). */
float pd_render_estimate_radius(size_t n, const float* x, const float* y, const float* z);

/* The box the camera fits: the 1st..99th percentile box of the finite points on each axis,
 * grown by half its size and by `radius` on each side (so one far outlier cannot shrink the
 * body to a dot), then extended down to the nearest collider surface below its centre within
 * twice its diagonal (so the ground a body falls towards is in view). stage may be NULL.
 * Returns the number of finite points outside the box. */
size_t pd_render_view_box(const pd_render_stage* stage, size_t n, const float* x, const float* y,
                          const float* z, float radius, float lo[3], float hi[3]);

/* Renders points (x, y, z; non-finite ones skipped) into rgb (width * height * 3 bytes, rows
 * top to bottom). scalar: one value per point, or NULL for a constant colour. info may be
 * NULL. */
pd_status pd_render_frame(const pd_render_def* def, size_t n, const float* x, const float* y,
                          const float* z, const float* scalar, uint8_t* rgb, pd_render_info* info,
                          pd_error* err);
/* pd_render_frame without the info. */
pd_status pd_render_points(const pd_render_def* def, size_t n, const float* x, const float* y,
                           const float* z, const float* scalar, uint8_t* rgb, pd_error* err);

/* The unit of a frame's PLY property ("vx": "m/s", "density": "kg/m^3", "id": "-"; "speed"
 * is |v|, "m/s") as the field registry declares it; NULL for a name nothing publishes. */
const char* pd_render_unit(const char* property);

/* The colormap: t in [0, 1] (clamped) to linear RGB in [0, 1]. */
void pd_colormap(float t, float rgb[3]);

#ifdef __cplusplus
}
#endif

#endif
