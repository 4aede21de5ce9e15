/* mpm's pins (src/solvers/mpm/mpm_pins.c): Fig. 7's twisting bar
 * (scenes/fang2019_fig7_twisting_bar.json; Fang 2019 Sec. 9), whose right pin turns 180
 * degrees about the bar's axis in 1 s. The grid must give every pinned particle the velocity
 * its pin prescribes, sum_i w_ip v_i = v_p, since the body beside it moves with the nodes, not
 * with v_p. The reference is the keyframes' rotation itself: x(t) = c + R_x(pi t) (X - c) about
 * the pin region's centre c, v_p = (x(t1) - x(t0)) / dt (the world's finite difference over the
 * step). The tolerance: the step imposes the pin's motion once, as its chord; within the step
 * the rotation's own velocity turns by omega dt, r omega^2 dt at radius r, and an error below
 * half of that, r omega^2 dt / 2 at the pin's largest radius, is below what the step resolves of
 * the prescribed motion (4.0e-5 m/s at the explicit step's 0.26 ms).
 * The pinned particles' PIC average (held that way before) misses by about the pin's angular
 * speed times a quarter cell at the pin's faces (printed, from the same step's grid). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "methods.h"
#include "solvers/mpm/mpm_internal.h"

#define TWIST_RATE    PD_PI /* rad/s: 180 degrees in 1 s */
#define PIN_CENTRE_X  0.235
#define PIN_CENTRE_YZ 0.025

/* Where the turning pin puts rest position x0 at time t (the keyframes: about +x through the
 * region's centre, pi t rad, for t <= 1 s). */
static pd_vec3 turned(pd_vec3 x0, double t) {
    double a = TWIST_RATE * t, c = cos(a), s = sin(a);
    double y = x0.y - PIN_CENTRE_YZ, z = x0.z - PIN_CENTRE_YZ;
    return pd_v3(x0.x, PIN_CENTRE_YZ + c * y - s * z, PIN_CENTRE_YZ + s * y + c * z);
}

typedef struct pin_error {
    double grid, pic, speed, tolerance; /* the largest |sum w v_i - v_p|, the same of the PIC
                                         * average, the largest pin speed, r omega^2 dt / 2 (m/s) */
    int steps;
    long factorisations; /* of the pins' basis (a turning pin's particles move every step) */
    long blocks;         /* blocks factorised (the still pin's is kept) */
} pin_error;

/* The largest error at the turning pin's particles after the step just taken (t0 .. t1): the
 * grid's interpolated velocity against the keyframes' chord velocity. */
static double grid_error(const pd_test_sim* t, double t0, double t1, double* speed) {
    const pd_particles* p = &t->world->particles;
    const pd_mpm_state* s = t->world->solver_state;
    double worst = 0;
    *speed = 0;
    for (size_t i = 0; i < p->count; ++i) {
        if (!(p->flags[i] & PD_P_PINNED) || p->rest[i].x < 0.2)
            continue;
        pd_vec3 ref =
            pd_v3_scale(pd_v3_sub(turned(p->rest[i], t1), turned(p->rest[i], t0)), 1 / (t1 - t0));
        pd_mat3 c;
        pd_vec3 v = pd_mpm_grid_to_particle(&s->grid, s->grid.velocity, i, &c);
        worst = fmax(worst, pd_v3_len(pd_v3_sub(v, ref)));
        *speed = fmax(*speed, pd_v3_len(ref));
    }
    return worst;
}

/* The PIC average's error on the same grid: the pinned particles alone transferred without their
 * affine part and back (this overwrites the solver's grid: the run's last use of it). */
