/* State-based peridynamics for viscoelastic solids (Wang et al. 2025, Peridynamics-based
 * simulation of viscoelastic solids and granular materials, Sec. 3-4 and Algorithm 1).
 *
 * A step (Algorithm 1, elastic phase): the bond histories take the step's start (Eq. 9), the
 * particles advect, then up to iter_max passes each compute F (Eq. 1), the force densities of
 * Eq. 10-11 with the effective moduli gamma of the bond histories, and move every particle by
 * dt^2 a of Eq. 12, until no particle moves more than epsilon. The velocity is the step's
 * motion. Colliders are the world's (projection and Coulomb friction after the step).
 *
 * The sand phase (lines 9-14) runs in the same passes for Drucker-Prager particles, whose F is
 * projected onto the yield surface and whose force is that of Eq. 15's stress (sbpd_sand.c).
 *
 * Beyond the paper (docs/methods/sbpd.md): gravity in the advection (Algorithm 1 applies it
 * nowhere), Eq. 12 read as dx = dt^2 a (it prints rho a = h^2 sum ...), the weights normalised
 * and mu, lambda scaled so that a body shows the E and nu it is given, and a dilatation term
 * kv / 2 (J - 1)^2 with its own Prony histories for nu above 1/4. */
#include <math.h>
#include <string.h>

#include "core/timer.h"
#include "parallel/parallel.h"
#include "solvers/sbpd/sbpd_data.h"
#include "world/world.h"

typedef struct sbpd_ctx {
    pd_sbpd_state* s;
    const pd_vec3* y;
    int histories; /* F for Eq. 9 only: sand grains (no histories) are skipped */
} sbpd_ctx;

/* 1 - q / W of Eq. 10-11 for one mode. Where W vanishes the paper's gamma is singular (a bond
 * unloaded through its rest length with a history q > 0): the factor is kept at -1 or above, a
 * mode then pushing back at most as hard as it pulled when fresh. */
static pd_real mode_factor(pd_real q, pd_real W) {
    if (q <= 0)
        return 1;
    return W > q ? 1 - q / W : fmax(-1, 1 - q / W);
}

/* gamma = c_inf + sum_k c_k (1 - q_k / W) (Eq. 10 and 11; the dilatation's likewise). */
static pd_real effective_modulus(const pd_real* c, int modes, const pd_real* q, pd_real W) {
    pd_real g = c[0];
    for (int k = 0; k < modes; ++k)
        g += c[k + 1] * mode_factor(q[k], W);
    return g;
}

/* The stretch term gamma s of Eq. 10 / 11 for one of a bond's parts: c the terms' moduli, q
 * the histories, s the stretch the force acts on and h the one the histories follow (Yhat's
 * for the deviatoric part). squared: gamma = c_inf + sum c_k (1 - q_k / h^2) (Eq. 10-11);
 * stretch: gamma s = c_inf s + sum c_k (s - q_k) (Eq. 5 per bond, q following s). */
static pd_real mode_stress(const pd_real* c, int modes, const pd_real* q, pd_real s, pd_real h,
                           int history) {
    if (history == PD_SBPD_HISTORY_STRETCH) {
        pd_real t = c[0] * s;
        for (int k = 0; k < modes; ++k)
            t += c[k + 1] * (s - q[k]);
        return t;
    }
    return effective_modulus(c, modes, q, h * h) * s;
}

/* J F^-T: the cofactor matrix, defined for any F. */
static pd_mat3 cofactor(pd_mat3 F) {
    pd_mat3 c;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            int a1 = (a + 1) % 3, a2 = (a + 2) % 3, b1 = (b + 1) % 3, b2 = (b + 2) % 3;
            c.m[a][b] = F.m[a1][b1] * F.m[a2][b2] - F.m[a1][b2] * F.m[a2][b1];
        }
    return c;
}

/* F_i = (Y * X)(X * X)^-1 (Eq. 1); and M_i = dPsi_vol/dF K^-1 with Psi_vol = gamma_vol / 2
 * (J - 1)^2, whose force density on bond ij is w M_i xi (the correspondence form). */
