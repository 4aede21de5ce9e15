/* xpbi on the paper's scenes (Yu et al. 2024; issue 33): bodies sampled by Poisson-disk
 * sampling, as the paper places its particles (Sec. 4.3, Bridson 2007), and Fig. 13's measure of
 * the particles' spacing through two sand blocks colliding. The scenes themselves are in
 * scenes/yu2024_*.json with their numbers in docs/replicability.md. */
#include <string.h>

#include "bar.h"
#include "methods.h"
#include "support.h"
#include "solvers/xpbi/xpbi_data.h"

extern const pd_solver_vtable pd_xpbi_solver;

/* The cross-method bar of elastic_bar.c (0.3 x 0.08 x 0.08 m, E 1e5 Pa, nu 0.25, stretched 0.5 %
 * over 0.15 s between pinned ends; the means over the steps from 0.2 s to `end`), its particles
 * Poisson-disk sampled (at least 0.85 spacing apart: 2066 particles where the lattice has 1920),
 * `sampling` poisson_disk (the paper's placement) or poisson_disk_relaxed (the same darts
 * shifted until every neighbourhood is balanced, src/geometry/sampling.c). Reference:
 * small-strain elasticity, E and nu, within the lattice bar's tolerances (10 %, 0.03). */
static const char* k_disk_bar =
    "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":50,\"frames\":30},"
    "\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.25}},"
    "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
    "\"sampling\":\"%s\","
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.3,0.08,0.08]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[0.28,-1,-1],\"max\":[1,1,1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":0.15,\"translate\":[0.0014,0,0]}]}]}]}";

/* E and nu the bar shows under `sampling`, the means over the steps from 0.2 s to `end`. */
static int disk_bar_modulus(const char* sampling, double end, double* E, double* nu) {
    char json[1024];
    snprintf(json, sizeof json, k_disk_bar, sampling);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0) || !pd_test_sim_run(&t, 0.2))
        return 0;
    double axial = 0, lateral = 0, force = 0, n = 0;
    int ok = 1;
    while (ok && t.world->time < end - 1e-9) {
        ok = pd_test_sim_run(&t, t.world->time + t.world->def.dt);
        pd_test_bar b = pd_test_bar_strains(&t, 0.3, 0.08);
        axial += b.axial, lateral += b.lateral, force += b.force, n += 1;
    }
    size_t count = t.world->particles.count;
    double dt = t.world->def.dt;
    pd_test_sim_close(&t);
    axial /= n, lateral /= n, force /= n;
    *E = force / (0.08 * 0.08) / axial, *nu = -lateral / axial;
    printf("  %s: %zu particles, dt %g s: mean axial strain %.5g, lateral %.5g, pin force %.5g N "
           "over %g steps: E x %.3f, nu %.3f\n",
           sampling, count, dt, axial, lateral, force, n, *E / 1e5, *nu);
    return ok;
}

/* The paper's placement. Measured: E x 0.831, nu 0.251 (the lattice bar: E x 0.986, nu 0.264).
 * The particles' volumes sum to the bar's (with spacing^3 each they summed 7.6 % over it: E x
 * 0.898); the rest is the particles' non-affine relaxation on an irregular sampling, resisted by
 * the hourglass constraint alone: E x 0.921 at beta 10 (docs/methods/xpbi.md, "Not yet"). xpbi
 * runs on the sampler; a bug that assumed the lattice's neighbours (26 at 2 r) in Eq. 10 or the
 * hourglass constraint's offsets would show. */
PD_TEST(known_failure_bar_shows_e_on_a_poisson_disk_body) {
    double E, nu;
    PD_REQUIRE(disk_bar_modulus("poisson_disk", 0.32, &E, &nu));
    PD_CHECK_REL(E, 1e5, 0.10);
    PD_CHECK_NEAR(nu, 0.25, 0.03);
}

