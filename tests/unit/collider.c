/* Unit tests of the analytic colliders: exact SDF values and normals, container sign flip,
 * projection with slip / Coulomb friction / no-slip, motion by velocity and keyframes,
 * surface velocity against a finite difference of the pose, and thread-count independence. */
#include "test.h"

#include <string.h>

#include "boundary/collider.h"
#include "core/alloc.h"
#include "parallel/parallel.h"

static pd_collider_def make_def(pd_collider_type type) {
    pd_collider_def d;
    memset(&d, 0, sizeof d);
    d.type = type;
    d.boundary = PD_BOUNDARY_SLIP;
    return d;
}

static pd_collider_def plane_def(pd_vec3 point, pd_vec3 normal) {
    pd_collider_def d = make_def(PD_COLLIDER_PLANE);
    d.point = point;
    d.normal = normal;
    return d;
}

static pd_collider_def box_def(pd_vec3 lo, pd_vec3 hi) {
    pd_collider_def d = make_def(PD_COLLIDER_BOX);
    d.shape.type = PD_SHAPE_BOX;
    d.shape.min = lo;
    d.shape.max = hi;
    return d;
}

static pd_collider_def sphere_def(pd_vec3 c, pd_real r) {
    pd_collider_def d = make_def(PD_COLLIDER_SPHERE);
    d.shape.type = PD_SHAPE_SPHERE;
    d.shape.center = c;
    d.shape.radius = r;
    return d;
}

static pd_collider_def cylinder_def(pd_vec3 base, pd_vec3 axis, pd_real r, pd_real h) {
    pd_collider_def d = make_def(PD_COLLIDER_CYLINDER);
    d.shape.type = PD_SHAPE_CYLINDER;
    d.shape.base = base;
    d.shape.axis = axis;
    d.shape.radius = r;
    d.shape.height = h;
    return d;
}

/* Makes a one-collider set; the caller destroys it. */
static int make_one(pd_collider_def d, pd_colliders* out) {
    pd_error err;
    memset(&err, 0, sizeof err);
    pd_status st = pd_colliders_create(&d, 1, out, &err);
    if (st != PD_OK)
        printf("  create failed: %s: %s\n", err.path, err.message);
    return st == PD_OK;
}

static pd_real sdf_n(const pd_colliders* c, pd_vec3 p, pd_vec3* n) {
    return pd_collider_sdf(&c->items[0], p, n);
}

#define CHECK_V3(v, ex, ey, ez, tol)                                                               \
    do {                                                                                           \
        PD_CHECK_NEAR((v).x, ex, tol);                                                             \
        PD_CHECK_NEAR((v).y, ey, tol);                                                             \
        PD_CHECK_NEAR((v).z, ez, tol);                                                             \
    } while (0)

PD_TEST(sdf_plane_values) {
    pd_colliders c;
    PD_REQUIRE(make_one(plane_def(pd_v3(0, 1, 0), pd_v3(0, 2, 0)), &c));
    pd_vec3 n;
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(3, 0.7, -2), &n), -0.3, 1e-14);
    CHECK_V3(n, 0, 1, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(-1, 1.25, 5), &n), 0.25, 1e-14);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(9, 1, 9), &n), 0, 1e-14);
    pd_colliders_destroy(&c);
    /* Tilted plane through the origin, normal (1,1,0)/sqrt2. */
    PD_REQUIRE(make_one(plane_def(pd_v3(0, 0, 0), pd_v3(1, 1, 0)), &c));
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(1, 1, 7), &n), sqrt(2.0), 1e-14);
    CHECK_V3(n, sqrt(0.5), sqrt(0.5), 0, 1e-15);
    pd_colliders_destroy(&c);
}

PD_TEST(sdf_box_values) {
    pd_colliders c;
    PD_REQUIRE(make_one(box_def(pd_v3(0, 0, 0), pd_v3(1, 2, 1)), &c));
    pd_vec3 n;
    /* Centre: nearest faces are at 0.5 (x and z); the normal is one of them. */
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0.5, 1, 0.5), &n), -0.5, 1e-14);
    PD_CHECK_NEAR(pd_v3_len(n), 1, 1e-14);
    PD_CHECK_NEAR(n.y, 0, 0);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0.5, 1.9, 0.4), &n), -0.1, 1e-14);
    CHECK_V3(n, 0, 1, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(1.5, 1, 0.5), &n), 0.5, 1e-14);
    CHECK_V3(n, 1, 0, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(2, 3, 2), &n), sqrt(3.0), 1e-14);
    CHECK_V3(n, 1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0), 1e-14);
    /* Outside an edge: distance to the edge x=0,y=0 line. */
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(-0.3, -0.4, 0.5), &n), 0.5, 1e-14);
    CHECK_V3(n, -0.6, -0.8, 0, 1e-14);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(1, 1.2, 0.5), NULL), 0, 1e-14);
    pd_colliders_destroy(&c);
}

