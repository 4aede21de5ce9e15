/* peridot run: simulate a scene, write frames, stats.csv and the resolved scene. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "core/timer.h"
#include "io/output.h"
#include "world/fields.h"
#include "world/world.h"

static const char k_usage[] =
    "usage: peridot run SCENE [-o DIR] [--frames N] [--threads N] [--set KEY=VALUE]... "
    "[--quiet] [--overwrite]\n"
    "\n"
    "Simulates SCENE (a JSON scene file, see docs/scene-format.md) and writes into the output\n"
    "folder: frame_00000.ply (the initial state) to frame_<N>.ply, stats.csv (one row per\n"
    "frame) and scene.resolved.json (the scene with every default, and the version).\n"
    "\n"
    "  -o DIR          output folder (default: the scene's output.dir)\n"
    "  --frames N      simulate N frames instead of the scene's time.frames\n"
    "  --threads N     worker threads, 1 to 1024 (default: all cores)\n"
    "  --set K=V       override a scene value by its JSON path, e.g. --set solver.iterations=40\n"
    "  --quiet         print nothing but errors\n"
    "  --overwrite     run into a folder that holds other files too (they are kept)\n"
    "\n"
    "A run owns its output folder: it first removes the frame_*.ply/.vtk, stats.csv,\n"
    "scene.resolved.json and preview.png of an earlier run there, so that nothing stale is\n"
    "left beside its frames; a folder holding any other file is refused unless --overwrite.\n"
    "\n"
    "Exit status: 0 done; 1 the run failed (unstable, I/O), frames written so far stay valid;\n"
    "2 bad scene or usage (nothing is written).\n";

/* The files a run writes into its output folder (and `render`'s default preview): a run owns
 * them, so a new run clears them first and never leaves an earlier run's frames beside its own. */
static int is_run_output(const char* name) {
    static const char* const own[] = {"stats.csv", "scene.resolved.json", "preview.png", NULL};
    size_t len = strlen(name);
    if (len > 4 && strcmp(name + len - 4, ".tmp") == 0) { /* a writer's unfinished file */
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(len - 4), name);
        return is_run_output(base);
    }
    for (int i = 0; own[i]; ++i)
        if (strcmp(name, own[i]) == 0)
            return 1;
    if (strncmp(name, "frame_", 6) != 0)
        return 0;
    size_t digits = strspn(name + 6, "0123456789");
    if (digits == 0)
        return 0;
    const char* ext = name + 6 + digits;
    return strcmp(ext, ".ply") == 0 || strcmp(ext, ".vtk") == 0;
}

/* Checks the output folder before anything is written: a missing folder is fine; one holding
 * files that are not a run's output is refused (exit 2) unless --overwrite. Returns 0 or 2. */
static int check_output_dir(const char* dir, int overwrite) {
    struct stat st;
    if (stat(dir, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "peridot run: output.dir: '%s' exists and is not a folder\n", dir);
        return 2;
    }
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "peridot run: output.dir: cannot read the folder '%s': %s\n", dir,
                strerror(errno));
        return 2;
    }
    char foreign[256] = "";
    int others = 0;
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || is_run_output(e->d_name))
            continue;
        if (!others++)
            snprintf(foreign, sizeof foreign, "%s", e->d_name);
    }
    closedir(d);
    if (others == 0 || overwrite)
        return 0;
    fprintf(stderr,
            "peridot run: output.dir: '%s' holds %d file%s that no peridot run wrote (for example "
            "'%s'); a run replaces the frames, stats.csv and scene.resolved.json of its folder, "
            "so choose an empty or new folder (-o DIR), or pass --overwrite to replace the run "
            "output there and keep the other files\n",
            dir, others, others == 1 ? "" : "s", foreign);
    return 2;
}

/* Removes an earlier run's output from dir, so that `render` and readers see only this run's
 * frames. Returns 0, or 1 when a file cannot be removed. */
