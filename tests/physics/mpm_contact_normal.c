/* mpm's contact normal between two bodies (src/grid/grid_fields.c; issue 32, docs/methods/mpm.md
 * "Contact"): two equal blocks (0.1 m, E 1e5 Pa, frictionless) meet face to face over half a
 * face, the first moving at v0 = 1 m/s along x, the second at rest and offset by half its
 * height along y. A frictionless contact pushes along the normal of the faces that touch, so
 * each block's sideways velocity is what the faces' turn makes of the impulse along x:
 * dv_y = tan(phi) dv_x, phi the faces' tilt. The faces do turn: each block is struck on half
 * its face, half a block off its centre, and the face's free edge gives more than its edge tied
 * to the block's unloaded half (measured 0.052 rad by 0.021 s, 0.14 when they part, within the
 * bound of (v0 / 2) / 0.05 m = 10 rad/s on how fast half a face can turn). That law holds while
 * the faces are the contact: up to the first crossing, when a particle of one block's free half
 * passes the other's corner along x (the free half is not stopped: it runs on at about v0 while the
 * faces move at v0 / 2, so it reaches half a spacing past the face at t0 + r / (v0 / 2) = 0.02 s,
 * t0 = 0.01 s the touch). Past it, the free half runs under the other block's corner and the
 * contact there pushes across the faces (physics, not checked). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods.h"
#include "support.h"

static const char* k_blocks =
    "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":100,\"frames\":6},"
    "\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,"
    "\"poisson_ratio\":0.3,\"contact_friction\":0}},\"bodies\":["
    "{\"name\":\"a\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[1,0,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.1,0.1]}},"
    "{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,\"velocity\":[0,0,0],"
    "\"shape\":{\"type\":\"box\",\"min\":[0.11,0.05,0],\"max\":[0.21,0.15,0.1]}}]}";

/* The scene's numbers: a's faces end at x 0.1, b's begin at 0.11, and they overlap along y from
 * 0.05 to 0.1. */
#define V0       1.0
#define SPACING  0.01
#define A_FRONT  0.1
#define B_BACK   0.11
#define OVERLAP0 0.05
#define OVERLAP1 0.1
#define T_TOUCH  ((B_BACK - A_FRONT) / V0)          /* 0.01 s */
#define T_CROSS  (T_TOUCH + SPACING / 2 / (V0 / 2)) /* 0.02 s: the first crossing, derived */

/* The mean velocity of a body's particles (equal masses). */
static pd_vec3 body_velocity(const pd_particles* p, int body) {
    pd_vec3 v = pd_v3(0, 0, 0);
    double n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->body[i] == body)
            v = pd_v3_add(v, p->vel[i]), n += 1;
    return pd_v3_scale(v, 1 / n);
}

/* The facing layer a particle starts in: 0 a's front layer, 1 b's back layer (both over the
 * overlap), -1 neither. */
static int facing_layer(int body, pd_vec3 x0) {
    if (x0.y < OVERLAP0 || x0.y > OVERLAP1)
        return -1;
    if (body == 0 && x0.x > A_FRONT - SPACING)
        return 0;
    if (body == 1 && x0.x < B_BACK + SPACING)
        return 1;
    return -1;
}

/* Each facing layer's least-squares line x = c + s y through its particles now (x0: the
 * positions at the start, by id). */
typedef struct face_line {
    double c, s, y_lo, y_hi; /* and the layer's lowest and highest centres */
} face_line;

static void face_lines(const pd_particles* p, const pd_vec3* x0, face_line line[2]) {
    double sum[2][5] = {{0}}; /* n, y, x, y y, x y */
    line[0].y_lo = line[1].y_lo = INFINITY, line[0].y_hi = line[1].y_hi = -INFINITY;
    for (size_t i = 0; i < p->count; ++i) {
        int f = facing_layer(p->body[i], x0[p->id[i]]);
        if (f < 0)
            continue;
        pd_vec3 x = p->pos[i];
        line[f].y_lo = fmin(line[f].y_lo, x.y), line[f].y_hi = fmax(line[f].y_hi, x.y);
        sum[f][0] += 1, sum[f][1] += x.y, sum[f][2] += x.x, sum[f][3] += x.y * x.y;
        sum[f][4] += x.x * x.y;
    }
    for (int f = 0; f < 2; ++f) {
        double n = sum[f][0], det = n * sum[f][3] - sum[f][1] * sum[f][1];
        line[f].s = (n * sum[f][4] - sum[f][1] * sum[f][2]) / det;
        line[f].c = (sum[f][2] - line[f].s * sum[f][1]) / n;
    }
}

