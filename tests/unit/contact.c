/* src/contact: the pairs the grid finds are the pairs a brute-force search finds; the
 * gradient is the derivative of the energy (central finite differences), penalty and lagged
 * friction; pair forces are equal and opposite; friction never exceeds Coulomb's mu lambda;
 * bonded particles of one body are no pair, far-apart ones are (self-contact); the candidates'
 * room follows their need. */
#include <stdlib.h>
#include <string.h>

#include "contact/contact.h"
#include "peridot/memory.h"
#include "test.h"
#include "world/world.h"

enum { NP = 240 };

typedef struct cloud {
    pd_vec3 rest[NP], pos[NP];
    pd_real spacing[NP];
    int32_t body[NP], material[NP];
    uint8_t flags[NP];
    pd_particles p;
} cloud;

static double uniform(unsigned* seed) {
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

/* Three bodies of random points in a 0.5 m box, shrunk 4 times from their rest positions,
 * spacings 0.08 / 0.1 / 0.12 m (many pairs, and same-body pairs both bonded and not); two
 * materials; the last body fixed. */
static void make_cloud(cloud* c, unsigned seed) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < NP; ++i) {
        c->pos[i] = pd_v3(0.5 * uniform(&seed), 0.5 * uniform(&seed), 0.5 * uniform(&seed));
        c->rest[i] =
            pd_v3_scale(c->pos[i], 4); /* bodies shrunk since rest: near now, far at rest */
        c->body[i] = i % 3;
        c->material[i] = i % 2;
        c->spacing[i] = 0.08 + 0.02 * c->body[i];
        c->flags[i] = c->body[i] == 2 ? PD_P_FIXED : 0;
    }
    c->p.count = NP;
    c->p.rest = c->rest, c->p.pos = c->pos, c->p.spacing = c->spacing;
    c->p.body = c->body, c->p.material = c->material, c->p.flags = c->flags;
}

static const pd_real k_modulus[2] = {1e5, 4e5}, k_friction[2] = {0.3, 0.6};

static pd_contact_def make_def(int friction) {
    pd_contact_def d = pd_default_contact_def();
    d.horizon = 1.5; /* in spacings */
    d.modulus = k_modulus;
    d.friction = friction ? k_friction : NULL;
    return d;
}

/* The frictionless contact of the cloud (seed 7), evaluated once at its positions. */
static int frictionless_contact_of(cloud* c, pd_contact* ct) {
    make_cloud(c, 7);
    pd_contact_def def = make_def(0);
    pd_real e;
    return pd_contact_init(ct, &def, &c->p) == PD_OK &&
           pd_contact_evaluate(ct, c->pos, &e) == PD_OK;
}

PD_TEST(pairs_match_brute_force) {
    static cloud c;
    pd_contact ct;
    PD_REQUIRE(frictionless_contact_of(&c, &ct));
    size_t brute = 0, same_body = 0;
    for (uint32_t i = 0; i < NP; ++i)
        for (uint32_t j = i + 1; j < NP; ++j) {
            int in = pd_contact_eligible(&ct, i, j) &&
                     pd_v3_len(pd_v3_sub(c.pos[i], c.pos[j])) < pd_contact_distance(&ct, i, j);
            brute += in;
            same_body += in && c.body[i] == c.body[j];
        }
    printf("  pairs: grid %zu, brute force %zu (%zu within one body: self-contact)\n", ct.pairs,
           brute, same_body);
    PD_CHECK(ct.pairs == brute);
    PD_CHECK(brute > 50 && same_body > 0); /* the cloud exercises both kinds */
    pd_contact_free(&ct);
}

PD_TEST(bonded_particles_are_no_pair) {
    static cloud c;
    make_cloud(&c, 3);
    /* particles 0 and 3 (body 0, spacing 0.08 m): bonded within 1.5 spacings at rest */
    c.rest[3] = pd_v3_add(c.rest[0], pd_v3(0.1, 0, 0));
    pd_contact_def def = make_def(0);
    pd_contact ct;
    PD_REQUIRE(pd_contact_init(&ct, &def, &c.p) == PD_OK);
    int bonded = pd_contact_eligible(&ct, 0, 3);
    c.rest[3] = pd_v3_add(c.rest[0], pd_v3(0.2, 0, 0)); /* 2.5 spacings: not bonded */
    int far = pd_contact_eligible(&ct, 0, 3);
    int fixed_pair = pd_contact_eligible(&ct, 2, 5); /* both of the fixed body */
    int other_body = pd_contact_eligible(&ct, 0, 1);
    printf("  eligible: bonded %d, far apart in one body %d, two fixed %d, other body %d\n", bonded,
           far, fixed_pair, other_body);
    PD_CHECK(!bonded && far && !fixed_pair && other_body);
    pd_contact_free(&ct);
}

