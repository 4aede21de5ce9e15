/* Coulomb friction against a collider (projective_pd, friction inside the implicit solve,
 * boundary/friction.h). Reference: Coulomb's law for a rigid block on an incline of angle
 * theta: it sticks when mu >= tan(theta), otherwise slides with acceleration
 * g (sin theta - mu cos theta). The block is stiff (E = 1 MPa: its own weight squashes it by
 * 0.05 %), so it acts nearly rigid. `no_slip` holds the positions of touching particles, and
 * the written velocity is the one the particles move with. */
#include "boundary/collider.h"
#include "support.h"

#define G 9.81

/* A 0.1 x 0.05 x 0.1 m block (8 x 4 x 8 = 256 particles), tilted with the plane below.
 * 100 iterations, so that the steps converge (tolerance 1e-4) while the block settles after the
 * release; with the default 20 see incline_default_iterations_h_one_thirtieth. */
static const char* k_incline =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":100},"
    "\"time\":{\"dt\":0.0333333333333,\"fps\":30,\"frames\":30},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e6,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"block\",\"material\":\"m\",\"spacing\":0.0125,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.05,0.1]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0]}]}";

/* The same incline as a mesh collider: an open square of two triangles (10 m wide, written to
 * a temporary file) turned by the same angle, with a wall behind it. */
static const char* k_incline_mesh =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":100},"
    "\"time\":{\"dt\":0.0333333333333,\"fps\":30,\"frames\":30},\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e6,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"block\",\"material\":\"m\",\"spacing\":0.0125,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.05,0.1]}}],"
    "\"colliders\":[{\"type\":\"mesh\",\"path\":\"/tmp/pd_friction_square.obj\","
    "\"thickness\":0.2}]}";
static int g_mesh_incline; /* 1: incline_open builds the mesh incline */

static int write_square(void) {
    FILE* f = fopen("/tmp/pd_friction_square.obj", "w");
    if (!f)
        return 0;
    fprintf(f, "v -5 0 -5\nv -5 0 5\nv 5 0 5\nv 5 0 -5\nf 1 2 3\nf 1 3 4\n");
    return fclose(f) == 0;
}

typedef struct incline {
    double theta; /* rad */
    pd_vec3 n;    /* plane normal */
    pd_vec3 down; /* unit vector down the slope */
    pd_test_sim sim;
} incline;

/* Opens the scene with the plane tilted by theta_deg about z and the given boundary,
 * friction and step, and turns the block (sampled level at the origin) onto the plane, its
 * lowest layer touching it. The energy of the body does not change under a rotation. */
static int incline_open(incline* c, double theta_deg, double mu, const char* boundary, int fps,
                        const char* iterations) {
    c->theta = theta_deg * PD_PI / 180;
    double cs = cos(c->theta), sn = sin(c->theta);
    c->n = pd_v3(sn, cs, 0);
    c->down = pd_v3(cs, -sn, 0);
    char normal[96], fric[64], bnd[64], dt[64], fp[64];
    if (g_mesh_incline) /* the square's normal (0, 1, 0) turned to (sin, cos, 0) */
        snprintf(normal, sizeof normal, "colliders[0].rotate=[0,0,1,%.17g]", -theta_deg);
    else
        snprintf(normal, sizeof normal, "colliders[0].normal=[%.17g,%.17g,0]", sn, cs);
    snprintf(fric, sizeof fric, "colliders[0].friction=%.17g", mu);
    snprintf(bnd, sizeof bnd, "colliders[0].boundary=%s", boundary);
    snprintf(dt, sizeof dt, "time.dt=%.17g", 1.0 / fps);
    snprintf(fp, sizeof fp, "time.fps=%d", fps);
    /* a no_slip collider takes no friction coefficient (refused: it would do nothing) */
    int no_slip = strcmp(boundary, "no_slip") == 0;
    const char* sets[] = {normal, bnd, dt, fp, no_slip ? iterations : fric, iterations};
    int count = 4 + !no_slip + (iterations != NULL);
    if (!pd_test_sim_open(&c->sim, g_mesh_incline ? k_incline_mesh : k_incline, sets, count))
        return 0;
    pd_particles* p = &c->sim.world->particles;
    double half = 0.5 * p->spacing[0];
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->pos[i];
        p->pos[i] = pd_v3(x.x * cs + (x.y - half) * sn, -x.x * sn + (x.y - half) * cs, x.z);
    }
    return 1;
}