/* The faces' tilt: the mean of the two lines' angles, positive when the normal from a into b
 * turns towards +y. */
static double face_tilt(const face_line line[2]) {
    return -0.5 * (atan(line[0].s) + atan(line[1].s));
}

/* 1 when a particle of a free half has its centre past the other block's corner along x: one of
 * a's below the overlap beyond b's surface at b's lowest facing particle (b's line there less
 * half a spacing), where it runs under b; or one of b's above it behind a's at a's highest. */
static int crossed(const pd_particles* p, const pd_vec3* x0, const face_line line[2]) {
    double r = SPACING / 2;
    double b_corner = line[1].c + line[1].s * line[1].y_lo - r;
    double a_corner = line[0].c + line[0].s * line[0].y_hi + r;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 s = x0[p->id[i]], x = p->pos[i];
        if ((p->body[i] == 0 && s.y < OVERLAP0 && x.x > b_corner) ||
            (p->body[i] == 1 && s.y > OVERLAP1 && x.x < a_corner))
            return 1;
    }
    return 0;
}

/* What run_blocks measures: at the window's end (the last step before the first crossing, whose
 * contact saw no particle past a face), a's sideways velocity and the faces' law, the sum over
 * the steps of tan(phi) dv_x (phi the faces' tilt at the step's middle); the crossing's time;
 * and the same pair when the run ends. */
typedef struct blocks_run {
    double t_window, vy_window, law_window, tilt_window, t_cross;
    double t_end, vy_end, law_end, tilt_end, vx_a, vx_b;
} blocks_run;

/* Runs the blocks to t_end with the normal `normal` (solver.mpm.contact_normal). */
static int run_blocks(const char* normal, double t_end, blocks_run* r) {
    char set[96];
    snprintf(set, sizeof set, "solver.mpm.contact_normal=%s", normal);
    const char* sets[1] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_blocks, sets, 1))
        return 0;
    const pd_particles* p = &t.world->particles;
    pd_vec3* x0 = pd_test_positions_by_id(t.world);
    if (!x0) {
        pd_test_sim_close(&t);
        return 0;
    }
    face_line line[2];
    face_lines(p, x0, line);
    double law = 0, tilt = face_tilt(line);
    memset(r, 0, sizeof *r);
    pd_error err = {0};
    int ok = 1;
    while (ok && t.world->time < t_end - 1e-9) {
        double t_before = t.world->time, vy_before = body_velocity(p, 0).y, law_before = law;
        double tilt_before = tilt, vx_before = body_velocity(p, 0).x;
        ok = pd_world_step(t.world, &err) == PD_OK;
        face_lines(p, x0, line);
        tilt = face_tilt(line);
        law += (body_velocity(p, 0).x - vx_before) * tan(0.5 * (tilt_before + tilt));
        if (r->t_cross == 0 && crossed(p, x0, line)) {
            r->t_cross = t.world->time;
            r->t_window = t_before, r->vy_window = vy_before, r->law_window = law_before;
            r->tilt_window = tilt_before;
        }
    }
    if (!ok)
        printf("  step failed: %s\n", err.message);
    r->t_end = t.world->time, r->vy_end = body_velocity(p, 0).y, r->law_end = law;
    r->tilt_end = tilt, r->vx_a = body_velocity(p, 0).x, r->vx_b = body_velocity(p, 1).x;
    free(x0);
    pd_test_sim_close(&t);
    return ok;
}

/* Records a measured row (PD_MEASURED, docs/measured.csv); verdict: pass, FAIL or reported. */
static void record(const char* quantity, double measured, double reference, const char* range,
                   const char* verdict) {
    const char* path = getenv("PD_MEASURED");
    if (!path || !*path)
        return;
    char key[256], row[512];
    snprintf(key, sizeof key,
             "contact,blocks_meeting_over_half_a_face_are_pushed_along_their_faces,mpm,%s,",
             quantity);
    snprintf(row, sizeof row, "%s%.4g,%.4g,%s,%s", key, measured, reference, range, verdict);
    pd_test_record_row(path, key, row);
}

