/* Plastic returns on the Hencky strain eps = log(Sigma) of an elastic F = U Sigma V^T, for StVK
 * with Hencky strain (energies.h), whose Kirchhoff stress tau = 2 mu eps + lambda tr(eps) 1 is
 * linear in eps (Klar et al. 2016 Sec. 7.3; Fang et al. 2019's Z_E). The yield surface is the
 * shared Drucker-Prager cone sqrt(J2) <= a + b I1 (drucker_prager.h; I1 = -tr(tau), compression
 * positive), and von Mises is its cone of slope 0. In strain: sqrt(J2) = sqrt(2) mu |dev eps|,
 * I1 = -3 K tr(eps). The flow keeps the volume (tr eps) and shrinks the deviator onto the cone
 * (Klar's non-associated flow); past the apex (a + b I1 <= 0: tension for sand) the state goes
 * to the apex, tr(eps) = a / (3 K b), dev eps = 0. With `rate` (pd_mu_i) the cone's slope
 * follows the plastic shear rate the return itself takes (a scalar equation per particle,
 * solved in closed form: pd_hencky_return's comment in hencky_plasticity.c). */
#ifndef PD_HENCKY_PLASTICITY_H
#define PD_HENCKY_PLASTICITY_H

#include "constitutive/drucker_prager.h"
#include "constitutive/return_map.h"

/* The mu(I) rheology as a rate-dependent cone (a departure from Klar 2016 and Fang 2019, beyond
 * the papers: GDR MiDi 2004, Jop, Forterre & Pouliquen 2006 Eq. 2-3, as an elastoplastic return
 * after Dunatunga & Kamrin 2015). The friction sqrt(J2) / p is mu(I) = mu_s + (mu_2 - mu_s) /
 * (I_0 / I + 1), I = gamma_dot d / sqrt(p / rho_s), with gamma_dot = sqrt 2 |D_p| (Jop's
 * |gamma_dot| = sqrt(gamma_dot_ij gamma_dot_ij / 2), gamma_dot_ij = 2 D_ij: du/dy in simple shear)
 * the plastic shear rate the return takes over the step and p = I1 / 3. mu_s is the cone's own
 * 3 b (the friction a Klar sand bears in shear along a plane: docs/methods/mpm.md), so the cone's
 * slope at the step is b(I) = b + (mu_2 - mu_s) / 3 I / (I_0 + I). Off (span 0 or dt 0): Klar's
 * rate-independent cone. */
typedef struct pd_mu_i {
    pd_real span; /* 1: mu_2 - mu_s */
    pd_real i0;   /* 1: I_0 */
    pd_real
        d_root_rho; /* m (kg/m^3)^(1/2): d sqrt(rho_s), so that I = gamma_dot d_root_rho / sqrt p */
    pd_real dt;     /* s: the step the plastic increment is taken over */
} pd_mu_i;

typedef struct pd_hencky_yield {
    pd_real mu, kappa; /* Pa: shear and bulk modulus of the Hencky StVK */
    pd_dp_cone cone;   /* the yield surface (von Mises: b = 0); with rate: its static cone */
    pd_mu_i rate;      /* the mu(I) rate dependence of a sand's cone (zero: none) */
} pd_hencky_yield;

/* Jop 2006's glass beads: mu_2 - mu_s = tan 32.76 - tan 20.9 (their mu_s, mu_2). */
#define PD_MU_I_JOP_SPAN 0.2616

/* mu(I) = mu_s + span I / (I_0 + I) (Jop 2006 Eq. 2) and, when dmu is not NULL, dmu / dI. */
pd_real pd_mu_i_friction(pd_real mu_s, const pd_mu_i* r, pd_real inertial, pd_real* dmu);

/* Z_E on principal stretches: s_tr -> s (> 0); returns the case taken. When dz is not NULL it
 * gets ds / ds_tr (row i for s_i; zero at the apex, the identity inside). */
pd_dp_case pd_hencky_return(const pd_hencky_yield* y, pd_vec3 s_tr, pd_vec3* s, pd_mat3* dz);

/* The return with the volume correction of Tampubolon et al. 2017 (Sec. 4.3.1; ziran2019's
 * Drucker-Prager `volume_correction`). Sand pulled past the apex goes there stress-free and its
 * volume grows without a stress that remembers it; `dilation` v >= 0 is the log of the volume
 * so gained, carried per particle. The next trial's Hencky strain gets it back on its trace,
 * eps_c = log s_tr + v / 3 (a trial s_tr exp(v / 3)), so that compression first closes the
 * dilated volume stress-free and the sand stiffens only past the volume it had: the return is
 * pd_hencky_return of the corrected trial, and v' = tr eps_c - tr log s = v + ln J_tr - ln J
 * (0 after an elastic or cone return, which keep the corrected volume; what the apex drops
 * otherwise). dz is ds / ds_tr (the corrected one's times exp(v / 3)); *dilation_out, when not
 * NULL, gets v'. */
pd_dp_case pd_hencky_return_corrected(const pd_hencky_yield* y, pd_vec3 s_tr, pd_real dilation,
                                      pd_vec3* s, pd_mat3* dz, pd_real* dilation_out);

#endif
