/* `peridot render DIR`: turns the frame_NNNNN.ply files of a run (SCENE.md, "Output") into a
 * PNG of one frame, or into an MP4 of all of them through the ffmpeg program, with the run's
 * colliders (from DIR/scene.resolved.json, posed at each frame's time from DIR/stats.csv) and a
 * legend of the colours. Exit status: 0 ok, 2 usage / missing directory / no frames / unknown
 * attribute / no ffmpeg, 1 when reading a frame or writing the image fails. */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "peridot/peridot.h"

/* Room for the temporary frame directory ($TMPDIR/peridot-render-XXXXXX). */
#define PD_TEMP_DIR_MAX 512

typedef struct render_args {
    const char* dir;
    const char* out;       /* NULL: DIR/preview.png */
    long frame;            /* -1: the last one */
    const char* attribute; /* NULL: speed when the frames have velocity, else none */
    int width, height;
    int has_range; /* --range MIN:MAX given */
    float range_min, range_max;
    double fps; /* --fps; 0: the scene's */
} render_args;

typedef struct frame_list {
    long* index; /* ascending frame numbers */
    size_t count, cap;
} frame_list;

static void usage(FILE* f) {
    fprintf(f,
            "usage: peridot render DIR [-o OUT] [--frame N|last] [--attribute NAME]\n"
            "                      [--range MIN:MAX] [--fps F] [--size WxH]\n"
            "\n"
            "Renders the particle frames DIR/frame_NNNNN.ply written by 'peridot run', with the\n"
            "run's colliders (read from DIR/scene.resolved.json, posed at each frame's time from\n"
            "DIR/stats.csv; left out, saying why, when the scene cannot be read): a plane as a\n"
            "ground with a grid, boxes, spheres, cylinders and meshes (a container shows its\n"
            "far walls). The particles cast a shadow from a light straight above onto the\n"
            "colliders below them. A legend gives the colour's attribute, unit and range.\n"
            "The camera fits the particles' 1st-99th percentile box, grown by half its size\n"
            "and reaching down to the collider below, so that a few far particles cannot\n"
            "shrink the body to a dot; particles left outside are counted on stderr and on\n"
            "the image.\n"
            "\n"
            "  -o OUT            OUT.png: one frame (default DIR/preview.png);\n"
            "                    OUT.mp4: every frame (needs the ffmpeg program), seen from one\n"
            "                    place and coloured over one range for the whole movie\n"
            "  --frame N|last    frame to render into a PNG (default last)\n"
            "  --attribute NAME  colour by a PLY property (density, id, vx, ...), by 'speed'\n"
            "                    (|vx vy vz|), or 'none' for one colour; default speed when the\n"
            "                    frames have velocity, else none\n"
            "  --range MIN:MAX   colour range (default: the range over the particles in view,\n"
            "                    of the frame, or of all frames for a movie); values beyond\n"
            "                    take the end colours\n"
            "  --fps F           movie frame rate (default the scene's time.fps divided by\n"
            "                    output.every, so the movie plays in real time; 30 without\n"
            "                    DIR/scene.resolved.json)\n"
            "  --size WxH        image size in pixels (default 800x600)\n"
            "  --help            print this help\n"
            "\n"
            "Exit status: 0 ok, 2 bad usage or input, 1 reading or writing failed.\n");
}

static int fail_usage(const char* fmt, const char* what) {
    fprintf(stderr, "peridot render: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n(see 'peridot render --help')\n");
    return 2;
}

static int parse_size(const char* s, int* w, int* h) {
    char tail;
    if (sscanf(s, "%dx%d%c", w, h, &tail) != 2)
        return 0;
    return *w >= 16 && *h >= 16 && *w <= 8192 && *h <= 8192;
}

static int parse_range(const char* s, float* lo, float* hi) {
    char tail;
    return sscanf(s, "%f:%f%c", lo, hi, &tail) == 2 && isfinite(*lo) && isfinite(*hi) && *lo < *hi;
}

static int parse_fps(const char* s, double* fps) {
    char* end;
    errno = 0;
    *fps = strtod(s, &end);
    return !errno && end != s && !*end && *fps > 0 && *fps <= 1000;
}

