/* Fixed-radius neighbour search on a hashed uniform grid (cell size = radius). Particles are
 * counting-sorted by bucket (cell_start holds the bucket boundaries); each particle then scans
 * the buckets of the 27 cells around its own for its neighbours of higher index, so each pair
 * is tested once. Those rows go to per-chunk buffers (a chunk's content does not depend on the
 * thread that scans it); the pair i < j then lists i in j's row, in increasing i, and each row
 * is its lower part followed by its upper one: the same list, sorted, on any number of
 * threads. Every candidate is distance-checked, so hash
 * collisions cost time but never correctness. */
#include "neighbor/hash_grid.h"

#include "neighbor/morton.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "parallel/parallel.h"

enum { PD_GRID_GRAIN = 512, PD_SMALL_SORT = 48 };

/* The cell is made a hair larger than the radius so that rounding in (x - origin) / cell can
 * never put two particles within the radius more than one cell apart (holds while the cell
 * coordinates stay below about 2^31). */
#define PD_CELL_MARGIN (1.0 + 0x1p-20)
/* Cell coordinates are clamped here before the conversion to an integer (which is undefined
 * for huge, infinite or NaN values); clamping is monotone, so neighbours stay adjacent. */
#define PD_CELL_CLAMP 0x1p50

/* Grows a uint32 buffer to at least `need` entries (its contents are not kept), counting the
 * allocation in *allocations. */
static pd_status reserve_u32(uint32_t** buf, size_t* capacity, size_t need, size_t* allocations) {
    if (need <= *capacity && *buf)
        return PD_OK; /* (an empty request still gets a buffer, so `buf + 0` is never NULL) */
    size_t grown = need + need / 4 + 16; /* slack so small fluctuations do not reallocate */
    uint32_t* p = pd_alloc(grown * sizeof(uint32_t));
    if (!p)
        return PD_ERR_OUT_OF_MEMORY;
    ++*allocations;
    pd_free(*buf, *capacity * sizeof(uint32_t));
    *buf = p;
    *capacity = grown;
    return PD_OK;
}

/* Beyond this many cells from the origin, rounding can exceed the pruning margin below, so
 * cells are no longer pruned there (only scanned). */
#define PD_PRUNE_LIMIT 0x1p30
/* Slack, in cells, taken off the gaps before pruning: covers the rounding of (x - origin) /
 * cell for coordinates below PD_PRUNE_LIMIT cells. */
#define PD_PRUNE_SLACK 0x1p-18

/* Where a particle sits: its cell, and per axis the squared gap (in cells) from it to the
 * lower neighbour cell (gap2[k][0]), its own (0) and the upper one (gap2[k][2]). */
typedef struct cell_pos {
    int64_t c[3];
    double gap2[3][3];
} cell_pos;

/* In double whatever pd_real is, so the margins above hold for float builds too. */
static void locate_axis(double x, double origin, double cell, int64_t* c, double gap2[3]) {
    double q = (x - origin) / cell, f = floor(q);
    gap2[0] = gap2[1] = gap2[2] = 0;
    if (isnan(f)) {
        *c = 0; /* such a particle has no neighbours anyway: every distance to it is NaN */
        return;
    }
    *c = (int64_t)(f > PD_CELL_CLAMP ? PD_CELL_CLAMP : (f < -PD_CELL_CLAMP ? -PD_CELL_CLAMP : f));
    if (fabs(q) > PD_PRUNE_LIMIT)
        return;
    double lo = fmax(q - f - PD_PRUNE_SLACK, 0), hi = fmax(1 - (q - f) - PD_PRUNE_SLACK, 0);
    gap2[0] = lo * lo;
    gap2[2] = hi * hi;
}

static void locate(const pd_hash_grid* grid, pd_vec3 p, cell_pos* at) {
    locate_axis(p.x, grid->origin.x, grid->cell, &at->c[0], at->gap2[0]);
    locate_axis(p.y, grid->origin.y, grid->cell, &at->c[1], at->gap2[1]);
    locate_axis(p.z, grid->origin.z, grid->cell, &at->c[2], at->gap2[2]);
}

