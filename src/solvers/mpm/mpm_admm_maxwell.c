/* The ADMM's second constraint (Fang 2019 Sec. 7, Eq. 9-10): the non-equilibrated deformation
 * gradient F_N of the Maxwell branch (Eq. 1-8) as its own primal variable, with its own dual
 * y_N and weight w_N, beside mpm_admm.c's F_E:
 *   w_N (F_N - D_N dv - b_N) = 0,  D_N dv = dt (sum_i dv_i grad w_ip^T) F_N^n,
 *   b_N = (I + dt sum_i v_i^n grad w_ip^T) F_N^n                                   (Eq. 9)
 * The particle step (Eq. 10) solves V0 dPsi_N/dF(Z_N(F_N)) + rho w_N^2 F_N = R_N per particle
 * on the singular values, Z_N the closed-form corrector of Eq. 8 and its derivative
 * dZ_N/dSigma (hencky_viscoelastic.h) in the Newton Hessian H_N(Z_N(s)) dZ_N/ds (Sec. 7.1).
 * The grid step adds D_N^T (w_N y_N + rho w_N^2 (F_N - b_N)) to the right-hand side and
 * rho D_N^T w_N^2 D_N to A (through the per-particle weight admm_k, A = M + rho dt^2 G^T (G u
 * (w_E^2 F_E F_E^T + w_N^2 F_N F_N^T))); the dual step is y_N += rho w_N (F_N - D_N dv - b_N).
 * At the end F_N is dropped as F_E is (Fig. 8): mpm.c's particle update takes Z_N((I + dt C)
 * F_N^n) with the solved velocities. Particles without the branch have w_N = 0: no term. */
#include <math.h>
#include <string.h>

#include "constitutive/energies.h"
#include "core/alloc.h"
#include "math/svd3.h"
#include "parallel/parallel.h"
#include "solvers/mpm/mpm_internal.h"

/* dPsi_N/ds at Z_N(s) and its derivative in s, H_N(Z_N(s)) dZ_N/ds (Eq. 10's Hessian, with
 * Eq. 6's Psi_N and Eq. 8's Z_N): dPsi/dz_a = tau_a / z_a, d2Psi/dz_a dz_b = (d tau_a / d z_b) /
 * z_a - [a = b] tau_a / z_a^2. */
static void branch_gradient_hessian(const pd_mpm_material* m, const pd_real s[3], pd_real g[3],
                                    pd_real h[3][3]) {
    pd_mat3 dz;
    pd_vec3 zv = pd_hencky_maxwell_project(m->step, pd_v3(s[0], s[1], s[2]), &dz);
    pd_vec3 tv = pd_hencky_kirchhoff(m->branch.lambda, m->branch.mu, zv);
    pd_mat3 dtau = pd_hencky_kirchhoff_derivative(m->branch.lambda, m->branch.mu, zv);
    pd_real z[3] = {zv.x, zv.y, zv.z}, tau[3] = {tv.x, tv.y, tv.z}, hz[3][3];
    for (int a = 0; a < 3; ++a) {
        g[a] = tau[a] / z[a];
        for (int b = 0; b < 3; ++b)
            hz[a][b] = dtau.m[a][b] / z[a] - (a == b) * tau[a] / (z[a] * z[a]);
    }
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            h[a][b] = hz[a][0] * dz.m[0][b] + hz[a][1] * dz.m[1][b] + hz[a][2] * dz.m[2][b];
}

/* F_N's law for pd_mpm_principal_newton (mpm_admm.c). */
static void branch_law(const void* ctx, const pd_real s[3], pd_real g[3], pd_real h[3][3]) {
    branch_gradient_hessian(ctx, s, g, h);
}

static void stretches(pd_mat3 f, pd_mat3* u, pd_real s[3], pd_mat3* v) {
    pd_vec3 sv;
    pd_svd3(f, u, &sv, v);
    s[0] = fmax(fabs(sv.x), 1e-3), s[1] = fmax(fabs(sv.y), 1e-3), s[2] = fmax(fabs(sv.z), 1e-3);
}

/* out_p = dt G_p F_N,p^n (D_N of a node field whose gradient G is in out), per particle. */
typedef struct branch_job {
    pd_mpm_state* s;
    const pd_particles* p;
    pd_real dt, rho;
} branch_job;

static void times_fn_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const branch_job* job = ctx;
    pd_mpm_state* s = job->s;
    for (size_t p = begin; p < end; ++p)
        s->mx_du[p] = pd_m3_scale(pd_m3_mul(s->mx_du[p], s->mx_fn[p]), job->dt);
}

