/* sbpd (Wang et al. 2025): a bar's small-strain E and nu, stress relaxation at held strain
 * against the Prony relaxation modulus (VALIDATION.md, "Viscoelasticity"), creep under its own
 * weight, and the refusal of a time step the explicit passes cannot take. The explicit passes
 * leave an elastic bar ringing, so forces and strains are averaged over windows several of its
 * periods long. */
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

static int open_bar(pd_test_sim* t, const bar_def* d) {
    char json[4096];
    snprintf(json, sizeof json, k_bar, d->dt, d->nu, d->visco, d->L, d->W, d->W, d->L - 0.02,
             d->ramp, d->strain * (d->L - 0.02));
    return pd_test_sim_open(t, json, NULL, 0);
}

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

/* Small strain (0.5 % over 0.3 s, measured over 0.4-0.6 s): the bar shows the E and nu it is
 * given. The scale of mu and lambda (Eq. 6 with sum_j w V_j = 1) makes the bulk's shear modulus
 * E / (2 (1 + nu)); the dilatation term adds lambda - mu. Without the scale the bar shows E
 * times (2 mu + lambda) / (15 mu) (0.2 at nu = 1/4); without the dilatation term nu 1/4. */
static void check_small_strain(double nu) {
    bar_def d = {0.3, 0.08, nu, 0.3, 0.005, 2e-4, ""};
    pd_test_sim t;
    PD_REQUIRE(open_bar(&t, &d));
    window w;
    PD_REQUIRE(run_window(&t, &d, 0.4, 0.6, &w));
    double E = w.force / (d.W * d.W) / w.axial, shown = -w.lateral / w.axial;
    printf("  nu %.2f: axial %.5g, lateral %.5g, pin force %.4g N: E %.4g Pa (x %.3f), nu %.3f\n",
           nu, w.axial, w.lateral, w.force, E, E / 1e5, shown);
    PD_CHECK_NEAR(E / 1e5, 1.0, 0.25);
    PD_CHECK_NEAR(shown, nu, 0.05);
    pd_test_sim_close(&t);
}

PD_TEST(bar_shows_e_and_nu_025) {
    check_small_strain(0.25);
}

PD_TEST(bar_shows_e_and_nu_045) {
    check_small_strain(0.45);
}

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

/* VALIDATION.md's Prony relaxation after a ramp eps = r t over t_r, then held at eps_h = r t_r:
 * sigma(t) / eps_h = E_inf + sum_k E_k c_k exp(-(t - t_r) / tau_k) with
 * c_k = (tau_k / t_r)(1 - exp(-t_r / tau_k)). */
static double prony_after_ramp(double E0, const double* Ek, const double* tau, int n, double tr,
                               double t) {
    double E = E0;
    for (int k = 0; k < n; ++k)
        E -= Ek[k];
    for (int k = 0; k < n; ++k)
        E += Ek[k] * tau[k] / tr * (1 - exp(-tr / tau[k])) * exp(-(t - tr) / tau[k]);
    return E;
}

/* Stress relaxation (issue 10): a bar (0.2 x 0.05 x 0.05 m, E_0 = 1e5 Pa, nu 0.3) stretched by
 * its pins to 1 % over 0.1 s and held; the moving pin's force, averaged over 0.1 s windows (the
 * elastic bar rings with a period of about 0.03 s), over the same bar's with E_inf = E_0 held
 * at the same strain, against E(t) / E_0 of the Prony series above, within 5 %. The paper's
 * bonds relax on W = stretch^2 rather than on the strain: after a ramp of 0.2 tau its modes
 * keep up to (x / 6) E_k / E_0 more than the linear series (docs/methods/sbpd.md). */
static void check_relaxation(const char* visco, const double* Ek, const double* tau, int n,
                             const double* times, int count) {
    bar_def el = {0.2, 0.05, 0.3, 0.1, 0.01, 2e-4, ""}, ve = el;
    ve.visco = visco;
    pd_test_sim t;
    window ref, w;
    PD_REQUIRE(open_bar(&t, &el));
    PD_REQUIRE(run_window(&t, &el, 0.3, 1.0, &ref));
    pd_test_sim_close(&t);
    printf("  elastic: pin force %.4f N at axial strain %.5f\n", ref.force, ref.axial);
    PD_REQUIRE(open_bar(&t, &ve));
    for (int k = 0; k < count; ++k) {
        PD_REQUIRE(run_window(&t, &ve, times[k] - 0.05, times[k] + 0.05, &w));
        double law = prony_after_ramp(1e5, Ek, tau, n, ve.ramp, times[k]) / 1e5;
        printf("  t %.2f s: F / F_el %.4f, Prony %.4f (x %.4f)\n", times[k], w.force / ref.force,
               law, w.force / ref.force / law);
        PD_CHECK_NEAR(w.force / ref.force / law, 1.0, 0.05);
    }
    pd_test_sim_close(&t);
}

