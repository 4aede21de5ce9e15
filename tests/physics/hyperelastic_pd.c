/* hyperelastic_pd (Xu 2018): the energy's gradient against finite differences, a bar's small-
 * strain E and nu under the mapping of Eq. 26, its nominal stress at large stretch against the
 * hyperelastic laws the presets approximate (VALIDATION.md, "Hyperelasticity"), convergence of
 * the quasi-Newton solve by Eq. 25, and the refusals of the `hyperelastic` block. */
#include <stdlib.h>

#include "bar.h"
#include "math/svd3.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"

#define BAR_L 0.4
#define BAR_W 0.1
#ifndef BULK_DT
#define BULK_DT 0.25
#endif

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

/* The bar deformed (twist, stretch, ripple) for the energy tests. */
static void deform(const pd_particles* p, pd_vec3* y) {
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->rest[i];
        double a = 0.8 * x.x, ripple = 0.002 * sin(97.0 * (double)i);
        y[i] = pd_v3(1.1 * x.x + ripple, x.y * cos(a) - x.z * sin(a) - ripple,
                     x.y * sin(a) + x.z * cos(a));
    }
}

/* dE/dy of Eq. 12-14 (the forces of Eq. 13, 19) against central differences of E at a
 * deformed state, for each preset: a wrong factor, sign or a missing a_ji term shows. The bar is
 * 6 spacings across (1440 particles: surface families and four lines of full ones), every 34th
 * particle probed (43 of them): each difference evaluates E over the whole bar, and the
 * 10-spacing bar (4000 particles, every 97th) cost about three times as much (15 s in CI) for the
 * same check. */
