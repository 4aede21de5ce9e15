/* Scene files (include/peridot/scene.h, docs/scene-format.md): reads the JSON, applies `--set`
 * overrides, validates every key into the def structs, and keeps the resolved scene as JSON.
 * Errors name the file, the JSON path and the line. */
#define _POSIX_C_SOURCE 200809L /* fileno, fstat */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "scene/scene_json.h"
#include "scene/scene_parse.h"
#include "scene/scene_tables.h"
#include "peridot/peridot.h"
#include "solvers/solver.h"

/* Largest scene file read (bytes). */
#define PD_SCENE_MAX_BYTES (16 * 1024 * 1024)

static pd_status parse_version(const cJSON* root, pd_scene* s, pd_error* err) {
    char found[96];
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!item)
        return pd_fail(err, PD_ERR_BAD_SCENE, "version",
                       "missing required key: expected \"version\": %d", PD_SCENE_VERSION);
    if (!cJSON_IsNumber(item) || item->valuedouble != PD_SCENE_VERSION)
        return pd_fail(err, PD_ERR_BAD_SCENE, "version",
                       "expected %d (the scene format this program reads), got %s",
                       PD_SCENE_VERSION, pd_json_describe(item, found, sizeof found));
    s->version = PD_SCENE_VERSION;
    const cJSON* ver = cJSON_GetObjectItemCaseSensitive(root, "peridot_version");
    if (ver && !cJSON_IsString(ver))
        return pd_fail(err, PD_ERR_BAD_SCENE, "peridot_version", "expected a string, got %s",
                       pd_json_describe(ver, found, sizeof found));
    return PD_OK;
}

/* The registered methods' names, ", "-joined. */
static void method_list(char* out, size_t cap) {
    const pd_solver_vtable* const* all = pd_solver_all();
    out[0] = '\0';
    for (int i = 0; all[i]; ++i) {
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s%s", i ? ", " : "", all[i]->name);
    }
}

/* A method's options from `item` (NULL: its defaults) into a new struct of its table. */
static pd_status read_solver_block(const pd_solver_vtable* m, const cJSON* item, const char* path,
                                   void** out, pd_error* err) {
    const pd_param_table* t = m->params;
    *out = NULL;
    if (!t) {
        if (item && (!cJSON_IsObject(item) || item->child))
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "method %s has no solver options", m->name);
        return PD_OK;
    }
    *out = pd_alloc(t->struct_size);
    if (!*out)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, path, "out of memory");
    pd_params_set_defaults(t, *out);
    if (!item)
        return PD_OK;
    PD_JTRY(pd_json_check_object(item, path, "", t, err));
    return pd_json_params(item, path, t, *out, err);
}

/* Whether `solver` is keyed by method name (any key is one). */
static int per_method(const cJSON* item) {
    for (const cJSON* c = item->child; c; c = c->next)
        if (pd_solver_find(c->string))
            return 1;
    return 0;
}

/* The flat form ({"iterations": 40}) is the running method's options; a key of another
 * method's table is named as such. */
static pd_status read_flat_solver(const cJSON* item, pd_scene* s, pd_error* err) {
    const pd_solver_vtable* const* all = pd_solver_all();
    for (const cJSON* c = item->child; c; c = c->next) {
        if (s->solver->params && pd_param_find_key(s->solver->params, NULL, c->string))
            continue;
        for (int i = 0; all[i]; ++i)
            if (all[i]->params && pd_param_find_key(all[i]->params, NULL, c->string)) {
                char path[PD_JPATH_MAX];
                pd_jpath_key(path, "solver", c->string);
                return pd_fail(err, PD_ERR_BAD_SCENE, path,
                               "\"%s\" is an option of method %s, and the scene runs %s: give "
                               "solver options per method, \"solver\": {\"%s\": {\"%s\": ...}}",
                               c->string, all[i]->name, s->method, all[i]->name, c->string);
            }
    }
    pd_free(s->solver_params, s->solver->params ? s->solver->params->struct_size : 0);
    return read_solver_block(s->solver, item, "solver", &s->solver_params, err);
}

/* `solver`: one block per method, keyed by its name, each validated against its own method's
 * table whichever method runs (a typo in an inactive block is refused); only the running
 * method's acts. The flat form of earlier scenes is read as the running method's block. */
