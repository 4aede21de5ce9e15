/* Typed, path-naming access to a cJSON tree for the scene parser (scene_json.h), and a small
 * scanner that maps a JSON path back to its line in the source text. */
#include "scene/scene_json.h"

#include "core/param.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends text to the path in out, cutting what does not fit: a cut path still names where
 * the error is. */
static void path_append(char* out, const char* text) {
    size_t used = strlen(out), n = strlen(text);
    if (used + n >= PD_JPATH_MAX)
        n = PD_JPATH_MAX - 1 - used;
    memcpy(out + used, text, n);
    out[used + n] = '\0';
}

void pd_jpath_key(char* out, const char* parent, const char* key) {
    out[0] = '\0';
    if (parent && parent[0]) {
        path_append(out, parent);
        path_append(out, ".");
    }
    path_append(out, key);
}

void pd_jpath_index(char* out, const char* parent, int index) {
    char suffix[16];
    snprintf(suffix, sizeof suffix, "[%d]", index);
    out[0] = '\0';
    path_append(out, parent ? parent : "");
    path_append(out, suffix);
}

/* Integers in full, other numbers in the shortest form that reads back exactly. */
static const char* number_text(double v, char* buf, size_t cap) {
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%.0f", v);
        return buf;
    }
    for (int digits = 6; digits <= 17; ++digits) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

const char* pd_json_describe(const cJSON* item, char* buf, size_t cap) {
    if (!item)
        snprintf(buf, cap, "nothing");
    else if (cJSON_IsString(item))
        snprintf(buf, cap, "the string \"%.60s\"", item->valuestring);
    else if (cJSON_IsNumber(item)) {
        char num[40];
        snprintf(buf, cap, "the number %s", number_text(item->valuedouble, num, sizeof num));
    } else if (cJSON_IsTrue(item))
        snprintf(buf, cap, "true");
    else if (cJSON_IsFalse(item))
        snprintf(buf, cap, "false");
    else if (cJSON_IsNull(item))
        snprintf(buf, cap, "null");
    else if (cJSON_IsArray(item))
        snprintf(buf, cap, "an array of %d", cJSON_GetArraySize(item));
    else if (cJSON_IsObject(item))
        snprintf(buf, cap, "%s", item->child ? "an object" : "an empty object");
    else
        snprintf(buf, cap, "an invalid value");
    return buf;
}

int pd_json_choice_index(const char* choices, const char* choice) {
    return pd_param_choice_index(choices, choice);
}

void pd_json_choice_list(const char* choices, char* out, size_t cap) {
    size_t used = 0;
    out[0] = '\0';
    for (const char* s = choices; *s && used < cap;) {
        size_t len = strcspn(s, "|");
        int w = snprintf(out + used, cap - used, "%s%.*s", used ? ", " : "", (int)len, s);
        if (w < 0)
            break;
        used += (size_t)w;
        s += len;
        if (*s == '|')
            ++s;
    }
}

/* "a, b, c" from the allowed list plus the keys of `extra` that belong to the object `block`
 * (NULL: the table's own object). */
static void valid_keys(const char* allowed, const pd_param_table* extra, const char* block,
                       char* out, size_t cap) {
    pd_json_choice_list(allowed, out, cap);
    for (int i = 0; extra && i < extra->count; ++i) {
        size_t used = strlen(out);
        if (pd_param_in_block(&extra->params[i], block))
            snprintf(out + used, cap - used, "%s%s", used ? ", " : "",
                     pd_param_key(&extra->params[i]));
    }
}

/* pd_json_check_object at the level `block` of `extra`: a block's keys are accepted only
 * inside it, and its object's keys only outside. */
static pd_status check_members(const cJSON* item, const char* path, const char* allowed,
                               const pd_param_table* extra, const char* block, pd_error* err) {
    char found[96], keys[600], child[PD_JPATH_MAX];
    if (!cJSON_IsObject(item)) {
        pd_json_describe(item, found, sizeof found);
        if (!block)
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected an object, got %s", found);
        valid_keys(allowed, extra, block, keys, sizeof keys);
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected an object%s%s, got %s",
                       keys[0] ? " with keys " : "", keys, found);
    }
    for (const cJSON* c = item->child; c; c = c->next) {
        pd_jpath_key(child, path, c->string);
        if (pd_json_choice_index(allowed, c->string) < 0 &&
            !pd_param_find_key(extra, block, c->string)) {
            valid_keys(allowed, extra, block, keys, sizeof keys);
            return pd_fail(err, PD_ERR_BAD_SCENE, child, "unknown key \"%s\"; valid keys: %s",
                           c->string, keys);
        }
        for (const cJSON* d = c->next; d; d = d->next)
            if (strcmp(c->string, d->string) == 0)
                return pd_fail(err, PD_ERR_BAD_SCENE, child, "key \"%s\" is given twice",
                               c->string);
    }
    return PD_OK;
}

