/* Z-order (Morton) codes and the permutation that sorts particles along the Z curve, so that
 * particles near in space end up near in memory. Codes interleave 21 bits per axis (x in bit
 * 0, y in bit 1, z in bit 2, ...); the sort is an LSD radix sort, which is stable, so equal
 * codes keep their old index order and the permutation is deterministic. */
#include "neighbor/morton.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "parallel/parallel.h"

#define PD_MORTON_AXIS_MAX ((1u << 21) - 1)
enum { PD_RADIX_BITS = 11, PD_RADIX_SIZE = 1 << PD_RADIX_BITS, PD_MORTON_GRAIN = 4096 };

/* Cell index along one axis, clamped to the 21 bits a code can hold (NaN goes to 0). */
static uint32_t quantise(double x, double origin, double cell) {
    double q = floor((x - origin) / cell);
    if (!(q > 0))
        return 0;
    if (q >= (double)PD_MORTON_AXIS_MAX)
        return PD_MORTON_AXIS_MAX;
    return (uint32_t)q;
}

/* Spreads the low 21 bits of v so that bit k moves to bit 3k. */
static uint64_t spread_bits(uint32_t v) {
    uint64_t x = v & PD_MORTON_AXIS_MAX;
    x = (x | x << 32) & 0x001F00000000FFFFull;
    x = (x | x << 16) & 0x001F0000FF0000FFull;
    x = (x | x << 8) & 0x100F00F00F00F00Full;
    x = (x | x << 4) & 0x10C30C30C30C30C3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}

uint64_t pd_morton_code(pd_vec3 p, pd_vec3 origin, pd_real cell) {
    return spread_bits(quantise(p.x, origin.x, cell)) |
           spread_bits(quantise(p.y, origin.y, cell)) << 1 |
           spread_bits(quantise(p.z, origin.z, cell)) << 2;
}

typedef struct morton_job {
    const pd_vec3* pos;
    pd_vec3 origin;
    pd_real cell;
    uint64_t* codes;
} morton_job;

static void code_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    morton_job* job = ctx;
    for (size_t i = begin; i < end; ++i)
        job->codes[i] = pd_morton_code(job->pos[i], job->origin, job->cell);
}

pd_vec3 pd_finite_lower_corner(const pd_vec3* pos, size_t n) {
    pd_real lo[3] = {0, 0, 0};
    int found[3] = {0, 0, 0};
    for (size_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            pd_real x = pd_v3_comp(pos[i], k);
            if (isfinite(x) && (!found[k] || x < lo[k])) {
                lo[k] = x;
                found[k] = 1;
            }
        }
    return pd_v3(lo[0], lo[1], lo[2]);
}

/* One stable counting-sort pass on the digit at `shift`, from (keys, idx) into (keys2, idx2). */
static void radix_pass(const uint64_t* keys, const uint32_t* idx, uint64_t* keys2, uint32_t* idx2,
                       size_t n, int shift, uint32_t* count) {
    memset(count, 0, PD_RADIX_SIZE * sizeof(uint32_t));
    for (size_t i = 0; i < n; ++i)
        count[(keys[i] >> shift) & (PD_RADIX_SIZE - 1)]++;
    uint32_t sum = 0;
    for (int d = 0; d < PD_RADIX_SIZE; ++d) {
        uint32_t c = count[d];
        count[d] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; ++i) {
        uint32_t dst = count[(keys[i] >> shift) & (PD_RADIX_SIZE - 1)]++;
        keys2[dst] = keys[i];
        idx2[dst] = idx[i];
    }
}

/* Sorts (codes, perm) by code, stably. Digits on which all codes agree are skipped. The data
 * ping-pong between the caller's arrays and the scratch ones; the result is copied back when
 * it ends in scratch. */
static void radix_sort(uint64_t* codes, uint32_t* perm, uint64_t* codes2, uint32_t* perm2,
                       size_t n) {
    uint64_t all_or = 0, all_and = ~0ull;
    for (size_t i = 0; i < n; ++i) {
        all_or |= codes[i];
        all_and &= codes[i];
    }
    uint64_t varying = all_or ^ all_and;
    uint32_t count[PD_RADIX_SIZE];
    uint64_t *k0 = codes, *k1 = codes2;
    uint32_t *p0 = perm, *p1 = perm2;
    for (int shift = 0; shift < 64; shift += PD_RADIX_BITS) {
        if (((varying >> shift) & (PD_RADIX_SIZE - 1)) == 0)
            continue;
        radix_pass(k0, p0, k1, p1, n, shift, count);
        uint64_t* tk = k0;
        k0 = k1;
        k1 = tk;
        uint32_t* tp = p0;
        p0 = p1;
        p1 = tp;
    }
    if (p0 != perm) {
        memcpy(perm, p0, n * sizeof(uint32_t));
        memcpy(codes, k0, n * sizeof(uint64_t));
    }
}

void pd_sort_by_key_with(uint64_t* keys, size_t n, uint32_t* perm, uint64_t* keys_scratch,
                         uint32_t* perm_scratch) {
    for (size_t i = 0; i < n; ++i)
        perm[i] = (uint32_t)i;
    radix_sort(keys, perm, keys_scratch, perm_scratch, n);
}

pd_status pd_sort_by_key(uint64_t* keys, size_t n, uint32_t* perm) {
    if (n == 0)
        return PD_OK;
    if (!keys || !perm)
        return PD_ERR_INVALID_ARGUMENT;
    if (n >= UINT32_MAX)
        return PD_ERR_TOO_LARGE;
    size_t bytes = n * (sizeof(uint64_t) + sizeof(uint32_t)); /* keys2, perm2 */
    unsigned char* scratch = pd_alloc(bytes);
    if (!scratch)
        return PD_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; ++i)
        perm[i] = (uint32_t)i;
    radix_sort(keys, perm, (uint64_t*)scratch, (uint32_t*)(scratch + n * sizeof(uint64_t)), n);
    pd_free(scratch, bytes);
    return PD_OK;
}

pd_status pd_morton_order(const pd_vec3* pos, size_t n, pd_real cell, uint32_t* perm) {
    if ((n > 0 && (!pos || !perm)) || !isfinite(cell) || !(cell > 0))
        return PD_ERR_INVALID_ARGUMENT;
    if (n >= UINT32_MAX)
        return PD_ERR_TOO_LARGE;
    if (n == 0)
        return PD_OK;
    uint64_t* codes = PD_NEW_ARRAY(uint64_t, n);
    if (!codes)
        return PD_ERR_OUT_OF_MEMORY;
    morton_job job = {pos, pd_finite_lower_corner(pos, n), cell, codes};
    pd_parallel_for(n, PD_MORTON_GRAIN, code_range, &job);
    pd_status st = pd_sort_by_key(codes, n, perm);
    PD_FREE_ARRAY(codes, uint64_t, n);
    return st;
}
