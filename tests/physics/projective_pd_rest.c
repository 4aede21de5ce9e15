/* He 2017 Sec. 5 and 7-8, granular matter at rest (issue 37, item 1's precondition): a layer
 * of dry sand settled in a box must not keep flowing. A layer 6 cm x 2.5 cm x 2 cm (5 mm
 * spacing, 240 grains) on a rough (no_slip) floor between slip walls settles for 0.3 s; over
 * the next 0.6 s, with nothing driving it, its grains should gain (almost) no plastic strain.
 * Plastic strain that grows at rest is the return reacting to something other than a load:
 * corrections that move grains against their bonds every step (the density constraints and
 * the repulsion after the solve, docs/methods/projective_pd.md), which the next step's bonds
 * undo. Bound: 1e-3 in 0.6 s (the issue's); at 0.004 a step (measured on the in-solve return
 * with the corrections after the solve) a layer gains 1.2. */
#include "projective_pd_support.h"

#include <stdlib.h>
#include <string.h>

#include "parallel/parallel.h"
#include "world/fields.h"

#define SPACING 0.005

typedef struct rest {
    double gained;  /* mean plastic strain gained over the window, over the grains */
    double worst;   /* largest gain of one grain */
    double moved;   /* largest displacement over the window (m) */
    double density; /* largest published density at the end (kg/m^3) */
    int ok;
} rest;

static int plastic_of(pd_world* w, double* out) {
    pd_error err = {0};
    pd_field field;
    if (pd_world_fields(w, PD_ATTR_PLASTIC_STRAIN, &field, &err) != 1)
        return 0;
    const pd_real* e = field.data;
    for (size_t i = 0; i < w->particles.count; ++i)
        out[w->particles.id[i]] = e[i];
    return 1;
}

/* A layer of sand length x 2.5 cm x width in a slip box on a no_slip floor. */
static int open_layer(pd_test_sim* s, double phi, const char* solver, const char* granular,
                      double length, double width) {
    char json[4096];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{%s},"
             "\"time\":{\"dt\":0.002,\"fps\":50,\"frames\":50},"
             "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"
             "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"drucker_prager\","
             "\"friction_angle\":%.17g,\"cohesion\":0},\"granular\":{%s}}},"
             "\"bodies\":[{\"name\":\"layer\",\"material\":\"sand\",\"spacing\":%.17g,"
             "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[%.17g,0.025,%.17g]}}],"
             "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"boundary\":\"no_slip\"},"
             "{\"type\":\"box\",\"min\":[0,-1,0],\"max\":[%.17g,1,%.17g],\"inside\":true,"
             "\"boundary\":\"slip\",\"friction\":0}]}",
             solver, phi, granular, SPACING, length, width, length, width);
    return pd_test_sim_open(s, json, NULL, 0);
}

/* The layer (6 x 2 cm) settled for t_settle, then watched for t_rest; solver and granular:
 * extra keys of those blocks. */
static rest layer_at_rest(double phi, const char* solver, const char* granular, double t_settle,
                          double t_rest) {
    rest out = {0};
    pd_test_sim s;
    if (!open_layer(&s, phi, solver, granular, 0.06, 0.02))
        return out;
    size_t n = s.world->particles.count;
    double* e0 = malloc(n * sizeof *e0);
    double* e1 = malloc(n * sizeof *e1);
    pd_vec3* x0 = malloc(n * sizeof *x0);
    const pd_particles* p = &s.world->particles;
    if (e0 && e1 && x0 && pd_test_sim_run(&s, t_settle) && plastic_of(s.world, e0)) {
        for (size_t i = 0; i < n; ++i)
            x0[p->id[i]] = p->pos[i];
        if (pd_test_sim_run(&s, t_settle + t_rest) && plastic_of(s.world, e1)) {
            for (size_t i = 0; i < n; ++i) {
                double de = e1[i] - e0[i];
                out.gained += de / (double)n;
                out.worst = fmax(out.worst, de);
                out.moved = fmax(out.moved, pd_v3_len(pd_v3_sub(p->pos[i], x0[p->id[i]])));
            }
            pd_error err = {0};
            pd_field field;
            if (pd_world_fields(s.world, PD_ATTR_DENSITY, &field, &err) == 1)
                for (size_t i = 0; i < n; ++i)
                    out.density = fmax(out.density, ((const pd_real*)field.data)[i]);
            out.ok = 1;
        }
    }
    free(e0), free(e1), free(x0);
    pd_test_sim_close(&s);
    printf(
        "  phi %g {%s} {%s}: plastic strain gained in %.1f s at rest: mean %.3g, worst grain %.3g; "
        "largest move %.3g mm, densest grain %.0f kg/m^3\n",
        phi, solver, granular, t_rest, out.gained, out.worst, 1e3 * out.moved, out.density);
    return out;
}

