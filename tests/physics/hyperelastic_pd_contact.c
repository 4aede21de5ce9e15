/* hyperelastic_pd (Xu 2018): contact with the colliders (issue 34 item 4). In the solve (the
 * default): how far Eq. 25 gets within the 25 iterations on a reduced Fig. 5 drop. After the
 * solve (`solver.collisions` after_solve, the paper's position-based resolution [BMM15]): what
 * it costs, a resting body's sink and positional friction on a landing. */
#include "support.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"

/* ---------------------------------------------------------------- Eq. 25 on a drop */

/* Fig. 5's two bunnies (scenes/xu2018_fig5_linear_and_A4_drop.json: E 5e4, the linear and the
 * A4 preset, a floor of friction 0.5, dt 0.01 s, Eq. 25's 1e-4, 25 iterations), sampled at
 * 0.03 m instead of 0.02 (about 2K particles instead of 6.7K), over 0.6 s: they land at 0.2 s,
 * squash, rebound and settle. Every step that iterates counts; the paper's Table 1 gives 9.6
 * iterations a step on its armadillo drop (collisions after its solve). */
typedef struct drop_stats {
    int steps, iterating, reached, iterations;
    double worst;  /* largest relative error at a step's end */
    double missed; /* largest relative error of a step that did not reach 1e-4 */
} drop_stats;

static const drop_stats* reduced_drop(void) {
    static drop_stats r;
    static int done;
    if (done)
        return &r;
    done = 1;
    const char* sets[] = {"bodies[0].spacing=0.03", "bodies[1].spacing=0.03", "time.fps=100"};
    pd_test_sim t;
    if (!pd_test_sim_open_scene(&t, "xu2018_fig5_linear_and_A4_drop.json", sets, 3))
        return &r;
    pd_error err = {0};
    while (t.world->time < 0.6 - 1e-9 && pd_world_step(t.world, &err) == PD_OK) {
        const pd_step_stats* st = &t.world->last_stats;
        r.steps++;
        if (st->iterations == 0)
            continue;
        r.iterating++;
        r.iterations += st->iterations;
        r.worst = fmax(r.worst, st->relative_error);
        if (st->relative_error <= 1e-4)
            r.reached++;
        else
            r.missed = fmax(r.missed, st->relative_error);
    }
    printf("  %zu particles, %d steps, %d iterating: %d (%.0f %%) reached Eq. 25's 1e-4 within 25 "
           "iterations, the others ended at or below %.3g; %.1f iterations a step (the paper's "
           "Table 1: 9.6)\n",
           t.world->particles.count, r.steps, r.iterating, r.reached,
           100.0 * r.reached / (r.iterating ? r.iterating : 1), r.missed,
           (double)r.iterations / (r.iterating ? r.iterating : 1));
    pd_test_sim_close(&t);
    return &r;
}

/* Issue 34: the steps that miss 1e-4 end at or below 1e-3. */
PD_TEST(drop_steps_end_at_or_below_1e_3) {
    const drop_stats* r = reduced_drop();
    PD_CHECK(r->steps == 60 && r->iterating > 30);
    PD_CHECK(r->worst <= 1e-3);
}

/* Issue 34: at least 90 % of the steps reach 1e-4 within 25 iterations. */
PD_TEST(drop_reaches_eq25_on_90_percent_of_steps) {
    const drop_stats* r = reduced_drop();
    PD_CHECK(r->iterating > 30 && r->reached >= 0.9 * r->iterating);
}

/* ---------------------------------------------------------------- collisions after the solve */

/* A cube of 8 x 8 x 8 particles (0.1 m, spacing 0.0125 m, E 1e5) set on a plane of friction
 * 0.5 at dt 0.01 s, settled for 0.8 s. */
static const char* k_resting =
    "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.01,\"fps\":100,"
    "\"frames\":80},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"cube\",\"material\":\"m\",\"spacing\":0.0125,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.1,0.1]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],\"friction\":0.5}]}";

/* The top layer's mean height after 0.8 s, and the share of the mass in the bottom layer
 * (the particles that touch the floor); 0 when the run failed. */
