/* The resolved scene: the def structs written back as JSON with every default explicit (what
 * was actually run), tagged with the program's version. It parses back to the same scene. */
#include <stdio.h>
#include <stdlib.h>

#include "scene/scene_json.h"
#include "scene/scene_parse.h"
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

/* Shape keys (and "type" when `with_type`) added to obj. */
static void add_shape_keys(cJSON* obj, const pd_shape_def* s, int with_type) {
    if (with_type)
        add_choice(obj, "type", PD_SCENE_SHAPE_TYPES, (int)s->type);
    switch (s->type) {
        case PD_SHAPE_BOX:
            add_vec3(obj, "min", s->min);
            add_vec3(obj, "max", s->max);
            break;
        case PD_SHAPE_SPHERE:
            add_vec3(obj, "center", s->center);
            add_number(obj, "radius", s->radius);
            break;
        case PD_SHAPE_CYLINDER:
            add_vec3(obj, "base", s->base);
            add_vec3(obj, "axis", s->axis);
            add_number(obj, "radius", s->radius);
            add_number(obj, "height", s->height);
            break;
        case PD_SHAPE_MESH:
            cJSON_AddStringToObject(obj, "path", s->path);
            add_number(obj, "scale", s->scale);
            add_vec3(obj, "translate", s->translate);
            add_rotate(obj, s->rotate_axis, s->rotate_degrees);
            break;
    }
}

static void add_keyframes(cJSON* obj, const pd_keyframe* k, int count) {
    cJSON* list = cJSON_AddArrayToObject(obj, "keyframes");
    for (int i = 0; i < count; ++i) {
        cJSON* f = cJSON_CreateObject();
        add_number(f, "t", k[i].t);
        add_vec3(f, "translate", k[i].translate);
        add_rotate(f, k[i].rotate_axis, k[i].rotate_degrees);
        cJSON_AddItemToArray(list, f);
    }
}

/* Values of a parameter table as JSON members of obj. */
static void add_param(cJSON* obj, const pd_param_info* p, const void* blob) {
    const void* value = pd_param_value(p, blob);
    switch (p->type) {
        case PD_PARAM_BOOL:
            cJSON_AddBoolToObject(obj, p->name, *(const int*)value != 0);
            return;
        case PD_PARAM_ENUM:
            add_choice(obj, p->name, p->choices, *(const int*)value);
            return;
        case PD_PARAM_VEC3:
            add_vec3(obj, p->name, *(const pd_vec3*)value);
            return;
        case PD_PARAM_REALS: {
            const pd_param_reals* r = value;
            double v[PD_PARAM_MAX_REALS];
            for (int k = 0; k < r->count; ++k)
                v[k] = r->v[k];
            cJSON_AddItemToObject(obj, p->name, number_array(v, r->count));
            return;
        }
        case PD_PARAM_STRING:
            cJSON_AddStringToObject(obj, p->name, value);
            return;
        default:
            add_number(obj, p->name, pd_param_get_number(p, blob));
    }
}

void pd_scene_add_params(cJSON* obj, const pd_param_table* t, const void* blob) {
    for (int i = 0; t && i < t->count; ++i)
        add_param(obj, &t->params[i], blob);
}

static void add_plasticity(cJSON* obj, const pd_material_def* m) {
    if (m->plasticity == PD_PLASTICITY_NONE)
        return;
    cJSON* p = cJSON_AddObjectToObject(obj, "plasticity");
    add_choice(p, "model", PD_SCENE_PLASTICITY_MODELS, (int)m->plasticity - 1);
    if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER || m->plasticity == PD_PLASTICITY_CAM_CLAY) {
        add_number(p, "friction_angle", m->friction_angle);
        add_number(p, "cohesion", m->cohesion);
    } else {
        add_number(p, "yield_stress", m->yield_stress);
    }
}

