/* Collisions (Wang et al. 2025 Eq. 25; Algorithm 1 lines 17-20, "self and inter-phase"). The
 * pairs are the core's (src/contact: particles of different bodies, unbonded parts of one
 * elastic body, and any two grains of sand; found through its Verlet list); the response is the
 * paper's position correction: each pair closer than its contact distance (pair_distance) is
 * pushed apart along its line by the depth, particle i by the share w_i / (w_i + w_j), w = 1 / m
 * (0 for a pinned or fixed particle; pairs with a fixed body's particles are sbpd_boundary.c's
 * instead, from its phi). The paper takes the depth from boundary particles' SDF values; between
 * two moving particles it gives none, so we take the pair's own gap. Jacobi rounds (each
 * particle gathers its pairs' pushes and moves by their mean: no race, the same bits on any
 * thread count), up to solver.iterations of them, until one whose deepest pair is below epsilon
 * (applied too). Each push carries the pair's friction (Eq. 26-27 with c_b the materials'
 * contact_friction, as a cut of the pair's relative tangential motion: pd_sbpd_friction_cut;
 * none between grains of one sand, whose friction is its continuum's); Eq. 28 follows. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "parallel/parallel.h"
#include "solvers/sbpd/sbpd_data.h"
#include "world/world.h"

pd_status pd_sbpd_contact_init(pd_sbpd_state* s, const pd_world* w, pd_error* err) {
    if (!s->prm.contact)
        return PD_OK;
    int m = s->material_count;
    s->contact_modulus = PD_NEW_ARRAY(pd_real, (size_t)m + 1);
    s->contact_friction = PD_NEW_ARRAY(pd_real, (size_t)m + 1);
    s->contact_sand = PD_NEW_ARRAY(uint8_t, (size_t)m + 1);
    s->push = PD_NEW_ARRAY(pd_vec3, s->n + 1);
    if (!s->contact_modulus || !s->contact_friction || !s->contact_sand || !s->push)
        return PD_ERR_OUT_OF_MEMORY;
    for (int k = 0; k < m; ++k) {
        const pd_sbpd_material_params* mp =
            (const pd_sbpd_material_params*)w->scene->materials[k].method_params;
        s->contact_modulus[k] = 1, s->contact_sand[k] = (uint8_t)s->mat[k].sand;
        s->contact_friction[k] = mp->contact_friction;
    }
    pd_contact_def def = pd_default_contact_def();
    def.horizon = s->prm.horizon;
    def.modulus = s->contact_modulus;
    def.renews = s->contact_sand;
    def.grains = s->contact_sand; /* Algorithm 1 line 18's self collisions */
    pd_status st = pd_contact_init(&s->contact, &def, &w->particles);
    s->contact.keep_candidates = 1; /* on_reorder and a pin letting go say when it is stale */
    return st == PD_OK ? pd_sbpd_boundary_init(s, w, err) : st;
}

void pd_sbpd_contact_free(pd_sbpd_state* s) {
    if (!s->prm.contact)
        return;
    pd_contact_free(&s->contact);
    pd_sbpd_boundary_free(&s->boundary);
    PD_FREE_ARRAY(s->contact_modulus, pd_real, (size_t)s->material_count + 1);
    PD_FREE_ARRAY(s->contact_friction, pd_real, (size_t)s->material_count + 1);
    PD_FREE_ARRAY(s->contact_sand, uint8_t, (size_t)s->material_count + 1);
    PD_FREE_ARRAY(s->push, pd_vec3, s->n + 1);
}

static pd_real inverse_mass(const pd_sbpd_state* s, uint32_t i) {
    return (s->flags[i] & PD_P_CONSTRAINED) ? 0 : 1 / s->mass[i];
}

pd_vec3 pd_sbpd_friction_cut(pd_real mu, pd_vec3 u, pd_vec3 n, pd_real depth) {
    if (!(mu > 0))
        return pd_v3(0, 0, 0);
    pd_vec3 ut = pd_v3_madd(u, -pd_v3_dot(u, n), n);
    pd_real len = pd_v3_len(ut), most = mu * depth;
    return pd_v3_scale(ut, len <= most ? 1 : most / len);
}

/* The contact distance of pair ij. Particles of two bodies touch at d_c = (s_i + s_j) / 2, as
 * a particle touches a boundary at phi = s / 2. Two grains of one sand collide (Algorithm 1 line
 * 18's self collisions) at the paper's threshold, ||x_i - x_j|| < r with the r of |phi| < r:
 * half a spacing, d_c / 2. They are points of one continuum, with no surface between them:
 * their collisions only stop a grain sinking into its neighbours, which the per-step renewal
 * of the families forgets (measured without: a deposit's grains down to 0.07 mm apart, 12 %
 * of them within 0.45 spacing; the hourglass's sand packing into its funnel ever denser). At
 * d_c the pairs carried the sand's load in place of its stress (deposits ran flat whatever the
 * friction angle unless their pushes counted as pressure in the yield check) and the hourglass
 * clogged: an arch over the neck held 436 of 1600 grains, and the flow started at a quarter
 * of its later rate. */
