/* Isotropic hyperelastic energies with their stresses and derivatives, for the methods that
 * carry a deformation gradient F (sbpd's sand today; mpm and xpbi next). lambda, mu are Lame's
 * constants (pd_elastic of elastic_constants.h), kappa the bulk modulus. Two forms:
 * - on F: the energy density Psi(F) (Pa), the first Piola-Kirchhoff stress P = dPsi/dF (Pa) and
 *   its derivative applied to an increment, dP = (dP/dF) : dF (Pa): linear, StVK, fixed
 *   corotated;
 * - in principal stretches s (F = U diag(s) V^T, pd_svd3): Psi(s), the principal Kirchhoff
 *   stress tau_a = s_a dPsi/ds_a (Pa; tau = U diag(tau_a) U^T, P = U diag(tau_a / s_a) V^T) and
 *   its derivative d tau_a / d s_b (Pa, row a, column b): StVK with Hencky strain and
 *   neo-Hookean. pd_principal_piola takes either of these to P.
 * No allocation, no world: pure functions on small matrices (docs/adding-a-model.md). */
#ifndef PD_ENERGIES_H
#define PD_ENERGIES_H

#include "peridot/math.h"

/* Linear (small strain) elasticity, eps = (F + F^T) / 2 - I: Psi = mu eps:eps + lambda / 2
 * tr(eps)^2, P = 2 mu eps + lambda tr(eps) I. Not invariant under rotation. */
pd_real pd_linear_energy(pd_real lambda, pd_real mu, pd_mat3 F);
pd_mat3 pd_linear_piola(pd_real lambda, pd_real mu, pd_mat3 F);
pd_mat3 pd_linear_piola_differential(pd_real lambda, pd_real mu, pd_mat3 dF);

/* St. Venant-Kirchhoff, E = (F^T F - I) / 2: Psi = mu E:E + lambda / 2 tr(E)^2,
 * P = F (2 mu E + lambda tr(E) I). */
pd_real pd_stvk_energy(pd_real lambda, pd_real mu, pd_mat3 F);
pd_mat3 pd_stvk_piola(pd_real lambda, pd_real mu, pd_mat3 F);
pd_mat3 pd_stvk_piola_differential(pd_real lambda, pd_real mu, pd_mat3 F, pd_mat3 dF);

/* Fixed corotated (Stomakhin et al. 2012), R the rotation of F's polar decomposition:
 * Psi = mu ||F - R||^2 + lambda / 2 (J - 1)^2, P = 2 mu (F - R) + lambda (J - 1) J F^-T;
 * defined for inverted F too (R proper, pd_svd3's signed smallest stretch). The differential
 * takes dR = U W V^T with W_ab = (M_ab - M_ba) / (s_a + s_b), M = U^T dF V (from
 * R^T dF - dF^T R = W' S + S W'); undefined where two stretches sum to 0. */
pd_real pd_fixed_corotated_energy(pd_real lambda, pd_real mu, pd_mat3 F);
pd_mat3 pd_fixed_corotated_piola(pd_real lambda, pd_real mu, pd_mat3 F);
pd_mat3 pd_fixed_corotated_piola_differential(pd_real lambda, pd_real mu, pd_mat3 F, pd_mat3 dF);

/* St. Venant-Kirchhoff with Hencky strain eps_a = ln s_a (Fang et al. 2019 Eq. 6, Yu et al.
 * 2024 Eq. 3, Klar et al. 2016): Psi = mu sum eps_a^2 + lambda / 2 (sum eps_a)^2,
 * tau_a = 2 mu eps_a + lambda sum eps_b, d tau_a / d s_b = (2 mu [a = b] + lambda) / s_b.
 * Stretches s_a > 0. */
