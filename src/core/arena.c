#include "core/arena.h"

#include "core/alloc.h"

int pd_arena_init(pd_arena* a, size_t capacity) {
    a->base = pd_alloc(capacity);
    a->capacity = a->base ? capacity : 0;
    a->used = a->high_water = 0;
    return a->base ? 0 : -1;
}

void pd_arena_destroy(pd_arena* a) {
    pd_free(a->base, a->capacity);
    a->base = NULL;
    a->capacity = a->used = 0;
}

void* pd_arena_push(pd_arena* a, size_t bytes) {
    size_t start = (a->used + 63) & ~(size_t)63;
    if (start + bytes > a->capacity)
        return NULL;
    a->used = start + bytes;
    if (a->used > a->high_water)
        a->high_water = a->used;
    return a->base + start;
}

void pd_arena_reset(pd_arena* a) {
    a->used = 0;
}