/* Spatial hash of a cell: a multiply-xor with large odd constants followed by a 64-bit
 * finaliser, mapped onto [0, table_size) by a multiply-shift (no power-of-two requirement). */
static uint32_t hash_cell(int64_t cx, int64_t cy, int64_t cz, size_t table_size) {
    uint64_t h = (uint64_t)cx * 0x9E3779B97F4A7C15ull ^ (uint64_t)cy * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)cz * 0x165667B19E3779F9ull;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return (uint32_t)(((h >> 32) * (uint64_t)table_size) >> 32);
}

typedef struct grid_job {
    pd_hash_grid* grid;
    const pd_vec3* pos;
    pd_real radius2;
    uint32_t* indices; /* the list's */
    size_t n;
    int failed; /* a chunk's buffer could not grow */
} grid_job;

static void insertion_sort_u32(uint32_t* a, size_t n) {
    for (size_t i = 1; i < n; ++i) {
        uint32_t v = a[i];
        size_t k = i;
        while (k > 0 && a[k - 1] > v) {
            a[k] = a[k - 1];
            --k;
        }
        a[k] = v;
    }
}

static void sift_down_u32(uint32_t* a, size_t root, size_t n) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && a[child + 1] > a[child])
            ++child;
        if (a[root] >= a[child])
            return;
        uint32_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/* In place and allocation-free (libc qsort may call malloc): insertion sort for the usual
 * short lists, heapsort for the dense ones. The values are distinct, so any correct sort
 * gives the same bytes. */
static void sort_u32(uint32_t* a, size_t n) {
    if (n <= PD_SMALL_SORT) {
        insertion_sort_u32(a, n);
        return;
    }
    for (size_t i = n / 2; i-- > 0;)
        sift_down_u32(a, i, n);
    for (size_t end = n - 1; end > 0; --end) {
        uint32_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down_u32(a, 0, end);
    }
}

/* The buckets of the 27 cells around a cell, z-major (the order of both row-major and
 * Morton-ordered particles, so that neighbours come out nearly sorted). Two cells that hash
 * to the same bucket must not both be scanned, or their particles would be listed twice:
 * same_before[k] marks the earlier cells that share cell k's bucket. A 512-bit filter on the
 * bucket bits finds most buckets new without searching the list. Consecutive particles often
 * share a cell, so the query is kept and only recomputed when the cell changes. */
typedef struct cell_query {
    int64_t c[3];
    int valid;
    uint32_t buckets[27];
    uint32_t same_before[27];
} cell_query;

static uint32_t same_bucket_mask(const uint32_t* buckets, int m, uint32_t b) {
    uint32_t mask = 0;
    for (int k = 0; k < m; ++k)
        mask |= (uint32_t)(buckets[k] == b) << k;
    return mask;
}

static void query_cell(const pd_hash_grid* grid, const int64_t c[3], cell_query* q) {
    if (q->valid && c[0] == q->c[0] && c[1] == q->c[1] && c[2] == q->c[2])
        return;
    uint64_t filter[8] = {0};
    int m = 0;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx, ++m) {
                uint32_t b = hash_cell(c[0] + dx, c[1] + dy, c[2] + dz, grid->table_size);
                uint64_t bit = 1ull << (b & 63), *word = &filter[(b >> 6) & 7];
                q->same_before[m] = (*word & bit) ? same_bucket_mask(q->buckets, m, b) : 0;
                *word |= bit;
                q->buckets[m] = b;
            }
    q->c[0] = c[0], q->c[1] = c[1], q->c[2] = c[2];
    q->valid = 1;
}

/* The buckets particle p must scan: those of the cells that come within one cell size of it
 * (a cell farther away cannot hold a neighbour), each bucket once. Returns their number. */
