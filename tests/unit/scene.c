/* Scene parsing (scene/scene.c): a full scene gives the values written in it, a minimal one the
 * documented defaults, `--set` overrides land before validation, the resolved JSON parses back
 * to the same scene, and nothing stays allocated. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "peridot/peridot.h"
#include "scene/scene_parse.h"
#include "scene/scene_tables.h"
#include "solvers/projective_pd/projective_pd_data.h"
#include "solvers/solver.h"
#include "test.h"

/* Scenes are written with single quotes for readability; this turns them into JSON. */
static char* dq(const char* text) {
    size_t n = strlen(text);
    char* s = malloc(n + 1);
    for (size_t i = 0; i <= n; ++i)
        s[i] = text[i] == '\'' ? '"' : text[i];
    return s;
}

static const char* k_full =
    "{\n"
    "  'version': 1,\n"
    "  'method': 'projective_pd',\n"
    "  'solver': { 'iterations': 25, 'tolerance': 1e-5, 'global_solve': 'direct',\n"
    "              'line_search': false },\n"
    "  'time': { 'dt': 0.002, 'fps': 24, 'frames': 48 },\n"
    "  'gravity': [0, -3.5, 0.25],\n"
    "  'seed': 42,\n"
    "  'materials': {\n"
    "    'sand': { 'density': 1600, 'youngs_modulus': 3e5, 'poisson_ratio': 0.3 },\n"
    "    'rubber': { 'density': 1100, 'youngs_modulus': 1e5, 'poisson_ratio': 0.4 },\n"
    "    'gel': { 'density': 1000, 'lame': [2e4, 1e4] },\n"
    "    'metal': { 'density': 7800, 'youngs_modulus': 2e6, 'poisson_ratio': 0.3 }\n"
    "  },\n"
    "  'bodies': [\n"
    "    { 'name': 'column', 'material': 'sand', 'spacing': 0.005, 'sampling': 'jittered',\n"
    "      'shape': { 'type': 'box', 'min': [0, 0, 0], 'max': [0.1, 0.2, 0.05] },\n"
    "      'velocity': [1, 2, 3], 'angular_velocity': [0, 0.5, 0], 'kind': 'dynamic',\n"
    "      'pins': [ { 'region': { 'type': 'box', 'min': [0, 0, 0], 'max': [0.1, 0.01, 0.05] },\n"
    "                  'keyframes': [ { 't': 0 },\n"
    "                                 { 't': 0.5, 'translate': [0.02, 0, 0],\n"
    "                                   'rotate': [0, 0, 2, 90] } ] },\n"
    "                { 'region': { 'type': 'sphere', 'center': [0, 0.2, 0], 'radius': 0.01 } } "
    "],\n"
    "      'material_changes': [ { 't': 0.25, 'material': 'gel',\n"
    "                              'region': { 'type': 'box', 'min': [0, 0.1, 0],\n"
    "                                          'max': [0.1, 0.2, 0.05] } },\n"
    "                            { 't': 0.25, 'material': 'rubber' } ] },\n"
    "    { 'name': 'ball', 'material': 'rubber', 'spacing': 0.01,\n"
    "      'shape': { 'type': 'mesh', 'path': 'ball.obj', 'scale': 0.1,\n"
    "                 'translate': [0.5, 0.3, 0], 'rotate': [1, 0, 0, 30] } },\n"
    "    { 'material': 'gel', 'spacing': 0.02, 'kind': 'shell',\n"
    "      'shape': { 'type': 'cylinder', 'base': [0, 0, 0], 'axis': [0, 0, 3], 'radius': 0.1,\n"
    "                 'height': 0.01 } }\n"
    "  ],\n"
    "  'colliders': [\n"
    "    { 'type': 'plane', 'point': [0, 0.1, 0], 'normal': [0, 2, 0], 'boundary': 'no_slip' },\n"
    "    { 'type': 'box', 'min': [-1, 0, -0.025], 'max': [1, 1, 0.075], 'inside': true,\n"
    "      'boundary': 'slip', 'friction': 0.3, 'velocity': [0.1, 0, 0] },\n"
    "    { 'type': 'sphere', 'center': [0, 1, 0], 'radius': 0.2,\n"
    "      'keyframes': [ { 't': 0 }, { 't': 1, 'translate': [0, -0.5, 0] } ] }\n"
    "  ],\n"
    "  'output': { 'dir': 'frames', 'every': 2, 'format': ['ply', 'vtk'],\n"
    "              'attributes': ['velocity', 'material', 'id'] }\n"
    "}\n";

static const char* k_minimal = "{ 'version': 1, 'method': 'projective_pd',\n"
                               "  'time': { 'dt': 0.001 },\n"
                               "  'materials': { 'm': { 'density': 500 } },\n"
                               "  'bodies': [ { 'material': 'm', 'spacing': 0.01,\n"
                               "    'shape': { 'type': 'sphere', 'center': [0, 1, 0], "
                               "'radius': 0.1 } } ] }";

/* A temporary folder holding ball.obj (one tetrahedron). */
static void make_mesh_dir(char* dir, size_t cap) {
    snprintf(dir, cap, "/tmp/pd_scene_test_XXXXXX");
    if (!mkdtemp(dir)) {
        dir[0] = '\0';
        return;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/ball.obj", dir);
    FILE* f = fopen(path, "w");
    if (f) {
        fputs("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n", f);
        fclose(f);
    }
}

static void remove_mesh_dir(const char* dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/ball.obj", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/scene.json", dir);
    remove(path);
    rmdir(dir);
}

static pd_status parse(const char* single_quoted, const char* dir, const char* const* sets,
                       int nsets, pd_scene* s, pd_error* err) {
    char* json = dq(single_quoted);
    pd_status st = pd_scene_parse(json, "test.json", dir, sets, nsets, s, err);
    free(json);
    if (st != PD_OK)
        printf("  error %s: %s: %s (line %d)\n", pd_status_string(st), err->path, err->message,
               err->line);
    return st;
}

static const pd_ppd_params* ppd(const pd_scene* s) {
    return (const pd_ppd_params*)s->solver_params;
}

