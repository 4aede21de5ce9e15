/* peridot run: simulate a scene, write frames, stats.csv and the resolved scene. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "checkpoints.h"
#include "common.h"
#include "folder_lock.h"
#include "frames_pvd.h"

static const char k_usage[] =
    "usage: peridot run SCENE [-o DIR] [--frames N] [--threads N] [--set KEY=VALUE]... "
    "[--quiet] [--overwrite]\n"
    "       peridot run --resume DIR [--frames N] [--threads N] [--quiet]\n"
    "\n"
    "Simulates SCENE (a JSON scene file, see docs/scene-format.md) and writes into the output\n"
    "folder: frame_00000.ply (the initial state) to frame_<N>.ply (every output.every-th frame\n"
    "and always the last; .vtk or .vtu with output.format, .vtu with frames.pvd, the time\n"
    "series ParaView opens), stats.csv (one row per frame) and scene.resolved.json (the scene\n"
    "with every default, and the version).\n"
    "\n"
    "  -o DIR          output folder (default: the scene's output.dir)\n"
    "  --frames N      simulate N frames instead of the scene's time.frames\n"
    "  --threads N     worker threads, 1 to 1024 (default: all cores)\n"
    "  --set K=V       override a scene value by its JSON path, e.g. --set solver.iterations=40\n"
    "  --quiet         print nothing but errors\n"
    "  --overwrite     run into a folder that holds other files too (they are kept)\n"
    "  --resume DIR    continue the run in DIR from its newest checkpoint_<frame>.pdck (written\n"
    "                  every output.checkpoint_every frames), with the scene it wrote there\n"
    "                  (DIR/scene.resolved.json), bit for bit as if it had not stopped; the\n"
    "                  frames after the checkpoint's are written anew; --frames N goes on to\n"
    "                  frame N\n"
    "\n"
    "A run owns its output folder: it first removes the frame_*.ply/.vtk/.vtu, frames.pvd,\n"
    "stats.csv, scene.resolved.json and preview.png of an earlier run there, so that nothing\n"
    "stale is left beside its frames; a folder holding any other file is refused unless\n"
    "--overwrite.\n"
    "While it runs it holds the folder (a lock on DIR/.peridot.lock naming its pid): a second\n"
    "run into the same folder is refused; the lock of a run that died is taken over.\n"
    "Ctrl-C (SIGINT) or SIGTERM ends the run after the current step, keeping every frame\n"
    "written; a second Ctrl-C ends it at once.\n"
    "\n"
    "Exit status: 0 done; 1 the run failed (unstable, a write failed: disk full), frames\n"
    "written so far stay valid; 2 bad scene or usage, or the folder is in use (nothing is\n"
    "written); 130 / 143 interrupted by SIGINT / SIGTERM.\n";

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
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || pd_cli_is_run_output(e->d_name))
            continue;
        if (!others++)
            snprintf(foreign, sizeof foreign, "%s", e->d_name);
    }
    closedir(d);
    long holder = pd_folder_lock_holder(dir);
    if (holder) {
        fprintf(stderr,
                "peridot run: output.dir: '%s' is in use by another peridot run (pid %ld); wait "
                "for it to end or choose another folder (-o DIR)\n",
                dir, holder);
        return 2;
    }
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
        if (!pd_cli_is_run_output(e->d_name) || !strcmp(e->d_name, PD_FOLDER_LOCK_NAME))
            continue; /* the lock is this run's own */
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

/* The signal that asked the run to stop (SIGINT, SIGTERM), or 0. The handler only records it;
 * the step loop ends the run between two steps, so every frame written stays whole. */
static volatile sig_atomic_t g_stop_signal;

static void on_stop_signal(int sig) {
    g_stop_signal = sig;
}

/* The first Ctrl-C ends the run cleanly; SA_RESETHAND makes a second one kill it at once. */
static void catch_stop_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

