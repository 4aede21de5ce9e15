/* mpm set-up (Fang et al. 2019): materials, the grid's cell size, the per-particle state, the
 * auto step, checkpoints and reordering. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "constitutive/drucker_prager.h"
#include "constitutive/hencky_plasticity.h"
#include "constitutive/elastic_constants.h"
#include "core/error.h"
#include "scene/scene_json.h"
#include "contact/contact.h"
#include "parallel/parallel.h"
#include "solvers/mpm/mpm_internal.h"
#include "world/world.h"

pd_status pd_mpm_check_material(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err) {
    const pd_mpm_params* prm = params;
    const pd_mpm_material_params* mp = (const pd_mpm_material_params*)m->method_params;
    if (mp->elastic_energy != PD_MPM_HENCKY && m->plasticity != PD_PLASTICITY_NONE) {
        char at[PD_JPATH_MAX];
        pd_jpath_key(at, path, "elastic_energy");
        return pd_fail(err, PD_ERR_BAD_SCENE, at,
                       "mpm's plastic returns act on the Hencky strain, where StVK's stress is "
                       "linear (Klar et al. 2016): a plastic material takes elastic_energy "
                       "\"hencky\"");
    }
    if (prm->integrator == PD_MPM_ADMM && prm->anderson > 0 &&
        m->viscoelasticity == PD_VISCO_HENCKY_MAXWELL)
        return pd_fail(err, PD_ERR_BAD_SCENE, "solver.mpm.anderson",
                       "mpm's Anderson acceleration mixes the ADMM's F_E variables and the "
                       "friction split's, not the Maxwell branch's (F_N, y_N): with a "
                       "\"hencky_maxwell\" viscoelasticity set solver.mpm.anderson 0");
    pd_status st = pd_contact_check_friction(prm->contact, mp->contact_friction, path, err);
    if (st != PD_OK)
        return st;
    pd_mu_i rate;
    if (pd_mpm_rate_dependence(m, &rate) && !(pd_dp_material_cone(m).b > 0)) {
        char at[PD_JPATH_MAX];
        pd_jpath_key(at, path, "plasticity.rate_dependence");
        return pd_fail(err, PD_ERR_BAD_SCENE, at,
                       "mu(I) scales the friction of a cone: expected a friction_angle above 0 "
                       "(a cone of slope 0 has no mu_s for it to raise)");
    }
    if (pd_mpm_rate_dependence(m, &rate) && !(rate.span > 0)) {
        char at[PD_JPATH_MAX];
        pd_jpath_key(at, path, "plasticity.rate_dependence.mu_2");
        return pd_fail(err, PD_ERR_BAD_SCENE, at,
                       "expected mu_2 above mu_s = 3 b = %g, the friction the cone of "
                       "friction_angle and cone bears in shear (got %g)",
                       3 * pd_dp_material_cone(m).b, m->mui_mu_2);
    }
    pd_elastic el = pd_material_elastic(m);
    if (el.mu <= 0 || el.K <= 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "mpm needs a positive shear and bulk modulus (got mu %g Pa, K %g Pa)", el.mu,
                       el.K);
    return PD_OK;
}

int pd_mpm_rate_dependence(const pd_material_def* m, pd_mu_i* rate) {
    *rate = (pd_mu_i){0};
    if (m->plasticity != PD_PLASTICITY_DRUCKER_PRAGER || !m->rate_dependence)
        return 0;
    pd_real mu_s = 3 * pd_dp_material_cone(m).b;
    pd_real mu_2 = m->mui_mu_2 > 0 ? m->mui_mu_2 : mu_s + PD_MU_I_JOP_SPAN;
    rate->span = mu_2 - mu_s;
    rate->i0 = m->mui_i0;
    rate->d_root_rho = m->mui_grain_diameter * sqrt(m->density / m->mui_solid_fraction);
    return 1;
}

/* The grid's stress is a volume's: a one-layer shell or a rod has none, and a fixed body (ghost
 * particles that never move) would be dragged through the grid like any other; a collider is
 * the grid's obstacle. */
