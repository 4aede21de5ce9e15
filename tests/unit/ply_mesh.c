/* The PLY mesh reader (geometry/ply_mesh.h through pd_mesh_load): the three formats, every
 * type, skipped elements and properties, polygons as fans, and each refusal with its message. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "geometry/mesh.h"
#include "peridot/peridot.h"
#include "test.h"

/* ---- writing test files ---- */

/* One value of the body in a PLY type, or the end of a row (a newline in ascii). */
typedef enum value_type { I8, U8, I16, U16, I32, U32, F32, F64, ROW_END } value_type;
typedef struct typed_value {
    value_type type;
    double value;
} typed_value;

typedef enum file_format { ASCII, LITTLE, BIG } file_format;

static size_t type_bytes(value_type t) {
    static const size_t k_bytes[] = {1, 1, 2, 2, 4, 4, 4, 8, 0};
    return k_bytes[t];
}

/* The value's bits, as the type stores them. */
static uint64_t value_bits(typed_value v) {
    if (v.type == F32) {
        float f = (float)v.value;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return u;
    }
    if (v.type == F64) {
        uint64_t u;
        memcpy(&u, &v.value, sizeof u);
        return u;
    }
    return (uint64_t)(int64_t)v.value;
}

static void write_value(FILE* f, typed_value v, file_format format) {
    if (format == ASCII) {
        if (v.type == ROW_END)
            fputc('\n', f);
        else
            fprintf(f, "%.17g ", v.value);
        return;
    }
    size_t n = type_bytes(v.type);
    uint64_t bits = value_bits(v);
    for (size_t i = 0; i < n; ++i)
        fputc((int)(bits >> (8 * (format == BIG ? n - 1 - i : i))) & 0xff, f);
}

/* The header with its format line (after "ply") in the given format, then the body; `cut`
 * bytes dropped from the end. Returns 0 on failure. */
static int write_ply(const char* path, const char* header, const typed_value* body, size_t n,
                     file_format format, size_t cut) {
    static const char* const k_formats[] = {"ascii", "binary_little_endian", "binary_big_endian"};
    FILE* f = fopen(path, "wb");
    if (!f)
        return 0;
    fprintf(f, "ply\nformat %s 1.0\n%s", k_formats[format], header);
    for (size_t i = 0; i < n; ++i)
        write_value(f, body[i], format);
    long size = ftell(f);
    int ok = fclose(f) == 0;
    return ok && (cut == 0 || truncate(path, size - (long)cut) == 0);
}

static void temp_path(char* out, size_t cap, const char* name) {
    snprintf(out, cap, "/tmp/pd_ply_mesh_%ld_%s", (long)getpid(), name);
}

/* Loads path as a body's mesh without transform; the status, with err filled and printed. */
static pd_status load(const char* path, pd_mesh* mesh, pd_error* err) {
    pd_shape_def shape = pd_default_shape_def();
    shape.type = PD_SHAPE_MESH;
    snprintf(shape.path, sizeof shape.path, "%s", path);
    memset(err, 0, sizeof *err);
    pd_status st = pd_mesh_load(&shape, mesh, "bodies[0].shape", err);
    if (st != PD_OK)
        printf("  %s: %s: %s\n", pd_status_string(st), err->path, err->message);
    return st;
}

/* ---- a pyramid in every format ---- */

/* A square pyramid: a quad base and four triangular sides, with an unused sixth vertex, an
 * element before and one after the mesh's, and properties of every type around x, y, z. */
static const char k_pyramid_header[] = "comment every type, its alias, lists in three elements\n"
                                       "element camera 1\n"
                                       "property float view_px\n"
                                       "property list uint8 uchar bytes\n"
                                       "element vertex 6\n"
                                       "property uchar red\n"
                                       "property float x\n"
                                       "property int8 tag\n"
                                       "property double y\n"
                                       "property list uchar float normal\n"
                                       "property int16 s\n"
                                       "property float32 z\n"
                                       "property uint32 u\n"
                                       "property ushort us\n"
                                       "property uint16 us2\n"
                                       "property char c\n"
                                       "property int i\n"
                                       "property uint ui\n"
                                       "property float64 d\n"
                                       "property int32 i32\n"
                                       "property short sh\n"
                                       "element face 5\n"
                                       "property uchar flags\n"
                                       "property list ushort uint vertex_indices\n"
                                       "property list int8 int16 extra\n"
                                       "element edge 2\n"
                                       "property int vertex1\n"
                                       "property int vertex2\n"
                                       "end_header\n";

static const double k_pyramid_xyz[6][3] = {{0, 0, 0}, {1, 0, 0},     {1, 0, 1},
                                           {0, 0, 1}, {0.5, 1, 0.5}, {9, 9, 9}};

