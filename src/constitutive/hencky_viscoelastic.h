/* The non-equilibrated branch of Fang et al. 2019 (Silly Rubber) Sec. 5.2: StVK with Hencky
 * strain for Psi_N (Eq. 6), the quadratic dissipation potential of Eq. 7, and the implicit
 * corrector of Eq. 5 solved in closed form (Eq. 8) on the principal Hencky strain
 * eps = log(Sigma) of the trial F_N = U Sigma V^T:
 *   eps^{n+1} = A (eps^tr - B tr(eps^tr) 1),  A = 1 / (1 + dt alpha),
 *   B = dt beta / (1 + dt (alpha + d beta)),  alpha = 2 mu_N / nu_d,
 *   beta = 2 (2 mu_N + d lambda_N) / (9 nu_v) - 2 mu_N / (nu_d d),  d = 3.
 * So the deviatoric strain shrinks by 1 / (1 + dt / tau_d), tau_d = nu_d / (2 mu_N), and the
 * volumetric one by 1 / (1 + 2 dt K_N / nu_v), K_N = lambda_N + 2 mu_N / 3, every step. */
#ifndef PD_HENCKY_VISCOELASTIC_H
#define PD_HENCKY_VISCOELASTIC_H

#include "peridot/math.h"

typedef struct pd_hencky_maxwell {
    pd_real mu, lambda;           /* mu_N, lambda_N (Pa) */
    pd_real deviatoric_viscosity; /* nu_d (Pa s, > 0; INFINITY: never flows) */
    pd_real volumetric_viscosity; /* nu_v (Pa s, > 0; INFINITY: never flows) */
} pd_hencky_maxwell;

/* A and B of Eq. 8 for a step dt. */
typedef struct pd_hencky_maxwell_step {
    pd_real a, b;
} pd_hencky_maxwell_step;
pd_hencky_maxwell_step pd_hencky_maxwell_coefficients(const pd_hencky_maxwell* m, pd_real dt);

/* Z_N of Eq. 8 on principal stretches: Sigma^{n+1} = exp(A (log Sigma^tr - B tr(log Sigma^tr)))
 * (stretches > 0). When dz is not NULL it gets dSigma^{n+1} / dSigma^tr, the matrix after Eq. 8:
 * Sigma^{n+1} A ((Sigma^tr)^-1 - B 1 <(Sigma^tr)^-1>^T), row i for Sigma_i^{n+1}. */
pd_vec3 pd_hencky_maxwell_project(pd_hencky_maxwell_step k, pd_vec3 sigma_trial, pd_mat3* dz);

#endif
