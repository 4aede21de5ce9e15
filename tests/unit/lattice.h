/* A cubic lattice of side^3 particles at spacing s (one body), for the unit tests of families
 * and what is built on them. */
#ifndef PD_TEST_LATTICE_H
#define PD_TEST_LATTICE_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/math.h"

static inline size_t pd_test_lattice(pd_vec3* pos, pd_real* vol, pd_real* h, int32_t* body,
                                     int side, pd_real s) {
    size_t n = 0;
    for (int i = 0; i < side; ++i)
        for (int j = 0; j < side; ++j)
            for (int k = 0; k < side; ++k, ++n) {
                pos[n] = pd_v3(s * i, s * j, s * k);
                vol[n] = s * s * s, h[n] = s, body[n] = 0;
            }
    return n;
}

#endif
