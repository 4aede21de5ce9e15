#include "neighbor/family.h"

#include <stdatomic.h>
#include <string.h>

#include "core/alloc.h"

static int in_family(const pd_vec3* rest, const pd_real* spacing, const int32_t* body,
                     pd_real horizon, uint32_t i, uint32_t j) {
    pd_real r = horizon * spacing[i];
    return body[i] == body[j] && pd_v3_len2(pd_v3_sub(rest[j], rest[i])) <= r * r;
}

uint32_t pd_family_find_bond(const pd_family* f, uint32_t i, uint32_t j) {
    uint32_t lo = f->offsets[i], hi = f->offsets[i + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->j[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->offsets[i + 1] && f->j[lo] == j ? lo : UINT32_MAX;
}

void pd_family_link_reverse(pd_family* f, uint32_t* cursor) {
    for (uint32_t i = 0; cursor && i < f->count; ++i)
        cursor[i] = f->offsets[i];
    for (uint32_t i = 0; i < f->count; ++i)
        for (uint32_t k = f->offsets[i]; k < f->offsets[i + 1]; ++k) {
            uint32_t j = f->j[k], c = cursor ? cursor[j] : UINT32_MAX;
            if (cursor && c < f->offsets[j + 1] && f->j[c] == i) /* the symmetric case: O(1) */
                f->rev[k] = c, cursor[j] = c + 1;
            else
                f->rev[k] = pd_family_find_bond(f, j, i);
        }
}

void pd_family_touch(pd_family* f) {
    static _Atomic uint64_t next = 1;
    f->generation = atomic_fetch_add(&next, 1);
}

void pd_family_share_rest(pd_family* f, const pd_vec3* ref) {
    PD_FREE_ARRAY(f->xi, pd_vec3, f->bond_capacity + 1);
    f->xi = NULL;
    f->ref = ref;
}

void pd_family_drop_reverse(pd_family* f) {
    PD_FREE_ARRAY(f->rev, uint32_t, f->bond_capacity + 1);
    f->rev = NULL;
}

pd_status pd_family_allocate(pd_family* f, size_t n, size_t bonds) {
    f->count = n;
    f->bond_count = f->bond_capacity = bonds;
    f->offsets = PD_NEW_ARRAY(uint32_t, n + 1);
    f->j = PD_NEW_ARRAY(uint32_t, bonds + 1);
    f->rev = PD_NEW_ARRAY(uint32_t, bonds + 1);
    f->xi = PD_NEW_ARRAY(pd_vec3, bonds + 1);
    f->w = PD_NEW_ARRAY(pd_real, n + 1);
    pd_family_touch(f);
    return f->offsets && f->j && f->rev && f->xi && f->w ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

/* Uniform influence, w = 1 / V_full with V_full the volume of a full (interior) family of the
 * body, so that sum_j w V_j = 1 inside and < 1 near a surface. (Normalising each family by its
 * own volume instead would make surface particles, which lose few bonds along the surface,
 * markedly stiffer than the bulk.) */
static pd_status normalise_weights(pd_family* f, const pd_real* volume, const int32_t* body) {
    int32_t bodies = 0;
    for (size_t i = 0; i < f->count; ++i)
        bodies = body[i] + 1 > bodies ? body[i] + 1 : bodies;
    pd_real* full = PD_NEW_ARRAY(pd_real, (size_t)bodies + 1);
    if (!full)
        return PD_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < f->count; ++i)
        full[body[i]] = fmax(full[body[i]], pd_family_volume(f, volume, (uint32_t)i));
    for (size_t i = 0; i < f->count; ++i)
        f->w[i] = full[body[i]] > 0 ? 1.0 / full[body[i]] : 0; /* 0: a body without bonds */
    PD_FREE_ARRAY(full, pd_real, (size_t)bodies + 1);
    return PD_OK;
}

pd_real pd_family_volume(const pd_family* f, const pd_real* volume, uint32_t i) {
    pd_real v = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        v += volume[f->j[b]];
    return v;
}

pd_status pd_family_build(pd_family* f, pd_hash_grid* grid, const pd_vec3* rest,
                          const pd_real* volume, const pd_real* spacing, const int32_t* body,
                          size_t n, pd_real horizon) {
    memset(f, 0, sizeof *f);
    pd_real max_spacing = 0;
    for (size_t i = 0; i < n; ++i)
        max_spacing = fmax(max_spacing, spacing[i]);
    pd_neighbor_list list = {0};
    pd_status st = pd_neighbors_build(grid, rest, n, horizon * max_spacing, &list);
    size_t bonds = 0;
    for (uint32_t i = 0; st == PD_OK && i < n; ++i)
        for (uint32_t k = list.offsets[i]; k < list.offsets[i + 1]; ++k)
            bonds += in_family(rest, spacing, body, horizon, i, list.indices[k]);
    if (st == PD_OK)
        st = pd_family_allocate(f, n, bonds);
    if (st != PD_OK) {
        pd_neighbor_list_destroy(&list);
        pd_family_free(f);
        return st;
    }
    uint32_t b = 0;
    for (uint32_t i = 0; i < n; ++i) {
        f->offsets[i] = b;
        for (uint32_t k = list.offsets[i]; k < list.offsets[i + 1]; ++k) {
            uint32_t j = list.indices[k];
            if (!in_family(rest, spacing, body, horizon, i, j))
                continue;
            f->j[b] = j;
            f->xi[b] = pd_v3_sub(rest[j], rest[i]);
            ++b;
        }
    }
    f->offsets[n] = b;
    st = normalise_weights(f, volume, body);
    pd_family_link_reverse(f, NULL); /* once, at set-up */
    pd_neighbor_list_destroy(&list);
    return st;
}

void pd_family_free(pd_family* f) {
    PD_FREE_ARRAY(f->offsets, uint32_t, f->count + 1);
    PD_FREE_ARRAY(f->j, uint32_t, f->bond_capacity + 1);
    PD_FREE_ARRAY(f->rev, uint32_t, f->bond_capacity + 1);
    PD_FREE_ARRAY(f->xi, pd_vec3, f->bond_capacity + 1);
    PD_FREE_ARRAY(f->w, pd_real, f->count + 1);
    memset(f, 0, sizeof *f);
}
