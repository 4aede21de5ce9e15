/* Contact between bodies (src/contact) in projective_pd: particle pairs of different bodies,
 * and far-apart parts of one body, repel through a penalty energy in the implicit solve.
 * References: static equilibrium of a stack and of a ball on a fixed body (heights from the
 * geometry of the sampled bodies: touching surfaces are one spacing apart centre to centre). Each
 * test also runs (or names) the same scene with contact off, where the bodies pass through each
 * other, so that the checks can fail. */
#include "parallel/parallel.h"
#include "projective_pd_support.h"

typedef struct body_sum {
    double mass;
    pd_vec3 momentum, centre; /* kg m/s, m */
    double min_y;             /* lowest particle centre (m) */
} body_sum;

static body_sum sum_body(const pd_particles* p, int body) {
    body_sum b = {0, pd_v3(0, 0, 0), pd_v3(0, 0, 0), INFINITY};
    for (size_t i = 0; i < p->count; ++i) {
        if (p->body[i] != body)
            continue;
        b.mass += p->mass[i];
        b.momentum = pd_v3_madd(b.momentum, p->mass[i], p->vel[i]);
        b.centre = pd_v3_madd(b.centre, p->mass[i], p->pos[i]);
        b.min_y = fmin(b.min_y, p->pos[i].y);
    }
    b.centre = pd_v3_scale(b.centre, 1.0 / b.mass);
    return b;
}

/* Smallest distance between a particle of body a and one of body b (brute force). */
static double min_distance_between(const pd_particles* p, int a, int b) {
    double d2 = INFINITY;
    for (size_t i = 0; i < p->count; ++i) {
        if (p->body[i] != a)
            continue;
        for (size_t j = 0; j < p->count; ++j)
            if (p->body[j] == b)
                d2 = fmin(d2, pd_v3_len2(pd_v3_sub(p->pos[i], p->pos[j])));
    }
    return sqrt(d2);
}

static double kinetic_energy(const pd_particles* p) {
    double e = 0;
    for (size_t i = 0; i < p->count; ++i)
        e += 0.5 * p->mass[i] * pd_v3_len2(p->vel[i]);
    return e;
}

static int step_once(pd_test_sim* t) {
    pd_error err = {0};
    pd_status st = pd_world_step(t->world, &err);
    if (st != PD_OK)
        printf("  step failed: %s %s\n", pd_status_string(st), err.message);
    return st == PD_OK;
}

/* The head-on collision of two spheres (momentum, no interpenetration, restitution, and the
 * control with contact off) is collision.c's, the same for every method. */

/* ---------------------------------------------------------------- resting on each other */

/* A fixed slab (top face y = 0) and three blocks 0.04 m tall dropped from 2 mm gaps. At rest
 * block k's bottom face (its lowest particle centre minus half a spacing) is at k * 0.04 m:
 * surfaces touch when the particle layers are one spacing apart. */
static const char* k_stack =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":40},"
    "\"time\":{\"dt\":0.005,\"fps\":20,\"frames\":20},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,"
    "\"contact_friction\":0.5}},"
    "\"bodies\":[{\"name\":\"ground\",\"material\":\"m\",\"spacing\":0.01,\"kind\":\"fixed\","
    "\"shape\":{\"type\":\"box\",\"min\":[-0.06,-0.02,-0.06],\"max\":[0.06,0,0.06]}},"
    "{\"name\":\"b0\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[-0.03,0.002,-0.03],\"max\":[0.03,0.042,0.03]}},"
    "{\"name\":\"b1\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[-0.03,0.044,-0.03],\"max\":[0.03,0.084,0.03]}},"
    "{\"name\":\"b2\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[-0.03,0.086,-0.03],\"max\":[0.03,0.126,0.03]}}]}";