static double pic_error(pd_test_sim* t, double t0, double t1) {
    const pd_particles* p = &t->world->particles;
    pd_mpm_state* s = t->world->solver_state;
    double* mass = calloc(p->count, sizeof *mass);
    pd_vec3* v = calloc(p->count, sizeof *v);
    double worst = -1;
    if (mass && v) {
        for (size_t i = 0; i < p->count; ++i)
            mass[i] = (p->flags[i] & PD_P_PINNED) ? p->mass[i] : 0;
        pd_grid_from_particles(&s->grid, mass, p->vel, NULL);
        pd_grid_to_particles(&s->grid, v, NULL);
        worst = 0;
        for (size_t i = 0; i < p->count; ++i) {
            if (!(p->flags[i] & PD_P_PINNED) || p->rest[i].x < 0.2)
                continue;
            pd_vec3 ref = pd_v3_scale(pd_v3_sub(turned(p->rest[i], t1), turned(p->rest[i], t0)),
                                      1 / (t1 - t0));
            worst = fmax(worst, pd_v3_len(pd_v3_sub(v[i], ref)));
        }
    }
    free(mass);
    free(v);
    return worst;
}

/* Runs the bar to t_end under the integrator and measures the step that ends there. */
static pin_error twisted(const char* integrator, double t_end) {
    char set[96];
    snprintf(set, sizeof set, "solver.mpm.integrator=%s", integrator);
    const char* sets[] = {set};
    pin_error e = {-1, -1, 0, 0, 0, 0, 0};
    pd_test_sim t;
    if (!pd_test_sim_open_scene(&t, "fang2019_fig7_twisting_bar.json", sets, 1))
        return e;
    double t0 = 0;
    int steps = 0;
    while (t.world->time < t_end - 1e-9) {
        t0 = t.world->time;
        if (!pd_test_sim_run(&t, t0 + t.world->def.dt))
            break;
        steps++;
    }
    double t1 = t.world->time;
    e.steps = steps;
    e.factorisations = ((const pd_mpm_state*)t.world->solver_state)->pin_factorisations;
    e.blocks = ((const pd_mpm_state*)t.world->solver_state)->pin_block_factorisations;
    e.grid = grid_error(&t, t0, t1, &e.speed);
    e.pic = pic_error(&t, t0, t1);
    e.tolerance = 0.5 * (e.speed / TWIST_RATE) * TWIST_RATE * TWIST_RATE * (t1 - t0);
    printf("  %s, step %.3g .. %.4g s (dt %.3g): pin speed up to %.4f m/s; the grid's velocity at "
           "its particles %.2e m/s off (r omega^2 dt / 2 = %.2e), their PIC average %.2e; step "
           "%d, %ld factorisations (%ld blocks)\n",
           integrator, t0, t1, t1 - t0, e.speed, e.grid, e.tolerance, e.pic, steps,
           e.factorisations, e.blocks);
    pd_test_sim_close(&t);
    return e;
}

/* The explicit step: the least change of the nodes' kinetic energy that meets the constraint
 * (mpm_pins.c), the 19th step. */
PD_TEST(turning_pin_moves_its_particles_explicit) {
    pin_error e = twisted("explicit", 0.005);
    PD_REQUIRE(e.grid >= 0);
    PD_CHECK(e.grid < e.tolerance);
    PD_CHECK(e.factorisations >= e.steps);      /* its basis found anew each step: the pin turns */
    PD_CHECK(e.blocks <= e.factorisations + 3); /* the still pin's block kept (about once), the
                                                 * turning one's each time */
    PD_CHECK(e.speed > 0.05); /* the pin turns: pi rad/s at up to 35 mm from the axis */
}

/* The ADMM: the constraint inside its grid steps (mpm_pins.c: the shared nodes' target and W's
 * null space), one step. */
PD_TEST(turning_pin_moves_its_particles_admm) {
    pin_error e = twisted("admm", 0.001);
    PD_REQUIRE(e.grid >= 0);
    PD_CHECK(e.grid < e.tolerance);
    PD_CHECK(e.speed > 0.05);
}