pd_real pd_hencky_energy(pd_real lambda, pd_real mu, pd_vec3 s);
pd_vec3 pd_hencky_kirchhoff(pd_real lambda, pd_real mu, pd_vec3 s);
pd_mat3 pd_hencky_kirchhoff_derivative(pd_real lambda, pd_real mu, pd_vec3 s);
/* Psi and tau together from one set of logs (the same bits as the two above). */
pd_real pd_hencky_energy_kirchhoff(pd_real lambda, pd_real mu, pd_vec3 s, pd_vec3* tau);

/* Compressible neo-Hookean with an isochoric split, J = s_0 s_1 s_2 > 0 (the stress of Wang et
 * al. 2025 Eq. 15, which sbpd's Drucker-Prager return mapping projects):
 * Psi = mu / 2 (J^(-2/3) sum s_a^2 - 3) + kappa / 4 (J^2 - 1 - 2 ln J),
 * tau_a = mu J^(-2/3) (s_a^2 - sum s_b^2 / 3) + kappa / 2 (J^2 - 1). */
pd_real pd_neo_hookean_energy(pd_real mu, pd_real kappa, pd_vec3 s);
pd_vec3 pd_neo_hookean_kirchhoff(pd_real mu, pd_real kappa, pd_vec3 s);
pd_mat3 pd_neo_hookean_kirchhoff_derivative(pd_real mu, pd_real kappa, pd_vec3 s);

/* Fixed corotated (Stomakhin et al. 2012) in principal stretches, J = s_0 s_1 s_2:
 * Psi = mu sum (s_a - 1)^2 + lambda / 2 (J - 1)^2, tau_a = 2 mu (s_a - 1) s_a + lambda (J - 1) J,
 * d tau_a / d s_b = 2 mu (2 s_a - 1) [a = b] + lambda (2 J - 1) J / s_b. The same energy as
 * pd_fixed_corotated_energy on F. */
pd_real pd_fixed_corotated_principal_energy(pd_real lambda, pd_real mu, pd_vec3 s);
pd_vec3 pd_fixed_corotated_kirchhoff(pd_real lambda, pd_real mu, pd_vec3 s);
pd_mat3 pd_fixed_corotated_kirchhoff_derivative(pd_real lambda, pd_real mu, pd_vec3 s);

/* P = U diag(tau_a / s_a) V^T of principal Kirchhoff stresses tau at F = U diag(s) V^T. */
pd_mat3 pd_principal_piola(pd_mat3 U, pd_vec3 s, pd_mat3 V, pd_vec3 tau);

/* Psi's gradient g_a = dPsi/ds_a = tau_a / s_a and Hessian H_ab = d^2 Psi / ds_a ds_b =
 * (d tau_a / d s_b) / s_a - [a = b] tau_a / s_a^2 in the stretches, from tau and its
 * derivative (any of the principal models above). */
void pd_principal_gradient_hessian(pd_vec3 s, pd_vec3 tau, pd_mat3 dtau, pd_vec3* g, pd_mat3* h);

/* dP = (dP/dF) : dF of an isotropic energy at F = U diag(s) V^T from its gradient g and Hessian
 * h in the stretches (Teran et al. 2005; Stomakhin et al. 2012's technical report): with
 * dF' = U^T dF V, dP'_aa = sum_b h_ab dF'_bb, and for a != b the symmetric part of (dF'_ab,
 * dF'_ba) scales by (g_a - g_b) / (s_a - s_b) (its limit h_aa - h_ab where s_a and s_b meet),
 * the antisymmetric part (a rotation's) by (g_a + g_b) / (s_a + s_b); dP = U dP' V^T. definite != 0
 * clamps h's eigenvalues and the two pair factors at 0 from below: the projected Hessian, positive
 * semi-definite, for Newton's method on a non-convex energy. Stretches s_a > 0. */
pd_mat3 pd_principal_piola_differential(pd_mat3 U, pd_vec3 s, pd_mat3 V, pd_vec3 g, pd_mat3 h,
                                        pd_mat3 dF, int definite);

#endif
