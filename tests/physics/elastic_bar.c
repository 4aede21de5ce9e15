/* Uniaxial stretch of a bar (VALIDATION.md, Elasticity): lateral strain = -nu * axial strain
 * and nominal stress / axial strain = E, measured in the middle of a clamped bar, away from
 * the pinned ends. Reference: small-strain linear elasticity (any textbook, e.g. Timoshenko &
 * Goodier, Theory of Elasticity, Sec. 2): an independent reference. With the dilatation term
 * missing (its constant 0), every bar shows nu = 0.246, so each case from nu = 0.30 up fails. */
#include "bar.h"

#define BAR_L       0.4
#define BAR_W       0.1
#define BAR_STRETCH 0.002 /* 0.5 % nominal strain */

static const char* k_bar =
    "{\"version\":1,\"method\":\"projective_pd\","
    "\"solver\":{\"global_solve\":\"direct\",\"iterations\":100,\"tolerance\":1e-6},"
    "\"time\":{\"dt\":0.05,\"fps\":20,\"frames\":40},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e6,\"poisson_ratio\":0.25}},"
    "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.4,0.1,0.1]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[0.38,-1,-1],\"max\":[1,1,1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":1,\"translate\":[0.002,0,0]}]}]}]}";

static void check_bar(double nu, int dilatation) {
    char s_nu[64], s_dil[64];
    snprintf(s_nu, sizeof s_nu, "materials.m.poisson_ratio=%g", nu);
    snprintf(s_dil, sizeof s_dil, "solver.dilatation=%s", dilatation ? "true" : "false");
    const char* sets[] = {s_nu, s_dil};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_bar, sets, 2));
    PD_REQUIRE(pd_test_sim_run(&t, 2.0));
    pd_test_bar m = pd_test_bar_measure(&t, BAR_L, BAR_W);
    printf("  requested nu %.3g (dilatation %s)\n", nu, dilatation ? "on" : "off");
    /* 0.02: the bars show nu 0.004-0.005 below the asked value (docs/validation.md); without
     * the dilatation term every bar shows the paper energy's 0.246, which 0.1 let through at
     * nu = 0.30. */
    PD_CHECK_NEAR(m.nu, nu, 0.02);
    PD_CHECK_REL(m.E, 1e6, 0.25);
    pd_test_sim_close(&t);
}

PD_TEST(bar_nu_025_paper_energy) {
    check_bar(0.25, 0);
}
PD_TEST(bar_nu_025) {
    check_bar(0.25, 1);
}
PD_TEST(bar_nu_030) {
    check_bar(0.30, 1);
}
PD_TEST(bar_nu_040) {
    check_bar(0.40, 1);
}
PD_TEST(bar_nu_045) {
    check_bar(0.45, 1);
}

/* A Poisson ratio the model cannot show is refused, never accepted silently. */
PD_TEST(refuses_unreachable_poisson_ratios) {
    const char* cases[][2] = {{"materials.m.poisson_ratio=0.2", "solver.dilatation=true"},
                              {"materials.m.poisson_ratio=0.3", "solver.dilatation=false"},
                              {"materials.m.poisson_ratio=0.495", "solver.dilatation=true"}};
    for (int k = 0; k < 3; ++k) {
        pd_scene scene;
        pd_error err = {0};
        pd_status st = pd_scene_parse(k_bar, "bar.json", ".", cases[k], 2, &scene, &err);
        printf("  %s, %s -> %s: %s\n", cases[k][0], cases[k][1], err.path, err.message);
        PD_CHECK(st == PD_ERR_BAD_SCENE);
        PD_CHECK(strcmp(err.path, "materials.m") == 0 ||
                 strncmp(err.path, "materials.m.", 12) == 0);
        if (st == PD_OK)
            pd_scene_free(&scene);
    }
}
