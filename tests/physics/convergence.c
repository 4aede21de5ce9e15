/* Convergence of projective_pd's steps where contact and friction change what the solve may
 * do: the README demo's bunny (1734 particles, h = 1/30 s, friction 0.5) landing with the
 * default 20 iterations. Reference (self-consistency): every step must end well below the
 * residual it started from: at most 0.0100 over the landing and 2.5 s at rest, where a
 * preconditioner that ignores a constraint the descent keeps (measured: the Chebyshev sweeps
 * moving sticking contacts sideways) leaves steps at 0.029. */
#include "projective_pd_support.h"

/* The steps' relative residuals from `from` to `to` (s), and the particles past the inversion
 * fix's threshold (det F < -0.05) summed over those steps; ok = 0 if a step failed. */
typedef struct residuals {
    double worst, mean;
    int steps, inverted, ok;
} residuals;

static residuals residuals_between(pd_test_sim* t, double from, double to) {
    residuals out = {0};
    if (!pd_test_sim_run(t, from))
        return out;
    pd_ppd_state* s = pd_test_ppd(t);
    const pd_particles* p = &t->world->particles;
    pd_error err = {0};
    while (t->world->time < to - 1e-9) {
        if (pd_world_step(t->world, &err) != PD_OK)
            return out;
        out.worst = fmax(out.worst, s->last_residual);
        out.mean += s->last_residual, out.steps++;
        for (size_t i = 0; i < p->count; ++i)
            out.inverted += pd_m3_det(pd_ppd_deformation_gradient(s, p->pos, (uint32_t)i)) < -0.05;
    }
    out.mean /= out.steps > 0 ? out.steps : 1;
    out.ok = 1;
    return out;
}

/* A known failure since the residual's yardstick became min(|r(y*)|, |r(start)|) floored by the
 * force scale (projective_pd.c, hook_solve): against |r(y*)| the worst landing step read 0.0117,
 * against the stricter yardstick 0.477 (docs/validation.md, known failures). */
PD_TEST(known_failure_demo_landing_steps_converge_with_friction) {
    const char* sets[] = {"solver.iterations=20"};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open_scene(&t, "demo.json", sets, 1));
    residuals r = residuals_between(&t, 0, 3.0); /* the landing and 2.5 s at rest */
    PD_REQUIRE(r.ok);
    printf("  %d steps of 1/30 s: relative residual at most %.3g, mean %.3g\n", r.steps, r.worst,
           r.mean);
    PD_CHECK(r.worst < 0.015);
    pd_test_sim_close(&t);
}

/* Fig. 19's dress (scenes/he2017_fig19_dress.json) with a 5 Pa s hem: the hem melts at 0.36 s,
 * falls to the floor in a heap and turns back to fabric at 0.8 s, with parts of the heap
 * pressed together closer than the line search's contact floor. Every trial that moved such a
 * pair inwards was refused, however short, so from 0.81 s every step stopped after one or two
 * iterations at a residual of about 1 and the whole skirt froze in the air (measured). The
 * steps after the change must converge as the others do. */
PD_TEST(dress_turned_back_to_fabric_keeps_converging) {
    const char* sets[] = {"materials.honey.fluid.viscosity=5"};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open_scene(&t, "he2017_fig19_dress.json", sets, 1));
    residuals r = residuals_between(&t, 0.81, 0.9);
    PD_REQUIRE(r.ok);
    printf("  0.81 to 0.9 s: relative residual at most %.3g\n", r.worst);
    PD_CHECK(r.worst < 0.05);
    pd_test_sim_close(&t);
}

/* Fig. 11's wet sand (scenes/he2017_fig11_wet_sand.json): grains of the wettest column, left
 * with three bonds, invert (det F down to -0.36). The inversion fix's force (Sec. 4.1) is no
 * gradient; along the preconditioned direction it did not let the residual fall, the line
 * search refused every trial, and each such step stopped after 5 to 10 iterations at a
 * residual of 0.5 to 0.9 (measured: eight of the steps between 0.42 and 0.46 s). The fix now
 * gives way to the energy for the rest of the step. When and whether a grain inverts depends
 * on the last bits of the arithmetic (the vectorised local step moved the first inversion
 * from 0.30 to 0.61 s), so the test watches 0.3 to 1.0 s, where both builds measured invert
 * grains. There some steps still end at the iteration cap above the bound (0.08 to 0.23;
 * before the vectorised local step 0.11 and 0.41, outside the 0.3 to 0.5 s the test then
 * watched): a known failure (docs/validation.md). */
PD_TEST(known_failure_wet_sand_steps_converge_past_inverted_grains) {
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open_scene(&t, "he2017_fig11_wet_sand.json", NULL, 0));
    residuals r = residuals_between(&t, 0.3, 1.0);
    PD_REQUIRE(r.ok);
    printf("  0.3 to 1.0 s: relative residual at most %.3g; inverted grains over the steps %d\n",
           r.worst, r.inverted);
    PD_CHECK(r.inverted > 0); /* the run shows what the test is for */
    PD_CHECK(r.worst < 0.05);
    pd_test_sim_close(&t);
}
