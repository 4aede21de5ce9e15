/* A body's particles weigh density times the shape's volume, whatever the sampling: each
 * particle's volume (its mass over the density) is spacing^3 on a lattice and the shape's
 * volume over the count for a Poisson-disk body (src/world/bodies.c), whose packing is denser
 * than one point per spacing^3 (xpbi's Poisson-disk bar read its forces 7.6 % high with
 * spacing^3; docs/validation.md). */
#include <string.h>

#include "peridot/peridot.h"
#include "test.h"
#include "world/world.h"

/* The sum of the particles' volumes and masses of a 0.3 x 0.08 x 0.08 m box sampled as given. */
static int box_totals(const char* sampling, double* volume, double* mass, size_t* count) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"xpbi\",\"gravity\":[0,0,0],"
             "\"time\":{\"dt\":0.001,\"fps\":50,\"frames\":1},"
             "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
             "\"poisson_ratio\":0.25}},"
             "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
             "\"sampling\":\"%s\",\"shape\":{\"type\":\"box\",\"min\":[0,0,0],"
             "\"max\":[0.3,0.08,0.08]}}]}",
             sampling);
    pd_scene scene;
    pd_error err = {0};
    pd_world* w = NULL;
    if (pd_scene_parse(json, "box.json", ".", NULL, 0, &scene, &err) != PD_OK)
        return 0;
    if (pd_create_world(&scene, &w, &err) != PD_OK) {
        printf("  %s: %s\n", err.path, err.message);
        pd_scene_free(&scene);
        return 0;
    }
    const pd_particles* p = &w->particles;
    *volume = *mass = 0, *count = p->count;
    for (size_t i = 0; i < p->count; ++i)
        *volume += p->volume[i], *mass += p->mass[i];
    pd_destroy_world(w);
    pd_scene_free(&scene);
    return 1;
}

PD_TEST(poisson_disk_body_weighs_density_times_its_volume) {
    const double box = 0.3 * 0.08 * 0.08;
    double volume, mass;
    size_t n;
    PD_REQUIRE(box_totals("poisson_disk", &volume, &mass, &n));
    printf("  poisson_disk: %zu particles (%.4f per spacing^3)\n", n, n * 1e-6 / box);
    PD_CHECK_REL(volume, box, 1e-12);
    PD_CHECK_REL(mass, 1000 * box, 1e-12);
    PD_REQUIRE(box_totals("grid", &volume, &mass, &n)); /* 30 x 8 x 8 cells of spacing^3 */
    PD_CHECK(n == 1920);
    PD_CHECK_REL(volume, box, 1e-12);
}