/* The body of k_pyramid_header; returns its values' count. */
static size_t pyramid_body(typed_value* b) {
    size_t n = 0;
    /* camera: a float and a list of 3 bytes */
    b[n++] = (typed_value){F32, 0.25}, b[n++] = (typed_value){U8, 3};
    for (int k = 0; k < 3; ++k)
        b[n++] = (typed_value){U8, 200 + k};
    b[n++] = (typed_value){ROW_END, 0};
    for (int v = 0; v < 6; ++v) {
        b[n++] = (typed_value){U8, 255};
        b[n++] = (typed_value){F32, k_pyramid_xyz[v][0]};
        b[n++] = (typed_value){I8, -7};
        b[n++] = (typed_value){F64, k_pyramid_xyz[v][1]};
        b[n++] = (typed_value){U8, 2}; /* the normal list: 2 floats */
        b[n++] = (typed_value){F32, -1.5}, b[n++] = (typed_value){F32, 1e30};
        b[n++] = (typed_value){I16, -30000};
        b[n++] = (typed_value){F32, k_pyramid_xyz[v][2]};
        b[n++] = (typed_value){U32, 4000000000.0};
        b[n++] = (typed_value){U16, 65535}, b[n++] = (typed_value){U16, 1};
        b[n++] = (typed_value){I8, -128};
        b[n++] = (typed_value){I32, -2000000000.0};
        b[n++] = (typed_value){U32, 7};
        b[n++] = (typed_value){F64, -0.1};
        b[n++] = (typed_value){I32, 5}, b[n++] = (typed_value){I16, 3};
        b[n++] = (typed_value){ROW_END, 0};
    }
    static const int k_faces[5][5] = {
        {4, 0, 1, 2, 3}, {3, 0, 4, 1, 0}, {3, 1, 4, 2, 0}, {3, 2, 4, 3, 0}, {3, 3, 4, 0, 0}};
    for (int f = 0; f < 5; ++f) {
        b[n++] = (typed_value){U8, 1};
        b[n++] = (typed_value){U16, k_faces[f][0]};
        for (int c = 1; c <= k_faces[f][0]; ++c)
            b[n++] = (typed_value){U32, k_faces[f][c]};
        b[n++] = (typed_value){I8, 1}, b[n++] = (typed_value){I16, -2};
        b[n++] = (typed_value){ROW_END, 0};
    }
    for (int e = 0; e < 2; ++e) {
        b[n++] = (typed_value){I32, e}, b[n++] = (typed_value){I32, e + 1};
        b[n++] = (typed_value){ROW_END, 0};
    }
    return n;
}

/* The pyramid's triangles: the base quad 0 1 2 3 as the fan 0 1 2, 0 2 3, then the sides. */
static const uint32_t k_pyramid_triangles[6][3] = {{0, 1, 2}, {0, 2, 3}, {0, 4, 1},
                                                   {1, 4, 2}, {2, 4, 3}, {3, 4, 0}};

/* Counts the differences between mesh and the pyramid (vertices exact: each value is exact in
 * a float and printed with 17 digits). */
static int pyramid_mismatches(const pd_mesh* mesh) {
    if (mesh->vertex_count != 5 || mesh->triangle_count != 6)
        return -1;
    int bad = 0;
    for (int v = 0; v < 5; ++v)
        bad += mesh->vertices[v].x != k_pyramid_xyz[v][0] ||
               mesh->vertices[v].y != k_pyramid_xyz[v][1] ||
               mesh->vertices[v].z != k_pyramid_xyz[v][2];
    for (int t = 0; t < 6; ++t)
        for (int c = 0; c < 3; ++c)
            bad += mesh->triangles[3 * t + c] != k_pyramid_triangles[t][c];
    return bad;
}

/* The same pyramid written as ascii, binary little-endian and binary big-endian loads as the
 * same mesh: the quad as two triangles, every other element and property skipped (the camera
 * before, the edges after, lists inside the vertex and the face), the unused vertex dropped. */
PD_TEST(ascii_and_both_binary_orders_give_the_same_mesh) {
    static typed_value body[256];
    size_t n = pyramid_body(body);
    static const char* const k_names[] = {"ascii", "little-endian", "big-endian"};
    char path[128];
    temp_path(path, sizeof path, "pyramid.ply");
    for (int format = ASCII; format <= BIG; ++format) {
        PD_REQUIRE(write_ply(path, k_pyramid_header, body, n, (file_format)format, 0));
        pd_mesh mesh;
        pd_error err;
        PD_REQUIRE(load(path, &mesh, &err) == PD_OK);
        printf("  %s: %zu vertices, %zu triangles\n", k_names[format], mesh.vertex_count,
               mesh.triangle_count);
        PD_CHECK_NEAR(pyramid_mismatches(&mesh), 0, 0);
        PD_CHECK_NEAR(pd_mesh_signed_volume(&mesh), 1.0 / 3.0, 1e-15); /* wound outwards */
        pd_mesh_free(&mesh);
    }
    remove(path);
}

