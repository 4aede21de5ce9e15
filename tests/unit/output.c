/* Frame files (PLY write/read, VTK, atomic writes), PNG round trip and the point renderer. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "io/output.h"
#include "render/png.h"
#include "render/render.h"
#include "read_file.h"
#include "test.h"

#define N_POINTS 257

typedef struct sample_frame {
    pd_vec3 pos[N_POINTS];
    pd_real vel[3 * N_POINTS];
    int32_t id[N_POINTS];
    pd_real density[N_POINTS];
    pd_field fields[3];
} sample_frame;

/* Deterministic values spanning signs and magnitudes, ids up to 2^24 (exact in a float). */
static void make_frame(sample_frame* s) {
    unsigned state = 12345u;
    for (int i = 0; i < N_POINTS; ++i) {
        pd_real v[7];
        for (int k = 0; k < 7; ++k) {
            state = state * 1664525u + 1013904223u;
            v[k] = ((pd_real)(state >> 8) / (pd_real)(1u << 24) - 0.5) * (k < 3 ? 2.0 : 37.0);
        }
        s->pos[i] = pd_v3(v[0], v[1], v[2] * 1e-3);
        s->vel[3 * i] = v[3];
        s->vel[3 * i + 1] = v[4];
        s->vel[3 * i + 2] = v[5];
        s->density[i] = 1000.0 + 100.0 * v[6];
        s->id[i] = i == 0 ? -7 : (i == 1 ? (1 << 24) : i * 977);
    }
    pd_field vel = {{"vx", "vy", "vz"}, 3, PD_FIELD_REAL, s->vel};
    pd_field id = {{"id"}, 1, PD_FIELD_INT32, s->id};
    pd_field density = {{"density"}, 1, PD_FIELD_REAL, s->density};
    s->fields[0] = vel;
    s->fields[1] = id;
    s->fields[2] = density;
}

static void temp_dir(char* out, size_t cap) {
    snprintf(out, cap, "/tmp/pd_output_XXXXXX");
    if (!mkdtemp(out))
        out[0] = '\0';
}

static int file_exists(const char* path) {
    return access(path, F_OK) == 0;
}

static const unsigned char* find_bytes(const unsigned char* hay, size_t n, const char* needle) {
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; ++i)
        if (memcmp(hay + i, needle, m) == 0)
            return hay + i;
    return NULL;
}

