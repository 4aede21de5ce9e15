/* The one-dimensional basis of Xu 2018 Sec. 4.1 (Eq. 15-17) from which g(theta) and h(tau) of
 * Eq. 12 are combined, and the presets. Each A_n and B_n is 0 with zero slope at s = 1 and
 * convex on (0, inf), so a combination with non-negative coefficients keeps the three
 * conditions of Sec. 4; one with negative coefficients keeps them where its curvature stays
 * positive (pd_hpd_basis_first_concave, checked at set-up). */
#include <math.h>
#include <string.h>

#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"

/* The bond loops evaluate f and f' for every bond at every evaluation: first with libm's pow
 * (a third of the method's time, perf on the Fig. 5 scene), then with the powers built order by
 * order (basis value and slope still 24 % of a drop's time, perf on xu_armadillo_6k); now as two
 * polynomials, in s and in 1/s, expanded once from the coefficients (expand below) and
 * evaluated by Horner's rule, inline in hyperelastic_pd_data.h (out of line their calls were
 * 9 % of the cylinder twist's time, perf). */

/* Eq. 15 term by term into the powers of s (and log s for A_1), and their derivatives. */
static void expand(pd_hpd_basis* f) {
    memset(f->up, 0, sizeof f->up), memset(f->down, 0, sizeof f->down);
    memset(f->dup, 0, sizeof f->dup), memset(f->ddown, 0, sizeof f->ddown);
    f->lg = 0;
    for (int n = 1; n <= f->orders; ++n) {
        pd_real a = f->a[n - 1], b = f->b[n - 1];
        pd_real top = (a + 2 * b) / (n * (n + 1.0)); /* of s^(n+1) - 1 */
        f->up[n + 1] += top, f->up[0] -= top;
        f->up[1] -= 2 * b / n, f->up[0] += 2 * b / n; /* B_n's -s + 1 */
        if (n == 1) {
            f->lg -= a;
        } else {
            pd_real low = a / (n * (n - 1.0)); /* of s^(1-n) - 1 */
            f->down[n - 1] += low, f->up[0] -= low;
        }
    }
    f->n_up = f->orders + 1;
    f->n_down = f->orders > 1 ? f->orders - 1 : 0;
    for (int k = 1; k <= f->n_up; ++k) /* d/ds up[k] s^k = k up[k] s^(k-1) */
        f->dup[k - 1] = k * f->up[k];
    for (int k = 1; k <= f->n_down; ++k) /* d/ds down[k] s^-k = -k down[k] s^-(k+1) */
        f->ddown[k + 1] = -k * f->down[k];
    f->ddown[1] = f->lg; /* d/ds lg log s = lg / s */
}

/* Eq. 17: A_n'' = s^(n-1) + s^-(n+1), B_n'' = 2 s^(n-1). */
pd_real pd_hpd_basis_curvature(const pd_hpd_basis* f, pd_real s) {
    pd_real v = 0, sn1 = 1, isn1 = 1 / (s * s), inv = 1 / s; /* s^(n-1), s^-(n+1) at n = 1 */
    for (int n = 1; n <= f->orders; ++n, sn1 *= s, isn1 *= inv)
        v += f->a[n - 1] * (sn1 + isn1) + f->b[n - 1] * 2 * sn1;
    return v;
}

/* The highest order with a coefficient, and the expansion into powers. */
static pd_hpd_basis with_orders(pd_hpd_basis f) {
    f.orders = 0;
    for (int n = 1; n <= PD_HPD_ORDERS; ++n)
        if (f.a[n - 1] != 0 || f.b[n - 1] != 0)
            f.orders = n;
    expand(&f);
    return f;
}

/* Sec. 6: linear g = h = B_1 (Fig. 8); StVK g = h = ((s^2 - 1)/2)^2 = (3 B_3 - B_1)/2 (Eq. 28);
 * A_4 for both (Fig. 5). The StVK combination has a negative coefficient: its curvature
 * (3 s^2 - 1)/2 is negative below s = 1/sqrt(3), as StVK's own energy softens under strong
 * compression (the paper's own preset, kept as Eq. 28 gives it).
 * neo-Hookean: the paper's "we simply set" g = h = A_1 (Eq. 27) carries 1.20 / 1.47 times the
 * compressible neo-Hookean law's stress at stretch 1.2 / 1.5 in the bulk at nu = 0.3 (every
 * A_n has f'''(1) = -2 and every B_n >= 0: no non-negative combination softens more in
 * tension). g = h = A_1 + 3 A_2 - 3 B_1 (issue 34) has f''(1) = 2 like every basis function,
 * f'''(1) = -2 - 6 - 0 = -8, and f'' = 3 s + s^-2 + 3 s^-3 - 5 >= 0.80 on (0, inf) (least near
 * s = 1.41): convex everywhere. Fitted to the law's uniaxial stress in the bulk analysis of
 * docs/methods/hyperelastic_pd.md: 0.95 / 1.04 / 1.10 of it at l = 0.8 / 1.2 / 1.5 at nu = 0.3
 * (A_1: 0.78 / 1.20 / 1.47). */
static pd_hpd_basis preset(int which) {
    pd_hpd_basis f;
    memset(&f, 0, sizeof f);
    switch (which) {
        case PD_HPD_NEO_HOOKEAN:
            f.a[0] = 1;
            f.a[1] = 3;
            f.b[0] = -3;
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

/* The least stretch in [lo, hi] where f'' <= 0, on a geometric grid of PD_HPD_CONVEX_SAMPLES
 * intervals (s = 1 among its points when lo hi = 1); 0 when f'' > 0 at every point. A dip
 * below 0 narrower than a grid step (0.8 % of s on [0.2, 5]) could pass: the check samples, it
 * does not prove. */
pd_real pd_hpd_basis_first_concave(const pd_hpd_basis* f, pd_real lo, pd_real hi) {
    for (int k = 0; k <= PD_HPD_CONVEX_SAMPLES; ++k) {
        pd_real s = lo * pow(hi / lo, (pd_real)k / PD_HPD_CONVEX_SAMPLES);
        if (!(pd_hpd_basis_curvature(f, s) > 0))
            return s;
    }
    return 0;
}
