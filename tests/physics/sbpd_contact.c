/* sbpd (Wang et al. 2025), collisions and boundaries (Sec. 6): bodies that collide (Eq. 25),
 * sand on an elastic slab, static friction (Eq. 28), rigid boundary particles with dynamic
 * friction (Eq. 26-27) and the coupling of sand, elastic and rigid bodies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "parallel/parallel.h"
#include "solvers/sbpd/sbpd_data.h"
#include "support.h"

/* Two equal blocks (6 cm, 216 particles each) meeting at 1 and -0.5 m/s without gravity, 0.3 s:
 * Eq. 25's pushes are shares by inverse mass, so momentum is kept; the blocks part; no pair of
 * them comes closer than 0.75 d_c at the end of any step (the core contact's floor for a
 * particle slipping between four of a lattice face). With solver.contact false they pass
 * through each other (the control, stopped once the centres crossed: what it shows is then
 * known). */
static double centres_crossed(const pd_particles* p) { /* > 0: a's centre beyond b's */
    double m[2] = {0, 0}, mx[2] = {0, 0};
    for (size_t i = 0; i < p->count; ++i)
        m[p->body[i]] += p->mass[i], mx[p->body[i]] += p->mass[i] * p->pos[i].x;
    return mx[0] / m[0] - mx[1] / m[1];
}

static int collide_blocks(int contact, double* momentum, double* va, double* vb, double* closest,
                          double* crossed, double* when) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"solver\":{\"contact\":%s},\"time\":{\"dt\":2e-4,"
             "\"fps\":100,\"frames\":30},\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":"
             "1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},\"bodies\":[{\"name\":\"a\","
             "\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1,0,0],\"shape\":{\"type\":\"box\","
             "\"min\":[0,0,0],\"max\":[0.06,0.06,0.06]}},{\"name\":\"b\",\"material\":\"m\","
             "\"spacing\":0.01,\"velocity\":[-0.5,0,0],\"shape\":{\"type\":\"box\","
             "\"min\":[0.08,0,0],\"max\":[0.14,0.06,0.06]}}]}",
             contact ? "true" : "false");
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    double closest2 = INFINITY; /* squared: the root and the scale are monotone, taken once */
    while (t.world->time < 0.3 - 1e-9 && (contact || centres_crossed(p) <= 0)) {
        if (!pd_test_sim_run(&t, t.world->time + t.world->def.dt)) {
            pd_test_sim_close(&t);
            return 0;
        }
        size_t in_b[512], n_b = 0; /* b's particles: the pairs a-b only, not all pairs */
        for (size_t j = 0; j < p->count && n_b < 512; ++j)
            if (p->body[j] == 1)
                in_b[n_b++] = j;
        for (size_t i = 0; i < p->count; ++i)
            if (p->body[i] == 0)
                for (size_t k = 0; k < n_b; ++k)
                    closest2 = fmin(closest2, pd_v3_len2(pd_v3_sub(p->pos[i], p->pos[in_b[k]])));
    }
    *closest = sqrt(closest2) / 0.01;
    double m[2] = {0, 0}, mv[2] = {0, 0};
    for (size_t i = 0; i < p->count; ++i) {
        int b = p->body[i];
        m[b] += p->mass[i], mv[b] += p->mass[i] * p->vel[i].x;
    }
    *momentum = (mv[0] + mv[1]) / m[0];
    *va = mv[0] / m[0], *vb = mv[1] / m[1];
    *crossed = centres_crossed(p);
    *when = t.world->time;
    pd_test_sim_close(&t);
    return 1;
}

PD_TEST(bodies_collide_instead_of_passing_through) {
    double mom, va, vb, closest, crossed, when;
    PD_REQUIRE(collide_blocks(1, &mom, &va, &vb, &closest, &crossed, &when));
    printf("  contact: sum of mean velocities %.6f m/s (0.5 before), a %.3f, b %.3f m/s, closest "
           "pair %.3f d_c, centres %.3f m apart\n",
           mom, va, vb, closest, -crossed);
    PD_CHECK_NEAR(mom, 0.5, 1e-9);
    PD_CHECK(va < 0 && vb > 0.5);
    PD_CHECK(closest >= 0.75);
    PD_REQUIRE(collide_blocks(0, &mom, &va, &vb, &closest, &crossed, &when));
    printf("  no contact: centres crossed by %.4f m at %.4f s, closest pair %.3f d_c\n", crossed,
           when, closest);
    PD_CHECK(crossed > 0);
}

