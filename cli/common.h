/* What the subcommands share: loading a scene with command-line overrides and reporting
 * errors as "file: path: message". */
#ifndef PD_CLI_COMMON_H
#define PD_CLI_COMMON_H

#include "peridot/peridot.h"

#define PD_CLI_MAX_SETS 64
/* --threads accepts 1 to this many. */
#define PD_CLI_MAX_THREADS 1024

typedef struct pd_cli_scene_args {
    const char* command; /* "run" or "info", for messages */
    const char* scene;
    const char* out_dir; /* -o */
    int frames;          /* --frames, 0: scene's */
    int threads;         /* --threads, 0: default */
    int quiet;
    int overwrite;      /* --overwrite (run) */
    const char* resume; /* --resume DIR (run) */
    char resume_scene[PD_PATH_MAX + 32];
    int set_count;
    const char* sets[PD_CLI_MAX_SETS + 2];
    char frames_set[64], dir_set[PD_PATH_MAX + 32];
} pd_cli_scene_args;

/* Parses the options shared by run/info. Returns 0, or the exit code for a usage error
 * (after printing it), or -1 when --help was printed. */
int pd_cli_parse_scene_args(int argc, char** argv, pd_cli_scene_args* a, const char* usage);

/* Loads the scene with the overrides; on error prints it and returns 2 (or 1 for I/O). */
int pd_cli_load_scene(pd_cli_scene_args* a, pd_scene* scene);

/* Fills err with a printf-style message (no JSON path) and returns status. */
pd_status pd_cli_fail(pd_error* err, pd_status status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

void pd_cli_print_error(const char* command, const pd_error* err, pd_status st);
/* Estimates the scene and refuses (exit 2) one that needs more memory than this process may
 * use (physical memory, ulimit -v, its cgroup) or writes more than its output's file system
 * holds free. */
int pd_cli_check_estimate(const pd_scene* scene, const pd_cli_scene_args* a, pd_estimate* est);

/* Whether `name` is a file a run writes into its output folder (frame_*.ply/.vtk/.vtu,
 * surface_*.ply/.obj, frames.pvd, stats.csv, scene.resolved.json, render's preview.png, the lock,
 * and their .tmp). */
int pd_cli_is_run_output(const char* name);
/* N of a file named <prefix>N<ext> (frame_00012.ply, checkpoint_00040.pdck), or -1. */
long pd_cli_numbered(const char* name, const char* prefix, const char* ext);

/* Options, scene and memory estimate, as run and info both start. Returns 0 with *scene
 * loaded (free it), -1 after --help, or the exit code of a failure (nothing to free). */
int pd_cli_prepare(int argc, char** argv, const char* usage, pd_cli_scene_args* a, pd_scene* scene,
                   pd_estimate* est);

#endif