/* The same darts relaxed (poisson_disk_relaxed): a uniform stress's force on an inner particle
 * falls from 0.60 to 0.030 V sigma / h (xpbi.c), and the bar shows E x 0.967, nu 0.264 (the
 * lattice's 0.986, 0.264), the means to 0.30 s (13.6 s CPU; to 0.32 s the same 0.967 and 0.264
 * in 0.9 s more). Fails when the relaxation leaves the neighbourhoods unbalanced (10 iterations
 * gave E x 0.962, none 0.831), and for what the lattice bar fails on. */
PD_TEST(bar_shows_e_on_a_relaxed_poisson_disk_body) {
    g_pd_method = (pd_test_method_ctx){
        &pd_xpbi_solver, "bar_shows_e_on_a_relaxed_poisson_disk_body", PD_CAP_ELASTIC, 0};
    double E, nu;
    PD_REQUIRE(disk_bar_modulus("poisson_disk_relaxed", 0.30, &E, &nu));
    pd_test_method_check("E shown / E (nu 0.25)", E / 1e5, 1, 0.10, 1);
    pd_test_method_check("nu shown (asked 0.25)", nu, 0.25, 0.03, 0);
}

/* Fig. 13's measure (Sec. 5.1: "the average distance between each particle and its nearest
 * neighbor per frame", relative to the start, and its variance; Fig. 15: "the average distance
 * to the nearest neighbor and respective standard deviations"): over every particle, and over the
 * heap's inside, the particles with at least BLOCKS_INSIDE others within the kernel's support
 * k = 2 r (r 1 spacing). An inner particle of the Poisson-disk cubes has about 39 (1.18 per
 * spacing^3), one on a face about half, on an edge a quarter: 13 keeps the faces and leaves
 * the edges, the corners and the grains the heap sheds (none within k: `loose`) out. */
#define BLOCKS_INSIDE 13
typedef struct spacing_stats {
    double mean, spread;               /* every particle */
    double inside_mean, inside_spread; /* those with BLOCKS_INSIDE neighbours within k */
    double loose_share;                /* the loose grains' part of mean - start mean, in starts */
    int inside, loose;
} spacing_stats;

static spacing_stats nearest_spacing(const pd_particles* p, double k, double start_mean) {
    double s = 0, s2 = 0, si = 0, si2 = 0, loose = 0;
    spacing_stats st = {0};
    for (size_t i = 0; i < p->count; ++i) {
        double best = INFINITY;
        int within = 0;
        for (size_t j = 0; j < p->count; ++j)
            if (j != i) {
                double d = pd_v3_len(pd_v3_sub(p->pos[i], p->pos[j]));
                best = fmin(best, d), within += d < k;
            }
        s += best, s2 += best * best;
        if (within >= BLOCKS_INSIDE)
            si += best, si2 += best * best, st.inside++;
        if (within == 0)
            loose += best - start_mean, st.loose++;
    }
    double n = (double)p->count, ni = fmax(st.inside, 1);
    st.mean = s / n, st.spread = sqrt(fmax(s2 / n - st.mean * st.mean, 0));
    st.inside_mean = si / ni;
    st.inside_spread = sqrt(fmax(si2 / ni - st.inside_mean * st.inside_mean, 0));
    st.loose_share = start_mean > 0 ? loose / n / start_mean : 0;
    return st;
}

/* Fig. 13 (top) smaller: two Drucker-Prager sand blocks (0.06 m cubes, Poisson-disk at 1 cm,
 * friction angle 35, E 3.537e5 Pa as Table 2's hourglass sand, 1000 kg/m^3) thrown at each other
 * at 2 m/s each over a floor (friction 0.5) and heaped, 0.3 s. The paper's measure: the mean
 * distance of a particle to its nearest neighbour stays within 10 % of its start and its
 * standard deviation does not grow by more than 50 % (issue 33; its MPM's fell and spread). A
 * method whose particles clump (no distance constraint, Eq. 21) or fly apart fails it. The
 * paper gives no speed: at 1 m/s each the mean stays within 7.2 % but the spread grows 2.5 x, and
 * the blocks merely dropped (cohesionless cubes slumping into heaps) 4 % and 2.3 x
 * (docs/validation.md, "Known failures"). */
