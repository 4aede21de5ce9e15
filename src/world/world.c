/* World life cycle and the order of one step:
 * (reorder) -> material changes due -> (renewal) -> pins -> solver (method) -> colliders ->
 * pin reactions -> stability check -> time += dt -> emitters' layers due.
 * A method that resolves contact and friction inside its step (contact_in_solve) keeps its
 * velocities: the collider pass then only catches particles that still ended inside. */
#include "world/world.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/keyframes.h"
#include "core/timer.h"
#include "neighbor/morton.h"
#include "parallel/parallel.h"
#include "world/bodies.h"
#include "world/material_change.h"
#include "world/particles.h"

/* Particles along a Z-curve, so that neighbours are near in memory (DESIGN.md): at creation by
 * the sampled positions, then every reorder_every steps by the current ones (bodies that flow
 * or tumble drift from their creation order). The solver permutes its own per-particle and
 * per-bond data (on_reorder); frames are written by particle id, so their order never
 * changes. A method with its own order (solver.h's `order`: mpm's grid cells) takes it instead,
 * from its creation on, every reorder_every steps (the method's or PD_REORDER_EVERY).
 * Infrequent: its scratch is allocated here, not per step. */
pd_real pd_world_order_cell(const pd_world* w) {
    const pd_particles* p = &w->particles;
    pd_real cell = p->count ? p->spacing[0] : 1;
    for (size_t i = 1; i < p->count; ++i)
        cell = fmin(cell, p->spacing[i]);
    return cell;
}

pd_status pd_world_permute(pd_world* w, const uint32_t* perm) {
    pd_particles* p = &w->particles;
    size_t n = p->count;
    void* scratch = pd_alloc(n * sizeof(pd_vec3));
    if (!scratch)
        return PD_ERR_OUT_OF_MEMORY;
    pd_particles_permute(p, perm, scratch);
    pd_free(scratch, n * sizeof(pd_vec3));
    for (size_t i = 0; i < n; ++i)
        w->order[p->id[i]] = (uint32_t)i;
    if (w->solver_state && w->solver->on_reorder)
        return w->solver->on_reorder(w->solver_state, w, perm);
    return PD_OK;
}

pd_status pd_world_reorder(pd_world* w, const pd_vec3* key) {
    size_t n = w->particles.count;
    uint32_t* perm = PD_NEW_ARRAY(uint32_t, n);
    pd_status st = perm ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK)
        st = w->solver_state && w->solver->order
                 ? w->solver->order(w->solver_state, w, key, perm)
                 : pd_morton_order(key, n, pd_world_order_cell(w), perm);
    if (st == PD_OK)
        st = pd_world_permute(w, perm);
    PD_FREE_ARRAY(perm, uint32_t, n);
    w->steps_since_reorder = 0;
    return st;
}

/* Speed that no sane scene reaches: 100x the fastest initial or free-fall speed over the
 * run, and at least 100 m/s. */
static pd_real runaway_speed(const pd_world* w) {
    pd_real v0 = 0;
    for (size_t i = 0; i < w->particles.count; ++i)
        v0 = fmax(v0, pd_v3_len(w->particles.vel[i]));
    for (int c = 0; c < w->colliders.count; ++c)
        v0 = fmax(v0, pd_v3_len(w->colliders.items[c].def.velocity));
    for (int k = 0; k < w->scene->emitter_count; ++k)
        v0 = fmax(v0, w->scene->emitters[k].speed);
    pd_real duration = w->def.frames / w->def.fps;
    pd_real fall = pd_v3_len(w->def.gravity) * duration;
    return fmax(100.0, 100.0 * (v0 + fall));
}

/* SCENE.md: a frame is 1/fps s simulated in ceil(1/(fps dt)) equal steps; a count an int
 * cannot hold is refused (for a scene's dt already by scene_validate.c), never clamped. */
static pd_status set_steps_per_frame(pd_world* w, pd_real dt, pd_error* err) {
    double steps = ceil(1.0 / (w->def.fps * dt) - 1e-9);
    if (!(steps >= 1 && steps <= INT_MAX))
        return pd_fail(err, PD_ERR_BAD_SCENE, "time.dt",
                       "a frame needs %.3g steps of time.dt; expected 1 to %d", steps, INT_MAX);
    w->steps_per_frame = (int)steps;
    w->def.dt = 1.0 / (w->def.fps * w->steps_per_frame);
    return PD_OK;
}

