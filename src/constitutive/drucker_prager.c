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

pd_real pd_dp_yield(pd_dp_cone cone, pd_vec3 sigma) {
    pd_real tr = sigma.x + sigma.y + sigma.z, p = tr / 3;
    pd_real dx = sigma.x - p, dy = sigma.y - p, dz = sigma.z - p;
    return sqrt(0.5 * (dx * dx + dy * dy + dz * dz)) - (cone.a + cone.b * -tr);
}

pd_real pd_dp_triaxial_ratio(pd_dp_cone cone) {
    return 3 * sqrt(3.0) * cone.b;
}
