#include "sph/wall_density.h"

#include <math.h>

#include "boundary/collider.h"
#include "sph/kernels.h"

/* A slab at height z of the kernel holds pi C / 4 (H^2 - z^2)^4 (C = 315 / (64 pi H^9)); its
 * integral from d to H, with u = z / H, is (315 / 256) [P(1) - P(u)] for
 * P(u) = u - 4 u^3/3 + 6 u^5/5 - 4 u^7/7 + u^9/9 (P(1) = 128/315: the half kernel is 1/2). */
static pd_real slab_primitive(pd_real u) {
    pd_real u2 = u * u;
    return u * (1 + u2 * (-4.0 / 3 + u2 * (6.0 / 5 + u2 * (-4.0 / 7 + u2 / 9))));
}

pd_real pd_sph_poly6_beyond_plane(pd_real d, pd_real H) {
    if (d >= H)
        return 0;
    pd_real u = d <= -H ? -1 : d / H;
    return 315.0 / 256.0 * (128.0 / 315.0 - slab_primitive(u));
}

pd_real pd_sph_poly6_lattice_sum(pd_real horizon, int lowest_row) {
    int r = (int)ceil(horizon);
    pd_real sum = 0;
    for (int i = -r; i <= r; ++i)
        for (int j = lowest_row > -r ? lowest_row : -r; j <= r; ++j)
            for (int k = -r; k <= r; ++k)
                sum += pd_sph_poly6((pd_real)(i * i + j * j + k * k), horizon);
    return sum;
}

pd_real pd_sph_poly6_layers_beyond_plane(pd_real d, pd_real H, pd_real s, pd_real* deriv) {
    pd_real share = 0, slope = 0;
    /* the first row inside the kernel, z > -H: k >= (-H - d - s/2) / s */
    pd_real first = ceil((-H - d - 0.5 * s) / s);
    for (pd_real z = d + (0.5 + (first > 0 ? first : 0)) * s; z < H; z += s) {
        pd_real u = z / H, q = 1 - u * u;
        if (q <= 0)
            continue;
        share += q * q * q * q;      /* (H^2 - z^2)^4 / H^8 */
        slope += -8 * u * q * q * q; /* its derivative in z, times H */
    }
    /* s pi C H^8 / 4 = 315 s / (256 H) */
    if (deriv)
        *deriv = 315.0 / 256.0 * s / (H * H) * slope;
    return 315.0 / 256.0 * s / H * share;
}

/* One face's share at distance d: the continued rows (s > 0) or the half-space; its derivative
 * in d in *deriv. */
static pd_real face_share(pd_real d, pd_real H, pd_real s, pd_real* deriv) {
    if (s > 0)
        return pd_sph_poly6_layers_beyond_plane(d, H, s, deriv);
    *deriv = 0;
    if (d > -H && d < H) {
        pd_real u = d / H, q = 1 - u * u;
        *deriv = -315.0 / 256.0 * q * q * q * q / H;
    }
    return pd_sph_poly6_beyond_plane(d, H);
}

/* Bisection on the height: the bottom row's kernel sum over the rest sum plus the plane's share
 * falls monotonically with it, from above 1 at the plane to below 1 a horizon away. */
pd_real pd_sph_poly6_rest_height(pd_real horizon, int layers) {
    pd_real rest = pd_sph_poly6_lattice_sum(horizon, -(int)ceil(horizon));
    pd_real own = pd_sph_poly6_lattice_sum(horizon, 0) / rest;
    pd_real lo = 0, hi = horizon, deriv;
    for (int it = 0; it < 60; ++it) {
        pd_real mid = 0.5 * (lo + hi);
        if (own + face_share(mid, horizon, layers ? 1 : 0, &deriv) > 1)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The colliders' solids overlap where walls meet (a floor and a side wall, two faces of a
 * container): their shares are combined as 1 - prod (1 - s_k), the share of a union of
 * independent regions, exact for perpendicular planes under a separable kernel and close to it
 * for Poly6 (a plain sum counted a corner twice: measured, grains in a channel's corners at
 * 1.2 rho_0). Returns the share, its gradient in *grad when grad is not NULL. */
static pd_real union_share(const pd_colliders* c, pd_vec3 p, pd_real H, pd_real s, pd_vec3* grad) {
    pd_real outside = 1;        /* prod (1 - s_k) */
    pd_vec3 g = pd_v3(0, 0, 0); /* gradient of prod (1 - s_k) */
    for (int k = 0; k < c->count; ++k) {
        pd_real dist[PD_COLLIDER_MAX_FACES];
        pd_vec3 n[PD_COLLIDER_MAX_FACES];
        int faces = pd_collider_faces(&c->items[k], p, dist, n);
        for (int f = 0; f < faces; ++f) {
            if (dist[f] >= H)
                continue;
            pd_real dsk, sk = face_share(dist[f], H, s, &dsk);
            if (grad) /* d/dp [outside (1 - s_k)] = g (1 - s_k) - outside ds_k n */
                g = pd_v3_madd(pd_v3_scale(g, 1 - sk), -outside * dsk, n[f]);
            outside *= 1 - sk;
        }
    }
    if (grad)
        *grad = pd_v3_scale(g, -1);
    return 1 - outside;
}

pd_real pd_sph_collider_share(const pd_colliders* c, pd_vec3 p, pd_real H, pd_real s) {
    return union_share(c, p, H, s, NULL);
}

pd_real pd_sph_collider_share_gradient(const pd_colliders* c, pd_vec3 p, pd_real H, pd_real s,
                                       pd_vec3* grad) {
    return union_share(c, p, H, s, grad);
}
