/* Reading and driving a world between steps (peridot/world.h, what python/peridot calls):
 * colliders and pins moved to a pose arrive there with the move's velocity and hold; the
 * particle and field views; the misuse refused with its path. Also run under the sanitizers,
 * which the Python tests are not. */
#include <stdlib.h>
#include <string.h>

#include "core/keyframes.h"
#include "peridot/peridot.h"
#include "test.h"

/* A box of 4^3 particles without gravity, pinned at its -x face, a sphere collider beside. */
static const char k_scene[] =
    "{\"version\":1,\"method\":\"projective_pd\",\"gravity\":[0,0,0],"
    "\"time\":{\"dt\":0.01,\"fps\":50,\"frames\":2},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"box\",\"material\":\"m\",\"spacing\":0.02,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.08,0.08,0.08]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-0.01,-0.01,-0.01],\"max\":[0.015,0.09,"
    "0.09]}}]}],"
    "\"colliders\":[{\"type\":\"sphere\",\"center\":[0.5,0,0],\"radius\":0.1}]}";

/* At a key's time pd_keyframes_motion moves on to the next segment; the _ending variant keeps
 * the segment a step ending there moved along. Poses agree everywhere. */
PD_TEST(motion_ending_keeps_the_segment_that_ends) {
    pd_keyframe keys[3] = {
        {0, {0, 0, 0}, {0, 1, 0}, 0}, {1, {1, 0, 0}, {0, 1, 0}, 0}, {2, {1, 2, 0}, {0, 1, 0}, 0}};
    pd_keyframe_motion a = pd_keyframes_motion(keys, 3, 1),
                       b = pd_keyframes_motion_ending(keys, 3, 1);
    PD_CHECK_NEAR(a.velocity.y, 2, 1e-15);
    PD_CHECK_NEAR(b.velocity.x, 1, 1e-15);
    PD_CHECK_NEAR(b.velocity.y, 0, 1e-15);
    PD_CHECK_NEAR(b.translate.x - a.translate.x, 0, 1e-15);
    a = pd_keyframes_motion(keys, 3, 2), b = pd_keyframes_motion_ending(keys, 3, 2);
    PD_CHECK_NEAR(a.velocity.y, 0, 1e-15); /* held after the last key */
    PD_CHECK_NEAR(b.velocity.y, 2, 1e-15);
    PD_CHECK_NEAR(b.translate.y - a.translate.y, 0, 1e-15);
    b = pd_keyframes_motion_ending(keys, 3, 0.5);
    PD_CHECK_NEAR(b.velocity.x, 1, 1e-15);
    PD_CHECK_NEAR(b.translate.x, 0.5, 1e-15);
}

static pd_world* make_world(pd_scene* scene) {
    pd_error err = {0};
    pd_world* w = NULL;
    if (pd_scene_parse(k_scene, "drive.json", ".", NULL, 0, scene, &err) != PD_OK) {
        printf("  %s: %s\n", err.path, err.message);
        return NULL;
    }
    if (pd_create_world(scene, &w, &err) != PD_OK) {
        printf("  %s: %s\n", err.path, err.message);
        pd_scene_free(scene);
        return NULL;
    }
    return w;
}

/* Moved 0.1 m in x over two steps: half way after one, there after two, with 0.1 / (2 dt)
 * during both, then held at rest. */
PD_TEST(a_moved_collider_arrives_with_the_moves_velocity_and_holds) {
    pd_scene scene;
    pd_world* w = make_world(&scene);
    PD_REQUIRE(w);
    pd_error err = {0};
    double dt = pd_world_get_info(w).dt;
    PD_CHECK(pd_world_get_info(w).colliders == 1);
    pd_keyframe to = {.t = 2 * dt, .translate = {0.1, 0, 0}};
    PD_REQUIRE(pd_world_move_collider(w, 0, to, &err) == PD_OK);
    double speed = 0.1 / (2 * dt);
    for (int s = 1; s <= 3; ++s) {
        PD_REQUIRE(pd_world_step(w, &err) == PD_OK);
        pd_collider_info c = pd_world_collider(w, 0);
        PD_CHECK_NEAR(c.translate.x, s < 2 ? 0.05 : 0.1, 1e-15);
        PD_CHECK_NEAR(c.velocity.x, s <= 2 ? speed : 0, 1e-12);
        PD_CHECK_NEAR(c.center.x, 0.5, 0);
    }
    /* refused: another collider, a time not after now, a turn without an axis */
    memset(&err, 0, sizeof err);
    PD_CHECK(pd_world_move_collider(w, 1, to, &err) == PD_ERR_INVALID_ARGUMENT);
    PD_CHECK(!strcmp(err.path, "colliders[1]"));
    to.t = pd_world_get_info(w).time;
    PD_CHECK(pd_world_move_collider(w, 0, to, &err) == PD_ERR_INVALID_ARGUMENT);
    PD_CHECK(strstr(err.message, "after the time now") != NULL);
    to.t += dt, to.rotate_degrees = 10;
    PD_CHECK(pd_world_move_collider(w, 0, to, &err) == PD_ERR_INVALID_ARGUMENT);
    PD_CHECK(strstr(err.message, "axis") != NULL);
    pd_destroy_world(w);
    pd_scene_free(&scene);
}