static void gradient_kernel(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const sbpd_ctx* c = ctx;
    pd_sbpd_state* s = c->s;
    const pd_family* f = &s->fam;
    for (size_t i = begin; i < end; ++i) {
        if (s->sand[i]) {
            if (!c->histories) /* its return mapping, one SVD: not for a history update */
                pd_sbpd_sand_stress(s, c->y, (uint32_t)i, NULL);
            continue;
        }
        s->F[i] = s->M[i] = pd_m3_zero();
        if (s->planar[i] || (s->flags[i] & PD_P_FIXED)) /* a fixed body's bonds are its own */
            continue;
        s->F[i] = pd_family_deformation_gradient(f, (uint32_t)i, s->w, s->volume, c->y,
                                                 s->kinv[i]); /* Eq. 1 */
        const pd_sbpd_material* m = &s->mat[s->material[i]];
        if (m->kv0 <= 0)
            continue;
        pd_real J = pd_m3_det(s->F[i]);
        pd_real p = mode_stress(m->kv, m->modes, s->qvol + i * (size_t)s->modes, J - 1, J - 1,
                                s->prm.history); /* dPsi/dJ */
        s->M[i] = pd_m3_mul(pd_m3_scale(cofactor(s->F[i]), p), s->kinv[i]);
    }
}

void pd_sbpd_deformation_gradients(pd_sbpd_state* s, const pd_vec3* y) {
    sbpd_ctx c = {s, y, 0};
    pd_parallel_for(s->n, PD_SBPD_GRAIN, gradient_kernel, &c);
}

/* T_ij of Eq. 10 + 11 for i's bond b, plus the dilatation's w M_i xi: the force density i's
 * state puts on the bond (pulling i towards j when stretched). */
static pd_vec3 bond_force(const pd_sbpd_state* s, const pd_vec3* y, uint32_t i, uint32_t b) {
    const pd_family* f = &s->fam;
    const pd_sbpd_material* m = &s->mat[s->material[i]];
    if (s->sand[i]) /* the sand phase's correspondence force (sbpd_sand.c) */
        return pd_v3_scale(pd_m3_mulv(s->M[i], f->xi[b]), s->w[b]);
    pd_vec3 X = pd_family_xi(f, i, b), Y = pd_v3_sub(y[f->j[b]], y[i]);
    pd_real lx = pd_v3_len(X), ly = pd_v3_len(Y);
    pd_vec3 Yhat = s->planar[i] ? Y : pd_m3_mulv(s->F[i], X);         /* Sec. 4: Yhat = F xi */
    pd_real lh = pd_v3_len(Yhat), sy = ly / lx - 1, sh = lh / lx - 1; /* Eq. 7's stretches */
    const pd_real* qd = pd_sbpd_history(s->qdev, b, s->modes);
    const pd_real* qi = pd_sbpd_history(s->qiso, b, s->modes);
    int hist = s->prm.history;
    pd_real tdev = mode_stress(m->mu, m->modes, qd, sy, sh, hist);     /* Eq. 10 */
    pd_real tiso = mode_stress(m->lambda, m->modes, qi, sy, sy, hist); /* Eq. 11 */
    pd_real k = s->w[b] / lx;
    pd_vec3 t = pd_v3(0, 0, 0);
    if (lh > 0)
        t = pd_v3_scale(Yhat, 2 * tdev * k / lh);
    if (ly > 0)
        t = pd_v3_madd(t, tiso * k / ly, Y);
    return pd_v3_madd(t, s->w[b], pd_m3_mulv(s->M[i], X));
}

/* T_ij of every bond of i, from i's state. */
static void force_kernel(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const sbpd_ctx* c = ctx;
    pd_sbpd_state* s = c->s;
    const pd_family* f = &s->fam;
    for (size_t i = begin; i < end; ++i) {
        int fixed = (s->flags[i] & PD_P_FIXED) != 0; /* bonded to its fixed body only */
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
            s->t[b] = fixed ? pd_v3(0, 0, 0) : bond_force(s, c->y, (uint32_t)i, b);
    }
}