static int buckets_to_scan(const pd_hash_grid* grid, pd_vec3 p, cell_query* q, uint32_t out[27]) {
    cell_pos at;
    locate(grid, p, &at);
    query_cell(grid, at.c, q);
    uint32_t near = 0;
    int k = 0;
    for (int dz = 0; dz < 3; ++dz)
        for (int dy = 0; dy < 3; ++dy)
            for (int dx = 0; dx < 3; ++dx, ++k)
                near |= (uint32_t)(at.gap2[0][dx] + at.gap2[1][dy] + at.gap2[2][dz] <= 1) << k;
    int m = 0;
    for (k = 0; k < 27; ++k)
        if (((near >> k) & 1) && !(q->same_before[k] & near))
            out[m++] = q->buckets[k];
    return m;
}

int pd_hash_grid_buckets_near(const pd_hash_grid* grid, pd_vec3 p, uint32_t out[27]) {
    cell_query q = {.valid = 0};
    return buckets_to_scan(grid, p, &q, out);
}

/* |b - a|^2, the one expression every pass (and the brute force) compares with radius^2. */
static inline pd_real dist2(pd_vec3 a, pd_vec3 b) {
    pd_vec3 d = pd_v3_sub(b, a);
    return d.x * d.x + d.y * d.y + d.z * d.z;
}

/* One chunk of particles' neighbours of higher index, row after row (the scan's output). */
typedef struct pd_grid_chunk {
    uint32_t* upper;
    size_t capacity, count;
} pd_grid_chunk;

/* Room for `more` entries beyond the chunk's count, grown by half again when short (kept
 * between builds: a warm grid does not allocate). Returns 0 when out of memory. */
static int reserve_chunk(pd_hash_grid* grid, pd_grid_chunk* c, size_t more) {
    if (c->count + more <= c->capacity)
        return 1;
    size_t grown = c->count + more + (c->count + more) / 2 + 64;
    uint32_t* p = pd_alloc(grown * sizeof(uint32_t));
    if (!p)
        return 0;
    __atomic_add_fetch(&grid->allocations, 1, __ATOMIC_RELAXED); /* chunks scan in parallel */
    if (c->count)
        memcpy(p, c->upper, c->count * sizeof(uint32_t));
    pd_free(c->upper, c->capacity * sizeof(uint32_t));
    c->upper = p;
    c->capacity = grown;
    return 1;
}

/* The first entry of sorted[begin, end) above i: a bucket holds its particles in increasing
 * order, so the candidates j > i are its tail. */
static uint32_t first_above(const uint32_t* sorted, uint32_t begin, uint32_t end, uint32_t i) {
    while (begin < end) {
        uint32_t mid = begin + (end - begin) / 2;
        if (sorted[mid] > i)
            end = mid;
        else
            begin = mid + 1;
    }
    return begin;
}

/* Compacts i's row of neighbours j > i to the pairs the caller keeps; returns their number.
 * The scan appends a row before it is filtered, so a chunk holds the kept pairs of its rows and
 * at most one particle's candidates beyond them. */
static size_t keep_pairs(const pd_hash_grid* grid, uint32_t i, uint32_t* row, size_t count) {
    size_t kept = 0;
    for (size_t k = 0; k < count; ++k) {
        row[kept] = row[k];
        kept += grid->keep(grid->keep_ctx, i, row[k]) != 0;
    }
    return kept;
}

/* Appends the neighbours j > i of particle i to the chunk, sorted; returns their number (0
 * when out of memory: *failed set). Each candidate is stored and kept only by advancing the
 * count: about one candidate in five is a neighbour, a pattern no branch predictor follows. */
