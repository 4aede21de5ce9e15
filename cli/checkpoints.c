/* peridot run's checkpoints: written every output.checkpoint_every frames, and --resume DIR,
 * which continues from the newest in DIR (world/checkpoint.h writes and reads the world). */
#define _POSIX_C_SOURCE 200809L
#include "checkpoints.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int pd_cli_write_checkpoint(const pd_world* w, const pd_scene* scene, int frame, pd_error* err) {
    int every = scene->output.checkpoint_every;
    if (every <= 0 || frame % every != 0)
        return 0;
    char path[PD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/checkpoint_%05d.pdck", scene->output.dir, frame);
    return pd_world_checkpoint_write(w, frame, pd_scene_fingerprint(scene), path, err) == PD_OK ? 0
                                                                                                : 1;
}

/* The newest checkpoint_<N>.pdck in dir into path; its N, or -1 when there is none. */
static long newest_checkpoint(const char* dir, char* path, size_t cap) {
    DIR* d = opendir(dir);
    long newest = -1;
    for (struct dirent* e; d && (e = readdir(d)) != NULL;) {
        long n = pd_cli_numbered(e->d_name, "checkpoint_", ".pdck");
        if (n > newest)
            newest = n, snprintf(path, cap, "%s/%s", dir, e->d_name);
    }
    if (d)
        closedir(d);
    return newest;
}

/* Removes the frames and checkpoints after `frame`: the interrupted run wrote them past the
 * state the resumed run starts from. */
static int remove_after(const char* dir, int frame) {
    DIR* d = opendir(dir);
    int failed = 0;
    char path[PD_PATH_MAX + 300];
    for (struct dirent* e; d && (e = readdir(d)) != NULL;) {
        long n = pd_cli_numbered(e->d_name, "frame_", ".ply");
        if (n < 0)
            n = pd_cli_numbered(e->d_name, "frame_", ".vtk");
        if (n < 0)
            n = pd_cli_numbered(e->d_name, "frame_", ".vtu");
        if (n < 0)
            n = pd_cli_numbered(e->d_name, "checkpoint_", ".pdck");
        if (n <= frame)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (remove(path) != 0 && errno != ENOENT) {
            fprintf(stderr, "peridot run: cannot remove '%s': %s\n", path, strerror(errno));
            failed = 1;
        }
    }
    if (d)
        closedir(d);
    return failed;
}

/* Bytes of stats.csv's header and rows 0..frame, or -1 when it holds fewer. */
static long long stats_bytes_through(const char* path, int frame) {
    FILE* f = fopen(path, "rb");
    if (!f)
        return -1;
    long long bytes = 0;
    int lines = 0, c;
    while (lines < frame + 2 && (c = fgetc(f)) != EOF) {
        bytes++;
        lines += c == '\n';
    }
    fclose(f);
    return lines == frame + 2 ? bytes : -1;
}

int pd_cli_resume(pd_world* w, const pd_scene* scene, int* frame, long long* stats_keep) {
    const char* dir = scene->output.dir;
    char path[PD_PATH_MAX + 300];
    if (newest_checkpoint(dir, path, sizeof path) < 0) {
        fprintf(stderr,
                "peridot run: --resume: '%s' holds no checkpoint_<frame>.pdck (a run writes them "
                "with output.checkpoint_every > 0)\n",
                dir);
        return 2;
    }
    pd_error err = {0};
    pd_status st = pd_world_checkpoint_read(w, pd_scene_fingerprint(scene), path, frame, &err);
    if (st != PD_OK) {
        fprintf(stderr, "peridot run: --resume: %s\n", err.message);
        return st == PD_ERR_BAD_SCENE || st == PD_ERR_UNSUPPORTED ? 2 : 1;
    }
    char stats[PD_PATH_MAX + 32];
    snprintf(stats, sizeof stats, "%s/stats.csv", dir);
    *stats_keep = stats_bytes_through(stats, *frame);
    if (*stats_keep < 0) {
        fprintf(stderr,
                "peridot run: --resume: %s holds fewer rows than frame %d, the frame of %s\n",
                stats, *frame, path);
        return 2;
    }
    if (*frame >= scene->world.frames) {
        fprintf(stderr,
                "peridot run: --resume: %s is of frame %d, and the run ends at frame %d: give "
                "--frames N with N > %d to go on\n",
                path, *frame, scene->world.frames, *frame);
        return 2;
    }
    return remove_after(dir, *frame);
}