/* time.dt "auto" for an explicit method: PD_AUTO_DT_SAFETY of its stability bound now, as a
 * whole number of steps per frame (set_steps_per_frame); the method hears of a change. */
static pd_status follow_stability_bound(pd_world* w, pd_error* err) {
    if (!w->def.dt_auto || !w->solver->max_time_step)
        return PD_OK;
    pd_real bound = w->solver->max_time_step(w->solver_state, w);
    pd_real dt = fmin(PD_AUTO_DT_SAFETY * bound, 1 / w->def.fps);
    double steps = ceil(1.0 / (w->def.fps * dt) - 1e-9);
    /* the same count with the frame's even step (a step shortened within the last frame,
     * shorten_within_frame, is not) */
    if (steps == w->steps_per_frame && w->def.dt == 1.0 / (w->def.fps * w->steps_per_frame))
        return PD_OK;
    pd_status st = pd_world_set_time_step(w, dt, err);
    if (st == PD_OK)
        w->def.dt_auto = 1; /* pd_world_set_time_step does not end "auto" here */
    return st;
}

/* time.dt "auto" within a frame (a method with auto_step_each_step): when the step has grown
 * past PD_AUTO_DT_SAFETY of the bound now, the frame's remaining time, (steps left) dt, is split
 * into the fewest equal steps within it; the frame still ends when it would have. Steps only
 * shorten here; the next frame's start may lengthen them again. */
static pd_status shorten_within_frame(pd_world* w, pd_error* err) {
    if (!w->def.dt_auto || !w->solver->max_time_step || !w->solver->auto_step_each_step)
        return PD_OK;
    pd_real limit = PD_AUTO_DT_SAFETY * w->solver->max_time_step(w->solver_state, w);
    if (!(w->def.dt > limit))
        return PD_OK;
    int left = w->steps_per_frame - w->step_in_frame;
    pd_real rest = left * w->def.dt;
    double steps = ceil(rest / limit - 1e-9);
    if (!(steps >= 1 && steps <= (double)(INT_MAX - w->step_in_frame)))
        return pd_fail(err, PD_ERR_UNSTABLE, "time.dt",
                       "at t = %.6g s the stability bound fell to %.3g s: the rest of the frame "
                       "would need %.3g steps",
                       (double)w->time, (double)limit, steps);
    w->steps_per_frame = w->step_in_frame + (int)steps;
    w->def.dt = rest / steps;
    return w->solver->on_time_step ? w->solver->on_time_step(w->solver_state, w, err) : PD_OK;
}

pd_status pd_create_world(const pd_scene* scene, pd_world** out, pd_error* err) {
    *out = NULL;
    pd_world* w = pd_calloc(1, sizeof *w);
    if (!w)
        return PD_ERR_OUT_OF_MEMORY;
    w->scene = scene;
    w->def = scene->world;
    w->solver = scene->solver;
    w->last_stats.energy = w->last_stats.relative_error = NAN; /* no step yet */
    pd_status st0 = set_steps_per_frame(w, w->def.dt, err);
    if (st0 != PD_OK) {
        pd_free(w, sizeof *w);
        return st0;
    }
    pd_set_threads(w->def.threads);
    pd_status st = pd_world_add_bodies(w, err);
    if (st == PD_OK) /* room for every particle the emitters make, and the layers due at 0 */
        st = pd_world_prepare_emitters(w, err);
    if (st == PD_OK)
        st = pd_world_emit(w, 0, err);
    if (st == PD_OK && w->particles.count == 0)
        st = pd_fail(err, PD_ERR_BAD_SCENE, "bodies", "the scene has no particles");
    if (st == PD_OK)
        st = pd_world_prepare_material_changes(w, err);
    if (st == PD_OK) {
        w->order = PD_NEW_ARRAY(uint32_t, w->particles.capacity);
        st = w->order ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    }
    if (st == PD_OK)
        st = pd_world_reorder(w, w->particles.rest);
    w->reorder_every = PD_REORDER_EVERY;
    if (st == PD_OK)
        st = pd_colliders_create(scene->colliders, scene->collider_count, &w->colliders, err);
    if (st == PD_OK)
        st = pd_world_check_clear_of_colliders(w, err);
    if (st == PD_OK)
        st = pd_world_check_bodies_apart(w, err);
    if (st == PD_OK)
        st = w->solver->create(w, scene->solver_params, &w->solver_state, err);
    /* The step's arrays after the method's set-up, whose peak (its families' build) they would
     * add to: 50 bytes a particle (the set-up peak's test) */
    if (st == PD_OK) {
        w->step_start = PD_NEW_ARRAY(pd_vec3, w->particles.capacity);
        st = w->step_start ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    }
    /* Per-step scratch: velocities before the step, the collider skip and touched masks. */
    size_t scratch = w->particles.capacity * (sizeof(pd_vec3) + 2 * sizeof(uint8_t)) + 4096;
    if (st == PD_OK && pd_arena_init(&w->arena, scratch) != 0)
        st = PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK && w->solver->order) /* the method's own order from the first step on */
        st = pd_world_reorder(w, w->particles.pos);
    if (w->solver->reorder_every > 0)
        w->reorder_every = w->solver->reorder_every;
    if (st == PD_OK)
        st = follow_stability_bound(w, err);
    if (st != PD_OK) {
        pd_destroy_world(w);
        return st;
    }
    w->max_speed = runaway_speed(w);
    *out = w;
    return PD_OK;
}

