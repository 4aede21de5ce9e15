/* Keys declared in parameter tables (a method's `solver` keys and material keys, and the scene
 * format's common keys of scene_tables.h), read from JSON by their declared type, so that one
 * reader serves every table (scene_json.h); a method's BLOCK rows are read as nested objects of
 * their "<block>.<key>" rows. */
#include <stdio.h>
#include <string.h>

#include "scene/scene_json.h"
#include "scene/scene_tables.h"

/* " (Pa)" for a unit worth naming, "" for dimensionless ones. */
static const char* unit_suffix(const char* unit, char* buf, size_t cap) {
    if (!unit || !unit[0] || strcmp(unit, "1") == 0 || strcmp(unit, "-") == 0)
        buf[0] = '\0';
    else
        snprintf(buf, cap, " (%s)", unit);
    return buf;
}

/* Element k of a list or of the terms from JSON value e, whose path is `path`. */
static pd_status param_element(const pd_param_info* p, const cJSON* e, int k, void* blob,
                               const char* path, pd_error* err) {
    char found[96];
    if (!cJSON_IsNumber(e))
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a number, got %s",
                       pd_json_describe(e, found, sizeof found));
    return pd_param_set_element(p, blob, k, e->valuedouble, path, err);
}

/* [x, y, z] or [a, b, ...]: every element a number in range, at most the type's count. */
static pd_status param_list(const pd_param_info* p, const cJSON* item, void* blob, const char* path,
                            pd_error* err) {
    int size = cJSON_GetArraySize(item), want = p->type == PD_PARAM_VEC3 ? 3 : -1;
    char child[PD_JPATH_MAX];
    if (want > 0 && size != want)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected 3 numbers [x, y, z], got %d", size);
    if (size > PD_PARAM_MAX_REALS)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected at most %d numbers, got %d",
                       PD_PARAM_MAX_REALS, size);
    if (p->type == PD_PARAM_REALS) /* the list replaces the one before */
        pd_param_set_default(p, blob);
    int k = 0;
    for (const cJSON* e = item->child; e; e = e->next, ++k) {
        pd_jpath_index(child, path, k);
        PD_JTRY(param_element(p, e, k, blob, child, err));
    }
    return PD_OK;
}

/* { "A1": 1.0, ... }: only the row's choices, each once, each a number in range; the object
 * replaces every term, so those it leaves out are 0. Terms named but all 0 are refused: every
 * term 0 is what the key left out gives (the empty object the resolved scene writes for it), so
 * they would not set what they say (hyperelastic_pd's g = 0 read as the preset's g). */
static pd_status param_terms(const pd_param_info* p, const cJSON* item, void* blob,
                             const char* path, pd_error* err) {
    char child[PD_JPATH_MAX];
    if (pd_param_term_count(p) < 0) /* the table's mistake: no slot for some choices */
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "row %s names more than %d terms",
                       p->name, PD_PARAM_MAX_REALS);
    PD_JTRY(pd_json_check_object(item, path, p->choices, NULL, err));
    pd_param_set_default(p, blob);
    for (const cJSON* e = item->child; e; e = e->next) {
        pd_jpath_key(child, path, e->string);
        PD_JTRY(
            param_element(p, e, pd_param_choice_index(p->choices, e->string), blob, child, err));
    }
    const pd_param_reals* terms = (const pd_param_reals*)((const char*)blob + p->offset);
    for (int k = 0; k < terms->count; ++k)
        if (terms->v[k] != 0)
            return PD_OK;
    if (!item->child)
        return PD_OK;
    return pd_fail(err, PD_ERR_BAD_SCENE, path,
                   "every term given is 0, which reads as the key left out (its default, not a "
                   "function that is 0): give a non-zero term, or leave the key out");
}

