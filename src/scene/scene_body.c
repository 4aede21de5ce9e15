/* The scene's geometry and output: shapes, bodies (with pins), colliders (with keyframes) and
 * the `output` block (docs/scene-format.md). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "scene/scene_json.h"
#include "scene/scene_parse.h"
#include "scene/scene_tables.h"
#include "world/fields.h"

/* Makes a direction unit length; a vector already unit within rounding is left as it is, so
 * that the resolved scene parses back to the very same numbers. */
static pd_status unit_direction(pd_vec3* v, const char* path, pd_error* err) {
    pd_real len2 = pd_v3_len2(*v);
    if (!(len2 > 0))
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "expected a non-zero direction, got [%g, %g, %g]", v->x, v->y, v->z);
    if (fabs(len2 - 1) > 4e-15)
        *v = pd_v3_scale(*v, 1 / sqrt(len2));
    return PD_OK;
}

/* `rotate`: [ax, ay, az, degrees]. */
static pd_status parse_rotate(const cJSON* obj, const char* path, pd_vec3* axis, pd_real* degrees,
                              pd_error* err) {
    char child[PD_JPATH_MAX];
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(obj, "rotate");
    if (!item)
        return PD_OK;
    pd_jpath_key(child, path, "rotate");
    double v[4];
    PD_JTRY(pd_json_numbers(item, child, 4, "[axis_x, axis_y, axis_z, degrees]", v, err));
    *axis = pd_v3((pd_real)v[0], (pd_real)v[1], (pd_real)v[2]);
    *degrees = (pd_real)v[3];
    return unit_direction(axis, child, err);
}

/* Resolves a mesh path against the scene's folder and requires the file to exist. */
static pd_status resolve_mesh_path(const cJSON* obj, const char* path, const char* dir,
                                   pd_shape_def* shape, pd_error* err) {
    char given[PD_PATH_MAX], joined[2 * PD_PATH_MAX + 2], child[PD_JPATH_MAX];
    char real[PATH_MAX];
    PD_JTRY(pd_json_string(obj, "path", path, 1, given, sizeof given, err));
    pd_jpath_key(child, path, "path");
    if (given[0] == '/' || !dir || !dir[0])
        snprintf(joined, sizeof joined, "%s", given);
    else
        snprintf(joined, sizeof joined, "%s/%s", dir, given);
    FILE* f = realpath(joined, real) ? fopen(real, "rb") : NULL;
    /* A folder opens like a file; its first read fails. */
    int readable = f && !(fgetc(f) == EOF && ferror(f));
    if (f)
        fclose(f);
    if (!readable)
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected an existing mesh file (relative to the scene's folder), but "
                       "\"%s\" cannot be read",
                       joined);
    if (strlen(real) >= sizeof shape->path)
        return pd_fail(err, PD_ERR_BAD_SCENE, child, "mesh path is longer than %d characters",
                       PD_PATH_MAX - 1);
    strcpy(shape->path, real);
    return PD_OK;
}

/* A key of `shape`, required by the types that take it. */
static pd_status shape_key(const cJSON* obj, const char* path, const char* key, int required,
                           pd_shape_def* s, pd_error* err) {
    return pd_scene_read_key(&pd_scene_shape_table, key, obj, path, required, s, err);
}

static pd_status parse_box(const cJSON* obj, const char* path, pd_shape_def* s, pd_error* err) {
    PD_JTRY(shape_key(obj, path, "min", 1, s, err));
    PD_JTRY(shape_key(obj, path, "max", 1, s, err));
    if (!(s->min.x < s->max.x && s->min.y < s->max.y && s->min.z < s->max.z)) {
        char child[PD_JPATH_MAX];
        pd_jpath_key(child, path, "max");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected max > min in x, y and z, got min [%g, %g, %g], max [%g, %g, %g]",
                       s->min.x, s->min.y, s->min.z, s->max.x, s->max.y, s->max.z);
    }
    return PD_OK;
}

