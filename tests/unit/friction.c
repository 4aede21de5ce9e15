/* Unit tests of the Coulomb friction of an implicit step (boundary/friction.h): the stick/slip
 * decision at the kink of D = mu lambda |u| (stick while the tangential force is inside the
 * disk of radius mu lambda, Coulomb), the least-norm subgradient when it is outside, the
 * gradient of D while sliding checked against a finite difference of the returned D, the
 * no-slip limit, and the snap of a reversed slip. */
#include "test.h"

#include <string.h>

#include "boundary/friction.h"

static const pd_vec3 k_up = {0, 1, 0};

PD_TEST(sticks_inside_the_coulomb_disk_and_slides_outside) {
    pd_vec3 a = pd_v3(0.3, 0, 0.2); /* the particle sits at its anchor: u = 0 */
    uint8_t stuck = 0;
    /* tangential force 0.3 N, limit 0.5 N: sticks, loses the tangential part, keeps 2 N along n */
    pd_vec3 r = pd_v3(0.3, 2, 0);
    pd_real e = pd_friction_apply(&r, a, a, k_up, 0.5, &stuck);
    printf("  inside: stuck %d, r = (%g, %g, %g), D = %g\n", stuck, r.x, r.y, r.z, e);
    PD_CHECK(stuck == 1);
    PD_CHECK_NEAR(r.x, 0, 1e-15);
    PD_CHECK_NEAR(r.y, 2, 1e-15);
    /* tangential force (0.6, 0, 0.8) N = 1 N, limit 0.5 N: slides, 0.5 N of it is left */
    r = pd_v3(0.6, 2, 0.8);
    e = pd_friction_apply(&r, a, a, k_up, 0.5, &stuck);
    printf("  outside: stuck %d, r = (%g, %g, %g)\n", stuck, r.x, r.y, r.z);
    PD_CHECK(stuck == 0);
    PD_CHECK_NEAR(r.x, 0.3, 1e-15);
    PD_CHECK_NEAR(r.z, 0.4, 1e-15);
    PD_CHECK_NEAR(r.y, 2, 1e-15);
}

PD_TEST(sliding_force_is_the_gradient_of_the_potential) {
    pd_vec3 a = pd_v3(0, 0, 0), y = pd_v3(0.01, 0.003, -0.02), n = pd_v3(0, 0.6, 0.8);
    uint8_t stuck;
    pd_vec3 g = pd_v3(0, 0, 0);
    pd_real D = pd_friction_apply(&g, y, a, n, 2.0, &stuck);
    /* D = 2 |u|, u = (I - n n^T) y */
    PD_CHECK_NEAR(D, 2 * pd_v3_len(pd_friction_slip(y, a, n)), 1e-15);
    pd_real eps = 1e-7, worst = 0;
    pd_vec3 e3[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int k = 0; k < 3; ++k) {
        pd_vec3 z = pd_v3(0, 0, 0);
        pd_real dp = pd_friction_apply(&z, pd_v3_madd(y, eps, e3[k]), a, n, 2.0, &stuck);
        z = pd_v3(0, 0, 0);
        pd_real dm = pd_friction_apply(&z, pd_v3_madd(y, -eps, e3[k]), a, n, 2.0, &stuck);
        pd_real fd = (dp - dm) / (2 * eps);
        pd_real an = k == 0 ? g.x : (k == 1 ? g.y : g.z);
        worst = fmax(worst, fabs(fd - an));
    }
    printf("  |gradient - finite difference| %.3g N (|gradient| %.3g N)\n", worst, pd_v3_len(g));
    PD_CHECK(stuck == 0);
    PD_CHECK_NEAR(pd_v3_len(g), 2.0, 1e-12);
    PD_CHECK_NEAR(worst, 0, 1e-6);
}

PD_TEST(no_slip_holds_and_snaps) {
    pd_collider_def d = pd_default_collider_def();
    d.boundary = PD_BOUNDARY_NO_SLIP;
    pd_real lim = pd_friction_limit(&d, -1); /* held even when not pressed */
    PD_CHECK(isinf(lim));
    d.boundary = PD_BOUNDARY_SLIP;
    d.friction = 0.4;
    PD_CHECK_NEAR(pd_friction_limit(&d, 2.5), 1.0, 1e-15);
    PD_CHECK_NEAR(pd_friction_limit(&d, -2.5), 0, 0);
    pd_vec3 a = pd_v3(0, 0, 0);
    uint8_t stuck;
    pd_vec3 r = pd_v3(5, 1, 0);
    pd_real e = pd_friction_apply(&r, pd_v3(1e-6, 0, 0), a, k_up, INFINITY, &stuck);
    PD_CHECK(isinf(e) && stuck == 1); /* off its anchor: not admissible */
    pd_vec3 s = pd_friction_snap(a, pd_v3(0.2, 0.1, -0.3), a, k_up, INFINITY);
    printf("  no-slip snap: (%g, %g, %g)\n", s.x, s.y, s.z);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, pd_v3(0, 0.1, 0))), 0, 1e-15);
}

PD_TEST(reversed_slip_snaps_to_the_kink) {
    pd_vec3 a = pd_v3(1, 0, 1);
    pd_vec3 from = pd_v3(1.01, 0, 1), back = pd_v3(0.995, 0.002, 1.001), on = pd_v3(1.02, 0, 1.003);
    pd_vec3 s = pd_friction_snap(from, back, a, k_up, 0.5);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, pd_v3(1, 0.002, 1))), 0, 1e-15);
    s = pd_friction_snap(from, on, a, k_up, 0.5); /* still sliding the same way: untouched */
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, on)), 0, 0);
}

PD_TEST(anchor_moves_with_the_surface) {
    pd_collider_def d = pd_default_collider_def();
    d.type = PD_COLLIDER_PLANE;
    d.normal = pd_v3(0, 1, 0);
    d.velocity = pd_v3(0.5, 0, 0);
    pd_colliders c;
    pd_error err = {0};
    PD_REQUIRE(pd_colliders_create(&d, 1, &c, &err) == PD_OK);
    pd_vec3 anchor = pd_friction_anchor(&c.items[0], pd_v3(0.1, 0, 0.2), 0.01);
    PD_CHECK_NEAR(anchor.x, 0.105, 1e-15);
    pd_real dist;
    pd_vec3 n;
    PD_CHECK(pd_colliders_nearest(&c, pd_v3(0, 0.3, 0), &dist, &n) == 0);
    PD_CHECK_NEAR(dist, 0.3, 1e-15);
    pd_colliders_destroy(&c);
}