PD_TEST(relaxation_follows_one_prony_term) {
    const double Ek[] = {5e4}, tau[] = {0.5}, times[] = {0.2, 0.5, 1.0, 1.5, 2.0};
    check_relaxation(",\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[5e4],\"times\":[0.5]}",
                     Ek, tau, 1, times, 5);
}

/* The high-viscosity set of Fig. 5 (Sec. 8): E_inf = 0.3 E_0, E_k = 0.3, 0.2, 0.2 E_0, theta_k =
 * 0.5, 2, 5 s. */
PD_TEST(relaxation_follows_three_prony_terms) {
    const double Ek[] = {3e4, 2e4, 2e4}, tau[] = {0.5, 2, 5};
    const double times[] = {0.2, 0.5, 1.0, 2.0, 3.0};
    check_relaxation(",\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[3e4,2e4,2e4],"
                     "\"times\":[0.5,2,5]}",
                     Ek, tau, 3, times, 5);
}

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

#define CREEP_WINDOWS 15

/* The sag of a hanging bar over 0.2 s windows up to 3 s. */
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
 * series. The elastic bar rings about its sag (period about 0.07 s): its mean over 1-3 s. */
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
    t.world->def.dt = s->dt = factor * s->dt_max;
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

/* ---- sand (Sec. 5) ---- */

static int compare_doubles(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* A 0.1 m cube of sand (512 grains at 12.5 mm, E 3e5 Pa, nu 0.2 as Fig. 7, 1600 kg/m^3)
 * collapsing for 0.6 s on a floor with Coulomb friction 0.5. Returns the slope of the deposit,
 * atan(H / R) in degrees, H the 98th percentile of the grains' heights and R the 95th of their
 * distances from the axis. */
static int sand_deposit(double phi, double cohesion, double t_end, double* angle, double* H,
                        double* R, double* plastic) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1.8e-4,\"fps\":25,"
             "\"frames\":15},\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"
             "\"poisson_ratio\":0.2,\"plasticity\":{\"model\":\"drucker_prager\","
             "\"friction_angle\":%g,\"cohesion\":%g}}},\"bodies\":[{\"name\":\"sand\","
             "\"material\":\"sand\",\"spacing\":0.0125,\"shape\":{\"type\":\"box\","
             "\"min\":[-0.05,0,-0.05],\"max\":[0.05,0.1,0.05]}}],\"colliders\":[{\"type\":"
             "\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],\"friction\":0.5}]}",
             phi, cohesion);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    if (!pd_test_sim_run(&t, t_end)) {
        pd_test_sim_close(&t);
        return 0;
    }
    const pd_particles* p = &t.world->particles;
    const pd_sbpd_state* st = t.world->solver_state;
    *plastic = 0;
    for (size_t i = 0; i < p->count; ++i)
        *plastic += st->plastic[i] / (double)p->count;
    static double y[4096], r[4096];
    size_t n = p->count < 4096 ? p->count : 4096;
    for (size_t i = 0; i < n; ++i)
        y[i] = p->pos[i].y, r[i] = sqrt(p->pos[i].x * p->pos[i].x + p->pos[i].z * p->pos[i].z);
    qsort(y, n, sizeof *y, compare_doubles);
    qsort(r, n, sizeof *r, compare_doubles);
    *H = y[(size_t)(0.98 * (double)(n - 1))];
    *R = r[(size_t)(0.95 * (double)(n - 1))];
    *angle = atan(*H / *R) * 180 / PD_PI;
    pd_test_sim_close(&t);
    return 1;
}

/* Issue 10: the pile stands steeper with a larger friction angle (C_f of Eq. 13 through the
 * outer Mohr-Coulomb cone) and with cohesion (C_c). The deposit of a collapsing column is
 * flatter than the friction angle (it ran out); printed beside phi, not compared with it. */
PD_TEST(sand_deposits_steeper_with_friction_angle_and_cohesion) {
    const double phi[3] = {20, 30, 40};
    double angle[5], H[5], R[5], plastic[5];
    for (int k = 0; k < 3; ++k) {
        PD_REQUIRE(sand_deposit(phi[k], 0, 0.6, &angle[k], &H[k], &R[k], &plastic[k]));
        printf("  friction angle %.0f, no cohesion: height %.1f mm, radius %.1f mm, slope %.1f "
               "degrees, mean plastic strain %.3f\n",
               phi[k], 1e3 * H[k], 1e3 * R[k], angle[k], plastic[k]);
    }
    PD_REQUIRE(sand_deposit(30, 200, 0.6, &angle[3], &H[3], &R[3], &plastic[3]));
    printf("  friction angle 30, cohesion 200 Pa: height %.1f mm, radius %.1f mm, slope %.1f "
           "degrees, mean plastic strain %.3f\n",
           1e3 * H[3], 1e3 * R[3], angle[3], plastic[3]);
    /* the published plastic strain: none where the sand stands elastic (cohesion 1e5 Pa); and
     * it stands: its top layer where it fell to (93.75 mm less the 6.25 mm between the bottom
     * grains and the floor), within 1 mm (84.6 mm and sinking when the elastic F was committed
     * before the floor pushed the bottom grains back) */
    PD_REQUIRE(sand_deposit(30, 1e5, 0.2, &angle[4], &H[4], &R[4], &plastic[4]));
    printf("  cohesion 1e5 Pa (stands): height %.1f mm, mean plastic strain %.2e\n", 1e3 * H[4],
           plastic[4]);
    PD_CHECK(angle[1] > angle[0] + 2 && angle[2] > angle[1] + 2);
    PD_CHECK(angle[3] > angle[1] + 2);
    PD_CHECK(plastic[1] > 0.1 && plastic[4] < 1e-3);
    PD_CHECK_NEAR(1e3 * H[4], 87.5, 1.0);
}

