/* The field registry: what a frame can export, and the per-frame numbers of stats.csv. The
 * world publishes the attributes every method has (velocity, material, body, id); a method
 * publishes the ones it computes through its vtable (pd_solver_vtable.fields). */
#ifndef PD_FIELDS_H
#define PD_FIELDS_H

#include "io/output.h"
#include "world/world.h"

#define PD_MAX_FIELDS 8

/* The attributes the world publishes for every method; *count gets their number. */
const pd_field_info* pd_world_field_table(int* count);
/* The publisher of `attribute` (PD_ATTR_* bit) for `solver`: the world's entry or the
 * method's, or NULL when nobody publishes it. *from_method tells which (may be NULL). */
const pd_field_info* pd_field_publisher(const pd_solver_vtable* solver, unsigned attribute,
                                        int* from_method, int* method_index);
/* Refuses (PD_ERR_BAD_SCENE at `path`, e.g. "output.attributes[1]") an attribute (PD_ATTR_*
 * bit) nobody publishes; the message names the method and what it can write. */
pd_status pd_check_attribute(const pd_solver_vtable* solver, unsigned attribute, const char* path,
                             pd_error* err);

/* Fills `out` with the fields `attributes` asks for, in PD_ATTR_* bit order; returns how many,
 * or -1 (err filled) when a method cannot hand out a field it declared (projective_pd's density
 * asked for within a step, from an iteration observer, before any request since the particles
 * were last ordered: docs/methods/projective_pd.md). */
int pd_world_fields(pd_world* w, unsigned attributes, pd_field* out, pd_error* err);

/* The scene names of the attributes pd_world_fields hands out ("velocity", "stress", ...), in
 * its order, into names; returns how many. */
int pd_world_field_names(unsigned attributes, char names[][32], int max);

/* pd_world_frame_stats is public: peridot/world.h. */

#endif