PD_TEST(energy_gradient_matches_finite_differences) {
    const char* presets[] = {"linear", "neo_hookean", "stvk", "A4"};
    for (int k = 0; k < 4; ++k) {
        char set[96];
        snprintf(set, sizeof set, "materials.m.hyperelastic.preset=%s", presets[k]);
        const char* sets[] = {set, "bodies[0].shape.max=[0.4,0.06,0.06]"};
        pd_test_sim t;
        PD_REQUIRE(open_bar(&t, 0.1, sets, 2));
        pd_hpd_state* s = state_of(&t);
        const pd_particles* p = &t.world->particles;
        pd_vec3* y = malloc(p->count * sizeof *y);
        pd_vec3* g = malloc(p->count * sizeof *g);
        PD_REQUIRE(y && g);
        deform(p, y);
        pd_hpd_elastic_energy(s, y);
        memcpy(g, s->grad, p->count * sizeof *g);
        double worst = 0, scale = 0, eps = 1e-7;
        for (size_t i = 0; i < p->count; i += 34) {
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

/* Each A_n and B_n (Eq. 15) and its slope (Eq. 16), as the method evaluates them (expanded
 * into powers of s and 1/s), against the paper's formulas written out with pow and log, at
 * stretches from 0.3 to 2.5. Fails on a wrong expansion coefficient or power. */
PD_TEST(basis_matches_eq_15_and_16) {
    const double s_at[] = {0.3, 0.7, 0.999, 1.0, 1.3, 2.5};
    double worst = 0;
    for (int n = 1; n <= PD_HPD_ORDERS; ++n)
        for (int which = 0; which < 2; ++which) {
            pd_hpd_material_params mp;
            memset(&mp, 0, sizeof mp);
            mp.g.count = 2 * PD_HPD_ORDERS;
            mp.g.v[n - 1 + which * PD_HPD_ORDERS] = 1;
            pd_hpd_basis f = pd_hpd_basis_of(&mp, 0);
            for (int k = 0; k < 6; ++k) {
                double x = s_at[k], v, d;
                if (which == 1) {
                    v = 2.0 / n * ((pow(x, n + 1) - 1) / (n + 1) - x + 1);
                    d = 2.0 * (pow(x, n) - 1) / n;
                } else if (n == 1) {
                    v = 0.5 * (x * x - 1) - log(x);
                    d = x - 1 / x;
                } else {
                    v = ((pow(x, n + 1) - 1) / (n + 1) + (pow(x, 1 - n) - 1) / (n - 1)) / n;
                    d = (pow(x, n) - pow(x, -n)) / n;
                }
                double scale = 1 + fabs(v) + fabs(d);
                worst = fmax(worst, fabs(pd_hpd_basis_value(&f, x) - v) / scale);
                worst = fmax(worst, fabs(pd_hpd_basis_slope(&f, x) - d) / scale);
            }
        }
    printf("  largest difference over A_1..A_8, B_1..B_8: %.3g (relative)\n", worst);
    PD_CHECK_NEAR(worst, 0, 1e-12);
}

/* E of Eq. 12 at the rest positions and at the deformed ones, for a bar with the given
 * overrides (at most 4). Without the inversion force: the deformation's ripple is not affine,
 * and Eq. 24's energy would outweigh the differences these tests look for. */
static int energies(const char* const* sets, int count, double* at_rest, double* deformed) {
    const char* all[5] = {"solver.inversion_stiffness=0"};
    for (int k = 0; k < count && k < 4; ++k)
        all[k + 1] = sets[k];
    pd_test_sim t;
    if (!open_bar(&t, 0.1, all, count + 1))
        return 0;
    const pd_particles* p = &t.world->particles;
    pd_vec3* y = malloc(p->count * sizeof *y);
    if (y) {
        pd_hpd_state* s = state_of(&t);
        *at_rest = pd_hpd_elastic_energy(s, p->rest);
        deform(p, y);
        *deformed = pd_hpd_elastic_energy(s, y);
    }
    free(y);
    pd_test_sim_close(&t);
    return y != NULL;
}

/* `g` and `h`, given, replace the preset's: g = h = A_1 + 3 A_2 - 3 B_1 (negative coefficients
 * where convex, issue 34) is the neo_hookean preset to the bit,
 * g = h = B_1 under preset A4 is the linear preset, and h = B_1 alone under A4 changes E but is
 * not the linear preset (g stays A_4).
 * Fails when the coefficients are ignored or land in the wrong basis slot. */
PD_TEST(basis_coefficients_replace_the_preset) {
    const char* neo[] = {"materials.m.hyperelastic.preset=neo_hookean"};
    const char* a1[] = {"materials.m.hyperelastic.g={\"A1\":1,\"A2\":3,\"B1\":-3}",
                        "materials.m.hyperelastic.h={\"A1\":1,\"A2\":3,\"B1\":-3}"};
    const char* lin[] = {"materials.m.hyperelastic.preset=linear"};
    const char* b1[] = {"materials.m.hyperelastic.preset=A4",
                        "materials.m.hyperelastic.g={\"B1\":1}",
                        "materials.m.hyperelastic.h={\"B1\":1}"};
    const char* a4[] = {"materials.m.hyperelastic.preset=A4"};
    const char* mix[] = {"materials.m.hyperelastic.preset=A4",
                         "materials.m.hyperelastic.h={\"B1\":1}"};
    double r[6], e[6];
    PD_REQUIRE(energies(neo, 1, &r[0], &e[0]) && energies(a1, 2, &r[1], &e[1]));
    PD_REQUIRE(energies(lin, 1, &r[2], &e[2]) && energies(b1, 3, &r[3], &e[3]));
    PD_REQUIRE(energies(a4, 1, &r[4], &e[4]) && energies(mix, 2, &r[5], &e[5]));
    printf("  E (J): neo-Hookean %.6g / A1 + 3 A2 - 3 B1 given %.6g; linear %.6g / B1 given %.6g; "
           "A4 %.6g, "
           "A4 with h = B1 %.6g\n",
           e[0], e[1], e[2], e[3], e[4], e[5]);
    PD_CHECK(e[0] == e[1]);
    PD_CHECK(e[2] == e[3]);
    PD_CHECK(fabs(e[5] - e[4]) > 0.01 * e[4]); /* h replaced */
    PD_CHECK(e[5] != e[2]);                    /* g kept: A_4, not the linear B_1 */
}

/* Eq. 19 normalises each particle's weights over its own family, so theta = 1 and E = 0 at
 * rest for every weight function, surface particles included (the first condition of Sec. 4);
 * and the weight functions weigh the bonds differently (each gives another E when deformed).
 * Fails when a family is normalised over a full family instead (surface theta < 1: E > 0 at
 * rest), or when solver.weight is ignored. */
PD_TEST(every_weight_leaves_the_rest_state_unstressed) {
    const char* names[] = {"constant", "inverse", "linear"};
    double r[3], e[3];
    for (int k = 0; k < 3; ++k) {
        char set[64];
        snprintf(set, sizeof set, "solver.weight=%s", names[k]);
        const char* sets[] = {set, "materials.m.hyperelastic.preset=A4"};
        PD_REQUIRE(energies(sets, 2, &r[k], &e[k]));
        printf("  %s: E at rest %.3g J, deformed %.6g J\n", names[k], r[k], e[k]);
        PD_CHECK(fabs(r[k]) <= 1e-12 * e[k]);
    }
    PD_CHECK(fabs(e[1] - e[0]) > 0.01 * e[0] && fabs(e[2] - e[0]) > 0.01 * e[0] &&
             fabs(e[2] - e[1]) > 0.01 * e[1]);
}

/* The fourth moment sum_j w_ij V_j G_ij n^4 of interior families: isotropic (xxxx 1/5, xxyy
 * 1/15) with solver.isotropic_weights, the grid's cubic one (xxxx > 3 xxyy) without. Fails when
 * the fit is not applied or fitted wrong. */
static void interior_moments(const char* flag, double* A, double* B) {
    const char* sets[] = {flag};
    pd_test_sim t;
    *A = *B = NAN;
    if (!open_bar(&t, 0.1, sets, 1))
        return;
    pd_hpd_state* s = state_of(&t);
    const pd_particles* p = &t.world->particles;
    double sa = 0, sb = 0, count = 0;
    for (uint32_t i = 0; i < s->n; ++i) {
        pd_vec3 x = p->rest[i];
        if (x.x < 0.1 || x.x > 0.3 || fabs(x.y - 0.05) > 0.01 || fabs(x.z - 0.05) > 0.01)
            continue;
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            pd_vec3 X = pd_family_xi(&s->fam, i, b);
            pd_real len = pd_v3_len(X);
            pd_vec3 n = pd_v3_scale(X, 1 / len);
            double c = pd_hpd_bond_weight(s, i, len) * p->volume[s->fam.j[b]] * s->bond_g[b];
            sa += c * n.x * n.x * n.x * n.x;
            sb += c * n.x * n.x * n.y * n.y;
        }
        count += 1;
    }
    *A = sa / count;
    *B = sb / count;
    printf("  %s: %g interior families, xxxx %.6f, xxyy %.6f\n", flag, count, *A, *B);
    pd_test_sim_close(&t);
}

PD_TEST(isotropic_weights_make_interior_families_isotropic) {
    double A, B;
    interior_moments("solver.isotropic_weights=true", &A, &B);
    PD_CHECK_NEAR(A, 0.2, 1e-9);
    PD_CHECK_NEAR(B, 1.0 / 15, 1e-9);
    interior_moments("solver.isotropic_weights=false", &A, &B);
    PD_CHECK(A - 3 * B > 0.02);
}

/* The solve's keys act: the first step of the stretch stops by Eq. 25 (relative error at most
 * the tolerance, before the cap), a tighter tolerance takes more iterations, L-BFGS pairs fewer
 * than L alone, and the cap holds. */
static pd_descent_report first_step(const char* a, const char* b) {
    const char* sets[] = {a, b};
    pd_test_sim t;
    pd_descent_report rep = {0};
    rep.iterations = -1;
    if (open_bar(&t, 0.1, sets, 2) && pd_test_sim_run(&t, 0.05))
        rep = state_of(&t)->report;
    printf("  %s, %s: %d iterations, Eq. 25 %.3g\n", a, b, rep.iterations, rep.relative_error);
    pd_test_sim_close(&t);
    return rep;
}

PD_TEST(solver_keys_change_the_solve) {
    pd_descent_report loose = first_step("solver.tolerance=1e-3", "solver.history=5");
    pd_descent_report tight = first_step("solver.tolerance=1e-7", "solver.history=5");
    pd_descent_report plain = first_step("solver.tolerance=1e-7", "solver.history=0");
    pd_descent_report capped = first_step("solver.tolerance=1e-7", "solver.iterations=3");
    PD_CHECK(loose.iterations > 1 && loose.iterations < 60 && loose.relative_error <= 1e-3);
    PD_CHECK(tight.iterations > loose.iterations && tight.relative_error <= 1e-7);
    PD_CHECK(plain.iterations > tight.iterations);
    PD_CHECK(capped.iterations == 3);
}

/* Small strain (0.5 %): the effective nu and E a bar of 10 spacings shows. Issue 9 asks nu
 * within 0.07 and E within 20 %. Under Eq. 26 the bulk shows Lame constants (lambda_0 + mu_0,
 * mu_0) of the asked ones (docs/methods/hyperelastic_pd.md): nu 0.25 for 0, measured 0.252,
 * E x 1.41 (a known failure until the consistent mapping, solver.lame_mapping). Consistent:
 * nu -0.026, E x 1.077 (the bulk 0.003 and x 1.001: the rest is the bar's surface). */
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

PD_TEST(bar_shows_nu_0) {
    check_small_strain(0);
}
/* nu 0.25 and 0.45: elastic_bar.c's bar, the same for every method
 * (known_failure_bar_shows_e_and_nu_025 and _045 there). */

/* The bulk of three bars of section W = 6, 10 and 16 spacings (0.5 % stretch) under the given
 * mapping and nu: the excess E / E_0 - 1 falls as 1 / W (under Eq. 26 at nu = 0.45: 0.338,
 * 0.197, 0.124, W times it 0.0203, 0.0197, 0.0198 m), a surface layer about two spacings deep
 * whose families, cut and renormalised (Eq. 19), are stiffer along the surface. Fitting
 * E / E_0 = a + c / W (and nu likewise) separates the bulk a from the surfaces. The steps are
 * long (quasi-static: 0.25 s against the bar's axial period of 0.08 s) and each solved to 1e-6. */
typedef struct bulk_fit {
    double E, nu;         /* the bulk: W -> infinity */
    double surface;       /* c of E / E_0 = a + c / W (m) */
    double bar_E, bar_nu; /* the 10-spacing bar, as the suite's bars are measured */
} bulk_fit;

static bulk_fit bulk_of_bars(const char* mapping, double nu_asked) {
    static const char* fmt =
        "{\"version\":1,\"method\":\"hyperelastic_pd\","
        "\"solver\":{\"iterations\":100,\"tolerance\":1e-6,\"lame_mapping\":\"%s\"},"
        "\"time\":{\"dt\":%g,\"fps\":4,\"frames\":6},\"gravity\":[0,0,0],"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":%g}},"
        "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.4,%g,%g]},"
        "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
        "{\"region\":{\"type\":\"box\",\"min\":[0.38,-1,-1],\"max\":[1,1,1]},"
        "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":1,\"translate\":[0.0019,0,0]}]}"
        "]}]}";
    const double W[3] = {0.06, 0.10, 0.16};
    double x[3], e[3], nu[3];
    bulk_fit out = {NAN, NAN, NAN, NAN, NAN};
    printf("  %s, nu %g:\n", mapping, nu_asked);
    for (int k = 0; k < 3; ++k) {
        char json[2048];
        snprintf(json, sizeof json, fmt, mapping, BULK_DT, nu_asked, W[k], W[k]);
        pd_test_sim t;
        if (!pd_test_sim_open(&t, json, NULL, 0))
            return out;
        int ok = pd_test_sim_run(&t, 1.5);
        pd_test_bar m = pd_test_bar_measure(&t, 0.4, W[k]);
        pd_test_sim_close(&t);
        if (!ok)
            return out;
        x[k] = 1 / W[k], e[k] = m.E / 1e5, nu[k] = m.nu;
        printf("  W %.2f m: E / E_0 %.4f, nu %.4f\n", W[k], e[k], nu[k]);
    }
    double mx = (x[0] + x[1] + x[2]) / 3, me = (e[0] + e[1] + e[2]) / 3;
    double mn = (nu[0] + nu[1] + nu[2]) / 3, sxx = 0, sxe = 0, sxn = 0;
    for (int k = 0; k < 3; ++k) {
        sxx += (x[k] - mx) * (x[k] - mx);
        sxe += (x[k] - mx) * (e[k] - me);
        sxn += (x[k] - mx) * (nu[k] - mn);
    }
    out.E = me - sxe / sxx * mx, out.nu = mn - sxn / sxx * mx, out.surface = sxe / sxx;
    out.bar_E = e[1], out.bar_nu = nu[1];
    printf("  bulk (W -> infinity): E / E_0 %.4f, nu %.4f; surface term %.4f m / W; the "
           "10-spacing bar E / E_0 %.4f, nu %.4f\n",
           out.E, out.nu, out.surface, out.bar_E, out.bar_nu);
    return out;
}

/* Eq. 26 (solver.lame_mapping paper_eq26) at nu = 0.45: the analysis of
 * docs/methods/hyperelastic_pd.md says the bulk shows (lambda_0 + mu_0, mu_0), E x 1.003 and
 * nu 0.4545. Within 5 % and 0.02. Fails when the bulk itself departs from the analysis (a wrong
 * lambda or mu, a wrong weight), which the bars alone could not tell from their surfaces. */
PD_TEST(bulk_of_the_bars_shows_eq26_analysis) {
    bulk_fit f = bulk_of_bars("paper_eq26", 0.45);
    printf("  analysis: E / E_0 1.003, nu 0.4545\n");
    PD_CHECK_REL(f.E, 1.003, 0.05);
    PD_CHECK_NEAR(f.nu, 0.4545, 0.02);
}

/* The consistent mapping (solver.lame_mapping, the default): by the same analysis the bulk
 * shows the asked E and nu exactly, nu = 0 too (lambda = -0.6 mu there, held by g = h). Within
 * 5 % and 0.02 of them; Eq. 26 would fail at nu = 0 (0.25 shown) and 0.25 (0.333). The
 * 10-spacing bar, surfaces included, is printed beside. */
static void check_consistent_bulk(double nu) {
    bulk_fit f = bulk_of_bars("consistent", nu);
    printf("  asked: E / E_0 1, nu %g\n", nu);
    PD_CHECK_REL(f.E, 1.0, 0.05);
    PD_CHECK_NEAR(f.nu, nu, 0.02);
}

PD_TEST(bulk_of_the_bars_shows_nu_0_consistent) {
    check_consistent_bulk(0);
}
PD_TEST(bulk_of_the_bars_shows_nu_025_consistent) {
    check_consistent_bulk(0.25);
}
PD_TEST(bulk_of_the_bars_shows_nu_045_consistent) {
    check_consistent_bulk(0.45);
}

/* Nominal stress P = F / W^2 of a bar at stretch l (E = 1e5, nu = 0.3), against the law its
 * preset approximates (VALIDATION.md): StVK exactly P = E/2 l (l^2 - 1); neo-Hookean from
 * mu (l2^2 - 1) + lambda ln(l l2^2) = 0: P/E = 0.175 at 1.2, 0.378 at 1.5; linear
 * P = E (l - 1). Within 25 % at l = 1.2 (issue 9). Measured 1.46, 1.60 and 1.29 times the
 * laws: the bar is stiffer than Eq. 26 says already at small strain (E x 1.18-1.41 below). */
/* Nominal stress P = F / W^2 and the stretch l of the middle half of a bar of section W
 * whose moving end went to stretch l_end. */
typedef struct bar_stress {
    double P, l;
} bar_stress;

static bar_stress stress_of_bar(const char* preset, double l_end, double W) {
    char set[96], shape[96];
    snprintf(set, sizeof set, "materials.m.hyperelastic.preset=%s", preset);
    snprintf(shape, sizeof shape, "bodies[0].shape.max=[%g,%g,%g]", BAR_L, W, W);
    const char* sets[] = {set, shape};
    pd_test_sim t;
    bar_stress out = {NAN, NAN};
    if (!open_bar(&t, l_end - 1, sets, 2))
        return out;
    if (pd_test_sim_run(&t, 1.5)) {
        pd_test_bar m = pd_test_bar_measure(&t, BAR_L, W);
        out.P = m.force / (W * W);
        out.l = 1 + m.axial;
        printf("  %s at l = %.2f, W %.2f m (middle: %.4f): P = %.5g Pa\n", preset, l_end, W, out.l,
               out.P);
    }
    pd_test_sim_close(&t);
    return out;
}

/* The laws of VALIDATION.md at stretch l (E = 1e5, nu = 0.3, uniaxial, free sides): linear
 * E (l - 1); StVK E/2 l (l^2 - 1); compressible neo-Hookean mu (l - 1/l) + lambda ln(J) / l with
 * the lateral stretch l2 from mu (l2^2 - 1) + lambda ln(l l2^2) = 0 (Newton), J = l l2^2. */
static double law_stress(int preset, double l) {
    double E = 1e5, nu = 0.3, mu = E / (2 * (1 + nu)), lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    if (preset == 0)
        return E * (l - 1);
    if (preset == 2)
        return 0.5 * E * l * (l * l - 1);
    double l2 = 1;
    for (int k = 0; k < 50; ++k) {
        double f = mu * (l2 * l2 - 1) + lambda * log(l * l2 * l2),
               df = 2 * mu * l2 + 2 * lambda / l2;
        l2 -= f / df;
    }
    return mu * (l - 1 / l) + lambda * log(l * l2 * l2) / l;
}

/* The three 10-spacing bars (linear, neo-Hookean, StVK) at l = 1.2 and at 1.5, each run once
 * for the tests below (bulk_stress_at_stretch_1_2_within_25_percent reads the same bars at
 * 1.2: one run serves both). */
static const bar_stress* bars_at(double l) {
    static const char* presets[3] = {"linear", "neo_hookean", "stvk"};
    static bar_stress bars[2][3];
    static int done[2];
    int k = l > 1.3;
    if (!done[k]) {
        for (int n = 0; n < 3; ++n)
            bars[k][n] = stress_of_bar(presets[n], l, BAR_W);
        done[k] = 1;
    }
    return bars[k];
}

/* Their nominal stresses P. */
static const double* stresses_at(double l) {
    static double P[2][3];
    int k = l > 1.3;
    const bar_stress* bars = bars_at(l);
    for (int n = 0; n < 3; ++n)
        P[k][n] = bars[n].P;
    return P[k];
}

/* The laws' order at l = 1.2: StVK stiffens (0.264 E), neo-Hookean softens (0.175 E) against
 * linear (0.2 E); presets mapped to the wrong basis swap them. */
PD_TEST(presets_order_as_their_laws_at_stretch_1_2) {
    const double* P = stresses_at(1.2);
    printf("  linear %.5g, neo-Hookean %.5g, StVK %.5g Pa\n", P[0], P[1], P[2]);
    PD_CHECK(P[2] > P[0] && P[0] > P[1]);
}

/* At l = 1.5 the laws part further: StVK 0.9375 E, linear 0.5 E, neo-Hookean 0.378 E. */
PD_TEST(presets_order_as_their_laws_at_stretch_1_5) {
    const double* P = stresses_at(1.5);
    printf("  linear %.5g, neo-Hookean %.5g, StVK %.5g Pa\n", P[0], P[1], P[2]);
    PD_CHECK(P[2] > P[0] && P[0] > P[1]);
}

PD_TEST(known_failure_stress_at_stretch_1_5_within_25_percent) {
    const double* P = stresses_at(1.5);
    double E = 1e5;
    PD_CHECK_REL(P[0], E * 0.5, 0.25);
    PD_CHECK_REL(P[1], E * 0.378, 0.25);
    PD_CHECK_REL(P[2], E * 0.5 * 1.5 * (1.5 * 1.5 - 1), 0.25);
}

/* The laws are properties of the bulk, and a bar of 10 spacings carries about 20 % of surface
 * stiffness (bulk_of_the_bars_shows_eq26_analysis): the ratio P / law at the middle's own
 * stretch, for bars of W = 6 and 10 spacings, fitted as a + c / W, gives the bulk's a. The issue's
 * 25 % at l = 1.2 on it. Measured under the consistent mapping: linear 1.106, neo-Hookean
 * 1.048 (g = h = A_1 + 3 A_2 - 3 B_1, issue 34; the paper's A_1 of Eq. 27 gave 1.213), StVK
 * 0.974; under Eq. 26 1.17, 1.29 (A_1), 1.00. */
PD_TEST(bulk_stress_at_stretch_1_2_within_25_percent) {
    const char* presets[] = {"linear", "neo_hookean", "stvk"};
    printf("  laws at l = 1.2: %.4g, %.4g, %.4g E\n", law_stress(0, 1.2) / 1e5,
           law_stress(1, 1.2) / 1e5, law_stress(2, 1.2) / 1e5);
    for (int k = 0; k < 3; ++k) {
        bar_stress thin = stress_of_bar(presets[k], 1.2, 0.06);
        bar_stress bar = bars_at(1.2)[k];
        double r6 = thin.P / law_stress(k, thin.l), r10 = bar.P / law_stress(k, bar.l);
        double c = (r6 - r10) / (1 / 0.06 - 1 / BAR_W), bulk = r10 - c / BAR_W;
        printf("  %s: P / law %.3f (W 6 spacings), %.3f (10); bulk %.3f\n", presets[k], r6, r10,
               bulk);
        PD_CHECK_REL(bulk, 1, 0.25);
    }
}

/* Compression to l = 0.8 needs a bar that does not buckle: clamped at both ends, a bar of
 * length 4 W buckles near 20 % (Euler, 4 pi^2 W^2 / (12 L^2) = 0.21), so this one is 2 W long
 * (0.82). Its clamped ends keep it from widening there (it barrels), which raises every
 * preset's force alike; the laws' order in compression (VALIDATION.md at l = 0.8: neo-Hookean
 * -0.24 E, linear -0.2 E, StVK -0.144 E, by magnitude) is what is compared. */
static double compressed_stress(const char* preset) {
    static const char* json =
        "{\"version\":1,\"method\":\"hyperelastic_pd\","
        "\"solver\":{\"iterations\":60,\"tolerance\":1e-6},"
        "\"time\":{\"dt\":0.05,\"fps\":20,\"frames\":30},\"gravity\":[0,0,0],"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,"
        "\"hyperelastic\":{\"preset\":\"%s\"}}},"
        "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.2,0.1,0.1]},"
        "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
        "{\"region\":{\"type\":\"box\",\"min\":[0.18,-1,-1],\"max\":[1,1,1]},"
        "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":1,\"translate\":[-0.036,0,"
        "0]}]}]}]}";
    char text[2048];
    snprintf(text, sizeof text, json, preset);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, text, NULL, 0))
        return NAN;
    double P = NAN;
    if (pd_test_sim_run(&t, 1.5)) {
        pd_test_bar m = pd_test_bar_measure(&t, 0.2, BAR_W);
        P = m.force / (BAR_W * BAR_W);
        printf("  %s at l = 0.8 (middle: %.4f): P = %.5g Pa\n", preset, 1 + m.axial, P);
    }
    pd_test_sim_close(&t);
    return P;
}