/* The shape's scale, rotation and translation apply to a PLY mesh as to Assimp's. */
PD_TEST(ply_mesh_takes_the_shape_transform) {
    static typed_value body[256];
    size_t n = pyramid_body(body);
    char path[128];
    temp_path(path, sizeof path, "moved.ply");
    PD_REQUIRE(write_ply(path, k_pyramid_header, body, n, LITTLE, 0));
    pd_shape_def shape = pd_default_shape_def();
    shape.type = PD_SHAPE_MESH;
    snprintf(shape.path, sizeof shape.path, "%s", path);
    shape.scale = 2;
    shape.rotate_axis = pd_v3(0, 1, 0);
    shape.rotate_degrees = 90;
    shape.translate = pd_v3(10, 20, 30);
    pd_mesh mesh;
    pd_error err;
    PD_REQUIRE(pd_mesh_load(&shape, &mesh, "bodies[0].shape", &err) == PD_OK);
    /* vertex 1 (1, 0, 0): scaled (2, 0, 0), a quarter turn about y (0, 0, -2), moved */
    PD_CHECK_NEAR(mesh.vertices[1].x, 10, 1e-12);
    PD_CHECK_NEAR(mesh.vertices[1].y, 20, 1e-12);
    PD_CHECK_NEAR(mesh.vertices[1].z, 28, 1e-12);
    pd_mesh_free(&mesh);
    remove(path);
}

/* ---- small ascii files ---- */

static pd_status load_text(const char* name, const char* text, pd_mesh* mesh, pd_error* err) {
    char path[128];
    temp_path(path, sizeof path, name);
    FILE* f = fopen(path, "wb");
    if (!f)
        return PD_ERR_IO;
    fputs(text, f);
    fclose(f);
    pd_status st = load(path, mesh, err);
    remove(path);
    return st;
}

#define QUAD_HEADER                                                                                \
    "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"                \
    "property float z\nelement face 1\nproperty list uchar int vertex_index\nend_header\n"

/* A quad (its list named vertex_index, the other name the format uses) loads as the two
 * triangles of a fan from its first corner. */
PD_TEST(quad_becomes_two_triangles) {
    pd_mesh mesh;
    pd_error err;
    PD_REQUIRE(load_text("quad.ply", QUAD_HEADER "0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 3 2 1 0\n", &mesh,
                         &err) == PD_OK);
    PD_CHECK_NEAR(mesh.triangle_count, 2, 0);
    static const uint32_t k_fan[6] = {3, 2, 1, 3, 1, 0};
    int bad = 0;
    for (int i = 0; i < 6 && mesh.triangle_count == 2; ++i)
        bad += mesh.triangles[i] != k_fan[i];
    PD_CHECK_NEAR(bad, 0, 0);
    pd_mesh_free(&mesh);
}

/* Refused with PD_ERR_MESH at the shape's path, the message saying `why`. */
static int refused_with(const char* name, const char* text, const char* why) {
    pd_mesh mesh;
    pd_error err;
    pd_status st = load_text(name, text, &mesh, &err);
    if (st == PD_OK)
        pd_mesh_free(&mesh);
    int ok = st == PD_ERR_MESH && strcmp(err.path, "bodies[0].shape.path") == 0 &&
             strstr(err.message, why) != NULL;
    if (!ok)
        printf("  FAIL %s: wanted \"%s\"\n", name, why);
    return ok;
}

PD_TEST(face_of_fewer_than_three_indices_is_refused) {
    PD_CHECK(refused_with("two.ply", QUAD_HEADER "0 0 0\n1 0 0\n1 1 0\n0 1 0\n2 0 1\n",
                          "has a face of 2 vertex indices (face 0): a face needs at least 3"));
}

PD_TEST(index_outside_the_vertices_is_refused) {
    PD_CHECK(refused_with("past.ply", QUAD_HEADER "0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 1 4\n",
                          "face 0 names vertex 4, of 4 vertices"));
    PD_CHECK(refused_with("negative.ply", QUAD_HEADER "0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 -1 2\n",
                          "face 0 names vertex -1, of 4 vertices"));
    PD_CHECK(refused_with("half.ply", QUAD_HEADER "0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 1.5 2\n",
                          "face 0 names vertex 1.5, of 4 vertices"));
}

