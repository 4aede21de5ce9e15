/* The shared optimiser (optim/descent.h) on a problem whose answer is known independently: a
 * chain of points tied by springs to its neighbours and by inertia to a prediction, i.e. the
 * implicit Euler step of a mass-spring chain. Its merit is quadratic, so the minimiser is the
 * solution of a tridiagonal linear system (Thomas algorithm, written here apart from the
 * optimiser). Contacts: a floor y >= 0, handled by projection and blocking as a method would. */
#include <string.h>

#include "core/alloc.h"
#include "optim/descent.h"
#include "test.h"

#define NC 60

typedef struct chain {
    pd_real m_h2, k;     /* inertia m/h^2 and spring stiffness (N/m) */
    pd_vec3 ystar[NC];   /* prediction */
    pd_vec3 rest;        /* rest vector of every spring */
    int floor;           /* 1: points stay at y >= 0 */
    pd_vec3 blocked[NC]; /* floor normal where a point pushes into the floor, else 0 */
    int exact;           /* 1: precondition with the exact inverse (Thomas) */
    int evaluations;
    pd_real last_lowest; /* lowest y of the last evaluated point */
} chain;

/* E = sum m/2h^2 |y - y*|^2 + sum k/2 |y_{i+1} - y_i - rest|^2 and its gradient. */
static pd_real chain_energy(chain* c, const pd_vec3* y, pd_vec3* g) {
    pd_real e = 0;
    for (int i = 0; i < NC; ++i) {
        pd_vec3 d = pd_v3_sub(y[i], c->ystar[i]);
        e += 0.5 * c->m_h2 * pd_v3_len2(d);
        g[i] = pd_v3_scale(d, c->m_h2);
    }
    for (int i = 0; i + 1 < NC; ++i) {
        pd_vec3 s = pd_v3_sub(pd_v3_sub(y[i + 1], y[i]), c->rest);
        e += 0.5 * c->k * pd_v3_len2(s);
        g[i] = pd_v3_madd(g[i], -c->k, s);
        g[i + 1] = pd_v3_madd(g[i + 1], c->k, s);
    }
    return e;
}

static pd_vec3 unblocked(const chain* c, int i, pd_vec3 v) {
    return pd_v3_madd(v, -pd_v3_dot(v, c->blocked[i]), c->blocked[i]);
}

static pd_real evaluate(void* ctx, const pd_vec3* y, pd_vec3* r, pd_real* r_norm, int* not_grad) {
    chain* c = ctx;
    c->evaluations++;
    c->last_lowest = y[0].y;
    for (int i = 1; i < NC; ++i)
        c->last_lowest = fmin(c->last_lowest, y[i].y);
    pd_real e = chain_energy(c, y, r), r2 = 0;
    for (int i = 0; i < NC; ++i) {
        c->blocked[i] = pd_v3(0, 0, 0);
        if (c->floor && y[i].y <= 1e-12 && r[i].y > 0) /* -r pushes it into the floor */
            c->blocked[i] = pd_v3(0, 1, 0);
        r[i] = unblocked(c, i, r[i]);
        r2 += pd_v3_len2(r[i]);
    }
    *r_norm = sqrt(r2);
    return e;
}

static void filter(void* ctx, pd_vec3* v, size_t n) {
    chain* c = ctx;
    for (size_t i = 0; i < n; ++i)
        v[i] = unblocked(c, (int)i, v[i]);
}

static void project(void* ctx, pd_vec3* y) {
    chain* c = ctx;
    for (int i = 0; c->floor && i < NC; ++i)
        y[i].y = fmax(y[i].y, 0);
}

/* Solves A z = b for the chain's matrix (m/h^2 on the diagonal plus the spring Laplacian),
 * componentwise, by the Thomas algorithm. */
static void thomas(const chain* c, const pd_vec3* b, pd_vec3* z) {
    pd_real cp[NC];
    pd_vec3 dp[NC];
    for (int i = 0; i < NC; ++i) {
        pd_real diag = c->m_h2 + c->k * ((i > 0) + (i + 1 < NC)), lo = i > 0 ? -c->k : 0;
        pd_real denom = diag - (i > 0 ? lo * cp[i - 1] : 0);
        cp[i] = (i + 1 < NC ? -c->k : 0) / denom;
        dp[i] = pd_v3_scale(i > 0 ? pd_v3_madd(b[i], -lo, dp[i - 1]) : b[i], 1 / denom);
    }
    z[NC - 1] = dp[NC - 1];
    for (int i = NC - 2; i >= 0; --i)
        z[i] = pd_v3_madd(dp[i], -cp[i], z[i + 1]);
}

