/* Mesh colliders in a simulation (projective_pd). An elastic ball dropped off-centre into a
 * hemispherical mesh bowl (scenes/meshes/bowl.obj, an open mesh with a wall behind it) rocks and
 * comes to rest at the bottom. References: the bowl's analytic shape (sphere of radius R about
 * c): the ball's lowest particle ends within a spacing of its bottom, no particle ever gets
 * outside the sphere (through the wall), and the motion dies out (kinetic energy at the end
 * below 1 % of its peak). And the same ball dropped on a two-triangle mesh plane and on the
 * analytic plane collider ends at the same height (self-consistency: the two colliders must
 * have the same signed distance over the square). */
#include <stdio.h>

#include "support.h"

#define BALL_SCENE(collider, spacing, x)                                                           \
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":30,"                   \
    "\"tolerance\":1e-4,\"global_solve\":\"chebyshev\"},"                                          \
    "\"time\":{\"dt\":0.0333333333333,\"fps\":30,\"frames\":1},\"gravity\":[0,-9.81,0],"           \
    "\"materials\":{\"rubber\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"  \
    "\"bodies\":[{\"name\":\"ball\",\"material\":\"rubber\",\"spacing\":" spacing ","              \
    "\"shape\":{\"type\":\"sphere\",\"center\":[" x ",0.36,0],\"radius\":0.06}}],"                 \
    "\"colliders\":[" collider "]}"

static const double BOWL_R = 0.3, BOWL_Y = 0.3; /* sphere centre (0, 0.3, 0), bottom at y = 0 */

static double kinetic_energy(const pd_particles* p) {
    double e = 0;
    for (size_t i = 0; i < p->count; ++i)
        e += 0.5 * p->mass[i] * pd_v3_len2(p->vel[i]);
    return e;
}

static double lowest_y(const pd_particles* p) {
    double y = INFINITY;
    for (size_t i = 0; i < p->count; ++i)
        y = fmin(y, p->pos[i].y);
    return y;
}

static double mean_y(const pd_particles* p) {
    double y = 0;
    for (size_t i = 0; i < p->count; ++i)
        y += p->pos[i].y;
    return y / (double)p->count;
}

/* Largest distance beyond R from the bowl's centre of a particle below its rim (> 0: through
 * the bowl's wall; above the rim a particle may be outside the sphere). */
static double beyond_bowl(const pd_particles* p) {
    double worst = -INFINITY;
    for (size_t i = 0; i < p->count; ++i)
        if (p->pos[i].y < BOWL_Y)
            worst = fmax(worst, pd_v3_len(pd_v3_sub(p->pos[i], pd_v3(0, BOWL_Y, 0))) - BOWL_R);
    return worst;
}

PD_TEST(ball_comes_to_rest_in_mesh_bowl) {
    const char* json = BALL_SCENE(
        "{\"type\":\"mesh\",\"path\":\"meshes/bowl.obj\",\"scale\":0.3,\"translate\":[0,0.3,0],"
        "\"inside\":true,\"thickness\":0.2,\"friction\":0.3}",
        "0.015", "0.12");
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, json, NULL, 0));
    const pd_particles* p = &t.world->particles;
    const double spacing = 0.015, t_end = 2.5;
    double peak = 0, late = 0, worst_out = -INFINITY;
    for (int frame = 1; frame <= 75; ++frame) {
        PD_REQUIRE(pd_test_sim_run(&t, frame / 30.0));
        double e = kinetic_energy(p);
        peak = fmax(peak, e);
        if (t.world->time > t_end - 0.5)
            late = fmax(late, e);
        worst_out = fmax(worst_out, beyond_bowl(p));
    }
    double low = lowest_y(p);
    printf("  %zu particles; after %.1f s: lowest particle y = %.4g m (bowl bottom 0), "
           "mean y %.4g m\n",
           p->count, t_end, low, mean_y(p));
    printf("  kinetic energy: peak %.4g J, largest in the last 0.5 s %.4g J\n", peak, late);
    printf("  farthest any particle got outside the bowl's sphere: %.3g m\n", worst_out);
    PD_CHECK(p->count >= 200);
    PD_CHECK_NEAR(low, 0, spacing);
    PD_CHECK(late < 0.01 * peak);
    PD_CHECK(worst_out <= 1e-9);
    pd_test_sim_close(&t);
}

/* Lowest and mean height of the ball after `seconds` on the given collider. */
static int rest_height(const char* json, double seconds, double* low, double* mean) {
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    int ok = pd_test_sim_run(&t, seconds);
    *low = lowest_y(&t.world->particles);
    *mean = mean_y(&t.world->particles);
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(ball_on_mesh_plane_rests_as_on_analytic_plane) {
    /* A 2 m square at y = 0 as two triangles, wound counter-clockwise seen from above. */
    const char* path = "/tmp/pd_physics_mesh_plane.obj";
    FILE* f = fopen(path, "w");
    PD_REQUIRE(f);
    fprintf(f, "v -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nf 1 3 2\nf 1 4 3\n");
    PD_REQUIRE(fclose(f) == 0);
    const char* mesh = BALL_SCENE("{\"type\":\"mesh\",\"path\":\"/tmp/pd_physics_mesh_plane.obj\","
                                  "\"thickness\":0.2,\"friction\":0.3}",
                                  "0.02", "0.1");
    const char* plane =
        BALL_SCENE("{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],\"friction\":0.3}",
                   "0.02", "0.1");
    const double spacing = 0.02;
    double low_m, mean_m, low_p, mean_p;
    PD_REQUIRE(rest_height(mesh, 1.2, &low_m, &mean_m));
    PD_REQUIRE(rest_height(plane, 1.2, &low_p, &mean_p));
    remove(path);
    printf("  after 1.2 s: lowest y %.6g (mesh) vs %.6g (plane), mean y %.6g vs %.6g m\n", low_m,
           low_p, mean_m, mean_p);
    PD_CHECK_NEAR(low_m, low_p, 0.05 * spacing);
    PD_CHECK_NEAR(mean_m, mean_p, 0.05 * spacing);
    /* Resting, not falling through or hovering: the lowest particle is on the surface. */
    PD_CHECK_NEAR(low_m, 0, 0.1 * spacing);
}