static pd_status parse_solver(const cJSON* root, pd_scene* s, pd_error* err) {
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(root, "solver");
    char found[96], list[256];
    PD_JTRY(read_solver_block(s->solver, NULL, "solver", &s->solver_params, err));
    if (!item)
        return PD_OK;
    if (!cJSON_IsObject(item))
        return pd_fail(err, PD_ERR_BAD_SCENE, "solver",
                       "expected an object of solver options per method, got %s",
                       pd_json_describe(item, found, sizeof found));
    if (!per_method(item))
        return read_flat_solver(item, s, err);
    const pd_solver_vtable* const* all = pd_solver_all();
    for (const cJSON* c = item->child; c; c = c->next) {
        char path[PD_JPATH_MAX];
        pd_jpath_key(path, "solver", c->string);
        const pd_solver_vtable* m = pd_solver_find(c->string);
        method_list(list, sizeof list);
        if (!m)
            return pd_fail(err, PD_ERR_BAD_SCENE, path,
                           "expected a method name (%s): solver options are given per method, "
                           "\"solver\": {\"%s\": {...}}, and not beside method blocks",
                           list, s->method);
        for (const cJSON* d = c->next; d; d = d->next)
            if (strcmp(c->string, d->string) == 0)
                return pd_fail(err, PD_ERR_BAD_SCENE, path, "key \"%s\" is given twice", c->string);
        int k = 0;
        while (all[k] != m)
            ++k;
        void** slot = m == s->solver ? &s->solver_params : &s->other_solver_params[k];
        pd_free(*slot, m->params ? m->params->struct_size : 0);
        PD_JTRY(read_solver_block(m, c, path, slot, err));
    }
    return PD_OK;
}

static pd_status parse_method(const cJSON* root, pd_scene* s, pd_error* err) {
    char list[256];
    PD_JTRY(pd_json_string(root, "method", "", 1, s->method, sizeof s->method, err));
    s->solver = pd_solver_find(s->method);
    if (s->solver)
        return PD_OK;
    method_list(list, sizeof list);
    return pd_fail(err, PD_ERR_BAD_SCENE, "method", "expected one of %s, got \"%s\"", list,
                   s->method);
}

/* One time step at `key` of obj: a number in dt's range, or "auto" (*is_auto set). */
static pd_status read_time_step(const cJSON* obj, const char* key, const char* path, pd_real* dt,
                                int* is_auto, pd_error* err) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *is_auto = cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0;
    if (*is_auto)
        return PD_OK;
    if (cJSON_IsString(v)) {
        char at[PD_JPATH_MAX];
        pd_jpath_key(at, path, key);
        return pd_fail(err, PD_ERR_BAD_SCENE, at,
                       "expected a number > 0 (s) or \"auto\", got the string \"%.40s\"",
                       v->valuestring);
    }
    const pd_scene_key* k = pd_scene_key_find(&pd_scene_time_table, "dt");
    return pd_json_real(obj, key, path, 1, pd_scene_key_range(k), dt, err);
}

/* time.dt: a number, "auto", or an object of them keyed by method name (a method it does not
 * name: "auto"). Every entry is checked; the running method's is taken. With "auto" dt holds
 * the implicit method's step, or a frame for an explicit one until the world asks it. */
static pd_status parse_time_step(const cJSON* item, pd_scene* s, pd_world_def* w, pd_error* err) {
    const cJSON* dt = cJSON_GetObjectItemCaseSensitive(item, "dt");
    const pd_solver_vtable* const* all = pd_solver_all();
    w->dt_auto = 1;
    s->dt_per_method = cJSON_IsObject(dt);
    for (int k = 0; all[k]; ++k)
        s->method_dt[k] = -1;
    if (!cJSON_IsObject(dt))
        PD_JTRY(read_time_step(item, "dt", "time", &w->dt, &w->dt_auto, err));
    for (const cJSON* c = cJSON_IsObject(dt) ? dt->child : NULL; c; c = c->next) {
        char path[PD_JPATH_MAX], list[256];
        pd_jpath_key(path, "time.dt", c->string);
        const pd_solver_vtable* m = pd_solver_find(c->string);
        if (!m) {
            method_list(list, sizeof list);
            return pd_fail(err, PD_ERR_BAD_SCENE, path,
                           "expected a method name (%s): time.dt is a number, \"auto\", or an "
                           "object of them keyed by method",
                           list);
        }
        pd_real value = 0;
        int is_auto = 0;
        PD_JTRY(read_time_step(dt, c->string, "time.dt", &value, &is_auto, err));
        for (int k = 0; all[k]; ++k)
            if (all[k] == m)
                s->method_dt[k] = is_auto ? 0 : value;
        if (m == s->solver)
            w->dt = value, w->dt_auto = is_auto;
    }
    if (w->dt_auto)
        w->dt = s->solver->auto_time_step > 0 ? s->solver->auto_time_step : 1 / w->fps;
    return PD_OK;
}

