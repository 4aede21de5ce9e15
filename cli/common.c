#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "folder_lock.h"
#include "frames_pvd.h"

pd_status pd_cli_fail(pd_error* err, pd_status status, const char* fmt, ...) {
    if (!err)
        return status;
    err->path[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

void pd_cli_print_error(const char* command, const pd_error* err, pd_status st) {
    fprintf(stderr, "peridot %s: ", command);
    if (err->file[0])
        fprintf(stderr, "%s", err->file);
    if (err->line > 0)
        fprintf(stderr, ":%d", err->line);
    if (err->file[0])
        fprintf(stderr, ": ");
    if (err->path[0])
        fprintf(stderr, "%s: ", err->path);
    fprintf(stderr, "%s\n", err->message[0] ? err->message : pd_status_string(st));
}

static int parse_int(const char* text, int lo, int* out) {
    char* end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > 1000000000)
        return 0;
    *out = (int)v;
    return 1;
}

int pd_cli_parse_scene_args(int argc, char** argv, pd_cli_scene_args* a, const char* usage) {
    memset(a, 0, sizeof *a);
    a->command = argc > 0 ? argv[0] : "run";
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        const char* next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            fputs(usage, stdout);
            return -1;
        } else if (!strcmp(arg, "--quiet") || !strcmp(arg, "-q")) {
            a->quiet = 1;
        } else if ((!strcmp(arg, "-o") || !strcmp(arg, "--output")) && next) {
            a->out_dir = next, ++i;
        } else if (!strcmp(arg, "--frames") && next) {
            if (!parse_int(next, 1, &a->frames)) {
                fprintf(stderr,
                        "peridot %s: --frames expects an integer from 1 to 1000000000, got "
                        "'%s'\n",
                        argv[0], next);
                return 2;
            }
            ++i;
        } else if (!strcmp(arg, "--overwrite")) {
            a->overwrite = 1;
        } else if (!strcmp(arg, "--threads") && next) {
            if (!parse_int(next, 1, &a->threads) || a->threads > PD_CLI_MAX_THREADS) {
                fprintf(stderr, "peridot %s: --threads expects an integer from 1 to %d, got '%s'\n",
                        argv[0], PD_CLI_MAX_THREADS, next);
                return 2;
            }
            ++i;
        } else if (!strcmp(arg, "--set") && next && strchr(next, '=')) {
            if (a->set_count == PD_CLI_MAX_SETS) {
                fprintf(stderr, "peridot %s: at most %d --set options\n", argv[0], PD_CLI_MAX_SETS);
                return 2;
            }
            a->sets[a->set_count++] = next, ++i;
        } else if (!strcmp(arg, "--resume") && next && !strcmp(a->command, "run")) {
            a->resume = next, ++i;
        } else if (arg[0] != '-' && !a->scene) {
            a->scene = arg;
        } else {
            fprintf(stderr, "peridot %s: bad argument '%s'%s\n\n%s", argv[0], arg,
                    next || arg[0] != '-' ? "" : " (missing value?)", usage);
            return 2;
        }
    }
    if (a->resume && (a->scene || a->out_dir)) {
        fprintf(stderr,
                "peridot %s: --resume DIR continues the run in DIR with the scene it wrote there "
                "(DIR/scene.resolved.json): give neither a scene nor -o\n",
                argv[0]);
        return 2;
    }
    if (a->resume) {
        snprintf(a->resume_scene, sizeof a->resume_scene, "%s/scene.resolved.json", a->resume);
        a->scene = a->resume_scene, a->out_dir = a->resume;
    }
    if (!a->scene) {
        fprintf(stderr, "peridot %s: no scene file given\n\n%s", argv[0], usage);
        return 2;
    }
    if (a->frames) {
        snprintf(a->frames_set, sizeof a->frames_set, "time.frames=%d", a->frames);
        a->sets[a->set_count++] = a->frames_set;
    }
    if (a->out_dir) {
        /* a JSON string, so that any folder name survives the override parser */
        snprintf(a->dir_set, sizeof a->dir_set, "output.dir=\"%s\"", a->out_dir);
        a->sets[a->set_count++] = a->dir_set;
    }
    return 0;
}

int pd_cli_load_scene(pd_cli_scene_args* a, pd_scene* scene) {
    pd_error err = {0};
    pd_status st = pd_scene_load(a->scene, a->sets, a->set_count, scene, &err);
    if (st != PD_OK) {
        if (!err.file[0])
            snprintf(err.file, sizeof err.file, "%s", a->scene);
        pd_cli_print_error(a->command, &err, st);
        return 2;
    }
    if (a->threads)
        scene->world.threads = a->threads;
    return 0;
}

long pd_cli_numbered(const char* name, const char* prefix, const char* ext) {
    size_t len = strlen(prefix);
    if (strncmp(name, prefix, len) != 0)
        return -1;
    size_t digits = strspn(name + len, "0123456789");
    if (digits == 0 || digits > 9 || strcmp(name + len + digits, ext) != 0)
        return -1;
    return strtol(name + len, NULL, 10);
}

