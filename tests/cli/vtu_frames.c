/* output.format "vtu" (issue 35, item 1): a run's frame_<N>.vtu carry the values of its PLY
 * frames bit for bit (read here by a parser of the VTK XML layout of our own), frames.pvd lists
 * the frames written at stats.csv's times, a run that fails leaves a collection of the frames it
 * wrote, a resumed run writes the collection the uninterrupted one wrote, and ParaView's own
 * reader (pvpython, offscreen) and meshio read the same files (tests/cli/vtu_paraview.py,
 * vtu_meshio.py, which fail when their package is missing: scripts/setup.sh installs them). */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_support.h"
#include "io/output.h"
#include "read_file.h"
#include "test.h"

/* Two bodies of two materials, one spinning (so velocities differ particle by particle), 5
 * frames written every 2nd: frames 0, 2, 4 and the last, 5. */
#define TWO_BODIES(frames, extra_body)                                                             \
    "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.01,\"fps\":50,"                \
    "\"frames\":" #frames "},\"materials\":{\"soft\":{\"density\":1000,\"youngs_modulus\":1e5,"    \
    "\"poisson_ratio\":0.3},\"stiff\":{\"density\":2000,\"youngs_modulus\":2e5,"                   \
    "\"poisson_ratio\":0.25}},\"bodies\":[{\"name\":\"a\",\"material\":\"soft\",\"spacing\":0.02," \
    "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.5,0],\"radius\":0.06},"                        \
    "\"angular_velocity\":[0,0,5]},{\"name\":\"b\",\"material\":\"stiff\",\"spacing\":0.02,"       \
    "\"shape\":{\"type\":\"box\",\"min\":[0.3,0.45,-0.03],\"max\":[0.4,0.51,0.03]},"               \
    "\"velocity\":[0.5,0,0]" extra_body "}],\"output\":{\"every\":2,\"checkpoint_every\":3,"       \
    "\"format\":[\"ply\",\"vtu\"],\"attributes\":[\"velocity\",\"material\",\"body\","             \
    "\"plastic_strain\",\"id\"]}}"

/* ---- a reader of the layout pd_write_vtu writes ---- */

#define VTU_MAX_ARRAYS 16

typedef struct vtu_array {
    char name[64], type[16], component0[32];
    int components;
    unsigned long long offset;
} vtu_array;

typedef struct vtu_file {
    unsigned char* bytes;
    size_t size, base; /* base: the first byte after AppendedData's '_' */
    long points, cells;
    int uint64_headers;
    double time;
    vtu_array arrays[VTU_MAX_ARRAYS];
    int count;
} vtu_file;

/* The value of attribute `key` inside the tag [tag, end), copied into out; 0 when absent. */
static int tag_attr(const char* tag, const char* end, const char* key, char* out, size_t cap) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, " %s=\"", key);
    const char* at = strstr(tag, pattern);
    if (!at || at >= end)
        return 0;
    at += strlen(pattern);
    const char* close = strchr(at, '"');
    if (!close || close >= end || (size_t)(close - at) >= cap)
        return 0;
    snprintf(out, cap, "%.*s", (int)(close - at), at);
    return 1;
}

static void parse_array(const char* tag, const char* end, vtu_array* a) {
    char text[64] = "";
    tag_attr(tag, end, "Name", a->name, sizeof a->name);
    tag_attr(tag, end, "type", a->type, sizeof a->type);
    tag_attr(tag, end, "ComponentName0", a->component0, sizeof a->component0);
    a->components = tag_attr(tag, end, "NumberOfComponents", text, sizeof text) ? atoi(text) : 0;
    a->offset = tag_attr(tag, end, "offset", text, sizeof text) ? strtoull(text, NULL, 10) : 0;
}

/* Reads the XML part: the piece's sizes, TimeValue, and each appended DataArray. */
static int vtu_open(const char* path, vtu_file* v) {
    memset(v, 0, sizeof *v);
    v->bytes = pd_test_read_file(path, &v->size);
    const char* s = (const char*)v->bytes;
    const char* appended = s ? strstr(s, "<AppendedData encoding=\"raw\">") : NULL;
    const char* underscore = appended ? strchr(appended, '_') : NULL;
    if (!underscore)
        return 0;
    v->base = (size_t)(underscore + 1 - s);
    v->uint64_headers = strstr(s, "header_type=\"UInt64\"") != NULL;
    const char* piece = strstr(s, "<Piece ");
    const char* time = strstr(s, "Name=\"TimeValue\"");
    if (!piece || !time ||
        sscanf(piece, "<Piece NumberOfPoints=\"%ld\" NumberOfCells=\"%ld\"", &v->points,
               &v->cells) != 2)
        return 0;
    v->time = strtod(strchr(time, '>') + 1, NULL);
    for (const char* tag = strstr(piece, "<DataArray "); tag && tag < appended;
         tag = strstr(tag + 1, "<DataArray ")) {
        const char* end = strchr(tag, '>');
        if (v->count == VTU_MAX_ARRAYS)
            return 0;
        parse_array(tag, end, &v->arrays[v->count++]);
    }
    return 1;
}