static pd_status parse_time(const cJSON* root, pd_scene* s, pd_world_def* w, pd_error* err) {
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(root, "time");
    if (!item)
        return pd_fail(err, PD_ERR_BAD_SCENE, "time",
                       "missing required key: expected { \"dt\": <s> or \"auto\", \"fps\": ..., "
                       "\"frames\": ... }");
    PD_JTRY(pd_scene_check_keys(item, "time", &pd_scene_time_table, NULL, err));
    PD_JTRY(pd_scene_read_keys(&pd_scene_time_table, item, "time", w, err));
    return parse_time_step(item, s, w, err);
}

static pd_status parse_world(const cJSON* root, pd_scene* s, pd_world_def* w, pd_error* err) {
    *w = pd_default_world_def();
    PD_JTRY(parse_time(root, s, w, err));
    pd_scene_top top = {w->gravity, (int)w->seed};
    PD_JTRY(pd_scene_read_keys(&pd_scene_top_table, root, "", &top, err));
    w->gravity = top.gravity;
    w->seed = (uint64_t)top.seed;
    return PD_OK;
}

static pd_status require(const cJSON* root, const char* key, const char* expected,
                         const cJSON** out, pd_error* err) {
    *out = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!*out)
        return pd_fail(err, PD_ERR_BAD_SCENE, key, "missing required key: expected %s", expected);
    return PD_OK;
}

static pd_status parse_tree(const cJSON* root, pd_scene* s, pd_error* err) {
    const cJSON *materials, *bodies;
    PD_JTRY(pd_scene_check_keys(root, "", &pd_scene_top_table, NULL, err));
    PD_JTRY(parse_version(root, s, err));
    PD_JTRY(parse_method(root, s, err));
    PD_JTRY(parse_solver(root, s, err));
    PD_JTRY(parse_world(root, s, &s->world, err));
    PD_JTRY(require(root, "materials", "an object mapping names to materials", &materials, err));
    PD_JTRY(pd_scene_parse_materials(materials, s, err));
    PD_JTRY(require(root, "bodies", "an array of bodies", &bodies, err));
    PD_JTRY(pd_scene_parse_bodies(bodies, s, err));
    PD_JTRY(pd_scene_parse_colliders(cJSON_GetObjectItemCaseSensitive(root, "colliders"), s, err));
    PD_JTRY(pd_scene_parse_emitters(cJSON_GetObjectItemCaseSensitive(root, "emitters"), s, err));
    return pd_scene_parse_output(cJSON_GetObjectItemCaseSensitive(root, "output"), s, &s->output,
                                 err);
}

/* Line and column (from 1) of `at` in text. */
static void line_column(const char* text, const char* at, int* line, int* column) {
    *line = 1, *column = 1;
    for (const char* p = text; p < at; ++p) {
        *column = *p == '\n' ? 1 : *column + 1;
        *line += *p == '\n';
    }
}

/* Brackets open at `at` (outside strings): cJSON stops at the bracket that would open one level
 * more than CJSON_NESTING_LIMIT, with the same error as for a syntax error. */
static int open_brackets(const char* text, const char* at) {
    int depth = 0, in_string = 0;
    for (const char* p = text; p < at; ++p) {
        if (in_string) {
            if (*p == '\\' && p + 1 < at)
                ++p;
            else if (*p == '"')
                in_string = 0;
        } else if (*p == '"')
            in_string = 1;
        else if (*p == '[' || *p == '{')
            ++depth;
        else if (*p == ']' || *p == '}')
            --depth;
    }
    return depth;
}