/* mx_du = D_N u (Eq. 9). */
static void apply_dn(const branch_job* job, const pd_vec3* u) {
    pd_grid_gradient(&job->s->grid, u, job->s->mx_du);
    pd_parallel_for(job->s->n, 256, times_fn_range, (void*)job);
}

/* ---------------------------------------------------------------- the solve's pieces */

pd_status pd_mpm_maxwell_reserve(pd_mpm_state* s) {
    if (s->mx_b)
        return PD_OK;
#define MX_ALLOC(field, T) s->field = PD_NEW_ARRAY(T, s->cap + 1);
    PD_MPM_MAXWELL_ARRAYS(MX_ALLOC)
#undef MX_ALLOC
#define MX_CHECK(field, T) || !s->field
    return (0 PD_MPM_MAXWELL_ARRAYS(MX_CHECK)) ? PD_ERR_OUT_OF_MEMORY : PD_OK;
#undef MX_CHECK
}

void pd_mpm_maxwell_free(pd_mpm_state* s) {
#define MX_FREE(field, T) PD_FREE_ARRAY(s->field, T, s->cap + 1);
    PD_MPM_MAXWELL_ARRAYS(MX_FREE)
#undef MX_FREE
}

/* SEW (Sec. 7.3) for the branch: w_N^2 = V_p^0 |H_N(Z_N(Sigma)) dZ_N/dSigma|_F at F_N^n (the
 * projection's derivative counted, as the paper asks for inelastic models); b_N; y_N = 0;
 * F_N = b_N. */
static void start_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const branch_job* job = ctx;
    pd_mpm_state* s = job->s;
    for (size_t p = begin; p < end; ++p) {
        const pd_mpm_material* m = &s->mat[job->p->material[p]];
        pd_mat3 fn = s->fn[p];
        s->mx_fn[p] = fn;
        s->mx_b[p] = pd_m3_mul(pd_m3_add(pd_m3_identity(), pd_m3_scale(s->mx_b[p], job->dt)), fn);
        s->mx_y[p] = pd_m3_zero();
        s->mx_f[p] = s->mx_b[p];
        s->mx_w2[p] = 0;
        if (!m->maxwell)
            continue;
        pd_mat3 u, v;
        pd_real sig[3], g[3], h[3][3], norm = 0;
        stretches(fn, &u, sig, &v);
        branch_gradient_hessian(m, sig, g, h);
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                norm += h[a][b] * h[a][b];
        s->mx_w2[p] = s->volume0[p] * sqrt(norm);
    }
}

void pd_mpm_maxwell_start(pd_mpm_state* s, const pd_particles* p, pd_real dt, pd_real rho) {
    branch_job job = {s, p, dt, rho};
    pd_grid_gradient(&s->grid, s->grid.velocity, s->mx_b); /* sum_i v_i^n grad w_ip^T */
    pd_parallel_for(s->n, 128, start_range, &job);
}

void pd_mpm_maxwell_add_weight(pd_mpm_state* s, pd_real scale, pd_mat3* k) {
    for (size_t p = 0; p < s->n; ++p)
        if (s->mx_w2[p] > 0)
            k[p] = pd_m3_add(k[p], pd_m3_scale(pd_m3_mul(s->mx_fn[p], pd_m3_transpose(s->mx_fn[p])),
                                               scale * s->mx_w2[p]));
}

/* Eq. 10 for F_N at dv^k (mx_du = D_N dv^k): F_N = argmin V0 Xi_N(F) + rho w_N^2 / 2 |F -
 * T|^2, T = D_N dv + b_N - y_N / (rho w_N), which shares T's singular vectors. */
static void particle_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const branch_job* job = ctx;
    pd_mpm_state* s = job->s;
    for (size_t p = begin; p < end; ++p) {
        const pd_mpm_material* m = &s->mat[job->p->material[p]];
        if (!m->maxwell || !(s->mx_w2[p] > 0))
            continue;
        pd_real w = sqrt(s->mx_w2[p]), k = job->rho * s->mx_w2[p];
        pd_mat3 target = pd_m3_sub(pd_m3_add(s->mx_du[p], s->mx_b[p]),
                                   pd_m3_scale(s->mx_y[p], 1 / (job->rho * w)));
        pd_mat3 u, v;
        pd_real sz[3], sv[3];
        stretches(target, &u, sz, &v);
        memcpy(sv, sz, sizeof sv);
        pd_real r[3] = {k * sz[0], k * sz[1], k * sz[2]};
        pd_mpm_principal_newton(branch_law, m, s->volume0[p], k, r, sv);
        s->mx_f[p] = pd_m3_from_svd(u, pd_v3(sv[0], sv[1], sv[2]), v);
    }
}