PD_TEST(sdf_sphere_values) {
    pd_colliders c;
    PD_REQUIRE(make_one(sphere_def(pd_v3(1, 2, 3), 0.5), &c));
    pd_vec3 n;
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(1.3, 2, 3.4), &n), 0, 1e-14);
    CHECK_V3(n, 0.6, 0, 0.8, 1e-14);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(1, 3, 3), &n), 0.5, 1e-14);
    CHECK_V3(n, 0, 1, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(1, 2, 3), &n), -0.5, 1e-14);
    PD_CHECK_NEAR(pd_v3_len(n), 1, 1e-14);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0.9, 2, 3), &n), -0.4, 1e-14);
    CHECK_V3(n, -1, 0, 0, 1e-14);
    pd_colliders_destroy(&c);
}

PD_TEST(sdf_cylinder_values) {
    pd_colliders c;
    PD_REQUIRE(make_one(cylinder_def(pd_v3(0, 0, 0), pd_v3(0, 1, 0), 1, 2), &c));
    pd_vec3 n;
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0.5, 1, 0), &n), -0.5, 1e-14);
    CHECK_V3(n, 1, 0, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0, 1.8, 0.1), &n), -0.2, 1e-14);
    CHECK_V3(n, 0, 1, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0, 2.5, 0), &n), 0.5, 1e-14);
    CHECK_V3(n, 0, 1, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0, -0.25, 0.5), &n), 0.25, 1e-14);
    CHECK_V3(n, 0, -1, 0, 1e-15);
    /* Outside the rim: distance to the top circle's edge. */
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0, 3, 2), &n), sqrt(2.0), 1e-14);
    CHECK_V3(n, 0, sqrt(0.5), sqrt(0.5), 1e-14);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0.6, 1.3, 0.8), NULL), 0, 1e-14);
    /* On the axis, mid-height: the side (0 - 1 = -1) and caps (-1) tie; normal still unit. */
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0, 1, 0), &n), -1, 1e-14);
    PD_CHECK_NEAR(pd_v3_len(n), 1, 1e-14);
    pd_colliders_destroy(&c);
    /* A non-unit x axis is normalised. */
    PD_REQUIRE(make_one(cylinder_def(pd_v3(1, 0, 0), pd_v3(2, 0, 0), 0.5, 3), &c));
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(2, 0, 1.5), &n), 1.0, 1e-14);
    CHECK_V3(n, 0, 0, 1, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(4.5, 0.1, 0), &n), 0.5, 1e-14);
    CHECK_V3(n, 1, 0, 0, 1e-15);
    pd_colliders_destroy(&c);
}

PD_TEST(container_flips_sign) {
    pd_colliders c;
    pd_vec3 n;
    pd_collider_def d = box_def(pd_v3(0, 0, 0), pd_v3(1, 2, 1));
    d.inside = 1;
    PD_REQUIRE(make_one(d, &c));
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0.5, 1.9, 0.5), &n), 0.1, 1e-14);
    CHECK_V3(n, 0, -1, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(1.5, 1, 0.5), &n), -0.5, 1e-14);
    CHECK_V3(n, -1, 0, 0, 1e-15);
    pd_colliders_destroy(&c);

    d = sphere_def(pd_v3(0, 0, 0), 2);
    d.inside = 1;
    PD_REQUIRE(make_one(d, &c));
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0, 0, 0.5), &n), 1.5, 1e-14);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0, 3, 0), &n), -1, 1e-14);
    CHECK_V3(n, 0, -1, 0, 1e-15);
    pd_colliders_destroy(&c);

    d = cylinder_def(pd_v3(0, 0, 0), pd_v3(0, 1, 0), 1, 2);
    d.inside = 1;
    PD_REQUIRE(make_one(d, &c));
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0.7, 1, 0), &n), 0.3, 1e-14);
    CHECK_V3(n, -1, 0, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0, -0.2, 0), &n), -0.2, 1e-14);
    CHECK_V3(n, 0, 1, 0, 1e-15);
    pd_colliders_destroy(&c);
}