/* The method's global step: the exact inverse, or Jacobi (the diagonal only). */
static pd_status precondition(void* ctx, const pd_vec3* b, pd_vec3* z) {
    chain* c = ctx;
    if (c->exact) {
        thomas(c, b, z);
        return PD_OK;
    }
    for (int i = 0; i < NC; ++i)
        z[i] = pd_v3_scale(b[i], 1 / (c->m_h2 + c->k * ((i > 0) + (i + 1 < NC))));
    return PD_OK;
}

static void chain_init(chain* c, pd_real stiffness_ratio) {
    memset(c, 0, sizeof *c);
    c->m_h2 = 1;
    c->k = stiffness_ratio;
    c->rest = pd_v3(0.1, 0, 0);
    for (int i = 0; i < NC; ++i) /* a bent, shifted prediction */
        c->ystar[i] = pd_v3(0.11 * i, 0.05 * sin(0.3 * i), 0.02 * cos(0.7 * i));
}

/* Minimiser from the normal equations: A y = m/h^2 y* + k (rest terms). */
static void exact_minimiser(const chain* c, pd_vec3* y) {
    pd_vec3 b[NC];
    for (int i = 0; i < NC; ++i) {
        b[i] = pd_v3_scale(c->ystar[i], c->m_h2);
        if (i > 0)
            b[i] = pd_v3_madd(b[i], c->k, c->rest);
        if (i + 1 < NC)
            b[i] = pd_v3_madd(b[i], -c->k, c->rest);
    }
    thomas(c, b, y);
}

static int g_single_pairs; /* solve's pairs in single precision */

static int solve(chain* c, int history, int iterations, pd_descent_report* rep, pd_vec3* out) {
    pd_descent_def def = pd_default_descent_def();
    def.history = history;
    def.single_pairs = g_single_pairs;
    def.iterations = iterations;
    def.tolerance = 1e-10;
    pd_descent d;
    if (pd_descent_init(&d, NC, &def) != PD_OK)
        return 0;
    pd_descent_problem p = {c, evaluate, precondition, filter, project, NULL, NULL, NULL};
    memcpy(d.y, c->ystar, sizeof c->ystar);
    project(c, d.y);
    pd_real r0, merit = pd_descent_evaluate(&d, &p, &r0);
    pd_status st = pd_descent_solve(&d, &p, merit, r0, r0, rep);
    memcpy(out, d.y, sizeof(pd_vec3) * NC);
    pd_descent_free(&d);
    return st == PD_OK;
}

static pd_real max_distance(const pd_vec3* a, const pd_vec3* b) {
    pd_real m = 0;
    for (int i = 0; i < NC; ++i)
        m = fmax(m, pd_v3_len(pd_v3_sub(a[i], b[i])));
    return m;
}

/* With the exact inverse as preconditioner the first full step is Newton's on a quadratic:
 * one iteration lands on the minimiser. */
PD_TEST(exact_preconditioner_solves_in_one_iteration) {
    chain c;
    chain_init(&c, 400);
    c.exact = 1;
    pd_vec3 y[NC], ref[NC];
    pd_descent_report rep;
    PD_REQUIRE(solve(&c, 5, 10, &rep, y));
    exact_minimiser(&c, ref);
    printf("  %d iterations, residual %.3g, distance to the minimiser %.3g\n", rep.iterations,
           rep.residual, max_distance(y, ref));
    PD_CHECK(rep.iterations == 1);
    PD_CHECK_NEAR(max_distance(y, ref), 0, 1e-12);
}

/* Jacobi preconditioning converges slowly on a stiff chain; L-BFGS pairs on top reach the
 * same minimiser in far fewer iterations (Liu et al. 2017 report the same against plain
 * projective dynamics). */
PD_TEST(lbfgs_pairs_speed_up_the_preconditioned_descent) {
    static chain c;
    chain_init(&c, 25);
    pd_vec3 y0[NC], y5[NC], ref[NC];
    pd_descent_report plain, lbfgs;
    PD_REQUIRE(solve(&c, 0, 5000, &plain, y0));
    PD_REQUIRE(solve(&c, 5, 5000, &lbfgs, y5));
    exact_minimiser(&c, ref);
    printf("  to 1e-10 of the starting residual: %d iterations plain, %d with 5 pairs; "
           "distances %.3g, %.3g; merit increases %d/%d\n",
           plain.iterations, lbfgs.iterations, max_distance(y0, ref), max_distance(y5, ref),
           plain.merit_increases, lbfgs.merit_increases);
    PD_CHECK_NEAR(max_distance(y5, ref), 0, 1e-8);
    PD_CHECK_NEAR(max_distance(y0, ref), 0, 1e-8);
    PD_CHECK(lbfgs.iterations * 4 < plain.iterations);
}

