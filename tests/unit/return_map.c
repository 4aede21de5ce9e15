/* The return mappings of src/constitutive/return_map.c: Drucker-Prager after Wang et al. 2025
 * (Eq. 13-22) and von Mises as its cone of slope 0, on trial deformation gradients F = U diag(s)
 * V^T with random rotations: each case lands where the paper says. The stress of the result is
 * recomputed by Eq. 15 from scratch (its own singular values), so a mapping that only claimed to
 * land would fail. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math/svd3.h"
#include "constitutive/return_map.h"
#include "test.h"

/* A rotation from an axis and angle (Rodrigues). */
static pd_mat3 rotation(pd_vec3 axis, pd_real angle) {
    pd_vec3 k = pd_v3_scale(axis, 1 / pd_v3_len(axis));
    pd_real c = cos(angle), s = sin(angle), t = 1 - c;
    pd_mat3 r;
    r.m[0][0] = c + t * k.x * k.x, r.m[0][1] = t * k.x * k.y - s * k.z;
    r.m[0][2] = t * k.x * k.z + s * k.y, r.m[1][0] = t * k.x * k.y + s * k.z;
    r.m[1][1] = c + t * k.y * k.y, r.m[1][2] = t * k.y * k.z - s * k.x;
    r.m[2][0] = t * k.x * k.z - s * k.y, r.m[2][1] = t * k.y * k.z + s * k.x;
    r.m[2][2] = c + t * k.z * k.z;
    return r;
}

static pd_real uniform(unsigned* seed) {
    *seed = *seed * 1103515245u + 12345u;
    return (pd_real)((*seed >> 8) & 0xFFFFFF) / (pd_real)0x1000000;
}

static pd_mat3 random_rotation(unsigned* seed) {
    pd_vec3 a = pd_v3(uniform(seed) - 0.5, uniform(seed) - 0.5, uniform(seed) - 0.5 + 1e-3);
    return rotation(a, 6.283185307 * uniform(seed));
}

static pd_mat3 compose(pd_mat3 U, pd_vec3 s, pd_mat3 V) {
    return pd_m3_mul(pd_m3_mul(U, pd_m3_diag(s.x, s.y, s.z)), pd_m3_transpose(V));
}

/* Principal Kirchhoff stress of F by Eq. 15 from F's own singular values. */
static pd_vec3 stress_of(const pd_dp_map* y, pd_mat3 F) {
    pd_mat3 U, V;
    pd_vec3 s;
    pd_svd3(F, &U, &s, &V);
    return pd_dp_map_kirchhoff(y, s);
}

static pd_real trace(pd_vec3 t) {
    return t.x + t.y + t.z;
}

static pd_real dev_norm(pd_vec3 t) {
    pd_real p = trace(t) / 3;
    return sqrt((t.x - p) * (t.x - p) + (t.y - p) * (t.y - p) + (t.z - p) * (t.z - p));
}

static const pd_dp_map k_sand = {1.0, 2.0, 0.2, 0.05}; /* mu, kappa, C_f, C_c */

/* Case A (Sec. 5.2): a state inside the cone keeps its F exactly. */
PD_TEST(inside_the_cone_f_is_unchanged) {
    unsigned seed = 7;
    int elastic = 0;
    for (int k = 0; k < 200; ++k) {
        pd_real e = 0.01 * (uniform(&seed) - 0.5); /* small strains: inside for C_c = 0.05 */
        pd_vec3 s = pd_v3(1 - e, 1 + 0.5 * e, 1 - 0.2 * e);
        pd_mat3 F = compose(random_rotation(&seed), s, random_rotation(&seed)), out;
        if (pd_dp_map_yield(&k_sand, pd_dp_map_kirchhoff(&k_sand, s)) > 0)
            continue;
        elastic += pd_dp_return_map(&k_sand, F, &out, NULL, NULL) == PD_DP_ELASTIC &&
                   memcmp(&F, &out, sizeof F) == 0;
        PD_CHECK(memcmp(&F, &out, sizeof F) == 0);
    }
    printf("  %d trial states inside the cone, all kept bit for bit\n", elastic);
    PD_CHECK(elastic > 100);
}

/* Case C: onto the cone (Eq. 18-22). The result's stress lies on the surface, J is kept (Eq. 20:
 * det b = J_tr^2), the trace of tau is kept, and the deviator keeps its direction. The notes'
 * example F = diag(1.05, 0.97, 0.99): y_dp 0.0439 before. */
