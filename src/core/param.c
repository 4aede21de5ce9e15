#include "core/param.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static void* field(const pd_param_info* p, void* blob) {
    return (char*)blob + p->offset;
}

/* How many numbers row p holds at most: 0 for a type that is no list, and for TERMS whose
 * choices do not fit. */
static int element_cap(const pd_param_info* p) {
    switch (p->type) {
        case PD_PARAM_VEC3:
            return 3;
        case PD_PARAM_REALS:
            return PD_PARAM_MAX_REALS;
        case PD_PARAM_TERMS:
            return pd_param_term_count(p) > 0 ? pd_param_term_count(p) : 0;
        default:
            return 0;
    }
}

void pd_param_set_default(const pd_param_info* p, void* blob) {
    pd_real d = (pd_real)p->def;
    switch (p->type) {
        case PD_PARAM_REAL:
            *(pd_real*)field(p, blob) = d;
            break;
        case PD_PARAM_VEC3:
            *(pd_vec3*)field(p, blob) = pd_v3(d, d, d);
            break;
        case PD_PARAM_REALS: /* empty */
        case PD_PARAM_TERMS: /* every term 0; a row whose terms do not fit holds none */
            memset(field(p, blob), 0, sizeof(pd_param_reals));
            if (p->type == PD_PARAM_TERMS)
                ((pd_param_reals*)field(p, blob))->count = element_cap(p);
            break;
        case PD_PARAM_STRING:
            *(char*)field(p, blob) = '\0';
            break;
        case PD_PARAM_BLOCK: /* 0 until a scene gives the block, whatever def says */
            *(int*)field(p, blob) = 0;
            break;
        default:
            *(int*)field(p, blob) = (int)p->def;
    }
}

void pd_params_set_defaults(const pd_param_table* t, void* blob) {
    memset(blob, 0, t->struct_size); /* padding too, so that equal values compare equal */
    for (int i = 0; i < t->count; ++i)
        pd_param_set_default(&t->params[i], blob);
}

const pd_param_info* pd_param_find(const pd_param_table* t, const char* name) {
    for (int i = 0; t && i < t->count; ++i)
        if (strcmp(t->params[i].name, name) == 0)
            return &t->params[i];
    return NULL;
}

int pd_param_in_block(const pd_param_info* p, const char* block) {
    const char* dot = strchr(p->name, '.');
    if (!block)
        return dot == NULL;
    size_t n = strlen(block);
    return dot && (size_t)(dot - p->name) == n && strncmp(p->name, block, n) == 0 &&
           !strchr(dot + 1, '.');
}

const char* pd_param_key(const pd_param_info* p) {
    const char* dot = strchr(p->name, '.');
    return dot ? dot + 1 : p->name;
}

const pd_param_info* pd_param_find_key(const pd_param_table* t, const char* block,
                                       const char* key) {
    for (int i = 0; t && i < t->count; ++i)
        if (pd_param_in_block(&t->params[i], block) &&
            strcmp(pd_param_key(&t->params[i]), key) == 0)
            return &t->params[i];
    return NULL;
}

/* 1 when a BLOCK row named like the block of "<block>.<key>" row i comes before it. */
static int block_before(const pd_param_table* t, int i) {
    const pd_param_info* p = &t->params[i];
    for (int j = 0; j < i; ++j) {
        const pd_param_info* b = &t->params[j];
        if (b->type == PD_PARAM_BLOCK && pd_param_in_block(p, b->name))
            return 1;
    }
    return 0;
}

const pd_param_info* pd_param_misplaced_row(const pd_param_table* t) {
    for (int i = 0; t && i < t->count; ++i) {
        const pd_param_info* p = &t->params[i];
        int top = pd_param_in_block(p, NULL);
        if ((p->type == PD_PARAM_BLOCK && !top) || (!top && !block_before(t, i)))
            return p;
    }
    return NULL;
}

/* One condition of a `requires` ("iteration=semi_iterative"), split into the sibling row it
 * names (NULL unless an ENUM or BOOL row of t other than p) and its values ("a|b"). */
typedef struct condition {
    const pd_param_info* row;
    char values[128];
} condition;

