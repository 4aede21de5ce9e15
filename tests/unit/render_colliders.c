/* The render's colliders, shadow and legend read back from its pixels (issue 35, item 4): a
 * collider drawn where the camera the render reports projects it, in its colour lit as the
 * particles are; the ground below a hovering body in its shadow; a moving collider posed at the
 * frame's time; the legend's colour bar and text. The command line's side (frames, movies,
 * outliers) is tests/cli/render_truth.c. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peridot/render.h"
#include "lattice_ball.h"
#include "test.h"

/* Pixel (sx, sy) of p through the camera the render reports (a pinhole: its own projection
 * here, not the renderer's). */
static void project(const pd_render_info* c, pd_vec3 p, int* sx, int* sy) {
    double q[3] = {p.x - c->eye[0], p.y - c->eye[1], p.z - c->eye[2]};
    double zc = q[0] * c->forward[0] + q[1] * c->forward[1] + q[2] * c->forward[2];
    double xr = q[0] * c->right[0] + q[1] * c->right[1] + q[2] * c->right[2];
    double yu = q[0] * c->up[0] + q[1] * c->up[1] + q[2] * c->up[2];
    *sx = (int)floor(c->cx + c->focal * xr / zc);
    *sy = (int)floor(c->cy - c->focal * yu / zc);
}

/* Per channel median of the 7 x 7 pixels about (sx, sy): grid lines and edges do not sway it. */
static void median_colour(const uint8_t* rgb, int w, int h, int sx, int sy, int out[3]) {
    for (int c = 0; c < 3; ++c) {
        int v[49], n = 0;
        for (int dy = -3; dy <= 3; ++dy)
            for (int dx = -3; dx <= 3; ++dx) {
                int x = sx + dx < 0 ? 0 : (sx + dx >= w ? w - 1 : sx + dx);
                int y = sy + dy < 0 ? 0 : (sy + dy >= h ? h - 1 : sy + dy);
                v[n++] = rgb[3 * ((size_t)y * (size_t)w + (size_t)x) + (size_t)c];
            }
        for (int i = 1; i < n; ++i)
            for (int j = i; j > 0 && v[j - 1] > v[j]; --j) {
                int t = v[j];
                v[j] = v[j - 1];
                v[j - 1] = t;
            }
        out[c] = v[n / 2];
    }
}

/* Expected colour of a lit collider: albedo x (0.45 + 0.55 n.l), the light being the
 * particles' (-0.40 right + 0.70 up + 0.59 towards the eye), darkened by `shadow` x 0.45. */
static void expected_colour(const float albedo[3], const double n[3], const pd_render_info* c,
                            double shadow, int out[3]) {
    double l[3];
    for (int k = 0; k < 3; ++k)
        l[k] = -0.40 * c->right[k] + 0.70 * c->up[k] - 0.59 * c->forward[k];
    double nl = n[0] * l[0] + n[1] * l[1] + n[2] * l[2];
    for (int k = 0; k < 3; ++k)
        out[k] = (int)(255.0 * albedo[k] * (0.45 + 0.55 * (nl > 0 ? nl : 0)) * (1 - 0.45 * shadow) +
                       0.5);
}

static int check_colour(const char* what, const int got[3], const int want[3], int tol) {
    printf("  %s: rgb %d %d %d, expected %d %d %d (+-%d)\n", what, got[0], got[1], got[2], want[0],
           want[1], want[2], tol);
    int ok = 1;
    for (int c = 0; c < 3; ++c)
        ok &= abs(got[c] - want[c]) <= tol;
    return ok;
}

/* The ground plane y = 0 and a sphere obstacle beside a ball of particles hovering 0.3 m above
 * the ground: at the projected centre of the sphere's face towards the eye the image has the
 * obstacle's colour lit from the front; a ground point away from the ball has the ground's
 * colour; the ground straight below the ball (not below its lowest particle, which hovers) is
 * in full shadow. */