/* A pin inside a body under the implicit integrators (mpm_pins.c: W's null space on the nodes
 * the pins share with the free body). A bar 0.6 x 0.04 x 0.04 m (spacing h = 1 cm, cells 2 cm;
 * E 1e5 Pa, nu 0, rho 1000: with nu 0 a uniaxial strain carries no lateral stress, so the bar is
 * a 1D rod of modulus E) at rest, the layer of particles at its middle (x = 0.305 m, one slab of
 * thickness h) pinned and pushed along +x at V = 0.01 m/s from t = 0; one step at the implicit
 * auto step (10 x the explicit bound, 5 ms). Backward Euler's step from rest is rho v / dt = E v''
 * dt, v = V on the pinned slab: v(d) = V exp(-(d - h / 2) / l) at distance d from its middle, l =
 * dt sqrt(E / rho) = 5 cm (2.5 cells). Checked:
 *  - the pinned particles' interpolated velocity sum_i w_ip v_i is V to 1e-6 V (the constraint
 *    exact but for null directions below the rank tolerance, 1e-5 of their weights);
 *  - the layers one cell (2 h) either side lag the pin by V (1 - exp(-1.5 h / l)) within 15 %:
 *    the pin acts on the grid through its particles' kernels, a cell either side, so the near
 *    field is the discretisation's (newton -12.4 %; the profile's decay farther out is the rod's,
 *    below). Holding every node a pinned particle reaches, as the implicit steps did, drags that
 *    layer with the pin: it lags by -77 % of the rod's lag (0.00060 for 0.00259 m/s): that fails;
 *  - from 2 to 4 cells the velocity falls by exp(-2 dx / l) within 3 % (the rod's decay; newton
 *    +1.8 %);
 *  - the pin's force over the step is the momentum the free particles took (the constraint's
 *    impulse is the only one; the world's pin force leaves out its own particles' m dv), within
 *    2e-3 (the ADMM's grid steps stop at 1e-3 of their residual). */
#define PIN_PLANE_V       0.01
#define PIN_PLANE_X       0.305
#define PIN_PLANE_SPACING 0.01
#define PIN_PLANE_BAR                                                                              \
    "{\"version\": 1, \"method\": \"mpm\", \"time\": {\"dt\": \"auto\", \"fps\": 100, "            \
    "\"frames\": 1}, \"gravity\": [0, 0, 0], \"materials\": {\"m\": {\"density\": 1000, "          \
    "\"youngs_modulus\": 1e5, \"poisson_ratio\": 0}}, \"bodies\": [{\"name\": \"bar\", "           \
    "\"material\": \"m\", \"spacing\": 0.01, \"shape\": {\"type\": \"box\", \"min\": [0, 0, 0], "  \
    "\"max\": [0.6, 0.04, 0.04]}, \"pins\": [{\"region\": {\"type\": \"box\", \"min\": [0.3, -1, " \
    "-1], \"max\": [0.31, 1, 1]}, \"keyframes\": [{\"t\": 0, \"translate\": [0, 0, 0]}, {\"t\": "  \
    "1, \"translate\": [0.01, 0, 0]}]}]}], \"output\": {\"dir\": \"unused\"}}"

typedef struct pin_plane {
    double pinned;          /* the largest |sum w v_i - V| at the pinned particles (m/s) */
    double layer[5];        /* mean v_x of the layers 0..4 cells either side of the pin */
    double dt, length;      /* the step, l */
    double momentum, force; /* the free particles' momentum, the pin's force times dt (x) */
    pd_vec3* pos;           /* after `steps` steps, by id (allocated; thread runs) */
    size_t count;
} pin_plane;