static pd_real rand01(uint64_t* s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (pd_real)(*s >> 11) * (1.0 / 9007199254740992.0);
}

static pd_vec3 rand_box(uint64_t* s, pd_real lo, pd_real hi) {
    pd_real a = rand01(s), b = rand01(s), c = rand01(s);
    return pd_v3(lo + (hi - lo) * a, lo + (hi - lo) * b, lo + (hi - lo) * c);
}

/* Normals are unit and equal to the finite-difference gradient of the SDF almost everywhere
 * (the gradient is undefined only on measure-zero ridges, hence the 1% allowance). */
static void check_gradient(pd_collider_def d, pd_real t, const char* what) {
    pd_colliders c;
    PD_REQUIRE(make_one(d, &c));
    pd_colliders_update(&c, t);
    uint64_t seed = 12345;
    const int samples = 4000;
    const pd_real h = 1e-6;
    int bad_unit = 0, bad_grad = 0;
    for (int i = 0; i < samples; ++i) {
        pd_vec3 p = rand_box(&seed, -2, 2), n;
        sdf_n(&c, p, &n);
        bad_unit += fabs(pd_v3_len(n) - 1) > 1e-12;
        pd_vec3 g;
        g.x = (sdf_n(&c, pd_v3_add(p, pd_v3(h, 0, 0)), NULL) -
               sdf_n(&c, pd_v3_sub(p, pd_v3(h, 0, 0)), NULL)) /
              (2 * h);
        g.y = (sdf_n(&c, pd_v3_add(p, pd_v3(0, h, 0)), NULL) -
               sdf_n(&c, pd_v3_sub(p, pd_v3(0, h, 0)), NULL)) /
              (2 * h);
        g.z = (sdf_n(&c, pd_v3_add(p, pd_v3(0, 0, h)), NULL) -
               sdf_n(&c, pd_v3_sub(p, pd_v3(0, 0, h)), NULL)) /
              (2 * h);
        bad_grad += pd_v3_len(pd_v3_sub(g, n)) > 1e-5;
    }
    printf("  %s: %d non-unit normals, %d of %d normals off the FD gradient\n", what, bad_unit,
           bad_grad, samples);
    PD_CHECK_NEAR(bad_unit, 0, 0);
    PD_CHECK_NEAR(bad_grad, 0, samples / 100);
    pd_colliders_destroy(&c);
}

PD_TEST(normals_are_unit_gradients) {
    check_gradient(box_def(pd_v3(-1, -0.5, -0.7), pd_v3(0.8, 0.5, 1)), 0, "box");
    check_gradient(sphere_def(pd_v3(0.1, 0.2, -0.1), 1.2), 0, "sphere");
    check_gradient(cylinder_def(pd_v3(0.1, -1, 0), pd_v3(1, 2, 0.5), 0.7, 1.9), 0, "cylinder");
    check_gradient(plane_def(pd_v3(0.1, -1, 0), pd_v3(1, 2, 0.5)), 0, "plane");
    pd_collider_def d = box_def(pd_v3(-1, -0.5, -0.7), pd_v3(0.8, 0.5, 1));
    d.inside = 1;
    d.angular_velocity = pd_v3(0.3, -0.5, 0.2);
    d.velocity = pd_v3(0.1, 0, -0.2);
    check_gradient(d, 1.5, "moved, turned box container");
}

