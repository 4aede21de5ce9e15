/* projective_pd families that change: a new time step, renewed neighbourhoods (He 2017 Sec. 8
 * renews them for plastic and granular bodies), bonds broken for good. Each rebuilds what
 * depends on the families and h (the shape tensors, stiffness, diagonal, Jacobi bound and
 * Cholesky factor) through pd_ppd_build_system, or after a renewal in part through
 * pd_ppd_rebuild_renewed (the grains whose family or references changed). Infrequent: temporary
 * arrays are allocated per call. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "neighbor/family_renewal.h"
#include "parallel/parallel.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "world/world.h"

pd_status pd_ppd_on_time_step(void* state, pd_world* w, pd_error* err) {
    return pd_ppd_build_system(state, w, err); /* the diagonal's m/h^2 at the new h */
}

/* Eq. 20 on the bonds the renewal added: X = F^-1 (y_j - y_i) instead of their current vectors,
 * F from i's old family (still s->fam), for a particle of a renewing body with a plastic
 * material and a full-rank family (identity elsewhere). Only the particles with a new bond need
 * F; their shape tensors are computed here from the old family, as the rebuild after the step's
 * last plastic correction would have left them (that rebuild is left to the renewal:
 * pd_ppd_plastic_flow_at_step_end), and the renewal's own rebuild then replaces them. */
typedef struct new_bonds_job {
    pd_ppd_state* s;
    const pd_vec3* y;
    const int32_t* body;
    const uint8_t* body_renews;
    const uint32_t* map;
    pd_family* fresh;
} new_bonds_job;

static int has_new_bond(const uint32_t* map, const pd_family* fresh, uint32_t i) {
    for (uint32_t b = fresh->offsets[i]; b < fresh->offsets[i + 1]; ++b)
        if (map[b] == PD_BOND_NEW)
            return 1;
    return 0;
}

static pd_mat3 new_bond_map(pd_ppd_state* s, const new_bonds_job* job, uint32_t i) {
    if (!job->body_renews || !job->body_renews[job->body[i]])
        return pd_m3_identity();
    pd_ppd_shape_tensor(s, i); /* (X*X)^+ and planar of the old family */
    return s->planar[i] ? pd_m3_identity() : pd_ppd_new_bond_map(s, job->y, i);
}

static void place_new_bonds_range(void* ctx, size_t begin, size_t end, int thread) {
    const new_bonds_job* job = ctx;
    pd_ppd_state* s = job->s;
    pd_family* fresh = job->fresh;
    (void)thread;
    for (size_t k = begin; k < end; ++k) {
        uint32_t i = (uint32_t)k;
        if (!s->mat[s->material[i]].plastic || !has_new_bond(job->map, fresh, i))
            continue;
        pd_mat3 to_rest = new_bond_map(s, job, i);
        for (uint32_t b = fresh->offsets[i]; b < fresh->offsets[i + 1]; ++b)
            if (job->map[b] == PD_BOND_NEW)
                fresh->xi[b] = pd_m3_mulv(to_rest, pd_v3_sub(job->y[fresh->j[b]], job->y[i]));
    }
}

static void place_new_bonds(pd_ppd_state* s, const pd_world* w, const uint8_t* body_renews,
                            const uint32_t* map, pd_family* fresh) {
    if (!s->plastic)
        return;
    new_bonds_job job = {s, w->particles.pos, w->particles.body, body_renews, map, fresh};
    pd_parallel_for(s->n, 256, place_new_bonds_range, &job);
}

/* Marks the particles whose bonds the renewal changed (a bond new or gone), for the rebuild in
 * part (pd_ppd_rebuild_renewed): a kept family is its old bonds in their order. */
static void mark_changed_range(void* ctx, size_t begin, size_t end, int thread) {
    const new_bonds_job* job = ctx;
    const pd_family *old = &job->s->fam, *fresh = job->fresh;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        uint32_t b = fresh->offsets[i], o = old->offsets[i], count = fresh->offsets[i + 1] - b;
        int kept = count == old->offsets[i + 1] - o;
        for (uint32_t k = 0; kept && k < count; ++k)
            kept = job->map[b + k] == o + k;
        if (!kept)
            job->s->stale[i] |= PPD_STALE_FAMILY;
    }
}

static void mark_changed(pd_ppd_state* s, const uint32_t* map, pd_family* fresh) {
    new_bonds_job job = {s, NULL, NULL, NULL, map, fresh};
    if (s->stale)
        pd_parallel_for(s->n, 256, mark_changed_range, &job);
}

/* Whether particle i flows (a plastic material: Drucker-Prager, von Mises, granular, fluid). */
static int flows(const pd_ppd_state* s, size_t i) {
    return s->mat[s->material[i]].plastic;
}

