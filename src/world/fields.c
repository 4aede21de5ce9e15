/* Output attributes: who publishes which (the world the common ones, the method the rest),
 * their refusal when nobody does, and the frame's fields. */
#include "world/fields.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

/* World-owned attributes: a position's velocity, and the particle's labels. */
static const pd_field_info k_world_fields[] = {
    {PD_ATTR_VELOCITY,
     {"vx", "vy", "vz"},
     3,
     PD_FIELD_REAL,
     "m/s",
     "Velocity the particle moves with at the end of the frame's last step."},
    {PD_ATTR_MATERIAL,
     {"material"},
     1,
     PD_FIELD_INT32,
     "-",
     "Index of the particle's material, in the order of `materials`."},
    {PD_ATTR_BODY,
     {"body"},
     1,
     PD_FIELD_INT32,
     "-",
     "Index of the particle's body, in the order of `bodies`."},
    {PD_ATTR_ID,
     {"id"},
     1,
     PD_FIELD_INT32,
     "-",
     "Stable particle identity (rows are written in id order)."},
};
enum { k_world_field_count = sizeof k_world_fields / sizeof k_world_fields[0] };

const pd_field_info* pd_world_field_table(int* count) {
    *count = k_world_field_count;
    return k_world_fields;
}

const pd_field_info* pd_field_publisher(const pd_solver_vtable* solver, unsigned attribute,
                                        int* from_method, int* method_index) {
    if (from_method)
        *from_method = 0;
    for (int k = 0; k < k_world_field_count; ++k)
        if (k_world_fields[k].attribute == attribute)
            return &k_world_fields[k];
    for (int k = 0; solver && solver->fields && k < solver->field_count; ++k) {
        if (solver->fields[k].attribute != attribute)
            continue;
        if (from_method)
            *from_method = 1;
        if (method_index)
            *method_index = k;
        return &solver->fields[k];
    }
    return NULL;
}

/* Name of attribute bit `bit` in PD_ATTRIBUTE_NAMES. */
static void attribute_name(unsigned attribute, char* out, size_t cap) {
    const char* s = PD_ATTRIBUTE_NAMES;
    for (unsigned bit = 1; *s; bit <<= 1) {
        size_t len = strcspn(s, "|");
        if (bit == attribute) {
            snprintf(out, cap, "%.*s", (int)len, s);
            return;
        }
        s += len + (s[len] == '|');
    }
    snprintf(out, cap, "?");
}

/* "velocity, material, body, id" then the method's. */
static void published_list(const pd_solver_vtable* solver, char* out, size_t cap) {
    char name[32];
    out[0] = '\0';
    for (unsigned bit = 1; bit <= PD_ATTR_ID; bit <<= 1) {
        if (!pd_field_publisher(solver, bit, NULL, NULL))
            continue;
        attribute_name(bit, name, sizeof name);
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s\"%s\"", used ? ", " : "", name);
    }
}

pd_status pd_check_attribute(const pd_solver_vtable* solver, unsigned attribute, const char* path,
                             pd_error* err) {
    if (pd_field_publisher(solver, attribute, NULL, NULL))
        return PD_OK;
    char name[32], list[256];
    attribute_name(attribute, name, sizeof name);
    published_list(solver, list, sizeof list);
    return pd_fail(err, PD_ERR_BAD_SCENE, path,
                   "method %s does not compute \"%s\", so nothing would be written; the "
                   "attributes it can write are %s",
                   solver->name, name, list);
}

static const void* world_field_data(pd_world* w, unsigned attribute) {
    pd_particles* p = &w->particles;
    switch (attribute) {
        case PD_ATTR_VELOCITY:
            return p->vel;
        case PD_ATTR_MATERIAL:
            return p->material;
        case PD_ATTR_BODY:
            return p->body;
        case PD_ATTR_ID:
            return p->id;
        default:
            return NULL;
    }
}

int pd_world_fields(pd_world* w, unsigned attributes, pd_field* out, pd_error* err) {
    int n = 0;
    for (unsigned bit = 1; bit <= PD_ATTR_ID && n < PD_MAX_FIELDS; bit <<= 1) {
        int from_method = 0, k = 0;
        if (!(attributes & bit))
            continue;
        const pd_field_info* f = pd_field_publisher(w->solver, bit, &from_method, &k);
        const void* data = NULL;
        if (f && from_method && w->solver->publish_fields)
            data = w->solver->publish_fields(w->solver_state, k);
        else if (f && !from_method)
            data = world_field_data(w, bit);
        if (!data) {
            char name[32];
            attribute_name(bit, name, sizeof name);
            pd_fail(err, PD_ERR_UNSUPPORTED, "output.attributes",
                    "method %s gave no data for \"%s\"", w->solver->name, name);
            return -1;
        }
        out[n] = (pd_field){{NULL}, f->components, f->type, data};
        for (int c = 0; c < f->components && c < 6; ++c)
            out[n].names[c] = f->names[c];
        n++;
    }
    return n;
}

int pd_world_field_names(unsigned attributes, char names[][32], int max) {
    int n = 0;
    for (unsigned bit = 1; bit <= PD_ATTR_ID && n < max; bit <<= 1)
        if (attributes & bit)
            attribute_name(bit, names[n++], 32);
    return n;
}

pd_frame_stats pd_world_frame_stats(const pd_world* w) {
    const pd_particles* p = &w->particles;
    pd_frame_stats s = {0, p->pos[0], p->pos[0]};
    for (size_t i = 0; i < p->count; ++i) {
        s.lo = pd_v3_min(s.lo, p->pos[i]);
        s.hi = pd_v3_max(s.hi, p->pos[i]);
        if (!(p->flags[i] & PD_P_FIXED))
            s.kinetic_energy += 0.5 * p->mass[i] * pd_v3_len2(p->vel[i]);
    }
    return s;
}
