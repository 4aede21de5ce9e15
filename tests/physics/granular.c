/* He 2017 Sec. 7-8: granular matter. A cylinder of dry sand (radius 2 cm, height 4 cm: aspect
 * ratio a = 2, spacing 5 mm, 400 grains) is released on a rough (no-slip) floor.
 * - The density constraints (Sec. 8, Table 1's t_rho; src/sph) keep the settled sand at its
 *   rest density; without them it compacts under its weight (the published density attribute).
 * - Plastic corrections within the solve (solver.plastic_passes) let the sand flow out farther
 *   than the paper's single correction after it.
 * - Known failures: static friction (Eq. 28) should hold grains the friction stiffness alone
 *   lets slide (Fig. 12): the column should keep more of its height with it; the runout of the
 *   collapse against Lube et al. 2004 (JFM 508:175, axisymmetric collapse:
 *   dR/R0 = 1.6 a^(1/2) for a > 1.7), with the -25 %/+50 % band of VALIDATION.md; four plastic
 *   corrections lowering the column below 0.8 x (within the rounding's spread, issue 30).
 * - One run of these chaotic collapses moves with the rounding (another CPU's vector width):
 *   wet against dry sand is averaged over three runs, the column moved by +-1 um. */
#include "projective_pd_support.h"

#include "parallel/parallel.h"
#include "world/fields.h"

#define SPACING 0.005
#define RADIUS  0.02
#define HEIGHT  0.04

/* The column's base at (shift, 0, 0): a shift of a micrometre moves the sand by 2e-4 spacings
 * over a floor that is the same everywhere, and changes only the rounding of every step. */
static int open_column(pd_test_sim* t, const char* granular, const char* solver, double radius,
                       double shift) {
    char json[4096];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{%s},"
             "\"time\":{\"dt\":0.002,\"fps\":50,\"frames\":50},"
             "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"
             "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"drucker_prager\","
             "\"friction_angle\":30,\"cohesion\":0},\"granular\":{%s}}},"
             "\"bodies\":[{\"name\":\"column\",\"material\":\"sand\",\"spacing\":%.17g,"
             "\"shape\":{\"type\":\"cylinder\",\"base\":[%.17g,0,0],\"axis\":[0,1,0],"
             "\"radius\":%.17g,\"height\":%.17g}}],"
             "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"boundary\":\"no_slip\"}]}",
             solver, granular, SPACING, shift, radius, HEIGHT);
    return pd_test_sim_open(t, json, NULL, 0);
}

typedef struct settled {
    double height;  /* mean height of the grains within one radius of the axis, highest 10 % */
    double runout;  /* farthest radius where the deposit is two spacings thick (m) */
    double density; /* largest published density (the floor's share of a kernel counts) */
    double closest; /* closest pair of grains after the step to 0.3 s (spacings; -1: not run) */
    int ok;
} settled;

/* The closest pair of grains, in spacings (brute force). */
static double closest_of(const pd_particles* p) {
    double closest = 1;
    for (size_t i = 0; i < p->count; ++i)
        for (size_t j = i + 1; j < p->count; ++j)
            closest = fmin(closest, pd_v3_len(pd_v3_sub(p->pos[i], p->pos[j])));
    return closest / SPACING;
}

/* Height of the deposit in rings one spacing wide: the highest grain of each ring. */
static double runout_of(const pd_particles* p) {
    double h[64] = {0};
    for (size_t i = 0; i < p->count; ++i) {
        double r = sqrt(p->pos[i].x * p->pos[i].x + p->pos[i].z * p->pos[i].z);
        int c = (int)floor(r / SPACING);
        if (c < 64 && p->pos[i].y > h[c])
            h[c] = p->pos[i].y;
    }
    int last = 0;
    for (int c = 0; c < 64; ++c)
        if (h[c] >= 2 * SPACING)
            last = c;
    return (last + 1) * SPACING;
}

/* Runs until the kinetic energy falls below 1e-6 of the initial potential energy (VALIDATION.md)
 * or t_end. */