/* The bar stepped `steps` times under `integrator`. */
static int pin_plane_run(const char* integrator, int steps, pin_plane* out) {
    char set[96];
    snprintf(set, sizeof set, "solver.mpm.integrator=%s", integrator);
    /* the ADMM converged: its default stop, 1e-5 of |w b| with b about I, lies above this step's
     * strains (1e-3), where it ends with the decay below 3.7 % off the rod's (newton's 1.7 %) */
    const char* sets[] = {set, "solver.mpm.tolerance=1e-9", "solver.mpm.iterations=200"};
    memset(out, 0, sizeof *out);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, PIN_PLANE_BAR, sets, strcmp(integrator, "admm") == 0 ? 3 : 1))
        return 0;
    pd_error err = {0};
    int ok = 1;
    for (int k = 0; ok && k < steps; ++k)
        ok = pd_world_step(t.world, &err) == PD_OK;
    const pd_particles* p = &t.world->particles;
    const pd_mpm_state* s = t.world->solver_state;
    out->dt = t.world->def.dt;
    out->length = out->dt * sqrt(1e5 / 1000.0);
    int in_layer[5] = {0};
    for (size_t i = 0; ok && i < p->count; ++i) {
        if (p->flags[i] & PD_P_PINNED) {
            pd_mat3 c;
            pd_vec3 v = pd_mpm_grid_to_particle(&s->grid, s->grid.velocity, i, &c);
            out->pinned = fmax(out->pinned, pd_v3_len(pd_v3_sub(v, pd_v3(PIN_PLANE_V, 0, 0))));
            continue;
        }
        out->momentum += p->mass[i] * p->vel[i].x;
        double cells = fabs(p->rest[i].x - PIN_PLANE_X) / (2 * PIN_PLANE_SPACING);
        int k = (int)lround(cells);
        if (k < 5 && fabs(cells - k) < 1e-6)
            out->layer[k] += p->vel[i].x, in_layer[k]++;
    }
    for (int k = 1; k < 5; ++k)
        out->layer[k] /= in_layer[k] > 0 ? in_layer[k] : 1;
    out->force = pd_world_pin(t.world, 0).force.x * out->dt;
    out->count = p->count;
    out->pos = pd_test_positions_by_id(t.world);
    pd_test_sim_close(&t);
    return ok && out->pos && in_layer[1] == 32 && in_layer[4] == 32;
}

static void check_pin_plane(const char* integrator) {
    pin_plane r;
    PD_REQUIRE(pin_plane_run(integrator, 1, &r));
    double lag = PIN_PLANE_V - r.layer[1];
    double rod = PIN_PLANE_V * (1 - exp(-1.5 * PIN_PLANE_SPACING / r.length));
    double decay = r.layer[4] / r.layer[2], rod_decay = exp(-4 * PIN_PLANE_SPACING / r.length);
    printf("  %s: dt %.3g s, l %.4f m: the pinned particles' velocity %.2e m/s off V; one cell "
           "away %.5f m/s, lagging %.5f for the rod's %.5f (%+.1f %%); from 2 to 4 cells x %.4f "
           "for exp(-2 dx / l) %.4f (%+.1f %%); the pin's impulse %.6e for the free particles' "
           "momentum %.6e kg m/s (%+.1e)\n",
           integrator, r.dt, r.length, r.pinned, r.layer[1], lag, rod, 100 * (lag / rod - 1), decay,
           rod_decay, 100 * (decay / rod_decay - 1), r.force, r.momentum, r.force / r.momentum - 1);
    char what[3][128]; /* measured.csv's rows, under the mpm method (pd_test_method_check) */
    snprintf(what[0], sizeof what[0], "%s: pinned particles' velocity off V / V", integrator);
    snprintf(what[1], sizeof what[1], "%s: lag one cell from the pin (m/s)", integrator);
    snprintf(what[2], sizeof what[2], "%s: velocity from 2 to 4 cells / exp(-2 dx / l)",
             integrator);
    pd_test_method_check(what[0], r.pinned / PIN_PLANE_V, 0, 1e-6, 0);
    pd_test_method_check(what[1], lag, rod, 0.15, 1);
    pd_test_method_check(what[2], decay / rod_decay, 1, 0.03, 0);
    PD_CHECK_REL(r.force, r.momentum, 2e-3);
    free(r.pos);
}

/* The measured.csv rows of this file's tests go under mpm (methods.h). */
static void as_mpm(const char* test) {
    pd_test_as_method("mpm", test, PD_CAP_ELASTIC);
}

PD_TEST(pin_inside_a_bar_moves_with_it_under_admm) {
    as_mpm("pin_inside_a_bar_moves_with_it_under_admm");
    check_pin_plane("admm");
}

