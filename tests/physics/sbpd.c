/* sbpd (Wang et al. 2025): the isotropic bond weights of a bar, creep under its own weight
 * (VALIDATION.md, "Viscoelasticity"), hysteresis, release, and the refusal of a time step the
 * explicit passes cannot take. The explicit passes leave an elastic bar ringing, so forces and
 * strains are averaged over windows several of its periods long. */
#include <math.h>
#include <stdlib.h>

#include "parallel/parallel.h"
#include "solvers/sbpd/sbpd_data.h"
#include "support.h"

/* A bar L x W x W (W = 5 spacings) pinned at both ends; pin 1 moves by `pull` over `ramp` s,
 * then holds. E_0 = 1e5 Pa, nu 0.3, and a Prony block `visco` (may be empty). */
static const char* k_bar =
    "{\"version\":1,\"method\":\"sbpd\","
    "\"time\":{\"dt\":%g,\"fps\":50,\"frames\":10},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":%g%s}},"
    "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[%g,%g,%g]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[%g,-1,-1],\"max\":[1,1,1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":%g,\"translate\":[%g,0,0]}]}]}]}";

typedef struct bar_def {
    double L, W, nu, ramp, strain, dt;
    const char* visco; /* ",\"viscoelasticity\":{...}" or "" */
} bar_def;

/* Axial strain (slope of u_x over the middle half) and lateral strain (the middle slab's mean
 * distance from the axis) of the bar now. */
static void bar_strains(const pd_test_sim* t, const bar_def* d, double* axial, double* lateral) {
    const pd_particles* p = &t->world->particles;
    double sx = 0, su = 0, sxx = 0, sxu = 0, n = 0, r0 = 0, r1 = 0, c = 0.5 * d->W;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->rest[i], y = p->pos[i];
        if (x.x < 0.25 * d->L || x.x > 0.75 * d->L)
            continue;
        double u = y.x - x.x;
        sx += x.x, su += u, sxx += x.x * x.x, sxu += x.x * u, n += 1;
        if (fabs(x.x - 0.5 * d->L) < 0.05 * d->L) {
            r0 += fabs(x.y - c) + fabs(x.z - c);
            r1 += fabs(y.y - c) + fabs(y.z - c);
        }
    }
    *axial = (n * sxu - sx * su) / (n * sxx - sx * sx);
    *lateral = (r1 - r0) / r0;
}

/* Means over [t0, t1) of the moving pin's x force and the bar's strains. */
typedef struct window {
    double force, axial, lateral;
} window;

static int run_window(pd_test_sim* t, const bar_def* d, double t0, double t1, window* out) {
    if (!pd_test_sim_run(t, t0))
        return 0;
    double n = 0, f = 0, a = 0, l = 0;
    while (t->world->time < t1 - 1e-9) {
        if (!pd_test_sim_run(t, t->world->time + t->world->def.dt))
            return 0;
        double ax, lat;
        bar_strains(t, d, &ax, &lat);
        f += t->world->pins[1].force.x, a += ax, l += lat, n += 1;
    }
    out->force = f / n, out->axial = a / n, out->lateral = l / n;
    return 1;
}

/* The bar at nu 0.25 and 0.45 (small strain: the scale of mu and lambda, Eq. 6 with
 * sum_j w V_j = 1, makes the bulk's shear modulus E / (2 (1 + nu)); the dilatation term adds
 * lambda - mu) is elastic_bar.c's, the same for every method. */

/* The factor of `solver.isotropic_weights` acts: without it the axis bar of nu = 1/4 is
 * stiffer by the grid's fourth moment along its axes (0.293 against the isotropic 0.2, and the
 * bonds' lambda with it): measured 1.75 times; with it within 25 % of E (above). */
PD_TEST(isotropic_weights_remove_the_grids_axis_stiffness) {
    bar_def d = {0.3, 0.08, 0.25, 0.3, 0.005, 2e-4, ""};
    char json[4096];
    snprintf(json, sizeof json, k_bar, d.dt, d.nu, d.visco, d.L, d.W, d.W, d.L - 0.02, d.ramp,
             d.strain * (d.L - 0.02));
    const char* off[] = {"solver.isotropic_weights=false"};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, json, off, 1));
    window w;
    PD_REQUIRE(run_window(&t, &d, 0.4, 0.6, &w));
    double E = w.force / (d.W * d.W) / w.axial;
    printf("  without the direction factors: E %.4g Pa (x %.3f), nu %.3f\n", E, E / 1e5,
           -w.lateral / w.axial);
    PD_CHECK(E / 1e5 > 1.5);
    pd_test_sim_close(&t);
}

