/* A small software renderer for particle frames: each point is a shaded sphere splat seen by
 * an automatically fitted perspective camera, coloured by a scalar through a viridis-like
 * colormap, over a light grey gradient with a soft ground shadow. Used by `peridot render`. */
#ifndef PERIDOT_RENDER_H
#define PERIDOT_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pd_render_def {
    int width, height; /* output image (pixels) */
    int supersample;   /* samples per pixel side (1..4), box-filtered down: anti-aliasing */
    float radius;      /* splat radius (scene units, m); <= 0: pd_render_estimate_radius */
    /* Colour range of the scalar; scalar_min >= scalar_max: the scalar's own range. */
    float scalar_min, scalar_max;
    /* 1: fit the camera (and place the ground) to bounds_min/max instead of the points' own
     * box, so that every frame of a video is seen from the same place. */
    int use_bounds;
    float bounds_min[3], bounds_max[3];
    int shadow; /* 1: soft shadow on the ground plane y = lowest y, light from straight above */
} pd_render_def;

pd_render_def pd_default_render_def(void);

/* A splat radius that makes neighbouring particles touch: 0.6 x the median nearest-neighbour
 * distance over up to 128 sampled points, else from the bounding-box diagonal / cbrt(n). */
float pd_render_estimate_radius(size_t n, const float* x, const float* y, const float* z);

/* Renders points (x, y, z; non-finite ones skipped) into rgb (width * height * 3 bytes, rows
 * top to bottom). scalar: one value per point, or NULL for a constant colour. */
pd_status pd_render_points(const pd_render_def* def, size_t n, const float* x, const float* y,
                           const float* z, const float* scalar, uint8_t* rgb, pd_error* err);

/* The colormap: t in [0, 1] (clamped) to linear RGB in [0, 1]. */
void pd_colormap(float t, float rgb[3]);

#ifdef __cplusplus
}
#endif

#endif
