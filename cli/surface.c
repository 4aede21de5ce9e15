/* `peridot surface DIR`: each particle frame DIR/frame_NNNNN.ply of a run becomes a closed
 * triangle mesh DIR/surface_NNNNN.ply (and/or .obj) for Blender and Houdini (peridot/surface.h
 * says how). Exit status: 0 ok, 2 usage / no frames / a build without OpenVDB, 1 when reading a
 * frame or writing a surface fails. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common.h"
#include "peridot/peridot.h"

typedef struct surface_args {
    const char* dir;
    long frame;           /* -1: every frame */
    int ply, obj;         /* formats to write */
    double spacing;       /* m; 0: estimated from the first frame */
    double radius, voxel; /* in spacings; voxel 0: radius / 3 */
    int smooth;
} surface_args;

static void usage(FILE* f) {
    fprintf(f,
            "usage: peridot surface DIR [--frame N] [--format ply|obj|both] [--spacing H]\n"
            "                          [--radius K] [--voxel K] [--smooth N]\n"
            "\n"
            "Turns each particle frame DIR/frame_NNNNN.ply written by 'peridot run' into a\n"
            "closed triangle mesh DIR/surface_NNNNN.ply (binary PLY; .obj with --format obj),\n"
            "which Blender and Houdini import: for fluids, sand and snow. Each particle becomes\n"
            "a sphere of K spacings in an OpenVDB level set; the union is eroded by K - 1/2\n"
            "spacings, so that the surface lies just inside half a spacing beyond the outer\n"
            "particles, where their cells end (0.37 spacing with the defaults), smoothed, and\n"
            "meshed. The frames keep their numbers; a surface is written atomically and\n"
            "replaces an earlier one.\n"
            "\n"
            "  --frame N        only frame N (default every frame)\n"
            "  --format F       ply (default), obj, or both\n"
            "  --spacing H      particle spacing in metres (default the median distance to the\n"
            "                   nearest neighbour in the first frame: frame 0 holds the\n"
            "                   particles as sampled, so the run's spacing)\n"
            "  --radius K       sphere radius in spacings, > 0.5 (default 1.5: spheres of 0.87\n"
            "                   already close a cubic lattice; 1.5 also spans a disordered\n"
            "                   flow's gaps; larger is smoother and fills wider hollows)\n"
            "  --voxel K        level-set voxel in spacings, from radius/50 to radius/3 (the\n"
            "                   erosion needs 3 voxels per radius; default radius/3, so 0.5);\n"
            "                   finer is slower\n"
            "  --smooth N       Gaussian smoothing passes of the level set, 0 to 100 (default 1)\n"
            "  --help           print this help\n"
            "\n"
            "Needs a peridot built with OpenVDB (apt-get install libopenvdb-dev, then rebuild).\n"
            "Exit status: 0 ok, 2 bad usage or input or no OpenVDB, 1 reading or writing\n"
            "failed.\n");
}

static int fail_usage(const char* fmt, const char* what) {
    fprintf(stderr, "peridot surface: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n(see 'peridot surface --help')\n");
    return 2;
}

static int parse_number(const char* s, double lo, double hi, double* v) {
    char* end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end == s || *end || !(d >= lo && d <= hi))
        return 0;
    *v = d;
    return 1;
}

/* One option with its value; returns 0 ok, else the exit code. */
static int parse_option(const char* arg, const char* val, surface_args* a) {
    double v;
    if (strcmp(arg, "--frame") == 0) {
        if (!parse_number(val, 0, 1e9, &v) || v != floor(v))
            return fail_usage("--frame expects a frame number, not '%s'", val);
        a->frame = (long)v;
    } else if (strcmp(arg, "--format") == 0) {
        a->ply = strcmp(val, "ply") == 0 || strcmp(val, "both") == 0;
        a->obj = strcmp(val, "obj") == 0 || strcmp(val, "both") == 0;
        if (!a->ply && !a->obj)
            return fail_usage("--format expects ply, obj or both, not '%s'", val);
    } else if (strcmp(arg, "--spacing") == 0) {
        if (!parse_number(val, DBL_MIN, 1e6, &a->spacing))
            return fail_usage("--spacing expects a length > 0 in metres, not '%s'", val);
    } else if (strcmp(arg, "--radius") == 0) {
        if (!parse_number(val, 0.5, 100, &a->radius) || a->radius == 0.5)
            return fail_usage("--radius expects spacings above 0.5 (up to 100), not '%s'", val);
    } else if (strcmp(arg, "--voxel") == 0) {
        if (!parse_number(val, DBL_MIN, 100, &a->voxel))
            return fail_usage("--voxel expects spacings > 0, not '%s'", val);
    } else if (strcmp(arg, "--smooth") == 0) {
        if (!parse_number(val, 0, 100, &v) || v != floor(v))
            return fail_usage("--smooth expects passes 0 to 100, not '%s'", val);
        a->smooth = (int)v;
    } else
        return fail_usage("unknown option '%s'", arg);
    return 0;
}