/* Up to the first crossing, a's sideways velocity is the faces' law within 1 % of v0 (measured
 * with the fitted normal, the default: -0.0144 m/s for the law's -0.0088 at 0.0208 s, 0.0056
 * apart). A normal tilted off the faces fails it: the mass gradient's, which tilts towards the
 * diagonal at a body's corner, reads -0.040 for -0.0046 (checked to fail). So does a contact that
 * leaks friction or pushes along the grid's axes by more than 1 % of v0 sideways. A normal held
 * along x would read 0 for -0.0088, within that tolerance: so the velocity must also lie nearer
 * the law than zero (|v - law| < |v|: the law's sign and more than half of it; measured 1.64 x
 * the law), which a normal held along the undeformed faces fails. The crossing comes at the derived
 * 0.02 s within a quarter of the time since the touch (measured 0.0212 s: the free half is slowed
 * by its tie to the struck half); blocks passing through each other would cross at 0.015 s. After
 * it the free halves run under the corners, whose contact pushes across the faces: by the parting
 * (0.035 s) a's sideways velocity is -0.048 against the faces' law's -0.032 (printed, not checked:
 * no independent solution of that contact is at hand). */
PD_TEST(blocks_meeting_over_half_a_face_are_pushed_along_their_faces) {
    blocks_run fit, mg;
    PD_REQUIRE(run_blocks("fitted", 0.04, &fit));
    PD_REQUIRE(run_blocks("mass_gradient", T_CROSS + 0.002, &mg));
    PD_REQUIRE(fit.t_cross > 0 && mg.t_cross > 0);
    double off = fabs(fit.vy_window - fit.law_window), off_mg = fabs(mg.vy_window - mg.law_window);
    printf("  first crossing at %.4f s (derived %.4f); at %.4f s, before it: a's sideways velocity "
           "%.5f m/s, the faces' law %.5f (faces turned %.4f rad): %.5f apart (1 %% of v0 "
           "allowed)\n",
           fit.t_cross, T_CROSS, fit.t_window, fit.vy_window, fit.law_window, fit.tilt_window, off);
    printf("  the mass gradient's normal: crossing at %.4f s; at %.4f s sideways %.5f, the law "
           "%.5f: %.5f apart (must fail)\n",
           mg.t_cross, mg.t_window, mg.vy_window, mg.law_window, off_mg);
    printf("  after the crossing (physics, not checked): at %.4f s a's velocity (%.4f, %.5f), "
           "b's x %.4f, the faces' law %.5f (faces turned %.4f rad)\n",
           fit.t_end, fit.vx_a, fit.vy_end, fit.vx_b, fit.law_end, fit.tilt_end);
    PD_CHECK(fit.vx_b > fit.vx_a); /* they met and parted: b took the lead */
    PD_CHECK_NEAR(fit.t_cross, T_CROSS, 0.25 * (T_CROSS - T_TOUCH));
    PD_CHECK_NEAR(fit.vy_window, fit.law_window, 0.01 * V0);
    PD_CHECK(off < fabs(fit.vy_window)); /* nearer the law than a normal held along x */
    PD_CHECK(off_mg > 0.01 * V0);        /* the tolerance resolves a normal tilted off the faces */
    record("first crossing (s)", fit.t_cross, T_CROSS, "+-0.0025",
           fabs(fit.t_cross - T_CROSS) <= 0.25 * (T_CROSS - T_TOUCH) ? "pass" : "FAIL");
    record("sideways velocity at the first crossing (m/s)", fit.vy_window, fit.law_window, "+-0.01",
           off <= 0.01 * V0 ? "pass" : "FAIL");
    record("sideways velocity at the first crossing over the faces' law",
           fit.vy_window / fit.law_window, 1, "> 0.5", off < fabs(fit.vy_window) ? "pass" : "FAIL");
    record("sideways velocity at the first crossing with the mass gradient (m/s)", mg.vy_window,
           mg.law_window, "> 0.01 off", off_mg > 0.01 * V0 ? "pass" : "FAIL");
    record("sideways velocity when parted (m/s)", fit.vy_end, fit.law_end, "", "reported");
}

/* solver.mpm.contact_normal reaches the contact: early in the same impact (0.02 s, the contact
 * under way) the mass gradient has pushed the blocks sideways more than twice as fast as the
 * fitted plane (unit.grid's one step over the undeformed blocks: 17.8 % against 0.75 % of the
 * normal impulse). Measured: 0.0429 against 0.0122 m/s. A key that did not reach the grid gives
 * the same run twice. */
PD_TEST(contact_normal_key_selects_the_normal) {
    blocks_run fit, mg;
    PD_REQUIRE(run_blocks("fitted", 0.02, &fit));
    PD_REQUIRE(run_blocks("mass_gradient", 0.02, &mg));
    printf("  at 0.02 s: sideways %.4f m/s with the fitted normal, %.4f with the mass gradient\n",
           fabs(fit.vy_end), fabs(mg.vy_end));
    PD_CHECK(fabs(mg.vy_end) > 2 * fabs(fit.vy_end));
}
