/* hyperelastic_pd's g and h with negative basis coefficients (issue 34 item 2): accepted where
 * the combination stays convex over stretches 0.2 to 5, refused otherwise with
 * PD_ERR_BAD_SCENE at the block's path, the stretch where it stops being convex, a line of the
 * file, and no memory left allocated. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "peridot/peridot.h"
#include "test.h"

/* A hyperelastic_pd cube of material m, whose `hyperelastic` block is %s. */
static const char* k_cube =
    "{ \"version\": 1, \"method\": \"hyperelastic_pd\", \"time\": { \"dt\": 0.01 },\n"
    "  \"materials\": { \"m\": { \"density\": 1000, \"youngs_modulus\": 1e5,\n"
    "                         \"poisson_ratio\": 0.3,\n"
    "                         \"hyperelastic\": %s } },\n"
    "  \"bodies\": [ { \"material\": \"m\", \"spacing\": 0.01,\n"
    "    \"shape\": { \"type\": \"box\", \"min\": [0, 0, 0], \"max\": [0.05, 0.05, 0.05] } } ] }";

/* Parses the cube with `block`: 1 when it is refused at `path` (with a line and `stretch` in
 * the message) or, path NULL, accepted; nothing left allocated either way. */
static int check(const char* block, const char* path, const char* stretch) {
    char json[2048];
    snprintf(json, sizeof json, k_cube, block);
    size_t before = pd_bytes_in_use();
    pd_scene s;
    pd_error err = {0};
    pd_status st = pd_scene_parse(json, "bad.json", ".", NULL, 0, &s, &err);
    int ok;
    if (path) {
        ok = st == PD_ERR_BAD_SCENE && strcmp(err.path, path) == 0 && err.line > 0 &&
             strstr(err.message, stretch) != NULL;
        printf("  %s %s -> %s: %s (line %d)\n", ok ? "ok  " : "FAIL", block, err.path, err.message,
               err.line);
    } else {
        ok = st == PD_OK;
        printf("  %s %s -> %s %s\n", ok ? "ok  " : "FAIL", block,
               st == PD_OK ? "accepted" : err.path, st == PD_OK ? "" : err.message);
    }
    if (st == PD_OK)
        pd_scene_free(&s);
    return ok && pd_bytes_in_use() == before;
}

/* h'' = s^-2 - 0.4 of A_1 - 0.7 B_1 turns negative at s = 1.58 (the first grid point past
 * sqrt(2.5)); A_3 - B_1 has h''(1) = 0 (no stiffness at rest); -A_2 is concave everywhere (the
 * grid's first point, 0.2); StVK's (3 B_3 - B_1)/2 given as coefficients is concave below
 * 1/sqrt(3) (the `stvk` preset, the paper's Eq. 28, is not checked). Accepted: the
 * neo_hookean preset's A_1 + 3 A_2 - 3 B_1 given as g and h, the (A_1 - 0.49 B_1) /
 * 0.51, and A_1 - 0.5 B_1 in g only (g'' = s^-2; h the preset's). */
PD_TEST(concave_energy_terms_are_refused_at_their_stretch) {
    PD_CHECK(check("{ \"h\": { \"A1\": 1, \"B1\": -0.7 } }", "materials.m.hyperelastic.h",
                   "stretch 1.58"));
    PD_CHECK(check("{ \"g\": { \"A3\": 1, \"B1\": -1 }, \"h\": { \"A3\": 1, \"B1\": -1 } }",
                   "materials.m.hyperelastic.g", "stretch 1 "));
    PD_CHECK(check("{ \"h\": { \"A2\": -1 } }", "materials.m.hyperelastic.h", "stretch 0.2 "));
    PD_CHECK(check("{ \"preset\": \"stvk\", \"g\": { \"B3\": 1.5, \"B1\": -0.5 } }",
                   "materials.m.hyperelastic.g", "stretch 0.2 "));
    PD_CHECK(check("{ \"preset\": \"stvk\" }", NULL, NULL));
    PD_CHECK(check("{ \"g\": { \"A1\": 1, \"A2\": 3, \"B1\": -3 }, "
                   "\"h\": { \"A1\": 1, \"A2\": 3, \"B1\": -3 } }",
                   NULL, NULL));
    PD_CHECK(check("{ \"g\": { \"A1\": 1.96078, \"B1\": -0.96078 }, "
                   "\"h\": { \"A1\": 1.96078, \"B1\": -0.96078 } }",
                   NULL, NULL));
    PD_CHECK(
        check("{ \"preset\": \"neo_hookean\", \"g\": { \"A1\": 1, \"B1\": -0.5 } }", NULL, NULL));
}