void pd_destroy_world(pd_world* w) {
    if (!w)
        return;
    if (w->solver_state)
        w->solver->destroy(w->solver_state);
    PD_FREE_ARRAY(w->step_start, pd_vec3, w->particles.capacity);
    PD_FREE_ARRAY(w->order, uint32_t, w->particles.capacity);
    pd_world_free_emitters(w);
    PD_FREE_ARRAY(w->body_renews, uint8_t, w->scene->body_count);
    PD_FREE_ARRAY(w->next_change, int, w->scene->body_count);
    pd_particles_free(&w->particles);
    PD_FREE_ARRAY(w->pins, pd_pin, w->pin_count);
    if (w->colliders.items)
        pd_colliders_destroy(&w->colliders);
    pd_arena_destroy(&w->arena);
    pd_free(w, sizeof *w);
}

/* Lets go the pins whose release time the step starting at t0 has reached: their particles
 * are free from this step on (the method reads the flags every step: releases_pins). */
static void release_pins(pd_world* w, pd_real t0, pd_real dt) {
    pd_particles* p = &w->particles;
    for (int k = 0; k < w->pin_count; ++k) {
        pd_pin* pin = &w->pins[k];
        if (pin->released || !(pin->def.release <= t0 + 1e-6 * dt))
            continue;
        pin->released = 1;
        pin->force = pd_v3(0, 0, 0);
        for (size_t i = 0; i < p->count; ++i)
            if ((p->flags[i] & PD_P_PINNED) && p->pin[i] == k)
                p->flags[i] &= (uint8_t)~PD_P_PINNED;
    }
}

/* Moves pinned particles to their keyframed places at time t; velocity from the motion. */
static void move_pins(pd_world* w, pd_real t, pd_real dt) {
    pd_particles* p = &w->particles;
    for (size_t i = 0; i < p->count; ++i) {
        if (!(p->flags[i] & PD_P_PINNED))
            continue;
        const pd_pin* pin = &w->pins[p->pin[i]];
        pd_vec3 tr;
        pd_mat3 rot;
        pd_keyframes_pose(pin->def.keyframes, pin->def.keyframe_count, t, &tr, &rot);
        pd_vec3 r = pd_m3_mulv(rot, pd_v3_sub(p->rest[i], pin->center));
        pd_vec3 target = pd_v3_add(pd_v3_add(pin->center, r), tr);
        p->vel[i] = pd_v3_scale(pd_v3_sub(target, p->pos[i]), 1.0 / dt);
        p->pos[i] = target;
    }
}

/* Force each pin exerted on its body over the step: m a - f_internal - m g summed over its
 * particles (the solver leaves f_internal in p->force for pinned particles). */
static void measure_pin_forces(pd_world* w, const pd_vec3* vel_before, pd_real dt) {
    pd_particles* p = &w->particles;
    for (int k = 0; k < w->pin_count; ++k)
        w->pins[k].force = pd_v3(0, 0, 0);
    for (size_t i = 0; i < p->count; ++i) {
        if (!(p->flags[i] & PD_P_PINNED))
            continue;
        pd_vec3 ma = pd_v3_scale(pd_v3_sub(p->vel[i], vel_before[i]), p->mass[i] / dt);
        pd_vec3 f = pd_v3_sub(pd_v3_sub(ma, p->force[i]), pd_v3_scale(w->def.gravity, p->mass[i]));
        pd_pin* pin = &w->pins[p->pin[i]];
        pin->force = pd_v3_add(pin->force, f);
    }
}