PD_TEST(render_draws_colliders_and_the_shadow_below) {
    enum { W = 400, H = 300 };
    static float x[k_ball_cap], y[k_ball_cap], z[k_ball_cap];
    static uint8_t rgb[W * H * 3];
    size_t n = ball(pd_v3(0, 0.4, 0), x, y, z);
    pd_collider_def defs[2] = {pd_default_collider_def(), pd_default_collider_def()};
    defs[0].type = PD_COLLIDER_PLANE;
    defs[0].point = pd_v3(0, 0, 0);
    defs[0].normal = pd_v3(0, 1, 0);
    defs[1].type = PD_COLLIDER_SPHERE;
    defs[1].shape.type = PD_SHAPE_SPHERE;
    defs[1].shape.center = pd_v3(0.3, 0.12, -0.1);
    defs[1].shape.radius = 0.12;
    pd_render_stage* stage;
    pd_error err;
    PD_REQUIRE(pd_render_stage_create(defs, 2, &stage, &err) == PD_OK);
    pd_render_stage_pose(stage, 0.0);
    pd_render_def def = pd_default_render_def();
    def.width = W;
    def.height = H;
    def.supersample = 1; /* one sample per pixel: the colours tested are flat */
    def.stage = stage;
    pd_render_info info;
    PD_REQUIRE(pd_render_frame(&def, n, x, y, z, NULL, rgb, &info, &err) == PD_OK);
    pd_render_stage_destroy(stage);

    static const float k_obstacle[3] = {0.50f, 0.58f, 0.72f}, k_ground[3] = {0.86f, 0.84f, 0.80f};
    /* The sphere's point facing the eye: its normal is -forward. */
    double to_eye[3] = {-info.forward[0], -info.forward[1], -info.forward[2]};
    pd_vec3 face = pd_v3_madd(defs[1].shape.center, 0.12, pd_v3(to_eye[0], to_eye[1], to_eye[2]));
    int sx, sy, got[3], want[3];
    project(&info, face, &sx, &sy);
    PD_REQUIRE(sx > 3 && sy > 3 && sx < W - 3 && sy < H - 3);
    median_colour(rgb, W, H, sx, sy, got);
    expected_colour(k_obstacle, to_eye, &info, 0, want);
    PD_CHECK(check_colour("sphere collider at its projection", got, want, 4));

    double up[3] = {0, 1, 0};
    project(&info, pd_v3(-0.25, 0, 0.25), &sx, &sy); /* lit ground, in front, left */
    PD_REQUIRE(sx > 3 && sy > 3 && sx < W - 3 && sy < H - 3);
    median_colour(rgb, W, H, sx, sy, got);
    expected_colour(k_ground, up, &info, 0, want);
    PD_CHECK(check_colour("ground plane at its projection", got, want, 4));

    project(&info, pd_v3(0, 0, 0), &sx, &sy); /* straight below the ball's centre */
    PD_REQUIRE(sx > 3 && sy > 3 && sx < W - 3 && sy < H - 3);
    median_colour(rgb, W, H, sx, sy, got);
    expected_colour(k_ground, up, &info, 1.0, want);
    PD_CHECK(check_colour("ground below the hovering ball (full shadow)", got, want, 4));
}

/* A unit-free cube [0, 1]^3 as an OBJ file (12 triangles, outward): a closed mesh collider. */
static int write_cube_obj(const char* path) {
    FILE* f = fopen(path, "w");
    if (!f)
        return 0;
    for (int v = 0; v < 8; ++v)
        fprintf(f, "v %d %d %d\n", v & 1, (v >> 1) & 1, (v >> 2) & 1);
    static const int k_faces[12][3] = {{1, 3, 7}, {1, 7, 5}, {2, 6, 8}, {2, 8, 4},
                                       {1, 5, 6}, {1, 6, 2}, {3, 4, 8}, {3, 8, 7},
                                       {1, 2, 4}, {1, 4, 3}, {5, 7, 8}, {5, 8, 6}};
    for (int t = 0; t < 12; ++t)
        fprintf(f, "f %d %d %d\n", k_faces[t][0], k_faces[t][1], k_faces[t][2]);
    return fclose(f) == 0;
}

/* The colour at the projection of `p` against the lit colour of a surface with normal n. */
static int check_at(const char* what, const uint8_t* rgb, int w, int h, const pd_render_info* c,
                    pd_vec3 p, const float albedo[3], const double n[3]) {
    int sx, sy, got[3], want[3];
    project(c, p, &sx, &sy);
    if (!(sx > 3 && sy > 3 && sx < w - 3 && sy < h - 3)) {
        printf("  %s projects outside the image (%d, %d)\n", what, sx, sy);
        return 0;
    }
    median_colour(rgb, w, h, sx, sy, got);
    expected_colour(albedo, n, c, 0, want);
    return check_colour(what, got, want, 4);
}