PD_TEST(scene_full_values) {
    char dir[256];
    make_mesh_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    pd_scene s;
    pd_error err;
    PD_REQUIRE(parse(k_full, dir, NULL, 0, &s, &err) == PD_OK);
    PD_CHECK(strcmp(s.method, "projective_pd") == 0);
    PD_CHECK(s.solver == pd_solver_find("projective_pd"));
    PD_CHECK(ppd(&s)->iterations == 25);
    PD_CHECK_NEAR(ppd(&s)->tolerance, 1e-5, 0);
    PD_CHECK(ppd(&s)->global_solve == PD_PPD_DIRECT);
    PD_CHECK(ppd(&s)->line_search == 0);
    PD_CHECK_NEAR(ppd(&s)->horizon, 2.01, 0); /* untouched default */
    PD_CHECK_NEAR(s.world.dt, 0.002, 0);
    PD_CHECK_NEAR(s.world.fps, 24, 0);
    PD_CHECK(s.world.frames == 48);
    PD_CHECK_NEAR(s.world.gravity.y, -3.5, 0);
    PD_CHECK_NEAR(s.world.gravity.z, 0.25, 0);
    PD_CHECK(s.world.seed == 42);
    PD_REQUIRE(s.material_count == 4);
    const pd_material_def* sand = &s.materials[0];
    PD_CHECK(strcmp(sand->name, "sand") == 0);
    PD_CHECK(sand->plasticity == PD_PLASTICITY_NONE && sand->prony_count == 0);
    const pd_material_def* rubber = &s.materials[1];
    PD_CHECK_NEAR(rubber->density, 1100, 0);
    PD_CHECK(!rubber->has_lame);
    /* lambda = E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 + nu)) for E = 1e5, nu = 0.4 */
    PD_CHECK_REL(rubber->lame_lambda, 1e5 * 0.4 / (1.4 * 0.2), 1e-12);
    PD_CHECK_REL(rubber->lame_mu, 1e5 / 2.8, 1e-12);
    const pd_material_def* gel = &s.materials[2];
    PD_CHECK(gel->has_lame);
    /* E = mu (3 lambda + 2 mu) / (lambda + mu) = 1e4 * 8e4 / 3e4; nu = lambda / (2 (l + mu)) */
    PD_CHECK_REL(gel->youngs_modulus, 1e4 * 8e4 / 3e4, 1e-12);
    PD_CHECK_REL(gel->poisson_ratio, 2e4 / 6e4, 1e-12);

    PD_REQUIRE(s.body_count == 3);
    const pd_body_def* col = &s.bodies[0];
    PD_CHECK(strcmp(col->name, "column") == 0 && col->material == 0);
    PD_CHECK(col->sampling == PD_SAMPLING_JITTERED);
    PD_CHECK_NEAR(col->shape.max.y, 0.2, 0);
    PD_CHECK_NEAR(col->velocity.z, 3, 0);
    PD_CHECK_NEAR(col->angular_velocity.y, 0.5, 0);
    PD_REQUIRE(col->pin_count == 2);
    PD_REQUIRE(col->pins[0].keyframe_count == 2);
    PD_CHECK_NEAR(col->pins[0].keyframes[1].t, 0.5, 0);
    PD_CHECK_NEAR(col->pins[0].keyframes[1].translate.x, 0.02, 0);
    PD_CHECK_NEAR(col->pins[0].keyframes[1].rotate_axis.z, 1, 0); /* normalised */
    PD_CHECK_NEAR(col->pins[0].keyframes[1].rotate_degrees, 90, 0);
    PD_CHECK_NEAR(col->pins[0].keyframes[0].rotate_axis.y, 1, 0); /* default axis */
    PD_CHECK(col->pins[1].region.type == PD_SHAPE_SPHERE && col->pins[1].keyframe_count == 0);
    PD_REQUIRE(col->material_change_count == 2);
    PD_CHECK_NEAR(col->material_changes[0].t, 0.25, 0);
    PD_CHECK(col->material_changes[0].material == 2 && col->material_changes[0].has_region);
    PD_CHECK(col->material_changes[0].region.type == PD_SHAPE_BOX);
    PD_CHECK_NEAR(col->material_changes[0].region.min.y, 0.1, 0);
    PD_CHECK(col->material_changes[1].material == 1 && !col->material_changes[1].has_region);
    const pd_body_def* ball = &s.bodies[1];
    PD_CHECK(ball->material_change_count == 0 && ball->material_changes == NULL);
    PD_CHECK(ball->shape.type == PD_SHAPE_MESH && ball->material == 1);
    PD_CHECK(ball->shape.path[0] == '/');
    PD_CHECK(strstr(ball->shape.path, "/ball.obj") != NULL);
    PD_CHECK_NEAR(ball->shape.scale, 0.1, 0);
    PD_CHECK_NEAR(ball->shape.translate.x, 0.5, 0);
    PD_CHECK_NEAR(ball->shape.rotate_degrees, 30, 0);
    const pd_body_def* shell = &s.bodies[2];
    PD_CHECK(strcmp(shell->name, "body2") == 0 && shell->kind == PD_BODY_SHELL);
    PD_CHECK_NEAR(shell->shape.axis.z, 1, 0);
    PD_CHECK_NEAR(shell->shape.height, 0.01, 0);

    PD_REQUIRE(s.collider_count == 3);
    PD_CHECK(s.colliders[0].type == PD_COLLIDER_PLANE);
    PD_CHECK_NEAR(s.colliders[0].normal.y, 1, 0);
    PD_CHECK(s.colliders[0].boundary == PD_BOUNDARY_NO_SLIP);
    PD_CHECK(s.colliders[1].type == PD_COLLIDER_BOX && s.colliders[1].inside == 1);
    PD_CHECK_NEAR(s.colliders[1].friction, 0.3, 0);
    PD_CHECK_NEAR(s.colliders[1].shape.min.z, -0.025, 0);
    PD_CHECK(s.colliders[2].shape.type == PD_SHAPE_SPHERE && s.colliders[2].keyframe_count == 2);
    PD_CHECK_NEAR(s.colliders[2].keyframes[1].translate.y, -0.5, 0);
    PD_CHECK(strcmp(s.output.dir, "frames") == 0 && s.output.every == 2);
    PD_CHECK(s.output.formats == (PD_FORMAT_PLY | PD_FORMAT_VTK));
    PD_CHECK(s.output.attributes == (PD_ATTR_VELOCITY | PD_ATTR_MATERIAL | PD_ATTR_ID));
    pd_scene_free(&s);
    remove_mesh_dir(dir);
}

/* The plasticity and viscoelasticity blocks are parsed for the methods that honour them
 * (docs/scene-format.md); projective_pd honours no Prony series, so the full parse refuses
 * that one (tests/bad_input/scenes.c). Here the parser alone. */
PD_TEST(scene_material_blocks_parsed) {
    char dir[256];
    make_mesh_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    const char* sets[] = {
        "materials.sand.plasticity={\"model\":\"drucker_prager\",\"friction_angle\":35,"
        "\"cohesion\":10}",
        "materials.gel.viscoelasticity={\"model\":\"prony\",\"moduli\":[3000,1000],"
        "\"times\":[0.1,2]}",
        "materials.metal.plasticity={\"model\":\"von_mises\",\"yield_stress\":5e4}",
    };
    pd_scene s;
    pd_error err;
    char* json = dq(k_full);
    PD_REQUIRE(pd_scene_parse_unvalidated(json, "test.json", dir, sets, 3, &s, &err) == PD_OK);
    const pd_material_def* sand = &s.materials[0];
    PD_CHECK(sand->plasticity == PD_PLASTICITY_DRUCKER_PRAGER);
    PD_CHECK_NEAR(sand->friction_angle, 35, 0);
    PD_CHECK_NEAR(sand->cohesion, 10, 0);
    const pd_material_def* gel = &s.materials[2];
    PD_CHECK(gel->prony_count == 2);
    PD_CHECK_NEAR(gel->prony_moduli[1], 1000, 0);
    PD_CHECK_NEAR(gel->prony_times[1], 2, 0);
    PD_CHECK(s.materials[3].plasticity == PD_PLASTICITY_VON_MISES);
    PD_CHECK_NEAR(s.materials[3].yield_stress, 5e4, 0);
    /* the resolved scene keeps the blocks */
    PD_CHECK(strstr(s.resolved_json, "\"drucker_prager\"") != NULL);
    PD_CHECK(strstr(s.resolved_json, "\"prony\"") != NULL);
    pd_scene_free(&s);
    /* validated for projective_pd, which honours drucker_prager and von_mises (He 2017
     * Sec. 5) but no Prony series, the viscoelastic block is refused */
    PD_CHECK(pd_scene_parse(json, "test.json", dir, sets, 3, &s, &err) == PD_ERR_BAD_SCENE);
    printf("  %s: %s\n", err.path, err.message);
    PD_CHECK(strcmp(err.path, "materials.gel.viscoelasticity") == 0);
    free(json);
    remove_mesh_dir(dir);
}

