/* Coulomb friction against colliders as a dissipation potential of an implicit step, with
 * the normal force lagged to the step's start and the kink smoothed (friction.h; Li et al.
 * 2020, IPC, Sec. 5). */
#include "boundary/friction.h"

#include <math.h>

int pd_colliders_nearest(const pd_colliders* c, pd_vec3 p, pd_real* dist, pd_vec3* n) {
    int best = -1;
    pd_real dmin = INFINITY;
    pd_vec3 nbest = pd_v3(0, 0, 0), nk;
    for (int k = 0; c && k < c->count; ++k) {
        pd_real d = pd_collider_sdf(&c->items[k], p, &nk);
        if (d < dmin)
            dmin = d, nbest = nk, best = k;
    }
    if (dist)
        *dist = dmin;
    if (n)
        *n = nbest;
    return best;
}

pd_real pd_friction_limit(const pd_collider_def* d, pd_real fn) {
    if (d->boundary == PD_BOUNDARY_NO_SLIP)
        return INFINITY;
    return fn > 0 ? d->friction * fn : 0;
}

pd_vec3 pd_friction_anchor(const pd_collider* col, pd_vec3 x, pd_real h) {
    return pd_v3_madd(x, h, pd_collider_velocity_at(col, x));
}

pd_vec3 pd_friction_slip(pd_vec3 y, pd_vec3 anchor, pd_vec3 n) {
    pd_vec3 d = pd_v3_sub(y, anchor);
    return pd_v3_madd(d, -pd_v3_dot(d, n), n);
}

/* The smoothed slip magnitude of Li et al. 2020 (Sec. 5, their f0 with eps = eps_v h): f0(x) = x
 * beyond eps, and inside -x^3/(3 eps^2) + x^2/eps + eps/3, C1 at eps; f1(x)/x, the factor of u in
 * its gradient. */
static pd_real smoothed_slip(pd_real x, pd_real eps, pd_real* f1_over_x) {
    if (x >= eps) {
        *f1_over_x = 1 / x;
        return x;
    }
    *f1_over_x = 2 / eps - x / (eps * eps);
    return -x * x * x / (3 * eps * eps) + x * x / eps + eps / 3;
}

pd_real pd_friction_apply(pd_vec3* r, pd_vec3 y, pd_vec3 anchor, pd_vec3 n, pd_real limit,
                          pd_real eps, pd_real* k_t, uint8_t* stuck) {
    *stuck = 0;
    *k_t = 0;
    if (!(limit > 0))
        return 0;
    pd_vec3 u = pd_friction_slip(y, anchor, n);
    if (isfinite(limit)) {
        pd_real f1_over_x, D = limit * smoothed_slip(pd_v3_len(u), eps, &f1_over_x);
        *k_t = limit * f1_over_x;
        *r = pd_v3_madd(*r, *k_t, u);
        return D;
    }
    /* no_slip: held at its anchor (pd_friction_snap puts it there); anywhere else is a point
     * the merit must never accept */
    *stuck = 1;
    *r = pd_v3_scale(n, pd_v3_dot(*r, n));
    return pd_v3_len(u) > PD_FRICTION_AT_REST ? INFINITY : 0;
}

pd_vec3 pd_friction_snap(pd_vec3 y, pd_vec3 anchor, pd_vec3 n, pd_real limit) {
    if (!(limit > 0) || isfinite(limit))
        return y;
    return pd_v3_sub(y, pd_friction_slip(y, anchor, n));
}
