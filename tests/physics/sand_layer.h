/* The tilted sand layer of mpm's infinite-slope tests (mpm_sand_layer.c, mpm_mu_i.c): spacing
 * 1 cm (a 2 cm grid), 6 grains (3 cells) thick, 1.2 m long, in a frictionless channel 4 grains
 * deep on a no_slip floor, a cohesionless Drucker-Prager sand (phi 30, E 3e5 Pa, nu 0.3, 1600
 * kg/m^3) settled flat for 0.1 s, then gravity tilted by theta along it. Its free ends slump, so
 * the middle third (0.4 m from either end) is measured. */
#ifndef PD_TESTS_PHYSICS_SAND_LAYER_H
#define PD_TESTS_PHYSICS_SAND_LAYER_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support.h"

#define LAYER_SPACING 0.01
#define LAYER_LENGTH  1.2
#define LAYER_THICK   (6 * LAYER_SPACING)
#define LAYER_SETTLE  0.1

/* The scenes' start: 20 frames at 50 fps, the sand (phi 30, cohesionless) up to its cone. */
#define SAND_SCENE_HEAD                                                                            \
    "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":50,"                      \
    "\"frames\":20},\"gravity\":[0,-9.81,0],\"materials\":{\"sand\":{"                             \
    "\"density\":1600,\"youngs_modulus\":3e5,\"poisson_ratio\":0.3,"                               \
    "\"plasticity\":{\"model\":\"drucker_prager\",\"friction_angle\":30,\"cohesion\":0,"

typedef struct pd_sand_layer {
    pd_test_sim sim;
    double* x0; /* each particle's x (by id) when gravity tilted */
    int ok;
} pd_sand_layer;

/* Opens the layer on `cone` with `plasticity_tail` appended to its plasticity block (JSON, ""
 * for none), settles it and tilts gravity by theta (radians). layer->ok says whether it ran. */
static inline void pd_sand_layer_open(pd_sand_layer* l, const char* cone,
                                      const char* plasticity_tail, double theta) {
    char json[2048];
    snprintf(json, sizeof json,
             SAND_SCENE_HEAD
             "\"cone\":\"%s\"%s}}},\"bodies\":[{\"name\":\"layer\","
             "\"material\":\"sand\",\"spacing\":%.17g,\"shape\":{\"type\":\"box\","
             "\"min\":[0,0,0],\"max\":[%.17g,%.17g,%.17g]}}],\"colliders\":[{\"type\":"
             "\"plane\",\"normal\":[0,1,0],\"boundary\":\"no_slip\"},{\"type\":\"box\","
             "\"min\":[-1,-1,0],\"max\":[3,2,%.17g],\"inside\":true,\"boundary\":"
             "\"slip\",\"friction\":0}]}",
             cone, plasticity_tail, LAYER_SPACING, LAYER_LENGTH, LAYER_THICK, 4 * LAYER_SPACING,
             4 * LAYER_SPACING);
    l->x0 = NULL;
    l->ok = pd_test_sim_open(&l->sim, json, NULL, 0);
    if (!l->ok)
        return;
    const pd_particles* p = &l->sim.world->particles;
    l->ok = pd_test_sim_run(&l->sim, LAYER_SETTLE) &&
            (l->x0 = malloc(p->count * sizeof *l->x0)) != NULL;
    l->sim.world->def.gravity = pd_v3(9.81 * sin(theta), -9.81 * cos(theta), 0);
    for (size_t i = 0; l->ok && i < p->count; ++i)
        l->x0[p->id[i]] = p->pos[i].x;
}

/* Runs the layer to `t` s after the tilt; the middle third's mean velocity and slide along x. */
static inline int pd_sand_layer_middle_at(pd_sand_layer* l, double t, double* v, double* moved) {
    l->ok = l->ok && pd_test_sim_run(&l->sim, LAYER_SETTLE + t);
    const pd_particles* p = &l->sim.world->particles;
    double sv = 0, sx = 0;
    int n = 0;
    for (size_t i = 0; l->ok && i < p->count; ++i) {
        double a = l->x0[p->id[i]];
        if (a > LAYER_LENGTH / 3 && a < 2 * LAYER_LENGTH / 3)
            sv += p->vel[i].x, sx += p->pos[i].x - a, ++n;
    }
    *v = n ? sv / n : 0, *moved = n ? sx / n : 0;
    return l->ok;
}

static inline void pd_sand_layer_close(pd_sand_layer* l) {
    free(l->x0);
    if (l->sim.world)
        pd_test_sim_close(&l->sim);
}

#endif