/* DESIGN.md: results independent of scheduling. The sand cube at 6.25 mm (4096 grains) and a
 * spinning viscoelastic block (2000 particles) landing, 200 steps on 1 and on 2 threads: the
 * same bits. pd_parallel_for splits into chunks of 256 and runs fewer than 4 chunks serially, so
 * the bodies are large enough to be split between the threads. */
static int positions_after(const char* json, int threads, pd_vec3* out, size_t cap, size_t* n) {
    pd_set_threads(threads);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    int ok = pd_test_sim_run(&t, 200 * t.world->def.dt);
    const pd_particles* p = &t.world->particles;
    size_t count = p->count;
    *n = count < cap ? count : cap;
    for (size_t i = 0; ok && i < *n; ++i)
        out[p->id[i]] = p->pos[i];
    pd_test_sim_close(&t);
    pd_set_threads(0);
    return ok && count <= cap;
}

PD_TEST(same_bits_on_any_thread_count) {
    static pd_vec3 a[4096], b[4096];
    const char* scenes[2] = {
        "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":0.8e-4,\"fps\":25,\"frames\":1},"
        "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,\"poisson_ratio\":0.2,"
        "\"plasticity\":{\"model\":\"drucker_prager\",\"friction_angle\":30}}},"
        "\"bodies\":[{\"name\":\"sand\",\"material\":\"sand\",\"spacing\":0.00625,"
        "\"shape\":{\"type\":\"box\",\"min\":[-0.05,0,-0.05],\"max\":[0.05,0.1,0.05]}}],"
        "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"friction\":0.5}]}",
        "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":2e-4,\"fps\":25,\"frames\":1},"
        "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.45,"
        "\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[3e4],\"times\":[0.01]}}},"
        "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,\"angular_velocity\":"
        "[1,2,3],\"shape\":{\"type\":\"box\",\"min\":[0,0.05,0],\"max\":[0.2,0.15,0.1]}}],"
        "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"friction\":0.5}]}"};
    for (int k = 0; k < 2; ++k) {
        size_t na = 0, nb = 0, differ = 0;
        PD_REQUIRE(positions_after(scenes[k], 1, a, 4096, &na));
        PD_REQUIRE(positions_after(scenes[k], 2, b, 4096, &nb));
        PD_REQUIRE(na == nb);
        for (size_t i = 0; i < na; ++i)
            differ += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
        printf("  %s: %zu of %zu positions differ between 1 and 2 threads\n",
               k ? "viscoelastic block" : "sand", differ, na);
        PD_CHECK(differ == 0 && na > 4 * 256);
    }
}

/* ---- collisions between bodies (Eq. 25) ---- */

/* Two equal blocks (6 cm, 216 particles each) meeting at 1 and -0.5 m/s without gravity, 0.3 s:
 * Eq. 25's pushes are shares by inverse mass, so momentum is kept; the blocks part; no pair of
 * them comes closer than 0.75 d_c at the end of any step (the core contact's floor for a
 * particle slipping between four of a lattice face). With solver.contact false they pass
 * through each other. */
static int collide_blocks(int contact, double* momentum, double* va, double* vb, double* closest,
                          double* crossed) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"solver\":{\"contact\":%s},\"time\":{\"dt\":2e-4,"
             "\"fps\":100,\"frames\":30},\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":"
             "1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},\"bodies\":[{\"name\":\"a\","
             "\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1,0,0],\"shape\":{\"type\":\"box\","
             "\"min\":[0,0,0],\"max\":[0.06,0.06,0.06]}},{\"name\":\"b\",\"material\":\"m\","
             "\"spacing\":0.01,\"velocity\":[-0.5,0,0],\"shape\":{\"type\":\"box\","
             "\"min\":[0.08,0,0],\"max\":[0.14,0.06,0.06]}}]}",
             contact ? "true" : "false");
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    *closest = INFINITY;
    while (t.world->time < 0.3 - 1e-9) {
        if (!pd_test_sim_run(&t, t.world->time + t.world->def.dt)) {
            pd_test_sim_close(&t);
            return 0;
        }
        for (size_t i = 0; i < p->count; ++i)
            for (size_t j = 0; j < p->count; ++j)
                if (p->body[i] == 0 && p->body[j] == 1)
                    *closest = fmin(*closest, pd_v3_len(pd_v3_sub(p->pos[i], p->pos[j])) / 0.01);
    }
    double m[2] = {0, 0}, mv[2] = {0, 0}, mx[2] = {0, 0};
    for (size_t i = 0; i < p->count; ++i) {
        int b = p->body[i];
        m[b] += p->mass[i], mv[b] += p->mass[i] * p->vel[i].x, mx[b] += p->mass[i] * p->pos[i].x;
    }
    *momentum = (mv[0] + mv[1]) / m[0];
    *va = mv[0] / m[0], *vb = mv[1] / m[1];
    *crossed = mx[0] / m[0] - mx[1] / m[1]; /* > 0: a's centre beyond b's */
    pd_test_sim_close(&t);
    return 1;
}