static pd_real pair_distance(const pd_sbpd_state* s, uint32_t i, uint32_t j) {
    pd_real dc = pd_contact_distance(&s->contact, i, j);
    int one_sand = s->sand[i] && s->sand[j] && s->contact.p->body[i] == s->contact.p->body[j];
    return one_sand ? 0.5 * dc : dc;
}

/* The cut of pair ij: its relative motion since the step's start, mu = sqrt(mu_i mu_j) of the
 * materials' contact_friction (the paper writes Eq. 27 for boundaries, on a particle's own
 * velocity; between two moving bodies we take the relative motion, so momentum is kept). */
static pd_vec3 pair_friction_cut(const pd_sbpd_state* s, uint32_t i, uint32_t j, pd_vec3 n,
                                 pd_real depth) {
    if (s->sand[i] && s->sand[j] && s->contact.p->body[i] == s->contact.p->body[j])
        return pd_v3(0, 0, 0); /* one sand's grains: its friction angle is the continuum's */
    pd_real mu = sqrt(s->contact_friction[s->material[i]] * s->contact_friction[s->material[j]]);
    const pd_vec3* x = s->x0;
    pd_vec3 u = pd_v3_sub(pd_v3_sub(s->y[i], x[i]), pd_v3_sub(s->y[j], x[j]));
    return pd_sbpd_friction_cut(mu, u, n, depth);
}

/* Eq. 25 for i's pairs: the mean of w_i / (w_i + w_j) (d_ij - d) n_ij over them (d_ij their
 * contact distance), less the same share of their friction cuts, and of the push from the rigid
 * boundary particles' phi (sbpd_boundary.c), which take the place of i's pairs with them; the
 * largest depth of the chunk into partial. */
static void push_kernel(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    pd_sbpd_state* s = ctx;
    const pd_contact* c = &s->contact;
    int rigid_by_phi = s->boundary.count > 0;
    pd_real deepest = 0;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 sum = pd_v3(0, 0, 0);
        uint32_t pushes = 0;
        pd_real wi = inverse_mass(s, (uint32_t)i);
        pd_real depth_b = pd_sbpd_boundary_push(s, (uint32_t)i, s->y[i], s->x0[i], &sum);
        if (depth_b > 0) {
            deepest = fmax(deepest, depth_b), ++pushes;
            if (s->touched) /* Eq. 28 looks at it after the rounds */
                s->touched[i] |= PD_SBPD_TOUCHED_BOUNDARY;
        }
        for (uint32_t k = c->near.offsets[i]; k < c->near.offsets[i + 1]; ++k) {
            uint32_t j = c->near.indices[k];
            if (!(c->pair_k[k] > 0)) /* no pair at the last evaluation */
                continue;
            if (rigid_by_phi && (s->flags[j] & PD_P_FIXED))
                continue;
            pd_vec3 d = pd_v3_sub(s->y[i], s->y[j]);
            pd_real len = pd_v3_len(d), wj = inverse_mass(s, j);
            if (!(len > 0) || wi + wj <= 0)
                continue;
            pd_vec3 n = pd_v3_scale(d, 1 / len);
            pd_real depth = pair_distance(s, (uint32_t)i, j) - len;
            if (!(depth > 0))
                continue;
            deepest = fmax(deepest, depth);
            if (s->touched && s->sand[i] && s->sand[j]) /* Eq. 28 looks at it */
                s->touched[i] |= PD_SBPD_TOUCHED_GRAIN;
            pd_vec3 cut = pair_friction_cut(s, (uint32_t)i, j, n, depth);
            sum = pd_v3_madd(sum, wi / (wi + wj), pd_v3_sub(pd_v3_scale(n, depth), cut));
            ++pushes;
        }
        s->push[i] = pushes ? pd_v3_scale(sum, 1.0 / pushes) : pd_v3(0, 0, 0);
    }
    s->partial[begin / PD_SBPD_GRAIN] = deepest;
}

static void apply_kernel(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    pd_sbpd_state* s = ctx;
    for (size_t i = begin; i < end; ++i)
        s->y[i] = pd_v3_add(s->y[i], s->push[i]);
}

/* Eq. 28 after the collisions (Algorithm 1 line 23): y* the step's end before them (saved in
 * s->projected), y after them, x the step's start; a particle whose collisions pushed it back
 * along most of its motion, (y - y*) . (x - y*) >= eta |y* - x|^2, stays at x. Against the
 * rigid boundary particles the correction is read along the boundary's normal (the paper
 * applies Eq. 28 before the friction of Eq. 26-27, which our pushes carry: read in full, a
 * sliding block's friction counted as a push back and froze it, measured). Between grains it is
 * read in full, as the paper writes it: the stacking it names (a grain sunk into the one below
 * it and pushed back stays). Needed while grains collided at a full spacing (without, a resting
 * deposit's grains kept sliding off each other); at half a spacing no test shows its effect
 * (without: slopes 10.0, 15.8, 19.8 degrees for 10.1, 16.0, 20.2; the hourglass 1.038 for
 * 0.921; the floors' creep the same): a candidate for removal. */
