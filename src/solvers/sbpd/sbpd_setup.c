/* sbpd set-up (Wang et al. 2025): materials as Prony terms, families with Wendland C2 weights
 * (Sec. 3), the shape tensors of Eq. 1, the largest stable time step, and the renumbering after a
 * Morton reordering. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "constitutive/drucker_prager.h"
#include "constitutive/elastic_constants.h"
#include "core/alloc.h"
#include "io/checkpoint_file.h"
#include "core/error.h"
#include "math/svd3.h"
#include "neighbor/family_renewal.h"
#include "neighbor/isotropy.h"
#include "solvers/sbpd/sbpd_data.h"
#include "sph/kernels.h"
#include "world/bodies.h"
#include "world/world.h"

/* The bond terms of Eq. 6 alone show nu = 1/4; the dilatation term adds to lambda only. Above
 * this the dilatation modulus is so much stiffer than the bonds that the stable step vanishes. */
#define SBPD_NU_MIN 0.25
#define SBPD_NU_MAX 0.49
/* A family whose shape tensor has det below this fraction of (trace / 3)^3 spans no volume. */
#define SBPD_PLANAR 1e-6

pd_status pd_sbpd_check_material(const pd_material_def* m, const void* params, const char* path,
                                 pd_error* err) {
    const pd_sbpd_params* prm = params;
    pd_real nu = pd_material_elastic(m).nu;
    const pd_sbpd_material_params* mp = (const pd_sbpd_material_params*)m->method_params;
    pd_status st = pd_contact_check_friction(prm->contact, mp->contact_friction, path, err);
    if (st != PD_OK)
        return st;
    if (mp->hardening > 0 && m->plasticity != PD_PLASTICITY_DRUCKER_PRAGER)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "hardening (Eq. 24) is for sbpd's sand: give the material `plasticity` "
                       "`drucker_prager`, or no hardening");
    if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER) {
        if (m->prony_count > 0)
            return pd_fail(err, PD_ERR_BAD_SCENE, path,
                           "sbpd's sand (Drucker-Prager, Sec. 5) is not viscoelastic: give a "
                           "material either `plasticity` or `viscoelasticity`");
        if (nu < 0 || nu > SBPD_NU_MAX)
            return pd_fail(err, PD_ERR_BAD_SCENE, path,
                           "sbpd's sand honours Poisson ratios in [0, %.2f] (got %.3g)",
                           SBPD_NU_MAX, nu);
        return PD_OK;
    }
    if (nu < SBPD_NU_MIN - 1e-12 || nu > SBPD_NU_MAX)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "sbpd honours Poisson ratios in [%.2f, %.2f] (got %.3g): the bond terms of "
                       "Eq. 6-7 alone show nu = 1/4 and the dilatation term (docs/methods/sbpd.md) "
                       "can only add to lambda",
                       SBPD_NU_MIN, SBPD_NU_MAX, nu);
    return PD_OK;
}

/* The terms of a material: E_inf = E_0 - sum E_k and the modes E_k, each with the material's
 * nu (SCENE.md). Eq. 6's energy under a uniform strain e is (2 mu + lambda) / 15 (2 e:e +
 * (tr e)^2) over a family with an isotropic fourth moment and sum_j w V_j = 1: shear modulus
 * (2 mu + lambda) / 15, and lambda equal to it (nu = 1/4). The paper does not normalise w; we
 * scale mu and lambda by 15 mu_c / (2 mu_c + lambda_c) so that the body shows the shear modulus
 * mu_c = E / (2 (1 + nu)), and give the rest of the continuum's lambda_c, lambda_c - mu_c, to a
 * dilatation energy kv / 2 (J - 1)^2 per particle (beyond the paper). */
