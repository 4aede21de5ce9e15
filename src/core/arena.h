/* A bump arena for per-step scratch: reserved once, reset every step, never freed in hot
 * loops. Allocations are 64-byte aligned so that per-thread slices do not share cache lines. */
#ifndef PD_ARENA_H
#define PD_ARENA_H

#include <stddef.h>

typedef struct pd_arena {
    unsigned char* base;
    size_t capacity, used, high_water;
} pd_arena;

int pd_arena_init(pd_arena* a, size_t capacity); /* 0 on success */
void pd_arena_destroy(pd_arena* a);
void* pd_arena_push(pd_arena* a, size_t bytes); /* NULL when full (a programming error) */
void pd_arena_reset(pd_arena* a);
#define PD_ARENA_ARRAY(a, T, n) ((T*)pd_arena_push((a), (size_t)(n) * sizeof(T)))

#endif
