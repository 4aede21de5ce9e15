/* `peridot run` on malformed scene files: exit status 2, a message on stderr naming the file
 * and the JSON path (or the line of a JSON syntax error), and no output folder created. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_support.h"
#include "test.h"

typedef struct bad_file {
    const char* name;
    const char* json;
    const char* must_say; /* the JSON path, or what names a syntax error's place */
    const char* also_say; /* a second path (the collider a body starts in), or NULL */
} bad_file;

#define SCENE_HEAD                                                                                 \
    "{\n  \"version\": 1,\n  \"method\": \"projective_pd\",\n"                                     \
    "  \"time\": { \"dt\": 0.004, \"frames\": 2 },\n"                                              \
    "  \"materials\": { \"rubber\": { \"density\": 1100, \"youngs_modulus\": 1e5,"                 \
    " \"poisson_ratio\": 0.3 } },\n"

static const bad_file k_files[] = {
    {"radius.json",
     SCENE_HEAD "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
                "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": -1 } } "
                "]\n}\n",
     "bodies[0].shape.radius", NULL},
    {"material.json",
     SCENE_HEAD "  \"bodies\": [ { \"material\": \"steel\", \"spacing\": 0.01,\n"
                "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 1 } } "
                "]\n}\n",
     "bodies[0].material", NULL},
    {"unknown_key.json",
     SCENE_HEAD "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
                "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 1 } } "
                "],\n  \"colour\": \"red\"\n}\n",
     "colour", NULL},
    {"solver.json",
     SCENE_HEAD "  \"solver\": { \"iterations\": -3 },\n"
                "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
                "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 1 } } "
                "]\n}\n",
     "solver.iterations", NULL},
    {"collider.json",
     SCENE_HEAD "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
                "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 1 } } "
                "],\n  \"colliders\": [ { \"type\": \"plane\", \"normal\": [0, 0, 0] } ]\n}\n",
     "colliders[0].normal", NULL},
    {"too_big.json",
     SCENE_HEAD
     "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.0005,\n"
     "    \"shape\": { \"type\": \"box\", \"min\": [0, 0, 0], \"max\": [10, 0.05, 10] } } "
     "]\n}\n",
     "GiB", NULL},
    {"empty_pin.json",
     SCENE_HEAD
     "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 0.05 },\n"
     "    \"pins\": [ { \"region\": { \"type\": \"sphere\", \"center\": [5, 5, 5], "
     "\"radius\": 0.1 } } ] } ]\n}\n",
     "bodies[0].pins[0].region", NULL},
    {"empty_change_region.json",
     SCENE_HEAD
     "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 0.05 },\n"
     "    \"material_changes\": [ { \"t\": 0.1, \"material\": \"rubber\", \"region\": "
     "{ \"type\": \"box\", \"min\": [1, 1, 1], \"max\": [2, 2, 2] } } ] } ]\n}\n",
     "bodies[0].material_changes[0].region", NULL},
    {"syntax.json",
     SCENE_HEAD "  \"bodies\": [ { \"material\": \"rubber\" \"spacing\": 0.01 } ]\n}\n", "line 6",
     NULL},
    /* a body that starts inside a solid box, or below a plane, would be thrown out of it by the
     * first projection (kinetic energy from nothing): refused */
    {"inside_box.json",
     SCENE_HEAD
     "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 0.05 } } "
     "],\n  \"colliders\": [ { \"type\": \"plane\", \"normal\": [0, 1, 0], \"point\": "
     "[0, -1, 0] },\n    { \"type\": \"box\", \"min\": [0.02, -0.1, -0.1], \"max\": "
     "[0.2, 0.1, 0.1] } ]\n}\n",
     "bodies[0]", "colliders[1]"},
    {"below_plane.json",
     SCENE_HEAD
     "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 0.05 } } "
     "],\n  \"colliders\": [ { \"type\": \"plane\", \"normal\": [0, 1, 0] } ]\n}\n",
     "bodies[0]", "colliders[0]"},
    /* two bodies that start interpenetrated (0.05 m deep) would be left so or thrown apart:
     * refused, naming both */
    {"overlap.json",
     SCENE_HEAD
     "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"box\", \"min\": [0, 0, 0], \"max\": [0.1, 0.1, 0.1] } },\n"
     "    { \"material\": \"rubber\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"box\", \"min\": [0.05, 0, 0], \"max\": [0.15, 0.1, 0.1] } } "
     "]\n}\n",
     "bodies[1]", "bodies[0]"},
    /* refused by the method's declarations, by run and info alike */
    {"plasticity.json",
     "{\n  \"version\": 1,\n  \"method\": \"projective_pd\",\n"
     "  \"time\": { \"dt\": 0.004, \"frames\": 2 },\n"
     "  \"materials\": { \"clay\": { \"density\": 1100, \"plasticity\": { \"model\": "
     "\"cam_clay\", \"friction_angle\": 30, \"cohesion\": 1e3 } } },\n"
     "  \"bodies\": [ { \"material\": \"clay\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 0.05 } } ]\n}\n",
     "materials.clay.plasticity.model", "projective_pd"},
    {"stress.json",
     SCENE_HEAD
     "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 0.05 } } "
     "],\n  \"output\": { \"attributes\": [\"velocity\", \"stress\"] }\n}\n",
     "output.attributes[1]", "projective_pd"},
    {"tiny_dt.json",
     "{\n  \"version\": 1,\n  \"method\": \"projective_pd\",\n"
     "  \"time\": { \"dt\": 1e-300, \"frames\": 2 },\n"
     "  \"materials\": { \"rubber\": { \"density\": 1100 } },\n"
     "  \"bodies\": [ { \"material\": \"rubber\", \"spacing\": 0.01,\n"
     "    \"shape\": { \"type\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 0.05 } } ]\n}\n",
     "time.dt", NULL},
};