static int clear_run_output(const char* dir) {
    DIR* d = opendir(dir);
    if (!d)
        return 0; /* not there yet */
    int failed = 0;
    char path[PD_PATH_MAX + 300];
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
        if (!is_run_output(e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (remove(path) != 0 && errno != ENOENT) {
            fprintf(stderr, "peridot run: cannot remove the earlier run's '%s': %s\n", path,
                    strerror(errno));
            failed = 1;
        }
    }
    closedir(d);
    return failed;
}

/* mkdir -p */
static int make_dirs(const char* dir) {
    char buf[PD_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char* s = buf + 1; *s; ++s) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

typedef struct run_ctx {
    pd_world* world;
    const pd_scene* scene;
    const char* dir;
    FILE* stats;
    int quiet, tty;
    double t_start;
} run_ctx;

static void stats_header(run_ctx* r) {
    fprintf(r->stats, "frame,time,kinetic_energy,min_x,min_y,min_z,max_x,max_y,max_z,iterations,"
                      "residual,energy,relative_error,wall_ms_per_step");
    for (int k = 0; k < r->world->pin_count; ++k) {
        const pd_pin* pin = &r->world->pins[k];
        const char* body = r->scene->bodies[pin->body].name;
        for (int c = 0; c < 3; ++c)
            fprintf(r->stats, ",%s.pin%d.force_%c", body, pin->index_in_body, "xyz"[c]);
    }
    fputc('\n', r->stats);
}

/* ",value" with `digits` significant digits, or "," alone when the value is NaN (the method
 * does not report it): a CSV reader sees a missing value rather than "nan". */
static void optional_field(FILE* f, int digits, double value) {
    fputc(',', f);
    if (!isnan(value))
        fprintf(f, "%.*g", digits, value);
}

static void stats_row(run_ctx* r, int frame, double ms_per_step) {
    pd_frame_stats fs = pd_world_frame_stats(r->world);
    const pd_step_stats* st = &r->world->last_stats;
    fprintf(r->stats, "%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%.6g", frame,
            (double)r->world->time, fs.kinetic_energy, fs.lo.x, fs.lo.y, fs.lo.z, fs.hi.x, fs.hi.y,
            fs.hi.z, st->iterations, st->residual);
    optional_field(r->stats, 9, st->energy);
    optional_field(r->stats, 6, st->relative_error);
    fprintf(r->stats, ",%.6g", ms_per_step);
    for (int k = 0; k < r->world->pin_count; ++k) {
        pd_vec3 f = r->world->pins[k].force;
        fprintf(r->stats, ",%.9g,%.9g,%.9g", f.x, f.y, f.z);
    }
    fputc('\n', r->stats);
    fflush(r->stats); /* a failed run keeps every row written so far */
}

static pd_status write_frame(run_ctx* r, int frame, pd_error* err) {
    const pd_output_def* out = &r->scene->output;
    if (frame % out->every != 0)
        return PD_OK;
    pd_field fields[PD_MAX_FIELDS];
    int nf = pd_world_fields(r->world, out->attributes, fields, err);
    if (nf < 0)
        return PD_ERR_UNSUPPORTED;
    char path[PD_PATH_MAX + 32];
    const pd_particles* p = &r->world->particles;
    pd_status st = PD_OK;
    if (out->formats & PD_FORMAT_PLY) {
        snprintf(path, sizeof path, "%s/frame_%05d.ply", r->dir, frame);
        st = pd_write_ply(path, p->count, p->pos, fields, nf, r->world->order, err);
    }
    if (st == PD_OK && (out->formats & PD_FORMAT_VTK)) {
        snprintf(path, sizeof path, "%s/frame_%05d.vtk", r->dir, frame);
        st = pd_write_vtk(path, p->count, p->pos, fields, nf, r->world->order, err);
    }
    return st;
}

static void progress(run_ctx* r, int frame, int frames, double ms_per_step) {
    if (r->quiet)
        return;
    double elapsed = pd_now() - r->t_start;
    double eta = frame > 0 ? elapsed / frame * (frames - frame) : 0;
    const pd_step_stats* st = &r->world->last_stats;
    if (r->tty) {
        int width = 30, done = frames ? frame * width / frames : width;
        fprintf(stderr, "\r[%.*s%*s] %d/%d frames  %.1f ms/step  %d it  ETA %02d:%02d:%02d ", done,
                "##############################", width - done, "", frame, frames, ms_per_step,
                st->iterations, (int)eta / 3600, (int)eta / 60 % 60, (int)eta % 60);
        if (frame == frames)
            fputc('\n', stderr);
    } else {
        fprintf(stderr,
                "frame %d/%d t=%.4f s  %.2f ms/step  iterations %d  residual %.3g  "
                "elapsed %.1f s  ETA %.0f s\n",
                frame, frames, (double)r->world->time, ms_per_step, st->iterations, st->residual,
                elapsed, eta);
    }
}

static int simulate(run_ctx* r) {
    pd_error err = {0};
    int frames = r->scene->world.frames;
    pd_status st = write_frame(r, 0, &err);
    if (st == PD_OK)
        stats_row(r, 0, 0);
    for (int f = 1; st == PD_OK && f <= frames; ++f) {
        double t0 = pd_now();
        for (int s = 0; st == PD_OK && s < r->world->steps_per_frame; ++s)
            st = pd_world_step(r->world, &err);
        double ms = 1e3 * (pd_now() - t0) / r->world->steps_per_frame;
        if (st == PD_OK)
            st = write_frame(r, f, &err);
        if (st == PD_OK) {
            stats_row(r, f, ms);
            progress(r, f, frames, ms);
        }
    }
    if (st == PD_OK)
        return 0;
    if (r->tty && !r->quiet)
        fputc('\n', stderr);
    pd_cli_print_error("run", &err, st);
    fprintf(stderr, "peridot run: frames written before the failure in %s stay valid\n", r->dir);
    return 1;
}

static int write_resolved_scene(const pd_scene* scene, const char* dir) {
    char path[PD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/scene.resolved.json", dir);
    pd_error err = {0};
    const char* text = scene->resolved_json ? scene->resolved_json : "{}\n";
    pd_status st = pd_write_text_atomic(path, text, strlen(text), &err);
    if (st != PD_OK)
        pd_cli_print_error("run", &err, st);
    return st == PD_OK ? 0 : 1;
}

static int run_world(const pd_scene* scene, pd_world* world, int quiet) {
    const char* dir = scene->output.dir;
    if (clear_run_output(dir) != 0)
        return 1;
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "peridot run: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (write_resolved_scene(scene, dir) != 0)
        return 1;
    char path[PD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    run_ctx r = {world, scene, dir, fopen(path, "w"), quiet, isatty(2), pd_now()};
    if (!r.stats) {
        fprintf(stderr, "peridot run: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    stats_header(&r);
    if (!quiet)
        fprintf(stderr,
                "peridot run: %s with %s, %zu particles, %d frames of %d steps (dt %.4g s) "
                "-> %s\n",
                scene->file, scene->method, world->particles.count, scene->world.frames,
                world->steps_per_frame, (double)world->def.dt, dir);
    int code = simulate(&r);
    fclose(r.stats);
    return code;
}

int pd_cli_run(int argc, char** argv) {
    pd_cli_scene_args a;
    pd_scene scene;
    pd_estimate est;
    int code = pd_cli_prepare(argc, argv, k_usage, &a, &scene, &est);
    if (code)
        return code < 0 ? 0 : code;
    pd_world* world = NULL;
    pd_error err = {0};
    pd_status st = pd_create_world(&scene, &world, &err);
    if (st != PD_OK) {
        snprintf(err.file, sizeof err.file, "%s", scene.file);
        pd_cli_print_error("run", &err, st);
        code = st == PD_ERR_OUT_OF_MEMORY || st == PD_ERR_IO ? 1 : 2;
    }
    if (code == 0)
        code = check_output_dir(scene.output.dir, a.overwrite);
    if (code == 0)
        code = run_world(&scene, world, a.quiet);
    pd_destroy_world(world);
    pd_scene_free(&scene);
    return code;
}