PD_TEST(presets_order_as_their_laws_at_stretch_0_8) {
    double lin = compressed_stress("linear"), neo = compressed_stress("neo_hookean"),
           stvk = compressed_stress("stvk");
    printf("  nominal stress: neo-Hookean %.5g, linear %.5g, StVK %.5g Pa\n", neo, lin, stvk);
    PD_CHECK(neo < lin && lin < stvk && stvk < 0);
}

/* Issue 9: the 10-spacing bar's nominal stress at l = 1.2 within 25 % of each law. It passes
 * with the surface correction (issue 34 item 6) and the fitted neo-Hookean preset (item 2):
 * 1.20, 1.13, 1.07 (the paper's cut families 1.34, 1.25, 1.21; with A_1 1.46). */
PD_TEST(stress_at_stretch_1_2_within_25_percent) {
    const double* P = stresses_at(1.2);
    double E = 1e5;
    PD_CHECK_REL(P[0], E * 0.2, 0.25);
    PD_CHECK_REL(P[1], E * 0.175, 0.25);
    PD_CHECK_REL(P[2], E * 0.5 * 1.2 * (1.2 * 1.2 - 1), 0.25);
}

/* Refused, at the key's path: an unknown basis name, an h that is not convex (-A_2: Sec. 4's
 * conditions need h'' > 0; negative coefficients pass only where h stays convex), a Poisson
 * ratio Eq. 26 cannot map, a plasticity block (the method has none). */
