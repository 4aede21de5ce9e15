/* Emitters (scene `emitters`, src/world/emitters.c): a nozzle pours a stream into a body while
 * the run goes, under every method that takes particles after its start (PD_CAP_EMITTERS: mpm,
 * xpbi); the methods with bonds refuse the block. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdlib.h>
#include <unistd.h>

#include "methods.h"
#include "peridot/io.h"

/* A stream without gravity: a nozzle of radius 6 spacings (113 lattice points, 113 h^2 =
 * 0.999 pi r^2) pours along -y at 1 m/s, a layer every 5 ms, into body "stream", a small
 * ball of spacing 1 cm far aside (the emitter's spacing, 5 mm, is its own: a mass taken with the
 * body's spacing would be 8 times too large). The stream is of its own material, twice as dense as
 * the ball's (an emitter that took its body's material would pour half the mass). */
static const char* k_stream =
    "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":100,\"frames\":8},"
    "\"gravity\":[0,0,0],"
    "\"materials\":{\"goo\":{\"density\":1000,\"youngs_modulus\":2e4,\"poisson_ratio\":0.3},"
    "\"syrup\":{\"density\":2000,\"youngs_modulus\":2e4,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"stream\",\"material\":\"goo\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"sphere\",\"center\":[0.5,0,0],\"radius\":0.02}}],"
    "\"emitters\":[{\"body\":\"stream\",\"material\":\"syrup\",\"center\":[0,0.3,0],\"direction\":["
    "0,-2,0],"
    "\"radius\":0.03,\"speed\":1,\"spacing\":0.005}]}";

#define STREAM_RHO    2000.0 /* the emitter's material, not the body's */
#define STREAM_RADIUS 0.03
#define STREAM_SPEED  1.0

/* Mass of the particles of the stream (those beyond the ball's) now. */
static double emitted_mass(const pd_world* w, size_t ball) {
    const pd_particles* p = &w->particles;
    double m = 0;
    for (size_t i = 0; i < p->count; ++i)
        if ((size_t)p->id[i] >= ball)
            m += p->mass[i];
    return m;
}

/* Reference: a stream of density rho through a disc of radius r at speed v carries
 * rho pi r^2 v per second. Measured: the mass emitted between 0.025 s and 0.075 s (ten layers),
 * within 2 % (a layer more or less is 10 %; the lattice disc's area is 0.09 % short). Then the
 * newest layer's velocity is the nozzle's exactly, and the stream, stress-free without gravity,
 * keeps it: the mean velocity of the emitted particles within 1 % of v (a particle given no
 * rest state, F = 0 or a stale F, would push the stream apart). */
static void pour(void) {
    pd_test_sim t;
    PD_METHOD_REQUIRE(pd_test_method_open(&t, k_stream, NULL, 0));
    size_t ball = 0; /* the ball's particles: those sampled, before the first layer */
    for (size_t i = 0; i < t.world->particles.count; ++i)
        ball += t.world->particles.body[i] == 0 && t.world->particles.rest[i].x > 0.4;
    int ok = pd_test_sim_run(&t, 0.025);
    double m1 = emitted_mass(t.world, ball);
    ok = ok && pd_test_sim_run(&t, 0.075);
    double m2 = emitted_mass(t.world, ball);
    const pd_particles* p = &t.world->particles;
    size_t newest = 0;
    double newest_error = 0;
    pd_vec3 mean = pd_v3(0, 0, 0);
    for (size_t i = 0; i < p->count; ++i) {
        if ((size_t)p->id[i] < ball)
            continue;
        mean = pd_v3_add(mean, p->vel[i]);
        if ((size_t)p->id[i] + 113 >= p->count) { /* the last layer's ids */
            newest++;
            newest_error =
                fmax(newest_error, pd_v3_len(pd_v3_sub(p->vel[i], pd_v3(0, -STREAM_SPEED, 0))));
        }
    }
    size_t emitted = p->count - ball;
    mean = pd_v3_scale(mean, 1.0 / (double)emitted);
    printf("  %zu emitted particles (%zu layers of 113), mass %.5g kg at 0.025 s, %.5g at 0.075 s; "
           "newest layer %zu particles, largest velocity error %.3g m/s; mean velocity (%.4g, "
           "%.4g, %.4g)\n",
           emitted, emitted / 113, m1, m2, newest, newest_error, mean.x, mean.y, mean.z);
    pd_test_sim_close(&t);
    PD_METHOD_REQUIRE(ok);
    double rate = STREAM_RHO * PD_PI * STREAM_RADIUS * STREAM_RADIUS * STREAM_SPEED;
    pd_test_method_check("emitted mass 0.025-0.075 s (kg)", m2 - m1, rate * 0.05, 0.02, 1);
    pd_test_method_check("newest layer's velocity error (m/s)", newest_error, 0, 1e-12, 0);
    pd_test_method_check("stream's mean velocity (m/s)", -mean.y, STREAM_SPEED, 0.01, 1);
}
PD_TEST_EACH_METHOD(emitter_pours_density_area_speed, PD_CAP_EMITTERS, pour)