pd_status pd_mpm_check_body_material(const pd_scene* scene, int body, int material,
                                     const char* path, pd_error* err) {
    (void)material, (void)path;
    const pd_mpm_params* prm = scene->solver_params;
    static const char* const names[] = {"explicit", "admm", "newton", "lbfgs"};
    if (body == 1 && prm->integrator != PD_MPM_EXPLICIT)
        return pd_fail(err, PD_ERR_BAD_SCENE, "solver.mpm.integrator",
                       "mpm's %s integrator solves one velocity field for all bodies, on which "
                       "two bodies stick where they meet: they can neither bounce (contact) nor "
                       "pass through each other (contact false). A field per body runs in the "
                       "explicit integrator: use solver.mpm.integrator \"explicit\", or one body",
                       names[prm->integrator]);
    return pd_solver_require_volume_body(scene, body, "mpm", err);
}

/* The friction a no_slip collider bears against material m (grid_boundary.h's pd_grid_wall):
 * for a cohesionless Drucker-Prager sand, what the sand itself bears in shear along the wall,
 * 3 b of its cone sqrt(J2) <= b I1: sheared along a plane under Klar's return, which keeps the
 * volume, the stress is isotropic plus the shear (the plastic flow is the strain rate, a pure
 * shear), so sqrt(J2) = tau and I1 = 3 sigma_n (0.495 on the extension cone at 30 degrees,
 * 0.693 on the compression cone; Mohr-Coulomb's sin phi for plane strain's b = sin phi / 3).
 * INFINITY (held) for any other material (a cohesive one's a + b I1 is no ratio). With mu(I)
 * (`rate_dependence`) the sand bears up to mu_2 in shear, at the rate it shears at: the wall,
 * whose friction has no rate, bears mu_2 (it holds the sand's nodes below that ratio, and the
 * sand above them shears at its own mu(I); at mu_s a steady flow down a slope between mu_s and
 * mu_2 would slide on its floor as a block). */
static pd_real wall_friction(const pd_material_def* m) {
    pd_mu_i rate;
    if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER && m->cohesion == 0)
        return 3 * pd_dp_material_cone(m).b + (pd_mpm_rate_dependence(m, &rate) ? rate.span : 0);
    return INFINITY;
}

static pd_status materials(pd_mpm_state* s, const pd_world* w, pd_error* err) {
    s->material_count = w->scene->material_count;
    s->mat = PD_NEW_ARRAY(pd_mpm_material, (size_t)s->material_count + 1);
    s->wall_friction = PD_NEW_ARRAY(pd_real, (size_t)s->material_count + 1);
    if (!s->mat || !s->wall_friction)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "mpm's materials");
    for (int k = 0; k < s->material_count; ++k) {
        const pd_material_def* m = &w->scene->materials[k];
        s->wall_friction[k] = wall_friction(m);
        pd_elastic el = pd_material_elastic(m);
        pd_mpm_material* mm = &s->mat[k];
        const pd_mpm_material_params* mp = (const pd_mpm_material_params*)m->method_params;
        *mm = (pd_mpm_material){
            .energy = mp->elastic_energy, .mu = el.mu, .lambda = el.lambda, .density = m->density};
        mm->yield.mu = el.mu, mm->yield.kappa = el.K;
        if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER) {
            mm->plastic = 1, mm->yield.cone = pd_dp_material_cone(m);
            mm->volume_correction = pd_material_volume_correction(m, &pd_mpm_material_support);
            pd_mpm_rate_dependence(m, &mm->yield.rate); /* its dt: each step's (mpm_step) */
        } else if (m->plasticity == PD_PLASTICITY_VON_MISES)
            mm->plastic = 1, mm->yield.cone = pd_von_mises_cone(m->yield_stress);
        if (m->viscoelasticity == PD_VISCO_HENCKY_MAXWELL) { /* Eq. 6-7's constants */
            mm->maxwell = s->has_maxwell = 1;
            mm->branch.mu = m->maxwell_shear_modulus;
            mm->branch.lambda = m->maxwell_bulk_modulus - 2 * m->maxwell_shear_modulus / 3;
            mm->branch.deviatoric_viscosity = m->maxwell_deviatoric_viscosity;
            mm->branch.volumetric_viscosity = m->maxwell_volumetric_viscosity;
        }
        s->has_returns |= mm->plastic || mm->maxwell;
    }
    return PD_OK;
}

