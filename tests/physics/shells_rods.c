/* Lower-dimensional bodies (He 2017 Sec. 4.1): a one-layer shell resists bending through mu
 * (Fig. 5: lowering mu lets a cloth bend more), and a rod resists twist only when expanded
 * with ghost particles (Fig. 6: a single line of particles does not feel twisting). */
#include "support.h"

/* A one-layer plate clamped along one edge, sagging under gravity. */
static const char* k_plate =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":30},"
    "\"time\":{\"dt\":0.0166666666667,\"fps\":60,\"frames\":1},"
    "\"materials\":{\"m\":{\"density\":300,\"youngs_modulus\":3e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"plate\",\"material\":\"m\",\"spacing\":0.0125,\"kind\":\"shell\","
    "\"shape\":{\"type\":\"box\",\"min\":[0,0.3,0],\"max\":[0.2,0.304,0.1]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.025,1,1]}}]}]}";

/* Mean sag of the free edge after 1 s. */
static double plate_sag(double deviatoric_scale) {
    char set[96];
    snprintf(set, sizeof set, "materials.m.deviatoric_scale=%g", deviatoric_scale);
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_plate, sets, 1) || !pd_test_sim_run(&t, 1.0))
        return NAN;
    const pd_particles* p = &t.world->particles;
    double sag = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->rest[i].x > 0.19)
            sag += p->rest[i].y - p->pos[i].y, n += 1;
    pd_test_sim_close(&t);
    printf("  deviatoric_scale %g: free edge sags %.4g m\n", deviatoric_scale, sag / n);
    return sag / n;
}

/* Known failure (docs/validation.md): the line search drives a step towards the minimiser of
 * Eq. 8, and for a planar family Eq. 8 hardly sees bending (|F xi| keeps its length when the
 * neighbours leave the plane symmetrically); the paper's bending comes from the approximate
 * force of Eq. 10 pulling Y towards dir(F xi). Measured after 1 s: the free edge is not
 * where a sagging plate would be (it ends above its start), for either mu. */
PD_TEST(known_failure_shell_bends_more_with_smaller_mu) {
    double stiff = plate_sag(1), soft = plate_sag(0.05);
    PD_CHECK(stiff > 0 && stiff < 0.2); /* it sags, and stays a plate */
    PD_CHECK(soft > 1.5 * stiff);
}

/* A rod along x: one end held, the other turned 360 degrees about the rod's axis while pushed
 * inwards. With ghosts the twist is felt and the rod leaves its plane; without (a plain line of
 * particles, kind dynamic) it stays in the x-y plane. */
static const char* k_rod =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"global_solve\":\"direct\"},"
    "\"time\":{\"dt\":0.004,\"fps\":25,\"frames\":1},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e6,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"rod\",\"material\":\"m\",\"spacing\":0.01,\"kind\":\"rod\","
    "\"shape\":{\"type\":\"box\",\"min\":[0,0.298,-0.002],\"max\":[0.4,0.302,0.002]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-0.1,0.2,-0.1],\"max\":[0.021,0.4,0.1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[0.379,0.2,-0.1],\"max\":[0.5,0.4,0.1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},"
    "{\"t\":1,\"translate\":[-0.1,0,0],\"rotate\":[1,0,0,360]}]}]}]}";

static double rod_out_of_plane(const char* kind) {
    char set[64];
    snprintf(set, sizeof set, "bodies[0].kind=\"%s\"", kind);
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_rod, sets, 1) || !pd_test_sim_run(&t, 1.2))
        return NAN;
    const pd_particles* p = &t.world->particles;
    double zmax = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (!(p->flags[i] & (PD_P_GHOST | PD_P_PINNED)))
            zmax = fmax(zmax, fabs(p->pos[i].z));
    pd_test_sim_close(&t);
    printf("  kind %s: largest |z| of the rod's own particles %.4g m\n", kind, zmax);
    return zmax;
}

PD_TEST(rod_feels_twist_only_with_ghost_particles) {
    double ghosts = rod_out_of_plane("rod"), line = rod_out_of_plane("dynamic");
    PD_CHECK(ghosts > 0.005);
    PD_CHECK_NEAR(line, 0, 1e-9);
}