/* Issue 10's coupling: no particle passes through a boundary. A ball of sand (radius 4 cm, 268
 * grains) falls 6 cm onto an elastic slab (0.3 x 0.02 x 0.3 m, E 1e5 Pa, edges pinned) and
 * settles in its dent, 0.4 s: no grain ever below the slab's lowest particle under it less half
 * a spacing. Without contact the sand falls through (the control, stopped at the first grain
 * below: what it shows is then known). */
static int sand_through_slab(int contact, int* below, double* sag, double* first_below) {
    char json[2048];
    snprintf(
        json, sizeof json,
        "{\"version\":1,\"method\":\"sbpd\",\"solver\":{\"contact\":%s},\"time\":{\"dt\":1.5e-4,"
        "\"fps\":100,\"frames\":40},\"materials\":{\"slab\":{\"density\":1000,"
        "\"youngs_modulus\":1e5,\"poisson_ratio\":0.3},\"sand\":{\"density\":1600,"
        "\"youngs_modulus\":1e5,\"poisson_ratio\":0.2,\"plasticity\":{\"model\":"
        "\"drucker_prager\",\"friction_angle\":35}}},\"bodies\":[{\"name\":\"slab\","
        "\"material\":\"slab\",\"spacing\":0.01,\"shape\":{\"type\":\"box\",\"min\":[-0.15,0,"
        "-0.15],\"max\":[0.15,0.02,0.15]},\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,"
        "-1,-1],\"max\":[-0.13,1,1]}},{\"region\":{\"type\":\"box\",\"min\":[0.13,-1,-1],"
        "\"max\":[1,1,1]}}]},{\"name\":\"sand\",\"material\":\"sand\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.1,0],\"radius\":0.04}}]}",
        contact ? "true" : "false");
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    *below = 0, *sag = 0, *first_below = -1;
    while (t.world->time < 0.4 - 1e-9 && (contact || *below == 0)) {
        if (!pd_test_sim_run(&t, t.world->time + t.world->def.dt)) {
            pd_test_sim_close(&t);
            return 0;
        }
        double floor = INFINITY;
        for (size_t i = 0; i < p->count; ++i)
            if (p->body[i] == 0 && fabs(p->rest[i].x) < 0.05 && fabs(p->rest[i].z) < 0.05)
                floor = fmin(floor, p->pos[i].y);
        *sag = fmax(*sag, 0.005 - floor);
        for (size_t i = 0; i < p->count; ++i)
            *below += p->body[i] == 1 && p->pos[i].y < floor - 0.005;
        if (*below > 0 && *first_below < 0)
            *first_below = t.world->time;
    }
    pd_test_sim_close(&t);
    return 1;
}

PD_TEST(sand_does_not_pass_through_an_elastic_slab) {
    int below;
    double sag, first;
    PD_REQUIRE(sand_through_slab(1, &below, &sag, &first));
    printf("  contact: grain-steps below the slab %d, deepest sag of the slab %.1f mm\n", below,
           1e3 * sag);
    PD_CHECK(below == 0);
    PD_REQUIRE(sand_through_slab(0, &below, &sag, &first));
    printf("  no contact: %d grains below the slab at %.4f s\n", below, first);
    PD_CHECK(below > 0);
}

/* Eq. 28 (solver.static_friction, the paper's eta 0.8): grains resting on a boundary stay. The
 * collapsed cube of the deposit test (friction angle 30) from 0.6 to 1.0 s: with eta 0.8 its
 * grains stay (a median move of 1e-7 mm), without (0) the deposit creeps on the plane collider
 * (whose Coulomb friction 0.5, the world's on the velocities after the step, acts in both). The
 * floor is a plane collider, or a rigid body of boundary particles (a fixed body two layers thick,
 * contact_friction 0.5 with the sand). The median, not the mean: a few grains that scatter off the
 * edge of the rigid floor would be the mean. */