/* The particles whose pairs a renewal finds anew (family_renewal.h's particle_renews): NULL when
 * no body mixes flowing and elastic particles (a renewing body renews every pair, as it always
 * did); otherwise, in a mixed body, the flowing ones, so that its elastic part keeps its bonds
 * and its rest shape (material changes make mixed bodies: a fluid hem under an elastic dress),
 * and every particle of any other body. pd_alloc'd, n + 1 bytes. */
static pd_status flowing_particles(const pd_ppd_state* s, const pd_world* w, uint8_t** out) {
    int bodies = w->scene->body_count;
    uint8_t* kinds = PD_NEW_ARRAY(uint8_t, (size_t)bodies + 1); /* bit 0 elastic, bit 1 flows */
    if (!kinds)
        return PD_ERR_OUT_OF_MEMORY;
    const int32_t* body = w->particles.body;
    int mixed = 0;
    for (size_t i = 0; i < s->n; ++i)
        kinds[body[i]] |= (uint8_t)(flows(s, i) ? 2 : 1);
    for (int b = 0; b < bodies; ++b)
        mixed |= kinds[b] == 3;
    *out = NULL;
    pd_status st = PD_OK;
    if (mixed) {
        *out = PD_NEW_ARRAY(uint8_t, s->n + 1);
        st = *out ? PD_OK : PD_ERR_OUT_OF_MEMORY;
        for (size_t i = 0; *out && i < s->n; ++i)
            (*out)[i] = (uint8_t)(flows(s, i) || kinds[body[i]] != 3);
    }
    PD_FREE_ARRAY(kinds, uint8_t, (size_t)bodies + 1);
    return st;
}

/* Renews the families of the bodies in body_renews (pairs as particle_renews says, may be
 * NULL) and reallocates the per-bond arrays; the system is not rebuilt. */
static pd_status renew(pd_ppd_state* s, pd_world* w, const uint8_t* body_renews,
                       const uint8_t* particle_renews, pd_error* err) {
    const pd_particles* p = &w->particles;
    pd_renewal_def def = {.pos = p->pos,
                          .volume = p->volume,
                          .spacing = p->spacing,
                          .body = p->body,
                          .id = p->id,
                          .body_renews = body_renews,
                          .particle_renews = particle_renews,
                          .broken = &s->broken,
                          .horizon = s->prm.horizon,
                          .cache = &s->renewal_list};
    s->renewal_list.skin_spacings = PPD_VERLET_SKIN;
    s->grid.keep_rows = 1;          /* renewed every few steps: the search's rows kept */
    pd_family fresh = s->fam_spare; /* written into: the family of two renewals ago */
    uint32_t* map = NULL;
    memset(&s->fam_spare, 0, sizeof s->fam_spare);
    pd_status st = pd_family_renew_into(&s->fam, &s->grid, &def, &fresh, &map);
    if (st != PD_OK)
        return pd_fail(err, st, "", "renewing the families failed (%s)", pd_status_string(st));
    place_new_bonds(s, w, body_renews, map, &fresh);
    mark_changed(s, map, &fresh);
    pd_bonds_map_free(map, &fresh); /* every per-bond array is rebuilt from the family */
    s->fam_spare = s->fam;          /* kept for the next renewal to write into */
    s->fam = fresh;
    w->bond_count = s->fam.bond_count;
    const float* kb = s->kb;
    st = pd_state_bonds_reserve(&s->persist, s->fam.bond_capacity);
    if (s->kb != kb) /* grown: the old kb is gone, the next rebuild is whole */
        s->stale_valid = 0;
    return st;
}

pd_status pd_ppd_reserve_bonds(void* state, size_t bonds) {
    pd_ppd_state* s = state;
    if (bonds <= s->fam.bond_capacity)
        return PD_OK;
    pd_family grown;
    memset(&grown, 0, sizeof grown);
    if (pd_family_allocate(&grown, s->n, bonds) != PD_OK) {
        pd_family_free(&grown);
        return PD_ERR_OUT_OF_MEMORY;
    }
    if (!s->fam.xi) /* the bonds keep their rest positions: so do these */
        pd_family_share_rest(&grown, s->fam.ref);
    if (!s->fam.rev)
        pd_family_drop_reverse(&grown);
    pd_family_free(&s->fam);
    s->fam = grown;
    s->stale_valid = 0;
    return pd_state_bonds_reserve(&s->persist, bonds);
}

pd_status pd_ppd_renew_families(void* state, pd_world* w, const uint8_t* body_renews,
                                pd_error* err) {
    pd_ppd_state* s = state;
    uint8_t* particle_renews = NULL;
    if (!s->stale) /* the marks for the rebuilds in part (the next rebuild is whole) */
        s->stale = PD_NEW_ARRAY(uint8_t, s->n + 1);
    pd_status st = s->stale ? flowing_particles(s, w, &particle_renews) : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK)
        st = renew(s, w, body_renews, particle_renews, err);
    PD_FREE_ARRAY(particle_renews, uint8_t, s->n + 1);
    return st == PD_OK ? pd_ppd_rebuild_renewed(s, w, err) : st;
}