PD_TEST(scene_defaults_filled) {
    pd_scene s;
    pd_error err;
    PD_REQUIRE(parse(k_minimal, NULL, NULL, 0, &s, &err) == PD_OK);
    PD_CHECK(strcmp(s.dir, ".") == 0);
    PD_CHECK(ppd(&s)->iterations == 20);
    PD_CHECK(ppd(&s)->global_solve == PD_PPD_CHEBYSHEV);
    PD_CHECK_NEAR(s.world.dt, 0.001, 0);
    PD_CHECK_NEAR(s.world.fps, 30, 0);
    PD_CHECK(s.world.frames == 90);
    PD_CHECK_NEAR(s.world.gravity.y, -9.81, 0);
    PD_CHECK(s.world.seed == 1);
    PD_CHECK_NEAR(s.materials[0].youngs_modulus, 1e5, 0);
    PD_CHECK_NEAR(s.materials[0].poisson_ratio, 0.25, 0);
    PD_CHECK(s.materials[0].plasticity == PD_PLASTICITY_NONE && s.materials[0].prony_count == 0);
    PD_CHECK(strcmp(s.bodies[0].name, "body0") == 0);
    PD_CHECK(s.bodies[0].sampling == PD_SAMPLING_GRID && s.bodies[0].kind == PD_BODY_DYNAMIC);
    PD_CHECK(s.bodies[0].pin_count == 0 && s.collider_count == 0);
    PD_CHECK(strcmp(s.output.dir, "out") == 0 && s.output.every == 1);
    PD_CHECK(s.output.formats == PD_FORMAT_PLY && s.output.attributes == PD_ATTR_VELOCITY);
    pd_scene_free(&s);
}

PD_TEST(scene_overrides_applied) {
    char dir[256];
    make_mesh_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    const char* sets[] = {
        "solver.iterations=40",
        "time.frames=3",
        "materials.rubber.youngs_modulus=2e5",
        "bodies[0].spacing=0.02",
        "solver.global_solve=position_based",
        "seed=7",
        "output.attributes=[\"id\",\"body\"]",
        "bodies[2].name=tube",
        "colliders[1].inside=false",
    };
    pd_scene s;
    pd_error err;
    PD_REQUIRE(parse(k_full, dir, sets, (int)(sizeof sets / sizeof sets[0]), &s, &err) == PD_OK);
    PD_CHECK(ppd(&s)->iterations == 40);
    PD_CHECK(ppd(&s)->global_solve == PD_PPD_POSITION_BASED);
    PD_CHECK(s.world.frames == 3);
    PD_CHECK_NEAR(s.materials[1].youngs_modulus, 2e5, 0);
    PD_CHECK_NEAR(s.bodies[0].spacing, 0.02, 0);
    PD_CHECK(s.world.seed == 7);
    PD_CHECK(s.output.attributes == (PD_ATTR_ID | PD_ATTR_BODY));
    PD_CHECK(strcmp(s.bodies[2].name, "tube") == 0);
    PD_CHECK(s.colliders[1].inside == 0);
    PD_CHECK(strstr(s.resolved_json, "\"tube\"") != NULL);
    pd_scene_free(&s);

    /* A missing object key is created: output did not exist in the minimal scene. */
    const char* create[] = {"output.dir=elsewhere", "time.fps=60"};
    PD_REQUIRE(parse(k_minimal, NULL, create, 2, &s, &err) == PD_OK);
    PD_CHECK(strcmp(s.output.dir, "elsewhere") == 0);
    PD_CHECK_NEAR(s.world.fps, 60, 0);
    pd_scene_free(&s);
    remove_mesh_dir(dir);
}