/* Returns -1 to go on, else the exit code (0 after --help). */
static int parse_args(int argc, char** argv, surface_args* a) {
    *a = (surface_args){.frame = -1, .ply = 1, .radius = 1.5, .voxel = 0, .smooth = 1};
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (arg[0] != '-') {
            if (a->dir)
                return fail_usage("unexpected argument '%s'", arg);
            a->dir = arg;
            continue;
        }
        if (i + 1 >= argc)
            return fail_usage("%s needs a value", arg);
        int code = parse_option(arg, argv[++i], a);
        if (code)
            return code;
    }
    if (!a->dir)
        return fail_usage("%s", "missing the run folder DIR");
    if (a->voxel == 0)
        a->voxel = a->radius / 3;
    if (a->voxel * 3 > a->radius * (1 + 1e-9) || a->voxel * 50 < a->radius)
        return fail_usage("%s", "--voxel must lie between radius/50 and radius/3");
    return -1;
}

static int compare_long(const void* p, const void* q) {
    long a = *(const long*)p, b = *(const long*)q;
    return (a > b) - (a < b);
}

/* The frame numbers in dir, ascending, in *index (free it); returns the count, or -1 with the
 * exit code in *code after a message. */
static long list_frames(const char* dir, long** index, int* code) {
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "peridot surface: cannot open the run folder %s: %s\n", dir,
                strerror(errno));
        *code = 2;
        return -1;
    }
    long count = 0, cap = 0, *list = NULL;
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
        long k = pd_cli_numbered(e->d_name, "frame_", ".ply");
        if (k < 0)
            continue;
        if (count == cap) {
            long* grown = realloc(list, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *list);
            if (!grown) {
                closedir(d);
                free(list);
                fprintf(stderr, "peridot surface: out of memory listing %s\n", dir);
                *code = 1;
                return -1;
            }
            list = grown;
        }
        list[count++] = k;
    }
    closedir(d);
    if (count == 0) {
        free(list);
        fprintf(stderr,
                "peridot surface: no particle frames (frame_NNNNN.ply) in %s: give the folder "
                "'peridot run' wrote, with output.format \"ply\" (the default)\n",
                dir);
        *code = 2;
        return -1;
    }
    qsort(list, (size_t)count, sizeof *list, compare_long);
    *index = list;
    return count;
}

/* Median distance to the nearest neighbour of up to 256 sampled particles: the run's spacing
 * for a frame sampled on a lattice (a brute-force O(256 n) look). 0 when it cannot tell. */
static double estimate_spacing(const pd_ply_data* ply) {
    const float *x = pd_ply_column(ply, "x"), *y = pd_ply_column(ply, "y"),
                *z = pd_ply_column(ply, "z");
    enum { k_samples = 256 };
    double d2[k_samples];
    size_t n = ply->count, samples = n < k_samples ? n : k_samples, count = 0;
    for (size_t s = 0; s < samples; ++s) {
        size_t i = s * n / samples;
        double best = DBL_MAX;
        for (size_t j = 0; j < n; ++j) {
            double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
            double r2 = dx * dx + dy * dy + dz * dz;
            if (j != i && r2 > 0 && r2 < best)
                best = r2;
        }
        if (best < DBL_MAX && isfinite(best))
            d2[count++] = best;
    }
    if (count == 0)
        return 0;
    for (size_t i = 1; i < count; ++i) /* insertion sort: 256 values */
        for (size_t j = i; j > 0 && d2[j - 1] > d2[j]; --j) {
            double t = d2[j];
            d2[j] = d2[j - 1];
            d2[j - 1] = t;
        }
    return sqrt(d2[count / 2]);
}