static int parse_frame(const char* s, long* frame) {
    if (strcmp(s, "last") == 0) {
        *frame = -1;
        return 1;
    }
    char* end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0)
        return 0;
    *frame = v;
    return 1;
}

/* Returns -1 to go on, else the exit code (0 after --help). */
static int parse_args(int argc, char** argv, render_args* a) {
    memset(a, 0, sizeof *a);
    a->frame = -1;
    a->width = 800;
    a->height = 600;
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        const char* val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        int takes_value = strcmp(arg, "-o") == 0 || strcmp(arg, "--frame") == 0 ||
                          strcmp(arg, "--attribute") == 0 || strcmp(arg, "--size") == 0 ||
                          strcmp(arg, "--range") == 0 || strcmp(arg, "--fps") == 0;
        if (takes_value && !val)
            return fail_usage("%s needs a value", arg);
        if (strcmp(arg, "-o") == 0)
            a->out = val;
        else if (strcmp(arg, "--frame") == 0) {
            if (!parse_frame(val, &a->frame))
                return fail_usage("--frame expects a frame number or 'last', not '%s'", val);
        } else if (strcmp(arg, "--attribute") == 0)
            a->attribute = val;
        else if (strcmp(arg, "--size") == 0) {
            if (!parse_size(val, &a->width, &a->height))
                return fail_usage("--size expects WxH with 16..8192 pixels each, not '%s'", val);
        } else if (strcmp(arg, "--range") == 0) {
            a->has_range = parse_range(val, &a->range_min, &a->range_max);
            if (!a->has_range)
                return fail_usage("--range expects MIN:MAX with MIN < MAX, not '%s'", val);
        } else if (strcmp(arg, "--fps") == 0) {
            if (!parse_fps(val, &a->fps))
                return fail_usage("--fps expects a frame rate in (0, 1000], not '%s'", val);
        } else if (arg[0] == '-')
            return fail_usage("unknown option '%s'", arg);
        else if (!a->dir)
            a->dir = arg;
        else
            return fail_usage("unexpected argument '%s'", arg);
        if (takes_value)
            ++i;
    }
    if (!a->dir)
        return fail_usage("%s", "missing the frame directory DIR");
    return -1;
}

static int ends_with(const char* s, const char* suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m)
        return 0;
    for (size_t i = 0; i < m; ++i)
        if (tolower((unsigned char)s[n - m + i]) != suffix[i])
            return 0;
    return 1;
}

/* ---- frames ---- */

static void frame_path(char* out, size_t cap, const char* dir, long index) {
    snprintf(out, cap, "%s/frame_%05ld.ply", dir, index);
}

/* Frame number of a file name written as frame_%05d.ply, else -1. */
static long frame_number(const char* name) {
    if (strncmp(name, "frame_", 6) != 0 || !isdigit((unsigned char)name[6]))
        return -1;
    char* end;
    long v = strtol(name + 6, &end, 10);
    char canonical[64];
    snprintf(canonical, sizeof canonical, "frame_%05ld.ply", v);
    return strcmp(canonical, name) == 0 ? v : -1;
}

static int push_frame(frame_list* list, long index) {
    if (list->count == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 64;
        long* grown = realloc(list->index, cap * sizeof(long));
        if (!grown)
            return 0;
        list->index = grown;
        list->cap = cap;
    }
    list->index[list->count++] = index;
    return 1;
}

static int compare_long(const void* a, const void* b) {
    long x = *(const long*)a, y = *(const long*)b;
    return (x > y) - (x < y);
}

static void free_frames(frame_list* list) {
    free(list->index);
    memset(list, 0, sizeof *list);
}

/* Lists DIR's frames in order; returns an exit code (0 ok). */
static int list_frames(const char* dir, frame_list* list) {
    memset(list, 0, sizeof *list);
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "peridot render: cannot open directory %s: %s\n", dir, strerror(errno));
        return 2;
    }
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        long v = frame_number(e->d_name);
        if (v >= 0 && !push_frame(list, v)) {
            closedir(d);
            fprintf(stderr, "peridot render: out of memory listing %s\n", dir);
            return 1;
        }
    }
    closedir(d);
    if (list->count == 0) {
        fprintf(stderr, "peridot render: no frame_NNNNN.ply files in %s\n", dir);
        return 2;
    }
    qsort(list->index, list->count, sizeof(long), compare_long);
    return 0;
}