static const char* k_blocks =
    "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":50,\"frames\":15},"
    "\"gravity\":[0,-9.81,0],\"materials\":{\"sand\":{\"density\":1000,"
    "\"youngs_modulus\":3.537e5,\"poisson_ratio\":0.3,\"plasticity\":{\"model\":"
    "\"drucker_prager\",\"friction_angle\":35,\"cohesion\":0}}},"
    "\"bodies\":[{\"name\":\"left\",\"material\":\"sand\",\"spacing\":0.01,"
    "\"sampling\":\"poisson_disk\",\"velocity\":[2,0,0],\"shape\":{\"type\":\"box\","
    "\"min\":[-0.1,0.002,-0.03],\"max\":[-0.04,0.062,0.03]}},"
    "{\"name\":\"right\",\"material\":\"sand\",\"spacing\":0.01,"
    "\"sampling\":\"poisson_disk\",\"velocity\":[-2,0,0],\"shape\":{\"type\":\"box\","
    "\"min\":[0.04,0.002,-0.03],\"max\":[0.1,0.062,0.03]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],"
    "\"friction\":0.5}]}";

/* The blocks' run to frame `frames` (0.02 s each): the worst over the frames of |mean / start -
 * 1| and spread / start, over every particle and over the inside; the blocks' nearest particles
 * at the end (they met). */
typedef struct blocks_result {
    int ok;
    double worst_mean, worst_spread, worst_inside_mean, worst_inside_spread, gap;
} blocks_result;

static blocks_result blocks_run(int frames) {
    blocks_result res = {0};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_blocks, NULL, 0))
        return res;
    const pd_particles* p = &t.world->particles;
    double k = 2 * 0.01; /* the kernel's support, k = 2 r at r = 1 spacing (the default) */
    spacing_stats s0 = nearest_spacing(p, k, 0);
    printf("  %zu particles: nearest neighbour at the start %.5f m, spread %.5f m; inside (%d): "
           "%.5f m, %.5f m\n",
           p->count, s0.mean, s0.spread, s0.inside, s0.inside_mean, s0.inside_spread);
    res.ok = 1;
    for (int frame = 1; frame <= frames && res.ok; ++frame) {
        res.ok = pd_test_sim_run(&t, frame / 50.0);
        spacing_stats s = nearest_spacing(p, k, s0.mean);
        if (frame % 3 == 0 || frame <= 2)
            printf("  t %.2f s: mean x %.3f, spread x %.2f (%d loose grains: %+.3f of the mean); "
                   "inside (%d) x %.3f, spread x %.2f\n",
                   frame / 50.0, s.mean / s0.mean, s.spread / s0.spread, s.loose, s.loose_share,
                   s.inside, s.inside_mean / s0.inside_mean, s.inside_spread / s0.inside_spread);
        res.worst_mean = fmax(res.worst_mean, fabs(s.mean / s0.mean - 1));
        res.worst_spread = fmax(res.worst_spread, s.spread / s0.spread);
        res.worst_inside_mean =
            fmax(res.worst_inside_mean, fabs(s.inside_mean / s0.inside_mean - 1));
        res.worst_inside_spread = fmax(res.worst_inside_spread, s.inside_spread / s0.inside_spread);
    }
    res.gap = INFINITY; /* the blocks met: their nearest particles closer than a spacing */
    for (size_t i = 0; i < p->count; ++i)
        for (size_t j = 0; j < p->count; ++j)
            if (p->body[i] == 0 && p->body[j] == 1)
                res.gap = fmin(res.gap, pd_v3_len(pd_v3_sub(p->pos[i], p->pos[j])));
    pd_test_sim_close(&t);
    printf("  worst |mean / start - 1| %.3f, spread / start %.2f; inside %.3f, %.2f; the blocks' "
           "nearest particles %.4f m apart at %.2f s\n",
           res.worst_mean, res.worst_spread, res.worst_inside_mean, res.worst_inside_spread,
           res.gap, frames / 50.0);
    return res;
}