/* A box, a capped cylinder and a cube mesh standing on the ground, lit from above: the middle
 * of each top (normal +y) has the obstacle's colour; inside a container box the far wall
 * (its inner side, normal +z) has the container's, and the near walls are not drawn. */
PD_TEST(render_draws_boxes_cylinders_meshes_and_containers) {
    enum { W = 400, H = 300 };
    static float x[k_ball_cap], y[k_ball_cap], z[k_ball_cap];
    static uint8_t rgb[W * H * 3];
    size_t n = ball(pd_v3(0, 0.4, 0), x, y, z);
    char obj[64];
    snprintf(obj, sizeof obj, "/tmp/pd_render_cube_%d.obj", (int)getpid());
    PD_REQUIRE(write_cube_obj(obj));
    pd_collider_def defs[5];
    for (int k = 0; k < 5; ++k)
        defs[k] = pd_default_collider_def();
    defs[0].type = PD_COLLIDER_PLANE;
    defs[1].type = PD_COLLIDER_BOX;
    defs[1].shape.type = PD_SHAPE_BOX;
    defs[1].shape.min = pd_v3(-0.4, 0, -0.3);
    defs[1].shape.max = pd_v3(-0.2, 0.15, -0.1);
    defs[2].type = PD_COLLIDER_CYLINDER;
    defs[2].shape.type = PD_SHAPE_CYLINDER;
    defs[2].shape.base = pd_v3(0, 0, -0.4);
    defs[2].shape.axis = pd_v3(0, 1, 0);
    defs[2].shape.radius = 0.08;
    defs[2].shape.height = 0.3;
    defs[3].type = PD_COLLIDER_MESH;
    defs[3].shape.type = PD_SHAPE_MESH;
    snprintf(defs[3].shape.path, sizeof defs[3].shape.path, "%s", obj);
    defs[3].shape.scale = 0.1;
    defs[3].shape.translate = pd_v3(0.2, 0, -0.2);
    defs[4].type = PD_COLLIDER_BOX;
    defs[4].inside = 1;
    defs[4].shape.type = PD_SHAPE_BOX;
    defs[4].shape.min = pd_v3(-0.7, -0.1, -0.7);
    defs[4].shape.max = pd_v3(0.7, 1.0, 0.7);
    pd_render_stage* stage;
    pd_error err;
    pd_status st = pd_render_stage_create(defs, 5, &stage, &err);
    remove(obj);
    if (st != PD_OK)
        printf("  %s: %s\n", err.path, err.message);
    PD_REQUIRE(st == PD_OK);
    pd_render_stage_pose(stage, 0.0);
    pd_render_def def = pd_default_render_def();
    def.width = W;
    def.height = H;
    def.supersample = 1; /* one sample per pixel: the colours tested are flat */
    def.stage = stage;
    pd_render_info info;
    PD_REQUIRE(pd_render_frame(&def, n, x, y, z, NULL, rgb, &info, &err) == PD_OK);
    pd_render_stage_destroy(stage);
    static const float k_obstacle[3] = {0.50f, 0.58f, 0.72f},
                       k_container[3] = {0.80f, 0.82f, 0.86f};
    double up[3] = {0, 1, 0}, plus_z[3] = {0, 0, 1};
    PD_CHECK(check_at("box top", rgb, W, H, &info, pd_v3(-0.3, 0.15, -0.2), k_obstacle, up));
    PD_CHECK(check_at("cylinder cap", rgb, W, H, &info, pd_v3(0, 0.3, -0.4), k_obstacle, up));
    PD_CHECK(check_at("cube mesh top", rgb, W, H, &info, pd_v3(0.25, 0.1, -0.15), k_obstacle, up));
    PD_CHECK(check_at("container's far wall", rgb, W, H, &info, pd_v3(0.2, 0.35, -0.7), k_container,
                      plus_z));
}