PD_TEST(stack_of_three_blocks_rests) {
    const double spacing = 0.01, height = 0.04, t_end = 1.0;
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_stack, NULL, 0));
    const pd_particles* p = &t.world->particles;
    double closest = INFINITY;
    while (t.world->time < t_end - 1e-9) {
        PD_REQUIRE(step_once(&t));
        for (int b = 0; b < 3; ++b)
            closest = fmin(closest, min_distance_between(p, b, b + 1));
    }
    double ke = kinetic_energy(p);
    /* yardstick: the potential energy the drop released, m g (sum of the gaps) */
    double released = sum_body(p, 1).mass * 9.81 * 0.002 * (1 + 2 + 3);
    printf("  after %.1f s: kinetic energy %.3g J (the drop released %.3g J)\n", t_end, ke,
           released);
    PD_CHECK(ke < 1e-4 * released);
    for (int b = 1; b <= 3; ++b) {
        double bottom = sum_body(p, b).min_y - 0.5 * spacing;
        printf("  block %d: bottom face at %.5f m, stacking height %.5f m\n", b - 1, bottom,
               (b - 1) * height);
        PD_CHECK_NEAR(bottom, (b - 1) * height, 0.25 * spacing);
    }
    printf("  closest particles of touching bodies over the run: %.4g m\n", closest);
    PD_CHECK(closest >= 0.5 * spacing);
    pd_test_sim_close(&t);
}

/* A ball (radius 0.05 m) dropped from 2 cm onto a fixed box: it rests with its bottom face on
 * the box's top face (y = 0), its centre 2 cm lower than at the start plus the Hertz approach
 * of an elastic sphere on a rigid flat (Johnson 1985, Contact Mechanics, Sec. 4.2):
 * delta = (9 F^2 / (16 R E*^2))^(1/3), E* = E / (1 - nu^2), F = m g. Friction holds the
 * ball on top of the box's particles: without it the ball slides off the peaks of the
 * particle lattice into its hollows (an unstable equilibrium, measured: it starts moving
 * after 0.5 s at rest). With contact off it falls through. */
static const char* k_ball_on_box =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":40},"
    "\"time\":{\"dt\":0.005,\"fps\":20,\"frames\":20},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e6,\"poisson_ratio\":0.3,"
    "\"contact_friction\":0.5}},"
    "\"bodies\":[{\"name\":\"box\",\"material\":\"m\",\"spacing\":0.01,\"kind\":\"fixed\","
    "\"shape\":{\"type\":\"box\",\"min\":[-0.06,-0.03,-0.06],\"max\":[0.06,0,0.06]}},"
    "{\"name\":\"ball\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.07,0],\"radius\":0.05}}]}";

static int drop_ball(const char* const* sets, int set_count, double t_end, double* bottom,
                     double* ke, double* drop_of_centre, double* mass) {
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_ball_on_box, sets, set_count))
        return 0;
    const pd_particles* p = &t.world->particles;
    double c0 = sum_body(p, 1).centre.y;
    int ok = pd_test_sim_run(&t, t_end);
    body_sum b = sum_body(p, 1);
    *bottom = b.min_y - 0.005;
    *ke = kinetic_energy(p);
    *drop_of_centre = c0 - b.centre.y;
    *mass = b.mass;
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(ball_rests_on_fixed_box) {
    const double spacing = 0.01, E = 1e6, nu = 0.3, R = 0.05;
    double bottom, ke, drop, mass;
    PD_REQUIRE(drop_ball(NULL, 0, 1.0, &bottom, &ke, &drop, &mass));
    double estar = E / (1 - nu * nu), F = mass * 9.81;
    double hertz = cbrt(9 * F * F / (16 * R * estar * estar));
    printf("  ball after 1 s: bottom face at %.5f m (box top 0), centre dropped %.5f m "
           "(0.02 m + Hertz approach %.5f m), kinetic energy %.3g J\n",
           bottom, drop, hertz, ke);
    PD_CHECK_NEAR(bottom, 0, 0.25 * spacing);
    PD_CHECK_NEAR(drop, 0.02 + hertz, 0.25 * spacing);
    PD_CHECK(ke < 1e-6 * mass * 9.81 * 0.02); /* against the energy the drop released */
    const char* off[] = {"solver.contact=false", "materials.m.contact_friction=0"};
    PD_REQUIRE(drop_ball(off, 2, 0.3, &bottom, &ke, &drop, &mass));
    printf("  contact off: bottom face at %.4f m after 0.3 s (falls through)\n", bottom);
    PD_CHECK(bottom < -0.1);
}