/* The sentence for a value of the wrong JSON type. */
static pd_status wrong_type(const pd_param_info* p, const cJSON* item, const char* path,
                            pd_error* err) {
    char found[96], list[256], unit[48];
    pd_json_describe(item, found, sizeof found);
    unit_suffix(p->unit, unit, sizeof unit);
    switch (p->type) {
        case PD_PARAM_BOOL:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected true or false, got %s", found);
        case PD_PARAM_ENUM:
            pd_json_choice_list(p->choices, list, sizeof list);
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected one of %s, got %s", list, found);
        case PD_PARAM_INT:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected an integer%s, got %s", unit,
                           found);
        case PD_PARAM_VEC3:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected [x, y, z]%s, got %s", unit,
                           found);
        case PD_PARAM_REALS:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a list of numbers%s, got %s",
                           unit, found);
        case PD_PARAM_TERMS:
            pd_json_choice_list(p->choices, list, sizeof list);
            return pd_fail(err, PD_ERR_BAD_SCENE, path,
                           "expected an object of named numbers%s with names among %s, got %s",
                           unit, list, found);
        case PD_PARAM_STRING:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a string, got %s", found);
        case PD_PARAM_BLOCK:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected an object, got %s", found);
        case PD_PARAM_REAL:
            break;
    }
    return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a number%s, got %s", unit, found);
}

pd_status pd_json_param(const pd_param_info* p, const cJSON* item, void* blob, const char* path,
                        pd_error* err) {
    if (p->type == PD_PARAM_BLOCK && cJSON_IsObject(item)) /* its keys are other rows */
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path,
                       "block %s is read with its table (pd_json_params)", p->name);
    int list = p->type == PD_PARAM_VEC3 || p->type == PD_PARAM_REALS;
    int number = !list && p->type != PD_PARAM_BOOL && p->type != PD_PARAM_STRING &&
                 p->type != PD_PARAM_TERMS;
    if (cJSON_IsNumber(item) && number)
        return pd_param_set_number(p, blob, item->valuedouble, path, err);
    if (cJSON_IsBool(item) && p->type == PD_PARAM_BOOL)
        return pd_param_set_number(p, blob, cJSON_IsTrue(item) ? 1 : 0, path, err);
    if (cJSON_IsString(item) && p->type == PD_PARAM_ENUM)
        return pd_param_set_choice(p, blob, item->valuestring, path, err);
    if (cJSON_IsString(item) && p->type == PD_PARAM_STRING)
        return pd_param_set_string(p, blob, item->valuestring, path, err);
    if (cJSON_IsArray(item) && list)
        return param_list(p, item, blob, path, err);
    if (cJSON_IsObject(item) && p->type == PD_PARAM_TERMS)
        return param_terms(p, item, blob, path, err);
    return wrong_type(p, item, path, err);
}

static pd_status read_rows(const cJSON* obj, const char* path, const pd_param_table* t,
                           const char* block, void* blob, pd_error* err);

/* The object given under BLOCK row p: only its own keys, then its rows, and its flag. */
static pd_status read_block(const pd_param_info* p, const cJSON* item, const char* path,
                            const pd_param_table* t, void* blob, pd_error* err) {
    PD_JTRY(pd_json_check_block(item, path, t, p->name, err));
    *(int*)((char*)blob + p->offset) = 1;
    return read_rows(item, path, t, p->name, blob, err);
}

/* The rows of object `block` (NULL: the table's own) that obj gives. */
static pd_status read_rows(const cJSON* obj, const char* path, const pd_param_table* t,
                           const char* block, void* blob, pd_error* err) {
    for (int i = 0; i < t->count; ++i) {
        const pd_param_info* p = &t->params[i];
        const cJSON* item = pd_param_in_block(p, block)
                                ? cJSON_GetObjectItemCaseSensitive(obj, pd_param_key(p))
                                : NULL;
        char child[PD_JPATH_MAX];
        if (!item)
            continue;
        pd_jpath_key(child, path, pd_param_key(p));
        PD_JTRY(p->type == PD_PARAM_BLOCK ? read_block(p, item, child, t, blob, err)
                                          : pd_json_param(p, item, blob, child, err));
    }
    return PD_OK;
}

/* The JSON value obj gives for row p ("<block>.<key>" rows inside their block), or NULL. */
static const cJSON* given(const cJSON* obj, const pd_param_info* p) {
    if (pd_param_in_block(p, NULL))
        return cJSON_GetObjectItemCaseSensitive(obj, p->name);
    char block[PD_JPATH_MAX];
    snprintf(block, sizeof block, "%.*s", (int)(pd_param_key(p) - 1 - p->name), p->name);
    const cJSON* b = cJSON_GetObjectItemCaseSensitive(obj, block);
    return cJSON_IsObject(b) ? cJSON_GetObjectItemCaseSensitive(b, pd_param_key(p)) : NULL;
}