PD_TEST(pin_inside_a_bar_moves_with_it_under_newton) {
    as_mpm("pin_inside_a_bar_moves_with_it_under_newton");
    check_pin_plane("newton");
}

PD_TEST(pin_inside_a_bar_moves_with_it_under_lbfgs) {
    as_mpm("pin_inside_a_bar_moves_with_it_under_lbfgs");
    check_pin_plane("lbfgs");
}

/* The same bar, 2 ADMM steps and a newton step, gives the same bytes on 1 and 2 threads (the
 * pins' null space is found and applied sequentially, in the nodes' order). */
PD_TEST(pin_inside_a_bar_is_the_same_on_any_thread_count) {
    const char* integrators[] = {"admm", "newton"};
    int steps[] = {2, 1};
    for (int k = 0; k < 2; ++k) {
        pin_plane one, two;
        pd_set_threads(1);
        int ok = pin_plane_run(integrators[k], steps[k], &one);
        pd_set_threads(2);
        ok = ok && pin_plane_run(integrators[k], steps[k], &two);
        pd_set_threads(0);
        PD_REQUIRE(ok && one.count == two.count);
        size_t differ = pd_test_positions_differing(one.pos, two.pos, one.count);
        printf("  %s, %d steps: %zu particles differ between 1 and 2 threads\n", integrators[k],
               steps[k], differ);
        PD_CHECK(differ == 0);
        free(one.pos);
        free(two.pos);
    }
}

/* ---- the basis kept while the pinned particles stay (mpm_pins.c, key_matches) ---- */

/* cantilever.c's beam (two layers pinned at x < 0, L 0.30 m, 48 mm thick; explicit, dt "auto")
 * for `steps` steps; with `refactor` the kept basis is dropped before every step, so that it is
 * found anew. Its positions by id, the factorisations done and the CPU seconds. */
#define CLAMPED_BEAM                                                                               \
    "{\"version\":1,\"method\":\"mpm\",\"time\":{\"dt\":\"auto\",\"fps\":100,\"frames\":45},"      \
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":5e6,\"poisson_ratio\":0.25}},"      \
    "\"bodies\":[{\"name\":\"beam\",\"material\":\"m\",\"spacing\":0.008,"                         \
    "\"shape\":{\"type\":\"box\",\"min\":[-0.016,0,0],\"max\":[0.3,0.048,0.024]},"                 \
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0,1,1]}}]}]}"

typedef struct clamp_run {
    pd_vec3* pos;
    size_t count;
    long factorisations;
    double cpu, sag; /* s; the tip's mean sag (m) */
} clamp_run;

static int clamped_beam(int steps, int refactor, clamp_run* out) {
    memset(out, 0, sizeof *out);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, CLAMPED_BEAM, NULL, 0))
        return 0;
    pd_mpm_state* s = t.world->solver_state;
    pd_error err = {0};
    int ok = 1;
    clock_t c0 = clock();
    for (int k = 0; ok && k < steps; ++k) {
        if (refactor)
            s->pin_key_valid = 0, s->pin_prev_blocks = 0;
        ok = pd_world_step(t.world, &err) == PD_OK;
    }
    out->cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    out->factorisations = s->pin_factorisations;
    const pd_particles* p = &t.world->particles;
    double n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->rest[i].x > 0.3 - 0.008)
            out->sag += p->rest[i].y - p->pos[i].y, n += 1;
    out->sag /= n;
    out->count = p->count;
    out->pos = pd_test_positions_by_id(t.world);
    pd_test_sim_close(&t);
    return ok && out->pos;
}

/* The clamp's pinned particles never move: S, and the basis found from it, are the same bytes
 * each step while the free particles reach the same nodes. Kept, the beam's 300 explicit steps
 * (18 ms of its swing, the tip sagging) factorise at most a few times (when the set of shared
 * nodes changes) and give the same bytes as a basis found anew every step; a key that missed a
 * change (the free mass's nodes) would differ, one never kept would factorise 300 times. */
