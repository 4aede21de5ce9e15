/* A cantilever released from rest under gravity, for every method with elastic solids: its
 * first bending frequency against Euler-Bernoulli, omega_1 = 1.875^2 sqrt(E I / (rho A L^4))
 * (Timoshenko, Vibration Problems in Engineering; VALIDATION.md), within 15 %, and beside it
 * the static sag it swings about against Euler-Bernoulli's 3 rho g L^4 / (2 E h^2) plus
 * Timoshenko's shear term rho g L^2 / (2 kappa G), kappa = 10 (1 + nu) / (12 + 11 nu)
 * (Cowper 1966), reported (the beam is slender enough for the linear theory: sag / L below
 * 5 %, checked). The beam: L = 0.30 m from the clamp, h = 48 mm thick (6 particles), 24 mm
 * wide (3 particles: E I / (rho A) = E h^2 / 12 does not depend on the width), E 5 MPa, nu
 * 0.25; EB's period 0.164 s, sag 10.3 mm (3.4 % of L). The tip's deflection (the mean of its
 * last layer) swings from 0 to about twice the sag and back: the period is the time between
 * its first two maxima (confirmed once it has fallen back by 20 % of the swing), the sag the
 * Aitken extrapolation of max, min, max (exact for a geometrically decaying swing). Timoshenko's
 * shear and rotary inertia lower the frequency of a beam of L / h = 6.25 by about 3 %. */
#include "methods.h"

#define BEAM_L   0.30
#define BEAM_H   0.048
#define BEAM_E   5e6
#define BEAM_NU  0.25
#define BEAM_RHO 1000.0
#define SPACING  0.008
#define T_END    0.45 /* s: 2.7 of EB's periods (the run stops at the second maximum) */

/* The beam's Young's modulus and gravity: BEAM_E and 9.81 but for the xpbi test at the end. */
static double g_beam_e = BEAM_E, g_beam_g = 9.81;
#define MAX_STEPS 200000

/* The beam from x = -2 spacings (the clamp: the two layers at x < 0 pinned) to L. Every method
 * steps "auto" (projective_pd 4 ms, hyperelastic_pd 10 ms, sbpd 0.9 of its bound); the
 * implicit methods take 100 iterations. */
static const char* k_beam =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"projective_pd\":"
    "{\"iterations\":100},\"hyperelastic_pd\":{\"iterations\":100}},"
    "\"time\":{\"dt\":\"auto\",\"fps\":100,\"frames\":45},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":5e6,\"poisson_ratio\":0.25}},"
    "\"bodies\":[{\"name\":\"beam\",\"material\":\"m\",\"spacing\":0.008,"
    "\"shape\":{\"type\":\"box\",\"min\":[-0.016,0,0],\"max\":[0.3,0.048,0.024]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0,1,1]}}]}]}";

static double reference_omega(void) {
    return 1.875 * 1.875 * sqrt(g_beam_e * BEAM_H * BEAM_H / (12 * BEAM_RHO)) / (BEAM_L * BEAM_L);
}

static double reference_omega_at_5e6(void) {
    return 1.875 * 1.875 * sqrt(BEAM_E * BEAM_H * BEAM_H / (12 * BEAM_RHO)) / (BEAM_L * BEAM_L);
}

static double reference_sag(void) {
    double g = g_beam_g, G = g_beam_e / (2 * (1 + BEAM_NU));
    double kappa = 10 * (1 + BEAM_NU) / (12 + 11 * BEAM_NU);
    double bending = 3 * BEAM_RHO * g * pow(BEAM_L, 4) / (2 * g_beam_e * BEAM_H * BEAM_H);
    double shear = BEAM_RHO * g * BEAM_L * BEAM_L / (2 * kappa * G);
    return bending + shear;
}

/* Mean downward displacement of the last layer of particles. */
static double tip_sag(const pd_particles* p) {
    double sum = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->rest[i].x > BEAM_L - SPACING)
            sum += p->rest[i].y - p->pos[i].y, n += 1;
    return sum / n;
}

/* Time and value of the extremum at sample k, by the parabola through k - 1, k, k + 1. */
static void vertex(const double* t, const double* d, int k, double* tk, double* dk) {
    double a = d[k - 1], b = d[k], c = d[k + 1], den = a - 2 * b + c;
    double u = den != 0 ? 0.5 * (a - c) / den : 0; /* in steps from k */
    *tk = t[k] + u * (t[k + 1] - t[k]);
    *dk = b - 0.25 * (a - c) * u;
}