static float be_float(const unsigned char* p) {
    uint32_t u = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* Writes s as frame_00000.ply into a fresh temporary folder, rows in `order` (NULL: index
 * order); 0 on failure. */
static int write_sample_ply(const sample_frame* s, const uint32_t* order, char* dir, char* path) {
    temp_dir(dir, 64);
    if (!dir[0])
        return 0;
    snprintf(path, 128, "%s/frame_00000.ply", dir);
    return pd_write_ply(path, N_POINTS, s->pos, s->fields, 3, order, NULL) == PD_OK;
}

/* With an order, row k is particle order[k]: a reordered world writes stable frames. */
PD_TEST(ply_rows_follow_the_given_order) {
    static sample_frame s;
    make_frame(&s);
    static uint32_t order[N_POINTS];
    for (int k = 0; k < N_POINTS; ++k)
        order[k] = (uint32_t)((k * 7 + 3) % N_POINTS);
    char dir[64], path[128];
    PD_REQUIRE(write_sample_ply(&s, order, dir, path));
    pd_ply_data ply;
    pd_error err;
    PD_REQUIRE(pd_read_ply(path, &ply, &err) == PD_OK);
    const float *x = pd_ply_column(&ply, "x"), *id = pd_ply_column(&ply, "id");
    PD_REQUIRE(x && id);
    int mismatches = 0;
    for (int k = 0; k < N_POINTS; ++k)
        mismatches += x[k] != (float)s.pos[order[k]].x || id[k] != (float)s.id[order[k]];
    PD_CHECK_NEAR(mismatches, 0, 0);
    pd_ply_free(&ply);
    remove(path);
    rmdir(dir);
}

PD_TEST(ply_round_trip_is_exact_in_float) {
    static sample_frame s;
    make_frame(&s);
    char dir[64], path[128];
    PD_REQUIRE(write_sample_ply(&s, NULL, dir, path));
    pd_ply_data ply;
    pd_error err;
    PD_REQUIRE(pd_read_ply(path, &ply, &err) == PD_OK);
    PD_CHECK_NEAR(ply.count, N_POINTS, 0);
    PD_CHECK_NEAR(ply.prop_count, 8, 0);
    static const char* k_names[] = {"x", "y", "z", "vx", "vy", "vz", "id", "density"};
    for (int k = 0; k < 8 && k < ply.prop_count; ++k)
        PD_CHECK(strcmp(ply.names[k], k_names[k]) == 0);
    int mismatches = 0;
    for (int i = 0; i < N_POINTS; ++i) {
        float want[8] = {(float)s.pos[i].x,   (float)s.pos[i].y,       (float)s.pos[i].z,
                         (float)s.vel[3 * i], (float)s.vel[3 * i + 1], (float)s.vel[3 * i + 2],
                         (float)s.id[i],      (float)s.density[i]};
        for (int k = 0; k < 8; ++k) {
            const float* col = pd_ply_column(&ply, k_names[k]);
            mismatches += !col || col[i] != want[k];
        }
    }
    PD_CHECK_NEAR(mismatches, 0, 0);
    PD_CHECK(pd_ply_column(&ply, "nosuch") == NULL);
    pd_ply_free(&ply);

    /* Body: 8 four-byte properties per vertex right after the header. */
    size_t size;
    unsigned char* bytes = pd_test_read_file(path, &size);
    PD_REQUIRE(bytes);
    const unsigned char* end = find_bytes(bytes, size, "end_header\n");
    PD_CHECK(find_bytes(bytes, size, "comment written by peridot") != NULL);
    PD_CHECK(find_bytes(bytes, size, "format binary_little_endian 1.0\n") != NULL);
    PD_CHECK(find_bytes(bytes, size, "property int id\n") != NULL);
    PD_REQUIRE(end);
    PD_CHECK_NEAR((double)(size - (size_t)(end + 11 - bytes)), N_POINTS * 32.0, 0);
    free(bytes);
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    PD_CHECK(!file_exists(tmp));
    remove(path);
    rmdir(dir);
}

PD_TEST(vtk_has_header_points_and_arrays) {
    static sample_frame s;
    make_frame(&s);
    char dir[64], path[128], tmp[160];
    temp_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    snprintf(path, sizeof path, "%s/frame.vtk", dir);
    PD_REQUIRE(pd_write_vtk(path, N_POINTS, s.pos, s.fields, 3, NULL, NULL) == PD_OK);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    PD_CHECK(!file_exists(tmp));
    size_t size;
    unsigned char* bytes = pd_test_read_file(path, &size);
    PD_REQUIRE(bytes);
    PD_CHECK(memcmp(bytes, "# vtk DataFile Version 3.0\n", 27) == 0);
    PD_CHECK(find_bytes(bytes, size, "\nBINARY\nDATASET POLYDATA\n") != NULL);
    const char* points = "POINTS 257 float\n";
    const unsigned char* p = find_bytes(bytes, size, points);
    PD_REQUIRE(p);
    const unsigned char* data = p + strlen(points);
    /* The point block is exactly 257 * 3 big-endian floats, then the VERTICES line. */
    const unsigned char* verts = find_bytes(bytes, size, "\nVERTICES 257 514\n");
    PD_REQUIRE(verts);
    PD_CHECK_NEAR((double)(verts - data), N_POINTS * 12.0, 0);
    PD_CHECK(be_float(data) == (float)s.pos[0].x);
    PD_CHECK(be_float(data + 12 * 200 + 8) == (float)s.pos[200].z);
    const unsigned char* pd = find_bytes(bytes, size, "POINT_DATA 257\n");
    PD_CHECK(pd != NULL);
    /* Cells block: 257 pairs of 4-byte ints between VERTICES and POINT_DATA. */
    if (pd)
        PD_CHECK_NEAR((double)(pd - (verts + 18)), N_POINTS * 8.0 + 1.0, 0);
    const char* vec = "VECTORS velocity float\n";
    const unsigned char* v = find_bytes(bytes, size, vec);
    PD_REQUIRE(v);
    PD_CHECK(be_float(v + strlen(vec) + 4) == (float)s.vel[1]);
    PD_CHECK(find_bytes(bytes, size, "SCALARS id int 1\nLOOKUP_TABLE default\n") != NULL);
    PD_CHECK(find_bytes(bytes, size, "SCALARS density float 1\nLOOKUP_TABLE default\n") != NULL);
    free(bytes);
    remove(path);
    rmdir(dir);
}

PD_TEST(writes_into_missing_directory_fail_with_io_error) {
    static sample_frame s;
    make_frame(&s);
    const char* path = "/tmp/pd_no_such_dir_4711/sub/frame.ply";
    pd_error err;
    memset(&err, 0, sizeof err);
    PD_CHECK(pd_write_ply(path, N_POINTS, s.pos, s.fields, 3, NULL, &err) == PD_ERR_IO);
    printf("  file: %s, message: %s\n", err.file, err.message);
    PD_CHECK(strstr(err.message, "No such file") != NULL);
    /* the file named once, in err.file: a printed error shows it once */
    PD_CHECK(strstr(err.file, "pd_no_such_dir_4711") != NULL);
    PD_CHECK(strstr(err.message, "pd_no_such_dir_4711") == NULL);
    PD_CHECK(pd_write_vtk(path, N_POINTS, s.pos, s.fields, 3, NULL, &err) == PD_ERR_IO);
    PD_CHECK(pd_write_text_atomic(path, "a", 1, &err) == PD_ERR_IO);
    uint8_t rgb[3 * 16 * 16] = {0};
    PD_CHECK(pd_write_png("/tmp/pd_no_such_dir_4711/a.png", 16, 16, rgb, &err) == PD_ERR_IO);
    pd_ply_data ply;
    PD_CHECK(pd_read_ply(path, &ply, &err) == PD_ERR_IO);
}

PD_TEST(atomic_write_replaces_whole_file) {
    char dir[64], path[128], tmp[160];
    temp_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    PD_REQUIRE(pd_write_text_atomic(path, "first version, longer\n", 22, NULL) == PD_OK);
    PD_REQUIRE(pd_write_text_atomic(path, "second\n", 7, NULL) == PD_OK);
    size_t size;
    unsigned char* bytes = pd_test_read_file(path, &size);
    PD_REQUIRE(bytes);
    PD_CHECK_NEAR(size, 7, 0);
    PD_CHECK(memcmp(bytes, "second\n", 7) == 0);
    PD_CHECK(!file_exists(tmp));
    free(bytes);
    remove(path);
    rmdir(dir);
}

static void write_raw(const char* path, const void* data, size_t len) {
    FILE* f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

PD_TEST(reads_ascii_ply_with_mixed_types_and_faces) {
    char dir[64], path[128];
    temp_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    snprintf(path, sizeof path, "%s/mesh.ply", dir);
    const char* text = "ply\r\nformat ascii 1.0\r\ncomment made by hand\r\n"
                       "element vertex 3\r\nproperty double x\r\nproperty float y\r\n"
                       "property float z\r\nproperty uchar red\r\nproperty short t\r\n"
                       "element face 1\r\nproperty list uchar int vertex_indices\r\n"
                       "end_header\r\n"
                       "0.5 1 2 255 -3\r\n-1.25 0 0 0 7\r\n3 4 5e-3 17 0\r\n3 0 1 2\r\n";
    write_raw(path, text, strlen(text));
    pd_ply_data ply;
    pd_error err;
    pd_status s = pd_read_ply(path, &ply, &err);
    if (s != PD_OK)
        printf("  error: %s\n", err.message);
    PD_REQUIRE(s == PD_OK);
    PD_CHECK_NEAR(ply.count, 3, 0);
    PD_CHECK_NEAR(ply.prop_count, 5, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "x")[1], -1.25, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "z")[2], 5e-3f, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "red")[0], 255, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "t")[0], -3, 0);
    pd_ply_free(&ply);
    remove(path);
    rmdir(dir);
}

