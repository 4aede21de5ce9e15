/* xpbi's hourglass constraint (beyond Yu et al. 2024; docs/methods/xpbi.md, "Departures"): one
 * more XPBD constraint per particle, inside Alg. 1's iterations beside the elastic one, on the
 * part of the neighbours' relative positions that the particle's deformation gradient does not
 * predict (after Ganzenmueller 2015, "An hourglass control algorithm for Lagrangian Smooth
 * Particle Hydrodynamics", Eq. 18-20, posed as an energy instead of his projected pair force).
 *
 * Eq. 11's gradient cannot see a displacement that alternates layer by layer; under tension
 * such a mode grows (the corrected kernel of the displaced neighbourhood reads its growth as a
 * compression), so F stops following the positions. With the candidate positions
 * x~ = x^n + dt v and the candidate F~_p = (I + dt L_p(v)) F_p^n of Eq. 9, for p's neighbour b
 * of the same body with reference offset X_pb = X_b - X_p (the positions of the first step,
 * where F = I: the sampled ones unless a caller moved the particles before stepping),
 *   eps_pb = x~_b - x~_p - F~_p X_pb,
 *   Psi_h,p = 1/2 sum_b k_pb |eps_pb|^2,  k_pb = beta E V_b^0 W(|X_pb|) / |X_pb|^2,
 *   C_h,p = sqrt(2 Psi_h,p), alpha_h = 1 / V_p^0 (the form of Eq. 6).
 * eps = 0 for any affine motion x = A X + c (F~ X = A X: F^{n+1} = (I + dt L) F^n integrates the
 * exact L of a linear field, Eq. 10), so a rigid rotation or a uniform stretch feels nothing.
 * With y_pb = F_p^n X_pb, a_pb = k_pb eps_pb, M = sum_b a_pb y_pb^T and g_c = V_c L_p grad W_c
 * (Eq. 11: d(F~ X_pb)/dx~_c = (g_c . y_pb) I):
 *   grad_c C_h = (a_pc - M g_c) / C_h,   grad_p C_h = -sum_c grad_c C_h,
 * so the constraint keeps linear momentum.
 *
 * The updated reference (a flowing material). Eq. 22 keeps the elastic F^E = Z(F^tr); the
 * positions follow the whole deformation F^E F^P, and F^E X_pb stops predicting x_b - x_p as soon
 * as the material yields. For a plastic material F_ref replaces F in y_pb = F_ref,p X_pb: the
 * gradient fitted at the step's start to p's neighbours' positions against the reference with
 * the corrected kernel of Eq. 10 taken in the reference (fitted_gradient; after Ganzenmueller's
 * total-Lagrangian F). It is exact for an affine map, so an affine plastic flow (a sheared slab,
 * a bar stretched past yield) feels nothing, and blind to the alternation, which the constraint
 * still holds; a smooth flow that is not affine leaves only its curvature, about h^2 grad grad u,
 * in eps, never its history. (Integrating Eq. 22's (I + dt L) without the returns instead let a
 * 3 % departure of the sheared slab's velocity profile from the linear accumulate into eps: the
 * slab then carried 19 % more than tau_Y.) Once the neighbours have moved far (a fit's Green
 * strain |F^T F - I| / 2 reaches hourglass_renewal) the reference is renewed for every particle,
 * X = x^n and F_ref = I (a new reference configuration: the alternation present is kept, not
 * undone). An elastic material keeps F_ref = F (Eq. 22's products since the reference, bit for
 * bit). Drucker-Prager gets no constraint (k = 0): a cohesionless flow rearranges its grains at
 * the particle scale.
 *
 * The returned pairs (hourglass_relaxation plastic, in place of the fit): the constraint as a
 * Maxwell element relaxing as the material does. Each pair keeps its reference offset y_pb from
 * step to step (a new pair starts at x_b^n - x_p^n, without misfit); after Eq. 22 it is carried
 * as F is, y' = (I + dt L) y, and its misfit eps = x_pb^{n+1} - y' scaled by q_p, the part of the
 * deviatoric elastic strain the particle's return kept (y'' = x_pb^{n+1} - q_p eps). In a steady
 * flow the constraint then resists a non-affine rate with the material's own secant viscosity
 * (docs/methods/xpbi.md). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "parallel/parallel.h"
#include "solvers/xpbi/xpbi_data.h"
#include "sph/kernels.h"

/* Below this C_h (sqrt(Pa)) the constraint holds: its gradient has no direction. */
#define XPBI_HG_FLOOR 1e-12