static void beam(void) {
    static double ts[MAX_STEPS], ds[MAX_STEPS];
    pd_test_sim t;
    char e[64], g[64];
    snprintf(e, sizeof e, "materials.m.youngs_modulus=%.17g", g_beam_e);
    snprintf(g, sizeof g, "gravity=[0,%.17g,0]", -g_beam_g);
    const char* sets[] = {e, g};
    double t_end = T_END * reference_omega_at_5e6() / reference_omega();
    PD_METHOD_REQUIRE(pd_test_method_open(&t, k_beam, sets, 2));
    int n = 0, ok = 1, found = 0;
    double ext_t[3], ext_d[3];
    int seeking_max = 1, k_ext = 0;
    ts[n] = 0, ds[n++] = 0;
    while (ok && found < 3 && t.world->time < t_end - 1e-9 && n < MAX_STEPS) {
        ok = pd_test_sim_run(&t, t.world->time + t.world->def.dt);
        ts[n] = t.world->time, ds[n] = tip_sag(&t.world->particles);
        /* the running extremum of the half swing sought, confirmed when the tip has come back
         * by 20 % of the swing from the last confirmed extremum (0 at the start) */
        if (seeking_max ? ds[n] > ds[k_ext] : ds[n] < ds[k_ext])
            k_ext = n;
        double from = found ? ext_d[found - 1] : 0, swing = fabs(ds[k_ext] - from);
        if (k_ext > 0 && k_ext < n && fabs(ds[n] - ds[k_ext]) > 0.2 * swing) {
            vertex(ts, ds, k_ext, &ext_t[found], &ext_d[found]);
            ++found;
            seeking_max = !seeking_max;
            k_ext = n;
        }
        ++n;
    }
    double dt = t.world->def.dt;
    pd_test_sim_close(&t);
    PD_METHOD_REQUIRE(ok);
    for (int k = 0; k < found; ++k)
        printf("  %s, dt %.3g s: tip %s %.5g m at %.4f s\n", g_pd_method.method->name, dt,
               k % 2 ? "minimum" : "maximum", ext_d[k], ext_t[k]);
    PD_METHOD_REQUIRE(found >= 2);
    double period = found == 3 ? ext_t[2] - ext_t[0] : 2 * (ext_t[1] - ext_t[0]);
    double sag = found == 3 ? (ext_d[0] * ext_d[2] - ext_d[1] * ext_d[1]) /
                                  (ext_d[0] + ext_d[2] - 2 * ext_d[1])
                            : 0.5 * (ext_d[0] + ext_d[1]);
    printf("  %s: period %.4f s (%s), static sag %.5g m; Euler-Bernoulli %.4f s, %.5g m\n",
           g_pd_method.method->name, period, found == 3 ? "max to max" : "twice max to min", sag,
           2 * PD_PI / reference_omega(), reference_sag());
    pd_test_method_check("first bending frequency (rad/s)", 2 * PD_PI / period, reference_omega(),
                         0.15, 1);
    pd_test_method_bound("static sag / L", sag / BEAM_L, 0, 0.05);
    pd_test_method_report("static sag (m) against Euler-Bernoulli + Timoshenko", sag,
                          reference_sag());
}

/* hyperelastic_pd passes with its surface correction (solver.surface_correction, on): +6.0 %,
 * sag -24.1 %; the paper's cut families +19.7 %, -42.5 % (+36 %, -57 % under Eq. 26's
 * mapping). What stiffens it still is Eq. 24's inversion force, which resists a curvature
 * within each family (tests/physics/hyperelastic_pd_surface.c; issue 34 item 6). */
PD_TEST_EACH_METHOD(cantilever_swings_at_the_euler_bernoulli_frequency, PD_CAP_ELASTIC, beam)

/* Issue 33 asks xpbi's first bending frequency within 15 % of Euler-Bernoulli at E = 1e5 and 1e6
 * Pa (Fig. 14's stiffnesses): the beam above at those moduli, gravity scaled with E so that the
 * sag stays 3.4 % of L (the frequency does not depend on it), the run as long in periods. */
PD_TEST(xpbi_cantilever_swings_at_the_euler_bernoulli_frequency_at_1e5_and_1e6_pa) {
    const pd_solver_vtable* xpbi = NULL;
    for (const pd_solver_vtable* const* m = pd_solver_all(); *m; ++m)
        if (!strcmp((*m)->name, "xpbi"))
            xpbi = *m;
    PD_REQUIRE(xpbi);
    static const char* names[2] = {"xpbi_cantilever_at_1e5_pa", "xpbi_cantilever_at_1e6_pa"};
    for (int k = 0; k < 2; ++k) {
        g_beam_e = k ? 1e6 : 1e5, g_beam_g = 9.81 * g_beam_e / BEAM_E;
        g_pd_method = (pd_test_method_ctx){xpbi, names[k], PD_CAP_ELASTIC, 0};
        clock_t c0 = clock();
        beam();
        printf("  E %.0e Pa: CPU time %.1f s\n", g_beam_e, (double)(clock() - c0) / CLOCKS_PER_SEC);
    }
    g_beam_e = BEAM_E, g_beam_g = 9.81;
}
