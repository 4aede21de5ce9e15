/* The runout of a quasi-2D column collapse. pd_channel_runout, VALIDATION.md's: the far edge of the
 * last slice (one spacing wide, along x) where the deposit is at least two spacings thick (its
 * highest grain above its lowest by a spacing or more), less L0, over L0. Measured from the
 * deposit's own bottom, not the floor: a grid method's grains rest up to a cell above a collider.
 * Two spacings are a quarter of the a = 0.5 column's height at 16 grains across, 4 % of the a = 3
 * column's: the rule cuts a thin front at coarse resolution. pd_channel_front, below, is issue
 * 37's; the channel's scene and its run to rest follow. Shared by channel_collapse.c and
 * mpm_admm_collapse.c. */
#ifndef PD_TESTS_PHYSICS_RUNOUT_H
#define PD_TESTS_PHYSICS_RUNOUT_H

#include <math.h>
#include <stdio.h>

#include "world/world.h"

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

/* The channel of channel_collapse.c (Lube 2005's set-up; its comments say why each number): a
 * column of sand of length L0 and height a L0 against the back wall of a channel 4 grains deep,
 * friction angle 30 on the extension cone (plane strain's match), E 3e5 Pa, nu 0.3, 1600 kg/m^3,
 * on a no_slip floor, the channel's walls slipping without friction. printf's arguments: the
 * spacing, L0, a L0, the depth twice. */
#define PD_CHANNEL_SCENE                                                                           \
    "{\"version\":1,\"method\":\"mpm\",\"solver\":{\"projective_pd\":{\"plastic_passes\":4}},"     \
    "\"time\":{\"dt\":{\"projective_pd\":0.002},\"fps\":50,\"frames\":100},"                       \
    "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,\"poisson_ratio\":0.3,"      \
    "\"plasticity\":{\"model\":\"drucker_prager\",\"friction_angle\":30,\"cohesion\":0,\"cone\":"  \
    "\"extension\"}}},"                                                                            \
    "\"bodies\":[{\"name\":\"column\",\"material\":\"sand\",\"spacing\":%.17g,"                    \
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[%.17g,%.17g,%.17g]}}],"                  \
    "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"boundary\":\"no_slip\"},"             \
    "{\"type\":\"box\",\"min\":[0,-1,0],\"max\":[2,2,%.17g],\"inside\":true,"                      \
    "\"boundary\":\"slip\",\"friction\":0}]}"

/* Steps w until the collapse is at rest: the kinetic energy below 1e-6 of the initial potential
 * energy (after 0.2 s), or 2 s (issue 37's measure). Returns KE / PE0 at the end, negative
 * (after printing) when a step failed. */
static inline double pd_channel_run_to_rest(pd_world* w) {
    const pd_particles* p = &w->particles;
    double pe0 = 0, ke = 0;
    for (size_t i = 0; i < p->count; ++i)
        pe0 += p->mass[i] * 9.81 * p->pos[i].y;
    pd_error err = {0};
    while (w->time < 2.0 - 1e-9) {
        if (pd_world_step(w, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            return -1;
        }
        ke = 0;
        for (size_t i = 0; i < p->count; ++i)
            ke += 0.5 * p->mass[i] * pd_v3_len2(p->vel[i]);
        if (w->time > 0.2 && ke < 1e-6 * pe0)
            break;
    }
    return ke / pe0;
}

/* The deposit's height: the mean height of the grains above 90 % of the highest (m). */
static inline double pd_deposit_top_height(const pd_particles* p) {
    double top = 0, h = 0;
    int k = 0;
    for (size_t i = 0; i < p->count; ++i)
        top = fmax(top, p->pos[i].y);
    for (size_t i = 0; i < p->count; ++i)
        if (p->pos[i].y > 0.9 * top)
            h += p->pos[i].y, ++k;
    return k ? h / k : 0;
}

#endif