/* The pairs in single precision (def.single_pairs, projective_pd's): the same minimiser to
 * 1e-8 in about as many iterations as with double pairs (a pair stored wrong, or rho not taken
 * from the stored pair, leaves the iterations far more or the minimiser missed), in half the
 * pairs' bytes. */
PD_TEST(single_precision_pairs_reach_the_same_minimiser) {
    static chain c;
    chain_init(&c, 25);
    pd_vec3 yd[NC], ys[NC], ref[NC];
    pd_descent_report dbl, sgl;
    PD_REQUIRE(solve(&c, 5, 5000, &dbl, yd));
    g_single_pairs = 1;
    int ok = solve(&c, 5, 5000, &sgl, ys);
    g_single_pairs = 0;
    PD_REQUIRE(ok);
    exact_minimiser(&c, ref);
    printf("  to 1e-10 of the starting residual: %d iterations with double pairs, %d with "
           "single; distances %.3g, %.3g\n",
           dbl.iterations, sgl.iterations, max_distance(yd, ref), max_distance(ys, ref));
    PD_CHECK_NEAR(max_distance(ys, ref), 0, 1e-8);
    PD_CHECK(4 * sgl.iterations <= 5 * dbl.iterations);
    pd_descent_def def = pd_default_descent_def();
    size_t bytes[2];
    for (int single = 0; single < 2; ++single) {
        size_t before = pd_bytes_in_use();
        def.single_pairs = single;
        pd_descent d;
        PD_REQUIRE(pd_descent_init(&d, 1000, &def) == PD_OK);
        bytes[single] = pd_bytes_in_use() - before;
        pd_descent_free(&d);
        PD_CHECK(pd_bytes_in_use() == before);
    }
    printf("  %zu bytes with double pairs, %zu with single\n", bytes[0], bytes[1]);
    PD_CHECK(bytes[0] - bytes[1] == (size_t)(2 * def.history) * 1001 * 12);
}

/* A chain pulled below a floor: at the answer every point is on or above the floor, the
 * filtered residual vanishes, and every blocked point is held by the floor (its force
 * pushes into it: a Lagrange multiplier >= 0, Karush-Kuhn-Tucker). Points held by the floor
 * have y = 0 exactly and the free ones match the unconstrained chain's shape locally. */
PD_TEST(floor_contact_ends_at_a_kkt_point) {
    static chain c;
    chain_init(&c, 50);
    c.floor = 1;
    for (int i = 0; i < NC; ++i) /* the middle third predicted 5 cm below the floor */
        c.ystar[i].y = i > NC / 3 && i < 2 * NC / 3 ? -0.05 : 0.02;
    pd_vec3 y[NC], g[NC];
    pd_descent_report rep;
    PD_REQUIRE(solve(&c, 5, 500, &rep, y));
    chain_energy(&c, y, g);
    int below = 0, on_floor = 0, wrong_sign = 0;
    pd_real free_residual = 0;
    for (int i = 0; i < NC; ++i) {
        below += y[i].y < 0;
        if (y[i].y <= 1e-12) {
            on_floor++;
            wrong_sign += g[i].y < -1e-9; /* the floor would have to pull */
            free_residual = fmax(free_residual, fabs(g[i].x) + fabs(g[i].z));
        } else {
            free_residual = fmax(free_residual, pd_v3_len(g[i]));
        }
    }
    printf("  %d iterations, %d points on the floor, %d below, %d pulled, largest free "
           "residual %.3g N\n",
           rep.iterations, on_floor, below, wrong_sign, free_residual);
    PD_CHECK(below == 0 && wrong_sign == 0);
    PD_CHECK(on_floor >= NC / 4); /* most of the middle third rests on the floor */
    PD_CHECK_NEAR(free_residual, 0, 1e-8);
}

