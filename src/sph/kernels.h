/* The smoothing kernels of every method, support radius H (every kernel is 0 at r >= H):
 * - Poly6 and Spiky of Mueller, Charypar, Gross 2003 (Particle-based fluid simulation for
 *   interactive applications, Sec. 3.5), which He 2017 uses for the particle density of
 *   granular matter (Sec. 7.1, Eq. 25-26) and for the redistribution of viscoelastic fluids
 *   (Sec. 6, Eq. 21-24, the Spiky kernel);
 * - Wendland C2 (Wendland 1995), sbpd's bond weight and sand density (Wang et al. 2025 Sec. 3)
 *   and the kernel of the grid-free methods that come.
 * Shared by the methods (src/sph): a method never keeps its own copy. */
#ifndef PD_SPH_KERNELS_H
#define PD_SPH_KERNELS_H

#include "peridot/math.h"

/* Poly6: W(r) = 315 / (64 pi H^9) (H^2 - r^2)^3 (1/m^3); takes r^2. */
static inline pd_real pd_sph_poly6(pd_real r2, pd_real H) {
    pd_real d = H * H - r2;
    if (d <= 0)
        return 0;
    pd_real h3 = H * H * H;
    return 315.0 / (64.0 * PD_PI * h3 * h3 * h3) * d * d * d;
}

/* Spiky gradient with respect to x_i of W(|x_i - x_j|) for r = x_i - x_j:
 * -45 / (pi H^6) (H - |r|)^2 r/|r| (1/m^4); 0 at r = 0 (no direction). */
static inline pd_vec3 pd_sph_spiky_gradient(pd_vec3 r, pd_real H) {
    pd_real len = pd_v3_len(r);
    if (len >= H || len <= 0)
        return pd_v3(0, 0, 0);
    pd_real h3 = H * H * H, d = H - len;
    return pd_v3_scale(r, -45.0 / (PD_PI * h3 * h3) * d * d / len);
}

/* The Spiky kernel's Hessian with respect to x_i (r = x_i - x_j), applied to v (1/m^5 times v):
 * W'' (r^ . v) r^ + (W' / |r|) (v - (r^ . v) r^) with W' = -45 / (pi H^6) (H - |r|)^2 and
 * W'' = 90 / (pi H^6) (H - |r|); 0 at r = 0, where W' / |r| has no limit. */
static inline pd_vec3 pd_sph_spiky_hessian_times(pd_vec3 r, pd_real H, pd_vec3 v) {
    pd_real len = pd_v3_len(r);
    if (len >= H || len <= 0)
        return pd_v3(0, 0, 0);
    pd_real h3 = H * H * H, d = H - len, c = 45.0 / (PD_PI * h3 * h3);
    pd_vec3 u = pd_v3_scale(r, 1 / len);
    pd_real along = pd_v3_dot(u, v), d1 = -c * d * d, d2 = 2 * c * d;
    return pd_v3_madd(pd_v3_scale(v, d1 / len), d2 - d1 / len, pd_v3_scale(u, along));
}

/* Wendland C2's shape (1 - q)^4 (1 + 4 q) of q = r / H < 1, 1 at q = 0 (for weights normalised
 * afterwards, as sbpd's per family). */
static inline pd_real pd_sph_wendland_c2_shape(pd_real q) {
    if (q >= 1)
        return 0;
    pd_real a = 1 - q, a2 = a * a;
    return a2 * a2 * (1 + 4 * q);
}

/* Wendland C2 in 3D, W(r) = 21 / (2 pi H^3) (1 - q)^4 (1 + 4 q) (1/m^3): integrates to 1. */
static inline pd_real pd_sph_wendland_c2(pd_real r, pd_real H) {
    return 21.0 / (2.0 * PD_PI * H * H * H) * pd_sph_wendland_c2_shape(r / H);
}

/* Its derivative dW/dr = 21 / (2 pi H^3) (-20 q (1 - q)^3) / H (1/m^4): 0 at r = 0 and r >= H.
 * The gradient with respect to x_i of W(|x_i - x_j|) is dW/dr (x_i - x_j) / |x_i - x_j| (xpbi,
 * Yu et al. 2024 Eq. 10-11). */
static inline pd_real pd_sph_wendland_c2_derivative(pd_real r, pd_real H) {
    pd_real q = r / H;
    if (q >= 1 || q <= 0)
        return 0;
    pd_real a = 1 - q;
    return 21.0 / (2.0 * PD_PI * H * H * H * H) * (-20.0 * q * a * a * a);
}

#endif