static int same_vec(pd_vec3 a, pd_vec3 b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

static int same_shape(const pd_shape_def* a, const pd_shape_def* b) {
    return a->type == b->type && same_vec(a->min, b->min) && same_vec(a->max, b->max) &&
           same_vec(a->center, b->center) && a->radius == b->radius && same_vec(a->base, b->base) &&
           same_vec(a->axis, b->axis) && a->height == b->height && strcmp(a->path, b->path) == 0 &&
           a->scale == b->scale && same_vec(a->translate, b->translate) &&
           same_vec(a->rotate_axis, b->rotate_axis) && a->rotate_degrees == b->rotate_degrees;
}

static int same_keyframes(const pd_keyframe* a, const pd_keyframe* b, int n) {
    for (int i = 0; i < n; ++i)
        if (a[i].t != b[i].t || !same_vec(a[i].translate, b[i].translate) ||
            !same_vec(a[i].rotate_axis, b[i].rotate_axis) ||
            a[i].rotate_degrees != b[i].rotate_degrees)
            return 0;
    return 1;
}

static int same_material(const pd_material_def* a, const pd_material_def* b) {
    int same = strcmp(a->name, b->name) == 0 && a->density == b->density &&
               a->youngs_modulus == b->youngs_modulus && a->poisson_ratio == b->poisson_ratio &&
               a->has_lame == b->has_lame && a->lame_lambda == b->lame_lambda &&
               a->lame_mu == b->lame_mu && a->plasticity == b->plasticity &&
               a->friction_angle == b->friction_angle && a->cohesion == b->cohesion &&
               a->yield_stress == b->yield_stress && a->prony_count == b->prony_count;
    for (int k = 0; same && k < a->prony_count; ++k)
        same = a->prony_moduli[k] == b->prony_moduli[k] && a->prony_times[k] == b->prony_times[k];
    /* the method's keys, blocks included (both start from the same zeroed defaults) */
    return same && memcmp(a->method_params, b->method_params, sizeof a->method_params) == 0;
}

/* Counts differing fields between two parsed scenes (exact comparison). */
static int scene_differences(const pd_scene* a, const pd_scene* b) {
    int d = 0;
    d += strcmp(a->method, b->method) != 0;
    const pd_param_table* t = a->solver->params;
    for (int i = 0; i < t->count; ++i)
        d += pd_param_get_number(&t->params[i], a->solver_params) !=
             pd_param_get_number(&t->params[i], b->solver_params);
    d += a->world.dt != b->world.dt || a->world.fps != b->world.fps;
    d += a->world.frames != b->world.frames || a->world.seed != b->world.seed;
    d += !same_vec(a->world.gravity, b->world.gravity);
    if (a->material_count != b->material_count || a->body_count != b->body_count ||
        a->collider_count != b->collider_count)
        return d + 1000;
    for (int i = 0; i < a->material_count; ++i)
        d += !same_material(&a->materials[i], &b->materials[i]);
    for (int i = 0; i < a->body_count; ++i) {
        const pd_body_def *x = &a->bodies[i], *y = &b->bodies[i];
        d += strcmp(x->name, y->name) != 0 || x->material != y->material;
        d += x->spacing != y->spacing || !same_shape(&x->shape, &y->shape);
        d += x->sampling != y->sampling || x->kind != y->kind;
        d += !same_vec(x->velocity, y->velocity) ||
             !same_vec(x->angular_velocity, y->angular_velocity);
        if (x->pin_count != y->pin_count)
            return d + 1000;
        for (int k = 0; k < x->pin_count; ++k)
            d += !same_shape(&x->pins[k].region, &y->pins[k].region) ||
                 x->pins[k].keyframe_count != y->pins[k].keyframe_count ||
                 !same_keyframes(x->pins[k].keyframes, y->pins[k].keyframes,
                                 x->pins[k].keyframe_count);
        if (x->material_change_count != y->material_change_count)
            return d + 1000;
        for (int k = 0; k < x->material_change_count; ++k) {
            const pd_material_change_def *u = &x->material_changes[k], *v = &y->material_changes[k];
            d += u->t != v->t || u->material != v->material || u->has_region != v->has_region;
            d += u->has_region && !same_shape(&u->region, &v->region);
        }
    }
    for (int i = 0; i < a->collider_count; ++i) {
        const pd_collider_def *x = &a->colliders[i], *y = &b->colliders[i];
        d += x->type != y->type || !same_vec(x->point, y->point) || !same_vec(x->normal, y->normal);
        d += (x->type != PD_COLLIDER_PLANE && !same_shape(&x->shape, &y->shape));
        d += x->inside != y->inside || x->boundary != y->boundary || x->friction != y->friction;
        d += !same_vec(x->velocity, y->velocity) ||
             !same_vec(x->angular_velocity, y->angular_velocity);
        d += x->keyframe_count != y->keyframe_count ||
             !same_keyframes(x->keyframes, y->keyframes, x->keyframe_count);
    }
    d += strcmp(a->output.dir, b->output.dir) != 0 || a->output.every != b->output.every;
    d += a->output.formats != b->output.formats || a->output.attributes != b->output.attributes;
    return d;
}

PD_TEST(scene_resolved_round_trip) {
    char dir[256];
    make_mesh_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    const char* sets[] = {"gravity=[0.1, -9.7, 0.3]", "materials.rubber.poisson_ratio=0.3",
                          "materials.sand.deviatoric_scale=2"};
    pd_scene a, b, c;
    pd_error err;
    PD_REQUIRE(parse(k_full, dir, sets, 3, &a, &err) == PD_OK);
    PD_REQUIRE(a.resolved_json != NULL);
    PD_CHECK(strstr(a.resolved_json, "\"peridot_version\"") != NULL);
    PD_CHECK(strstr(a.resolved_json, pd_version()) != NULL);
    /* Parsed from another folder: the mesh path is absolute, so it still resolves. */
    PD_REQUIRE(pd_scene_parse(a.resolved_json, "resolved.json", "/", NULL, 0, &b, &err) == PD_OK);
    int diff = scene_differences(&a, &b);
    PD_CHECK_NEAR(diff, 0, 0);
    PD_CHECK(strcmp(a.resolved_json, b.resolved_json) == 0);
    pd_scene_free(&b);
    pd_scene_free(&a);

    /* The minimal scene's resolved form spells out every default, and parses back equal. */
    PD_REQUIRE(parse(k_minimal, NULL, NULL, 0, &a, &err) == PD_OK);
    PD_CHECK(strstr(a.resolved_json, "\"frames\":\t90") != NULL);
    PD_CHECK(strstr(a.resolved_json, "\"sampling\":\t\"grid\"") != NULL);
    PD_CHECK(strstr(a.resolved_json, "\"horizon\":\t2.01") != NULL);
    PD_REQUIRE(pd_scene_parse(a.resolved_json, "r.json", ".", NULL, 0, &c, &err) == PD_OK);
    diff = scene_differences(&a, &c);
    PD_CHECK_NEAR(diff, 0, 0);
    pd_scene_free(&c);
    pd_scene_free(&a);
    remove_mesh_dir(dir);
}

/* ---- a method's material blocks, through the material parser and the resolved scene. No
 * registered method declares a block yet, so a stand-in method does. ---- */

typedef struct granular_params {
    pd_real friction;
    int granular; /* 1: the block is given */
    pd_real hardening;
    pd_real cohesion_scale;
} granular_params;

#define G(f) offsetof(granular_params, f)
static const pd_param_info k_granular_rows[] = {
    {"friction", PD_PARAM_REAL, G(friction), 0.5, 0, 10, "1", NULL, "a flat key"},
    {"granular", PD_PARAM_BLOCK, G(granular), 0, 0, 0, "-", NULL, "a block"},
    {"granular.hardening", PD_PARAM_REAL, G(hardening), 10, 0, 100, "1", NULL, "in the block"},
    {"granular.cohesion_scale", PD_PARAM_REAL, G(cohesion_scale), 1, 0, 5, "1", NULL, "too"},
};
static const pd_param_table k_granular_table = {k_granular_rows, 4, sizeof(granular_params)};
static const pd_solver_vtable k_granular_method = {.name = "granular_test",
                                                   .material_params = &k_granular_table};

static const char* k_granular_materials =
    "{ 'materials': {\n"
    "    'sand': { 'density': 1600, 'friction': 0.3, 'granular': { 'hardening': 40 } },\n"
    "    'rubber': { 'density': 1100 } } }";

/* The `materials` of a scene (single quotes; `sets` applied to the tree first) parsed for the
 * stand-in method into s, which the caller frees either way. */
static pd_status parse_granular(const char* single_quoted, const char* const* sets, int nsets,
                                pd_scene* s, pd_error* err) {
    memset(s, 0, sizeof *s);
    s->solver = &k_granular_method;
    snprintf(s->method, sizeof s->method, "%s", k_granular_method.name);
    char* json = dq(single_quoted);
    cJSON* root = cJSON_Parse(json);
    free(json);
    pd_status st = root ? PD_OK : PD_ERR_INVALID_ARGUMENT;
    if (st == PD_OK)
        st = pd_scene_apply_overrides(root, sets, nsets, err);
    if (st == PD_OK)
        st = pd_scene_parse_materials(cJSON_GetObjectItemCaseSensitive(root, "materials"), s, err);
    cJSON_Delete(root);
    if (st != PD_OK)
        printf("  error %s: %s\n", err->path, err->message);
    return st;
}

static const granular_params* granular(const pd_scene* s, int i) {
    return (const granular_params*)s->materials[i].method_params;
}

/* Fails when a material's block is not read (flag, nested value), when an absent block sets
 * the flag or loses the defaults, or when the resolved materials do not nest the block with
 * all its keys or do not read back to the same materials. */
PD_TEST(scene_method_block_in_a_material_round_trip) {
    pd_scene a, b;
    pd_error err;
    PD_REQUIRE(parse_granular(k_granular_materials, NULL, 0, &a, &err) == PD_OK);
    const granular_params *sand = granular(&a, 0), *rubber = granular(&a, 1);
    PD_CHECK(sand->granular == 1 && sand->hardening == 40 && sand->cohesion_scale == 1);
    PD_CHECK(sand->friction == 0.3);
    PD_CHECK(rubber->granular == 0 && rubber->hardening == 10 && rubber->cohesion_scale == 1);
    cJSON* root = pd_scene_to_json(&a);
    PD_REQUIRE(root);
    cJSON* materials = cJSON_GetObjectItemCaseSensitive(root, "materials");
    char* text = cJSON_PrintUnformatted(materials);
    printf("  resolved materials: %s\n", text);
    PD_CHECK(strstr(text, "\"granular\":{\"hardening\":40,\"cohesion_scale\":1}") != NULL);
    PD_CHECK(strstr(text, "granular.") == NULL);
    cJSON* rubber_json = cJSON_GetObjectItemCaseSensitive(materials, "rubber");
    PD_CHECK(rubber_json && !cJSON_GetObjectItemCaseSensitive(rubber_json, "granular"));
    char* again = malloc(strlen(text) + 32);
    sprintf(again, "{\"materials\": %s}", text);
    PD_CHECK(parse_granular(again, NULL, 0, &b, &err) == PD_OK);
    PD_CHECK(b.material_count == 2 && same_material(&a.materials[0], &b.materials[0]) &&
             same_material(&a.materials[1], &b.materials[1]));
    free(again);
    cJSON_free(text);
    cJSON_Delete(root);
    pd_scene_free(&b);
    pd_scene_free(&a);
}

/* A material's block errors name their path and the keys supported there: a block key at the
 * material's level is an unknown key of the material (whose list has the block, not its keys). */
PD_TEST(scene_method_block_errors_in_a_material) {
    static const struct {
        const char* set;
        const char* path;
        const char* words;
    } k_bad[] = {
        {"materials.rubber.cohesion_scale=1", "materials.rubber.cohesion_scale",
         "friction, granular"},
        {"materials.sand.granular=3", "materials.sand.granular",
         "expected an object with keys hardening, cohesion_scale, got the number 3"},
        {"materials.sand.granular.hardenin=1", "materials.sand.granular.hardenin",
         "valid keys: hardening, cohesion_scale"},
        {"materials.sand.granular.hardening=-1", "materials.sand.granular.hardening", "[0, 100]"},
    };
    int wrong = 0;
    for (size_t k = 0; k < sizeof k_bad / sizeof k_bad[0]; ++k) {
        pd_scene s;
        pd_error err = {0};
        pd_status st = parse_granular(k_granular_materials, &k_bad[k].set, 1, &s, &err);
        int named = st == PD_ERR_BAD_SCENE && strcmp(err.path, k_bad[k].path) == 0 &&
                    strstr(err.message, k_bad[k].words) != NULL &&
                    strstr(err.message, "granular.") == NULL;
        printf("  %s --set %s\n", named ? "ok  " : "FAIL", k_bad[k].set);
        wrong += !named;
        pd_scene_free(&s);
    }
    PD_CHECK(wrong == 0);
}

/* `--set materials.<m>.<block>.<key>=v` reaches a block key: into a given block it keeps the
 * block's other keys, into an absent one it gives the block. */
PD_TEST(scene_method_block_overrides) {
    const char* sets[] = {"materials.sand.granular.cohesion_scale=2",
                          "materials.rubber.granular.hardening=7"};
    pd_scene s;
    pd_error err;
    PD_REQUIRE(parse_granular(k_granular_materials, sets, 2, &s, &err) == PD_OK);
    const granular_params *sand = granular(&s, 0), *rubber = granular(&s, 1);
    PD_CHECK(sand->granular == 1 && sand->hardening == 40 && sand->cohesion_scale == 2);
    PD_CHECK(rubber->granular == 1 && rubber->hardening == 7 && rubber->cohesion_scale == 1);
    pd_scene_free(&s);
}

/* Whether the minimal scene with `set` is refused at `path` with `words` in the message. */
static int minimal_refused_at(const char* set, const char* path, const char* words) {
    pd_scene s;
    pd_error err;
    pd_status st = parse(k_minimal, ".", &set, 1, &s, &err);
    int named =
        st == PD_ERR_BAD_SCENE && strcmp(err.path, path) == 0 && strstr(err.message, words) != NULL;
    printf("  %s --set %s\n", named ? "ok  " : "FAIL", set);
    if (st == PD_OK)
        pd_scene_free(&s);
    return named;
}

/* An int option of a method's params struct, read through its table. */
static int method_int(const pd_solver_vtable* m, const void* params, const char* name) {
    const pd_param_info* p = pd_param_find(m->params, name);
    return p && params ? *(const int*)((const char*)params + p->offset) : -1;
}

/* `solver` per method: each block is checked against its own method's table, the running
 * method's acts, the others are kept for the resolved scene; `--set solver.<key>` reaches the
 * running method's block (the method the last `method=` names); the flat form of earlier
 * scenes is the running method's. */
PD_TEST(scene_solver_blocks_per_method) {
    const pd_solver_vtable* sbpd = pd_solver_find("sbpd");
    const pd_solver_vtable* hpd = pd_solver_find("hyperelastic_pd");
    PD_REQUIRE(sbpd && hpd);
    int k_sbpd = 0;
    while (pd_solver_all()[k_sbpd] != sbpd)
        ++k_sbpd;
    const char* blocks = "solver={\"projective_pd\": {\"iterations\": 7}, \"sbpd\": "
                         "{\"iterations\": 3}}";
    pd_scene s;
    pd_error err;
    PD_REQUIRE(parse(k_minimal, ".", &blocks, 1, &s, &err) == PD_OK);
    PD_CHECK(ppd(&s)->iterations == 7);
    PD_CHECK(method_int(sbpd, s.other_solver_params[k_sbpd], "iterations") == 3);
    PD_CHECK(strstr(s.resolved_json, "\"sbpd\"") != NULL);
    pd_scene_free(&s);
    const char* under_sbpd[] = {blocks, "method=sbpd"};
    PD_REQUIRE(parse(k_minimal, ".", under_sbpd, 2, &s, &err) == PD_OK);
    PD_CHECK(method_int(sbpd, s.solver_params, "iterations") == 3);
    pd_scene_free(&s);
    /* a flat --set reaches the running method's block, whatever the order of the --set */
    const char* late_method[] = {blocks, "solver.iterations=9", "method=hyperelastic_pd"};
    PD_REQUIRE(parse(k_minimal, ".", late_method, 3, &s, &err) == PD_OK);
    PD_CHECK(method_int(hpd, s.solver_params, "iterations") == 9);
    pd_scene_free(&s);
    static const struct {
        const char* set;
        const char* path;
        const char* words;
    } k_bad[] = {
        {"solver={\"projective_pd\": {}, \"sbpd\": {\"iteratons\": 3}}", "solver.sbpd.iteratons",
         "valid keys: iterations"},
        {"solver={\"projective_pd\": {}, \"iterations\": 3}", "solver.iterations",
         "expected a method name"},
        {"solver={\"static_friction\": 0.5}", "solver.static_friction", "an option of method sbpd"},
        {"solver=[1]", "solver", "per method"},
    };
    int wrong = 0;
    for (size_t k = 0; k < sizeof k_bad / sizeof k_bad[0]; ++k)
        wrong += !minimal_refused_at(k_bad[k].set, k_bad[k].path, k_bad[k].words);
    PD_CHECK(wrong == 0);
}

/* time.dt: a number, "auto" (an implicit method's documented step), or an object keyed by
 * method whose every entry is checked and whose missing methods take "auto"; the resolved
 * scene writes it as given, and with "auto" the step an implicit method took. */
PD_TEST(scene_time_step_auto_and_per_method) {
    pd_scene s;
    pd_error err;
    const char* auto_dt = "time.dt=auto";
    PD_REQUIRE(parse(k_minimal, ".", &auto_dt, 1, &s, &err) == PD_OK);
    PD_CHECK(s.world.dt_auto && s.world.dt == PD_PPD_AUTO_DT);
    PD_CHECK(strstr(s.resolved_json, "\"dt\":\t\"auto\"") != NULL);
    PD_CHECK(strstr(s.resolved_json, "\"dt_chosen\"") != NULL);
    pd_scene_free(&s);
    const char* other = "time.dt={\"sbpd\": 0.0001}";
    PD_REQUIRE(parse(k_minimal, ".", &other, 1, &s, &err) == PD_OK);
    PD_CHECK(s.world.dt_auto && s.world.dt == PD_PPD_AUTO_DT);
    pd_scene_free(&s);
    const char* own = "time.dt={\"projective_pd\": 0.002, \"sbpd\": \"auto\"}";
    PD_REQUIRE(parse(k_minimal, ".", &own, 1, &s, &err) == PD_OK);
    PD_CHECK(!s.world.dt_auto && s.world.dt == 0.002);
    char* again = strdup(s.resolved_json);
    pd_scene_free(&s);
    pd_scene r;
    PD_REQUIRE(pd_scene_parse(again, "resolved.json", ".", NULL, 0, &r, &err) == PD_OK);
    PD_CHECK(!r.world.dt_auto && r.world.dt == 0.002 && r.dt_per_method);
    PD_CHECK(strstr(r.resolved_json, "\"sbpd\":\t\"auto\"") != NULL);
    pd_scene_free(&r);
    free(again);
    static const struct {
        const char* set;
        const char* path;
    } k_bad[] = {
        {"time.dt={\"sbpd\": \"fast\"}", "time.dt.sbpd"},
        {"time.dt={\"sbpd\": -1}", "time.dt.sbpd"},
        {"time.dt={\"mpm2\": 0.001}", "time.dt.mpm2"},
        {"time.dt=\"soon\"", "time.dt"},
    };
    int wrong = 0;
    for (size_t k = 0; k < sizeof k_bad / sizeof k_bad[0]; ++k)
        wrong += !minimal_refused_at(k_bad[k].set, k_bad[k].path, "");
    PD_CHECK(wrong == 0);
}

PD_TEST(scene_load_file_and_memory) {
    char dir[256], path[512];
    make_mesh_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    snprintf(path, sizeof path, "%s/scene.json", dir);
    FILE* f = fopen(path, "w");
    PD_REQUIRE(f);
    char* json = dq(k_full);
    fputs(json, f);
    fclose(f);
    free(json);
    size_t before = pd_bytes_in_use();
    pd_scene s;
    pd_error err;
    pd_status st = pd_scene_load(path, NULL, 0, &s, &err);
    PD_REQUIRE(st == PD_OK);
    PD_CHECK(strcmp(s.dir, dir) == 0);
    PD_CHECK(strcmp(s.file, path) == 0);
    PD_CHECK(s.bodies[1].shape.type == PD_SHAPE_MESH);
    PD_CHECK(pd_bytes_in_use() > before);
    pd_scene_free(&s);
    PD_CHECK_NEAR((double)pd_bytes_in_use(), (double)before, 0);

    /* A failure after materials and bodies were allocated leaves nothing behind. */
    const char* bad[] = {"output.every=0"};
    st = pd_scene_load(path, bad, 1, &s, &err);
    PD_CHECK(st == PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, "output.every") == 0);
    PD_CHECK(strcmp(err.file, "--set output.every=0") == 0); /* the override made the error */
    PD_CHECK_NEAR((double)pd_bytes_in_use(), (double)before, 0);

    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.json", dir);
    st = pd_scene_load(missing, NULL, 0, &s, &err);
    PD_CHECK(st == PD_ERR_IO);
    PD_CHECK(strcmp(err.file, missing) == 0);
    st = pd_scene_load(dir, NULL, 0, &s, &err); /* a folder */
    PD_CHECK(st == PD_ERR_IO);
    st = pd_scene_load("/dev/zero", NULL, 0, &s, &err); /* endless: refused, not read */
    printf("  /dev/zero: %s\n", err.message);
    PD_CHECK(st == PD_ERR_IO && strstr(err.message, "regular file") != NULL);
    PD_CHECK_NEAR((double)pd_bytes_in_use(), (double)before, 0);
    remove_mesh_dir(dir);
}

