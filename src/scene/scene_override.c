/* `--set json.path=value` overrides, applied to the parsed JSON tree before validation, so an
 * overridden value is checked exactly like one written in the file. The path is keys joined by
 * '.' with [i] for array elements (`bodies[0].shape.radius`); missing object keys are created;
 * the value is JSON when it parses as JSON (`40`, `true`, `[0, 1, 0]`) and a string otherwise. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "scene/scene_json.h"
#include "scene/scene_parse.h"
#include "solvers/solver.h"

typedef struct override_segment {
    char key[PD_JPATH_MAX]; /* empty for an index */
    int index;
} override_segment;

/* Reads the next segment of the path at *p; returns 0 on bad syntax. */
static int next_segment(const char** p, int first, override_segment* seg) {
    const char* s = *p;
    seg->key[0] = '\0';
    seg->index = -1;
    if (*s == '[') {
        char* end = NULL;
        if (!isdigit((unsigned char)s[1]))
            return 0;
        long v = strtol(s + 1, &end, 10);
        if (*end != ']' || v > 1000000000)
            return 0;
        seg->index = (int)v;
        *p = end + 1;
        return 1;
    }
    if (!first) {
        if (*s != '.')
            return 0;
        ++s;
    }
    size_t len = strcspn(s, ".[]");
    if (len == 0 || len >= sizeof seg->key)
        return 0;
    memcpy(seg->key, s, len);
    seg->key[len] = '\0';
    *p = s + len;
    return 1;
}

static cJSON* parse_value(const char* text) {
    cJSON* v = cJSON_ParseWithOpts(text, NULL, 1);
    return v ? v : cJSON_CreateString(text);
}

/* Puts `value` at `seg` of `node` (replacing what was there); takes ownership of value. */
static int place(cJSON* node, const override_segment* seg, cJSON* value) {
    if (seg->index >= 0) {
        if (!cJSON_IsArray(node) || seg->index >= cJSON_GetArraySize(node))
            return 0;
        return cJSON_ReplaceItemInArray(node, seg->index, value);
    }
    if (!cJSON_IsObject(node))
        return 0;
    if (cJSON_GetObjectItemCaseSensitive(node, seg->key))
        return cJSON_ReplaceItemInObjectCaseSensitive(node, seg->key, value);
    return cJSON_AddItemToObject(node, seg->key, value);
}

/* The child at `seg`, creating a missing object key; NULL when it cannot be reached. */
static cJSON* descend(cJSON* node, const override_segment* seg) {
    if (seg->index >= 0)
        return cJSON_IsArray(node) ? cJSON_GetArrayItem(node, seg->index) : NULL;
    if (!cJSON_IsObject(node))
        return NULL;
    cJSON* child = cJSON_GetObjectItemCaseSensitive(node, seg->key);
    if (!child) {
        child = cJSON_CreateObject();
        if (child && !cJSON_AddItemToObject(node, seg->key, child)) {
            cJSON_Delete(child);
            child = NULL;
        }
    }
    return child;
}

static pd_status bad_override(const char* text, const char* why, pd_error* err) {
    char path[PD_JPATH_MAX];
    snprintf(path, sizeof path, "--set %.*s", (int)(sizeof path - 7), text);
    return pd_fail(err, PD_ERR_BAD_SCENE, path,
                   "expected json.path=value (keys joined by '.', [i] for array elements, e.g. "
                   "solver.iterations=40 or bodies[0].spacing=0.02): %s",
                   why);
}

static pd_status apply_override(cJSON* root, const char* text, pd_error* err) {
    const char* eq = text ? strchr(text, '=') : NULL;
    if (!eq)
        return bad_override(text ? text : "", "no '=' found", err);
    char path[PD_JPATH_MAX];
    if ((size_t)(eq - text) >= sizeof path)
        return bad_override(text, "the path is too long", err);
    snprintf(path, sizeof path, "%.*s", (int)(eq - text), text);
    const char* p = path;
    cJSON* node = root;
    for (int first = 1;; first = 0) {
        override_segment seg;
        if (!next_segment(&p, first, &seg))
            return bad_override(text, "malformed path", err);
        if (*p == '\0') {
            cJSON* value = parse_value(eq + 1);
            if (value && place(node, &seg, value))
                return PD_OK;
            cJSON_Delete(value);
            return bad_override(text, "no such array element, or the parent is not an object", err);
        }
        node = descend(node, &seg);
        if (!node)
            return bad_override(text, "no such array element, or the parent is not an object", err);
    }
}

/* The method the scene will run: the last `method=` override's value, else the tree's. */
static void running_method(const cJSON* root, const char* const* overrides, int count, char* out,
                           size_t cap) {
    const cJSON* m = cJSON_GetObjectItemCaseSensitive(root, "method");
    snprintf(out, cap, "%s", cJSON_IsString(m) ? m->valuestring : "");
    for (int i = 0; i < count; ++i)
        if (overrides[i] && strncmp(overrides[i], "method=", 7) == 0) {
            cJSON* v = parse_value(overrides[i] + 7);
            snprintf(out, cap, "%s", cJSON_IsString(v) ? v->valuestring : "");
            cJSON_Delete(v);
        }
}

/* Whether the tree's `solver` is the flat form (an object with keys, none a method's name). */
static int flat_solver(const cJSON* root) {
    const cJSON* solver = cJSON_GetObjectItemCaseSensitive(root, "solver");
    if (!cJSON_IsObject(solver) || !solver->child)
        return 0;
    for (const cJSON* c = solver->child; c; c = c->next)
        if (pd_solver_find(c->string))
            return 0;
    return 1;
}

/* "solver.<key>=v" with key no method's name: "solver.<method>.<key>=v" (pd_alloc'd, *bytes
 * set; NULL when the override is not one, or out of memory). */
static char* method_override(const char* text, const char* method, size_t* bytes) {
    if (strncmp(text, "solver.", 7) != 0 || !method[0])
        return NULL;
    size_t len = strcspn(text + 7, ".[=");
    char key[PD_JPATH_MAX];
    if (len == 0 || len >= sizeof key)
        return NULL;
    snprintf(key, sizeof key, "%.*s", (int)len, text + 7);
    if (pd_solver_find(key))
        return NULL;
    *bytes = strlen(text) + strlen(method) + 2;
    char* out = pd_alloc(*bytes);
    if (out)
        snprintf(out, *bytes, "solver.%s.%s", method, text + 7);
    return out;
}

pd_status pd_scene_apply_overrides(cJSON* root, const char* const* overrides, int count,
                                   pd_error* err) {
    char method[PD_NAME_MAX];
    running_method(root, overrides, count, method, sizeof method);
    for (int i = 0; i < count; ++i) {
        size_t bytes = 0;
        char* rewritten = overrides[i] && !flat_solver(root)
                              ? method_override(overrides[i], method, &bytes)
                              : NULL;
        pd_status st = apply_override(root, rewritten ? rewritten : overrides[i], err);
        pd_free(rewritten, bytes);
        if (st != PD_OK)
            return st;
    }
    return PD_OK;
}
