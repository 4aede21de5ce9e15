#include "geometry/median_split.h"

#include <stdlib.h>

static int compare_keys(const void* a, const void* b) {
    const pd_split_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

void pd_sort_along_longest_axis(const pd_vec3* centroids, uint32_t* order, pd_split_key* keys,
                                size_t begin, size_t end) {
    pd_vec3 lo = centroids[order[begin]], hi = lo;
    for (size_t i = begin; i < end; ++i) {
        lo = pd_v3_min(lo, centroids[order[i]]);
        hi = pd_v3_max(hi, centroids[order[i]]);
    }
    pd_vec3 e = pd_v3_sub(hi, lo);
    int axis = e.x >= e.y && e.x >= e.z ? 0 : (e.y >= e.z ? 1 : 2);
    for (size_t i = begin; i < end; ++i) {
        keys[i].key = pd_v3_comp(centroids[order[i]], axis);
        keys[i].index = order[i];
    }
    qsort(keys + begin, end - begin, sizeof(pd_split_key), compare_keys);
    for (size_t i = begin; i < end; ++i)
        order[i] = keys[i].index;
}
