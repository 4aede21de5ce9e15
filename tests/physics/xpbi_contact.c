/* xpbi's contact between bodies (solver.xpbi.contact; src/contact/contact_velocity.h): Coulomb
 * friction between two bodies. The head-on collision of two spheres (momentum, no
 * interpenetration, the bodies separate, and passing through with contact off) is the
 * cross-method collision.c's. */
#include <string.h>

#include "peridot/parallel.h"
#include "support.h"

#define G     9.81
#define THETA (20 * PD_PI / 180)

/* A 0.06 x 0.03 x 0.06 m block (spacing 1 cm: 6 x 3 x 6 = 108 particles, E 1e5 Pa) resting on a
 * 0.3 x 0.025 x 0.1 m slab of the same material (spacing 1.25 cm: 24 x 2 x 8) pinned in place,
 * gravity tilted 20 degrees along x, the material's contact_friction mu (a pair's sqrt(mu mu) =
 * mu). Reference: Coulomb's block on an incline, whose velocity along the slope grows at
 * g (sin 20 - mu cos 20) while mu < tan 20 = 0.364 and stays 0 above: the slope of a
 * least-squares line through the block's mean velocity over 0.1-0.3 s. The block's bottom
 * layer starts d_c = 1.125 cm above the slab's top layer (the sampled surfaces touch). Two
 * spacings, so that the faces' lattices do not lock into each other (one spacing, 0.6 of it
 * apart: a frictionless block did not move with the pairs' normal along their line, and slides
 * at 0.91 of g sin 20 along the surfaces' normal). Returns the slope, *moved the way from 0.02
 * to 0.3 s (m). */
static double slide(double mu, double* moved) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":50,"
             "\"frames\":15},\"gravity\":[%.17g,%.17g,0],\"materials\":{\"m\":{\"density\":1000,"
             "\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,\"contact_friction\":%.17g}},"
             "\"bodies\":[{\"name\":\"slab\",\"material\":\"m\",\"spacing\":0.0125,"
             "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.3,0.025,0.1]},"
             "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[1,1,1]}}]},"
             "{\"name\":\"block\",\"material\":\"m\",\"spacing\":0.01,"
             "\"shape\":{\"type\":\"box\",\"min\":[0.02,0.025,0.02],"
             "\"max\":[0.08,0.055,0.08]}}]}",
             G * sin(THETA), -G * cos(THETA), mu);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return NAN;
    const pd_particles* p = &t.world->particles;
    double st = 0, sv = 0, stt = 0, stv = 0, x0 = NAN, x = 0, lowest = INFINITY;
    int k = 0;
    for (int frame = 1; frame <= 15; ++frame) {
        if (!pd_test_sim_run(&t, frame / 50.0))
            return NAN;
        double m = 0, mv = 0, mx = 0, time = frame / 50.0;
        for (size_t i = 0; i < p->count; ++i)
            if (p->body[i] == 1) {
                m += p->mass[i], mv += p->mass[i] * p->vel[i].x, mx += p->mass[i] * p->pos[i].x;
                lowest = fmin(lowest, p->pos[i].y);
            }
        x = mx / m;
        if (isnan(x0))
            x0 = x;
        if (time > 0.1 - 1e-9)
            st += time, sv += mv / m, stt += time * time, stv += time * mv / m, ++k;
    }
    pd_test_sim_close(&t);
    *moved = x - x0;
    double a = (k * stv - st * sv) / (k * stt - st * st);
    printf("  mu %.2f: acceleration along the slope %.4f m/s^2 (Coulomb %.4f), moved %.4f m from "
           "0.02 to 0.3 s; lowest block particle %.5f m (slab's top layer at 0.01875, d_c 0.01125 "
           "above it)\n",
           mu, a, fmax(G * (sin(THETA) - mu * cos(THETA)), 0), *moved, lowest);
    return a;
}

/* Sliding at mu 0 and 0.2 within 5 % of Coulomb's acceleration; at mu 1 it sticks (less than
 * 5 mm from 0.02 to 0.3 s, the start's settling; decelerating). 12 s CPU for the three. */
PD_TEST(block_slides_on_a_body_as_coulomb) {
    double moved;
    double a0 = slide(0, &moved);
    PD_CHECK_REL(a0, G * sin(THETA), 0.05);
    double a2 = slide(0.2, &moved);
    PD_CHECK_REL(a2, G * (sin(THETA) - 0.2 * cos(THETA)), 0.05);
    double a10 = slide(1, &moved);
    PD_CHECK(fabs(a10) < 0.05 && fabs(moved) < 5e-3);
}

/* At mu 0.5 (> tan 20 = 0.364) Coulomb's block sticks. It crept at 0.189 m/s^2 (1.4 cm) while a
 * pair acted only within |d| < d_c: a block particle over a hollow of the slab's lattice touched
 * no pair, sank, and was popped out by the next pair it met, with no friction in between (at dt
 * 1e-4 s it crept at 2.4 m/s^2). A pair now acts within d_c across the normal
 * (contact_velocity.c), so a face is one plane. */
PD_TEST(block_sticks_on_a_body_at_mu_0_5) {
    double moved, a5 = slide(0.5, &moved);
    PD_CHECK(fabs(a5) < 0.05 && fabs(moved) < 5e-3);
}

/* Contact's pairs in the coloured sweeps (each pair in the task of its smaller index, writing
 * velocities within k of it): two spheres colliding (515 particles each, +-1 m/s), 40 steps
 * from 1 mm apart, give the same bytes on 1 and 3 threads (DESIGN.md). */
static const char* k_spheres =
    "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":0.0005,\"fps\":50,\"frames\":1},"
    "\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
    "\"poisson_ratio\":0.3,\"contact_friction\":0.3}},"
    "\"bodies\":[{\"name\":\"a\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1,0,0],"
    "\"shape\":{\"type\":\"sphere\",\"center\":[-0.0505,0.003,0],\"radius\":0.05}},"
    "{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[-1,0,0],"
    "\"shape\":{\"type\":\"sphere\",\"center\":[0.0505,0,0],\"radius\":0.05}}]}";

static int collide_on(int threads, pd_vec3* out, size_t cap, size_t* n) {
    pd_set_threads(threads);
    pd_test_sim t;
    int ok = pd_test_sim_open(&t, k_spheres, NULL, 0) && pd_test_sim_run(&t, 0.02);
    if (ok) {
        const pd_particles* p = &t.world->particles;
        *n = p->count < cap ? p->count : cap;
        for (size_t i = 0; i < *n; ++i)
            out[p->id[i]] = p->pos[i]; /* by id: independent of the ordering */
        pd_test_sim_close(&t);
    }
    pd_set_threads(0);
    return ok;
}

PD_TEST(contact_same_bits_on_any_thread_count) {
    enum { CAP = 2048 };
    static pd_vec3 one[CAP], three[CAP];
    size_t n1 = 0, n3 = 0;
    PD_REQUIRE(collide_on(1, one, CAP, &n1));
    PD_REQUIRE(collide_on(3, three, CAP, &n3));
    PD_REQUIRE(n1 == n3 && n1 < CAP);
    size_t differ = 0;
    for (size_t i = 0; i < n1; ++i)
        differ += memcmp(&one[i], &three[i], sizeof(pd_vec3)) != 0;
    printf("  %zu particles after 40 steps of an impact: %zu differ between 1 and 3 threads\n", n1,
           differ);
    PD_CHECK(differ == 0);
}