static uint32_t upper_neighbors(const grid_job* job, uint32_t i, cell_query* q, pd_grid_chunk* c,
                                int* failed) {
    pd_hash_grid* grid = job->grid;
    const pd_vec3 pi = job->pos[i];
    const pd_real radius2 = job->radius2;
    const pd_vec3* sorted_pos = grid->sorted_pos; /* NULL when lean */
    uint32_t buckets[27];
    int nb = buckets_to_scan(grid, pi, q, buckets);
    size_t first = c->count;
    for (int b = 0; b < nb; ++b) {
        uint32_t end = grid->cell_start[buckets[b] + 1];
        uint32_t s = first_above(grid->sorted, grid->cell_start[buckets[b]], end, i);
        if (s == end)
            continue;
        if (!reserve_chunk(grid, c, end - s)) {
            __atomic_store_n(failed, 1, __ATOMIC_RELAXED);
            c->count = first;
            return 0;
        }
        uint32_t* dst = c->upper;
        size_t n = c->count;
        for (; s < end; ++s) {
            dst[n] = grid->sorted[s];
            n += dist2(pi, sorted_pos ? sorted_pos[s] : job->pos[grid->sorted[s]]) <= radius2;
        }
        c->count = n;
    }
    if (grid->keep)
        c->count = first + keep_pairs(grid, i, c->upper + first, c->count - first);
    sort_u32(c->upper + first, c->count - first);
    return (uint32_t)(c->count - first);
}

/* The scan of a chunk: its rows of neighbours j > i, their counts in counts[i]. */
static void upper_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    grid_job* job = ctx;
    pd_grid_chunk* c = &job->grid->chunks[begin / PD_GRID_GRAIN];
    cell_query q = {.valid = 0};
    c->count = 0;
    for (size_t i = begin; i < end; ++i)
        job->grid->counts[i] = upper_neighbors(job, (uint32_t)i, &q, c, &job->failed);
}

/* Row i: its neighbours j < i (lower_range's, in increasing i), then its own j > i. Copies the
 * chunk's rows of j > i after the lower parts (counts[n + i] is the cursor past them). */
static void upper_fill_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    grid_job* job = ctx;
    const pd_hash_grid* grid = job->grid;
    const uint32_t* from = grid->chunks[begin / PD_GRID_GRAIN].upper;
    size_t n = job->n;
    for (size_t i = begin; i < end; ++i) {
        uint32_t count = grid->counts[i];
        if (count == 0) /* a chunk without pairs j > i has no rows: from may be NULL */
            continue;
        memcpy(job->indices + grid->counts[n + i], from, count * sizeof(uint32_t));
        from += count;
    }
}

/* Each pair i < j found from i lists i in j's row too. Counted over the chunks in order, then
 * (after the offsets) written in increasing i, so every row's lower part comes out sorted:
 * serial, about 2 ns a pair. */
static void count_lower(const pd_hash_grid* grid, size_t n) {
    uint32_t* lower = grid->counts + n;
    memset(lower, 0, n * sizeof(uint32_t));
    for (size_t c = 0; c < (n + PD_GRID_GRAIN - 1) / PD_GRID_GRAIN; ++c)
        for (size_t k = 0; k < grid->chunks[c].count; ++k)
            lower[grid->chunks[c].upper[k]]++;
}

static void fill_lower(const pd_hash_grid* grid, size_t n, const uint32_t* offsets,
                       uint32_t* indices) {
    uint32_t* cursor = grid->counts + n;
    for (size_t i = 0; i < n; ++i)
        cursor[i] = offsets[i];
    for (size_t c = 0; c < (n + PD_GRID_GRAIN - 1) / PD_GRID_GRAIN; ++c) {
        const uint32_t* up = grid->chunks[c].upper;
        size_t last = (c + 1) * PD_GRID_GRAIN < n ? (c + 1) * PD_GRID_GRAIN : n;
        for (size_t i = c * PD_GRID_GRAIN; i < last; ++i)
            for (uint32_t k = 0; k < grid->counts[i]; ++k)
                indices[cursor[*up++]++] = (uint32_t)i;
    }
}