/* The condition at text (ending at ',' or the string's end); *next gets where the next one
 * starts, or NULL after the last. 0 when it is malformed. */
static int read_condition(const pd_param_table* t, const pd_param_info* p, const char* text,
                          condition* c, const char** next) {
    size_t len = strcspn(text, ",");
    const char* eq = memchr(text, '=', len);
    char name[PD_PARAM_STRING_MAX];
    *next = text[len] == ',' ? text + len + 1 : NULL;
    c->row = NULL;
    if (!eq || (size_t)(eq - text) >= sizeof name || (size_t)(text + len - eq) > sizeof c->values)
        return 0;
    snprintf(name, sizeof name, "%.*s", (int)(eq - text), text);
    snprintf(c->values, sizeof c->values, "%.*s", (int)(text + len - eq - 1), eq + 1);
    const pd_param_info* s = pd_param_find(t, name);
    if (s && s != p && (s->type == PD_PARAM_ENUM || s->type == PD_PARAM_BOOL))
        c->row = s;
    return c->row != NULL;
}

/* 1 when every value of the "a|b" list `values` is one row s can hold (a choice; true, false). */
static int values_valid(const pd_param_info* s, const char* values) {
    for (const char* v = values;; ++v) {
        size_t n = strcspn(v, "|");
        char one[PD_PARAM_STRING_MAX];
        if (n == 0 || n >= sizeof one)
            return 0;
        snprintf(one, sizeof one, "%.*s", (int)n, v);
        int ok = s->type == PD_PARAM_BOOL ? strcmp(one, "true") == 0 || strcmp(one, "false") == 0
                                          : pd_param_choice_index(s->choices, one) >= 0;
        if (!ok)
            return 0;
        v += n;
        if (*v == '\0')
            return 1;
    }
}

/* The name of the value row s holds in blob: a choice, or true/false. */
static void value_name(const pd_param_info* s, const void* blob, char* out, size_t cap) {
    int v = (int)pd_param_get_number(s, blob);
    if (s->type == PD_PARAM_BOOL)
        snprintf(out, cap, "%s", v ? "true" : "false");
    else
        pd_param_choice_name(s, v, out, cap);
}

int pd_param_requirement(const pd_param_table* t, const pd_param_info* p, const void* blob,
                         char* why, size_t cap) {
    for (const char* text = p->requires; text;) {
        condition c;
        if (!read_condition(t, p, text, &c, &text) || !values_valid(c.row, c.values)) {
            snprintf(why, cap, "row %s requires \"%s\", which names no ENUM or BOOL row's value",
                     p->name, p->requires);
            return 0;
        }
        char held[PD_PARAM_STRING_MAX], list[sizeof c.values + 2], probe[sizeof held + 2];
        value_name(c.row, blob, held, sizeof held);
        snprintf(list, sizeof list, "|%s|", c.values);
        snprintf(probe, sizeof probe, "|%s|", held);
        if (!strstr(list, probe)) {
            snprintf(why, cap, "%s acts only with %s \"%s\" (the scene's %s is \"%s\")",
                     pd_param_key(p), pd_param_key(c.row), c.values, pd_param_key(c.row), held);
            return 0;
        }
    }
    return 1;
}

const pd_param_info* pd_param_bad_requirement(const pd_param_table* t) {
    for (int i = 0; t && i < t->count; ++i) {
        const pd_param_info* p = &t->params[i];
        for (const char* text = p->requires; text;) {
            condition c;
            if (!read_condition(t, p, text, &c, &text) || !values_valid(c.row, c.values))
                return p;
        }
    }
    return NULL;
}