/* The same run on 1 and 2 threads: the same particles, bit for bit (emission is serial; the
 * method's loops over a count that grows must not depend on the split). */
static void same_on_threads(void) {
    enum { CAP = 4096, STEPS = 40 };
    pd_vec3* a = calloc(CAP, sizeof *a);
    pd_vec3* b = calloc(CAP, sizeof *b);
    PD_METHOD_REQUIRE(a && b);
    pd_test_sim t;
    pd_set_threads(1);
    size_t na = pd_test_positions_after_steps(&t, pd_test_method_open(&t, k_stream, NULL, 0), STEPS,
                                              a, CAP);
    pd_set_threads(2);
    size_t nb = pd_test_positions_after_steps(&t, pd_test_method_open(&t, k_stream, NULL, 0), STEPS,
                                              b, CAP);
    size_t differ = na == nb && na > 0 ? pd_test_positions_differing(a, b, na) : (size_t)-1;
    printf("  %zu / %zu particles after %d steps, %zu differing\n", na, nb, (int)STEPS, differ);
    free(a);
    free(b);
    PD_METHOD_REQUIRE(na == nb && na > 0);
    pd_test_method_check("particles differing on 1 and 2 threads", (double)differ, 0, 0, 0);
}
PD_TEST_EACH_METHOD(emitter_run_is_the_same_on_any_thread_count, PD_CAP_EMITTERS, same_on_threads)

/* Frames of a growing stream read back (pd_read_ply, as `peridot render` and the scripts read
 * them): each holds the particles there were when it was written, 10 + 113 k after k layers, ids
 * 0 .. count - 1 once each, and the first frame, written before the others, reads back as it
 * was. */
PD_TEST(emitter_frames_read_back_with_growing_counts) {
    char dir[] = "/tmp/pd_emitter_frames_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    const char* sets[] = {"method=mpm"};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_stream, sets, 1));
    size_t counts[3];
    char path[3][96];
    int ok = 1;
    for (int k = 0; k < 3 && ok; ++k) {
        ok = pd_test_sim_run(&t, 0.02 * k);
        pd_error err = {0};
        snprintf(path[k], sizeof path[k], "%s/frame_%05d.ply", dir, k);
        counts[k] = t.world->particles.count;
        ok = ok && pd_world_write_frame(t.world, path[k], PD_FORMAT_PLY, PD_ATTR_ID | PD_ATTR_BODY,
                                        &err) == PD_OK;
    }
    pd_test_sim_close(&t);
    PD_REQUIRE(ok);
    /* the ball's particles: a sphere of radius 2 spacings on the grid */
    size_t ball = counts[0] - 113;
    for (int k = 0; k < 3; ++k) {
        pd_ply_data ply;
        pd_error err = {0};
        PD_REQUIRE(pd_read_ply(path[k], &ply, &err) == PD_OK);
        const float* id = pd_ply_column(&ply, "id");
        size_t distinct = 0;
        char* seen = calloc(ply.count + 1, 1);
        for (size_t i = 0; id && seen && i < ply.count; ++i) {
            size_t v = (size_t)id[i];
            if (id[i] >= 0 && v < ply.count && !seen[v])
                seen[v] = 1, distinct++;
        }
        free(seen);
        size_t layers = (size_t)(0.02 * k * STREAM_SPEED / 0.005 + 1e-9) + 1;
        printf("  frame %d: %zu particles (the world had %zu), %zu distinct ids 0..n-1; %zu "
               "layers due\n",
               k, ply.count, counts[k], distinct, layers);
        PD_CHECK(ply.count == counts[k]);
        PD_CHECK(ply.count == ball + 113 * layers);
        PD_CHECK(distinct == ply.count);
        pd_ply_free(&ply);
        unlink(path[k]);
    }
    rmdir(dir);
}

/* The methods with bonds refuse the block (exit 2 from the program): at "emitters", naming
 * the methods that take it; the parse of a scene without it is not affected. */
PD_TEST(emitters_are_refused_by_the_methods_with_bonds) {
    int refused = 0;
    for (const pd_solver_vtable* const* m = pd_solver_all(); *m; ++m) {
        if (pd_solver_capabilities(*m) & PD_CAP_EMITTERS)
            continue;
        char method[64];
        snprintf(method, sizeof method, "method=%s", (*m)->name);
        const char* sets[] = {method};
        pd_scene scene;
        pd_error err = {0};
        pd_status st =
            pd_scene_parse(k_stream, "test.json", PD_SOURCE_DIR "/scenes", sets, 1, &scene, &err);
        printf("  %s: %s at %s: %s\n", (*m)->name, pd_status_string(st), err.path, err.message);
        PD_CHECK(st == PD_ERR_BAD_SCENE && strcmp(err.path, "emitters") == 0 &&
                 strstr(err.message, "mpm") && strstr(err.message, "xpbi"));
        if (st == PD_OK)
            pd_scene_free(&scene);
        refused += st == PD_ERR_BAD_SCENE;
    }
    PD_CHECK(refused == 3); /* projective_pd, hyperelastic_pd, sbpd */
}