/* A body whose material renews its families on the current positions (plastic flow, fluids,
 * sand) bonds every pair closer than its horizon at each renewal: two of its particles that
 * started far apart are no contact pair, while the other material's far pair still is, and
 * so are pairs of different bodies. */
PD_TEST(bodies_that_renew_their_families_have_no_self_contact) {
    static cloud c;
    make_cloud(&c, 3);
    /* particles 0 and 6: body 0, materials 0 and 0; 3 and 9: body 0, materials 1 and 1 */
    c.rest[6] = pd_v3_add(c.rest[0], pd_v3(0.5, 0, 0));
    c.rest[9] = pd_v3_add(c.rest[3], pd_v3(0.5, 0, 0));
    static const uint8_t renews[2] = {1, 0};
    pd_contact_def def = make_def(0);
    def.renews = renews;
    pd_contact ct;
    PD_REQUIRE(pd_contact_init(&ct, &def, &c.p) == PD_OK);
    int renewing = pd_contact_eligible(&ct, 0, 6), kept = pd_contact_eligible(&ct, 3, 9);
    int mixed = pd_contact_eligible(&ct, 0, 9), other_body = pd_contact_eligible(&ct, 0, 1);
    printf("  eligible far apart in one body: renewing %d, not renewing %d, one of each %d; "
           "other body %d\n",
           renewing, kept, mixed, other_body);
    PD_CHECK(!renewing && kept && !mixed && other_body);
    pd_contact_free(&ct);
}

/* Pairs closer than d_c at y by brute force. */
static size_t brute_pairs(const pd_contact* ct, const pd_vec3* y) {
    size_t pairs = 0;
    for (uint32_t i = 0; i < NP; ++i)
        for (uint32_t j = i + 1; j < NP; ++j)
            pairs += pd_contact_eligible(ct, i, j) &&
                     pd_v3_len(pd_v3_sub(y[i], y[j])) < pd_contact_distance(ct, i, j);
    return pairs;
}

/* One particle moved far beyond the skin while the rest stay (candidates_stale's few moved):
 * out of the cloud, where it touches nothing, the candidates are kept (no search); beside a
 * particle of another body that was never its candidate, they are found anew. The pairs are
 * the brute force's each time. A test that kept the list whenever few moved would miss the
 * second pair; one that searched whenever any moved would search twice. */
PD_TEST(few_moved_particles_keep_their_candidates_until_they_touch) {
    static cloud c;
    static pd_vec3 y[NP];
    pd_contact ct;
    PD_REQUIRE(frictionless_contact_of(&c, &ct));
    size_t built = ct.grid.builds;
    pd_real e;
    memcpy(y, c.pos, sizeof y);
    y[0] = pd_v3(-0.3, -0.3, -0.3); /* 0.1 m beyond the cloud's corner */
    PD_REQUIRE(pd_contact_evaluate(&ct, y, &e) == PD_OK);
    size_t away = ct.pairs, away_brute = brute_pairs(&ct, y), away_builds = ct.grid.builds;
    uint32_t far = 1; /* the farthest particle of body 1 from 0's start: no candidate of 0 */
    for (uint32_t j = 1; j < NP; j += 3)
        if (pd_v3_len2(pd_v3_sub(c.pos[j], c.pos[0])) > pd_v3_len2(pd_v3_sub(c.pos[far], c.pos[0])))
            far = j;
    y[0] = pd_v3_add(c.pos[far], pd_v3(0.01, 0, 0));
    PD_REQUIRE(pd_contact_evaluate(&ct, y, &e) == PD_OK);
    size_t beside = ct.pairs, beside_brute = brute_pairs(&ct, y);
    printf("  moved out: %zu pairs (brute force %zu), %zu searches; beside particle %u: %zu pairs "
           "(brute force %zu), %zu searches\n",
           away, away_brute, away_builds - built, far, beside, beside_brute,
           ct.grid.builds - away_builds);
    PD_CHECK(away == away_brute && away_builds == built);
    PD_CHECK(beside == beside_brute && ct.grid.builds == away_builds + 1);
    pd_contact_free(&ct);
}