PD_TEST(refuses_what_the_method_cannot_honour) {
    const char* cases[][2] = {
        {"materials.m.hyperelastic.g={\"C1\":1}", "materials.m.hyperelastic.g.C1"},
        {"materials.m.hyperelastic.h={\"A2\":-1}", "materials.m.hyperelastic.h"},
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

/* solver.horizon in spacings: an interior particle of the grid has the lattice points within
 * it, 32 at 2.01 and 122 at 3.01 (the integer points of a ball of radius 3, less the centre). */
PD_TEST(horizon_sets_the_family) {
    const char* radii[] = {"solver.horizon=2.01", "solver.horizon=3.01"};
    const uint32_t want[] = {32, 122};
    for (int k = 0; k < 2; ++k) {
        const char* sets[] = {radii[k]};
        pd_test_sim t;
        PD_REQUIRE(open_bar(&t, 0.1, sets, 1));
        pd_hpd_state* s = state_of(&t);
        uint32_t most = 0;
        for (uint32_t i = 0; i < s->n; ++i) {
            uint32_t count = s->fam.offsets[i + 1] - s->fam.offsets[i];
            most = count > most ? count : most;
        }
        printf("  %s: fullest family %u bonds\n", radii[k], most);
        PD_CHECK(most == want[k]);
        pd_test_sim_close(&t);
    }
}

/* A block landing at 1 m/s on the floor, one step of 0.01 s: the line search halves some of its
 * steps (Sec. 5.2); with solver.line_search false the full quasi-Newton steps run away (the
 * world stops the step: a speed above its runaway limit). Fails when the key is ignored. */
static const char* k_landing =
    "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.01,\"fps\":100,"
    "\"frames\":1},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
    "\"poisson_ratio\":0.3,\"hyperelastic\":{\"preset\":\"A4\"}}},"
    "\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[0,-1,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0.001,0],\"max\":[0.1,0.101,0.1]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],"
    "\"boundary\":\"slip\"}]}";

/* Runs the landing step; returns 1 when it completed, with its report. */
static int landing_step(const char* set, pd_descent_report* rep) {
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_landing, sets, 1))
        return 0;
    int ok = pd_test_sim_run(&t, 0.01);
    *rep = state_of(&t)->report;
    printf("  %s: %s, %d iterations, shortest step %g\n", set, ok ? "completed" : "failed",
           rep->iterations, rep->shortest_step);
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(line_search_keeps_a_landing_stable) {
    pd_descent_report on, off;
    PD_CHECK(landing_step("solver.line_search=true", &on));
    PD_CHECK(on.shortest_step < 1);
    PD_CHECK(!landing_step("solver.line_search=false", &off));
}

/* ---------------------------------------------------------------- anisotropy (Eq. 18) */

/* Young's modulus along x of Eq. 12 with G of Eq. 18 at small strain, for a family of unit
 * bond directions n_k weighted by c_k (the derivation of docs/methods/hyperelastic_pd.md with
 * G inside the sum): C_abcd = lambda g''(1)/9 d_ab d_cd + mu h''(1) sum_k c_k n_a n_b n_c n_d
 * with sum c_k / G_k = 1, E_x = 1 / S_xxxx with S = C^-1 in Voigt form. g = h = B_1 share
 * g''(1) = h''(1), which cancels from a ratio. */
static double modulus_x(double lambda, double mu, int count, const pd_vec3* n, const double* c) {
    static const int voigt[6][2] = {{0, 0}, {1, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};
    double C[6][12] = {{0}};
    for (int k = 0; k < count; ++k) {
        double v[3] = {n[k].x, n[k].y, n[k].z};
        for (int I = 0; I < 6; ++I)
            for (int J = 0; J < 6; ++J)
                C[I][J] += mu * c[k] * v[voigt[I][0]] * v[voigt[I][1]] * v[voigt[J][0]] *
                           v[voigt[J][1]] * (J < 3 ? 1 : 2);
    }
    for (int I = 0; I < 3; ++I)
        for (int J = 0; J < 3; ++J)
            C[I][J] += lambda / 9;
    for (int I = 0; I < 6; ++I) /* [C | 1] -> [1 | S] by Gauss-Jordan (C is positive) */
        C[I][6 + I] = 1;
    for (int I = 0; I < 6; ++I) {
        double p = C[I][I];
        for (int J = 0; J < 12; ++J)
            C[I][J] /= p;
        for (int K = 0; K < 6; ++K) {
            double f = C[K][I];
            for (int J = 0; K != I && J < 12; ++J)
                C[K][J] -= f * C[I][J];
        }
    }
    return 1 / C[0][6];
}

#define SPHERE 20000

/* E_x of the continuum limit: a constant weight averages uniformly over directions (a
 * Fibonacci sphere, to about 1e-4), G = |Sigma R^T n| with R's rows here the directions. */
static double continuum_modulus_x(double lambda, double mu, const pd_vec3 axis[3],
                                  const double sigma[3]) {
    static pd_vec3 n[SPHERE];
    static double c[SPHERE];
    for (int k = 0; k < SPHERE; ++k) {
        double z = 1 - (2 * k + 1.0) / SPHERE, r = sqrt(1 - z * z), phi = k * 2.39996322972865332;
        n[k] = pd_v3(r * cos(phi), r * sin(phi), z);
        double G2 = 0;
        for (int d = 0; d < 3; ++d)
            G2 += pow(sigma[d] * pd_v3_dot(axis[d], n[k]), 2);
        c[k] = sqrt(G2) / SPHERE;
    }
    return modulus_x(lambda, mu, SPHERE, n, c);
}

/* E_x over the family of the bar's particle nearest its centre, as the method holds it: its
 * bonds' directions, w_ij V_j and G = bond_g (the lattice's isotropy factor times Eq. 18). */
static double lattice_modulus_x(const pd_test_sim* t, double lambda, double mu) {
    const pd_hpd_state* s = (const pd_hpd_state*)t->world->solver_state;
    const pd_particles* p = &t->world->particles;
    uint32_t mid = 0;
    pd_vec3 centre = pd_v3(0.5 * BAR_L, 0.5 * BAR_W, 0.5 * BAR_W);
    for (uint32_t i = 0; i < s->n; ++i)
        if (pd_v3_len(pd_v3_sub(p->rest[i], centre)) < pd_v3_len(pd_v3_sub(p->rest[mid], centre)))
            mid = i;
    static pd_vec3 n[512];
    static double c[512];
    int count = 0;
    for (uint32_t b = s->fam.offsets[mid]; b < s->fam.offsets[mid + 1] && count < 512; ++b) {
        pd_vec3 X = pd_family_xi(&s->fam, mid, b);
        n[count] = pd_v3_scale(X, 1 / pd_v3_len(X));
        c[count++] =
            pd_hpd_bond_weight(s, mid, pd_v3_len(X)) * s->volume[s->fam.j[b]] * s->bond_g[b];
    }
    return modulus_x(lambda, mu, count, n, c);
}

/* A bar along x, E = 1e5 and nu = 0.3, with Sigma = diag(4, 0.25, 1) (Fig. 6) along d1 = x or
 * along d2 = x (the lattice and everything else the same): the measured E along x and what the
 * bar's own interior family predicts. Run once for both tests below. */
typedef struct aniso_bars {
    double measured[2], lattice[2], continuum[2];
    int done;
} aniso_bars;

static const aniso_bars* anisotropic_bars(void) {
    static aniso_bars r;
    if (r.done)
        return &r;
    static const char* blocks[2] = {
        "{\"direction1\":[1,0,0],\"direction2\":[0,1,0],\"stretches\":[4,0.25,1]}",
        "{\"direction1\":[0,1,0],\"direction2\":[1,0,0],\"stretches\":[4,0.25,1]}"};
    const pd_vec3 axes[2][3] = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
                                {{0, 1, 0}, {1, 0, 0}, {0, 0, -1}}};
    const double sigma[3] = {4, 0.25, 1}, nu = 0.3, E = 1e5;
    double lambda, mu; /* the bar's: solver.lame_mapping's default */
    pd_hpd_lame(PD_HPD_LAME_CONSISTENT, E, nu, &lambda, &mu);
    for (int k = 0; k < 2; ++k) {
        char set[256];
        snprintf(set, sizeof set, "materials.m.anisotropy=%s", blocks[k]);
        const char* sets[] = {set};
        pd_test_sim t;
        r.measured[k] = NAN;
        if (!open_bar(&t, 0.005, sets, 1))
            continue;
        r.lattice[k] = lattice_modulus_x(&t, lambda, mu);
        r.continuum[k] = continuum_modulus_x(lambda, mu, axes[k], sigma);
        if (pd_test_sim_run(&t, 1.5))
            r.measured[k] = pd_test_bar_measure(&t, BAR_L, BAR_W).E;
        pd_test_sim_close(&t);
    }
    printf("  E along d1 / along d2: measured %.3f, over the interior family %.3f, continuum "
           "%.3f\n",
           r.measured[0] / r.measured[1], r.lattice[0] / r.lattice[1],
           r.continuum[0] / r.continuum[1]);
    r.done = 1;
    return &r;
}

/* The bar is stiffer along sigma_1: measured 2.76 times along sigma_2 (3.15 with the paper's cut
 * families, 2.86 under Eq. 26's mapping too). Fails when G is ignored (ratio 1). */
PD_TEST(anisotropic_bar_is_stiffer_along_sigma_1) {
    const aniso_bars* r = anisotropic_bars();
    PD_CHECK(r->measured[0] > 2 * r->measured[1]);
}

/* Reference: the same small-strain analysis summed over the bar's interior family (the model
 * as discretised; lattice_modulus_x), within 10 %: it fails when the forces and the energy's
 * sums disagree on G. The bar's surfaces, where families are cut and renormalised, and its
 * clamped ends keep it from matching exactly: with the surface correction 2.76 against 2.84
 * (-2.9 %); with the paper's cut families 3.15 (+11 %), under Eq. 26's 2.86 against 2.62
 * (+9 %). docs/validation.md. */
PD_TEST(anisotropic_ratio_within_10_percent_of_the_family_analysis) {
    const aniso_bars* r = anisotropic_bars();
    PD_CHECK_REL(r->measured[0] / r->measured[1], r->lattice[0] / r->lattice[1], 0.10);
}

/* Against the continuum limit of the same analysis (2.27, measured 2.76; 2.13 under Eq. 26): the
 * 32 directions of a family of 2.01 spacings sample G's peak along d1 too coarsely (the lattice sum
 * without the isotropy factor gives 3.09; over the 122 directions of 3.01 it gives 2.12, and a bar
 * at 3.01 measures 2.52: docs/methods/hyperelastic_pd.md). */
PD_TEST(known_failure_anisotropic_ratio_within_15_percent_of_the_continuum) {
    const aniso_bars* r = anisotropic_bars();
    PD_CHECK_REL(r->measured[0] / r->measured[1], r->continuum[0] / r->continuum[1], 0.15);
}

/* The anisotropy block's conditions: two orthogonal directions, sigma_1 sigma_2 sigma_3 = 1
 * (Sec. 4.2), and the fracture block's range. */
PD_TEST(refuses_anisotropy_and_fracture_it_cannot_honour) {
    const char* cases[][2] = {
        {"materials.m.anisotropy={\"direction1\":[1,0,0],\"direction2\":[0,1,0],"
         "\"stretches\":[4,1,1]}",
         "materials.m.anisotropy.stretches"},
        {"materials.m.anisotropy={\"direction1\":[1,0,0],\"direction2\":[1,1,0]}",
         "materials.m.anisotropy"},
        {"materials.m.anisotropy={\"direction1\":[1,0,0]}", "materials.m.anisotropy"},
        {"materials.m.fracture={\"critical_stretch\":0}", "materials.m.fracture.critical_stretch"},
        {"materials.m.anisotropy={\"axis\":[1,0,0]}", "materials.m.anisotropy.axis"}};
    char json[2048];
    snprintf(json, sizeof json, k_bar, 0.01);
    for (int k = 0; k < 5; ++k) {
        pd_scene scene;
        pd_error err = {0};
        const char* sets[] = {cases[k][0]};
        pd_status st = pd_scene_parse(json, "bar.json", ".", sets, 1, &scene, &err);
        printf("  -> %s: %s\n", err.path, err.message);
        PD_CHECK(st == PD_ERR_BAD_SCENE);
        PD_CHECK(strcmp(err.path, cases[k][1]) == 0);
        if (st == PD_OK)
            pd_scene_free(&scene);
    }
}

/* ---------------------------------------------------------------- fracture */

static int across_middle(void* ctx, const pd_bond_view* b) {
    (void)ctx;
    return (b->yi.x - 0.2) * (b->yj.x - 0.2) < 0;
}

/* A bar at rest cut in two (pd_world_break_bonds) stays at rest: the weights of the cut
 * families are normalised again (Eq. 19), so theta = 1 at the crack as at any surface. Kept
 * from before the cut, they would leave theta < 1 and lambda g'(theta) pushing the faces. */
PD_TEST(a_bar_cut_at_rest_stays_at_rest) {
    pd_test_sim t;
    PD_REQUIRE(open_bar(&t, 0, NULL, 0));
    size_t before = state_of(&t)->fam.bond_count, removed = 0;
    pd_error err = {0};
    PD_REQUIRE(pd_world_break_bonds(t.world, across_middle, NULL, &removed, &err) == PD_OK);
    PD_REQUIRE(pd_test_sim_run(&t, 0.5));
    const pd_particles* p = &t.world->particles;
    double worst = 0;
    for (size_t i = 0; i < p->count; ++i)
        worst = fmax(worst, pd_v3_len(pd_v3_sub(p->pos[i], p->rest[i])));
    printf("  %zu of %zu directed bonds cut; largest displacement after 0.5 s %.3g m\n", removed,
           before, worst);
    PD_CHECK(removed > 0 && state_of(&t)->fam.bond_count == before - removed);
    PD_CHECK_NEAR(worst, 0, 1e-9);
    pd_test_sim_close(&t);
}

/* Pairs (by particle id) bonded in the family. */
static int bonded(const pd_test_sim* t, int32_t a, int32_t b) {
    const pd_hpd_state* s = (const pd_hpd_state*)t->world->solver_state;
    uint32_t i = t->world->order[a], j = t->world->order[b];
    for (uint32_t k = s->fam.offsets[i]; k < s->fam.offsets[i + 1]; ++k)
        if (s->fam.j[k] == j)
            return 1;
    return 0;
}

/* A bar pulled by 10 % with fracture.critical_stretch 0.03 (Silling and Askari 2005): bonds
 * break near the clamped ends, where the strain concentrates, and the moving pin's force falls
 * from the elastic pull (about E s_0 W^2 = 30 N at the first break) to what the parted piece's
 * vibration and a few dangling bonds leave (the faces of a critical-stretch crack are ragged:
 * a bond across it that turned rather than stretched holds on). The pin then comes back half way;
 * with the world reordering every 4 steps (on_reorder renumbers the family), no pair broken at the
 * parting is bonded again. Fails when bonds do not break, when a broken bond returns, or when a
 * reordering mixes up the bonds. */
typedef struct fracture_run {
    size_t full, after, broken, returned, at_end; /* bonds: intact, parted, ...; at 2.5 s */
    double peak, parted, back;
    int done, ok;
} fracture_run;

static const fracture_run* pulled_bar(void) {
    static fracture_run out;
    if (out.done)
        return &out;
    out.done = 1;
    static const char* json =
        "{\"version\":1,\"method\":\"hyperelastic_pd\","
        "\"time\":{\"dt\":0.05,\"fps\":20,\"frames\":1},\"gravity\":[0,0,0],"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,"
        "\"fracture\":{\"critical_stretch\":0.03}}},"
        "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.4,0.1,0.1]},"
        "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
        "{\"region\":{\"type\":\"box\",\"min\":[0.38,-1,-1],\"max\":[1,1,1]},"
        "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":1,\"translate\":[0.04,0,0]},"
        "{\"t\":1.5,\"translate\":[0.04,0,0]},{\"t\":2,\"translate\":[0.02,0,0]}]}]}]}";
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return &out;
    t.world->reorder_every = 4;
    const pd_hpd_state* s = state_of(&t);
    size_t n = t.world->particles.count, full = s->fam.bond_count;
    /* the pairs of the intact bar, by id */
    int32_t* pair = malloc(2 * full * sizeof *pair);
    if (!pair)
        return &out;
    for (uint32_t i = 0, k = 0; i < n; ++i)
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b, ++k) {
            pair[2 * k] = t.world->particles.id[i];
            pair[2 * k + 1] = t.world->particles.id[s->fam.j[b]];
        }
    double peak = 0;
    while (t.world->time < 1.5 - 1e-9) {
        if (!pd_test_sim_run(&t, t.world->time + 0.05))
            return &out;
        peak = fmax(peak, fabs(t.world->pins[1].force.x));
    }
    double parted = fabs(t.world->pins[1].force.x);
    size_t after = state_of(&t)->fam.bond_count;
    size_t broken = 0;
    uint8_t* was = calloc(full, 1);
    if (!was)
        return &out;
    for (size_t k = 0; k < full; ++k)
        broken += was[k] = !bonded(&t, pair[2 * k], pair[2 * k + 1]);
    if (!pd_test_sim_run(&t, 2.5))
        return &out;
    size_t returned = 0;
    for (size_t k = 0; k < full; ++k)
        returned += was[k] && bonded(&t, pair[2 * k], pair[2 * k + 1]);
    double back = fabs(t.world->pins[1].force.x);
    printf("  bonds %zu -> %zu (%zu pairs broken), pin force: peak %.4g N, parted %.3g N, back "
           "half way %.3g N; broken pairs bonded again: %zu\n",
           full, after, broken, peak, parted, back, returned);
    out = (fracture_run){full, after,  broken, returned, state_of(&t)->fam.bond_count,
                         peak, parted, back,   1,        1};
    free(was);
    free(pair);
    pd_test_sim_close(&t);
    return &out;
}

