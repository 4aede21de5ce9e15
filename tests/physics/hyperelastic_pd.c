/* hyperelastic_pd (Xu 2018): the energy's gradient against finite differences, a bar's small-
 * strain E and nu under the mapping of Eq. 26, its nominal stress at large stretch against the
 * hyperelastic laws the presets approximate (VALIDATION.md, "Hyperelasticity"), convergence of
 * the quasi-Newton solve by Eq. 25, and the refusals of the `hyperelastic` block. */
#include <stdlib.h>

#include "bar.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"

#define BAR_L 0.4
#define BAR_W 0.1

/* A bar of E = 1e5 Pa pinned at both ends; pin 1 moves by stretch * L over 1 s, then holds. */
static const char* k_bar =
    "{\"version\":1,\"method\":\"hyperelastic_pd\","
    "\"solver\":{\"iterations\":60,\"tolerance\":1e-6},"
    "\"time\":{\"dt\":0.05,\"fps\":20,\"frames\":30},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,"
    "\"hyperelastic\":{\"preset\":\"linear\"}}},"
    "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.4,0.1,0.1]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[0.38,-1,-1],\"max\":[1,1,1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":1,\"translate\":[%g,0,0]}]}]}]}";

static int open_bar(pd_test_sim* t, double stretch, const char* const* sets, int count) {
    char json[2048];
    snprintf(json, sizeof json, k_bar, stretch * (BAR_L - 0.02));
    return pd_test_sim_open(t, json, sets, count);
}

static pd_hpd_state* state_of(pd_test_sim* t) {
    return (pd_hpd_state*)t->world->solver_state;
}

/* dE/dy of Eq. 12-14 (the forces of Eq. 13, 19) against central differences of E at a
 * deformed state, for each preset: a wrong factor, sign or a missing a_ji term shows. */
PD_TEST(energy_gradient_matches_finite_differences) {
    const char* presets[] = {"linear", "neo_hookean", "stvk", "A4"};
    for (int k = 0; k < 4; ++k) {
        char set[96];
        snprintf(set, sizeof set, "materials.m.hyperelastic.preset=%s", presets[k]);
        const char* sets[] = {set};
        pd_test_sim t;
        PD_REQUIRE(open_bar(&t, 0.1, sets, 1));
        pd_hpd_state* s = state_of(&t);
        const pd_particles* p = &t.world->particles;
        pd_vec3* y = malloc(p->count * sizeof *y);
        pd_vec3* g = malloc(p->count * sizeof *g);
        PD_REQUIRE(y && g);
        for (size_t i = 0; i < p->count; ++i) { /* a twist, a stretch and a ripple */
            pd_vec3 x = p->rest[i];
            double a = 0.8 * x.x, ripple = 0.002 * sin(97.0 * (double)i);
            y[i] = pd_v3(1.1 * x.x + ripple, x.y * cos(a) - x.z * sin(a) - ripple,
                         x.y * sin(a) + x.z * cos(a));
        }
        pd_hpd_elastic_energy(s, y);
        memcpy(g, s->grad, p->count * sizeof *g);
        double worst = 0, scale = 0, eps = 1e-7;
        for (size_t i = 0; i < p->count; i += 97) {
            for (int c = 0; c < 3; ++c) {
                double* yc = &y[i].x + c;
                double keep = *yc;
                *yc = keep + eps;
                double ep = pd_hpd_elastic_energy(s, y);
                *yc = keep - eps;
                double em = pd_hpd_elastic_energy(s, y);
                *yc = keep;
                double fd = (ep - em) / (2 * eps), an = (&g[i].x)[c];
                worst = fmax(worst, fabs(fd - an));
                scale = fmax(scale, fabs(an));
            }
        }
        printf("  %s: largest |dE/dy| %.4g N, largest error of the differences %.3g N\n",
               presets[k], scale, worst);
        PD_CHECK(scale > 0);
        PD_CHECK(worst <= 1e-5 * scale);
        free(y);
        free(g);
        pd_test_sim_close(&t);
    }
}

/* Small strain (0.5 %): the effective nu and E a bar shows under Eq. 26. In the bulk, with
 * g = h = B_1, the energy is lambda (tr e)^2 / 9 + mu (2 e:e + (tr e)^2) / 15, so Eq. 26 gives
 * Lame constants (lambda_0 + mu_0, mu_0) of the asked (lambda_0, mu_0): nu shows as
 * (lambda_0 + mu_0) / (2 (lambda_0 + 2 mu_0)) (0.25, 0.333, 0.455 for nu = 0, 0.25, 0.45)
 * and E within 7 % but at nu = 0 (x 1.25): docs/methods/hyperelastic_pd.md. The issue asks
 * for nu within 0.07, E within 20 %. Measured: nu 0.245, 0.339, 0.476; E x 1.40, 1.22, 1.18
 * (with the lattice's isotropic direction factors; without them nu 0.214, 0.316, 0.468 and
 * E x 1.62, 1.41, 1.38). */
