/* xpbi: Yu, Li, Lan, Yang, Jiang 2024, "XPBI: Position-Based Dynamics with Smoothing Kernels
 * Handles Continuum Inelasticity". This file holds the step of Alg. 1: velocity-based XPBD with
 * one constraint per particle C_p = sqrt(2 Psi(F_p)) (Eq. 6) on StVK with Hencky strain (Eq. 3),
 * F_p updated Lagrangian from the corrected SPH velocity gradient (Eq. 9-11), the plastic return
 * inside the iterations (Eq. 14), multipliers and velocities by coloured Gauss-Seidel (Eq. 17-19,
 * Sec. 4.3) or Jacobi, optionally damped (XPBD's constraint damping, Sec. 6), the point-point
 * distance constraints (Eq. 21), contact between bodies (beyond the paper) and the colliders at the
 * candidate positions x^n + dt v with Coulomb friction (Alg. 1's loop over C_i, Sec. 4.4), XSPH
 * (Eq. 20), and F and x from the same post-XSPH velocity (Eq. 22). The step's start (neighbours,
 * L_p, colours) is in xpbi_neighbors.c. */
#include <math.h>
#include <string.h>

#include "boundary/collider.h"
#include "constitutive/energies.h"
#include "core/timer.h"
#include "math/svd3.h"
#include "parallel/parallel.h"
#include "solvers/xpbi/xpbi_data.h"
#include "sph/kernels.h"
#include "world/world.h"

/* Below this C (sqrt(Pa)) the constraint holds: its gradient P / C has no direction (Alg. 1:
 * "if C_p != 0"). */
#define XPBI_C_FLOOR 1e-12

/* F = U diag(s) V^T (s signed as pd_svd3 gives it) through the return Z of Eq. 14 where the
 * material is plastic: the Hencky strain's return (src/constitutive/hencky_plasticity.h), or
 * Herschel-Bulkley's viscoplastic one over the step dt (herschel_bulkley.h: Yue 2015's rate,
 * the paper's Sec. 3.3 "any return mapping"), or non-associated Cam-clay's at the particle's
 * alpha = ln J^P (cam_clay.h; the new alpha to *alpha_out when not NULL), on |s|, the sign
 * kept. */
static pd_vec3 plastic_stretches(const pd_xpbi_material* m, pd_real dt, pd_vec3 s, pd_real alpha,
                                 pd_real* alpha_out) {
    if (!m->plastic)
        return s;
    pd_vec3 a = pd_v3(fabs(s.x), fabs(s.y), fabs(s.z)), z;
    pd_real unused;
    if (m->plastic == 3)
        pd_cam_clay_return(&m->clay, a, alpha, &z, alpha_out ? alpha_out : &unused);
    else if (m->plastic == 2)
        pd_herschel_bulkley_return(&m->flow, dt, a, &z);
    else
        pd_hencky_return(&m->yield, a, &z, NULL);
    return pd_v3(z.x, z.y, s.z < 0 ? -z.z : z.z);
}

/* Psi of Eq. 3 depends on |s|: dPsi/ds_a = tau_a(|s|) / s_a, so P = U diag(tau_a / s_a) V^T
 * holds for an inverted F (s_2 < 0) too. */
static pd_real constraint_of_stretches(const pd_xpbi_material* m, pd_mat3 u, pd_vec3 s, pd_mat3 v,
                                       pd_mat3* dcdf) {
    pd_vec3 a = pd_v3(fmax(fabs(s.x), 1e-300), fmax(fabs(s.y), 1e-300), fmax(fabs(s.z), 1e-300));
    pd_real psi = pd_hencky_energy(m->lambda, m->mu, a); /* Eq. 3 */
    pd_real c = psi > 0 ? sqrt(2 * psi) : 0;             /* Eq. 6 */
    if (!(c > XPBI_C_FLOOR)) {
        *dcdf = pd_m3_zero();
        return c;
    }
    pd_vec3 tau = pd_hencky_kirchhoff(m->lambda, m->mu, a);
    pd_vec3 signed_s = pd_v3(a.x, a.y, s.z < 0 ? -a.z : a.z);
    *dcdf = pd_m3_scale(pd_principal_piola(u, signed_s, v, tau), 1 / c); /* dC/dF = P / C */
    return c;
}

pd_real pd_xpbi_constraint(const pd_xpbi_material* m, pd_mat3 f, pd_mat3* dcdf) {
    pd_mat3 u, v;
    pd_vec3 s;
    pd_svd3(f, &u, &s, &v);
    return constraint_of_stretches(m, u, s, v, dcdf);
}

/* Below this smallest stretch the constraint takes the full SVD's path (constraint_of_stretches):
 * left_constraint divides by the stretches. */
#define XPBI_LEFT_MIN_STRETCH 1e-6

/* C and dC/dF from F's left singular vectors u and stretches s >= 0 alone (pd_left_singular3),
 * z = Z(s) the returned ones (z = s where elastic). With F = U diag(s) V^T and the return's
 * F' = U diag(z) V^T (Eq. 14), P(F') = U diag(tau(z) / z) V^T = U diag(tau(z) / (z s)) U^T F
 * exactly (V^T = diag(1 / s) U^T F; for an inverted F the signs of z_a and s_a cancel), so V is
 * not needed: about half the SVD's work. An isotropic function of F F^T: the same for any
 * order or sign of U's columns. */
static pd_real left_constraint(const pd_xpbi_material* m, pd_mat3 u, pd_vec3 s, pd_vec3 z,
                               pd_mat3 f, pd_mat3* dcdf) {
    pd_vec3 tau;
    pd_real psi = pd_hencky_energy_kirchhoff(m->lambda, m->mu, z, &tau); /* Eq. 3 */
    pd_real c = psi > 0 ? sqrt(2 * psi) : 0;                             /* Eq. 6 */
    if (!(c > XPBI_C_FLOOR)) {
        *dcdf = pd_m3_zero();
        return c;
    }
    pd_vec3 d = pd_v3(tau.x / (z.x * s.x * c), tau.y / (z.y * s.y * c), tau.z / (z.z * s.z * c));
    *dcdf = pd_xpbi_m3_mul(pd_m3_from_eigen(u, d), f); /* dC/dF = P / C */
    return c;
}

/* C_p and dC/dF at F by the full SVD (a stretch near 0: left_constraint would divide by it),
 * alpha the particle's ln J^P (Cam-clay's return). */
static pd_real svd_constraint(const pd_xpbi_state* s, const pd_xpbi_material* m, pd_mat3 f,
                              pd_real dt, pd_real alpha, pd_mat3* dcdf) {
    pd_mat3 u, w;
    pd_vec3 sv;
    pd_svd3(f, &u, &sv, &w);
    if (s->prm.plasticity == PD_XPBI_PLASTIC_IMPLICIT)
        sv = plastic_stretches(m, dt, sv, alpha, NULL); /* Eq. 14: F^(k+1) = Z(F^E,tr(v^(k))) */
    return constraint_of_stretches(m, u, sv, w, dcdf);
}