pd_status pd_param_set_number(const pd_param_info* p, void* blob, double value, const char* path,
                              pd_error* err) {
    if (!isfinite(value))
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a finite number");
    switch (p->type) {
        case PD_PARAM_ENUM:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected one of %s", p->choices);
        case PD_PARAM_BOOL:
            if (value != 0 && value != 1)
                return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected true or false");
            *(int*)field(p, blob) = (int)value;
            return PD_OK;
        case PD_PARAM_INT:
            if (value != floor(value))
                return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected an integer, got %g", value);
            break;
        case PD_PARAM_REAL:
            break;
        case PD_PARAM_VEC3:
        case PD_PARAM_REALS:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a list of numbers (%s)", p->unit);
        case PD_PARAM_TERMS:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected an object of named numbers (%s)",
                           p->unit);
        case PD_PARAM_STRING:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a string");
        case PD_PARAM_BLOCK:
            return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected an object");
    }
    if (value < p->min || value > p->max)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a value in [%g, %g] (%s), got %g",
                       p->min, p->max, p->unit, value);
    if (p->type == PD_PARAM_INT)
        *(int*)field(p, blob) = (int)value;
    else
        *(pd_real*)field(p, blob) = (pd_real)value;
    return PD_OK;
}

pd_status pd_param_set_element(const pd_param_info* p, void* blob, int k, double value,
                               const char* path, pd_error* err) {
    int cap = element_cap(p);
    if (k < 0 || k >= cap)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected at most %d numbers", cap);
    if (!isfinite(value) || value < p->min || value > p->max)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a value in [%g, %g] (%s), got %g",
                       p->min, p->max, p->unit, value);
    if (p->type == PD_PARAM_VEC3) {
        pd_real* v = (pd_real*)field(p, blob);
        v[k] = (pd_real)value; /* pd_vec3 is three consecutive pd_real */
        return PD_OK;
    }
    pd_param_reals* r = field(p, blob);
    r->v[k] = (pd_real)value;
    r->count = k + 1 > r->count ? k + 1 : r->count;
    return PD_OK;
}

pd_status pd_param_set_string(const pd_param_info* p, void* blob, const char* text,
                              const char* path, pd_error* err) {
    if (p->type != PD_PARAM_STRING)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a number (%s), got \"%s\"", p->unit,
                       text);
    if (strlen(text) >= PD_PARAM_STRING_MAX)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected at most %d characters",
                       PD_PARAM_STRING_MAX - 1);
    strcpy(field(p, blob), text);
    return PD_OK;
}

const void* pd_param_value(const pd_param_info* p, const void* blob) {
    return (const char*)blob + p->offset;
}

int pd_param_choice_index(const char* choices, const char* choice) {
    size_t n = strlen(choice);
    int index = 0;
    for (const char* s = choices; *s; ++index) {
        size_t len = strcspn(s, "|");
        if (len == n && strncmp(s, choice, n) == 0)
            return index;
        s += len;
        if (*s == '|')
            ++s;
    }
    return -1;
}

/* The number of names in a "a|b|c" list (0 for NULL or ""). */
static int choice_count(const char* choices) {
    int n = 0;
    for (const char* s = choices; s && *s; ++n) {
        s += strcspn(s, "|");
        if (*s == '|')
            ++s;
    }
    return n;
}

int pd_param_term_count(const pd_param_info* p) {
    int n = choice_count(p->choices);
    return n <= PD_PARAM_MAX_REALS ? n : -1;
}

pd_status pd_param_set_choice(const pd_param_info* p, void* blob, const char* choice,
                              const char* path, pd_error* err) {
    if (p->type != PD_PARAM_ENUM)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected a number (%s), got \"%s\"", p->unit,
                       choice);
    int index = pd_param_choice_index(p->choices, choice);
    if (index < 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, path, "expected one of %s, got \"%s\"", p->choices,
                       choice);
    *(int*)field(p, blob) = index;
    return PD_OK;
}

double pd_param_get_number(const pd_param_info* p, const void* blob) {
    const char* f = (const char*)blob + p->offset;
    return p->type == PD_PARAM_REAL ? (double)*(const pd_real*)f : (double)*(const int*)f;
}

void pd_param_choice_name(const pd_param_info* p, int index, char* out, size_t cap) {
    const char* s = p->choices ? p->choices : "";
    for (int i = 0; i < index && *s; ++i) {
        s += strcspn(s, "|");
        if (*s == '|')
            ++s;
    }
    size_t len = strcspn(s, "|");
    snprintf(out, cap, "%.*s", (int)len, s);
}