/* The files a run writes into its output folder (and `render`'s default preview): a run owns
 * them, so a new run clears them first and never leaves an earlier run's frames beside its own. */
int pd_cli_is_run_output(const char* name) {
    static const char* const own[] = {"stats.csv",         "scene.resolved.json", "preview.png",
                                      PD_FOLDER_LOCK_NAME, PD_CLI_PVD_NAME,       NULL};
    size_t len = strlen(name);
    if (len > 4 && strcmp(name + len - 4, ".tmp") == 0) { /* a writer's unfinished file */
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(len - 4), name);
        return pd_cli_is_run_output(base);
    }
    for (int i = 0; own[i]; ++i)
        if (strcmp(name, own[i]) == 0)
            return 1;
    if (pd_cli_numbered(name, "checkpoint_", ".pdck") >= 0)
        return 1;
    /* peridot surface's meshes of the frames: stale once the frames are rewritten */
    if (pd_cli_numbered(name, "surface_", ".ply") >= 0 ||
        pd_cli_numbered(name, "surface_", ".obj") >= 0)
        return 1;
    if (strncmp(name, "frame_", 6) != 0)
        return 0;
    size_t digits = strspn(name + 6, "0123456789");
    if (digits == 0)
        return 0;
    const char* ext = name + 6 + digits;
    return strcmp(ext, ".ply") == 0 || strcmp(ext, ".vtk") == 0 || strcmp(ext, ".vtu") == 0;
}

/* Bytes an earlier run's files in dir take: a run removes them before it writes. */
static double reclaimable_bytes(const char* dir) {
    DIR* d = opendir(dir);
    double bytes = 0;
    char path[PD_PATH_MAX + 300];
    struct stat st;
    for (struct dirent* e; d && (e = readdir(d)) != NULL;) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (pd_cli_is_run_output(e->d_name) && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            bytes += (double)st.st_size;
    }
    if (d)
        closedir(d);
    return bytes;
}

/* Free bytes on the file system that holds dir, or its nearest existing parent; -1 unknown. */
static double free_bytes(const char* dir) {
    char at[PD_PATH_MAX];
    snprintf(at, sizeof at, "%s", dir[0] ? dir : ".");
    struct statvfs fs;
    for (int up = 0; up < 1024; ++up) {
        if (statvfs(at, &fs) == 0)
            return (double)fs.f_bavail * (double)fs.f_frsize;
        char* slash = strrchr(at, '/');
        if (!slash && strcmp(at, ".") != 0)
            snprintf(at, sizeof at, ".");
        else if (slash && slash > at)
            *slash = '\0';
        else if (slash == at && at[1])
            at[1] = '\0';
        else
            return -1;
    }
    return -1;
}

static double gib(double bytes) {
    return bytes / 1073741824.0;
}

/* Refuses (2) a scene whose output would not fit on its file system. */
static int check_output_space(const pd_scene* scene, const pd_cli_scene_args* a,
                              const pd_estimate* est) {
    double have = free_bytes(scene->output.dir);
    if (have < 0)
        return 0; /* unknown: the writes will say */
    have += reclaimable_bytes(scene->output.dir);
    if ((double)est->output_bytes <= have)
        return 0;
    fprintf(stderr,
            "peridot %s: %s: output: the run would write about %.3g GiB (%d frames of %zu "
            "particles, every %d written, and stats.csv), more than the %.3g GiB free on the file "
            "system of '%s'; write fewer frames (output.every, time.frames), fewer "
            "output.attributes, or into another folder (-o DIR)\n",
            a->command, scene->file, gib((double)est->output_bytes), scene->world.frames,
            est->particles, scene->output.every, gib(have), scene->output.dir);
    return 2;
}

int pd_cli_check_estimate(const pd_scene* scene, const pd_cli_scene_args* a, pd_estimate* est) {
    pd_error err = {0};
    pd_status st = pd_scene_estimate(scene, est, &err);
    if (st != PD_OK) {
        snprintf(err.file, sizeof err.file, "%s", scene->file);
        pd_cli_print_error(a->command, &err, st);
        return 2;
    }
    if ((st = pd_scene_check_memory(scene, est, &err)) != PD_OK) {
        snprintf(err.file, sizeof err.file, "%s", scene->file);
        pd_cli_print_error(a->command, &err, st);
        return 2;
    }
    return check_output_space(scene, a, est);
}

int pd_cli_prepare(int argc, char** argv, const char* usage, pd_cli_scene_args* a, pd_scene* scene,
                   pd_estimate* est) {
    int code = pd_cli_parse_scene_args(argc, argv, a, usage);
    if (code)
        return code;
    if ((code = pd_cli_load_scene(a, scene)) != 0)
        return code;
    if ((code = pd_cli_check_estimate(scene, a, est)) != 0)
        pd_scene_free(scene);
    return code;
}