static void collision_static_friction(pd_sbpd_state* s, const pd_vec3* x) {
    for (size_t i = 0; i < s->n; ++i) {
        if (!s->touched[i])
            continue;
        pd_vec3 to_x = pd_v3_sub(x[i], s->projected[i]), back = pd_v3_sub(s->y[i], s->projected[i]);
        pd_real along = pd_v3_dot(back, to_x);
        if (s->touched[i] & PD_SBPD_TOUCHED_BOUNDARY) {
            pd_vec3 n = pd_sbpd_boundary_normal(s, (uint32_t)i, s->y[i]);
            along = pd_v3_dot(back, n) * pd_v3_dot(n, to_x);
        }
        if (along >= s->prm.static_friction * pd_v3_dot(to_x, to_x))
            s->y[i] = x[i];
    }
}

pd_status pd_sbpd_collide(pd_sbpd_state* s, const pd_vec3* x) {
    if (!s->prm.contact)
        return PD_OK;
    s->x0 = x;
    int sticks = s->touched != NULL;
    if (sticks) {
        memcpy(s->projected, s->y, s->n * sizeof *s->y);
        memset(s->touched, 0, s->n);
    }
    size_t constrained = 0; /* a pin let go: pairs of two pinned particles become eligible */
    for (size_t i = 0; i < s->n; ++i)
        constrained += (s->flags[i] & PD_P_CONSTRAINED) != 0;
    if (constrained != s->constrained)
        pd_contact_particles_reordered(&s->contact);
    s->constrained = constrained;
    for (int round = 0; round < s->prm.iterations; ++round) {
        pd_real energy;
        pd_status st = pd_contact_evaluate(&s->contact, s->y, &energy); /* the pairs at y */
        if (st != PD_OK)
            return st;
        pd_parallel_for(s->n, PD_SBPD_GRAIN, push_kernel, s);
        pd_real deepest = 0;
        for (size_t k = 0; k < s->chunks; ++k)
            deepest = fmax(deepest, s->partial[k]);
        if (!(deepest > 0))
            break;
        /* a round whose deepest pair is below epsilon is still applied: skipped, a resting
         * particle's contact (gravity sinks it g dt^2 a step) was never resolved, nor its
         * friction, and a deposit on a rigid floor crept 14 mm in 0.4 s (now none) */
        pd_parallel_for(s->n, PD_SBPD_GRAIN, apply_kernel, s);
        if (deepest < s->prm.tolerance)
            break;
    }
    if (sticks)
        collision_static_friction(s, x);
    return PD_OK;
}

pd_status pd_sbpd_static_friction_init(pd_sbpd_state* s) {
    if (!(s->prm.static_friction > 0))
        return PD_OK;
    s->projected = PD_NEW_ARRAY(pd_vec3, s->n + 1);
    s->touched = PD_NEW_ARRAY(uint8_t, s->n + 1);
    return s->projected && s->touched ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

void pd_sbpd_static_friction_free(pd_sbpd_state* s) {
    PD_FREE_ARRAY(s->projected, pd_vec3, s->n + 1);
    PD_FREE_ARRAY(s->touched, uint8_t, s->n + 1);
}

/* Eq. 28 (Sec. 6): y* the step's end before the colliders (s->y), y its projection out of
 * them, x the step's start; a particle the projection moved whose motion is mostly into the
 * surface, (y - y*) . (x - y*) >= eta |y* - x|^2, stays at x. The world projects the others and
 * applies the colliders' Coulomb friction after the step (Eq. 26-27's role). */
void pd_sbpd_static_friction(pd_sbpd_state* s, const pd_world* w) {
    s->frozen = 0;
    if (!(s->prm.static_friction > 0) || w->colliders.count == 0)
        return;
    memcpy(s->projected, s->y, s->n * sizeof *s->y);
    memset(s->touched, 0, s->n);
    pd_colliders_project(&w->colliders, s->n, s->projected, NULL, w->contact_skip, s->touched,
                         s->step->dt);
    const pd_vec3* x = w->step_start;
    for (size_t i = 0; i < s->n; ++i) {
        if (!s->touched[i])
            continue;
        pd_vec3 to_x = pd_v3_sub(x[i], s->y[i]), back = pd_v3_sub(s->projected[i], s->y[i]);
        if (pd_v3_dot(back, to_x) >= s->prm.static_friction * pd_v3_dot(to_x, to_x)) {
            s->y[i] = x[i];
            ++s->frozen;
        }
    }
}