/* Pixels of the image within `tol` of colour c (0..1 linear RGB as the colormap gives). */
static size_t count_colour(const uint8_t* rgb, int w, int x0, int x1, int h, const float c[3],
                           int tol, double* mean_row) {
    size_t count = 0;
    double rows = 0;
    for (int y = 0; y < h; ++y)
        for (int x = x0; x < x1; ++x) {
            const uint8_t* p = rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
            int near = 1;
            for (int k = 0; k < 3; ++k)
                near &= abs(p[k] - (int)(255 * c[k] + 0.5f)) <= tol;
            count += near;
            rows += near ? y : 0;
        }
    *mean_row = count ? rows / (double)count : -1;
    return count;
}

/* Ink of the legend's text: near-black pixels, which neither the shaded particles' colormap nor
 * the background has. */
static size_t count_ink(const uint8_t* rgb, int w, int x0, int x1, int h) {
    size_t ink = 0;
    for (int y = 0; y < h; ++y)
        for (int x = x0; x < x1; ++x) {
            const uint8_t* p = rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
            ink += p[0] < 60 && p[1] < 60 && p[2] < 60;
        }
    return ink;
}

/* With a legend the right edge of the image holds the colormap's two ends (yellow above the
 * purple) in a bar of at least its width, and text; without one, neither. */
PD_TEST(render_legend_shows_the_colour_bar_and_text) {
    enum { W = 400, H = 300 };
    static float x[k_ball_cap], y[k_ball_cap], z[k_ball_cap], s[k_ball_cap];
    static uint8_t with[W * H * 3], without[W * H * 3];
    size_t n = ball(pd_v3(0, 0, 0), x, y, z);
    for (size_t i = 0; i < n; ++i)
        s[i] = y[i];
    pd_render_def def = pd_default_render_def();
    def.width = W;
    def.height = H;
    def.supersample = 1; /* one sample per pixel: the colours tested are flat */
    pd_render_info info;
    PD_REQUIRE(pd_render_frame(&def, n, x, y, z, s, without, &info, NULL) == PD_OK);
    def.legend_title = "height [m]";
    PD_REQUIRE(pd_render_frame(&def, n, x, y, z, s, with, &info, NULL) == PD_OK);
    float top[3], bottom[3];
    pd_colormap(1.0f, top);
    pd_colormap(0.0f, bottom);
    double row_top, row_bottom, r0, r1;
    /* The right eighth: the bar and the numbers beside it; the ball alone does not reach it. */
    int x0 = W - W / 8;
    size_t n_top = count_colour(with, W, x0, W, H, top, 6, &row_top);
    size_t n_bottom = count_colour(with, W, x0, W, H, bottom, 6, &row_bottom);
    size_t ink = count_ink(with, W, x0, W, H);
    size_t none = count_colour(without, W, x0, W, H, top, 6, &r0) +
                  count_colour(without, W, x0, W, H, bottom, 6, &r1) +
                  count_ink(without, W, x0, W, H);
    printf("  legend: %zu px of the top colour (mean row %.0f), %zu of the bottom (row %.0f), "
           "%zu of ink; without: %zu\n",
           n_top, row_top, n_bottom, row_bottom, ink, none);
    PD_CHECK(n_top >= 10 && n_bottom >= 10); /* the bar is 10 px wide at this size */
    PD_CHECK(row_top < row_bottom);
    PD_CHECK(ink >= 100); /* the numbers and the end of the title, in 5 x 7 glyphs */
    PD_CHECK_NEAR((double)none, 0, 0);
    PD_CHECK_NEAR(info.scalar_min, -0.1, 1e-6);
    PD_CHECK_NEAR(info.scalar_max, 0.1, 1e-6);
}

/* A collider moving at 0.4 m/s along x, posed at t = 0.5 s, is drawn 0.2 m from where it
 * started: the obstacle's colour is at its moved projection, and no longer at its first one. */
