/* Unit tests of the Coulomb friction of an implicit step (boundary/friction.h): one particle's
 * implicit step on a plane against Coulomb's law (sticks below the limit up to a creep of less
 * than eps, slides above it with (F - mu N)/m), the gradient of the smoothed potential against
 * a finite difference of the returned D on both sides of eps and its continuity there, the
 * no-slip limit and its snap. */
#include "test.h"

#include <string.h>

#include "boundary/friction.h"

static const pd_vec3 k_up = {0, 1, 0};

/* d/dx of one particle's merit along x: m (x - x*)/h^2 - F + dD/dx, the particle on the plane
 * y = 0 (anchor at the origin, limit mu N). */
static pd_real merit_slope(pd_real x, pd_real m, pd_real h, pd_real F, pd_real limit, pd_real eps) {
    pd_vec3 r = pd_v3(m * x / (h * h) - F, 0, 0);
    pd_real k_t;
    uint8_t stuck;
    pd_friction_apply(&r, pd_v3(x, 0, 0), pd_v3(0, 0, 0), k_up, limit, eps, &k_t, &stuck);
    return r.x;
}

/* The step's end x by bisection on the merit's slope (the merit is convex). */
static pd_real step_end(pd_real m, pd_real h, pd_real F, pd_real limit, pd_real eps) {
    pd_real lo = -1, hi = 1;
    for (int k = 0; k < 200; ++k) {
        pd_real mid = 0.5 * (lo + hi);
        if (merit_slope(mid, m, h, F, limit, eps) > 0)
            hi = mid;
        else
            lo = mid;
    }
    return 0.5 * (lo + hi);
}

/* A particle at rest (m = 0.01 kg, h = 1/30 s) pressed with N = 1 N, mu = 0.5, pulled along
 * the plane by F. Coulomb: F = 0.3 N sticks (the smoothed potential lets it creep, by less
 * than eps = PD_FRICTION_STICK_SPEED h); F = 1 N slides, implicit Euler from rest moving it by
 * (F - mu N) h^2 / m = 55.6 mm in the step. */
PD_TEST(one_particle_sticks_below_the_limit_and_slides_above) {
    pd_real m = 0.01, h = 1.0 / 30, limit = 0.5, eps = PD_FRICTION_STICK_SPEED * h;
    pd_real x_stick = step_end(m, h, 0.3, limit, eps);
    pd_real x_slide = step_end(m, h, 1.0, limit, eps);
    printf("  F = 0.3 N: moved %.3g m (eps %.3g m); F = 1 N: moved %.6g m\n", x_stick, eps,
           x_slide);
    PD_CHECK(x_stick > 0 && x_stick < eps);
    PD_CHECK_REL(x_slide, (1.0 - limit) * h * h / m, 1e-9);
}

/* dD/dy against a central difference of the returned D, inside the smoothed zone (|u| =
 * eps/2) and beyond it (|u| = 10 eps); and the force mu lambda on both sides of |u| = eps
 * (the smoothing is C1 there). */
PD_TEST(friction_force_is_the_gradient_of_the_potential) {
    const pd_real limit = 2.0, eps = 1e-4;
    pd_vec3 a = pd_v3(0.1, 0, 0), n = pd_v3(0, 0.6, 0.8), t = pd_v3(0, 0.8, -0.6);
    pd_real slips[2] = {0.5 * eps, 10 * eps}, worst = 0;
    pd_vec3 e3[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    pd_real k_t;
    uint8_t stuck;
    for (int c = 0; c < 2; ++c) {
        pd_vec3 y = pd_v3_madd(pd_v3_madd(a, slips[c], t), 3e-3, n); /* off the plane too */
        pd_vec3 g = pd_v3(0, 0, 0);
        pd_friction_apply(&g, y, a, n, limit, eps, &k_t, &stuck);
        for (int k = 0; k < 3; ++k) {
            pd_real dx = 1e-9, dp, dm;
            pd_vec3 z = pd_v3(0, 0, 0);
            dp = pd_friction_apply(&z, pd_v3_madd(y, dx, e3[k]), a, n, limit, eps, &k_t, &stuck);
            dm = pd_friction_apply(&z, pd_v3_madd(y, -dx, e3[k]), a, n, limit, eps, &k_t, &stuck);
            pd_real an = k == 0 ? g.x : (k == 1 ? g.y : g.z);
            worst = fmax(worst, fabs((dp - dm) / (2 * dx) - an));
        }
    }
    pd_real f_in, f_out;
    pd_vec3 g = pd_v3(0, 0, 0);
    pd_friction_apply(&g, pd_v3_madd(a, eps * (1 - 1e-9), t), a, n, limit, eps, &k_t, &stuck);
    f_in = pd_v3_len(g);
    g = pd_v3(0, 0, 0);
    pd_friction_apply(&g, pd_v3_madd(a, eps * (1 + 1e-9), t), a, n, limit, eps, &k_t, &stuck);
    f_out = pd_v3_len(g);
    printf("  |gradient - finite difference| %.3g N; force at eps-/eps+ %.9g / %.9g N\n", worst,
           f_in, f_out);
    PD_CHECK(stuck == 0);
    PD_CHECK_NEAR(worst, 0, 1e-5);
    PD_CHECK_NEAR(f_in, limit, 1e-6);
    PD_CHECK_NEAR(f_out, limit, 1e-12);
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
    pd_real k_t,
        e = pd_friction_apply(&r, pd_v3(1e-6, 0, 0), a, k_up, INFINITY, 1e-5, &k_t, &stuck);
    PD_CHECK(isinf(e) && stuck == 1); /* off its anchor: not admissible */
    PD_CHECK_NEAR(r.x, 0, 0);         /* held tangentially: the force is along n only */
    pd_vec3 s = pd_friction_snap(pd_v3(0.2, 0.1, -0.3), a, k_up, INFINITY);
    printf("  no-slip snap: (%g, %g, %g)\n", s.x, s.y, s.z);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, pd_v3(0, 0.1, 0))), 0, 1e-15);
}

/* A slip contact's trial is never moved (the smoothed potential has no kink to snap to). */
PD_TEST(snap_leaves_slip_contacts_alone) {
    pd_vec3 a = pd_v3(1, 0, 1), y = pd_v3(0.995, 0.002, 1.001);
    pd_vec3 s = pd_friction_snap(y, a, k_up, 0.5);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(s, y)), 0, 0);
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
