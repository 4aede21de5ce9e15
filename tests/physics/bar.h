/* A bar stretched along x between two pinned end slabs (rest box [0, L] x [0, W] x [0, W]),
 * measured in its middle, away from the ends: what elastic_bar.c and hyperelastic_pd.c read. */
#ifndef PD_TEST_BAR_H
#define PD_TEST_BAR_H

#include "support.h"

typedef struct pd_test_bar {
    double axial;   /* slope of u_x(x) over the middle half (1) */
    double lateral; /* change of the mean distance from the axis in the middle slab (1) */
    double force;   /* x force of pin 1 (the moving end) on the bar (N) */
    double nu, E;   /* -lateral / axial; force / W^2 / axial */
} pd_test_bar;

/* The same without printing (for means over many steps). */
static inline pd_test_bar pd_test_bar_strains(const pd_test_sim* t, double L, double W) {
    const pd_particles* p = &t->world->particles;
    double sx = 0, su = 0, sxx = 0, sxu = 0, n = 0, r0 = 0, r1 = 0;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->rest[i], y = p->pos[i];
        if (x.x < 0.25 * L || x.x > 0.75 * L)
            continue;
        double u = y.x - x.x;
        sx += x.x, su += u, sxx += x.x * x.x, sxu += x.x * u, n += 1;
        if (fabs(x.x - 0.5 * L) < 0.05 * L) {
            r0 += fabs(x.y - 0.5 * W) + fabs(x.z - 0.5 * W);
            r1 += fabs(y.y - 0.5 * W) + fabs(y.z - 0.5 * W);
        }
    }
    pd_test_bar b;
    b.axial = (n * sxu - sx * su) / (n * sxx - sx * sx);
    b.lateral = (r1 - r0) / r0;
    b.force = t->world->pins[1].force.x;
    b.nu = -b.lateral / b.axial;
    b.E = b.force / (W * W) / b.axial;
    return b;
}

static inline pd_test_bar pd_test_bar_measure(const pd_test_sim* t, double L, double W) {
    pd_test_bar b = pd_test_bar_strains(t, L, W);
    printf("  axial strain %.5g, lateral strain %.5g, pin force %.5g N\n", b.axial, b.lateral,
           b.force);
    return b;
}

#endif
