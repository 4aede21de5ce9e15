/* xpbi set-up (Yu et al. 2024): materials, the kernel radius, the per-particle state,
 * checkpoints and reordering. */
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "constitutive/elastic_constants.h"
#include "contact/contact.h"
#include "core/alloc.h"
#include "core/error.h"
#include "scene/scene_json.h"
#include "solvers/xpbi/xpbi_data.h"
#include "world/world.h"

pd_status pd_xpbi_check_material(const pd_material_def* m, const void* params, const char* path,
                                 pd_error* err) {
    const pd_xpbi_params* prm = params;
    const pd_xpbi_material_params* mp = (const pd_xpbi_material_params*)m->method_params;
    pd_status st = pd_contact_check_friction(prm->contact, mp->contact_friction, path, err);
    if (st != PD_OK)
        return st;
    if (m->plasticity == PD_PLASTICITY_CAM_CLAY && m->cohesion != 0) {
        char child[PD_JPATH_MAX];
        snprintf(child, sizeof child, "%s.plasticity.cohesion", path);
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "xpbi's cam_clay (Wolper 2019's NACC) takes its strength in tension from "
                       "tension_ratio (beta p_0), not a cohesion: give 0 or leave it out");
    }
    pd_elastic el = pd_material_elastic(m);
    if (el.mu <= 0 || el.K <= 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "xpbi needs a positive shear and bulk modulus (got mu %g Pa, K %g Pa)",
                       el.mu, el.K);
    return PD_OK;
}

/* The particle constraints are a volume's (Eq. 10 needs a neighbourhood that spans 3D): a
 * one-layer shell or a rod has none; a fixed body is refused too: an obstacle is a collider. */
pd_status pd_xpbi_check_body_material(const pd_scene* scene, int body, int material,
                                      const char* path, pd_error* err) {
    (void)material, (void)path;
    return pd_solver_require_volume_body(scene, body, "xpbi", err);
}

static pd_status materials(pd_xpbi_state* s, const pd_world* w, pd_error* err) {
    s->material_count = w->scene->material_count;
    s->mat = PD_NEW_ARRAY(pd_xpbi_material, (size_t)s->material_count + 1);
    if (!s->mat)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "xpbi's materials");
    for (int k = 0; k < s->material_count; ++k) {
        const pd_material_def* m = &w->scene->materials[k];
        pd_elastic el = pd_material_elastic(m);
        pd_xpbi_material* xm = &s->mat[k];
        const pd_xpbi_material_params* mp = (const pd_xpbi_material_params*)m->method_params;
        *xm =
            (pd_xpbi_material){.mu = el.mu, .lambda = el.lambda, .friction = mp->contact_friction};
        xm->yield.mu = el.mu, xm->yield.kappa = el.K;
        if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER)
            xm->plastic = 1, xm->yield.cone = pd_dp_material_cone(m);
        else if (m->plasticity == PD_PLASTICITY_VON_MISES)
            xm->plastic = 1, xm->yield.cone = pd_von_mises_cone(m->yield_stress);
        else if (m->plasticity == PD_PLASTICITY_CAM_CLAY)
            xm->plastic = 3, xm->log_jp0 = m->cc_log_plastic_volume,
            xm->clay = (pd_cam_clay){el.mu, el.K, pd_cam_clay_slope(m->friction_angle),
                                     m->cc_tension_ratio, m->cc_hardening};
        else if (m->plasticity == PD_PLASTICITY_HERSCHEL_BULKLEY)
            xm->plastic = 2, xm->flow = (pd_herschel_bulkley){el.mu, m->yield_stress,
                                                              m->hb_viscosity, m->hb_exponent};
        /* a flowing material's reference follows its flow (F_ref, xpbi_hourglass.c) where
         * hourglass_plastic asks for it; a cohesionless Drucker-Prager flow rearranges grains at
         * the particle scale: none */
        int with = !xm->plastic ||
                   (s->prm.hourglass_plastic && m->plasticity != PD_PLASTICITY_DRUCKER_PRAGER);
        xm->hourglass = with ? s->prm.hourglass * el.E : 0;
        xm->hg_returned =
            xm->plastic && xm->hourglass > 0 && s->prm.hourglass_relaxation == PD_XPBI_HG_PLASTIC;
    }
    return PD_OK;
}