static double deposit_creep(double eta, int rigid_floor) {
    char json[2048], set[64];
    const char* floor =
        rigid_floor ? ",{\"name\":\"floor\",\"material\":\"rock\",\"kind\":\"fixed\","
                      "\"spacing\":0.0125,\"shape\":{\"type\":\"box\",\"min\":[-0.15,-0.025,"
                      "-0.15],\"max\":[0.15,0,0.15]}}]"
                    : "],\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"friction\":0.5}]";
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1.8e-4,\"fps\":25,\"frames\":1},"
             "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,\"poisson_ratio\":"
             "0.2,\"contact_friction\":0.5,\"plasticity\":{\"model\":\"drucker_prager\","
             "\"friction_angle\":30}},\"rock\":{\"density\":2000,\"youngs_modulus\":3e5,"
             "\"poisson_ratio\":0.3,\"contact_friction\":0.5}},\"bodies\":[{\"name\":\"sand\","
             "\"material\":\"sand\",\"spacing\":0.0125,\"shape\":{\"type\":\"box\",\"min\":"
             "[-0.05,0,-0.05],\"max\":[0.05,0.1,0.05]}}%s}",
             floor);
    snprintf(set, sizeof set, "solver.static_friction=%g", eta);
    const char* sets[] = {set};
    static pd_vec3 at[8192];
    static double moved[8192];
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, 1))
        return -1;
    const pd_particles* p = &t.world->particles;
    double median = -1;
    size_t grains = 0;
    if (pd_test_sim_run(&t, 0.6) && p->count <= 8192) {
        for (size_t i = 0; i < p->count; ++i)
            at[p->id[i]] = p->pos[i];
        if (pd_test_sim_run(&t, 1.0)) {
            for (size_t i = 0; i < p->count; ++i)
                if (p->body[i] == 0)
                    moved[grains++] = pd_v3_len(pd_v3_sub(p->pos[i], at[p->id[i]]));
            qsort(moved, grains, sizeof *moved, pd_test_compare_doubles);
            median = moved[grains / 2];
        }
    }
    pd_test_sim_close(&t);
    return median;
}

PD_TEST(static_friction_stops_a_deposit_creeping) {
    double with = deposit_creep(0.8, 0), without = deposit_creep(0, 0);
    printf("  plane collider: median move of the grains from 0.6 to 1.0 s: %.3g mm with eta 0.8, "
           "%.3g mm without\n",
           1e3 * with, 1e3 * without);
    PD_REQUIRE(with >= 0 && without >= 0);
    PD_CHECK(with < 1e-3 * without && without > 0.05e-3);
}

/* Eq. 25-28 at a fixed floor (rigid boundary particles, contact_friction 0.5 with the sand): the
 * collapsed cube rests there as on the plane collider: with Eq. 28 still; without, its grains
 * (which stack on each other by Eq. 28 too) creep by less than a hundredth of a spacing in the
 * 0.4 s. The collisions' last round, below epsilon, used to be skipped: a resting grain's
 * contact and friction were never resolved, and the deposit crept 13.9 mm without Eq. 28. */
PD_TEST(rigid_floor_holds_a_deposit) {
    double with = deposit_creep(0.8, 1), without = deposit_creep(0, 1);
    printf("  rigid floor of boundary particles: median move of the grains from 0.6 to 1.0 s: "
           "%.3g mm with eta 0.8, %.3g mm without\n",
           1e3 * with, 1e3 * without);
    PD_REQUIRE(with >= 0 && without >= 0);
    PD_CHECK(with < 1e-6);             /* a micrometre */
    PD_CHECK(without < 0.01 * 0.0125); /* a hundredth of a spacing */
}

/* The sliding block's slab, frictionless (contact_friction 0), gravity tilted by `degrees` about
 * z; the block starts at rest. Returns its mean x displacement after 0.3 s. */
static int rest_on_incline(double degrees, double eta, double* dx) {
    char json[2048], set[64];
    double a = degrees * PD_PI / 180;
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":2e-4,\"fps\":50,\"frames\":15},"
             "\"gravity\":[%.17g,%.17g,0],\"materials\":{\"m\":{\"density\":1000,"
             "\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},\"bodies\":[{\"name\":\"slab\","
             "\"material\":\"m\",\"kind\":\"fixed\",\"spacing\":0.01,\"shape\":{\"type\":\"box\","
             "\"min\":[-0.3,-0.02,-0.1],\"max\":[0.3,0,0.1]}},{\"name\":\"block\",\"material\":"
             "\"m\",\"spacing\":0.01,\"shape\":{\"type\":\"box\",\"min\":[-0.05,0,-0.05],"
             "\"max\":[0.05,0.04,0.05]}}]}",
             -9.81 * sin(a), -9.81 * cos(a));
    snprintf(set, sizeof set, "solver.static_friction=%g", eta);
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, 1))
        return 0;
    const pd_particles* p = &t.world->particles;
    double x0 = 0, x = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->body[i] == 1)
            x0 += p->pos[i].x, n += 1;
    int ok = pd_test_sim_run(&t, 0.3);
    for (size_t i = 0; ok && i < p->count; ++i)
        if (p->body[i] == 1)
            x += p->pos[i].x;
    *dx = (x - x0) / n;
    pd_test_sim_close(&t);
    return ok;
}