static void bucket_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    grid_job* job = ctx;
    pd_hash_grid* grid = job->grid;
    for (size_t i = begin; i < end; ++i) {
        cell_pos at;
        locate(grid, job->pos[i], &at);
        grid->counts[i] = hash_cell(at.c[0], at.c[1], at.c[2], grid->table_size);
    }
}

/* Counting sort of the particles by bucket. Filling from the back turns the inclusive prefix
 * sums into bucket starts and keeps each bucket in increasing particle order. */
static void sort_into_buckets(pd_hash_grid* grid, size_t n) {
    uint32_t* start = grid->cell_start;
    for (size_t b = 0; b <= grid->table_size; ++b)
        start[b] = 0;
    for (size_t i = 0; i < n; ++i)
        start[grid->counts[i]]++;
    for (size_t b = 1; b <= grid->table_size; ++b)
        start[b] += start[b - 1];
    for (size_t i = n; i-- > 0;)
        grid->sorted[--start[grid->counts[i]]] = (uint32_t)i;
}

static void gather_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    grid_job* job = ctx;
    for (size_t k = begin; k < end; ++k)
        job->grid->sorted_pos[k] = job->pos[job->grid->sorted[k]];
}

static void free_particle_buffers(pd_hash_grid* grid) {
    pd_free(grid->sorted, grid->capacity * sizeof(uint32_t));
    if (grid->sorted_pos)
        pd_free(grid->sorted_pos, grid->capacity * sizeof(pd_vec3));
    grid->sorted = NULL;
    grid->sorted_pos = NULL;
    grid->capacity = 0;
}

/* sorted and sorted_pos (unless lean) share one capacity, so they grow together. */
static pd_status reserve_particles(pd_hash_grid* grid, size_t n) {
    if (n <= grid->capacity && grid->sorted)
        return PD_OK;
    free_particle_buffers(grid);
    size_t grown = n + n / 4 + 16;
    grid->sorted = pd_alloc(grown * sizeof(uint32_t));
    grid->sorted_pos = grid->lean ? NULL : pd_alloc(grown * sizeof(pd_vec3));
    grid->capacity = grown;
    grid->allocations += grid->lean ? 1 : 2;
    if (!grid->sorted || (!grid->lean && !grid->sorted_pos)) {
        free_particle_buffers(grid);
        return PD_ERR_OUT_OF_MEMORY;
    }
    return PD_OK;
}

/* The per-chunk rows and the counts (none held after this). */
static void free_rows(pd_hash_grid* grid) {
    for (size_t c = 0; c < grid->chunk_capacity; ++c)
        pd_free(grid->chunks[c].upper, grid->chunks[c].capacity * sizeof(uint32_t));
    pd_free(grid->chunks, grid->chunk_capacity * sizeof(pd_grid_chunk));
    pd_free(grid->counts, grid->counts_capacity * sizeof(uint32_t));
    grid->chunks = NULL, grid->counts = NULL;
    grid->chunk_capacity = grid->counts_capacity = 0;
}

/* The per-chunk rows and the two counts per particle, grown only. */
static pd_status reserve_scan(pd_hash_grid* grid, size_t n) {
    size_t chunks = (n + PD_GRID_GRAIN - 1) / PD_GRID_GRAIN;
    if (chunks > grid->chunk_capacity) {
        pd_grid_chunk* c = pd_calloc(chunks, sizeof(pd_grid_chunk));
        if (!c)
            return PD_ERR_OUT_OF_MEMORY;
        grid->allocations++;
        if (grid->chunk_capacity)
            memcpy(c, grid->chunks, grid->chunk_capacity * sizeof(pd_grid_chunk));
        pd_free(grid->chunks, grid->chunk_capacity * sizeof(pd_grid_chunk));
        grid->chunks = c;
        grid->chunk_capacity = chunks;
    }
    return reserve_u32(&grid->counts, &grid->counts_capacity, 2 * n, &grid->allocations);
}

