/* The resolved scene: the def structs written back as JSON with every default explicit (what
 * was actually run), tagged with the program's version. It parses back to the same scene. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "scene/scene_json.h"
#include "scene/scene_parse.h"
#include "scene/scene_tables.h"
#include "peridot/peridot.h"
#include "solvers/solver.h"

/* A number in the shortest %g form that reads back to exactly the same double (cJSON's own
 * printer accepts 15 digits that are off by an ulp). */
static cJSON* exact_number(double v) {
    char buf[40];
    for (int digits = 15; digits <= 17; ++digits) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return cJSON_CreateRaw(buf);
}

static void add_number(cJSON* obj, const char* key, double v) {
    cJSON_AddItemToObject(obj, key, exact_number(v));
}

static cJSON* number_array(const double* v, int n) {
    cJSON* a = cJSON_CreateArray();
    for (int i = 0; i < n; ++i)
        cJSON_AddItemToArray(a, exact_number(v[i]));
    return a;
}

static void add_vec3(cJSON* obj, const char* key, pd_vec3 v) {
    double a[3] = {v.x, v.y, v.z};
    cJSON_AddItemToObject(obj, key, number_array(a, 3));
}

static void add_rotate(cJSON* obj, pd_vec3 axis, pd_real degrees) {
    double a[4] = {axis.x, axis.y, axis.z, degrees};
    cJSON_AddItemToObject(obj, "rotate", number_array(a, 4));
}

/* The choice at `index` of "a|b|c". */
static void add_choice(cJSON* obj, const char* key, const char* choices, int index) {
    pd_param_info info = {0};
    char name[64];
    info.choices = choices;
    pd_param_choice_name(&info, index, name, sizeof name);
    cJSON_AddStringToObject(obj, key, name);
}

/* The non-zero terms of TERMS row p by name, as member `key` of obj: a term left out reads
 * back as 0, so the object is as short as the scene could have written it. */
static void add_terms(cJSON* obj, const char* key, const pd_param_info* p,
                      const pd_param_reals* r) {
    cJSON* terms = cJSON_AddObjectToObject(obj, key);
    for (int k = 0; k < r->count; ++k) {
        char name[64];
        if (r->v[k] == 0)
            continue;
        pd_param_choice_name(p, k, name, sizeof name);
        add_number(terms, name, r->v[k]);
    }
}

/* The value of row p as member `key` of obj. */
static void add_param(cJSON* obj, const char* key, const pd_param_info* p, const void* blob) {
    const void* value = pd_param_value(p, blob);
    switch (p->type) {
        case PD_PARAM_BOOL:
            cJSON_AddBoolToObject(obj, key, *(const int*)value != 0);
            return;
        case PD_PARAM_ENUM:
            add_choice(obj, key, p->choices, *(const int*)value);
            return;
        case PD_PARAM_VEC3:
            add_vec3(obj, key, *(const pd_vec3*)value);
            return;
        case PD_PARAM_REALS: {
            const pd_param_reals* r = value;
            double v[PD_PARAM_MAX_REALS];
            for (int k = 0; k < r->count; ++k)
                v[k] = r->v[k];
            cJSON_AddItemToObject(obj, key, number_array(v, r->count));
            return;
        }
        case PD_PARAM_TERMS:
            add_terms(obj, key, p, value);
            return;
        case PD_PARAM_STRING:
            cJSON_AddStringToObject(obj, key, value);
            return;
        default:
            add_number(obj, key, pd_param_get_number(p, blob));
    }
}

/* The rows of object `block` (NULL: the table's own) as members of obj. A block is written
 * only when the scene gave it: its flag is its presence, so writing an absent one would read
 * back as given. A row whose `requires` fails is left out: it does nothing, and given it would
 * be refused. */
static void add_rows(cJSON* obj, const pd_param_table* t, const char* block, const void* blob) {
    for (int i = 0; i < t->count; ++i) {
        const pd_param_info* p = &t->params[i];
        char why[320];
        if (!pd_param_in_block(p, block) || !pd_param_requirement(t, p, blob, why, sizeof why))
            continue;
        if (p->type != PD_PARAM_BLOCK)
            add_param(obj, pd_param_key(p), p, blob);
        else if (*(const int*)pd_param_value(p, blob))
            add_rows(cJSON_AddObjectToObject(obj, p->name), t, p->name, blob);
    }
}

void pd_scene_add_params(cJSON* obj, const pd_param_table* t, const void* blob) {
    if (t)
        add_rows(obj, t, NULL, blob);
}

