/* hyperelastic_pd's surface correction (solver.surface_correction; issue 34 item 6) on the
 * cantilever's beam (tests/physics/cantilever.c: 6 particles thick, 3 wide, every particle
 * within two spacings of a free surface), without stepping: E(q) of Eq. 12-14 and 24 at
 * imposed displacements against linear elasticity with the asked E and nu.
 * - Homogeneous strains: sum_i V_i W(e), W = lambda_0 / 2 (tr e)^2 + mu_0 e : e. The bulk shows
 *   W (the consistent Lame mapping); what the beam adds is its cut families, which the
 *   correction is fitted to remove.
 * - Saint-Venant's pure bending about z (u_x = -k x y, u_y = k (x^2 + nu (y^2 - z^2)) / 2,
 *   u_z = nu k y z; y, z from the section's centre): E I k^2 / 2 per length. Beside the
 *   surface this measures the particle scale: Eq. 24's inversion force is 0 under an affine
 *   motion but not under a curvature. docs/methods/hyperelastic_pd.md has the decomposition. */
#include <stdlib.h>

#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"
#include "support.h"

#define BEAM_E 5e6

static const char* k_beam =
    "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.01},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":5e6,\"poisson_ratio\":%g}},"
    "\"bodies\":[{\"name\":\"beam\",\"material\":\"m\",\"spacing\":0.008,"
    "\"shape\":{\"type\":\"box\",\"min\":[-0.016,0,0],\"max\":[0.3,0.048,0.024]}}]}";

/* Strain modes: uniaxial strain along the beam and across it (y, z), shear xy, and the
 * uniaxial stress of a bending fibre (e_yy = e_zz = -nu e_xx). */
enum { MODE_XX, MODE_YY, MODE_ZZ, MODE_XY, MODE_FIBRE, MODES };
static const char* const k_mode_name[MODES] = {"xx", "yy", "zz", "xy", "fibre"};

static pd_mat3 strain_of(int mode, double nu, double amount) {
    pd_mat3 e = pd_m3_zero();
    switch (mode) {
        case MODE_XX:
            e.m[0][0] = amount;
            break;
        case MODE_YY:
            e.m[1][1] = amount;
            break;
        case MODE_ZZ:
            e.m[2][2] = amount;
            break;
        case MODE_XY:
            e.m[0][1] = e.m[1][0] = amount;
            break;
        default:
            e.m[0][0] = amount, e.m[1][1] = e.m[2][2] = -nu * amount;
    }
    return e;
}

static int open_beam(pd_test_sim* t, double nu, const char* const* sets, int count) {
    char json[1024];
    snprintf(json, sizeof json, k_beam, nu);
    return pd_test_sim_open(t, json, sets, count);
}

static double body_volume(const pd_particles* p) {
    double v = 0;
    for (size_t i = 0; i < p->count; ++i)
        v += p->volume[i];
    return v;
}

/* E(q) / sum_i V_i W(e) at y = (I + e) x for each mode (strain 1e-4). */
static int energy_ratios(double nu, const char* correction, double ratio[MODES]) {
    const char* sets[] = {correction};
    pd_test_sim t;
    if (!open_beam(&t, nu, sets, 1))
        return 0;
    pd_hpd_state* s = (pd_hpd_state*)t.world->solver_state;
    const pd_particles* p = &t.world->particles;
    pd_vec3* y = calloc(p->count, sizeof *y);
    double lambda0 = BEAM_E * nu / ((1 + nu) * (1 - 2 * nu)), mu0 = BEAM_E / (2 * (1 + nu));
    for (int k = 0; k < MODES; ++k) {
        pd_mat3 e = strain_of(k, nu, 1e-4);
        double tr = e.m[0][0] + e.m[1][1] + e.m[2][2], ee = 0;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                ee += e.m[a][b] * e.m[a][b];
        for (size_t i = 0; i < p->count; ++i)
            y[i] = pd_v3_add(p->rest[i], pd_m3_mulv(e, p->rest[i]));
        double W = 0.5 * lambda0 * tr * tr + mu0 * ee;
        ratio[k] = pd_hpd_elastic_energy(s, y) / (body_volume(p) * W);
    }
    free(y);
    pd_test_sim_close(&t);
    printf("  nu %.2f, %s: E(q) / linear elasticity's:", nu, correction);
    for (int k = 0; k < MODES; ++k)
        printf(" %s %.4f", k_mode_name[k], ratio[k]);
    printf("\n");
    return 1;
}

