/* Two bodies colliding, for every method with contact between bodies. References: Newton's
 * third law (the total momentum is conserved: within 1 %), impenetrability (the closest
 * particles of the two bodies stay at least half a spacing apart), and the exchange of
 * velocities of equal elastic spheres in a head-on collision with a coefficient of restitution
 * 0 < e <= 1 (a method may damp, never create energy). The same scene with contact off lets
 * the spheres pass through each other, so that the checks can fail. contact.c tests
 * projective_pd's contact further (stacks, a ball at rest, self-contact, fast impacts). */
#include "methods.h"

#define SPACING 0.01
#define VA0     1.0
#define VB0     (-0.2)

/* Two equal spheres (radius 5 spacings, 515 particles each, E 1e5 Pa), A at +1 m/s, B at
 * -0.2 m/s, 2 cm apart: the total momentum is not zero and the set-up is not
 * mirror-symmetric, so conservation is a real check. Every method steps "auto" (projective_pd
 * 4 ms, hyperelastic_pd 10 ms: 1.2 cm of approach a step, sbpd 0.9 of its bound); the implicit
 * methods take 100 iterations. */
static const char* k_spheres =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"projective_pd\":{"
    "\"iterations\":100,\"tolerance\":1e-7},\"hyperelastic_pd\":{\"iterations\":100}},"
    "\"time\":{\"dt\":\"auto\",\"fps\":50,\"frames\":6},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"a\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1.0,0,0],"
    "\"shape\":{\"type\":\"sphere\",\"center\":[-0.06,0,0],\"radius\":0.05}},"
    "{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[-0.2,0,0],"
    "\"shape\":{\"type\":\"sphere\",\"center\":[0.06,0,0],\"radius\":0.05}}]}";

typedef struct body_sum {
    double mass, px, cx; /* kg, kg m/s along x, centre x (m) */
    double lo, hi;       /* smallest and largest x of a particle (m) */
} body_sum;

static body_sum sum_body(const pd_particles* p, int body) {
    body_sum b = {0, 0, 0, INFINITY, -INFINITY};
    for (size_t i = 0; i < p->count; ++i) {
        if (p->body[i] != body)
            continue;
        b.mass += p->mass[i];
        b.px += p->mass[i] * p->vel[i].x;
        b.cx += p->mass[i] * p->pos[i].x;
        b.lo = fmin(b.lo, p->pos[i].x);
        b.hi = fmax(b.hi, p->pos[i].x);
    }
    b.cx /= b.mass;
    return b;
}

static pd_vec3 total_momentum(const pd_particles* p) {
    pd_vec3 m = pd_v3(0, 0, 0);
    for (size_t i = 0; i < p->count; ++i)
        m = pd_v3_madd(m, p->mass[i], p->vel[i]);
    return m;
}

/* Closest particles of bodies 0 and 1, over the pairs within a spacing of the other body's
 * extent along x (the collision is along x). */
static double closest(const pd_particles* p) {
    body_sum a = sum_body(p, 0), b = sum_body(p, 1);
    double d2 = INFINITY;
    for (size_t i = 0; i < p->count; ++i) {
        if (p->body[i] != 0 || p->pos[i].x < b.lo - SPACING)
            continue;
        for (size_t j = 0; j < p->count; ++j)
            if (p->body[j] == 1 && p->pos[j].x < a.hi + SPACING)
                d2 = fmin(d2, pd_v3_len2(pd_v3_sub(p->pos[i], p->pos[j])));
    }
    return sqrt(d2);
}

typedef struct collision {
    double momentum_error; /* max |P - P0| / |P0| over the steps */
    double min_distance;   /* m, over the steps */
    double min_gap;        /* m, over the steps: b's lowest x less a's highest (their surfaces' gap
                            * less a spacing) */
    double va, vb;         /* x velocities of the centres of mass at the end (m/s) */
    double gap;            /* x distance of the centres at the end (m) */
} collision;

/* Runs to t_end (0.12 s: the contact lasts about 0.03 s). */
static int collide(const char* const* sets, int count, double t_end, collision* out) {
    pd_test_sim t;
    if (!pd_test_method_open(&t, k_spheres, sets, count))
        return 0;
    const pd_particles* p = &t.world->particles;
    pd_vec3 p0 = total_momentum(p);
    out->momentum_error = 0;
    out->min_distance = INFINITY;
    out->min_gap = INFINITY;
    int ok = 1;
    while (ok && t.world->time < t_end - 1e-9) {
        ok = pd_test_sim_run(&t, t.world->time + t.world->def.dt);
        pd_vec3 dp = pd_v3_sub(total_momentum(p), p0);
        out->momentum_error = fmax(out->momentum_error, pd_v3_len(dp) / pd_v3_len(p0));
        out->min_distance = fmin(out->min_distance, closest(p));
        out->min_gap = fmin(out->min_gap, sum_body(p, 1).lo - sum_body(p, 0).hi);
    }
    body_sum a = sum_body(p, 0), b = sum_body(p, 1);
    out->va = a.px / a.mass;
    out->vb = b.px / b.mass;
    out->gap = b.cx - a.cx;
    printf("  %s, dt %.3g s: v_a = %.4f m/s, v_b = %.4f m/s (elastic exchange: %.2f, %.2f), "
           "centres %.4f m apart; closest particles %.4g m, facing layers %.4g m apart at the "
           "closest\n",
           g_pd_method.method->name, t.world->def.dt, out->va, out->vb, VB0, VA0, out->gap,
           out->min_distance, out->min_gap);
    pd_test_sim_close(&t);
    return ok;
}

static void spheres(void) {
    collision c;
    PD_METHOD_REQUIRE(collide(NULL, 0, 0.12, &c));
    double e = (c.vb - c.va) / (VA0 - VB0), vcm = 0.5 * (VA0 + VB0);
    pd_test_method_check("momentum change / momentum", c.momentum_error, 0, 0.01, 0);
    pd_test_method_bound("closest particles / spacing", c.min_distance / SPACING, 0.5, INFINITY);
    printf("  coefficient of restitution e = %.3f\n", e);
    PD_CHECK(c.va - vcm < 0 && c.vb - vcm > 0); /* each sphere's velocity reversed */
    PD_CHECK(e > 0 && e <= 1);
    PD_CHECK(c.gap > 0.1); /* moving apart, beyond their diameter: not through */
    const char* off[] = {"solver.contact=false"};
    collision through;
    PD_METHOD_REQUIRE(collide(off, 1, 0.05, &through)); /* they meet at 0.017 s */
    printf("  contact off: closest particles %.4g m (they pass through)\n", through.min_distance);
    PD_CHECK(through.min_distance < 0.5 * SPACING); /* the checks above can fail */
}

/* mpm: a velocity field per body (multi-field contact, Bardenhagen et al. 2000; src/grid/
 * grid_fields.h), in contact where the particles' surfaces meet (measured 0.0067 m between the
 * closest particles, 0.67 spacing; 0.022 m while the fields met wherever they shared nodes). */
PD_TEST_EACH_METHOD(spheres_collide_head_on, PD_CAP_CONTACT, spheres)
