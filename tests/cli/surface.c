/* `peridot surface`: a run folder without frames is refused (exit 2, saying what it wants);
 * a frame becomes surface_NNNNN.ply and .obj that read back as the same mesh, around
 * the particles; bad options are refused. The mesh's shape is tested in tests/unit/surface.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_support.h"
#include "geometry/ply_mesh.h"
#include "peridot/surface.h"
#include "test.h"

/* A 10 x 4 x 10 block of particles 0.05 m apart, an ascii PLY frame as a run writes one. */
static void write_block_frame(const char* path) {
    FILE* f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "ply\nformat ascii 1.0\nelement vertex 400\nproperty float x\nproperty float y\n"
               "property float z\nend_header\n");
    for (int i = 0; i < 10; ++i)
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 10; ++k)
                fprintf(f, "%g %g %g\n", i * 0.05, j * 0.05, k * 0.05);
    fclose(f);
}

/* Lines of path starting with prefix. */
static size_t count_lines(const char* path, const char* prefix) {
    FILE* f = fopen(path, "r");
    char line[256];
    size_t n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strncmp(line, prefix, strlen(prefix)) == 0;
    if (f)
        fclose(f);
    return n;
}

PD_TEST(refuses_a_folder_without_frames) {
    char dir[64] = "/tmp/pd_surface_XXXXXX";
    PD_REQUIRE(mkdtemp(dir) != NULL);
    char* err = NULL;
    PD_CHECK(run_cli(dir, "surface /tmp/pd_surface_no_such_folder", &err) == 2);
    PD_CHECK(err && strstr(err, "cannot open the run folder"));
    free(err);
    char args[128];
    snprintf(args, sizeof args, "surface %s", dir);
    PD_CHECK(run_cli(dir, args, &err) == 2);
    PD_CHECK(err && strstr(err, "no particle frames (frame_NNNNN.ply)"));
    free(err);
    remove_tree(dir);
}

PD_TEST(frame_becomes_one_mesh_in_ply_and_obj) {
    char dir[64] = "/tmp/pd_surface_XXXXXX", path[128], args[192];
    PD_REQUIRE(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/frame_00002.ply", dir);
    write_block_frame(path);
    char* err = NULL;
    snprintf(args, sizeof args, "surface %s --voxel 0.6", dir);
    PD_CHECK(run_cli(dir, args, &err) == 2); /* 0.6 spacing > radius / 3 */
    PD_CHECK(err && strstr(err, "--voxel must lie between"));
    free(err);
    snprintf(args, sizeof args, "surface %s --frame 7", dir);
    PD_CHECK(run_cli(dir, args, &err) == 2);
    free(err);
    snprintf(args, sizeof args, "surface %s --radius 1 --smooth 0", dir); /* voxel 1/3 */
    PD_CHECK(run_cli(dir, args, &err) == (pd_surface_available() ? 0 : 2));
    free(err);
    snprintf(args, sizeof args, "surface %s --format both", dir);
    int code = run_cli(dir, args, &err);
    if (!pd_surface_available()) { /* the build without OpenVDB: the hint, exit 2 */
        PD_CHECK(code == 2);
        PD_CHECK(err && strstr(err, "apt-get install libopenvdb-dev"));
        free(err);
        remove_tree(dir);
        return;
    }
    PD_CHECK(code == 0);
    free(err);
    pd_mesh mesh = {0};
    pd_error e = {0};
    snprintf(path, sizeof path, "%s/surface_00002.ply", dir);
    PD_REQUIRE(pd_ply_mesh_read(path, &mesh, "", &e) == PD_OK);
    snprintf(path, sizeof path, "%s/surface_00002.obj", dir);
    size_t v = count_lines(path, "v "), f = count_lines(path, "f ");
    printf("  surface_00002.ply: %zu vertices, %zu triangles; .obj: %zu v, %zu f\n",
           mesh.vertex_count, mesh.triangle_count, v, f);
    PD_CHECK(mesh.triangle_count > 100 && mesh.triangle_count == f && mesh.vertex_count == v);
    /* the block's particles span [0, 0.45] x [0, 0.15] x [0, 0.45]; the surface lies within
     * half a spacing (0.025) outside it */
    double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
    for (size_t i = 0; i < mesh.vertex_count; ++i) {
        double p[3] = {mesh.vertices[i].x, mesh.vertices[i].y, mesh.vertices[i].z};
        for (int c = 0; c < 3; ++c)
            lo[c] = fmin(lo[c], p[c]), hi[c] = fmax(hi[c], p[c]);
    }
    printf("  bounds [%.4f %.4f %.4f] to [%.4f %.4f %.4f]\n", lo[0], lo[1], lo[2], hi[0], hi[1],
           hi[2]);
    PD_CHECK_NEAR(lo[1], -0.0125, 0.0125);
    PD_CHECK_NEAR(hi[1], 0.15 + 0.0125, 0.0125);
    PD_CHECK_NEAR(hi[0], 0.45 + 0.0125, 0.0125);
    pd_mesh_free(&mesh);
    remove_tree(dir);
}

/* A run's own binary frames become surfaces; a rerun into the folder removes them, as it
 * removes the frames they were made of. */
PD_TEST(run_frames_become_surfaces_that_a_rerun_removes) {
    char dir[64] = "/tmp/pd_surface_XXXXXX", scene[128], out[128], path[192], args[512];
    PD_REQUIRE(mkdtemp(dir) != NULL);
    snprintf(scene, sizeof scene, "%s/ball.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_file(scene, BALL_SCENE(2, ""));
    char* err = NULL;
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet", scene, out);
    PD_REQUIRE(run_cli(dir, args, &err) == 0);
    free(err);
    snprintf(args, sizeof args, "surface '%s' --format both", out);
    int code = run_cli(dir, args, &err);
    free(err);
    PD_CHECK(code == (pd_surface_available() ? 0 : 2));
    if (code == 0) {
        int made = 0;
        for (int f = 0; f <= 2; ++f) {
            snprintf(path, sizeof path, "%s/surface_%05d.ply", out, f);
            made += exists(path);
        }
        printf("  surfaces of frames 0..2: %d of 3\n", made);
        PD_CHECK(made == 3);
    }
    snprintf(path, sizeof path, "%s/surface_00000.obj", out);
    write_file(path, "# stale\n"); /* also without OpenVDB */
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet --frames 1", scene, out);
    PD_CHECK(run_cli(dir, args, &err) == 0);
    free(err);
    snprintf(path, sizeof path, "%s/surface_00002.ply", out);
    int left = exists(path);
    snprintf(path, sizeof path, "%s/surface_00000.obj", out);
    left += exists(path);
    printf("  surfaces left after the rerun: %d\n", left);
    PD_CHECK(left == 0);
    remove_tree(dir);
}
