/* Typed reading of a cJSON tree for the scene parser: every getter checks presence, type and
 * range, and on failure fills pd_error with the JSON path ("bodies[1].shape.radius") and a
 * sentence saying what was expected and what was found. Also finds the source line of a path,
 * since cJSON keeps no positions. */
#ifndef PD_SCENE_JSON_H
#define PD_SCENE_JSON_H

#include <cjson/cJSON.h>
#include <math.h>

#include "core/error.h"
#include "core/param.h"
#include "peridot/types.h"

#define PD_JPATH_MAX 256

#define PD_JTRY(expr)                                                                              \
    do {                                                                                           \
        pd_status pd_jtry_ = (expr);                                                               \
        if (pd_jtry_ != PD_OK)                                                                     \
            return pd_jtry_;                                                                       \
    } while (0)

/* An interval of allowed values with its unit, for checks and messages. */
typedef struct pd_jrange {
    double lo, hi;
    int lo_open, hi_open; /* 1: the bound itself is excluded */
    const char* unit;
} pd_jrange;

static inline pd_jrange pd_jr(double lo, int lo_open, double hi, int hi_open, const char* unit) {
    pd_jrange r = {lo, hi, lo_open, hi_open, unit};
    return r;
}
static inline pd_jrange pd_jr_any(const char* unit) {
    return pd_jr(-INFINITY, 0, INFINITY, 0, unit);
}
static inline pd_jrange pd_jr_pos(const char* unit) {
    return pd_jr(0, 1, INFINITY, 0, unit);
}
static inline pd_jrange pd_jr_nonneg(const char* unit) {
    return pd_jr(0, 0, INFINITY, 0, unit);
}

/* "parent.key" (or "key" at the top) and "parent[i]". */
void pd_jpath_key(char* out, const char* parent, const char* key);
void pd_jpath_index(char* out, const char* parent, int index);

/* A short description of a JSON value for messages: `the string "abc"`, `an array of 2`. */
const char* pd_json_describe(const cJSON* item, char* buf, size_t cap);

/* Requires `item` to be an object whose keys are all in `allowed` ("a|b|c") or rows of
 * `extra` (may be NULL) outside its blocks, with no key repeated. */
pd_status pd_json_check_object(const cJSON* item, const char* path, const char* allowed,
                               const pd_param_table* extra, pd_error* err);
/* The same for the object given under the BLOCK row `block` of t: its keys are the rows
 * "<block>.<key>"; a value that is no object is refused naming them. */
pd_status pd_json_check_block(const cJSON* item, const char* path, const pd_param_table* t,
                              const char* block, pd_error* err);

/* Member `key` of `obj`; a missing required key is an error, a missing optional key leaves
 * *out untouched. `path` is the path of `obj`. */
pd_status pd_json_real(const cJSON* obj, const char* key, const char* path, int required,
                       pd_jrange range, pd_real* out, pd_error* err);
pd_status pd_json_int(const cJSON* obj, const char* key, const char* path, int required,
                      pd_jrange range, int* out, pd_error* err);
pd_status pd_json_bool(const cJSON* obj, const char* key, const char* path, int required, int* out,
                       pd_error* err);
pd_status pd_json_string(const cJSON* obj, const char* key, const char* path, int required,
                         char* out, size_t cap, pd_error* err);
/* A string that must be one of `choices` ("a|b|c"); *out is its index. */
pd_status pd_json_choice(const cJSON* obj, const char* key, const char* path, int required,
                         const char* choices, int* out, pd_error* err);
/* An array of exactly 3 numbers. */
pd_status pd_json_vec3(const cJSON* obj, const char* key, const char* path, int required,
                       pd_vec3* out, pd_error* err);
/* An array of exactly `n` numbers; `item` is the array itself and `path` its path. */
pd_status pd_json_numbers(const cJSON* item, const char* path, int n, const char* what, double* out,
                          pd_error* err);
/* An array of at most `max` numbers, each inside `range`; *count is its length. */
pd_status pd_json_number_list(const cJSON* obj, const char* key, const char* path, int max,
                              pd_jrange range, pd_real* out, int* count, pd_error* err);
/* Index of `choice` in "a|b|c", or -1. */
int pd_json_choice_index(const char* choices, const char* choice);
/* Writes "`a`, `b`, `c`" style lists into out: the choices of "a|b|c", comma separated. */
void pd_json_choice_list(const char* choices, char* out, size_t cap);

/* One key of a parameter table (a method's `solver` keys or material keys) read from `item`
 * by the type the table declares: number, integer, bool, choice, [3] vector, list of numbers,
 * object of named numbers (terms) or string. Errors name `path` (for a list element,
 * `path[k]`; for a term, `path.<name>`) and what was expected. */
pd_status pd_json_param(const pd_param_info* p, const cJSON* item, void* blob, const char* path,
                        pd_error* err);

/* Every row of t read from `obj` (whose path is `path`) into blob: the rows outside blocks
 * from obj's members, and for each BLOCK row that obj gives, its flag (1) and its rows from
 * that object, which must hold nothing else. Absent keys keep their values in blob (the
 * defaults). obj's own unknown keys are the caller's to refuse (pd_json_check_object with t
 * as `extra`), since an object such as a material mixes t's rows with other keys. */
pd_status pd_json_params(const cJSON* obj, const char* path, const pd_param_table* t, void* blob,
                         pd_error* err);

/* The line (from 1) where `path` appears in the JSON `text`, or of its nearest enclosing
 * path that does; 0 when the text cannot be scanned. */
int pd_json_path_line(const char* text, const char* path);

#endif