static int write_text(const char* path, const char* text) {
    FILE* f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Runs `peridot COMMAND` (run, or info: one validation for both) on one bad file; returns 1
 * when every expectation held. */
static int check_bad_file(const char* dir, const bad_file* b, const char* command) {
    char scene[512], out[512], errfile[512], cmd[2048];
    snprintf(scene, sizeof scene, "%s/%s", dir, b->name);
    snprintf(out, sizeof out, "%s/out_%s", dir, b->name);
    snprintf(errfile, sizeof errfile, "%s/%s.stderr", dir, b->name);
    if (!write_text(scene, b->json))
        return 0;
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' -o '%s' --quiet >/dev/null 2>'%s'", PD_CLI_PATH,
             command, scene, out, errfile);
    int status = system(cmd);
    int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    char* err = read_text(errfile);
    struct stat st;
    int out_exists = stat(out, &st) == 0 || errno != ENOENT;
    int names_file = err && strstr(err, scene) != NULL;
    int names_path = err && strstr(err, b->must_say) != NULL;
    int names_also = !b->also_say || (err && strstr(err, b->also_say) != NULL);
    int ok = code == 2 && names_file && names_path && names_also && !out_exists;
    printf("  %s %s %s: exit %d, names file %d, names \"%s\" %d%s%s, output folder created %d\n",
           ok ? "ok  " : "FAIL", command, b->name, code, names_file, b->must_say, names_path,
           b->also_say ? " and " : "", b->also_say ? b->also_say : "", out_exists);
    printf("       stderr: %s", err && err[0] ? err : "(empty)\n");
    free(err);
    remove(scene);
    remove(errfile);
    rmdir(out);
    return ok;
}

PD_TEST(bad_scene_files_exit_2_and_write_nothing) {
    char dir[] = "/tmp/pd_cli_bad_scene_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    int n = (int)(sizeof k_files / sizeof k_files[0]), passed = 0;
    for (int i = 0; i < n; ++i)
        passed += check_bad_file(dir, &k_files[i], "run");
    PD_CHECK_NEAR(passed, n, 0);
    rmdir(dir);
}

/* `info` shares run's validation: every file run refuses, info refuses with the same path. */
PD_TEST(info_refuses_what_run_refuses) {
    char dir[] = "/tmp/pd_cli_bad_info_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    int n = (int)(sizeof k_files / sizeof k_files[0]), passed = 0;
    for (int i = 0; i < n; ++i)
        passed += check_bad_file(dir, &k_files[i], "info");
    PD_CHECK_NEAR(passed, n, 0);
    rmdir(dir);
}