/* Line, column and a snippet of where cJSON stopped. */
static pd_status syntax_error(const char* json, pd_error* err) {
    const char* at = cJSON_GetErrorPtr();
    size_t len = strlen(json);
    if (!at || at < json || at > json + len)
        at = json + len;
    int line, column;
    line_column(json, at, &line, &column);
    if (err)
        err->line = line;
    if ((*at == '[' || *at == '{') && open_brackets(json, at) >= CJSON_NESTING_LIMIT)
        return pd_fail(err, PD_ERR_BAD_SCENE, "",
                       "the JSON nests deeper than the parser's limit (cJSON's "
                       "CJSON_NESTING_LIMIT, %d levels of arrays and objects) at line %d, "
                       "column %d",
                       CJSON_NESTING_LIMIT, line, column);
    int snippet = (int)strcspn(at, "\r\n");
    if (snippet > 24)
        snippet = 24;
    return pd_fail(err, PD_ERR_BAD_SCENE, "",
                   "invalid JSON at line %d, column %d%s%.*s%s: expected a JSON value, ',', ':' "
                   "or a closing bracket",
                   line, column, *at ? " near '" : " (at the end of the text)", snippet, at,
                   *at ? "'" : "");
}

static pd_status store_resolved(pd_scene* s, pd_error* err) {
    cJSON* tree = pd_scene_to_json(s);
    char* text = tree ? cJSON_Print(tree) : NULL;
    cJSON_Delete(tree);
    if (!text)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "out of memory writing the resolved scene");
    size_t len = strlen(text) + 1;
    s->resolved_json = pd_alloc(len);
    if (s->resolved_json)
        memcpy(s->resolved_json, text, len);
    cJSON_free(text);
    if (!s->resolved_json)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "out of memory writing the resolved scene");
    return PD_OK;
}

static void reset_error(pd_error* err, const char* file) {
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
}

/* Whether the --set text `override` (json.path=value) wrote the value at JSON path `path`:
 * its path is path itself or encloses it. */
static int override_path_covers(const char* override, const char* path) {
    const char* eq = strchr(override, '=');
    size_t len = eq ? (size_t)(eq - override) : 0;
    return len > 0 && strncmp(override, path, len) == 0 &&
           (path[len] == '\0' || path[len] == '.' || path[len] == '[');
}

/* The same, `solver.<key>` also covering the running method's `solver.<method>.<key>` (what
 * pd_scene_apply_overrides made of it). */
static int override_covers(const char* override, const char* path) {
    if (override_path_covers(override, path))
        return 1;
    size_t len = strncmp(path, "solver.", 7) == 0 ? strcspn(path + 7, ".[") : 0;
    char method[PD_NAME_MAX], rest[PD_JPATH_MAX];
    if (len == 0 || len >= sizeof method || path[7 + len] != '.')
        return 0;
    snprintf(method, sizeof method, "%.*s", (int)len, path + 7);
    snprintf(rest, sizeof rest, "solver.%s", path + 8 + len);
    return pd_solver_find(method) && override_path_covers(override, rest);
}

/* Whether the --set text `override` wrote a value inside the object or array at `path`. */
static int override_within(const char* override, const char* path) {
    size_t len = strlen(path);
    return len > 0 && strncmp(override, path, len) == 0 &&
           (override[len] == '.' || override[len] == '[');
}

/* Where an error was made: the last --set that wrote its value (the file never held it), or
 * the line of the file that holds its JSON path, naming a --set that changed a value inside. */
static void locate_error(const char* json, const char* const* overrides, int override_count,
                         pd_error* err) {
    for (int i = override_count - 1; i >= 0; --i)
        if (override_covers(overrides[i], err->path)) {
            snprintf(err->file, sizeof err->file, "--set %s", overrides[i]);
            err->line = 0;
            return;
        }
    err->line = pd_json_path_line(json, err->path);
    for (int i = override_count - 1; i >= 0; --i)
        if (override_within(overrides[i], err->path)) {
            size_t used = strlen(err->message);
            snprintf(err->message + used, sizeof err->message - used, " (with --set %s)",
                     overrides[i]);
            return;
        }
}

