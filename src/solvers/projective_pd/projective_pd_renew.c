/* projective_pd families that change: a new time step, renewed neighbourhoods (He 2017 Sec. 8
 * renews them for plastic and granular bodies), bonds broken for good. Each rebuilds what
 * depends on the families and h through pd_ppd_build_system: the shape tensors, stiffness,
 * diagonal, Jacobi bound and Cholesky factor. Infrequent: temporary arrays are allocated per
 * call. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "neighbor/family_renewal.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "world/world.h"

pd_status pd_ppd_on_time_step(void* state, pd_world* w, pd_error* err) {
    pd_ppd_state* s = state;
    s->dt = w->def.dt;
    return pd_ppd_build_system(s, w, err);
}

/* Per particle of a renewing body with a plastic material, Eq. 20's map to the reference
 * space from its old family (identity elsewhere); NULL without plastic materials. */
static pd_mat3* plastic_maps(const pd_ppd_state* s, const pd_world* w, const uint8_t* body_renews) {
    if (!s->plastic)
        return NULL;
    pd_mat3* to_rest = PD_NEW_ARRAY(pd_mat3, s->n + 1);
    for (size_t i = 0; to_rest && i < s->n; ++i) {
        int renews = body_renews && body_renews[w->particles.body[i]];
        to_rest[i] = renews && s->mat[s->material[i]].plastic && !s->planar[i]
                         ? pd_ppd_new_bond_map(s, w->particles.pos, (uint32_t)i)
                         : pd_m3_identity();
    }
    return to_rest;
}

/* A bond the renewal added gets X = F^-1 (y_j - y_i) (Eq. 20) instead of its current vector. */
static void place_new_bonds(const pd_ppd_state* s, const pd_vec3* y, const pd_mat3* to_rest,
                            const uint32_t* map, pd_family* fresh) {
    for (uint32_t i = 0; i < fresh->count; ++i)
        for (uint32_t b = fresh->offsets[i]; b < fresh->offsets[i + 1]; ++b)
            if (map[b] == PD_BOND_NEW && s->mat[s->material[i]].plastic)
                fresh->xi[b] = pd_m3_mulv(to_rest[i], pd_v3_sub(y[fresh->j[b]], y[i]));
}

pd_status pd_ppd_renew_families(void* state, pd_world* w, const uint8_t* body_renews,
                                pd_error* err) {
    pd_ppd_state* s = state;
    const pd_particles* p = &w->particles;
    pd_renewal_def def = {.pos = p->pos,
                          .volume = p->volume,
                          .spacing = p->spacing,
                          .body = p->body,
                          .id = p->id,
                          .body_renews = body_renews,
                          .broken = &s->broken,
                          .horizon = s->prm.horizon};
    pd_family fresh;
    uint32_t* map = NULL;
    pd_mat3* to_rest = plastic_maps(s, w, body_renews);
    if (s->plastic && !to_rest)
        return PD_ERR_OUT_OF_MEMORY;
    pd_status st = pd_family_renew(&s->fam, &s->grid, &def, &fresh, &map);
    if (st != PD_OK) {
        PD_FREE_ARRAY(to_rest, pd_mat3, s->n + 1);
        return pd_fail(err, st, "", "renewing the families failed (%s)", pd_status_string(st));
    }
    if (to_rest)
        place_new_bonds(s, p->pos, to_rest, map, &fresh);
    PD_FREE_ARRAY(to_rest, pd_mat3, s->n + 1);
    pd_bonds_map_free(map, &fresh); /* every per-bond array is rebuilt from the family */
    pd_family_free(&s->fam);
    s->fam = fresh;
    w->bond_count = s->fam.bond_count;
    st = pd_ppd_allocate_bonds(s);
    return st == PD_OK ? pd_ppd_build_system(s, w, err) : st;
}

pd_status pd_ppd_break_bonds(void* state, pd_world* w, pd_bond_test test, void* ctx,
                             size_t* removed, pd_error* err) {
    pd_ppd_state* s = state;
    pd_family* f = &s->fam;
    const pd_vec3* y = w->particles.pos;
    size_t nb = f->bond_count;
    uint8_t* cut = PD_NEW_ARRAY(uint8_t, nb + 1);
    uint32_t* map = PD_NEW_ARRAY(uint32_t, nb + 1);
    pd_status st = cut && map ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    size_t flagged = 0;
    for (uint32_t i = 0; st == PD_OK && i < f->count; ++i)
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            pd_bond_view v = {i, f->j[b], f->xi[b], y[i], y[f->j[b]]};
            cut[b] = test(ctx, &v) != 0;
            flagged += cut[b];
        }
    *removed = 0;
    if (st == PD_OK && flagged)
        st = pd_family_remove(f, cut, w->particles.id, &s->broken, map, removed);
    PD_FREE_ARRAY(cut, uint8_t, nb + 1);
    PD_FREE_ARRAY(map, uint32_t, nb + 1);
    if (st != PD_OK)
        return pd_fail(err, st, "", "breaking bonds failed (%s)", pd_status_string(st));
    w->bond_count = f->bond_count;
    return *removed ? pd_ppd_build_system(s, w, err) : PD_OK;
}
