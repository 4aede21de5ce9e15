/* Return mappings in the principal basis of a trial deformation gradient, for every method that
 * carries an elastic F (sbpd's sand today; mpm and xpbi next): the Drucker-Prager mapping of
 * Wang et al. 2025 Sec. 5 (Eq. 13-22), a trial F projected onto the cone sqrt(J2) + C_f tr(tau)
 * <= C_c of its Neo-Hookean Kirchhoff stress (Eq. 15), and von Mises as the same mapping on a
 * cone of slope 0 (a cylinder: case C keeps J, and there is no apex).
 * projective_pd's plasticity is not on an F but on its bonds' strains; it shares the cone
 * (drucker_prager.h) and its radial return on the invariants (pd_dp_radial_return). */
#ifndef PD_RETURN_MAP_H
#define PD_RETURN_MAP_H

#include "peridot/math.h"

/* The constants of Eq. 13 and 15 (C_f, C_c are pd_dp_cone's b and a). */
typedef struct pd_dp_map {
    pd_real mu;    /* shear modulus of Eq. 15 (Pa) */
    pd_real kappa; /* bulk modulus of Eq. 15 (Pa) */
    pd_real cf;    /* C_f: the cone's slope (1) */
    pd_real cc;    /* C_c: cohesion (Pa) */
} pd_dp_map;

/* Von Mises with yield stress sigma_y: pd_von_mises_cone's a and b as C_c and C_f. */
pd_dp_map pd_von_mises_map(pd_real mu, pd_real kappa, pd_real yield_stress);

/* Which case of Sec. 5.2 the mapping took. */
typedef enum pd_dp_case {
    PD_DP_ELASTIC, /* case A: inside the surface, F unchanged */
    PD_DP_APEX,    /* case B: past the apex, Eq. 16-17 */
    PD_DP_CONE,    /* case C: onto the cone, Eq. 18-22 */
} pd_dp_case;

/* The principal Kirchhoff stress of Eq. 15 for singular values s of F: tau_a = mu J^(-2/3)
 * (s_a^2 - tr(b)/3) + kappa/2 (J^2 - 1), the neo-Hookean of energies.h
 * (pd_neo_hookean_kirchhoff). */
pd_vec3 pd_dp_map_kirchhoff(const pd_dp_map* y, pd_vec3 s);

/* y_dp of Eq. 13 for principal stresses tau (sqrt(J_2) of their deviator). */
pd_real pd_dp_map_yield(const pd_dp_map* y, pd_vec3 tau);

/* Projects F_tr (Eq. 14-22) into *F and, when tau is not NULL, gives the Kirchhoff stress of
 * Eq. 15 of the result and in *plastic the plastic strain of the projection, |ln s_tr - ln s|
 * over the principal stretches (0 in case A); returns the case taken. */
pd_dp_case pd_dp_return_map(const pd_dp_map* y, pd_mat3 F_tr, pd_mat3* F, pd_mat3* tau,
                            pd_real* plastic);

#endif