/* Nothing accepted that does nothing: a key the scene (or a `--set`, applied to the same JSON)
 * gives whose `requires` fails once the whole table is read is refused at its path. */
static pd_status check_requirements(const cJSON* obj, const char* path, const pd_param_table* t,
                                    const void* blob, pd_error* err) {
    for (int i = 0; i < t->count; ++i) {
        const pd_param_info* p = &t->params[i];
        char why[320], child[PD_JPATH_MAX], block[PD_JPATH_MAX];
        if (!p->requires || !given(obj, p) || pd_param_requirement(t, p, blob, why, sizeof why))
            continue;
        if (pd_param_in_block(p, NULL)) {
            pd_jpath_key(child, path, p->name);
        } else {
            snprintf(child, sizeof child, "%.*s", (int)(pd_param_key(p) - 1 - p->name), p->name);
            pd_jpath_key(block, path, child);
            pd_jpath_key(child, block, pd_param_key(p));
        }
        return pd_fail(err, PD_ERR_BAD_SCENE, child, "%s: leave it out, or set what it needs", why);
    }
    return PD_OK;
}

pd_status pd_json_params(const cJSON* obj, const char* path, const pd_param_table* t, void* blob,
                         pd_error* err) {
    if (!t)
        return PD_OK;
    PD_JTRY(read_rows(obj, path, t, NULL, blob, err));
    return check_requirements(obj, path, t, blob, err);
}

/* A row that names no key is a mistake of the code, not of the scene. */
static pd_status no_row(const char* name, const char* path, pd_error* err) {
    return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "key %s has no row in the scene's tables",
                   name);
}

pd_status pd_scene_read_key(const pd_scene_table* t, const char* name, const cJSON* obj,
                            const char* path, int required, void* blob, pd_error* err) {
    const pd_scene_key* k = pd_scene_key_find(t, name);
    if (!k)
        return no_row(name, path, err);
    if ((k->flags & PD_KEY_BY_HAND) || k->p.type == PD_PARAM_REALS || k->p.type == PD_PARAM_TERMS ||
        k->p.type == PD_PARAM_BLOCK) /* not a plain field */
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "key %s is read by its own code", name);
    void* field = (char*)blob + k->p.offset;
    required = required || (k->flags & PD_KEY_REQUIRED);
    switch (k->p.type) {
        case PD_PARAM_REAL:
            return pd_json_real(obj, name, path, required, pd_scene_key_range(k), field, err);
        case PD_PARAM_INT:
            return pd_json_int(obj, name, path, required, pd_scene_key_range(k), field, err);
        case PD_PARAM_BOOL:
            return pd_json_bool(obj, name, path, required, field, err);
        case PD_PARAM_ENUM:
            return pd_json_choice(obj, name, path, required, k->p.choices, field, err);
        case PD_PARAM_VEC3:
            return pd_json_vec3(obj, name, path, required, field, err);
        case PD_PARAM_STRING:
            return pd_json_string(obj, name, path, required, field,
                                  k->size ? k->size : PD_PARAM_STRING_MAX, err);
        case PD_PARAM_REALS:
        case PD_PARAM_TERMS:
        case PD_PARAM_BLOCK:
            break;
    }
    return PD_OK;
}

pd_status pd_scene_read_keys(const pd_scene_table* t, const cJSON* obj, const char* path,
                             void* blob, pd_error* err) {
    for (int i = 0; i < t->count; ++i)
        if (!(t->keys[i].flags & PD_KEY_BY_HAND))
            PD_JTRY(pd_scene_read_key(t, t->keys[i].p.name, obj, path, 0, blob, err));
    return PD_OK;
}

pd_status pd_scene_check_keys(const cJSON* item, const char* path, const pd_scene_table* t,
                              const pd_param_table* extra, pd_error* err) {
    char keys[PD_SCENE_KEYS_MAX];
    pd_scene_table_keys(t, keys, sizeof keys);
    return pd_json_check_object(item, path, keys, extra, err);
}