static int rest_cube(const char* collisions, double* top, double* bottom_share) {
    char set[64];
    snprintf(set, sizeof set, "solver.collisions=%s", collisions);
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_resting, sets, 1))
        return 0;
    if (!pd_test_sim_run(&t, 0.8)) {
        pd_test_sim_close(&t);
        return 0;
    }
    const pd_particles* p = &t.world->particles;
    double sum = 0, n_top = 0, m_bottom = 0, m = 0;
    for (size_t i = 0; i < p->count; ++i) {
        if (p->rest[i].y > 0.09)
            sum += p->pos[i].y, n_top += 1;
        if (p->rest[i].y < 0.01)
            m_bottom += p->mass[i];
        m += p->mass[i];
    }
    *top = sum / n_top;
    *bottom_share = m_bottom / m;
    pd_test_sim_close(&t);
    return 1;
}

/* After the solve, the floor does not act in the solve: each step the bottom layer is held
 * there by its inertia m / h^2 alone and pressed by the whole body's weight. At rest, the
 * momentum balance of the solve puts it d = h^2 g M / M_bottom (N h^2 g, N = 8 layers) into the
 * floor, which the projection undoes for the bottom layer only, so the body above stands d
 * lower than on a floor that acts in the solve. Reference: that d from the masses (7.85 mm
 * here, 63 % of a spacing), within 10 %. Fails when the floor acts in the solve after all (no
 * sink), when the solution is not projected (the cube falls through) or when the projection's
 * lift is lost from the velocity written back (it would keep sinking). */
PD_TEST(resting_cube_sinks_by_n_h2_g_with_collisions_after_the_solve) {
    double in_top, after_top, share, share2;
    PD_REQUIRE(rest_cube("in_solve", &in_top, &share));
    PD_REQUIRE(rest_cube("after_solve", &after_top, &share2));
    double h = 0.01, g = 9.81, expect = h * h * g / share, sink = in_top - after_top;
    printf("  top layer in_solve %.5f m, after_solve %.5f m: sink %.3f mm against h^2 g M / "
           "M_bottom = %.3f mm (%.1f layers)\n",
           in_top, after_top, 1e3 * sink, 1e3 * expect, 1 / share);
    PD_CHECK_REL(sink, expect, 0.10);
}

/* A box (0.1 x 0.05 x 0.1 m, 256 particles, E 1e5) moving at 2 m/s sideways lands from 4 cm on
 * a plane of friction 0.3 (as hyperelastic_pd.c's landing_loses_at_most_coulombs_tangential_speed).
 */
static const char* k_slide_landing =
    "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.01,\"fps\":100,"
    "\"frames\":30},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"box\",\"material\":\"m\",\"spacing\":0.0125,\"velocity\":[2,0,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0.04,0],\"max\":[0.1,0.09,0.1]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],\"friction\":0.3}]}";

static pd_vec3 mean_velocity(const pd_particles* p) {
    pd_vec3 v = pd_v3(0, 0, 0);
    for (size_t i = 0; i < p->count; ++i)
        v = pd_v3_add(v, p->vel[i]);
    return pd_v3_scale(v, 1.0 / (double)p->count);
}

/* Positional friction (after_solve): the tangential correction of a contact is at most mu
 * times its normal one, so over the landing (0.09 s, before the first contact, to 0.3 s, the
 * box sliding throughout) the tangential speed lost is mu times the floor's normal impulse
 * per unit mass, dv_n + g T (Coulomb, as the in-solve landing test), within 10 % either way.
 * Measured beside it: the box's normal speed at the end, which the projection's lift, turned
 * into velocity, leaves bouncing (the in-solve box rests: 0.000 m/s). */
PD_TEST(positional_friction_loses_coulombs_tangential_speed_on_a_landing) {
    const char* sets[] = {"solver.collisions=after_solve"};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_slide_landing, sets, 1));
    PD_REQUIRE(pd_test_sim_run(&t, 0.09));
    pd_vec3 v0 = mean_velocity(&t.world->particles);
    PD_REQUIRE(pd_test_sim_run(&t, 0.3));
    pd_vec3 v1 = mean_velocity(&t.world->particles);
    pd_test_sim_close(&t);
    double lost = v0.x - v1.x, normal = v1.y - v0.y + 9.81 * (0.3 - 0.09);
    printf("  v %.3f, %.3f -> %.3f, %.3f m/s: tangential speed lost %.4f m/s, mu x normal "
           "impulse %.4f m/s: ratio %.3f\n",
           v0.x, v0.y, v1.x, v1.y, lost, 0.3 * normal, lost / (0.3 * normal));
    PD_CHECK_REL(lost / (0.3 * normal), 1.0, 0.10);
}