PD_TEST(onto_the_cone_the_stress_lies_on_the_surface) {
    unsigned seed = 11;
    int cone = 0;
    pd_real worst_y = 0, worst_j = 0, worst_tr = 0, worst_dir = 0, worst_tau = 0;
    for (int k = 0; k < 400; ++k) {
        pd_real a = 0.15 * (uniform(&seed) - 0.5), b = 0.15 * (uniform(&seed) - 0.5);
        pd_vec3 s = pd_v3(1 + a, 1 + b, 1 - 0.9 * (a + b)); /* mostly isochoric: shear */
        if (k == 0)
            s = pd_v3(1.05, 0.97, 0.99);
        pd_mat3 F = compose(random_rotation(&seed), s, random_rotation(&seed)), out;
        pd_vec3 t0 = pd_dp_map_kirchhoff(&k_sand, s);
        pd_mat3 tau;
        if (pd_dp_return_map(&k_sand, F, &out, &tau, NULL) != PD_DP_CONE)
            continue;
        ++cone;
        pd_vec3 t1 = stress_of(&k_sand, out);
        /* the stress handed out is the result's: same trace and norm */
        worst_tau = fmax(worst_tau, fabs(pd_m3_trace(tau) - trace(t1)) +
                                        fabs(sqrt(pd_m3_frob2(tau)) - pd_v3_len(t1)));
        if (k == 0)
            printf("  diag(1.05, 0.97, 0.99): y_dp %.4f -> %.2e\n", pd_dp_map_yield(&k_sand, t0),
                   pd_dp_map_yield(&k_sand, t1));
        worst_y = fmax(worst_y, fabs(pd_dp_map_yield(&k_sand, t1)));
        worst_j = fmax(worst_j, fabs(pd_m3_det(out) / pd_m3_det(F) - 1));
        worst_tr = fmax(worst_tr, fabs(trace(t1) - trace(t0)));
        /* the deviators are parallel: |d1| |d0| = d1 . d0 (sorted alike: same principal axes) */
        pd_real p0 = trace(t0) / 3, p1 = trace(t1) / 3;
        pd_real d0[3] = {t0.x - p0, t0.y - p0, t0.z - p0};
        pd_real d1x[3] = {t1.x - p1, t1.y - p1, t1.z - p1};
        pd_real n0 = dev_norm(t0), n1 = dev_norm(t1);
        /* t1's singular values come sorted; compare sorted deviators */
        for (int i = 0; i < 3; ++i)
            for (int j = i + 1; j < 3; ++j) {
                if (d0[j] > d0[i]) {
                    pd_real x = d0[i];
                    d0[i] = d0[j], d0[j] = x;
                }
                if (d1x[j] > d1x[i]) {
                    pd_real x = d1x[i];
                    d1x[i] = d1x[j], d1x[j] = x;
                }
            }
        pd_real dot = d0[0] * d1x[0] + d0[1] * d1x[1] + d0[2] * d1x[2];
        worst_dir = fmax(worst_dir, fabs(1 - dot / (n0 * n1)));
    }
    printf("  %d states onto the cone: |y_dp| <= %.2e, |det F / det F_tr - 1| <= %.2e, "
           "|tr tau change| <= %.2e, 1 - cos(deviators) <= %.2e\n",
           cone, worst_y, worst_j, worst_tr, worst_dir);
    PD_CHECK(cone > 100);
    PD_CHECK(worst_y < 1e-12);
    PD_CHECK(worst_j < 1e-12); /* tr tau follows (Eq. 15: a function of J): printed only */
    PD_CHECK(worst_dir < 1e-12);
    printf("  the stress handed out against the result's: %.2e\n", worst_tau);
    PD_CHECK(worst_tau < 1e-12);
}

/* Case B: past the apex (tr tau > tau_max = C_c / C_f) the state lands on the apex: tr tau =
 * tau_max, i.e. det F = sqrt(2 tau_max / (3 kappa) + 1) (Eq. 16 as read), and the stress handed
 * out is that. (No deviator is left by construction, F = J^(1/3) U V^T: printed only. As
 * printed, J = sqrt(2 / (3 kappa)) tau_max + 1 gives another trace: printed beside.) */
PD_TEST(past_the_apex_the_state_lands_on_the_apex) {
    unsigned seed = 3;
    int apex = 0;
    pd_real worst_dev = 0, worst_tr = 0, worst_out = 0, tau_max = k_sand.cc / k_sand.cf;
    for (int k = 0; k < 200; ++k) {
        pd_real e = 0.05 + 0.2 * uniform(&seed); /* dilated: tension */
        pd_vec3 s = pd_v3(1 + e, 1 + 0.8 * e, 1 + 0.6 * e);
        pd_mat3 F = compose(random_rotation(&seed), s, random_rotation(&seed)), out, tau;
        if (pd_dp_return_map(&k_sand, F, &out, &tau, NULL) != PD_DP_APEX)
            continue;
        ++apex;
        pd_vec3 t1 = stress_of(&k_sand, out);
        worst_dev = fmax(worst_dev, dev_norm(t1));
        worst_tr = fmax(worst_tr, fabs(trace(t1) / tau_max - 1));
        worst_out = fmax(worst_out, fabs(pd_m3_trace(tau) / tau_max - 1));
    }
    pd_real printed = sqrt(2 / (3 * k_sand.kappa)) * tau_max + 1;
    pd_real c = cbrt(printed);
    pd_vec3 tp = pd_dp_map_kirchhoff(&k_sand, pd_v3(c, c, c));
    printf("  %d states past the apex: |tr tau / tau_max - 1| <= %.2e (handed out %.2e), |dev "
           "tau| <= %.2e; the printed Eq. 16 would give tr tau %.4f for tau_max %.4f (y_dp %.3f)\n",
           apex, worst_tr, worst_out, worst_dev, trace(tp), tau_max, pd_dp_map_yield(&k_sand, tp));
    PD_CHECK(apex > 100);
    PD_CHECK(worst_tr < 1e-12);
    PD_CHECK(worst_out < 1e-12);
}