static size_t put_be(unsigned char* p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
        p[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    return (size_t)bytes;
}

PD_TEST(reads_big_endian_ply_after_another_element) {
    char dir[64], path[128];
    temp_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    snprintf(path, sizeof path, "%s/be.ply", dir);
    const char* header = "ply\nformat binary_big_endian 1.0\nelement camera 2\n"
                         "property float px\nproperty ushort q\n"
                         "element vertex 2\nproperty double x\nproperty float y\n"
                         "property int z\nproperty ushort w\nend_header\n";
    unsigned char buf[512];
    size_t len = strlen(header);
    memcpy(buf, header, len);
    for (int c = 0; c < 2; ++c) /* the camera rows to skip: 6 bytes each */
        len += put_be(buf + len, 0xDEADBEEFu, 4), len += put_be(buf + len, 0xFFFF, 2);
    double xs[2] = {-2.5, 1e-3};
    float ys[2] = {3.25f, -0.5f};
    int32_t zs[2] = {-40000, 12};
    uint16_t ws[2] = {65535, 2};
    for (int i = 0; i < 2; ++i) {
        uint64_t xb;
        uint32_t yb;
        memcpy(&xb, &xs[i], 8);
        memcpy(&yb, &ys[i], 4);
        len += put_be(buf + len, xb, 8);
        len += put_be(buf + len, yb, 4);
        len += put_be(buf + len, (uint32_t)zs[i], 4);
        len += put_be(buf + len, ws[i], 2);
    }
    write_raw(path, buf, len);
    pd_ply_data ply;
    pd_error err;
    PD_REQUIRE(pd_read_ply(path, &ply, &err) == PD_OK);
    PD_CHECK_NEAR(ply.count, 2, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "x")[0], -2.5, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "x")[1], (float)1e-3, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "y")[0], 3.25, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "z")[0], -40000, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "w")[0], 65535, 0);
    PD_CHECK_NEAR(pd_ply_column(&ply, "w")[1], 2, 0);
    pd_ply_free(&ply);

    /* The same file cut short, and a file that is not PLY at all. */
    write_raw(path, buf, len - 5);
    PD_CHECK(pd_read_ply(path, &ply, &err) == PD_ERR_IO);
    printf("  truncated: %s\n", err.message);
    PD_CHECK(strstr(err.message, "truncated") != NULL);
    write_raw(path, "solid cube\n", 11);
    PD_CHECK(pd_read_ply(path, &ply, &err) == PD_ERR_IO);
    PD_CHECK(strstr(err.message, "not a PLY") != NULL);
    remove(path);
    rmdir(dir);
}