/* a_i = sum_j (T_ij - T_ji) V_j / rho_i (Eq. 12), T_ji the opposite bond's: a gather, so
 * every particle writes only its own entry. */
static void acceleration_kernel(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const sbpd_ctx* c = ctx;
    pd_sbpd_state* s = c->s;
    const pd_family* f = &s->fam;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 sum = pd_v3(0, 0, 0);
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
            sum = pd_v3_madd(sum, s->volume[f->j[b]], pd_v3_sub(s->t[b], s->t[f->rev[b]]));
        s->acc[i] = pd_v3_scale(sum, s->volume[i] / s->mass[i]);
    }
}

/* One pass: y += dt^2 a for the free particles; the largest move of each chunk. */
static void move_kernel(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const sbpd_ctx* c = ctx;
    pd_sbpd_state* s = c->s;
    pd_real h2 = s->step->dt * s->step->dt, largest = 0;
    for (size_t i = begin; i < end; ++i) {
        if (s->flags[i] & PD_P_CONSTRAINED)
            continue;
        pd_vec3 dx = pd_v3_scale(s->acc[i], h2);
        s->y[i] = pd_v3_add(s->y[i], dx);
        largest = fmax(largest, pd_v3_len(dx));
    }
    s->partial[begin / PD_SBPD_GRAIN] = largest;
}

/* Eq. 9 at the step's start: q^{n+1} = alpha q^n + (1 - alpha) W^n for every bond and mode,
 * W^n the bond's W^dev and W^iso at the positions the step starts from (s->F holds their F);
 * the dilatation's (J - 1)^2 per particle likewise. With solver.history = stretch the
 * stretches themselves (|F xi| / |xi| - 1, |Y| / |xi| - 1, J - 1) in place of their squares. */
static void history_kernel(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const sbpd_ctx* c = ctx;
    pd_sbpd_state* s = c->s;
    const pd_family* f = &s->fam;
    for (size_t i = begin; i < end; ++i) {
        const pd_sbpd_material* m = &s->mat[s->material[i]];
        if (s->sand[i] || (s->flags[i] & PD_P_FIXED)) /* no histories, or never deformed */
            continue;
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            pd_vec3 X = pd_family_xi(f, (uint32_t)i, b), Y = pd_v3_sub(c->y[f->j[b]], c->y[i]);
            pd_real lx = pd_v3_len(X);
            pd_real lh = s->planar[i] ? pd_v3_len(Y) : pd_v3_len(pd_m3_mulv(s->F[i], X));
            pd_real sd = lh / lx - 1, si = pd_v3_len(Y) / lx - 1;
            if (s->prm.history == PD_SBPD_HISTORY_SQUARED)
                sd *= sd, si *= si; /* Eq. 9: W^dev, W^iso */
            pd_real* qd = pd_sbpd_history(s->qdev, b, s->modes);
            pd_real* qi = pd_sbpd_history(s->qiso, b, s->modes);
            for (int k = 0; k < m->modes; ++k) {
                qd[k] = m->alpha[k] * qd[k] + (1 - m->alpha[k]) * sd;
                qi[k] = m->alpha[k] * qi[k] + (1 - m->alpha[k]) * si;
            }
        }
        pd_real J = s->planar[i] ? 1 : pd_m3_det(s->F[i]), v = J - 1;
        if (s->prm.history == PD_SBPD_HISTORY_SQUARED)
            v *= v;
        pd_real* qv = s->qvol + i * (size_t)s->modes;
        for (int k = 0; k < m->modes; ++k)
            qv[k] = m->alpha[k] * qv[k] + (1 - m->alpha[k]) * v;
    }
}

static void update_histories(pd_sbpd_state* s, const pd_vec3* pos) {
    if (s->modes == 0)
        return;
    sbpd_ctx c = {s, pos, 1};
    pd_parallel_for(s->n, PD_SBPD_GRAIN, gradient_kernel, &c);
    pd_parallel_for(s->n, PD_SBPD_GRAIN, history_kernel, &c);
}