static settled run(const char* granular, const char* solver, double t_end, double shift) {
    settled out = {0};
    out.closest = -1;
    pd_test_sim t;
    if (!open_column(&t, granular, solver, RADIUS, shift))
        return out;
    pd_world* w = t.world;
    const pd_particles* p = &w->particles;
    double pe0 = 0;
    for (size_t i = 0; i < p->count; ++i)
        pe0 += p->mass[i] * 9.81 * p->pos[i].y;
    pd_error err = {0};
    while (w->time < t_end - 1e-9) {
        if (pd_world_step(w, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            pd_test_sim_close(&t);
            return out;
        }
        if (out.closest < 0 && w->time > 0.3 - 1e-9)
            out.closest = closest_of(p);
        double ke = 0;
        for (size_t i = 0; i < p->count; ++i)
            ke += 0.5 * p->mass[i] * pd_v3_len2(p->vel[i]);
        if (w->time > 0.2 && ke < 1e-6 * pe0)
            break;
    }
    double top = 0;
    for (size_t i = 0; i < p->count; ++i)
        top = fmax(top, p->pos[i].y);
    int k = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->pos[i].y > 0.9 * top)
            out.height += p->pos[i].y, ++k;
    out.height /= k;
    out.runout = runout_of(p);
    pd_field field;
    if (pd_world_fields(w, PD_ATTR_DENSITY, &field, &err) == 1) {
        const pd_real* rho = field.data;
        for (size_t i = 0; i < p->count; ++i)
            out.density = fmax(out.density, rho[i]);
    }
    printf("  t %.2f s: height %.4f m, runout %.4f m, densest grain %.0f kg/m^3\n", w->time,
           out.height, out.runout, out.density);
    out.ok = 1;
    pd_test_sim_close(&t);
    return out;
}

/* The sand without density constraints and without repulsion, 0.6 s: read by the density
 * test and, its closest pair at 0.3 s, by the repulsion test; run once. */
static settled unconstrained(void) {
    static settled s;
    static int done;
    if (!done)
        s = run("\"static_friction\":false,\"repulsion\":0", "\"density_iterations\":0", 0.6, 0),
        done = 1;
    return s;
}

PD_TEST(density_constraints_keep_settled_sand_at_rest_density) {
    settled with = run("\"static_friction\":false", "", 0.6, 0);
    settled without = unconstrained();
    PD_REQUIRE(with.ok && without.ok);
    PD_CHECK(with.density > 0 && with.density < 1.02 * 1600);
    PD_CHECK(without.density > 1.1 * 1600);
}

#define WET   "\"cohesion_stiffness\":1.73e5,\"saturation\":0.5"
#define SHIFT 1e-6

/* The runs below, each made once: 0 the defaults (the paper's order: one plastic correction
 * after the solve), 1 without static friction, 2 with four plastic corrections per step; 3 and
 * 4 the same as 2 with the column moved by +SHIFT and -SHIFT; 5, 6, 7 wet sand (Fig. 11) with
 * four corrections, moved by 0, +SHIFT, -SHIFT. */
static settled cached(int k) {
    static settled runs[8];
    static int done[8];
    const char* granular[] = {"", "\"static_friction\":false", "", "", "", WET, WET, WET};
    const char* solver[] = {"",
                            "",
                            "\"plastic_passes\":4",
                            "\"plastic_passes\":4",
                            "\"plastic_passes\":4",
                            "\"plastic_passes\":4",
                            "\"plastic_passes\":4",
                            "\"plastic_passes\":4"};
    const double shift[] = {0, 0, 0, SHIFT, -SHIFT, 0, SHIFT, -SHIFT};
    if (!done[k])
        runs[k] = run(granular[k], solver[k], 1.5, shift[k]), done[k] = 1;
    return runs[k];
}

PD_TEST(known_failure_static_friction_holds_grains) {
    settled with = cached(0), without = cached(1);
    PD_REQUIRE(with.ok && without.ok);
    printf("  height kept: %.0f %% with Eq. 28, %.0f %% without\n", 100 * with.height / HEIGHT,
           100 * without.height / HEIGHT);
    PD_CHECK(with.height > 1.1 * without.height);
}