/* The line of the first occurrence of `needle` in text, counted independently of the parser. */
static int line_of(const char* text, const char* needle) {
    const char* at = strstr(text, needle);
    int line = 1;
    for (const char* p = text; at && p < at; ++p)
        line += *p == '\n';
    return at ? line : -1;
}

/* single_quoted with `from` replaced by `to` (from must be in it). */
static char* replaced(const char* single_quoted, const char* from, const char* to) {
    const char* at = strstr(single_quoted, from);
    if (!at)
        return NULL;
    size_t head = (size_t)(at - single_quoted), len = strlen(single_quoted);
    char* out = malloc(len - strlen(from) + strlen(to) + 1);
    if (out)
        sprintf(out, "%.*s%s%s", (int)head, single_quoted, to, at + strlen(from));
    return out;
}

/* Parses k_full with one edit; checks the error's path and that its line is the line of `at`
 * in the edited text. */
static void check_error_line(const char* dir, const char* from, const char* to, const char* path,
                             const char* at) {
    char* text = replaced(k_full, from, to);
    PD_REQUIRE(text);
    pd_scene s;
    pd_error err;
    PD_CHECK(parse(text, dir, NULL, 0, &s, &err) == PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, path) == 0);
    PD_CHECK_NEAR(err.line, line_of(text, at), 0);
    free(text);
}

