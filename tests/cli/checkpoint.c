/* Checkpoints and --resume (issue 30, item 5): a run resumed from a checkpoint writes the
 * frames the uninterrupted run wrote, bit for bit, on 1 and 2 threads, through a Morton
 * reordering and friction refactorisations after the checkpoint (hyperelastic_pd: a ball
 * dropped onto a rough floor); a checkpoint of another scene or format is refused, as are
 * checkpoints from a method that does not write them, and a folder with none. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_support.h"
#include "test.h"

/* 20 frames of 4 steps: a reordering every 64 steps comes at step 64 (frame 16), after the
 * checkpoint of frame 10 the run resumes from; the ball lands on the rough floor near frame 6,
 * so friction refactors the factor before and after it. */
#define DROP                                                                                       \
    "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.01,\"fps\":25,"              \
    "\"frames\":20},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":2e5,"                \
    "\"poisson_ratio\":0.3}},\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"                \
    "\"normal\":[0,1,0],\"friction\":0.5}],\"bodies\":[{\"name\":\"ball\",\"material\":\"m\","     \
    "\"spacing\":0.02,\"shape\":{\"type\":\"sphere\",\"center\":[0,0.2,0],\"radius\":0.1},"        \
    "\"velocity\":[0.5,0,0]}],\"output\":{\"checkpoint_every\":5}}"

/* Runs `peridot ARGS` with OMP_NUM_THREADS=threads; the exit status. */
static int run_threads(const char* dir, int threads, const char* args, char** err) {
    char with[2048];
    snprintf(with, sizeof with, "%s", args);
    setenv("OMP_NUM_THREADS", threads == 1 ? "1" : "2", 1);
    int code = run_cli(dir, with, err);
    unsetenv("OMP_NUM_THREADS");
    return code;
}

static int same_file(const char* a, const char* b) {
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

/* Copies the run in `from` to `to` as a run stopped after frame `stop` leaves it: the frames
 * after it and the checkpoints after it gone. */
static void copy_stopped_at(const char* from, const char* to, int stop) {
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && cp -r '%s' '%s' && for f in '%s'/frame_*.ply '%s'/checkpoint_*.pdck; "
             "do n=$(basename \"$f\" | tr -dc 0-9); [ \"$n\" -gt %d ] && rm \"$f\"; done; true",
             to, from, to, to, to, stop);
    if (system(cmd) != 0)
        printf("  could not copy %s\n", from);
}

/* Runs `scene` uninterrupted on 1 thread, then resumes copies stopped at each frame of `stops` on
 * 1 and 2 threads: every later frame, the last checkpoint (the whole state) and stats.csv but its
 * wall time must be the same bytes. */
static void check_resume(const char* name, const char* scene_text, int frames, const int* stops,
                         int stop_count) {
    char dir[] = "/tmp/pd_checkpoint_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[128], full[128], part[128], args[1024], a[200], b[200];
    snprintf(scene, sizeof scene, "%s/%s.json", dir, name);
    snprintf(full, sizeof full, "%s/full", dir);
    snprintf(part, sizeof part, "%s/part", dir);
    write_file(scene, scene_text);
    char* err = NULL;
    snprintf(args, sizeof args, "run %s -o %s --quiet", scene, full);
    PD_REQUIRE(run_threads(dir, 1, args, &err) == 0);
    free(err);
    for (int k = 0; k < 2 * stop_count; ++k) {
        int stop = stops[k / 2], threads = 1 + k % 2;
        copy_stopped_at(full, part, stop);
        snprintf(b, sizeof b, "%s/frame_%05d.ply", part, stop + 1);
        PD_REQUIRE(!exists(b)); /* else the frames compared would be the copies */
        snprintf(args, sizeof args, "run --resume %s --quiet", part);
        PD_CHECK(run_threads(dir, threads, args, &err) == 0);
        free(err);
        int same = 0;
        for (int f = stop + 1; f <= frames; ++f) {
            snprintf(a, sizeof a, "%s/frame_%05d.ply", full, f);
            snprintf(b, sizeof b, "%s/frame_%05d.ply", part, f);
            same += same_file(a, b);
        }
        snprintf(a, sizeof a, "%s/checkpoint_%05d.pdck", full, frames);
        snprintf(b, sizeof b, "%s/checkpoint_%05d.pdck", part, frames);
        printf("    %s resumed from frame %d on %d thread%s: %d of frames %d-%d the same bits\n",
               name, stop, threads, threads == 1 ? "" : "s", same, stop + 1, frames);
        PD_CHECK_NEAR(same, frames - stop, 0);
        PD_CHECK(same_file(a, b));
        char bash[1600];
        snprintf(bash, sizeof bash,
                 "bash -c \"cmp -s <(cut -d, -f1-13,15- '%s/stats.csv') <(cut -d, -f1-13,15- "
                 "'%s/stats.csv')\"",
                 full, part);
        PD_CHECK(system(bash) == 0);
    }
    remove_tree(dir);
}

