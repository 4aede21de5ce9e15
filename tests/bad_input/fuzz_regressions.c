/* Every input the fuzzers found a fault with (tests/bad_input/fuzz/<target>/, docs/validation.md
 * "Fuzzing"), replayed through the same entry points (fuzz/fuzz_targets.h): each must return,
 * within a minute (an alarm ends the test otherwise), without a crash; under `make fuzz`'s
 * sanitizers also without a leak or undefined behaviour. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "fuzz_targets.h"
#include "geometry/mesh.h"
#include "peridot/peridot.h"
#include "test.h"

typedef void fuzz_target(const uint8_t* data, size_t size);

static unsigned char* read_bytes(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char* data = malloc(1 << 22);
    *size = data ? fread(data, 1, 1 << 22, f) : 0;
    fclose(f);
    return data;
}

/* Replays every file of tests/bad_input/fuzz/<name>; returns how many. */
static int replay(const char* name, fuzz_target* target) {
    char dir[512], path[1024];
    snprintf(dir, sizeof dir, "%s/tests/bad_input/fuzz/%s", PD_SOURCE_DIR, name);
    DIR* d = opendir(dir);
    int count = 0;
    for (struct dirent* e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t size = 0;
        unsigned char* data = read_bytes(path, &size);
        if (!data)
            continue;
        printf("  %s/%s (%zu bytes)\n", name, e->d_name, size);
        fflush(stdout);
        alarm(60);
        target(data, size);
        alarm(0);
        free(data);
        count++;
    }
    if (d)
        closedir(d);
    return count;
}

PD_TEST(fuzzers_findings_return) {
    int n = replay("scene", pd_fuzz_scene) + replay("mesh", pd_fuzz_mesh) +
            replay("frame", pd_fuzz_frame);
    PD_CHECK(n >= 2);
}

/* The scene whose error line the scan looked for for ever: control bytes between tokens,
 * which cJSON skips as white space, left the scan of the text at a stray bracket. Now the
 * refusal names its line. */
PD_TEST(control_bytes_between_tokens_keep_the_error_line) {
    char path[512];
    snprintf(path, sizeof path,
             "%s/tests/bad_input/fuzz/scene/control_bytes_as_white_space.json.in", PD_SOURCE_DIR);
    size_t size = 0;
    unsigned char* data = read_bytes(path, &size);
    PD_REQUIRE(data && size > 0);
    char* text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    pd_scene scene;
    pd_error err;
    alarm(60);
    pd_status st = pd_scene_parse(text, "fuzz.json", ".", NULL, 0, &scene, &err);
    alarm(0);
    printf("  %s: line %d: %s: %s\n", pd_status_string(st), err.line, err.path, err.message);
    PD_CHECK(st == PD_ERR_BAD_SCENE && err.line > 1);
    if (st == PD_OK)
        pd_scene_free(&scene);
    free(text);
    free(data);
}

/* Loads the fuzzer's mesh input `name` (its first byte 0: a .ply) as a body's shape; returns
 * the status, with err filled. */
static pd_status load_fuzzed_ply(const char* name, pd_error* err) {
    char in[512], ply[64];
    snprintf(in, sizeof in, "%s/tests/bad_input/fuzz/mesh/%s", PD_SOURCE_DIR, name);
    size_t size = 0;
    unsigned char* data = read_bytes(in, &size);
    if (!data || size < 2 || data[0] != 0) {
        free(data);
        return PD_ERR_IO;
    }
    snprintf(ply, sizeof ply, "/tmp/pd_fuzzed_%ld.ply", (long)getpid());
    FILE* f = fopen(ply, "wb");
    if (f) {
        fwrite(data + 1, 1, size - 1, f);
        fclose(f);
    }
    free(data);
    pd_shape_def shape = pd_default_shape_def();
    shape.type = PD_SHAPE_MESH;
    snprintf(shape.path, sizeof shape.path, "%s", ply);
    pd_mesh mesh;
    alarm(60);
    pd_status st = pd_mesh_load(&shape, &mesh, "bodies[0].shape", err);
    alarm(0);
    printf("  %s: %s: %s: %s\n", name, pd_status_string(st), err->path, err->message);
    if (st == PD_OK)
        pd_mesh_free(&mesh);
    remove(ply);
    return st;
}

/* "ply" followed by other bytes on its first line: Assimp took it for a PLY and read for ever
 * (peridot hung); our reader refuses it. */
