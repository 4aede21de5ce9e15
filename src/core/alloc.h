/* Counted allocation. Every allocation in Peridot goes through these so that tests and
 * `peridot info` can report bytes in use; a user hook may replace malloc/free. */
#ifndef PD_ALLOC_H
#define PD_ALLOC_H

#include <stddef.h>

#include "peridot/memory.h"

void* pd_alloc(size_t bytes);               /* NULL on failure; bytes == 0 gives NULL */
void* pd_calloc(size_t count, size_t size); /* zeroed; NULL on failure or overflow */
void* pd_realloc(void* p, size_t old_bytes, size_t new_bytes);
void pd_free(void* p, size_t bytes); /* bytes must be what was allocated */
/* pd_bytes_in_use, pd_peak_bytes and pd_set_allocator are public: peridot/memory.h. */

/* Typed helpers: PD_NEW_ARRAY(T, n) and PD_FREE_ARRAY(p, T, n). */
#define PD_NEW_ARRAY(T, n)     ((T*)pd_calloc((n), sizeof(T)))
#define PD_FREE_ARRAY(p, T, n) pd_free((p), (size_t)(n) * sizeof(T))

/* Room for `need` elements of `size` bytes in *array (capacity in *capacity): grown by a quarter
 * beyond the need when short, never shrunk, the contents not kept (scratch rebuilt each step). */
int pd_reserve_scratch(void** array, size_t* capacity, size_t need, size_t size);

#endif
