/* Emitters (emitters.h): a layer of particles each time the material in the nozzle has moved one
 * spacing, with the nozzle's velocity and mass density spacing^3, joining its body's tail. */
#include "world/emitters.h"

#include <math.h>

#include "core/alloc.h"
#include "core/error.h"
#include "world/bodies.h"
#include "world/world.h"

/* A layer counts as due within this fraction of a layer's interval: rounding of the summed
 * steps must not move a layer to the next step. */
#define PD_EMIT_TOLERANCE 1e-9
/* More particles than any memory holds: where the count saturates. */
#define PD_EMIT_MAX_PARTICLES 1e15

size_t pd_emitter_disc(const pd_emitter_def* e, pd_vec3* out) {
    pd_vec3 u, v;
    pd_perpendicular_pair(e->direction, &u, &v);
    pd_real h = e->spacing, r = e->radius / h;
    int reach = (int)floor(r);
    size_t n = 0;
    for (int a = -reach; a <= reach; ++a)
        for (int b = -reach; b <= reach; ++b) {
            if ((pd_real)(a * a + b * b) > r * r * (1 + 1e-12))
                continue;
            if (out)
                out[n] = pd_v3_add(pd_v3_scale(u, a * h), pd_v3_scale(v, b * h));
            n++;
        }
    return n;
}

size_t pd_emitter_layers_due(const pd_emitter_def* e, pd_real t) {
    pd_real interval = e->spacing / e->speed; /* s between layers */
    if (t < e->start - PD_EMIT_TOLERANCE * interval)
        return 0;
    double last = floor((t - e->start) / interval + PD_EMIT_TOLERANCE); /* the newest k due */
    if (isfinite(e->stop)) { /* k < (stop - start) / interval */
        double before_stop = ceil((e->stop - e->start) / interval - PD_EMIT_TOLERANCE) - 1;
        last = fmin(last, before_stop);
    }
    last = fmin(last, PD_EMIT_MAX_PARTICLES); /* a count no memory holds: saturated */
    return last < 0 ? 0 : (size_t)last + 1;
}

static size_t max_layers(const pd_scene* s, const pd_emitter_def* e) {
    return pd_emitter_layers_due(e, s->world.frames / s->world.fps);
}

size_t pd_scene_emitted_particles(const pd_scene* s) {
    double n = 0; /* in double: a count no memory holds saturates, for the estimate to refuse */
    for (int k = 0; k < s->emitter_count; ++k)
        n +=
            (double)pd_emitter_disc(&s->emitters[k], NULL) * (double)max_layers(s, &s->emitters[k]);
    return n < PD_EMIT_MAX_PARTICLES ? (size_t)n : (size_t)PD_EMIT_MAX_PARTICLES;
}

pd_status pd_world_prepare_emitters(pd_world* w, pd_error* err) {
    const pd_scene* s = w->scene;
    if (s->emitter_count == 0)
        return PD_OK;
    w->emitters = PD_NEW_ARRAY(pd_emitter_run, (size_t)s->emitter_count);
    if (!w->emitters)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "emitters", "out of memory");
    w->emitter_count = s->emitter_count;
    for (int k = 0; k < s->emitter_count; ++k) {
        pd_emitter_run* run = &w->emitters[k];
        run->disc_count = pd_emitter_disc(&s->emitters[k], NULL);
        run->disc = PD_NEW_ARRAY(pd_vec3, run->disc_count);
        if (!run->disc)
            return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "emitters", "out of memory");
        pd_emitter_disc(&s->emitters[k], run->disc);
        run->max_layers = max_layers(s, &s->emitters[k]);
    }
    size_t total = w->particles.count + pd_scene_emitted_particles(s);
    if (pd_particles_reserve(&w->particles, total) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "emitters",
                       "no memory for the %zu particles the emitters make", total);
    return PD_OK;
}

/* Layer k of emitter `index`, emitted at t_k and moved with the stream until t. */
static void emit_layer(pd_world* w, int index, size_t k, pd_real t) {
    const pd_emitter_def* e = &w->scene->emitters[index];
    const pd_emitter_run* run = &w->emitters[index];
    const pd_material_def* m = &w->scene->materials[e->material];
    pd_particles* p = &w->particles;
    pd_real t_k = e->start + (pd_real)k * e->spacing / e->speed;
    pd_vec3 front = pd_v3_madd(e->center, e->speed * fmax(t - t_k, 0), e->direction);
    pd_vec3 vel = pd_v3_scale(e->direction, e->speed);
    pd_real vol = e->spacing * e->spacing * e->spacing;
    /* the rest position: layer k's place in the stream laid out upstream of the nozzle, k
     * spacings back, so that the layers' rest positions are one spacing apart as they appear */
    pd_vec3 upstream = pd_v3_madd(e->center, -(pd_real)k * e->spacing, e->direction);
    for (size_t d = 0; d < run->disc_count; ++d) {
        size_t i = pd_particles_push(p, pd_v3_add(front, run->disc[d]));
        p->rest[i] = pd_v3_add(upstream, run->disc[d]);
        p->id[i] = (int32_t)i; /* ids stay 0 .. count - 1: the next is the count */
        p->vel[i] = vel;
        p->volume[i] = vol;
        p->mass[i] = m->density * vol;
        p->spacing[i] = e->spacing;
        p->material[i] = e->material;
        p->body[i] = e->body;
        if (w->order)
            w->order[i] = (uint32_t)i;
    }
}

pd_status pd_world_emit(pd_world* w, pd_real t, pd_error* err) {
    size_t first = w->particles.count;
    for (int k = 0; k < w->emitter_count; ++k) {
        pd_emitter_run* run = &w->emitters[k];
        size_t due = pd_emitter_layers_due(&w->scene->emitters[k], t);
        due = due < run->max_layers ? due : run->max_layers; /* within the room reserved */
        for (; run->layers < due; ++run->layers)
            emit_layer(w, k, run->layers, t);
    }
    if (w->particles.count == first || !w->solver_state)
        return PD_OK;
    return w->solver->on_emit(w->solver_state, w, first, err);
}

void pd_world_free_emitters(pd_world* w) {
    for (int k = 0; w->emitters && k < w->emitter_count; ++k)
        PD_FREE_ARRAY(w->emitters[k].disc, pd_vec3, w->emitters[k].disc_count);
    PD_FREE_ARRAY(w->emitters, pd_emitter_run, (size_t)w->emitter_count);
    w->emitters = NULL;
    w->emitter_count = 0;
}
