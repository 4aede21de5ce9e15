/* mpm's contact normal between two bodies (src/grid/grid_fields.c; issue 32, docs/methods/mpm.md
 * "Contact"): two equal blocks (0.1 m, E 1e5 Pa, frictionless) meet face to face over half a
 * face, the first moving at v0 = 1 m/s along x, the second at rest and offset by half its
 * height along y. The interface is the plane x = const where the faces meet, and a frictionless
 * contact pushes only along its normal: whatever the impact does along x, neither block may
 * leave with a velocity along y. The reference is that normal; the tolerance 1 % of v0 (a normal
 * tilted by theta over the contact's nodes gives about v0 theta / 2 sideways). Measured
 * (2026-11-28): with the fitted plane (Nairn et al. 2020, solver.mpm.contact_normal "fitted", the
 * default) +-0.048 m/s along y (0.0555 at half the spacing: not a resolution effect); with the
 * mass gradient of the first body's field, which tilts towards the diagonal at that body's
 * corner, +-0.155 (0.117 at half the spacing). The fitted plane follows the undeformed faces
 * (unit.grid: 0.75 % sideways); what is left comes while the blocks deform: the first block's
 * free lower half runs on past the second block's corner and its face there tilts (the plane of
 * largest margin between the facing layers tilts with it). A known failure. */
#include <math.h>
#include <stdio.h>

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

/* Runs the blocks to time t with the normal `normal` (solver.mpm.contact_normal); a and b: the
 * blocks' mean velocities. */
static int run_blocks(const char* normal, double t_end, pd_vec3* a, pd_vec3* b) {
    char set[96];
    snprintf(set, sizeof set, "solver.mpm.contact_normal=%s", normal);
    const char* sets[1] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_blocks, sets, 1))
        return 0;
    int ok = pd_test_sim_run(&t, t_end);
    *a = body_velocity(&t.world->particles, 0), *b = body_velocity(&t.world->particles, 1);
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(known_failure_blocks_meeting_over_half_a_face_part_along_its_normal) {
    pd_vec3 a, b, a_old, b_old;
    PD_REQUIRE(run_blocks("fitted", 0.06, &a, &b)); /* parted by 0.04 s */
    PD_REQUIRE(run_blocks("mass_gradient", 0.06, &a_old, &b_old));
    printf("  after the impact (0.06 s), fitted normal: a (%.4f, %.4f, %.4f), b (%.4f, %.4f, "
           "%.4f) m/s; sideways %.4f and %.4f of v0 (1 %% allowed); the mass gradient's: %.4f and "
           "%.4f\n",
           a.x, a.y, a.z, b.x, b.y, b.z, fabs(a.y), fabs(b.y), fabs(a_old.y), fabs(b_old.y));
    PD_CHECK(b.x > 0.5 * (a.x + b.x)); /* they met: b took the lead */
    PD_CHECK(fabs(a.y) < 0.01);
    PD_CHECK(fabs(b.y) < 0.01);
}

/* solver.mpm.contact_normal reaches the contact: early in the same impact (0.02 s, the contact
 * under way) the mass gradient has pushed the blocks sideways more than twice as fast as the
 * fitted plane (unit.grid's one step over the undeformed blocks: 17.8 % against 0.75 % of the
 * normal impulse). Measured: 0.0429 against 0.0122 m/s. A key that did not reach the grid gives
 * the same run twice. */
PD_TEST(contact_normal_key_selects_the_normal) {
    pd_vec3 a, b, a_old, b_old;
    PD_REQUIRE(run_blocks("fitted", 0.02, &a, &b));
    PD_REQUIRE(run_blocks("mass_gradient", 0.02, &a_old, &b_old));
    printf("  at 0.02 s: sideways %.4f m/s with the fitted normal, %.4f with the mass gradient\n",
           fabs(a.y), fabs(a_old.y));
    PD_CHECK(fabs(a_old.y) > 2 * fabs(a.y));
}
