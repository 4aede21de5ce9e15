#include "world/fields.h"

#include "core/alloc.h"
#include "core/error.h"

pd_status pd_world_check_attributes(const pd_world* w, unsigned attributes, pd_error* err) {
    /* Stress and current density need the method to publish them; projective_pd's elastic
     * model does not define a Cauchy stress yet. */
    unsigned unsupported = PD_ATTR_STRESS | PD_ATTR_DENSITY;
    if (attributes & unsupported)
        return pd_fail(err, PD_ERR_BAD_SCENE, "output.attributes",
                       "method %s does not provide %s yet; remove it from output.attributes",
                       w->solver->name, attributes & PD_ATTR_STRESS ? "\"stress\"" : "\"density\"");
    return PD_OK;
}

int pd_world_fields(pd_world* w, unsigned attributes, pd_field* out) {
    pd_particles* p = &w->particles;
    int n = 0;
    if (attributes & PD_ATTR_VELOCITY)
        out[n++] = (pd_field){{"vx", "vy", "vz"}, 3, PD_FIELD_REAL, p->vel};
    if (attributes & PD_ATTR_MATERIAL)
        out[n++] = (pd_field){{"material"}, 1, PD_FIELD_INT32, p->material};
    if (attributes & PD_ATTR_BODY)
        out[n++] = (pd_field){{"body"}, 1, PD_FIELD_INT32, p->body};
    if (attributes & PD_ATTR_ID)
        out[n++] = (pd_field){{"id"}, 1, PD_FIELD_INT32, p->id};
    if (attributes & PD_ATTR_PLASTIC_STRAIN) {
        if (!w->plastic_strain)
            w->plastic_strain = PD_NEW_ARRAY(pd_real, p->count); /* elastic: zero */
        if (w->plastic_strain)
            out[n++] = (pd_field){{"plastic_strain"}, 1, PD_FIELD_REAL, w->plastic_strain};
    }
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
