/* Z-order (Morton) ordering, so that particles near in space are near in memory. */
#ifndef PD_MORTON_H
#define PD_MORTON_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/math.h"
#include "peridot/status.h"

/* 63-bit Morton code of p quantised on a grid of `cell` size from `origin`. */
uint64_t pd_morton_code(pd_vec3 p, pd_vec3 origin, pd_real cell);

/* Lowest finite coordinate on each axis (0 where none is finite): the corner Morton codes and
 * grid cells are measured from, so that they stay small far from the origin. */
pd_vec3 pd_finite_lower_corner(const pd_vec3* pos, size_t n);

/* perm[i] = the old index of the particle that goes to place i, sorted by Morton code (ties by
 * old index, so the order is deterministic). */
pd_status pd_morton_order(const pd_vec3* pos, size_t n, pd_real cell, uint32_t* perm);

/* Sorts keys in place, stably, and sets perm[k] to the index the k-th key had (ties keep their
 * index order). */
pd_status pd_sort_by_key(uint64_t* keys, size_t n, uint32_t* perm);
/* The same with the caller's scratch of n keys and n indices (no allocation: a sort every step). */
void pd_sort_by_key_with(uint64_t* keys, size_t n, uint32_t* perm, uint64_t* keys_scratch,
                         uint32_t* perm_scratch);

#endif