PD_TEST(resumed_run_matches_the_uninterrupted_bit_for_bit) {
    check_resume("drop", DROP, 20, (const int[]){10}, 1);
}

/* sbpd: a Prony block (two modes) dropped onto a Drucker-Prager sand pile that renews its
 * families every step; 67 steps a frame, so reorderings come after the checkpoint too. */
#define SAND_AND_PRONY                                                                             \
    "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":0.00015,\"fps\":100,"                     \
    "\"frames\":10},\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"             \
    "\"poisson_ratio\":0.2,\"plasticity\":{\"model\":\"drucker_prager\",\"friction_angle\":"       \
    "30,\"cohesion\":0}},\"goo\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":"      \
    "0.45,\"viscoelasticity\":{\"model\":\"prony\",\"moduli\":[30000,20000],\"times\":"            \
    "[0.05,0.2]}}},\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],"       \
    "\"friction\":0.5}],\"bodies\":[{\"name\":\"pile\",\"material\":\"sand\",\"spacing\":"         \
    "0.01,\"shape\":{\"type\":\"box\",\"min\":[-0.05,0,-0.03],\"max\":[0.05,0.06,0.03]}},"         \
    "{\"name\":\"block\",\"material\":\"goo\",\"spacing\":0.01,\"shape\":{\"type\":"               \
    "\"box\",\"min\":[-0.04,0.09,-0.03],\"max\":[0.04,0.13,0.03]},\"velocity\":[0,-1,0]}],"        \
    "\"output\":{\"checkpoint_every\":5}}"

/* projective_pd: two von Mises clay balls thrown into each other on a rough floor (contact
 * between bodies, friction, plastic flow everywhere: plastic strain 0.45 at most, every
 * particle above 0.01 by frame 12), their families renewed every step; 8 steps a frame. */
#define CLAY                                                                                       \
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":30,"                   \
    "\"tolerance\":1e-4,\"global_solve\":\"chebyshev\",\"contact\":true},\"time\":{\"dt\":"        \
    "0.005,\"fps\":25,\"frames\":12},\"materials\":{\"clay\":{\"density\":1200,"                   \
    "\"youngs_modulus\":2e5,\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"von_mises\","        \
    "\"yield_stress\":2000}}},\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"               \
    "\"normal\":[0,1,0],\"friction\":0.5}],\"bodies\":[{\"name\":\"a\",\"material\":"              \
    "\"clay\",\"spacing\":0.02,\"shape\":{\"type\":\"sphere\",\"center\":[-0.06,0.12,0],"          \
    "\"radius\":0.08},\"velocity\":[1.5,-1,0]},{\"name\":\"b\",\"material\":\"clay\","             \
    "\"spacing\":0.02,\"shape\":{\"type\":\"sphere\",\"center\":[0.13,0.09,0],\"radius\":"         \
    "0.08},\"velocity\":[-1.5,-1,0]}],\"output\":{\"checkpoint_every\":6}}"

PD_TEST(resumed_projective_pd_plastic_clay_matches_bit_for_bit) {
    check_resume("clay", CLAY, 12, (const int[]){6}, 1);
}

/* projective_pd with material changes (He 2017 Fig. 19's kind): the top half of a rubber block
 * turns to honey at t = 0.1 s (frame 2.5) and the block back to rubber at 0.3 s (frame 7.5);
 * resumed before, between and after the changes, which are made again on the fresh world. */