static pd_status build_grid(pd_hash_grid* grid, grid_job* job, size_t n, pd_real radius) {
    grid->cell = radius * PD_CELL_MARGIN;
    grid->origin = pd_finite_lower_corner(job->pos, n);
    grid->table_size = grid->fixed_table_size ? grid->fixed_table_size : 2 * n;
    if (grid->table_size >= UINT32_MAX)
        return PD_ERR_TOO_LARGE;
    pd_status st = reserve_particles(grid, n);
    if (st == PD_OK)
        st = reserve_u32(&grid->cell_start, &grid->table_capacity, grid->table_size + 1,
                         &grid->allocations);
    if (st == PD_OK)
        st = reserve_scan(grid, n); /* its counts hold the buckets until the scan */
    if (st != PD_OK)
        return st;
    pd_parallel_for(n, PD_GRID_GRAIN, bucket_range, job);
    sort_into_buckets(grid, n);
    if (grid->sorted_pos)
        pd_parallel_for(n, PD_GRID_GRAIN * 8, gather_range, job);
    return PD_OK;
}

/* offsets[i + 1] holds the count of i; turn the counts into offsets. Summed in 64 bits: the
 * total must fit the uint32 indices. */
static pd_status prefix_sum_offsets(uint32_t* offsets, size_t n) {
    uint64_t total = 0;
    offsets[0] = 0;
    for (size_t i = 1; i <= n; ++i) {
        total += offsets[i];
        if (total > UINT32_MAX)
            return PD_ERR_TOO_LARGE;
        offsets[i] = (uint32_t)total;
    }
    return PD_OK;
}

static pd_status check_arguments(const pd_vec3* pos, size_t n, pd_real radius,
                                 const pd_neighbor_list* out) {
    if (!out || (n > 0 && !pos) || !isfinite(radius) || !(radius > 0))
        return PD_ERR_INVALID_ARGUMENT;
    if (n >= UINT32_MAX)
        return PD_ERR_TOO_LARGE;
    return PD_OK;
}

/* Sizes the list for n particles; offsets[0] = 0 so an empty list is still well formed. */
static pd_status start_list(pd_neighbor_list* out, size_t n, size_t* allocations) {
    out->count = 0;
    pd_status st = reserve_u32(&out->offsets, &out->offsets_capacity, n + 1, allocations);
    if (st != PD_OK)
        return st;
    out->offsets[0] = 0;
    out->count = n;
    return PD_OK;
}

/* offsets[i + 1] = the count of j > i plus that of j < i. */
static void row_counts(const pd_hash_grid* grid, size_t n, uint32_t* offsets) {
    for (size_t i = 0; i < n; ++i)
        offsets[i + 1] = grid->counts[i] + grid->counts[n + i];
}

pd_status pd_neighbors_build(pd_hash_grid* grid, const pd_vec3* pos, size_t n, pd_real radius,
                             pd_neighbor_list* out) {
    pd_status st = grid ? check_arguments(pos, n, radius, out) : PD_ERR_INVALID_ARGUMENT;
    if (st == PD_OK) {
        grid->builds++;
        st = start_list(out, n, &grid->allocations);
    }
    if (st != PD_OK || n == 0)
        return st;
    grid_job job = {grid, pos, radius * radius, NULL, n, 0};
    st = build_grid(grid, &job, n, radius);
    if (st == PD_OK) {
        pd_parallel_for(n, PD_GRID_GRAIN, upper_range, &job);
        st = job.failed ? PD_ERR_OUT_OF_MEMORY : PD_OK;
    }
    if (st == PD_OK) {
        count_lower(grid, n);
        row_counts(grid, n, out->offsets);
        st = prefix_sum_offsets(out->offsets, n);
    }
    if (st == PD_OK)
        st =
            reserve_u32(&out->indices, &out->indices_capacity, out->offsets[n], &grid->allocations);
    if (st != PD_OK) {
        out->count = 0;
        if (!grid->keep_rows)
            free_rows(grid);
        return st;
    }
    job.indices = out->indices;
    fill_lower(grid, n, out->offsets, out->indices);
    pd_parallel_for(n, PD_GRID_GRAIN, upper_fill_range, &job);
    if (!grid->keep_rows)
        free_rows(grid);
    return PD_OK;
}

