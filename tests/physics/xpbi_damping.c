/* xpbi's XPBD constraint damping (solver.xpbi.damping tau; Macklin et al. 2016 Eq. 26, the
 * paper's Sec. 6). Reference, derived: with gamma = tau / dt the update of Eq. 17 solves
 * C + alpha~ lambda + tau dC/dt = 0, i.e. each constraint's force is -(C + tau dC/dt) grad C /
 * alpha. In a standing mode every particle's strain keeps its shape, eps(x, t) = a(t) eps^(x),
 * and grad C grad C^T v = K v (C = sqrt(2 Psi) with Psi quadratic in the strain: the rank-one
 * projection is exact along the mode), so the mode is m a'' + tau k a' + k a = 0: Kelvin-Voigt
 * damping. The step is backward Euler: x' = x + dt v', v' = v - dt omega^2 (x' + tau v'), whose
 * two roots z satisfy (1 + dt omega^2 (dt + tau)) z^2 - (2 + dt tau omega^2) z + 1 = 0, so
 * |z|^2 = 1 / (1 + dt omega^2 (dt + tau)): the amplitude decays at
 *   delta(tau) = ln(1 + dt omega^2 (dt + tau)) / (2 dt)   (about omega^2 (dt + tau) / 2),
 * the step's own damping omega^2 dt / 2 at tau = 0 and tau omega^2 / 2 more with damping. */
#include "methods.h"
#include "support.h"

/* A free bar 0.2 m long (20 x 3 x 3 particles at 1 cm, E 1e5 Pa, rho 1000, nu 0: c = 10 m/s)
 * started in its first longitudinal mode, v_x = V cos(pi x / L) (omega = pi c / L = 157 rad/s
 * for the slender continuum), dt 0.2 ms (omega dt 0.03), no XSPH (Eq. 20 smooths the mode too). */
static const char* k_bar =
    "{\"version\":1,\"method\":\"xpbi\",\"solver\":{\"xsph_viscosity\":0},"
    "\"time\":{\"dt\":0.0002,\"fps\":500,\"frames\":50},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0}},"
    "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.2,0.03,0.03]}}]}";

#define L 0.2
#define V 0.01 /* m/s */

typedef struct decay {
    double rate;  /* delta: the slope of ln |peak| (1/s) */
    double omega; /* from the times of the extrema (rad/s) */
    int peaks;
} decay;

/* Runs 0.1 s and fits the extension's extrema (the two end layers' mean x apart, less at
 * rest): ln |e_k| against t_k by least squares, omega = pi / (mean time between extrema). */
static int vibrate(const char* set, decay* out) {
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_bar, sets, 1))
        return 0;
    pd_particles* p = &t.world->particles;
    for (size_t i = 0; i < p->count; ++i)
        p->vel[i] = pd_v3(V * cos(PD_PI * p->rest[i].x / L), 0, 0);
    double prev2 = 0, prev = 0, st = 0, sl = 0, stt = 0, stl = 0, first = 0, last = 0;
    int n = 0;
    for (int step = 1; step <= 500; ++step) {
        if (!pd_test_sim_run(&t, step * 2e-4))
            return 0;
        double left = 0, right = 0, nl = 0, nr = 0;
        for (size_t i = 0; i < p->count; ++i) {
            if (p->rest[i].x < 0.01)
                left += p->pos[i].x, nl += 1;
            if (p->rest[i].x > 0.19)
                right += p->pos[i].x, nr += 1;
        }
        double e = right / nr - left / nl - 0.19; /* the end layers' centres 0.19 m apart at rest */
        if (step >= 3 && fabs(prev) > fabs(prev2) && fabs(prev) >= fabs(e)) {
            double time = (step - 1) * 2e-4; /* an extremum of |e| at the previous step */
            st += time, sl += log(fabs(prev)), stt += time * time, stl += time * log(fabs(prev));
            if (n == 0)
                first = time;
            last = time, ++n;
        }
        prev2 = prev, prev = e;
    }
    pd_test_sim_close(&t);
    out->peaks = n;
    out->rate = -(n * stl - st * sl) / (n * stt - st * st);
    out->omega = n > 1 ? PD_PI * (n - 1) / (last - first) : NAN;
    printf("  %s: %d extrema, omega %.2f rad/s (slender continuum %.2f), decay rate %.3f /s\n", set,
           n, out->omega, PD_PI * 10 / L, out->rate);
    return n >= 4;
}

static double backward_euler_rate(double omega, double dt, double tau) {
    return log(1 + dt * omega * omega * (dt + tau)) / (2 * dt);
}

/* The damped bar's decay beyond the undamped one's against tau omega^2 / 2 as the step gives it
 * (omega the undamped bar's, measured), and the undamped bar's against the step's own; 5 %
 * each. 5 s CPU for both runs. */
extern const pd_solver_vtable pd_xpbi_solver;

PD_TEST(damping_decays_a_vibration_as_kelvin_voigt) {
    g_pd_method = (pd_test_method_ctx){
        &pd_xpbi_solver, "damping_decays_a_vibration_as_kelvin_voigt", PD_CAP_ELASTIC, 0};
    const double dt = 2e-4, tau = 1e-3;
    decay off, on;
    PD_REQUIRE(vibrate("solver.damping=0", &off));
    PD_REQUIRE(vibrate("solver.damping=0.001", &on));
    double own = backward_euler_rate(off.omega, dt, 0);
    double extra = backward_euler_rate(off.omega, dt, tau) - own;
    printf("  undamped: %.3f /s for backward Euler's %.3f; damped: %.3f /s, %.3f more for the "
           "predicted %.3f (tau omega^2 / 2 = %.3f)\n",
           off.rate, own, on.rate, on.rate - off.rate, extra, tau * off.omega * off.omega / 2);
    pd_test_method_check("decay added by damping tau 1 ms (1/s)", on.rate - off.rate, extra, 0.05,
                         1);
    /* without damping, the step's own decay only */
    pd_test_method_check("decay without damping (1/s)", off.rate, own, 0.05, 1);
}