/* A 200-byte PLY whose header claims 2e9 vertices (binary or ascii), and a device that never
 * ends, are refused before anything is allocated for them: the peak of counted memory does not
 * grow by more than a header's worth. */
PD_TEST(ply_counts_are_bounded_by_the_file_size) {
    char dir[64], path[128];
    temp_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    snprintf(path, sizeof path, "%s/liar.ply", dir);
    const char* headers[] = {
        "ply\nformat binary_little_endian 1.0\nelement vertex 2000000000\nproperty float x\n"
        "property float y\nproperty float z\nend_header\n",
        "ply\nformat ascii 1.0\nelement vertex 2000000000\nproperty float x\nproperty float y\n"
        "property float z\nend_header\n",
    };
    for (int i = 0; i < 2; ++i) {
        unsigned char buf[200] = {0};
        memcpy(buf, headers[i], strlen(headers[i]));
        write_raw(path, buf, sizeof buf);
        size_t peak = pd_peak_bytes();
        pd_ply_data ply;
        pd_error err;
        PD_CHECK(pd_read_ply(path, &ply, &err) == PD_ERR_IO);
        printf("  %s: %s\n", i ? "ascii" : "binary", err.message);
        PD_CHECK(strstr(err.message, "more elements than the file's 200 bytes") != NULL);
        PD_CHECK_NEAR((double)(pd_peak_bytes() - peak), 0, 4096);
    }
    pd_ply_data ply;
    pd_error err;
    PD_CHECK(pd_read_ply("/dev/zero", &ply, &err) == PD_ERR_IO);
    printf("  /dev/zero: %s\n", err.message);
    PD_CHECK(strstr(err.message, "not a regular file") != NULL);
    remove(path);
    rmdir(dir);
}

PD_TEST(png_round_trip_is_exact) {
    enum { W = 37, H = 23 };
    static uint8_t rgb[W * H * 3];
    for (int i = 0; i < W * H * 3; ++i)
        rgb[i] = (uint8_t)(i * 7 + i / 5);
    char dir[64], path[128];
    temp_dir(dir, sizeof dir);
    PD_REQUIRE(dir[0]);
    snprintf(path, sizeof path, "%s/a.png", dir);
    PD_REQUIRE(pd_write_png(path, W, H, rgb, NULL) == PD_OK);
    int w, h;
    uint8_t* back;
    PD_REQUIRE(pd_read_png(path, &w, &h, &back, NULL) == PD_OK);
    PD_CHECK_NEAR(w, W, 0);
    PD_CHECK_NEAR(h, H, 0);
    PD_CHECK(memcmp(back, rgb, sizeof rgb) == 0);
    pd_free(back, (size_t)w * (size_t)h * 3);
    remove(path);
    rmdir(dir);
}

static float luminance(const float c[3]) {
    return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
}