/* Every particle, the paper's measure: xpbi fails it, 1.33 x and 15 x (docs/validation.md,
 * "Known failures"): the heap sheds grains that no term of the paper's method holds (Eq. 21 only
 * keeps them apart, Eq. 20 has no neighbour to smooth them towards), each lying a few spacings
 * from the next; the inside keeps its mean (the test below) but not its spread (2.64 x: packed
 * against Eq. 21's floor r - epsilon, where the sampler started every one at 0.85 spacing or
 * more). */
PD_TEST(known_failure_colliding_sand_blocks_keep_their_spacing) {
    blocks_result r = blocks_run(15);
    PD_REQUIRE(r.ok);
    PD_CHECK(r.gap < 0.012);
    PD_CHECK(r.worst_mean <= 0.10);
    PD_CHECK(r.worst_spread <= 1.5);
    PD_CHECK(r.worst_inside_spread <= 1.5);
}

/* The inside of the heap keeps its mean spacing within issue 33's 10 % through the impact and
 * the heap's first shedding (the blocks meet at 0.02 s, the inside packs most at 0.04 s; 0.064
 * then, and no worse over the whole 0.3 s): Eq. 21's floor (r - epsilon) holds it. Run to 0.12 s,
 * where every particle's mean already departs more than 10 % (the loose grains the heap sheds,
 * the known failure above), so the inside's selection is what this test reads. Fails without
 * Eq. 21 (distance_epsilon 1: 0.135). */
PD_TEST(colliding_sand_blocks_keep_their_inside_spacing) {
    g_pd_method =
        (pd_test_method_ctx){&pd_xpbi_solver, "colliding_sand_blocks_keep_their_inside_spacing",
                             PD_CAP_DRUCKER_PRAGER, 0};
    blocks_result r = blocks_run(6);
    PD_REQUIRE(r.ok);
    PD_CHECK(r.gap < 0.012);
    pd_test_method_check(
        "inside's mean nearest distance: worst departure from its start (fraction)",
        r.worst_inside_mean, 0, 0.10, 0);
}

/* Fig. 14: a cantilever 0.4 x 0.1 x 0.1 m (Poisson-disk at 2 cm, 561 particles, its first 4 cm
 * pinned), rho 100 kg/m^3, nu 0.3, released under gravity at the paper's dt 5 ms with the
 * scene's 50 iterations (scenes/yu2024_fig14_cantilevers.json holds the three side by side). The
 * measure: |h| / |h^(0)| after the last iteration (Fig. 14's relative residual), its geometric
 * mean over the first 10 steps. A wave crosses c_P dt / r = 2.9, 9.2 and 29 particle radii a
 * step at E 1e4, 1e5 and 1e6 Pa. */