void pd_mpm_maxwell_particle_step(pd_mpm_state* s, const pd_particles* p, pd_real dt, pd_real rho) {
    branch_job job = {s, p, dt, rho};
    apply_dn(&job, s->admm_dv);
    memcpy(s->mx_du_prev, s->mx_du, s->n * sizeof *s->mx_du); /* for the dual residual */
    pd_parallel_for(s->n, 128, particle_range, &job);
}

void pd_mpm_maxwell_add_rhs(pd_mpm_state* s, pd_real dt, pd_real rho, pd_real alpha,
                            pd_mat3* affine) {
    for (size_t p = 0; p < s->n; ++p) {
        if (!(s->mx_w2[p] > 0))
            continue;
        /* over-relaxed F_hat (Sec. 7.3), kept for the dual step */
        pd_mat3 dvb = pd_m3_add(s->mx_du_prev[p], s->mx_b[p]);
        s->mx_fhat[p] = pd_m3_add(pd_m3_scale(s->mx_f[p], alpha), pd_m3_scale(dvb, 1 - alpha));
        pd_real w = sqrt(s->mx_w2[p]);
        pd_mat3 m = pd_m3_add(pd_m3_scale(s->mx_y[p], w),
                              pd_m3_scale(pd_m3_sub(s->mx_fhat[p], s->mx_b[p]), rho * s->mx_w2[p]));
        affine[p] =
            pd_m3_add(affine[p], pd_m3_scale(pd_m3_mul(m, pd_m3_transpose(s->mx_fn[p])), dt));
    }
}

/* The dual step (Sec. 7.1) for y_N with F_hat_N over-relaxed (Sec. 7.3), and the residuals. */
void pd_mpm_maxwell_dual_step(pd_mpm_state* s, const pd_particles* p, pd_real dt, pd_real rho,
                              pd_real sums[3]) {
    branch_job job = {s, p, dt, rho};
    apply_dn(&job, s->admm_dv); /* D_N dv^{k+1} */
    for (size_t q = 0; q < s->n; ++q) {
        if (!(s->mx_w2[q] > 0))
            continue;
        pd_real w = sqrt(s->mx_w2[q]);
        pd_mat3 gap = pd_m3_sub(pd_m3_sub(s->mx_fhat[q], s->mx_du[q]), s->mx_b[q]);
        s->mx_y[q] = pd_m3_add(s->mx_y[q], pd_m3_scale(gap, rho * w));
        pd_mat3 plain = pd_m3_sub(pd_m3_sub(s->mx_f[q], s->mx_du[q]), s->mx_b[q]);
        sums[0] += s->mx_w2[q] * pd_m3_frob2(plain);
        sums[1] += s->mx_w2[q] * pd_m3_frob2(pd_m3_sub(s->mx_du[q], s->mx_du_prev[q]));
        sums[2] += s->mx_w2[q] * pd_m3_frob2(s->mx_b[q]);
    }
}

/* Backward Euler's branch force for the residual check: affine_p += dt V0 P_N F_N^n^T with
 * P_N = dPsi_N/dF at Z_N(D_N dv + b_N). */
void pd_mpm_maxwell_add_stress(pd_mpm_state* s, const pd_particles* p, pd_real dt,
                               const pd_vec3* dv, pd_mat3* affine) {
    branch_job job = {s, p, dt, 0};
    apply_dn(&job, dv);
    for (size_t q = 0; q < s->n; ++q) {
        const pd_mpm_material* m = &s->mat[p->material[q]];
        if (!m->maxwell)
            continue;
        pd_mat3 u, v;
        pd_real sig[3], g[3], h[3][3];
        stretches(pd_m3_add(s->mx_du[q], s->mx_b[q]), &u, sig, &v);
        branch_gradient_hessian(m, sig, g, h);
        pd_mat3 piola = pd_m3_from_svd(u, pd_v3(g[0], g[1], g[2]), v);
        affine[q] = pd_m3_add(affine[q], pd_m3_scale(pd_m3_mul(piola, pd_m3_transpose(s->mx_fn[q])),
                                                     dt * s->volume0[q]));
    }
}