static pd_status parse_cylinder(const cJSON* obj, const char* path, pd_shape_def* s,
                                pd_error* err) {
    char child[PD_JPATH_MAX];
    PD_JTRY(shape_key(obj, path, "base", 1, s, err));
    PD_JTRY(shape_key(obj, path, "axis", 0, s, err));
    pd_jpath_key(child, path, "axis");
    PD_JTRY(unit_direction(&s->axis, child, err));
    PD_JTRY(shape_key(obj, path, "radius", 1, s, err));
    return shape_key(obj, path, "height", 1, s, err);
}

static pd_status parse_mesh(const cJSON* obj, const char* path, const char* dir, pd_shape_def* s,
                            pd_error* err) {
    PD_JTRY(resolve_mesh_path(obj, path, dir, s, err));
    PD_JTRY(shape_key(obj, path, "scale", 0, s, err));
    PD_JTRY(shape_key(obj, path, "translate", 0, s, err));
    return parse_rotate(obj, path, &s->rotate_axis, &s->rotate_degrees, err);
}

/* Keys of a shape type, besides `type` (the rule of which type takes which key of k_shape). */
static const char* shape_keys(pd_shape_type type) {
    switch (type) {
        case PD_SHAPE_BOX:
            return "min|max";
        case PD_SHAPE_SPHERE:
            return "center|radius";
        case PD_SHAPE_CYLINDER:
            return "base|axis|radius|height";
        case PD_SHAPE_MESH:
            return "path|scale|translate|rotate";
    }
    return "";
}

/* Reads the keys of shape `type` from obj (the caller checks which keys obj may hold). */
static pd_status parse_shape_keys(const cJSON* obj, const char* path, pd_shape_type type,
                                  const char* dir, pd_shape_def* s, pd_error* err) {
    *s = pd_default_shape_def();
    s->type = type;
    switch (type) {
        case PD_SHAPE_BOX:
            return parse_box(obj, path, s, err);
        case PD_SHAPE_SPHERE:
            PD_JTRY(shape_key(obj, path, "center", 1, s, err));
            return shape_key(obj, path, "radius", 1, s, err);
        case PD_SHAPE_CYLINDER:
            return parse_cylinder(obj, path, s, err);
        case PD_SHAPE_MESH:
            return parse_mesh(obj, path, dir, s, err);
    }
    return PD_OK;
}

/* A standalone shape object { "type": ..., <its keys> }; `types` limits the allowed types. */
static pd_status parse_shape(const cJSON* item, const char* path, const char* types,
                             const char* dir, pd_shape_def* s, pd_error* err) {
    char allowed[128];
    int type = 0;
    PD_JTRY(pd_scene_check_keys(item, path, &pd_scene_shape_table, NULL, err));
    PD_JTRY(pd_json_choice(item, "type", path, 1, types, &type, err));
    snprintf(allowed, sizeof allowed, "type|%s", shape_keys((pd_shape_type)type));
    PD_JTRY(pd_json_check_object(item, path, allowed, NULL, err));
    return parse_shape_keys(item, path, (pd_shape_type)type, dir, s, err);
}

/* `keyframes`: [{t, translate, rotate}], t >= 0 strictly increasing. */
static pd_status parse_keyframes(const cJSON* obj, const char* path, pd_keyframe** out, int* count,
                                 pd_error* err) {
    char p[PD_JPATH_MAX], found[96];
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(obj, "keyframes");
    if (!item)
        return PD_OK;
    pd_jpath_key(p, path, "keyframes");
    if (!cJSON_IsArray(item))
        return pd_fail(err, PD_ERR_BAD_SCENE, p, "expected an array of keyframes, got %s",
                       pd_json_describe(item, found, sizeof found));
    int n = cJSON_GetArraySize(item);
    if (n == 0)
        return PD_OK;
    *out = PD_NEW_ARRAY(pd_keyframe, (size_t)n);
    if (!*out)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, p, "out of memory");
    *count = n;
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char kp[PD_JPATH_MAX];
        pd_keyframe* k = &(*out)[i];
        pd_jpath_index(kp, p, i);
        PD_JTRY(pd_scene_check_keys(c, kp, &pd_scene_keyframe_table, NULL, err));
        k->rotate_axis = pd_v3(0, 1, 0);
        PD_JTRY(pd_scene_read_key(&pd_scene_keyframe_table, "t", c, kp, 0, k, err));
        if (i > 0 && !(k->t > (*out)[i - 1].t)) {
            char tp[PD_JPATH_MAX];
            pd_jpath_key(tp, kp, "t");
            return pd_fail(err, PD_ERR_BAD_SCENE, tp,
                           "expected keyframe times to increase strictly: t > %g (s), got %g",
                           (*out)[i - 1].t, k->t);
        }
        PD_JTRY(pd_scene_read_key(&pd_scene_keyframe_table, "translate", c, kp, 0, k, err));
        PD_JTRY(parse_rotate(c, kp, &k->rotate_axis, &k->rotate_degrees, err));
    }
    return PD_OK;
}

