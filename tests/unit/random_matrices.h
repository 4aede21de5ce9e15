/* Random 3x3 matrices for the unit tests of src/math/svd3.c: a deterministic generator
 * (splitmix64), uniform entries in [-1, 1], rotations from random unit quaternions. */
#ifndef PD_TEST_RANDOM_MATRICES_H
#define PD_TEST_RANDOM_MATRICES_H

#include <math.h>
#include <stdint.h>

#include "peridot/math.h"

typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rng_next(rng* r) { /* splitmix64 */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1]. */
static inline double rng_sym(rng* r) {
    return (double)(rng_next(r) >> 11) * 0x1.0p-52 - 1.0;
}

static inline pd_mat3 rand_mat(rng* r) {
    pd_mat3 a;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            a.m[i][j] = rng_sym(r);
    return a;
}

/* A rotation from a random unit quaternion (rejection-sampled in the unit ball). */
static inline pd_mat3 rand_rot(rng* r) {
    double w, x, y, z, n2;
    do {
        w = rng_sym(r), x = rng_sym(r), y = rng_sym(r), z = rng_sym(r);
        n2 = w * w + x * x + y * y + z * z;
    } while (n2 > 1.0 || n2 < 0.01);
    double n = sqrt(n2);
    w /= n, x /= n, y /= n, z /= n;
    pd_mat3 m = {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                  {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                  {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
    return m;
}

static inline double frob(pd_mat3 a) {
    return sqrt(pd_m3_frob2(a));
}

#endif