static pd_status parse_text(const char* json, const char* const* overrides, int override_count,
                            int validate, pd_scene* out, pd_error* err) {
    if (json[strspn(json, " \t\r\n")] == '\0') {
        if (err)
            err->line = 1;
        return pd_fail(err, PD_ERR_BAD_SCENE, "",
                       "the scene is empty%s: expected a JSON object { \"version\": %d, ... }",
                       json[0] ? " (white space only)" : "", PD_SCENE_VERSION);
    }
    cJSON* root = cJSON_ParseWithOpts(json, NULL, 1);
    if (!root)
        return syntax_error(json, err);
    pd_status status = PD_OK;
    status = pd_scene_apply_overrides(root, overrides, override_count, err);
    if (status == PD_OK)
        status = parse_tree(root, out, err);
    if (status == PD_OK && validate)
        status = pd_scene_validate(out, err);
    if (status == PD_OK)
        status = store_resolved(out, err);
    cJSON_Delete(root);
    if (status != PD_OK && err && strncmp(err->path, "--set", 5) != 0)
        locate_error(json, overrides, override_count, err);
    return status;
}

static pd_status parse_scene(const char* json, const char* file, const char* dir,
                             const char* const* overrides, int override_count, int validate,
                             pd_scene* out, pd_error* err) {
    reset_error(err, file);
    memset(out, 0, sizeof *out);
    if (!json)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "no scene text");
    snprintf(out->file, sizeof out->file, "%s", file ? file : "");
    snprintf(out->dir, sizeof out->dir, "%s", dir && dir[0] ? dir : ".");
    pd_status status = parse_text(json, overrides, override_count, validate, out, err);
    if (status != PD_OK)
        pd_scene_free(out);
    return status;
}

pd_status pd_scene_parse(const char* json, const char* file, const char* dir,
                         const char* const* overrides, int override_count, pd_scene* out,
                         pd_error* err) {
    return parse_scene(json, file, dir, overrides, override_count, 1, out, err);
}

pd_status pd_scene_parse_unvalidated(const char* json, const char* file, const char* dir,
                                     const char* const* overrides, int override_count,
                                     pd_scene* out, pd_error* err) {
    return parse_scene(json, file, dir, overrides, override_count, 0, out, err);
}

/* The whole file as a NUL-terminated pd_alloc'd string of *cap bytes. Only a regular file of at
 * most PD_SCENE_MAX_BYTES is read: a device (/dev/zero), a pipe or a folder would have no end
 * or no text, and nothing is allocated beyond what the file holds. */
static pd_status read_file(const char* path, char** text, size_t* cap, size_t* length,
                           pd_error* err) {
    struct stat named;
    if (stat(path, &named) == 0 && !S_ISREG(named.st_mode)) /* not opened: a FIFO would block */
        return pd_fail(err, PD_ERR_IO, "",
                       "not a regular file: a scene is a JSON file (a device, pipe or folder is "
                       "refused)");
    FILE* f = fopen(path, "rb");
    if (!f)
        return pd_fail(err, PD_ERR_IO, "", "cannot read the scene file: %s", strerror(errno));
    struct stat info;
    if (fstat(fileno(f), &info) != 0 || !S_ISREG(info.st_mode) ||
        info.st_size > PD_SCENE_MAX_BYTES) {
        int regular = fstat(fileno(f), &info) == 0 && S_ISREG(info.st_mode);
        fclose(f);
        if (!regular)
            return pd_fail(err, PD_ERR_IO, "",
                           "not a regular file: a scene is a JSON file (a device, pipe or folder "
                           "is refused)");
        return pd_fail(err, PD_ERR_BAD_SCENE, "",
                       "the scene file has %lld bytes, more than the %d a scene may have (meshes "
                       "belong in their own files)",
                       (long long)info.st_size, PD_SCENE_MAX_BYTES);
    }
    size_t used = 0;
    *cap = 0;
    *text = NULL;
    for (;;) {
        if (used + 1 >= *cap) {
            size_t grown = *cap ? 2 * *cap : (size_t)info.st_size + 2;
            char* bigger = pd_realloc(*text, *cap, grown);
            if (!bigger)
                break;
            *text = bigger;
            *cap = grown;
        }
        size_t got = fread(*text + used, 1, *cap - used - 1, f);
        used += got;
        if (got == 0)
            break;
    }
    int failed = ferror(f) || !feof(f);
    int saved = errno;
    fclose(f);
    if (failed) {
        pd_free(*text, *cap);
        return pd_fail(err, PD_ERR_IO, "", "cannot read the scene file: %s", strerror(saved));
    }
    (*text)[used] = '\0';
    *length = used;
    return PD_OK;
}

