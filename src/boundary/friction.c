/* Coulomb friction against colliders as a dissipation potential of an implicit step, with
 * the normal force lagged to the step's start (friction.h; Li et al. 2020, IPC, Sec. 5,
 * without its smoothing of the kink: sticking is decided per contact, KKT-style). */
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

pd_real pd_friction_apply(pd_vec3* r, pd_vec3 y, pd_vec3 anchor, pd_vec3 n, pd_real limit,
                          uint8_t* stuck) {
    *stuck = 0;
    if (!(limit > 0))
        return 0;
    pd_vec3 u = pd_friction_slip(y, anchor, n);
    pd_real ul = pd_v3_len(u);
    if (ul > PD_FRICTION_AT_REST && isfinite(limit)) {
        /* sliding: dD/dy = mu lambda u / |u| */
        *r = pd_v3_madd(*r, limit / ul, u);
        return limit * ul;
    }
    if (!isfinite(limit) && ul > PD_FRICTION_AT_REST) {
        /* a no-slip contact off its anchor: a point the merit must never accept */
        *stuck = 1;
        *r = pd_v3_scale(n, pd_v3_dot(*r, n));
        return INFINITY;
    }
    /* At the kink (no-slip contacts are always put there by pd_friction_snap). */
    pd_vec3 rt = pd_v3_madd(*r, -pd_v3_dot(*r, n), n);
    pd_real rl = pd_v3_len(rt);
    if (rl <= limit) {
        *stuck = 1;
        *r = pd_v3_sub(*r, rt);
        return isfinite(limit) ? limit * ul : 0;
    }
    /* starts to slide along -rt: the least-norm element of rt + the disk of radius limit */
    *r = pd_v3_madd(*r, -limit / rl, rt);
    return limit * ul;
}

pd_vec3 pd_friction_snap(pd_vec3 y_from, pd_vec3 y_to, pd_vec3 anchor, pd_vec3 n, pd_real limit) {
    if (!(limit > 0))
        return y_to;
    pd_vec3 u_to = pd_friction_slip(y_to, anchor, n);
    if (isfinite(limit) && !(pd_v3_dot(u_to, pd_friction_slip(y_from, anchor, n)) < 0))
        return y_to;
    return pd_v3_sub(y_to, u_to);
}
