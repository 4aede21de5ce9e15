/* A parsed, validated scene (SCENE.md, docs/scene-format.md). */
#ifndef PERIDOT_SCENE_H
#define PERIDOT_SCENE_H

#include <stdint.h>

#include "types.h"

struct pd_solver_vtable;

#define PD_MAX_METHODS 8 /* methods the registry may hold */

typedef struct pd_scene {
    char file[PD_PATH_MAX]; /* the scene file as given */
    char dir[PD_PATH_MAX];  /* its folder: mesh paths are resolved against it */
    int version;
    char method[PD_NAME_MAX];
    const struct pd_solver_vtable* solver; /* from the registry, by `method` */
    void* solver_params;                   /* the method's params struct (its param table) */
    /* the `solver` blocks of the other methods the scene gives, validated against their own
     * tables but not acting (by registry index; NULL: none given, or the running method) */
    void* other_solver_params[PD_MAX_METHODS];
    pd_world_def world;
    /* time.dt as an object keyed by method: per registry index the step (s), 0 for "auto",
     * -1 where it does not name the method (world.dt is the running method's) */
    int dt_per_method;
    double method_dt[PD_MAX_METHODS];
    int material_count;
    pd_material_def* materials;
    int body_count;
    pd_body_def* bodies;
    int emitter_count;
    pd_emitter_def* emitters;
    int collider_count;
    pd_collider_def* colliders;
    pd_output_def output;
    char* resolved_json; /* the scene with overrides applied and every default explicit */
} pd_scene;

/* Reads, validates and resolves a scene. `overrides` are "json.path=value" strings
 * (`--set`), applied before validation. On error nothing is allocated, `err` names the file,
 * JSON path (and line when known) and what was expected, and PD_ERR_BAD_SCENE (or PD_ERR_IO
 * for a missing file) is returned. */
pd_status pd_scene_load(const char* path, const char* const* overrides, int override_count,
                        pd_scene* out, pd_error* err);
/* Same, from JSON text; `dir` resolves relative mesh paths. */
pd_status pd_scene_parse(const char* json, const char* file, const char* dir,
                         const char* const* overrides, int override_count, pd_scene* out,
                         pd_error* err);
void pd_scene_free(pd_scene* scene);
/* The resolved scene (JSON text: overrides applied, every default explicit), owned by scene. */
const char* pd_scene_resolved_json(const pd_scene* scene);
/* A number that changes with anything of the resolved scene but time.frames, output.dir and
 * output.checkpoint_every (what a resumed run may change): a checkpoint carries it. */
uint64_t pd_scene_fingerprint(const pd_scene* scene);

#endif