/* ---- attributes ---- */

static int has_prop(const pd_ply_data* ply, const char* name) {
    for (int k = 0; k < ply->prop_count; ++k)
        if (strcmp(ply->names[k], name) == 0)
            return 1;
    return 0;
}

static int has_velocity(const pd_ply_data* ply) {
    return has_prop(ply, "vx") && has_prop(ply, "vy") && has_prop(ply, "vz");
}

/* The attribute to colour by: the user's, or the default for this frame; "none" for none. */
static const char* chosen_attribute(const render_args* a, const pd_ply_data* ply) {
    if (a->attribute)
        return a->attribute;
    return has_velocity(ply) ? "speed" : "none";
}

static void print_unknown_attribute(const char* name, const char* path, const pd_ply_data* ply) {
    fprintf(stderr, "peridot render: unknown attribute '%s'; %s has:", name, path);
    for (int k = 0; k < ply->prop_count; ++k)
        fprintf(stderr, " %s", ply->names[k]);
    fprintf(stderr, "%s, none\n", has_velocity(ply) ? ", speed" : "");
}

/* The per-point scalar of `name` in *scalar (NULL for none; *owned when allocated here).
 * Returns 0, or 2 when the frame has no such attribute, or 1 out of memory. */
static int frame_scalar(const char* name, const pd_ply_data* ply, const char* path,
                        const float** scalar, float** owned) {
    *scalar = NULL;
    *owned = NULL;
    if (strcmp(name, "none") == 0)
        return 0;
    if (strcmp(name, "speed") == 0 && has_velocity(ply)) {
        if (ply->count == 0)
            return 0;
        const float *vx = pd_ply_column(ply, "vx"), *vy = pd_ply_column(ply, "vy"),
                    *vz = pd_ply_column(ply, "vz");
        float* s = malloc(ply->count * sizeof(float));
        if (!s)
            return 1;
        for (size_t i = 0; i < ply->count; ++i)
            s[i] = sqrtf(vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
        *scalar = *owned = s;
        return 0;
    }
    if (!has_prop(ply, name)) {
        print_unknown_attribute(name, path, ply);
        return 2;
    }
    *scalar = pd_ply_column(ply, name);
    return 0;
}

/* ---- the run's scene: colliders, frame rate, frame times ---- */

typedef struct run_context {
    pd_render_stage* stage; /* NULL: no colliders to draw */
    double fps;             /* time.fps; 0 without a scene */
    int every;              /* output.every */
    long* stat_frame;       /* stats.csv: frame numbers and their times */
    double* stat_time;
    size_t stat_count;
} run_context;

/* Index of `name` among the comma-separated header fields, or -1. */
static int csv_column(const char* header, const char* name) {
    size_t len = strlen(name);
    for (int col = 0; header; ++col) {
        if (strncmp(header, name, len) == 0 && (header[len] == ',' || header[len] == '\n' ||
                                                header[len] == '\r' || header[len] == '\0'))
            return col;
        header = strchr(header, ',');
        header = header ? header + 1 : NULL;
    }
    return -1;
}

static const char* csv_field(const char* line, int col) {
    for (; col > 0 && line; --col) {
        line = strchr(line, ',');
        line = line ? line + 1 : NULL;
    }
    return line;
}

static int push_stat(run_context* ctx, size_t* cap, long frame, double t) {
    if (ctx->stat_count == *cap) {
        size_t grown = *cap ? 2 * *cap : 256;
        long* f = realloc(ctx->stat_frame, grown * sizeof *f);
        if (f)
            ctx->stat_frame = f;
        double* tt = f ? realloc(ctx->stat_time, grown * sizeof *tt) : NULL;
        if (!tt)
            return 0;
        ctx->stat_time = tt;
        *cap = grown;
    }
    ctx->stat_frame[ctx->stat_count] = frame;
    ctx->stat_time[ctx->stat_count++] = t;
    return 1;
}

/* The simulated time of every frame stats.csv lists (none when it is missing). */
static void read_frame_times(const char* dir, run_context* ctx) {
    char path[PD_PATH_MAX], line[8192];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    FILE* f = fopen(path, "r");
    if (!f)
        return;
    int frame_col = -1, time_col = -1;
    if (fgets(line, sizeof line, f)) {
        frame_col = csv_column(line, "frame");
        time_col = csv_column(line, "time");
    }
    size_t cap = 0;
    while (frame_col >= 0 && time_col >= 0 && fgets(line, sizeof line, f)) {
        const char *fs = csv_field(line, frame_col), *ts = csv_field(line, time_col);
        if (fs && ts && !push_stat(ctx, &cap, strtol(fs, NULL, 10), strtod(ts, NULL)))
            break;
    }
    fclose(f);
}

/* Time of frame `index` (s): stats.csv's, else index / fps, else NaN (unknown). */
static double frame_time(const run_context* ctx, long index) {
    for (size_t k = 0; k < ctx->stat_count; ++k)
        if (ctx->stat_frame[k] == index)
            return ctx->stat_time[k];
    return ctx->fps > 0 ? (double)index / ctx->fps : NAN;
}

/* Poses the colliders at frame `index` (at t = 0 when its time is unknown); returns the time. */
static double pose_at(const run_context* ctx, long index) {
    double t = frame_time(ctx, index);
    pd_render_stage_pose(ctx->stage, isnan(t) ? 0.0 : t);
    return t;
}

/* Reads DIR/scene.resolved.json when there is one; a scene that cannot be read (a mesh
 * moved away) leaves the colliders out and says so. */
static void load_run_context(const char* dir, run_context* ctx) {
    memset(ctx, 0, sizeof *ctx);
    ctx->every = 1;
    read_frame_times(dir, ctx);
    char path[PD_PATH_MAX];
    snprintf(path, sizeof path, "%s/scene.resolved.json", dir);
    if (access(path, F_OK) != 0)
        return;
    pd_scene scene;
    pd_error err;
    pd_status st = pd_scene_load(path, NULL, 0, &scene, &err);
    if (st == PD_OK) {
        ctx->fps = scene.world.fps;
        ctx->every = scene.output.every > 0 ? scene.output.every : 1;
        st = pd_render_stage_create(scene.colliders, scene.collider_count, &ctx->stage, &err);
        pd_scene_free(&scene);
    }
    if (st != PD_OK) {
        pd_cli_print_error("render", &err, st);
        fprintf(stderr, "peridot render: the colliders are not drawn\n");
    }
}

static void free_run_context(run_context* ctx) {
    pd_render_stage_destroy(ctx->stage);
    free(ctx->stat_frame);
    free(ctx->stat_time);
}

/* ---- one frame ---- */

/* Reads frame `index`; prints the failure and returns 1 on error. */
static int read_frame(const char* dir, long index, pd_ply_data* ply, char* path, size_t cap) {
    frame_path(path, cap, dir, index);
    pd_error err;
    if (pd_read_ply(path, ply, &err) != PD_OK) {
        fprintf(stderr, "peridot render: %s\n", err.message);
        return 1;
    }
    return 0;
}

/* "speed [m/s]": the attribute and its unit (none for a dimensionless index). */
static void legend_title(const char* attribute, char* out, size_t cap) {
    const char* unit = pd_render_unit(attribute);
    if (unit && strcmp(unit, "-") != 0)
        snprintf(out, cap, "%s [%s]", attribute, unit);
    else
        snprintf(out, cap, "%s", attribute);
}

/* Renders one read frame to a PNG; returns an exit code. */
static int render_frame_png(const pd_ply_data* ply, const char* attribute, const char* frame,
                            const pd_render_def* def, const char* out, pd_render_info* info) {
    const float* scalar;
    float* owned;
    int code = frame_scalar(attribute, ply, frame, &scalar, &owned);
    if (code != 0) {
        if (code == 1)
            fprintf(stderr, "peridot render: out of memory\n");
        return code;
    }
    char title[128];
    legend_title(attribute, title, sizeof title);
    pd_render_def d = *def;
    d.legend_title = title;
    size_t bytes = (size_t)def->width * (size_t)def->height * 3;
    uint8_t* rgb = malloc(bytes);
    pd_error err;
    pd_status s =
        rgb ? pd_render_frame(&d, ply->count, pd_ply_column(ply, "x"), pd_ply_column(ply, "y"),
                              pd_ply_column(ply, "z"), scalar, rgb, info, &err)
            : PD_ERR_OUT_OF_MEMORY;
    if (s == PD_OK)
        s = pd_write_png(out, def->width, def->height, rgb, &err);
    if (s != PD_OK)
        fprintf(stderr, "peridot render: %s\n",
                s == PD_ERR_OUT_OF_MEMORY && !rgb ? "out of memory" : err.message);
    free(rgb);
    free(owned);
    return s == PD_OK ? 0 : 1;
}

/* Says how many particles the view left out (of one frame, or the most of a movie's). */
static void report_outside(const char* what, size_t outside) {
    if (outside > 0)
        fprintf(stderr,
                "peridot render: %s: %zu particle%s outside the view (the particles' "
                "1st-99th percentile box grown by half its size), left out of the camera's fit\n",
                what, outside, outside == 1 ? " lies" : "s lie");
}

static void apply_range(const render_args* a, pd_render_def* def) {
    if (a->has_range) {
        def->scalar_min = a->range_min;
        def->scalar_max = a->range_max;
    }
}

/* "wrote OUT (frame N, t = T s, P particles, colour: speed LO..HI)"; t when known. */
static void print_written(const char* out, long index, double t, size_t count,
                          const char* attribute, const pd_render_info* info) {
    printf("wrote %s (frame %ld, ", out, index);
    if (!isnan(t))
        printf("t = %g s, ", t);
    if (strcmp(attribute, "none") != 0)
        printf("%zu particles, colour: %s %g..%g)\n", count, attribute, info->scalar_min,
               info->scalar_max);
    else
        printf("%zu particles, one colour)\n", count);
}

static int render_png(const render_args* a, const frame_list* frames, const run_context* ctx,
                      const char* out) {
    long index = frames->index[frames->count - 1];
    if (a->frame >= 0) {
        if (!bsearch(&a->frame, frames->index, frames->count, sizeof(long), compare_long)) {
            fprintf(stderr, "peridot render: no frame %ld in %s (frames %ld..%ld)\n", a->frame,
                    a->dir, frames->index[0], frames->index[frames->count - 1]);
            return 2;
        }
        index = a->frame;
    }
    char path[PD_PATH_MAX];
    pd_ply_data ply;
    if (read_frame(a->dir, index, &ply, path, sizeof path))
        return 1;
    pd_render_def def = pd_default_render_def();
    def.width = a->width;
    def.height = a->height;
    def.stage = ctx->stage;
    apply_range(a, &def);
    double t = pose_at(ctx, index);
    const char* attribute = chosen_attribute(a, &ply);
    pd_render_info info;
    int code = render_frame_png(&ply, attribute, path, &def, out, &info);
    if (code == 0) {
        report_outside(path, info.outside);
        print_written(out, index, t, ply.count, attribute, &info);
    }
    pd_ply_free(&ply);
    return code;
}

/* ---- video ---- */

static int ffmpeg_on_path(void) {
    const char* path = getenv("PATH");
    if (!path)
        return 0;
    char candidate[PD_PATH_MAX];
    while (*path) {
        size_t len = strcspn(path, ":");
        int n = len == 0 ? snprintf(candidate, sizeof candidate, "./ffmpeg")
                         : snprintf(candidate, sizeof candidate, "%.*s/ffmpeg", (int)len, path);
        if (n > 0 && (size_t)n < sizeof candidate && access(candidate, X_OK) == 0)
            return 1;
        path += len;
        if (*path == ':')
            ++path;
    }
    return 0;
}

/* What every frame of a video shares, so that it does not jump: the camera's box (the union of
 * the frames' view boxes), the colour range (over every frame, or --range) and the splat radius
 * (from the first frame, where particles sit at their spacing). */
typedef struct video_view {
    pd_render_def def;
    const char* attribute;
    double fps;
} video_view;

static void grow_bounds(pd_render_def* def, const float lo[3], const float hi[3], int first) {
    for (int k = 0; k < 3; ++k) {
        if (first || lo[k] < def->bounds_min[k])
            def->bounds_min[k] = lo[k];
        if (first || hi[k] > def->bounds_max[k])
            def->bounds_max[k] = hi[k];
    }
}

/* Grows the movie's range by the frame's values inside its view box (as a PNG's range). */
static void grow_range(pd_render_def* def, const pd_ply_data* ply, const float* scalar,
                       const float lo[3], const float hi[3]) {
    const float* c[3] = {pd_ply_column(ply, "x"), pd_ply_column(ply, "y"), pd_ply_column(ply, "z")};
    for (size_t i = 0; scalar && i < ply->count; ++i) {
        int inside = 1;
        for (int k = 0; k < 3; ++k)
            inside &= c[k][i] >= lo[k] && c[k][i] <= hi[k];
        if (inside && isfinite(scalar[i])) {
            def->scalar_min = scalar[i] < def->scalar_min ? scalar[i] : def->scalar_min;
            def->scalar_max = scalar[i] > def->scalar_max ? scalar[i] : def->scalar_max;
        }
    }
}

/* Frame f's share of the plan: its view box and its scalar's range. */
static int plan_frame(const render_args* a, const run_context* ctx, const frame_list* frames,
                      size_t f, video_view* v) {
    char path[PD_PATH_MAX];
    pd_ply_data ply;
    if (read_frame(a->dir, frames->index[f], &ply, path, sizeof path))
        return 1;
    const float *x = pd_ply_column(&ply, "x"), *y = pd_ply_column(&ply, "y"),
                *z = pd_ply_column(&ply, "z");
    if (f == 0) {
        v->attribute = chosen_attribute(a, &ply);
        v->def.radius = pd_render_estimate_radius(ply.count, x, y, z);
    }
    const float* scalar;
    float* owned;
    int code = frame_scalar(v->attribute, &ply, path, &scalar, &owned);
    if (code == 0) {
        float lo[3], hi[3];
        pose_at(ctx, frames->index[f]);
        pd_render_view_box(ctx->stage, ply.count, x, y, z, v->def.radius, lo, hi);
        grow_bounds(&v->def, lo, hi, f == 0);
        if (!a->has_range)
            grow_range(&v->def, &ply, scalar, lo, hi);
    }
    free(owned);
    pd_ply_free(&ply);
    return code;
}

/* First pass over every frame; returns an exit code. */
static int plan_video(const render_args* a, const frame_list* frames, const run_context* ctx,
                      video_view* v) {
    v->def = pd_default_render_def();
    v->def.width = a->width;
    v->def.height = a->height;
    v->def.use_bounds = 1;
    v->def.stage = ctx->stage;
    v->def.scalar_min = FLT_MAX;
    v->def.scalar_max = -FLT_MAX;
    apply_range(a, &v->def);
    v->fps = a->fps > 0 ? a->fps : (ctx->fps > 0 ? ctx->fps / ctx->every : 30.0);
    for (size_t f = 0; f < frames->count; ++f) {
        int code = plan_frame(a, ctx, frames, f, v);
        if (code != 0)
            return code;
    }
    return 0;
}

/* Runs ffmpeg on DIR/%05d.png into out (through out.tmp); returns an exit code. */
static int run_ffmpeg(const char* png_dir, double fps, const char* out) {
    char pattern[PD_TEMP_DIR_MAX + 16], tmp[PD_PATH_MAX + 8], rate[32];
    snprintf(pattern, sizeof pattern, "%s/%%05d.png", png_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    snprintf(rate, sizeof rate, "%.6g", fps);
    char* argv[] = {"ffmpeg", "-y",       "-loglevel", "error", "-framerate", rate, "-i",
                    pattern,  "-pix_fmt", "yuv420p",   "-f",    "mp4",        tmp,  NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "peridot render: cannot start ffmpeg: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        execvp("ffmpeg", argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        remove(tmp);
        fprintf(stderr, "peridot render: ffmpeg failed (status %d) making %s\n",
                WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
        return 1;
    }
    if (rename(tmp, out) != 0) {
        fprintf(stderr, "peridot render: cannot rename %s onto %s: %s\n", tmp, out,
                strerror(errno));
        remove(tmp);
        return 1;
    }
    return 0;
}

/* Renders every frame into png_dir/00000.png, 00001.png, ...; returns an exit code. */
static int render_video_frames(const render_args* a, const frame_list* frames,
                               const run_context* ctx, const video_view* v, const char* png_dir,
                               size_t* written) {
    size_t most = 0, at = 0;
    for (size_t f = 0; f < frames->count; ++f) {
        char path[PD_PATH_MAX], png[PD_TEMP_DIR_MAX + 32];
        pd_ply_data ply;
        if (read_frame(a->dir, frames->index[f], &ply, path, sizeof path))
            return 1;
        snprintf(png, sizeof png, "%s/%05zu.png", png_dir, f);
        pose_at(ctx, frames->index[f]);
        pd_render_info info;
        int code = render_frame_png(&ply, v->attribute, path, &v->def, png, &info);
        pd_ply_free(&ply);
        if (code != 0)
            return code;
        if (info.outside > most) {
            most = info.outside;
            at = f;
        }
        *written = f + 1;
    }
    char what[PD_PATH_MAX + 64];
    frame_path(what, sizeof what, a->dir, frames->index[at]);
    snprintf(what + strlen(what), sizeof what - strlen(what), " (the most of any frame)");
    report_outside(what, most);
    return 0;
}

static void remove_video_frames(const char* png_dir, size_t count) {
    char png[PD_TEMP_DIR_MAX + 32];
    for (size_t f = 0; f < count; ++f) {
        snprintf(png, sizeof png, "%s/%05zu.png", png_dir, f);
        remove(png);
    }
    rmdir(png_dir);
}

static int render_video(const render_args* a, const frame_list* frames, const run_context* ctx,
                        const char* out) {
    if (a->frame >= 0)
        return fail_usage("%s", "--frame applies to a PNG; a video shows every frame");
    if (!ffmpeg_on_path()) {
        fprintf(stderr, "peridot render: ffmpeg not found; install the Debian package ffmpeg\n");
        return 2;
    }
    video_view v;
    int code = plan_video(a, frames, ctx, &v);
    if (code != 0)
        return code;
    const char* tmpdir = getenv("TMPDIR");
    char png_dir[PD_TEMP_DIR_MAX];
    snprintf(png_dir, sizeof png_dir, "%s/peridot-render-XXXXXX",
             tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    if (!mkdtemp(png_dir)) {
        fprintf(stderr, "peridot render: cannot make a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    size_t written = 0;
    code = render_video_frames(a, frames, ctx, &v, png_dir, &written);
    if (code == 0)
        code = run_ffmpeg(png_dir, v.fps, out);
    remove_video_frames(png_dir, written);
    if (code == 0)
        printf("wrote %s (%zu frames at %g fps, colour: %s %g..%g)\n", out, frames->count, v.fps,
               v.attribute, v.def.scalar_min, v.def.scalar_max);
    return code;
}

int pd_cli_render(int argc, char** argv) {
    render_args a;
    int code = parse_args(argc, argv, &a);
    if (code >= 0)
        return code;
    char out[PD_PATH_MAX];
    snprintf(out, sizeof out, "%s", a.out ? a.out : "");
    if (!a.out && snprintf(out, sizeof out, "%s/preview.png", a.dir) >= (int)sizeof out)
        return fail_usage("%s", "directory path too long");
    int video = ends_with(out, ".mp4");
    if (!video && !ends_with(out, ".png"))
        return fail_usage("output '%s' must end in .png or .mp4", out);
    frame_list frames;
    code = list_frames(a.dir, &frames);
    if (code == 0) {
        run_context ctx;
        load_run_context(a.dir, &ctx);
        code = video ? render_video(&a, &frames, &ctx, out) : render_png(&a, &frames, &ctx, out);
        free_run_context(&ctx);
    }
    free_frames(&frames);
    return code;
}
