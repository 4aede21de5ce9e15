/* mpm's contact normal between two bodies (src/grid/grid_fields.c; issue 32, docs/methods/mpm.md
 * "Not yet"): two equal blocks (0.1 m, E 1e5 Pa, frictionless) meet face to face over half a
 * face, the first moving at v0 = 1 m/s along x, the second at rest and offset by half its
 * height along y. The interface is the plane x = const where the faces meet, and a frictionless
 * contact pushes only along its normal: whatever the impact does along x, neither block may
 * leave with a velocity along y. The reference is that normal; the tolerance 1 % of v0 (a normal
 * tilted by theta over the contact's nodes gives about v0 theta / 2 sideways). A node two bodies
 * share takes the normal of the first body's field (equal masses), which at that body's corner,
 * where the overlap ends, tilts towards the diagonal: the blocks part sideways. Measured
 * (2026-11-28): +-0.155 m/s along y with the bodies in this order, +-0.150 in the other. A known
 * failure until the normal follows the interface (Nairn et al. 2020's fitted plane). */
#include <math.h>

#include "support.h"

static const char* k_blocks =
    "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":100,\"frames\":6},"
    "\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
    "\"poisson_ratio\":0.3,\"contact_friction\":0}},\"bodies\":["
    "{\"name\":\"a\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1,0,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.1,0.1]}},"
    "{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[0,0,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0.11,0.05,0],\"max\":[0.21,0.15,0.1]}}]}";

/* The mean velocity of a body's particles (equal masses). */
static pd_vec3 body_velocity(const pd_particles* p, int body) {
    pd_vec3 v = pd_v3(0, 0, 0);
    double n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->body[i] == body)
            v = pd_v3_add(v, p->vel[i]), n += 1;
    return pd_v3_scale(v, 1 / n);
}

PD_TEST(known_failure_blocks_meeting_over_half_a_face_part_along_its_normal) {
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_blocks, NULL, 0));
    PD_REQUIRE(pd_test_sim_run(&t, 0.06)); /* parted by 0.04 s */
    pd_vec3 a = body_velocity(&t.world->particles, 0), b = body_velocity(&t.world->particles, 1);
    printf("  after the impact (0.06 s): a (%.4f, %.4f, %.4f), b (%.4f, %.4f, %.4f) m/s; sideways "
           "%.4f and %.4f of v0 (1 %% allowed)\n",
           a.x, a.y, a.z, b.x, b.y, b.z, fabs(a.y), fabs(b.y));
    PD_CHECK(b.x > 0.5 * (a.x + b.x)); /* they met: b took the lead */
    PD_CHECK(fabs(a.y) < 0.01);
    PD_CHECK(fabs(b.y) < 0.01);
    pd_test_sim_close(&t);
}