/* Colliders after the method's step. Most methods leave contact to this pass: positions are
 * projected out and velocities get the normal response and Coulomb friction. A method with
 * contact_in_solve did both inside its step (for an implicit method friction must act on the
 * positions it solves for: applied to velocities afterwards, the positions of a block on an
 * incline kept sliding by h^2 g sin(theta) a step whatever the friction); here only a particle
 * that still ended inside (one that was not near a collider when the step began) is projected,
 * and it gets the velocity it moved with, so that the written velocity is the motion. */
static void resolve_colliders(pd_world* w, pd_real dt) {
    pd_particles* p = &w->particles;
    if (!w->solver->contact_in_solve) {
        pd_colliders_project(&w->colliders, p->count, p->pos, p->vel, w->contact_skip, NULL, dt);
        return;
    }
    uint8_t* touched = PD_ARENA_ARRAY(&w->arena, uint8_t, p->count);
    pd_colliders_project(&w->colliders, p->count, p->pos, NULL, w->contact_skip, touched, dt);
    for (size_t i = 0; i < p->count; ++i)
        if (touched[i])
            p->vel[i] = pd_v3_scale(pd_v3_sub(p->pos[i], w->step_start[i]), 1.0 / dt);
}

/* A non-finite or runaway particle stops the run; the message says when and where. */
static pd_status check_stability(const pd_world* w, pd_error* err) {
    const pd_particles* p = &w->particles;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->pos[i], v = p->vel[i];
        pd_real speed = pd_v3_len(v);
        int finite = isfinite(x.x) && isfinite(x.y) && isfinite(x.z) && isfinite(speed);
        if (finite && speed <= w->max_speed)
            continue;
        const pd_vec3 at = w->step_start[i];
        return pd_fail(err, PD_ERR_UNSTABLE, "",
                       "at t = %.6g s (step %llu) particle %d of body '%s' near (%.4g, %.4g, "
                       "%.4g) %s; try a smaller time.dt or more solver.iterations",
                       (double)(w->time + w->def.dt), (unsigned long long)w->step_index + 1,
                       (int)p->id[i], w->scene->bodies[p->body[i]].name, at.x, at.y, at.z,
                       finite ? "ran away (speed above the runaway limit)"
                              : "got a non-finite position or velocity");
    }
    return PD_OK;
}

static void count_unconverged(pd_world* w, pd_real t) {
    double by = w->last_stats.unconverged_by;
    if (!(by > 0))
        return;
    w->unconverged_steps++;
    if (by > w->worst_unconverged_by)
        w->worst_unconverged_by = by, w->worst_unconverged_time = t;
}

pd_step_context pd_world_step_context(pd_world* w) {
    return (pd_step_context){
        .dt = w->def.dt,
        .inv_dt = 1 / w->def.dt,
        .gravity = w->def.gravity,
        .time = w->time,
        .step_index = w->step_index,
        .count = w->particles.count,
        .particles = &w->particles,
        .step_start = w->step_start,
        .contact_skip = w->contact_skip,
        .colliders = &w->colliders,
        .arena = &w->arena,
        .on_iteration = w->on_iteration,
        .on_iteration_ctx = w->on_iteration_ctx,
    };
}

