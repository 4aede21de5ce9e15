/* Counted allocation (core/alloc.h): scratch arrays reserved for a step's entries. */
#include "core/alloc.h"
#include "test.h"

/* Short: grown beyond the need and counted; enough: the same array kept; freed: the count back
 * where it started (a wrong size passed to pd_free would leave bytes counted). */
PD_TEST(reserve_scratch_grows_keeps_and_counts) {
    size_t start = pd_bytes_in_use();
    void* array = NULL;
    size_t capacity = 0;
    PD_REQUIRE(pd_reserve_scratch(&array, &capacity, 100, sizeof(double)));
    PD_CHECK(array != NULL && capacity >= 100);
    PD_CHECK(pd_bytes_in_use() - start == capacity * sizeof(double));
    void* first = array;
    size_t first_capacity = capacity;
    PD_REQUIRE(pd_reserve_scratch(&array, &capacity, first_capacity, sizeof(double)));
    PD_CHECK(array == first && capacity == first_capacity);
    PD_REQUIRE(pd_reserve_scratch(&array, &capacity, 10 * first_capacity, sizeof(double)));
    PD_CHECK(capacity >= 10 * first_capacity);
    PD_CHECK(pd_bytes_in_use() - start == capacity * sizeof(double));
    pd_free(array, capacity * sizeof(double));
    PD_CHECK(pd_bytes_in_use() == start);
}
