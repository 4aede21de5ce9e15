/* `peridot render` end to end: synthetic frames in, PNG (or MP4 through a stand-in ffmpeg)
 * out, read back; bad usage gives exit 2 with a message naming what is wrong. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/alloc.h"
#include "io/output.h"
#include "render/png.h"
#include "test.h"

/* A ball of radius 0.1 m on a 0.01 m lattice resting on y = 0, spinning about y, so that
 * speed varies across it; frame f is moved by f * 2 cm in x, and frame 1 is squashed to half
 * its height (the fitted camera frames any body alike, so a shifted copy would render the same
 * image and "the default is the last frame" could not be checked). */
static pd_status write_ball_frame(const char* dir, int frame) {
    enum { M = 21, CAP = M * M * M };
    static pd_vec3 pos[CAP];
    static pd_real vel[3 * CAP], density[CAP];
    size_t n = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < M; ++j)
            for (int k = 0; k < M; ++k) {
                pd_vec3 p = pd_v3((i - 10) * 0.01, (j - 10) * 0.01, (k - 10) * 0.01);
                if (pd_v3_len2(p) > 0.01)
                    continue;
                vel[3 * n] = -p.z * 5.0;
                vel[3 * n + 1] = 0.0;
                vel[3 * n + 2] = p.x * 5.0;
                density[n] = 1000.0 + 100.0 * p.y;
                double squash = frame == 1 ? 0.5 : 1.0;
                pos[n++] = pd_v3(p.x + 0.02 * frame, squash * (p.y + 0.1), p.z);
            }
    pd_field fields[2] = {{{"vx", "vy", "vz"}, 3, PD_FIELD_REAL, vel},
                          {{"density"}, 1, PD_FIELD_REAL, density}};
    char path[256];
    snprintf(path, sizeof path, "%s/frame_%05d.ply", dir, frame);
    return pd_write_ply(path, n, pos, fields, 2, NULL, NULL);
}

/* Runs `peridot <args>` through the shell (env: optional "VAR=value " prefix); stderr goes to
 * err_path. Returns the exit status, or -1 if it did not exit normally. */
static int run_cli(const char* env, const char* args, const char* err_path) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s'%s' %s >/dev/null 2>'%s'", env ? env : "", PD_CLI_PATH, args,
             err_path);
    int status = system(cmd);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    printf("  $ peridot %s -> %d\n", args, code);
    return code;
}

static int file_contains(const char* path, const char* needle) {
    char buf[4096];
    FILE* f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n)
        printf("  stderr: %s", buf);
    return strstr(buf, needle) != NULL;
}

/* Fraction of pixels that differ from the background of their row (column 0, which the
 * fitted camera leaves empty) by more than a faint shadow. */
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

typedef struct cli_dirs {
    char dir[64], err[96], empty[96];
} cli_dirs;

static int make_dirs(cli_dirs* d) {
    snprintf(d->dir, sizeof d->dir, "/tmp/pd_render_XXXXXX");
    if (!mkdtemp(d->dir))
        return 0;
    snprintf(d->err, sizeof d->err, "%s/stderr.txt", d->dir);
    snprintf(d->empty, sizeof d->empty, "%s/empty", d->dir);
    return mkdir(d->empty, 0755) == 0 && write_ball_frame(d->dir, 0) == PD_OK &&
           write_ball_frame(d->dir, 1) == PD_OK;
}

static void remove_dirs(const cli_dirs* d) {
    static const char* k_files[] = {"frame_00000.ply",
                                    "frame_00001.ply",
                                    "p.png",
                                    "preview.png",
                                    "d.png",
                                    "f0.png",
                                    "f1.png",
                                    "f0s.png",
                                    "f1d.png",
                                    "f1n.png",
                                    "fl.png",
                                    "x.gif",
                                    "empty/preview.png",
                                    "v.mp4",
                                    "bin/ffmpeg",
                                    "stderr.txt"};
    char path[256];
    for (size_t i = 0; i < sizeof k_files / sizeof k_files[0]; ++i) {
        snprintf(path, sizeof path, "%s/%s", d->dir, k_files[i]);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/bin", d->dir);
    rmdir(path);
    rmdir(d->empty);
    rmdir(d->dir);
}

static int same_file(const char* a, const char* b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        same = ca == cb;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

static void check_png(const char* path, int want_w, int want_h, double min_body) {
    int w, h;
    uint8_t* rgb;
    pd_error err;
    if (pd_read_png(path, &w, &h, &rgb, &err) != PD_OK) {
        printf("  FAIL cannot read %s: %s\n", path, err.message);
        pd_test_failures++;
        return;
    }
    PD_CHECK_NEAR(w, want_w, 0);
    PD_CHECK_NEAR(h, want_h, 0);
    double body = body_fraction(rgb, w, h);
    PD_CHECK(body > min_body);
    printf("  body covers %.1f%% of %s\n", 100.0 * body, path);
    pd_free(rgb, (size_t)w * (size_t)h * 3);
}

PD_TEST(render_writes_png_of_requested_size) {
    cli_dirs d;
    PD_REQUIRE(make_dirs(&d));
    char args[512], png[128];
    snprintf(png, sizeof png, "%s/p.png", d.dir);
    snprintf(args, sizeof args, "render %s -o %s --size 320x240", d.dir, png);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 0, 0);
    check_png(png, 320, 240, 0.02);
    /* Defaults: last frame, DIR/preview.png, 800x600, coloured by speed. */
    snprintf(args, sizeof args, "render %s", d.dir);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 0, 0);
    snprintf(png, sizeof png, "%s/preview.png", d.dir);
    check_png(png, 800, 600, 0.02);
    /* The defaults are what they say: the same bytes as frame 1 (the last) coloured by speed
     * at 800x600 asked for explicitly; and each default matters: frame 0, or frame 1 coloured
     * by density or by nothing, gives another image. */
    const struct {
        const char* args;
        const char* file;
        int same;
    } k_defaults[] = {{"--frame 1 --attribute speed --size 800x600", "f1.png", 1},
                      {"--frame last", "fl.png", 1},
                      {"--frame 0", "f0s.png", 0},
                      {"--frame 1 --attribute density", "f1d.png", 0},
                      {"--frame 1 --attribute none", "f1n.png", 0}};
    for (size_t k = 0; k < sizeof k_defaults / sizeof k_defaults[0]; ++k) {
        char other[128];
        snprintf(other, sizeof other, "%s/%s", d.dir, k_defaults[k].file);
        snprintf(args, sizeof args, "render %s %s -o %s", d.dir, k_defaults[k].args, other);
        PD_CHECK_NEAR(run_cli(NULL, args, d.err), 0, 0);
        int same = same_file(png, other);
        printf("  %s: %s the default render\n", k_defaults[k].args,
               same ? "same bytes as" : "differs from");
        PD_CHECK(same == k_defaults[k].same);
    }
    snprintf(args, sizeof args, "render %s --frame 0 --attribute density -o %s/d.png --size 64x48",
             d.dir, d.dir);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 0, 0);
    snprintf(png, sizeof png, "%s/d.png", d.dir);
    check_png(png, 64, 48, 0.02);
    snprintf(png, sizeof png, "%s/p.png.tmp", d.dir);
    PD_CHECK(access(png, F_OK) != 0);
    remove_dirs(&d);
}