PD_TEST(scene_error_lines) {
    char dir[256];
    make_mesh_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    /* Value errors point at the key's line; a missing key at its object's line. */
    check_error_line(dir, "'radius': 0.2,", "'radius': -1,", "colliders[2].radius", "'radius': -1");
    check_error_line(dir, "{ 't': 0.5,", "{ 't': 0,", "bodies[0].pins[0].keyframes[1].t",
                     "{ 't': 0,");
    check_error_line(dir, "'axis': [0, 0, 3], 'radius': 0.1,", "'axis': [0, 0, 3],",
                     "bodies[2].shape.radius", "'shape': { 'type': 'cylinder'");
    /* A value an override wrote is reported at the override: the file's line holds the value
     * the override replaced. */
    pd_scene s;
    pd_error err;
    const char* radius[] = {"colliders[2].radius=-1"};
    PD_CHECK(parse(k_full, dir, radius, 1, &s, &err) == PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, "colliders[2].radius") == 0);
    PD_CHECK(strcmp(err.file, "--set colliders[2].radius=-1") == 0);
    PD_CHECK_NEAR(err.line, 0, 0);
    remove_mesh_dir(dir);
}

/* ---- the tables of the common keys (scene/scene_tables.c) ---- */

/* Any def struct a table's offsets are into. */
typedef union any_def {
    pd_scene_top top;
    pd_world_def world;
    pd_material_def material;
    pd_body_def body;
    pd_shape_def shape;
    pd_keyframe keyframe;
    pd_collider_def collider;
    pd_output_def output;
    pd_emitter_def emitter;
} any_def;