PD_TEST(still_clamp_keeps_its_basis) {
    clamp_run kept, anew;
    PD_REQUIRE(clamped_beam(300, 0, &kept) && clamped_beam(300, 1, &anew));
    PD_REQUIRE(kept.count == anew.count);
    size_t differ = pd_test_positions_differing(kept.pos, anew.pos, kept.count);
    printf("  300 steps: %ld factorisations kept (CPU %.2f s), %ld found anew (%.2f s); tip sag "
           "%.4g mm; %zu particles differ\n",
           kept.factorisations, kept.cpu, anew.factorisations, anew.cpu, 1e3 * kept.sag, differ);
    as_mpm("still_clamp_keeps_its_basis");
    pd_test_method_check("particles apart from the basis found anew each step", (double)differ, 0,
                         0, 0);
    pd_test_method_bound("factorisations in 300 steps with the basis kept",
                         (double)kept.factorisations, 1, 3);
    PD_CHECK(anew.factorisations == 300);
    PD_CHECK(kept.sag > 1e-4); /* the beam moved: its free mass crossed nodes' weights */
    free(kept.pos);
    free(anew.pos);
}

/* ---- several bodies: the pins on their own body's field ---- */

/* A free block (0.1 x 0.04 x 0.04 m) sliding at 0.1 m/s along +x on a base (0.24 x 0.04 x 0.04
 * m) whose top layer of particles is pinned still, in contact over the base's top face; no
 * gravity, frictionless contact (contact_friction 0 for both), spacing 1 cm (cells 2 cm): a
 * field per body (grid_fields.h). The pins constrain the base's field alone (mpm_pins.c,
 * pd_mpm_pin_constrain_fields), so nothing acts on the slider along x: its momentum is kept, and
 * the base's pinned particles move with their pin (0 m/s). Holding every field at the nodes a
 * pinned particle reaches (as the explicit step with several bodies did before) holds the
 * slider's lowest nodes, up to 1.5 cells above the pinned layer, at the pin's velocity. */
#define SLIDER_V 0.1
#define SLIDER_ON_PINNED_BASE                                                                      \
    "{\"version\": 1, \"method\": \"mpm\", \"time\": {\"dt\": \"auto\", \"fps\": 100, "            \
    "\"frames\": 5}, \"gravity\": [0, 0, 0], \"materials\": {\"m\": {\"density\": 1000, "          \
    "\"youngs_modulus\": 1e5, \"poisson_ratio\": 0.3, \"contact_friction\": 0}}, \"bodies\": "     \
    "[{\"name\": \"base\", \"material\": \"m\", \"spacing\": 0.01, \"shape\": {\"type\": "         \
    "\"box\", "                                                                                    \
    "\"min\": [0, 0, 0], \"max\": [0.24, 0.04, 0.04]}, \"pins\": [{\"region\": {\"type\": "        \
    "\"box\", \"min\": [-1, 0.03, -1], \"max\": [1, 1, 1]}}]}, {\"name\": \"slider\", "            \
    "\"material\": \"m\", \"spacing\": 0.01, \"velocity\": [0.1, 0, 0], \"shape\": {\"type\": "    \
    "\"box\", \"min\": [0.05, 0.04, 0], \"max\": [0.15, 0.08, 0.04]}}], \"output\": {\"dir\": "    \
    "\"unused\"}}"

typedef struct slide {
    double momentum, momentum0; /* the slider's x momentum at the end and at the start */
    double pinned;              /* the largest |v| its field gives a pinned particle (m/s) */
    double cpu;
    pd_vec3* pos;
    size_t count;
} slide;