static pd_status reserve(pd_xpbi_state* s, size_t entries) {
    void* array = s->hg;
    int ok = pd_reserve_scratch(&array, &s->hg_capacity, entries, sizeof(pd_xpbi_hourglass));
    s->hg = array;
    array = s->hg_grad;
    ok = ok && pd_reserve_scratch(&array, &s->hg_grad_capacity, entries, sizeof(pd_vec3));
    s->hg_grad = array;
    return ok ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

typedef struct prepare_job {
    pd_xpbi_state* s;
    const pd_particles* p;
} prepare_job;

/* hourglass_relaxation plastic: the reference offset y_pb the last step left for the pair p, b
 * (pd_xpbi_hourglass_return), or the step-start offset x_b^n - x_p^n (no misfit) for a pair it
 * did not have. */
static pd_vec3 returned_offset(const pd_xpbi_state* s, uint32_t p, uint32_t b) {
    if (s->hg_old_valid)
        for (uint32_t e = s->hg_old_offsets[p]; e < s->hg_old_offsets[p + 1]; ++e)
            if (s->hg_old_index[e] == b)
                return s->hg_old_y[e];
    const pd_vec3* x = s->step->step_start;
    return pd_v3_sub(x[b], x[p]);
}

/* A particle whose pairs' misfits are returned (hg_returned): y_pb from returned_offset, k_pb
 * from the step-start distance (the reference is the current configuration less the misfit). */
static void prepare_returned(pd_xpbi_state* s, const pd_particles* pt, uint32_t p, pd_real stiff) {
    const pd_vec3* x = s->step->step_start;
    pd_real H = 2 * s->r;
    for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
        uint32_t b = s->near.indices[e];
        pd_real d2 = pd_v3_len2(pd_v3_sub(x[b], x[p])), w = 0;
        if (pt->body[b] == pt->body[p] && d2 > 0)
            w = pd_sph_wendland_c2(sqrt(d2), H);
        s->hg[e].y = returned_offset(s, p, b);
        s->hg[e].k = w > 0 ? stiff * s->volume0[b] * w / d2 : 0;
    }
}

/* Per entry: y = F_p^n X_pb and k_pb (0 for another body, outside the support k = 2 r in the
 * reference, or where p's material has no hourglass stiffness). */
static void prepare_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const prepare_job* job = ctx;
    pd_xpbi_state* s = job->s;
    const pd_particles* pt = job->p;
    pd_real H = 2 * s->r;
    for (size_t p = begin; p < end; ++p) {
        pd_real stiff = s->mat[pt->material[p]].hourglass;
        if (s->mat[pt->material[p]].hg_returned && s->step) {
            prepare_returned(s, pt, (uint32_t)p, stiff);
            continue;
        }
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
            uint32_t b = s->near.indices[e];
            pd_vec3 x = pd_v3_sub(s->x_ref[b], s->x_ref[p]);
            pd_real d2 = pd_v3_len2(x), w = 0;
            if (stiff > 0 && pt->body[b] == pt->body[p] && d2 > 0)
                w = pd_sph_wendland_c2(sqrt(d2), H);
            s->hg[e].y = pd_m3_mulv(s->f_ref[p], x);
            s->hg[e].k = w > 0 ? stiff * s->volume0[b] * w / d2 : 0;
        }
    }
}

typedef struct fit_job {
    pd_xpbi_state* s;
    const pd_particles* p;
    pd_real* most; /* per chunk: the largest Green strain |F^T F - I| / 2 of a fit */
} fit_job;

/* F_fit,p = B A^+ with A = sum_b V_b^0 (W'(|X_pb|) / |X_pb|) X_pb X_pb^T and B the same with
 * x_b^n - x_p^n for the first X_pb, over p's neighbours b of its body within the reference
 * support (the corrected kernel gradient of Eq. 10 taken in the reference): exact for x = G X
 * + c, blind to the alternation as Eq. 11 is. */
static pd_mat3 fitted_gradient(const pd_xpbi_state* s, const pd_particles* pt, uint32_t p) {
    const pd_vec3* x = s->step->step_start;
    pd_real H = 2 * s->r;
    pd_mat3 a = pd_m3_zero(), b = pd_m3_zero();
    for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
        uint32_t j = s->near.indices[e];
        pd_vec3 X = pd_v3_sub(s->x_ref[j], s->x_ref[p]);
        pd_real r = pd_v3_len(X);
        if (pt->body[j] != pt->body[p] || !(r > 0) || r >= H)
            continue;
        pd_real w = s->volume0[j] * pd_sph_wendland_c2_derivative(r, H) / r;
        pd_xpbi_add_outer(&a, w, X, X);
        pd_xpbi_add_outer(&b, w, pd_v3_sub(x[j], x[p]), X);
    }
    return pd_m3_mul(b, pd_xpbi_correction(a, s->prm.svd_cutoff));
}