PD_TEST(floor_projection) {
    pd_colliders c;
    PD_REQUIRE(make_one(plane_def(pd_v3(0, 0, 0), pd_v3(0, 1, 0)), &c));
    pd_vec3 pos[3] = {pd_v3(0.3, -0.05, 0.1), pd_v3(0, 0.2, 0), pd_v3(0, -0.5, 0)};
    pd_vec3 vel[3] = {pd_v3(0.2, -1, 0.1), pd_v3(0, -1, 0), pd_v3(0, -1, 0)};
    uint8_t skip[3] = {0, 0, 1};
    size_t touched = pd_colliders_project(&c, 3, pos, vel, skip, NULL, 0.01);
    PD_CHECK_NEAR(touched, 1, 0);
    CHECK_V3(pos[0], 0.3, 0, 0.1, 1e-15);
    CHECK_V3(vel[0], 0.2, 0, 0.1, 1e-15); /* friction 0: tangential velocity kept */
    CHECK_V3(pos[1], 0, 0.2, 0, 0);       /* above the floor: untouched */
    CHECK_V3(vel[1], 0, -1, 0, 0);
    CHECK_V3(pos[2], 0, -0.5, 0, 0); /* skipped */
    /* A particle inside but already separating keeps its upward velocity. */
    pd_vec3 p = pd_v3(0, -0.1, 0), v = pd_v3(0.5, 2, 0);
    PD_CHECK_NEAR(pd_colliders_project(&c, 1, &p, &v, NULL, NULL, 0.01), 1, 0);
    CHECK_V3(v, 0.5, 2, 0, 1e-15);
    pd_colliders_destroy(&c);
}

static pd_vec3 slide_once(pd_boundary boundary, pd_real mu, pd_vec3 v, pd_vec3 floor_vel) {
    pd_collider_def d = plane_def(pd_v3(0, 0, 0), pd_v3(0, 1, 0));
    d.boundary = boundary;
    d.friction = mu;
    d.velocity = floor_vel;
    pd_colliders c;
    if (!make_one(d, &c))
        return pd_v3(NAN, NAN, NAN);
    pd_colliders_update(&c, 0.0);
    pd_vec3 p = pd_v3(0, -1e-3, 0);
    pd_colliders_project(&c, 1, &p, &v, NULL, NULL, 0.01);
    pd_colliders_destroy(&c);
    return v;
}

PD_TEST(coulomb_friction_and_no_slip) {
    /* vn = -1, vt = 0.5 along (0.6, 0, 0.8): mu 0.3 leaves |vt| = 0.2, same direction. */
    pd_vec3 v = slide_once(PD_BOUNDARY_SLIP, 0.3, pd_v3(0.3, -1, 0.4), pd_v3(0, 0, 0));
    CHECK_V3(v, 0.12, 0, 0.16, 1e-14);
    PD_CHECK_NEAR(pd_v3_len(v), 0.2, 1e-14);
    v = slide_once(PD_BOUNDARY_SLIP, 1.0, pd_v3(0.3, -1, 0.4), pd_v3(0, 0, 0));
    CHECK_V3(v, 0, 0, 0, 1e-15);
    /* Friction acts on the velocity relative to a floor sliding at (1,0,0). */
    v = slide_once(PD_BOUNDARY_SLIP, 0.3, pd_v3(1.5, -1, 0), pd_v3(1, 0, 0));
    CHECK_V3(v, 1.2, 0, 0, 1e-14);
    /* No-slip takes the collider's velocity. */
    v = slide_once(PD_BOUNDARY_NO_SLIP, 0, pd_v3(2, -1, 1), pd_v3(0.5, 0, -0.25));
    CHECK_V3(v, 0.5, 0, -0.25, 1e-15);
    /* ...keeping a separating normal part. */
    v = slide_once(PD_BOUNDARY_NO_SLIP, 0, pd_v3(2, 3, 1), pd_v3(0.5, 0, 0));
    CHECK_V3(v, 0.5, 3, 0, 1e-15);
}

PD_TEST(moving_box_by_velocity) {
    pd_collider_def d = box_def(pd_v3(-1, -0.1, -0.1), pd_v3(1, 0.1, 0.1));
    d.velocity = pd_v3(1, 0.5, 0);
    d.angular_velocity = pd_v3(0, PD_PI / 4, 0); /* 90 degrees after 2 s */
    pd_colliders c;
    PD_REQUIRE(make_one(d, &c));
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(0.9, 0, 0), NULL), -0.1, 1e-14);
    pd_colliders_update(&c, 2.0);
    CHECK_V3(c.items[0].translation, 2, 1, 0, 1e-14);
    pd_vec3 ctr = pd_v3(2, 1, 0);
    /* The long axis now lies along z. */
    PD_CHECK_NEAR(sdf_n(&c, pd_v3_add(ctr, pd_v3(0, 0, 0.9)), NULL), -0.1, 1e-12);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3_add(ctr, pd_v3(0.9, 0, 0)), NULL), 0.8, 1e-12);
    /* +90 degrees about y takes rest +x to -z. */
    pd_vec3 end = pd_collider_to_world(&c.items[0], pd_v3(1, 0, 0));
    CHECK_V3(end, 2, 1, -1, 1e-12);
    pd_colliders_update(&c, 1.0);
    pd_vec3 n;
    pd_vec3 tip = pd_v3_add(pd_v3(1, 0.5, 0), pd_v3(0.95 * sqrt(0.5), 0, -0.95 * sqrt(0.5)));
    PD_CHECK_NEAR(sdf_n(&c, tip, &n), -0.05, 1e-12);
    CHECK_V3(n, sqrt(0.5), 0, -sqrt(0.5), 1e-12);
    pd_colliders_destroy(&c);
}