/* Above nu = 1/4 (lambda >= 0) the fit is exact but at the beam's edges, where it is bounded:
 * within 2 % in every mode (the paper's cut families: 1.25 / 1.30 / 1.63 under a fibre's
 * stress). Fails when either factor is not applied, is applied to the other end's bond or is
 * fitted to the wrong moment. At nu = 0 (lambda < 0) G / q is kept above 1.05 times the bound
 * of W's convexity, which leaves the edges partly corrected: printed. */
PD_TEST(corrected_beam_shows_the_bulk_energy_density) {
    const double nus[] = {0.25, 0.3, 0.45};
    double on[MODES], off[MODES];
    for (int n = 0; n < 3; ++n) {
        PD_CHECK(energy_ratios(nus[n], "solver.surface_correction=false", off));
        PD_CHECK(energy_ratios(nus[n], "solver.surface_correction=true", on));
        for (int k = 0; k < MODES; ++k)
            PD_CHECK_REL(on[k], 1, 0.02);
    }
    PD_CHECK(energy_ratios(0, "solver.surface_correction=false", off));
    PD_CHECK(energy_ratios(0, "solver.surface_correction=true", on));
}

/* E(q) under pure bending of curvature 0.01 1/m over E I k^2 / 2 times the body's length. */
static double bending_ratio(const char* correction, const char* inversion) {
    const double nu = 0.25, k = 0.01;
    const char* sets[] = {correction, inversion};
    pd_test_sim t;
    if (!open_beam(&t, nu, sets, 2))
        return NAN;
    pd_hpd_state* s = (pd_hpd_state*)t.world->solver_state;
    const pd_particles* p = &t.world->particles;
    pd_vec3* y = calloc(p->count, sizeof *y);
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->rest[i];
        double b = x.y - 0.024, c = x.z - 0.012;
        y[i] = pd_v3(x.x - k * x.x * b, x.y + 0.5 * k * (x.x * x.x + nu * (b * b - c * c)),
                     x.z + nu * k * b * c);
    }
    double ratio =
        pd_hpd_elastic_energy(s, y) / (body_volume(p) * 0.5 * BEAM_E * k * k * 0.048 * 0.048 / 12);
    printf("  %s, %s: pure bending E(q) / Euler-Bernoulli's %.4f\n", correction, inversion, ratio);
    free(y);
    pd_test_sim_close(&t);
    return ratio;
}

/* Without Eq. 24's force the corrected beam bends within 15 % of Euler-Bernoulli (measured
 * 0.907: its surface families, lopsided, see less of the strain's gradient; the particles'
 * own sum of V y^2 is 0.972 of the section's I); uncorrected it is 1.30 times as stiff. With
 * the inversion force, the paper's, printed: it resists the curvature within each family
 * (+0.49 of Euler-Bernoulli's at 6 particles thick, +0.14 at 12). */
PD_TEST(corrected_beam_bends_as_euler_bernoulli_without_the_inversion_force) {
    const char* on = "solver.surface_correction=true";
    const char* off = "solver.surface_correction=false";
    const char* no_inv = "solver.inversion_stiffness=0";
    const char* inv = "solver.inversion_stiffness=1";
    double corrected = bending_ratio(on, no_inv), cut = bending_ratio(off, no_inv);
    bending_ratio(on, inv);
    bending_ratio(off, inv);
    PD_CHECK_REL(corrected, 1, 0.15);
    PD_CHECK(cut > 1.15);
}
