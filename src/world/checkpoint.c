/* World checkpoints (checkpoint.h). The records follow the world's own layout; a reader goes
 * through them in the order the writer put them, each name and size checked. */
#include "world/checkpoint.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/checkpoint_file.h"
#include "world/material_change.h"
#include "world/particles.h"
#include "world/state_arrays.h"

/* The world's clocks and counters. */
typedef struct ckpt_clock {
    double time;
    uint64_t step_index, unconverged_steps;
    int32_t steps_since_reorder, steps_since_renewal, frame, body_count;
    double worst_unconverged_by, worst_unconverged_time;
} ckpt_clock;

typedef struct ckpt_pin {
    int32_t released;
    pd_vec3 force;
} ckpt_pin;

int pd_world_can_checkpoint(const pd_world* w) {
    return w->solver->persistent != NULL && w->solver->restored != NULL;
}

static size_t state_count(const pd_state_array* a, const pd_state_arrays* s, size_t n) {
    return a->kind == PD_STATE_PER_BOND ? s->family->bond_count : n;
}

/* ---- writing ---- */

static void put_family(pd_ckpt_writer* cw, const pd_family* f) {
    size_t b = f->bond_count;
    uint64_t bonds = b;
    pd_ckpt_put(cw, "family.bonds", &bonds, sizeof bonds);
    pd_ckpt_put(cw, "family.offsets", f->offsets, (f->count + 1) * sizeof(uint32_t));
    pd_ckpt_put(cw, "family.j", f->j, b * sizeof(uint32_t));
    pd_ckpt_put(cw, "family.rev", f->rev, f->rev ? b * sizeof(uint32_t) : 0);
    pd_ckpt_put(cw, "family.xi", f->xi, f->xi ? b * sizeof(pd_vec3) : 0);
    pd_ckpt_put(cw, "family.w", f->w, f->w ? f->count * sizeof(pd_real) : 0);
}

static void put_method(pd_ckpt_writer* cw, const pd_world* w) {
    const pd_state_arrays* s = w->solver->persistent(w->solver_state);
    put_family(cw, s->family);
    char name[96];
    for (int k = 0; k < s->count; ++k) {
        const pd_state_array* a = &s->items[k];
        void* data = pd_state_array_data(a);
        if (a->kind == PD_STATE_BOND_SCRATCH)
            continue;
        snprintf(name, sizeof name, "state.%s", a->name);
        pd_ckpt_put(cw, name, data, data ? state_count(a, s, w->particles.count) * a->size : 0);
    }
    if (w->solver->save)
        w->solver->save(w->solver_state, cw);
}

pd_status pd_world_checkpoint_write(const pd_world* w, int frame, uint64_t scene_print,
                                    const char* path, pd_error* err) {
    if (!pd_world_can_checkpoint(w))
        return pd_fail(err, PD_ERR_UNSUPPORTED, "output.checkpoint_every",
                       "method %s does not write checkpoints", w->solver->name);
    pd_ckpt_writer cw;
    pd_status st = pd_ckpt_create(&cw, path, err);
    if (st != PD_OK)
        return st;
    const pd_particles* p = &w->particles;
    size_t n = p->count;
    uint64_t count = n;
    ckpt_clock clock;
    memset(&clock, 0, sizeof clock); /* the padding too: the same state, the same bytes */
    clock.time = (double)w->time;
    clock.step_index = w->step_index;
    clock.unconverged_steps = w->unconverged_steps;
    clock.steps_since_reorder = w->steps_since_reorder;
    clock.steps_since_renewal = w->steps_since_renewal;
    clock.frame = frame;
    clock.body_count = w->scene->body_count;
    clock.worst_unconverged_by = w->worst_unconverged_by;
    clock.worst_unconverged_time = (double)w->worst_unconverged_time;
    pd_ckpt_put(&cw, "method", w->solver->name, strlen(w->solver->name));
    pd_ckpt_put(&cw, "scene", &scene_print, sizeof scene_print);
    pd_ckpt_put(&cw, "clock", &clock, sizeof clock);
    pd_ckpt_put(&cw, "particles", &count, sizeof count);
    pd_ckpt_put(&cw, "order.id", p->id, n * sizeof(int32_t));
    pd_ckpt_put(&cw, "next_change", w->next_change,
                w->next_change ? (size_t)w->scene->body_count * sizeof(int) : 0);
#define PUT_ARRAY(field, T) pd_ckpt_put(&cw, "particles." #field, p->field, n * sizeof(T));
    PD_PARTICLE_ARRAYS(PUT_ARRAY)
#undef PUT_ARRAY
    for (int k = 0; k < w->pin_count; ++k) {
        ckpt_pin pin;
        memset(&pin, 0, sizeof pin);
        pin.released = w->pins[k].released, pin.force = w->pins[k].force;
        pd_ckpt_put(&cw, "pin", &pin, sizeof pin);
    }
    int32_t renew_every = w->renew_every;
    pd_ckpt_put(&cw, "renew_every", &renew_every, sizeof renew_every);
    pd_ckpt_put(&cw, "body_renews", w->body_renews,
                w->body_renews ? (size_t)w->scene->body_count : 0);
    put_method(&cw, w);
    return pd_ckpt_commit(&cw, err);
}