/* pd_xpbi_particle_constraint at the velocity gradient l (Eq. 11) given. */
static pd_real constraint_at_gradient(const pd_xpbi_state* s, const pd_particles* pt, uint32_t p,
                                      pd_mat3 l, pd_real dt, pd_mat3* m_out) {
    const pd_xpbi_material* m = &s->mat[pt->material[p]];
    pd_mat3 grow = pd_m3_scale(l, dt);
    for (int k = 0; k < 3; ++k)
        grow.m[k][k] += 1;
    pd_mat3 f = pd_xpbi_m3_mul(grow, s->f[p]); /* Eq. 9 */
    pd_mat3 u, dcdf;
    pd_vec3 sv;
    /* from the last iteration's U (this step's; the identity at its first): a sweep or two
     * fewer, the same U and s to the sweeps' tolerance (checkpoints keep no U: a step's first
     * iteration starts afresh) */
    pd_left_singular3_near(f, s->warm ? s->u_near[p] : pd_m3_identity(), &u, &sv);
    s->u_near[p] = u;
    pd_real c;
    if (fmin(fmin(sv.x, sv.y), sv.z) > XPBI_LEFT_MIN_STRETCH) { /* not NaN either */
        pd_vec3 z = sv;
        if (s->prm.plasticity == PD_XPBI_PLASTIC_IMPLICIT)
            z = plastic_stretches(m, dt, sv, s->log_jp[p], NULL); /* Eq. 14: Z(F^E,tr(v^(k))) */
        c = left_constraint(m, u, sv, z, f, &dcdf);
    } else
        c = svd_constraint(s, m, f, dt, s->log_jp[p], &dcdf);
    *m_out = pd_xpbi_m3_mul(dcdf, pd_m3_transpose(s->f[p])); /* Eq. 12 without V_b L_p grad W_b */
    return c;
}

pd_real pd_xpbi_particle_constraint(const pd_xpbi_state* s, const pd_particles* pt, uint32_t p,
                                    const pd_vec3* v, pd_real dt, pd_mat3* m_out) {
    return constraint_at_gradient(s, pt, p, pd_xpbi_velocity_gradient(s, p, v), dt, m_out);
}

/* Eq. 4-5 at the stretches s (signed as pd_svd3 gives them) with the Hencky strain e_a = ln |s_a|:
 * C_mu = |e| (Eq. 4) with dC_mu/ds_a = e_a / (C_mu s_a), C_lambda = tr e (Eq. 5) with
 * dC_lambda/ds_a = 1 / s_a; dC/dF = U diag(dC/ds) V^T. C_mu's direction is undefined at 0
 * (skipped below the floor, as Eq. 6's); C_lambda's is not. */
static pd_real split_of_stretches(int which, pd_mat3 u, pd_vec3 s, pd_mat3 v, pd_mat3* dcdf) {
    pd_vec3 a = pd_v3(fmax(fabs(s.x), 1e-300), fmax(fabs(s.y), 1e-300), fmax(fabs(s.z), 1e-300));
    pd_vec3 e = pd_v3(log(a.x), log(a.y), log(a.z));
    pd_vec3 signed_s = pd_v3(a.x, a.y, s.z < 0 ? -a.z : a.z);
    if (which == PD_XPBI_C_LAMBDA) {
        *dcdf = pd_principal_piola(u, signed_s, v, pd_v3(1, 1, 1));
        return e.x + e.y + e.z;
    }
    pd_real c = pd_v3_len(e);
    *dcdf =
        c > XPBI_C_FLOOR ? pd_principal_piola(u, signed_s, v, pd_v3_scale(e, 1 / c)) : pd_m3_zero();
    return c;
}

/* pd_xpbi_split_constraint at the velocity gradient l (Eq. 11) given. */
static pd_real split_at_gradient(const pd_xpbi_state* s, const pd_particles* pt, uint32_t p,
                                 pd_mat3 l, pd_real dt, int which, pd_mat3* m_out) {
    const pd_xpbi_material* m = &s->mat[pt->material[p]];
    pd_mat3 grow = pd_m3_scale(l, dt); /* dt L_p, Eq. 11 */
    for (int k = 0; k < 3; ++k)
        grow.m[k][k] += 1;
    pd_mat3 f = pd_m3_mul(grow, s->f[p]), u, w; /* Eq. 9 */
    pd_vec3 sv;
    pd_svd3(f, &u, &sv, &w);
    if (s->prm.plasticity == PD_XPBI_PLASTIC_IMPLICIT)
        sv = plastic_stretches(m, dt, sv, s->log_jp[p], NULL); /* Eq. 14 */
    pd_mat3 dcdf;
    pd_real c = split_of_stretches(which, u, sv, w, &dcdf);
    *m_out = pd_m3_mul(dcdf, pd_m3_transpose(s->f[p]));
    return c;
}

pd_real pd_xpbi_split_constraint(const pd_xpbi_state* s, const pd_particles* pt, uint32_t p,
                                 const pd_vec3* v, pd_real dt, int which, pd_mat3* m_out) {
    return split_at_gradient(s, pt, p, pd_xpbi_velocity_gradient(s, p, v), dt, which, m_out);
}

typedef struct sweep_job {
    pd_xpbi_state* s;
    const pd_particles* p;
    pd_vec3* v;
    pd_vec3* impulse; /* per particle: what the constraints gave the pinned ones (N s) */
    pd_real dt;
    size_t first; /* the colour's first task */
    void (*fn)(struct sweep_job* job, const uint32_t* particles, size_t count, size_t task);
} sweep_job;

/* v_b += dv where b moves; a pinned or fixed particle (inverse mass 0) keeps its prescribed
 * velocity and takes the impulse m dv it was given instead, for its pin's reaction. */
static inline void give(sweep_job* job, uint32_t b, pd_vec3 grad, pd_real scale) {
    pd_real w = job->s->inv_mass[b];
    if (w > 0)
        job->v[b] = pd_v3_madd(job->v[b], w * scale, grad);
    else
        job->impulse[b] = pd_v3_madd(job->impulse[b], scale, grad);
}

/* sum_b w_b |grad_b C_p|^2 with grad_b = M g_b (Eq. 12) and grad_p = -sum_b grad_b (Eq. 13),
 * the denominator of Eq. 17 without alpha~, from p's moment Q = sum_b w_b g_b g_b^T + w_p
 * (sum_b g_b)(sum_b g_b)^T (moment_range): sum_ij (M Q)_ij M_ij, without a pass over the
 * neighbours. *mq gets M Q. */
static pd_real weighted_gradient_norm(const pd_xpbi_state* s, uint32_t p, pd_mat3 m, pd_mat3* mq) {
    *mq = pd_xpbi_m3_mul(m, s->grad_moment[p]);
    pd_real sum = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            sum += mq->m[i][j] * m.m[i][j];
    return sum;
}

/* grad C . v = dC/dt at the velocities whose gradient is l (Eq. 11): sum_b (M g_b) . (v_b - v_p)
 * = sum_ij M_ij l_ij (the damping's). */
static pd_real constraint_rate(pd_mat3 m, pd_mat3 l) {
    pd_real sum = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            sum += m.m[i][j] * l.m[i][j];
    return sum;
}