/* ---------------------------------------------------------------- self-contact */

/* A soft bar (0.4 m along x) whose halves are set swinging up about its middle, like a book
 * closing: its far halves meet. They are one body, bonded only within the horizon, so only
 * self-contact keeps them apart; with contact off they swing through each other. */
static const char* k_fold =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":40},"
    "\"time\":{\"dt\":0.002,\"fps\":50,\"frames\":15},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":2e4,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[-0.2,0,0],\"max\":[0.2,0.02,0.04]}}]}";

/* Smallest distance between the outer parts (|x_rest| > 0.05 m) of the two halves. */
static double halves_distance(const pd_particles* p) {
    double d2 = INFINITY;
    for (size_t i = 0; i < p->count; ++i) {
        if (p->rest[i].x > -0.05)
            continue;
        for (size_t j = 0; j < p->count; ++j)
            if (p->rest[j].x > 0.05)
                d2 = fmin(d2, pd_v3_len2(pd_v3_sub(p->pos[i], p->pos[j])));
    }
    return sqrt(d2);
}

static int fold(const char* const* sets, int set_count, double* closest, double* end_gap) {
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_fold, sets, set_count))
        return 0;
    pd_particles* p = &t.world->particles;
    const double omega = 12; /* rad/s: each half turns up about the bar's middle */
    for (size_t i = 0; i < p->count; ++i) {
        double x = p->rest[i].x, y = p->rest[i].y - 0.01;
        double sign = x < 0 ? -1 : 1; /* left half turns clockwise seen from +z, right back */
        p->vel[i] = pd_v3(-sign * omega * y, omega * fabs(x), 0);
    }
    *closest = INFINITY;
    int ok = 1;
    for (int k = 0; k < 150 && ok; ++k) { /* 0.3 s */
        ok = step_once(&t);
        *closest = fmin(*closest, halves_distance(p));
    }
    double left = INFINITY, right = -INFINITY; /* x of the two ends */
    for (size_t i = 0; i < p->count; ++i) {
        if (p->rest[i].x < -0.19)
            left = fmin(left, p->pos[i].x);
        if (p->rest[i].x > 0.19)
            right = fmax(right, p->pos[i].x);
    }
    *end_gap = right - left;
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(folding_bar_does_not_pass_through_itself) {
    const double spacing = 0.01;
    double closest, gap;
    PD_REQUIRE(fold(NULL, 0, &closest, &gap));
    printf("  self-contact on: closest outer particles of the two halves %.4g m, ends %.4f m "
           "apart in x (> 0: not crossed)\n",
           closest, gap);
    PD_CHECK(closest >= 0.5 * spacing);
    PD_CHECK(gap > 0);
    const char* off[] = {"solver.contact=false"};
    PD_REQUIRE(fold(off, 1, &closest, &gap));
    printf("  contact off: closest %.4g m, ends %.4f m apart in x (crossed when < 0)\n", closest,
           gap);
    PD_CHECK(closest < 0.5 * spacing); /* the fold does bring the halves through each other */
}

/* ---------------------------------------------------------------- fast impact, lattices apart */

/* Two spheres at +-1.2 m/s whose sampling lattices are offset (by 0.3 and 0.2 spacings), one
 * spacing of relative motion per step: the surface particles of one could slip between those
 * of the other. Reference: implicit Euler dissipates (the total energy, kinetic + elastic +
 * contact, never grows; a self-consistency check of the solve, not an independent law) and
 * the bodies stay apart. Measured with contact_stiffness 1 and no floor on the pair distance in
 * the line search (the first version): the spheres slid through each other's lattices and the
 * total energy went from 0.79 J to 3.30 J. */
static const char* k_fast =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":30},"
    "\"time\":{\"dt\":0.0041666666667,\"fps\":30,\"frames\":3},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"a\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1.2,0,0],"
    "\"shape\":{\"type\":\"sphere\",\"center\":[-0.06,0.003,0.002],\"radius\":0.05}},"
    "{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[-1.2,0,0],"
    "\"shape\":{\"type\":\"sphere\",\"center\":[0.06,0,0],\"radius\":0.05}}]}";

