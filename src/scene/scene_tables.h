/* The common keys of the scene format, declared once: one table per object of the scene (top
 * level, `time`, a material, `bodies[i]`, `shape`, `colliders[i]`, `output`, ...). A row is a
 * pd_param_info (name, type, offset into the def struct, default, range, unit, choices, doc)
 * plus what a method option never needs: open bounds, "required", and the text of a rule the
 * numbers cannot say. The same rows give the keys each object accepts, the reading of every
 * scalar, vector, choice and string key (scene_param.c), its writing into the resolved scene
 * (scene_resolve.c) and its row in `peridot docs`.
 *
 * Keys that are structure (objects, arrays, lists read into fixed arrays) or whose value needs
 * more than one key to check are marked PD_KEY_BY_HAND: their parsing stays in hand code, but
 * they are declared here like any other key, so the object accepts them and the docs list them.
 * pd_param_info itself is not extended: the methods' tables initialise it positionally, and a
 * new field would be a missing-initializer warning (an error here) in every one of them. */
#ifndef PD_SCENE_TABLES_H
#define PD_SCENE_TABLES_H

#include "scene/scene_json.h"

/* pd_scene_key.flags */
enum {
    PD_KEY_REQUIRED = 1 << 0, /* must be given; the docs say "required" */
    PD_KEY_MIN_OPEN = 1 << 1, /* min itself is refused: > min */
    PD_KEY_MAX_OPEN = 1 << 2, /* max itself is refused: < max */
    PD_KEY_BY_HAND = 1 << 3,  /* read by hand code (structure or a rule across keys) */
};

typedef struct pd_scene_key {
    pd_param_info p;       /* p.offset is into the struct named beside the table below */
    unsigned flags;        /* PD_KEY_* */
    size_t size;           /* STRING: bytes of the char array; BY_HAND lists: their length
                            * (lame, rotate) or most elements (moduli, times) */
    const char* type_doc;  /* docs' type when p.type does not say it ("object", "[4] number") */
    const char* def_doc;   /* docs' default when p.def does not say it ("[0, -9.81, 0]") */
    const char* range_doc; /* docs' allowed values when min/max do not say them ("<= 1/fps") */
} pd_scene_key;

typedef struct pd_scene_table {
    const char* title; /* the section of docs/scene-format.md */
    const char* intro; /* NULL or a paragraph under the title */
    const pd_scene_key* keys;
    int count;
} pd_scene_table;

/* The top level's gravity and seed (pd_world_def holds the seed as uint64_t). */
typedef struct pd_scene_top {
    pd_vec3 gravity;
    int seed;
} pd_scene_top;

extern const pd_scene_table pd_scene_top_table;             /* pd_scene_top */
extern const pd_scene_table pd_scene_time_table;            /* pd_world_def */
extern const pd_scene_table pd_scene_material_table;        /* pd_material_def */
extern const pd_scene_table pd_scene_plasticity_table;      /* pd_material_def */
extern const pd_scene_table pd_scene_rate_table;            /* pd_material_def */
extern const pd_scene_table pd_scene_visco_table;           /* pd_material_def */
extern const pd_scene_table pd_scene_body_table;            /* pd_body_def */
extern const pd_scene_table pd_scene_shape_table;           /* pd_shape_def */
extern const pd_scene_table pd_scene_pin_table;             /* pd_pin_def */
extern const pd_scene_table pd_scene_material_change_table; /* pd_material_change_def */
extern const pd_scene_table pd_scene_keyframe_table;        /* pd_keyframe */
extern const pd_scene_table pd_scene_collider_table;        /* pd_collider_def */
extern const pd_scene_table pd_scene_emitter_table;         /* pd_emitter_def */
extern const pd_scene_table pd_scene_output_table;          /* pd_output_def */

/* Every table above, in the order of the docs, NULL-terminated. */
extern const pd_scene_table* const pd_scene_tables[];

const pd_scene_key* pd_scene_key_find(const pd_scene_table* t, const char* name);

/* "a|b|c": the keys of t, in its order, for pd_json_check_object (a unit test checks that
 * every table's list fits in PD_SCENE_KEYS_MAX). */
#define PD_SCENE_KEYS_MAX 512
void pd_scene_table_keys(const pd_scene_table* t, char* out, size_t cap);

/* The interval of a REAL or INT key, with its unit, for pd_json_real / pd_json_int. */
pd_jrange pd_scene_key_range(const pd_scene_key* k);

/* Reads key `name` of table t from obj (whose path is `path`) into blob at the row's offset,
 * when obj has it; a missing key is an error when `required` (a key some types of the object
 * require) or when the row is PD_KEY_REQUIRED. Checks and messages are those of pd_json_real,
 * pd_json_int, pd_json_bool, pd_json_choice, pd_json_vec3 and pd_json_string. A PD_KEY_BY_HAND
 * row is refused (PD_ERR_INVALID_ARGUMENT): its value is not a plain field at its offset. */
pd_status pd_scene_read_key(const pd_scene_table* t, const char* name, const cJSON* obj,
                            const char* path, int required, void* blob, pd_error* err);

/* Reads every key of t not marked PD_KEY_BY_HAND, in the table's order. */
pd_status pd_scene_read_keys(const pd_scene_table* t, const cJSON* obj, const char* path,
                             void* blob, pd_error* err);

/* pd_json_check_object with the keys of t (and of `extra`, may be NULL) allowed. */
pd_status pd_scene_check_keys(const cJSON* item, const char* path, const pd_scene_table* t,
                              const pd_param_table* extra, pd_error* err);

/* Writes key `name` of table t with its value in blob into obj (the resolved scene), in the
 * form pd_scene_read_key reads back. */
void pd_scene_write_key(cJSON* obj, const pd_scene_table* t, const char* name, const void* blob);

#endif