/* Every array at once; sizes cap + 2 so that an empty world still has its arrays. */
#define XPBI_PARTICLE_ARRAYS(X)                                                                    \
    X(f, pd_mat3, 1)                                                                               \
    X(volume0, pd_real, 1)                                                                         \
    X(plastic_strain, pd_real, 1)                                                                  \
    X(log_jp, pd_real, 1)                                                                          \
    X(x_ref, pd_vec3, 1)                                                                           \
    X(f_ref, pd_mat3, 1)                                                                           \
    X(volume, pd_real, 1)                                                                          \
    X(inv_mass, pd_real, 1)                                                                        \
    X(lambda, pd_real, 1)                                                                          \
    X(lambda_h, pd_real, 1)                                                                        \
    X(lambda_v, pd_real, 1)                                                                        \
    X(dlambda_h, pd_real, 1)                                                                       \
    X(dlambda, pd_real, 1)                                                                         \
    X(dcdf_ft, pd_mat3, 1)                                                                         \
    X(u_near, pd_mat3, 1)                                                                          \
    X(grad_moment, pd_mat3, 1)                                                                     \
    X(dv, pd_vec3, 1)                                                                              \
    X(impulse, pd_vec3, 1)                                                                         \
    X(surface_normal, pd_vec3, 1)                                                                  \
    X(sweep_h2, pd_real, 1)                                                                        \
    X(pair_gap, pd_real, 1)                                                                        \
    X(speed_chunk, pd_real, 1)                                                                     \
    X(task_fired, uint32_t, 1)                                                                     \
    X(hg_keep, pd_real, 1)                                                                         \
    X(hg_old_offsets, uint32_t, 1)                                                                 \
    X(order, uint32_t, 1)                                                                          \
    X(task, uint32_t, 1)                                                                           \
    X(keys, uint64_t, 2)

static size_t array_count(const pd_xpbi_state* s, int per) {
    return (s->cap + 2) * (size_t)per;
}

static pd_status allocate(pd_xpbi_state* s, pd_error* err) {
    int ok = 1;
#define XPBI_ALLOC(name, T, per)                                                                   \
    s->name = PD_NEW_ARRAY(T, array_count(s, per));                                                \
    ok &= s->name != NULL;
    XPBI_PARTICLE_ARRAYS(XPBI_ALLOC)
#undef XPBI_ALLOC
    size_t contacts = (s->cap + 1) * (size_t)(s->collider_count > 0 ? s->collider_count : 1);
    s->contact_n = PD_NEW_ARRAY(pd_real, contacts);
    s->contact_t = PD_NEW_ARRAY(pd_vec3, contacts);
    s->collider_gap = PD_NEW_ARRAY(pd_real, contacts);
    s->history = PD_NEW_ARRAY(pd_real, (size_t)s->prm.iterations + 1);
    if (!ok || !s->contact_n || !s->contact_t || !s->collider_gap || !s->history ||
        pd_family_allocate(&s->none, s->cap, 0) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "xpbi's %zu particles", s->n);
    s->none.count = s->n; /* its offsets (zeros) hold cap + 1 */
    pd_state_arrays_init(&s->persist, &s->none);
    PD_STATE_PARTICLES(&s->persist, s, f);
    PD_STATE_PARTICLES(&s->persist, s, volume0);
    PD_STATE_PARTICLES(&s->persist, s, plastic_strain);
    PD_STATE_PARTICLES(&s->persist, s, log_jp);
    PD_STATE_PARTICLES(&s->persist, s, x_ref);
    PD_STATE_PARTICLES(&s->persist, s, f_ref);
    return PD_OK;
}

/* r: `radius` spacings of the finest body or emitter. */
static pd_real finest_spacing(const pd_xpbi_state* s, const pd_world* w) {
    pd_real h = INFINITY;
    for (size_t i = 0; i < s->n; ++i)
        h = fmin(h, w->particles.spacing[i]);
    for (int k = 0; k < w->scene->emitter_count; ++k) /* the particles still to come */
        h = fmin(h, w->scene->emitters[k].spacing);
    return isfinite(h) ? h : 1;
}

/* Particles first .. count - 1 in their sampled (or emitted) state, the rest state: F = I, and
 * the hourglass reference (Sec. 5) their rest positions (an emitted stream's layers one spacing
 * apart upstream of the nozzle, world/emitters.c: their positions when they appear would put
 * every layer's reference at the nozzle). */