PD_TEST(non_finite_or_unparsable_number_is_refused) {
    PD_CHECK(refused_with("nan.ply", QUAD_HEADER "0 0 0\n1 nan 0\n1 1 0\n0 1 0\n3 0 1 2\n",
                          "has a non-finite coordinate: vertex 1's y is nan"));
    PD_CHECK(refused_with("huge.ply", QUAD_HEADER "0 0 0\n1 0 0\n1 1 1e999\n0 1 0\n3 0 1 2\n",
                          "has a non-finite coordinate: vertex 2's z is inf"));
    PD_CHECK(refused_with("word.ply", QUAD_HEADER "0 0 0\n1 0 0\n1 1x 0\n0 1 0\n3 0 1 2\n",
                          "element 'vertex', row 2: \"1x\" is not a number"));
    PD_CHECK(refused_with("count.ply", QUAD_HEADER "0 0 0\n1 0 0\n1 1 0\n0 1 0\nthree 0 1 2\n",
                          "element 'face', row 0: \"three\" is not a number"));
}

/* The header's rows must fit in the file's size (checked before anything is allocated); a file
 * whose rows fit by that count and still end early is refused where it ends. */
PD_TEST(file_ending_before_its_elements_is_refused) {
    PD_CHECK(refused_with("liar.ply", QUAD_HEADER "0 0 0\n", "declares more elements than its"));
    PD_CHECK(refused_with("short.ply",
                          "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                          "property float y\nproperty float z\nelement face 2\nproperty list "
                          "uchar int vertex_indices\nend_header\n0 0 0 1 0 0 0 1 0 3 0 1 2\n",
                          "element 'face', row 1: truncated: the file ends before the rows"));
    /* binary: a list of 200 items with 9 bytes left */
    static const typed_value body[] = {{F32, 0}, {F32, 0}, {F32, 0}, {U8, 200},
                                       {I32, 0}, {I32, 0}, {U8, 0}};
    char path[128];
    temp_path(path, sizeof path, "list.ply");
    PD_REQUIRE(write_ply(path,
                         "element vertex 1\nproperty float x\nproperty float y\n"
                         "property float z\nelement face 1\nproperty list uchar int "
                         "vertex_indices\nend_header\n",
                         body, sizeof body / sizeof body[0], LITTLE, 0));
    pd_mesh mesh;
    pd_error err;
    PD_CHECK(load(path, &mesh, &err) == PD_ERR_MESH);
    PD_CHECK(strstr(err.message, "a list of 200 items, more than the 9 bytes left can hold"));
    remove(path);
}

PD_TEST(mesh_without_triangles_is_refused) {
    PD_CHECK(refused_with("nofaces.ply",
                          "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\n"
                          "property float y\nproperty float z\nelement face 0\nproperty list "
                          "uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n",
                          "has no triangles"));
    PD_CHECK(refused_with("points.ply",
                          "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                          "property float y\nproperty float z\nend_header\n0 0 0\n",
                          "has no triangles: it has no face element"));
    PD_CHECK(refused_with("noxyz.ply",
                          "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                          "property float y\nelement face 0\nproperty list uchar int "
                          "vertex_indices\nend_header\n0 0\n",
                          "has no vertex element with scalar properties x, y, z"));
}

/* A face's list length is bounded by the bytes left before its items are read, and nothing is
 * allocated for a count the file cannot hold: a 4e9-item list in a small file costs no more
 * than the reader itself. */
PD_TEST(list_lengths_are_bounded_by_the_bytes_left) {
    static const typed_value body[] = {{F32, 0}, {F32, 0}, {F32, 0}, {F32, 1}, {F32, 0},
                                       {F32, 0}, {F32, 0}, {F32, 1}, {F32, 0}, {U32, 4e9},
                                       {I32, 0}, {I32, 1}, {I32, 2}};
    char path[128];
    temp_path(path, sizeof path, "long.ply");
    PD_REQUIRE(write_ply(path,
                         "element vertex 3\nproperty float x\nproperty float y\n"
                         "property float z\nelement face 1\nproperty list uint int "
                         "vertex_indices\nend_header\n",
                         body, sizeof body / sizeof body[0], BIG, 0));
    size_t peak = pd_peak_bytes(), before = pd_bytes_in_use();
    pd_mesh mesh;
    pd_error err;
    PD_CHECK(load(path, &mesh, &err) == PD_ERR_MESH);
    PD_CHECK(strstr(err.message, "a list of 4000000000 items, more than the 12 bytes left"));
    PD_CHECK_NEAR((double)(pd_peak_bytes() - peak), 0, 64 * 1024);
    PD_CHECK_NEAR((double)(pd_bytes_in_use() - before), 0, 0);
    remove(path);
}