PD_TEST(bodies_collide_instead_of_passing_through) {
    double mom, va, vb, closest, crossed;
    PD_REQUIRE(collide_blocks(1, &mom, &va, &vb, &closest, &crossed));
    printf("  contact: sum of mean velocities %.6f m/s (0.5 before), a %.3f, b %.3f m/s, closest "
           "pair %.3f d_c, centres %.3f m apart\n",
           mom, va, vb, closest, -crossed);
    PD_CHECK_NEAR(mom, 0.5, 1e-9);
    PD_CHECK(va < 0 && vb > 0.5);
    PD_CHECK(closest >= 0.75);
    PD_REQUIRE(collide_blocks(0, &mom, &va, &vb, &closest, &crossed));
    printf("  no contact: centres crossed by %.3f m, closest pair %.3f d_c\n", crossed, closest);
    PD_CHECK(crossed > 0);
}

/* Issue 10's coupling: no particle passes through a boundary. A ball of sand (radius 4 cm, 268
 * grains) falls 6 cm onto an elastic slab (0.3 x 0.02 x 0.3 m, E 1e5 Pa, edges pinned) and
 * settles in its dent, 0.4 s: no grain ever below the slab's lowest particle under it less half
 * a spacing. Without contact the sand falls through (the control). */
static int sand_through_slab(int contact, int* below, double* sag) {
    char json[2048];
    snprintf(
        json, sizeof json,
        "{\"version\":1,\"method\":\"sbpd\",\"solver\":{\"contact\":%s},\"time\":{\"dt\":1.5e-4,"
        "\"fps\":100,\"frames\":40},\"materials\":{\"slab\":{\"density\":1000,"
        "\"youngs_modulus\":1e5,\"poisson_ratio\":0.3},\"sand\":{\"density\":1600,"
        "\"youngs_modulus\":1e5,\"poisson_ratio\":0.2,\"plasticity\":{\"model\":"
        "\"drucker_prager\",\"friction_angle\":35}}},\"bodies\":[{\"name\":\"slab\","
        "\"material\":\"slab\",\"spacing\":0.01,\"shape\":{\"type\":\"box\",\"min\":[-0.15,0,"
        "-0.15],\"max\":[0.15,0.02,0.15]},\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,"
        "-1,-1],\"max\":[-0.13,1,1]}},{\"region\":{\"type\":\"box\",\"min\":[0.13,-1,-1],"
        "\"max\":[1,1,1]}}]},{\"name\":\"sand\",\"material\":\"sand\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.1,0],\"radius\":0.04}}]}",
        contact ? "true" : "false");
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    *below = 0, *sag = 0;
    while (t.world->time < 0.4 - 1e-9) {
        if (!pd_test_sim_run(&t, t.world->time + t.world->def.dt)) {
            pd_test_sim_close(&t);
            return 0;
        }
        double floor = INFINITY;
        for (size_t i = 0; i < p->count; ++i)
            if (p->body[i] == 0 && fabs(p->rest[i].x) < 0.05 && fabs(p->rest[i].z) < 0.05)
                floor = fmin(floor, p->pos[i].y);
        *sag = fmax(*sag, 0.005 - floor);
        for (size_t i = 0; i < p->count; ++i)
            *below += p->body[i] == 1 && p->pos[i].y < floor - 0.005;
    }
    pd_test_sim_close(&t);
    return 1;
}

PD_TEST(sand_does_not_pass_through_an_elastic_slab) {
    int below;
    double sag;
    PD_REQUIRE(sand_through_slab(1, &below, &sag));
    printf("  contact: grain-steps below the slab %d, deepest sag of the slab %.1f mm\n", below,
           1e3 * sag);
    PD_CHECK(below == 0);
    PD_REQUIRE(sand_through_slab(0, &below, &sag));
    printf("  no contact: grain-steps below the slab %d\n", below);
    PD_CHECK(below > 0);
}

/* Eq. 28 (solver.static_friction, the paper's eta 0.8): grains resting on a boundary stay. The
 * collapsed cube of the deposit test (friction angle 30) from 0.6 to 1.0 s: with eta 0.8 its
 * grains stay (a median move of 1e-5 mm), without (0) the deposit creeps (the floor's Coulomb
 * friction 0.5 acts in both). The floor is a plane collider, or a rigid body of boundary
 * particles (a fixed body two layers thick, contact_friction 0.5 with the sand). The median,
 * not the mean: a few grains that scatter off the edge of the rigid floor would be the mean. */