/* F_ref of the plastic particles with the constraint from their positions (fitted_gradient),
 * and per chunk the largest Green strain of those fits. */
static void fit_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const fit_job* job = ctx;
    pd_xpbi_state* s = job->s;
    pd_real most = -1;
    for (size_t p = begin; p < end; ++p) {
        const pd_xpbi_material* m = &s->mat[job->p->material[p]];
        if (!m->plastic || !(m->hourglass > 0) || m->hg_returned)
            continue;
        pd_mat3 f = fitted_gradient(s, job->p, (uint32_t)p);
        pd_mat3 c = pd_m3_mul(pd_m3_transpose(f), f);
        pd_real g2 = 0;
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k)
                g2 += pow(c.m[r][k] - (r == k), 2);
        s->f_ref[p] = f;
        most = fmax(most, 0.5 * sqrt(g2));
    }
    job->most[begin / PD_XPBI_GRAIN] = most;
}

/* The fits of the plastic particles; returns the largest Green strain (-1 without any). */
static pd_real fit_plastic(pd_xpbi_state* s, const pd_particles* p) {
    int plastic = 0;
    for (int k = 0; k < s->material_count; ++k)
        plastic |= s->mat[k].plastic && s->mat[k].hourglass > 0 && !s->mat[k].hg_returned;
    if (!plastic)
        return -1;
    fit_job job = {s, p, s->sweep_h2};
    pd_parallel_for(s->n, PD_XPBI_GRAIN, fit_range, &job);
    pd_real most = -1;
    for (size_t k = 0; k < (s->n + PD_XPBI_GRAIN - 1) / PD_XPBI_GRAIN; ++k)
        most = fmax(most, job.most[k]);
    return most;
}

/* The reference: the first step's positions (F = I there); a plastic particle's F_ref fitted
 * to its neighbours' positions, and every reference renewed from the step's start once a fit's
 * Green strain reaches hourglass_renewal (above). */
static void update_reference(pd_xpbi_state* s, const pd_particles* p) {
    if (s->have_ref && !(fit_plastic(s, p) >= s->prm.hourglass_renewal))
        return;
    if (s->have_ref) {
        for (size_t i = 0; i < s->n; ++i)
            s->f_ref[i] = pd_m3_identity();
        s->renewals++;
    }
    memcpy(s->x_ref, s->step->step_start, s->n * sizeof *s->x_ref);
    s->have_ref = 1;
}

pd_status pd_xpbi_hourglass_prepare(pd_xpbi_state* s, const pd_particles* p) {
    if (!(s->prm.hourglass > 0) || s->n == 0)
        return PD_OK;
    if (s->step)
        update_reference(s, p);
    pd_status st = reserve(s, s->near.offsets[s->n]);
    if (st != PD_OK)
        return st;
    prepare_job job = {s, p};
    pd_parallel_for(s->n, PD_XPBI_GRAIN, prepare_range, &job);
    return PD_OK;
}

pd_real pd_xpbi_hourglass_constraint(const pd_xpbi_state* s, const pd_vec3* x0, uint32_t p,
                                     const pd_vec3* v, pd_real dt, pd_vec3* grad, pd_vec3* grad_p,
                                     pd_real* norm) {
    return pd_xpbi_hourglass_constraint_at(s, x0, p, v, dt, pd_xpbi_velocity_gradient(s, p, v),
                                           grad, grad_p, norm);
}