/* ---- reading ---- */

/* Brings the fresh world into the checkpoint's particle order (new i = the particle with the
 * id saved at i), method state included, as a reordering would. */
static pd_status take_order(pd_world* w, pd_ckpt_reader* r, pd_error* err) {
    size_t n = w->particles.count;
    int32_t* ids = PD_NEW_ARRAY(int32_t, n + 1);
    uint32_t* perm = PD_NEW_ARRAY(uint32_t, n + 1);
    uint8_t* seen = PD_NEW_ARRAY(uint8_t, n + 1);
    pd_status st = ids && perm && seen ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK)
        st = pd_ckpt_get(r, "order.id", ids, n * sizeof(int32_t), err);
    for (size_t i = 0; st == PD_OK && i < n; ++i) {
        if (ids[i] < 0 || (size_t)ids[i] >= n || seen[ids[i]])
            st = pd_fail(err, PD_ERR_BAD_SCENE, "", "%s: the particle ids are not a permutation",
                         r->path);
        else
            seen[ids[i]] = 1, perm[i] = w->order[ids[i]];
    }
    if (st == PD_OK)
        st = pd_world_permute(w, perm);
    PD_FREE_ARRAY(ids, int32_t, n + 1);
    PD_FREE_ARRAY(perm, uint32_t, n + 1);
    PD_FREE_ARRAY(seen, uint8_t, n + 1);
    return st;
}

/* A record of `bytes` or of none (an array the writer did not have). */
static pd_status get_optional(pd_ckpt_reader* r, const char* name, void* data, size_t bytes,
                              pd_error* err) {
    size_t got = 0;
    pd_status st = pd_ckpt_next(r, name, &got, err);
    if (st != PD_OK)
        return st;
    if (got != bytes && !(got == 0 && !data))
        return pd_fail(err, PD_ERR_BAD_SCENE, "",
                       "%s: the record '%s' holds %zu bytes; %zu expected", r->path, name, got,
                       data ? bytes : 0);
    return pd_ckpt_read(r, data, got, err);
}