pd_status pd_json_check_object(const cJSON* item, const char* path, const char* allowed,
                               const pd_param_table* extra, pd_error* err) {
    return check_members(item, path, allowed, extra, NULL, err);
}

pd_status pd_json_check_block(const cJSON* item, const char* path, const pd_param_table* t,
                              const char* block, pd_error* err) {
    return check_members(item, path, "", t, block, err);
}

/* The member `key`, or NULL; fails only for a missing required key. */
static pd_status member(const cJSON* obj, const char* key, const char* path, int required,
                        const char* expected, const cJSON** out, pd_error* err) {
    *out = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!*out && required) {
        char child[PD_JPATH_MAX];
        pd_jpath_key(child, path, key);
        return pd_fail(err, PD_ERR_BAD_SCENE, child, "missing required key: expected %s", expected);
    }
    return PD_OK;
}

static int in_range(double v, pd_jrange r) {
    int lo_ok = r.lo_open ? v > r.lo : v >= r.lo;
    int hi_ok = r.hi_open ? v < r.hi : v <= r.hi;
    return lo_ok && hi_ok;
}

/* "a number > 0 (m)", "a number in [0, 90) (degrees)". */
static const char* range_text(pd_jrange r, const char* noun, char* buf, size_t cap) {
    char unit[48] = "", lo[40], hi[40];
    if (r.unit && r.unit[0] && strcmp(r.unit, "1") != 0 && strcmp(r.unit, "-") != 0)
        snprintf(unit, sizeof unit, " (%s)", r.unit);
    number_text(r.lo, lo, sizeof lo);
    number_text(r.hi, hi, sizeof hi);
    if (isinf(r.lo) && isinf(r.hi))
        snprintf(buf, cap, "%s%s", noun, unit);
    else if (isinf(r.hi))
        snprintf(buf, cap, "%s %s %s%s", noun, r.lo_open ? ">" : ">=", lo, unit);
    else if (isinf(r.lo))
        snprintf(buf, cap, "%s %s %s%s", noun, r.hi_open ? "<" : "<=", hi, unit);
    else
        snprintf(buf, cap, "%s in %c%s, %s%c%s", noun, r.lo_open ? '(' : '[', lo, hi,
                 r.hi_open ? ')' : ']', unit);
    return buf;
}

/* Checks that `item` is a finite number inside `range`. */
static pd_status number_value(const cJSON* item, const char* path, pd_jrange range, int integer,
                              double* out, pd_error* err) {
    char expected[128], found[96];
    range_text(range, integer ? "an integer" : "a number", expected, sizeof expected);
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) ||
        (integer && item->valuedouble != floor(item->valuedouble)) ||
        !in_range(item->valuedouble, range))
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected %s, got %s", expected,
                       pd_json_describe(item, found, sizeof found));
    *out = item->valuedouble;
    return PD_OK;
}

pd_status pd_json_real(const cJSON* obj, const char* key, const char* path, int required,
                       pd_jrange range, pd_real* out, pd_error* err) {
    char expected[128], child[PD_JPATH_MAX];
    const cJSON* item;
    PD_JTRY(
        member(obj, key, path, required, range_text(range, "a number", expected, 128), &item, err));
    if (!item)
        return PD_OK;
    pd_jpath_key(child, path, key);
    double v;
    PD_JTRY(number_value(item, child, range, 0, &v, err));
    *out = (pd_real)v;
    return PD_OK;
}

pd_status pd_json_int(const cJSON* obj, const char* key, const char* path, int required,
                      pd_jrange range, int* out, pd_error* err) {
    char expected[128], child[PD_JPATH_MAX];
    const cJSON* item;
    PD_JTRY(member(obj, key, path, required, range_text(range, "an integer", expected, 128), &item,
                   err));
    if (!item)
        return PD_OK;
    pd_jpath_key(child, path, key);
    double v;
    PD_JTRY(number_value(item, child, range, 1, &v, err));
    *out = (int)v;
    return PD_OK;
}