/* The pin's particles are where the move puts them: where they were, plus its translate. */
PD_TEST(a_moved_pin_carries_its_particles) {
    pd_scene scene;
    pd_world* w = make_world(&scene);
    PD_REQUIRE(w);
    pd_error err = {0};
    double dt = pd_world_get_info(w).dt;
    pd_particle_view v = pd_world_particles(w);
    pd_vec3* before = malloc(v.count * sizeof *before); /* by particle id */
    PD_REQUIRE(before);
    for (size_t id = 0; id < v.count; ++id)
        before[id] = v.positions[v.order[id]];
    pd_keyframe to = {.t = dt, .translate = {0, 0.01, 0}};
    PD_REQUIRE(pd_world_move_pin(w, 0, to, &err) == PD_OK);
    PD_REQUIRE(pd_world_step(w, &err) == PD_OK);
    PD_CHECK_NEAR(pd_world_pin(w, 0).translate.y, 0.01, 1e-15);
    v = pd_world_particles(w);
    double worst = 0;
    int pinned = 0;
    for (size_t id = 0; id < v.count; ++id) {
        if (before[id].x > 0.015) /* not in the pin's region */
            continue;
        pd_vec3 d = pd_v3_sub(v.positions[v.order[id]], before[id]);
        worst = fmax(worst, pd_v3_len(pd_v3_sub(d, pd_v3(0, 0.01, 0))));
        pinned++;
    }
    printf("  %d pinned particles, farthest %.3g m from rest + translate\n", pinned, worst);
    PD_CHECK(pinned == 16);
    PD_CHECK_NEAR(worst, 0, 1e-12);
    memset(&err, 0, sizeof err);
    PD_CHECK(pd_world_move_pin(w, 1, to, &err) == PD_ERR_INVALID_ARGUMENT);
    PD_CHECK(!strcmp(err.path, "pins[1]"));
    free(before);
    pd_destroy_world(w);
    pd_scene_free(&scene);
}

PD_TEST(fields_by_name_and_the_struct_sizes) {
    pd_scene scene;
    pd_world* w = make_world(&scene);
    PD_REQUIRE(w);
    pd_error err = {0};
    pd_field_view f;
    pd_particle_view v = pd_world_particles(w);
    PD_REQUIRE(pd_world_field(w, "velocity", &f, &err) == PD_OK);
    PD_CHECK(f.components == 3 && !f.is_integer && f.data == (const void*)v.velocities);
    PD_CHECK(!strcmp(f.names[0], "vx") && !strcmp(f.unit, "m/s"));
    PD_REQUIRE(pd_world_field(w, "id", &f, &err) == PD_OK);
    PD_CHECK(f.components == 1 && f.is_integer);
    const int32_t* ids = f.data;
    int in_order = 1; /* order[id] is where particle id is kept */
    for (size_t id = 0; id < v.count; ++id)
        in_order &= ids[v.order[id]] == (int32_t)id;
    PD_CHECK(in_order);
    PD_CHECK(pd_world_field(w, "temperature", &f, &err) == PD_ERR_INVALID_ARGUMENT);
    PD_CHECK(pd_world_field(w, "stress", &f, &err) == PD_ERR_UNSUPPORTED);
    PD_CHECK(strstr(err.message, "projective_pd") != NULL);
    PD_CHECK(pd_attribute_bit("id") == PD_ATTR_ID && pd_attribute_bit("vel") == 0);
    PD_CHECK(pd_type_size("pd_error") == sizeof(pd_error));
    PD_CHECK(pd_type_size("pd_world_info") == sizeof(pd_world_info));
    PD_CHECK(pd_type_size("pd_nothing") == 0);
    PD_CHECK(strstr(pd_scene_resolved_json(&scene), "\"projective_pd\"") != NULL);
    pd_destroy_world(w);
    pd_scene_free(&scene);
}