static double fig14_residual(const char* modulus, const char* solver) {
    static struct {
        char key[64];
        double mean;
    } done[8];
    static int count;
    char key[64];
    snprintf(key, sizeof key, "%s %s", modulus, solver);
    for (int k = 0; k < count; ++k)
        if (strcmp(done[k].key, key) == 0)
            return done[k].mean;
    char json[1024], set[64];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"xpbi\",\"solver\":{\"xpbi\":{\"iterations\":50}},"
             "\"time\":{\"dt\":0.005,\"fps\":25,\"frames\":1},\"gravity\":[0,-9.81,0],"
             "\"materials\":{\"m\":{\"density\":100,\"youngs_modulus\":%s,\"poisson_ratio\":0.3}},"
             "\"bodies\":[{\"name\":\"beam\",\"material\":\"m\",\"spacing\":0.02,"
             "\"sampling\":\"poisson_disk\",\"shape\":{\"type\":\"box\",\"min\":[0,0.5,-0.05],"
             "\"max\":[0.4,0.6,0.05]},\"pins\":[{\"region\":{\"type\":\"box\","
             "\"min\":[-1,-1,-1],\"max\":[0.04,2,1]}}]}]}",
             modulus);
    snprintf(set, sizeof set, "solver.xpbi.solver=%s", solver);
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, 1))
        return NAN;
    double log_sum = 0;
    int steps = 0;
    for (; steps < 10; ++steps) {
        if (!pd_test_sim_run(&t, (steps + 1) * 0.005))
            break;
        const pd_xpbi_state* s = t.world->solver_state;
        log_sum += log(s->history[s->history_count - 1]);
    }
    pd_test_sim_close(&t);
    double mean = steps == 10 ? exp(log_sum / steps) : NAN;
    printf("  E %s Pa, %s: |h| / |h^(0)| after 50 iterations, geometric mean over 10 steps of 5 "
           "ms: %.3g\n",
           modulus, solver, mean);
    if (count < 8) {
        snprintf(done[count].key, sizeof done[count].key, "%s", key);
        done[count++].mean = mean;
    }
    return mean;
}

/* Fig. 14's observation, the part that holds: at the soft end both solvers converge, Gauss-Seidel
 * far faster (measured 8e-14 against Jacobi's 2.5e-7 at E 1e4, 0.021 against 0.042 at 1e5), and
 * the residual left grows with the stiffness (0.49 at 1e6; Jacobi there 0.51, not run). Fails if
 * Gauss-Seidel's sweeps lost their order (Jacobi's rate) or the soft beam's constraints stopped
 * converging. */
PD_TEST(fig14_cantilevers_at_5_ms_gauss_seidel_converges_no_worse_than_jacobi) {
    const char* moduli[] = {"1e4", "1e5", "1e6"};
    double gs[3], jac[2]; /* Jacobi at 1e6 is asked nothing */
    for (int k = 0; k < 3; ++k) {
        gs[k] = fig14_residual(moduli[k], "gauss_seidel");
        PD_REQUIRE(gs[k] > 0);
    }
    for (int k = 0; k < 2; ++k) {
        jac[k] = fig14_residual(moduli[k], "jacobi");
        PD_REQUIRE(jac[k] > 0);
    }
    PD_CHECK(gs[0] < 1e-8);
    PD_CHECK(jac[0] > 10 * gs[0] && jac[1] > gs[1]);
    PD_CHECK(gs[0] < gs[1] && gs[1] < gs[2]);
}

/* The part that does not: "XPBI with Gauss-Seidel can converge stably with a large timestep"
 * (Sec. 5.1) at every stiffness of Fig. 14. Asked: two decades, |h| / |h^(0)| below 0.01 after
 * the 50 iterations at E 1e5 and 1e6 Pa. Measured 0.021 and 0.49 (0.18 after 200 iterations at
 * 1e6; Jacobi 0.16): at 29 radii a step Gauss-Seidel's sweeps carry a correction about 2 r. */
PD_TEST(known_failure_fig14_stiff_cantilevers_converge_at_5_ms_with_gauss_seidel) {
    double mid = fig14_residual("1e5", "gauss_seidel"),
           stiff = fig14_residual("1e6", "gauss_seidel");
    PD_CHECK(mid < 0.01);
    PD_CHECK(stiff < 0.01);
}

/* Fig. 4: a ball of Herschel-Bulkley paint (radius 5 cm, 515 particles at 1 cm; Table 2's HB:
 * rho 100 kg/m^3, sigma_Y 50 Pa, eta 10 Pa s^h; E 1.5e4 Pa, nu 0.45) thrown down at 2 m/s from 1
 * cm above a floor (friction 0.5), to 0.07 s; scenes/yu2024_fig4_herschel_bulkley.json holds the
 * three side by side. The centre of mass's largest upward velocity after 0.02 s, and the lowest
 * particle's height at 0.07 s. */