PD_TEST(moving_box_by_keyframes) {
    pd_keyframe kf[3];
    memset(kf, 0, sizeof kf);
    kf[0].t = 0;
    kf[1].t = 1;
    kf[1].translate = pd_v3(1, 0, 0);
    kf[2].t = 2;
    kf[2].translate = pd_v3(1, 2, 0);
    kf[2].rotate_axis = pd_v3(0, 3, 0); /* normalised on create */
    kf[2].rotate_degrees = 90;
    pd_collider_def d = box_def(pd_v3(0, 0, 0), pd_v3(2, 1, 1)); /* centre (1, 0.5, 0.5) */
    d.keyframes = kf;
    d.keyframe_count = 3;
    d.velocity = pd_v3(5, 5, 5); /* ignored: keyframes win */
    pd_colliders c;
    PD_REQUIRE(make_one(d, &c));
    const pd_collider* col = &c.items[0];

    pd_colliders_update(&c, -1);
    CHECK_V3(col->translation, 0, 0, 0, 0);
    CHECK_V3(col->lin_vel, 0, 0, 0, 0);
    pd_colliders_update(&c, 0.5);
    CHECK_V3(col->translation, 0.5, 0, 0, 1e-15);
    CHECK_V3(col->lin_vel, 1, 0, 0, 1e-15);
    PD_CHECK_NEAR(sdf_n(&c, pd_v3(2.4, 0.5, 0.5), NULL), -0.1, 1e-14);

    pd_colliders_update(&c, 1.5);
    CHECK_V3(col->translation, 1, 1, 0, 1e-15);
    CHECK_V3(col->lin_vel, 0, 2, 0, 1e-15);
    CHECK_V3(col->ang_vel, 0, PD_PI / 2, 0, 1e-14);
    pd_vec3 ctr = pd_v3(2, 1.5, 0.5), n;
    pd_vec3 tip = pd_v3_add(ctr, pd_v3(0.95 * sqrt(0.5), 0, -0.95 * sqrt(0.5)));
    PD_CHECK_NEAR(sdf_n(&c, tip, &n), -0.05, 1e-12);
    CHECK_V3(n, sqrt(0.5), 0, -sqrt(0.5), 1e-12);

    /* A step ending on a key moved with the segment arriving there, not the next one. */
    pd_colliders_update(&c, 1.0);
    CHECK_V3(col->translation, 1, 0, 0, 1e-15);
    CHECK_V3(col->lin_vel, 1, 0, 0, 1e-15);
    CHECK_V3(col->ang_vel, 0, 0, 0, 0);

    for (int k = 0; k < 2; ++k) { /* at the last keyframe (arriving) and held after it */
        pd_colliders_update(&c, k == 0 ? 2.0 : 7.0);
        CHECK_V3(col->translation, 1, 2, 0, 1e-15);
        CHECK_V3(col->lin_vel, 0, k == 0 ? 2 : 0, 0, 1e-15);
        CHECK_V3(col->ang_vel, 0, k == 0 ? PD_PI / 2 : 0, 0, 1e-14);
        ctr = pd_v3(2, 2.5, 0.5);
        PD_CHECK_NEAR(sdf_n(&c, pd_v3_add(ctr, pd_v3(0, 0, 0.9)), NULL), -0.1, 1e-12);
        PD_CHECK_NEAR(sdf_n(&c, pd_v3_add(ctr, pd_v3(0.9, 0, 0)), NULL), 0.4, 1e-12);
    }
    pd_colliders_destroy(&c);
}

/* The surface velocity of a point riding on the collider equals the central difference of
 * its position over time. */
