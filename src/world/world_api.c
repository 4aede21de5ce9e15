/* The world as the public API shows it (peridot/world.h): a copy of its clock and counters, the
 * pins' forces, frames written in id order. */
#include <string.h>

#include "core/error.h"
#include "core/keyframes.h"
#include "core/param.h"
#include "core/timer.h"
#include "io/output.h"
#include "neighbor/family.h"
#include "neighbor/hash_grid.h"
#include "world/fields.h"
#include "world/world.h"

pd_world_info pd_world_get_info(const pd_world* w) {
    const pd_step_stats* st = &w->last_stats;
    return (pd_world_info){
        .particles = w->particles.count,
        .bonds = w->bond_count,
        .pins = w->pin_count,
        .time = (double)w->time,
        .dt = (double)w->def.dt,
        .steps = w->step_index,
        .steps_per_frame = w->steps_per_frame,
        .step_in_frame = w->step_in_frame,
        .unconverged_steps = w->unconverged_steps,
        .worst_unconverged_by = w->worst_unconverged_by,
        .worst_unconverged_time = (double)w->worst_unconverged_time,
        .iterations = st->iterations,
        .residual = st->residual,
        .energy = st->energy,
        .relative_error = st->relative_error,
        .colliders = w->colliders.count,
    };
}

pd_pin_info pd_world_pin(const pd_world* w, int k) {
    const pd_pin* pin = &w->pins[k];
    pd_pin_info info = {.body = pin->body,
                        .index_in_body = pin->index_in_body,
                        .force = pin->force,
                        .released = pin->released};
    pd_mat3 rotation;
    pd_real degrees;
    pd_keyframes_pose(pin->def.keyframes, pin->def.keyframe_count, w->time, &info.translate,
                      &rotation);
    pd_rotation_to_axis_angle(rotation, &info.rotate_axis, &degrees);
    info.rotate_degrees = (double)degrees;
    return info;
}

pd_status pd_world_write_frame(pd_world* w, const char* path, unsigned format, unsigned attributes,
                               pd_error* err) {
    pd_field fields[PD_MAX_FIELDS];
    int nf = pd_world_fields(w, attributes, fields, err);
    if (nf < 0)
        return PD_ERR_UNSUPPORTED;
    const pd_particles* p = &w->particles;
    if (format == PD_FORMAT_PLY)
        return pd_write_ply(path, p->count, p->pos, fields, nf, w->order, err);
    if (format == PD_FORMAT_VTK)
        return pd_write_vtk(path, p->count, p->pos, fields, nf, w->order, err);
    if (format == PD_FORMAT_VTU) {
        char names[PD_MAX_FIELDS][32];
        const char* arrays[PD_MAX_FIELDS];
        int named = pd_world_field_names(attributes, names, PD_MAX_FIELDS); /* nf of them */
        for (int k = 0; k < named; ++k)
            arrays[k] = names[k];
        return pd_write_vtu(path, p->count, p->pos, fields, arrays, nf, w->order, (double)w->time,
                            err);
    }
    return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "unknown frame format %u", format);
}

pd_step_timing pd_world_last_timing(const pd_world* w) {
    const pd_step_stats* st = &w->last_stats;
    pd_step_timing t = {.neighbors = st->t_neighbors,
                        .stage_count = st->stage_count,
                        .bond_forces = st->t_bond_forces,
                        .local_evaluations = st->local_evaluations,
                        .bonds = st->bonds};
    memcpy(t.stages, st->stages, sizeof t.stages);
    return t;
}

pd_status pd_world_time_family_build(const pd_world* w, double* seconds, pd_error* err) {
    /* the horizon is the method's `horizon` key, in spacings, where it has one */
    const pd_param_info* row = pd_param_find(w->solver->params, "horizon");
    if (!row || row->type != PD_PARAM_REAL)
        return pd_fail(err, PD_ERR_UNSUPPORTED, "", "%s builds no families", w->solver->name);
    pd_real horizon = *(const pd_real*)pd_param_value(row, w->scene->solver_params);
    const pd_particles* p = &w->particles;
    pd_family fam;
    pd_hash_grid grid;
    memset(&fam, 0, sizeof fam);
    memset(&grid, 0, sizeof grid);
    double t0 = pd_now();
    pd_status st =
        pd_family_build(&fam, &grid, p->rest, p->volume, p->spacing, p->body, p->count, horizon);
    *seconds = pd_now() - t0;
    pd_family_free(&fam);
    pd_hash_grid_destroy(&grid);
    return st == PD_OK ? PD_OK : pd_fail(err, st, "", "the family build failed");
}

void pd_world_observe_iterations(pd_world* w, pd_iteration_fn fn, void* ctx) {
    w->on_iteration = fn;
    w->on_iteration_ctx = ctx;
}