static double deposit_creep(double eta, int rigid_floor) {
    char json[2048], set[64];
    const char* floor =
        rigid_floor ? ",{\"name\":\"floor\",\"material\":\"rock\",\"kind\":\"fixed\","
                      "\"spacing\":0.0125,\"shape\":{\"type\":\"box\",\"min\":[-0.15,-0.025,"
                      "-0.15],\"max\":[0.15,0,0.15]}}]"
                    : "],\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"friction\":0.5}]";
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1.8e-4,\"fps\":25,\"frames\":1},"
             "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,\"poisson_ratio\":"
             "0.2,\"contact_friction\":0.5,\"plasticity\":{\"model\":\"drucker_prager\","
             "\"friction_angle\":30}},\"rock\":{\"density\":2000,\"youngs_modulus\":3e5,"
             "\"poisson_ratio\":0.3,\"contact_friction\":0.5}},\"bodies\":[{\"name\":\"sand\","
             "\"material\":\"sand\",\"spacing\":0.0125,\"shape\":{\"type\":\"box\",\"min\":"
             "[-0.05,0,-0.05],\"max\":[0.05,0.1,0.05]}}%s}",
             floor);
    snprintf(set, sizeof set, "solver.static_friction=%g", eta);
    const char* sets[] = {set};
    static pd_vec3 at[8192];
    static double moved[8192];
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, 1))
        return -1;
    const pd_particles* p = &t.world->particles;
    double median = -1;
    size_t grains = 0;
    if (pd_test_sim_run(&t, 0.6) && p->count <= 8192) {
        for (size_t i = 0; i < p->count; ++i)
            at[p->id[i]] = p->pos[i];
        if (pd_test_sim_run(&t, 1.0)) {
            for (size_t i = 0; i < p->count; ++i)
                if (p->body[i] == 0)
                    moved[grains++] = pd_v3_len(pd_v3_sub(p->pos[i], at[p->id[i]]));
            qsort(moved, grains, sizeof *moved, compare_doubles);
            median = moved[grains / 2];
        }
    }
    pd_test_sim_close(&t);
    return median;
}

PD_TEST(static_friction_stops_a_deposit_creeping) {
    for (int rigid = 0; rigid < 2; ++rigid) {
        double with = deposit_creep(0.8, rigid), without = deposit_creep(0, rigid);
        printf("  %s: median move of the grains from 0.6 to 1.0 s: %.3g mm with eta 0.8, %.3g mm "
               "without\n",
               rigid ? "rigid floor of boundary particles" : "plane collider", 1e3 * with,
               1e3 * without);
        PD_REQUIRE(with >= 0 && without >= 0);
        PD_CHECK(with < 1e-3 * without && without > 0.05e-3);
    }
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

/* Fig. 9's hourglass (scenes/meshes/hourglass*.obj, scripts/make_hourglass.awk): the upper
 * chamber (a 6 cm cylinder over a cone to a 5 cm neck) full of sand (1600 grains at 1 cm, E 3e4
 * Pa: soft for a longer step, still 10 times the weight of the column; friction 0.5 on the
 * glass). Times at which the first grain, a third and two thirds of them have passed the neck,
 * stopping there. */
typedef struct discharge {
    double start, third, two_thirds, grains;
} discharge;

static int hourglass_discharge(double phi, discharge* out) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":5e-4,\"fps\":25,\"frames\":75},"
             "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e4,"
             "\"poisson_ratio\":0.2,\"plasticity\":{\"model\":\"drucker_prager\","
             "\"friction_angle\":%g,\"cohesion\":0}}},\"bodies\":[{\"name\":\"sand\","
             "\"material\":\"sand\",\"spacing\":0.01,\"shape\":{\"type\":\"mesh\","
             "\"path\":\"meshes/hourglass_sand.obj\"}}],\"colliders\":[{\"type\":\"mesh\","
             "\"path\":\"meshes/hourglass.obj\",\"inside\":true,\"friction\":0.5}]}",
             phi);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    out->grains = (double)p->count;
    out->start = out->third = out->two_thirds = -1;
    while (out->two_thirds < 0 && t.world->time < 3) {
        if (!pd_test_sim_run(&t, t.world->time + t.world->def.dt)) {
            pd_test_sim_close(&t);
            return 0;
        }
        double passed = 0; /* below the neck's lower end, y = -5 mm */
        for (size_t i = 0; i < p->count; ++i)
            passed += p->pos[i].y < -0.005;
        if (out->start < 0 && passed > 0)
            out->start = t.world->time;
        if (out->third < 0 && passed >= out->grains / 3)
            out->third = t.world->time;
        if (passed >= 2 * out->grains / 3)
            out->two_thirds = t.world->time;
    }
    pd_test_sim_close(&t);
    return out->two_thirds > 0;
}