/* Eq. 17 with XPBD's constraint damping (Macklin et al. 2016, Eq. 26; the paper's Sec. 6):
 * dlambda = -(C + alpha~ lambda + gamma grad C (x - x^n)) / ((1 + gamma) sum w |grad C|^2 +
 * alpha~), gamma = alpha~ beta~ / dt. With beta = tau / alpha (damping tau, s) gamma = tau / dt,
 * and x - x^n = dt v makes gamma grad C (x - x^n) = tau dC/dt: the constraint's force is
 * -(C + tau dC/dt) grad C / alpha (Kelvin-Voigt). h is the residual of that equation before
 * the change (h = C + alpha~ lambda without damping, Fig. 14). */
static pd_real damped_change(pd_real tau, pd_real dt, pd_real rate, pd_real norm, pd_real alpha,
                             pd_real* h) {
    if (!(tau > 0))
        return -*h / (norm + alpha);
    *h += tau * rate;
    return -*h / ((1 + tau / dt) * norm + alpha);
}

/* give() of a gradient in 4 lanes (pd_xpbi_v4), the same operations. */
static inline void give4(sweep_job* job, uint32_t b, const pd_xpbi_v4* grad, pd_real scale) {
    pd_real w = job->s->inv_mass[b];
    pd_xpbi_v4 x;
    pd_vec3* to = w > 0 ? &job->v[b] : &job->impulse[b];
    pd_xpbi_v4_of(&x, *to);
    x += (w > 0 ? w * scale : scale) * *grad;
    *to = pd_v3(x[0], x[1], x[2]);
}

/* Alg. 1's update of one particle constraint after its dlambda: dv = M^-1 grad C dlambda / dt
 * (Eq. 18) to p's neighbours and p, grad_b C = M g_b (Eq. 12), M by columns in 4 lanes. */
static void apply_constraint(sweep_job* job, uint32_t p, pd_mat3 m, pd_real dlambda) {
    const pd_xpbi_state* s = job->s;
    pd_real scale = dlambda / job->dt;
    pd_xpbi_v4 gp = {0, 0, 0, 0}, col[3];
    for (int j = 0; j < 3; ++j)
        col[j] = (pd_xpbi_v4){m.m[0][j], m.m[1][j], m.m[2][j], 0};
    for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
        pd_vec3 g = s->nb_g[e];
        pd_xpbi_v4 gb;
        pd_xpbi_v4_mulv(&gb, col, g.x, g.y, g.z);
        gp -= gb;
        give4(job, s->near.indices[e], &gb, scale);
    }
    give4(job, p, &gp, scale);
}

/* The multiplier's change of Eq. 17 at p for the current velocities; *h gets the residual
 * h_p = C_p + alpha~ lambda_p (Fig. 14) before it, *m the matrix of p's gradients, *l the
 * velocity gradient of Eq. 11 and *mq = M Q (weighted_gradient_norm; 0 where C holds): Eq. 18
 * moves v_b by w_b dlambda / dt M g_b, so l by dlambda / dt M Q. */
static pd_real multiplier_change(const sweep_job* job, uint32_t p, pd_mat3* m, pd_real* h,
                                 pd_mat3* l, pd_mat3* mq) {
    const pd_xpbi_state* s = job->s;
    *l = pd_xpbi_velocity_gradient(s, p, job->v);            /* Eq. 11 */
    pd_real alpha = 1 / (s->volume0[p] * job->dt * job->dt); /* alpha = 1 / V^0 (Eq. 6) / dt^2 */
    pd_real c;
    if (s->prm.constraints == PD_XPBI_TWO_CONSTRAINTS) { /* C_mu, alpha_mu = 1 / (2 mu V^0) */
        c = split_at_gradient(s, job->p, p, *l, job->dt, PD_XPBI_C_MU, m);
        alpha /= 2 * s->mat[job->p->material[p]].mu;
    } else
        c = constraint_at_gradient(s, job->p, p, *l, job->dt, m);
    *mq = pd_m3_zero();
    if (!(c > XPBI_C_FLOOR)) { /* Alg. 1's C_p = 0: round-off counts as 0 in h too, or a body
                                * in free fall (F = I) would never read converged */
        *h = alpha * s->lambda[p];
        return 0;
    }
    *h = c + alpha * s->lambda[p];
    pd_real tau = s->prm.damping;
    pd_real norm = weighted_gradient_norm(s, p, *m, mq);
    pd_real rate = tau > 0 ? constraint_rate(*m, *l) : 0;
    return damped_change(tau, job->dt, rate, norm, alpha, h);
}

/* The two-constraint form's second (Eq. 5): C_lambda's multiplier change and Eq. 18's update
 * at p, alpha_lambda = 1 / (lambda V^0) (none for lambda 0: nu 0), from and to the velocity
 * gradient *l C_mu's update left: its gradients are M g_b too (Eq. 12), so the moment Q_p gives
 * its denominator and l's change as it does C_mu's and Eq. 6's. Returns its h^2. */
static pd_real volume_update(sweep_job* job, uint32_t p, pd_mat3* l) {
    pd_xpbi_state* s = job->s;
    pd_real lame = s->mat[job->p->material[p]].lambda;
    if (!(lame > 0))
        return 0;
    pd_mat3 m, mq;
    pd_real c = split_at_gradient(s, job->p, p, *l, job->dt, PD_XPBI_C_LAMBDA, &m);
    pd_real alpha = 1 / (lame * s->volume0[p] * job->dt * job->dt);
    pd_real h = c + alpha * s->lambda_v[p], tau = s->prm.damping;
    pd_real norm = weighted_gradient_norm(s, p, m, &mq);
    pd_real rate = tau > 0 ? constraint_rate(m, *l) : 0;
    pd_real dl = damped_change(tau, job->dt, rate, norm, alpha, &h);
    if (dl != 0) {
        s->lambda_v[p] += dl;
        apply_constraint(job, p, m, dl);
        *l = pd_m3_add(*l, pd_m3_scale(mq, dl / job->dt)); /* Eq. 18 */
    }
    return h * h;
}

/* The hourglass constraint's multiplier change at p (Eq. 17 for C_h,p of xpbi_hourglass.c,
 * alpha = 1 / V^0); *h its residual C_h + alpha~ lambda_h. Its gradients with respect to p's
 * neighbours are left in grad (room for p's entries). */
static pd_real hourglass_change(const sweep_job* job, uint32_t p, pd_mat3 l, pd_vec3* grad,
                                pd_real* h) {
    pd_xpbi_state* s = job->s;
    pd_vec3 gp;
    pd_real norm, c = pd_xpbi_hourglass_constraint_at(s, s->step->step_start, p, job->v, job->dt, l,
                                                      grad, &gp, &norm);
    pd_real alpha = 1 / (s->volume0[p] * job->dt * job->dt);
    *h = alpha * s->lambda_h[p]; /* C_h at round-off counts as 0, as C_p's (multiplier_change) */
    if (!(c > XPBI_C_FLOOR))
        return 0;
    *h += c;
    pd_real rate = 0;
    if (s->prm.damping > 0) { /* dC_h/dt from the gradients the constraint left */
        rate = pd_v3_dot(gp, job->v[p]);
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e)
            rate += pd_v3_dot(grad[e - s->near.offsets[p]], job->v[s->near.indices[e]]);
    }
    return damped_change(s->prm.damping, job->dt, rate, norm, alpha, h);
}