static void check_velocity_by_fd(pd_colliders* c, pd_vec3 rest_point, pd_real t) {
    const pd_real h = 1e-6;
    pd_colliders_update(c, t - h);
    pd_vec3 a = pd_collider_to_world(&c->items[0], rest_point);
    pd_colliders_update(c, t + h);
    pd_vec3 b = pd_collider_to_world(&c->items[0], rest_point);
    pd_colliders_update(c, t);
    pd_vec3 x = pd_collider_to_world(&c->items[0], rest_point);
    pd_vec3 v = pd_collider_velocity_at(&c->items[0], x);
    pd_vec3 fd = pd_v3_scale(pd_v3_sub(b, a), 1 / (2 * h));
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(v, fd)), 0, 1e-6 * (1 + pd_v3_len(fd)));
}

PD_TEST(surface_velocity_is_omega_cross_r) {
    pd_collider_def d = sphere_def(pd_v3(1, 0, 0), 1);
    d.angular_velocity = pd_v3(0, 0, 2);
    d.velocity = pd_v3(0.5, 0, 0);
    pd_colliders c;
    PD_REQUIRE(make_one(d, &c));
    pd_vec3 v = pd_collider_velocity_at(&c.items[0], pd_v3(2, 0, 0));
    CHECK_V3(v, 0.5, 2, 0, 1e-15); /* (0,0,2) x (1,0,0) = (0,2,0), plus the drift */
    pd_colliders_update(&c, 1.0);  /* centre now at (1.5, 0, 0) */
    v = pd_collider_velocity_at(&c.items[0], pd_v3(1.5, 1, 0));
    CHECK_V3(v, 0.5 - 2, 0, 0, 1e-15);
    check_velocity_by_fd(&c, pd_v3(1.3, 0.4, -0.5), 0.7);
    pd_colliders_destroy(&c);

    d = box_def(pd_v3(-1, 0, 0), pd_v3(1, 0.5, 2));
    d.angular_velocity = pd_v3(0.3, -1.1, 0.7);
    d.velocity = pd_v3(0, 0, -1);
    PD_REQUIRE(make_one(d, &c));
    check_velocity_by_fd(&c, pd_v3(1, 0.5, 2), 1.3);
    pd_colliders_destroy(&c);

    /* Keyframes about two different axes: the shortest arc between them. */
    pd_keyframe kf[2];
    memset(kf, 0, sizeof kf);
    kf[0].rotate_axis = pd_v3(0, 1, 0);
    kf[0].rotate_degrees = 60;
    kf[1].t = 0.5;
    kf[1].translate = pd_v3(0.2, 0, 0);
    kf[1].rotate_axis = pd_v3(1, 0, 1);
    kf[1].rotate_degrees = 120;
    d = box_def(pd_v3(-1, 0, 0), pd_v3(1, 0.5, 2));
    d.keyframes = kf;
    d.keyframe_count = 2;
    PD_REQUIRE(make_one(d, &c));
    check_velocity_by_fd(&c, pd_v3(1, 0.5, 2), 0.2);
    pd_colliders_update(&c, 0.5);
    pd_vec3 rest = pd_v3(1, 0.5, 2);
    pd_vec3 expect_r = pd_v3(0, 0, 0); /* rotate (p - centre) by 120 deg about (1,0,1)/sqrt2 */
    {
        pd_vec3 a = pd_v3(sqrt(0.5), 0, sqrt(0.5));
        pd_vec3 r = pd_v3_sub(rest, pd_v3(0, 0.25, 1));
        pd_real th = 120 * PD_PI / 180;
        expect_r =
            pd_v3_add(pd_v3_add(pd_v3_scale(r, cos(th)), pd_v3_scale(pd_v3_cross(a, r), sin(th))),
                      pd_v3_scale(a, pd_v3_dot(a, r) * (1 - cos(th))));
    }
    pd_vec3 x = pd_collider_to_world(&c.items[0], rest);
    pd_vec3 expect = pd_v3_add(pd_v3(0.2, 0.25, 1), expect_r);
    CHECK_V3(x, expect.x, expect.y, expect.z, 1e-12);
    /* The arc ends where the next keyframe starts (no jump at t1). */
    pd_colliders_update(&c, 0.5 - 1e-9);
    pd_vec3 x_before = pd_collider_to_world(&c.items[0], rest);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(x_before, x)), 0, 1e-7);
    pd_colliders_destroy(&c);

    /* Half turns about x then about z: their relative turn is half a turn about y, where the
     * axis must be read from the symmetric part. */
    kf[0].rotate_axis = pd_v3(1, 0, 0);
    kf[0].rotate_degrees = 180;
    kf[1].rotate_axis = pd_v3(0, 0, 1);
    kf[1].rotate_degrees = 180;
    PD_REQUIRE(make_one(d, &c));
    pd_colliders_update(&c, 0.5);
    x = pd_collider_to_world(&c.items[0], rest);
    pd_colliders_update(&c, 0.5 - 1e-9);
    x_before = pd_collider_to_world(&c.items[0], rest);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(x_before, x)), 0, 1e-7);
    /* Either sense of a half turn is a shortest arc. */
    pd_vec3 w = c.items[0].ang_vel;
    CHECK_V3(pd_v3(w.x, fabs(w.y), w.z), 0, PD_PI / 0.5, 0, 1e-9);
    check_velocity_by_fd(&c, rest, 0.3);
    pd_colliders_destroy(&c);
}

