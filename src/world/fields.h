/* The field registry: what a frame can export, and the per-frame numbers of stats.csv. */
#ifndef PD_FIELDS_H
#define PD_FIELDS_H

#include "io/output.h"
#include "world/world.h"

#define PD_MAX_FIELDS 8

/* Fills `out` with the fields `attributes` (PD_ATTR_*) asks for; returns how many. Fields that
 * need a buffer (plastic strain) use world-owned storage. */
int pd_world_fields(pd_world* w, unsigned attributes, pd_field* out);
/* PD_ERR_UNSUPPORTED (err naming output.attributes) when the method cannot provide one. */
pd_status pd_world_check_attributes(const pd_world* w, unsigned attributes, pd_error* err);

typedef struct pd_frame_stats {
    double kinetic_energy; /* J, dynamic particles */
    pd_vec3 lo, hi;        /* bounding box of all particles */
} pd_frame_stats;
pd_frame_stats pd_world_frame_stats(const pd_world* w);

#endif
