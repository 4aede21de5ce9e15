/* The Drucker-Prager cone, written once for every method (issue 31): a stress yields when
 * sqrt(J2) > a + b I1, with I1 = -tr(sigma) (compression positive) and J2 = s:s / 2 of its
 * deviator. From a friction angle phi and cohesion c, the compression cone (the default; the
 * cone of Klar et al. 2016 and the MPM literature) passes through Mohr-Coulomb's corners in
 * triaxial compression: b = 2 sin phi / (sqrt 3 (3 - sin phi)), a = 6 c cos phi / (sqrt 3 (3 -
 * sin phi)), so that a triaxial test fails at q = 6 sin phi / (3 - sin phi) p (c = 0) and an
 * unconfined one at q = 2 c cos phi / (1 - sin phi). The extension cone (3 + sin phi, He 2017
 * Eq. 15 as printed) passes through the triaxial-extension corners, inside the first. */
#ifndef PD_DRUCKER_PRAGER_H
#define PD_DRUCKER_PRAGER_H

#include "peridot/math.h"
#include "peridot/types.h"

typedef struct pd_dp_cone {
    pd_real a; /* Pa: sqrt(J2) at I1 = 0 */
    pd_real b; /* 1: the cone's slope d sqrt(J2) / d I1 */
} pd_dp_cone;

pd_dp_cone pd_dp_cone_of(pd_real friction_angle_degrees, pd_real cohesion, pd_dp_cone_kind kind);
/* The material's cone (its friction_angle, cohesion and cone). */
pd_dp_cone pd_dp_material_cone(const pd_material_def* m);
/* Von Mises with yield stress sigma_y (sqrt(3 J2) <= sigma_y) as the cone of slope 0:
 * a = sigma_y / sqrt 3, b = 0. */
pd_dp_cone pd_von_mises_cone(pd_real yield_stress);
/* sqrt(J2) - (a + b I1) of principal stresses sigma (tension positive): > 0 outside. */
pd_real pd_dp_yield(pd_dp_cone cone, pd_vec3 sigma);
/* The radial return of a state at invariants (I1, sqrt(J2)) onto the cone, as fractions of its
 * isotropic and deviatoric parts to remove (He 2017 Eq. 18, beta read as a radial return:
 * beta = (sqrt(J2) - a - b I1) / sqrt(J2), alpha = 0; past the apex, a + b I1 <= 0, all of the
 * deviator and the share alpha = (a + b I1) / (b I1) of the isotropic part, clamped to [0, 1]).
 * Returns 0 and leaves alpha, beta alone when the state is on or inside the cone. */
int pd_dp_radial_return(pd_dp_cone cone, pd_real i1, pd_real sqrt_j2, pd_real* alpha,
                        pd_real* beta);
/* q / p at failure in triaxial compression (sigma_1 > sigma_2 = sigma_3 in compression) of a
 * cohesionless cone: 3 sqrt(3) b. */
pd_real pd_dp_triaxial_ratio(pd_dp_cone cone);

#endif