/* The per-particle state, each array only where a material or a pin needs it: F_N with the
 * Maxwell branch, the dilation with the volume correction, the plastic strain with a plastic
 * material, the pins' reactions and fits with pins (the published stress is allocated when
 * first asked for: mpm_publish_fields). The affine momenta of the transfer are written over C
 * (mpm_data.h). */
static pd_status allocate(pd_mpm_state* s, const pd_world* w, pd_error* err) {
    size_t n = s->cap + 1; /* one more: an empty world still has its arrays */
    int plastic = 0, corrected = 0;
    for (int k = 0; k < s->material_count; ++k)
        plastic |= s->mat[k].plastic, corrected |= s->mat[k].volume_correction;
    for (size_t i = 0; i < s->n; ++i)
        s->has_pins |= (w->particles.flags[i] & PD_P_PINNED) != 0;
    s->f = PD_NEW_ARRAY(pd_mat3, n);
    s->c = PD_NEW_ARRAY(pd_mat3, n);
    s->affine = s->c;
    s->volume0 = w->particles.volume; /* the world's, reordered and checkpointed with it */
    s->fn = s->has_maxwell ? PD_NEW_ARRAY(pd_mat3, n) : NULL;
    s->dilation = corrected ? PD_NEW_ARRAY(pd_real, n) : NULL;
    s->plastic_strain = plastic ? PD_NEW_ARRAY(pd_real, n) : NULL;
    s->pin_reaction = s->has_pins ? PD_NEW_ARRAY(pd_vec3, n) : NULL;
    s->pin_count = s->has_pins ? w->pin_count : 0;
    s->pin_fit = s->has_pins ? PD_NEW_ARRAY(pd_mpm_pin_fit, (size_t)s->pin_count + 1) : NULL;
    if (!s->f || !s->c || (s->has_maxwell && !s->fn) || (corrected && !s->dilation) ||
        (plastic && !s->plastic_strain) || (s->has_pins && (!s->pin_reaction || !s->pin_fit)) ||
        pd_family_allocate(&s->none, s->cap, 0) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "mpm's %zu particles", s->n);
    s->none.count = s->n; /* its offsets (zeros) hold cap + 1 */
    pd_state_arrays_init(&s->persist, &s->none);
    PD_STATE_PARTICLES(&s->persist, s, f);
    PD_STATE_PARTICLES(&s->persist, s, c);
    if (s->fn)
        PD_STATE_PARTICLES(&s->persist, s, fn);
    if (s->dilation)
        PD_STATE_PARTICLES(&s->persist, s, dilation);
    if (s->plastic_strain)
        PD_STATE_PARTICLES(&s->persist, s, plastic_strain);
    return PD_OK;
}

/* Bodies on the grid (grid_fields.h): with two or more a field per body, each with its
 * material's contact_friction (the explicit step; admm with two bodies is refused); one body
 * keeps fields.count 0: the grid's own field, at the cost of one. */
