/* Helpers for physics tests of any method: a world from a JSON scene string, stepping, region
 * averages. A method's own tests reach its state through their own header
 * (projective_pd_support.h), never through this one. */
#ifndef PD_PHYSICS_SUPPORT_H
#define PD_PHYSICS_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/svd3.h"
#include "peridot/peridot.h"
#include "test.h"
#include "world/world.h"

typedef struct pd_test_sim {
    pd_scene scene;
    pd_world* world;
} pd_test_sim;

/* Builds the world of a parsed scene (st: the parse's status); prints the error and returns 0
 * on failure. */
static inline int pd_test_sim_build(pd_test_sim* t, pd_status st, pd_error* err) {
    if (st == PD_OK) {
        st = pd_create_world(&t->scene, &t->world, err);
        if (st != PD_OK)
            pd_scene_free(&t->scene);
    }
    if (st != PD_OK)
        printf("  scene error: %s: %s\n", err->path, err->message);
    return st == PD_OK;
}

/* Parses `json` (with overrides) and builds the world; prints the error and returns 0 on
 * failure. */
static inline int pd_test_sim_open(pd_test_sim* t, const char* json, const char* const* sets,
                                   int set_count) {
    memset(t, 0, sizeof *t);
    pd_error err = {0};
    pd_status st = pd_scene_parse(json, "test.json", PD_SOURCE_DIR "/scenes", sets, set_count,
                                  &t->scene, &err);
    return pd_test_sim_build(t, st, &err);
}

/* The same for one of the repository's scene files, `name` within scenes/. */
static inline int pd_test_sim_open_scene(pd_test_sim* t, const char* name, const char* const* sets,
                                         int set_count) {
    char path[1024];
    snprintf(path, sizeof path, "%s/scenes/%s", PD_SOURCE_DIR, name);
    memset(t, 0, sizeof *t);
    pd_error err = {0};
    return pd_test_sim_build(t, pd_scene_load(path, sets, set_count, &t->scene, &err), &err);
}

static inline void pd_test_sim_close(pd_test_sim* t) {
    pd_destroy_world(t->world);
    pd_scene_free(&t->scene);
}

/* Steps until time >= t_end; returns 0 (after printing) if a step fails. */
static inline int pd_test_sim_run(pd_test_sim* t, double t_end) {
    pd_error err = {0};
    while (t->world->time < t_end - 1e-9) {
        pd_status st = pd_world_step(t->world, &err);
        if (st != PD_OK) {
            printf("  step failed: %s %s\n", pd_status_string(st), err.message);
            return 0;
        }
    }
    return 1;
}

/* For the thread-count tests (pd_set_threads before opening): with the simulation opened
 * (`opened`), takes `steps` steps, copies the positions by particle id into out (at most cap),
 * closes it and restores the default thread count. Returns the particles copied, 0 when a step
 * or the opening failed. */
static inline size_t pd_test_positions_after_steps(pd_test_sim* t, int opened, int steps,
                                                   pd_vec3* out, size_t cap) {
    pd_error err = {0};
    int ok = opened;
    for (int k = 0; ok && k < steps; ++k)
        ok = pd_world_step(t->world, &err) == PD_OK;
    size_t n = 0;
    if (ok) {
        const pd_particles* p = &t->world->particles;
        n = p->count < cap ? p->count : cap;
        for (size_t i = 0; i < n; ++i)
            out[p->id[i]] = p->pos[i];
    }
    if (t->world)
        pd_test_sim_close(t);
    pd_set_threads(0);
    return ok ? n : 0;
}

/* The world's positions by particle id (malloc'd: the caller frees; NULL without memory). */
static inline pd_vec3* pd_test_positions_by_id(const pd_world* w) {
    const pd_particles* p = &w->particles;
    pd_vec3* out = malloc(p->count * sizeof *out);
    for (size_t i = 0; out && i < p->count; ++i)
        out[p->id[i]] = p->pos[i];
    return out;
}

/* Positions of two runs that differ in any bit. */
static inline size_t pd_test_positions_differing(const pd_vec3* a, const pd_vec3* b, size_t n) {
    size_t differ = 0;
    for (size_t i = 0; i < n; ++i)
        differ += memcmp(&a[i], &b[i], sizeof(pd_vec3)) != 0;
    return differ;
}

/* Principal standard deviations of a particle cloud, ascending: a body's shape without its pose
 * (rotation-invariant), for tests that compare a shape with its rest shape. */
static inline void pd_test_principal_sizes(const pd_vec3* x, size_t n, double out[3]) {
    pd_vec3 c = pd_v3(0, 0, 0);
    for (size_t i = 0; i < n; ++i)
        c = pd_v3_add(c, x[i]);
    c = pd_v3_scale(c, 1.0 / (double)n);
    pd_mat3 cov = pd_m3_zero();
    for (size_t i = 0; i < n; ++i)
        pd_m3_add_outer(&cov, 1.0 / (double)n, pd_v3_sub(x[i], c), pd_v3_sub(x[i], c));
    pd_vec3 l;
    pd_mat3 q;
    pd_eigen_sym3(cov, &l, &q);
    out[0] = sqrt(fmax(l.x, 0)), out[1] = sqrt(fmax(l.y, 0)), out[2] = sqrt(fmax(l.z, 0));
}

/* qsort's comparison of doubles, ascending. */
static inline int pd_test_compare_doubles(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

#endif