/* Energy at y with particle i moved by h along axis a. */
static double energy_moved(pd_contact* ct, pd_vec3* y, int i, int a, double h) {
    pd_vec3 keep = y[i];
    double* v = &y[i].x;
    v[a] += h;
    pd_real e;
    pd_contact_evaluate(ct, y, &e);
    y[i] = keep;
    return e;
}

static void check_gradient(int friction) {
    static cloud c;
    make_cloud(&c, 11);
    pd_contact_def def = make_def(friction);
    pd_contact ct;
    PD_REQUIRE(pd_contact_init(&ct, &def, &c.p) == PD_OK);
    static pd_vec3 x0[NP], y[NP], g[NP];
    memcpy(x0, c.pos, sizeof x0);
    PD_REQUIRE(pd_contact_begin_step(&ct, x0, 0.01) == PD_OK);
    unsigned seed = 5;
    for (int i = 0; i < NP; ++i) /* a move of up to 5 mm: slides far beyond eps = 1e-5 m */
        y[i] = pd_v3_add(x0[i], pd_v3(0.01 * (uniform(&seed) - 0.5), 0.01 * (uniform(&seed) - 0.5),
                                      0.01 * (uniform(&seed) - 0.5)));
    pd_real e;
    PD_REQUIRE(pd_contact_evaluate(&ct, y, &e) == PD_OK);
    memcpy(g, ct.grad, sizeof g);
    pd_vec3 sum = pd_v3(0, 0, 0);
    double sum_abs = 0, worst = 0, h = 1e-7;
    for (int i = 0; i < NP; ++i) {
        sum = pd_v3_add(sum, g[i]);
        sum_abs += pd_v3_len(g[i]);
    }
    for (int i = 0; i < NP; i += 7)
        for (int a = 0; a < 3; ++a) {
            double fd = (energy_moved(&ct, y, i, a, h) - energy_moved(&ct, y, i, a, -h)) / (2 * h);
            double an = (&g[i].x)[a];
            worst = fmax(worst, fabs(fd - an) / (fabs(an) + 1e-3 * sum_abs / NP));
        }
    printf("  %s: energy %.4g J, %zu pairs, %zu friction pairs (%zu sticking); finite "
           "differences vs gradient: worst relative error %.2g; |sum of forces| %.2g of "
           "sum |f| %.3g N\n",
           friction ? "penalty + friction" : "penalty", e, ct.pairs, ct.friction_pairs, ct.sticking,
           worst, pd_v3_len(sum), sum_abs);
    PD_CHECK(worst < 1e-5);
    PD_CHECK(pd_v3_len(sum) <= 1e-12 * sum_abs);
    PD_CHECK(ct.pairs > 20);
    if (friction)
        PD_CHECK(ct.friction_pairs > 20);
    pd_contact_free(&ct);
}

PD_TEST(gradient_is_the_energy_derivative_penalty) {
    check_gradient(0);
}
PD_TEST(gradient_is_the_energy_derivative_with_friction) {
    check_gradient(1);
}

/* Two particles of different bodies pressed together (normal force lambda at x0), then slid
 * tangentially: the friction force is mu lambda once sliding (Coulomb), proportional to the
 * slip below eps (sticking). */
PD_TEST(friction_force_is_bounded_by_coulomb) {
    static cloud c;
    make_cloud(&c, 1);
    for (int i = 0; i < NP; ++i) /* everyone far away but particles 0 (body 0), 1 (body 1) */
        c.pos[i] = pd_v3(10.0 * i, 0, 0);
    c.pos[0] = pd_v3(0, 0, 0);
    c.pos[1] = pd_v3(0, 0.08, 0); /* d_c = 0.09: pressed 0.01 m */
    pd_contact_def def = make_def(1), def0 = make_def(0);
    pd_contact ct, penalty; /* the friction force: the difference of the two gradients */
    PD_REQUIRE(pd_contact_init(&ct, &def, &c.p) == PD_OK);
    PD_REQUIRE(pd_contact_init(&penalty, &def0, &c.p) == PD_OK);
    static pd_vec3 y[NP];
    memcpy(y, c.pos, sizeof y);
    double dt = 0.01, lambda = pd_contact_stiffness(&ct, 0, 1) * 0.01;
    double mu = sqrt(k_friction[0] * k_friction[1]), eps = def.slip_velocity * dt;
    PD_REQUIRE(pd_contact_begin_step(&ct, c.pos, dt) == PD_OK);
    double slides[3] = {0.25 * eps, 3 * eps, 100 * eps}, f[3];
    for (int k = 0; k < 3; ++k) {
        y[1] = pd_v3(slides[k], 0.08, 0);
        pd_real e;
        PD_REQUIRE(pd_contact_evaluate(&ct, y, &e) == PD_OK);
        PD_REQUIRE(pd_contact_evaluate(&penalty, y, &e) == PD_OK);
        f[k] = pd_v3_len(pd_v3_sub(ct.grad[1], penalty.grad[1]));
    }
    printf("  mu lambda = %.4g N; tangential force at slips of 0.25, 3, 100 eps: %.4g, %.4g, "
           "%.4g N\n",
           mu * lambda, f[0], f[1], f[2]);
    PD_CHECK_REL(f[0], 0.25 * mu * lambda, 1e-9);
    PD_CHECK_REL(f[1], mu * lambda, 1e-9);
    PD_CHECK_REL(f[2], mu * lambda, 1e-9);
    pd_contact_free(&ct);
    pd_contact_free(&penalty);
}