static pd_sbpd_material map_material(const pd_material_def* m, pd_real dt) {
    pd_elastic el = pd_material_elastic(m);
    pd_real E = el.E, nu = el.nu;
    pd_sbpd_material out;
    memset(&out, 0, sizeof out);
    out.modes = m->prony_count;
    pd_real modulus[PD_MAX_PRONY + 1];
    modulus[0] = E;
    for (int k = 0; k < out.modes; ++k) {
        modulus[k + 1] = m->prony_moduli[k];
        modulus[0] -= m->prony_moduli[k];
        out.theta[k] = m->prony_times[k];
        out.alpha[k] = exp(-dt / out.theta[k]);
    }
    pd_real scale = 15 * (1 - 2 * nu) / (2 * (1 - nu));
    for (int t = 0; t <= out.modes; ++t) {
        pd_elastic mode = pd_elastic_from_e_nu(modulus[t], nu);
        pd_real mu_c = mode.mu, lambda_c = mode.lambda;
        out.mu[t] = scale * mu_c;
        out.lambda[t] = scale * lambda_c;
        out.kv[t] = fmax(0, lambda_c - mu_c);
        out.mu0 += out.mu[t];
        out.lambda0 += out.lambda[t];
        out.kv0 += out.kv[t];
    }
    if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER) { /* Eq. 13 and 15 */
        out.sand = 1;
        out.yield.mu = el.mu;
        out.yield.kappa = el.K;                   /* the bulk modulus lambda + 2 mu / 3 */
        pd_dp_cone cone = pd_dp_material_cone(m); /* Eq. 13's C_f, C_c */
        out.yield.cf = cone.b, out.yield.cc = cone.a;
        out.hardening = ((const pd_sbpd_material_params*)m->method_params)->hardening;
    }
    return out;
}

/* Interior families (volume within 1 % of the fullest of their body's) fitted for direction
 * factors that make their fourth moment isotropic, with the Wendland weights as they are. */
static pd_status fit_directions(pd_sbpd_state* s, const pd_particles* p, pd_direction_weight* dw) {
    memset(dw, 0, sizeof *dw);
    if (!s->prm.isotropic_weights)
        return PD_OK;
    int bodies = 0;
    for (size_t i = 0; i < s->n; ++i)
        bodies = p->body[i] + 1 > bodies ? p->body[i] + 1 : bodies;
    pd_real* fullest = pd_calloc((size_t)bodies + 1, sizeof *fullest);
    pd_moment_fit* fit = pd_calloc(1, sizeof *fit);
    if (!fullest || !fit) {
        pd_free(fullest, ((size_t)bodies + 1) * sizeof *fullest);
        pd_free(fit, sizeof *fit);
        return PD_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < s->n; ++i)
        fullest[p->body[i]] = fmax(fullest[p->body[i]], pd_family_volume(&s->fam, p->volume, i));
    for (uint32_t i = 0; i < s->n; ++i) /* sand takes no factor (bond_weights) */
        if (!s->sand[i] && pd_family_volume(&s->fam, p->volume, i) >= 0.99 * fullest[p->body[i]])
            pd_moment_fit_add_weighted(fit, &s->fam, s->w, i);
    pd_moment_fit_solve(fit, dw);
    pd_free(fullest, ((size_t)bodies + 1) * sizeof *fullest);
    pd_free(fit, sizeof *fit);
    return PD_OK;
}

/* w of each bond: Wendland C2 of |xi| / r times the direction factor, normalised so that
 * sum_j w V_j = 1 over i's family. */
static pd_status bond_weights(pd_sbpd_state* s, const pd_particles* p) {
    for (uint32_t i = 0; i < s->n; ++i) {
        pd_real r = s->prm.horizon * p->spacing[i];
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b)
            s->w[b] = pd_sph_wendland_c2_shape(pd_v3_len(pd_family_xi(&s->fam, i, b)) / r) *
                      p->volume[s->fam.j[b]];
    }
    pd_direction_weight dw;
    pd_status st = fit_directions(s, p, &dw);
    if (st != PD_OK)
        return st;
    for (uint32_t i = 0; i < s->n; ++i) {
        pd_real sum = 0;
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            pd_vec3 X = pd_family_xi(&s->fam, i, b);
            if (!s->sand[i]) /* flowing sand keeps no lattice to correct */
                s->w[b] *= pd_direction_weight_at(&dw, pd_v3_scale(X, 1 / pd_v3_len(X)));
            sum += s->w[b];
        }
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b)
            s->w[b] = sum > 0 ? s->w[b] / (sum * p->volume[s->fam.j[b]]) : 0;
    }
    return PD_OK;
}