static cJSON* material_json(const pd_material_def* m, const pd_param_table* method_params) {
    cJSON* o = cJSON_CreateObject();
    add_number(o, "density", m->density);
    if (m->has_lame) {
        double lame[2] = {m->lame_lambda, m->lame_mu};
        cJSON_AddItemToObject(o, "lame", number_array(lame, 2));
    } else {
        add_number(o, "youngs_modulus", m->youngs_modulus);
        add_number(o, "poisson_ratio", m->poisson_ratio);
    }
    add_plasticity(o, m);
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
    cJSON* o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", b->name);
    cJSON_AddStringToObject(o, "material", s->materials[b->material].name);
    add_number(o, "spacing", b->spacing);
    add_shape_keys(cJSON_AddObjectToObject(o, "shape"), &b->shape, 1);
    add_choice(o, "sampling", PD_SCENE_SAMPLINGS, (int)b->sampling);
    if (b->kind != PD_BODY_FIXED) { /* a fixed body takes no initial motion */
        add_vec3(o, "velocity", b->velocity);
        add_vec3(o, "angular_velocity", b->angular_velocity);
    }
    add_choice(o, "kind", PD_SCENE_KINDS, (int)b->kind);
    cJSON* pins = cJSON_AddArrayToObject(o, "pins");
    for (int k = 0; k < b->pin_count; ++k) {
        cJSON* pin = cJSON_CreateObject();
        add_shape_keys(cJSON_AddObjectToObject(pin, "region"), &b->pins[k].region, 1);
        add_keyframes(pin, b->pins[k].keyframes, b->pins[k].keyframe_count);
        cJSON_AddItemToArray(pins, pin);
    }
    return o;
}

static cJSON* collider_json(const pd_collider_def* c) {
    cJSON* o = cJSON_CreateObject();
    add_choice(o, "type", PD_SCENE_COLLIDER_TYPES, (int)c->type);
    if (c->type == PD_COLLIDER_PLANE) {
        add_vec3(o, "point", c->point);
        add_vec3(o, "normal", c->normal);
    } else {
        add_shape_keys(o, &c->shape, 0);
        cJSON_AddBoolToObject(o, "inside", c->inside != 0);
        if (c->type == PD_COLLIDER_MESH && c->thickness > 0)
            add_number(o, "thickness", c->thickness);
    }
    add_choice(o, "boundary", PD_SCENE_BOUNDARIES, (int)c->boundary);
    /* only the keys that act: friction with slip, a constant motion without keyframes */
    if (c->boundary == PD_BOUNDARY_SLIP)
        add_number(o, "friction", c->friction);
    if (c->keyframe_count == 0) {
        add_vec3(o, "velocity", c->velocity);
        add_vec3(o, "angular_velocity", c->angular_velocity);
    }
    add_keyframes(o, c->keyframes, c->keyframe_count);
    return o;
}

/* An array of the names whose bit is set in `bits`. */
static void add_flags(cJSON* obj, const char* key, const char* choices, unsigned bits) {
    cJSON* list = cJSON_AddArrayToObject(obj, key);
    pd_param_info info = {0};
    info.choices = choices;
    for (int i = 0; i < 32; ++i) {
        char name[64];
        if (!(bits & (1u << i)))
            continue;
        pd_param_choice_name(&info, i, name, sizeof name);
        cJSON_AddItemToArray(list, cJSON_CreateString(name));
    }
}

static void add_world(cJSON* root, const pd_world_def* w) {
    cJSON* time = cJSON_AddObjectToObject(root, "time");
    add_number(time, "dt", w->dt);
    add_number(time, "fps", w->fps);
    add_number(time, "frames", w->frames);
    add_vec3(root, "gravity", w->gravity);
    add_number(root, "seed", (double)w->seed);
}

cJSON* pd_scene_to_json(const pd_scene* s) {
    cJSON* root = cJSON_CreateObject();
    if (!root)
        return NULL;
    add_number(root, "version", s->version);
    cJSON_AddStringToObject(root, "peridot_version", pd_version());
    cJSON_AddStringToObject(root, "method", s->method);
    pd_scene_add_params(cJSON_AddObjectToObject(root, "solver"), s->solver->params,
                        s->solver_params);
    add_world(root, &s->world);
    cJSON* materials = cJSON_AddObjectToObject(root, "materials");
    for (int i = 0; i < s->material_count; ++i)
        cJSON_AddItemToObject(materials, s->materials[i].name,
                              material_json(&s->materials[i], s->solver->material_params));
    cJSON* bodies = cJSON_AddArrayToObject(root, "bodies");
    for (int i = 0; i < s->body_count; ++i)
        cJSON_AddItemToArray(bodies, body_json(s, &s->bodies[i]));
    cJSON* colliders = cJSON_AddArrayToObject(root, "colliders");
    for (int i = 0; i < s->collider_count; ++i)
        cJSON_AddItemToArray(colliders, collider_json(&s->colliders[i]));
    cJSON* out = cJSON_AddObjectToObject(root, "output");
    cJSON_AddStringToObject(out, "dir", s->output.dir);
    add_number(out, "every", s->output.every);
    add_flags(out, "format", PD_SCENE_FORMATS, s->output.formats);
    add_flags(out, "attributes", PD_SCENE_ATTRIBUTES, s->output.attributes);
    return root;
}