void pd_scene_write_key(cJSON* obj, const pd_scene_table* t, const char* name, const void* blob) {
    const pd_scene_key* k = pd_scene_key_find(t, name);
    /* what pd_scene_read_key reads: lists are written by hand; terms and blocks are no field
     * of the common tables */
    if (k && k->p.type != PD_PARAM_REALS && k->p.type != PD_PARAM_TERMS &&
        k->p.type != PD_PARAM_BLOCK)
        add_param(obj, k->p.name, &k->p, blob);
}

/* Keys of table t, in the order given, with their values in blob. */
static void write_keys(cJSON* obj, const pd_scene_table* t, const char* const* names, int n,
                       const void* blob) {
    for (int i = 0; i < n; ++i)
        pd_scene_write_key(obj, t, names[i], blob);
}

#define WRITE_KEYS(obj, t, blob, ...)                                                              \
    do {                                                                                           \
        static const char* const names_[] = {__VA_ARGS__};                                         \
        write_keys(obj, t, names_, (int)(sizeof names_ / sizeof names_[0]), blob);                 \
    } while (0)

/* Shape keys (and "type" when `with_type`) added to obj. */
static void add_shape_keys(cJSON* obj, const pd_shape_def* s, int with_type) {
    const pd_scene_table* t = &pd_scene_shape_table;
    if (with_type)
        pd_scene_write_key(obj, t, "type", s);
    switch (s->type) {
        case PD_SHAPE_BOX:
            WRITE_KEYS(obj, t, s, "min", "max");
            break;
        case PD_SHAPE_SPHERE:
            WRITE_KEYS(obj, t, s, "center", "radius");
            break;
        case PD_SHAPE_CYLINDER:
            WRITE_KEYS(obj, t, s, "base", "axis", "radius", "height");
            break;
        case PD_SHAPE_MESH:
            WRITE_KEYS(obj, t, s, "path", "scale", "translate");
            add_rotate(obj, s->rotate_axis, s->rotate_degrees);
            break;
    }
}

static void add_keyframes(cJSON* obj, const pd_keyframe* k, int count) {
    cJSON* list = cJSON_AddArrayToObject(obj, "keyframes");
    for (int i = 0; i < count; ++i) {
        cJSON* f = cJSON_CreateObject();
        WRITE_KEYS(f, &pd_scene_keyframe_table, &k[i], "t", "translate");
        add_rotate(f, k[i].rotate_axis, k[i].rotate_degrees);
        cJSON_AddItemToArray(list, f);
    }
}

static void add_plasticity(cJSON* obj, const pd_material_def* m, const pd_material_support* sup) {
    if (m->plasticity == PD_PLASTICITY_NONE)
        return;
    cJSON* p = cJSON_AddObjectToObject(obj, "plasticity");
    const pd_scene_table* t = &pd_scene_plasticity_table;
    add_choice(p, "model", pd_scene_key_find(t, "model")->p.choices, (int)m->plasticity - 1);
    if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER) {
        WRITE_KEYS(p, t, m, "friction_angle", "cohesion", "cone");
        /* what the running method does (a key left out: its own default) */
        cJSON_AddBoolToObject(p, "volume_correction", pd_material_volume_correction(m, sup));
        if (m->rate_dependence) {
            const pd_scene_table* r = &pd_scene_rate_table;
            cJSON* q = cJSON_AddObjectToObject(p, "rate_dependence");
            add_choice(q, "model", pd_scene_key_find(r, "model")->p.choices,
                       m->rate_dependence - 1);
            if (m->mui_mu_2 > 0)
                pd_scene_write_key(q, r, "mu_2", m);
            WRITE_KEYS(q, r, m, "I_0", "grain_diameter", "solid_fraction");
        }
    } else if (m->plasticity == PD_PLASTICITY_CAM_CLAY)
        WRITE_KEYS(p, t, m, "friction_angle", "cohesion", "tension_ratio", "hardening",
                   "log_plastic_volume");
    else if (m->plasticity == PD_PLASTICITY_HERSCHEL_BULKLEY)
        WRITE_KEYS(p, t, m, "yield_stress", "viscosity", "exponent");
    else
        pd_scene_write_key(p, t, "yield_stress", m);
}

