/* The one-dimensional basis of Xu 2018 Sec. 4.1 (Eq. 15-17) from which g(theta) and h(tau) of
 * Eq. 12 are combined, and the presets the paper names. Each A_n and B_n is 0 with zero slope
 * at s = 1 and convex on (0, inf), so a combination with non-negative coefficients keeps the
 * three conditions of Sec. 4. */
#include <math.h>
#include <string.h>

#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"

/* The powers s^n and s^-n are built by multiplication, order by order up to the highest one
 * used: the bond loops evaluate these for every bond at every evaluation, and libm's pow took a
 * third of the method's time (perf, the Fig. 5 scene). */

/* Eq. 15: A_n = ((s^(n+1) - 1)/(n+1) + (s^(1-n) - 1)/(n-1)) / n, A_1 = (s^2 - 1)/2 - log s;
 * B_n = 2/n ((s^(n+1) - 1)/(n+1) - s + 1). */
pd_real pd_hpd_basis_value(const pd_hpd_basis* f, pd_real s) {
    pd_real v = 0, sn = 1, isn = 1, inv = 1 / s;
    for (int n = 1; n <= f->orders; ++n) {
        sn *= s, isn *= inv; /* s^n, s^-n */
        pd_real a = f->a[n - 1], b = f->b[n - 1], up = (sn * s - 1) / (n + 1);
        if (a != 0)
            v += a * (n == 1 ? 0.5 * (s * s - 1) - log(s) : (up + (isn * s - 1) / (n - 1)) / n);
        if (b != 0)
            v += b * 2 / n * (up - s + 1);
    }
    return v;
}

/* Eq. 16: A_n' = (s^n - s^-n)/n, B_n' = 2 (s^n - 1)/n. */
pd_real pd_hpd_basis_slope(const pd_hpd_basis* f, pd_real s) {
    pd_real v = 0, sn = 1, isn = 1, inv = 1 / s;
    for (int n = 1; n <= f->orders; ++n) {
        sn *= s, isn *= inv;
        v += (f->a[n - 1] * (sn - isn) + f->b[n - 1] * 2 * (sn - 1)) / n;
    }
    return v;
}

/* Eq. 17: A_n'' = s^(n-1) + s^-(n+1), B_n'' = 2 s^(n-1). */
pd_real pd_hpd_basis_curvature(const pd_hpd_basis* f, pd_real s) {
    pd_real v = 0, sn1 = 1, isn1 = 1 / (s * s), inv = 1 / s; /* s^(n-1), s^-(n+1) at n = 1 */
    for (int n = 1; n <= f->orders; ++n, sn1 *= s, isn1 *= inv)
        v += f->a[n - 1] * (sn1 + isn1) + f->b[n - 1] * 2 * sn1;
    return v;
}

/* The highest order with a coefficient. */
static pd_hpd_basis with_orders(pd_hpd_basis f) {
    f.orders = 0;
    for (int n = 1; n <= PD_HPD_ORDERS; ++n)
        if (f.a[n - 1] != 0 || f.b[n - 1] != 0)
            f.orders = n;
    return f;
}

/* Sec. 6: linear g = h = B_1 (Fig. 8); neo-Hookean g = h = A_1 (Eq. 27, "we simply set");
 * StVK g = h = ((s^2 - 1)/2)^2 = (3 B_3 - B_1)/2 (Eq. 28); A_4 for both (Fig. 5). The StVK
 * combination has a negative coefficient: its curvature (3 s^2 - 1)/2 is negative below
 * s = 1/sqrt(3), as StVK's own energy softens under strong compression. */
static pd_hpd_basis preset(int which) {
    pd_hpd_basis f;
    memset(&f, 0, sizeof f);
    switch (which) {
        case PD_HPD_NEO_HOOKEAN:
            f.a[0] = 1;
            break;
        case PD_HPD_STVK:
            f.b[2] = 1.5;
            f.b[0] = -0.5;
            break;
        case PD_HPD_A4:
            f.a[3] = 1;
            break;
        default:
            f.b[0] = 1;
    }
    return f;
}

/* Slots of a `g` / `h` object follow PD_HPD_BASIS_NAMES: A_1..A_8, then B_1..B_8. */
pd_hpd_basis pd_hpd_basis_of(const pd_hpd_material_params* mp, int which_h) {
    const pd_param_reals* c = which_h ? &mp->h : &mp->g;
    pd_hpd_basis f;
    int given = 0;
    memset(&f, 0, sizeof f);
    for (int n = 0; n < PD_HPD_ORDERS && n + PD_HPD_ORDERS < c->count; ++n) {
        f.a[n] = c->v[n];
        f.b[n] = c->v[n + PD_HPD_ORDERS];
        given |= f.a[n] != 0 || f.b[n] != 0;
    }
    return with_orders(given ? f : preset(mp->preset));
}