/* Eq. 28 at rigid boundary particles on a slope: a block at rest on a frictionless incline of
 * 20 degrees moves, each step, along gravity, and the floor pushes its bottom layer back along
 * the normal: (y - y*) . (y^t - y*) = cos^2 20 |y* - y^t|^2 = 0.88 |y* - y^t|^2 >= eta 0.8, so
 * Eq. 28 should hold it where it stands (up to 26.6 degrees). It slides nearly as without it
 * (measured: 146 of 151 mm in 0.3 s). Eq. 28 holds particles, not bodies: for the first 25
 * steps it holds the whole bottom layer (its criterion reads 0.883 = cos^2 20 at the first),
 * but the layers above, which no collision touches, slide on and their bonds pull the bottom
 * layer's steps along the slope (after 45 steps none is held). What a user expects of a block
 * at rest with static friction; not what a per-particle Eq. 28 gives. A known failure
 * (docs/validation.md). */
PD_TEST(known_failure_static_friction_holds_a_block_on_a_20_degree_frictionless_incline) {
    double with, without;
    PD_REQUIRE(rest_on_incline(20, 0.8, &with) && rest_on_incline(20, 0, &without));
    double free_slide = 0.5 * 9.81 * sin(20 * PD_PI / 180) * 0.3 * 0.3;
    printf("  after 0.3 s: slid %.1f mm with eta 0.8, %.1f mm without (free slide %.1f mm)\n",
           -1e3 * with, -1e3 * without, 1e3 * free_slide);
    PD_CHECK(fabs(without + free_slide) < 0.05 * free_slide);
    PD_CHECK(fabs(with) < 1e-3);
}

/* Issue 10, coupling: an elastic block (E 1e5 Pa) resting on a rigid floor (a fixed body: rigid
 * boundary particles) and a ball of sand dropped onto both (contact_friction 0.5 between sand
 * and floor), 0.3 s. Through a boundary would be: a grain or an elastic particle inside the
 * floor (below its top, within its sides), or a grain inside the elastic block (within its
 * current box less half a spacing). Resting particles sit half a spacing above the floor: the
 * lowest particle over it (a grain splashed off the block at 1 m/s leaves the floor's edge at
 * 0.3 s, below its top, since the collisions' last round is applied). */
