/* A key that acts only under a mode of its method (its row's `requires`) is refused under any
 * other: exit 2 naming the key's JSON path and the mode it needs, no output folder, whether the
 * file or a `--set` gives it; under its mode the same key runs. The resolved scene of a run in
 * the other mode leaves the key out, so that it parses back. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "peridot/peridot.h"
#include "test.h"

/* A small projective_pd ball (one frame) whose solver block is %s. */
static const char* k_ball =
    "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.01,\"fps\":100,\"frames\":1},"
    "\"solver\":{\"projective_pd\":%s},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"material\":\"m\",\"spacing\":0.02,"
    "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.5,0],\"radius\":0.06}}]}";

static char* read_all(const char* path) {
    FILE* f = fopen(path, "rb");
    char* s = f ? calloc(1, 65536) : NULL;
    if (s)
        s[fread(s, 1, 65535, f)] = '\0';
    if (f)
        fclose(f);
    return s;
}

/* Runs `peridot run` on the ball with solver block `solver` and `set` (a --set, or NULL): 1
 * when it exits `want`, and for want 2 names `path` and `needs` on stderr and creates no
 * output folder; for want 0 writes the frame's folder. */
static int run_ball(const char* solver, const char* set, int want, const char* path,
                    const char* needs) {
    char dir[] = "/tmp/pd_mode_keys_XXXXXX", scene[128], out[128], errfile[128], cmd[1024];
    char json[2048];
    if (!mkdtemp(dir))
        return 0;
    snprintf(scene, sizeof scene, "%s/scene.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", dir);
    snprintf(json, sizeof json, k_ball, solver);
    FILE* f = fopen(scene, "wb");
    if (!f)
        return 0;
    fputs(json, f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "OMP_NUM_THREADS=1 '%s' run '%s' -o '%s' --quiet%s%s%s >/dev/null 2>'%s'", PD_CLI_PATH,
             scene, out, set ? " --set '" : "", set ? set : "", set ? "'" : "", errfile);
    int status = system(cmd);
    int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    char* err = read_all(errfile);
    struct stat st;
    int out_exists = stat(out, &st) == 0 || errno != ENOENT;
    int ok = code == want;
    if (want == 2)
        ok = ok && !out_exists && err && strstr(err, path) && strstr(err, needs);
    else
        ok = ok && out_exists;
    printf("  %s solver %s%s%s: exit %d (want %d), output folder %d\n    stderr: %s",
           ok ? "ok  " : "FAIL", solver, set ? " --set " : "", set ? set : "", code, want,
           out_exists, err && err[0] ? err : "(empty)\n");
    free(err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("  could not remove %s\n", dir);
    return ok;
}

/* semi_rho and semi_check act only in the semi_iterative iteration (projective_pd.c's
 * semi-iterative solve is their only reader): under the default accurate descent they are
 * refused, from the file or from --set, and run under semi_iterative. A check that never
 * fires, or fires on the mode's own keys, fails. */
PD_TEST(semi_iterative_keys_refused_under_accurate) {
    PD_CHECK(run_ball("{\"semi_rho\":0.5}", NULL, 2, "solver.projective_pd.semi_rho",
                      "acts only with iteration \"semi_iterative\" (the scene's iteration is "
                      "\"accurate\")"));
    PD_CHECK(run_ball("{\"iteration\":\"accurate\"}", "solver.projective_pd.semi_check=3", 2,
                      "solver.projective_pd.semi_check", "\"semi_iterative\""));
    PD_CHECK(run_ball("{\"iteration\":\"semi_iterative\",\"semi_rho\":0.5,\"semi_check\":3}", NULL,
                      0, NULL, NULL));
    PD_CHECK(run_ball("{\"semi_rho\":0.5}", "solver.projective_pd.iteration=semi_iterative", 0,
                      NULL, NULL));
}

/* density_stiffness is the in_solve density penalty's stiffness: under after_solve (the
 * default) it is refused; under in_solve it parses. */
PD_TEST(density_stiffness_refused_after_solve) {
    PD_CHECK(run_ball("{\"density_stiffness\":5}", NULL, 2,
                      "solver.projective_pd.density_stiffness",
                      "acts only with granular_constraints \"in_solve\""));
    char json[2048];
    snprintf(json, sizeof json, k_ball,
             "{\"granular_constraints\":\"in_solve\",\"density_stiffness\":5}");
    pd_scene s;
    pd_error err = {0};
    pd_status st = pd_scene_parse(json, "in_solve.json", ".", NULL, 0, &s, &err);
    printf("  in_solve with density_stiffness 5: %s %s\n", st == PD_OK ? "parsed" : err.path,
           st == PD_OK ? "" : err.message);
    PD_CHECK(st == PD_OK);
    if (st == PD_OK)
        pd_scene_free(&s);
}

/* The resolved scene writes every default, but not a key whose mode is off: written, it would
 * read back as given and be refused. The resolved scene of the accurate ball has no semi_rho
 * and parses back; that of the semi_iterative ball has it. */
PD_TEST(resolved_scene_leaves_out_keys_of_other_modes) {
    const char* solvers[] = {"{}", "{\"iteration\":\"semi_iterative\"}"};
    for (int k = 0; k < 2; ++k) {
        char json[2048];
        snprintf(json, sizeof json, k_ball, solvers[k]);
        pd_scene s, again;
        pd_error err = {0};
        PD_REQUIRE(pd_scene_parse(json, "ball.json", ".", NULL, 0, &s, &err) == PD_OK);
        int has = strstr(s.resolved_json, "\"semi_rho\"") != NULL;
        pd_status st = pd_scene_parse(s.resolved_json, "resolved.json", ".", NULL, 0, &again, &err);
        printf("  solver %s: resolved scene names semi_rho %d, parses back %s %s\n", solvers[k],
               has, st == PD_OK ? "ok" : err.path, st == PD_OK ? "" : err.message);
        PD_CHECK(has == k);
        PD_CHECK(st == PD_OK);
        if (st == PD_OK)
            pd_scene_free(&again);
        pd_scene_free(&s);
    }
}

/* A small ball of `method` whose solver block is %s (parsed only). */
static const char* k_method_ball =
    "{\"version\":1,\"method\":\"%s\",\"time\":{\"dt\":0.001,\"fps\":100,\"frames\":1},"
    "\"solver\":{\"%s\":%s},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"material\":\"m\",\"spacing\":0.02,"
    "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.5,0],\"radius\":0.06}}]}";

/* 1 when `solver` for `method` is refused at solver.<method>.<key> naming `needs` (key NULL:
 * accepted). */
static int parses(const char* method, const char* solver, const char* key, const char* needs) {
    char json[2048], path[128];
    snprintf(json, sizeof json, k_method_ball, method, method, solver);
    snprintf(path, sizeof path, "solver.%s.%s", method, key ? key : "");
    pd_scene s;
    pd_error err = {0};
    pd_status st = pd_scene_parse(json, "ball.json", ".", NULL, 0, &s, &err);
    int ok = key ? st == PD_ERR_BAD_SCENE && strcmp(err.path, path) == 0 &&
                       strstr(err.message, needs) != NULL
                 : st == PD_OK;
    printf("  %s %s %s -> %s %s\n", ok ? "ok  " : "FAIL", method, solver,
           st == PD_OK ? "accepted" : err.path, st == PD_OK ? "" : err.message);
    if (st == PD_OK)
        pd_scene_free(&s);
    return ok;
}

/* Other methods' mode keys: mpm's ADMM iterations under the explicit integrator and lbfgs's
 * history under newton; hyperelastic_pd's friction smoothing with the colliders after the
 * solve (which sees none) and its isotropy factor under a weight it is not fitted for;
 * xpbi's Jacobi relaxation under Gauss-Seidel. Each accepted under its mode. */
PD_TEST(other_methods_mode_keys) {
    PD_CHECK(parses("mpm", "{\"iterations\":40}", "iterations", "integrator \"admm\""));
    PD_CHECK(parses("mpm", "{\"integrator\":\"admm\",\"iterations\":40}", NULL, NULL));
    PD_CHECK(parses("mpm", "{\"integrator\":\"newton\",\"history\":3}", "history",
                    "(the scene's integrator is \"newton\")"));
    PD_CHECK(parses("mpm", "{\"integrator\":\"lbfgs\",\"history\":3}", NULL, NULL));
    PD_CHECK(parses("hyperelastic_pd",
                    "{\"collisions\":\"after_solve\",\"friction_stick_speed\":0.001}",
                    "friction_stick_speed", "collisions \"in_solve\""));
    PD_CHECK(parses("hyperelastic_pd", "{\"friction_stick_speed\":0.001}", NULL, NULL));
    PD_CHECK(parses("hyperelastic_pd", "{\"weight\":\"linear\",\"isotropic_weights\":false}",
                    "isotropic_weights", "weight \"constant\""));
    PD_CHECK(
        parses("xpbi", "{\"jacobi_relaxation\":0.3}", "jacobi_relaxation", "solver \"jacobi\""));
    PD_CHECK(parses("xpbi", "{\"solver\":\"jacobi\",\"jacobi_relaxation\":0.3}", NULL, NULL));
}