PD_TEST(render_poses_a_moving_collider_at_the_frame_time) {
    enum { W = 320, H = 240 };
    static float x[k_ball_cap], y[k_ball_cap], z[k_ball_cap];
    static uint8_t rgb[W * H * 3];
    size_t n = ball(pd_v3(0, 0.4, 0), x, y, z);
    pd_collider_def defs[2] = {pd_default_collider_def(), pd_default_collider_def()};
    defs[0].type = PD_COLLIDER_PLANE; /* the ground brings the sphere into view */
    defs[0].normal = pd_v3(0, 1, 0);
    pd_collider_def* def0 = &defs[1];
    def0->type = PD_COLLIDER_SPHERE;
    def0->shape.type = PD_SHAPE_SPHERE;
    def0->shape.center = pd_v3(-0.1, 0.1, 0.1);
    def0->shape.radius = 0.08;
    def0->velocity = pd_v3(0.4, 0, 0);
    pd_render_stage* stage;
    PD_REQUIRE(pd_render_stage_create(defs, 2, &stage, NULL) == PD_OK);
    pd_render_stage_pose(stage, 0.5);
    pd_render_def def = pd_default_render_def();
    def.width = W;
    def.height = H;
    def.supersample = 1; /* one sample per pixel: the colours tested are flat */
    def.stage = stage;
    pd_render_info info;
    PD_REQUIRE(pd_render_frame(&def, n, x, y, z, NULL, rgb, &info, NULL) == PD_OK);
    pd_render_stage_destroy(stage);
    static const float k_obstacle[3] = {0.50f, 0.58f, 0.72f};
    double to_eye[3] = {-info.forward[0], -info.forward[1], -info.forward[2]};
    pd_vec3 e = pd_v3(to_eye[0], to_eye[1], to_eye[2]);
    int sx, sy, got[3], want[3];
    expected_colour(k_obstacle, to_eye, &info, 0, want);
    project(&info, pd_v3_madd(pd_v3(0.1, 0.1, 0.1), 0.08, e), &sx, &sy);
    PD_REQUIRE(sx > 3 && sy > 3 && sx < W - 3 && sy < H - 3);
    median_colour(rgb, W, H, sx, sy, got);
    PD_CHECK(check_colour("moved sphere at its projection (t = 0.5 s)", got, want, 4));
    project(&info, pd_v3_madd(def0->shape.center, 0.08, e), &sx, &sy);
    PD_REQUIRE(sx > 3 && sy > 3 && sx < W - 3 && sy < H - 3);
    median_colour(rgb, W, H, sx, sy, got);
    PD_CHECK(!check_colour("where it started (t = 0): not the sphere", got, want, 4));
}

/* The view box by its definition: on 1000 points x = 0..999 m (y = z = 0) and one at 1e6 m,
 * the cut is 1 % of 1001 points, 10 at each end: the box runs from the 11th smallest (x = 10)
 * to the 11th largest (x = 990, the far point being the largest), grown by half of 980 and by
 * the radius 0.5 m; the far point is outside. A ground plane 5 m below joins the
 * box (within twice its diagonal); one 5000 m below does not. */
PD_TEST(render_view_box_is_the_grown_percentile_box) {
    enum { N = 1001 };
    static float x[N], y[N], z[N];
    for (int i = 0; i < N - 1; ++i)
        x[i] = (float)((i * 389) % 1000); /* every value once, out of order */
    x[N - 1] = 1e6f;
    float lo[3], hi[3];
    size_t outside = pd_render_view_box(NULL, N, x, y, z, 0.5f, lo, hi);
    printf("  box x %.2f..%.2f, y %.2f..%.2f; %zu outside\n", lo[0], hi[0], lo[1], hi[1], outside);
    PD_CHECK_NEAR(lo[0], 10 - 490 - 0.5, 1e-3);
    PD_CHECK_NEAR(hi[0], 990 + 490 + 0.5, 1e-3);
    PD_CHECK_NEAR(lo[1], -0.5, 1e-6);
    PD_CHECK_NEAR((double)outside, 1, 0);
    for (int k = 0; k < 2; ++k) {
        pd_collider_def plane = pd_default_collider_def();
        plane.point = pd_v3(0, k == 0 ? -5.0 : -5000.0, 0);
        pd_render_stage* stage;
        PD_REQUIRE(pd_render_stage_create(&plane, 1, &stage, NULL) == PD_OK);
        pd_render_view_box(stage, N, x, y, z, 0.5f, lo, hi);
        pd_render_stage_destroy(stage);
        printf("  ground at y = %g: box bottom %g\n", plane.point.y, lo[1]);
        PD_CHECK_NEAR(lo[1], k == 0 ? -5.0 : -0.5, 1e-6);
    }
}