static cJSON* material_json(const pd_material_def* m, const pd_solver_vtable* method) {
    const pd_param_table* method_params = method->material_params;
    cJSON* o = cJSON_CreateObject();
    pd_scene_write_key(o, &pd_scene_material_table, "density", m);
    if (m->has_lame) {
        double lame[2] = {m->lame_lambda, m->lame_mu};
        cJSON_AddItemToObject(o, "lame", number_array(lame, 2));
    } else {
        WRITE_KEYS(o, &pd_scene_material_table, m, "youngs_modulus", "poisson_ratio");
    }
    add_plasticity(o, m, method->materials);
    if (m->viscoelasticity == PD_VISCO_HENCKY_MAXWELL) {
        cJSON* v = cJSON_AddObjectToObject(o, "viscoelasticity");
        cJSON_AddStringToObject(v, "model", "hencky_maxwell");
        if (m->maxwell_by_lambda) /* as the scene gave it */
            WRITE_KEYS(v, &pd_scene_visco_table, m, "shear_modulus", "lambda",
                       "deviatoric_viscosity", "volumetric_viscosity");
        else
            WRITE_KEYS(v, &pd_scene_visco_table, m, "shear_modulus", "bulk_modulus",
                       "deviatoric_viscosity", "volumetric_viscosity");
    }
    if (m->prony_count > 0) {
        double moduli[PD_MAX_PRONY], times[PD_MAX_PRONY];
        for (int k = 0; k < m->prony_count; ++k) {
            moduli[k] = m->prony_moduli[k];
            times[k] = m->prony_times[k];
        }
        cJSON* v = cJSON_AddObjectToObject(o, "viscoelasticity");
        cJSON_AddStringToObject(v, "model", "prony");
        cJSON_AddItemToObject(v, "moduli", number_array(moduli, m->prony_count));
        cJSON_AddItemToObject(v, "times", number_array(times, m->prony_count));
    }
    pd_scene_add_params(o, method_params, m->method_params);
    return o;
}

static cJSON* body_json(const pd_scene* s, const pd_body_def* b) {
    const pd_scene_table* t = &pd_scene_body_table;
    cJSON* o = cJSON_CreateObject();
    pd_scene_write_key(o, t, "name", b);
    cJSON_AddStringToObject(o, "material", s->materials[b->material].name);
    pd_scene_write_key(o, t, "spacing", b);
    add_shape_keys(cJSON_AddObjectToObject(o, "shape"), &b->shape, 1);
    pd_scene_write_key(o, t, "sampling", b);
    if (b->kind != PD_BODY_FIXED) /* a fixed body takes no initial motion */
        WRITE_KEYS(o, t, b, "velocity", "angular_velocity");
    pd_scene_write_key(o, t, "kind", b);
    cJSON* pins = cJSON_AddArrayToObject(o, "pins");
    for (int k = 0; k < b->pin_count; ++k) {
        cJSON* pin = cJSON_CreateObject();
        add_shape_keys(cJSON_AddObjectToObject(pin, "region"), &b->pins[k].region, 1);
        add_keyframes(pin, b->pins[k].keyframes, b->pins[k].keyframe_count);
        if (isfinite(b->pins[k].release))
            pd_scene_write_key(pin, &pd_scene_pin_table, "release", &b->pins[k]);
        cJSON_AddItemToArray(pins, pin);
    }
    cJSON* changes = cJSON_AddArrayToObject(o, "material_changes");
    for (int k = 0; k < b->material_change_count; ++k) {
        const pd_material_change_def* m = &b->material_changes[k];
        cJSON* c = cJSON_CreateObject();
        pd_scene_write_key(c, &pd_scene_material_change_table, "t", m);
        cJSON_AddStringToObject(c, "material", s->materials[m->material].name);
        if (m->has_region)
            add_shape_keys(cJSON_AddObjectToObject(c, "region"), &m->region, 1);
        cJSON_AddItemToArray(changes, c);
    }
    return o;
}

static cJSON* collider_json(const pd_collider_def* c) {
    const pd_scene_table* t = &pd_scene_collider_table;
    cJSON* o = cJSON_CreateObject();
    pd_scene_write_key(o, t, "type", c);
    if (c->type == PD_COLLIDER_PLANE) {
        WRITE_KEYS(o, t, c, "point", "normal");
    } else {
        add_shape_keys(o, &c->shape, 0);
        pd_scene_write_key(o, t, "inside", c);
        if (c->type == PD_COLLIDER_MESH && c->thickness > 0)
            pd_scene_write_key(o, t, "thickness", c);
    }
    pd_scene_write_key(o, t, "boundary", c);
    /* only the keys that act: friction with slip, a constant motion without keyframes */
    if (c->boundary == PD_BOUNDARY_SLIP)
        pd_scene_write_key(o, t, "friction", c);
    if (c->keyframe_count == 0)
        WRITE_KEYS(o, t, c, "velocity", "angular_velocity");
    add_keyframes(o, c->keyframes, c->keyframe_count);
    return o;
}