/* The struct behind table t at the values a scene that leaves every key out gets. */
static void table_defaults(const pd_scene_table* t, any_def* d) {
    memset(d, 0, sizeof *d);
    pd_world_def w = pd_default_world_def();
    if (t == &pd_scene_top_table) {
        d->top.gravity = w.gravity;
        d->top.seed = (int)w.seed;
    } else if (t == &pd_scene_time_table)
        d->world = w;
    else if (t == &pd_scene_material_table || t == &pd_scene_plasticity_table ||
             t == &pd_scene_visco_table || t == &pd_scene_rate_table)
        d->material = pd_default_material_def();
    else if (t == &pd_scene_body_table)
        d->body = pd_default_body_def();
    else if (t == &pd_scene_shape_table)
        d->shape = pd_default_shape_def();
    else if (t == &pd_scene_collider_table)
        d->collider = pd_default_collider_def();
    else if (t == &pd_scene_output_table)
        d->output = pd_default_output_def();
    else if (t == &pd_scene_emitter_table)
        d->emitter = pd_default_emitter_def();
    /* pins and keyframes: zero (a keyframe's translate starts at 0) */
}

/* The default the docs print for row k, as JSON; 0 when it is no value (required, a rule's
 * text such as "required (box)", or a key read by hand). */
static int documented_default(const pd_scene_key* k, char* out, size_t cap) {
    const pd_param_info* p = &k->p;
    char name[64];
    if (k->flags & (PD_KEY_BY_HAND | PD_KEY_REQUIRED))
        return 0;
    if (k->def_doc) {
        cJSON* j = cJSON_Parse(k->def_doc);
        cJSON_Delete(j);
        snprintf(out, cap, "%s", k->def_doc);
        return j != NULL;
    }
    switch (p->type) {
        case PD_PARAM_BOOL:
            snprintf(out, cap, "%s", p->def != 0 ? "true" : "false");
            return 1;
        case PD_PARAM_ENUM:
            pd_param_choice_name(p, (int)p->def, name, sizeof name);
            snprintf(out, cap, "\"%s\"", name);
            return 1;
        case PD_PARAM_VEC3:
            snprintf(out, cap, "[%.17g, %.17g, %.17g]", p->def, p->def, p->def);
            return 1;
        case PD_PARAM_REAL:
        case PD_PARAM_INT:
            snprintf(out, cap, "%.17g", p->def);
            return 1;
        default:
            return 0;
    }
}

/* Bytes of the value of row k (its field in the def struct). */
static size_t field_size(const pd_scene_key* k, const void* blob) {
    switch (k->p.type) {
        case PD_PARAM_REAL:
            return sizeof(pd_real);
        case PD_PARAM_VEC3:
            return sizeof(pd_vec3);
        case PD_PARAM_STRING:
            return strlen((const char*)blob + k->p.offset) + 1;
        default:
            return sizeof(int);
    }
}

/* The default the docs print for every key is the value a scene that leaves the key out gets:
 * the row's default, read by the parser's reader, equals the def struct's default. */
PD_TEST(scene_tables_documented_defaults_are_the_defaults) {
    int checked = 0;
    for (int i = 0; pd_scene_tables[i]; ++i) {
        const pd_scene_table* t = pd_scene_tables[i];
        char keys[PD_SCENE_KEYS_MAX];
        pd_scene_table_keys(t, keys, sizeof keys);
        PD_CHECK(strlen(keys) + 1 < sizeof keys); /* no table's key list is cut */
        for (int r = 0; r < t->count; ++r) {
            const pd_scene_key* k = &t->keys[r];
            char value[128], json[256];
            any_def want, got;
            if (!documented_default(k, value, sizeof value))
                continue;
            table_defaults(t, &want);
            memset(&got, 0, sizeof got);
            snprintf(json, sizeof json, "{\"%s\": %s}", k->p.name, value);
            cJSON* obj = cJSON_Parse(json);
            pd_error err = {0};
            int ok = obj && pd_scene_read_key(t, k->p.name, obj, "x", 0, &got, &err) == PD_OK;
            cJSON_Delete(obj);
            size_t n = field_size(k, &want);
            ok = ok && memcmp((char*)&got + k->p.offset, (char*)&want + k->p.offset, n) == 0;
            if (!ok)
                printf("  FAIL %s: %s: the docs say %s, a scene without it gets another value "
                       "(%s)\n",
                       t->title, k->p.name, value, err.message);
            PD_CHECK(ok);
            ++checked;
        }
    }
    printf("  %d documented defaults read back as the defaults\n", checked);
    PD_CHECK(checked >= 20);
}

/* Rows of table index `ti` seen in the resolved scene. */
#define MAX_ROWS 32
static int k_seen[16][MAX_ROWS];

static int table_index(const pd_scene_table* t) {
    for (int i = 0; pd_scene_tables[i]; ++i)
        if (pd_scene_tables[i] == t)
            return i;
    return -1;
}

/* Every key of obj is a row of t (or of `also`, or of the method's `extra` table); marks it. */
static int keys_declared(const cJSON* obj, const char* where, const pd_scene_table* t,
                         const pd_scene_table* also, const pd_param_table* extra) {
    int ok = 1;
    for (const cJSON* c = obj ? obj->child : NULL; c; c = c->next) {
        const pd_scene_table* in = pd_scene_key_find(t, c->string) ? t : also;
        const pd_scene_key* k = in ? pd_scene_key_find(in, c->string) : NULL;
        if (k)
            k_seen[table_index(in)][k - in->keys] = 1;
        else if (!pd_param_find(extra, c->string)) {
            printf("  FAIL %s.%s is in the resolved scene, but is no row of %s\n", where, c->string,
                   t->title);
            ok = 0;
        }
    }
    return ok;
}

static int keyframes_declared(const cJSON* owner, const char* where) {
    int ok = 1;
    const cJSON* list = cJSON_GetObjectItemCaseSensitive(owner, "keyframes");
    for (const cJSON* f = list ? list->child : NULL; f; f = f->next)
        ok &= keys_declared(f, where, &pd_scene_keyframe_table, NULL, NULL);
    return ok;
}

