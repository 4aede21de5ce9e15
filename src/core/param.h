/* Parameter tables: a method declares each of its options once (name, type, default, range,
 * unit, doc) and the table drives JSON parsing (unknown keys rejected), `--set` overrides,
 * defaults, and the generated docs/scene-format.md. Values live in a plain struct at
 * `offset`: pd_real for REAL, int for INT, BOOL, ENUM (the index into `choices`) and BLOCK
 * (1 when the scene gives the block), pd_vec3 for VEC3, pd_param_reals for REALS (a list
 * such as Prony moduli or basis coefficients) and for TERMS (one slot per choice, in the order
 * of `choices`), char[PD_PARAM_STRING_MAX] for STRING. min and max bound every number of a
 * VEC3, REALS or TERMS.
 * The scene format's common keys (time, bodies, colliders, output, ...) are rows of this type
 * too, wrapped with what only they need (open bounds, required, rule text) in
 * scene/scene_tables.h. */
#ifndef PD_PARAM_H
#define PD_PARAM_H

#include <stddef.h>

#include "peridot/types.h"

typedef enum pd_param_type {
    PD_PARAM_REAL,
    PD_PARAM_INT,
    PD_PARAM_BOOL,
    PD_PARAM_ENUM,
    PD_PARAM_VEC3,   /* [x, y, z], e.g. an anisotropy direction */
    PD_PARAM_REALS,  /* [a, b, ...], at most PD_PARAM_MAX_REALS numbers */
    PD_PARAM_STRING, /* free text of at most PD_PARAM_STRING_MAX - 1 characters */
    PD_PARAM_BLOCK,  /* a JSON object grouping the rows named "<block>.<key>" after it; its int
                      * is 1 when the scene gives the block, 0 (the default) otherwise */
    PD_PARAM_TERMS,  /* { "A1": 1.0, "B3": 0.5 }: named numbers, each name one of `choices`
                      * (at most PD_PARAM_MAX_REALS of them); the object replaces every term,
                      * so a term it leaves out is 0, as is every term by default */
} pd_param_type;

#define PD_PARAM_MAX_REALS  16
#define PD_PARAM_STRING_MAX 64

typedef struct pd_param_reals {
    int count;
    pd_real v[PD_PARAM_MAX_REALS];
} pd_param_reals;

typedef struct pd_param_info {
    const char* name;
    pd_param_type type;
    size_t offset;
    double def, min, max; /* ENUM: def is the default index; VEC3: every component's default;
                           * REALS: the list is empty by default; STRING: empty by default;
                           * TERMS: every term 0 */
    const char* unit;     /* "s", "Pa", "1", ... */
    const char* choices;  /* ENUM and TERMS only: "a|b|c" */
    const char* doc;      /* one sentence */
    const char* requires; /* NULL, or "<sibling>=<value>[|<value>...]" (several joined by ','
                           * must all hold): the key acts only when the table's ENUM or BOOL
                           * row <sibling> holds one of the values (a choice name, or
                           * true/false), so a scene that gives it otherwise is refused
                           * (pd_param_requirement) */
} pd_param_info;

typedef struct pd_param_table {
    const pd_param_info* params;
    int count;
    size_t struct_size;
} pd_param_table;

void pd_params_set_defaults(const pd_param_table* t, void* blob);
/* The default of row p alone (a list emptied, every term 0). */
void pd_param_set_default(const pd_param_info* p, void* blob);
const pd_param_info* pd_param_find(const pd_param_table* t, const char* name);

/* Blocks: the rows named "<block>.<key>" are the keys of the JSON object given under the
 * BLOCK row "<block>", so one table describes two levels of JSON and each level accepts only
 * its own keys. */

/* 1 when row p is a key of the object `block` (NULL: of the table's own object, i.e. a name
 * without a '.'); "<block>.<key>" rows are one level deep only. */
int pd_param_in_block(const pd_param_info* p, const char* block);
/* The JSON key of row p inside its object: "hardening" for "granular.hardening". */
const char* pd_param_key(const pd_param_info* p);
/* The row read from JSON key `key` of the object `block` (NULL: the table's own object). */
const pd_param_info* pd_param_find_key(const pd_param_table* t, const char* block, const char* key);
/* NULL when the table's blocks are well formed (a BLOCK row has no '.'; a row with a '.' has
 * exactly one and follows its BLOCK row); else the first row that is not, which no parser
 * would ever read. */
const pd_param_info* pd_param_misplaced_row(const pd_param_table* t);

/* `requires`: 1 when row p has none or its sibling's value in blob is one it names; else 0,
 * with the sentence for the scene in `why` ("semi_rho acts only with iteration
 * \"semi_iterative\" (the scene's iteration is \"accurate\")"). A malformed condition (see
 * pd_param_bad_requirement) counts as unmet. */
int pd_param_requirement(const pd_param_table* t, const pd_param_info* p, const void* blob,
                         char* why, size_t cap);
/* NULL when every row's `requires` names an ENUM or BOOL row of the same table (not itself)
 * and only values it can hold (its choices; true or false); else the first row that does not. */
const pd_param_info* pd_param_bad_requirement(const pd_param_table* t);

/* Sets a numeric value (REAL, INT, BOOL as 0/1), checking type and range; `path` names the
 * JSON path for errors. */
pd_status pd_param_set_number(const pd_param_info* p, void* blob, double value, const char* path,
                              pd_error* err);
/* Sets an ENUM by its choice name. */
pd_status pd_param_set_choice(const pd_param_info* p, void* blob, const char* choice,
                              const char* path, pd_error* err);

/* Sets component k of a VEC3, element k of a REALS (k < PD_PARAM_MAX_REALS; the list grows
 * to k + 1) or term k of a TERMS (the k-th choice), checking the range. */
pd_status pd_param_set_element(const pd_param_info* p, void* blob, int k, double value,
                               const char* path, pd_error* err);
/* Sets a STRING. */
pd_status pd_param_set_string(const pd_param_info* p, void* blob, const char* text,
                              const char* path, pd_error* err);
/* The value at `offset` (for VEC3, REALS, TERMS and STRING readers and writers). */
const void* pd_param_value(const pd_param_info* p, const void* blob);

/* Index of `choice` in a "a|b|c" list, or -1. */
int pd_param_choice_index(const char* choices, const char* choice);
/* The number of terms of a TERMS row (its choices), or -1 when they do not fit
 * PD_PARAM_MAX_REALS: a mistake of the table, which no scene can set. */
int pd_param_term_count(const pd_param_info* p);

double pd_param_get_number(const pd_param_info* p, const void* blob);
/* Writes the name of choice `index` of an ENUM or TERMS row into out. */
void pd_param_choice_name(const pd_param_info* p, int index, char* out, size_t cap);

#endif
