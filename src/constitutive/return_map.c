/* Drucker-Prager return mapping (Wang et al. 2025 Sec. 5, Eq. 13-22), in the principal basis of
 * the trial deformation gradient F_tr = U diag(s) V^T, where b_tr = F_tr F_tr^T (Eq. 14) and the
 * Kirchhoff stress of Eq. 15 are diagonal.
 *
 * Read as: Eq. 16 J = sqrt(2 tau_max / (d kappa) + 1), the J whose Eq. 15 stress has trace
 * tau_max (as printed, sqrt(2 / (d kappa)) tau_max + 1, it misses the apex); Eq. 18's ||s|| as
 * sqrt(J_2), the measure of Eq. 13 (with the Frobenius norm the result misses the surface);
 * kappa of Eq. 15 as the bulk modulus (tau_vol = kappa tr(eps) at small strain). */
#include "constitutive/return_map.h"

#include <math.h>

#include "constitutive/drucker_prager.h"
#include "constitutive/energies.h"
#include "math/svd3.h"

#define D 3.0 /* the dimension d of Eq. 15-20 */

pd_dp_map pd_von_mises_map(pd_real mu, pd_real kappa, pd_real yield_stress) {
    pd_dp_cone cone = pd_von_mises_cone(yield_stress);
    return (pd_dp_map){mu, kappa, cone.b, cone.a};
}

pd_vec3 pd_dp_map_kirchhoff(const pd_dp_map* y, pd_vec3 s) {
    return pd_neo_hookean_kirchhoff(y->mu, y->kappa, s); /* Eq. 15 */
}

/* sqrt(J_2) = sqrt(s:s / 2) of principal stresses tau. */
static pd_real root_j2(pd_vec3 tau) {
    pd_real p = (tau.x + tau.y + tau.z) / D, a = tau.x - p, b = tau.y - p, c = tau.z - p;
    return sqrt(0.5 * (a * a + b * b + c * c));
}

pd_real pd_dp_map_yield(const pd_dp_map* y, pd_vec3 tau) {
    return y->cf * (tau.x + tau.y + tau.z) + root_j2(tau) - y->cc; /* Eq. 13 */
}

/* The root x of (b0 + x)(b1 + x)(b2 + x) = J^2 with every b_a + x > 0 (Eq. 20). The left side
 * rises monotonically from 0 at x = -min b_a, so Newton from the right of the root (where it is
 * convex) converges without overshooting; bracketed by bisection for safety. */
static pd_real volume_shift(pd_vec3 b, pd_real J2) {
    /* the bracket's first width grows with |lo|: lo + 1 == lo once |lo| passes 2^53 (a grain
     * stretched 1e8 times), and doubling a zero width never ended */
    pd_real lo = -fmin(b.x, fmin(b.y, b.z)), width = fmax(1, fabs(lo)), hi = lo + width;
    while ((b.x + hi) * (b.y + hi) * (b.z + hi) < J2 && isfinite(hi))
        width *= 2, hi = lo + width;
    pd_real x = hi;
    for (int it = 0; it < 100; ++it) {
        pd_real p = b.x + x, q = b.y + x, r = b.z + x, f = p * q * r - J2;
        pd_real df = p * q + q * r + p * r, next = x - f / df;
        if (f > 0)
            hi = x;
        else
            lo = x;
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        if (fabs(next - x) <= 1e-15 * (1 + fabs(x)))
            return next;
        x = next;
    }
    return x;
}

static pd_mat3 from_principal(pd_mat3 U, pd_vec3 s, pd_mat3 V) {
    return pd_m3_mul(pd_m3_mul(U, pd_m3_diag(s.x, s.y, s.z)), pd_m3_transpose(V));
}

/* tau = U diag(tau(s)) U^T of the principal values s (Eq. 15), and the plastic strain from the
 * trial's principal stretches s0 to s, each when asked for. */
static void stress_out(const pd_dp_map* y, pd_mat3 U, pd_vec3 s0, pd_vec3 s, pd_mat3* tau,
                       pd_real* plastic) {
    if (tau) {
        pd_vec3 t = pd_dp_map_kirchhoff(y, s);
        *tau = pd_m3_mul(pd_m3_mul(U, pd_m3_diag(t.x, t.y, t.z)), pd_m3_transpose(U));
    }
    if (plastic) {
        /* a trial with a vanishing stretch (J = 0 goes to the apex) counts as 1e-12 */
        pd_real a = log(fmax(fabs(s0.x), 1e-12) / s.x), b = log(fmax(fabs(s0.y), 1e-12) / s.y);
        pd_real c = log(fmax(fabs(s0.z), 1e-12) / s.z);
        *plastic = sqrt(a * a + b * b + c * c);
    }
}

pd_dp_case pd_dp_return_map(const pd_dp_map* y, pd_mat3 F_tr, pd_mat3* F, pd_mat3* tau,
                            pd_real* plastic) {
    pd_mat3 U, V;
    pd_vec3 s;
    pd_svd3(F_tr, &U, &s, &V);
    pd_real J = s.x * s.y * s.z;
    pd_vec3 t = pd_dp_map_kirchhoff(y, s);
    pd_real trace = t.x + t.y + t.z;
    pd_real tau_max = y->cf > 0 ? y->cc / y->cf : INFINITY;
    *F = F_tr;
    if (J > 0 && pd_dp_map_yield(y, t) <= 0) { /* case A */
        stress_out(y, U, s, s, tau, plastic);
        return PD_DP_ELASTIC;
    }
    if (J <= 0 || trace > tau_max) { /* case B (an inverted F has no cone to return to) */
        /* Eq. 16; without an apex (C_f = 0: von Mises' cylinder) an inverted F goes to J = 1 */
        pd_real Jn = isfinite(tau_max) ? sqrt(2 * tau_max / (D * y->kappa) + 1) : 1;
        pd_real c = cbrt(Jn);
        *F = from_principal(U, pd_v3(c, c, c), V); /* Eq. 17 */
        stress_out(y, U, s, pd_v3(c, c, c), tau, plastic);
        return PD_DP_APEX;
    }
    /* case C: the deviator shortened by y_dp (Eq. 18), b rebuilt with its trace (Eq. 19) and
     * shifted by beta to keep det b = J^2 (Eq. 20-21). b_base + beta I = b_dev + (tr b / d +
     * beta) I: we solve for the sum g = tr b / d + beta, so that b_dev + g is not the small
     * difference of two large numbers (a grain stretched 1e9 times has tr b / d ~ 3e17, whose
     * rounding alone was 64, and det F came out 13824 for 1) */
    pd_real len = root_j2(t), keep = len > 0 ? fmax(0, len - pd_dp_map_yield(y, t)) / len : 0;
    pd_real m = y->mu * pow(J, -2 / D), p = trace / D;
    pd_vec3 dev = pd_v3(keep * (t.x - p) / m, keep * (t.y - p) / m, keep * (t.z - p) / m);
    pd_real g = volume_shift(dev, J * J);
    pd_vec3 sn = pd_v3(sqrt(dev.x + g), sqrt(dev.y + g), sqrt(dev.z + g));
    *F = from_principal(U, sn, V); /* Eq. 22 */
    stress_out(y, U, s, sn, tau, plastic);
    return PD_DP_CONE;
}