PD_TEST(render_rejects_bad_input_with_exit_2) {
    cli_dirs d;
    PD_REQUIRE(make_dirs(&d));
    char args[512];
    snprintf(args, sizeof args, "render %s --attribute nosuch -o %s/p.png", d.dir, d.dir);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 2, 0);
    PD_CHECK(file_contains(d.err, "unknown attribute 'nosuch'"));
    snprintf(args, sizeof args, "render %s/missing", d.dir);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 2, 0);
    PD_CHECK(file_contains(d.err, "missing"));
    snprintf(args, sizeof args, "render %s", d.empty);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 2, 0);
    PD_CHECK(file_contains(d.err, "no frame_NNNNN.ply"));
    snprintf(args, sizeof args, "render %s --frame 7 -o %s/f0.png", d.dir, d.dir);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 2, 0);
    PD_CHECK(file_contains(d.err, "no frame 7"));
    snprintf(args, sizeof args, "render %s --size 10", d.dir);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 2, 0);
    snprintf(args, sizeof args, "render %s -o %s/x.gif", d.dir, d.dir);
    PD_CHECK_NEAR(run_cli(NULL, args, d.err), 2, 0);
    PD_CHECK_NEAR(run_cli(NULL, "render --help", d.err), 0, 0);
    /* Nothing was written by the failed runs: none of the outputs they named or defaulted
     * to, nor a temporary file left beside them. */
    static const char* k_unwritten[] = {
        "p.png", "preview.png", "f0.png", "x.gif", "empty/preview.png", "p.png.tmp", "f0.png.tmp"};
    for (size_t k = 0; k < sizeof k_unwritten / sizeof k_unwritten[0]; ++k) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", d.dir, k_unwritten[k]);
        int absent = access(path, F_OK) != 0;
        if (!absent)
            printf("  %s was written by a refused run\n", path);
        PD_CHECK(absent);
    }
    remove_dirs(&d);
}

/* A stand-in ffmpeg checks that every frame was rendered to the PNG sequence it is given and
 * writes the output named last; without one on PATH the command says what to install. */
PD_TEST(render_mp4_calls_ffmpeg_or_names_the_package) {
    cli_dirs d;
    PD_REQUIRE(make_dirs(&d));
    char args[512], env[256], path[128];
    snprintf(args, sizeof args, "render %s -o %s/v.mp4 --size 64x48", d.dir, d.dir);
    PD_CHECK_NEAR(run_cli("PATH=/nonexistent ", args, d.err), 2, 0);
    PD_CHECK(file_contains(d.err, "install the Debian package ffmpeg"));

    snprintf(path, sizeof path, "%s/bin", d.dir);
    PD_REQUIRE(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/bin/ffmpeg", d.dir);
    const char* script = "#!/bin/sh\nprev=; pat=; last=\n"
                         "for a in \"$@\"; do [ \"$prev\" = -i ] && pat=$a; prev=$a; last=$a; "
                         "done\n"
                         "d=$(dirname \"$pat\")\n"
                         "[ -s \"$d/00000.png\" ] && [ -s \"$d/00001.png\" ] || exit 3\n"
                         "[ -e \"$d/00002.png\" ] && exit 4\n"
                         "printf 'fake mp4' > \"$last\"\n";
    PD_REQUIRE(pd_write_text_atomic(path, script, strlen(script), NULL) == PD_OK);
    PD_REQUIRE(chmod(path, 0755) == 0);
    snprintf(env, sizeof env, "PATH='%s/bin':/usr/bin:/bin ", d.dir);
    PD_CHECK_NEAR(run_cli(env, args, d.err), 0, 0);
    snprintf(path, sizeof path, "%s/v.mp4", d.dir);
    char buf[16] = {0};
    FILE* f = fopen(path, "rb");
    if (f) {
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        (void)got;
        fclose(f);
    }
    PD_CHECK(strcmp(buf, "fake mp4") == 0);
    remove_dirs(&d);
}