PD_TEST(bonds_past_the_critical_stretch_break_for_good) {
    const fracture_run* r = pulled_bar();
    PD_REQUIRE(r->ok);
    PD_CHECK(r->after < r->full && r->broken == r->full - r->after);
    PD_CHECK(r->peak > 20);
    PD_CHECK(r->back < 0.05 * r->peak);
    PD_CHECK(r->returned == 0 && r->at_end <= r->after);
}

/* Parted at the end of the hold, the pin keeps 9.4e-5 N of a 41.1 N peak with the surface
 * correction (46248 pairs broken); with the paper's cut families 2.1 N (5.1 % of 41.4 N; 43640
 * pairs), steady from 1.2 to 1.5 s: bonds across the ragged faces that turned rather than
 * stretched. docs/validation.md. */
PD_TEST(parted_bar_keeps_below_5_percent_of_the_peak) {
    const fracture_run* r = pulled_bar();
    PD_REQUIRE(r->ok);
    PD_CHECK(r->parted < 0.05 * r->peak);
}

/* ---------------------------------------------------------------- contact between bodies */

/* Two equal blocks (E 1e5) meeting head-on at 1 and -0.5 m/s, no gravity (src/contact inside
 * the solve, as for projective_pd). Reference: momentum, the sum of the two mean velocities
 * stays 0.5 m/s (equal and opposite pair forces); the blocks part again (each reverses its
 * velocity relative to the centre of mass, 0.25 m/s) and the contact layer keeps them apart:
 * every pair of the two bodies stays farther than PD_CONTACT_FLOOR d_c. With solver.contact
 * false they pass through each other. Fails when the contact energy or its gradient is left
 * out of the solve, or acts on one side only. */