PD_TEST(sand_elastic_and_rigid_bodies_never_pass_through_each_other) {
    char json[2048];
    snprintf(
        json, sizeof json,
        "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1.5e-4,\"fps\":100,\"frames\":40},"
        "\"materials\":{\"rock\":{\"density\":2000,\"youngs_modulus\":1e5,\"poisson_ratio\":"
        "0.3,\"contact_friction\":0.5},\"rubber\":{\"density\":1000,\"youngs_modulus\":1e5,"
        "\"poisson_ratio\":0.3},\"sand\":{\"density\":1600,\"youngs_modulus\":1e5,"
        "\"poisson_ratio\":0.2,\"contact_friction\":0.5,\"plasticity\":{\"model\":\"drucker_"
        "prager\",\"friction_angle\":35}}},\"bodies\":["
        "{\"name\":\"floor\",\"material\":\"rock\",\"kind\":\"fixed\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[-0.2,-0.03,-0.2],\"max\":[0.2,0,0.2]}},"
        "{\"name\":\"block\",\"material\":\"rubber\",\"spacing\":0.01,\"shape\":{\"type\":"
        "\"box\",\"min\":[-0.1,0,-0.05],\"max\":[0,0.06,0.05]}},{\"name\":\"sand\","
        "\"material\":\"sand\",\"spacing\":0.01,\"shape\":{\"type\":\"sphere\",\"center\":"
        "[0,0.15,0],\"radius\":0.045}}]}");
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, json, NULL, 0));
    const pd_particles* p = &t.world->particles;
    int in_floor = 0, in_block = 0, steps = 0;
    double lowest = INFINITY, block_bottom = INFINITY;
    int ok = 1;
    while (ok && t.world->time < 0.3 - 1e-9) {
        ok = pd_test_sim_run(&t, t.world->time + t.world->def.dt);
        pd_vec3 lo = pd_v3(INFINITY, INFINITY, INFINITY),
                hi = pd_v3(-INFINITY, -INFINITY, -INFINITY);
        for (size_t i = 0; i < p->count; ++i)
            if (p->body[i] == 1) {
                pd_vec3 y = p->pos[i];
                lo = pd_v3(fmin(lo.x, y.x), fmin(lo.y, y.y), fmin(lo.z, y.z));
                hi = pd_v3(fmax(hi.x, y.x), fmax(hi.y, y.y), fmax(hi.z, y.z));
            }
        for (size_t i = 0; i < p->count; ++i) {
            pd_vec3 y = p->pos[i];
            if (p->body[i] == 0)
                continue;
            if (fabs(y.x) < 0.2 && fabs(y.z) < 0.2) /* over the floor (a grain may splash off) */
                lowest = fmin(lowest, y.y);
            if (p->body[i] == 1)
                block_bottom = fmin(block_bottom, y.y);
            in_floor += y.y < 0 && fabs(y.x) < 0.2 && fabs(y.z) < 0.2;
            in_block += p->body[i] == 2 && y.x > lo.x + 0.005 && y.x < hi.x - 0.005 &&
                        y.y > lo.y + 0.005 && y.y < hi.y - 0.005 && y.z > lo.z + 0.005 &&
                        y.z < hi.z - 0.005;
        }
        ++steps;
    }
    size_t grains_on_block = 0, off = 0;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 y = p->pos[i];
        grains_on_block += p->body[i] == 2 && y.x < 0 && y.y > 0.055;
        off += p->body[i] != 0 && (fabs(y.x) >= 0.2 || fabs(y.z) >= 0.2);
    }
    printf("  beyond the floor's edges at the end: %zu\n", off);
    printf(
        "  %d steps: particle-steps inside the floor %d, grain-steps inside the block %d; lowest "
        "particle %.2f mm above the floor (the block's %.2f mm: half a spacing is 5), %zu "
        "grains on the block at the end\n",
        steps, in_floor, in_block, 1e3 * lowest, 1e3 * block_bottom, grains_on_block);
    PD_CHECK(ok);
    PD_CHECK(in_floor == 0 && in_block == 0);
    PD_CHECK(grains_on_block > 10); /* the sand met the block, not only the floor */
    PD_CHECK_NEAR(1e3 * lowest, 5.0, 1.0);
    pd_test_sim_close(&t);
}

/* A fixed body is a rigid boundary, whose collisions read its shape's signed distance: an open
 * mesh has none (no inside), and is refused at the body's shape, not run without a boundary. */
PD_TEST(fixed_body_without_a_signed_distance_is_refused) {
    char json[1024];
    snprintf(
        json, sizeof json,
        "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1e-4,\"fps\":50,\"frames\":1},"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
        "\"bodies\":[{\"name\":\"ball\",\"material\":\"m\",\"spacing\":0.01,\"shape\":{"
        "\"type\":\"sphere\",\"center\":[0,0.3,0],\"radius\":0.03}},{\"name\":\"bowl\","
        "\"material\":\"m\",\"kind\":\"fixed\",\"spacing\":0.02,\"shape\":{\"type\":\"mesh\","
        "\"path\":\"meshes/bowl.obj\",\"scale\":0.2}}]}");
    pd_scene scene;
    pd_world* world = NULL;
    pd_error err = {0};
    size_t before = pd_bytes_in_use();
    PD_REQUIRE(pd_scene_parse(json, "t.json", PD_SOURCE_DIR "/scenes", NULL, 0, &scene, &err) ==
               PD_OK);
    pd_status st = pd_create_world(&scene, &world, &err);
    printf("  %s: %s\n", err.path, err.message);
    PD_CHECK(st == PD_ERR_BAD_SCENE && strcmp(err.path, "bodies[1].shape") == 0);
    pd_destroy_world(world);
    pd_scene_free(&scene);
    PD_CHECK(pd_bytes_in_use() == before); /* the failed set-up freed what it took */
}