PD_TEST(bad_colliders_are_refused) {
    pd_collider_def defs[2];
    pd_colliders c;
    pd_error err;
    struct {
        pd_collider_def d;
        pd_status st;
        const char* path;
    } cases[9];
    int nc = 0;
    cases[nc].d = plane_def(pd_v3(0, 0, 0), pd_v3(0, 0, 0));
    cases[nc].st = PD_ERR_BAD_SCENE;
    cases[nc++].path = "colliders[1].normal";
    cases[nc].d = box_def(pd_v3(0, 0, 0), pd_v3(1, 0, 1));
    cases[nc].st = PD_ERR_BAD_SCENE;
    cases[nc++].path = "colliders[1].max";
    cases[nc].d = sphere_def(pd_v3(0, 0, 0), 0);
    cases[nc].st = PD_ERR_BAD_SCENE;
    cases[nc++].path = "colliders[1].radius";
    cases[nc].d = cylinder_def(pd_v3(0, 0, 0), pd_v3(0, 1, 0), 1, -1);
    cases[nc].st = PD_ERR_BAD_SCENE;
    cases[nc++].path = "colliders[1].height";
    cases[nc].d = cylinder_def(pd_v3(0, 0, 0), pd_v3(0, 0, 0), 1, 1);
    cases[nc].st = PD_ERR_BAD_SCENE;
    cases[nc++].path = "colliders[1].axis";
    cases[nc].d = sphere_def(pd_v3(0, 0, 0), 1);
    cases[nc].d.friction = -0.1;
    cases[nc].st = PD_ERR_BAD_SCENE;
    cases[nc++].path = "colliders[1].friction";
    static pd_keyframe kf[2] = {{.t = 0.5}, {.t = 0.5}};
    cases[nc].d = sphere_def(pd_v3(0, 0, 0), 1);
    cases[nc].d.keyframes = kf;
    cases[nc].d.keyframe_count = 2;
    cases[nc].st = PD_ERR_BAD_SCENE;
    cases[nc++].path = "colliders[1].keyframes[1].t";
    cases[nc].d = make_def(PD_COLLIDER_MESH);
    cases[nc].d.shape.type = PD_SHAPE_MESH;
    cases[nc].d.shape.scale = 1;
    strcpy(cases[nc].d.shape.path, "/nonexistent/pd_collider_mesh.obj");
    cases[nc].st = PD_ERR_IO;
    cases[nc++].path = "colliders[1].path";
    cases[nc].d = sphere_def(pd_v3(0, 0, 0), 1);
    cases[nc].d.thickness = 0.1;
    cases[nc].st = PD_ERR_BAD_SCENE;
    cases[nc++].path = "colliders[1].thickness";
    size_t bytes_before = pd_bytes_in_use();
    for (int i = 0; i < nc; ++i) {
        defs[0] = sphere_def(pd_v3(0, 0, 0), 1);
        defs[1] = cases[i].d;
        memset(&err, 0, sizeof err);
        pd_status st = pd_colliders_create(defs, 2, &c, &err);
        printf("  case %d: status %d, %s: %s\n", i, (int)st, err.path, err.message);
        PD_CHECK(st == cases[i].st);
        PD_CHECK(strcmp(err.path, cases[i].path) == 0);
        PD_CHECK(c.items == NULL && c.count == 0);
    }
    PD_CHECK_NEAR(pd_bytes_in_use(), bytes_before, 0);
}

