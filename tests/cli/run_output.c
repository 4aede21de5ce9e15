/* `peridot run` and its output folder and inputs, as a new user meets them: a rerun leaves no
 * stale frame of an earlier run (so `render` cannot pick one up), a folder holding other files
 * is refused unless --overwrite, a scene that is not a regular file is refused, --threads
 * states and keeps its range, a run whose solver hits a NaN stops with exit 1, keeping the
 * frames written before, and stats.csv leaves a value the method does not report empty. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_support.h"
#include "io/output.h"
#include "test.h"

PD_TEST(rerun_replaces_the_earlier_runs_frames) {
    char dir[] = "/tmp/pd_run_output_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[512], out[512], args[2048], path[600];
    char* err = NULL;
    snprintf(scene, sizeof scene, "%s/ball.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene, BALL_SCENE(4, ""));
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet", scene, out);
    PD_CHECK(run_cli(dir, args, &err) == 0);
    free(err);
    PD_CHECK_NEAR(count_frames(out), 5, 0);
    /* The same folder, two frames: frames 3 and 4 of the first run must be gone. */
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet --frames 2", scene, out);
    PD_CHECK(run_cli(dir, args, &err) == 0);
    free(err);
    PD_CHECK_NEAR(count_frames(out), 3, 0);
    snprintf(path, sizeof path, "%s/frame_00004.ply", out);
    PD_CHECK(!exists(path));
    /* render's "last frame" is the new run's last one */
    snprintf(args, sizeof args, "render '%s' -o '%s/last.png'", out, dir);
    PD_CHECK(run_cli(dir, args, &err) == 0);
    free(err);
    remove_tree(dir);
}

