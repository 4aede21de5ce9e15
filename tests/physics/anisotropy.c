/* Elastic stiffness off the lattice axes (issue 6, Sec. 6). A grid-sampled body is a cubic
 * lattice; the calibration of docs/methods/projective_pd.md must give the asked E along any
 * direction, and the shear modulus G = E / (2 (1 + nu)) in simple shear.
 * Reference: isotropic small-strain linear elasticity (Timoshenko & Goodier, Theory of
 * Elasticity, Sec. 2-6): uniaxial stress / axial strain = E in every direction; simple shear
 * stress / engineering shear strain = G.
 *
 * Bars: a cylinder (radius 0.04 m, 8 particles across, length 0.3 m) along a direction a,
 * clamped at both ends by cylinder pins, one end pulled along a by 0.15 %. The grid sampling
 * is axis-aligned, so a bar along [1,1,0] or [1,1,1] sees the lattice at 45 or 54.7 degrees.
 * Strain: slope of u.a against the position along the axis over the middle half; stress: the
 * pin force along a over the sampled section (particle volume per length in the middle, so the
 * staircase surface of a diagonal bar is counted as it was sampled).
 *
 * Shear: a slab L x 0.1 x 0.1 m (10 layers), bottom layer pinned, top layer moved along x by
 * 0.2 mm. Its faces normal to x are free of traction, so the shear stress falls to zero
 * within about a thickness of them; the force of the top pin is F(L) = tau W (L - c) with an
 * end loss c that does not depend on L once L exceeds a few thicknesses. Two slabs, L = 0.2
 * and 0.4 m, give tau = (F(0.4) - F(0.2)) / (W 0.2), free of the end loss. The shear strain is
 * measured in the interior (slope of u_x against z in the middle of the slab, between the
 * pinned layers), averaged over the two slabs. Each run is quasi-static: steps of 0.5 s are
 * long against the bar's wave period (~0.02 s), so inertia is negligible.
 *
 * Tolerances: E within 25 % of the asked value along every direction (issue 6); tighter, the
 * diagonal bar's E within 10 % of the axis bar's and G within 10 % of E / (2 (1 + nu)), which
 * the axis-only calibration failed (see check_direction). */
#include "support.h"

#define SPACING  0.01
#define BAR_R    0.04
#define BAR_L    0.3
#define BAR_PULL 0.00045 /* 0.15 % */
#define YOUNG    1e6
#define SLAB_H   0.1
#define SLAB_W   0.1
#define SHEAR_DX 0.0002
#define PI       3.14159265358979323846

static const char* k_head =
    "{\"version\":1,\"method\":\"projective_pd\","
    "\"solver\":{\"global_solve\":\"direct\",\"iterations\":200,\"tolerance\":1e-7},"
    "\"time\":{\"dt\":0.5,\"fps\":2,\"frames\":3},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e6,\"poisson_ratio\":%.17g}},";

static pd_vec3 unit(pd_vec3 a) {
    return pd_v3_scale(a, 1.0 / pd_v3_len(a));
}

/* A bar along a (unit) starting at the origin, pinned over 2 spacings at each end. */
static int open_bar(pd_test_sim* t, pd_vec3 a, double nu, const char* sampling) {
    char json[2048], head[512];
    snprintf(head, sizeof head, k_head, nu);
    double pin = 2 * SPACING, out = 0.05;
    snprintf(json, sizeof json,
             "%s\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":%g,"
             "\"sampling\":\"%s\","
             "\"shape\":{\"type\":\"cylinder\",\"base\":[0,0,0],\"axis\":[%.17g,%.17g,%.17g],"
             "\"radius\":%g,\"height\":%g},"
             "\"pins\":[{\"region\":{\"type\":\"cylinder\",\"base\":[%.17g,%.17g,%.17g],"
             "\"axis\":[%.17g,%.17g,%.17g],\"radius\":%g,\"height\":%g}},"
             "{\"region\":{\"type\":\"cylinder\",\"base\":[%.17g,%.17g,%.17g],"
             "\"axis\":[%.17g,%.17g,%.17g],\"radius\":%g,\"height\":%g},"
             "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},"
             "{\"t\":0.5,\"translate\":[%.17g,%.17g,%.17g]}]}]}]}",
             head, SPACING, sampling, a.x, a.y, a.z, BAR_R, BAR_L, -out * a.x, -out * a.y,
             -out * a.z, a.x, a.y, a.z, BAR_R + out, out + pin, (BAR_L - pin) * a.x,
             (BAR_L - pin) * a.y, (BAR_L - pin) * a.z, a.x, a.y, a.z, BAR_R + out, out + pin,
             BAR_PULL * a.x, BAR_PULL * a.y, BAR_PULL * a.z);
    return pd_test_sim_open(t, json, NULL, 0);
}

