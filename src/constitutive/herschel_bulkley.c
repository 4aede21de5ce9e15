/* Herschel-Bulkley's return on the Hencky strain (herschel_bulkley.h). */
#include "constitutive/herschel_bulkley.h"

#include <math.h>

/* The excess x = |s| - sqrt(2/3) sigma_Y in [0, X], X = |s_tr| - sqrt(2/3) sigma_Y, where
 * g(x) = x - X + c (x / eta)^(1 / h), c = 2 mu dt, vanishes: g is increasing, g(0) = -X < 0,
 * g(X) > 0. Newton's steps, a bisection where one would leave the bracket. */
static pd_real flow_excess(const pd_herschel_bulkley* m, pd_real dt, pd_real X) {
    if (!(m->viscosity > 0))
        return 0; /* no viscosity: back onto the surface (von Mises) */
    pd_real c = 2 * m->mu * dt, p = 1 / m->exponent, lo = 0, hi = X, x = X;
    for (int it = 0; it < 200; ++it) {
        pd_real r = x / m->viscosity, g = x - X + c * pow(r, p);
        if (g == 0)
            return x;
        if (g > 0)
            hi = x;
        else
            lo = x;
        pd_real next = x - g / (1 + c * p * pow(r, p - 1) / m->viscosity);
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        if (fabs(next - x) <= 1e-15 * X || hi - lo <= 1e-15 * X)
            return next;
        x = next;
    }
    return x;
}

int pd_herschel_bulkley_return(const pd_herschel_bulkley* m, pd_real dt, pd_vec3 s_tr, pd_vec3* s) {
    pd_real e[3] = {log(s_tr.x), log(s_tr.y), log(s_tr.z)};
    pd_real tr = e[0] + e[1] + e[2], dev[3], norm = 0;
    for (int a = 0; a < 3; ++a)
        dev[a] = e[a] - tr / 3, norm += dev[a] * dev[a];
    pd_real trial = 2 * m->mu * sqrt(norm), surface = sqrt(2.0 / 3.0) * m->yield_stress;
    if (trial <= surface) {
        *s = s_tr;
        return 0;
    }
    pd_real scale = (surface + flow_excess(m, dt, trial - surface)) / trial;
    *s = pd_v3(exp(tr / 3 + scale * dev[0]), exp(tr / 3 + scale * dev[1]),
               exp(tr / 3 + scale * dev[2]));
    return 1;
}
