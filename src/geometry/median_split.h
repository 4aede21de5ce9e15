/* The median split both triangle trees (the BVH of mesh_sdf, the winding-number tree of
 * mesh.c) are built by: items sorted by centroid along the longest axis of their centroids'
 * box, ties by index, so that a tree is the same on every run. */
#ifndef PD_MEDIAN_SPLIT_H
#define PD_MEDIAN_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/math.h"

typedef struct pd_split_key {
    pd_real key;
    uint32_t index;
} pd_split_key;

/* Sorts order[begin, end) (indices into centroids); keys is scratch of at least `end` items. */
void pd_sort_along_longest_axis(const pd_vec3* centroids, uint32_t* order, pd_split_key* keys,
                                size_t begin, size_t end);

#endif