static int read_frame(const char* dir, long k, pd_ply_data* ply) {
    char path[PD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/frame_%05ld.ply", dir, k);
    pd_error err = {0};
    if (pd_read_ply(path, ply, &err) != PD_OK) {
        fprintf(stderr, "peridot surface: %s: %s\n", path, err.message);
        return 1;
    }
    return 0;
}

/* Meshes frame k and writes its surfaces; returns an exit code. */
static int surface_frame(const surface_args* a, const pd_surface_def* def, long k) {
    pd_ply_data ply;
    if (read_frame(a->dir, k, &ply))
        return 1;
    pd_surface_mesh mesh;
    pd_error err = {0};
    pd_status s =
        pd_surface_mesh_points(def, ply.count, pd_ply_column(&ply, "x"), pd_ply_column(&ply, "y"),
                               pd_ply_column(&ply, "z"), &mesh, &err);
    size_t particles = ply.count;
    pd_ply_free(&ply);
    if (s != PD_OK) {
        fprintf(stderr, "peridot surface: frame %ld: %s\n", k, err.message);
        return s == PD_ERR_OUT_OF_MEMORY ? 1 : 2;
    }
    char path[PD_PATH_MAX + 32];
    for (int f = 0; f < 2 && s == PD_OK; ++f) {
        if (!(f == 0 ? a->ply : a->obj))
            continue;
        snprintf(path, sizeof path, "%s/surface_%05ld.%s", a->dir, k, f == 0 ? "ply" : "obj");
        s = pd_surface_write(path, &mesh, &err);
    }
    if (s == PD_OK)
        printf("frame %ld: %zu particles -> %zu vertices, %zu triangles\n", k, particles,
               mesh.vertex_count, mesh.triangle_count);
    else
        fprintf(stderr, "peridot surface: %s\n", err.message);
    pd_surface_mesh_free(&mesh);
    return s == PD_OK ? 0 : 1;
}

/* The definition in metres: the spacing given or estimated from the first frame. */
static int make_def(const surface_args* a, long first, pd_surface_def* def) {
    double h = a->spacing;
    if (h <= 0) {
        pd_ply_data ply;
        if (read_frame(a->dir, first, &ply))
            return 1;
        h = estimate_spacing(&ply);
        pd_ply_free(&ply);
        if (h <= 0) {
            fprintf(stderr,
                    "peridot surface: frame %ld has fewer than two distinct particles: "
                    "give --spacing\n",
                    first);
            return 2;
        }
    }
    *def = (pd_surface_def){h, a->radius * h, a->voxel * h, a->smooth};
    printf("spacing %.6g m%s, radius %.6g m, voxel %.6g m, %d smoothing passes\n", h,
           a->spacing > 0 ? "" : " (estimated)", def->radius, def->voxel, def->smooth);
    return 0;
}

int pd_cli_surface(int argc, char** argv) {
    surface_args a;
    int code = parse_args(argc, argv, &a);
    if (code >= 0)
        return code;
    long* frames = NULL;
    long count = list_frames(a.dir, &frames, &code);
    if (count < 0)
        return code;
    if (!pd_surface_available()) {
        fprintf(stderr, "peridot surface: %s\n", pd_surface_unavailable_hint());
        free(frames);
        return 2;
    }
    long lo = 0, hi = count;
    if (a.frame >= 0) { /* just that one */
        while (lo < count && frames[lo] != a.frame)
            ++lo;
        hi = lo + 1;
        if (lo == count) {
            fprintf(stderr, "peridot surface: no frame_%05ld.ply in %s (frames %ld to %ld)\n",
                    a.frame, a.dir, frames[0], frames[count - 1]);
            free(frames);
            return 2;
        }
    }
    pd_surface_def def;
    code = make_def(&a, frames[0], &def);
    for (long i = lo; i < hi && code == 0; ++i)
        code = surface_frame(&a, &def, frames[i]);
    free(frames);
    return code;
}
