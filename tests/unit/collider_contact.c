/* Unit tests of the collider contact of an implicit step (boundary/collider_contact.h), on a
 * floor y = 0 with friction 0.5 and four particles (spacing 0.01 m): one predicted below the
 * floor, one resting on it, one in flight near it, one far above. Reference: the contract of
 * the header (KKT blocking: a contact takes r.n >= 0 and never pulls; Coulomb's limit
 * mu lambda with lambda the force the contact takes; no_slip held at its anchor; far
 * particles left alone). */
#include "test.h"

#include <string.h>

#include "boundary/collider_contact.h"
#include "core/alloc.h"
#include "linalg/chebyshev.h"

typedef struct floor_case {
    pd_colliders col;
    pd_collider_contact cc;
    pd_vec3 x[4], y[4];
    pd_real spacing[4];
} floor_case;

static int floor_open(floor_case* f, int boundary, pd_real friction) {
    pd_collider_def d = pd_default_collider_def();
    d.type = PD_COLLIDER_PLANE;
    d.point = pd_v3(0, 0, 0);
    d.normal = pd_v3(0, 1, 0);
    d.boundary = boundary;
    d.friction = friction;
    pd_error err = {0};
    if (pd_colliders_create(&d, 1, &f->col, &err) != PD_OK)
        return 0;
    if (pd_collider_contact_init(&f->cc, 4, NULL) != PD_OK)
        return 0;
    /* start positions x and the predictions y */
    f->x[0] = pd_v3(0, 0.002, 0), f->y[0] = pd_v3(0.001, -0.003, 0); /* lands */
    f->x[1] = pd_v3(0.1, 0, 0), f->y[1] = pd_v3(0.1, 0, 0);          /* rests on it */
    f->x[2] = pd_v3(0.2, 0.015, 0), f->y[2] = pd_v3(0.2, 0.012, 0);  /* near, in flight */
    f->x[3] = pd_v3(0.3, 0.5, 0), f->y[3] = pd_v3(0.3, -0.1, 0);     /* far: skipped */
    for (int i = 0; i < 4; ++i)
        f->spacing[i] = 0.01;
    pd_collider_contact_begin_step(&f->cc, &f->col, f->x, f->x, f->spacing, NULL, 1.0 / 30);
    return 1;
}

/* The floor case with its trials projected and the residuals r applied: the state the
 * friction is renewed from. */
static int floor_touched(floor_case* f, int boundary, pd_real friction, pd_vec3* r) {
    if (!floor_open(f, boundary, friction))
        return 0;
    pd_collider_contact_project(&f->cc, f->y);
    for (int i = 0; i < 4; ++i)
        pd_collider_contact_apply(&f->cc, (size_t)i, f->y[i], &r[i]);
    return 1;
}

static void floor_close(floor_case* f) {
    pd_collider_contact_free(&f->cc);
    pd_colliders_destroy(&f->col);
}

/* Projection puts the landing particle on the floor and holds it, leaves the one in flight,
 * and skips the far one (predicted 3 spacings away at the step's start: its trial may go
 * through, the world's pass after the step catches it). A residual pushing a held particle
 * into the floor loses its normal part (blocked, push = r.n); one pulling it away is kept
 * (a contact never pulls). */
PD_TEST(projects_holds_and_blocks_only_pushing_contacts) {
    floor_case f;
    PD_REQUIRE(floor_open(&f, PD_BOUNDARY_SLIP, 0));
    pd_collider_contact_project(&f.cc, f.y);
    printf("  landed at y = %g (held %d), flight %g (held %d), far %g (skipped %d)\n", f.y[0].y,
           f.cc.held[0], f.y[2].y, f.cc.held[2], f.y[3].y, f.cc.skip[3]);
    PD_CHECK_NEAR(f.y[0].y, 0, 1e-15);
    PD_CHECK(f.cc.held[0] && f.cc.held[1] && !f.cc.held[2]);
    PD_CHECK_NEAR(f.y[2].y, 0.012, 0);
    PD_CHECK(f.cc.skip[3] && !f.cc.skip[0]);
    PD_CHECK_NEAR(f.y[3].y, -0.1, 0);
    pd_vec3 push = pd_v3(0.3, 2.0, 0), pull = pd_v3(0.3, -2.0, 0);
    pd_collider_contact_apply(&f.cc, 0, f.y[0], &push);
    pd_collider_contact_apply(&f.cc, 1, f.y[1], &pull);
    printf("  pushing r -> (%g, %g), push %g; pulling r -> (%g, %g)\n", push.x, push.y,
           f.cc.push[0], pull.x, pull.y);
    PD_CHECK_NEAR(push.y, 0, 0);
    PD_CHECK_NEAR(push.x, 0.3, 0);
    PD_CHECK_NEAR(f.cc.push[0], 2.0, 0);
    PD_CHECK_NEAR(pull.y, -2.0, 0);
    pd_vec3 dir = pd_collider_contact_filter(&f.cc, 0, pd_v3(1, -1, 0));
    PD_CHECK_NEAR(dir.y, 0, 0); /* every search direction loses the blocked normal */
    PD_CHECK_NEAR(dir.x, 1, 0);
    floor_close(&f);
}