static void rest_state(pd_xpbi_state* s, const pd_world* w, size_t first) {
    for (size_t i = first; i < w->particles.count; ++i) {
        s->f[i] = pd_m3_identity();
        s->f_ref[i] = pd_m3_identity();
        s->log_jp[i] = s->mat[w->particles.material[i]].log_jp0;
        s->volume0[i] = w->particles.volume[i];
        s->x_ref[i] = w->particles.rest[i];
        s->plastic_strain[i] = 0;
    }
}

/* Emitted particles enter in the rest state; the neighbourhoods are rebuilt every step (Sec.
 * 4.2), so nothing else is owed to them. */
pd_status pd_xpbi_on_emit(void* state, pd_world* w, size_t first, pd_error* err) {
    (void)err;
    pd_xpbi_state* s = state;
    rest_state(s, w, first);
    s->n = s->none.count = w->particles.count;
    return PD_OK;
}

pd_status pd_xpbi_create(pd_world* w, const void* params, void** state, pd_error* err) {
    pd_xpbi_state* s = pd_calloc(1, sizeof *s);
    if (!s)
        return PD_ERR_OUT_OF_MEMORY;
    memcpy(&s->prm, params, sizeof s->prm);
    s->n = w->particles.count;
    s->cap = w->particles.capacity > s->n ? w->particles.capacity : s->n;
    s->collider_count = w->colliders.count;
    pd_status st = materials(s, w, err);
    if (st == PD_OK)
        st = allocate(s, err);
    if (st != PD_OK) {
        pd_xpbi_destroy(s);
        return st;
    }
    rest_state(s, w, 0);
    s->spacing = finest_spacing(s, w);
    s->bodies_touch = s->prm.contact && w->scene->body_count > 1;
    s->grid.keep_rows = 1; /* a search every step (Sec. 4.2): no allocation once warm */
    s->r = s->prm.radius * s->spacing;
    if (s->prm.distance_epsilon < 1 && s->r * (1 - s->prm.distance_epsilon) > s->spacing) {
        /* Eq. 21 would push a body's nearest neighbours apart at rest (measured: r = 1.5
         * spacings inflated the bar by 7 %) */
        pd_real r = s->prm.radius, eps = s->prm.distance_epsilon;
        pd_xpbi_destroy(s);
        return pd_fail(err, PD_ERR_BAD_SCENE, "solver.xpbi.radius",
                       "xpbi's distance constraints (Eq. 21) keep neighbours r - epsilon = %g "
                       "spacings apart, more than the spacing of the sampled particles: they "
                       "would push a body apart at rest; give a radius of at most %g spacings "
                       "(or distance_epsilon 1: no distance constraints)",
                       r * (1 - eps), 1 / (1 - eps));
    }
    if (s->prm.constraints == PD_XPBI_TWO_CONSTRAINTS && s->prm.solver == PD_XPBI_JACOBI) {
        pd_xpbi_destroy(s);
        return pd_fail(err, PD_ERR_BAD_SCENE, "solver.xpbi.constraints",
                       "xpbi's two constraints per particle (Eq. 4-5) run under gauss_seidel "
                       "only; jacobi keeps one multiplier change per particle (give constraints "
                       "\"one\" or solver \"gauss_seidel\")");
    }
    w->bond_count = 0;
    *state = s;
    return PD_OK;
}

void pd_xpbi_destroy(void* state) {
    pd_xpbi_state* s = state;
#define XPBI_FREE(name, T, per) PD_FREE_ARRAY(s->name, T, array_count(s, per));
    XPBI_PARTICLE_ARRAYS(XPBI_FREE)
#undef XPBI_FREE
    s->none.count = s->cap; /* as allocated */
    size_t contacts = (s->cap + 1) * (size_t)(s->collider_count > 0 ? s->collider_count : 1);
    PD_FREE_ARRAY(s->contact_n, pd_real, contacts);
    PD_FREE_ARRAY(s->contact_t, pd_vec3, contacts);
    PD_FREE_ARRAY(s->collider_gap, pd_real, contacts);
    PD_FREE_ARRAY(s->history, pd_real, (size_t)s->prm.iterations + 1);
    PD_FREE_ARRAY(s->nb_g, pd_vec3, s->nb_g_capacity);
    PD_FREE_ARRAY(s->nb_w, pd_real, s->nb_w_capacity);
    PD_FREE_ARRAY(s->hg, pd_xpbi_hourglass, s->hg_capacity);
    PD_FREE_ARRAY(s->hg_grad, pd_vec3, s->hg_grad_capacity);
    PD_FREE_ARRAY(s->hg_old_index, uint32_t, s->hg_old_index_capacity);
    PD_FREE_ARRAY(s->hg_old_y, pd_vec3, s->hg_old_y_capacity);
    PD_FREE_ARRAY(s->pair_sum, pd_contact_pair_sum, s->pair_capacity);
    PD_FREE_ARRAY(s->mat, pd_xpbi_material, (size_t)s->material_count + 1);
    pd_hash_grid_destroy(&s->grid);
    pd_neighbor_list_destroy(&s->near);
    pd_family_free(&s->none);
    pd_free(s, sizeof *s);
}

