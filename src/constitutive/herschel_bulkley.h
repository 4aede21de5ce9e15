/* Herschel-Bulkley viscoplasticity (Yue, Smith, Batty, Jiang, Teran 2015, "Continuum Foam",
 * Sec. 4) as a return on the Hencky strain eps = log(Sigma) of an elastic F = U Sigma V^T, for
 * StVK with Hencky strain (energies.h), whose Kirchhoff deviator is s = 2 mu dev(eps). Yue's
 * flow rule: past the von Mises surface |s| = sqrt(2/3) sigma_Y the plastic rate of deformation
 * is D_p = gamma_dot s / |s| with gamma_dot = ((|s| - sqrt(2/3) sigma_Y) / eta)^(1 / h). Its
 * backward-Euler step keeps the volume and the deviator's direction and solves
 *   |s| - |s_tr| + 2 mu dt ((|s| - sqrt(2/3) sigma_Y) / eta)^(1 / h) = 0
 * for |s| in (sqrt(2/3) sigma_Y, |s_tr|). In simple shear at rate gamma' (|D| = gamma' / sqrt 2,
 * |s| = sqrt 2 tau_xy) the steady flow curve is
 *   tau_xy = sigma_Y / sqrt 3 + (eta / sqrt 2) (gamma' / sqrt 2)^h,
 * so Yue's sigma_Y maps onto the yield stress in shear tau_y = sigma_Y / sqrt(3) (the von Mises
 * cone's, drucker_prager.h), and h = 1 is Bingham with plastic viscosity eta / 2; h < 1 thins,
 * h > 1 thickens; eta 0 is perfect von Mises plasticity. */
#ifndef PD_HERSCHEL_BULKLEY_H
#define PD_HERSCHEL_BULKLEY_H

#include "peridot/math.h"

typedef struct pd_herschel_bulkley {
    pd_real mu;           /* shear modulus of the Hencky StVK (Pa) */
    pd_real yield_stress; /* sigma_Y (Pa, >= 0): flow from sqrt(J2) = sigma_Y / sqrt(3) */
    pd_real viscosity;    /* eta (Pa s^h, >= 0) */
    pd_real exponent;     /* h (> 0) */
} pd_herschel_bulkley;

/* One step dt of the flow on principal stretches: s_tr -> s (> 0). Returns 1 when it flowed
 * (|s_tr| past the surface), 0 when s = s_tr. */
int pd_herschel_bulkley_return(const pd_herschel_bulkley* m, pd_real dt, pd_vec3 s_tr, pd_vec3* s);

#endif
