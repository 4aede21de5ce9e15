/* Estimates that no longer mislead (issue 30, item 3): a run that would write more than the
 * output's file system holds free is refused before it starts, by `info` as by `run`, with both
 * numbers; `info` prints the output's estimate, which a run's files bear out; a scene above
 * what ulimit -v allows is refused naming that limit, not the machine's memory. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_support.h"
#include "peridot/peridot.h"
#include "test.h"

/* Bytes of the regular files in dir. */
static double folder_bytes(const char* dir) {
    DIR* d = opendir(dir);
    double bytes = 0;
    char path[600];
    struct stat st;
    for (struct dirent* e; d && (e = readdir(d)) != NULL;) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            bytes += (double)st.st_size;
    }
    if (d)
        closedir(d);
    return bytes;
}

/* A billion frames of a small ball would write about a terabyte: refused by info and run
 * (exit 2, nothing written), naming the estimate and the free space. */
PD_TEST(output_larger_than_the_free_space_is_refused) {
    char dir[] = "/tmp/pd_estimates_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[256], out[256], args[1024];
    snprintf(scene, sizeof scene, "%s/ball.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene, BALL_SCENE(4, ""));
    const char* commands[] = {"info", "run"};
    for (int c = 0; c < 2; ++c) {
        snprintf(args, sizeof args, "%s %s -o %s --frames 1000000000 --quiet", commands[c], scene,
                 out);
        char* err = NULL;
        PD_CHECK(run_cli(dir, args, &err) == 2);
        PD_CHECK(err && strstr(err, "output: the run would write about") &&
                 strstr(err, "GiB free on the file system of"));
        free(err);
        PD_CHECK(!exists(out));
    }
    remove_tree(dir);
}

/* The output estimate (frames of its attributes, every 4th and the last, stats.csv and the
 * resolved scene) against the bytes a run of 40 frames leaves in its folder. */
PD_TEST(output_estimate_matches_what_a_run_writes) {
    char dir[] = "/tmp/pd_estimates_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene_path[256], out[256], args[1024];
    snprintf(scene_path, sizeof scene_path, "%s/ball.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene_path, BALL_SCENE(40, ""));
    const char* sets[] = {"output.every=4", "output.attributes=[\"velocity\",\"id\"]"};
    pd_scene scene;
    pd_error err = {0};
    PD_REQUIRE(pd_scene_load(scene_path, sets, 2, &scene, &err) == PD_OK);
    pd_estimate est;
    PD_REQUIRE(pd_scene_estimate(&scene, &est, &err) == PD_OK);
    pd_scene_free(&scene);
    snprintf(args, sizeof args,
             "run %s -o %s --quiet --set output.every=4 --set "
             "'output.attributes=[\"velocity\",\"id\"]'",
             scene_path, out);
    char* msg = NULL;
    PD_CHECK(run_cli(dir, args, &msg) == 0);
    free(msg);
    double written = folder_bytes(out);
    printf("    estimated %zu bytes, written %.0f (ratio %.3f)\n", est.output_bytes, written,
           (double)est.output_bytes / written);
    PD_CHECK((double)est.output_bytes > written / 1.5 && (double)est.output_bytes < 1.5 * written);
    remove_tree(dir);
}

/* Under ulimit -v 2 GiB, a ball at 0.3 mm (about 34 million particles, 90 GiB) is refused
 * naming ulimit -v; the machine's memory alone would have refused it for another reason. */
PD_TEST(ulimit_v_bounds_the_memory_a_scene_may_need) {
    char dir[] = "/tmp/pd_estimates_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[256], cmd[1024], errfile[300];
    snprintf(scene, sizeof scene, "%s/ball.json", dir);
    snprintf(errfile, sizeof errfile, "%s/err.txt", dir);
    write_file(scene, BALL_SCENE(4, ""));
    const char* spacings[] = {"0.0003", "0.002"}; /* refused; fits (about 0.3 GiB) */
    for (int k = 0; k < 2; ++k) {
        snprintf(cmd, sizeof cmd,
                 "ulimit -v 2097152; OMP_NUM_THREADS=1 '%s' info '%s' --estimate --set "
                 "'bodies[0].spacing=%s' >/dev/null 2>'%s'",
                 PD_CLI_PATH, scene, spacings[k], errfile);
        int status = system(cmd);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        char* err = read_text(errfile);
        printf("    spacing %s under ulimit -v 2 GiB: exit %d, %s", spacings[k], code,
               err && *err ? err : "(nothing said)\n");
        if (k == 0)
            PD_CHECK(code == 2 && err && strstr(err, "of ulimit -v, 2 GiB"));
        else
            PD_CHECK(code == 0);
        free(err);
    }
    remove_tree(dir);
}
