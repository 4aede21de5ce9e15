/* The scatter plan (src/neighbor/scatter_plan.c): tasks of one colour may run at once only if no
 * particle is written by two of them (a particle writes its own entry and its neighbours'), so
 * the test writes down, colour by colour, which task touched each entry. */
#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "neighbor/family_renewal.h"
#include "neighbor/scatter_plan.h"
#include "lattice.h"
#include "test.h"

#define N 16 /* a lattice of N^3 particles */

/* Entries written by two tasks of one colour (each task's particles and their neighbours);
 * *seen counts how often each particle was planned. */
static int conflicts(const pd_scatter_plan* p, const pd_family* f, int* owner, int* seen) {
    int bad = 0;
    for (size_t i = 0; i < f->count; ++i)
        seen[i] = 0;
    for (int c = 0; c < PD_SCATTER_COLORS; ++c) {
        for (size_t i = 0; i < f->count; ++i)
            owner[i] = -1;
        for (size_t t = p->color_task[c]; t < p->color_task[c + 1]; ++t)
            for (uint32_t k = p->task[t]; k < p->task[t + 1]; ++k) {
                uint32_t i = p->order[k];
                seen[i]++;
                for (uint32_t b = f->offsets[i]; b <= f->offsets[i + 1]; ++b) {
                    uint32_t e = b < f->offsets[i + 1] ? f->j[b] : i; /* the neighbours, then i */
                    bad += owner[e] >= 0 && owner[e] != (int)t;
                    owner[e] = (int)t;
                }
            }
    }
    return bad;
}

/* A lattice stretched unevenly and shaken, so that bonds have many lengths: every task of a
 * colour touches entries no other task of that colour touches, and every particle is planned
 * once; the plan has many tasks in several colours (a single serial task would pass the first
 * check trivially). */
PD_TEST(scatter_plan_tasks_of_a_colour_share_no_entry) {
    static pd_vec3 pos[N * N * N], y[N * N * N];
    static pd_real vol[N * N * N], h[N * N * N];
    static int32_t body[N * N * N];
    static int owner[N * N * N], seen[N * N * N];
    pd_real s = 0.01;
    size_t n = pd_test_lattice(pos, vol, h, body, N, s);
    pd_family f;
    pd_hash_grid grid = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, pos, vol, h, body, n, 2.01) == PD_OK);
    srand(7);
    for (size_t i = 0; i < n; ++i) {
        pd_vec3 p = pos[i];
        pd_real jitter = 0.3 * s * ((double)rand() / RAND_MAX - 0.5);
        y[i] = pd_v3(p.x * (1 + p.x), p.y * 0.9 + jitter, p.z + 0.5 * p.x * p.x + jitter);
    }
    pd_scatter_plan plan = {0};
    PD_REQUIRE(pd_scatter_plan_build(&plan, &f, y, 0, 16) == PD_OK);
    int bad = conflicts(&plan, &f, owner, seen);
    int once = 1, colours = 0;
    for (size_t i = 0; i < n; ++i)
        once &= seen[i] == 1;
    for (int c = 0; c < PD_SCATTER_COLORS; ++c)
        colours += plan.color_task[c + 1] > plan.color_task[c];
    printf("  %zu particles, %zu bonds: %zu tasks in %d colours, cells of %.4g m; %d entries "
           "written by two tasks of a colour\n",
           n, f.bond_count, plan.tasks, colours, plan.cell, bad);
    PD_CHECK(once);
    PD_CHECK(bad == 0);
    PD_CHECK(colours == PD_SCATTER_COLORS);
    PD_CHECK(plan.tasks > 4 * PD_SCATTER_COLORS);
    PD_CHECK(pd_scatter_plan_current(&plan, &f));
    pd_scatter_plan_free(&plan);
    pd_family_free(&f);
    pd_hash_grid_destroy(&grid);
}

/* A plan knows when the family changed under it (a renumbering gives a new generation), and a
 * bond of no finite length gives one serial task in index order. */
PD_TEST(scatter_plan_stale_and_serial) {
    static pd_vec3 pos[N * N * N];
    static pd_real vol[N * N * N], h[N * N * N];
    static int32_t body[N * N * N];
    static uint32_t perm[N * N * N], from[N * N * N * 40];
    size_t n = pd_test_lattice(pos, vol, h, body, N, 0.01);
    pd_family f;
    pd_hash_grid grid = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, pos, vol, h, body, n, 1.01) == PD_OK);
    PD_REQUIRE(f.bond_count <= N * N * N * 40);
    pd_scatter_plan plan = {0};
    PD_REQUIRE(pd_scatter_plan_build(&plan, &f, pos, 0, 16) == PD_OK);
    PD_CHECK(plan.tasks > 1);
    for (size_t i = 0; i < n; ++i)
        perm[i] = (uint32_t)(n - 1 - i);
    PD_REQUIRE(pd_family_permute(&f, perm, from) == PD_OK);
    PD_CHECK(!pd_scatter_plan_current(&plan, &f));
    pos[5].y = NAN;
    PD_REQUIRE(pd_scatter_plan_build(&plan, &f, pos, 0, 16) == PD_OK);
    int identity = 1;
    for (size_t i = 0; i < n; ++i)
        identity &= plan.order[i] == i;
    PD_CHECK(plan.tasks == 1 && identity && plan.task[1] == n);
    PD_CHECK(pd_scatter_plan_current(&plan, &f));
    pd_scatter_plan_free(&plan);
    pd_family_free(&f);
    pd_hash_grid_destroy(&grid);
}
