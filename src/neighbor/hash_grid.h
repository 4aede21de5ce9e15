/* Fixed-radius neighbour search on a uniform grid: particles are counting-sorted into
 * hashed cells, then each particle scans the 27 cells around it for the neighbours of higher
 * index (each pair tested once), which fill both particles' rows. The result is a CSR list.
 * The grid's and the list's buffers are kept between calls and only grow; the scan's rows of
 * higher neighbours too where keep_rows is set, so such a caller does not allocate once warm
 * (without it each build allocates and frees them: half the list's indices). */
#ifndef PD_HASH_GRID_H
#define PD_HASH_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/math.h"
#include "peridot/status.h"

/* Neighbours of i are indices[offsets[i] .. offsets[i+1]), in increasing index order, i
 * itself excluded, every j with |p_j - p_i| <= radius. */
typedef struct pd_neighbor_list {
    size_t count; /* particles */
    uint32_t* offsets;
    uint32_t* indices;
    size_t offsets_capacity, indices_capacity;
} pd_neighbor_list;

typedef struct pd_hash_grid {
    pd_real cell;                    /* cell size (>= radius) */
    size_t table_size;               /* hash buckets */
    uint32_t* cell_start;            /* table_size + 1 */
    uint32_t* sorted;                /* particle indices sorted by bucket */
    size_t capacity, table_capacity; /* capacity: of sorted and sorted_pos */
    /* 0 (the default): table_size = 2n. Otherwise the table size to use whatever n is; tests
     * set a tiny table to force hash collisions. */
    size_t fixed_table_size;
    pd_vec3 origin;      /* corner of the grid: the lowest finite coordinates of the last build */
    pd_vec3* sorted_pos; /* pos[sorted[k]]: the scans read positions contiguously */
    /* 1: no sorted_pos (24 bytes a particle less): the scans read pos[sorted[k]], scattered
     * within a bucket's run of increasing indices (the contact's kept search) */
    int lean;
    /* per chunk of particles: the neighbours j > i of its particles i, row after row (the
     * scan's output before the rows are filled); grown only. Kept between builds when
     * keep_rows is 1 (a caller that builds every step: no allocation once warm, about 2 bytes
     * a neighbour entry held), else freed after each build (what a caller's memory estimate
     * counts stays the list and the grid). */
    int keep_rows;
    /* NULL (the default): every pair within the radius is listed. Otherwise a pair i < j is
     * listed (in both rows) only when keep(keep_ctx, i, j), a caller's symmetric test applied
     * to each row of the scan before it is kept: the rows and the list then hold the kept
     * pairs only (the contact's eligible candidates, not every bonded neighbour). */
    int (*keep)(const void* keep_ctx, uint32_t i, uint32_t j);
    const void* keep_ctx;
    struct pd_grid_chunk* chunks;
    size_t chunk_capacity;
    /* 2 n: per particle the count of j > i, then of j < i (a cursor); before the scan, its
     * first n are the bucket of each particle (the sort's keys) */
    uint32_t* counts;
    size_t counts_capacity;
    /* the builds so far, and the buffers they allocated (the grid's and the list's): a caller's
     * tests read them (allocations stays put once warm where keep_rows is set) */
    size_t builds, allocations;
} pd_hash_grid;

pd_status pd_neighbors_build(pd_hash_grid* grid, const pd_vec3* pos, size_t n, pd_real radius,
                             pd_neighbor_list* out);
/* The buckets of the last build whose cells come within one cell size of p, each once (at most
 * 27; returns their number): every particle that build placed within the cell size of p is in
 * sorted[cell_start[b], cell_start[b + 1]) of one of them, beside others that share a bucket.
 * For a caller that asks which of the last build's positions lie near a point. */
int pd_hash_grid_buckets_near(const pd_hash_grid* grid, pd_vec3 p, uint32_t out[27]);
/* The same list by brute force, O(n^2): for tests. */
pd_status pd_neighbors_brute_force(const pd_vec3* pos, size_t n, pd_real radius,
                                   pd_neighbor_list* out);
void pd_hash_grid_destroy(pd_hash_grid* grid);
/* What keep_rows holds a particle, for a caller's memory estimate: the rows of j > i (half of
 * `entries`, a particle's list entries, grown by up to half again) and the two counts. */
double pd_hash_grid_kept_row_bytes(double entries);
void pd_neighbor_list_destroy(pd_neighbor_list* list);
/* Gives back the room of a list beyond `capacity` indices, its contents dropped (the next
 * build fills it): a caller whose lists grew for a while and then shrank for good. */
pd_status pd_neighbor_list_fit(pd_neighbor_list* list, size_t capacity, pd_hash_grid* grid);
/* Gives back the scan's kept rows (keep_rows): the next build grows them again to its need. */
void pd_hash_grid_release_rows(pd_hash_grid* grid);

#endif