static int bodies_declared(const cJSON* root) {
    int ok = 1;
    const cJSON* bodies = cJSON_GetObjectItemCaseSensitive(root, "bodies");
    for (const cJSON* b = bodies ? bodies->child : NULL; b; b = b->next) {
        ok &= keys_declared(b, "bodies[i]", &pd_scene_body_table, NULL, NULL);
        ok &= keys_declared(cJSON_GetObjectItemCaseSensitive(b, "shape"), "shape",
                            &pd_scene_shape_table, NULL, NULL);
        const cJSON* pins = cJSON_GetObjectItemCaseSensitive(b, "pins");
        for (const cJSON* p = pins ? pins->child : NULL; p; p = p->next) {
            ok &= keys_declared(p, "pins[k]", &pd_scene_pin_table, NULL, NULL);
            ok &= keys_declared(cJSON_GetObjectItemCaseSensitive(p, "region"), "region",
                                &pd_scene_shape_table, NULL, NULL);
            ok &= keyframes_declared(p, "pins[k].keyframes[j]");
        }
        const cJSON* changes = cJSON_GetObjectItemCaseSensitive(b, "material_changes");
        for (const cJSON* c = changes ? changes->child : NULL; c; c = c->next) {
            ok &= keys_declared(c, "material_changes[k]", &pd_scene_material_change_table, NULL,
                                NULL);
            const cJSON* region = cJSON_GetObjectItemCaseSensitive(c, "region");
            if (region)
                ok &= keys_declared(region, "region", &pd_scene_shape_table, NULL, NULL);
        }
    }
    return ok;
}

static int scene_keys_declared(const cJSON* root, const pd_scene* s) {
    int ok = keys_declared(root, "(top)", &pd_scene_top_table, NULL, NULL);
    ok &= keys_declared(cJSON_GetObjectItemCaseSensitive(root, "time"), "time",
                        &pd_scene_time_table, NULL, NULL);
    const cJSON* materials = cJSON_GetObjectItemCaseSensitive(root, "materials");
    for (const cJSON* m = materials ? materials->child : NULL; m; m = m->next) {
        ok &= keys_declared(m, "materials.<name>", &pd_scene_material_table, NULL,
                            s->solver->material_params);
        ok &= keys_declared(cJSON_GetObjectItemCaseSensitive(m, "plasticity"), "plasticity",
                            &pd_scene_plasticity_table, NULL, NULL);
        const cJSON* p = cJSON_GetObjectItemCaseSensitive(m, "plasticity");
        ok &= keys_declared(cJSON_GetObjectItemCaseSensitive(p, "rate_dependence"),
                            "rate_dependence", &pd_scene_rate_table, NULL, NULL);
        ok &= keys_declared(cJSON_GetObjectItemCaseSensitive(m, "viscoelasticity"),
                            "viscoelasticity", &pd_scene_visco_table, NULL, NULL);
    }
    ok &= bodies_declared(root);
    const cJSON* colliders = cJSON_GetObjectItemCaseSensitive(root, "colliders");
    for (const cJSON* c = colliders ? colliders->child : NULL; c; c = c->next) {
        ok &=
            keys_declared(c, "colliders[i]", &pd_scene_collider_table, &pd_scene_shape_table, NULL);
        ok &= keyframes_declared(c, "colliders[i].keyframes[j]");
    }
    const cJSON* emitters = cJSON_GetObjectItemCaseSensitive(root, "emitters");
    for (const cJSON* e = emitters ? emitters->child : NULL; e; e = e->next)
        ok &= keys_declared(e, "emitters[i]", &pd_scene_emitter_table, NULL, NULL);
    return ok & keys_declared(cJSON_GetObjectItemCaseSensitive(root, "output"), "output",
                              &pd_scene_output_table, NULL, NULL);
}

/* The tables are the keys: every key the resolved scene writes (and so the parser reads back) is
 * a row of its object's table, and every row of every table is written for a scene that uses
 * each kind of object. A key added to the parser and the resolved scene without a row, or a row
 * nothing reads, fails here. */
PD_TEST(scene_tables_are_the_keys_parsed_and_written) {
    char dir[256];
    make_mesh_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    const char* sets[] = {
        "materials.sand.plasticity={\"model\": \"drucker_prager\", \"friction_angle\": 35, "
        "\"rate_dependence\": {\"model\": \"mu_i\", \"mu_2\": 1.2}}",
        "materials.metal.plasticity={\"model\": \"von_mises\", \"yield_stress\": 1e4}",
        "materials.rubber.plasticity={\"model\": \"herschel_bulkley\", \"yield_stress\": 50, "
        "\"viscosity\": 2, \"exponent\": 0.5}",
        "materials.rubber.viscoelasticity={\"model\": \"prony\", \"moduli\": [1e4], "
        "\"times\": [0.1]}",
        "materials.metal.viscoelasticity={\"model\": \"hencky_maxwell\", \"shear_modulus\": "
        "1e4, \"bulk_modulus\": 2e4, \"deviatoric_viscosity\": 50, \"volumetric_viscosity\": "
        "500}",
        "colliders[2]={\"type\": \"mesh\", \"path\": \"ball.obj\", \"thickness\": 0.01}",
        "bodies[0].pins[1].release=2",
        "time.dt=auto",
        "materials.snow={\"density\": 400, \"plasticity\": {\"model\": \"cam_clay\"}}",
        "emitters=[{\"body\": \"ball\", \"material\": \"gel\", \"center\": [0, 1, 0], "
        "\"direction\": [0, -1, 0], \"radius\": 0.02, \"speed\": 1, \"start\": 0.1, "
        "\"stop\": 2, \"spacing\": 0.01}]",
        "materials.gel.viscoelasticity={\"model\": \"hencky_maxwell\", \"shear_modulus\": "
        "1e3, \"lambda\": 0, \"deviatoric_viscosity\": 5, \"volumetric_viscosity\": 50}"};
    char* json = dq(k_full);
    pd_scene s;
    pd_error err;
    pd_status st = pd_scene_parse_unvalidated(json, "t.json", dir, sets, 11, &s, &err);
    free(json);
    if (st != PD_OK)
        printf("  error %s: %s\n", err.path, err.message);
    PD_REQUIRE(st == PD_OK);
    cJSON* root = cJSON_Parse(s.resolved_json);
    PD_REQUIRE(root);
    memset(k_seen, 0, sizeof k_seen);
    PD_CHECK(scene_keys_declared(root, &s));
    for (int i = 0; pd_scene_tables[i]; ++i)
        for (int r = 0; r < pd_scene_tables[i]->count; ++r) {
            if (!k_seen[i][r])
                printf("  FAIL %s: %s is a row, but the resolved scene never writes it\n",
                       pd_scene_tables[i]->title, pd_scene_tables[i]->keys[r].p.name);
            PD_CHECK(k_seen[i][r]);
        }
    cJSON_Delete(root);
    pd_scene_free(&s);
    remove_mesh_dir(dir);
}