#define MELT                                                                                       \
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":30,"                   \
    "\"tolerance\":1e-4,\"global_solve\":\"chebyshev\"},\"time\":{\"dt\":0.005,\"fps\":25,"        \
    "\"frames\":12},\"materials\":{\"rubber\":{\"density\":1000,\"youngs_modulus\":1e5,"           \
    "\"poisson_ratio\":0.3},\"honey\":{\"density\":1000,\"youngs_modulus\":1e4,"                   \
    "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"von_mises\",\"yield_stress\":20},"          \
    "\"fluid\":{\"viscosity\":1000}}},\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"       \
    "\"normal\":[0,1,0],\"boundary\":\"slip\",\"friction\":0.5}],\"bodies\":[{\"name\":"           \
    "\"block\",\"material\":\"rubber\",\"spacing\":0.02,\"shape\":{\"type\":\"box\","              \
    "\"min\":[-0.1,0,-0.06],\"max\":[0.1,0.12,0.06]},\"material_changes\":[{\"t\":0.1,"            \
    "\"material\":\"honey\",\"region\":{\"type\":\"box\",\"min\":[-1,0.06,-1],\"max\":"            \
    "[1,1,1]}},{\"t\":0.3,\"material\":\"rubber\"}]}],\"output\":{\"checkpoint_every\":1}}"

PD_TEST(resumed_material_changes_match_bit_for_bit) {
    check_resume("melt", MELT, 12, (const int[]){1, 5, 9}, 3);
}

PD_TEST(resumed_sbpd_sand_and_prony_match_bit_for_bit) {
    check_resume("sand", SAND_AND_PRONY, 10, (const int[]){5}, 1);
}

/* mpm: the ball of DROP, explicit with time.dt "auto" (the step is chosen again at every frame's
 * start from the velocities, which the checkpoint restores); its F, C and V0 per particle, about
 * 230 steps a frame, so reorderings come before and after the checkpoint. */
#define MPM_DROP                                                                                   \
    "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":25,"                      \
    "\"frames\":8},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":2e5,"                 \
    "\"poisson_ratio\":0.3}},\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"                \
    "\"normal\":[0,1,0],\"friction\":0.5}],\"bodies\":[{\"name\":\"ball\",\"material\":\"m\","     \
    "\"spacing\":0.02,\"shape\":{\"type\":\"sphere\",\"center\":[0,0.12,0],\"radius\":0.1},"       \
    "\"velocity\":[0.5,0,0]}],\"output\":{\"checkpoint_every\":4}}"

PD_TEST(resumed_mpm_with_auto_time_step_matches_bit_for_bit) {
    check_resume("mpm", MPM_DROP, 8, (const int[]){4}, 1);
}

/* mpm's optimiser step (newton): the same ball at ten times the explicit bound, 4 frames of 7
 * steps, resumed at frame 2; the optimiser
 * keeps nothing across steps, and its node arrays' capacity (grown as the grid grows) differs
 * between the resumed run and the uninterrupted one without changing a bit. */
#define MPM_NEWTON_DROP                                                                            \
    "{\"version\":1,\"method\":\"mpm\",\"solver\":{\"mpm\":{\"integrator\":\"newton\"}},"          \
    "\"time\":{\"dt\":\"auto\",\"fps\":25,"                                                        \
    "\"frames\":4},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":2e5,"                 \
    "\"poisson_ratio\":0.3}},\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"                \
    "\"normal\":[0,1,0],\"friction\":0.5}],\"bodies\":[{\"name\":\"ball\",\"material\":\"m\","     \
    "\"spacing\":0.02,\"shape\":{\"type\":\"sphere\",\"center\":[0,0.12,0],\"radius\":0.1},"       \
    "\"velocity\":[0.5,0,0]}],\"output\":{\"checkpoint_every\":2}}"

PD_TEST(resumed_mpm_newton_matches_bit_for_bit) {
    check_resume("mpm_newton", MPM_NEWTON_DROP, 4, (const int[]){2}, 1);
}

/* xpbi: the same ball, time.dt "auto" (solver.xpbi.courant), resumed at frame 4: F, V0 and the
 * plastic strain per particle; neighbours, kernels and colours are rebuilt every step. */
#define XPBI_DROP                                                                                  \
    "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":25,"                     \
    "\"frames\":8},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":2e5,"                 \
    "\"poisson_ratio\":0.3}},\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"                \
    "\"normal\":[0,1,0],\"friction\":0.5}],\"bodies\":[{\"name\":\"ball\",\"material\":\"m\","     \
    "\"spacing\":0.02,\"shape\":{\"type\":\"sphere\",\"center\":[0,0.12,0],\"radius\":0.1},"       \
    "\"velocity\":[0.5,0,0]}],\"output\":{\"checkpoint_every\":4}}"

