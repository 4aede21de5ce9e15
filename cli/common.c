#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        } else if (arg[0] != '-' && !a->scene) {
            a->scene = arg;
        } else {
            fprintf(stderr, "peridot %s: bad argument '%s'%s\n\n%s", argv[0], arg,
                    next || arg[0] != '-' ? "" : " (missing value?)", usage);
            return 2;
        }
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

static double physical_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 8e9;
}

int pd_cli_check_memory(const pd_scene* scene, pd_estimate* est) {
    pd_error err = {0};
    pd_status st = pd_scene_estimate(scene, est, &err);
    if (st != PD_OK) {
        snprintf(err.file, sizeof err.file, "%s", scene->file);
        pd_cli_print_error("run", &err, st);
        return 2;
    }
    double limit = scene->world.memory_limit_bytes ? (double)scene->world.memory_limit_bytes
                                                   : 0.8 * physical_memory();
    if ((double)est->bytes > limit) {
        fprintf(stderr,
                "peridot: %s: bodies: the scene needs about %.1f GiB for %zu particles, more than "
                "the %.1f GiB this machine can give; use a larger spacing or smaller bodies\n",
                scene->file, (double)est->bytes / 1073741824.0, est->particles,
                limit / 1073741824.0);
        return 2;
    }
    return 0;
}

int pd_cli_prepare(int argc, char** argv, const char* usage, pd_cli_scene_args* a, pd_scene* scene,
                   pd_estimate* est) {
    int code = pd_cli_parse_scene_args(argc, argv, a, usage);
    if (code)
        return code;
    if ((code = pd_cli_load_scene(a, scene)) != 0)
        return code;
    if ((code = pd_cli_check_memory(scene, est)) != 0)
        pd_scene_free(scene);
    return code;
}
