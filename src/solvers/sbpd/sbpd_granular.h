/* The Drucker-Prager return mapping of Wang et al. 2025 Sec. 5 (Eq. 13-22): a trial deformation
 * gradient projected onto the yield surface of its Neo-Hookean Kirchhoff stress. */
#ifndef PD_SBPD_GRANULAR_H
#define PD_SBPD_GRANULAR_H

#include "peridot/math.h"

/* The constants of Eq. 13 and 15. */
typedef struct pd_sbpd_yield {
    pd_real mu;    /* shear modulus of Eq. 15 (Pa) */
    pd_real kappa; /* bulk modulus of Eq. 15 (Pa) */
    pd_real cf;    /* C_f: the cone's slope (1) */
    pd_real cc;    /* C_c: cohesion (Pa) */
} pd_sbpd_yield;

/* Which case of Sec. 5.2 the mapping took. */
typedef enum pd_sbpd_case {
    PD_SBPD_ELASTIC, /* case A: inside the surface, F unchanged */
    PD_SBPD_APEX,    /* case B: past the apex, Eq. 16-17 */
    PD_SBPD_CONE,    /* case C: onto the cone, Eq. 18-22 */
} pd_sbpd_case;

/* The principal Kirchhoff stress of Eq. 15 for singular values s of F: tau_a = mu J^(-2/3)
 * (s_a^2 - tr(b)/3) + kappa/2 (J^2 - 1). */
pd_vec3 pd_sbpd_kirchhoff(const pd_sbpd_yield* y, pd_vec3 s);

/* y_dp of Eq. 13 for principal stresses tau (sqrt(J_2) of their deviator). */
pd_real pd_sbpd_yield_value(const pd_sbpd_yield* y, pd_vec3 tau);

/* Projects F_tr (Eq. 14-22) into *F and, when tau is not NULL, gives the Kirchhoff stress of
 * Eq. 15 of the result and in *plastic the plastic strain of the projection, |ln s_tr - ln s|
 * over the principal stretches (0 in case A); returns the case taken. */
pd_sbpd_case pd_sbpd_return_map(const pd_sbpd_yield* y, pd_mat3 F_tr, pd_mat3* F, pd_mat3* tau,
                                pd_real* plastic);

#endif
