/* Plastic returns on the Hencky strain eps = log(Sigma) of an elastic F = U Sigma V^T, for StVK
 * with Hencky strain (energies.h), whose Kirchhoff stress tau = 2 mu eps + lambda tr(eps) 1 is
 * linear in eps (Klar et al. 2016 Sec. 7.3; Fang et al. 2019's Z_E). The yield surface is the
 * shared Drucker-Prager cone sqrt(J2) <= a + b I1 (drucker_prager.h; I1 = -tr(tau), compression
 * positive), and von Mises is its cone of slope 0. In strain: sqrt(J2) = sqrt(2) mu |dev eps|,
 * I1 = -3 K tr(eps). The flow keeps the volume (tr eps) and shrinks the deviator onto the cone
 * (Klar's non-associated flow); past the apex (a + b I1 <= 0: tension for sand) the state goes
 * to the apex, tr(eps) = a / (3 K b), dev eps = 0. */
#ifndef PD_HENCKY_PLASTICITY_H
#define PD_HENCKY_PLASTICITY_H

#include "constitutive/drucker_prager.h"
#include "constitutive/return_map.h"

typedef struct pd_hencky_yield {
    pd_real mu, kappa; /* Pa: shear and bulk modulus of the Hencky StVK */
    pd_dp_cone cone;   /* the yield surface (von Mises: b = 0) */
} pd_hencky_yield;

/* Z_E on principal stretches: s_tr -> s (> 0); returns the case taken. When dz is not NULL it
 * gets ds / ds_tr (row i for s_i; zero at the apex, the identity inside). */
pd_dp_case pd_hencky_return(const pd_hencky_yield* y, pd_vec3 s_tr, pd_vec3* s, pd_mat3* dz);

#endif