/* JSON text holds no NUL byte: the parser would stop at the first and ignore what follows. */
static pd_status check_no_nul(const char* text, size_t length, pd_error* err) {
    const char* nul = memchr(text, '\0', length);
    if (!nul)
        return PD_OK;
    int line, column;
    line_column(text, nul, &line, &column);
    if (err)
        err->line = line;
    return pd_fail(err, PD_ERR_BAD_SCENE, "",
                   "a NUL byte at line %d, column %d (byte %zu of %zu): a scene is JSON text, "
                   "which holds none, and the parser would ignore everything after it",
                   line, column, (size_t)(nul - text) + 1, length);
}

pd_status pd_scene_load(const char* path, const char* const* overrides, int override_count,
                        pd_scene* out, pd_error* err) {
    reset_error(err, path);
    memset(out, 0, sizeof *out);
    if (!path || strlen(path) >= PD_PATH_MAX)
        return pd_fail(err, PD_ERR_IO, "", "scene file name missing or too long");
    char dir[PD_PATH_MAX];
    const char* slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    char* text = NULL;
    size_t cap = 0, length = 0;
    PD_JTRY(read_file(path, &text, &cap, &length, err));
    pd_status status = check_no_nul(text, length, err);
    if (status == PD_OK)
        status = pd_scene_parse(text, path, dir, overrides, override_count, out, err);
    pd_free(text, cap);
    return status;
}

void pd_scene_free(pd_scene* s) {
    if (!s)
        return;
    if (s->solver_params && s->solver && s->solver->params)
        pd_free(s->solver_params, s->solver->params->struct_size);
    const pd_solver_vtable* const* all = pd_solver_all();
    for (int k = 0; all[k]; ++k)
        if (s->other_solver_params[k])
            pd_free(s->other_solver_params[k], all[k]->params->struct_size);
    PD_FREE_ARRAY(s->materials, pd_material_def, s->material_count);
    for (int i = 0; s->bodies && i < s->body_count; ++i) {
        pd_body_def* b = &s->bodies[i];
        for (int k = 0; b->pins && k < b->pin_count; ++k)
            PD_FREE_ARRAY(b->pins[k].keyframes, pd_keyframe, b->pins[k].keyframe_count);
        PD_FREE_ARRAY(b->pins, pd_pin_def, b->pin_count);
        PD_FREE_ARRAY(b->material_changes, pd_material_change_def, b->material_change_count);
    }
    PD_FREE_ARRAY(s->bodies, pd_body_def, s->body_count);
    PD_FREE_ARRAY(s->emitters, pd_emitter_def, s->emitter_count);
    for (int i = 0; s->colliders && i < s->collider_count; ++i)
        PD_FREE_ARRAY(s->colliders[i].keyframes, pd_keyframe, s->colliders[i].keyframe_count);
    PD_FREE_ARRAY(s->colliders, pd_collider_def, s->collider_count);
    if (s->resolved_json)
        pd_free(s->resolved_json, strlen(s->resolved_json) + 1);
    memset(s, 0, sizeof *s);
}

/* FNV-1a over text. */
static uint64_t fnv1a(const char* text) {
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char* c = (const unsigned char*)text; *c; ++c)
        h = (h ^ *c) * 1099511628211ull;
    return h;
}

uint64_t pd_scene_fingerprint(const pd_scene* s) {
    cJSON* root = s->resolved_json ? cJSON_Parse(s->resolved_json) : NULL;
    if (!root)
        return 0;
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "time"),
                                            "frames");
    cJSON* output = cJSON_GetObjectItemCaseSensitive(root, "output");
    cJSON_DeleteItemFromObjectCaseSensitive(output, "dir");
    cJSON_DeleteItemFromObjectCaseSensitive(output, "checkpoint_every");
    char* text = cJSON_PrintUnformatted(root);
    uint64_t h = text ? fnv1a(text) : 0;
    cJSON_free(text);
    cJSON_Delete(root);
    return h;
}