/* The optional array `key` of obj (a list of objects): *item the array, *items zeroed storage
 * for its elements (pd_calloc, freed as the body's typed array), *count their number, p the
 * array's JSON path. An absent or empty array leaves *items NULL and *count 0. */
static pd_status object_list(const cJSON* obj, const char* key, const char* path, const char* what,
                             size_t size, char* p, const cJSON** item, void** items, int* count,
                             pd_error* err) {
    char found[96];
    *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    *items = NULL;
    *count = 0;
    if (!*item)
        return PD_OK;
    pd_jpath_key(p, path, key);
    if (!cJSON_IsArray(*item))
        return pd_fail(err, PD_ERR_BAD_SCENE, p, "expected an array of %s, got %s", what,
                       pd_json_describe(*item, found, sizeof found));
    int n = cJSON_GetArraySize(*item);
    if (n == 0)
        return PD_OK;
    *items = pd_calloc((size_t)n, size);
    if (!*items)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, p, "out of memory");
    *count = n;
    return PD_OK;
}

static pd_status parse_pins(const cJSON* obj, const char* path, const char* dir, pd_body_def* b,
                            pd_error* err) {
    char p[PD_JPATH_MAX];
    const cJSON* item;
    void* items = NULL;
    PD_JTRY(object_list(obj, "pins", path, "pins", sizeof(pd_pin_def), p, &item, &items,
                        &b->pin_count, err));
    b->pins = items;
    if (!items)
        return PD_OK;
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char pp[PD_JPATH_MAX], rp[PD_JPATH_MAX];
        pd_jpath_index(pp, p, i);
        PD_JTRY(pd_scene_check_keys(c, pp, &pd_scene_pin_table, NULL, err));
        pd_jpath_key(rp, pp, "region");
        const cJSON* region = cJSON_GetObjectItemCaseSensitive(c, "region");
        if (!region)
            return pd_fail(err, PD_ERR_BAD_SCENE, rp,
                           "missing required key: expected a box, sphere or cylinder");
        PD_JTRY(parse_shape(region, rp, PD_SCENE_REGION_TYPES, dir, &b->pins[i].region, err));
        PD_JTRY(parse_keyframes(c, pp, &b->pins[i].keyframes, &b->pins[i].keyframe_count, err));
        b->pins[i].release = INFINITY;
        PD_JTRY(pd_scene_read_key(&pd_scene_pin_table, "release", c, pp, 0, &b->pins[i], err));
    }
    return PD_OK;
}

/* The required key "material" of obj (a body or a material change): the index of a material
 * of the scene. */
static pd_status material_key(const cJSON* obj, const char* path, const pd_scene* s, int* out,
                              pd_error* err) {
    char name[PD_NAME_MAX], child[PD_JPATH_MAX], list[512] = "";
    PD_JTRY(pd_json_string(obj, "material", path, 1, name, sizeof name, err));
    for (int i = 0; i < s->material_count; ++i) {
        if (strcmp(s->materials[i].name, name) == 0) {
            *out = i;
            return PD_OK;
        }
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", s->materials[i].name);
    }
    pd_jpath_key(child, path, "material");
    return pd_fail(err, PD_ERR_BAD_SCENE, child, "expected the name of a material (%s), got \"%s\"",
                   list, name);
}