/* One plastic correction after the solve lets the solve resist the step's motion with the
 * elastic trial stress, a viscosity of about G h (here 1.15e5 Pa x 2 ms = 230 Pa s: the column
 * creeps at ~1 cm/s); corrections within the solve bound it by the yield surface. The runout
 * is counted in rings of 0.25 R0; one run of each (issue 30): dR/R0 0.25 and 1.25 native (AVX2)
 * and portable (SSE2), 0.25 and 1.00 with FMA contraction, 0.25 and 1.00, 1.25, 0.75 with the
 * column moved by 1, -1, 3 um; 0.50 and 1.00 with jittered sampling (seeds 1-3): two to four
 * rings farther, never fewer than two. */
PD_TEST(plastic_passes_let_sand_flow) {
    settled one = cached(0), four = cached(2);
    PD_REQUIRE(one.ok && four.ok);
    double r1 = (one.runout - RADIUS) / RADIUS, r4 = (four.runout - RADIUS) / RADIUS;
    printf("  dR/R0 %.2f with one plastic correction per step, %.2f with four; height kept "
           "%.0f %% and %.0f %%\n",
           r1, r4, 100 * one.height / HEIGHT, 100 * four.height / HEIGHT);
    PD_CHECK(r4 - r1 >= 2 * SPACING / RADIUS - 1e-9); /* two rings: beyond the rings' noise */
}

/* The same runs: the column that flows farther also ends lower (a known failure at 0.82 x
 * until the yield check counted the pressure the density constraints carry). Not robust: the
 * ratio four / one moves with the rounding, one run of each (issue 30): 0.79 native (AVX2),
 * 0.80 portable (SSE2) and AVX-512, 0.69 native with FMA contraction, 0.75, 0.79 and 0.83
 * with the column moved by 1, -1 and 3 um; jittered sampling, seeds 1 and 2: 0.69 and 0.79
 * (one kept 82-85 %, four 59-68 % on the grid). Four is lower in every run, by 1.1 to 2.1
 * spacings, but not below 0.8 x. */
PD_TEST(known_failure_plastic_passes_lower_the_sand_column) {
    settled one = cached(0), four = cached(2);
    PD_REQUIRE(one.ok && four.ok);
    printf("  height kept: %.0f %% with one plastic correction per step, %.0f %% with four: "
           "%.3f x\n",
           100 * one.height / HEIGHT, 100 * four.height / HEIGHT, four.height / one.height);
    PD_CHECK(four.height < 0.8 * one.height);
}

/* Eq. 26-27 and Fig. 11: wet sand (saturation 0.5, K_c = K_f) holds a steeper, taller column
 * than dry sand; both with four plastic corrections per step. One run of each moves with the
 * rounding (issue 30), so the heights are averaged over the column as placed and moved by
 * +-1 um (rounding only). On the compression cone the average is 1.28 spacings native (AVX2),
 * 1.16 portable (SSE2) against the 1 spacing asked: a thin margin (docs/validation.md). */
PD_TEST(wet_sand_stands_steeper_than_dry) {
    double wet = 0, dry = 0;
    for (int k = 0; k < 3; ++k) {
        settled d = cached(k ? 2 + k : 2), w = cached(5 + k);
        PD_REQUIRE(d.ok && w.ok);
        printf("  moved %+.0f um: height kept %.1f %% wet, %.1f %% dry; dR/R0 %.2f wet, %.2f dry\n",
               1e6 * (k == 0   ? 0
                      : k == 1 ? SHIFT
                               : -SHIFT),
               100 * w.height / HEIGHT, 100 * d.height / HEIGHT, (w.runout - RADIUS) / RADIUS,
               (d.runout - RADIUS) / RADIUS);
        wet += w.height / 3, dry += d.height / 3;
    }
    printf("  mean height kept: %.1f %% wet, %.1f %% dry: wet taller by %.2f spacings\n",
           100 * wet / HEIGHT, 100 * dry / HEIGHT, (wet - dry) / SPACING);
    PD_CHECK(wet > dry + SPACING);
}

/* Lube et al. 2004: dR/R0 = 1.6 a^(1/2) for a > 1.7; a = 2 gives 2.26, band [1.70, 3.39].
 * Measured with four plastic corrections per step, the flowing configuration. */
