/* Emitters (scene `emitters`): nozzles that pour particles into a body while the run goes. The
 * particles a scene's emitters will make are counted before the world is built, so that the
 * world reserves room for all of them once (no allocation in the step); the layers due at a time
 * are a function of that time alone, so that a checkpoint read back makes the same particles. */
#ifndef PD_WORLD_EMITTERS_H
#define PD_WORLD_EMITTERS_H

#include <stddef.h>

#include "peridot/scene.h"
#include "peridot/status.h"

struct pd_world;

/* One emitter as the world runs it: its layer's points about the nozzle's centre, the layers it
 * has made and the most it makes (those due within the run). */
typedef struct pd_emitter_run {
    size_t disc_count;
    pd_vec3* disc; /* m, in the nozzle's plane */
    size_t layers, max_layers;
} pd_emitter_run;

/* A nozzle of at most this many spacings in radius (scene_validate.c refuses a wider one: its
 * layer alone, pi R^2 = 7.9e7 particles, fills gigabytes, and counting it takes (2R + 1)^2
 * tests). */
#define PD_EMITTER_MAX_RADIUS 5000
/* The points of one layer: the lattice of e->spacing in the disc of e->radius normal to
 * e->direction, one point on its centre (offsets from the centre); out may be NULL to count. */
size_t pd_emitter_disc(const pd_emitter_def* e, pd_vec3* out);
/* Layers of e due by time t: those with t_k = start + k spacing / speed <= t and t_k < stop. */
size_t pd_emitter_layers_due(const pd_emitter_def* e, pd_real t);
/* Particles the scene's emitters make within its time.frames / time.fps (saturating at 1e15). */
size_t pd_scene_emitted_particles(const pd_scene* s);

/* Computes the emitters' discs and reserves room in the world's particles for every particle
 * they will make (before the method is created: it sizes its arrays by the capacity). */
pd_status pd_world_prepare_emitters(struct pd_world* w, pd_error* err);
/* Emits the layers due by time t that were not yet made (the world's time after a step; a
 * restored checkpoint's time), and tells the method (on_emit) when it exists. */
pd_status pd_world_emit(struct pd_world* w, pd_real t, pd_error* err);
void pd_world_free_emitters(struct pd_world* w);

#endif