static const char* k_blocks =
    "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.005,\"fps\":200,"
    "\"frames\":1},\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,"
    "\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"a\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1,0,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.06,0.06,0.06]}},"
    "{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[-0.5,0,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0.07,0,0],\"max\":[0.13,0.06,0.06]}}]}";

typedef struct blocks_run {
    double closest; /* smallest distance between particles of the two bodies (m) */
    double va, vb;  /* mean x velocity of each body at the end (m/s) */
    double xa, xb;  /* mean x of each body at the end (m) */
} blocks_run;

static int run_blocks(const char* set, blocks_run* out) {
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_blocks, sets, 1))
        return 0;
    const pd_particles* p = &t.world->particles;
    out->closest = INFINITY;
    int ok = 1;
    while (ok && t.world->time < 0.15 - 1e-9) {
        ok = pd_test_sim_run(&t, t.world->time + 0.005);
        for (size_t i = 0; ok && i < p->count; ++i)
            for (size_t j = 0; p->body[i] == 0 && j < p->count; ++j)
                if (p->body[j] == 1)
                    out->closest = fmin(out->closest, pd_v3_len(pd_v3_sub(p->pos[i], p->pos[j])));
    }
    double n[2] = {0}, v[2] = {0}, x[2] = {0};
    for (size_t i = 0; i < p->count; ++i)
        n[p->body[i]] += 1, v[p->body[i]] += p->vel[i].x, x[p->body[i]] += p->pos[i].x;
    out->va = v[0] / n[0], out->vb = v[1] / n[1], out->xa = x[0] / n[0], out->xb = x[1] / n[1];
    printf("  %s: closest pair %.4g m, end velocities %.3f / %.3f m/s, centres %.4f / %.4f m\n",
           set, out->closest, out->va, out->vb, out->xa, out->xb);
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(bodies_collide_instead_of_passing_through) {
    blocks_run on, off;
    PD_REQUIRE(run_blocks("solver.contact=true", &on));
    PD_REQUIRE(run_blocks("solver.contact=false", &off));
    PD_CHECK(on.closest >= PD_CONTACT_FLOOR * 0.01);
    PD_CHECK(on.va < 0.25 && on.vb > 0.25 && on.xa < on.xb);
    PD_CHECK_NEAR(on.va + on.vb, 0.5, 0.005); /* momentum */
    PD_CHECK(off.xa > off.xb);
}

/* solver.contact_stiffness scales the pair penalty (src/contact): softer, the blocks come
 * closer before they part. Fails when hyperelastic_pd ignores the key. */
PD_TEST(contact_stiffness_sets_how_close_the_blocks_come) {
    blocks_run stiff, soft;
    PD_REQUIRE(run_blocks("solver.contact_stiffness=4", &stiff));
    PD_REQUIRE(run_blocks("solver.contact_stiffness=0.25", &soft));
    PD_CHECK(soft.closest < stiff.closest - 0.0005);
}

/* A material's contact_friction (Coulomb between bodies, src/contact): a block moving at 1 m/s
 * along a fixed slab, 1 cm above it, under gravity, for 0.1 s. Reference: Coulomb with mu 0.5;
 * the block lands after 0.045 s at 0.44 m/s, so the normal impulse of the landing (m 0.44) and
 * the weight over the remaining 0.055 s (m 0.54) take off mu (0.44 + 0.54) = 0.49 m/s: about
 * 0.5 m/s is left; the window 0.4-0.8 m/s admits the penalty contact's rebound. Without
 * friction it keeps its 1 m/s. Fails when the key is ignored. The steps are solved to 1e-7:
 * at the default 1e-4 of Eq. 25 the frictionless block keeps 1.002 m/s with the surface
 * correction, 0.951 with the paper's cut families under the consistent Lame mapping
 * (frictionless_block_keeps_its_speed_at_the_default_tolerance). */
static double slide_speed_at(const char* set, const char* tolerance) {
    static const char* json =
        "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.005,\"fps\":200,"
        "\"frames\":1},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
        "\"poisson_ratio\":0.3}},"
        "\"bodies\":[{\"name\":\"slab\",\"material\":\"m\",\"spacing\":0.01,\"kind\":\"fixed\","
        "\"shape\":{\"type\":\"box\",\"min\":[-0.1,0,-0.1],\"max\":[0.5,0.02,0.1]}},"
        "{\"name\":\"block\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1,0,0],"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0.03,-0.03],\"max\":[0.06,0.09,0.03]}}]}";
    const char* sets[] = {set, tolerance};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, 2) || !pd_test_sim_run(&t, 0.1))
        return NAN;
    const pd_particles* p = &t.world->particles;
    double v = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->body[i] == 1)
            v += p->vel[i].x, n += 1;
    pd_test_sim_close(&t);
    printf("  %s, %s: the block slides at %.3f m/s after 0.1 s\n", set, tolerance, v / n);
    return v / n;
}

