/* What a program reads of a world and how it drives it between steps (peridot/world.h): the
 * particles and published fields where the world keeps them, colliders' poses, colliders and
 * pins moved to a pose; the struct sizes a binding checks its layouts against. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "peridot/io.h"
#include "core/keyframes.h"
#include "world/fields.h"
#include "world/world.h"

pd_particle_view pd_world_particles(const pd_world* w) {
    const pd_particles* p = &w->particles;
    return (pd_particle_view){p->count, p->pos, p->vel, w->order};
}

const char* pd_attribute_names(void) {
    return PD_ATTRIBUTE_NAMES;
}

unsigned pd_attribute_bit(const char* name) {
    const char* s = PD_ATTRIBUTE_NAMES;
    size_t n = name ? strlen(name) : 0;
    for (unsigned bit = 1; *s; bit <<= 1) {
        size_t len = strcspn(s, "|");
        if (n && len == n && !strncmp(s, name, n))
            return bit;
        s += len + (s[len] == '|');
    }
    return 0;
}

pd_status pd_world_field(pd_world* w, const char* name, pd_field_view* out, pd_error* err) {
    memset(out, 0, sizeof *out);
    unsigned bit = pd_attribute_bit(name);
    if (!bit)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "",
                       "no attribute is called \"%s\"; they are %s", name ? name : "(null)",
                       PD_ATTRIBUTE_NAMES);
    if (pd_check_attribute(w->solver, bit, "", err) != PD_OK)
        return PD_ERR_UNSUPPORTED; /* err names what the method publishes */
    pd_field field;
    if (pd_world_fields(w, bit, &field, err) != 1)
        return PD_ERR_UNSUPPORTED;
    const pd_field_info* info = pd_field_publisher(w->solver, bit, NULL, NULL);
    out->components = field.components;
    out->is_integer = field.type == PD_FIELD_INT32;
    out->data = field.data;
    for (int c = 0; c < field.components && c < 6; ++c)
        out->names[c] = field.names[c];
    out->unit = info->unit;
    return PD_OK;
}

pd_collider_info pd_world_collider(const pd_world* w, int k) {
    const pd_collider* col = &w->colliders.items[k];
    pd_collider_info c = {.translate = col->translation,
                          .center = col->center,
                          .velocity = col->lin_vel,
                          .angular_velocity = col->ang_vel};
    pd_real degrees;
    pd_rotation_to_axis_angle(col->rotation, &c.rotate_axis, &degrees);
    c.rotate_degrees = (double)degrees;
    return c;
}

pd_status pd_world_move_collider(pd_world* w, int k, pd_keyframe to, pd_error* err) {
    char path[64];
    snprintf(path, sizeof path, "colliders[%d]", k);
    if (k < 0 || k >= w->colliders.count)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "the scene has %d collider%s",
                       w->colliders.count, w->colliders.count == 1 ? "" : "s");
    return pd_collider_move_to(&w->colliders.items[k], w->time, to, path, err);
}

/* A pin's keys become {its pose now, to} in memory it owns (pd_pin.moved): move_pins
 * (world.c) reads them as it read the scene's. */
pd_status pd_world_move_pin(pd_world* w, int k, pd_keyframe to, pd_error* err) {
    char path[64];
    snprintf(path, sizeof path, "pins[%d]", k);
    if (k < 0 || k >= w->pin_count)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "the scene has %d pin%s", w->pin_count,
                       w->pin_count == 1 ? "" : "s");
    pd_pin* pin = &w->pins[k];
    if (pin->released)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path,
                       "pin %d (bodies[%d].pins[%d]) was released at t = %.9g s: its particles "
                       "are free",
                       k, pin->body, pin->index_in_body, (double)pin->def.release);
    pd_status st = pd_keyframe_check_move(&to, w->time, path, err);
    if (st != PD_OK)
        return st;
    pd_keyframe now = {.t = w->time};
    pd_mat3 rotation;
    pd_keyframes_pose(pin->def.keyframes, pin->def.keyframe_count, w->time, &now.translate,
                      &rotation);
    pd_rotation_to_axis_angle(rotation, &now.rotate_axis, &now.rotate_degrees);
    pin->moved[0] = now;
    pin->moved[1] = to;
    pin->def.keyframes = pin->moved;
    pin->def.keyframe_count = 2;
    return PD_OK;
}

const char* pd_scene_resolved_json(const pd_scene* scene) {
    return scene->resolved_json ? scene->resolved_json : "{}";
}

size_t pd_type_size(const char* name) {
#define PD_TYPE_SIZE_(T)                                                                           \
    if (!strcmp(name, #T))                                                                         \
        return sizeof(T);
    PD_TYPE_SIZE_(pd_error)
    PD_TYPE_SIZE_(pd_scene)
    PD_TYPE_SIZE_(pd_estimate)
    PD_TYPE_SIZE_(pd_keyframe)
    PD_TYPE_SIZE_(pd_world_info)
    PD_TYPE_SIZE_(pd_pin_info)
    PD_TYPE_SIZE_(pd_frame_stats)
    PD_TYPE_SIZE_(pd_particle_view)
    PD_TYPE_SIZE_(pd_field_view)
    PD_TYPE_SIZE_(pd_collider_info)
    PD_TYPE_SIZE_(pd_pvd_entry)
#undef PD_TYPE_SIZE_
    return 0;
}