/* Reference: every pair tested, j ascending, so the list comes out sorted. */
static uint32_t brute_force_row(const pd_vec3* pos, size_t n, uint32_t i, pd_real radius2,
                                uint32_t* dst) {
    uint32_t count = 0;
    for (size_t j = 0; j < n; ++j) {
        if (j == i || !(dist2(pos[i], pos[j]) <= radius2))
            continue;
        if (dst)
            dst[count] = (uint32_t)j;
        ++count;
    }
    return count;
}

pd_status pd_neighbors_brute_force(const pd_vec3* pos, size_t n, pd_real radius,
                                   pd_neighbor_list* out) {
    size_t allocations = 0; /* (no grid to count them in) */
    pd_status st = check_arguments(pos, n, radius, out);
    if (st == PD_OK)
        st = start_list(out, n, &allocations);
    if (st != PD_OK || n == 0)
        return st;
    pd_real radius2 = radius * radius;
    for (size_t i = 0; i < n; ++i)
        out->offsets[i + 1] = brute_force_row(pos, n, (uint32_t)i, radius2, NULL);
    st = prefix_sum_offsets(out->offsets, n);
    if (st == PD_OK)
        st = reserve_u32(&out->indices, &out->indices_capacity, out->offsets[n], &allocations);
    if (st != PD_OK) {
        out->count = 0;
        return st;
    }
    for (size_t i = 0; i < n; ++i)
        brute_force_row(pos, n, (uint32_t)i, radius2, out->indices + out->offsets[i]);
    return PD_OK;
}

void pd_hash_grid_destroy(pd_hash_grid* grid) {
    if (!grid)
        return;
    pd_free(grid->cell_start, grid->table_capacity * sizeof(uint32_t));
    free_rows(grid);
    free_particle_buffers(grid);
    *grid = (pd_hash_grid){0};
}

double pd_hash_grid_kept_row_bytes(double entries) {
    /* a chunk grows by half again beyond its need (reserve_chunk); the counts by a quarter */
    return 1.5 * 0.5 * entries * sizeof(uint32_t) + 2.5 * sizeof(uint32_t);
}

void pd_neighbor_list_destroy(pd_neighbor_list* list) {
    if (!list)
        return;
    pd_free(list->offsets, list->offsets_capacity * sizeof(uint32_t));
    pd_free(list->indices, list->indices_capacity * sizeof(uint32_t));
    *list = (pd_neighbor_list){0};
}

pd_status pd_neighbor_list_fit(pd_neighbor_list* list, size_t capacity, pd_hash_grid* grid) {
    if (capacity >= list->indices_capacity && list->indices)
        return PD_OK;
    pd_free(list->indices, list->indices_capacity * sizeof(uint32_t)); /* first: no peak */
    if (list->offsets) /* every row empty until the next build */
        memset(list->offsets, 0, (list->count + 1) * sizeof(uint32_t));
    list->indices_capacity = 0, list->count = 0;
    list->indices = pd_alloc((capacity ? capacity : 1) * sizeof(uint32_t));
    if (!list->indices)
        return PD_ERR_OUT_OF_MEMORY;
    grid->allocations++;
    list->indices_capacity = capacity ? capacity : 1;
    return PD_OK;
}

void pd_hash_grid_release_rows(pd_hash_grid* grid) {
    for (size_t c = 0; c < grid->chunk_capacity; ++c) {
        pd_free(grid->chunks[c].upper, grid->chunks[c].capacity * sizeof(uint32_t));
        grid->chunks[c] = (pd_grid_chunk){0};
    }
}
