/* A render that tells the truth (issue 35, item 4), through `peridot render` and read back from
 * its pixels: a falling body's frames that differ (the ground and the shadow show the height),
 * a body that still fills the image beside one far outlier, one colour range for a whole
 * movie, and the movie's frame rate (the scene's, or --fps) handed to ffmpeg, and read back
 * with ffprobe. Synthetic frames and scenes: no simulation runs here.
 * The colliders' and the legend's pixels: tests/unit/render_colliders.c. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_support.h"
#include "core/alloc.h"
#include "io/output.h"
#include "peridot/render.h"
#include "render/png.h"
#include "lattice_ball.h"
#include "test.h"

/* ---- through the command line ---- */

typedef struct run_dir {
    char path[64];
} run_dir;

static int make_run_dir(run_dir* d) {
    snprintf(d->path, sizeof d->path, "/tmp/pd_render_truth_XXXXXX");
    return mkdtemp(d->path) != NULL;
}

static void remove_run_dir(const run_dir* d) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->path);
    if (system(cmd) != 0)
        printf("  could not remove %s\n", d->path);
}

/* frame_<index>.ply of the ball about `centre`, with velocity (vy = -v) and, when `outlier`,
 * one more particle 100 m away. */
static int write_frame(const char* dir, int index, pd_vec3 centre, double v, int outlier) {
    static float x[k_ball_cap + 1], y[k_ball_cap + 1], z[k_ball_cap + 1];
    static pd_vec3 pos[k_ball_cap + 1];
    static pd_real vel[3 * (k_ball_cap + 1)];
    size_t n = ball(centre, x, y, z);
    if (outlier) {
        x[n] = y[n] = z[n] = 100.0f;
        ++n;
    }
    for (size_t i = 0; i < n; ++i) {
        pos[i] = pd_v3(x[i], y[i], z[i]);
        vel[3 * i] = 0.1 * (double)x[i]; /* speed varies across the ball */
        vel[3 * i + 1] = -v;
        vel[3 * i + 2] = 0;
    }
    pd_field fields[1] = {{{"vx", "vy", "vz"}, 3, PD_FIELD_REAL, vel}};
    char path[128];
    snprintf(path, sizeof path, "%s/frame_%05d.ply", dir, index);
    return pd_write_ply(path, n, pos, fields, 1, NULL, NULL) == PD_OK;
}

/* A scene as `peridot run` leaves it beside its frames: a ground plane, time.fps 24 and
 * output.every 2. */
static void write_scene(const char* dir) {
    char path[128];
    snprintf(path, sizeof path, "%s/scene.resolved.json", dir);
    write_file(path, "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.01,\"fps\":24,"
                     "\"frames\":2},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
                     "\"poisson_ratio\":0.3}},\"bodies\":[{\"name\":\"ball\",\"material\":\"m\","
                     "\"spacing\":0.02,\"shape\":{\"type\":\"sphere\",\"center\":[0,0.6,0],"
                     "\"radius\":0.1}}],\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"
                     "\"normal\":[0,1,0]}],\"output\":{\"every\":2}}\n");
}

static uint8_t* read_png(const char* path, int* w, int* h) {
    uint8_t* rgb = NULL;
    pd_error err;
    if (pd_read_png(path, w, h, &rgb, &err) != PD_OK) {
        printf("  cannot read %s: %s\n", path, err.message);
        return NULL;
    }
    return rgb;
}

static double differing_fraction(const uint8_t* a, const uint8_t* b, int w, int h) {
    size_t differ = 0;
    for (size_t i = 0; i < (size_t)w * (size_t)h; ++i)
        differ += abs(a[3 * i] - b[3 * i]) + abs(a[3 * i + 1] - b[3 * i + 1]) +
                      abs(a[3 * i + 2] - b[3 * i + 2]) >
                  30;
    return (double)differ / ((double)w * (double)h);
}

