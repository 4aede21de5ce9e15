/* A method's persistent arrays (state_arrays.h). */
#include "world/state_arrays.h"

#include <string.h>

#include "core/alloc.h"

void pd_state_arrays_init(pd_state_arrays* s, pd_family* family) {
    memset(s, 0, sizeof *s);
    s->family = family;
}

void pd_state_declare(pd_state_arrays* s, const char* name, void* pointer, size_t size,
                      pd_state_kind kind) {
    if (s->count == PD_MAX_STATE_ARRAYS) /* a programming error, caught by every test */
        return;
    s->items[s->count++] = (pd_state_array){name, pointer, size, kind, NULL};
}

void* pd_state_array_data(const pd_state_array* a) {
    void* data;
    memcpy(&data, a->pointer, sizeof data);
    return data;
}

pd_status pd_state_arrays_reorder(const pd_state_arrays* s, const uint32_t* perm, pd_reorder* r) {
    size_t item_max = sizeof(pd_mat3);
    for (int k = 0; k < s->count; ++k)
        item_max = s->items[k].size > item_max ? s->items[k].size : item_max;
    pd_status st = pd_reorder_begin(r, s->family, perm, item_max);
    if (st != PD_OK)
        return st;
    for (int k = 0; k < s->count; ++k) {
        void* data = pd_state_array_data(&s->items[k]);
        if (!data || s->items[k].kind == PD_STATE_BOND_SCRATCH)
            continue;
        if (s->items[k].kind == PD_STATE_PER_BOND)
            pd_reorder_bonds(r, data, s->items[k].size);
        else
            pd_reorder_points(r, data, s->items[k].size);
    }
    return PD_OK;
}

/* ---- per-bond arrays ---- */

static int per_bond(const pd_state_array* a) {
    return a->kind != PD_STATE_PER_PARTICLE;
}

static void set_array(const pd_state_array* a, void* data) {
    memcpy(a->pointer, &data, sizeof data);
}

/* One more element than the bonds: an empty family still has its arrays. */
static void* bond_array(const pd_state_array* a, size_t capacity) {
    return pd_calloc(capacity + 1, a->size);
}

static void free_bond_array(const pd_state_array* a, void* data, size_t capacity) {
    pd_free(data, (capacity + 1) * a->size);
}

static void free_spares(pd_state_arrays* s) {
    for (int k = 0; k < s->count; ++k) {
        pd_state_array* a = &s->items[k];
        if (per_bond(a))
            free_bond_array(a, a->spare, s->spare_capacity);
        a->spare = NULL;
    }
    s->spare_capacity = 0;
}

void pd_state_bonds_free(pd_state_arrays* s) {
    free_spares(s);
    for (int k = 0; k < s->count; ++k)
        if (per_bond(&s->items[k])) {
            free_bond_array(&s->items[k], pd_state_array_data(&s->items[k]), s->bond_capacity);
            set_array(&s->items[k], NULL);
        }
    s->bond_capacity = 0;
}

/* Allocates into each per-bond item's spare an array of `capacity` bonds; all or none. */
static pd_status allocate_spares(pd_state_arrays* s, size_t capacity) {
    free_spares(s);
    s->spare_capacity = capacity;
    for (int k = 0; k < s->count; ++k) {
        pd_state_array* a = &s->items[k];
        if (per_bond(a) && !(a->spare = bond_array(a, capacity))) {
            free_spares(s);
            return PD_ERR_OUT_OF_MEMORY;
        }
    }
    return PD_OK;
}

/* Each per-bond item's spare becomes its array and its array the spare. */
static void swap_spares(pd_state_arrays* s) {
    for (int k = 0; k < s->count; ++k) {
        pd_state_array* a = &s->items[k];
        if (!per_bond(a))
            continue;
        void* data = pd_state_array_data(a);
        set_array(a, a->spare);
        a->spare = data;
    }
    size_t capacity = s->bond_capacity;
    s->bond_capacity = s->spare_capacity;
    s->spare_capacity = capacity;
}

/* Whether the per-bond arrays (spares: 1) are allocated: all or none are. */
static int allocated(const pd_state_arrays* s, int spares) {
    for (int k = 0; k < s->count; ++k)
        if (per_bond(&s->items[k]))
            return (spares ? s->items[k].spare : pd_state_array_data(&s->items[k])) != NULL;
    return 1;
}

pd_status pd_state_bonds_reserve(pd_state_arrays* s, size_t capacity) {
    if (allocated(s, 0) && s->bond_capacity >= capacity)
        return PD_OK;
    pd_status st = allocate_spares(s, capacity);
    if (st != PD_OK)
        return st;
    swap_spares(s);
    free_spares(s); /* the old arrays, of too few bonds */
    return PD_OK;
}

/* dst[b] = src[old_bond[b]], zero for a new bond, `size` bytes each. */
static void carry(void* dst, const void* src, const uint32_t* old_bond, size_t count, size_t size) {
    for (size_t b = 0; b < count; ++b) {
        char* to = (char*)dst + b * size;
        if (old_bond[b] == PD_BOND_NEW)
            memset(to, 0, size);
        else
            memcpy(to, (const char*)src + old_bond[b] * size, size);
    }
}

pd_status pd_state_bonds_renew(pd_state_arrays* s, const pd_family* out, const uint32_t* old_bond) {
    if (!allocated(s, 1) || s->spare_capacity < out->bond_capacity) {
        pd_status st = allocate_spares(s, out->bond_capacity);
        if (st != PD_OK)
            return st;
    }
    for (int k = 0; k < s->count; ++k) {
        const pd_state_array* a = &s->items[k];
        if (a->kind == PD_STATE_PER_BOND && pd_state_array_data(a))
            carry(a->spare, pd_state_array_data(a), old_bond, out->bond_count, a->size);
    }
    swap_spares(s);
    return PD_OK;
}

/* a[k] = a[map[k]] in place: a removal's map only skips bonds (map[k] >= k, increasing). */
static void compact(void* data, const uint32_t* map, size_t count, size_t size) {
    for (size_t k = 0; k < count; ++k)
        if (map[k] != k)
            memcpy((char*)data + k * size, (const char*)data + map[k] * size, size);
}

pd_status pd_state_bonds_remove(pd_state_arrays* s, const uint8_t* remove, const int32_t* id,
                                pd_bond_set* broken, uint32_t* map, size_t* removed) {
    pd_status st = pd_family_remove(s->family, remove, id, broken, map, removed);
    if (st != PD_OK || *removed == 0)
        return st;
    for (int k = 0; k < s->count; ++k) {
        const pd_state_array* a = &s->items[k];
        if (a->kind == PD_STATE_PER_BOND && pd_state_array_data(a))
            compact(pd_state_array_data(a), map, s->family->bond_count, a->size);
    }
    return PD_OK;
}
