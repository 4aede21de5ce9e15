/* A ball dropped on the floor recovers its shape and comes to rest, for every method with
 * elastic solids. References: an elastic body has one rest shape: after the impact its
 * principal sizes (the standard deviations of its particles along their principal axes) are
 * those at rest within 2 % (its weight squashes it by rho g R / E = 0.5 %); and a dropped body
 * on a floor with friction ends at rest: its kinetic energy below 1 % of the energy the drop
 * released (m g h). squash_recovery.c tests projective_pd's recovery from degenerate starts
 * (He 2017 Fig. 3). */
#include "methods.h"

#define DROP     0.05 /* m, from the ball's bottom to the floor */
#define DURATION 1.5  /* s */

/* A ball (radius 0.05 m, 515 particles, E 1e5 Pa) 5 cm above a floor (friction 0.5); every
 * method steps "auto" (projective_pd 4 ms, hyperelastic_pd 10 ms, sbpd 0.9 of its bound). */
static const char* k_ball =
    "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":\"auto\",\"fps\":30,"
    "\"frames\":45},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"ball\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.1,0],\"radius\":0.05}}],"
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],"
    "\"friction\":0.5}]}";

static void drop(void) {
    pd_test_sim t;
    PD_METHOD_REQUIRE(pd_test_method_open(&t, k_ball, NULL, 0));
    PD_METHOD_REQUIRE(pd_test_sim_run(&t, DURATION));
    const pd_particles* p = &t.world->particles;
    double e0[3], e1[3], ke = 0, mass = 0, lowest = INFINITY;
    pd_test_principal_sizes(p->rest, p->count, e0);
    pd_test_principal_sizes(p->pos, p->count, e1);
    for (size_t i = 0; i < p->count; ++i) {
        ke += 0.5 * p->mass[i] * pd_v3_len2(p->vel[i]);
        mass += p->mass[i];
        lowest = fmin(lowest, p->pos[i].y);
    }
    printf("  %s, dt %.3g s: principal sizes at rest %.4g %.4g %.4g m, after %.1f s %.4g %.4g "
           "%.4g m; lowest particle %.4g m; kinetic energy %.3g J\n",
           g_pd_method.method->name, t.world->def.dt, e0[0], e0[1], e0[2], DURATION, e1[0], e1[1],
           e1[2], lowest, ke);
    pd_test_sim_close(&t);
    for (int k = 0; k < 3; ++k) {
        char what[64];
        snprintf(what, sizeof what, "principal size %d / at rest", k + 1);
        pd_test_method_check(what, e1[k] / e0[k], 1, 0.02, 0);
    }
    pd_test_method_bound("kinetic energy / (m g h) at 1.5 s", ke / (mass * 9.81 * DROP), 0, 0.01);
    PD_CHECK(lowest > -0.005 && lowest < 0.005); /* landed on the floor, not through it */
}

/* mpm: a collider holds the grid nodes whose material has reached its surface (src/grid/
 * grid_boundary.h); holding those in its solid as soon as a stencil reached them left the ball
 * resting 18 mm (0.9 of a cell) above the floor. */
PD_TEST_EACH_METHOD(dropped_ball_recovers_its_shape_and_comes_to_rest, PD_CAP_ELASTIC, drop)