void pd_sbpd_shape_tensor(pd_sbpd_state* s, uint32_t i) {
    pd_mat3 K = pd_family_shape_tensor(&s->fam, i, s->w, s->volume); /* Eq. 1: w V_j */
    pd_real tr = pd_m3_trace(K) / 3;
    s->planar[i] = !(pd_m3_det(K) > SBPD_PLANAR * tr * tr * tr);
    s->kinv[i] = pd_m3_zero();
    if (!s->planar[i])
        pd_m3_inverse(K, &s->kinv[i]);
}

/* The largest time step for which the passes of Eq. 12 stay stable. A pass moves y by
 * dt^2 a(y): gradient descent on the elastic energy with step dt^2 / rho, stable while dt^2
 * times the largest eigenvalue of rho^-1 d(rho a)/dy stays below 2. Gershgorin bounds that
 * eigenvalue by twice the largest row sum S_i / rho_i, with S_i the bonds' stiffness
 * sum_j (c_ij + c_ji) V_j, c = (2 mu_0 + lambda_0) w / |xi|^2 (Eq. 10-11 at q = 0), plus the
 * dilatation term's kv_0 (sum_j w V_j |K^-1 xi|)^2. */
static pd_real stable_time_step(const pd_sbpd_state* s) {
    pd_real worst = 0;
    for (uint32_t i = 0; i < s->n; ++i) {
        if (s->flags[i] & PD_P_FIXED) /* pinned ones count: a pin may let go */
            continue;
        const pd_sbpd_material* mi = &s->mat[s->material[i]];
        pd_real sum = 0, grad = 0, rho = s->mass[i] / s->volume[i];
        if (mi->sand) { /* the correspondence force of Eq. 15's stress: (kappa + 4 mu / 3),
                         * times the largest factor Eq. 24 can reach, exp(xi); a grain without
                         * the neighbours to fit an F carries none (sbpd_sand.c, planar) */
            if (s->planar[i])
                continue;
            for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b)
                grad += s->w[b] * s->volume[s->fam.j[b]] *
                        pd_v3_len(pd_m3_mulv(s->kinv[i], pd_family_xi(&s->fam, i, b)));
            pd_real stiff = (mi->yield.kappa + 4 * mi->yield.mu / 3) * exp(mi->hardening);
            worst = fmax(worst, 2 * stiff * grad * grad / rho);
            continue;
        }
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            uint32_t j = s->fam.j[b], rb = s->fam.rev[b];
            const pd_sbpd_material* mj = &s->mat[s->material[j]];
            pd_vec3 X = pd_family_xi(&s->fam, i, b);
            pd_real c =
                (2 * mi->mu0 + mi->lambda0) * s->w[b] + (2 * mj->mu0 + mj->lambda0) * s->w[rb];
            sum += c * s->volume[j] / pd_v3_dot(X, X);
            grad += s->w[b] * s->volume[j] * pd_v3_len(pd_m3_mulv(s->kinv[i], X));
        }
        sum += mi->kv0 * grad * grad;
        worst = fmax(worst, sum / rho);
    }
    return worst > 0 ? 1 / sqrt(worst) : INFINITY;
}

/* Refuses a time step the passes cannot take (nothing is clamped or sub-stepped). */
static pd_status check_time_step(pd_sbpd_state* s, pd_real dt, pd_error* err) {
    s->dt_max = stable_time_step(s);
    if (dt <= s->dt_max)
        return PD_OK;
    return pd_fail(err, PD_ERR_BAD_SCENE, "time.dt",
                   "sbpd's passes of Eq. 12 are explicit: with these materials and spacings "
                   "time.dt must be at most %.3g s (got %.3g s); it scales with spacing * "
                   "sqrt(density / youngs_modulus) (docs/methods/sbpd.md)",
                   s->dt_max, dt);
}

pd_real pd_sbpd_max_time_step(void* state, const pd_world* w) {
    (void)w;
    return stable_time_step(state);
}

pd_status pd_sbpd_on_time_step(void* state, pd_world* w, pd_error* err) {
    pd_sbpd_state* s = state;
    for (int m = 0; m < s->material_count; ++m) /* Eq. 4 and 9's decay over the new step */
        for (int k = 0; k < s->mat[m].modes; ++k)
            s->mat[m].alpha[k] = exp(-w->def.dt / s->mat[m].theta[k]);
    return check_time_step(s, w->def.dt, err);
}

