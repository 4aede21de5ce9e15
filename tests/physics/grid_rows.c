/* The hash grid's callers that search every few steps (the contact's candidates, the sand's
 * family renewals) keep the scan's rows between builds (keep_rows, neighbor/hash_grid.h): once
 * warm, their searches allocate nothing (DESIGN.md: no allocation in hot loops). Without
 * keep_rows each build allocated and freed its rows, grown from nothing (measured here: 10-11
 * allocations a build; sbpd's renewal searched into a list of its own too: 2 more). A sand
 * ball (a ball for hyperelastic_pd, which has no sand) of 336 particles with the block dropped
 * onto an elastic block: the grids' builds and allocations (the grid's buffers and the list's)
 * over 0.04 s after 0.08 s of warming. */
#include "methods.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"
#include "solvers/projective_pd/projective_pd_data.h"
#include "solvers/sbpd/sbpd_data.h"
#include "world/world.h"

extern const pd_solver_vtable pd_projective_pd_solver, pd_sbpd_solver, pd_hyperelastic_pd_solver;

#define GRID_ROWS_BODIES                                                                           \
    "\"bodies\":[{\"name\":\"ball\",\"material\":\"sand\",\"spacing\":0.02,"                       \
    "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.12,0],\"radius\":0.06},"                       \
    "\"velocity\":[0,-1,0]},{\"name\":\"block\",\"material\":\"solid\",\"spacing\":0.02,"          \
    "\"shape\":{\"type\":\"box\",\"min\":[-0.1,0,-0.1],\"max\":[0.1,0.04,0.1]}}],"                 \
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],"                     \
    "\"friction\":0.5}]}"
#define GRID_ROWS_SOLID "\"solid\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}"

/* projective_pd's sand (Sec. 7: renewed families) */
static const char* k_ppd =
    "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.002,\"fps\":500,"
    "\"frames\":40},\"gravity\":[0,-9.81,0],\"materials\":{" GRID_ROWS_SOLID
    ",\"sand\":{\"density\":1500,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3,\"plasticity\":"
    "{\"model\":\"drucker_prager\",\"friction_angle\":30},\"granular\":{}}}," GRID_ROWS_BODIES;
/* sbpd's sand (Sec. 5: renewed families) */
static const char* k_sbpd =
    "{\"version\":1,\"method\":\"sbpd\",\"time\":{\"dt\":3e-4,\"fps\":2500,\"frames\":40},"
    "\"gravity\":[0,-9.81,0],\"materials\":{" GRID_ROWS_SOLID
    ",\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,\"poisson_ratio\":0.2,\"plasticity\":"
    "{\"model\":\"drucker_prager\",\"friction_angle\":30}}}," GRID_ROWS_BODIES;
/* hyperelastic_pd: contact between bodies only */
static const char* k_hpd = "{\"version\":1,\"method\":\"hyperelastic_pd\",\"time\":{\"dt\":0.002,"
                           "\"fps\":500,\"frames\":40},\"gravity\":[0,-9.81,0],\"materials\":{"
                           "\"sand\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":"
                           "0.3}," GRID_ROWS_SOLID "}," GRID_ROWS_BODIES;

/* Warmed over 0.08 s (the ball lands, its searches' lists grow), counted over the next 0.04 s
 * (the lists no longer grow). */
#define WARM_SECONDS    0.08
#define COUNTED_SECONDS 0.04

/* The grids a method searches with during the steps: its renewal's (NULL: none) and its
 * contact's, with the contact itself. */
static pd_contact* grids_of(const pd_world* w, pd_hash_grid** renewal) {
    const pd_solver_vtable* m = g_pd_method.method;
    *renewal = NULL;
    if (m == &pd_projective_pd_solver) {
        pd_ppd_state* s = w->solver_state;
        *renewal = &s->grid;
        return &s->contact;
    }
    if (m == &pd_sbpd_solver) {
        pd_sbpd_state* s = w->solver_state;
        *renewal = &s->grid;
        return &s->contact;
    }
    pd_hpd_state* s = w->solver_state;
    return &s->contact;
}

