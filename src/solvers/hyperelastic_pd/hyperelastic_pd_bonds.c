/* hyperelastic_pd's bonds when they change: renumbered after a Morton reordering, and removed
 * for good by fracture (the bond failure of Silling and Askari 2005 that Xu 2018 Sec. 7 tears a
 * cloth with, or any test through pd_world_break_bonds). The core edits the family
 * (neighbor/family_renewal.h); this file carries the per-bond state and rebuilds what depends
 * on the bonds: the weights of Eq. 19 and the factor of Eq. 23. */
#include <math.h>

#include "core/alloc.h"
#include "core/error.h"
#include "neighbor/family_renewal.h"
#include "parallel/parallel.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"
#include "solvers/solver.h"
#include "world/world.h"

pd_status pd_hpd_on_reorder(void* state, pd_world* w, const uint32_t* perm) {
    (void)w;
    pd_hpd_state* s = state;
    pd_reorder r;
    pd_status st = pd_state_arrays_reorder(&s->persist, perm, &r); /* factor_row too */
    pd_reorder_end(&r);
    return st;
}

/* The per-bond scratch of a removal, allocated at the first (bond_capacity never grows: bonds
 * are only removed). */
static pd_status bond_scratch(pd_hpd_state* s) {
    size_t cap = s->fam.bond_capacity + 1;
    if (s->cut)
        return PD_OK;
    s->cut = PD_NEW_ARRAY(uint8_t, cap);
    s->bond_map = PD_NEW_ARRAY(uint32_t, cap);
    return s->cut && s->bond_map ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

void pd_hpd_free_bond_scratch(pd_hpd_state* s) {
    size_t cap = s->fam.bond_capacity + 1;
    PD_FREE_ARRAY(s->cut, uint8_t, cap);
    PD_FREE_ARRAY(s->bond_map, uint32_t, cap);
}

/* Removes the bonds with cut[b] (and their opposites; the core carries G and the other
 * per-bond arrays), renormalises the weights over what is left (a particle at a crack is at
 * rest with theta = 1, as at a surface: Eq. 19) and factors L again. */
static pd_status remove_bonds(pd_hpd_state* s, pd_world* w, size_t* removed, pd_error* err) {
    pd_family* f = &s->fam;
    pd_status st =
        pd_state_bonds_remove(&s->persist, s->cut, w->particles.id, NULL, s->bond_map, removed);
    if (st != PD_OK)
        return pd_fail(err, st, "", "breaking bonds failed (%s)", pd_status_string(st));
    w->bond_count = f->bond_count;
    pd_hpd_normalise_weights(s, &w->particles);
    return pd_hpd_factor(s, w->def.dt, err);
}

pd_status pd_hpd_break_bonds(void* state, pd_world* w, pd_bond_test test, void* ctx,
                             size_t* removed, pd_error* err) {
    pd_hpd_state* s = state;
    pd_family* f = &s->fam;
    const pd_vec3* y = w->particles.pos;
    size_t flagged = 0;
    *removed = 0;
    if (bond_scratch(s) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "no memory to break bonds");
    for (uint32_t i = 0; i < f->count; ++i)
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            pd_bond_view v = {i, f->j[b], pd_family_xi(f, i, b), y[i], y[f->j[b]]};
            s->cut[b] = test(ctx, &v) != 0;
            flagged += s->cut[b];
        }
    return flagged ? remove_bonds(s, w, removed, err) : PD_OK;
}

typedef struct stretch_ctx {
    pd_hpd_state* s;
    const pd_vec3* y;
} stretch_ctx;

/* cut[b] for i's bonds whose stretch (|y_j - y_i| - |xi|) / |xi| passes the smaller critical
 * stretch of the two materials; per chunk the count flagged. */
static void stretch_kernel(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    stretch_ctx* c = vctx;
    pd_hpd_state* s = c->s;
    const pd_family* f = &s->fam;
    size_t flagged = 0;
    for (uint32_t i = (uint32_t)begin; i < end; ++i) {
        pd_real si = s->mat[s->material[i]].critical_stretch;
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            uint32_t j = f->j[b];
            pd_real s0 = fmin(si, s->mat[s->material[j]].critical_stretch);
            pd_real len = pd_v3_len(pd_family_xi(f, i, b));
            pd_real stretch = pd_v3_len(pd_v3_sub(c->y[j], c->y[i])) / len - 1;
            s->cut[b] = stretch > s0;
            flagged += s->cut[b];
        }
    }
    s->partial[begin / PD_HPD_GRAIN] = (pd_real)flagged;
}

pd_status pd_hpd_fracture(pd_hpd_state* s, pd_world* w, size_t* removed, pd_error* err) {
    *removed = 0;
    if (!s->fractures)
        return PD_OK;
    if (bond_scratch(s) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "no memory to break bonds");
    stretch_ctx c = {s, w->particles.pos};
    pd_parallel_for(s->n, PD_HPD_GRAIN, stretch_kernel, &c);
    pd_real flagged = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        flagged += s->partial[k];
    return flagged > 0 ? remove_bonds(s, w, removed, err) : PD_OK;
}