/* Stress relaxation after a ramp against the Prony relaxation modulus (one term, and Fig. 5's
 * three) is prony_relaxation.c's, for every method with Prony series. */

/* A bar 0.05 x 0.2 x 0.05 m hanging from its top slab under its own weight (E_0 = 1e5 Pa, nu
 * 0.3, 4 % strain at the top once relaxed); `visco` its Prony block. */
static const char* k_hanging =
    "{\"version\":1,\"method\":\"sbpd\","
    "\"time\":{\"dt\":2e-4,\"fps\":50,\"frames\":10},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3%s}},"
    "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.05,0.2,0.05]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,0.18,-1],\"max\":[1,1,1]}}]}]}";

/* Mean downward displacement of the bottom slab (rest y < 0.02) over [t0, t1). */
static int sag_window(pd_test_sim* t, double t0, double t1, double* sag) {
    if (!pd_test_sim_run(t, t0))
        return 0;
    const pd_particles* p = &t->world->particles;
    double sum = 0, n = 0;
    while (t->world->time < t1 - 1e-9) {
        if (!pd_test_sim_run(t, t->world->time + t->world->def.dt))
            return 0;
        for (size_t i = 0; i < p->count; ++i)
            if (p->rest[i].y < 0.02)
                sum += p->rest[i].y - p->pos[i].y, n += 1;
    }
    *sag = sum / n;
    return 1;
}

#define CREEP_WINDOWS 10

/* The sag of a hanging bar over 0.2 s windows up to 2 s (five creep times of the faster mode:
 * 99.1 % of its creep; to 3 s final / elastic read 1.989 instead of 1.975, at 1.5 times the
 * CPU). */
static int creep_curve(const char* visco, double sag[CREEP_WINDOWS]) {
    char json[2048];
    snprintf(json, sizeof json, k_hanging, visco);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    int ok = 1;
    for (int k = 0; k < CREEP_WINDOWS && ok; ++k)
        ok = sag_window(&t, 0.2 * k, 0.2 * (k + 1), &sag[k]);
    pd_test_sim_close(&t);
    return ok;
}

/* Creep under a constant load (issue 10; VALIDATION.md): a standard linear solid (E_inf = 0.5
 * E_0, one mode) creeps from the elastic sag towards E_0 / E_inf = 2 times it (exact at small
 * strain for the linear series and for the paper's bonds alike: every bond ends at gamma =
 * mu_inf), growing from window to window; with theta 0.8 s instead of 0.2 s it creeps more
 * slowly: creep time tau E_0 / E_inf 1.6 s against 0.4 s, so at 0.6 s the progress (sag -
 * elastic) / (final - elastic) is 1 - exp(-t / tau_c), 0.31 against 0.78 for the linear
 * series. The elastic bar rings about its sag (period about 0.07 s): its mean over 1-2 s. */