pd_status pd_json_bool(const cJSON* obj, const char* key, const char* path, int required, int* out,
                       pd_error* err) {
    char found[96], child[PD_JPATH_MAX];
    const cJSON* item;
    PD_JTRY(member(obj, key, path, required, "true or false", &item, err));
    if (!item)
        return PD_OK;
    pd_jpath_key(child, path, key);
    if (!cJSON_IsBool(item))
        return pd_fail(err, PD_ERR_BAD_SCENE, child, "expected true or false, got %s",
                       pd_json_describe(item, found, sizeof found));
    *out = cJSON_IsTrue(item) ? 1 : 0;
    return PD_OK;
}

pd_status pd_json_string(const cJSON* obj, const char* key, const char* path, int required,
                         char* out, size_t cap, pd_error* err) {
    char found[96], child[PD_JPATH_MAX];
    const cJSON* item;
    PD_JTRY(member(obj, key, path, required, "a string", &item, err));
    if (!item)
        return PD_OK;
    pd_jpath_key(child, path, key);
    if (!cJSON_IsString(item) || !item->valuestring[0])
        return pd_fail(err, PD_ERR_BAD_SCENE, child, "expected a non-empty string, got %s",
                       pd_json_describe(item, found, sizeof found));
    if (strlen(item->valuestring) >= cap)
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected a string of at most %zu characters, got %zu", cap - 1,
                       strlen(item->valuestring));
    memcpy(out, item->valuestring, strlen(item->valuestring) + 1);
    return PD_OK;
}

pd_status pd_json_choice(const cJSON* obj, const char* key, const char* path, int required,
                         const char* choices, int* out, pd_error* err) {
    char found[96], list[256], expected[300], child[PD_JPATH_MAX];
    pd_json_choice_list(choices, list, sizeof list);
    snprintf(expected, sizeof expected, "one of %s", list);
    const cJSON* item;
    PD_JTRY(member(obj, key, path, required, expected, &item, err));
    if (!item)
        return PD_OK;
    pd_jpath_key(child, path, key);
    int index = cJSON_IsString(item) ? pd_json_choice_index(choices, item->valuestring) : -1;
    if (index < 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, child, "expected %s, got %s", expected,
                       pd_json_describe(item, found, sizeof found));
    *out = index;
    return PD_OK;
}

pd_status pd_json_numbers(const cJSON* item, const char* path, int n, const char* what, double* out,
                          pd_error* err) {
    char found[96];
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != n)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected %s (an array of %d numbers), got %s",
                       what, n, pd_json_describe(item, found, sizeof found));
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char child[PD_JPATH_MAX];
        pd_jpath_index(child, path, i);
        PD_JTRY(number_value(c, child, pd_jr_any(NULL), 0, &out[i], err));
    }
    return PD_OK;
}

pd_status pd_json_vec3(const cJSON* obj, const char* key, const char* path, int required,
                       pd_vec3* out, pd_error* err) {
    char child[PD_JPATH_MAX];
    const cJSON* item;
    PD_JTRY(member(obj, key, path, required, "[x, y, z]", &item, err));
    if (!item)
        return PD_OK;
    pd_jpath_key(child, path, key);
    double v[3];
    PD_JTRY(pd_json_numbers(item, child, 3, "[x, y, z]", v, err));
    *out = pd_v3((pd_real)v[0], (pd_real)v[1], (pd_real)v[2]);
    return PD_OK;
}

pd_status pd_json_number_list(const cJSON* obj, const char* key, const char* path, int max,
                              pd_jrange range, pd_real* out, int* count, pd_error* err) {
    char child[PD_JPATH_MAX], found[96];
    const cJSON* item;
    PD_JTRY(member(obj, key, path, 1, "an array of numbers", &item, err));
    pd_jpath_key(child, path, key);
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) < 1 || cJSON_GetArraySize(item) > max)
        return pd_fail(err, PD_ERR_BAD_SCENE, child, "expected an array of 1 to %d numbers, got %s",
                       max, pd_json_describe(item, found, sizeof found));
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char elem[PD_JPATH_MAX];
        double v;
        pd_jpath_index(elem, child, i);
        PD_JTRY(number_value(c, elem, range, 0, &v, err));
        out[i] = (pd_real)v;
    }
    *count = i;
    return PD_OK;
}

