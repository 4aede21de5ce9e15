/* The Drucker-Prager cone (drucker_prager.h). */
#include "constitutive/drucker_prager.h"

#include <math.h>

pd_dp_cone pd_dp_cone_of(pd_real friction_angle_degrees, pd_real cohesion, pd_dp_cone_kind kind) {
    pd_real phi = friction_angle_degrees * PD_PI / 180, sp = sin(phi);
    pd_real d = sqrt(3.0) * (kind == PD_CONE_EXTENSION ? 3 + sp : 3 - sp);
    return (pd_dp_cone){6 * cohesion * cos(phi) / d, 2 * sp / d};
}

pd_dp_cone pd_dp_material_cone(const pd_material_def* m) {
    return pd_dp_cone_of(m->friction_angle, m->cohesion, m->cone);
}

pd_dp_cone pd_von_mises_cone(pd_real yield_stress) {
    return (pd_dp_cone){yield_stress / sqrt(3.0), 0};
}

pd_real pd_dp_yield(pd_dp_cone cone, pd_vec3 sigma) {
    pd_real tr = sigma.x + sigma.y + sigma.z, p = tr / 3;
    pd_real dx = sigma.x - p, dy = sigma.y - p, dz = sigma.z - p;
    return sqrt(0.5 * (dx * dx + dy * dy + dz * dz)) - (cone.a + cone.b * -tr);
}

int pd_dp_radial_return(pd_dp_cone cone, pd_real i1, pd_real sqrt_j2, pd_real* alpha,
                        pd_real* beta) {
    pd_real lim = cone.a + cone.b * i1;
    if (sqrt_j2 <= lim)
        return 0;
    if (lim > 0) {
        *alpha = 0;
        *beta = (sqrt_j2 - lim) / sqrt_j2;
    } else { /* beyond the apex: everything deviatoric flows, the isotropic part onto it */
        *alpha = cone.b * i1 != 0 ? fmin(fmax(lim / (cone.b * i1), 0), 1) : 1;
        *beta = 1;
    }
    return 1;
}

pd_real pd_dp_triaxial_ratio(pd_dp_cone cone) {
    return 3 * sqrt(3.0) * cone.b;
}