/* Eq. 18 for the hourglass constraint: its gradients from grad (hourglass_change's), p's their
 * negated sum. */
static void apply_hourglass(sweep_job* job, uint32_t p, const pd_vec3* grad, pd_real dlambda) {
    const pd_xpbi_state* s = job->s;
    pd_real scale = dlambda / job->dt;
    pd_vec3 gp = pd_v3(0, 0, 0);
    uint32_t first = s->near.offsets[p];
    for (uint32_t e = first; e < s->near.offsets[p + 1]; ++e) {
        gp = pd_v3_sub(gp, grad[e - first]);
        give(job, s->near.indices[e], grad[e - first], scale);
    }
    give(job, p, gp, scale);
}

/* The hourglass gradients of a particle of at most this many neighbours go to the stack (more:
 * to hg_grad). */
#define XPBI_KEPT_GRADIENTS 128

/* Gauss-Seidel over one task's particle constraints (Alg. 1, Eq. 17-19), each particle's
 * hourglass constraint right after its elastic one (or two: C_mu, then C_lambda), at the
 * velocity gradient their updates left (multiplier_change: no pass over the neighbours for it). */
static void elastic_task(sweep_job* job, const uint32_t* particles, size_t count, size_t task) {
    pd_xpbi_state* s = job->s;
    pd_real h2 = 0;
    pd_vec3 kept_h[XPBI_KEPT_GRADIENTS];
    for (size_t k = 0; k < count; ++k) {
        uint32_t p = particles[k];
        pd_mat3 m, l, mq;
        pd_real h, dl = multiplier_change(job, p, &m, &h, &l, &mq);
        h2 += h * h;
        if (dl != 0) {
            s->lambda[p] += dl;
            apply_constraint(job, p, m, dl);
            l = pd_m3_add(l, pd_m3_scale(mq, dl / job->dt));
        }
        if (s->prm.constraints == PD_XPBI_TWO_CONSTRAINTS)
            h2 += volume_update(job, p, &l);
        if (!(s->prm.hourglass > 0))
            continue;
        int keep = s->near.offsets[p + 1] - s->near.offsets[p] <= XPBI_KEPT_GRADIENTS;
        pd_vec3* grad = keep ? kept_h : s->hg_grad + s->near.offsets[p];
        dl = hourglass_change(job, p, l, grad, &h);
        h2 += h * h;
        if (dl != 0) {
            s->lambda_h[p] += dl;
            apply_hourglass(job, p, grad, dl);
        }
    }
    s->sweep_h2[task] = h2;
}

/* Contact between bodies (solver.xpbi.contact; src/contact/contact_velocity.h): the pair p, b
 * (entry e of p's list) at the candidates d = x~_p - x~_b, kept d_c = (s_p + s_b) / 2 apart
 * along the normal of their surfaces, n_p - n_b normalised (surface_range), with Coulomb
 * friction sqrt(mu_p mu_b); the change of the relative velocity goes to p and b by their
 * inverse masses (wsum their sum). Along the pair's own line a lattice face is a washboard of
 * bumps one spacing apart: a frictionless block slid down a slab body at 0.74 of g sin 20 (the
 * same block on a frictionless collider at g sin 20 exactly). */
/* The speed (m/s) at which contact may push apart a pair that starts a step closer than d_c
 * along n (an overlap it did not make: n tilts at a face's edge, and sand mixes at an impact).
 * Pushed out at once, (d_c - d . n) / dt, two sand blocks colliding at 2 m/s each threw particles
 * at up to d_c / dt = 28 m/s and blew up; held where the step began (0), a block sliding on a
 * slab body dragged at its leading edge (-6.6 % at mu 0.2). 0.1 m/s: -3.7 %, and the blocks heap
 * (xpbi_scenes.c). Much less than the speeds of the scenes' impacts, much more than an overlap's
 * growth on a resting face (g dt). */
#define PD_XPBI_CONTACT_POP 0.1

static void contact_pair(sweep_job* job, uint32_t p, uint32_t b, uint32_t e, pd_vec3 d,
                         pd_real wsum) {
    pd_xpbi_state* s = job->s;
    const pd_particles* pt = job->p;
    pd_real dc = 0.5 * (pt->spacing[p] + pt->spacing[b]);
    pd_real mu = sqrt(s->mat[pt->material[p]].friction * s->mat[pt->material[b]].friction);
    pd_vec3 n = pd_v3_sub(s->surface_normal[p], s->surface_normal[b]);
    pd_real len = pd_v3_len(n);
    n = len > 0 ? pd_v3_scale(n, 1 / len) : n; /* 0: along d */
    if (len > 0) {
        /* A pair that meets already closer than d_c along n is pushed apart by at most
         * PD_XPBI_CONTACT_POP a second (contact_velocity.h; docs/methods/xpbi.md). One that
         * starts behind along n (p past b: the surfaces' normal, from a few scattered grains,
         * is not this pair's) is left alone: held at 0 from there, it was pushed d_c in one
         * step, 26 m/s to two grains lying apart on the floor in Fig. 13's scene. */
        const pd_vec3* x0 = s->step->step_start;
        pd_real dn0 = fmin(pd_v3_dot(pd_v3_sub(x0[p], x0[b]), n), dc);
        dc = fmin(dc, dn0 + PD_XPBI_CONTACT_POP * job->dt);
    }
    pd_vec3 du = pd_contact_pair_velocity(d, n, dc, pd_v3_sub(job->v[p], job->v[b]), mu, job->dt,
                                          &s->pair_sum[e]);
    give(job, p, du, 1 / wsum);
    give(job, b, pd_v3_scale(du, -1), 1 / wsum);
}

/* The rest length of Eq. 21's constraints with a margin of 1e-6 of it over the rounding: a
 * particle whose nearest neighbour stays beyond it has all its pairs holding (pair_task). */
static pd_real pair_reach(const pd_xpbi_state* s) {
    return s->r * (1 - s->prm.distance_epsilon) * (1 + 1e-6);
}

/* The pair constraints over one task's particles, each pair once (b > p), at the candidate
 * positions x^n + dt v: within a body the point-point distance constraints of Eq. 21, C =
 * |x_p - x_b| - r + epsilon >= 0, hard (alpha 0), solved where violated; between bodies the
 * contact (contact_pair) when solver.xpbi.contact is on, else nothing (they pass through). */