/* ---- locating a path in the source text ---- */

typedef struct json_scan {
    const char* s;
    int line;
    const char* target;
    char path[PD_JPATH_MAX];
    int found; /* line of the target, 0 while not seen */
    int ok;
} json_scan;

/* Skips what cJSON skips as white space: every byte from 1 to 32 (a scan that stopped at a
 * control character cJSON had skipped lost its place, and could loop for ever: fuzzing). */
static void scan_space(json_scan* sc) {
    for (; *sc->s && (unsigned char)*sc->s <= 32; ++sc->s)
        if (*sc->s == '\n')
            ++sc->line;
}

/* Copies a string's raw characters (escapes left as they are) into buf. */
static void scan_string(json_scan* sc, char* buf, size_t cap) {
    size_t n = 0;
    ++sc->s; /* opening quote */
    while (*sc->s && *sc->s != '"') {
        if (*sc->s == '\\' && sc->s[1])
            ++sc->s;
        if (n + 1 < cap)
            buf[n++] = *sc->s;
        ++sc->s;
    }
    if (*sc->s == '"')
        ++sc->s;
    else
        sc->ok = 0;
    if (buf)
        buf[n < cap ? n : cap - 1] = '\0';
}

static void scan_value(json_scan* sc);

/* Visits the value at the current path (extended by the caller); notes the line of a match. */
static void scan_child(json_scan* sc, size_t keep, int line) {
    if (!sc->found && strcmp(sc->path, sc->target) == 0)
        sc->found = line;
    scan_value(sc);
    sc->path[keep] = '\0';
}

static void scan_object(json_scan* sc) {
    size_t keep = strlen(sc->path);
    ++sc->s;
    for (scan_space(sc); sc->ok && !sc->found && *sc->s && *sc->s != '}';) {
        char key[PD_JPATH_MAX];
        int line = sc->line;
        scan_string(sc, key, sizeof key);
        snprintf(sc->path + keep, sizeof sc->path - keep, "%s%s", keep ? "." : "", key);
        scan_space(sc);
        if (*sc->s != ':') {
            sc->ok = 0;
            return;
        }
        ++sc->s;
        scan_child(sc, keep, line);
        scan_space(sc);
        if (*sc->s == ',') {
            ++sc->s;
            scan_space(sc);
        }
    }
    if (*sc->s == '}')
        ++sc->s;
}

static void scan_array(json_scan* sc) {
    size_t keep = strlen(sc->path);
    ++sc->s;
    scan_space(sc);
    for (int i = 0; sc->ok && !sc->found && *sc->s && *sc->s != ']'; ++i) {
        snprintf(sc->path + keep, sizeof sc->path - keep, "[%d]", i);
        scan_child(sc, keep, sc->line);
        scan_space(sc);
        if (*sc->s == ',') {
            ++sc->s;
            scan_space(sc);
        }
    }
    if (*sc->s == ']')
        ++sc->s;
}

static void scan_value(json_scan* sc) {
    scan_space(sc);
    if (sc->found || !sc->ok)
        return;
    if (*sc->s == '{')
        scan_object(sc);
    else if (*sc->s == '[')
        scan_array(sc);
    else if (*sc->s == '"')
        scan_string(sc, NULL, 0);
    else if (*sc->s && strcspn(sc->s, ",]}") > 0)
        sc->s += strcspn(sc->s, ",]} \t\r\n"); /* a number, true, false or null */
    else
        sc->ok = 0; /* the end, or a stray bracket: nothing to scan, no progress to make */
}

static int line_of_exact(const char* text, const char* path) {
    json_scan sc = {text, 1, path, "", 0, 1};
    scan_space(&sc);
    if (!path[0])
        return sc.line;
    scan_value(&sc);
    return sc.found;
}

int pd_json_path_line(const char* text, const char* path) {
    char p[PD_JPATH_MAX];
    snprintf(p, sizeof p, "%s", path ? path : "");
    for (;;) {
        int line = line_of_exact(text, p);
        if (line > 0 || !p[0])
            return line;
        /* Not there (a missing key): try the enclosing object or array. */
        char* dot = strrchr(p, '.');
        char* bracket = strrchr(p, '[');
        char* cut = dot > bracket ? dot : bracket;
        if (!cut)
            cut = p;
        *cut = '\0';
    }
}
