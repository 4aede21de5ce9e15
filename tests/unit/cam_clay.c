/* Non-associated Cam-clay's return (src/constitutive/cam_clay.h, Wolper et al. 2019's NACC) on
 * its own yield surface: a trial outside the ellipse between the tips lands on it with its
 * pressure and its deviator's direction kept and alpha unchanged; a trial past the compaction
 * tip goes to the tip and keeps the volume it shed as plastic (alpha falls by it), so that p_0
 * grows as K sinh(xi max(-alpha, 0)); past the tension tip alike with alpha growing; a trial
 * inside is left alone. */
#include <math.h>

#include "constitutive/cam_clay.h"
#include "test.h"

/* p and q of principal stretches (cam_clay.h's definitions). */
static void p_q(const pd_cam_clay* c, pd_vec3 s, double* p, double* q, double dev[3]) {
    double e[3] = {log(s.x), log(s.y), log(s.z)}, tr = e[0] + e[1] + e[2], n2 = 0;
    for (int a = 0; a < 3; ++a)
        dev[a] = e[a] - tr / 3, n2 += dev[a] * dev[a];
    *p = -c->kappa * tr;
    *q = sqrt(6.0) * c->mu * sqrt(n2);
}

/* Snow-like: E 1e5 Pa, nu 0.3 (mu 38462, K 83333 Pa), M of 30 degrees (1.2), beta 0.5, xi 10,
 * alpha -0.01: p_0 = K sinh(0.1) = 8347 Pa. */
static pd_cam_clay snow(void) {
    return (pd_cam_clay){1e5 / 2.6, 1e5 / (3 * 0.4), pd_cam_clay_slope(30), 0.5, 10};
}

PD_TEST(a_trial_outside_lands_on_the_ellipse_with_its_pressure) {
    pd_cam_clay c = snow();
    double alpha = -0.01, p0 = pd_cam_clay_p0(&c, alpha);
    printf("  M %.4f (6 sin 30 / (3 - sin 30) = 1.2), p_0 %.2f Pa (K sinh 0.1 = %.2f)\n", c.m, p0,
           c.kappa * sinh(0.1));
    PD_CHECK_NEAR(c.m, 1.2, 1e-12);
    PD_CHECK_NEAR(p0, c.kappa * sinh(0.1), 1e-9);
    /* a volume strain of -0.03 (p = 2500 Pa) and a deviator of 0.05 (q = 4711 Pa, far out) */
    pd_vec3 s_tr = pd_v3(exp(-0.01 + 0.05), exp(-0.01 - 0.02), exp(-0.01 - 0.03)), s;
    double p, q, dev_tr[3], dev[3], p_tr, q_tr, alpha_new;
    p_q(&c, s_tr, &p_tr, &q_tr, dev_tr);
    double y_tr = pd_cam_clay_yield(&c, alpha, p_tr, q_tr);
    int kind = pd_cam_clay_return(&c, s_tr, alpha, &s, &alpha_new);
    p_q(&c, s, &p, &q, dev);
    double y = pd_cam_clay_yield(&c, alpha, p, q);
    double q_want = sqrt(c.m * c.m * (p_tr + c.beta * p0) * (p0 - p_tr) / (1 + 2 * c.beta));
    printf("  trial p %.2f q %.2f y %.4g; returned p %.2f q %.2f (the ellipse's q at p: %.2f), y "
           "%.3g, case %d\n",
           p_tr, q_tr, y_tr, p, q, q_want, y, kind);
    PD_CHECK(y_tr > 0 && kind == 1);
    PD_CHECK_NEAR(y / (c.m * c.m * p0 * p0), 0, 1e-12); /* on the surface */
    PD_CHECK_NEAR(p, p_tr, 1e-9 * p0);                  /* non-associated: p kept */
    PD_CHECK_NEAR(q, q_want, 1e-9 * p0);
    PD_CHECK_NEAR(dev[0] * dev_tr[1] - dev[1] * dev_tr[0], 0, 1e-15); /* the direction kept */
    PD_CHECK(alpha_new == alpha);
    /* inside: left alone */
    pd_vec3 in = pd_v3(exp(-0.01 + 0.005), exp(-0.01), exp(-0.01 - 0.005));
    PD_CHECK(pd_cam_clay_return(&c, in, alpha, &s, &alpha_new) == 0);
    PD_CHECK(s.x == in.x && s.y == in.y && s.z == in.z && alpha_new == alpha);
}

/* Compressed by ln J = -0.2 (p = 16667 Pa > p_0 = 8347): to the tip p = p_0, and alpha falls by
 * the volume shed, -0.2 + p_0 / K = -0.0998, to -0.1098: the new p_0 = K sinh(xi 0.1098) =
 * 111072 Pa (the hardening; 13 times the old). Pulled by ln J = +0.1 (p = -8333 Pa < -beta p_0 =
 * -4174): to the tension tip, alpha growing by 0.1 - beta p_0 / K. A return that forgot the
 * volume shed, or took it with the wrong sign, fails each. */
PD_TEST(compaction_past_the_tip_is_kept_and_hardens) {
    pd_cam_clay c = snow();
    double alpha = -0.01, p0 = pd_cam_clay_p0(&c, alpha), alpha_new, p, q, dev[3];
    double side = exp(-0.2 / 3);
    pd_vec3 s;
    int kind = pd_cam_clay_return(&c, pd_v3(side, side, side), alpha, &s, &alpha_new);
    p_q(&c, s, &p, &q, dev);
    double shed = -0.2 + p0 / c.kappa;
    printf("  compacted: case %d, p %.2f Pa for p_0 %.2f, alpha %.6f for %.6f, p_0 now %.2f Pa\n",
           kind, p, p0, alpha_new, alpha + shed, pd_cam_clay_p0(&c, alpha_new));
    PD_CHECK(kind == 2);
    PD_CHECK_NEAR(p, p0, 1e-9 * p0);
    PD_CHECK_NEAR(q, 0, 1e-9 * p0);
    PD_CHECK_NEAR(alpha_new, alpha + shed, 1e-12);
    PD_CHECK_NEAR(pd_cam_clay_p0(&c, alpha_new), c.kappa * sinh(c.xi * (0.01 - shed)), 1e-6);
    PD_CHECK(pd_cam_clay_p0(&c, alpha_new) > 1.1 * p0);
    /* pulled: to the tension tip, alpha grows by the volume gained */
    side = exp(0.1 / 3);
    kind = pd_cam_clay_return(&c, pd_v3(side, side, side), alpha, &s, &alpha_new);
    p_q(&c, s, &p, &q, dev);
    printf("  pulled: case %d, p %.2f Pa for -beta p_0 %.2f, alpha %.6f for %.6f\n", kind, p,
           -c.beta * p0, alpha_new, alpha + 0.1 - c.beta * p0 / c.kappa);
    PD_CHECK(kind == 2);
    PD_CHECK_NEAR(p, -c.beta * p0, 1e-9 * p0);
    PD_CHECK_NEAR(alpha_new, alpha + 0.1 - c.beta * p0 / c.kappa, 1e-12);
    /* loosened (alpha > 0): p_0 = 0, no strength at all */
    PD_CHECK(pd_cam_clay_p0(&c, 0.01) == 0);
}
