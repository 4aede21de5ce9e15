/* The world as the public API shows it (peridot/world.h): a copy of its clock and counters, the
 * pins' forces, frames written in id order. */
#include "core/error.h"
#include "io/output.h"
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
    };
}

pd_pin_info pd_world_pin(const pd_world* w, int k) {
    const pd_pin* pin = &w->pins[k];
    return (pd_pin_info){pin->body, pin->index_in_body, pin->force, pin->released};
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
    return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "unknown frame format %u", format);
}
