/* hyperelastic_pd (Xu 2018), Fig. 9 at finite amplitude (issue 34 item 3): a one-layer cloth
 * strip resists bending more at the paper's right setting (delta = 4 d, w = r / delta) than at
 * its left (delta = 2 d, w = (1 + r / delta)^-1), against an estimate from the strip's own
 * families. */
#include <stdlib.h>
#include <time.h>

#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"
#include "support.h"

/* A strip of one layer in the x-z plane, spacing d = 0.01 m: four clamped columns at x < 0,
 * free from x = 0 to STRIP_L, STRIP_W wide; gravity along -y. E is that of a cloth whose
 * quartic bending (below) holds it out at finite amplitude: at nu = 0.25 the consistent
 * mapping gives lambda = 0, so the bond term alone carries it. dt resolves the in-plane
 * stiffness well enough for the solve (dt^2 E / (rho d^2) = 2.7e2; at dt 0.01 every step ran
 * to the iteration cap), and the swing down lasts about 0.1 s. */
#define STRIP_L 0.12
#define STRIP_W 0.04
#define STRIP_E 2e8

static const char* k_strip =
    "{\"version\":1,\"method\":\"hyperelastic_pd\","
    "\"solver\":{\"iterations\":100,\"tolerance\":1e-4,\"horizon\":%g,\"weight\":\"%s\"},"
    "\"time\":{\"dt\":%g,\"fps\":10,\"frames\":1},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"cloth\":{\"density\":300,\"youngs_modulus\":%g,\"poisson_ratio\":0.25}},"
    "\"bodies\":[{\"name\":\"strip\",\"material\":\"cloth\",\"spacing\":0.01,\"kind\":\"shell\","
    "\"shape\":{\"type\":\"box\",\"min\":[-0.04,0.5,0],\"max\":[%g,0.505,%g]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,0,-1],\"max\":[-0.005,1,1]}}]}]}";

/* Sag of the free end: the mean rest-minus-current y of the particles within half a spacing of
 * the strip's end (m). */
static double tip_sag(const pd_particles* p) {
    double xmax = -1, sum = 0;
    int n = 0;
    for (size_t i = 0; i < p->count; ++i)
        xmax = fmax(xmax, p->rest[i].x);
    for (size_t i = 0; i < p->count; ++i)
        if (p->rest[i].x > xmax - 0.005)
            sum += p->rest[i].y - p->pos[i].y, ++n;
    return sum / n;
}

/* The quartic bending coefficient of particle i's family: bent to a cylinder of curvature
 * kappa about z (the sheet isometric, a bond's arc kept), a bond of rest vector (r_x, 0, r_z)
 * becomes the chord 2 sin(kappa r_x / 2) / kappa ~ r_x (1 - kappa^2 r_x^2 / 24) along x, so
 * tau - 1 = -kappa^2 b, b = r_x^4 / (24 r^2). With h ~ (tau - 1)^2 (h''(1) = 2) and lambda = 0,
 * W_i = mu sum_j p_j (tau_j - 1)^2 = mu C_i kappa^4, p_j = w_ij V_j (Eq. 19: sum p_j = 1).
 * unrelaxed: C_i = sum p b^2. relaxed: the sheet also strains in its plane by (e_x, e_z), which
 * adds e . (n_x^2, n_z^2) to tau - 1; C_i = min over e (a 2 x 2 least squares). */
static void bending_coefficients(const pd_hpd_state* s, uint32_t i, double* unrelaxed,
                                 double* relaxed) {
    double m[3] = {0}, v[2] = {0}, bb = 0; /* sum p a a^T (xx, xz, zz), sum p a b, sum p b^2 */
    for (uint32_t k = s->fam.offsets[i]; k < s->fam.offsets[i + 1]; ++k) {
        pd_vec3 X = pd_family_xi(&s->fam, i, k);
        double r2 = pd_v3_dot(X, X), r = sqrt(r2);
        double p = pd_hpd_bond_weight(s, i, r) * s->volume[s->fam.j[k]];
        double b = X.x * X.x * X.x * X.x / (24 * r2), ax = X.x * X.x / r2, az = X.z * X.z / r2;
        m[0] += p * ax * ax, m[1] += p * ax * az, m[2] += p * az * az;
        v[0] += p * ax * b, v[1] += p * az * b, bb += p * b * b;
    }
    double det = m[0] * m[2] - m[1] * m[1];
    double ex = (v[0] * m[2] - v[1] * m[1]) / det, ez = (m[0] * v[1] - m[1] * v[0]) / det;
    *unrelaxed = bb;
    *relaxed = bb - (ex * v[0] + ez * v[1]); /* the least squares' residual */
}