#define IN_SOLVE    "\"granular_constraints\":\"in_solve\""
#define AFTER_SOLVE "\"granular_constraints\":\"after_solve\""
/* Static friction (Eq. 28) off: it holds a grain the solve pushed back at its start position,
 * and at rest that is every grain, which would hide what the solve and the corrections do. */
#define NO_EQ28 "\"static_friction\":false"

/* With the density constraints and the repulsion in the solve (granular_constraints in_solve),
 * the solve's result is their equilibrium with the bonds, and the return after the step finds
 * the layer as it left it. */
PD_TEST(settled_sand_layer_gains_no_plastic_strain_at_rest) {
    rest r = layer_at_rest(30, IN_SOLVE, NO_EQ28, 0.3, 0.6);
    PD_CHECK(r.ok);
    PD_CHECK(r.gained < 1e-3);
    PD_CHECK(r.density > 1500 && r.density < 1700); /* held near rho_0: not a compacted layer */
}

/* The control: the paper's order, the density constraints and the repulsion moving the grains
 * after the solve, churns the same layer (the measure sees the churn the test above excludes). */
PD_TEST(corrections_after_the_solve_churn_a_settled_layer) {
    rest r = layer_at_rest(30, AFTER_SOLVE, NO_EQ28, 0.3, 0.6);
    PD_CHECK(r.ok);
    PD_CHECK(r.gained > 1e-2);
}

/* The in-solve density penalty and repulsion are part of the energy the line search measures:
 * their gradient must be its derivative. A block of sand (6 x 6 x 6 grains) on a floor,
 * squashed to 0.9 of its height (compressed past rho_0, axis pairs closer than the repulsion
 * distance), its energy differenced against the gradient (central differences, 1e-7 m). */
PD_TEST(in_solve_granular_terms_are_the_gradient_of_their_energy) {
    const char* json =
        "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{},"
        "\"time\":{\"dt\":0.002,\"fps\":50,\"frames\":1},"
        "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"
        "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"drucker_prager\","
        "\"friction_angle\":30,\"cohesion\":0},\"granular\":{}}},"
        "\"bodies\":[{\"name\":\"block\",\"material\":\"sand\",\"spacing\":0.005,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.03,0.03,0.03]}}],"
        "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"boundary\":\"slip\"}]}";
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, json, NULL, 0));
    pd_ppd_state* s = pd_test_ppd(&t);
    const pd_particles* p = &t.world->particles;
    size_t n = p->count;
    pd_vec3* y = malloc(n * sizeof *y);
    pd_vec3* g = malloc(n * sizeof *g);
    PD_REQUIRE(y && g);
    for (size_t i = 0; i < n; ++i)
        y[i] = pd_v3(p->pos[i].x + 1e-4 * sin(7.0 * i), 0.9 * p->pos[i].y, p->pos[i].z);
    pd_real e = pd_ppd_elastic_energy(s, y, p->flags);
    memcpy(g, s->g, n * sizeof *g);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; i += 5)
        for (int k = 0; k < 3; ++k) {
            pd_real* c = k == 0 ? &y[i].x : (k == 1 ? &y[i].y : &y[i].z);
            pd_real keep = *c, h = 1e-7;
            *c = keep + h;
            pd_real ep = pd_ppd_elastic_energy(s, y, p->flags);
            *c = keep - h;
            pd_real em = pd_ppd_elastic_energy(s, y, p->flags);
            *c = keep;
            double fd = (ep - em) / (2 * h), an = pd_v3_comp(g[i], k);
            worst = fmax(worst, fabs(fd - an));
            scale = fmax(scale, fabs(fd));
        }
    printf("  squashed block: energy %.4g J, largest |dE/dy| %.4g N, worst gradient error %.3g N\n",
           e, scale, worst);
    PD_CHECK(e > 0);
    PD_CHECK_NEAR(worst / scale, 0, 1e-5);
    free(y), free(g);
    pd_test_sim_close(&t);
}