pd_real pd_xpbi_hourglass_constraint_at(const pd_xpbi_state* s, const pd_vec3* x0, uint32_t p,
                                        const pd_vec3* v, pd_real dt, pd_mat3 grad_v, pd_vec3* grad,
                                        pd_vec3* grad_p, pd_real* norm) {
    pd_xpbi_v4 l[3], m[3] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}, xp;
    for (int j = 0; j < 3; ++j) /* dt L_p (Eq. 11) by columns */
        l[j] = (pd_xpbi_v4){grad_v.m[0][j] * dt, grad_v.m[1][j] * dt, grad_v.m[2][j] * dt, 0};
    pd_xpbi_v4_of(&xp, pd_v3_madd(x0[p], dt, v[p]));
    pd_real psi2 = 0; /* 2 Psi_h */
    uint32_t first = s->near.offsets[p], last = s->near.offsets[p + 1];
    const uint32_t* index = s->near.indices;
    for (uint32_t e = first; e < last; ++e) {
        const pd_xpbi_hourglass* h = &s->hg[e];
        if (h->k == 0) {
            grad[e - first] = pd_v3(0, 0, 0); /* a_pb = 0: the second pass reads no k */
            continue;
        }
        pd_xpbi_v4 xb, y, ly;
        pd_xpbi_v4_of(&xb, pd_v3_madd(x0[index[e]], dt, v[index[e]]));
        pd_xpbi_v4_of(&y, h->y);
        pd_xpbi_v4_mulv(&ly, l, h->y.x, h->y.y, h->y.z);
        pd_xpbi_v4 eps = (xb - xp) - (y + ly); /* eps = x~_pb - (I + dt L) y */
        pd_xpbi_v4 a = eps * h->k;             /* a_pb */
        grad[e - first] = pd_v3(a[0], a[1], a[2]);
        psi2 += h->k * pd_xpbi_v4_len2(&eps);
        m[0] += a * h->y.x, m[1] += a * h->y.y, m[2] += a * h->y.z; /* M += a_pb y^T */
    }
    pd_real c = sqrt(psi2), sum = 0;
    pd_xpbi_v4 gp = {0, 0, 0, 0};
    if (c > XPBI_HG_FLOOR)
        for (uint32_t e = first; e < last; ++e) {
            pd_vec3 ge = s->nb_g[e];
            pd_xpbi_v4 a, mg;
            pd_xpbi_v4_of(&a, grad[e - first]);
            pd_xpbi_v4_mulv(&mg, m, ge.x, ge.y, ge.z);
            pd_xpbi_v4 g = (a - mg) * (1 / c);
            grad[e - first] = pd_v3(g[0], g[1], g[2]);
            gp -= g;
            sum += s->inv_mass[index[e]] * pd_xpbi_v4_len2(&g);
        }
    *grad_p = pd_v3(gp[0], gp[1], gp[2]);
    *norm = sum + s->inv_mass[p] * pd_xpbi_v4_len2(&gp);
    return c;
}

typedef struct return_job {
    pd_xpbi_state* s;
    const pd_particles* p;
} return_job;

/* Per entry of a returned particle p, with x^{n+1} = x^n + dt v^{n+1} and L the velocity
 * gradient of v^{n+1} (Eq. 11, as Eq. 22 takes it): y' = (I + dt L) y (the reference carried as
 * F is), eps = x_pb^{n+1} - y', and y'' = x_pb^{n+1} - q_p eps with q_p = hg_keep: the misfit
 * keeps the part of the elastic strain the particle's return kept. Another particle's entries get
 * x_pb^{n+1} (no misfit), so that a particle whose material changes to a returned one finds
 * offsets. */
static void return_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const return_job* job = ctx;
    pd_xpbi_state* s = job->s;
    const pd_vec3* x0 = s->step->step_start;
    const pd_vec3* v = job->p->vel;
    pd_real dt = s->step->dt;
    for (size_t p = begin; p < end; ++p) {
        int returned = s->mat[job->p->material[p]].hg_returned;
        pd_mat3 l =
            returned ? pd_m3_scale(pd_xpbi_velocity_gradient(s, (uint32_t)p, v), dt) : pd_m3_zero();
        pd_vec3 xp = pd_v3_madd(x0[p], dt, v[p]);
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
            uint32_t b = s->near.indices[e];
            pd_vec3 x = pd_v3_sub(pd_v3_madd(x0[b], dt, v[b]), xp);
            if (!returned) {
                s->hg_old_y[e] = x;
                continue;
            }
            pd_vec3 y = pd_v3_add(s->hg[e].y, pd_m3_mulv(l, s->hg[e].y));
            s->hg_old_y[e] = pd_v3_madd(x, -s->hg_keep[p], pd_v3_sub(x, y));
        }
    }
}

pd_status pd_xpbi_hourglass_return(pd_xpbi_state* s, const pd_particles* p) {
    int any = 0;
    for (int k = 0; k < s->material_count; ++k)
        any |= s->mat[k].hg_returned;
    if (!any || !(s->prm.hourglass > 0) || s->n == 0)
        return PD_OK;
    size_t entries = s->near.offsets[s->n];
    void* array = s->hg_old_y;
    int ok = pd_reserve_scratch(&array, &s->hg_old_y_capacity, entries, sizeof(pd_vec3));
    s->hg_old_y = array;
    array = s->hg_old_index;
    ok = ok && pd_reserve_scratch(&array, &s->hg_old_index_capacity, entries, sizeof(uint32_t));
    s->hg_old_index = array;
    if (!ok)
        return PD_ERR_OUT_OF_MEMORY;
    return_job job = {s, p};
    pd_parallel_for(s->n, PD_XPBI_GRAIN, return_range, &job);
    memcpy(s->hg_old_offsets, s->near.offsets, (s->n + 1) * sizeof *s->hg_old_offsets);
    memcpy(s->hg_old_index, s->near.indices, entries * sizeof *s->hg_old_index);
    s->hg_old_valid = 1;
    return PD_OK;
}
