/* A method's set-up refusal quotes the values it measured: mpm's explicit step at a dt past its
 * stability bound names the bound, its solver.mpm.cfl and dx. Run under the sanitizers too,
 * where a message built from the freed state is an error (it once read garbage there: "cfl
 * 6.9e-310"). */
#include <stdio.h>
#include <string.h>

#include "peridot/peridot.h"
#include "test.h"

/* A 0.1 m cube at 2 cm (dx 4 cm by default), E 1e5 Pa: a P-wave speed of about 12 m/s, so
 * cfl 0.3 of dx over it is about 1 ms; dt 0.01 s is past it. */
static const char k_scene[] =
    "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":0.01,\"fps\":100,\"frames\":1},"
    "\"solver\":{\"mpm\":{\"cfl\":0.25}},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"material\":\"m\",\"spacing\":0.02,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.1,0.1]}}]}";

PD_TEST(mpm_refuses_a_dt_past_its_bound_naming_its_cfl) {
    pd_scene scene;
    pd_error err = {0};
    PD_REQUIRE(pd_scene_parse(k_scene, "refusal.json", ".", NULL, 0, &scene, &err) == PD_OK);
    pd_world* w = NULL;
    pd_status st = pd_create_world(&scene, &w, &err);
    printf("  %s: %s\n", err.path, err.message);
    PD_CHECK(st == PD_ERR_BAD_SCENE && w == NULL);
    PD_CHECK(!strcmp(err.path, "time.dt"));
    PD_CHECK(strstr(err.message, "solver.mpm.cfl 0.25 of dx = 0.04 m") != NULL);
    if (w)
        pd_destroy_world(w);
    pd_scene_free(&scene);
}