/* The in-solve terms on 1 and 2 threads: bit-identical positions (each pass writes its own
 * particle, energies summed per chunk). A layer 16 x 8 cm (2560 grains: pd_parallel_for runs
 * fewer than four chunks of 512 serially), 5 steps. */
static size_t layer_on_threads(int threads, pd_vec3* out, size_t cap) {
    pd_set_threads(threads);
    pd_test_sim t;
    int ok = open_layer(&t, 30, IN_SOLVE, NO_EQ28, 0.16, 0.08);
    return pd_test_positions_after_steps(&t, ok, 5, out, cap);
}

PD_TEST(in_solve_granular_terms_same_bits_on_any_thread_count) {
    enum { CAP = 4096 };
    static pd_vec3 one[CAP], two[CAP];
    size_t n1 = layer_on_threads(1, one, CAP), n2 = layer_on_threads(2, two, CAP);
    PD_REQUIRE(n1 == n2 && n1 < CAP && n1 > 4 * 512);
    size_t differ = pd_test_positions_differing(one, two, n1);
    printf("  %zu grains after 5 steps: %zu differ between 1 and 2 threads\n", n1, differ);
    PD_CHECK(differ == 0);
}

#define RETURN_IN_SOLVE "\"plastic_return\":\"in_solve\""

/* issue 37 item 1's precondition for the return inside the solve (plastic_return in_solve: the
 * references returned from the step's start at every iterate): at rest the solve's equilibrium
 * lies inside the cone, and no iterate on the way there leaves a lasting flow. */
PD_TEST(settled_sand_layer_gains_no_plastic_strain_with_the_return_in_the_solve) {
    rest r = layer_at_rest(30, IN_SOLVE "," RETURN_IN_SOLVE, NO_EQ28, 0.3, 0.6);
    PD_CHECK(r.ok);
    PD_CHECK(r.gained < 1e-3);
    PD_CHECK(r.density > 1500 && r.density < 1700);
}

/* issue 37 item 3: Eq. 25 gives a grain friction where it is compacted, rho >= rho_0. Read from
 * the kernel density a free surface is loose at rest (its kernel misses the air's grains); read
 * as the family's kernel sum over the same family's at its reference vectors
 * (granular.compaction reference_kernel) it is not, and a grain lifted off its neighbours is.
 * The layer settled 0.3 s (in_solve): the fraction of its top-row grains with a friction
 * stiffness (granular factor > 0, at the step's prediction) under each measure, and the factor
 * of one top grain lifted by a third of a spacing. Measured: 100 % and 0 %, lifted 0 (92 % while
 * the reference ratio was not capped at 1: four grains at the layer's end read below 1). */
typedef struct top_row {
    double with_friction; /* fraction of the top row with a granular factor > 0 */
    double lifted;        /* the factor of one top grain lifted by a third of a spacing */
    int ok;
} top_row;