PD_TEST(known_failure_collapse_runout_follows_lube2004) {
    settled s = cached(2);
    PD_REQUIRE(s.ok);
    double a = HEIGHT / RADIUS, want = 1.6 * sqrt(a), got = (s.runout - RADIUS) / RADIUS;
    printf("  dR/R0 = %.2f, Lube 2004: %.2f (band %.2f..%.2f)\n", got, want, 0.75 * want,
           1.5 * want);
    PD_CHECK(got > 0.75 * want && got < 1.5 * want);
}

/* Eq. 25-27 as read (docs/methods/projective_pd.md): (k_f + k_c) / K_f for K_c = K_f / 2,
 * H_f = 10, theta = 0.25, H_0 = 1, b = 1, so H_c = 2 and rho_1 = 0.75 rho_0. Above rho_0 friction
 * hardens and cohesion is whole; between rho_1 and rho_0 friction is gone and cohesion decays
 * (not grows, the printed sign); below rho_1 nothing is left; dry sand has no cohesion. */
PD_TEST(granular_stiffness_follows_eq_25_to_27) {
    pd_material_def m = pd_default_material_def();
    m.youngs_modulus = 3e5, m.poisson_ratio = 0.3;
    pd_params_set_defaults(&pd_ppd_material_table, m.method_params);
    pd_ppd_material_params* mp = (pd_ppd_material_params*)m.method_params;
    pd_real lame = 3e5 * 0.3 / (1.3 * 0.4);
    mp->granular = 1, mp->cohesion_stiffness = 0.5 * lame, mp->saturation = 0.25;
    pd_ppd_material wet;
    pd_ppd_granular_constants(&m, &wet);
    PD_CHECK_REL(pd_ppd_granular_factor(&wet, 1.02), exp(0.2) + 0.5, 1e-12);
    PD_CHECK_REL(pd_ppd_granular_factor(&wet, 0.9), 0.5 * exp(-2 * 0.1), 1e-12);
    PD_CHECK(pd_ppd_granular_factor(&wet, 0.7) == 0);
    mp->cohesion_falloff = 2, mp->debonding = 0.5; /* H_c = 4, rho_1 = 0.875 rho_0 */
    pd_ppd_material other;
    pd_ppd_granular_constants(&m, &other);
    PD_CHECK_REL(pd_ppd_granular_factor(&other, 0.9), 0.5 * exp(-4 * 0.1), 1e-12);
    PD_CHECK(pd_ppd_granular_factor(&other, 0.85) == 0);
    mp->saturation = 0;
    pd_ppd_material dry;
    pd_ppd_granular_constants(&m, &dry);
    PD_CHECK(pd_ppd_granular_factor(&dry, 0.999) == 0);
    PD_CHECK_REL(pd_ppd_granular_factor(&dry, 1.0), 1.5, 1e-12);
}

/* The same sand on 1 and 2 threads: bit-identical positions (every granular pass reads the
 * previous iterate and writes its own particle; maxima are per-chunk partials). A column of
 * radius 5 cm (2500 grains): pd_parallel_for runs fewer than four chunks of 512 serially. */
static size_t run_threads(int threads, pd_vec3* out, size_t cap) {
    pd_set_threads(threads);
    pd_test_sim t;
    int ok = open_column(&t, "", "\"plastic_passes\":2", 0.05, 0);
    return pd_test_positions_after_steps(&t, ok, 10, out, cap);
}

PD_TEST(granular_same_bits_on_any_thread_count) {
    enum { CAP = 4096 };
    static pd_vec3 one[CAP], two[CAP];
    size_t n1 = run_threads(1, one, CAP), n2 = run_threads(2, two, CAP);
    PD_REQUIRE(n1 == n2 && n1 < CAP && n1 > 4 * 512);
    size_t differ = pd_test_positions_differing(one, two, n1);
    printf("  %zu grains after 10 steps: %zu differ between 1 and 2 threads\n", n1, differ);
    PD_CHECK(differ == 0);
}

/* Eq. 28 on one grain at rest (x = 0) predicted to fall 1 mm (y* = (0, -1, 0) mm): a solve that
 * ends it within (1 - eta) of its start holds it; one that lets it fall further does not; a
 * larger eta holds less. */