pd_status pd_ppd_update_renewal(pd_ppd_state* s, pd_world* w, int at_creation, pd_error* err) {
    const pd_scene* sc = w->scene;
    uint8_t* mask = PD_NEW_ARRAY(uint8_t, (size_t)sc->body_count + 1);
    if (!mask)
        return PD_ERR_OUT_OF_MEMORY;
    int any = 0;
    for (size_t i = 0; i < s->n; ++i)
        if (flows(s, i))
            mask[w->particles.body[i]] = 1, any = 1;
    pd_status st = any || !at_creation ? pd_world_set_renewal(w, mask, any ? 1 : 0, err) : PD_OK;
    PD_FREE_ARRAY(mask, uint8_t, (size_t)sc->body_count + 1);
    return st;
}

/* bodies[i].material_changes (docs/methods/projective_pd.md, "Material changes"). The world has
 * set the changed particles' material and mass. Their neighbourhoods are found anew at the
 * current positions (the pairs with a changed end); one that became a solid (not a fluid)
 * takes its current configuration as its rest state, X<xi> = y_j - y_i on each of its bonds,
 * so that it keeps the shape it has; one that became a fluid keeps its reference vectors
 * (their deviatoric part relaxes by its plastic flow, the isotropic part is the pressure that
 * carries its weight). Then everything that depends on the materials, the masses and the
 * families is rebuilt (shape tensors, stiffness, diagonal, Jacobi bound, Cholesky factor; the
 * granular, fluid and plastic code paths read each particle's material), and the bodies with
 * a flowing particle renew from the next renewal on (this very step's). */
pd_status pd_ppd_change_materials(void* state, pd_world* w, const uint8_t* changed, pd_error* err) {
    pd_ppd_state* s = state;
    const pd_particles* p = &w->particles;
    int bodies = w->scene->body_count;
    uint8_t* body_changed = PD_NEW_ARRAY(uint8_t, (size_t)bodies + 1);
    if (!body_changed)
        return PD_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < s->n; ++i)
        body_changed[p->body[i]] |= changed[i];
    pd_status st = renew(s, w, body_changed, changed, err);
    PD_FREE_ARRAY(body_changed, uint8_t, (size_t)bodies + 1);
    pd_contact_particles_reordered(&s->contact); /* eligibility follows the material */
    if (st != PD_OK)
        return st;
    pd_family* f = &s->fam;
    for (uint32_t i = 0; i < f->count; ++i)
        if (changed[i] && !s->mat[s->material[i]].fluid)
            for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
                f->xi[b] = pd_v3_sub(p->pos[f->j[b]], p->pos[i]);
    st = pd_ppd_build_system(s, w, err);
    return st == PD_OK ? pd_ppd_update_renewal(s, w, 0, err) : st;
}

pd_status pd_ppd_check_body_material(const pd_scene* sc, int body, int material, const char* path,
                                     pd_error* err) {
    const pd_body_def* b = &sc->bodies[body];
    const pd_material_def* m = &sc->materials[material];
    if ((b->kind != PD_BODY_SHELL && b->kind != PD_BODY_ROD) || m->plasticity == PD_PLASTICITY_NONE)
        return PD_OK;
    return pd_fail(err, PD_ERR_BAD_SCENE, path,
                   "material '%s' flows (plasticity, a fluid or sand), but body '%s' is a %s: "
                   "its families are planar, where projective_pd has no plastic flow (Sec. 5 "
                   "needs a full-rank F) and no density constraint acts (a layer's kernel "
                   "density stays below the bulk's), so it would stay elastic; give the body "
                   "two or more layers of particles (kind dynamic) to let it flow",
                   m->name, b->name, b->kind == PD_BODY_SHELL ? "one-layer shell" : "rod");
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
            pd_bond_view v = {i, f->j[b], pd_family_xi(f, i, b), y[i], y[f->j[b]]};
            cut[b] = test(ctx, &v) != 0;
            flagged += cut[b];
        }
    *removed = 0;
    if (st == PD_OK && flagged)
        st = pd_state_bonds_remove(&s->persist, cut, w->particles.id, &s->broken, map, removed);
    PD_FREE_ARRAY(cut, uint8_t, nb + 1);
    PD_FREE_ARRAY(map, uint32_t, nb + 1);
    if (st != PD_OK)
        return pd_fail(err, st, "", "breaking bonds failed (%s)", pd_status_string(st));
    w->bond_count = f->bond_count;
    return *removed ? pd_ppd_build_system(s, w, err) : PD_OK;
}