static void scatter(size_t n, pd_vec3* pos, pd_vec3* vel, uint8_t* skip) {
    uint64_t seed = 99;
    for (size_t i = 0; i < n; ++i) {
        pos[i] = rand_box(&seed, -1.2, 1.2);
        vel[i] = rand_box(&seed, -2, 2);
        skip[i] = rand01(&seed) < 0.05;
    }
}

PD_TEST(parallel_matches_serial) {
    pd_keyframe kf[2];
    memset(kf, 0, sizeof kf);
    kf[1].t = 1;
    kf[1].translate = pd_v3(0.1, 0, 0);
    kf[1].rotate_axis = pd_v3(0, 0, 1);
    kf[1].rotate_degrees = 30;
    pd_collider_def defs[5];
    defs[0] = plane_def(pd_v3(0, -0.8, 0), pd_v3(0.1, 1, 0));
    defs[0].friction = 0.4;
    defs[1] = box_def(pd_v3(-1, -1, -1), pd_v3(1, 1, 1));
    defs[1].inside = 1;
    defs[1].boundary = PD_BOUNDARY_NO_SLIP;
    defs[1].angular_velocity = pd_v3(0, 0.2, 0);
    defs[2] = sphere_def(pd_v3(0.3, 0, 0), 0.4);
    defs[2].angular_velocity = pd_v3(1, 2, 3);
    defs[2].friction = 0.2;
    defs[3] = cylinder_def(pd_v3(-0.5, -1, 0.3), pd_v3(0, 1, 0), 0.2, 1.5);
    defs[3].keyframes = kf;
    defs[3].keyframe_count = 2;
    defs[3].friction = 1.0;
    defs[4] = cylinder_def(pd_v3(0, -0.5, 0), pd_v3(0, 1, 0), 1.1, 1.5);
    defs[4].inside = 1;
    pd_colliders c;
    pd_error err;
    PD_REQUIRE(pd_colliders_create(defs, 5, &c, &err) == PD_OK);
    pd_colliders_update(&c, 0.4);

    const size_t n = 100000;
    pd_vec3* pos[2] = {PD_NEW_ARRAY(pd_vec3, n), PD_NEW_ARRAY(pd_vec3, n)};
    pd_vec3* vel[2] = {PD_NEW_ARRAY(pd_vec3, n), PD_NEW_ARRAY(pd_vec3, n)};
    uint8_t* skip = PD_NEW_ARRAY(uint8_t, n);
    PD_REQUIRE(pos[0] && pos[1] && vel[0] && vel[1] && skip);
    int threads_before = pd_thread_count();
    size_t touched[2];
    for (int run = 0; run < 2; ++run) {
        scatter(n, pos[run], vel[run], skip);
        pd_set_threads(run + 1);
        touched[run] = pd_colliders_project(&c, n, pos[run], vel[run], skip, NULL, 0.01);
    }
    pd_set_threads(threads_before);
    printf("  touched: %zu (1 thread), %zu (2 threads) of %zu\n", touched[0], touched[1], n);
    PD_CHECK_NEAR(touched[0], touched[1], 0);
    PD_CHECK(touched[0] > n / 10);
    PD_CHECK(memcmp(pos[0], pos[1], n * sizeof(pd_vec3)) == 0);
    PD_CHECK(memcmp(vel[0], vel[1], n * sizeof(pd_vec3)) == 0);
    /* The last collider processed leaves no particle outside the cylinder container. */
    pd_real worst = 0;
    for (size_t i = 0; i < n; ++i)
        if (!skip[i])
            worst = fmin(worst, pd_collider_sdf(&c.items[4], pos[0][i], NULL));
    PD_CHECK_NEAR(worst, 0, 1e-12);
    PD_FREE_ARRAY(pos[0], pd_vec3, n);
    PD_FREE_ARRAY(pos[1], pd_vec3, n);
    PD_FREE_ARRAY(vel[0], pd_vec3, n);
    PD_FREE_ARRAY(vel[1], pd_vec3, n);
    PD_FREE_ARRAY(skip, uint8_t, n);
    pd_colliders_destroy(&c);
}