static top_row top_row_after_settling(const char* compaction) {
    top_row out = {0, -1, 0};
    char granular[256];
    snprintf(granular, sizeof granular, NO_EQ28 ",\"compaction\":\"%s\"", compaction);
    pd_test_sim t;
    if (!open_layer(&t, 30, IN_SOLVE, granular, 0.06, 0.02))
        return out;
    pd_particles* p = &t.world->particles;
    if (pd_test_sim_run(&t, 0.3)) {
        pd_ppd_state* s = pd_test_ppd(&t);
        double top = 0;
        for (size_t i = 0; i < p->count; ++i)
            top = fmax(top, p->pos[i].y);
        pd_ppd_granular_stiffness(s, t.world);
        int n = 0, held = 0;
        size_t middle = 0;
        for (size_t i = 0; i < p->count; ++i)
            if (p->pos[i].y > top - 0.5 * SPACING) {
                n++, held += s->vscale[i] > 0;
                if (fabs(p->pos[i].x - 0.03) < fabs(p->pos[middle].x - 0.03) ||
                    p->pos[middle].y <= top - 0.5 * SPACING)
                    middle = i;
            }
        out.with_friction = n ? (double)held / n : 0;
        p->pos[middle].y += SPACING / 3, p->vel[middle] = pd_v3(0, 0, 0);
        pd_ppd_granular_stiffness(s, t.world);
        out.lifted = s->vscale[middle];
        out.ok = n > 0;
        printf("  compaction %s: %d top-row grains, %.0f %% with friction; one lifted by a third "
               "of a spacing: factor %.3g\n",
               compaction, n, 100 * out.with_friction, out.lifted);
    }
    pd_test_sim_close(&t);
    return out;
}

PD_TEST(free_surface_grains_keep_friction_lifted_ones_lose_it) {
    top_row ref = top_row_after_settling("reference_kernel");
    top_row kernel = top_row_after_settling("kernel_density");
    PD_REQUIRE(ref.ok && kernel.ok);
    PD_CHECK(ref.with_friction > 0.9);
    PD_CHECK(ref.lifted == 0);
    PD_CHECK(kernel.with_friction < 0.1); /* the kernel's deficiency read as loose sand */
}

/* The return inside the solve on 1 and 2 threads: bit-identical positions (each particle's
 * return writes its own bonds and shape tensor; the yield flags are per-chunk partials). The
 * layer of the test above with gravity tilted by 35 degrees from the start, so that grains
 * yield at the iterates; 5 steps. Returns the grain count, the grains that flowed in *flowed. */
static size_t returning_layer_on_threads(int threads, pd_vec3* out, size_t cap, size_t* flowed) {
    pd_set_threads(threads);
    pd_test_sim t;
    size_t n = 0;
    *flowed = 0;
    if (open_layer(&t, 30, IN_SOLVE "," RETURN_IN_SOLVE,
                   NO_EQ28 ",\"compaction\":\"reference_kernel\"", 0.16, 0.08)) {
        double a = 35 * PD_PI / 180;
        t.world->def.gravity = pd_v3(9.81 * sin(a), -9.81 * cos(a), 0);
        pd_error err = {0};
        int ok = 1;
        for (int k = 0; ok && k < 5; ++k)
            ok = pd_world_step(t.world, &err) == PD_OK;
        const pd_particles* p = &t.world->particles;
        const pd_ppd_state* s = pd_test_ppd(&t);
        if (ok && p->count < cap) {
            n = p->count;
            for (size_t i = 0; i < n; ++i) {
                out[p->id[i]] = p->pos[i];
                *flowed += s->plastic_strain[i] > 0;
            }
        }
        pd_test_sim_close(&t);
    }
    pd_set_threads(0);
    return n;
}

PD_TEST(return_in_the_solve_same_bits_on_any_thread_count) {
    enum { CAP = 4096 };
    static pd_vec3 one[CAP], two[CAP];
    size_t f1, f2;
    size_t n1 = returning_layer_on_threads(1, one, CAP, &f1);
    size_t n2 = returning_layer_on_threads(2, two, CAP, &f2);
    PD_REQUIRE(n1 == n2 && n1 > 4 * 512);
    size_t differ = pd_test_positions_differing(one, two, n1);
    printf("  %zu grains after 5 steps, %zu / %zu flowed: %zu differ between 1 and 2 threads\n", n1,
           f1, f2, differ);
    PD_CHECK(f1 > 0); /* the return acted */
    PD_CHECK(differ == 0);
}
