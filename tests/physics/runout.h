/* The runout of a quasi-2D column collapse. pd_channel_runout, VALIDATION.md's: the far edge of the
 * last slice (one spacing wide, along x) where the deposit is at least two spacings thick (its
 * highest grain above its lowest by a spacing or more), less L0, over L0. Measured from the
 * deposit's own bottom, not the floor: a grid method's grains rest up to a cell above a collider.
 * Two spacings are a quarter of the a = 0.5 column's height at 16 grains across, 4 % of the a = 3
 * column's: the rule cuts a thin front at coarse resolution. pd_channel_front, below, is issue
 * 37's. Shared by channel_collapse.c and mpm_admm_collapse.c. */
#ifndef PD_TESTS_PHYSICS_RUNOUT_H
#define PD_TESTS_PHYSICS_RUNOUT_H

#include <math.h>

#include "world/particles.h"

#define PD_RUNOUT_BINS 256 /* slices from x = 0: 256 spacings of channel */

static inline double pd_channel_runout(const pd_particles* p, double spacing, double l0) {
    double lo[PD_RUNOUT_BINS], hi[PD_RUNOUT_BINS];
    for (int c = 0; c < PD_RUNOUT_BINS; ++c)
        lo[c] = INFINITY, hi[c] = -INFINITY;
    for (size_t i = 0; i < p->count; ++i) {
        int c = (int)floor(p->pos[i].x / spacing);
        if (c >= 0 && c < PD_RUNOUT_BINS)
            lo[c] = fmin(lo[c], p->pos[i].y), hi[c] = fmax(hi[c], p->pos[i].y);
    }
    int last = 0;
    for (int c = 0; c < PD_RUNOUT_BINS; ++c)
        if (hi[c] - lo[c] >= spacing - 1e-9)
            last = c;
    return ((last + 1) * spacing - l0) / l0;
}

/* The deposit's front as issue 37 defines it, independent of the resolution: the far edge of the
 * farthest slice of width L0 / PD_FRONT_SLICES whose mass is at least PD_FRONT_SHARE of the
 * column's mass per L0 length (a deposit at least 1 % of the column's mean thickness), less L0,
 * over L0. Neither the slices nor the threshold depend on the spacing: a deposit of the same
 * shape reads the same at any resolution. A grain counts when its slice reaches the threshold
 * (at 16 grains across, any grain of the a = 0.5 column, two of the a = 3 column's). */
#define PD_FRONT_SLICES 16   /* slices per L0 */
#define PD_FRONT_SHARE  0.01 /* of the column's mass per L0 length */

static inline double pd_channel_front(const pd_particles* p, double l0) {
    double slice = l0 / PD_FRONT_SLICES, mass[PD_RUNOUT_BINS] = {0}, total = 0;
    for (size_t i = 0; i < p->count; ++i) {
        int c = (int)floor(p->pos[i].x / slice);
        total += p->mass[i];
        if (c >= 0 && c < PD_RUNOUT_BINS)
            mass[c] += p->mass[i];
    }
    int last = -1;
    for (int c = 0; c < PD_RUNOUT_BINS; ++c)
        if (mass[c] >= PD_FRONT_SHARE * total / PD_FRONT_SLICES)
            last = c;
    return ((last + 1) * slice - l0) / l0;
}

#endif