static void check_small_strain(double nu) {
    char set[96];
    snprintf(set, sizeof set, "materials.m.poisson_ratio=%g", nu);
    const char* sets[] = {set};
    pd_test_sim t;
    PD_REQUIRE(open_bar(&t, 0.005, sets, 1));
    PD_REQUIRE(pd_test_sim_run(&t, 1.5));
    pd_test_bar m = pd_test_bar_measure(&t, BAR_L, BAR_W);
    printf("  requested nu %.3g\n", nu);
    PD_CHECK_NEAR(m.nu, nu, 0.07);
    PD_CHECK_REL(m.E, 1e5, 0.2);
    pd_test_sim_close(&t);
}

PD_TEST(known_failure_bar_shows_nu_0) {
    check_small_strain(0);
}
PD_TEST(known_failure_bar_shows_nu_025) {
    check_small_strain(0.25);
}
PD_TEST(bar_shows_nu_045) {
    check_small_strain(0.45);
}

/* Nominal stress P = F / W^2 of a bar at stretch l (E = 1e5, nu = 0.3), against the law its
 * preset approximates (VALIDATION.md): StVK exactly P = E/2 l (l^2 - 1); neo-Hookean from
 * mu (l2^2 - 1) + lambda ln(l l2^2) = 0: P/E = 0.175 at 1.2, 0.378 at 1.5; linear
 * P = E (l - 1). Within 25 % at l = 1.2 (issue 9). Measured 1.40, 1.53 and 1.24 times the
 * laws: the bar is stiffer than Eq. 26 says already at small strain (E x 1.18-1.40 below). */
static double nominal_stress(const char* preset, double l) {
    char set[96];
    snprintf(set, sizeof set, "materials.m.hyperelastic.preset=%s", preset);
    const char* sets[] = {set};
    pd_test_sim t;
    if (!open_bar(&t, l - 1, sets, 1))
        return NAN;
    double P = NAN;
    if (pd_test_sim_run(&t, 1.5)) {
        pd_test_bar m = pd_test_bar_measure(&t, BAR_L, BAR_W);
        P = m.force / (BAR_W * BAR_W);
        printf("  %s at l = %.2f (middle: %.4f): P = %.5g Pa\n", preset, l, 1 + m.axial, P);
    }
    pd_test_sim_close(&t);
    return P;
}

/* The three bars at l = 1.2, run once for the two tests below. */
static double g_stress[3];
static int g_stress_done;

static const double* stresses_at_1_2(void) {
    if (!g_stress_done) {
        g_stress[0] = nominal_stress("linear", 1.2);
        g_stress[1] = nominal_stress("neo_hookean", 1.2);
        g_stress[2] = nominal_stress("stvk", 1.2);
        g_stress_done = 1;
    }
    return g_stress;
}

/* The laws' order at l = 1.2: StVK stiffens (0.264 E), neo-Hookean softens (0.175 E) against
 * linear (0.2 E); presets mapped to the wrong basis swap them. */
PD_TEST(presets_order_as_their_laws_at_stretch_1_2) {
    const double* P = stresses_at_1_2();
    printf("  linear %.5g, neo-Hookean %.5g, StVK %.5g Pa\n", P[0], P[1], P[2]);
    PD_CHECK(P[2] > P[0] && P[0] > P[1]);
}

PD_TEST(known_failure_stress_at_stretch_1_2_within_25_percent) {
    const double* P = stresses_at_1_2();
    double E = 1e5;
    PD_CHECK_REL(P[0], E * 0.2, 0.25);
    PD_CHECK_REL(P[1], E * 0.175, 0.25);
    PD_CHECK_REL(P[2], E * 0.5 * 1.2 * (1.2 * 1.2 - 1), 0.25);
}

/* Refused, at the key's path: an unknown basis name, a negative coefficient (the conditions
 * of Sec. 4 hold for non-negative combinations), a Poisson ratio Eq. 26 cannot map, a
 * plasticity block (the method has none). */
PD_TEST(refuses_what_the_method_cannot_honour) {
    const char* cases[][2] = {
        {"materials.m.hyperelastic.g={\"C1\":1}", "materials.m.hyperelastic.g.C1"},
        {"materials.m.hyperelastic.h={\"A2\":-1}", "materials.m.hyperelastic.h.A2"},
        {"materials.m.poisson_ratio=-0.1", "materials.m"},
        {"materials.m.plasticity={\"model\":\"von_mises\",\"yield_stress\":1e4}",
         "materials.m.plasticity"}};
    char json[2048];
    snprintf(json, sizeof json, k_bar, 0.01);
    for (int k = 0; k < 4; ++k) {
        pd_scene scene;
        pd_error err = {0};
        const char* sets[] = {cases[k][0]};
        pd_status st = pd_scene_parse(json, "bar.json", ".", sets, 1, &scene, &err);
        printf("  %s -> %s: %s\n", cases[k][0], err.path, err.message);
        PD_CHECK(st == PD_ERR_BAD_SCENE);
        PD_CHECK(strncmp(err.path, cases[k][1], strlen(cases[k][1])) == 0);
        if (st == PD_OK)
            pd_scene_free(&scene);
    }
}