PD_TEST(creep_grows_towards_e0_over_einf_and_slower_when_more_viscous) {
    double el[CREEP_WINDOWS], fast[CREEP_WINDOWS], slow[CREEP_WINDOWS];
    PD_REQUIRE(creep_curve("", el));
    PD_REQUIRE(creep_curve(",\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[5e4],"
                           "\"times\":[0.2]}",
                           fast));
    PD_REQUIRE(creep_curve(",\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[5e4],"
                           "\"times\":[0.8]}",
                           slow));
    double u_el = 0;
    for (int k = 5; k < CREEP_WINDOWS; ++k)
        u_el += el[k] / (CREEP_WINDOWS - 5);
    int rises_fast = 0, rises_slow = 0;
    for (int k = 0; k < CREEP_WINDOWS; ++k) {
        printf("  %.1f-%.1f s: sag elastic %.4f mm, theta 0.2 s %.4f mm, theta 0.8 s %.4f mm\n",
               0.2 * k, 0.2 * (k + 1), 1e3 * el[k], 1e3 * fast[k], 1e3 * slow[k]);
        rises_fast += k > 0 && fast[k] > fast[k - 1];
        rises_slow += k > 0 && slow[k] > slow[k - 1];
    }
    double final = fast[CREEP_WINDOWS - 1] / u_el;
    double pf = (fast[2] - u_el) / (2 * u_el - u_el), ps = (slow[2] - u_el) / (2 * u_el - u_el);
    printf("  final / elastic %.4f (E_0 / E_inf = 2); progress at 0.4-0.6 s: %.3f (theta 0.2 s), "
           "%.3f (theta 0.8 s); windows rising: %d and %d of %d\n",
           final, pf, ps, rises_fast, rises_slow, CREEP_WINDOWS - 1);
    PD_CHECK_NEAR(final, 2.0, 0.1);
    PD_CHECK(rises_fast == CREEP_WINDOWS - 1 && rises_slow == CREEP_WINDOWS - 1);
    PD_CHECK(ps < 0.6 * pf);
}

/* A time step above the passes' stable bound (sbpd_setup.c) is refused at time.dt with the
 * bound in the message, one just below it runs; and the bound is near the truth: the same body
 * stepped at `factor` times the bound (set past the check) blows up. A bar released from a 2 %
 * stretch, 0.2 s. */
static pd_status released_bar(double factor, double* dt_max, pd_error* err) {
    static const char* json =
        "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1e-5,\"fps\":50,\"frames\":10},"
        "\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
        "\"poisson_ratio\":0.3}},\"bodies\":[{\"name\":\"bar\",\"material\":\"m\","
        "\"spacing\":0.01,\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.05,0.05]}}]}";
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return PD_ERR_BAD_SCENE;
    pd_sbpd_state* s = t.world->solver_state;
    *dt_max = s->dt_max;
    pd_particles* p = &t.world->particles;
    for (size_t i = 0; i < p->count; ++i)
        p->pos[i].x *= 1.02;
    t.world->def.dt = factor * s->dt_max; /* past the check: each step's context carries it */
    pd_status st = PD_OK;
    while (st == PD_OK && t.world->time < 0.2)
        st = pd_world_step(t.world, err);
    pd_test_sim_close(&t);
    return st;
}

PD_TEST(time_step_above_the_stable_bound_is_refused) {
    double dt_max = 0;
    pd_error err = {0};
    pd_status below = released_bar(0.95, &dt_max, &err);
    pd_status above = released_bar(3.0, &dt_max, &err);
    printf("  bound %.4g s; at 0.95 x: %s; at 3 x (past the check): %s\n", dt_max,
           pd_status_string(below), pd_status_string(above));
    PD_CHECK(below == PD_OK);
    PD_CHECK(above == PD_ERR_UNSTABLE);
    char json[1024], set[64];
    snprintf(set, sizeof set, "time.dt=%.6g", 1.05 * dt_max);
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1e-5,\"fps\":50,"
             "\"frames\":1},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
             "\"poisson_ratio\":0.3}},\"bodies\":[{\"name\":\"bar\",\"material\":\"m\","
             "\"spacing\":0.01,\"shape\":{\"type\":\"box\",\"min\":[0,0,0],"
             "\"max\":[0.1,0.05,0.05]}}]}");
    const char* sets[] = {set};
    pd_scene scene;
    pd_world* world = NULL;
    pd_status st = pd_scene_parse(json, "t.json", ".", sets, 1, &scene, &err);
    PD_REQUIRE(st == PD_OK);
    st = pd_create_world(&scene, &world, &err);
    printf("  at 1.05 x: %s: %s\n", err.path, err.message);
    PD_CHECK(st == PD_ERR_BAD_SCENE && strcmp(err.path, "time.dt") == 0);
    pd_destroy_world(world);
    pd_scene_free(&scene);
}

/* A bar 0.2 x 0.05 x 0.05 m (E_0 1e5 Pa, nu 0.3, the Prony block `visco`) pinned at x < 0.02
 * and, by pin 1, at x > 0.18, which follows `keyframes` and takes the extra keys `pin1` (",
 * \"release\": t" or ""). */