/* Issue 10: sand runs out of an hourglass at a rate that does not depend on how full it is
 * (Beverloo et al. 1961; VALIDATION.md), within 10 % between the first and the second third of
 * the discharge. Ours slows by 8-18 % (0.82 here; 0.84, 0.90 and 0.92 with round-off changed:
 * dt 4.9e-4 s, Eq. 20 solved otherwise; the flow through a neck five grains wide amplifies it;
 * 0.91 with E 3e5 Pa at dt 1.7e-4 s), so it is a known failure (docs/validation.md). With friction
 * angle 10 it speeds up (1.25): the low-friction column falls as a whole. Beverloo's W = C rho
 * sqrt(g) (D - k d)^(5/2), C = 0.58, is printed beside the rate with k d = 0: a continuum has no
 * grain size (with VALIDATION.md's k = 1.4 and d one spacing it is 0.44 of that). */
PD_TEST(known_failure_hourglass_rate_independent_of_fill_height) {
    discharge d;
    PD_REQUIRE(hourglass_discharge(30, &d));
    double third = d.grains / 3, mass = 1600 * 1e-6; /* a grain's mass (kg) */
    double first = third / (d.third - d.start), second = third / (d.two_thirds - d.third);
    double beverloo = 0.58 * 1600 * sqrt(9.81) * pow(0.05, 2.5);
    printf("  %.0f grains; first grain through the neck at %.3f s, a third at %.3f s, two thirds "
           "at %.3f s: %.0f and %.0f grains/s (%.3f and %.3f kg/s; Beverloo with k d = 0: %.3f "
           "kg/s), second / first %.3f\n",
           d.grains, d.start, d.third, d.two_thirds, first, second, first * mass, second * mass,
           beverloo, second / first);
    PD_CHECK_NEAR(second / first, 1.0, 0.10);
}

/* The sand cube of sand_deposit (friction angle 30, no cohesion) with Eq. 24's `hardening` xi. */
static void hardening_cube_json(char* json, size_t size, double xi, const char* dt) {
    snprintf(json, size,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":%s,\"fps\":25,\"frames\":15},"
             "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"
             "\"poisson_ratio\":0.2,\"hardening\":%g,\"plasticity\":{\"model\":"
             "\"drucker_prager\",\"friction_angle\":30,\"cohesion\":0}}},\"bodies\":[{\"name\":"
             "\"sand\",\"material\":\"sand\",\"spacing\":0.0125,\"shape\":{\"type\":\"box\","
             "\"min\":[-0.05,0,-0.05],\"max\":[0.05,0.1,0.05]}}],\"colliders\":[{\"type\":"
             "\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],\"friction\":0.5}]}",
             dt, xi);
}

/* Eq. 23 by brute force over every grain (one body): sum_j m_j W(|x_j - x_i|, r), i itself
 * included, W = 21 / (2 pi r^3) (1 - q)^4 (1 + 4 q). */
static double brute_kernel_density(const pd_particles* p, const pd_vec3* x, size_t i, double r) {
    double rho = 0;
    for (size_t j = 0; j < p->count; ++j) {
        double q = pd_v3_len(pd_v3_sub(x[j], x[i])) / r;
        if (q < 1)
            rho += p->mass[j] * pow(1 - q, 4) * (1 + 4 * q);
    }
    return 21 / (2 * PD_PI * r * r * r) * rho;
}

/* Eq. 23-24 (material key `hardening`): after 0.2 s of the cube's collapse with xi = 2, every
 * grain's factor on mu and kappa is exp(xi (rho_0^t - rho_0) / rho_0^t), recomputed here from
 * the positions the last step started from (rho by brute force, rho_0 the densest grain at
 * rest, det Fe from the state); the motion differs from xi = 0; the time-step bound shrinks by
 * exp(xi / 2) (the factor stays below exp(xi)); an elastic material's hardening is refused. */