/* Rendered on their own, the frames of a ball falling onto the ground differ: the ground and
 * the shadow below show the height (a renderer that fits each frame and puts the shadow under
 * the lowest particle draws a translated body identically). */
PD_TEST(render_falling_body_frames_differ) {
    run_dir d;
    PD_REQUIRE(make_run_dir(&d));
    write_scene(d.path);
    PD_REQUIRE(write_frame(d.path, 0, pd_v3(0, 0.6, 0), 0, 0));
    PD_REQUIRE(write_frame(d.path, 2, pd_v3(0, 0.105, 0), 0, 0));
    char args[512], *err = NULL;
    int w0, h0, w1, h1;
    snprintf(args, sizeof args, "render %s --frame 0 --attribute none --size 320x240 -o %s/a.png",
             d.path, d.path);
    PD_CHECK_NEAR(run_cli(d.path, args, &err), 0, 0);
    free(err);
    snprintf(args, sizeof args, "render %s --frame 2 --attribute none --size 320x240 -o %s/b.png",
             d.path, d.path);
    PD_CHECK_NEAR(run_cli(d.path, args, &err), 0, 0);
    free(err);
    char a_path[128], b_path[128];
    snprintf(a_path, sizeof a_path, "%s/a.png", d.path);
    snprintf(b_path, sizeof b_path, "%s/b.png", d.path);
    uint8_t *a = read_png(a_path, &w0, &h0), *b = read_png(b_path, &w1, &h1);
    PD_REQUIRE(a && b && w0 == w1 && h0 == h1);
    double differ = differing_fraction(a, b, w0, h0);
    printf("  falling ball at 0.6 m and at rest on the ground: %.1f%% of the pixels differ\n",
           100 * differ);
    PD_CHECK(differ > 0.10);
    pd_free(a, (size_t)w0 * (size_t)h0 * 3);
    pd_free(b, (size_t)w1 * (size_t)h1 * 3);
    remove_run_dir(&d);
}

/* Fraction of the pixels that differ from the background of their row (column 0). */
static double body_fraction(const uint8_t* rgb, int w, int h) {
    size_t body = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const uint8_t* p = rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
            const uint8_t* bg = rgb + 3 * ((size_t)y * (size_t)w);
            body += abs(p[0] - bg[0]) + abs(p[1] - bg[1]) + abs(p[2] - bg[2]) > 60;
        }
    return (double)body / ((double)w * (double)h);
}

/* `peridot render ARGS`'s stdout (free it), its exit status in *code. */
static char* render_stdout(const char* dir, const char* args, int* code) {
    char cmd[1024], out[128];
    snprintf(out, sizeof out, "%s/stdout.txt", dir);
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 '%s' %s >'%s' 2>/dev/null", PD_CLI_PATH, args,
             out);
    int status = system(cmd);
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    char* text = read_text(out);
    remove(out);
    printf("  peridot %s -> %d: %s", args, *code, text ? text : "(no output)\n");
    return text;
}

/* One particle 100 m away from a 0.2 m ball: the ball still covers about what it covers alone,
 * the outlier is reported, and its speed is left out of the colour range. */
