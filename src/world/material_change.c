/* Material changes at given times (material_change.h). A change selects particles by their
 * sampled positions (`rest`, as pins do), so that the same material points change whenever it
 * comes; the world sets their material and their mass (the new density times their volume:
 * velocities are kept) and the method refreshes its own state. */
#include "world/material_change.h"

#include <math.h>
#include <stdio.h>

#include "core/alloc.h"
#include "core/error.h"
#include "geometry/sampling.h"

/* A change at t is due at a step starting at `time` when time >= t, allowing for the rounding
 * of a time summed from steps. */
#define PD_CHANGE_TIME_SLACK 1e-6

static int selects(const pd_material_change_def* c, const pd_particles* p, size_t i, int body) {
    return p->body[i] == body && (!c->has_region || pd_shape_contains(&c->region, p->rest[i]));
}

pd_status pd_world_prepare_material_changes(pd_world* w, pd_error* err) {
    const pd_scene* s = w->scene;
    const pd_particles* p = &w->particles;
    int any = 0;
    for (int b = 0; b < s->body_count; ++b) {
        const pd_body_def* body = &s->bodies[b];
        any |= body->material_change_count > 0;
        for (int k = 0; k < body->material_change_count; ++k) {
            const pd_material_change_def* c = &body->material_changes[k];
            size_t caught = 0;
            for (size_t i = 0; c->has_region && i < p->count && !caught; ++i)
                caught += selects(c, p, i, b);
            if (!c->has_region || caught)
                continue;
            char path[96];
            snprintf(path, sizeof path, "bodies[%d].material_changes[%d].region", b, k);
            return pd_fail(err, PD_ERR_BAD_SCENE, path,
                           "the region contains no sampled particle of body '%s', so the change "
                           "would do nothing",
                           body->name);
        }
    }
    if (!any)
        return PD_OK;
    w->next_change = PD_NEW_ARRAY(int, (size_t)s->body_count);
    return w->next_change ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

/* Applies the changes due at w->time, body b's up to its limit[b] (NULL: all). */
static pd_status apply_changes_upto(pd_world* w, const int* limit, pd_error* err) {
    const pd_scene* s = w->scene;
    pd_particles* p = &w->particles;
    pd_real now = w->time + PD_CHANGE_TIME_SLACK * w->def.dt;
    uint8_t* changed = NULL;
    for (int b = 0; b < s->body_count; ++b) {
        const pd_body_def* body = &s->bodies[b];
        int end = limit ? limit[b] : body->material_change_count;
        for (; w->next_change[b] < end; ++w->next_change[b]) {
            const pd_material_change_def* c = &body->material_changes[w->next_change[b]];
            if (c->t > now)
                break;
            if (!changed) /* infrequent: allocated per change, not from the step's arena */
                changed = PD_NEW_ARRAY(uint8_t, p->count);
            if (!changed)
                return PD_ERR_OUT_OF_MEMORY;
            pd_real density = s->materials[c->material].density;
            for (size_t i = 0; i < p->count; ++i) {
                if (!selects(c, p, i, b))
                    continue;
                p->material[i] = c->material;
                p->mass[i] = density * p->volume[i];
                changed[i] = 1;
            }
        }
    }
    if (!changed)
        return PD_OK;
    pd_status st = w->solver->change_materials(w->solver_state, w, changed, err);
    PD_FREE_ARRAY(changed, uint8_t, p->count);
    if (st != PD_OK && err->message[0] == '\0')
        return pd_fail(err, st, "", "changing materials at t = %g s failed (%s)", (double)w->time,
                       pd_status_string(st));
    return st;
}

pd_status pd_world_apply_material_changes(pd_world* w, pd_error* err) {
    return w->next_change ? apply_changes_upto(w, NULL, err) : PD_OK;
}

/* The earliest time of a change still to replay (INFINITY: none). */
static pd_real next_replay_time(const pd_world* w, const int* upto) {
    pd_real t = INFINITY;
    for (int b = 0; b < w->scene->body_count; ++b)
        if (w->next_change[b] < upto[b])
            t = fmin(t, w->scene->bodies[b].material_changes[w->next_change[b]].t);
    return t;
}

pd_status pd_world_replay_material_changes(pd_world* w, const int* upto, pd_error* err) {
    if (!w->next_change)
        return PD_OK;
    pd_real saved_time = w->time;
    pd_status st = PD_OK;
    for (pd_real t; st == PD_OK && isfinite(t = next_replay_time(w, upto));) {
        w->time = t; /* the changes of time t, as the world's step applies them */
        st = apply_changes_upto(w, upto, err);
    }
    w->time = saved_time;
    return st;
}

void pd_world_particles_of_material(const pd_world* w, int m, uint8_t* out) {
    const pd_scene* s = w->scene;
    const pd_particles* p = &w->particles;
    for (size_t i = 0; i < p->count; ++i)
        out[i] = p->material[i] == m;
    for (int b = 0; b < s->body_count; ++b)
        for (int k = 0; k < s->bodies[b].material_change_count; ++k) {
            const pd_material_change_def* c = &s->bodies[b].material_changes[k];
            for (size_t i = 0; c->material == m && i < p->count; ++i)
                out[i] |= selects(c, p, i, b);
        }
}