/* Friction's limit is mu times the force the contact takes: the push of a blocked contact
 * (here 2 N: limit 1 N) or r.n; a particle neither touching at its start nor held gets none.
 * With it, a tangential residual of 0.3 N gains the friction force against the slip, and the
 * sweeps get the tangential stiffness. Renewing with the same forces reports no change;
 * doubling the push reports one. */
PD_TEST(friction_limit_is_mu_times_the_contact_force) {
    floor_case f;
    pd_vec3 r[4] = {pd_v3(0.3, 2.0, 0), pd_v3(0, 1.0, 0), pd_v3(0, 1, 0), pd_v3(0, 1, 0)};
    PD_REQUIRE(floor_touched(&f, PD_BOUNDARY_SLIP, 0.5, r));
    PD_CHECK(pd_collider_contact_renew_friction(&f.cc, f.x, f.y, r) == 1);
    printf("  limits %g %g %g %g N\n", f.cc.limit[0], f.cc.limit[1], f.cc.limit[2], f.cc.limit[3]);
    PD_CHECK_NEAR(f.cc.limit[0], 1.0, 1e-15);
    PD_CHECK_NEAR(f.cc.limit[1], 0.5, 1e-15);
    PD_CHECK(f.cc.limit[2] == 0 && f.cc.limit[3] == 0);
    pd_vec3 rt = pd_v3(0.3, 2.0, 0); /* slipped 1 mm along +x: friction pulls back */
    pd_vec3 at = pd_v3_add(f.cc.anchor[0], pd_v3(1e-3, 0, 0));
    pd_collider_contact_apply(&f.cc, 0, at, &rt);
    printf("  slipping contact: r.x %g N (0.3 + mu lambda), ktan %g N/m\n", rt.x, f.cc.ktan[0]);
    PD_CHECK_NEAR(rt.x, 1.3, 1e-12);
    pd_chebyshev_def def = {0};
    pd_collider_contact_sweeps(&f.cc, &def);
    PD_CHECK(def.tangent_k == f.cc.ktan && def.blocked == f.cc.blocked && def.line == f.cc.line);
    PD_CHECK(pd_collider_contact_renew_friction(&f.cc, f.x, f.y, r) == 0);
    r[0].y = 4.0;
    pd_collider_contact_apply(&f.cc, 0, f.y[0], &r[0]);
    PD_CHECK(pd_collider_contact_renew_friction(&f.cc, f.x, f.y, r) == 1);
    PD_CHECK_NEAR(f.cc.limit[0], 2.0, 1e-15);
    floor_close(&f);
}

/* What a renewal would move, measured without renewing (the lagged normal forces' error that
 * decides a renewal inside a solve): the 2-norm of mu lambda renewed - mu lambda lagged. The
 * floor case renewed at pushes 2 and 1 N (limits 1 and 0.5 N); then pushes 4 and 3 N: the
 * limits would become 2 and 1.5 N, a change of sqrt(1^2 + 1^2) N, and stay 1 and 0.5 N. A
 * function that summed the changes would read 2, one of the relative changes 2.83. */