static pd_status get_family(pd_world* w, pd_ckpt_reader* r, pd_family* f, pd_error* err) {
    uint64_t count = 0;
    pd_status st = pd_ckpt_get(r, "family.bonds", &count, sizeof count, err);
    size_t bonds = (size_t)count;
    if (st == PD_OK && bonds > f->bond_capacity && w->solver->reserve_bonds &&
        w->solver->reserve_bonds(w->solver_state, bonds) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "no memory for the %zu bonds of %s", bonds,
                       r->path);
    if (st == PD_OK && bonds > f->bond_capacity)
        return pd_fail(err, PD_ERR_BAD_SCENE, "",
                       "%s: %zu bonds, where the scene's families hold %zu at most", r->path, bonds,
                       f->bond_capacity);
    if (st == PD_OK)
        st = pd_ckpt_get(r, "family.offsets", f->offsets, (f->count + 1) * sizeof(uint32_t), err);
    if (st == PD_OK && f->offsets[f->count] != bonds)
        return pd_fail(err, PD_ERR_BAD_SCENE, "", "%s: the family's offsets end at %u, not %zu",
                       r->path, f->offsets[f->count], bonds);
    f->bond_count = bonds;
    if (st == PD_OK)
        st = pd_ckpt_get(r, "family.j", f->j, bonds * sizeof(uint32_t), err);
    if (st == PD_OK)
        st = get_optional(r, "family.rev", f->rev, bonds * sizeof(uint32_t), err);
    if (st == PD_OK)
        st = get_optional(r, "family.xi", f->xi, bonds * sizeof(pd_vec3), err);
    if (st == PD_OK)
        st = get_optional(r, "family.w", f->w, f->count * sizeof(pd_real), err);
    pd_family_touch(f);
    return st;
}

static pd_status get_method(pd_world* w, pd_ckpt_reader* r, pd_error* err) {
    pd_state_arrays* s = w->solver->persistent(w->solver_state);
    pd_status st = get_family(w, r, s->family, err);
    char name[96];
    for (int k = 0; st == PD_OK && k < s->count; ++k) {
        const pd_state_array* a = &s->items[k];
        void* data = pd_state_array_data(a);
        if (a->kind == PD_STATE_BOND_SCRATCH)
            continue;
        snprintf(name, sizeof name, "state.%s", a->name);
        st = get_optional(r, name, data, state_count(a, s, w->particles.count) * a->size, err);
    }
    if (st == PD_OK)
        w->bond_count = s->family->bond_count;
    return st == PD_OK ? w->solver->restored(w->solver_state, w, r, err) : st;
}

static pd_status get_header(pd_world* w, pd_ckpt_reader* r, uint64_t scene_print, ckpt_clock* clock,
                            pd_error* err) {
    char method[64] = "";
    size_t len = 0;
    uint64_t print = 0, count = 0;
    pd_status st = pd_ckpt_next(r, "method", &len, err);
    if (st == PD_OK && len >= sizeof method)
        return pd_fail(err, PD_ERR_BAD_SCENE, "", "%s: a method name of %zu bytes", r->path, len);
    if (st == PD_OK)
        st = pd_ckpt_read(r, method, len, err);
    if (st == PD_OK && strcmp(method, w->solver->name) != 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, "", "%s was written by method %s; the scene runs %s",
                       r->path, method, w->solver->name);
    if (st == PD_OK)
        st = pd_ckpt_get(r, "scene", &print, sizeof print, err);
    if (st == PD_OK && print != scene_print)
        return pd_fail(err, PD_ERR_BAD_SCENE, "",
                       "%s was written by another scene (only time.frames, output.dir and "
                       "output.checkpoint_every may change on resuming)",
                       r->path);
    if (st == PD_OK)
        st = pd_ckpt_get(r, "clock", clock, sizeof *clock, err);
    if (st == PD_OK)
        st = pd_ckpt_get(r, "particles", &count, sizeof count, err);
    /* the emitters' layers due by then, made as the run made them (their state is overwritten
     * with the checkpoint's below) */
    if (st == PD_OK && w->emitter_count)
        st = pd_world_emit(w, (pd_real)clock->time, err);
    if (st == PD_OK && count != w->particles.count)
        return pd_fail(err, PD_ERR_BAD_SCENE, "", "%s holds %llu particles; the scene has %zu",
                       r->path, (unsigned long long)count, w->particles.count);
    return st;
}

/* The material changes made so far, made again on the fresh world (material_change.h) before
 * its particles and the method's state are overwritten with the checkpoint's. */