static pd_status contact_fields(pd_mpm_state* s, const pd_world* w, pd_error* err) {
    int bodies = w->scene->body_count;
    pd_grid_fields_init(&s->fields, 0);
    if (bodies < 2 || s->prm.integrator != PD_MPM_EXPLICIT)
        return PD_OK;
    s->field_friction = PD_NEW_ARRAY(pd_real, (size_t)bodies);
    s->field_wall_friction = PD_NEW_ARRAY(pd_real, (size_t)bodies);
    s->field_body_mass = PD_NEW_ARRAY(pd_real, (size_t)bodies);
    s->field_half_spacing = PD_NEW_ARRAY(pd_real, (size_t)bodies);
    s->v_grid = PD_NEW_ARRAY(pd_vec3, s->cap + 1);
    if (!s->field_friction || !s->field_wall_friction || !s->field_body_mass ||
        !s->field_half_spacing || !s->v_grid)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "mpm's %d contact fields", bodies);
    for (int b = 0; b < bodies; ++b) {
        const pd_material_def* m = &w->scene->materials[w->scene->bodies[b].material];
        s->field_friction[b] = ((const pd_mpm_material_params*)m->method_params)->contact_friction;
        s->field_wall_friction[b] = wall_friction(m);
        s->field_body_mass[b] = s->field_half_spacing[b] = 0;
    }
    const pd_particles* p = &w->particles;
    for (size_t i = 0; i < s->n; ++i) { /* the contact's normal and gap (grid_fields.h) */
        s->field_body_mass[p->body[i]] += p->mass[i];
        s->field_half_spacing[p->body[i]] =
            fmax(s->field_half_spacing[p->body[i]], p->spacing[i] / 2);
    }
    pd_grid_fields_init(&s->fields, bodies);
    return PD_OK;
}

/* The cell size: dx spacings of the finest body or emitter. */
static pd_real cell_size(const pd_mpm_state* s, const pd_world* w) {
    pd_real h = INFINITY;
    for (size_t i = 0; i < s->n; ++i)
        h = fmin(h, w->particles.spacing[i]);
    for (int k = 0; k < w->scene->emitter_count; ++k) /* the particles still to come */
        h = fmin(h, w->scene->emitters[k].spacing);
    return s->prm.dx * (isfinite(h) ? h : 1);
}

pd_status pd_mpm_create(pd_world* w, const void* params, void** state, pd_error* err) {
    pd_mpm_state* s = pd_calloc(1, sizeof *s);
    if (!s)
        return PD_ERR_OUT_OF_MEMORY;
    memcpy(&s->prm, params, sizeof s->prm);
    s->n = w->particles.count;
    s->cap = w->particles.capacity > s->n ? w->particles.capacity : s->n;
    s->particles = &w->particles;
    pd_status st = materials(s, w, err);
    if (st == PD_OK)
        st = allocate(s, w, err);
    if (st != PD_OK) {
        pd_mpm_destroy(s);
        return st;
    }
    for (size_t i = 0; i < s->n; ++i) { /* the sampled state is the rest state */
        s->f[i] = pd_m3_identity();
        if (s->fn)
            s->fn[i] = pd_m3_identity();
    }
    if ((st = contact_fields(s, w, err)) != PD_OK) {
        pd_mpm_destroy(s);
        return st;
    }
    s->dx = cell_size(s, w);
    pd_grid_init(&s->grid, s->dx);
    pd_real bound = pd_mpm_max_time_step(s, w);
    if (!w->def.dt_auto && s->prm.integrator == PD_MPM_EXPLICIT && w->def.dt > bound) {
        /* the message reads s: written before s is freed */
        st = pd_fail(err, PD_ERR_BAD_SCENE, "time.dt",
                     "mpm's explicit step is stable up to %.3g s here (solver.mpm.cfl %g of dx = "
                     "%.3g m over the fastest speed plus the P-wave speed); got %.3g s: give a "
                     "smaller dt, \"auto\", or solver.mpm.integrator \"admm\"",
                     bound, s->prm.cfl, s->dx, w->def.dt);
        pd_mpm_destroy(s);
        return st;
    }
    w->bond_count = 0;
    *state = s;
    return PD_OK;
}