PD_TEST(friction_change_is_what_a_renewal_would_move) {
    floor_case f;
    pd_vec3 r[4] = {pd_v3(0.3, 2.0, 0), pd_v3(0, 1.0, 0), pd_v3(0, 1, 0), pd_v3(0, 1, 0)};
    PD_REQUIRE(floor_touched(&f, PD_BOUNDARY_SLIP, 0.5, r));
    pd_collider_contact_renew_friction(&f.cc, f.x, f.y, r);
    PD_CHECK_NEAR(pd_collider_contact_friction_change(&f.cc, f.y, r), 0, 0);
    r[0].y = 4.0, r[1].y = 3.0;
    for (int i = 0; i < 2; ++i)
        pd_collider_contact_apply(&f.cc, (size_t)i, f.y[i], &r[i]);
    pd_real change = pd_collider_contact_friction_change(&f.cc, f.y, r);
    printf("  change %.6g N (sqrt 2); limits kept %g %g N\n", change, f.cc.limit[0], f.cc.limit[1]);
    PD_CHECK_NEAR(change, sqrt(2.0), 1e-15);
    PD_CHECK(f.cc.limit[0] == 1.0 && f.cc.limit[1] == 0.5);
    floor_close(&f);
}

/* no_slip: once its friction is set, a touching particle's trial is put back at its anchor
 * tangentially, its residual and directions keep only the normal part, and a point off the
 * anchor has infinite potential (never accepted). */
PD_TEST(no_slip_holds_touching_particles_at_their_anchor) {
    floor_case f;
    pd_vec3 r[4] = {pd_v3(0.3, 2.0, 0), pd_v3(0.2, 1.0, 0), pd_v3(0, 1, 0), pd_v3(0, 1, 0)};
    PD_REQUIRE(floor_touched(&f, PD_BOUNDARY_NO_SLIP, 0, r));
    pd_collider_contact_renew_friction(&f.cc, f.x, f.y, r);
    PD_CHECK(isinf(f.cc.limit[1]));
    pd_vec3 trial[4];
    memcpy(trial, f.y, sizeof trial);
    trial[1] = pd_v3(0.13, 0.004, 0.02); /* moved sideways and up */
    pd_collider_contact_project(&f.cc, trial);
    printf("  no_slip trial -> (%g, %g, %g)\n", trial[1].x, trial[1].y, trial[1].z);
    PD_CHECK_NEAR(trial[1].x, 0.1, 1e-15);
    PD_CHECK_NEAR(trial[1].z, 0, 1e-15);
    PD_CHECK_NEAR(trial[1].y, 0.004, 1e-15); /* it may leave along the normal */
    pd_vec3 rr = pd_v3(0.2, -1.0, 0.1);
    pd_real e = pd_collider_contact_apply(&f.cc, 1, trial[1], &rr);
    PD_CHECK(e == 0 && rr.x == 0 && rr.z == 0 && f.cc.stuck[1]);
    pd_vec3 off = pd_v3(0.101, 0.004, 0);
    PD_CHECK(isinf(pd_collider_contact_apply(&f.cc, 1, off, &rr)));
    floor_close(&f);
}

PD_TEST(collider_contact_releases_what_it_allocates) {
    size_t before = pd_bytes_in_use();
    pd_collider_contact c;
    PD_REQUIRE(pd_collider_contact_init(&c, 1000, NULL) == PD_OK);
    PD_CHECK(pd_bytes_in_use() > before);
    pd_collider_contact_free(&c);
    PD_CHECK(pd_bytes_in_use() == before);
}

/* The arrays of features the colliders cannot use are not allocated: a lone slip plane holds
 * no second normal (it makes no corner) and no stuck flag or line (nothing sticks to it): 49
 * bytes a particle less than with a no_slip plane and a wall. */
static size_t contact_bytes(const pd_collider_def* defs, int count, pd_collider_contact* c) {
    pd_colliders col;
    pd_error err = {0};
    if (pd_colliders_create(defs, count, &col, &err) != PD_OK)
        return 0;
    size_t before = pd_bytes_in_use();
    size_t bytes = pd_collider_contact_init(c, 999, &col) == PD_OK ? pd_bytes_in_use() - before : 0;
    pd_colliders_destroy(&col);
    return bytes;
}