PD_TEST(render_outlier_frame_still_shows_the_body) {
    run_dir d;
    PD_REQUIRE(make_run_dir(&d));
    PD_REQUIRE(write_frame(d.path, 0, pd_v3(0, 0.5, 0), 0, 0));
    PD_REQUIRE(write_frame(d.path, 1, pd_v3(0, 0.5, 0), 0, 1));
    char args[512], *err = NULL, path[2][128];
    double cover[2];
    for (int f = 0; f < 2; ++f) {
        snprintf(path[f], sizeof path[f], "%s/o%d.png", d.path, f);
        snprintf(args, sizeof args, "render %s --frame %d --attribute none --size 320x240 -o %s",
                 d.path, f, path[f]);
        PD_CHECK_NEAR(run_cli(d.path, args, &err), 0, 0);
        if (f == 1)
            PD_CHECK(err && strstr(err, "1 particle lies outside the view"));
        free(err);
        int w, h;
        uint8_t* rgb = read_png(path[f], &w, &h);
        PD_REQUIRE(rgb);
        cover[f] = body_fraction(rgb, w, h);
        pd_free(rgb, (size_t)w * (size_t)h * 3);
    }
    printf("  the ball covers %.1f%% alone, %.1f%% beside a particle 100 m away\n", 100 * cover[0],
           100 * cover[1]);
    PD_CHECK(cover[0] > 0.30);
    PD_CHECK(cover[1] > 0.9 * cover[0]);
    /* The colours span the ball's speeds (0 to 0.01 m/s), not the outlier's 10 m/s. */
    int code;
    snprintf(args, sizeof args, "render %s --frame 1 --size 160x120 -o %s", d.path, path[1]);
    char* text = render_stdout(d.path, args, &code);
    PD_CHECK_NEAR(code, 0, 0);
    PD_CHECK(text && strstr(text, "colour: speed 0..0.01)"));
    free(text);
    remove_run_dir(&d);
}

/* A stand-in ffmpeg that writes its arguments to DIR/ffmpeg_args.txt, keeps the first and last
 * PNG it is given (first.png, last.png) and writes the output named last. */