/* Mass-weighted mean position of the block. */
static pd_vec3 centre_of_mass(const pd_particles* p) {
    pd_vec3 c = pd_v3(0, 0, 0);
    double m = 0;
    for (size_t i = 0; i < p->count; ++i)
        c = pd_v3_madd(c, p->mass[i], p->pos[i]), m += p->mass[i];
    return pd_v3_scale(c, 1 / m);
}

static pd_vec3 mean_velocity(const pd_particles* p) {
    pd_vec3 c = pd_v3(0, 0, 0);
    double m = 0;
    for (size_t i = 0; i < p->count; ++i)
        c = pd_v3_madd(c, p->mass[i], p->vel[i]), m += p->mass[i];
    return pd_v3_scale(c, 1 / m);
}

/* Least-squares fit of s(t) = a0 + a1 t + a2 t^2 over k samples; returns 2 a2 (m/s^2). */
static double fit_acceleration(const double* t, const double* s, int k) {
    double m[3][4] = {{0}};
    for (int j = 0; j < k; ++j) {
        double b[3] = {1, t[j], t[j] * t[j]};
        for (int r = 0; r < 3; ++r) {
            for (int q = 0; q < 3; ++q)
                m[r][q] += b[r] * b[q];
            m[r][3] += b[r] * s[j];
        }
    }
    for (int c = 0; c < 3; ++c) /* Gauss elimination; the normal matrix is SPD */
        for (int r = c + 1; r < 3; ++r) {
            double f = m[r][c] / m[c][c];
            for (int q = c; q < 4; ++q)
                m[r][q] -= f * m[c][q];
        }
    double x[3];
    for (int r = 2; r >= 0; --r) {
        double v = m[r][3];
        for (int q = r + 1; q < 3; ++q)
            v -= m[r][q] * x[q];
        x[r] = v / m[r][r];
    }
    return 2 * x[2];
}

#define MAX_SAMPLES 512

typedef struct slide {
    double accel;   /* fitted after the settling time (m/s^2) */
    double moved;   /* along the slope after `duration` (m) */
    double v_err;   /* largest |written velocity - (x_new - x_old)/h| over particles and steps */
    double v_along; /* written centre-of-mass velocity along the slope at the end (m/s) */
    double v_half;  /* the same at half the duration (m/s) */
    int ok;
} slide;