/* Algorithm 1 line 2, with gravity (the paper applies it nowhere): y = x + dt v + dt^2 g;
 * pinned and fixed particles stay where the world put them. */
static void advect(pd_sbpd_state* s, const pd_particles* p) {
    pd_vec3 g = pd_v3_scale(s->step->gravity, s->step->dt * s->step->dt);
    for (size_t i = 0; i < s->n; ++i)
        s->y[i] = (p->flags[i] & PD_P_CONSTRAINED)
                      ? p->pos[i]
                      : pd_v3_add(pd_v3_madd(p->pos[i], s->step->dt, p->vel[i]), g);
}

/* Lines 3-8: passes of Eq. 12 until none moves a particle more than epsilon; returns the
 * passes taken and the last one's largest move in *last. */
static int relax(pd_sbpd_state* s, pd_real* last) {
    sbpd_ctx c = {s, s->y, 0};
    int pass = 0;
    *last = 0;
    while (pass < s->prm.iterations) {
        pd_parallel_for(s->n, PD_SBPD_GRAIN, gradient_kernel, &c);
        pd_parallel_for(s->n, PD_SBPD_GRAIN, force_kernel, &c);
        pd_parallel_for(s->n, PD_SBPD_GRAIN, acceleration_kernel, &c);
        pd_parallel_for(s->n, PD_SBPD_GRAIN, move_kernel, &c);
        ++pass;
        *last = 0;
        for (size_t k = 0; k < s->chunks; ++k)
            *last = fmax(*last, s->partial[k]);
        if (*last < s->prm.tolerance)
            break;
    }
    return pass;
}

/* Line 22: the velocity is the step's motion. A pinned particle's force is its internal force
 * m a at the last pass (the world's pin reaction). */
static void finish(pd_sbpd_state* s, pd_particles* p) {
    for (size_t i = 0; i < s->n; ++i) {
        if (p->flags[i] & PD_P_CONSTRAINED) {
            p->force[i] = pd_v3_scale(s->acc[i], s->mass[i]);
            continue;
        }
        p->vel[i] = pd_v3_scale(pd_v3_sub(s->y[i], p->pos[i]), s->step->inv_dt);
        p->pos[i] = s->y[i];
    }
}

/* Algorithm 1 in the stages peridot_bench reports: sand_start, the sand's step start (its
 * families renewed, weights, shape tensors, hardening and elastic F: lines 24-26 of the last
 * step); passes, the histories, advection and passes (lines 1-15); collisions, between
 * particles and with the boundary particles, each with its Eq. 28 (lines 17-20); friction,
 * Eq. 28 against the world's colliders (line 23). The velocity update is the bench's "other". */
static const char* const k_stages[] = {"sand_start", "passes", "collisions", "friction"};

static pd_status advance(pd_sbpd_state* s, pd_world* w, pd_step_stats* stats) {
    pd_particles* p = s->step->particles;
    double t0 = pd_now();
    if (s->has_sand) {
        pd_status st = pd_sbpd_sand_begin_step(s, w);
        if (st != PD_OK)
            return st;
    }
    double t1 = pd_now();
    update_histories(s, s->step->step_start); /* W^n: before the world moved the pins */
    advect(s, p);
    pd_real last;
    int passes = relax(s, &last);
    double t2 = pd_now();
    if (s->prm.contact) { /* lines 17-20 */
        pd_status st = pd_contact_begin_step(&s->contact, s->step->step_start, s->step->dt);
        if (st == PD_OK)
            st = pd_sbpd_collide(s, s->step->step_start);
        if (st != PD_OK)
            return st;
    }
    double t3 = pd_now();
    pd_sbpd_static_friction(s, w); /* line 23 */
    double t4 = pd_now();
    finish(s, p);
    pd_real spacing = 0;
    for (size_t i = 0; i < s->n; ++i)
        spacing = fmax(spacing, p->spacing[i]);
    stats->iterations = passes;
    stats->residual = spacing > 0 ? last / spacing : 0;
    const double seconds[] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3};
    pd_step_stats_stages(stats, k_stages, seconds, 4);
    stats->bonds = s->fam.bond_count;
    return PD_OK;
}