PD_TEST(folder_with_other_files_is_refused_unless_overwrite) {
    char dir[] = "/tmp/pd_run_output_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[512], out[512], args[2048], notes[600], frame[600];
    char* err = NULL;
    snprintf(scene, sizeof scene, "%s/ball.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene, BALL_SCENE(1, ""));
    PD_REQUIRE(mkdir(out, 0777) == 0);
    snprintf(notes, sizeof notes, "%s/notes.txt", out);
    snprintf(frame, sizeof frame, "%s/frame_00000.ply", out);
    write_file(notes, "mine\n");
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet", scene, out);
    PD_CHECK(run_cli(dir, args, &err) == 2);
    PD_CHECK(err && strstr(err, "notes.txt") && strstr(err, "--overwrite"));
    free(err);
    PD_CHECK(!exists(frame)); /* nothing written */
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet --overwrite", scene, out);
    PD_CHECK(run_cli(dir, args, &err) == 0);
    free(err);
    PD_CHECK(exists(frame) && exists(notes)); /* the user's file is kept */
    /* a file where the folder should be */
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet", scene, notes);
    PD_CHECK(run_cli(dir, args, &err) == 2);
    free(err);
    remove_tree(dir);
}

PD_TEST(scene_that_is_not_a_regular_file_is_refused) {
    char dir[] = "/tmp/pd_run_output_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char args[1024], out[512];
    char* err = NULL;
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(args, sizeof args, "run /dev/zero -o '%s' --quiet", out);
    PD_CHECK(run_cli(dir, args, &err) == 2); /* at once: nothing is read from an endless device */
    PD_CHECK(err && strstr(err, "/dev/zero") && strstr(err, "regular file"));
    free(err);
    snprintf(args, sizeof args, "info /dev/zero");
    PD_CHECK(run_cli(dir, args, &err) == 2);
    free(err);
    /* a named pipe is refused without being opened (opening one waits for a writer) */
    char fifo[600], cmd[1400];
    snprintf(fifo, sizeof fifo, "%s/pipe.json", dir);
    PD_REQUIRE(mkfifo(fifo, 0600) == 0);
    snprintf(cmd, sizeof cmd, "timeout 20 '%s' run '%s' -o '%s' --quiet 2>/dev/null", PD_CLI_PATH,
             fifo, out);
    int status = system(cmd);
    PD_CHECK_NEAR(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2, 0);
    PD_CHECK(!exists(out));
    remove_tree(dir);
}

/* render on a folder whose frame claims 2e9 vertices in 200 bytes: refused at once. */
PD_TEST(render_refuses_a_frame_that_lies_about_its_size) {
    char dir[] = "/tmp/pd_run_output_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char path[600], args[1024];
    char* err = NULL;
    snprintf(path, sizeof path, "%s/frame_00000.ply", dir);
    FILE* f = fopen(path, "wb");
    PD_REQUIRE(f);
    const char* header = "ply\nformat binary_little_endian 1.0\nelement vertex 2000000000\n"
                         "property float x\nproperty float y\nproperty float z\nend_header\n";
    fputs(header, f);
    for (size_t n = strlen(header); n < 200; ++n)
        fputc(0, f);
    fclose(f);
    snprintf(args, sizeof args, "render '%s' -o '%s/p.png'", dir, dir);
    PD_CHECK(run_cli(dir, args, &err) == 1); /* reading the frame failed */
    PD_CHECK(err && strstr(err, "declares more elements than the file"));
    free(err);
    remove_tree(dir);
}

PD_TEST(threads_state_and_keep_their_range) {
    char dir[] = "/tmp/pd_run_output_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[512], out[512], args[2048];
    char* err = NULL;
    snprintf(scene, sizeof scene, "%s/ball.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene, BALL_SCENE(1, ""));
    const char* bad[] = {"0", "1025", "-2", "many"};
    for (int i = 0; i < 4; ++i) {
        snprintf(args, sizeof args, "run '%s' -o '%s' --quiet --threads %s", scene, out, bad[i]);
        PD_CHECK(run_cli(dir, args, &err) == 2);
        PD_CHECK(err && strstr(err, "1 to 1024"));
        free(err);
    }
    PD_CHECK(!exists(out));
    char help[600], cmd[1024];
    snprintf(help, sizeof help, "%s/help.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' run --help > '%s'", PD_CLI_PATH, help);
    PD_CHECK(system(cmd) == 0);
    char* text = read_text(help);
    PD_CHECK(text && strstr(text, "--threads N     worker threads, 1 to 1024"));
    free(text);
    remove_tree(dir);
}

/* He 2017's solver on a ball spun at 1e153 rad/s: the bonds' energy overflows in the first step
 * and the residual is NaN. The run stops with exit 1 and says when; frame 0 stays valid. */
PD_TEST(nan_in_the_solver_stops_the_run_with_exit_1) {
    char dir[] = "/tmp/pd_run_output_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[512], out[512], args[2048], path[600];
    char* err = NULL;
    snprintf(scene, sizeof scene, "%s/spin.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene, BALL_SCENE(4, ",\"angular_velocity\":[0,0,1e153]"));
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet", scene, out);
    PD_CHECK(run_cli(dir, args, &err) == 1);
    PD_CHECK(err && strstr(err, "t = 0.01 s") && strstr(err, "non-finite"));
    free(err);
    snprintf(path, sizeof path, "%s/frame_00000.ply", out);
    pd_ply_data ply;
    pd_error perr = {0};
    pd_status read = pd_read_ply(path, &ply, &perr);
    PD_CHECK(read == PD_OK);
    if (read == PD_OK)
        pd_ply_free(&ply);
    PD_CHECK_NEAR(count_frames(out), 1, 0);

    /* A pin thrown 1e150 m away at t = 0.06 s: frames 0..2 (t = 0, 0.02, 0.04) were written
     * and stay readable, with their rows in stats.csv. */
    write_file(scene, BALL_SCENE(6, ",\"pins\":[{\"region\":{\"type\":\"sphere\",\"center\":"
                                    "[0.06,0.5,0],\"radius\":0.03},\"keyframes\":[{\"t\":0},"
                                    "{\"t\":0.06},{\"t\":0.07,\"translate\":[1e150,0,0]}]}]"));
    PD_CHECK(run_cli(dir, args, &err) == 1);
    free(err);
    int frames = count_frames(out), readable = 0;
    for (int f = 0; f < frames; ++f) {
        snprintf(path, sizeof path, "%s/frame_%05d.ply", out, f);
        if (pd_read_ply(path, &ply, &perr) == PD_OK) {
            readable++;
            pd_ply_free(&ply);
        }
    }
    PD_CHECK(frames >= 2);
    PD_CHECK_NEAR(readable, frames, 0);
    snprintf(path, sizeof path, "%s/stats.csv", out);
    char* stats = read_text(path);
    int rows = 0;
    for (const char* s = stats; s && *s; ++s)
        rows += *s == '\n';
    PD_CHECK_NEAR(rows, frames + 1, 0); /* header + one row per frame written */
    free(stats);
    remove_tree(dir);
}

/* stats.csv has `energy` and `relative_error` right after `residual`, and a value a method
 * does not report is an empty field, never "nan": projective_pd reports no relative error, in
 * any row (frame 0 included, before any step), and its energy from the first step on. A pin
 * keeps its three columns after them. */
PD_TEST(stats_csv_energy_and_relative_error_columns) {
    char dir[] = "/tmp/pd_run_output_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[512], out[512], args[2048], path[600];
    char* err = NULL;
    snprintf(scene, sizeof scene, "%s/ball.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene, BALL_SCENE(3, ",\"pins\":[{\"region\":{\"type\":\"sphere\",\"center\":"
                                    "[0.06,0.5,0],\"radius\":0.03}}]"));
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet", scene, out);
    PD_CHECK(run_cli(dir, args, &err) == 0);
    free(err);
    snprintf(path, sizeof path, "%s/stats.csv", out);
    char* stats = read_text(path);
    PD_REQUIRE(stats);
    static const char k_header[] =
        "frame,time,kinetic_energy,min_x,min_y,min_z,max_x,max_y,max_z,iterations,residual,"
        "energy,relative_error,wall_ms_per_step,unconverged_steps,dt,steps,ball.pin0.force_x,"
        "ball.pin0.force_y,ball.pin0.force_z\n";
    PD_CHECK(strncmp(stats, k_header, strlen(k_header)) == 0);
    PD_CHECK(strstr(stats, "nan") == NULL);
    int rows = 0;
    char* save = NULL;
    for (char* line = strtok_r(stats, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (rows++ == 0)
            continue; /* the header */
        /* the fields of the row, empty ones kept */
        char* field[32];
        int n = 0;
        for (char* s = line; n < 32;) {
            field[n++] = s;
            s = strchr(s, ',');
            if (!s)
                break;
            *s++ = '\0';
        }
        printf("  frame %s: %d fields, energy '%s', relative_error '%s'\n", field[0], n,
               n > 12 ? field[11] : "?", n > 12 ? field[12] : "?");
        PD_CHECK_NEAR(n, 20, 0);
        if (n != 20)
            continue;
        PD_CHECK(field[12][0] == '\0'); /* relative_error: projective_pd does not report it */
        if (rows == 2)
            PD_CHECK(field[11][0] == '\0'); /* frame 0: no step, no energy */
        else
            PD_CHECK(field[11][0] != '\0' && isfinite(strtod(field[11], NULL)));
        PD_CHECK(field[13][0] != '\0'); /* wall_ms_per_step still in its place */
    }
    PD_CHECK_NEAR(rows, 5, 0); /* header + frames 0..3 */
    free(stats);
    remove_tree(dir);
}