static void pair_task(sweep_job* job, const uint32_t* particles, size_t count, size_t task) {
    pd_xpbi_state* s = job->s;
    const pd_vec3* x0 = s->step->step_start;
    const int32_t* body = job->p->body;
    pd_real rest = s->r * (1 - s->prm.distance_epsilon), dt = job->dt;
    /* |d|^2 at or beyond this: |d| - rest >= 0 whatever sqrt's rounding (no sqrt for the
     * pairs that hold, nearly all) */
    pd_real rest2 = rest * rest * (1 + 1e-9);
    int distance = s->prm.distance_epsilon < 1;
    /* |x~_p - x~_b| >= |x_p^n - x_b^n| - dt (|v_p| + |v_b|): p's pairs all hold while its
     * nearest neighbour b > p at the step's start (pair_gap) stays beyond rest + dt (|v_p| + the
     * largest |v| before the sweep), a margin of 1e-6 rest over the rounding; the velocities
     * only outrun that bound once a constraint acted (this task's, or an earlier colour's:
     * pair_fired), then every pair is tested. The skipped pairs are those the test passes. */
    int bound = !s->bodies_touch && !s->pair_fired;
    pd_real reach = pair_reach(s);
    s->task_fired[task] = 0;
    for (size_t k = 0; k < count; ++k) {
        uint32_t p = particles[k];
        if (bound && s->pair_gap[p] - dt * (pd_v3_len(job->v[p]) + s->pair_speed) > reach)
            continue;
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
            uint32_t b = s->near.indices[e];
            if (b < p)
                continue;
            pd_real wsum = s->inv_mass[p] + s->inv_mass[b];
            int other = body[b] != body[p];
            if (wsum == 0 || (other ? !s->bodies_touch : !distance))
                continue;
            pd_vec3 d =
                pd_v3_sub(pd_v3_madd(x0[p], dt, job->v[p]), pd_v3_madd(x0[b], dt, job->v[b]));
            if (other) {
                contact_pair(job, p, b, e, d, wsum);
                continue;
            }
            if (!(pd_v3_len2(d) < rest2))
                continue;
            pd_real len = pd_v3_len(d), c = len - rest;
            if (!(c < 0) || !(len > 0))
                continue;
            pd_vec3 n = pd_v3_scale(d, 1 / len); /* grad_p C; grad_b C = -n */
            pd_real scale = -c / wsum / dt;      /* dlambda / dt */
            give(job, p, n, scale);
            give(job, b, pd_v3_scale(n, -1), scale);
            bound = 0, s->task_fired[task] = 1;
        }
    }
}

static void run_tasks(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    sweep_job* job = ctx;
    const pd_xpbi_state* s = job->s;
    for (size_t t = job->first + begin; t < job->first + end; ++t)
        job->fn(job, s->order + s->task[t], s->task[t + 1] - s->task[t], t);
}

/* The colours in turn, the tasks of a colour at once (Sec. 4.3). */
static void colored_sweep(sweep_job* job) {
    const pd_xpbi_state* s = job->s;
    for (int c = 0; c < PD_XPBI_COLORS; ++c) {
        job->first = s->color_task[c];
        pd_parallel_for(s->color_task[c + 1] - s->color_task[c], 1, run_tasks, job);
    }
}

/* How far a particle at velocity v may reach a collider in this iteration: dt |v| and a margin
 * of 1e-6 r (collider_range). */
static pd_real collider_reach(const pd_xpbi_state* s, pd_real dt, pd_vec3 v) {
    return dt * pd_v3_len(v) + 1e-6 * s->r;
}

/* Collider k passes particle i by (collider_range): it has not touched it this step and the
 * particle's candidate stays clear of it by more than reach. */
static int collider_passes(const pd_xpbi_state* s, size_t i, int k, pd_real reach) {
    size_t a = i * (size_t)s->collider_count + (size_t)k;
    return s->contact_n[a] == 0 && s->collider_gap[a] > reach;
}

/* collider_range would leave particle i at velocity v as it is: not moved by the constraints,
 * its contact skipped, or passed by every collider. */
static int colliders_idle_at(const pd_xpbi_state* s, size_t i, pd_vec3 v, pd_real dt) {
    const pd_step_context* c = s->step;
    if (s->inv_mass[i] == 0 || (c->contact_skip && c->contact_skip[i]))
        return 1;
    pd_real reach = collider_reach(s, dt, v);
    for (int k = 0; k < s->collider_count; ++k)
        if (!collider_passes(s, i, k, reach))
            return 0;
    return 1;
}

/* Per chunk k: the largest |v|^2 (speed_chunk[3 k]), the smallest pair_gap (speed_chunk[3 k +
 * 1]) and 1 where every particle's colliders are idle at v (speed_chunk[3 k + 2]): 3 per chunk
 * of 256 fit the array's cap + 2 (3 ceil(n / 256) <= n + 2). */
static void speed_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    sweep_job* job = ctx;
    const pd_xpbi_state* s = job->s;
    pd_real most = 0, gap = INFINITY, idle = 1;
    for (size_t i = begin; i < end; ++i) {
        most = fmax(most, pd_v3_len2(job->v[i]));
        gap = fmin(gap, s->pair_gap[i]);
        if (idle && s->collider_count > 0 && !colliders_idle_at(s, i, job->v[i], job->dt))
            idle = 0;
    }
    size_t k = begin / PD_XPBI_GRAIN;
    job->s->speed_chunk[3 * k] = most;
    job->s->speed_chunk[3 * k + 1] = gap;
    job->s->speed_chunk[3 * k + 2] = idle;
}

/* pair_task's bound holds for every particle at once: with |v_p| <= S (the largest speed) and
 * pair_gap[p] >= the smallest gap, and rounding monotone, gap - dt (|v_p| + S) >= gap_min - dt
 * (S + S) in floating point too, so where the latter passes pair_task would skip every particle
 * (its bound, as it stands before anything acts): the sweep's 8 parallel loops are not run, the
 * same bits. */
static int pairs_all_hold(const pd_xpbi_state* s, pd_real dt, pd_real gap_min) {
    if (s->bodies_touch || s->pair_fired)
        return 0;
    return gap_min - dt * (s->pair_speed + s->pair_speed) > pair_reach(s);
}

/* The pair constraints' sweep (pair_task): the colours in turn as colored_sweep, with the
 * largest speed before it and, after each colour, whether a distance constraint acted. Returns
 * 1 where it left the velocities as they were and the colliders are idle at them (the
 * iteration's collider loop would change nothing). */
static int pair_sweep(sweep_job* job) {
    pd_xpbi_state* s = job->s;
    size_t chunks = (s->n + PD_XPBI_GRAIN - 1) / PD_XPBI_GRAIN;
    pd_parallel_for(s->n, PD_XPBI_GRAIN, speed_range, job);
    pd_real most = 0, gap_min = INFINITY;
    int idle = 1;
    for (size_t k = 0; k < chunks; ++k) {
        most = fmax(most, s->speed_chunk[3 * k]);
        gap_min = fmin(gap_min, s->speed_chunk[3 * k + 1]);
        idle &= s->speed_chunk[3 * k + 2] != 0;
    }
    s->pair_speed = sqrt(most);
    s->pair_fired = !(most < INFINITY); /* NaN or infinite: test every pair */
    if (pairs_all_hold(s, job->dt, gap_min))
        return idle;
    for (int c = 0; c < PD_XPBI_COLORS; ++c) {
        job->first = s->color_task[c];
        pd_parallel_for(s->color_task[c + 1] - s->color_task[c], 1, run_tasks, job);
        for (size_t t = s->color_task[c]; t < s->color_task[c + 1]; ++t)
            s->pair_fired |= s->task_fired[t] != 0;
    }
    return 0;
}