static const vtu_array* vtu_array_named(const vtu_file* v, const char* name) {
    for (int k = 0; k < v->count; ++k)
        if (strcmp(v->arrays[k].name, name) == 0)
            return &v->arrays[k];
    return NULL;
}

/* An array's appended block: its values, when its UInt64 byte count is `bytes` and it lies
 * inside the file; NULL otherwise. */
static const unsigned char* vtu_block(const vtu_file* v, const vtu_array* a, size_t bytes) {
    if (!a || v->base + a->offset + 8 + bytes > v->size)
        return NULL;
    const unsigned char* p = v->bytes + v->base + a->offset;
    uint64_t stated = 0;
    for (int i = 0; i < 8; ++i)
        stated |= (uint64_t)p[i] << (8 * i);
    return stated == bytes ? p + 8 : NULL;
}

static uint32_t le32(const unsigned char* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Component c of row i of a 4-byte array, as the float a PLY column holds for it. */
static float value_at(const unsigned char* block, const char* type, int components, size_t i,
                      int c) {
    uint32_t bits = le32(block + 4 * (i * (size_t)components + (size_t)c));
    if (strcmp(type, "Int32") == 0)
        return (float)(int32_t)bits;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Mismatches between array `name` (of `type`) and the PLY columns `columns` (NULL-ended); -1
 * when the array is missing, of another type or width, or its block is malformed. */
static long compare_array(const vtu_file* v, const pd_ply_data* ply, const char* name,
                          const char* type, const char* const* columns, long* compared) {
    int components = 0;
    while (columns[components])
        components++;
    const vtu_array* a = vtu_array_named(v, name);
    size_t n = ply->count;
    const unsigned char* block = vtu_block(v, a, n * (size_t)components * 4);
    if (!block || strcmp(a->type, type) != 0 || a->components != components)
        return -1;
    long differ = 0;
    for (int c = 0; c < components; ++c) {
        const float* column = pd_ply_column(ply, columns[c]);
        if (!column)
            return -1;
        for (size_t i = 0; i < n; ++i)
            differ += memcmp(&(float){value_at(block, type, components, i, c)}, &column[i],
                             sizeof(float)) != 0;
        *compared += (long)n;
    }
    return differ;
}

/* Cells that are not the vertex of their own point: connectivity i, offset i + 1, type 1. */
static long bad_cells(const vtu_file* v, size_t n) {
    const unsigned char* conn = vtu_block(v, vtu_array_named(v, "connectivity"), 4 * n);
    const unsigned char* offs = vtu_block(v, vtu_array_named(v, "offsets"), 4 * n);
    const unsigned char* types = vtu_block(v, vtu_array_named(v, "types"), n);
    if (!conn || !offs || !types)
        return -1;
    long bad = 0;
    for (size_t i = 0; i < n; ++i)
        bad += le32(conn + 4 * i) != i || le32(offs + 4 * i) != i + 1 || types[i] != 1;
    return bad;
}

/* ---- the run's other files ---- */

/* stats.csv's time of `frame`, or NaN. */
static double stats_time(const char* out, int frame) {
    char path[600];
    snprintf(path, sizeof path, "%s/stats.csv", out);
    char* text = read_text(path);
    double t = NAN;
    for (const char* line = text ? strchr(text, '\n') : NULL; line && line[1];
         line = strchr(line + 1, '\n')) {
        char* end;
        if (strtol(line + 1, &end, 10) == frame && *end == ',')
            t = strtod(end + 1, NULL);
    }
    free(text);
    return t;
}

/* frames.pvd's DataSets: their frame numbers (from the file names) and times; their count. */
static int pvd_list(const char* out, int* frames, double* times, int max) {
    char path[600];
    snprintf(path, sizeof path, "%s/frames.pvd", out);
    char* text = read_text(path);
    int n = 0;
    for (const char* d = text ? strstr(text, "<DataSet ") : NULL; d && n < max;
         d = strstr(d + 1, "<DataSet ")) {
        const char* file = strstr(d, "file=\"frame_");
        times[n] = strtod(strstr(d, "timestep=\"") + 10, NULL);
        frames[n++] = file ? atoi(file + 12) : -1;
    }
    free(text);
    return n;
}

/* `peridot run` of scene_text into out, with more options; its exit status. */
static int run_scene(const char* dir, const char* scene_text, const char* out, const char* more) {
    char scene[600], args[1400];
    snprintf(scene, sizeof scene, "%s/scene.json", dir);
    write_file(scene, scene_text);
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet %s", scene, out, more);
    char* err = NULL;
    int code = run_cli(dir, args, &err);
    free(err);
    return code;
}

/* Compares frame_<frame>.vtu with frame_<frame>.ply and stats.csv's time; prints the counts. */
static void check_frame(const char* out, int frame) {
    char path[600];
    snprintf(path, sizeof path, "%s/frame_%05d.ply", out, frame);
    pd_ply_data ply;
    PD_REQUIRE(pd_read_ply(path, &ply, NULL) == PD_OK);
    snprintf(path, sizeof path, "%s/frame_%05d.vtu", out, frame);
    vtu_file v;
    int opened = vtu_open(path, &v);
    PD_CHECK(opened && v.uint64_headers && v.points == (long)ply.count && v.cells == v.points);
    long compared = 0, differ = 0, bad = 0;
    static const char *const k_xyz[] = {"x", "y", "z", NULL}, *const k_v[] = {"vx", "vy", "vz",
                                                                              NULL};
    static const char* const k_ints[] = {"material", "body", "id"};
    long d[6] = {compare_array(&v, &ply, "Points", "Float32", k_xyz, &compared),
                 compare_array(&v, &ply, "velocity", "Float32", k_v, &compared),
                 compare_array(&v, &ply, "plastic_strain", "Float32",
                               (const char* const[]){"plastic_strain", NULL}, &compared)};
    for (int k = 0; k < 3; ++k)
        d[3 + k] = compare_array(&v, &ply, k_ints[k], "Int32",
                                 (const char* const[]){k_ints[k], NULL}, &compared);
    for (int k = 0; k < 6; ++k)
        differ += d[k] < 0 ? 1000000 : d[k];
    bad = opened ? bad_cells(&v, ply.count) : -1;
    const vtu_array* vel = vtu_array_named(&v, "velocity");
    double t = stats_time(out, frame);
    printf("    frame %d: %zu particles, %d arrays, %ld values compared with the PLY frame, %ld "
           "differ; %ld cells not a vertex of their point; TimeValue %.17g, stats.csv %.9g\n",
           frame, ply.count, v.count, compared, differ, bad, v.time, t);
    PD_CHECK(differ == 0 && compared == (long)ply.count * 10);
    PD_CHECK(bad == 0);
    PD_CHECK(vel && strcmp(vel->component0, "vx") == 0);
    PD_CHECK_NEAR(v.time, t, 1e-9 * fabs(t));
    free(v.bytes);
    pd_ply_free(&ply);
}

PD_TEST(vtu_frames_carry_the_ply_frames_values) {
    char dir[] = "/tmp/pd_vtu_XXXXXX", out[64];
    PD_REQUIRE(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    PD_REQUIRE(run_scene(dir, TWO_BODIES(5, ""), out, "") == 0);
    int frames[16];
    double times[16];
    int n = pvd_list(out, frames, times, 16);
    static const int k_written[] = {0, 2, 4, 5}; /* every 2nd, and the last */
    printf("    frames.pvd lists %d frames\n", n);
    PD_CHECK_NEAR(n, 4, 0);
    for (int k = 0; k < n && k < 4; ++k) {
        PD_CHECK(frames[k] == k_written[k]);
        PD_CHECK_NEAR(times[k], stats_time(out, k_written[k]), 0);
        check_frame(out, k_written[k]);
    }
    /* a shorter run into the same folder leaves none of the earlier run's .vtu nor its list */
    PD_REQUIRE(run_scene(dir, TWO_BODIES(5, ""), out, "--frames 2") == 0);
    char path[600];
    snprintf(path, sizeof path, "%s/frame_00004.vtu", out);
    int n_rerun = pvd_list(out, frames, times, 16);
    printf("    rerun of 2 frames: frames.pvd lists %d, frame_00004.vtu %s\n", n_rerun,
           exists(path) ? "still there" : "gone");
    PD_CHECK(n_rerun == 2 && frames[1] == 2 && !exists(path));
    remove_tree(dir);
}

/* A pin of body b thrown 1e150 m away at t = 0.07 s stops the run (exit 1) after frames 0..3
 * (every frame written here): frames.pvd lists exactly the .vtu files there, each whole. */
PD_TEST(failed_run_leaves_a_collection_of_the_frames_it_wrote) {
    char dir[] = "/tmp/pd_vtu_XXXXXX", out[64], path[600];
    PD_REQUIRE(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    const char* scene = TWO_BODIES(6, ",\"pins\":[{\"region\":{\"type\":\"sphere\",\"center\":"
                                      "[0.35,0.48,0],\"radius\":0.03},\"keyframes\":[{\"t\":0},"
                                      "{\"t\":0.06},{\"t\":0.07,\"translate\":[1e150,0,0]}]}]");
    PD_CHECK(run_scene(dir, scene, out, "--set output.every=1") == 1);
    int frames[16], whole = 0, files = 0;
    double times[16];
    int n = pvd_list(out, frames, times, 16);
    for (int f = 0; f < 16; ++f) {
        snprintf(path, sizeof path, "%s/frame_%05d.vtu", out, f);
        vtu_file v;
        files += exists(path);
        whole += exists(path) && vtu_open(path, &v) && v.points > 0 &&
                 vtu_block(&v, vtu_array_named(&v, "types"), (size_t)v.points) != NULL;
        if (exists(path))
            free(v.bytes);
    }
    snprintf(path, sizeof path, "%s/frames.pvd.tmp", out);
    printf("    exit 1 after %d frame files (%d whole); frames.pvd lists %d, the last frame %d\n",
           files, whole, n, n > 0 ? frames[n - 1] : -1);
    PD_CHECK(n >= 2);
    PD_CHECK_NEAR(n, files, 0);
    PD_CHECK_NEAR(whole, files, 0);
    PD_CHECK(n > 0 && frames[n - 1] == n - 1);
    PD_CHECK(!exists(path));
    remove_tree(dir);
}

static int same_file(const char* a, const char* b) {
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

/* 7 frames, written 0, 2, 4, 6, 7, checkpoints at 3 and 6. A copy of the run stopped at frame 3
 * (its later frames and checkpoints gone, its frames.pvd still the whole run's) is resumed: the
 * collection is listed again from the frames kept and ends the same bytes as the whole run's. */
PD_TEST(resumed_run_writes_the_uninterrupted_runs_collection) {
    char dir[] = "/tmp/pd_vtu_XXXXXX", full[64], part[64], a[600], b[600], cmd[1400];
    PD_REQUIRE(mkdtemp(dir));
    snprintf(full, sizeof full, "%s/full", dir);
    snprintf(part, sizeof part, "%s/part", dir);
    PD_REQUIRE(run_scene(dir, TWO_BODIES(7, ""), full, "") == 0);
    snprintf(cmd, sizeof cmd,
             "cp -r '%s' '%s' && for f in '%s'/frame_* '%s'/checkpoint_*; do n=$(basename \"$f\" "
             "| tr -dc 0-9); [ \"$n\" -gt 3 ] && rm \"$f\"; done; true",
             full, part, part, part);
    PD_REQUIRE(system(cmd) == 0);
    snprintf(b, sizeof b, "%s/frame_00004.vtu", part);
    PD_REQUIRE(!exists(b));
    snprintf(cmd, sizeof cmd, "run --resume '%s' --quiet", part);
    char* err = NULL;
    PD_CHECK(run_cli(dir, cmd, &err) == 0);
    free(err);
    int frames[16];
    double times[16];
    int n = pvd_list(part, frames, times, 16);
    snprintf(a, sizeof a, "%s/frames.pvd", full);
    snprintf(b, sizeof b, "%s/frames.pvd", part);
    int same_pvd = same_file(a, b), same_frames = 0;
    static const int k_after[] = {4, 6, 7};
    for (int k = 0; k < 3; ++k) {
        snprintf(a, sizeof a, "%s/frame_%05d.vtu", full, k_after[k]);
        snprintf(b, sizeof b, "%s/frame_%05d.vtu", part, k_after[k]);
        same_frames += same_file(a, b);
    }
    printf("    resumed from frame 3: frames.pvd lists %d frames, %s the whole run's; %d of frames "
           "4, 6, 7 the same bytes\n",
           n, same_pvd ? "the same bytes as" : "NOT", same_frames);
    PD_CHECK_NEAR(n, 5, 0);
    PD_CHECK(same_pvd);
    PD_CHECK_NEAR(same_frames, 3, 0);
    remove_tree(dir);
}

/* A symmetric stress (6 components, VTK's order xx yy zz xy yz xz) keeps its width and component
 * names under the array name it is given; a field without one is named by its components'
 * prefix ("n_x n_y n_z" -> "n"). */
PD_TEST(six_component_stress_and_unnamed_fields) {
    enum { N = 5 };
    pd_vec3 pos[N];
    pd_real stress[6 * N], normal[3 * N];
    for (int i = 0; i < N; ++i) {
        pos[i] = pd_v3(i, -i, 0.5 * i);
        for (int c = 0; c < 6; ++c)
            stress[6 * i + c] = 1000.0 * i + c;
        for (int c = 0; c < 3; ++c)
            normal[3 * i + c] = c == 2 ? 1.0 : 0.0;
    }
    pd_field fields[2] = {{{"sxx", "syy", "szz", "sxy", "syz", "sxz"}, 6, PD_FIELD_REAL, stress},
                          {{"n_x", "n_y", "n_z"}, 3, PD_FIELD_REAL, normal}};
    const char* names[2] = {"stress", NULL};
    char dir[] = "/tmp/pd_vtu_XXXXXX", path[64];
    PD_REQUIRE(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.vtu", dir);
    PD_REQUIRE(pd_write_vtu(path, N, pos, fields, names, 2, NULL, 0.25, NULL) == PD_OK);
    vtu_file v;
    PD_REQUIRE(vtu_open(path, &v));
    const vtu_array* s = vtu_array_named(&v, "stress");
    const vtu_array* n = vtu_array_named(&v, "n");
    const unsigned char* block = vtu_block(&v, s, 6 * N * 4);
    int differ = 0;
    for (int i = 0; block && i < N; ++i)
        for (int c = 0; c < 6; ++c)
            differ += value_at(block, "Float32", 6, (size_t)i, c) != (float)stress[6 * i + c];
    char* text = (char*)v.bytes;
    printf("    stress: %d components, first named %s, %d of %d values differ; normal named %s; "
           "time %g\n",
           s ? s->components : 0, s ? s->component0 : "-", differ, 6 * N, n ? n->name : "-",
           v.time);
    PD_CHECK(s && s->components == 6 && strcmp(s->component0, "sxx") == 0);
    PD_CHECK(strstr(text, "ComponentName5=\"sxz\""));
    PD_CHECK(block && differ == 0);
    PD_CHECK(n && n->components == 3);
    PD_CHECK_NEAR(v.time, 0.25, 0);
    free(v.bytes);
    remove_tree(dir);
}

/* Runs a script of tests/cli on a run's output folder; its exit status (127: no interpreter). */
static int run_script(const char* interpreter, const char* script, const char* out) {
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cd '%s/tests/cli' && env -u DISPLAY %s %s '%s' 2>&1", PD_SOURCE_DIR,
             interpreter, script, out);
    fflush(stdout);
    int status = system(cmd);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    printf("    %s %s -> exit %d%s\n", interpreter, script, code,
           code == 127 ? " (not installed: scripts/setup.sh installs it)" : "");
    return code;
}

/* ParaView's reader (pvpython, no X server): time steps, arrays and values against the PLY
 * frames (vtu_paraview.py says what it checks). */
PD_TEST(paraview_reads_the_collection) {
    char dir[] = "/tmp/pd_vtu_XXXXXX", out[64];
    PD_REQUIRE(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    PD_REQUIRE(run_scene(dir, TWO_BODIES(5, ""), out, "") == 0);
    PD_CHECK(run_script("pvpython --force-offscreen-rendering", "vtu_paraview.py", out) == 0);
    remove_tree(dir);
}

/* meshio (Debian's python3-meshio, under Debian's /usr/bin/python3, which has it, rather than
 * whichever python3 comes first on PATH) reads the same frames (vtu_meshio.py). */
PD_TEST(meshio_reads_the_frames) {
    char dir[] = "/tmp/pd_vtu_XXXXXX", out[64];
    PD_REQUIRE(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    PD_REQUIRE(run_scene(dir, TWO_BODIES(5, ""), out, "") == 0);
    PD_CHECK(run_script("/usr/bin/python3", "vtu_meshio.py", out) == 0);
    remove_tree(dir);
}