PD_TEST(colormap_runs_dark_to_bright_monotonically) {
    float c[3], prev = -1.0f;
    int drops = 0;
    for (int i = 0; i <= 100; ++i) {
        pd_colormap((float)i / 100.0f, c);
        float l = luminance(c);
        drops += l < prev;
        prev = l;
    }
    pd_colormap(0.0f, c);
    PD_CHECK_NEAR(luminance(c), 0.07, 0.05);
    pd_colormap(1.0f, c);
    PD_CHECK_NEAR(luminance(c), 0.87, 0.05);
    PD_CHECK_NEAR(drops, 0, 0);
}

/* Ball of points on a lattice: the render must centre it, cover a plausible area and shade it
 * lighter on the lit (upper-left) side than on the other. */
PD_TEST(render_centres_and_shades_a_ball) {
    enum { W = 200, H = 150, M = 21 };
    static float x[M * M * M], y[M * M * M], z[M * M * M], s[M * M * M];
    size_t n = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < M; ++j)
            for (int k = 0; k < M; ++k) {
                float px = (i - 10) * 0.01f, py = (j - 10) * 0.01f, pz = (k - 10) * 0.01f;
                if (px * px + py * py + pz * pz > 0.1f * 0.1f)
                    continue;
                x[n] = px + 3.0f, y[n] = py + 1.0f, z[n] = pz - 2.0f, s[n] = py;
                ++n;
            }
    float r = pd_render_estimate_radius(n, x, y, z);
    PD_CHECK_NEAR(r, 0.006, 1e-5);
    static uint8_t img[W * H * 3], img2[W * H * 3];
    pd_render_def def = pd_default_render_def();
    def.width = W;
    def.height = H;
    def.shadow = 0;
    PD_REQUIRE(pd_render_points(&def, n, x, y, z, NULL, img, NULL) == PD_OK);
    double cx = 0, cy = 0, count = 0, left = 0, right = 0;
    int nl = 0, nr = 0;
    for (int py = 0; py < H; ++py)
        for (int px = 0; px < W; ++px) {
            const uint8_t* p = img + 3 * (py * W + px);
            const uint8_t* bg = img + 3 * (py * W); /* column 0 is background */
            if (abs(p[0] - bg[0]) + abs(p[1] - bg[1]) + abs(p[2] - bg[2]) < 30)
                continue;
            cx += px, cy += py, count += 1;
            double lum = p[0] + p[1] + p[2];
            if (px < W / 2 - 10)
                left += lum, nl++;
            else if (px > W / 2 + 10)
                right += lum, nr++;
        }
    PD_REQUIRE(count > 0 && nl > 0 && nr > 0);
    /* The camera fits the ball (0.1 m + splat radius) with margin 1.08 into a 30 degree field
     * of view: asin(sin(15 deg) / 1.08) -> 69 px of radius, pi 69^2 / (W H). */
    PD_CHECK_NEAR(cx / count, W / 2.0, 3);
    PD_CHECK_NEAR(cy / count, H / 2.0, 3);
    PD_CHECK_NEAR(count / (W * H), 0.50, 0.05);
    PD_CHECK(left / nl > right / nr + 20);
    /* Colouring by a scalar changes the picture; the same call gives the same bytes. */
    PD_REQUIRE(pd_render_points(&def, n, x, y, z, s, img2, NULL) == PD_OK);
    PD_CHECK(memcmp(img, img2, sizeof img) != 0);
    static uint8_t img3[W * H * 3];
    PD_REQUIRE(pd_render_points(&def, n, x, y, z, s, img3, NULL) == PD_OK);
    PD_CHECK(memcmp(img2, img3, sizeof img) == 0);
}

/* Degenerate inputs: no points gives the background only; one point is still drawn. */
PD_TEST(render_handles_zero_and_one_point) {
    enum { W = 64, H = 48 };
    static uint8_t img[W * H * 3];
    pd_render_def def = pd_default_render_def();
    def.width = W;
    def.height = H;
    float x = 1.0f, y = 2.0f, z = 3.0f, s = 5.0f;
    PD_REQUIRE(pd_render_points(&def, 0, NULL, NULL, NULL, NULL, img, NULL) == PD_OK);
    int differ = 0;
    for (int i = 0; i < W * H; ++i)
        differ += abs(img[3 * i] - img[3 * (i / W * W)]) > 30;
    PD_CHECK_NEAR(differ, 0, 0);
    PD_REQUIRE(pd_render_points(&def, 1, &x, &y, &z, &s, img, NULL) == PD_OK);
    differ = 0;
    for (int i = 0; i < W * H; ++i)
        differ += abs(img[3 * i] - img[3 * (i / W * W)]) > 30;
    PD_CHECK(differ > 10);
    printf("  one point covers %d pixels\n", differ);
}