/* `material_changes`: [{t, material, region}], t >= 0 and never below the previous change's
 * (equal times apply in list order). Whether the method implements changes, and which, is
 * checked with the rest of the scene (scene_validate.c). */
static pd_status parse_material_changes(const cJSON* obj, const char* path, const pd_scene* s,
                                        pd_body_def* b, pd_error* err) {
    char p[PD_JPATH_MAX];
    const cJSON* item;
    void* items = NULL;
    PD_JTRY(object_list(obj, "material_changes", path, "material changes",
                        sizeof(pd_material_change_def), p, &item, &items, &b->material_change_count,
                        err));
    b->material_changes = items;
    if (!items)
        return PD_OK;
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char cp[PD_JPATH_MAX], rp[PD_JPATH_MAX];
        pd_material_change_def* m = &b->material_changes[i];
        pd_jpath_index(cp, p, i);
        PD_JTRY(pd_scene_check_keys(c, cp, &pd_scene_material_change_table, NULL, err));
        PD_JTRY(pd_scene_read_key(&pd_scene_material_change_table, "t", c, cp, 0, m, err));
        if (i > 0 && !(m->t >= b->material_changes[i - 1].t)) {
            char tp[PD_JPATH_MAX];
            pd_jpath_key(tp, cp, "t");
            return pd_fail(err, PD_ERR_BAD_SCENE, tp,
                           "expected material changes in order of time: t >= %g (s), the "
                           "previous change's, got %g",
                           b->material_changes[i - 1].t, m->t);
        }
        PD_JTRY(material_key(c, cp, s, &m->material, err));
        const cJSON* region = cJSON_GetObjectItemCaseSensitive(c, "region");
        if (!region)
            continue;
        pd_jpath_key(rp, cp, "region");
        PD_JTRY(parse_shape(region, rp, PD_SCENE_REGION_TYPES, s->dir, &m->region, err));
        m->has_region = 1;
    }
    return PD_OK;
}

static pd_status parse_body(const cJSON* obj, const char* path, int index, const pd_scene* s,
                            pd_body_def* b, pd_error* err) {
    const pd_scene_table* t = &pd_scene_body_table;
    PD_JTRY(pd_scene_check_keys(obj, path, t, NULL, err));
    snprintf(b->name, sizeof b->name, "body%d", index);
    PD_JTRY(pd_scene_read_key(t, "name", obj, path, 0, b, err));
    for (int j = 0; j < index; ++j)
        if (strcmp(s->bodies[j].name, b->name) == 0) {
            char child[PD_JPATH_MAX];
            pd_jpath_key(child, path, "name");
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "expected a unique body name, but \"%s\" is also bodies[%d]", b->name,
                           j);
        }
    PD_JTRY(material_key(obj, path, s, &b->material, err));
    PD_JTRY(pd_scene_read_key(t, "spacing", obj, path, 0, b, err));
    char sp[PD_JPATH_MAX];
    pd_jpath_key(sp, path, "shape");
    const cJSON* shape = cJSON_GetObjectItemCaseSensitive(obj, "shape");
    if (!shape)
        return pd_fail(err, PD_ERR_BAD_SCENE, sp,
                       "missing required key: expected a shape (box, sphere, cylinder or mesh)");
    PD_JTRY(parse_shape(shape, sp, PD_SCENE_SHAPE_TYPES, s->dir, &b->shape, err));
    PD_JTRY(pd_scene_read_key(t, "sampling", obj, path, 0, b, err));
    PD_JTRY(pd_scene_read_key(t, "kind", obj, path, 0, b, err));
    PD_JTRY(pd_scene_read_key(t, "velocity", obj, path, 0, b, err));
    PD_JTRY(pd_scene_read_key(t, "angular_velocity", obj, path, 0, b, err));
    const char* motion[] = {"velocity", "angular_velocity"};
    for (int k = 0; k < 2 && b->kind == PD_BODY_FIXED; ++k) {
        if (!cJSON_GetObjectItemCaseSensitive(obj, motion[k]))
            continue;
        char child[PD_JPATH_MAX];
        pd_jpath_key(child, path, motion[k]);
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "a fixed body never moves, so its %s would be ignored; remove it, or use "
                       "kind dynamic (pins move parts of a body)",
                       motion[k]);
    }
    PD_JTRY(parse_pins(obj, path, s->dir, b, err));
    return parse_material_changes(obj, path, s, b, err);
}