/* time.dt "auto": courant r / (c_P + |v|) at the fastest particle, c_P = sqrt((lambda + 2 mu)
 * / rho) of its material (the paper gives 5e-5 to 2e-4 s for its scenes, Sec. 5.1). */
pd_real pd_xpbi_max_time_step(void* state, const pd_world* w) {
    const pd_xpbi_state* s = state;
    const pd_particles* p = &w->particles;
    pd_real fastest = 0;
    for (size_t i = 0; i < s->n; ++i) {
        const pd_xpbi_material* m = &s->mat[p->material[i]];
        pd_real rho = p->volume[i] > 0 ? p->mass[i] / p->volume[i] : 0;
        pd_real wave = rho > 0 ? sqrt((m->lambda + 2 * m->mu) / rho) : 0;
        fastest = fmax(fastest, pd_v3_len(p->vel[i]) + wave);
    }
    return fastest > 0 ? s->prm.courant * s->r / fastest : INFINITY;
}

pd_state_arrays* pd_xpbi_persistent(void* state) {
    return &((pd_xpbi_state*)state)->persist;
}

/* After a checkpoint was read: neighbours, kernels and colours are rebuilt every step; the
 * hourglass constraint's reference positions were read with F. */
pd_status pd_xpbi_restored(void* state, pd_world* w, struct pd_ckpt_reader* r, pd_error* err) {
    (void)w, (void)r, (void)err;
    ((pd_xpbi_state*)state)->have_ref = 1;     /* x_ref came with the checkpoint */
    ((pd_xpbi_state*)state)->hg_old_valid = 0; /* the pairs' misfits did not: they start at 0 */
    return PD_OK;
}

pd_status pd_xpbi_on_reorder(void* state, pd_world* w, const uint32_t* perm) {
    (void)w;
    pd_xpbi_state* s = state;
    s->hg_old_valid = 0; /* the pairs' returned misfits are kept by index: forgotten */
    pd_reorder r;
    pd_status st = pd_state_arrays_reorder(&s->persist, perm, &r);
    pd_reorder_end(&r);
    return st;
}

size_t pd_xpbi_bytes_per_particle(const pd_scene* scene, double bond_fraction) {
    (void)bond_fraction;
    /* the arrays above, about 32 neighbour entries (list index and kernel data), the hash
     * grid's and each collider's contact */
    size_t colliders = (size_t)(scene->collider_count > 0 ? scene->collider_count : 1);
    /* solver.xpbi.hourglass > 0: y and k, and the gradients' room */
    size_t hourglass = 32 * (sizeof(pd_xpbi_hourglass) + sizeof(pd_vec3));
    /* hourglass_relaxation plastic: q and the last step's offsets per particle, the last
     * step's index and returned offset per entry */
    size_t returned =
        sizeof(pd_real) + sizeof(uint32_t) + 32 * (sizeof(uint32_t) + sizeof(pd_vec3));
    /* contact between bodies: a pair sum per entry, a surface normal per particle */
    size_t pairs = scene->body_count > 1 ? 32 * sizeof(pd_contact_pair_sum) : 0;
    /* the hash grid's kept rows (keep_rows): the index of half the entries, two counts */
    size_t rows = 16 * sizeof(uint32_t) + 2 * sizeof(uint32_t);
    return rows + hourglass + returned + pairs + sizeof(pd_vec3) + 5 * sizeof(pd_mat3) +
           12 * sizeof(pd_real) + 2 * sizeof(pd_vec3) + 2 * sizeof(uint32_t) +
           2 * sizeof(uint64_t) + sizeof(uint32_t) +
           32 * (sizeof(pd_vec3) + sizeof(pd_real) + sizeof(uint32_t)) + 4 * sizeof(uint32_t) +
           sizeof(pd_vec3) + colliders * (2 * sizeof(pd_real) + sizeof(pd_vec3));
}