#define SBPD_PARTICLE_ARRAYS(X)                                                                    \
    X(kinv, pd_mat3)                                                                               \
    X(F, pd_mat3)                                                                                  \
    X(M, pd_mat3)                                                                                  \
    X(planar, uint8_t)                                                                             \
    X(y, pd_vec3)                                                                                  \
    X(acc, pd_vec3)                                                                                \
    X(sand, uint8_t)                                                                               \
    X(Fe, pd_mat3)                                                                                 \
    X(plastic, pd_real)                                                                            \
    X(harden, pd_real)

static size_t history_count(const pd_sbpd_state* s, size_t n) {
    return n * (size_t)s->modes + 1;
}

/* What lasts from step to step and follows the particles when the world reorders them: the
 * bonds' weights, the Prony histories of Eq. 10 (when a material has modes), the shape tensors,
 * the sand's elastic F, plastic strain and hardening; and the per-bond force scratch, which the
 * core sizes with the family. */
static void declare_persistent(pd_sbpd_state* s) {
    pd_state_arrays* a = &s->persist;
    size_t history = (size_t)s->modes * sizeof(pd_real);
    pd_state_arrays_init(a, &s->fam);
    PD_STATE_BONDS(a, s, w);
    if (history) {
        pd_state_declare(a, "deviatoric_history", &s->qdev, history, PD_STATE_PER_BOND);
        pd_state_declare(a, "isotropic_history", &s->qiso, history, PD_STATE_PER_BOND);
        pd_state_declare(a, "volumetric_history", &s->qvol, history, PD_STATE_PER_PARTICLE);
    }
    PD_STATE_PARTICLES(a, s, kinv);
    PD_STATE_PARTICLES(a, s, planar);
    PD_STATE_PARTICLES(a, s, sand);
    PD_STATE_PARTICLES(a, s, Fe);
    PD_STATE_PARTICLES(a, s, plastic);
    PD_STATE_PARTICLES(a, s, harden);
    PD_STATE_BOND_SCRATCH(a, s, t);
}

static pd_status allocate(pd_sbpd_state* s) {
    size_t n = s->n;
#define ALLOC_ONE(field, T)                                                                        \
    if (!(s->field = PD_NEW_ARRAY(T, n + 1)))                                                      \
        return PD_ERR_OUT_OF_MEMORY;
    SBPD_PARTICLE_ARRAYS(ALLOC_ONE)
#undef ALLOC_ONE
    s->chunks = (n + PD_SBPD_GRAIN - 1) / PD_SBPD_GRAIN;
    s->partial = PD_NEW_ARRAY(pd_real, s->chunks + 1);
    s->qvol = PD_NEW_ARRAY(pd_real, history_count(s, n));
    if (!s->partial || !s->qvol)
        return PD_ERR_OUT_OF_MEMORY;
    declare_persistent(s);
    return pd_state_bonds_reserve(&s->persist, s->fam.bond_capacity);
}