PD_TEST(descent_releases_what_it_allocates) {
    size_t before = pd_bytes_in_use();
    pd_descent_def def = pd_default_descent_def();
    def.history = 7;
    pd_descent d;
    PD_REQUIRE(pd_descent_init(&d, 1000, &def) == PD_OK);
    PD_CHECK(pd_bytes_in_use() > before);
    pd_descent_free(&d);
    PD_CHECK(pd_bytes_in_use() == before);
}

/* A line search refuses trials the method does not admit (trial_admissible), whatever their
 * merit: here any point of the chain below y = -0.01 (no projection, no blocking), so the
 * chain pulled 5 cm below stops above the line while without the hook it goes down to its
 * minimiser. */
static int above_line(void* ctx) {
    chain* c = ctx;
    return c->last_lowest >= -0.01;
}

PD_TEST(inadmissible_trials_are_refused) {
    static chain c;
    chain_init(&c, 50);
    for (int i = 0; i < NC; ++i)
        c.ystar[i].y = -0.05;
    pd_descent_def def = pd_default_descent_def();
    def.iterations = 200;
    def.tolerance = 1e-12;
    pd_descent d;
    PD_REQUIRE(pd_descent_init(&d, NC, &def) == PD_OK);
    pd_real lowest[2];
    for (int with_hook = 0; with_hook < 2; ++with_hook) {
        pd_descent_problem p = {
            &c, evaluate, precondition, NULL, NULL, NULL, with_hook ? above_line : NULL, NULL};
        pd_descent_report rep;
        for (int i = 0; i < NC; ++i)
            d.y[i] = pd_v3(0.1 * i, 0, 0);
        pd_real r0, merit = pd_descent_evaluate(&d, &p, &r0);
        PD_REQUIRE(pd_descent_solve(&d, &p, merit, r0, r0, &rep) == PD_OK);
        lowest[with_hook] = 1;
        for (int i = 0; i < NC; ++i)
            lowest[with_hook] = fmin(lowest[with_hook], d.y[i].y);
    }
    printf("  lowest point: %.4g m without the hook, %.4g m with it\n", lowest[0], lowest[1]);
    PD_CHECK_NEAR(lowest[0], -0.05, 1e-6);
    PD_CHECK(lowest[1] >= -0.01 && lowest[1] < 0);
    pd_descent_free(&d);
}

/* A solve split into passes (a method that renews part of its merit between them) goes on
 * with its L-BFGS pairs when keep_history is set: two passes of 10 iterations land on the
 * bits one pass of 20 reaches; without it the second pass restarts from the plain
 * preconditioned direction and ends elsewhere. */
PD_TEST(keep_history_continues_a_split_solve) {
    static chain c;
    chain_init(&c, 25);
    pd_descent_def def = pd_default_descent_def();
    def.tolerance = 1e-14;
    pd_descent d;
    PD_REQUIRE(pd_descent_init(&d, NC, &def) == PD_OK);
    pd_descent_problem p = {&c, evaluate, precondition, filter, project, NULL, NULL, NULL};
    pd_vec3 whole[NC];
    pd_real gap[2];
    for (int passes = 1; passes <= 3; ++passes) {
        memcpy(d.y, c.ystar, sizeof c.ystar);
        pd_real r, merit = pd_descent_evaluate(&d, &p, &r), r0 = r;
        pd_descent_report rep;
        d.def.iterations = passes == 1 ? 20 : 10;
        for (int k = 0; k < (passes == 1 ? 1 : 2); ++k) {
            d.keep_history = k == 1 && passes == 2;
            PD_REQUIRE(pd_descent_solve(&d, &p, merit, r, r0, &rep) == PD_OK);
            PD_REQUIRE(rep.iterations == d.def.iterations);
            merit = rep.merit, r = rep.residual;
        }
        if (passes == 1)
            memcpy(whole, d.y, sizeof whole);
        else
            gap[passes - 2] = max_distance(d.y, whole);
    }
    printf("  after 2 x 10 iterations: %.3g m from 1 x 20 with the pairs kept, %.3g m without\n",
           gap[0], gap[1]);
    PD_CHECK_NEAR(gap[0], 0, 0);
    PD_CHECK(gap[1] > 1e-9);
    pd_descent_free(&d);
}

/* One point in a double well E = (x^2 - 1)^2, its minima at x = -1 and 1, with a force that
 * has no energy wherever x < 0, r = x - 1 (not_gradient), pulling it to x = 1: a mirrored
 * family under He 2017's inversion fix, where the true energy holds it in its mirrored
 * minimum. The line search measures that force's equation: from x = -1 the point is carried
 * over the barrier to x = 1 (the Armijo test on E refused every step length there: the energy
 * rises along the force). */