static double slide_speed(const char* set) {
    return slide_speed_at(set, "solver.tolerance=1e-7");
}

PD_TEST(contact_friction_slows_a_sliding_block) {
    double rough = slide_speed("materials.m.contact_friction=0.5");
    double smooth = slide_speed("materials.m.contact_friction=0");
    PD_CHECK_NEAR(smooth, 1, 0.02);
    PD_CHECK(rough < 0.8 && rough > 0.4);
}

/* The frictionless block at the default tolerance of Eq. 25 (1e-4): 1.002 m/s after 0.1 s with
 * the surface correction; with the paper's cut families 0.951 under the consistent Lame
 * mapping, 1.000 under Eq. 26's and at 1e-7 (the steps stopped on the tolerance with the
 * sliding not converged). docs/validation.md. */
PD_TEST(frictionless_block_keeps_its_speed_at_the_default_tolerance) {
    PD_CHECK_NEAR(slide_speed_at("materials.m.contact_friction=0", "solver.tolerance=1e-4"), 1,
                  0.02);
}

/* ---------------------------------------------------------------- stats.csv */

/* A step reports E(q) of Eq. 21 at its end and the relative error of Eq. 25 (stats.csv's
 * energy and relative_error): the energy against E recomputed at the new positions (inertia
 * M |q - q*|^2 / 2h^2 plus the elastic energy; the slip floor adds no friction potential), and
 * the relative error at or below the tolerance when the step stopped before the iteration cap.
 * Fails when a column is left NaN or reports another quantity. */
PD_TEST(a_step_reports_its_energy_and_relative_error) {
    pd_test_sim t;
    const char* sets[] = {"solver.iterations=100"};
    PD_REQUIRE(pd_test_sim_open(&t, k_landing, sets, 1));
    PD_REQUIRE(pd_test_sim_run(&t, 0.01));
    pd_hpd_state* s = state_of(&t);
    const pd_particles* p = &t.world->particles;
    const pd_step_stats* st = &t.world->last_stats;
    double inertia = 0, ih2 = 1 / (t.world->def.dt * t.world->def.dt);
    for (size_t i = 0; i < p->count; ++i)
        inertia += 0.5 * p->mass[i] * ih2 * pd_v3_len2(pd_v3_sub(p->pos[i], s->ystar[i]));
    double E = inertia + pd_hpd_elastic_energy(s, p->pos);
    printf("  %d iterations, energy %.9g J (recomputed %.9g J), relative error %.3g\n",
           st->iterations, st->energy, E, st->relative_error);
    PD_CHECK(st->iterations < 100);
    PD_CHECK_REL(st->energy, E, 1e-9);
    PD_CHECK(st->relative_error > 0 && st->relative_error <= 1e-4);
    pd_test_sim_close(&t);
}

/* ---------------------------------------------------------------- inversion (Eq. 24) */

/* det of the affine fit of a body's motion, A = sum (y - yc)(x - xc)^T (sum (x - xc)(x -
 * xc)^T)^-1: below 0 while the body is mirrored. */
static double body_orientation(const pd_particles* p) {
    pd_vec3 xc = pd_v3(0, 0, 0), yc = pd_v3(0, 0, 0);
    for (size_t i = 0; i < p->count; ++i)
        xc = pd_v3_add(xc, p->rest[i]), yc = pd_v3_add(yc, p->pos[i]);
    xc = pd_v3_scale(xc, 1.0 / p->count), yc = pd_v3_scale(yc, 1.0 / p->count);
    pd_mat3 A = pd_m3_zero(), K = pd_m3_zero(), Kinv;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 X = pd_v3_sub(p->rest[i], xc);
        pd_m3_add_outer(&A, 1, pd_v3_sub(p->pos[i], yc), X);
        pd_m3_add_outer(&K, 1, X, X);
    }
    pd_m3_inverse(K, &Kinv);
    return pd_m3_det(pd_m3_mul(A, Kinv));
}

/* A block mirrored through its centre plane (x -> -x) at rest: Eq. 12's energy is 0 there
 * (every bond keeps its length), so without the inversion force it stays mirrored (the
 * paper's motivation, Sec. 6); with it (F_i's rows exchanged: a rotation) it turns back to
 * an orientation-preserving shape, the affine fit's det near +1. Fails when the force is
 * missing, has the wrong sign, or does not exchange the rows. */
static double mirrored_block(const char* set) {
    static const char* json =
        "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.01,\"fps\":100,"
        "\"frames\":1},\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,"
        "\"youngs_modulus\":1e4,\"poisson_ratio\":0.3}},"
        "\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.08,0.06,0.05]}}]}";
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, 1))
        return NAN;
    pd_particles* p = &t.world->particles;
    for (size_t i = 0; i < p->count; ++i)
        p->pos[i].x = 0.08 - p->pos[i].x;
    double before = body_orientation(p);
    double after = pd_test_sim_run(&t, 1.0) ? body_orientation(p) : NAN;
    printf("  %s: det of the body's affine fit %.4f -> %.4f after 1 s\n", set, before, after);
    pd_test_sim_close(&t);
    return after;
}

PD_TEST(inversion_force_turns_a_mirrored_block_back) {
    PD_CHECK_NEAR(mirrored_block("solver.inversion_stiffness=0"), -1, 1e-6);
    PD_CHECK_NEAR(mirrored_block("solver.inversion_stiffness=1"), 1, 0.1);
}

/* Particles whose neighbourhood is inverted: det of the least-squares fit of their bonds'
 * current vectors to the rest ones (unit weights) at or below 0. */
static int inverted_particles(const pd_test_sim* t) {
    const pd_hpd_state* s = (const pd_hpd_state*)t->world->solver_state;
    const pd_particles* p = &t->world->particles;
    int count = 0;
    for (uint32_t i = 0; i < s->n; ++i) {
        pd_mat3 A = pd_m3_zero(), K = pd_m3_zero(), Kinv;
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            pd_vec3 X = pd_family_xi(&s->fam, i, b);
            pd_m3_add_outer(&A, 1, pd_v3_sub(p->pos[s->fam.j[b]], p->pos[i]), X);
            pd_m3_add_outer(&K, 1, X, X);
        }
        count += pd_m3_inverse(K, &Kinv) && !(pd_m3_det(pd_m3_mul(A, Kinv)) > 0);
    }
    return count;
}

/* Fig. 10: the neo-Hookean bar of scenes/xu2018_fig10_bar_twist.json, one end turned 360
 * degrees over 4 s (steps of 0.04 s, Table 1's cylinder), the other fixed. Issue 9: it
 * completes without NaN (the world stops a run at a non-finite value) and without an inverted
 * particle. Measured: also the twist the middle shows, against the end's. */
/* Mean angle (degrees) the particles of the section at x turned about the bar's axis. */
static double section_turn(const pd_particles* p, double x_at) {
    double turn = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->rest[i], y = p->pos[i];
        if (fabs(x.x - x_at) > 0.007 || hypot(x.y - 0.3, x.z) < 0.02)
            continue;
        turn += remainder(atan2(y.z, y.y - 0.3) - atan2(x.z, x.y - 0.3), 2 * PD_PI), n += 1;
    }
    return turn / n * 180 / PD_PI;
}

PD_TEST(bar_twisted_360_degrees_stays_whole) {
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open_scene(&t, "xu2018_fig10_bar_twist.json", NULL, 0));
    int worst = 0;
    double middle = 0;
    while (t.world->time < 4.0 - 1e-9) {
        PD_REQUIRE(pd_test_sim_run(&t, t.world->time + 0.4));
        int inv = inverted_particles(&t);
        worst = inv > worst ? inv : worst;
        if (fabs(t.world->time - 2.0) < 1e-6)
            middle = section_turn(&t.world->particles, 0.2);
    }
    printf("  %zu particles, at most %d inverted over the twist; at 2 s (the end at 180 degrees) "
           "the middle turned %.1f degrees; %d iterations in the last step\n",
           t.world->particles.count, worst, middle, t.world->last_stats.iterations);
    PD_CHECK(worst == 0);
    pd_test_sim_close(&t);
}

/* ---------------------------------------------------------------- convergence of a drop */

/* Issue 9: "relative error 1e-4 reached within 25 iterations at dt = 0.01 on the
 * armadillo-like drop": the two bunnies of scenes/xu2018_fig5_linear_and_A4_drop.json (6.7K
 * particles, E 5e4) fall 0.2 m onto a rough floor (friction 0.5) and settle; every step of
 * the first 0.6 s, whether it stopped on the tolerance or on the cap, and its evaluations of
 * E (line-search trials, start point and friction set-up included). Free fall needs no
 * iteration. */
typedef struct drop_steps {
    int steps, iterating, converged, iterations, evaluations;
    double worst; /* largest relative error at the end of a step */
} drop_steps;