typedef struct hb_impact {
    double rebound; /* the centre's largest upward velocity after 0.02 s (m/s) */
    double lift;    /* the lowest particle's height at the end (m) */
} hb_impact;

static int herschel_bulkley_impact(double exponent, hb_impact* out) {
    char json[1536];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":200,"
             "\"frames\":14},\"gravity\":[0,-9.81,0],\"materials\":{\"m\":{\"density\":100,"
             "\"youngs_modulus\":1.5e4,\"poisson_ratio\":0.45,\"plasticity\":{\"model\":"
             "\"herschel_bulkley\",\"yield_stress\":50,\"viscosity\":10,\"exponent\":%g}}},"
             "\"bodies\":[{\"name\":\"ball\",\"material\":\"m\",\"spacing\":0.01,"
             "\"velocity\":[0,-2,0],\"shape\":{\"type\":\"sphere\",\"center\":[0,0.06,0],"
             "\"radius\":0.05}}],\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"
             "\"normal\":[0,1,0],\"friction\":0.5}]}",
             exponent);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    out->rebound = -INFINITY;
    int ok = 1;
    for (int k = 1; ok && k <= 14; ++k) {
        ok = pd_test_sim_run(&t, k * 0.005);
        double m = 0, vy = 0, low = INFINITY;
        for (size_t i = 0; i < p->count; ++i)
            m += p->mass[i], vy += p->mass[i] * p->vel[i].y, low = fmin(low, p->pos[i].y);
        if (k * 0.005 > 0.02 + 1e-9)
            out->rebound = fmax(out->rebound, vy / m);
        out->lift = low;
    }
    printf("  h %g: the centre's largest upward velocity after 0.02 s %+.4f m/s (impact 2 m/s), "
           "the lowest particle %.4f m above the floor at 0.07 s (%zu particles, dt %.3g s)\n",
           exponent, out->rebound, out->lift, p->count, t.world->def.dt);
    pd_test_sim_close(&t);
    return ok;
}

/* Yu 2024 Sec. 5.2 on Fig. 4: "the shear thickening material exhibits low flow rates under high
 * stress, behaving elastically and bouncing off. Conversely, the shear thinning material flows
 * immediately". Asked: the thickening ball (h 3) rebounds at least 0.3 m/s (15 % of its impact
 * speed) and is off the floor by a spacing at 0.07 s; the viscoplastic (h 1) and thinning (h 0.3)
 * balls rebound below 0.05 m/s and stay on it. Measured 0.901 m/s and 28 mm; 0.0065 m/s and none
 * (-0.033), both on the floor. At 1000 kg/m^3 (the scene's density before Table 2's 100) the
 * thickening ball rebounded at 0.46 m/s but stayed on the floor (its lowest particle 1.7 mm up at
 * most), an elastic ball there at 1.0 m/s. Fails if the exponent did not reach the return (the
 * three alike) or the return flowed the thickening ball at the thinning one's rate. */
PD_TEST(herschel_bulkley_thickening_ball_bounces_thinning_does_not) {
    hb_impact thick, plastic, thin;
    PD_REQUIRE(herschel_bulkley_impact(3, &thick));
    PD_REQUIRE(herschel_bulkley_impact(1, &plastic));
    PD_REQUIRE(herschel_bulkley_impact(0.3, &thin));
    PD_CHECK(thick.rebound > 0.3);
    PD_CHECK(thick.lift > 0.01);
    PD_CHECK(plastic.rebound < 0.05 && plastic.lift < 0.002);
    PD_CHECK(thin.rebound < 0.05 && thin.lift < 0.002);
}