void pd_mpm_destroy(void* state) {
    pd_mpm_state* s = state;
    size_t n = s->cap + 1;
    PD_FREE_ARRAY(s->f, pd_mat3, n);
    PD_FREE_ARRAY(s->c, pd_mat3, n);
    PD_FREE_ARRAY(s->fn, pd_mat3, n);
    PD_FREE_ARRAY(s->dilation, pd_real, n);
    PD_FREE_ARRAY(s->v_grid, pd_vec3, n);
    PD_FREE_ARRAY(s->plastic_strain, pd_real, n);
    PD_FREE_ARRAY(s->pin_reaction, pd_vec3, n);
    pd_mpm_pin_free(s);
    PD_FREE_ARRAY(s->pin_fit, pd_mpm_pin_fit, (size_t)s->pin_count + 1);
    PD_FREE_ARRAY(s->stress, pd_real, 6 * n);
    PD_FREE_ARRAY(s->mat, pd_mpm_material, (size_t)s->material_count + 1);
    PD_FREE_ARRAY(s->wall_friction, pd_real, (size_t)s->material_count + 1);
    PD_FREE_ARRAY(s->field_friction, pd_real, (size_t)s->fields.count);
    PD_FREE_ARRAY(s->field_wall_friction, pd_real, (size_t)s->fields.count);
    PD_FREE_ARRAY(s->field_body_mass, pd_real, (size_t)s->fields.count);
    PD_FREE_ARRAY(s->field_half_spacing, pd_real, (size_t)s->fields.count);
    pd_grid_fields_free(&s->fields);
    pd_mpm_admm_free(s);
    pd_mpm_optimiser_free(s);
    s->none.count = s->cap; /* as allocated */
    pd_family_free(&s->none);
    pd_grid_free(&s->grid);
    pd_free(s, sizeof *s);
}

/* The explicit step's bound: a particle moves at most cfl dx a step, at its speed plus the
 * P-wave speed sqrt((lambda + 2 mu) / rho) of its material (the stiffest signal the grid
 * carries; a compressed particle's density is rho / det F, so the wave speed there is taken at
 * rho det F). */
typedef struct bound_job {
    pd_mpm_state* s;
    const pd_particles* p;
    size_t grain;
    int speed_only; /* the implicit velocity CFL (auto_step_cfl): the particles' speed alone */
} bound_job;

/* Each chunk's fastest signal: a particle's speed plus its material's P-wave speed. */
static void bound_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const bound_job* job = ctx;
    const pd_mpm_state* s = job->s;
    pd_real fastest = 0;
    for (size_t i = begin; i < end; ++i) {
        const pd_mpm_material* m = &s->mat[job->p->material[i]];
        pd_real j = pd_m3_det(s->f[i]);
        pd_real rho = m->density * (j > 0 ? fmin(j, 1) : 1);
        pd_real modulus = m->lambda + 2 * m->mu; /* P-wave modulus, with the Maxwell branch's */
        if (m->maxwell)
            modulus += m->branch.lambda + 2 * m->branch.mu;
        pd_real speed = pd_v3_len(job->p->vel[i]) + (job->speed_only ? 0 : sqrt(modulus / rho));
        fastest = speed > fastest ? speed : fastest; /* a NaN speed: stability's to find */
    }
    job->s->bound_chunk[begin / job->grain] = fastest;
}

/* The fastest signal over the particles: speed plus P-wave speed, or the speed alone. */
static pd_real fastest_signal(pd_mpm_state* s, const pd_world* w, int speed_only) {
    /* at most PD_MPM_BOUND_CHUNKS chunks, whose maxima any order combines exactly */
    size_t grain = (s->n + PD_MPM_BOUND_CHUNKS - 1) / PD_MPM_BOUND_CHUNKS;
    bound_job job = {s, &w->particles, grain > 1024 ? grain : 1024, speed_only};
    size_t chunks = (s->n + job.grain - 1) / job.grain;
    pd_parallel_for(s->n, job.grain, bound_range, &job);
    pd_real fastest = 0;
    for (size_t c = 0; c < chunks; ++c)
        fastest = s->bound_chunk[c] > fastest ? s->bound_chunk[c] : fastest;
    return fastest;
}