/* Young's modulus along a: pin force along a / sampled section / axial strain. */
static double bar_modulus(pd_vec3 dir, double nu, const char* sampling) {
    pd_vec3 a = unit(dir);
    pd_test_sim t;
    if (!open_bar(&t, a, nu, sampling) || !pd_test_sim_run(&t, 1.5))
        return NAN;
    const pd_particles* p = &t.world->particles;
    double sx = 0, su = 0, sxx = 0, sxu = 0, n = 0, vol = 0;
    for (size_t i = 0; i < p->count; ++i) {
        double s = pd_v3_dot(p->rest[i], a);
        if (fabs(s - 0.5 * BAR_L) < 0.1 * BAR_L)
            vol += p->volume[i];
        if (s < 0.25 * BAR_L || s > 0.75 * BAR_L)
            continue;
        double u = pd_v3_dot(pd_v3_sub(p->pos[i], p->rest[i]), a);
        sx += s, su += u, sxx += s * s, sxu += s * u, n += 1;
    }
    double strain = (n * sxu - sx * su) / (n * sxx - sx * sx);
    double area = vol / (0.2 * BAR_L), force = pd_v3_dot(t.world->pins[1].force, a);
    double E = force / area / strain;
    printf("  %s bar along (%.3f, %.3f, %.3f), %zu particles: strain %.5g (nominal %.5g), force "
           "%.5g N, section %.5g m^2 (pi r^2 = %.5g) -> E = %.5g Pa (E / asked = %.3f)\n",
           sampling, a.x, a.y, a.z, p->count, strain, BAR_PULL / BAR_L, force, area,
           PI * BAR_R * BAR_R, E, E / YOUNG);
    pd_test_sim_close(&t);
    return E;
}

typedef struct shear_run {
    double force, strain;
} shear_run;

static shear_run shear_slab(double L, double nu) {
    char json[2048], head[512];
    snprintf(head, sizeof head, k_head, nu);
    snprintf(json, sizeof json,
             "%s\"bodies\":[{\"name\":\"slab\",\"material\":\"m\",\"spacing\":%g,"
             "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[%g,%g,%g]},"
             "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[1,1,%g]}},"
             "{\"region\":{\"type\":\"box\",\"min\":[-1,-1,%g],\"max\":[1,1,1]},"
             "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},"
             "{\"t\":0.5,\"translate\":[%g,0,0]}]}]}]}",
             head, SPACING, L, SLAB_W, SLAB_H, SPACING, SLAB_H - SPACING, SHEAR_DX);
    shear_run out = {NAN, NAN};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0) || !pd_test_sim_run(&t, 1.5))
        return out;
    /* interior: the middle third in x and y, the layers between the pinned ones and their
     * neighbours */
    const pd_particles* p = &t.world->particles;
    double sz = 0, su = 0, szz = 0, szu = 0, n = 0;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->rest[i];
        if (fabs(x.x - 0.5 * L) > L / 6 || fabs(x.y - 0.5 * SLAB_W) > SLAB_W / 6 ||
            x.z < 2 * SPACING || x.z > SLAB_H - 2 * SPACING)
            continue;
        double u = p->pos[i].x - x.x;
        sz += x.z, su += u, szz += x.z * x.z, szu += x.z * u, n += 1;
    }
    out.strain = (n * szu - sz * su) / (n * szz - sz * sz);
    out.force = t.world->pins[1].force.x;
    printf("  slab L = %g m: top pin force %.5g N, interior shear strain %.5g (nominal %.5g)\n", L,
           out.force, out.strain, SHEAR_DX / (SLAB_H - SPACING));
    pd_test_sim_close(&t);
    return out;
}