static void write_fake_ffmpeg(const char* dir) {
    char path[160], script[1024];
    snprintf(path, sizeof path, "%s/bin", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/bin/ffmpeg", dir);
    snprintf(script, sizeof script,
             "#!/bin/sh\necho \"$@\" > '%s/ffmpeg_args.txt'\nprev=; pat=; last=\n"
             "for a in \"$@\"; do [ \"$prev\" = -i ] && pat=$a; prev=$a; last=$a; done\n"
             "d=$(dirname \"$pat\")\ncp \"$d/00000.png\" '%s/first.png'\n"
             "cp $(ls \"$d\"/*.png | tail -n 1) '%s/last.png'\nprintf 'fake mp4' > \"$last\"\n",
             dir, dir, dir);
    write_file(path, script);
    chmod(path, 0755);
}

/* The frame rate ffmpeg was told: the value after -framerate in the stand-in's record. */
static double recorded_fps(const char* dir) {
    char path[160];
    snprintf(path, sizeof path, "%s/ffmpeg_args.txt", dir);
    char* text = read_text(path);
    const char* at = text ? strstr(text, "-framerate ") : NULL;
    double fps = at ? atof(at + strlen("-framerate ")) : -1;
    free(text);
    remove(path);
    return fps;
}

/* Legend pixels (the right third) that differ between two images. */
static size_t legend_differences(const uint8_t* a, const uint8_t* b, int w, int h) {
    size_t differ = 0;
    for (int y = 0; y < h; ++y)
        for (int x = w - w / 3; x < w; ++x)
            for (int c = 0; c < 3; ++c) {
                size_t k = 3 * ((size_t)y * (size_t)w + (size_t)x) + (size_t)c;
                differ += a[k] != b[k];
            }
    return differ;
}

/* The movie: at the scene's time.fps / output.every (24 / 2), or --fps; one colour range for
 * all frames (the first and last frame's legends are the same pixels though the speed doubles);
 * with a real ffmpeg and ffprobe the frame rate is read back from the MP4. */
PD_TEST(render_movie_fps_and_one_range) {
    run_dir d;
    PD_REQUIRE(make_run_dir(&d));
    write_scene(d.path);
    write_fake_ffmpeg(d.path);
    PD_REQUIRE(write_frame(d.path, 0, pd_v3(0, 0.6, 0), 1.0, 0));
    PD_REQUIRE(write_frame(d.path, 2, pd_v3(0, 0.4, 0), 2.0, 0));
    char args[512], *err = NULL;
    snprintf(args, sizeof args, "render %s --size 320x240 -o %s/m.mp4", d.path, d.path);
    char cmd_env[256];
    snprintf(cmd_env, sizeof cmd_env, "%s/bin:%s", d.path, getenv("PATH") ? getenv("PATH") : "");
    setenv("PATH", cmd_env, 1); /* the stand-in first */
    PD_CHECK_NEAR(run_cli(d.path, args, &err), 0, 0);
    free(err);
    double fps = recorded_fps(d.path);
    printf("  ffmpeg was told %g fps (scene: 24 fps, every 2nd frame written)\n", fps);
    PD_CHECK_NEAR(fps, 12.0, 1e-9);
    char first[128], last[128];
    snprintf(first, sizeof first, "%s/first.png", d.path);
    snprintf(last, sizeof last, "%s/last.png", d.path);
    int w0, h0, w1, h1;
    uint8_t *a = read_png(first, &w0, &h0), *b = read_png(last, &w1, &h1);
    PD_REQUIRE(a && b && w0 == w1 && h0 == h1);
    size_t legend = legend_differences(a, b, w0, h0);
    double body = differing_fraction(a, b, w0, h0);
    printf("  first and last movie frame: %zu legend values differ, %.1f%% of pixels differ\n",
           legend, 100 * body);
    PD_CHECK_NEAR((double)legend, 0, 0);
    PD_CHECK(body > 0.02);
    pd_free(a, (size_t)w0 * (size_t)h0 * 3);
    pd_free(b, (size_t)w1 * (size_t)h1 * 3);
    snprintf(args, sizeof args, "render %s --size 320x240 --fps 50 -o %s/m.mp4", d.path, d.path);
    PD_CHECK_NEAR(run_cli(d.path, args, &err), 0, 0);
    free(err);
    fps = recorded_fps(d.path);
    printf("  with --fps 50 ffmpeg was told %g fps\n", fps);
    PD_CHECK_NEAR(fps, 50.0, 1e-9);
    setenv("PATH", cmd_env + strlen(d.path) + strlen("/bin:"), 1);
    remove_run_dir(&d);
}

/* The MP4 itself is read back with ffprobe: its frame rate is the scene's 24 / 2. ffmpeg is
 * optional for users (a movie needs it) and installed for the tests (`scripts/setup.sh test`). */
PD_TEST(render_movie_fps_read_back_with_ffprobe) {
    if (system("command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1") != 0) {
        printf("  FAIL ffmpeg or ffprobe not installed: `bash scripts/setup.sh test` installs "
               "them\n");
        pd_test_failures++;
        return;
    }
    run_dir d;
    PD_REQUIRE(make_run_dir(&d));
    write_scene(d.path);
    for (int f = 0; f <= 4; f += 2)
        PD_REQUIRE(write_frame(d.path, f, pd_v3(0, 0.6 - 0.1 * f, 0), 1.0, 0));
    char args[512], *err = NULL, cmd[512];
    snprintf(args, sizeof args, "render %s --size 160x120 -o %s/m.mp4", d.path, d.path);
    PD_CHECK_NEAR(run_cli(d.path, args, &err), 0, 0);
    free(err);
    snprintf(cmd, sizeof cmd,
             "ffprobe -v error -select_streams v:0 -show_entries stream=r_frame_rate -of "
             "csv=p=0 '%s/m.mp4' > '%s/rate.txt'",
             d.path, d.path);
    PD_CHECK_NEAR(system(cmd), 0, 0);
    char path[128];
    snprintf(path, sizeof path, "%s/rate.txt", d.path);
    char* text = read_text(path);
    int num = 0, den = 1;
    PD_CHECK(text && sscanf(text, "%d/%d", &num, &den) == 2 && den > 0);
    printf("  ffprobe reads r_frame_rate %s", text ? text : "(nothing)\n");
    PD_CHECK_NEAR((double)num / den, 12.0, 1e-6);
    free(text);
    remove_run_dir(&d);
}

/* A sphere collider moving at 0.4 m/s is posed at the frame's time from stats.csv (0.5 s for
 * frame 2 here), else at frame / time.fps (2 / 24 s): the two renders say so and differ. */
PD_TEST(render_poses_colliders_at_the_time_stats_csv_gives) {
    run_dir d;
    PD_REQUIRE(make_run_dir(&d));
    char path[128];
    snprintf(path, sizeof path, "%s/scene.resolved.json", d.path);
    write_file(path, "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.01,\"fps\":24,"
                     "\"frames\":2},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
                     "\"poisson_ratio\":0.3}},\"bodies\":[{\"name\":\"ball\",\"material\":\"m\","
                     "\"spacing\":0.02,\"shape\":{\"type\":\"sphere\",\"center\":[0,0.6,0],"
                     "\"radius\":0.1}}],\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],"
                     "\"normal\":[0,1,0]},{\"type\":\"sphere\","
                     "\"center\":[-0.1,0.1,0.1],\"radius\":0.08,\"velocity\":[0.4,0,0]}]}\n");
    PD_REQUIRE(write_frame(d.path, 2, pd_v3(0, 0.4, 0), 0, 0));
    char args[512], png[2][128];
    int code;
    for (int k = 0; k < 2; ++k) {
        if (k == 0) {
            snprintf(path, sizeof path, "%s/stats.csv", d.path);
            write_file(path, "frame,time,kinetic_energy\n0,0,0\n2,0.5,0\n");
        } else {
            remove(path);
        }
        snprintf(png[k], sizeof png[k], "%s/t%d.png", d.path, k);
        snprintf(args, sizeof args, "render %s --attribute none --size 160x120 -o %s", d.path,
                 png[k]);
        char* text = render_stdout(d.path, args, &code);
        PD_CHECK_NEAR(code, 0, 0);
        PD_CHECK(text && strstr(text, k == 0 ? "t = 0.5 s" : "t = 0.0833333 s"));
        free(text);
    }
    int w0, h0, w1, h1;
    uint8_t *a = read_png(png[0], &w0, &h0), *b = read_png(png[1], &w1, &h1);
    PD_REQUIRE(a && b && w0 == w1 && h0 == h1);
    double differ = differing_fraction(a, b, w0, h0);
    printf("  the sphere at t = 0.5 s and at t = 1/12 s: %.1f%% of the pixels differ\n",
           100 * differ);
    PD_CHECK(differ > 0.01);
    pd_free(a, (size_t)w0 * (size_t)h0 * 3);
    pd_free(b, (size_t)w1 * (size_t)h1 * 3);
    remove_run_dir(&d);
}

/* A range or frame rate that cannot be used is refused (exit 2), naming the option. */
PD_TEST(render_refuses_a_bad_range_or_fps) {
    run_dir d;
    PD_REQUIRE(make_run_dir(&d));
    PD_REQUIRE(write_frame(d.path, 0, pd_v3(0, 0.5, 0), 0, 0));
    static const char* k_bad[] = {"--range 5:1", "--range 1", "--range nan:2",
                                  "--fps 0",     "--fps x",   "--fps 2000"};
    for (size_t k = 0; k < sizeof k_bad / sizeof k_bad[0]; ++k) {
        char args[512], *err = NULL;
        snprintf(args, sizeof args, "render %s %s -o %s/p.png", d.path, k_bad[k], d.path);
        PD_CHECK_NEAR(run_cli(d.path, args, &err), 2, 0);
        char option[16];
        snprintf(option, sizeof option, "%.7s", k_bad[k]); /* "--range" or "--fps x" */
        option[strcspn(option, " ")] = '\0';
        PD_CHECK(err && strstr(err, option));
        free(err);
    }
    char png[128];
    snprintf(png, sizeof png, "%s/p.png", d.path);
    PD_CHECK(access(png, F_OK) != 0);
    remove_run_dir(&d);
}