typedef struct strip_run {
    double peak;                /* the first swing's deepest tip sag (m) */
    double unrelaxed, relaxed;  /* sum of V_i mu C_i over the middle section (J m^4) */
    double iterations, seconds; /* mean per step; the run's */
} strip_run;

/* The strip released flat: run until its tip swings back up by a tenth of its sag (the first
 * swing's peak, at most 0.3 s), and the families' coefficients summed over its middle
 * section (x in [0.04, 0.08], clear of the clamp and the tip). */
static strip_run strip(double horizon, const char* weight) {
    char json[2048];
    snprintf(json, sizeof json, k_strip, horizon, weight, 2e-4, STRIP_E, STRIP_L, STRIP_W);
    strip_run out = {NAN, 0, 0, 0, 0};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return out;
    const pd_hpd_state* s = t.world->solver_state;
    const pd_particles* p = &t.world->particles;
    double mu = s->mat[0].mu;
    for (uint32_t i = 0; i < p->count; ++i)
        if (p->rest[i].x > 0.035 && p->rest[i].x < 0.085) {
            double u, r;
            bending_coefficients(s, i, &u, &r);
            out.unrelaxed += p->volume[i] * mu * u, out.relaxed += p->volume[i] * mu * r;
        }
    pd_error err = {0};
    double peak = 0;
    int steps = 0, iterations = 0;
    clock_t start = clock();
    while (t.world->time < 0.3) {
        if (pd_world_step(t.world, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            break;
        }
        double sag = tip_sag(p);
        iterations += s->report.iterations, ++steps;
        peak = fmax(peak, sag);
        if (sag < 0.9 * peak) {
            out.peak = peak;
            break;
        }
    }
    out.iterations = iterations / (double)steps;
    out.seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    printf("  horizon %.2f d, weight %s: tip's deepest sag %.4f m at t = %.3f s (%d steps, "
           "%.1f iterations each, %.1f s); middle section's mu sum V C: %.4g unrelaxed, %.4g "
           "relaxed\n",
           horizon, weight, out.peak, t.world->time, steps, out.iterations, out.seconds,
           out.unrelaxed, out.relaxed);
    pd_test_sim_close(&t);
    return out;
}

/* Released flat, the strip swings down until its bending energy has taken gravity's work. A
 * bending energy quartic in kappa, sum V mu C kappa^4, holds a given load at kappa ~ C^(-1/3)
 * (statically: 4 C kappa^3 is the moment; at the first swing's peak the energy balance gives
 * the same power), so the sags compare as (C_4d / C_2d)^(-1/3). The interior families of a
 * square lattice give C_4d / C_2d = 12.6 unrelaxed (sag ratio 2.33, the 2.3), 8.27
 * with the in-plane strain relaxed (2.02); this strip's cut families are summed over its
 * middle section. Asserted: the 4 d strip sags less by at least 1.5 (measurably: each sag
 * is a few cm, read to a few tenths of a mm), and within 25 % of the relaxed estimate (the
 * strip is free to strain in its plane). A one-layer cloth whose horizon did not change its
 * bending, as before the chords were understood (docs/replicability.md: both Fig. 9 cloths
 * hung alike at E 1e4), would read 1. */
PD_TEST(cloth_strip_sags_less_at_horizon_4d) {
    strip_run two = strip(2.01, "inverse"), four = strip(4.01, "linear");
    double ratio = two.peak / four.peak;
    double unrelaxed = cbrt(four.unrelaxed / two.unrelaxed),
           relaxed = cbrt(four.relaxed / two.relaxed);
    printf("  sag 2 d / 4 d: %.3f; estimate (C_4d / C_2d)^(1/3) %.3f unrelaxed, %.3f relaxed "
           "(this strip's families)\n",
           ratio, unrelaxed, relaxed);
    PD_CHECK(ratio > 1.5);
    PD_CHECK_REL(ratio, relaxed, 0.25);
}