PD_TEST(static_friction_follows_eq_28) {
    pd_vec3 x = pd_v3(0, 0, 0), ys = pd_v3(0, -1e-3, 0);
    PD_CHECK(pd_ppd_static_friction_holds(x, ys, pd_v3(1e-4, -1e-4, 0), 0.8));
    PD_CHECK(!pd_ppd_static_friction_holds(x, ys, pd_v3(0, -3e-4, 0), 0.8));
    PD_CHECK(pd_ppd_static_friction_holds(x, ys, pd_v3(0, -1.5e-4, 0), 0.8));
    PD_CHECK(!pd_ppd_static_friction_holds(x, ys, pd_v3(0, -1.5e-4, 0), 0.9));
    PD_CHECK(!pd_ppd_static_friction_holds(x, x, x, 0.8)); /* nothing predicted: no test */
}

/* The published density of an elastic body follows its motion (its families never renew, so
 * only the per-step publication refreshes it): a rubber cube (no gravity, 1 ms steps)
 * squeezed to 0.95 of its size about its centre reads about 1/0.95^3 = 1.166 of its density
 * inside after one step, where it read 1 at rest. */
PD_TEST(density_attribute_follows_an_elastic_body) {
    const char* json =
        "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.0001,\"fps\":50,"
        "\"frames\":1},\"gravity\":[0,0,0],\"materials\":{\"rubber\":{\"density\":1000,"
        "\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},\"bodies\":[{\"name\":\"cube\","
        "\"material\":\"rubber\",\"spacing\":0.005,\"shape\":{\"type\":\"box\",\"min\":[0,0,0],"
        "\"max\":[0.05,0.05,0.05]}}]}";
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, json, NULL, 0));
    pd_particles* p = &t.world->particles;
    pd_error err = {0};
    pd_field field;
    PD_REQUIRE(pd_world_fields(t.world, PD_ATTR_DENSITY, &field, &err) == 1);
    const pd_real* rho = field.data;
    size_t centre = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (pd_v3_len(pd_v3_sub(p->rest[i], pd_v3(0.0275, 0.0275, 0.0275))) <
            pd_v3_len(pd_v3_sub(p->rest[centre], pd_v3(0.0275, 0.0275, 0.0275))))
            centre = i;
    double at_rest = rho[centre];
    for (size_t i = 0; i < p->count; ++i)
        p->pos[i] = pd_v3_madd(pd_v3(0.025, 0.025, 0.025), 0.95,
                               pd_v3_sub(p->pos[i], pd_v3(0.025, 0.025, 0.025)));
    PD_REQUIRE(pd_world_step(t.world, &err) == PD_OK);
    PD_REQUIRE(pd_world_fields(t.world, PD_ATTR_DENSITY, &field, &err) == 1);
    rho = field.data;
    printf("  centre particle: %.1f kg/m^3 at rest, %.1f squeezed to 0.95\n", at_rest, rho[centre]);
    PD_CHECK_NEAR(at_rest, 1000, 1);
    PD_CHECK_REL(rho[centre], 1000 / (0.95 * 0.95 * 0.95), 0.01);
    pd_test_sim_close(&t);
}

/* The repulsive distance constraint (Sec. 8) on its own, without density constraints: at its
 * default distance of one spacing no two grains end a step closer than 0.95 spacings (two
 * Jacobi passes leave a little overlap); without it the settling column's bonds let pairs come
 * closer than that (measured 0.92; the density test's run without either, read at 0.3 s). */
static double closest_pair(const char* granular) {
    pd_test_sim t;
    if (!open_column(&t, granular, "\"density_iterations\":0", RADIUS, 0))
        return -1;
    pd_error err = {0};
    while (t.world->time < 0.3 - 1e-9)
        if (pd_world_step(t.world, &err) != PD_OK) {
            pd_test_sim_close(&t);
            return -1;
        }
    double closest = closest_of(&t.world->particles);
    pd_test_sim_close(&t);
    return closest;
}

PD_TEST(repulsion_keeps_grains_apart) {
    double with = closest_pair("\"static_friction\":false");
    double without = unconstrained().closest;
    printf("  closest pair after 0.3 s: %.2f spacings with repulsion, %.2f without\n", with,
           without);
    PD_REQUIRE(with > 0 && without > 0);
    PD_CHECK(with > 0.95);
    PD_CHECK(without < 0.95);
}