static void short_bar_json(char* json, size_t size, const char* visco, const char* keyframes,
                           const char* pin1) {
    snprintf(json, size,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":2e-4,\"fps\":50,\"frames\":10},"
             "\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
             "\"poisson_ratio\":0.3%s}},\"bodies\":[{\"name\":\"bar\",\"material\":\"m\","
             "\"spacing\":0.01,\"shape\":{\"type\":\"box\",\"min\":[0,0,0],"
             "\"max\":[0.2,0.05,0.05]},\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],"
             "\"max\":[0.02,1,1]}},{\"region\":{\"type\":\"box\",\"min\":[0.18,-1,-1],"
             "\"max\":[1,1,1]},\"keyframes\":[%s]%s}]}]}",
             visco, keyframes, pin1);
}

/* A bar (0.2 x 0.05 x 0.05 m) pulled to 1 % over 0.2 s, then cycled between 0.5 % and 1.5 %
 * (triangle wave, period 0.5 s) by its moving pin; `visco` its Prony block. Returns the work
 * the pin does on the bar over the cycle starting at t0 (N m) and the loading work (the
 * positive part of F dx) over it. */
static int cycle_work(const char* visco, double t0, double* net, double* loading) {
    char frames[2048], json[4096];
    int len = snprintf(frames, sizeof frames,
                       "{\"t\":0,\"translate\":[0,0,0]},{\"t\":0.2,\"translate\":[0.0018,0,0]}");
    for (int k = 0; k < 12; ++k) /* 0.0018 m is 1 % of the 0.18 m between the pins */
        len += snprintf(frames + len, sizeof frames - (size_t)len,
                        ",{\"t\":%g,\"translate\":[%g,0,0]}", 0.325 + 0.25 * k,
                        k % 2 ? 0.0027 : 0.0009);
    short_bar_json(json, sizeof json, visco, frames, "");
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    if (!pd_test_sim_run(&t, t0)) {
        pd_test_sim_close(&t);
        return 0;
    }
    const pd_particles* p = &t.world->particles;
    size_t probe = 0; /* a particle of the moving pin, by id (the world reorders them) */
    while (probe < p->count && !(p->rest[probe].x > 0.18))
        ++probe;
    int32_t id = p->id[probe];
    *net = *loading = 0;
    while (t.world->time < t0 + 0.5 - 1e-9) {
        double x0 = p->pos[t.world->order[id]].x;
        if (!pd_test_sim_run(&t, t.world->time + t.world->def.dt)) {
            pd_test_sim_close(&t);
            return 0;
        }
        double dw = t.world->pins[1].force.x * (p->pos[t.world->order[id]].x - x0);
        *net += dw;
        *loading += fmax(dw, 0);
    }
    pd_test_sim_close(&t);
    return 1;
}

/* The pin's strain over time in cycle_work (1 % at 0.2 s, then 0.5 % .. 1.5 % every 0.5 s). */
static double cycle_strain(double t) {
    if (t < 0.2)
        return 0.05 * t;
    if (t < 0.325)
        return 0.01 - 0.04 * (t - 0.2);
    double v = fmod(t - 0.325, 0.5);
    return v < 0.25 ? 0.005 + 0.04 * v : 0.015 - 0.04 * (v - 0.25);
}

/* Net over loading work of one bond under cycle_strain over the cycle from t0, one mode E_1 of
 * E_0 = 1 with time theta: the linear series (sigma = E_inf e + E_1 (e - q), q following e) or
 * the paper's bond (Eq. 9-11: q following e^2, sigma = (E_inf + E_1 (1 - q / e^2)) e, the
 * factor kept at -1 or above as in sbpd.c). */
static double bond_cycle_ratio(double E1, double theta, double t0, int squared) {
    double dt = 1e-5, q = 0, e_old = 0, net = 0, loading = 0, a = exp(-dt / theta);
    for (double t = dt; t < t0 + 0.5; t += dt) {
        double e = cycle_strain(t), sigma;
        if (squared) {
            q = a * q + (1 - a) * e * e;
            sigma = (1 - E1) * e + E1 * fmax(1 - q / (e * e), -1) * e;
        } else {
            q = a * q + (1 - a) * e;
            sigma = (1 - E1) * e + E1 * (e - q);
        }
        if (t >= t0)
            net += sigma * (e - e_old), loading += fmax(sigma * (e - e_old), 0);
        e_old = e;
    }
    return net / loading;
}

