/* Issue 32: mpm's sand with the mu(I) rheology (`plasticity.rate_dependence`, a departure beyond
 * Fang 2019 and Klar 2016: src/constitutive/hencky_plasticity.h) on the infinite slope. A layer
 * of thickness h on a rough floor tilted by theta with mu_s < tan theta < mu_2 reaches a steady
 * flow in which every depth bears tau / p = tan theta = mu(I), so I = I_theta = I_0 (tan theta -
 * mu_s) / (mu_2 - tan theta) throughout; with p = phi rho_s g cos theta (h - z) the shear rate is
 * du/dz = I_theta sqrt(phi g cos theta (h - z)) / d, Bagnold's profile, whose depth average is
 * u = (2/5) I_theta sqrt(phi g cos theta) h^(3/2) / d (GDR MiDi 2004; Jop, Forterre & Pouliquen
 * 2005/2006). Without mu(I) (the control) the same layer past its cone's angle accelerates at g
 * (sin theta - mu_s cos theta) and has no steady speed (measured over 0.1-0.3 s, as there).
 * The layer: sand_layer.h's (physics.mpm_sand_layer's), extension cone at phi 30 (mu_s = 3 b =
 * 0.495), the middle third measured. Jop 2006's span mu_2 - mu_s (0.2616: mu_2 = 0.757) and I_0
 * (0.279), its solid fraction 0.6; the grain diameter d chosen so that the steady speed is reached
 * within the run (the rheology's own time to steady flow, u / (g cos theta mu'(I_theta) I_theta),
 * grows as 1 / d). */
#include <math.h>
#include <time.h>

#include "constitutive/drucker_prager.h"
#include "constitutive/hencky_plasticity.h"
#include "methods.h"
#include "sand_layer.h"

#define GRAIN     0.02  /* m: mu(I)'s d */
#define FRACTION  0.6   /* mu(I)'s solid fraction (Jop 2006) */
#define I0        0.279 /* Jop 2006 */
#define FLOW_TIME 1.2   /* s after the tilt */

typedef struct incline_run {
    int ok;
    double late_v; /* m/s: the middle third's mean velocity along x over the last 0.2 s */
    double late_a; /* m/s^2: its slope over the last `window` s */
    double rise;   /* 1: its velocity at the end over its velocity at half the run */
} incline_run;

/* The measured.csv rows of this file's tests go under mpm (methods.h). */
static void as_mpm(const char* test) {
    pd_test_as_method("mpm", test, PD_CAP_DRUCKER_PRAGER);
}

static double mu_s_of_extension_cone(void) {
    return 3 * pd_dp_cone_of(30, 0, PD_CONE_EXTENSION).b;
}

/* The layer tilted by theta for `flow` s, with mu(I) (rate 1) or without: the middle third's
 * mean velocity over the last 0.2 s and its slope over the last `window` s. */
static incline_run tilted_layer(double theta, int rate, double flow, double window) {
    char block[256] = "";
    if (rate)
        snprintf(block, sizeof block,
                 ",\"rate_dependence\":{\"model\":\"mu_i\",\"I_0\":%.17g,"
                 "\"grain_diameter\":%.17g,\"solid_fraction\":%.17g}",
                 I0, GRAIN, FRACTION);
    pd_sand_layer l;
    pd_sand_layer_open(&l, "extension", block, theta);
    int frames = (int)lround(flow / 0.02), fit = (int)lround(window / 0.02);
    double v[128] = {0};
    for (int f = 1; l.ok && f <= frames && f < 128; ++f) {
        double moved;
        if (!pd_sand_layer_middle_at(&l, f * 0.02, &v[f], &moved))
            break;
        if (f % 5 == 0)
            printf("    t %.2f s after the tilt: middle's mean vx %.4f m/s\n", f * 0.02, v[f]);
    }
    incline_run r = {0};
    if (l.ok) {
        double st = 0, sv = 0, stt = 0, stv = 0, late = 0;
        int k = 0, m = 0;
        for (int f = frames - fit + 1; f <= frames; ++f) {
            double t = f * 0.02;
            st += t, sv += v[f], stt += t * t, stv += t * v[f], ++k;
            if (f > frames - 10)
                late += v[f], ++m;
        }
        r = (incline_run){1, late / m, (k * stv - st * sv) / (k * stt - st * st),
                          v[frames] / v[frames / 2]};
    }
    pd_sand_layer_close(&l);
    return r;
}

/* tan theta halfway between mu_s and mu_2 (I_theta = I_0): the mu(I) layer's mean velocity
 * levels off at Bagnold's depth average within TOLERANCE; the control (no rate dependence, the
 * same slope) accelerates at g (sin theta - mu_s cos theta) within 10 %, as
 * physics.mpm_sand_layer measures. A rate-independent return, a friction rising with the
 * trial's strain rate instead of the plastic one, or a wrong I (rho_s for rho, gamma_dot for
 * |D|: a factor sqrt 2) fails the first. */
#define TOLERANCE 0.1 /* measured -4.5 % */
PD_TEST(mu_i_layer_flows_at_bagnolds_velocity) {
    as_mpm("mu_i_layer_flows_at_bagnolds_velocity");
    clock_t c0 = clock();
    double mu_s = mu_s_of_extension_cone(), mu_2 = mu_s + PD_MU_I_JOP_SPAN;
    double tan_theta = 0.5 * (mu_s + mu_2), theta = atan(tan_theta);
    double i_theta = I0 * (tan_theta - mu_s) / (mu_2 - tan_theta);
    double bagnold =
        0.4 * i_theta * sqrt(FRACTION * 9.81 * cos(theta)) * pow(LAYER_THICK, 1.5) / GRAIN;
    double coulomb = 9.81 * (sin(theta) - mu_s * cos(theta));
    incline_run mui = tilted_layer(theta, 1, FLOW_TIME, 0.4);
    double c1 = (double)(clock() - c0) / CLOCKS_PER_SEC;
    incline_run control = tilted_layer(theta, 0, 0.3, 0.2); /* mpm_sand_layer's 0.1-0.3 s */
    printf("  theta %.2f deg (mu_s %.4f, mu_2 %.4f, I_theta %.4f): mu(I) layer's mean velocity "
           "%.4f m/s over the last 0.2 s (Bagnold %.4f), slope %.4f m/s^2 over the last 0.4 s, "
           "end / half-run %.3f; control %.4f m/s^2 (Coulomb %.4f); %.1f + %.1f s of CPU\n",
           theta * 180 / PD_PI, mu_s, mu_2, i_theta, mui.late_v, bagnold, mui.late_a, mui.rise,
           control.late_a, coulomb, c1, (double)(clock() - c0) / CLOCKS_PER_SEC - c1);
    PD_REQUIRE(mui.ok && control.ok);
    pd_test_method_check("mu(I) layer's mean velocity (m/s) against Bagnold's depth average",
                         mui.late_v, bagnold, TOLERANCE, 1);
    pd_test_method_bound("mu(I) layer's acceleration (m/s^2) over its last 0.4 s", mui.late_a,
                         -0.1 * coulomb, 0.1 * coulomb);
    pd_test_method_check("control's acceleration (m/s^2) without mu(I)", control.late_a, coulomb,
                         0.1, 1);
}
