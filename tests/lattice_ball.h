/* A lattice ball for tests that draw or write particles without simulating them. */
#ifndef PD_TEST_LATTICE_BALL_H
#define PD_TEST_LATTICE_BALL_H

#include <stddef.h>

#include "peridot/math.h"

enum { k_ball_cap = 21 * 21 * 21 };

/* A lattice ball of radius 0.1 m and spacing 0.01 m about `centre` into x, y, z (room for
 * k_ball_cap each); returns its count. */
static inline size_t ball(pd_vec3 centre, float* x, float* y, float* z) {
    size_t n = 0;
    for (int i = -10; i <= 10; ++i)
        for (int j = -10; j <= 10; ++j)
            for (int k = -10; k <= 10; ++k) {
                if (i * i + j * j + k * k > 100)
                    continue;
                x[n] = (float)(centre.x + 0.01 * i);
                y[n] = (float)(centre.y + 0.01 * j);
                z[n] = (float)(centre.z + 0.01 * k);
                ++n;
            }
    return n;
}

#endif