/* Jacobi (Sec. 5.1, Fig. 14's comparison): every dlambda_p from the same velocities ... */
static void jacobi_multipliers(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    sweep_job* job = ctx;
    pd_xpbi_state* s = job->s;
    pd_real h2 = 0;
    for (size_t p = begin; p < end; ++p) {
        pd_real h;
        pd_mat3 l, mq; /* every constraint sees the same velocities: l is the hourglass one's too */
        s->dlambda[p] = multiplier_change(job, (uint32_t)p, &s->dcdf_ft[p], &h, &l, &mq);
        s->lambda[p] += s->dlambda[p];
        h2 += h * h;
        if (s->prm.hourglass > 0) {
            s->dlambda_h[p] =
                hourglass_change(job, (uint32_t)p, l, s->hg_grad + s->near.offsets[p], &h);
            s->lambda_h[p] += s->dlambda_h[p];
            h2 += h * h;
        }
    }
    s->sweep_h2[begin / PD_XPBI_GRAIN] = h2;
}

/* ... their velocity changes summed into dv in the colours' order (the same sums on any
 * number of threads) ... */
static void jacobi_gather_task(sweep_job* job, const uint32_t* particles, size_t count,
                               size_t task) {
    (void)task;
    const pd_xpbi_state* s = job->s;
    for (size_t k = 0; k < count; ++k) {
        uint32_t p = particles[k];
        if (s->dlambda[p] != 0)
            apply_constraint(job, p, s->dcdf_ft[p], s->dlambda[p]);
        if (s->prm.hourglass > 0 && s->dlambda_h[p] != 0)
            apply_hourglass(job, p, s->hg_grad + s->near.offsets[p], s->dlambda_h[p]);
    }
}

/* ... then v += omega dv. */
static void jacobi_apply(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    sweep_job* job = ctx;
    pd_xpbi_state* s = job->s;
    for (size_t i = begin; i < end; ++i) {
        job->v[i] = pd_v3_madd(job->v[i], s->prm.jacobi_relaxation, s->dv[i]);
        s->dv[i] = pd_v3(0, 0, 0);
    }
}

static pd_real sum_partials(const pd_real* a, size_t count) {
    pd_real sum = 0;
    for (size_t k = 0; k < count; ++k)
        sum += a[k];
    return sum;
}

/* One sweep over the particle constraints; returns sum_p h_p^2 as the sweep met them. */
static pd_real elastic_sweep(pd_xpbi_state* s, const pd_particles* p, pd_vec3* impulse) {
    sweep_job job = {s, p, p->vel, impulse, s->step->dt, 0, elastic_task};
    if (s->prm.solver == PD_XPBI_GAUSS_SEIDEL) {
        colored_sweep(&job);
        return sum_partials(s->sweep_h2, s->tasks);
    }
    pd_parallel_for(s->n, PD_XPBI_GRAIN, jacobi_multipliers, &job);
    pd_real h2 = sum_partials(s->sweep_h2, (s->n + PD_XPBI_GRAIN - 1) / PD_XPBI_GRAIN);
    sweep_job gather = {s, p, s->dv, impulse, s->step->dt, 0, jacobi_gather_task};
    for (size_t i = 0; i < s->n; ++i) /* dv from 0 (give() adds to it) */
        s->dv[i] = pd_v3(0, 0, 0);
    colored_sweep(&gather);
    pd_parallel_for(s->n, PD_XPBI_GRAIN, jacobi_apply, &job);
    return h2;
}

/* dv of collider contact at the candidate position (Sec. 4.4, Alg. 1's C_i): the normal change
 * accumulated over the iterations jn >= 0 brings x^n + dt v onto the surface (a hard
 * inequality, its multiplier clamped at 0 as projected Gauss-Seidel), and the tangential change
 * jt that stops the slip relative to the collider is held to |jt| <= mu jn (Coulomb; no_slip:
 * unbounded). */
static pd_vec3 collider_contact(const pd_collider* col, pd_vec3 x0, pd_vec3 v, pd_real dt,
                                pd_real* jn, pd_vec3* jt) {
    pd_vec3 x = pd_v3_madd(x0, dt, v), n;
    if (*jn == 0 && pd_collider_clear_of(col, x, 0))
        return v;
    pd_real d = pd_collider_sdf(col, x, &n);
    if (d >= 0 && *jn == 0)
        return v;
    pd_real jn_new = fmax(*jn - d / dt, 0);
    v = pd_v3_madd(v, jn_new - *jn, n);
    *jn = jn_new;
    pd_vec3 vr = pd_v3_sub(v, pd_collider_velocity_at(col, x));
    pd_vec3 vt = pd_v3_madd(vr, -pd_v3_dot(vr, n), n);
    pd_vec3 target = pd_v3_sub(*jt, vt);
    pd_real len = pd_v3_len(target), limit = col->def.friction * jn_new;
    if (col->def.boundary != PD_BOUNDARY_NO_SLIP && len > limit)
        target = pd_v3_scale(target, len > 0 ? limit / len : 0);
    v = pd_v3_add(v, pd_v3_sub(target, *jt));
    *jt = target;
    return v;
}

static void collider_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    sweep_job* job = ctx;
    pd_xpbi_state* s = job->s;
    const pd_step_context* c = s->step;
    int k_count = s->collider_count;
    for (size_t i = begin; i < end; ++i) {
        if (s->inv_mass[i] == 0 || (c->contact_skip && c->contact_skip[i]))
            continue;
        pd_real reach = collider_reach(s, job->dt, job->v[i]);
        for (int k = 0; k < k_count; ++k) {
            size_t a = i * (size_t)k_count + (size_t)k;
            /* the signed distance changes by at most |dx| (1-Lipschitz): a particle that has
             * not touched and whose candidate x^n + dt v stays outside returns unchanged, as
             * collider_contact would return it */
            if (collider_passes(s, i, k, reach))
                continue;
            job->v[i] = collider_contact(&c->colliders->items[k], c->step_start[i], job->v[i],
                                         job->dt, &s->contact_n[a], &s->contact_t[a]);
        }
    }
}

typedef struct update_job {
    pd_xpbi_state* s;
    pd_particles* p;
    pd_vec3* impulse;
    pd_real dt;
    pd_vec3 gravity;
    pd_real xsph; /* the step's c of Eq. 20 (xsph_c) */
} update_job;

/* The step's c of Eq. 20. For a smooth field sum_b V_b W_b = 1 and the first moment vanishes, so
 * Eq. 20 changes v by c (m_2 / 6) lap v, m_2 = sum_b V_b W_b |x_pb|^2 = k^2 / 5 for the Wendland
 * C2 in 3D: a kinematic viscosity nu = c k^2 / (30 dt). xsph_scaling viscosity solves that for c
 * (the same nu at any step), time takes c per xsph_time, step c every step (Eq. 20 as printed,
 * nu growing as 1 / dt). At most 1: the whole difference to the neighbours' mean. */
static pd_real xsph_c(const pd_xpbi_state* s, pd_real dt) {
    const pd_xpbi_params* prm = &s->prm;
    pd_real k = 2 * s->r;
    switch (prm->xsph_scaling) {
        case PD_XPBI_XSPH_VISCOSITY:
            return fmin(30 * prm->xsph_viscosity * dt / (k * k), 1);
        case PD_XPBI_XSPH_TIME:
            return fmin(prm->xsph * (dt / prm->xsph_time), 1);
        default:
            return prm->xsph;
    }
}

