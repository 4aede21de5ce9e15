/* Non-associated Cam-clay (NACC; Wolper et al. 2019, "CD-MPM", after Gaume et al. 2018's snow;
 * Yu et al. 2024 Table 2 gives its parameters (alpha_0, beta, xi, M)) as a return on the Hencky
 * strain eps = log(Sigma) of an elastic F = U Sigma V^T, for StVK with Hencky strain
 * (energies.h: tau = 2 mu eps + lambda tr(eps) 1).
 *
 * In the Kirchhoff stress, p = -tr(tau) / 3 = -K tr(eps) (compression positive) and q =
 * sqrt(3/2) |dev tau| = sqrt(6) mu |dev eps|. The yield surface is the ellipse
 *   y(p, q) = (1 + 2 beta) q^2 + M^2 (p + beta p_0)(p - p_0) <= 0,
 * p from -beta p_0 (tension) to p_0 (compaction), its size hardening with the plastic volume:
 *   p_0 = K sinh(xi max(-alpha, 0)),   alpha = ln J^P
 * (alpha_0 < 0: a pre-compacted material; alpha > 0: loosened, p_0 = 0, no strength). The flow
 * is not associated (Wolper's return): inside the tips, p stays and the deviator is scaled onto
 * the ellipse, q = sqrt(M^2 (p + beta p_0)(p_0 - p) / (1 + 2 beta)); past a tip (p > p_0 or p <
 * -beta p_0) the state goes to the tip, dev eps = 0, tr eps = -p_tip / K, and the volume it sheds
 * is plastic: alpha += tr eps_tr - tr eps (ln J^E_tr - ln J^E). So compaction past p_0 is kept
 * (J^P < 1) and hardens the material; the deviatoric projection keeps the volume and alpha (the
 * q-based hardening some codes add is not here). */
#ifndef PD_CAM_CLAY_H
#define PD_CAM_CLAY_H

#include "peridot/math.h"

typedef struct pd_cam_clay {
    pd_real mu, kappa; /* Pa: shear and bulk modulus of the Hencky StVK */
    pd_real m;         /* M, the critical state line's slope q / p */
    pd_real beta;      /* tension over compaction strength, p from -beta p_0 to p_0 */
    pd_real xi;        /* hardening: p_0 = K sinh(xi max(-alpha, 0)) */
} pd_cam_clay;

/* M of a friction angle phi (degrees): the critical state line through Mohr-Coulomb's
 * triaxial-compression corner, M = 6 sin phi / (3 - sin phi). */
pd_real pd_cam_clay_slope(pd_real friction_angle_degrees);
/* p_0 at alpha = ln J^P. */
pd_real pd_cam_clay_p0(const pd_cam_clay* c, pd_real alpha);
/* y(p, q) at alpha (> 0 outside). */
pd_real pd_cam_clay_yield(const pd_cam_clay* c, pd_real alpha, pd_real p, pd_real q);
/* The return on principal stretches s_tr (> 0) at alpha: the returned s and the new alpha
 * (*alpha_out). Returns 0 inside (s = s_tr), 1 onto the ellipse, 2 to a tip. */
int pd_cam_clay_return(const pd_cam_clay* c, pd_vec3 s_tr, pd_real alpha, pd_vec3* s,
                       pd_real* alpha_out);

#endif