static double shear_modulus(double nu) {
    shear_run a = shear_slab(0.2, nu), b = shear_slab(0.4, nu);
    double tau = (b.force - a.force) / (SLAB_W * 0.2), gamma = 0.5 * (a.strain + b.strain);
    double G = tau / gamma, Gref = YOUNG / (2 * (1 + nu));
    printf("  tau = %.5g Pa (end loss removed), gamma = %.5g -> G = %.5g Pa, E/(2(1+nu)) = "
           "%.5g (G / reference = %.3f; F/A of the long slab alone: %.3f)\n",
           tau, gamma, G, Gref, G / Gref, b.force / (0.4 * SLAB_W) / b.strain / Gref);
    return G;
}

/* Isotropy is itself the reference for the direction tests: besides E within 25 % of the asked
 * value (issue 6), the diagonal bar's E must be within 10 % of the same bar's E along a
 * lattice axis. With the axis-only calibration (before the direction weights) the bars
 * measured 0.861 (face diagonal) and 0.924 (body diagonal) of the axis bar's 1.050, and the
 * shear modulus 0.766 of E / (2 (1 + nu)): docs/validation.md. */
static void check_direction(pd_vec3 dir, const char* sampling) {
    double axis = bar_modulus(pd_v3(1, 0, 0), 0.25, sampling);
    double diagonal = bar_modulus(dir, 0.25, sampling);
    PD_CHECK_REL(diagonal, YOUNG, 0.25);
    PD_CHECK_REL(diagonal / axis, 1.0, 0.10);
}

PD_TEST(young_along_axis) {
    PD_CHECK_REL(bar_modulus(pd_v3(1, 0, 0), 0.25, "grid"), YOUNG, 0.25);
}
PD_TEST(young_along_face_diagonal) {
    check_direction(pd_v3(1, 1, 0), "grid");
}
PD_TEST(young_along_body_diagonal) {
    check_direction(pd_v3(1, 1, 1), "grid");
}
PD_TEST(young_along_body_diagonal_jittered) {
    check_direction(pd_v3(1, 1, 1), "jittered");
}
PD_TEST(shear_modulus_nu_025) {
    PD_CHECK_REL(shear_modulus(0.25), YOUNG / 2.5, 0.10);
}
PD_TEST(shear_modulus_nu_040) {
    PD_CHECK_REL(shear_modulus(0.40), YOUNG / 2.8, 0.10);
}

/* On a grid, a horizon below sqrt(2) spacings leaves axis bonds only: such a body has no
 * shear stiffness (measured before this refusal: E along [1,1,1] 0.001 of the asked value,
 * G 5e-6 of E / (2 (1 + nu))). The world is refused at solver.horizon; 1.5 (face diagonals
 * join) is accepted and calibrated. */
PD_TEST(refuses_families_that_cannot_be_isotropic) {
    char json[2048], head[512];
    snprintf(head, sizeof head, k_head, 0.25);
    snprintf(json, sizeof json,
             "%s\"bodies\":[{\"name\":\"cube\",\"material\":\"m\",\"spacing\":0.01,"
             "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.06,0.06,0.06]}}]}",
             head);
    const char* horizons[] = {"solver.horizon=1.01", "solver.horizon=1.5"};
    for (int k = 0; k < 2; ++k) {
        pd_scene scene;
        pd_world* world = NULL;
        pd_error err = {0};
        PD_REQUIRE(pd_scene_parse(json, "cube.json", ".", &horizons[k], 1, &scene, &err) == PD_OK);
        pd_status st = pd_create_world(&scene, &world, &err);
        printf("  %s -> %s%s%s\n", horizons[k], st == PD_OK ? "accepted" : err.path,
               st == PD_OK ? "" : ": ", st == PD_OK ? "" : err.message);
        if (k == 0) {
            PD_CHECK(st == PD_ERR_BAD_SCENE);
            PD_CHECK(strcmp(err.path, "solver.horizon") == 0);
        } else {
            PD_CHECK(st == PD_OK);
        }
        if (st == PD_OK)
            pd_destroy_world(world);
        pd_scene_free(&scene);
    }
}