/* Alg. 1's third line: v = v^n + dt g (pinned and fixed particles keep the velocity the world
 * gave them); lambda = 0; no contact yet. */
static void start_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    update_job* job = ctx;
    pd_xpbi_state* s = job->s;
    pd_particles* p = job->p;
    size_t k = (size_t)s->collider_count;
    for (size_t i = begin; i < end; ++i) {
        s->inv_mass[i] = (p->flags[i] & PD_P_CONSTRAINED) || !(p->mass[i] > 0) ? 0 : 1 / p->mass[i];
        if (s->inv_mass[i] > 0)
            p->vel[i] = pd_v3_madd(p->vel[i], job->dt, job->gravity);
        s->lambda[i] = 0, s->lambda_h[i] = 0, s->lambda_v[i] = 0;
        job->impulse[i] = pd_v3(0, 0, 0);
        for (size_t c = 0; c < k; ++c) {
            const pd_collider* col = &s->step->colliders->items[c];
            s->contact_n[i * k + c] = 0, s->contact_t[i * k + c] = pd_v3(0, 0, 0);
            /* analytic shapes: their exact distance (a mesh keeps its own cheap bound) */
            s->collider_gap[i * k + c] = col->def.type == PD_COLLIDER_MESH
                                             ? -INFINITY
                                             : pd_collider_sdf(col, s->step->step_start[i], NULL);
        }
        if (s->bodies_touch)
            for (uint32_t e = s->near.offsets[i]; e < s->near.offsets[i + 1]; ++e)
                s->pair_sum[e] = (pd_contact_pair_sum){0, pd_v3(0, 0, 0)};
    }
}

/* Per particle p: Q = sum_b w_b g_b g_b^T + w_p (sum_b g_b)(sum_b g_b)^T with the inverse
 * masses w and g_b = V_b L_p grad W_b (Eq. 11): for Eq. 17's denominator and the velocity
 * gradient's change by Eq. 18 (multiplier_change), fixed over the step's iterations. */
static void moment_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    update_job* job = ctx;
    pd_xpbi_state* s = job->s;
    for (size_t p = begin; p < end; ++p) {
        pd_mat3 q = pd_m3_zero();
        pd_vec3 sum = pd_v3(0, 0, 0);
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
            pd_vec3 g = s->nb_g[e];
            pd_xpbi_add_outer(&q, s->inv_mass[s->near.indices[e]], g, g);
            sum = pd_v3_add(sum, g);
        }
        pd_xpbi_add_outer(&q, s->inv_mass[p], sum, sum);
        s->grad_moment[p] = q;
    }
}

/* Bodies touch: each particle's surface normal, away from the other bodies' particles within k
 * at x^n, the gradient of their colour field: n_p ~ sum_b V_b |W'(|x_p - x_b|)| (x_p - x_b) /
 * |x_p - x_b| over neighbours b of other bodies, normalised (0 with none). On a lattice face the
 * neighbours' sideways parts cancel, so the face's normal is the face's. */
static void surface_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    update_job* job = ctx;
    pd_xpbi_state* s = job->s;
    const pd_vec3* x = s->step->step_start;
    const int32_t* body = job->p->body;
    pd_real H = 2 * s->r;
    for (size_t p = begin; p < end; ++p) {
        pd_vec3 sum = pd_v3(0, 0, 0);
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
            uint32_t b = s->near.indices[e];
            if (body[b] == body[p])
                continue;
            pd_vec3 d = pd_v3_sub(x[p], x[b]);
            pd_real r = pd_v3_len(d);
            if (r > 0)
                sum = pd_v3_madd(sum, -s->volume[b] * pd_sph_wendland_c2_derivative(r, H) / r, d);
        }
        s->surface_normal[p] = sum;
    }
}

/* XSPH (Eq. 20): v_p + c sum_b V_b W_b(x_p^n) (v_b - v_p) of the same body, into dv (c the
 * step's: xsph_c). */
static void xsph_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    update_job* job = ctx;
    pd_xpbi_state* s = job->s;
    const pd_vec3* v = job->p->vel;
    for (size_t p = begin; p < end; ++p) {
        pd_vec3 sum = pd_v3(0, 0, 0);
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e)
            sum = pd_v3_madd(sum, s->nb_w[e], pd_v3_sub(v[s->near.indices[e]], v[p]));
        s->dv[p] = s->inv_mass[p] > 0 ? pd_v3_madd(v[p], job->xsph, sum) : v[p];
    }
}

/* XSPH's result becomes v^{n+1} (a pinned particle's is the world's). */
static void adopt_smoothed_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    update_job* job = ctx;
    for (size_t i = begin; i < end; ++i)
        job->p->vel[i] = job->s->dv[i];
}

/* |dev ln z| / |dev ln s| of the return z = Z(s) of Eq. 14, 22: the part of the deviatoric
 * (Hencky) elastic strain the return kept (1 where it kept it all or there is none): a von Mises
 * or Herschel-Bulkley return scales the deviator by exactly this. The hourglass constraint's
 * pairs return their misfits by it (hourglass_relaxation plastic, xpbi_hourglass.c). */
static pd_real deviatoric_kept(pd_vec3 s, pd_vec3 z) {
    pd_real a[3] = {log(fabs(s.x)), log(fabs(s.y)), log(fabs(s.z))};
    pd_real b[3] = {log(fabs(z.x)), log(fabs(z.y)), log(fabs(z.z))};
    pd_real ma = (a[0] + a[1] + a[2]) / 3, mb = (b[0] + b[1] + b[2]) / 3, na = 0, nb = 0;
    for (int k = 0; k < 3; ++k)
        na += (a[k] - ma) * (a[k] - ma), nb += (b[k] - mb) * (b[k] - mb);
    return na > nb && na > 0 ? sqrt(nb / na) : 1;
}

/* Eq. 22: F^{n+1} = Z((I + dt grad v^{n+1}) F^n) with the post-XSPH velocity (the plastic
 * strain grows by sum |ln s_tr - ln s|), x^{n+1} = x^n + dt v^{n+1}; a pinned particle stays
 * where the world put it and leaves the constraints' force on it, impulse / dt, in `force`. */
static void deformation_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    update_job* job = ctx;
    pd_xpbi_state* s = job->s;
    pd_particles* p = job->p;
    for (size_t i = begin; i < end; ++i) {
        pd_mat3 grow = pd_m3_scale(pd_xpbi_velocity_gradient(s, (uint32_t)i, p->vel), job->dt);
        for (int k = 0; k < 3; ++k)
            grow.m[k][k] += 1;
        pd_mat3 f = pd_m3_mul(grow, s->f[i]), u, w;
        s->f_ref[i] = pd_m3_mul(grow, s->f_ref[i]); /* the hourglass reference's (elastic: F) */
        pd_vec3 st;
        pd_svd3(f, &u, &st, &w);
        const pd_xpbi_material* m = &s->mat[p->material[i]];
        pd_vec3 sn = plastic_stretches(m, job->dt, st, s->log_jp[i], &s->log_jp[i]);
        if (m->hg_returned)
            s->hg_keep[i] = deviatoric_kept(st, sn);
        if (m->plastic && (sn.x != st.x || sn.y != st.y || sn.z != st.z)) {
            s->plastic_strain[i] += fabs(log(fabs(st.x) / sn.x)) + fabs(log(fabs(st.y) / sn.y)) +
                                    fabs(log(fabs(st.z / sn.z)));
            f = pd_m3_from_svd(u, sn, w);
        }
        s->f[i] = f;
        if (s->inv_mass[i] > 0)
            p->pos[i] = pd_v3_madd(s->step->step_start[i], job->dt, p->vel[i]);
        else if (p->flags[i] & PD_P_PINNED)
            p->force[i] = pd_v3_scale(job->impulse[i], 1 / job->dt);
    }
}