/* One grid's builds over the counted steps (at least one, else nothing was shown) and the
 * allocations they made (none). */
static void check_grid(const char* which, const pd_hash_grid* g, size_t builds, size_t allocs,
                       int steps) {
    char what[128];
    printf("  %s: %zu builds, %zu allocations over %d warm steps (%zu builds, %zu allocations in "
           "all)\n",
           which, g->builds - builds, g->allocations - allocs, steps, g->builds, g->allocations);
    PD_CHECK(g->builds > builds);
    snprintf(what, sizeof what, "%s grid: allocations in %g s of warm steps", which,
             COUNTED_SECONDS);
    pd_test_method_bound(what, (double)(g->allocations - allocs), 0, 0);
}

/* The contact's grid over the counted steps: it searches only when particles moved past the
 * skin (a kept list otherwise), so a search may come while the landing still spreads the ball
 * and list more candidates than any search before: its rows then grow. A step whose searches
 * listed no more than the most before allocates nothing. */
static void check_contact_grid(const pd_contact* c, size_t builds, size_t most_before,
                               size_t steady_allocs, size_t grown_allocs, int steps) {
    const pd_hash_grid* g = &c->grid;
    char what[128];
    printf("  contact: %zu builds over %d warm steps, %zu allocations in steps that listed no "
           "more than %zu candidates before them, %zu in steps that listed more (%zu builds, %zu "
           "allocations in all)\n",
           g->builds - builds, steps, steady_allocs, most_before, grown_allocs, g->builds,
           g->allocations);
    PD_REQUIRE(g->builds > builds);
    snprintf(what, sizeof what, "contact grid: allocations in %g s of warm steps not listing more",
             COUNTED_SECONDS);
    pd_test_method_bound(what, (double)steady_allocs, 0, 0);
    /* a search that lists more grows only what it outgrew (measured: 1 allocation); without the
     * kept rows every build allocated its 10-11 buffers from nothing */
    snprintf(what, sizeof what, "contact grid: allocations a build in %g s of warm steps",
             COUNTED_SECONDS);
    pd_test_method_bound(
        what, (double)(steady_allocs + grown_allocs) / (double)(g->builds - builds), 0, 3);
}

static void check_method(const pd_solver_vtable* method, const char* json) {
    g_pd_method =
        (pd_test_method_ctx){method, "warm_grid_searches_allocate_nothing", PD_CAP_CONTACT, 0};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, json, NULL, 0));
    pd_error err = {0};
    int steps = (int)lround(COUNTED_SECONDS / t.world->def.dt);
    pd_hash_grid* renewal;
    const pd_contact* c = grids_of(t.world, &renewal);
    size_t most = 0; /* the most candidates a step's searches listed */
    for (int k = 0; k < (int)lround(WARM_SECONDS / t.world->def.dt); ++k) {
        PD_REQUIRE(pd_world_step(t.world, &err) == PD_OK);
        most = c->step_most > most ? c->step_most : most;
    }
    size_t rb = renewal ? renewal->builds : 0, ra = renewal ? renewal->allocations : 0;
    size_t cb = c->grid.builds, most_before = most, steady = 0, grown = 0;
    for (int k = 0; k < steps; ++k) {
        size_t a0 = c->grid.allocations;
        PD_REQUIRE(pd_world_step(t.world, &err) == PD_OK);
        *(c->step_most > most ? &grown : &steady) += c->grid.allocations - a0;
        most = c->step_most > most ? c->step_most : most;
    }
    printf("  %s, %zu particles:\n", method->name, t.world->particles.count);
    if (renewal)
        check_grid("renewal", renewal, rb, ra, steps);
    check_contact_grid(c, cb, most_before, steady, grown, steps);
    pd_test_sim_close(&t);
}

PD_TEST(warm_grid_searches_allocate_nothing) {
    check_method(&pd_projective_pd_solver, k_ppd);
    check_method(&pd_sbpd_solver, k_sbpd);
    check_method(&pd_hyperelastic_pd_solver, k_hpd);
}