static pd_status sbpd_step(void* state, pd_world* w, const pd_step_context* ctx,
                           pd_step_stats* stats) {
    pd_sbpd_state* s = state;
    s->step = ctx;
    pd_status st = advance(s, w, stats);
    s->step = NULL;
    return st;
}

static int any_sand(const pd_scene* scene) {
    for (int m = 0; m < scene->material_count; ++m)
        if (scene->materials[m].plasticity == PD_PLASTICITY_DRUCKER_PRAGER)
            return 1;
    return 0;
}

/* Bonds: j, rev, X, w, the force scratch and two histories per mode (3 assumed), about 4.2 r^3
 * of them (r in spacings); per particle four 3x3 matrices (K^-1, F, M, Fe), two vectors, the
 * flags, the plastic strain, Eq. 24's factor and the dilatation's histories; the rows the hash
 * grid keeps for the sand's renewals and the contact's searches (about the bonds' pairs each),
 * and the renewals' list (the bonds' pairs and the offsets, a quarter spare). */
static size_t sbpd_bytes_per_particle(const pd_scene* scene, double bond_fraction) {
    const pd_sbpd_params* prm = scene->solver_params;
    size_t bonds = (size_t)(bond_fraction * 4.2 * prm->horizon * prm->horizon * prm->horizon) + 1;
    size_t per_bond = 2 * sizeof(uint32_t) + 2 * sizeof(pd_vec3) + (1 + 2 * 3) * sizeof(pd_real);
    double rows = (any_sand(scene) + (prm->contact != 0)) * pd_hash_grid_kept_row_bytes(bonds);
    if (any_sand(scene))
        rows += 1.25 * (bonds + 1) * sizeof(uint32_t);
    return bonds * per_bond + 4 * sizeof(pd_mat3) + 2 * sizeof(pd_vec3) + 2 * sizeof(uint8_t) +
           6 * sizeof(pd_real) + (size_t)ceil(rows);
}

/* What sbpd publishes beyond the world's attributes. */
static const pd_field_info k_fields[] = {
    {PD_ATTR_PLASTIC_STRAIN,
     {"plastic_strain"},
     1,
     PD_FIELD_REAL,
     "1",
     "Sand (Sec. 5): the sum over the steps of the return mapping's plastic strain, |ln s_tr - ln "
     "s| over the principal stretches of the trial and the projected F at the step's end; 0 for "
     "other materials."},
};

static const void* sbpd_publish_fields(void* state, int k) {
    pd_sbpd_state* s = state;
    return k == 0 ? s->plastic : NULL;
}

static const pd_material_support k_materials = {.plasticity = 1u << PD_PLASTICITY_DRUCKER_PRAGER,
                                                .viscoelasticity = 1u << PD_VISCO_PRONY};

const pd_solver_vtable pd_sbpd_solver = {
    .name = "sbpd",
    .paper = "Wang et al. 2025, Peridynamics-based Simulation of Viscoelastic Solids and Granular "
             "Materials",
    .params = &pd_sbpd_param_table,
    .material_params = &pd_sbpd_material_table,
    .check_material = pd_sbpd_check_material,
    .materials = &k_materials,
    .fields = k_fields,
    .field_count = 1,
    .publish_fields = sbpd_publish_fields,
    .create = pd_sbpd_create,
    .destroy = pd_sbpd_destroy,
    .step = sbpd_step,
    .on_reorder = pd_sbpd_on_reorder,
    .persistent = pd_sbpd_persistent,
    .restored = pd_sbpd_restored,
    .reserve_bonds = pd_sbpd_reserve_bonds,
    .max_time_step = pd_sbpd_max_time_step,
    .on_time_step = pd_sbpd_on_time_step,
    .bytes_per_particle = sbpd_bytes_per_particle,
    .contact_in_solve = 0,
    .releases_pins = 1,
    .capabilities = PD_CAP_ELASTIC | PD_CAP_SHELL | PD_CAP_CONTACT | PD_CAP_COLLIDER_FRICTION,
};