/* Cyclic loading (issue 10; VALIDATION.md, hysteresis): over a cycle after the transients the
 * pins do net work on a viscoelastic bar (the energy it dissipates), none on an elastic one
 * (within 2 % of the loading work). One mode E_1 = E_0 / 2, theta 0.1 s (omega theta = 1.26:
 * near the loss peak), the cycle from 1.325 s (12 theta). The cycle about a pre-strain keeps
 * every bond on one side of its rest length (W -> 0 is singular in Eq. 10-11). The share
 * dissipated is the paper's bond law's (a single bond under the same strain, Eq. 9-11) within
 * 10 %; a linear Prony solid would dissipate a little more than half of it (its modes follow
 * the strain, the paper's its square: about a pre-strain their tangent is 2 E_k). */
PD_TEST(cycles_dissipate_only_when_viscoelastic) {
    double el_net, el_load, ve_net, ve_load;
    PD_REQUIRE(cycle_work("", 1.325, &el_net, &el_load));
    PD_REQUIRE(cycle_work(",\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[5e4],"
                          "\"times\":[0.1]}",
                          1.325, &ve_net, &ve_load));
    printf("  elastic: net work %.4g J of %.4g J loading (%.2f %%); viscoelastic: %.4g J of "
           "%.4g J (%.1f %%)\n",
           el_net, el_load, 100 * el_net / el_load, ve_net, ve_load, 100 * ve_net / ve_load);
    double paper = bond_cycle_ratio(0.5, 0.1, 1.325, 1),
           linear = bond_cycle_ratio(0.5, 0.1, 1.325, 0);
    printf("  share dissipated: bar %.3f, the paper's bond %.3f, a linear Prony bond %.3f\n",
           ve_net / ve_load, paper, linear);
    PD_CHECK(fabs(el_net) < 0.02 * el_load);
    PD_CHECK(ve_net > 0);
    PD_CHECK_NEAR(ve_net / ve_load / paper, 1.0, 0.1);
}

/* A bar (0.2 x 0.05 x 0.05 m) pulled by 4 % over 0.1 s, held to 0.6 s, its moving pin let go
 * at 0.6 s (`pins[k].release`); the mean stretch of its middle half over windows after. */
static int released_stretch(const char* visco, const char* history, const double* at, int count,
                            double* stretch) {
    char json[2048];
    short_bar_json(json, sizeof json, visco, "{\"t\":0},{\"t\":0.1,\"translate\":[0.0072,0,0]}",
                   ",\"release\":0.6");
    bar_def d = {0.2, 0.05, 0.3, 0.1, 0.04, 2e-4, visco};
    pd_test_sim t;
    const char* sets[] = {history};
    if (!pd_test_sim_open(&t, json, sets, 1))
        return 0;
    for (int k = 0; k < count; ++k) {
        window w;
        double half = k == 0 ? 0.05 : 0.5 * (at[k] - at[k - 1]);
        if (!run_window(&t, &d, at[k] - half, at[k] + half, &w)) {
            pd_test_sim_close(&t);
            return 0;
        }
        stretch[k] = w.axial;
    }
    pd_test_sim_close(&t);
    return 1;
}

/* Stretched, held and let go (issue 10: a pin's `release`; Fig. 4-5's stretch and release).
 * The elastic bar springs back at once and rings about its rest length (its mean over
 * 0.925-1.375 s). A viscoelastic one with a fast mode (E_0 0.3, 0.02 s, which damps the ringing)
 * and a slow one (E_0 0.3, 1 s) keeps part of its stretch and creeps back: under
 * solver.history = stretch (a linear Prony solid) the slow mode holds about E_2 q_2 / (E_inf +
 * E_2) = 0.18 of the held stretch once the fast one has relaxed, going with a time of about
 * theta_2 (E_inf + E_2) / E_inf = 1.75 s: 0.0068, 0.0052, 0.0041, 0.0024 at 0.7, 1.15, 1.6, 2.5 s
 * for this single-bond estimate. */
