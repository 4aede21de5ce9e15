/* A method's persistent arrays (state_arrays.h). */
#include "world/state_arrays.h"

#include <string.h>

void pd_state_arrays_init(pd_state_arrays* s, pd_family* family) {
    memset(s, 0, sizeof *s);
    s->family = family;
}

void pd_state_declare(pd_state_arrays* s, const char* name, void* pointer, size_t size,
                      pd_state_kind kind) {
    if (s->count == PD_MAX_STATE_ARRAYS) /* a programming error, caught by every test */
        return;
    s->items[s->count++] = (pd_state_array){name, pointer, size, kind};
}

/* The array an item declares (NULL when the method has not allocated it). */
static void* array_of(const pd_state_array* a) {
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
        void* data = array_of(&s->items[k]);
        if (!data)
            continue;
        if (s->items[k].kind == PD_STATE_PER_BOND)
            pd_reorder_bonds(r, data, s->items[k].size);
        else
            pd_reorder_points(r, data, s->items[k].size);
    }
    return PD_OK;
}