PD_TEST(hardening_scales_the_sand_as_eq_24) {
    char json[2048];
    pd_test_sim t[2];
    double dt_max[2];
    for (int k = 0; k < 2; ++k) {
        hardening_cube_json(json, sizeof json, k ? 2.0 : 0.0, "7e-5");
        PD_REQUIRE(pd_test_sim_open(&t[k], json, NULL, 0));
        dt_max[k] = ((const pd_sbpd_state*)t[k].world->solver_state)->dt_max;
    }
    printf("  time-step bound %.4g s without hardening, %.4g s with xi = 2 (ratio %.6f, exp(-1) "
           "= %.6f)\n",
           dt_max[0], dt_max[1], dt_max[1] / dt_max[0], exp(-1.0));
    PD_CHECK_NEAR(dt_max[1] / dt_max[0], exp(-1.0), 1e-12);
    const pd_particles* p = &t[1].world->particles;
    double r = 2 * 0.0125, rho_0 = 0;
    for (size_t i = 0; i < p->count; ++i)
        rho_0 = fmax(rho_0, brute_kernel_density(p, p->rest, i, r));
    int ran = pd_test_sim_run(&t[0], 0.2) && pd_test_sim_run(&t[1], 0.2);
    const pd_sbpd_state* st = t[1].world->solver_state;
    double worst = 0, lowest = INFINITY, highest = 0, moved = 0;
    int soft = 0;
    for (size_t i = 0; ran && i < p->count; ++i) {
        double rho_t =
            brute_kernel_density(p, t[1].world->step_start, i, r) * fabs(pd_m3_det(st->Fe[i]));
        double expect = exp(2.0 * (rho_t - rho_0) / rho_t);
        worst = fmax(worst, fabs(st->harden[i] / expect - 1));
        lowest = fmin(lowest, st->harden[i]), highest = fmax(highest, st->harden[i]);
        soft += st->harden[i] < 0.9;
    }
    const pd_particles* p0 = &t[0].world->particles;
    for (size_t i = 0; ran && i < p->count; ++i) /* by id: the worlds reorder alike or not */
        moved = fmax(moved, pd_v3_len(pd_v3_sub(p->pos[t[1].world->order[p->id[i]]],
                                                p0->pos[t[0].world->order[p->id[i]]])));
    printf("  rho_0 %.1f kg/m^3 (density 1600); factors %.3f .. %.3f, %d of %zu grains below 0.9; "
           "worst relative difference from Eq. 24 recomputed %.2e; grains apart from xi = 0 by up "
           "to %.2f mm\n",
           rho_0, lowest, highest, soft, p->count, worst, 1e3 * moved);
    PD_CHECK(ran);
    PD_CHECK(worst < 1e-9);
    PD_CHECK(soft > 0 && moved > 1e-3);
    pd_test_sim_close(&t[0]);
    pd_test_sim_close(&t[1]);
    /* hardening is Eq. 24's, for sand: an elastic material's is refused */
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1e-4,\"fps\":50,\"frames\":1},"
             "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,"
             "\"hardening\":1}},\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,"
             "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.05,0.05,0.05]}}]}");
    pd_scene scene;
    pd_error err = {0};
    pd_status s = pd_scene_parse(json, "t.json", ".", NULL, 0, &scene, &err);
    printf("  elastic material with hardening: %s: %s\n", err.path, err.message);
    PD_CHECK(s == PD_ERR_BAD_SCENE && strcmp(err.path, "materials.m") == 0);
    if (s == PD_OK)
        pd_scene_free(&scene);
}

/* A block 0.1 x 0.04 x 0.1 m (E 1e5 Pa, 1000 kg/m^3) sliding at 0.5 m/s on a fixed slab of
 * particles (rigid boundary particles: w = 0 in Eq. 25), both of contact_friction mu. Returns
 * the block's mean x velocity and displacement at t. */
static int slide_on_slab(double mu, double t_end, double* v, double* dx) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":2e-4,\"fps\":50,\"frames\":25},"
             "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,"
             "\"contact_friction\":%g}},\"bodies\":[{\"name\":\"slab\",\"material\":\"m\","
             "\"kind\":\"fixed\",\"spacing\":0.01,\"shape\":{\"type\":\"box\",\"min\":[-0.1,-0.02,"
             "-0.1],\"max\":[0.4,0,0.1]}},{\"name\":\"block\",\"material\":\"m\",\"spacing\":0.01,"
             "\"velocity\":[0.5,0,0],\"shape\":{\"type\":\"box\",\"min\":[0,0,-0.05],"
             "\"max\":[0.1,0.04,0.05]}}]}",
             mu);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    double x0 = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->body[i] == 1)
            x0 += p->pos[i].x, n += 1;
    int ok = pd_test_sim_run(&t, t_end);
    double x = 0, vx = 0;
    for (size_t i = 0; ok && i < p->count; ++i)
        if (p->body[i] == 1)
            x += p->pos[i].x, vx += p->vel[i].x;
    *v = vx / n, *dx = (x - x0) / n;
    pd_test_sim_close(&t);
    return ok;
}

/* Sec. 6 (rigid boundary particles, Eq. 25 against their phi) and Eq. 26-27 (material key
 * contact_friction): a block sliding on a slab of fixed particles at v0 = 0.5 m/s stops after
 * v0^2 / (2 mu g) = 42.5 mm at mu = 0.3 (Coulomb, as a block on a floor); without friction the
 * slab is flat and the block keeps its speed (against the particles' own gaps instead of phi
 * it fell into the hollows between them and stopped within 45 mm, measured). */
PD_TEST(contact_friction_stops_a_sliding_block_as_coulomb) {
    double v[2], dx[2];
    PD_REQUIRE(slide_on_slab(0.3, 0.4, &v[1], &dx[1]));
    PD_REQUIRE(slide_on_slab(0.0, 0.4, &v[0], &dx[0]));
    double stop = 0.5 * 0.5 / (2 * 0.3 * 9.81);
    printf("  after 0.4 s: mu 0.3: %.4f m/s, slid %.1f mm (Coulomb: stops after %.1f mm at %.3f "
           "s); mu 0: %.4f m/s, slid %.1f mm\n",
           v[1], 1e3 * dx[1], 1e3 * stop, 0.5 / (0.3 * 9.81), v[0], 1e3 * dx[0]);
    PD_CHECK(fabs(v[1]) < 0.02);
    PD_CHECK_NEAR(dx[1] / stop, 1.0, 0.1);
    PD_CHECK_NEAR(v[0], 0.5, 0.005);
}

