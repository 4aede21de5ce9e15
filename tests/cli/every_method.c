/* One scene, every method (issue 31, item 1): `peridot info` of every shipped scene under every
 * registered method either accepts it or refuses it for a material or output feature the
 * method does not implement, named with the method in the message; never for a solver option
 * (each method reads its own block of `solver`) or a time step (a method the scene's time.dt
 * does not name takes "auto"). Each scene runs under the method it names. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_support.h"
#include "peridot/scene.h"
#include "solvers/solver.h"
#include "test.h"

/* Whether a refusal names a material or output feature and the method, and no solver option
 * or time step. */
static int refused_for_a_feature(const char* err, const char* method) {
    if (!err || strstr(err, ": solver.") || strstr(err, ": time."))
        return 0;
    int feature = strstr(err, ": materials.") || strstr(err, ": output.attributes") ||
                  strstr(err, ": bodies[");
    return feature && strstr(err, method) != NULL;
}

/* `info` of one scene under one method: 1 accepted, 0 refused for a feature, -1 wrong. */
static int info_under(const char* dir, const char* scene, const char* method, int own) {
    char args[1400];
    char* err = NULL;
    snprintf(args, sizeof args, "info '%s' --set method=%s", scene, method);
    int code = run_cli(dir, args, &err);
    int verdict = code == 0 ? 1 : code == 2 && !own && refused_for_a_feature(err, method) ? 0 : -1;
    if (verdict < 0)
        printf("  FAIL %s under %s: exit %d\n", scene, method, code);
    free(err);
    return verdict;
}

/* The method a scene file names (its "method": "..." line). */
static void scene_method(const char* path, char* out, size_t cap) {
    char* text = read_text(path);
    const char* m = text ? strstr(text, "\"method\"") : NULL;
    out[0] = '\0';
    if (m && (m = strchr(m + 8, '"')) != NULL)
        snprintf(out, cap, "%.*s", (int)strcspn(m + 1, "\""), m + 1);
    free(text);
}

PD_TEST(every_shipped_scene_runs_or_names_the_missing_feature) {
    char dir[] = "/tmp/pd_every_method_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    const pd_solver_vtable* const* all = pd_solver_all();
    int accepted[PD_MAX_METHODS] = {0}, refused = 0, wrong = 0, scenes = 0;
    DIR* d = opendir(PD_SOURCE_DIR "/scenes");
    PD_REQUIRE(d);
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char path[1024], own[64];
        snprintf(path, sizeof path, "%s/scenes/%s", PD_SOURCE_DIR, e->d_name);
        scene_method(path, own, sizeof own);
        ++scenes;
        for (int k = 0; all[k]; ++k) {
            int v = info_under(dir, path, all[k]->name, strcmp(own, all[k]->name) == 0);
            accepted[k] += v == 1;
            refused += v == 0;
            wrong += v < 0;
        }
    }
    closedir(d);
    rmdir(dir);
    for (int k = 0; all[k]; ++k)
        printf("  %s accepts %d of %d scenes\n", all[k]->name, accepted[k], scenes);
    printf("  %d refusals for a feature, %d wrong\n", refused, wrong);
    PD_CHECK(scenes >= 30);
    PD_CHECK(wrong == 0);
}