pd_status pd_scene_parse_bodies(const cJSON* item, pd_scene* s, pd_error* err) {
    char found[96];
    int n = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : 0;
    if (n < 1)
        return pd_fail(err, PD_ERR_BAD_SCENE, "bodies",
                       "expected an array of bodies (at least one), got %s",
                       pd_json_describe(item, found, sizeof found));
    s->bodies = PD_NEW_ARRAY(pd_body_def, (size_t)n);
    if (!s->bodies)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "bodies", "out of memory");
    s->body_count = n;
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char path[PD_JPATH_MAX];
        pd_jpath_index(path, "bodies", i);
        s->bodies[i] = pd_default_body_def();
        PD_JTRY(parse_body(c, path, i, s, &s->bodies[i], err));
    }
    return PD_OK;
}

/* emitters[i]: the body its particles join (by name), their material (the body's unless given),
 * the nozzle and the stream; stop after start, and a spacing (the body's unless given). */
static pd_status body_key(const cJSON* obj, const char* path, const pd_scene* s, int* out,
                          pd_error* err) {
    char name[PD_NAME_MAX], child[PD_JPATH_MAX], list[512] = "";
    PD_JTRY(pd_json_string(obj, "body", path, 1, name, sizeof name, err));
    for (int i = 0; i < s->body_count; ++i) {
        if (strcmp(s->bodies[i].name, name) == 0) {
            *out = i;
            return PD_OK;
        }
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", s->bodies[i].name);
    }
    pd_jpath_key(child, path, "body");
    return pd_fail(err, PD_ERR_BAD_SCENE, child, "expected the name of a body (%s), got \"%s\"",
                   list, name);
}

static pd_status parse_emitter(const cJSON* obj, const char* path, const pd_scene* s,
                               pd_emitter_def* e, pd_error* err) {
    const pd_scene_table* t = &pd_scene_emitter_table;
    char child[PD_JPATH_MAX];
    PD_JTRY(pd_scene_check_keys(obj, path, t, NULL, err));
    PD_JTRY(body_key(obj, path, s, &e->body, err));
    const pd_body_def* b = &s->bodies[e->body];
    e->material = b->material;
    e->spacing = b->spacing;
    if (cJSON_GetObjectItemCaseSensitive(obj, "material"))
        PD_JTRY(material_key(obj, path, s, &e->material, err));
    PD_JTRY(pd_scene_read_keys(t, obj, path, e, err));
    pd_jpath_key(child, path, "direction");
    PD_JTRY(unit_direction(&e->direction, child, err));
    if (!(e->stop > e->start)) {
        pd_jpath_key(child, path, "stop");
        return pd_fail(err, PD_ERR_BAD_SCENE, child, "expected a stop after start (%g s), got %g s",
                       e->start, e->stop);
    }
    return PD_OK;
}

pd_status pd_scene_parse_emitters(const cJSON* item, pd_scene* s, pd_error* err) {
    char found[96];
    if (!item)
        return PD_OK;
    if (!cJSON_IsArray(item))
        return pd_fail(err, PD_ERR_BAD_SCENE, "emitters", "expected an array of emitters, got %s",
                       pd_json_describe(item, found, sizeof found));
    int n = cJSON_GetArraySize(item);
    if (n == 0)
        return PD_OK;
    s->emitters = PD_NEW_ARRAY(pd_emitter_def, (size_t)n);
    if (!s->emitters)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "emitters", "out of memory");
    s->emitter_count = n;
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char path[PD_JPATH_MAX];
        pd_jpath_index(path, "emitters", i);
        s->emitters[i] = pd_default_emitter_def();
        PD_JTRY(parse_emitter(c, path, s, &s->emitters[i], err));
    }
    return PD_OK;
}

/* Whether a collider of `type` takes `key` of k_collider: point and normal are a plane's, inside
 * any other type's, thickness a mesh's. */