/* Allocations the library makes, counted by an allocator hook (pd_set_allocator). */
static long g_allocations;
static void* counting_alloc(size_t bytes) {
    __atomic_add_fetch(&g_allocations, 1, __ATOMIC_RELAXED);
    return malloc(bytes);
}

/* One step of a method at y (its start and end): the begin_step, the candidates found anew (a
 * reorder: every step searches), an evaluation. */
static void contact_step(pd_contact* ct, const pd_vec3* y) {
    pd_real e;
    pd_contact_particles_reordered(ct);
    PD_REQUIRE(pd_contact_begin_step(ct, y, 0.01) == PD_OK);
    PD_REQUIRE(pd_contact_evaluate(ct, y, &e) == PD_OK);
}

/* The candidates' room (contact.h's rule): the cloud compressed (its rest positions shrunk 4
 * times: many candidates) for a step, then at its rest positions (few): after
 * PD_CONTACT_QUIET_STEPS quiet steps the pair stiffnesses and the list are sized to the few
 * (their list before keep_eligible, a quarter spare), under a quarter of the room, the bytes
 * held fall, and 10 more steps at rest allocate nothing;
 * then compressed and at rest in turn (the need swinging by more than 4 times every step):
 * the room grows back once and nothing is allocated after, as no 3 quiet steps come in a row.
 * Buffers that only grow fail the fitted room; a room given back at every quiet step
 * allocates in the swing. */
PD_TEST(candidate_room_follows_the_need) {
    static cloud c;
    make_cloud(&c, 11);
    pd_contact_def def = make_def(0);
    pd_contact ct;
    PD_REQUIRE(pd_contact_init(&ct, &def, &c.p) == PD_OK);
    contact_step(&ct, c.pos);
    size_t many = ct.near.offsets[NP], room = ct.pair_capacity, bytes = pd_bytes_in_use();
    for (int k = 0; k < PD_CONTACT_QUIET_STEPS + 1; ++k)
        contact_step(&ct, c.rest);
    size_t few = ct.near.offsets[NP];
    long freed = (long)bytes - (long)pd_bytes_in_use();
    printf("  compressed: %zu candidates, room %zu; at rest: %zu, room %zu (list %zu), %ld bytes "
           "given back\n",
           many, room, few, ct.pair_capacity, ct.near.indices_capacity, freed);
    PD_REQUIRE(16 * (few + 16) < room); /* the cloud makes the case */
    /* fitted to the list before keep_eligible (at least the eligible few), a quarter spare */
    PD_CHECK(ct.pair_capacity >= few && 4 * ct.pair_capacity < room);
    PD_CHECK(ct.near.indices_capacity == ct.pair_capacity);
    PD_CHECK(freed >= (long)((room - ct.pair_capacity) * (sizeof(pd_real) + sizeof(uint32_t))));
    pd_set_allocator(counting_alloc, NULL);
    g_allocations = 0;
    for (int k = 0; k < 10; ++k)
        contact_step(&ct, c.rest);
    long at_rest = g_allocations;
    contact_step(&ct, c.pos);
    contact_step(&ct, c.rest);
    g_allocations = 0;
    for (int k = 0; k < 12; ++k)
        contact_step(&ct, k % 2 ? c.rest : c.pos);
    long swinging = g_allocations;
    pd_set_allocator(NULL, NULL);
    printf("  allocations: %ld in 10 steps at rest, %ld in 12 swinging steps (room %zu)\n", at_rest,
           swinging, ct.pair_capacity);
    PD_CHECK(at_rest == 0);
    PD_CHECK(swinging == 0);
    PD_CHECK(ct.pair_capacity >= many);
    pd_contact_free(&ct);
}