typedef struct run_ctx {
    pd_world* world;
    const pd_scene* scene;
    const char* dir;
    pd_record_file stats;
    char* row; /* one stats row, formatted before it is appended whole */
    size_t row_cap;
    int quiet, tty;
    double t_start, last_report;
    int first;                           /* the frame the run starts from (0, or a checkpoint's) */
    int frames, last_done, last_written; /* the frames simulated and written so far */
    uint64_t unconverged_before;         /* the world's count at the previous row */
    int frame_steps;                     /* steps the last frame took */
    pd_cli_pvd pvd;                      /* output.format "vtu": the frames in frames.pvd */
} run_ctx;

/* Appends printf output to r->row at *len (row_cap bounds every row stats_row can make). */
static void row_printf(run_ctx* r, size_t* len, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void row_printf(run_ctx* r, size_t* len, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->row + *len, r->row_cap - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = *len + (size_t)n < r->row_cap ? *len + (size_t)n : r->row_cap - 1;
}

/* ",value" with `digits` significant digits, or "," alone when the value is NaN (the method
 * does not report it): a CSV reader sees a missing value rather than "nan". */
static void optional_field(run_ctx* r, size_t* len, int digits, double value) {
    row_printf(r, len, ",");
    if (!isnan(value))
        row_printf(r, len, "%.*g", digits, value);
}

static pd_status stats_header(run_ctx* r, pd_error* err) {
    size_t len = 0;
    row_printf(r, &len,
               "frame,time,kinetic_energy,min_x,min_y,min_z,max_x,max_y,max_z,iterations,"
               "residual,energy,relative_error,wall_ms_per_step,unconverged_steps,dt,steps");
    for (int k = 0; k < pd_world_get_info(r->world).pins; ++k) {
        pd_pin_info pin = pd_world_pin(r->world, k);
        const char* body = r->scene->bodies[pin.body].name;
        for (int c = 0; c < 3; ++c)
            row_printf(r, &len, ",%s.pin%d.force_%c", body, pin.index_in_body, "xyz"[c]);
    }
    row_printf(r, &len, "\n");
    return pd_record_append(&r->stats, r->row, len, err);
}

/* One row, appended whole or not at all: a run that fails keeps every row written before. */
static pd_status stats_row(run_ctx* r, int frame, double ms_per_step, pd_error* err) {
    pd_frame_stats fs = pd_world_frame_stats(r->world);
    pd_world_info in = pd_world_get_info(r->world);
    size_t len = 0;
    row_printf(r, &len, "%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%.6g", frame, in.time,
               fs.kinetic_energy, fs.lo.x, fs.lo.y, fs.lo.z, fs.hi.x, fs.hi.y, fs.hi.z,
               in.iterations, in.residual);
    optional_field(r, &len, 9, in.energy);
    optional_field(r, &len, 6, in.relative_error);
    row_printf(r, &len, ",%.6g,%llu,%.9g,%d", ms_per_step,
               (unsigned long long)(in.unconverged_steps - r->unconverged_before), in.dt,
               frame > r->first ? r->frame_steps : 0);
    r->unconverged_before = in.unconverged_steps;
    for (int k = 0; k < in.pins; ++k) {
        pd_vec3 f = pd_world_pin(r->world, k).force;
        row_printf(r, &len, ",%.9g,%.9g,%.9g", f.x, f.y, f.z);
    }
    row_printf(r, &len, "\n");
    return pd_record_append(&r->stats, r->row, len, err);
}

/* Frames 0, every output.every-th, and always the last, so the final state is kept. */
static pd_status write_frame(run_ctx* r, int frame, pd_error* err) {
    const pd_output_def* out = &r->scene->output;
    if (frame % out->every != 0 && frame != r->frames)
        return PD_OK;
    char path[PD_PATH_MAX + 32];
    pd_status st = PD_OK;
    if (out->formats & PD_FORMAT_PLY) {
        snprintf(path, sizeof path, "%s/frame_%05d.ply", r->dir, frame);
        st = pd_world_write_frame(r->world, path, PD_FORMAT_PLY, out->attributes, err);
    }
    if (st == PD_OK && (out->formats & PD_FORMAT_VTK)) {
        snprintf(path, sizeof path, "%s/frame_%05d.vtk", r->dir, frame);
        st = pd_world_write_frame(r->world, path, PD_FORMAT_VTK, out->attributes, err);
    }
    if (st == PD_OK && (out->formats & PD_FORMAT_VTU)) {
        snprintf(path, sizeof path, "%s/frame_%05d.vtu", r->dir, frame);
        st = pd_world_write_frame(r->world, path, PD_FORMAT_VTU, out->attributes, err);
        if (st == PD_OK) /* listed once it is whole */
            st = pd_cli_pvd_add(&r->pvd, frame, pd_world_get_info(r->world).time, err);
    }
    if (st == PD_OK)
        r->last_written = frame;
    return st;
}

/* "3 h 05 min 12 s", "4 min 09 s", "17 s". */
static void format_duration(char* buf, size_t size, double seconds) {
    long long t = seconds > 0 ? (long long)(seconds + 0.5) : 0;
    if (t >= 3600)
        snprintf(buf, size, "%lld h %02lld min %02lld s", t / 3600, t / 60 % 60, t % 60);
    else if (t >= 60)
        snprintf(buf, size, "%lld min %02lld s", t / 60, t % 60);
    else
        snprintf(buf, size, "%lld s", t);
}

/* Progress after `step` of the steps of frame `frame` (step == steps_per_frame: the frame is
 * done). The ETA extrapolates the wall time per simulated step so far. */
static void progress(run_ctx* r, int frame, int step, double ms_per_step) {
    if (r->quiet)
        return;
    double now = pd_now(), elapsed = now - r->t_start;
    pd_world_info in = pd_world_get_info(r->world);
    int spf = in.steps_per_frame;
    double done = (double)(frame - 1) + (double)step / spf;
    double done_here = done - r->first; /* a resumed run times only its own frames */
    char eta[64];
    format_duration(eta, sizeof eta, done_here > 0 ? elapsed / done_here * (r->frames - done) : 0);
    char within[64] = "";
    if (step < spf)
        snprintf(within, sizeof within, " (step %d/%d of frame %d)", step, spf, frame);
    r->last_report = now;
    if (r->tty) {
        int width = 30, bar = (int)(done * width / r->frames);
        fprintf(stderr, "\r[%.*s%*s] %d/%d frames%s  %.1f ms/step  %d it  ETA %s \033[K", bar,
                "##############################", width - bar, "", step < spf ? frame - 1 : frame,
                r->frames, within, ms_per_step, in.iterations, eta);
        if (frame == r->frames && step == spf)
            fputc('\n', stderr);
    } else {
        fprintf(stderr,
                "frame %d/%d%s t=%.4f s  %.2f ms/step  iterations %d  residual %.3g  "
                "elapsed %.1f s  ETA %s\n",
                step < spf ? frame - 1 : frame, r->frames, within, in.time, ms_per_step,
                in.iterations, in.residual, elapsed, eta);
    }
}

/* Within a frame that has taken more than 2 s: the bar moves twice a second on a terminal, a
 * line every 10 s elsewhere, so a frame of millions of steps is not silent for hours. */
static void progress_within_frame(run_ctx* r, int frame, int step, double frame_start) {
    double now = pd_now();
    if (r->quiet || now - frame_start < 2.0 || now - r->last_report < (r->tty ? 0.5 : 10.0))
        return;
    progress(r, frame, step, 1e3 * (now - frame_start) / step);
}

/* Simulates one frame's steps; stops early (PD_OK) when a stop signal came. */
static pd_status step_frame(run_ctx* r, int frame, double* ms_per_step, pd_error* err) {
    double t0 = pd_now();
    int taken = 0;
    do { /* the frame's steps: time.dt "auto" may change their number at its start */
        pd_status st = pd_world_step(r->world, err);
        if (st != PD_OK)
            return st;
        if (g_stop_signal)
            return PD_OK;
        progress_within_frame(r, frame, ++taken, t0);
    } while (pd_world_get_info(r->world).step_in_frame != 0);
    r->frame_steps = taken;
    *ms_per_step = 1e3 * (pd_now() - t0) / taken;
    return PD_OK;
}

static void report_interrupt(run_ctx* r) {
    if (r->tty && !r->quiet)
        fputc('\n', stderr);
    fprintf(stderr,
            "peridot run: interrupted (%s) at frame %d (t = %.6g s); frames 0..%d in %s are "
            "complete",
            g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM", r->last_done + 1,
            pd_world_get_info(r->world).time, r->last_written, r->dir);
    if (r->last_written != r->last_done)
        fprintf(stderr, " (every %d, and stats.csv to frame %d)", r->scene->output.every,
                r->last_done);
    fputc('\n', stderr);
}

/* Says how many steps ended unconverged, if any: stats.csv alone hid them. */
static void report_unconverged(const run_ctx* r) {
    pd_world_info in = pd_world_get_info(r->world);
    if (r->quiet || in.unconverged_steps == 0)
        return;
    fprintf(stderr,
            "peridot run: %llu of %llu steps ended above tolerance, at the iteration cap (the "
            "worst at %.3g times its tolerance, t = %.6g s); stats.csv's unconverged_steps "
            "counts them per frame; more solver.iterations or a smaller time.dt converges them\n",
            (unsigned long long)in.unconverged_steps, (unsigned long long)in.steps,
            in.worst_unconverged_by, in.worst_unconverged_time);
}

/* Exit status: 0 done, 1 failed (unstable, I/O), 128 + the signal when interrupted. */
static int simulate(run_ctx* r) {
    pd_error err = {0};
    pd_status st = PD_OK;
    if (r->first == 0 && (st = write_frame(r, 0, &err)) == PD_OK)
        st = stats_row(r, 0, 0, &err);
    for (int f = r->first + 1; st == PD_OK && f <= r->frames && !g_stop_signal; ++f) {
        double ms = 0;
        st = step_frame(r, f, &ms, &err);
        if (st != PD_OK || g_stop_signal)
            break;
        if ((st = write_frame(r, f, &err)) == PD_OK && (st = stats_row(r, f, ms, &err)) == PD_OK) {
            r->last_done = f;
            if (pd_cli_write_checkpoint(r->world, r->scene, f, &err) != 0)
                st = PD_ERR_IO;
            progress(r, f, pd_world_get_info(r->world).steps_per_frame, ms);
        }
    }
    report_unconverged(r);
    if (st == PD_OK && g_stop_signal) {
        report_interrupt(r);
        return 128 + g_stop_signal;
    }
    if (st == PD_OK)
        return 0;
    if (r->tty && !r->quiet)
        fputc('\n', stderr);
    pd_cli_print_error("run", &err, st);
    if (r->last_written >= 0)
        fprintf(stderr, "peridot run: frames 0..%d written before the failure in %s stay valid\n",
                r->last_written, r->dir);
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

/* Takes the folder's lock: 0, or 2 when another run holds it (nothing was written). */
static int hold_output_dir(const char* dir, pd_folder_lock* lock, int quiet) {
    pd_error err = {0};
    long stale = 0;
    pd_status st = pd_folder_lock_take(lock, dir, &stale, &err);
    if (st != PD_OK) {
        fprintf(stderr, "peridot run: output.dir: %s\n", err.message);
        return st == PD_ERR_BUSY ? 2 : 1;
    }
    if (stale && !quiet)
        fprintf(stderr,
                "peridot run: taking over the lock of %s left by pid %ld, which ended without "
                "releasing it\n",
                dir, stale);
    return 0;
}

/* Opens stats.csv with room for its widest row (a number is at most 24 characters, a pin
 * column's name at most two names and a few more). */
static int open_stats(run_ctx* r, long long keep) {
    char path[PD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/stats.csv", r->dir);
    pd_error err = {0};
    r->row_cap = 1024 + (size_t)pd_world_get_info(r->world).pins * 3 * (2 * PD_NAME_MAX + 32);
    r->row = malloc(r->row_cap);
    pd_status st = !r->row ? PD_ERR_OUT_OF_MEMORY
                   : keep  ? pd_record_reopen(&r->stats, path, keep, &err)
                           : pd_record_open(&r->stats, path, &err);
    if (st == PD_OK && !keep)
        st = stats_header(r, &err);
    if (st == PD_OK)
        return 0;
    pd_cli_print_error("run", &err, st);
    return 1;
}

static int close_stats(run_ctx* r, int code) {
    pd_error err = {0};
    pd_status st = pd_record_close(&r->stats, &err);
    free(r->row);
    pd_cli_pvd_free(&r->pvd);
    if (st != PD_OK && code == 0) {
        pd_cli_print_error("run", &err, st);
        return 1;
    }
    return code;
}

/* A fresh run clears the folder; a resumed one reads its newest checkpoint and keeps what came
 * before it (frames.pvd listing the frames it keeps). Returns 0 with the frame to start from
 * and the bytes of stats.csv to keep. */
static int start_in_held_dir(const pd_scene* scene, pd_world* world, int resume, int* first,
                             long long* stats_keep, pd_cli_pvd* pvd) {
    *first = 0, *stats_keep = 0;
    const char* dir = scene->output.dir;
    pd_cli_pvd_start(pvd, dir);
    int code = resume ? pd_cli_resume(world, scene, first, stats_keep) : clear_run_output(dir);
    if (!code && resume && (scene->output.formats & PD_FORMAT_VTU))
        code = pd_cli_pvd_resume(pvd, dir, *first);
    return code ? code : write_resolved_scene(scene, dir);
}

static int run_in_held_dir(const pd_scene* scene, pd_world* world, int quiet, int resume) {
    const char* dir = scene->output.dir;
    int first;
    long long stats_keep;
    pd_cli_pvd pvd;
    int code = start_in_held_dir(scene, world, resume, &first, &stats_keep, &pvd);
    if (code) {
        pd_cli_pvd_free(&pvd);
        return code;
    }
    pd_world_info in = pd_world_get_info(world);
    run_ctx r = {.world = world,
                 .scene = scene,
                 .dir = dir,
                 .stats = {.fd = -1},
                 .quiet = quiet,
                 .tty = isatty(2),
                 .t_start = pd_now(),
                 .first = first,
                 .frames = scene->world.frames,
                 .last_done = first,
                 .last_written = first ? first : -1,
                 .unconverged_before = in.unconverged_steps,
                 .pvd = pvd};
    if (open_stats(&r, stats_keep) != 0)
        return close_stats(&r, 1);
    if (!quiet)
        fprintf(stderr,
                "peridot run: %s with %s, %zu particles, %d frames of %d steps (dt %.4g s) "
                "-> %s%s\n",
                scene->file, scene->method, in.particles, scene->world.frames, in.steps_per_frame,
                in.dt, dir, resume ? ", resumed from its checkpoint" : "");
    catch_stop_signals();
    return close_stats(&r, simulate(&r));
}

static int run_world(const pd_scene* scene, pd_world* world, int quiet, int resume) {
    const char* dir = scene->output.dir;
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "peridot run: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    pd_folder_lock lock;
    int code = hold_output_dir(dir, &lock, quiet);
    if (code == 0)
        code = run_in_held_dir(scene, world, quiet, resume);
    pd_folder_lock_release(&lock);
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
    /* before the long build; a resumed run keeps the folder's other files */
    code = check_output_dir(scene.output.dir, a.overwrite || a.resume);
    pd_error err = {0};
    pd_status st = code ? PD_OK : pd_create_world(&scene, &world, &err);
    if (st != PD_OK) {
        snprintf(err.file, sizeof err.file, "%s", scene.file);
        pd_cli_print_error("run", &err, st);
        code = st == PD_ERR_OUT_OF_MEMORY || st == PD_ERR_IO ? 1 : 2;
    }
    if (code == 0)
        code = run_world(&scene, world, a.quiet, a.resume != NULL);
    pd_destroy_world(world);
    pd_scene_free(&scene);
    return code;
}