pd_real pd_mpm_max_time_step(void* state, const pd_world* w) {
    pd_mpm_state* s = state;
    pd_real fastest = fastest_signal(s, w, 0);
    pd_real bound = fastest > 0 ? s->prm.cfl * s->dx / fastest : INFINITY;
    if (s->prm.integrator == PD_MPM_EXPLICIT)
        return bound;
    /* implicit: "auto" takes auto_step_factor times the explicit bound, and with auto_step_cfl
     * at most the velocity CFL c dx / max |v_p| (the world takes PD_AUTO_DT_SAFETY of what this
     * returns, within a frame) */
    bound *= s->prm.auto_step_factor;
    if (s->prm.auto_step_cfl > 0) {
        pd_real speed = fastest_signal(s, w, 1);
        if (speed > 0)
            bound = fmin(bound, s->prm.auto_step_cfl * s->dx / speed);
    }
    return bound;
}

pd_state_arrays* pd_mpm_persistent(void* state) {
    return &((pd_mpm_state*)state)->persist;
}

/* After a checkpoint was read: the grid is rebuilt every step, nothing else is derived. */
pd_status pd_mpm_restored(void* state, pd_world* w, struct pd_ckpt_reader* r, pd_error* err) {
    (void)state, (void)w, (void)r, (void)err;
    return PD_OK;
}

pd_status pd_mpm_on_reorder(void* state, pd_world* w, const uint32_t* perm) {
    (void)w;
    pd_mpm_state* s = state;
    pd_reorder r;
    pd_status st = pd_state_arrays_reorder(&s->persist, perm, &r);
    pd_reorder_end(&r);
    return st;
}

/* Emitted particles enter at rest in their own frame: F_E = F_N = I (Fang 2019's sampled state),
 * no affine velocity, no dilation or plastic strain, no pin; their mass joins their body's
 * contact field. */
pd_status pd_mpm_on_emit(void* state, pd_world* w, size_t first, pd_error* err) {
    (void)err;
    pd_mpm_state* s = state;
    const pd_particles* p = &w->particles;
    for (size_t i = first; i < p->count; ++i) {
        s->f[i] = pd_m3_identity();
        s->c[i] = pd_m3_zero();
        if (s->fn)
            s->fn[i] = pd_m3_identity();
        if (s->dilation)
            s->dilation[i] = 0;
        if (s->plastic_strain)
            s->plastic_strain[i] = 0;
        if (s->pin_reaction)
            s->pin_reaction[i] = pd_v3(0, 0, 0);
        if (s->fields.count) {
            s->field_body_mass[p->body[i]] += p->mass[i];
            s->field_half_spacing[p->body[i]] =
                fmax(s->field_half_spacing[p->body[i]], p->spacing[i] / 2);
        }
    }
    s->n = s->none.count = p->count;
    return PD_OK;
}

size_t pd_mpm_bytes_per_particle(const pd_scene* scene, double bond_fraction) {
    (void)bond_fraction;
    /* with two bodies or more, a field per body on each node: mass, velocity, moment, extent */
    size_t fields = scene->body_count >= 2 ? (size_t)scene->body_count : 0;
    int maxwell = 0;
    for (int k = 0; k < scene->material_count; ++k)
        maxwell |= scene->materials[k].viscoelasticity == PD_VISCO_HENCKY_MAXWELL;
    /* F, C (the affine momenta over it), F_N with the Maxwell branch, the dilation, the plastic
     * strain, the published stress (V0 is the world's volume), the grid's offset, base and bin
     * (the weights follow from the offset), and about one node per particle (mass, velocity,
     * bin start); with fields each particle's velocity from its field */
    return fields * (2 * sizeof(pd_real) + 2 * sizeof(pd_vec3)) + (fields ? sizeof(pd_vec3) : 0) +
           (2 + (size_t)maxwell) * sizeof(pd_mat3) + 8 * sizeof(pd_real) + sizeof(pd_vec3) +
           2 * sizeof(uint32_t) + sizeof(pd_real) + sizeof(pd_vec3) + sizeof(uint32_t);
}