/* Without an apex (C_f = 0, friction angle 0) an inverted trial goes to the rest volume, not to
 * the infinite J of Eq. 16 with tau_max = infinity. */
PD_TEST(an_inverted_trial_without_an_apex_goes_to_rest_volume) {
    pd_dp_map y = {1.0, 2.0, 0.0, 0.05};
    pd_mat3 F = pd_m3_diag(1.1, 0.9, -0.5), out;
    pd_real plastic = 0;
    pd_dp_case c = pd_dp_return_map(&y, F, &out, NULL, &plastic);
    printf("  case %d, det F %.6f, plastic strain %.3f\n", (int)c, pd_m3_det(out), plastic);
    PD_CHECK(c == PD_DP_APEX);
    PD_CHECK_NEAR(pd_m3_det(out), 1.0, 1e-12);
    PD_CHECK(isfinite(plastic) && plastic > 0);
}

/* A grain stretched a billion times (flung out of an hourglass by the zero-friction sand): the
 * shift beta of Eq. 20 is found and keeps det F. Its bracket once started one unit wide, which
 * rounds to nothing at |b| ~ 3e17 (lo + 1 == lo), and the search never ended; then b_base +
 * beta, the difference of two numbers near 3e17, gave det F = 13824. */
PD_TEST(a_huge_stretch_still_finds_the_volume_shift) {
    pd_dp_map y = {1.0, 2.0, 0.0, 0.0}; /* friction angle 0, no cohesion: no shear at all */
    pd_mat3 F = pd_m3_diag(1e9, 1e-9, 1), out;
    pd_dp_case c = pd_dp_return_map(&y, F, &out, NULL, NULL);
    pd_real det = pd_m3_det(out);
    printf("  case %d, det F %.15f\n", (int)c, det);
    PD_CHECK(c == PD_DP_CONE);
    PD_CHECK_NEAR(det, 1.0, 1e-12);
}

/* Von Mises (pd_von_mises_map: C_f = 0, C_c = sigma_y / sqrt 3) on sheared and dilated trials
 * with random rotations: every state outside returns onto sqrt(3 J2) = sigma_y of its own
 * recomputed stress and keeps det F (a cylinder has no apex: a dilated trial is no exception),
 * and one inside keeps F bit for bit. A C_c off by sqrt 3 or a volume change would fail. */
PD_TEST(von_mises_returns_onto_the_cylinder_and_keeps_volume) {
    const pd_real sigma_y = 0.02;
    pd_dp_map vm = pd_von_mises_map(1.0, 2.0, sigma_y);
    unsigned seed = 19;
    int returned = 0, kept = 0;
    pd_real worst_y = 0, worst_j = 0;
    for (int k = 0; k < 300; ++k) {
        pd_real amp = 0.1 * uniform(&seed); /* shear up to 0.05: about a quarter inside */
        pd_real a = amp * (uniform(&seed) - 0.5), b = amp * (uniform(&seed) - 0.5);
        pd_real v = 1 + 0.2 * (uniform(&seed) - 0.5); /* volume from 0.9 to 1.1 */
        pd_vec3 s = pd_v3(v * (1 + a), v * (1 + b), v * (1 - a - b));
        pd_mat3 F = compose(random_rotation(&seed), s, random_rotation(&seed)), out;
        pd_dp_case c = pd_dp_return_map(&vm, F, &out, NULL, NULL);
        if (c == PD_DP_ELASTIC) {
            kept += memcmp(&F, &out, sizeof F) == 0;
            PD_CHECK(sqrt(1.5) * dev_norm(pd_dp_map_kirchhoff(&vm, s)) <= sigma_y * (1 + 1e-12));
            continue;
        }
        PD_CHECK(c == PD_DP_CONE);
        ++returned;
        pd_real mises = sqrt(1.5) * dev_norm(stress_of(&vm, out)); /* sqrt(3 J2) */
        worst_y = fmax(worst_y, fabs(mises / sigma_y - 1));
        worst_j = fmax(worst_j, fabs(pd_m3_det(out) / pd_m3_det(F) - 1));
    }
    printf("  %d trials returned: |sqrt(3 J2) / sigma_y - 1| <= %.2e, |det ratio - 1| <= %.2e; "
           "%d inside kept bit for bit\n",
           returned, worst_y, worst_j, kept);
    PD_CHECK(returned > 100);
    PD_CHECK(kept > 10);
    PD_CHECK(worst_y < 1e-12);
    PD_CHECK(worst_j < 1e-12);
}