/* One XPBD iteration (Alg. 1's loop body): the particle constraints, then the other ones
 * (distance, colliders). Returns sum h^2 of the particle constraints. */
static pd_real iterate(pd_xpbi_state* s, pd_particles* p, pd_vec3* impulse) {
    pd_real h2 = elastic_sweep(s, p, impulse);
    sweep_job job = {s, p, p->vel, impulse, s->step->dt, 0, pair_task};
    int idle = 0; /* the colliders known to change nothing (pair_sweep) */
    if (s->prm.distance_epsilon < 1 || s->bodies_touch)
        idle = pair_sweep(&job);
    if (s->collider_count > 0 && !idle)
        pd_parallel_for(s->n, PD_XPBI_GRAIN, collider_range, &job);
    return h2;
}

/* The iterations, fixed or until |h| / |h^(0)| <= tolerance (Fig. 18); the residual of the
 * last in stats. */
static void solve(pd_xpbi_state* s, pd_particles* p, pd_vec3* impulse, pd_step_stats* stats) {
    pd_real h0 = 0, rel = 0;
    int it = 0;
    s->history_count = 0;
    while (it < s->prm.iterations) {
        s->warm = it > 0;
        pd_real h = sqrt(iterate(s, p, impulse));
        if (it == 0)
            h0 = h;
        rel = h0 > 0 ? h / h0 : 0;
        s->history[it++] = rel;
        s->history_count = it;
        if (s->step->on_iteration)
            s->step->on_iteration(s->step->on_iteration_ctx, it, rel);
        if (s->prm.tolerance > 0 && rel <= s->prm.tolerance)
            break;
    }
    s->warm = 0;
    stats->iterations = it;
    stats->residual = rel;
    if (s->prm.tolerance > 0 && rel > 10 * s->prm.tolerance)
        stats->unconverged_by = rel / s->prm.tolerance;
}

static pd_status xpbi_step(void* state, pd_world* w, const pd_step_context* ctx,
                           pd_step_stats* stats) {
    (void)w;
    pd_xpbi_state* s = state;
    pd_particles* p = ctx->particles;
    s->step = ctx;
    pd_vec3* impulse = s->impulse;
    double t0 = pd_now();
    pd_status st = pd_xpbi_neighborhoods(s, p);
    if (st == PD_OK)
        st = pd_xpbi_hourglass_prepare(s, p);
    if (st != PD_OK) {
        s->step = NULL;
        return st;
    }
    double t1 = pd_now();
    update_job uj = {s, p, impulse, ctx->dt, ctx->gravity, xsph_c(s, ctx->dt)};
    pd_parallel_for(s->n, PD_XPBI_GRAIN, start_range, &uj);
    pd_parallel_for(s->n, PD_XPBI_GRAIN, moment_range, &uj);
    if (s->bodies_touch)
        pd_parallel_for(s->n, PD_XPBI_GRAIN, surface_range, &uj);
    solve(s, p, impulse, stats);
    double t2 = pd_now();
    pd_parallel_for(s->n, PD_XPBI_GRAIN, xsph_range, &uj);
    pd_parallel_for(s->n, PD_XPBI_GRAIN, adopt_smoothed_range, &uj);
    double t3 = pd_now();
    pd_parallel_for(s->n, PD_XPBI_GRAIN, deformation_range, &uj);
    st = pd_xpbi_hourglass_return(s, p);
    double t4 = pd_now();
    /* Fig. 17's stages: the search, L_p with the per-entry kernel data, colours and hourglass
     * offsets (kernels), the iterations, XSPH and the particle update */
    static const char* const names[] = {"neighbors", "kernels", "iterations", "xsph", "update"};
    double search = s->search_seconds;
    pd_step_stats_stages(stats, names,
                         (double[]){search, t1 - t0 - search, t2 - t1, t3 - t2, t4 - t3}, 5);
    stats->bonds =
        s->n ? s->near.offsets[s->n] : 0; /* sum |N_p| (Table 2), the bench's bonds column */
    s->step = NULL;
    return st;
}

/* Eq. 14's returns (plastic_stretches), each measured under xpbi: von Mises by the sheared slab
 * (tests/physics/xpbi.c), Drucker-Prager by the suite's triaxial probe, heap and channel
 * collapse, Herschel-Bulkley by the Bingham slump (tests/physics/xpbi.c). No volume correction
 * (mpm's Tampubolon 2017 option): refused if asked for. */
const pd_material_support pd_xpbi_material_support = {
    .plasticity = 1u << PD_PLASTICITY_VON_MISES | 1u << PD_PLASTICITY_DRUCKER_PRAGER |
                  1u << PD_PLASTICITY_HERSCHEL_BULKLEY | 1u << PD_PLASTICITY_CAM_CLAY};

static const pd_field_info k_fields[] = {
    {PD_ATTR_PLASTIC_STRAIN,
     {"plastic_strain"},
     1,
     PD_FIELD_REAL,
     "1",
     "xpbi: the sum over the steps of the end-of-step return's (Eq. 22) |ln s_tr - ln s| over "
     "the principal stretches of the trial and the returned F; 0 for elastic materials."},
};

static const void* xpbi_publish_fields(void* state, int k) {
    return k == 0 ? (const void*)((pd_xpbi_state*)state)->plastic_strain : NULL;
}

const pd_solver_vtable pd_xpbi_solver = {
    .name = "xpbi",
    .paper = "Yu, Li, Lan, Yang, Jiang 2024, XPBI: Position-Based Dynamics with Smoothing Kernels "
             "Handles Continuum Inelasticity",
    .params = &pd_xpbi_param_table,
    .material_params = &pd_xpbi_material_table,
    .check_material = pd_xpbi_check_material,
    .check_body_material = pd_xpbi_check_body_material,
    .materials = &pd_xpbi_material_support,
    .fields = k_fields,
    .field_count = 1,
    .publish_fields = xpbi_publish_fields,
    .create = pd_xpbi_create,
    .destroy = pd_xpbi_destroy,
    .step = xpbi_step,
    .on_reorder = pd_xpbi_on_reorder,
    .on_emit = pd_xpbi_on_emit,
    .persistent = pd_xpbi_persistent,
    .restored = pd_xpbi_restored,
    .max_time_step = pd_xpbi_max_time_step,
    .bytes_per_particle = pd_xpbi_bytes_per_particle,
    .contact_in_solve = 1,
    .releases_pins = 1,
    .capabilities = PD_CAP_ELASTIC | PD_CAP_CONTACT | PD_CAP_COLLIDER_FRICTION,
};
