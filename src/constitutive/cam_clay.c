/* Non-associated Cam-clay on the Hencky strain (cam_clay.h: Wolper et al. 2019's NACC). */
#include "constitutive/cam_clay.h"

#include <math.h>

pd_real pd_cam_clay_slope(pd_real friction_angle_degrees) {
    pd_real s = sin(friction_angle_degrees * PD_PI / 180);
    return 6 * s / (3 - s);
}

pd_real pd_cam_clay_p0(const pd_cam_clay* c, pd_real alpha) {
    return c->kappa * sinh(c->xi * fmax(-alpha, 0));
}

pd_real pd_cam_clay_yield(const pd_cam_clay* c, pd_real alpha, pd_real p, pd_real q) {
    pd_real p0 = pd_cam_clay_p0(c, alpha);
    return (1 + 2 * c->beta) * q * q + c->m * c->m * (p + c->beta * p0) * (p - p0);
}

int pd_cam_clay_return(const pd_cam_clay* c, pd_vec3 s_tr, pd_real alpha, pd_vec3* s,
                       pd_real* alpha_out) {
    pd_real e[3] = {log(s_tr.x), log(s_tr.y), log(s_tr.z)};
    pd_real tr = e[0] + e[1] + e[2], dev[3], norm2 = 0;
    for (int a = 0; a < 3; ++a)
        dev[a] = e[a] - tr / 3, norm2 += dev[a] * dev[a];
    pd_real p0 = pd_cam_clay_p0(c, alpha), p = -c->kappa * tr;
    pd_real q = sqrt(6.0) * c->mu * sqrt(norm2);
    *alpha_out = alpha;
    *s = s_tr;
    if (p > p0 || p < -c->beta * p0) { /* past a tip: to it, the volume shed is plastic */
        pd_real tip = p > p0 ? p0 : -c->beta * p0, tr_new = -tip / c->kappa;
        pd_real side = exp(tr_new / 3);
        *s = pd_v3(side, side, side);
        *alpha_out = alpha + tr - tr_new;
        return 2;
    }
    if (!(pd_cam_clay_yield(c, alpha, p, q) > 0))
        return 0;
    /* p kept, the deviator scaled onto the ellipse (q > 0 here: y > 0 needs it) */
    pd_real q_new = sqrt(c->m * c->m * (p + c->beta * p0) * (p0 - p) / (1 + 2 * c->beta));
    pd_real k = q_new / q;
    *s = pd_v3(exp(tr / 3 + k * dev[0]), exp(tr / 3 + k * dev[1]), exp(tr / 3 + k * dev[2]));
    return 1;
}