/* Issue 10, coupling: an elastic block (E 1e5 Pa) resting on a rigid floor (a fixed body: rigid
 * boundary particles) and a ball of sand dropped onto both (contact_friction 0.5 between sand
 * and floor), 0.3 s. Through a boundary would be: a grain or an elastic particle inside the
 * floor (below its top, within its sides), or a grain inside the elastic block (within its
 * current box less half a spacing). Resting particles sit half a spacing above the floor. */
PD_TEST(sand_elastic_and_rigid_bodies_never_pass_through_each_other) {
    char json[2048];
    snprintf(
        json, sizeof json,
        "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":1.5e-4,\"fps\":100,\"frames\":40},"
        "\"materials\":{\"rock\":{\"density\":2000,\"youngs_modulus\":1e5,\"poisson_ratio\":"
        "0.3,\"contact_friction\":0.5},\"rubber\":{\"density\":1000,\"youngs_modulus\":1e5,"
        "\"poisson_ratio\":0.3},\"sand\":{\"density\":1600,\"youngs_modulus\":1e5,"
        "\"poisson_ratio\":0.2,\"contact_friction\":0.5,\"plasticity\":{\"model\":\"drucker_"
        "prager\",\"friction_angle\":35}}},\"bodies\":["
        "{\"name\":\"floor\",\"material\":\"rock\",\"kind\":\"fixed\",\"spacing\":0.01,"
        "\"shape\":{\"type\":\"box\",\"min\":[-0.2,-0.03,-0.2],\"max\":[0.2,0,0.2]}},"
        "{\"name\":\"block\",\"material\":\"rubber\",\"spacing\":0.01,\"shape\":{\"type\":"
        "\"box\",\"min\":[-0.1,0,-0.05],\"max\":[0,0.06,0.05]}},{\"name\":\"sand\","
        "\"material\":\"sand\",\"spacing\":0.01,\"shape\":{\"type\":\"sphere\",\"center\":"
        "[0,0.15,0],\"radius\":0.045}}]}");
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, json, NULL, 0));
    const pd_particles* p = &t.world->particles;
    int in_floor = 0, in_block = 0, steps = 0;
    double lowest = INFINITY, block_bottom = INFINITY;
    int ok = 1;
    while (ok && t.world->time < 0.3 - 1e-9) {
        ok = pd_test_sim_run(&t, t.world->time + t.world->def.dt);
        pd_vec3 lo = pd_v3(INFINITY, INFINITY, INFINITY),
                hi = pd_v3(-INFINITY, -INFINITY, -INFINITY);
        for (size_t i = 0; i < p->count; ++i)
            if (p->body[i] == 1) {
                pd_vec3 y = p->pos[i];
                lo = pd_v3(fmin(lo.x, y.x), fmin(lo.y, y.y), fmin(lo.z, y.z));
                hi = pd_v3(fmax(hi.x, y.x), fmax(hi.y, y.y), fmax(hi.z, y.z));
            }
        for (size_t i = 0; i < p->count; ++i) {
            pd_vec3 y = p->pos[i];
            if (p->body[i] == 0)
                continue;
            lowest = fmin(lowest, y.y);
            if (p->body[i] == 1)
                block_bottom = fmin(block_bottom, y.y);
            in_floor += y.y < 0 && fabs(y.x) < 0.2 && fabs(y.z) < 0.2;
            in_block += p->body[i] == 2 && y.x > lo.x + 0.005 && y.x < hi.x - 0.005 &&
                        y.y > lo.y + 0.005 && y.y < hi.y - 0.005 && y.z > lo.z + 0.005 &&
                        y.z < hi.z - 0.005;
        }
        ++steps;
    }
    size_t grains_on_block = 0, fell_off = 0;
    for (size_t i = 0; i < p->count; ++i) {
        grains_on_block += p->body[i] == 2 && p->pos[i].x < 0 && p->pos[i].y > 0.055;
        fell_off += p->pos[i].y < -0.03;
    }
    printf("  fell off the floor's edges: %zu\n", fell_off);
    printf(
        "  %d steps: particle-steps inside the floor %d, grain-steps inside the block %d; lowest "
        "particle %.2f mm above the floor (the block's %.2f mm: half a spacing is 5), %zu "
        "grains on the block at the end\n",
        steps, in_floor, in_block, 1e3 * lowest, 1e3 * block_bottom, grains_on_block);
    PD_CHECK(ok);
    PD_CHECK(in_floor == 0 && in_block == 0);
    PD_CHECK(grains_on_block > 10); /* the sand met the block, not only the floor */
    PD_CHECK_NEAR(1e3 * lowest, 5.0, 1.0);
    pd_test_sim_close(&t);
}