/* An array of the names (the row's choices) whose bit is set in `bits`. */
static cJSON* emitter_json(const pd_scene* s, const pd_emitter_def* e) {
    const pd_scene_table* t = &pd_scene_emitter_table;
    cJSON* o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "body", s->bodies[e->body].name);
    cJSON_AddStringToObject(o, "material", s->materials[e->material].name);
    WRITE_KEYS(o, t, e, "center", "direction", "radius", "speed", "start");
    if (isfinite(e->stop)) /* the default (until the run ends) has no number */
        pd_scene_write_key(o, t, "stop", e);
    pd_scene_write_key(o, t, "spacing", e);
    return o;
}

static void add_flags(cJSON* obj, const pd_scene_table* t, const char* key, unsigned bits) {
    cJSON* list = cJSON_AddArrayToObject(obj, key);
    const pd_param_info* info = &pd_scene_key_find(t, key)->p;
    for (int i = 0; i < 32; ++i) {
        char name[64];
        if (!(bits & (1u << i)))
            continue;
        pd_param_choice_name(info, i, name, sizeof name);
        cJSON_AddItemToArray(list, cJSON_CreateString(name));
    }
}

/* time.dt as given: a number, "auto", or an object of them keyed by method. */
static void add_time_step(cJSON* time, const pd_scene* s) {
    if (!s->dt_per_method) {
        if (s->world.dt_auto)
            cJSON_AddStringToObject(time, "dt", "auto");
        else
            add_number(time, "dt", s->world.dt);
    } else {
        cJSON* dt = cJSON_AddObjectToObject(time, "dt");
        const pd_solver_vtable* const* all = pd_solver_all();
        for (int k = 0; all[k]; ++k) {
            if (s->method_dt[k] > 0)
                add_number(dt, all[k]->name, s->method_dt[k]);
            else if (s->method_dt[k] == 0)
                cJSON_AddStringToObject(dt, all[k]->name, "auto");
        }
    }
    if (s->world.dt_auto && !s->solver->max_time_step) { /* as the world rounds it */
        double steps = ceil(1.0 / (s->world.fps * s->world.dt) - 1e-9);
        add_number(time, "dt_chosen", 1.0 / (s->world.fps * steps));
    }
}

static void add_world(cJSON* root, const pd_scene* s) {
    const pd_world_def* w = &s->world;
    pd_scene_top top = {w->gravity, (int)w->seed};
    cJSON* time = cJSON_AddObjectToObject(root, "time");
    add_time_step(time, s);
    WRITE_KEYS(time, &pd_scene_time_table, w, "fps", "frames");
    WRITE_KEYS(root, &pd_scene_top_table, &top, "gravity", "seed");
}

/* The running method's options and every other block the scene gave, keyed by method. */
static void add_solver_blocks(cJSON* solver, const pd_scene* s) {
    const pd_solver_vtable* const* all = pd_solver_all();
    for (int k = 0; all[k]; ++k) {
        void* params = all[k] == s->solver ? s->solver_params : s->other_solver_params[k];
        if (all[k] == s->solver || params)
            pd_scene_add_params(cJSON_AddObjectToObject(solver, all[k]->name), all[k]->params,
                                params);
    }
}

cJSON* pd_scene_to_json(const pd_scene* s) {
    cJSON* root = cJSON_CreateObject();
    if (!root)
        return NULL;
    add_number(root, "version", s->version);
    cJSON_AddStringToObject(root, "peridot_version", pd_version());
    cJSON_AddStringToObject(root, "method", s->method);
    add_solver_blocks(cJSON_AddObjectToObject(root, "solver"), s);
    add_world(root, s);
    cJSON* materials = cJSON_AddObjectToObject(root, "materials");
    for (int i = 0; i < s->material_count; ++i)
        cJSON_AddItemToObject(materials, s->materials[i].name,
                              material_json(&s->materials[i], s->solver));
    cJSON* bodies = cJSON_AddArrayToObject(root, "bodies");
    for (int i = 0; i < s->body_count; ++i)
        cJSON_AddItemToArray(bodies, body_json(s, &s->bodies[i]));
    cJSON* colliders = cJSON_AddArrayToObject(root, "colliders");
    for (int i = 0; i < s->collider_count; ++i)
        cJSON_AddItemToArray(colliders, collider_json(&s->colliders[i]));
    if (s->emitter_count) { /* absent from the scenes without: their resolved form is unchanged */
        cJSON* emitters = cJSON_AddArrayToObject(root, "emitters");
        for (int i = 0; i < s->emitter_count; ++i)
            cJSON_AddItemToArray(emitters, emitter_json(s, &s->emitters[i]));
    }
    cJSON* out = cJSON_AddObjectToObject(root, "output");
    WRITE_KEYS(out, &pd_scene_output_table, &s->output, "dir", "every", "checkpoint_every");
    add_flags(out, &pd_scene_output_table, "format", s->output.formats);
    add_flags(out, &pd_scene_output_table, "attributes", s->output.attributes);
    return root;
}
