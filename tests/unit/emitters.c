/* Emitters' arithmetic (src/world/emitters.c): the points of a layer, the layers due at a time,
 * and the particles reserved for a run, against counts made by hand. */
#include <string.h>

#include "peridot/peridot.h"
#include "test.h"
#include "world/emitters.h"

static pd_emitter_def emitter(pd_real radius, pd_real spacing, pd_real speed, pd_real start,
                              pd_real stop) {
    pd_emitter_def e = pd_default_emitter_def();
    e.radius = radius, e.spacing = spacing, e.speed = speed, e.start = start, e.stop = stop;
    return e;
}

/* Lattice points a^2 + b^2 <= R^2 (Gauss's circle problem): 1, 5, 13, 29, 49, 113 for R = 0.5,
 * 1, 2, 3, 4, 6; the points lie in the nozzle's plane, one spacing apart. */
PD_TEST(a_layer_is_the_lattice_in_the_disc) {
    const double radius[] = {0.5, 1, 2, 3, 4, 6};
    const size_t want[] = {1, 5, 13, 29, 49, 113};
    for (int k = 0; k < 6; ++k) {
        pd_emitter_def e = emitter(radius[k] * 0.004, 0.004, 1, 0, INFINITY);
        e.direction = pd_v3(0.6, 0, -0.8); /* a tilted nozzle: the disc normal to it */
        size_t n = pd_emitter_disc(&e, NULL);
        pd_vec3 pts[113];
        PD_REQUIRE(n <= 113);
        pd_emitter_disc(&e, pts);
        double off_plane = 0, nearest = INFINITY;
        for (size_t i = 0; i < n; ++i) {
            off_plane = fmax(off_plane, fabs(pd_v3_dot(pts[i], e.direction)));
            for (size_t j = 0; j < i; ++j)
                nearest = fmin(nearest, pd_v3_len(pd_v3_sub(pts[i], pts[j])));
        }
        printf("  R = %g spacings: %zu points (%zu), off the plane %.2g m, nearest %.6g m\n",
               radius[k], n, want[k], off_plane, nearest);
        PD_CHECK(n == want[k]);
        PD_CHECK(off_plane < 1e-15);
        PD_CHECK(n == 1 || fabs(nearest - 0.004) < 1e-15);
    }
}

/* Layer k falls due at t_k = start + k h / v, and none at or after stop: with h / v = 10 ms
 * from 0.1 s to 0.15 s, layers at 0.10, 0.11, ..., 0.14 (five); a time summed from steps a
 * rounding short of t_k counts it. */
PD_TEST(layers_fall_due_one_interval_apart_before_stop) {
    pd_emitter_def e = emitter(0.01, 0.005, 0.5, 0.1, 0.15);
    PD_CHECK(pd_emitter_layers_due(&e, 0) == 0);
    PD_CHECK(pd_emitter_layers_due(&e, 0.0999) == 0);
    PD_CHECK(pd_emitter_layers_due(&e, 0.1) == 1);
    PD_CHECK(pd_emitter_layers_due(&e, 0.1099) == 1);
    double t = 0;
    for (int k = 0; k < 11; ++k) /* 0.11 as eleven steps of 0.01 sum it */
        t += 0.01;
    PD_CHECK(pd_emitter_layers_due(&e, t) == 2);
    PD_CHECK(pd_emitter_layers_due(&e, 0.145) == 5);
    PD_CHECK(pd_emitter_layers_due(&e, 0.15) == 5); /* stop itself is no layer's time */
    PD_CHECK(pd_emitter_layers_due(&e, 10) == 5);
    e.stop = INFINITY;
    PD_CHECK(pd_emitter_layers_due(&e, 1.1) == 101);
}

/* The estimate (`peridot info`) counts the particles the emitters make within the run: 13 a
 * layer, a layer every 10 ms from 0 through 0.3 s (31 layers), beside the body's (the same
 * scene's estimate without the emitter). */
static size_t estimated(const char* json, const char* const* sets, int count, size_t* emitted) {
    pd_scene s;
    pd_error err = {0};
    pd_estimate est = {0};
    if (pd_scene_parse(json, "t.json", ".", sets, count, &s, &err) != PD_OK)
        return 0;
    if (pd_scene_estimate(&s, &est, &err) != PD_OK)
        est.particles = 0;
    *emitted = pd_scene_emitted_particles(&s);
    pd_scene_free(&s);
    return est.particles;
}

PD_TEST(the_estimate_counts_the_particles_emitters_make) {
    const char* json =
        "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":10,\"frames\":3},"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e4,\"poisson_ratio\":0.3}},"
        "\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.05,0.05,0.05]}}],"
        "\"emitters\":[{\"body\":\"b\",\"center\":[0,0.5,0],\"radius\":0.02,\"speed\":1}]}";
    const char* none[] = {"emitters=[]"};
    size_t emitted = 0, without_emitted = 0;
    size_t with = estimated(json, NULL, 0, &emitted);
    size_t without = estimated(json, none, 1, &without_emitted);
    printf("  estimate %zu particles, %zu without the emitter, whose %zu (13 x 31 = 403)\n", with,
           without, emitted);
    PD_CHECK(emitted == 13 * 31 && without_emitted == 0);
    PD_CHECK(without > 0 && with == without + emitted);
}

/* A stream no memory holds (a layer of 317 particles every 1e-10 s for 3 s: 9.5e12) is
 * refused before anything is allocated, at `emitters`; a nozzle wider than 5000 spacings is
 * refused by the scene's validation (bad_input.scenes). */
PD_TEST(a_stream_no_memory_holds_is_refused_at_emitters) {
    const char* json =
        "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":30,\"frames\":90},"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e4,\"poisson_ratio\":0.3}},"
        "\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.05,0.05,0.05]}}],"
        "\"emitters\":[{\"body\":\"b\",\"center\":[0,0.5,0],\"radius\":1e-6,\"speed\":1e3,"
        "\"spacing\":1e-7}]}";
    pd_scene s;
    pd_error err = {0};
    PD_REQUIRE(pd_scene_parse(json, "t.json", ".", NULL, 0, &s, &err) == PD_OK);
    pd_estimate est;
    PD_REQUIRE(pd_scene_estimate(&s, &est, &err) == PD_OK);
    pd_status st = pd_scene_check_memory(&s, &est, &err);
    printf("  %zu particles estimated: %s at %s: %s\n", est.particles, pd_status_string(st),
           err.path, err.message);
    PD_CHECK(st == PD_ERR_TOO_LARGE && strcmp(err.path, "emitters") == 0);
    pd_scene_free(&s);
}