static pd_status get_changes(pd_world* w, pd_ckpt_reader* r, pd_error* err) {
    size_t bodies = (size_t)w->scene->body_count;
    int* upto = PD_NEW_ARRAY(int, bodies + 1);
    pd_status st = upto ? get_optional(r, "next_change", w->next_change ? upto : NULL,
                                       bodies * sizeof(int), err)
                        : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK && w->next_change)
        st = pd_world_replay_material_changes(w, upto, err);
    PD_FREE_ARRAY(upto, int, bodies + 1);
    return st;
}

/* Which bodies renew their families, and how often (a material change may have set them). */
static pd_status get_renewal(pd_world* w, pd_ckpt_reader* r, pd_error* err) {
    int32_t every = 0;
    size_t bodies = (size_t)w->scene->body_count, bytes = 0;
    uint8_t* mask = PD_NEW_ARRAY(uint8_t, bodies + 1);
    pd_status st =
        mask ? pd_ckpt_get(r, "renew_every", &every, sizeof every, err) : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK)
        st = pd_ckpt_next(r, "body_renews", &bytes, err);
    if (st == PD_OK && bytes != 0 && bytes != bodies)
        st = pd_fail(err, PD_ERR_BAD_SCENE, "", "%s: renewal of %zu bodies; the scene has %zu",
                     r->path, bytes, bodies);
    if (st == PD_OK)
        st = pd_ckpt_read(r, mask, bytes, err);
    if (st == PD_OK && bytes &&
        (every != w->renew_every || !w->body_renews || memcmp(mask, w->body_renews, bodies) != 0))
        st = pd_world_set_renewal(w, mask, every, err);
    PD_FREE_ARRAY(mask, uint8_t, bodies + 1);
    return st;
}

static pd_status get_world(pd_world* w, pd_ckpt_reader* r, pd_error* err) {
    pd_particles* p = &w->particles;
    size_t n = p->count;
    pd_status st = take_order(w, r, err);
    if (st == PD_OK)
        st = get_changes(w, r, err);
#define GET_ARRAY(field, T)                                                                        \
    if (st == PD_OK)                                                                               \
        st = pd_ckpt_get(r, "particles." #field, p->field, n * sizeof(T), err);
    PD_PARTICLE_ARRAYS(GET_ARRAY)
#undef GET_ARRAY
    for (int k = 0; st == PD_OK && k < w->pin_count; ++k) {
        ckpt_pin pin;
        st = pd_ckpt_get(r, "pin", &pin, sizeof pin, err);
        w->pins[k].released = pin.released;
        w->pins[k].force = pin.force;
    }
    return st == PD_OK ? get_renewal(w, r, err) : st;
}

pd_status pd_world_checkpoint_read(pd_world* w, uint64_t scene_print, const char* path, int* frame,
                                   pd_error* err) {
    if (!pd_world_can_checkpoint(w))
        return pd_fail(err, PD_ERR_UNSUPPORTED, "", "method %s does not read checkpoints",
                       w->solver->name);
    pd_ckpt_reader r = {0};
    ckpt_clock clock;
    pd_status st = pd_ckpt_open(&r, path, err);
    if (st == PD_OK)
        st = get_header(w, &r, scene_print, &clock, err);
    if (st == PD_OK)
        st = get_world(w, &r, err);
    if (st == PD_OK)
        st = get_method(w, &r, err);
    pd_ckpt_close(&r);
    if (st != PD_OK)
        return st;
    w->time = (pd_real)clock.time;
    w->step_index = clock.step_index;
    w->unconverged_steps = clock.unconverged_steps;
    w->steps_since_reorder = clock.steps_since_reorder;
    w->steps_since_renewal = clock.steps_since_renewal;
    w->worst_unconverged_by = clock.worst_unconverged_by;
    w->worst_unconverged_time = (pd_real)clock.worst_unconverged_time;
    *frame = clock.frame;
    return PD_OK;
}
