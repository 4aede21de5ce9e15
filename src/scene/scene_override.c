/* `--set json.path=value` overrides, applied to the parsed JSON tree before validation, so an
 * overridden value is checked exactly like one written in the file. The path is keys joined by
 * '.' with [i] for array elements (`bodies[0].shape.radius`); missing object keys are created;
 * the value is JSON when it parses as JSON (`40`, `true`, `[0, 1, 0]`) and a string otherwise. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/scene_json.h"
#include "scene/scene_parse.h"

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
    snprintf(path, sizeof path, "--set %s", text);
    return pd_fail(err, PD_ERR_BAD_SCENE, path,
                   "expected json.path=value (keys joined by '.', [i] for array elements, e.g. "
                   "solver.iterations=40 or bodies[0].spacing=0.02): %s",
                   why);
}

pd_status pd_scene_apply_override(cJSON* root, const char* text, pd_error* err) {
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