static const drop_steps* fig5_drop(void) {
    static drop_steps r;
    static int done;
    if (done)
        return &r;
    done = 1;
    pd_test_sim t;
    if (!pd_test_sim_open_scene(&t, "xu2018_fig5_linear_and_A4_drop.json", NULL, 0))
        return &r;
    pd_error err = {0};
    while (t.world->time < 0.6 - 1e-9 && pd_world_step(t.world, &err) == PD_OK) {
        const pd_step_stats* st = &t.world->last_stats;
        r.steps++;
        if (st->iterations == 0)
            continue;
        r.iterating++;
        r.converged += st->relative_error <= 1e-4 && st->iterations < 25;
        r.worst = fmax(r.worst, st->relative_error);
        r.iterations += st->iterations;
        r.evaluations += st->local_evaluations;
    }
    printf("  %d steps, %d iterating: %d stopped on Eq. 25 <= 1e-4 before the cap of 25 "
           "(largest relative error at a step's end %.3g); %d iterations, %d evaluations\n",
           r.steps, r.iterating, r.converged, r.worst, r.iterations, r.evaluations);
    pd_test_sim_close(&t);
    return &r;
}

/* The quasi-Newton steps of the settling bodies are seldom halved: at most 2 evaluations of E
 * an iteration over the drop (measured 1.57). Friction's tangential stiffness on the factor's
 * diagonal does it (hyperelastic_pd.c: factor_friction); without it the steps overshoot along
 * the floor and the line search halves them: 3.19 (and 21 instead of 29 steps converged). */
PD_TEST(drop_steps_are_seldom_halved_on_a_rough_floor) {
    const drop_steps* r = fig5_drop();
    PD_CHECK(r->steps == 60 && r->iterating > 20);
    PD_CHECK(r->evaluations <= 2 * r->iterations);
}

/* Every step at 1e-4 before the cap of 25 iterations: issue 9's wording. Measured 40 of 40 with
 * issue 34's first pass and friction_stick_speed alone (29 before; hyperelastic_pd.c:
 * solve_renewing_friction), 38 of 40 with the surface correction and the fitted neo-Hookean
 * preset as well: the other two end at the cap at or below 9.9e-5 (docs/validation.md). Issue
 * 34's 90 % is `drop_reaches_eq25_on_90_percent_of_steps` (hyperelastic_pd_contact.c). */
PD_TEST(known_failure_drop_reaches_eq25_within_25_iterations_every_step) {
    const drop_steps* r = fig5_drop();
    PD_CHECK(r->steps == 60 && r->converged == r->iterating);
}

/* ---------------------------------------------------------------- material changes */

/* Mean axial strain of the bar's particles with rest x in [a, b]: slope of u_x over x. */
static double strain_between(const pd_particles* p, double a, double b) {
    double sx = 0, su = 0, sxx = 0, sxu = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i) {
        double x = p->rest[i].x, u = p->pos[i].x - x;
        if (x < a || x > b)
            continue;
        sx += x, su += u, sxx += x * x, sxu += x * u, n += 1;
    }
    return (n * sxu - sx * su) / (n * sxx - sx * sx);
}

/* A body of two materials (bodies[i].material_changes at t = 0, region x > 0.2: Fig. 1's
 * heterogeneous flower needs it): the bar's right half takes E 2.5e4 Pa, its left keeps 1e5.
 * Reference: two bars in series carry one force, so the soft half strains E_stiff / E_soft = 4
 * times as much (away from the interface and the clamps), within 15 %. Fails when the change
 * is ignored (ratio 1) or its stiffness does not reach the solve's factor. The bar is 6
 * spacings across (1440 particles): the series law does not depend on the section, and the
 * 10-spacing bar cost about three times the CPU (17 s in CI; 3.982 there). */
PD_TEST(a_body_of_two_materials_strains_in_series) {
    const char* sets[] = {
        "materials.soft={\"density\":1000,\"youngs_modulus\":2.5e4,\"poisson_ratio\":0.3}",
        "bodies[0].material_changes=[{\"t\":0,\"material\":\"soft\",\"region\":{\"type\":\"box\","
        "\"min\":[0.2,-1,-1],\"max\":[1,1,1]}}]",
        "materials.m.hyperelastic.preset=linear", "bodies[0].shape.max=[0.4,0.06,0.06]"};
    pd_test_sim t;
    PD_REQUIRE(open_bar(&t, 0.005, sets, 4));
    PD_REQUIRE(pd_test_sim_run(&t, 1.5));
    const pd_particles* p = &t.world->particles;
    double stiff = strain_between(p, 0.06, 0.15), soft = strain_between(p, 0.25, 0.34);
    int changed = 0;
    for (size_t i = 0; i < p->count; ++i)
        changed += p->material[i] == 1;
    printf("  %d particles soft; strain stiff half %.5g, soft half %.5g: ratio %.3f (series: 4)\n",
           changed, stiff, soft, soft / stiff);
    PD_CHECK(changed == 720); /* 20 of the 40 layers, 6 x 6 */
    PD_CHECK_REL(soft / stiff, 4, 0.15);
    pd_test_sim_close(&t);
}

/* A box (0.1 x 0.05 x 0.1 m, 256 particles, E 1e5) moving at 2 m/s sideways lands from 4 cm on
 * a plane of Coulomb friction 0.3. Reference: Coulomb's law bounds the tangential impulse by mu
 * times the normal one, and the floor's normal impulse per unit mass over a window is
 * dv_n + g T (the box's momentum balance along the normal), so over the landing (t = 0.09 s,
 * just before the first contact, to 0.12 s) the mean tangential speed lost is at most
 * mu (dv_n + g T), equal to it while the box slides throughout (as at 2 m/s it does). Within
 * 10 % above and, so that friction left out fails too, 10 % below (measured 0.921 at dt 0.01,
 * 1.008 at 0.001). Before the fix: 2.00 ->
 * 0.28 -> -0.04 m/s at dt 0.01 (5.6 times Coulomb's loss; the normal force guessed at x + h v
 * counted the lifted bottom layer's elastic force) and 1.29 times at dt 0.001. */
static const char* k_slide_landing =
    "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.01,\"fps\":100,"
    "\"frames\":12},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"box\",\"material\":\"m\",\"spacing\":0.0125,\"velocity\":[2,0,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0.04,0],\"max\":[0.1,0.09,0.1]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],\"friction\":0.3}]}";

#define LANDING_FROM 0.09
#define LANDING_TO   0.12

static pd_vec3 mean_velocity(const pd_particles* p) {
    pd_vec3 v = pd_v3(0, 0, 0);
    for (size_t i = 0; i < p->count; ++i)
        v = pd_v3_add(v, p->vel[i]);
    return pd_v3_scale(v, 1.0 / (double)p->count);
}

/* Tangential speed lost over the landing window over mu times the normal impulse per unit
 * mass; NAN when the run failed. */
static double landing_friction_ratio(const char* method, double dt) {
    char m_set[64], dt_set[64];
    snprintf(m_set, sizeof m_set, "method=%s", method);
    snprintf(dt_set, sizeof dt_set, "time.dt=%g", dt);
    const char* sets[] = {m_set, dt_set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_slide_landing, sets, 2))
        return NAN;
    int ok = pd_test_sim_run(&t, LANDING_FROM);
    pd_vec3 v0 = mean_velocity(&t.world->particles);
    ok = ok && pd_test_sim_run(&t, LANDING_TO);
    pd_vec3 v1 = mean_velocity(&t.world->particles);
    pd_test_sim_close(&t);
    double lost = v0.x - v1.x, normal = v1.y - v0.y + 9.81 * (LANDING_TO - LANDING_FROM);
    double ratio = lost / (0.3 * normal);
    printf("  %s, dt %g s: v %.3f, %.3f -> %.3f, %.3f m/s; tangential speed lost %.4f m/s, "
           "mu x normal impulse %.4f m/s: ratio %.3f\n",
           method, dt, v0.x, v0.y, v1.x, v1.y, lost, 0.3 * normal, ratio);
    return ok ? ratio : NAN;
}

PD_TEST(landing_loses_at_most_coulombs_tangential_speed) {
    const double dts[] = {0.01, 0.001};
    for (int k = 0; k < 2; ++k) {
        double ratio = landing_friction_ratio("hyperelastic_pd", dts[k]);
        PD_CHECK_REL(ratio, 1.0, 0.10);
    }
}

/* The same landing under projective_pd (its own solve, the core's guess of the normal force at
 * x + h v, renewed from iterates after 8 iterations): 1.59 times Coulomb's loss at dt 0.01
 * (2.00 -> 1.73 -> 1.46 m/s, then mu g h a step as it slides). docs/validation.md. */
PD_TEST(known_failure_landing_loses_at_most_coulombs_tangential_speed_projective_pd) {
    PD_CHECK_REL(landing_friction_ratio("projective_pd", 0.01), 1.0, 0.10);
}