PD_TEST(ply_magic_followed_by_bytes_is_refused) {
    pd_error err;
    pd_status st = load_fuzzed_ply("ply_magic_followed_by_bytes_hangs_assimp.in", &err);
    PD_CHECK(st == PD_ERR_MESH && strstr(err.message, "its first line is not"));
}

/* A PLY whose faces index a vertex that is not there: Assimp's triangulation asserted and
 * aborted the program (exit 134, no message); our reader refuses the index. */
PD_TEST(ply_face_index_out_of_range_is_refused) {
    pd_error err;
    pd_status st = load_fuzzed_ply("ply_face_index_out_of_range.in", &err);
    PD_CHECK(st == PD_ERR_MESH && strstr(err.message, "face 4 names vertex 8, of 8 vertices"));
}

/* "end_header" followed by a control byte instead of its newline: Assimp read for ever; the
 * header is read line by line, in printable text, and refused. */
PD_TEST(ply_header_not_ended_by_a_newline_is_refused) {
    pd_error err;
    pd_status st = load_fuzzed_ply("ply_header_end_without_newline_hangs_assimp.in", &err);
    PD_CHECK(st == PD_ERR_MESH && strstr(err.message, "unreadable PLY header") &&
             strstr(err.message, "is not printable text"));
}

/* A PLY face Assimp's own triangulation asserted on (the program aborted, killing this test):
 * its list holds "1mal", which our reader refuses as not a number. */
PD_TEST(ply_face_assimp_could_not_triangulate_is_refused) {
    pd_error err;
    pd_status st = load_fuzzed_ply("ply_face_assimp_triangulation_aborts.in", &err);
    PD_CHECK(st == PD_ERR_MESH && strstr(err.message, "row 0: \"1mal\" is not a number"));
}

/* Polygons become fans of triangles: a cube of six quads loads as twelve triangles that enclose
 * its volume (an OBJ: Assimp's file, our triangulation). */
PD_TEST(quad_faces_load_as_triangles) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/pd_quads_%ld.obj", (long)getpid());
    FILE* f = fopen(path, "w");
    PD_REQUIRE(f);
    fputs("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
          "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 3 4 8 7\nf 2 3 7 6\nf 1 5 8 4\n",
          f);
    fclose(f);
    pd_shape_def shape = pd_default_shape_def();
    shape.type = PD_SHAPE_MESH;
    snprintf(shape.path, sizeof shape.path, "%s", path);
    pd_mesh mesh;
    pd_error err;
    PD_REQUIRE(pd_mesh_load(&shape, &mesh, "bodies[0].shape", &err) == PD_OK);
    PD_CHECK_NEAR((double)mesh.triangle_count, 12, 0);
    PD_CHECK_NEAR(pd_mesh_enclosed_volume(&mesh), 1.0, 1e-12);
    pd_mesh_free(&mesh);
    remove(path);
}

/* A property of a type the format does not have ("f.oat"): Assimp's reader reserved gigabytes
 * for the rows after it (4.3 GB resident in the fuzzer); our header check refuses the type. */
PD_TEST(ply_unknown_property_type_is_refused) {
    pd_error err;
    pd_status st = load_fuzzed_ply("ply_unknown_property_type_reserves_gigabytes.in", &err);
    PD_CHECK(st == PD_ERR_MESH && strstr(err.message, "line 6: unknown property type"));
}

/* "element 333...3vertex 8": an element whose name starts with digits made Assimp take more
 * than 30 s (the fuzzer's timeout); names must start with a letter. */
PD_TEST(ply_element_name_of_digits_is_refused) {
    pd_error err;
    pd_status st = load_fuzzed_ply("ply_element_name_of_digits_hangs_assimp.in", &err);
    PD_CHECK(st == PD_ERR_MESH && strstr(err.message, "name must start with a letter"));
}

/* 270 bytes of PLY (a vertex element of z alone, rows with stray bytes and a 71-digit number)
 * on which Assimp asked for 15 GB: our reader refuses the file for its vertices' missing x and
 * y, and allocates no more than itself for it. */
PD_TEST(ply_that_made_assimp_allocate_15_gigabytes_is_refused) {
    size_t peak = pd_peak_bytes();
    pd_error err;
    pd_status st = load_fuzzed_ply("ply_270_bytes_make_assimp_allocate_15_gigabytes.in", &err);
    PD_CHECK(st == PD_ERR_MESH && strstr(err.message, "no vertex element with scalar properties"));
    PD_CHECK_NEAR((double)(pd_peak_bytes() - peak), 0, 64 * 1024);
}