static const char* k_two_modes = ",\"viscoelasticity\":{\"model\":\"prony\","
                                 "\"moduli\":[3e4,3e4],\"times\":[0.02,1.0]}";
static const double k_release_at[] = {0.55, 0.7, 1.15, 1.6, 2.5};

PD_TEST(a_released_bar_springs_back_or_creeps_back) {
    const double* at = k_release_at;
    double el[3], lin[5];
    PD_REQUIRE(released_stretch("", "solver.history=stretch", at, 3, el));
    PD_REQUIRE(released_stretch(k_two_modes, "solver.history=stretch", at, 5, lin));
    for (int k = 0; k < 5; ++k)
        printf("  %.2f s: stretch of the middle: %s%.5f, viscoelastic %.5f\n", at[k],
               k < 3 ? "elastic " : "", k < 3 ? el[k] : 0.0, lin[k]);
    PD_CHECK(el[0] > 0.03 && lin[0] > 0.03); /* held */
    PD_CHECK(fabs(el[2]) < 0.05 * el[0]);    /* sprang back */
    PD_CHECK(lin[1] > 0.1 * lin[0]);         /* kept part of it */
    PD_CHECK(lin[2] < lin[1] && lin[3] < lin[2] && lin[4] < lin[3]);
    PD_CHECK(lin[4] < 0.6 * lin[1]);
}

/* The same viscoelastic bar under the paper's squared histories (Eq. 9-11, the default): a
 * relaxed bond unloading has W -> 0 with q > 0, where gamma is singular; capped at -1 per mode
 * (docs/methods/sbpd.md) the modes do not hold the bar back and it springs back like the
 * elastic one (uncapped, the passes blow up: factor -9 at 0.72 s, -100 at 0.61 s, measured).
 * Known failure: the same checks as under `stretch`. */
PD_TEST(known_failure_squared_histories_creep_back_after_release) {
    const double* at = k_release_at;
    double sq[5];
    PD_REQUIRE(released_stretch(k_two_modes, "solver.history=squared", at, 5, sq));
    for (int k = 0; k < 5; ++k)
        printf("  %.2f s: stretch of the middle %.5f\n", at[k], sq[k]);
    PD_CHECK(sq[1] > 0.1 * sq[0]);
    PD_CHECK(sq[2] < sq[1] && sq[3] < sq[2] && sq[4] < sq[3]);
}

/* The solver keys act (the scene contract: nothing parsed and ignored). A block landing on a
 * floor (E 1e5 Pa): `iterations` caps the passes of a step that has not settled (tolerance
 * 0: every step takes all 3); `tolerance` ends them early (1 m: one pass); `horizon` sets the
 * family: an interior particle bonds to the 26 lattice points closer than 2 spacings (those at
 * exactly 2 weigh 0 and are left out), to 92 closer than 3: 3.5 times as many, less on this
 * small block's surface (measured 3.06). */
static int step_with(const char* a, const char* b, int* passes, size_t* bonds) {
    static const char* json =
        "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1e-4,\"fps\":50,\"frames\":1},"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
        "\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[0,-1,0],"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.08,0.08,0.08]}}],"
        "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0]}]}";
    const char* sets[] = {a, b};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, 2))
        return 0;
    int ok = pd_test_sim_run(&t, 20 * t.world->def.dt);
    *passes = t.world->last_stats.iterations;
    *bonds = t.world->bond_count;
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(solver_keys_change_the_step) {
    int capped, loose, deflt;
    size_t b2, b3, b_;
    PD_REQUIRE(step_with("solver.tolerance=0", "solver.iterations=3", &capped, &b2));
    PD_REQUIRE(step_with("solver.tolerance=1", "solver.iterations=6", &loose, &b_));
    PD_REQUIRE(step_with("solver.horizon=3", "solver.tolerance=1e-4", &deflt, &b3));
    printf("  passes: tolerance 0 and 3 iterations %d, tolerance 1 m %d; bonds at horizon 2: "
           "%zu, at 3: %zu (512 particles)\n",
           capped, loose, b2, b3);
    PD_CHECK(capped == 3 && loose == 1);
    PD_CHECK(b3 > 2.5 * b2);
}