static int collider_takes(pd_collider_type type, const char* key) {
    int plane = type == PD_COLLIDER_PLANE;
    if (strcmp(key, "point") == 0 || strcmp(key, "normal") == 0)
        return plane;
    if (strcmp(key, "inside") == 0)
        return !plane;
    return strcmp(key, "thickness") != 0 || type == PD_COLLIDER_MESH;
}

/* Appends "|key" (or "key" to an empty list) to out. */
static void append_key(char* out, size_t cap, const char* key) {
    size_t used = strlen(out);
    snprintf(out + used, cap - used, "%s%s", used ? "|" : "", key);
}

/* Keys a collider of `type` may hold (type < 0: of any type), in the order of the tables. */
static void collider_keys(int type, char* out, size_t cap) {
    const pd_scene_table *t = &pd_scene_collider_table, *shape = &pd_scene_shape_table;
    out[0] = '\0';
    for (int i = 0; i < t->count; ++i)
        if (type < 0 || collider_takes((pd_collider_type)type, t->keys[i].p.name))
            append_key(out, cap, t->keys[i].p.name);
    for (int i = 0; type < 0 && i < shape->count; ++i)
        if (strcmp(shape->keys[i].p.name, "type") != 0) /* the collider's own `type` */
            append_key(out, cap, shape->keys[i].p.name);
    if (type > PD_COLLIDER_PLANE)
        append_key(out, cap, shape_keys((pd_shape_type)(type - 1)));
}

/* Keys that would do nothing: friction on a no_slip collider (it sticks whatever the
 * coefficient), a constant velocity beside keyframes (the keyframes take its place). */
static pd_status refuse_ignored_collider_keys(const cJSON* obj, const char* path,
                                              const pd_collider_def* c, pd_error* err) {
    char child[PD_JPATH_MAX];
    if (c->boundary == PD_BOUNDARY_NO_SLIP && cJSON_GetObjectItemCaseSensitive(obj, "friction")) {
        pd_jpath_key(child, path, "friction");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "a no_slip collider sticks whatever the friction coefficient, so friction "
                       "would be ignored; give it with boundary slip, or remove it");
    }
    const char* moving[] = {"velocity", "angular_velocity"};
    for (int k = 0; k < 2 && c->keyframe_count > 0; ++k) {
        if (!cJSON_GetObjectItemCaseSensitive(obj, moving[k]))
            continue;
        pd_jpath_key(child, path, moving[k]);
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "keyframes take the place of %s, so it would be ignored; give the motion "
                       "either as keyframes or as velocity and angular_velocity",
                       moving[k]);
    }
    return PD_OK;
}

static pd_status parse_collider(const cJSON* obj, const char* path, const pd_scene* s,
                                pd_collider_def* c, pd_error* err) {
    const pd_scene_table* t = &pd_scene_collider_table;
    char allowed[PD_SCENE_KEYS_MAX], child[PD_JPATH_MAX];
    collider_keys(-1, allowed, sizeof allowed);
    PD_JTRY(pd_json_check_object(obj, path, allowed, NULL, err));
    PD_JTRY(pd_scene_read_key(t, "type", obj, path, 0, c, err));
    collider_keys((int)c->type, allowed, sizeof allowed);
    PD_JTRY(pd_json_check_object(obj, path, allowed, NULL, err));
    if (c->type == PD_COLLIDER_PLANE) {
        PD_JTRY(pd_scene_read_key(t, "point", obj, path, 0, c, err));
        PD_JTRY(pd_scene_read_key(t, "normal", obj, path, 1, c, err));
        pd_jpath_key(child, path, "normal");
        PD_JTRY(unit_direction(&c->normal, child, err));
    } else {
        pd_shape_type shape = (pd_shape_type)(c->type - 1);
        PD_JTRY(parse_shape_keys(obj, path, shape, s->dir, &c->shape, err));
        PD_JTRY(pd_scene_read_key(t, "inside", obj, path, 0, c, err));
        if (c->type == PD_COLLIDER_MESH)
            PD_JTRY(pd_scene_read_key(t, "thickness", obj, path, 0, c, err));
    }
    PD_JTRY(pd_scene_read_key(t, "boundary", obj, path, 0, c, err));
    PD_JTRY(pd_scene_read_key(t, "friction", obj, path, 0, c, err));
    PD_JTRY(pd_scene_read_key(t, "velocity", obj, path, 0, c, err));
    PD_JTRY(pd_scene_read_key(t, "angular_velocity", obj, path, 0, c, err));
    PD_JTRY(parse_keyframes(obj, path, &c->keyframes, &c->keyframe_count, err));
    return refuse_ignored_collider_keys(obj, path, c, err);
}

