#include "core/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static pd_alloc_fn g_alloc = malloc;
static pd_free_fn g_free = free;
static size_t g_in_use, g_peak;

void pd_set_allocator(pd_alloc_fn alloc_fn, pd_free_fn free_fn) {
    g_alloc = alloc_fn ? alloc_fn : malloc;
    g_free = free_fn ? free_fn : free;
}

/* Counters are updated atomically: allocation happens outside hot loops, but may happen from
 * more than one thread (per-thread scratch set-up). */
static void count_alloc(size_t bytes) {
    size_t now = __atomic_add_fetch(&g_in_use, bytes, __ATOMIC_RELAXED);
    size_t peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
    while (now > peak &&
           !__atomic_compare_exchange_n(&g_peak, &peak, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void* pd_alloc(size_t bytes) {
    if (bytes == 0)
        return NULL;
    void* p = g_alloc(bytes);
    if (p)
        count_alloc(bytes);
    return p;
}

void* pd_calloc(size_t count, size_t size) {
    if (count == 0 || size == 0 || count > SIZE_MAX / size)
        return NULL;
    void* p = pd_alloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void* pd_realloc(void* p, size_t old_bytes, size_t new_bytes) {
    void* q = pd_alloc(new_bytes);
    if (!q)
        return NULL;
    if (p) {
        memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
        pd_free(p, old_bytes);
    }
    return q;
}

void pd_free(void* p, size_t bytes) {
    if (!p)
        return;
    __atomic_sub_fetch(&g_in_use, bytes, __ATOMIC_RELAXED);
    g_free(p);
}

size_t pd_bytes_in_use(void) {
    return __atomic_load_n(&g_in_use, __ATOMIC_RELAXED);
}
size_t pd_peak_bytes(void) {
    return __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
}

int pd_reserve_scratch(void** array, size_t* capacity, size_t need, size_t size) {
    if (need <= *capacity && *array)
        return 1;
    size_t grown = need + need / 4 + 64;
    void* fresh = pd_calloc(grown, size);
    if (!fresh)
        return 0;
    pd_free(*array, *capacity * size);
    *array = fresh;
    *capacity = grown;
    return 1;
}