typedef struct well {
    int evaluations;
} well;

static pd_real well_evaluate(void* ctx, const pd_vec3* y, pd_vec3* r, pd_real* r_norm,
                             int* not_grad) {
    ((well*)ctx)->evaluations++;
    pd_real x = y[0].x;
    *not_grad = x < 0;
    r[0] = pd_v3(x < 0 ? x - 1 : 4 * x * (x * x - 1), 0, 0);
    *r_norm = fabs(r[0].x);
    return (x * x - 1) * (x * x - 1);
}

static pd_status well_identity(void* ctx, const pd_vec3* b, pd_vec3* z) {
    z[0] = b[0];
    return PD_OK;
}

PD_TEST(a_force_without_energy_is_followed_over_the_energy_barrier) {
    well w = {0};
    pd_descent_def def = pd_default_descent_def();
    def.iterations = 10;
    def.tolerance = 1e-12;
    pd_descent d;
    PD_REQUIRE(pd_descent_init(&d, 1, &def) == PD_OK);
    pd_descent_problem p = {&w, well_evaluate, well_identity, NULL, NULL, NULL, NULL, NULL};
    d.y[0] = pd_v3(-1, 0, 0);
    pd_real r, merit = pd_descent_evaluate(&d, &p, &r);
    pd_descent_report rep;
    PD_REQUIRE(pd_descent_solve(&d, &p, merit, r, r, &rep) == PD_OK);
    printf("  from x = -1: x = %g after %d iterations, %d failed line searches\n", d.y[0].x,
           rep.iterations, rep.line_search_failures);
    PD_CHECK_NEAR(d.y[0].x, 1, 1e-12);
    PD_CHECK(rep.line_search_failures == 0);
    pd_descent_free(&d);
}

/* Xu 2018 Eq. 25 as the stop (decrease_tolerance): the solve ends when an iteration lowers E
 * by at most 1e-4 of what the whole solve lowered it, well before the iteration cap, and the
 * true relative error (E_k - E*) / (E_0 - E*), E* at the exact minimiser, is then small too. */
PD_TEST(decrease_tolerance_stops_by_eq25) {
    static chain c;
    chain_init(&c, 25);
    pd_descent_def def = pd_default_descent_def();
    def.iterations = 5000;
    def.tolerance = 0;
    def.decrease_tolerance = 1e-4;
    pd_descent d;
    PD_REQUIRE(pd_descent_init(&d, NC, &def) == PD_OK);
    pd_descent_problem p = {&c, evaluate, precondition, filter, project, NULL, NULL, NULL};
    memcpy(d.y, c.ystar, sizeof c.ystar);
    pd_real r0, e0 = pd_descent_evaluate(&d, &p, &r0);
    pd_descent_report rep;
    PD_REQUIRE(pd_descent_solve(&d, &p, e0, r0, r0, &rep) == PD_OK);
    pd_vec3 ref[NC], g[NC];
    exact_minimiser(&c, ref);
    pd_real e_min = chain_energy(&c, ref, g);
    pd_real true_error = (rep.merit - e_min) / (e0 - e_min);
    printf("  %d iterations, Eq. 25 with the last iterate %.3g, against the minimiser %.3g\n",
           rep.iterations, rep.relative_error, true_error);
    PD_CHECK(rep.iterations > 1 && rep.iterations < 100);
    PD_CHECK(rep.relative_error > 0 && rep.relative_error <= 1e-4);
    PD_CHECK(true_error < 1e-3);
    pd_descent_free(&d);
}

/* A continued solve's report added to the step's: counts summed, the end state the last
 * part's, the shortest step the smaller. */
PD_TEST(report_add_sums_counts_and_keeps_the_last_state) {
    pd_descent_report total = {3, 1.0, 5.0, 1, 0, 2, 0, 0.5, 0.1};
    pd_descent_report part = {4, 0.25, 4.0, 0, 1, 1, 2, 0.125, 0.01};
    pd_descent_report_add(&total, &part);
    PD_CHECK(total.iterations == 7 && total.line_search_failures == 1);
    PD_CHECK(total.residual_increases == 1 && total.merit_increases == 3);
    PD_CHECK(total.history_resets == 2);
    PD_CHECK(total.residual == 0.25 && total.merit == 4.0 && total.relative_error == 0.01);
    PD_CHECK(total.shortest_step == 0.125);
}