static int slide_run(double t_end, slide* out) {
    memset(out, 0, sizeof *out);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, SLIDER_ON_PINNED_BASE, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    for (size_t i = 0; i < p->count; ++i)
        if (p->body[i] == 1)
            out->momentum0 += p->mass[i] * p->vel[i].x;
    clock_t c0 = clock();
    int ok = pd_test_sim_run(&t, t_end);
    out->cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    const pd_mpm_state* s = t.world->solver_state;
    for (size_t i = 0; i < p->count; ++i) {
        if (p->body[i] == 1)
            out->momentum += p->mass[i] * p->vel[i].x;
        if (p->flags[i] & PD_P_PINNED) /* the velocity its own field gave it (G2P) */
            out->pinned = fmax(out->pinned, pd_v3_len(s->v_grid[i]));
    }
    out->count = p->count;
    out->pos = pd_test_positions_by_id(t.world);
    pd_test_sim_close(&t);
    return ok && out->pos;
}

/* The slider for 0.05 s (5 mm of sliding): its x momentum kept within 1e-3 (frictionless
 * contact acts along the normal, y; a held field takes it to the pin's 0 at its lowest nodes);
 * the pinned particles still within 1e-12 m/s; the same bytes on 1 and 2 threads. */
PD_TEST(pinned_body_lets_a_free_one_slide_along_it) {
    slide one, two;
    pd_set_threads(1);
    int ok = slide_run(0.05, &one);
    pd_set_threads(2);
    ok = ok && slide_run(0.05, &two);
    pd_set_threads(0);
    PD_REQUIRE(ok && one.count == two.count);
    size_t differ = pd_test_positions_differing(one.pos, two.pos, one.count);
    printf("  0.05 s: the slider's x momentum %.6e of %.6e kg m/s (%+.2e); the pinned particles' "
           "velocity up to %.2e m/s; %zu particles differ between 1 and 2 threads; CPU %.2f s "
           "(1 thread)\n",
           one.momentum, one.momentum0, one.momentum / one.momentum0 - 1, one.pinned, differ,
           one.cpu);
    as_mpm("pinned_body_lets_a_free_one_slide_along_it");
    pd_test_method_check("slider's momentum along the pinned body / its start",
                         one.momentum / one.momentum0, 1, 1e-3, 0);
    PD_CHECK(one.pinned < 1e-12);
    PD_CHECK(differ == 0);
    free(one.pos);
    free(two.pos);
}

/* Fig. 7's bar, 10 explicit steps: its still pin's block kept while the turning pin's is found
 * anew (mpm_pins.c, same_block) gives the same bytes as both found anew every step. */
static int fig7_steps(int steps, int anew, pd_vec3** pos, size_t* count, long* blocks) {
    pd_test_sim t;
    if (!pd_test_sim_open_scene(&t, "fang2019_fig7_twisting_bar.json", NULL, 0))
        return 0;
    pd_mpm_state* s = t.world->solver_state;
    pd_error err = {0};
    int ok = 1;
    for (int k = 0; ok && k < steps; ++k) {
        if (anew)
            s->pin_key_valid = 0, s->pin_prev_blocks = 0;
        ok = pd_world_step(t.world, &err) == PD_OK;
    }
    const pd_particles* p = &t.world->particles;
    *blocks = s->pin_block_factorisations;
    *count = p->count;
    *pos = pd_test_positions_by_id(t.world);
    pd_test_sim_close(&t);
    return ok && *pos;
}

PD_TEST(still_pin_beside_a_turning_one_keeps_its_block) {
    pd_vec3 *kept = NULL, *anew = NULL;
    size_t n1 = 0, n2 = 0;
    long b1 = 0, b2 = 0;
    int ok = fig7_steps(10, 0, &kept, &n1, &b1) && fig7_steps(10, 1, &anew, &n2, &b2);
    PD_REQUIRE(ok && n1 == n2);
    size_t differ = pd_test_positions_differing(kept, anew, n1);
    printf("  10 steps: %ld blocks factorised kept, %ld anew; %zu particles differ\n", b1, b2,
           differ);
    as_mpm("still_pin_beside_a_turning_one_keeps_its_block");
    pd_test_method_check("particles apart from both blocks found anew each step", (double)differ, 0,
                         0, 0);
    pd_test_method_bound("blocks factorised in 10 steps with the still one kept", (double)b1, 10,
                         12);
    PD_CHECK(b2 == 20);
    free(kept);
    free(anew);
}