pd_status pd_world_step(pd_world* w, pd_error* err) {
    pd_particles* p = &w->particles;
    {
        pd_status st =
            w->step_in_frame == 0 ? follow_stability_bound(w, err) : shorten_within_frame(w, err);
        if (st != PD_OK)
            return st;
    }
    pd_real dt = w->def.dt, t1 = w->time + dt;
    if (w->reorder_every > 0 && w->solver->on_reorder &&
        ++w->steps_since_reorder >= w->reorder_every) {
        pd_status st = pd_world_reorder(w, p->pos);
        if (st != PD_OK)
            return pd_fail(err, st, "", "reordering the particles failed (%s)",
                           pd_status_string(st));
    }
    memset(&w->last_stats, 0, sizeof w->last_stats);
    /* a method that does not report them leaves them NaN (stats.csv: empty fields) */
    w->last_stats.energy = w->last_stats.relative_error = NAN;
    if (w->next_change) { /* before the renewal: a particle turned fluid renews this step */
        double t0 = pd_now();
        pd_status st = pd_world_apply_material_changes(w, err);
        if (st != PD_OK)
            return st;
        w->last_stats.t_neighbors += pd_now() - t0;
    }
    if (w->renew_every > 0 && ++w->steps_since_renewal >= w->renew_every) {
        w->steps_since_renewal = 0;
        double t0 = pd_now();
        pd_status st = pd_world_renew_families(w, w->body_renews, err);
        if (st != PD_OK)
            return st;
        w->last_stats.t_neighbors += pd_now() - t0;
    }
    pd_arena_reset(&w->arena);
    memcpy(w->step_start, p->pos, p->count * sizeof(pd_vec3));
    pd_vec3* vel_before = PD_ARENA_ARRAY(&w->arena, pd_vec3, p->count);
    uint8_t* skip = PD_ARENA_ARRAY(&w->arena, uint8_t, p->count);
    memcpy(vel_before, p->vel, p->count * sizeof(pd_vec3));
    release_pins(w, w->time, dt);
    move_pins(w, t1, dt);
    pd_colliders_update(&w->colliders, t1);
    for (size_t i = 0; i < p->count; ++i)
        skip[i] = (p->flags[i] & (PD_P_CONSTRAINED | PD_P_GHOST)) != 0;
    w->contact_skip = skip;
    pd_step_context ctx = pd_world_step_context(w);
    ctx.step_start_vel = vel_before;
    pd_status st = w->solver->step(w->solver_state, w, &ctx, &w->last_stats);
    if (st == PD_OK && w->colliders.count)
        resolve_colliders(w, dt);
    if (st == PD_OK && w->pin_count)
        measure_pin_forces(w, vel_before, dt);
    if (st == PD_OK)
        st = check_stability(w, err);
    /* A NaN the method kept out of the positions (a rejected step) still stops the run. */
    if (st == PD_OK && !isfinite(w->last_stats.residual))
        st = pd_fail(err, PD_ERR_UNSTABLE, "",
                     "at t = %.6g s (step %llu) the solver's residual became non-finite (%g): a "
                     "NaN or overflow inside the method %s",
                     (double)t1, (unsigned long long)w->step_index + 1, w->last_stats.residual,
                     w->solver->name);
    if (st != PD_OK)
        return st;
    count_unconverged(w, t1);
    w->time = t1;
    w->step_index++;
    if (++w->step_in_frame >= w->steps_per_frame)
        w->step_in_frame = 0;
    return w->emitter_count ? pd_world_emit(w, t1, err) : PD_OK;
}

pd_status pd_world_set_time_step(pd_world* w, pd_real dt, pd_error* err) {
    if (!(dt > 0))
        return pd_fail(err, PD_ERR_BAD_SCENE, "time.dt", "a time step must be > 0 (got %g s)", dt);
    pd_status st = set_steps_per_frame(w, dt, err);
    if (st != PD_OK)
        return st;
    w->def.dt_auto = 0; /* the caller chose this step */
    return w->solver->on_time_step ? w->solver->on_time_step(w->solver_state, w, err) : PD_OK;
}

pd_status pd_world_renew_families(pd_world* w, const uint8_t* body_renews, pd_error* err) {
    if (!w->solver->renew_families)
        return pd_fail(err, PD_ERR_UNSUPPORTED, "method", "method %s has no bonds to renew",
                       w->solver->name);
    return w->solver->renew_families(w->solver_state, w, body_renews, err);
}

pd_status pd_world_set_renewal(pd_world* w, const uint8_t* body_renews, int every, pd_error* err) {
    if (every > 0 && !w->solver->renew_families)
        return pd_fail(err, PD_ERR_UNSUPPORTED, "method", "method %s has no bonds to renew",
                       w->solver->name);
    if (!w->body_renews)
        w->body_renews = PD_NEW_ARRAY(uint8_t, w->scene->body_count);
    if (!w->body_renews)
        return PD_ERR_OUT_OF_MEMORY;
    memcpy(w->body_renews, body_renews, (size_t)w->scene->body_count);
    w->renew_every = every > 0 ? every : 0;
    w->steps_since_renewal = 0;
    return PD_OK;
}

pd_status pd_world_break_bonds(pd_world* w, pd_bond_test test, void* ctx, size_t* removed,
                               pd_error* err) {
    *removed = 0;
    if (!w->solver->break_bonds)
        return pd_fail(err, PD_ERR_UNSUPPORTED, "method", "method %s has no bonds to break",
                       w->solver->name);
    return w->solver->break_bonds(w->solver_state, w, test, ctx, removed, err);
}