pd_status pd_scene_parse_colliders(const cJSON* item, pd_scene* s, pd_error* err) {
    char found[96];
    if (!item)
        return PD_OK;
    if (!cJSON_IsArray(item))
        return pd_fail(err, PD_ERR_BAD_SCENE, "colliders", "expected an array of colliders, got %s",
                       pd_json_describe(item, found, sizeof found));
    int n = cJSON_GetArraySize(item);
    if (n == 0)
        return PD_OK;
    s->colliders = PD_NEW_ARRAY(pd_collider_def, (size_t)n);
    if (!s->colliders)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "colliders", "out of memory");
    s->collider_count = n;
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char path[PD_JPATH_MAX];
        pd_jpath_index(path, "colliders", i);
        s->colliders[i] = pd_default_collider_def();
        PD_JTRY(parse_collider(c, path, s, &s->colliders[i], err));
    }
    return PD_OK;
}

/* An array of choice names (the row's choices) as a bit set (bit i for choice i). */
static pd_status parse_flags(const cJSON* obj, const char* key, int nonempty, unsigned* out,
                             pd_error* err) {
    char p[PD_JPATH_MAX], found[96], list[256];
    const char* choices = pd_scene_key_find(&pd_scene_output_table, key)->p.choices;
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!item)
        return PD_OK;
    pd_jpath_key(p, "output", key);
    pd_json_choice_list(choices, list, sizeof list);
    if (!cJSON_IsArray(item) || (nonempty && cJSON_GetArraySize(item) == 0))
        return pd_fail(err, PD_ERR_BAD_SCENE, p, "expected an array of %s %s, got %s",
                       nonempty ? "one or more of" : "any of", list,
                       pd_json_describe(item, found, sizeof found));
    unsigned bits = 0;
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char ep[PD_JPATH_MAX];
        int index = cJSON_IsString(c) ? pd_json_choice_index(choices, c->valuestring) : -1;
        pd_jpath_index(ep, p, i);
        if (index < 0)
            return pd_fail(err, PD_ERR_BAD_SCENE, ep, "expected one of %s, got %s", list,
                           pd_json_describe(c, found, sizeof found));
        bits |= 1u << index;
    }
    *out = bits;
    return PD_OK;
}

/* Every attribute asked for must be published by the world or by the method (fields.c). */
static pd_status check_published(const cJSON* item, const pd_scene* s, pd_error* err) {
    const cJSON* list = cJSON_GetObjectItemCaseSensitive(item, "attributes");
    int i = 0;
    for (const cJSON* c = list ? list->child : NULL; c; c = c->next, ++i) {
        char ep[PD_JPATH_MAX];
        pd_jpath_index(ep, "output.attributes", i);
        int index = pd_json_choice_index(PD_SCENE_ATTRIBUTES, c->valuestring);
        PD_JTRY(pd_check_attribute(s->solver, 1u << index, ep, err));
    }
    return PD_OK;
}

pd_status pd_scene_parse_output(const cJSON* item, const pd_scene* s, pd_output_def* out,
                                pd_error* err) {
    *out = pd_default_output_def();
    if (!item)
        return PD_OK;
    PD_JTRY(pd_scene_check_keys(item, "output", &pd_scene_output_table, NULL, err));
    PD_JTRY(pd_scene_read_keys(&pd_scene_output_table, item, "output", out, err));
    PD_JTRY(parse_flags(item, "format", 1, &out->formats, err));
    PD_JTRY(parse_flags(item, "attributes", 0, &out->attributes, err));
    return check_published(item, s, err);
}