PD_TEST(collider_contact_holds_what_its_colliders_use) {
    pd_collider_def d[2] = {pd_default_collider_def(), pd_default_collider_def()};
    d[0].type = d[1].type = PD_COLLIDER_PLANE;
    d[0].normal = pd_v3(0, 1, 0), d[1].normal = pd_v3(1, 0, 0);
    pd_collider_contact slip, both;
    size_t lean = contact_bytes(d, 1, &slip);
    d[0].boundary = PD_BOUNDARY_NO_SLIP;
    size_t full = contact_bytes(d, 2, &both);
    printf("  1000 points: %zu bytes beside a slip plane, %zu beside a no_slip plane and a wall\n",
           lean, full);
    PD_CHECK(!slip.blocked2 && !slip.stuck && !slip.line);
    PD_CHECK(both.blocked2 && both.stuck && both.line);
    PD_CHECK(full - lean == 1000 * (2 * sizeof(pd_vec3) + 1));
    pd_collider_contact_free(&slip);
    pd_collider_contact_free(&both);
}

/* A particle pushed into the corner of a container box (x >= 0, z >= 0 faces) and one into the
 * edge of a floor plane and a wall plane: the nearest collider reports one surface, and
 * with one normal blocked the residual kept pushing into the other (sand in a channel: 0.3 to
 * 0.5 N left at a corner grain, the line search stalled). Both normals blocked, the residual
 * keeps only what moves the particle away from or along both surfaces, and the sweeps'
 * updates stay in both planes. Without the second normal the checks fail. */
static void corner_check(const pd_colliders* col, pd_vec3 y, pd_vec3 r, pd_vec3 n1, pd_vec3 n2) {
    pd_collider_contact cc;
    PD_REQUIRE(pd_collider_contact_init(&cc, 1, col) == PD_OK);
    PD_REQUIRE(cc.blocked2 != NULL); /* a box, two planes: they may make a corner */
    pd_real spacing = 0.01;
    pd_collider_contact_begin_step(&cc, col, &y, &y, &spacing, NULL, 1.0 / 30);
    pd_collider_contact_project(&cc, &y);
    PD_REQUIRE(cc.held[0]);
    pd_collider_contact_apply(&cc, 0, y, &r);
    printf("  residual after blocking (%.3g %.3g %.3g)\n", r.x, r.y, r.z);
    PD_CHECK_NEAR(pd_v3_dot(r, n1), 0, 1e-12);
    PD_CHECK_NEAR(pd_v3_dot(r, n2), 0, 1e-12);
    PD_CHECK(pd_v3_len(r) > 0.5); /* the free direction stays */
    pd_vec3 v = pd_collider_contact_filter(&cc, 0, pd_v3(-1, -1, -1));
    PD_CHECK_NEAR(pd_v3_dot(v, n1), 0, 1e-12);
    PD_CHECK_NEAR(pd_v3_dot(v, n2), 0, 1e-12);
    pd_collider_contact_free(&cc);
}

PD_TEST(corner_blocks_both_surfaces) {
    pd_error err = {0};
    pd_collider_def box = pd_default_collider_def();
    box.type = PD_COLLIDER_BOX;
    box.shape.min = pd_v3(0, -1, 0), box.shape.max = pd_v3(1, 1, 1);
    box.inside = 1;
    pd_colliders one;
    PD_REQUIRE(pd_colliders_create(&box, 1, &one, &err) == PD_OK);
    /* at the x = 0 and z = 0 faces, pushed into both (r is the gradient: -r the motion) */
    corner_check(&one, pd_v3(-0.001, 0.5, -0.002), pd_v3(1, 0.7, 2), pd_v3(1, 0, 0),
                 pd_v3(0, 0, 1));
    pd_colliders_destroy(&one);
    pd_collider_def planes[2];
    planes[0] = pd_default_collider_def();
    planes[0].type = PD_COLLIDER_PLANE;
    planes[0].normal = pd_v3(0, 1, 0);
    planes[1] = planes[0];
    planes[1].normal = pd_v3(1, 0, 0);
    pd_colliders two;
    PD_REQUIRE(pd_colliders_create(planes, 2, &two, &err) == PD_OK);
    corner_check(&two, pd_v3(-0.001, -0.001, 0.3), pd_v3(2, 1, 0.8), pd_v3(0, 1, 0),
                 pd_v3(1, 0, 0));
    pd_colliders_destroy(&two);
}
