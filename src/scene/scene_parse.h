/* Internals of the scene parser (scene/scene.c): the parts of a scene, each parsed from its cJSON
 * subtree into the def structs, the writer of the resolved scene, `--set` overrides, and the
 * choice lists that the parser's tables (scene_tables.h), the resolved JSON and `peridot docs`
 * share. */
#ifndef PD_SCENE_PARSE_H
#define PD_SCENE_PARSE_H

#include <cjson/cJSON.h>

#include "core/param.h"
#include "peridot/scene.h"

#define PD_SCENE_VERSION 1

/* Choice lists, in the order of their enums in peridot/types.h. */
#define PD_SCENE_SHAPE_TYPES    "box|sphere|cylinder|mesh"
#define PD_SCENE_REGION_TYPES   "box|sphere|cylinder"
#define PD_SCENE_COLLIDER_TYPES "plane|box|sphere|cylinder|mesh"
#define PD_SCENE_SAMPLINGS      "grid|jittered|poisson_disk|poisson_disk_relaxed"
#define PD_SCENE_KINDS          "dynamic|fixed|shell|rod"
#define PD_SCENE_BOUNDARIES     "slip|no_slip"
/* PD_PLASTICITY_* minus one (none is the absence of the block). */
#define PD_SCENE_PLASTICITY_MODELS "drucker_prager|von_mises|cam_clay|herschel_bulkley"
#define PD_SCENE_VISCO_MODELS      "prony|hencky_maxwell"
#define PD_SCENE_RATE_MODELS       "mu_i"
/* Bit i is 1 << i of PD_FORMAT_* / PD_ATTR_*. */
#define PD_SCENE_FORMATS    "ply|vtk|vtu"
#define PD_SCENE_ATTRIBUTES PD_ATTRIBUTE_NAMES

/* The keys each object accepts are the rows of its table (scene_tables.h). */

pd_status pd_scene_parse_materials(const cJSON* item, pd_scene* s, pd_error* err);
pd_status pd_scene_parse_bodies(const cJSON* item, pd_scene* s, pd_error* err);
pd_status pd_scene_parse_colliders(const cJSON* item, pd_scene* s, pd_error* err);
pd_status pd_scene_parse_emitters(const cJSON* item, pd_scene* s, pd_error* err);
pd_status pd_scene_parse_output(const cJSON* item, const pd_scene* s, pd_output_def* out,
                                pd_error* err);

/* The checks after parsing (scene_validate.c): material blocks the method honours, time steps
 * an int can count, values the method can represent, shapes that suit their body's kind. */
pd_status pd_scene_validate(const pd_scene* s, pd_error* err);

/* pd_scene_parse without pd_scene_validate: every key read and checked on its own, for tests of
 * the parser (blocks no registered method honours yet). */
pd_status pd_scene_parse_unvalidated(const char* json, const char* file, const char* dir,
                                     const char* const* overrides, int override_count,
                                     pd_scene* out, pd_error* err);

/* The scene as JSON with every value explicit (the resolved scene); NULL when out of memory. */
cJSON* pd_scene_to_json(const pd_scene* s);

/* Applies the "json.path=value" overrides to the tree, in order. `solver.<key>=v`, key no
 * method's name, sets the running method's option (`solver.<method>.<key>`; the method the
 * last `method=` override names, else the scene's) unless the scene's `solver` is in the flat
 * form of earlier scenes. */
pd_status pd_scene_apply_overrides(cJSON* root, const char* const* overrides, int count,
                                   pd_error* err);

/* Writes every key of a parameter table with its value in `blob` into `obj` (the resolved
 * scene: `solver` and the method's material keys), in a form pd_json_params reads back: a
 * block as a nested object with all its keys when it was given, not at all otherwise. */
void pd_scene_add_params(cJSON* obj, const pd_param_table* t, const void* blob);

#endif
