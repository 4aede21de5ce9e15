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

/* The layer settled for t_settle, then watched for t_rest; solver: extra solver keys. */
static rest layer_at_rest(double phi, const char* solver, const char* granular, double t_settle,
                          double t_rest) {
    rest out = {0};
    char json[4096];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{%s},"
             "\"time\":{\"dt\":0.002,\"fps\":50,\"frames\":50},"
             "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"
             "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"drucker_prager\","
             "\"friction_angle\":%.17g,\"cohesion\":0},\"granular\":{%s}}},"
             "\"bodies\":[{\"name\":\"layer\",\"material\":\"sand\",\"spacing\":%.17g,"
             "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.06,0.025,0.02]}}],"
             "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"boundary\":\"no_slip\"},"
             "{\"type\":\"box\",\"min\":[0,-1,0],\"max\":[0.06,1,0.02],\"inside\":true,"
             "\"boundary\":\"slip\",\"friction\":0}]}",
             solver, phi, granular, SPACING);
    pd_test_sim s;
    if (!pd_test_sim_open(&s, json, NULL, 0))
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
    printf("  phi %g {%s} {%s}: plastic strain gained in %.1f s at rest: mean %.3g, worst grain %.3g; "
           "largest move %.3g mm, densest grain %.0f kg/m^3\n",
           phi, solver, granular, t_rest, out.gained, out.worst, 1e3 * out.moved, out.density);
    return out;
}

PD_TEST(settled_sand_layer_gains_no_plastic_strain_at_rest) {
    rest r = layer_at_rest(30, "", "", 0.3, 0.6);
    PD_CHECK(r.ok);
    PD_CHECK(r.gained < 1e-3);
    PD_CHECK(r.density > 1500 && r.density < 1700); /* held near rho_0: not a compacted layer */
}

PD_TEST(dev_variants) {
    const char* solver[] = {"", "\"granular_constraints\":\"after_solve\""};
    const char* gran[] = {"\"static_friction\":false", "\"static_friction\":false,\"repulsion\":0"};
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
            layer_at_rest(30, solver[a], gran[b], 0.3, 0.6);
    layer_at_rest(30, "\"granular_constraints\":\"after_solve\",\"density_iterations\":0", gran[0], 0.3, 0.6);
}