/* Runs the block for `duration` s, sampling the centre of mass along the slope every step. */
static slide run_incline(double theta_deg, double mu, int fps, double duration,
                         const char* iterations) {
    slide out = {0};
    incline c;
    if (!incline_open(&c, theta_deg, mu, "slip", fps, iterations))
        return out;
    pd_world* w = c.sim.world;
    pd_particles* p = &w->particles;
    double t[MAX_SAMPLES], s[MAX_SAMPLES];
    int k = 0;
    pd_vec3 c0 = centre_of_mass(p);
    double settle = 0.2, h = w->def.dt;
    pd_error err = {0};
    while (w->time < duration - 1e-9) {
        if (pd_world_step(w, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            pd_test_sim_close(&c.sim);
            return out;
        }
        for (size_t i = 0; i < p->count; ++i) {
            pd_vec3 moved = pd_v3_scale(pd_v3_sub(p->pos[i], w->step_start[i]), 1 / h);
            out.v_err = fmax(out.v_err, pd_v3_len(pd_v3_sub(p->vel[i], moved)));
        }
        double along = pd_v3_dot(pd_v3_sub(centre_of_mass(p), c0), c.down);
        if (w->time > settle - 1e-9 && k < MAX_SAMPLES)
            t[k] = w->time, s[k] = along, ++k;
        out.moved = along;
        if (fabs(w->time - 0.5 * duration) < 0.5 * h)
            out.v_half = pd_v3_dot(mean_velocity(p), c.down);
    }
    out.accel = fit_acceleration(t, s, k);
    out.v_along = pd_v3_dot(mean_velocity(p), c.down);
    out.ok = 1;
    pd_test_sim_close(&c.sim);
    return out;
}

static double coulomb_accel(double theta_deg, double mu) {
    double th = theta_deg * PD_PI / 180;
    return fmax(0, G * (sin(th) - mu * cos(th)));
}

/* One incline case against Coulomb's law: sliding with the fitted acceleration within 5 % of
 * g (sin theta - mu cos theta), or sticking: moved along the slope less than 0.1 % of what a
 * frictionless block slides in the same time (0.5 g sin theta t^2). */
static void check_incline(double theta_deg, double mu, int fps) {
    double duration = 1.0;
    slide r = run_incline(theta_deg, mu, fps, duration, NULL);
    PD_REQUIRE(r.ok);
    double a_ref = coulomb_accel(theta_deg, mu);
    double free_slide = 0.5 * G * sin(theta_deg * PD_PI / 180) * duration * duration;
    printf("  theta %.0f deg, mu %.2f (tan theta %.3f), h = 1/%d s: moved %.4g m in %.1f s, "
           "fitted acceleration %.4g m/s^2 (Coulomb %.4g)\n",
           theta_deg, mu, tan(theta_deg * PD_PI / 180), fps, r.moved, duration, r.accel, a_ref);
    if (a_ref > 0)
        PD_CHECK_REL(r.accel, a_ref, 0.05);
    else
        PD_CHECK_NEAR(r.moved / free_slide, 0, 1e-3);
}

PD_TEST(incline_20_degrees_h_one_thirtieth) {
    const double mus[] = {0, 0.2, 0.5, 1.0};
    for (int k = 0; k < 4; ++k)
        check_incline(20, mus[k], 30);
}

PD_TEST(incline_35_degrees_h_one_thirtieth) {
    const double mus[] = {0, 0.2, 0.5, 1.0};
    for (int k = 0; k < 4; ++k)
        check_incline(35, mus[k], 30);
}

PD_TEST(incline_20_and_35_degrees_h_one_120th) {
    const double mus[] = {0.2, 0.5, 1.0};
    for (int k = 0; k < 3; ++k) {
        check_incline(20, mus[k], 120);
        check_incline(35, mus[k], 120);
    }
}
/* The same law on a mesh collider (an open two-triangle square with a wall behind it, turned
 * by the mesh's `rotate`): mu 0.2 slides at g (sin - mu cos), mu 0.5 sticks. */
PD_TEST(incline_20_degrees_on_a_mesh_collider) {
    PD_REQUIRE(write_square());
    g_mesh_incline = 1;
    check_incline(20, 0.2, 30);
    check_incline(20, 0.5, 30);
    g_mesh_incline = 0;
}

/* The default 20 iterations at h = 1/30 s, where the steps of the released block end
 * unconverged while it settles (its weight reaches the contacts as an elastic wave and it
 * bounces): the same law and tolerances as above. It failed while y* was projected onto the
 * plane (1.467 m/s^2 and 2.5 mm), and while friction's lagged normal forces were renewed after
 * 8 and 16 iterations whatever they did: the start's lambda knows only the bottom layer's
 * weight, the renewals came late, and an unconverged step left the block stuck on friction's
 * kink (0.0103 m/s^2; 16-30 iterations slid or stuck as round-off decided). Renewed when the
 * renewal moves the residual by more than the residual, the L-BFGS pairs dropped
 * (docs/methods/projective_pd.md, lambda): 1.605-1.609 at 16 to 30 iterations (the portable
 * build 1.576-1.609). */
PD_TEST(incline_default_iterations_h_one_thirtieth) {
    const char* twenty = "solver.iterations=20";
    slide a = run_incline(35, 0.5, 30, 1.0, twenty);
    slide b = run_incline(20, 0.5, 30, 1.0, twenty);
    PD_REQUIRE(a.ok && b.ok);
    printf("  20 iterations, h = 1/30 s: 35 deg mu 0.5 acceleration %.4g m/s^2 (Coulomb %.4g); "
           "20 deg mu 0.5 moved %.3g m\n",
           a.accel, coulomb_accel(35, 0.5), b.moved);
    PD_CHECK_REL(a.accel, coulomb_accel(35, 0.5), 0.05);
    PD_CHECK_NEAR(b.moved / (0.5 * G * sin(20 * PD_PI / 180)), 0, 1e-3);
}

/* The velocity written for a block sliding on a frictional incline (35 degrees, mu = 0.2,
 * h = 1/30 s) is the one its particles move with: per particle and step it equals
 * (x_new - x_old) / h to 1e-9 m/s (the issue: 0.08-0.34 m/s written while moving at
 * 0.74-1.37 m/s, when friction acted on velocities only), and the block's written velocity
 * grows between 0.5 s and 1 s by Coulomb's g (sin theta - mu cos theta) 0.5 s within 2 %. */
PD_TEST(written_velocity_is_the_motion_on_a_frictional_incline) {
    slide r = run_incline(35, 0.2, 30, 1.0, NULL);
    PD_REQUIRE(r.ok);
    printf("  largest |v - (x_new - x_old)/h| %.3g m/s; written velocity along the slope %.4g m/s "
           "at 0.5 s, %.4g m/s at 1 s\n",
           r.v_err, r.v_half, r.v_along);
    PD_CHECK_NEAR(r.v_err, 0, 1e-9);
    PD_CHECK_REL(r.v_along - r.v_half, coulomb_accel(35, 0.2) * 0.5, 0.02);
}

/* Largest tangential displacement over one step (m) of a particle touching the plane at the
 * step's start and end, over `duration` s; *centre gets how far the block's centre moved. */
static double contact_slip(double theta_deg, double mu, const char* boundary, double duration,
                           double* centre, int* contacts) {
    incline c;
    if (!incline_open(&c, theta_deg, mu, boundary, 30, NULL))
        return NAN;
    pd_world* w = c.sim.world;
    pd_particles* p = &w->particles;
    const pd_collider* plane = &w->colliders.items[0];
    pd_vec3 c0 = centre_of_mass(p);
    double slip = 0;
    *contacts = 0;
    pd_error err = {0};
    while (w->time < duration - 1e-9) {
        if (pd_world_step(w, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            slip = NAN;
            break;
        }
        for (size_t i = 0; i < p->count; ++i) {
            if (!(pd_collider_sdf(plane, w->step_start[i], NULL) < 1e-9 &&
                  pd_collider_sdf(plane, p->pos[i], NULL) < 1e-9))
                continue;
            pd_vec3 d = pd_v3_sub(p->pos[i], w->step_start[i]);
            slip = fmax(slip, pd_v3_len(pd_v3_madd(d, -pd_v3_dot(d, c.n), c.n)));
            ++*contacts;
        }
    }
    *centre = pd_v3_len(pd_v3_sub(centre_of_mass(p), c0));
    pd_test_sim_close(&c.sim);
    return slip;
}

/* no_slip holds positions: on a 45 degree incline (where mu = 0.5 slides) the particles
 * touching a no_slip plane when a step begins and ends move tangentially by no more than
 * round-off (1e-12 m) in any step. The same measure on a slip plane with mu = 0.5 shows the
 * sliding (above 1 mm a step), so it can tell the two apart. */
PD_TEST(no_slip_holds_touching_particles) {
    double moved_ns, moved_slip;
    int n_ns, n_slip;
    double ns = contact_slip(45, 0, "no_slip", 1.0, &moved_ns, &n_ns);
    double sl = contact_slip(45, 0.5, "slip", 1.0, &moved_slip, &n_slip);
    printf("  45 deg: no_slip largest tangential step of a touching particle %.3g m (%d contact "
           "steps, centre moved %.3g m); slip mu = 0.5: %.3g m (centre moved %.3g m)\n",
           ns, n_ns, moved_ns, sl, moved_slip);
    PD_CHECK(n_ns > 1000);
    PD_CHECK_NEAR(ns, 0, 1e-12);
    PD_CHECK(sl > 1e-3);
}

/* A moving collider drags by friction: a block at rest on a floor that slides at 0.5 m/s
 * (mu = 0.5, h = 1/120 s) is accelerated at mu g = 4.905 m/s^2 (Coulomb, kinetic friction
 * from the relative slip) until it moves with the floor, after 0.102 s, and then sticks to it
 * (static friction, the anchor carried by the floor's velocity). */
PD_TEST(moving_floor_drags_the_block_by_coulomb_friction) {
    const char* sets[] = {"colliders[0].friction=0.5", "colliders[0].velocity=[0.5,0,0]",
                          "time.dt=0.00833333333333333", "time.fps=120"};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_incline, sets, 4));
    pd_particles* p = &t.world->particles;
    double half = 0.5 * p->spacing[0];
    for (size_t i = 0; i < p->count; ++i)
        p->pos[i].y -= half; /* the lowest layer on the floor */
    PD_REQUIRE(pd_test_sim_run(&t, 0.05));
    double v_slip = mean_velocity(p).x;
    PD_REQUIRE(pd_test_sim_run(&t, 0.5));
    double v_stuck = mean_velocity(p).x;
    printf("  block velocity %.4g m/s at 0.05 s (mu g t = %.4g), %.4g m/s at 0.5 s (floor 0.5)\n",
           v_slip, 0.5 * G * 0.05, v_stuck);
    PD_CHECK_REL(v_slip, 0.5 * G * 0.05, 0.05);
    PD_CHECK_REL(v_stuck, 0.5, 0.01);
    pd_test_sim_close(&t);
}