PD_TEST(resumed_xpbi_matches_bit_for_bit) {
    check_resume("xpbi", XPBI_DROP, 8, (const int[]){4}, 1);
}

/* Emitters (src/world/emitters.c): a stream poured from 0.2 m onto the floor beside a ball
 * (its body), 8 frames of which 7 emit, resumed at frame 4 under mpm and xpbi. The fresh world
 * makes the layers due by the checkpoint's time before the checkpoint's particles overwrite
 * them: the same count, ids and method state as the uninterrupted run's. */
#define STREAM(method)                                                                             \
    "{\"version\":1,\"method\":\"" method "\",\"time\":{\"dt\":\"auto\",\"fps\":25,"               \
    "\"frames\":8},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":2e4,"                 \
    "\"poisson_ratio\":0.3}},\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"                \
    "\"normal\":[0,1,0]}],\"bodies\":[{\"name\":\"goo\",\"material\":\"m\",\"spacing\":0.01,"      \
    "\"shape\":{\"type\":\"sphere\",\"center\":[0.1,0.03,0],\"radius\":0.02}}],"                   \
    "\"emitters\":[{\"body\":\"goo\",\"center\":[0,0.2,0],\"radius\":0.02,\"speed\":1}],"          \
    "\"output\":{\"checkpoint_every\":2,\"attributes\":[\"id\",\"velocity\"]}}"

PD_TEST(resumed_emitter_stream_matches_bit_for_bit) {
    check_resume("mpm_stream", STREAM("mpm"), 8, (const int[]){4}, 1);
    check_resume("xpbi_stream", STREAM("xpbi"), 8, (const int[]){4}, 1);
}

/* Refused with exit 2 and why: a folder without a checkpoint; a checkpoint whose scene was
 * changed since (the density); one of another format. */
PD_TEST(checkpoints_of_another_scene_format_or_method_are_refused) {
    char dir[] = "/tmp/pd_checkpoint_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[256], out[256], args[1024], cmd[1400];
    snprintf(scene, sizeof scene, "%s/drop.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene, DROP);
    char* err = NULL;
    snprintf(args, sizeof args, "run %s -o %s --quiet --frames 5", scene, out);
    PD_REQUIRE(run_cli(dir, args, &err) == 0);
    free(err);
    /* nothing to do at the checkpoint's frame; more frames go on from it */
    snprintf(args, sizeof args, "run --resume %s --quiet", out);
    PD_CHECK(run_cli(dir, args, &err) == 2);
    PD_CHECK(err && strstr(err, "give --frames N with N > 5"));
    free(err);
    snprintf(args, sizeof args, "run --resume %s --quiet --frames 6", out);
    PD_CHECK(run_cli(dir, args, &err) == 0);
    free(err);
    char sixth[300];
    snprintf(sixth, sizeof sixth, "%s/frame_00006.ply", out);
    PD_CHECK(exists(sixth));
    /* a scene changed otherwise does not */
    snprintf(cmd, sizeof cmd,
             "sed -i 's/\"density\":\\t1000/\"density\":\\t1001/' '%s/scene.resolved.json'", out);
    PD_REQUIRE(system(cmd) == 0);
    snprintf(args, sizeof args, "run --resume %s --quiet --frames 6", out);
    PD_CHECK(run_cli(dir, args, &err) == 2);
    PD_CHECK(err && strstr(err, "written by another scene"));
    free(err);
    snprintf(cmd, sizeof cmd,
             "sed -i 's/\"density\":\\t1001/\"density\":\\t1000/' '%s/scene.resolved.json' && "
             "printf '\\011' | dd of='%s/checkpoint_00005.pdck' bs=1 seek=8 conv=notrunc "
             "status=none",
             out, out);
    PD_REQUIRE(system(cmd) == 0);
    PD_CHECK(run_cli(dir, args, &err) == 2);
    PD_CHECK(err && strstr(err, "checkpoint format 9"));
    free(err);
    snprintf(cmd, sizeof cmd, "rm '%s'/checkpoint_*.pdck", out);
    PD_REQUIRE(system(cmd) == 0);
    PD_CHECK(run_cli(dir, args, &err) == 2);
    PD_CHECK(err && strstr(err, "holds no checkpoint"));
    free(err);
    remove_tree(dir);
}