PD_TEST(fast_impact_between_offset_lattices_creates_no_energy) {
    const double spacing = 0.01;
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_fast, NULL, 0));
    pd_particles* p = &t.world->particles;
    pd_ppd_state* s = pd_test_ppd(&t);
    double e0 = kinetic_energy(p), e_max = e0, closest = INFINITY, e = e0;
    for (int k = 0; k < 30; ++k) {
        PD_REQUIRE(step_once(&t));
        closest = fmin(closest, min_distance_between(p, 0, 1));
        /* elastic + contact energy at the positions (no gravity, no inertia term there) */
        e = kinetic_energy(p) + pd_ppd_elastic_energy(s, p->pos, p->flags);
        e_max = fmax(e_max, e);
    }
    body_sum a = sum_body(p, 0), b = sum_body(p, 1);
    printf("  total energy: start %.4f J, largest %.4f J, end %.4f J; closest particles %.4g m; "
           "after: v_a = %.3f, v_b = %.3f m/s\n",
           e0, e_max, e, closest, a.momentum.x / a.mass, b.momentum.x / b.mass);
    PD_CHECK(e_max <= e0 * (1 + 1e-3));
    PD_CHECK(closest >= 0.5 * spacing);
    PD_CHECK(a.momentum.x < 0 && b.momentum.x > 0); /* bounced */
    pd_test_sim_close(&t);
}

/* The same collision on 1 and 2 threads: bit-identical positions (contact sums are per-chunk
 * partials added in order; each particle gathers its own pair forces). Reference:
 * self-consistency (DESIGN.md, determinism). The spheres are larger than above (radius
 * 0.065 m, 2306 particles): pd_parallel_for runs fewer than four chunks of 512 serially, so
 * with the 1104 particles of k_fast both runs were serial and the comparison could not fail. */
static int run_fast(int threads, pd_vec3* out, size_t cap, size_t* n) {
    pd_set_threads(threads);
    pd_test_sim t;
    const char* sets[] = {"bodies[0].shape.radius=0.065", "bodies[1].shape.radius=0.065",
                          "bodies[0].shape.center=[-0.075,0.003,0.002]",
                          "bodies[1].shape.center=[0.075,0,0]"};
    int ok = pd_test_sim_open(&t, k_fast, sets, 4);
    for (int k = 0; ok && k < 12; ++k)
        ok = step_once(&t);
    if (ok) {
        const pd_particles* p = &t.world->particles;
        *n = p->count < cap ? p->count : cap;
        for (size_t i = 0; i < *n; ++i)
            out[p->id[i]] = p->pos[i]; /* by id: independent of the ordering */
    }
    if (t.world)
        pd_test_sim_close(&t);
    pd_set_threads(0);
    return ok;
}

PD_TEST(contact_same_bits_on_any_thread_count) {
    enum { CAP = 4096 };
    static pd_vec3 one[CAP], two[CAP];
    size_t n1 = 0, n2 = 0;
    PD_REQUIRE(run_fast(1, one, CAP, &n1));
    PD_REQUIRE(run_fast(2, two, CAP, &n2));
    /* more than four chunks of 512, so that the loops really run on both threads */
    PD_REQUIRE(n1 == n2 && n1 < CAP && n1 > 4 * 512);
    size_t differ = 0;
    for (size_t i = 0; i < n1; ++i)
        differ += memcmp(&one[i], &two[i], sizeof(pd_vec3)) != 0;
    printf("  %zu particles after 12 steps of an impact: %zu differ between 1 and 2 threads\n", n1,
           differ);
    PD_CHECK(differ == 0);
}

/* Nothing accepted that does nothing: contact_friction with contact off is refused, naming
 * the material. */
PD_TEST(contact_friction_without_contact_is_refused) {
    const char* sets[] = {"solver.contact=false"};
    pd_scene scene;
    pd_error err = {0};
    pd_status st =
        pd_scene_parse(k_stack, "test.json", PD_SOURCE_DIR "/scenes", sets, 1, &scene, &err);
    printf("  status %s, path '%s': %s\n", pd_status_string(st), err.path, err.message);
    PD_CHECK(st == PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, "materials.m") == 0);
    if (st == PD_OK)
        pd_scene_free(&scene);
}