static pd_status setup(pd_sbpd_state* s, pd_world* w, pd_error* err) {
    const pd_particles* p = &w->particles;
    /* bonds at exactly r weigh 0 (Wendland vanishes there): left out */
    pd_status st = pd_family_build(&s->fam, &s->grid, p->rest, p->volume, p->spacing, p->body,
                                   p->count, s->prm.horizon * (1 - 1e-9));
    if (st == PD_OK)
        st = pd_world_check_families(w, &s->fam, s->prm.horizon, err);
    if (st != PD_OK)
        return st;
    s->mat = PD_NEW_ARRAY(pd_sbpd_material, (size_t)s->material_count + 1);
    s->body_count = w->scene->body_count;
    s->body_renews = PD_NEW_ARRAY(uint8_t, (size_t)s->body_count + 1);
    s->body_rho0 = PD_NEW_ARRAY(pd_real, (size_t)s->body_count + 1);
    if (!s->mat || !s->body_renews || !s->body_rho0)
        return PD_ERR_OUT_OF_MEMORY;
    for (int m = 0; m < s->material_count; ++m) {
        s->mat[m] = map_material(&w->scene->materials[m], w->def.dt);
        s->modes = s->mat[m].modes > s->modes ? s->mat[m].modes : s->modes;
    }
    if ((st = allocate(s)) != PD_OK)
        return st;
    for (uint32_t i = 0; i < s->n; ++i) {
        s->sand[i] = (uint8_t)s->mat[s->material[i]].sand;
        s->Fe[i] = pd_m3_identity();
        s->harden[i] = 1;
        s->has_sand |= s->sand[i];
        s->body_renews[p->body[i]] |= s->sand[i];
    }
    if ((st = bond_weights(s, p)) != PD_OK)
        return st;
    for (uint32_t i = 0; i < s->n; ++i) /* Eq. 24's rho_0: the densest grain of each body */
        if (s->sand[i])
            s->body_rho0[p->body[i]] =
                fmax(s->body_rho0[p->body[i]], pd_sbpd_kernel_density(s, p->rest, i));
    for (uint32_t i = 0; i < s->n; ++i)
        pd_sbpd_shape_tensor(s, i);
    if ((st = pd_sbpd_contact_init(s, w, err)) != PD_OK ||
        (st = pd_sbpd_static_friction_init(s)) != PD_OK)
        return st;
    /* with time.dt "auto" the world takes its step from the bound next (sbpd_max_time_step) */
    return w->def.dt_auto ? PD_OK : check_time_step(s, w->def.dt, err);
}

pd_status pd_sbpd_create(pd_world* w, const void* params, void** state, pd_error* err) {
    pd_sbpd_state* s = pd_calloc(1, sizeof *s);
    if (!s)
        return PD_ERR_OUT_OF_MEMORY;
    memcpy(&s->prm, params, sizeof s->prm);
    s->n = w->particles.count;
    s->mass = w->particles.mass;
    s->volume = w->particles.volume;
    s->spacing = w->particles.spacing;
    s->material = w->particles.material;
    s->flags = w->particles.flags;
    s->material_count = w->scene->material_count;
    pd_status st = setup(s, w, err);
    if (st != PD_OK) {
        pd_sbpd_destroy(s);
        return st;
    }
    w->bond_count = s->fam.bond_count;
    *state = s;
    return PD_OK;
}

void pd_sbpd_destroy(void* state) {
    pd_sbpd_state* s = state;
    size_t n = s->n;
#define FREE_ONE(field, T) PD_FREE_ARRAY(s->field, T, n + 1);
    SBPD_PARTICLE_ARRAYS(FREE_ONE)
#undef FREE_ONE
    PD_FREE_ARRAY(s->partial, pd_real, s->chunks + 1);
    PD_FREE_ARRAY(s->qvol, pd_real, history_count(s, n));
    pd_state_bonds_free(&s->persist);
    PD_FREE_ARRAY(s->mat, pd_sbpd_material, (size_t)s->material_count + 1);
    PD_FREE_ARRAY(s->body_renews, uint8_t, (size_t)s->body_count + 1);
    PD_FREE_ARRAY(s->body_rho0, pd_real, (size_t)s->body_count + 1);
    pd_sbpd_contact_free(s);
    pd_sbpd_static_friction_free(s);
    pd_family_free(&s->spare);
    pd_family_free(&s->fam);
    pd_hash_grid_destroy(&s->grid);
    pd_neighbor_cache_destroy(&s->renewal_list);
    pd_free(s, sizeof *s);
}

pd_state_arrays* pd_sbpd_persistent(void* state) {
    return &((pd_sbpd_state*)state)->persist;
}

/* After a checkpoint was read: nothing derived to rebuild (the collisions' candidate pairs
 * were made stale by the reordering that brought the state into the checkpoint's order). */
pd_status pd_sbpd_restored(void* state, pd_world* w, pd_ckpt_reader* r, pd_error* err) {
    (void)state, (void)w, (void)r, (void)err;
    return PD_OK;
}

pd_status pd_sbpd_on_reorder(void* state, pd_world* w, const uint32_t* perm) {
    (void)w;
    pd_sbpd_state* s = state;
    pd_reorder r;
    pd_status st = pd_state_arrays_reorder(&s->persist, perm, &r);
    pd_reorder_end(&r);
    if (s->prm.contact)
        pd_contact_particles_reordered(&s->contact);
    return st;
}
