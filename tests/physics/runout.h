/* The runout of a quasi-2D column collapse, as Lube et al. 2005 measure it (VALIDATION.md): the
 * far edge of the last slice (one spacing wide, along x) where the deposit is at least two
 * spacings thick (its highest grain above its lowest by a spacing or more), less L0, over L0.
 * Measured from the deposit's own bottom, not the floor: a grid method's grains rest up to a
 * cell above a collider. Shared by channel_collapse.c and mpm_admm_collapse.c. */
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

#endif
