/* The background grid of the grid methods (src/grid/): the quadratic B-spline's identities, and
 * the APIC transfers: mass, momentum and angular momentum carried to the grid exactly, an affine
 * velocity field carried back exactly, and the same bytes on any thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "grid/bspline.h"
#include "grid/grid_boundary.h"
#include "grid/grid.h"
#include "grid/grid_fields.h"
#include "parallel/parallel.h"
#include "test.h"

static double uniform(unsigned* seed, double lo, double hi) {
    *seed = *seed * 1103515245u + 12345u;
    return lo + (hi - lo) * ((*seed >> 8) & 0xffffff) / (double)0xffffff;
}

static pd_vec3 random_point(unsigned* seed, double lo, double hi) {
    return pd_v3(uniform(seed, lo, hi), uniform(seed, lo, hi), uniform(seed, lo, hi));
}

/* Sum w = 1, sum w (x_i - x) = 0, sum w (x_i - x)(x_i - x)^T = dx^2 / 4 I, sum grad w = 0 and
 * sum (x_i - x) grad w^T = I: the identities APIC and MLS-MPM rest on (a wrong weight or a
 * gradient off by a factor breaks one of them). */
PD_TEST(quadratic_bspline_reproduces_linear_fields) {
    unsigned seed = 7;
    double dx = 0.05, worst[5] = {0};
    pd_vec3 origin = pd_v3(-0.35, 0.1, 0.2);
    for (int t = 0; t < 200; ++t) {
        pd_vec3 x = random_point(&seed, 0.3, 0.9);
        pd_bspline s = pd_bspline_at(x, origin, dx);
        double sum = 0, first[3] = {0}, second[3][3] = {{0}}, grad[3] = {0}, jac[3][3] = {{0}};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                for (int k = 0; k < 3; ++k) {
                    pd_vec3 xi =
                        pd_v3(origin.x + (s.base[0] + i) * dx, origin.y + (s.base[1] + j) * dx,
                              origin.z + (s.base[2] + k) * dx);
                    double d[3] = {xi.x - x.x, xi.y - x.y, xi.z - x.z}, w = 0;
                    w = pd_bspline_weight(&s, i, j, k);
                    pd_vec3 gw = pd_bspline_gradient(&s, i, j, k);
                    double gv[3] = {gw.x, gw.y, gw.z};
                    sum += w;
                    for (int a = 0; a < 3; ++a) {
                        first[a] += w * d[a];
                        grad[a] += gv[a];
                        for (int b = 0; b < 3; ++b)
                            second[a][b] += w * d[a] * d[b], jac[a][b] += d[a] * gv[b];
                    }
                }
        worst[0] = fmax(worst[0], fabs(sum - 1));
        for (int a = 0; a < 3; ++a) {
            worst[1] = fmax(worst[1], fabs(first[a]) / dx);
            worst[3] = fmax(worst[3], fabs(grad[a]) * dx);
            for (int b = 0; b < 3; ++b) {
                worst[2] = fmax(worst[2], fabs(second[a][b] - (a == b) * dx * dx / 4) / (dx * dx));
                worst[4] = fmax(worst[4], fabs(jac[a][b] - (a == b)));
            }
        }
    }
    printf("  worst over 200 points: |sum w - 1| %.2e, first moment %.2e dx, second moment %.2e "
           "dx^2, |sum grad w| %.2e / dx, |sum d grad w^T - I| %.2e\n",
           worst[0], worst[1], worst[2], worst[3], worst[4]);
    for (int k = 0; k < 5; ++k)
        PD_CHECK(worst[k] < 1e-12);
}

typedef struct cloud {
    size_t n;
    pd_vec3 *x, *v;
    pd_real* m;
    pd_mat3* c;
} cloud;

static cloud random_cloud(size_t n, unsigned seed) {
    cloud k = {n, malloc(n * sizeof(pd_vec3)), malloc(n * sizeof(pd_vec3)),
               malloc(n * sizeof(pd_real)), malloc(n * sizeof(pd_mat3))};
    for (size_t p = 0; p < n; ++p) {
        k.x[p] = random_point(&seed, -0.2, 0.3);
        k.v[p] = random_point(&seed, -1, 1);
        k.m[p] = uniform(&seed, 0.5, 2);
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                k.c[p].m[a][b] = uniform(&seed, -3, 3);
    }
    return k;
}

static void free_cloud(cloud* k) {
    free(k->x), free(k->v), free(k->m), free(k->c);
}

static pd_vec3 cross(pd_vec3 a, pd_vec3 b) {
    return pd_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

/* APIC (Jiang et al. 2015, Sec. 5.3): the grid's mass and momentum equal the particles', and its
 * angular momentum sum x_i x m_i v_i equals sum_p x_p x m_p v_p + m_p (dx^2 / 4) eps_abc C_cb,
 * the particles' own plus their affine part (a transfer without the affine term, or with the
 * wrong D_p, misses the second). */
PD_TEST(apic_transfer_keeps_mass_momentum_and_angular_momentum) {
    cloud k = random_cloud(500, 11);
    pd_grid g;
    pd_grid_init(&g, 0.04);
    pd_error err = {0};
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 2, 1u << 24, &err) == PD_OK);
    pd_mat3* affine = malloc(k.n * sizeof *affine);
    for (size_t p = 0; p < k.n; ++p)
        affine[p] = pd_m3_scale(k.c[p], k.m[p]);
    pd_grid_from_particles(&g, k.m, k.v, affine);
    double mp = 0, mg = 0;
    pd_vec3 pp = {0}, pg = {0}, lp = {0}, lg = {0};
    double d2 = g.dx * g.dx / 4;
    for (size_t p = 0; p < k.n; ++p) {
        const pd_mat3* c = &k.c[p];
        mp += k.m[p];
        pp = pd_v3_add(pp, pd_v3_scale(k.v[p], k.m[p]));
        /* sum_i w (x_i - x_p) x C_p (x_i - x_p) = D eps_abc C_cb, D = dx^2 / 4 */
        pd_vec3 axial =
            pd_v3(c->m[2][1] - c->m[1][2], c->m[0][2] - c->m[2][0], c->m[1][0] - c->m[0][1]);
        lp = pd_v3_add(lp, pd_v3_scale(cross(k.x[p], k.v[p]), k.m[p]));
        lp = pd_v3_add(lp, pd_v3_scale(axial, k.m[p] * d2));
    }
    for (int i = 0; i < g.dim[0]; ++i)
        for (int j = 0; j < g.dim[1]; ++j)
            for (int l = 0; l < g.dim[2]; ++l) {
                size_t n = pd_grid_index(&g, i, j, l);
                pd_vec3 mv = pd_v3_scale(g.velocity[n], g.mass[n]); /* the grid keeps v only */
                mg += g.mass[n];
                pg = pd_v3_add(pg, mv);
                lg = pd_v3_add(lg, cross(pd_grid_node(&g, i, j, l), mv));
            }
    printf("  nodes %zu (%d x %d x %d)\n", g.nodes, g.dim[0], g.dim[1], g.dim[2]);
    PD_CHECK_REL(mg, mp, 1e-12);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(pg, pp)), 0, 1e-11);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(lg, lp)), 0, 1e-11);
    PD_CHECK(pd_v3_len(lp) > 1); /* the set-up has angular momentum to keep */
    free(affine);
    pd_grid_free(&g);
    free_cloud(&k);
}

/* A velocity field v(x) = a + B x carried to the grid with APIC (C_p = B) and back gives every
 * particle v(x_p) and C_p = B exactly (APIC keeps affine motion: PIC would not). */
PD_TEST(apic_round_trip_keeps_an_affine_field) {
    cloud k = random_cloud(400, 3);
    pd_mat3 b = {{{0.3, -1.2, 0.5}, {0.9, 0.1, -0.4}, {-0.7, 0.6, 0.2}}};
    pd_vec3 a = pd_v3(0.5, -0.25, 2);
    pd_mat3* affine = malloc(k.n * sizeof *affine);
    for (size_t p = 0; p < k.n; ++p) {
        k.v[p] = pd_v3_add(a, pd_m3_mulv(b, k.x[p]));
        affine[p] = pd_m3_scale(b, k.m[p]);
    }
    pd_grid g;
    pd_grid_init(&g, 0.05);
    pd_error err = {0};
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 1, 1u << 24, &err) == PD_OK);
    pd_grid_from_particles(&g, k.m, k.v, affine);
    pd_vec3* v = malloc(k.n * sizeof *v);
    pd_mat3* c = malloc(k.n * sizeof *c);
    pd_grid_to_particles(&g, v, c);
    double dv = 0, dc = 0;
    for (size_t p = 0; p < k.n; ++p) {
        dv = fmax(dv, pd_v3_len(pd_v3_sub(v[p], k.v[p])));
        dc = fmax(dc, sqrt(pd_m3_frob2(pd_m3_sub(c[p], b))));
    }
    PD_CHECK_NEAR(dv, 0, 1e-12);
    PD_CHECK_NEAR(dc, 0, 1e-10);
    /* without the affine term the same field comes back smeared: the test can tell them apart */
    pd_grid_from_particles(&g, k.m, k.v, NULL);
    pd_grid_to_particles(&g, v, c);
    double pic = 0;
    for (size_t p = 0; p < k.n; ++p)
        pic = fmax(pic, pd_v3_len(pd_v3_sub(v[p], k.v[p])));
    printf("  PIC round trip's worst velocity error: %.3g m/s\n", pic);
    PD_CHECK(pic > 1e-3);
    free(v), free(c), free(affine);
    pd_grid_free(&g);
    free_cloud(&k);
}

/* Every node gathers its particles in a fixed order: the transfers give the same bytes on 1 and
 * 2 threads. */
PD_TEST(transfers_are_the_same_on_any_thread_count) {
    cloud k = random_cloud(3000, 5);
    pd_grid g;
    pd_grid_init(&g, 0.02);
    pd_error err = {0};
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 2, 1u << 24, &err) == PD_OK);
    pd_vec3* v[2] = {malloc(k.n * sizeof(pd_vec3)), malloc(k.n * sizeof(pd_vec3))};
    pd_vec3* node_v[2] = {malloc(g.nodes * sizeof(pd_vec3)), malloc(g.nodes * sizeof(pd_vec3))};
    for (int t = 0; t < 2; ++t) {
        pd_set_threads(t + 1);
        pd_grid_from_particles(&g, k.m, k.v, k.c);
        memcpy(node_v[t], g.velocity, g.nodes * sizeof(pd_vec3));
        pd_grid_to_particles(&g, v[t], NULL);
    }
    pd_set_threads(0);
    PD_CHECK(memcmp(node_v[0], node_v[1], g.nodes * sizeof(pd_vec3)) == 0);
    PD_CHECK(memcmp(v[0], v[1], k.n * sizeof(pd_vec3)) == 0);
    free(v[0]), free(v[1]), free(node_v[0]), free(node_v[1]);
    pd_grid_free(&g);
    free_cloud(&k);
}

/* A refit follows the particles (the grid moves with them and grows when they spread) and
 * allocates nothing once it has the size; a runaway is refused, not allocated. */
PD_TEST(grid_follows_its_particles_and_refuses_a_runaway) {
    cloud k = random_cloud(200, 9);
    pd_grid g;
    pd_grid_init(&g, 0.05);
    pd_error err = {0};
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 1, 1u << 20, &err) == PD_OK);
    size_t nodes = g.nodes;
    for (size_t p = 0; p < k.n; ++p)
        k.x[p] = pd_v3_add(k.x[p], pd_v3(3, -2, 1)); /* the body moved */
    size_t before = pd_bytes_in_use();
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 1, 1u << 20, &err) == PD_OK);
    PD_CHECK(g.nodes == nodes);
    PD_CHECK(pd_bytes_in_use() == before);
    PD_CHECK(g.origin.x > 2.5 && g.origin.y < -1.5);
    k.x[0] = pd_v3(1e4, 0, 0); /* one particle flew away */
    pd_status st = pd_grid_fit(&g, k.x, k.n, 1, 1u << 20, &err);
    PD_CHECK(st == PD_ERR_UNSTABLE);
    printf("  runaway: %s\n", err.message);
    pd_grid_free(&g);
    free_cloud(&k);
}

static pd_colliders floor_collider(pd_boundary boundary, pd_real friction, pd_vec3 velocity) {
    pd_collider_def d = pd_default_collider_def();
    d.type = PD_COLLIDER_PLANE;
    d.point = pd_v3(0, 0, 0);
    d.normal = pd_v3(0, 1, 0);
    d.boundary = boundary;
    d.friction = friction;
    d.velocity = velocity;
    pd_colliders c;
    pd_error err = {0};
    pd_colliders_create(&d, 1, &c, &err);
    pd_colliders_update(&c, 0);
    return c;
}

/* A node in the floor moving into it loses its normal velocity and mu |v_n| of its tangential
 * speed (all of it when that is less); one moving away keeps everything; one above the floor is
 * not touched; no_slip takes the floor's own velocity, and against a material of wall friction
 * 0.5 (grid_boundary.h) acts as the slip floor of friction 0.5 does. */
PD_TEST(colliders_constrain_grid_velocities_with_coulomb_friction) {
    pd_colliders slip = floor_collider(PD_BOUNDARY_SLIP, 0.5, pd_v3(0, 0, 0));
    const pd_collider* c = &slip.items[0];
    pd_vec3 in = pd_v3(0.3, -0.01, 0), above = pd_v3(0.3, 0.01, 0);
    pd_vec3 v =
        pd_grid_collider_velocity(c, in, 0, pd_v3(2, -1, 0), INFINITY); /* |v_t| 2 > mu |v_n| 0.5 */
    PD_CHECK_NEAR(v.x, 1.5, 1e-12);
    PD_CHECK_NEAR(v.y, 0, 1e-12);
    v = pd_grid_collider_velocity(c, in, 0, pd_v3(0.2, -1, 0.1), INFINITY); /* friction stops it */
    PD_CHECK_NEAR(pd_v3_len(v), 0, 1e-12);
    v = pd_grid_collider_velocity(c, in, 0, pd_v3(2, 1, 0), INFINITY); /* leaving */
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(v, pd_v3(2, 1, 0))), 0, 0);
    v = pd_grid_collider_velocity(c, above, 0, pd_v3(2, -1, 0), INFINITY); /* outside the solid */
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(v, pd_v3(2, -1, 0))), 0, 0);
    pd_colliders_destroy(&slip);
    pd_colliders belt = floor_collider(PD_BOUNDARY_NO_SLIP, 0, pd_v3(0.7, 0, 0));
    v = pd_grid_collider_velocity(&belt.items[0], in, 0, pd_v3(2, -1, 3), INFINITY);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(v, pd_v3(0.7, 0, 0))), 0, 1e-12);
    v = pd_grid_collider_velocity(&belt.items[0], in, 0, pd_v3(2.7, -1, 0), 0.5);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(v, pd_v3(2.2, 0, 0))), 0, 1e-12); /* 0.5 off 2 */
    v = pd_grid_collider_velocity(&belt.items[0], in, 0, pd_v3(0.9, -1, 0.1), 0.5);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(v, pd_v3(0.7, 0, 0))), 0, 1e-12);        /* sticks */
    v = pd_grid_collider_velocity(&belt.items[0], in, 0, pd_v3(2, 1, 0), 0.5); /* lifts off */
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(v, pd_v3(2, 1, 0))), 0, 0);
    pd_colliders_destroy(&belt);
}

/* A slab of particles 0.1 m thick on a lattice of spacing dx / 2 with its lowest layer at
 * height h above the floor, all moving at (1, -1, 0), and the colliders applied with the reach
 * of grid_boundary.h: a slip floor with mu 0.5 (wall NULL), or a no_slip one against the
 * materials of wall (the particles' materials: 0, or 1 for the one at index `odd`). Returns the
 * nodes with mass that slide at (0.5, 0, 0); counts in *stopped those at rest and in *wrong
 * those whose velocity is none of these (when at or below the floor) or not the slab's own
 * (above it). */
typedef struct floor_count {
    int below, stopped, wrong;
} floor_count;

static int floor_nodes(double h, const pd_grid_wall* wall, size_t odd, floor_count* out) {
    const double dx = 0.02, s = dx / 2;
    cloud k = random_cloud(10 * 10 * 10, 13);
    int32_t* material = calloc(k.n, sizeof *material);
    for (size_t p = 0; p < k.n; ++p) {
        k.x[p] = pd_v3(s * (double)(p / 100), h + s * (double)(p / 10 % 10), s * (double)(p % 10));
        k.v[p] = pd_v3(1, -1, 0);
        k.m[p] = 1e-3;
        material[p] = p == odd;
    }
    pd_grid g;
    pd_grid_init(&g, dx);
    pd_error err = {0};
    pd_grid_fit(&g, k.x, k.n, 1, 1u << 24, &err);
    pd_grid_from_particles(&g, k.m, k.v, NULL);
    pd_grid_wall w = wall ? *wall : (pd_grid_wall){0};
    w.particle_material = material;
    pd_colliders floor =
        floor_collider(wall ? PD_BOUNDARY_NO_SLIP : PD_BOUNDARY_SLIP, 0.5, pd_v3(0, 0, 0));
    pd_grid_apply_colliders(&g, k.m, wall ? &w : NULL, PD_GRID_COLLIDER_REACH * dx, &floor);
    int held = 0;
    *out = (floor_count){0, 0, 0};
    for (int i = 0; i < g.dim[0]; ++i)
        for (int j = 0; j < g.dim[1]; ++j)
            for (int l = 0; l < g.dim[2]; ++l) {
                size_t n = pd_grid_index(&g, i, j, l);
                if (!(g.mass[n] > 0))
                    continue;
                int in = pd_grid_node(&g, i, j, l).y <= 1e-12;
                int slides = pd_v3_len(pd_v3_sub(g.velocity[n], pd_v3(0.5, 0, 0))) < 1e-12;
                int stopped = pd_v3_len(g.velocity[n]) == 0;
                int free = pd_v3_len(pd_v3_sub(g.velocity[n], pd_v3(1, -1, 0))) < 1e-12;
                out->below += in;
                held += slides;
                out->stopped += stopped;
                out->wrong += in ? !slides && !stopped && !free : !free;
            }
    pd_colliders_destroy(&floor);
    pd_grid_free(&g);
    free(material);
    free_cloud(&k);
    return held;
}

static int held_nodes(double h, int* below, int* wrong) {
    floor_count c;
    int held = floor_nodes(h, NULL, (size_t)-1, &c);
    *below = c.below, *wrong = c.wrong + c.stopped;
    return held;
}

PD_TEST(colliders_hold_the_nodes_whose_material_reached_the_surface) {
    int below, wrong;
    int resting = held_nodes(0.1 * 0.02, &below, &wrong);
    printf("  resting: %d nodes with mass at or below the floor, %d held, %d wrong\n", below,
           resting, wrong);
    PD_CHECK(below > 0 && resting == below && wrong == 0);
    int above = held_nodes(1.1 * 0.02, &below, &wrong);
    printf("  a cell up: %d nodes with mass at or below the floor, %d held, %d wrong\n", below,
           above, wrong);
    PD_CHECK(below > 0 && above == 0 && wrong == 0);
}

/* A no_slip floor against a material of wall friction 0.5 (a sand of friction angle 26.6
 * degrees, grid_boundary.h's pd_grid_wall): the resting slab's nodes at or below the floor slide
 * at (0.5, 0, 0) as on a slip floor of friction 0.5 (Coulomb: mu |v_n| = 0.5 off |v_t| = 1),
 * none stopped; with one particle of a held material (wall friction INFINITY) in the lowest
 * layer, the floor's nodes its stencil reaches (3 x 2 x 3 at and below the floor) stop, the
 * others slide. Both at the single-velocity rule's cost: no node above the floor touched. */
PD_TEST(no_slip_floor_bears_what_the_material_bears) {
    const pd_real friction[2] = {0.5, INFINITY};
    pd_grid_wall wall = {NULL, friction, NULL};
    floor_count sand, mixed;
    int slid = floor_nodes(0.1 * 0.02, &wall, (size_t)-1, &sand);
    int with_held = floor_nodes(0.1 * 0.02, &wall, 5 * 100 + 5, &mixed); /* x, z mid-slab */
    printf("  sand: %d nodes at or below the floor, %d slide, %d stopped, %d wrong\n", sand.below,
           slid, sand.stopped, sand.wrong);
    printf("  one held grain: %d slide, %d stopped, %d wrong\n", with_held, mixed.stopped,
           mixed.wrong);
    PD_CHECK(sand.below > 0 && slid == sand.below && sand.stopped == 0 && sand.wrong == 0);
    PD_CHECK(mixed.stopped == 18 && with_held == sand.below - 18 && mixed.wrong == 0);
}

/* The particles' angular momentum under APIC: x_p x m_p v_p plus m_p (dx^2 / 4) times the axial
 * vector of C_p's rotational part. */
static pd_vec3 particle_angular_momentum(const cloud* k, const pd_vec3* v, const pd_mat3* c,
                                         double dx) {
    pd_vec3 l = pd_v3(0, 0, 0);
    for (size_t p = 0; p < k->n; ++p) {
        const pd_mat3* m = &c[p];
        pd_vec3 axial =
            pd_v3(m->m[2][1] - m->m[1][2], m->m[0][2] - m->m[2][0], m->m[1][0] - m->m[0][1]);
        l = pd_v3_add(l, pd_v3_scale(cross(k->x[p], v[p]), k->m[p]));
        l = pd_v3_add(l, pd_v3_scale(axial, k->m[p] * dx * dx / 4));
    }
    return l;
}

/* RPIC round trips keep linear and angular momentum to round-off (Fang 2019 Sec. 8) while they
 * change the velocities (a round trip that did nothing would pass the first two checks). */
PD_TEST(rpic_round_trip_keeps_linear_and_angular_momentum) {
    cloud k = random_cloud(800, 17);
    pd_grid g;
    pd_grid_init(&g, 0.04);
    pd_error err = {0};
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 1, 1u << 24, &err) == PD_OK);
    pd_mat3* scratch = malloc(k.n * sizeof *scratch);
    pd_vec3* v0 = malloc(k.n * sizeof *v0);
    memcpy(v0, k.v, k.n * sizeof *v0);
    pd_vec3 p0 = pd_v3(0, 0, 0), p1 = p0;
    pd_vec3 l0 = particle_angular_momentum(&k, k.v, k.c, g.dx);
    for (size_t p = 0; p < k.n; ++p)
        p0 = pd_v3_add(p0, pd_v3_scale(k.v[p], k.m[p]));
    for (int trip = 0; trip < 3; ++trip)
        pd_grid_rpic_round_trip(&g, k.m, k.v, k.c, scratch);
    pd_vec3 l1 = particle_angular_momentum(&k, k.v, k.c, g.dx);
    double changed = 0;
    for (size_t p = 0; p < k.n; ++p) {
        p1 = pd_v3_add(p1, pd_v3_scale(k.v[p], k.m[p]));
        changed = fmax(changed, pd_v3_len(pd_v3_sub(k.v[p], v0[p])));
    }
    printf("  |L| %.4g, largest velocity change %.3g m/s\n", pd_v3_len(l0), changed);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(p1, p0)), 0, 1e-11);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(l1, l0)), 0, 1e-11);
    PD_CHECK(changed > 0.1);
    free(scratch), free(v0);
    pd_grid_free(&g);
    free_cloud(&k);
}

/* A shear wave v_y = sin(k x) (with C = grad v) keeps exp(-k^2 dx^2 / 8) of its amplitude per
 * RPIC round trip: Fang 2019 Eq. 11's viscosity nu = dx^2 / (8 dt) over one step. Measured on the
 * middle of a lattice of 2 particles per cell and axis, four wavelengths of 16 cells long; the
 * decay within 30 % of the prediction. */
PD_TEST(rpic_round_trip_damps_a_shear_wave_as_its_viscosity) {
    double dx = 0.01, kw = 2 * PD_PI / (16 * dx), h = dx / 2;
    int nx = 128, ny = 8, nz = 8;
    cloud k = {(size_t)nx * ny * nz, NULL, NULL, NULL, NULL};
    k.x = malloc(k.n * sizeof *k.x), k.v = malloc(k.n * sizeof *k.v);
    k.m = malloc(k.n * sizeof *k.m), k.c = malloc(k.n * sizeof *k.c);
    size_t p = 0;
    for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j)
            for (int l = 0; l < nz; ++l, ++p) {
                k.x[p] = pd_v3((i + 0.5) * h, (j + 0.5) * h, (l + 0.5) * h);
                k.v[p] = pd_v3(0, sin(kw * k.x[p].x), 0);
                k.m[p] = 1;
                k.c[p] = pd_m3_zero();
                k.c[p].m[1][0] = kw * cos(kw * k.x[p].x);
            }
    pd_grid g;
    pd_grid_init(&g, dx);
    pd_error err = {0};
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 1, 1u << 24, &err) == PD_OK);
    pd_mat3* scratch = malloc(k.n * sizeof *scratch);
    pd_vec3* v0 = malloc(k.n * sizeof *v0);
    pd_mat3* c0 = malloc(k.n * sizeof *c0);
    memcpy(v0, k.v, k.n * sizeof *v0), memcpy(c0, k.c, k.n * sizeof *c0);
    double before = 0, after = 0, norm = 0, apic = 0;
    for (p = 0; p < k.n; ++p)
        if (k.x[p].x > 16 * dx && k.x[p].x < 48 * dx)
            before += k.v[p].y * sin(kw * k.x[p].x),
                norm += sin(kw * k.x[p].x) * sin(kw * k.x[p].x);
    pd_grid_rpic_round_trip(&g, k.m, k.v, k.c, scratch);
    for (p = 0; p < k.n; ++p)
        if (k.x[p].x > 16 * dx && k.x[p].x < 48 * dx)
            after += k.v[p].y * sin(kw * k.x[p].x);
    for (p = 0; p < k.n; ++p) /* the same trip with APIC's full C, which keeps shear */
        scratch[p] = pd_m3_scale(c0[p], k.m[p]);
    pd_grid_from_particles(&g, k.m, v0, scratch);
    pd_grid_to_particles(&g, v0, c0);
    for (p = 0; p < k.n; ++p)
        if (k.x[p].x > 16 * dx && k.x[p].x < 48 * dx)
            apic += v0[p].y * sin(kw * k.x[p].x);
    double decay = 1 - after / before, expected = 1 - exp(-kw * kw * dx * dx / 8);
    printf("  amplitude %.5f -> %.5f (RPIC), %.5f (APIC)\n", before / norm, after / norm,
           apic / norm);
    PD_CHECK_REL(decay, expected, 0.3);
    PD_CHECK(1 - apic / before < 0.3 * expected);
    free(scratch), free(v0), free(c0);
    pd_grid_free(&g);
    free_cloud(&k);
}

/* D and D^T of Fang 2019 Eq. 9: adjoint (sum_p G_p : M_p = sum_i u_i . d_i for random fields, to
 * round-off), the gradient of the grid velocity is G2P's C, and the gradient of a linear node
 * field u(x) = B x is B at every particle (a wrong scale or sign breaks one of the three). */
PD_TEST(gradient_and_divergence_are_adjoint_and_exact_on_linear_fields) {
    cloud k = random_cloud(600, 21);
    pd_grid g;
    pd_grid_init(&g, 0.045);
    pd_error err = {0};
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 1, 1u << 24, &err) == PD_OK);
    unsigned seed = 99;
    pd_vec3* u = malloc(g.nodes * sizeof *u);
    pd_vec3* d = malloc(g.nodes * sizeof *d);
    pd_mat3* grad = malloc(k.n * sizeof *grad);
    for (size_t n = 0; n < g.nodes; ++n)
        u[n] = random_point(&seed, -1, 1);
    pd_grid_gradient(&g, u, grad);
    pd_grid_divergence(&g, k.c, d);
    double lhs = 0, rhs = 0, scale = 0;
    for (size_t p = 0; p < k.n; ++p)
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                lhs += grad[p].m[a][b] * k.c[p].m[a][b],
                    scale += fabs(grad[p].m[a][b] * k.c[p].m[a][b]);
    for (size_t n = 0; n < g.nodes; ++n)
        rhs += pd_v3_dot(u[n], d[n]);
    printf("  <D u, M> = %.10g, <u, D^T M> = %.10g\n", lhs, rhs);
    PD_CHECK_NEAR(lhs, rhs, 1e-12 * scale);
    /* the gradient of the grid velocity is the C that G2P gives */
    pd_grid_from_particles(&g, k.m, k.v, NULL);
    pd_vec3* v = malloc(k.n * sizeof *v);
    pd_mat3* c = malloc(k.n * sizeof *c);
    pd_grid_to_particles(&g, v, c);
    pd_grid_gradient(&g, g.velocity, grad);
    double diff = 0;
    for (size_t p = 0; p < k.n; ++p)
        diff = fmax(diff, sqrt(pd_m3_frob2(pd_m3_sub(grad[p], c[p]))));
    PD_CHECK_NEAR(diff, 0, 1e-12);
    /* a linear node field */
    pd_mat3 b = {{{0.2, -0.7, 1.1}, {0.4, 0.3, -0.5}, {-0.9, 0.6, 0.1}}};
    for (int i = 0; i < g.dim[0]; ++i)
        for (int j = 0; j < g.dim[1]; ++j)
            for (int l = 0; l < g.dim[2]; ++l)
                u[pd_grid_index(&g, i, j, l)] = pd_m3_mulv(b, pd_grid_node(&g, i, j, l));
    pd_grid_gradient(&g, u, grad);
    diff = 0;
    for (size_t p = 0; p < k.n; ++p)
        diff = fmax(diff, sqrt(pd_m3_frob2(pd_m3_sub(grad[p], b))));
    PD_CHECK_NEAR(diff, 0, 1e-10);
    free(u), free(d), free(grad), free(v), free(c);
    pd_grid_free(&g);
    free_cloud(&k);
}

/* ------------------------------------------------------------ fields (grid_fields.h) */

/* Two cubes of 10 x 10 x 10 particles (spacing 0.01 m, 1 g each), mirror images across the
 * node plane x = 0, their facing layers `gap` + 0.01 m apart: cube 0 (field 0) at x < 0 moving
 * at va, cube 1 at vb; APIC's C random. */
static cloud two_blocks(double gap, pd_vec3 va, pd_vec3 vb, int32_t** field) {
    cloud k = random_cloud(2000, 21);
    *field = malloc(k.n * sizeof **field);
    for (size_t p = 0; p < k.n; ++p) {
        int b = (int)(p / 1000), i = (int)(p % 1000);
        double x = gap / 2 + 0.005 + 0.01 * (i / 100);
        (*field)[p] = b;
        k.x[p] = pd_v3(b ? x : -x, 0.005 + 0.01 * (i / 10 % 10), 0.005 + 0.01 * (i % 10));
        k.v[p] = b ? vb : va;
        k.m[p] = 1e-3;
    }
    return k;
}

/* Each field is the transfer of its own particles, and the fields add up to the one shared
 * field (mass and momentum, to round-off): a particle sent to the wrong field, or a field's
 * momentum divided by the wrong mass, breaks it. And the same bytes on one and two threads,
 * through the transfer, the contact and back. */
PD_TEST(fields_add_up_to_the_shared_grid_on_any_thread_count) {
    int32_t* field;
    cloud k = two_blocks(0.01, pd_v3(1, 0.3, 0), pd_v3(-1, 0, 0.2), &field);
    pd_grid g;
    pd_grid_init(&g, 0.02);
    pd_error err = {0};
    PD_REQUIRE(pd_grid_fit(&g, k.x, k.n, 2, 1u << 24, &err) == PD_OK);
    pd_grid_fields f;
    pd_grid_fields_init(&f, 2);
    pd_real friction[2] = {0.3, 0.6}, body_mass[2] = {1, 1}, half[2] = {0.005, 0.005};
    pd_grid_contact contact = {field, friction, body_mass, half, 0.01};
    pd_vec3* v[2] = {malloc(k.n * sizeof(pd_vec3)), malloc(k.n * sizeof(pd_vec3))};
    pd_vec3* nodes[2] = {malloc(2 * g.nodes * sizeof(pd_vec3)),
                         malloc(2 * g.nodes * sizeof(pd_vec3))};
    double worst_m = 0, worst_p = 0;
    int shared = 0;
    for (int t = 0; t < 2; ++t) {
        pd_set_threads(t + 1);
        PD_REQUIRE(pd_grid_fields_from_particles(&g, &f, field, k.m, k.v, k.c) == PD_OK);
        for (size_t n = 0; t == 0 && n < g.nodes; ++n) {
            pd_real m = f.mass[2 * n] + f.mass[2 * n + 1];
            pd_vec3 mv = pd_v3_add(pd_v3_scale(f.velocity[2 * n], f.mass[2 * n]),
                                   pd_v3_scale(f.velocity[2 * n + 1], f.mass[2 * n + 1]));
            worst_m = fmax(worst_m, fabs(m - g.mass[n]));
            worst_p =
                fmax(worst_p, pd_v3_len(pd_v3_sub(mv, pd_v3_scale(g.velocity[n], g.mass[n]))));
            shared += f.mass[2 * n] > 0 && f.mass[2 * n + 1] > 0;
        }
        pd_grid_fields_contact(&g, &f, &contact);
        memcpy(nodes[t], f.velocity, 2 * g.nodes * sizeof(pd_vec3));
        pd_grid_fields_to_particles(&g, &f, field, v[t], NULL);
    }
    pd_set_threads(0);
    printf("  %zu nodes, %d shared by both fields; worst |sum m_b - m| %.2e kg, |sum m_b v_b - "
           "m v| %.2e kg m/s\n",
           g.nodes, shared, worst_m, worst_p);
    PD_CHECK(shared > 0);
    PD_CHECK(worst_m < 1e-12 && worst_p < 1e-12);
    PD_CHECK(memcmp(nodes[0], nodes[1], 2 * g.nodes * sizeof(pd_vec3)) == 0);
    PD_CHECK(memcmp(v[0], v[1], k.n * sizeof(pd_vec3)) == 0);
    free(v[0]), free(v[1]), free(nodes[0]), free(nodes[1]), free(field);
    pd_grid_fields_free(&f);
    pd_grid_free(&g);
    free_cloud(&k);
}

typedef struct contact_check {
    int shared;      /* nodes both fields reach */
    int contacts;    /* shared nodes in contact by the gap rule, recomputed here */
    int faces;       /* of which those with the normal within 10 degrees of x (not at an edge) */
    double approach; /* the largest (v_0 - v_1) . n left after contact there (m/s) */
    double momentum; /* the largest change of a node's momentum (kg m/s) */
    double coulomb;  /* the largest | |dv_t| - min(mu |dv_n|, |rel_t|) | (m/s) */
    double changed;  /* the largest change of a field's velocity (m/s) */
    double apart;    /* the largest change of a field's velocity at a node not in contact */
} contact_check;

/* The two bodies' grid fields of cloud k on a 2 cm grid (field[p]: p's body), and a copy of
 * their velocities before any contact (the caller frees it). */
static pd_vec3* two_fields(const cloud* k, const int32_t* field, pd_grid* g, pd_grid_fields* f) {
    pd_grid_init(g, 0.02);
    pd_error err = {0};
    pd_grid_fit(g, k->x, k->n, 2, 1u << 24, &err);
    pd_grid_fields_init(f, 2);
    pd_grid_fields_from_particles(g, f, field, k->m, k->v, NULL);
    pd_vec3* before = malloc(2 * g->nodes * sizeof *before);
    memcpy(before, f->velocity, 2 * g->nodes * sizeof *before);
    return before;
}

/* Node x's gap rule of grid_fields.h, from the particles directly: along u (equal bodies: u =
 * n_0 - n_1 over its length, n_b = g_b / |g_b|), field 1's lowest particle less field 0's
 * highest among those within a spacing (0.01 m, half a cell) of the node's line along u, less
 * the two half spacings (0.005 m each) and the approach within dt. */
static int in_contact(const cloud* k, const int32_t* field, pd_vec3 x, double dx, pd_vec3 n,
                      pd_vec3 v0, pd_vec3 v1, double dt) {
    double hi = -INFINITY, lo = INFINITY;
    for (size_t p = 0; p < k->n; ++p) {
        pd_vec3 d = pd_v3_sub(k->x[p], x);
        if (fabs(d.x) >= 1.5 * dx || fabs(d.y) >= 1.5 * dx || fabs(d.z) >= 1.5 * dx)
            continue; /* outside the quadratic stencil's reach of the node */
        double along = pd_v3_dot(d, n);
        if (pd_v3_len(pd_v3_madd(d, -along, n)) >= 0.01)
            continue; /* more than a spacing from the node's line along u */
        if (field[p] == 0)
            hi = fmax(hi, along);
        else
            lo = fmin(lo, along);
    }
    return lo - 0.005 - (hi + 0.005) - dt * pd_v3_dot(pd_v3_sub(v0, v1), n) <= 0;
}

/* Runs the contact on two blocks `gap` apart (mu for both, step dt) and measures it at every
 * shared node against Bardenhagen's rule with the gap rule, from the velocities before: where
 * the gap closes within dt the approach along the normal n_0 is gone, each field's tangential
 * velocity relative to the centre of mass lost min(mu |dv_n|, |rel_t|), and the node's momentum
 * is unchanged; elsewhere nothing changed. */
static contact_check run_contact(pd_vec3 va, pd_vec3 vb, pd_real mu, pd_real dt,
                                 pd_grid_contact_normal mode) {
    int32_t* field;
    cloud k = two_blocks(0.01, va, vb, &field);
    pd_grid g;
    pd_grid_fields f;
    pd_vec3* before = two_fields(&k, field, &g, &f);
    pd_real friction[2] = {mu, mu}, body_mass[2] = {1, 1}, half[2] = {0.005, 0.005};
    pd_grid_contact contact = {field, friction, body_mass, half, dt, mode};
    pd_grid_fields_contact(&g, &f, &contact);
    contact_check r = {0};
    for (size_t n = 0; n < g.nodes; ++n) {
        const pd_real* m = &f.mass[2 * n];
        if (!(m[0] > 0 && m[1] > 0))
            continue;
        ++r.shared;
        pd_vec3 nrm, u;
        if (mode == PD_GRID_NORMAL_MASS_GRADIENT) { /* n_0, and u = n_0 - n_1 over its length */
            nrm = pd_v3_scale(f.moment[2 * n], 1 / pd_v3_len(f.moment[2 * n]));
            u = pd_v3_sub(nrm,
                          pd_v3_scale(f.moment[2 * n + 1], 1 / pd_v3_len(f.moment[2 * n + 1])));
            u = pd_v3_scale(u, 1 / pd_v3_len(u));
        } else { /* the fitted plane's (its own test below), the gap along it */
            nrm = u = pd_grid_fields_contact_normal(&g, &f, &contact, n, NULL);
        }
        const pd_vec3 *v0 = &before[2 * n], *v1 = &f.velocity[2 * n];
        int i = (int)(n / ((size_t)g.dim[1] * g.dim[2])), j = (int)(n / g.dim[2] % g.dim[1]);
        pd_vec3 x = pd_grid_node(&g, i, j, (int)(n % g.dim[2]));
        if (!in_contact(&k, field, x, g.dx, u, v0[0], v0[1], dt)) {
            for (int b = 0; b < 2; ++b)
                r.apart = fmax(r.apart, pd_v3_len(pd_v3_sub(v1[b], v0[b])));
            continue;
        }
        r.contacts += pd_v3_dot(pd_v3_sub(v0[0], v0[1]), nrm) > 0;
        r.faces += pd_v3_dot(pd_v3_sub(v0[0], v0[1]), nrm) > 0 && nrm.x > cos(10 * PD_PI / 180);
        pd_vec3 vcm = pd_v3_scale(pd_v3_add(pd_v3_scale(v0[0], m[0]), pd_v3_scale(v0[1], m[1])),
                                  1 / (m[0] + m[1]));
        pd_vec3 p0 = pd_v3_add(pd_v3_scale(v0[0], m[0]), pd_v3_scale(v0[1], m[1]));
        pd_vec3 p1 = pd_v3_add(pd_v3_scale(v1[0], m[0]), pd_v3_scale(v1[1], m[1]));
        r.momentum = fmax(r.momentum, pd_v3_len(pd_v3_sub(p1, p0)));
        r.approach = fmax(r.approach, pd_v3_dot(pd_v3_sub(v1[0], v1[1]), nrm));
        for (int b = 0; b < 2; ++b) {
            pd_vec3 nb = pd_v3_scale(nrm, b ? -1 : 1), rel = pd_v3_sub(v0[b], vcm);
            pd_vec3 dv = pd_v3_sub(v1[b], v0[b]);
            double dn = pd_v3_dot(dv, nb);
            pd_vec3 rel_t = pd_v3_madd(rel, -pd_v3_dot(rel, nb), nb);
            double dt_len = pd_v3_len(pd_v3_madd(dv, -dn, nb));
            r.coulomb = fmax(r.coulomb, fabs(dt_len - fmin(mu * fabs(dn), pd_v3_len(rel_t))));
            r.changed = fmax(r.changed, pd_v3_len(dv));
        }
    }
    free(before), free(field);
    pd_grid_fields_free(&f);
    pd_grid_free(&g);
    free_cloud(&k);
    return r;
}

/* Bardenhagen et al. 2000 Sec. 3 with the gap rule of grid_fields.h at every node two fields
 * share, with either normal (solver.mpm.contact_normal): cubes whose surfaces are 1 cm apart,
 * approaching at 1 m/s each (sliding past each other at 0.8 m/s), at dt = 0.01 s (they would
 * overlap by 1 cm at its end): where the particles' extents close within the step no approach is
 * left along the normal, each node's momentum is kept, and tangential speed is lost by Coulomb's mu
 * times the normal change (mu 0.3; 0 and 10: none, and all where mu |dv_n| exceeds it); other nodes
 * are untouched. At dt = 0.002 s (2 of the 10 mm) no node is in contact and nothing changes
 * (measured along cube 0's own normal, which tilts at the cubes' edges, 28 of the 64 shared nodes
 * would be); the same cubes moving apart are left alone. A contact that takes the whole velocity
 * (sticking), misses the friction cap, acts before the surfaces meet or on separating fields fails
 * one of these. */
PD_TEST(field_contact_stops_approach_keeps_momentum_and_lets_fields_part) {
    pd_vec3 va = pd_v3(1, 0.4, 0), vb = pd_v3(-1, -0.4, 0.1);
    double mus[3] = {0, 0.3, 10};
    const char* names[2] = {"fitted", "mass_gradient"};
    for (int mode = 0; mode < 2; ++mode) {
        printf("  normal %s:\n", names[mode]);
        for (int q = 0; q < 3; ++q) {
            contact_check r = run_contact(va, vb, mus[q], 0.01, (pd_grid_contact_normal)mode);
            printf("  approaching, mu %g, dt 0.01 s: %d of %d shared nodes in contact (%d on the "
                   "faces); approach left %.2e m/s, momentum change %.2e kg m/s, Coulomb's rule "
                   "off by %.2e m/s, others changed %.2e m/s\n",
                   mus[q], r.contacts, r.shared, r.faces, r.approach, r.momentum, r.coulomb,
                   r.apart);
            PD_CHECK(r.faces > 10);
            PD_CHECK(r.approach < 1e-12);
            PD_CHECK(r.momentum < 1e-12);
            PD_CHECK(r.coulomb < 1e-12);
            PD_CHECK(r.apart == 0);
        }
        contact_check early = run_contact(va, vb, 0.3, 0.002, (pd_grid_contact_normal)mode);
        printf("  approaching, dt 0.002 s: %d of %d shared nodes in contact, %d of them on the "
               "faces; others changed %.2e m/s\n",
               early.contacts, early.shared, early.faces, early.apart);
        PD_CHECK(early.shared > 10 && early.contacts == 0 && early.apart == 0);
        contact_check apart = run_contact(vb, va, 0.3, 0.01, (pd_grid_contact_normal)mode);
        printf("  moving apart: %d nodes approaching, largest change %.2e m/s\n", apart.contacts,
               fmax(apart.changed, apart.apart));
        PD_CHECK(apart.contacts == 0);
        PD_CHECK(apart.changed == 0 && apart.apart == 0);
    }
}

/* Two lattice cubes (10 x 10 x 10 particles at 0.01 m, cube 0 from the origin, cube 1 from
 * (0.1, 0.05, 0)) meeting over half a face (their surfaces touch on the plane x = 0.1), the
 * whole turned by theta about z through (0.1, 0.075); cube 0 moves at 1 m/s along the faces'
 * normal n = (cos theta, sin theta, 0) into cube 1, at rest. One frictionless contact (mode)
 * over a step of 1 ms: cube 0's impulse sum_i m_0 dv_0 along the faces over its part along -n;
 * *normal: that part (kg m/s). */
static double sideways_impulse(double theta, pd_grid_contact_normal mode, double* normal) {
    cloud k = random_cloud(2000, 5);
    int32_t* field = malloc(k.n * sizeof *field);
    double c = cos(theta), s = sin(theta);
    for (size_t p = 0; p < k.n; ++p) {
        int b = (int)(p / 1000), i = (int)(p % 1000);
        double dx = 0.005 + 0.01 * (i / 100) + 0.1 * b - 0.1;
        double dy = 0.005 + 0.01 * (i / 10 % 10) + 0.05 * b - 0.075;
        k.x[p] = pd_v3(0.1 + c * dx - s * dy, 0.075 + s * dx + c * dy, 0.005 + 0.01 * (i % 10));
        k.v[p] = b ? pd_v3(0, 0, 0) : pd_v3(c, s, 0);
        k.m[p] = 1e-3;
        field[p] = b;
    }
    pd_grid g;
    pd_grid_fields f;
    pd_vec3* before = two_fields(&k, field, &g, &f);
    pd_real friction[2] = {0, 0}, body_mass[2] = {1, 1}, half[2] = {0.005, 0.005};
    pd_grid_contact contact = {field, friction, body_mass, half, 0.001, mode};
    pd_grid_fields_contact(&g, &f, &contact);
    pd_vec3 impulse = pd_v3(0, 0, 0);
    for (size_t n = 0; n < g.nodes; ++n)
        impulse = pd_v3_madd(impulse, f.mass[2 * n], pd_v3_sub(f.velocity[2 * n], before[2 * n]));
    *normal = -pd_v3_dot(impulse, pd_v3(c, s, 0));
    free(before), free(field);
    pd_grid_fields_free(&f);
    pd_grid_free(&g);
    free_cloud(&k);
    return pd_v3_len(pd_v3_madd(impulse, *normal, pd_v3(c, s, 0))) / *normal;
}

/* Nairn, Hammerquist, Smith 2020's fitted plane (grid_fields.c, fitted_normal): where two cubes
 * meet over half a face, a frictionless contact pushes cube 0 along the faces' normal alone,
 * whether the faces lie along the grid or are turned 30 degrees across it: its impulse along
 * the faces within 1 % of the one across them (the tolerance of physics.mpm_contact_normal). The
 * mass gradient of the first cube's field tilts towards the diagonal at its corner (printed
 * beside it). A normal from one field's particles alone, or the classes' mean positions, fails
 * it. */
PD_TEST(fitted_normal_pushes_along_the_faces_where_cubes_meet_over_half_a_face) {
    double thetas[2] = {0, 30 * PD_PI / 180};
    for (int t = 0; t < 2; ++t) {
        double normal, normal_old;
        double fitted = sideways_impulse(thetas[t], PD_GRID_NORMAL_FITTED, &normal);
        double old = sideways_impulse(thetas[t], PD_GRID_NORMAL_MASS_GRADIENT, &normal_old);
        printf("  faces turned %.0f degrees: impulse along the faces / across them %.4f with the "
               "fitted normal (%.3e kg m/s across), %.4f with the mass gradient (%.3e)\n",
               thetas[t] * 180 / PD_PI, fitted, normal, old, normal_old);
        PD_CHECK(normal > 0);
        PD_CHECK(fitted < 0.01);
    }
}

/* Body b's linear momentum and APIC angular momentum sum m (x x v + (dx^2 / 4) axial(C - C^T))
 * about the origin (Jiang et al. 2015). */
static void body_momenta(const cloud* k, const int32_t* field, int b, double dx, pd_vec3* lin,
                         pd_vec3* ang) {
    *lin = *ang = pd_v3(0, 0, 0);
    for (size_t p = 0; p < k->n; ++p) {
        if (field[p] != b)
            continue;
        const pd_real(*c)[3] = k->c[p].m;
        pd_vec3 spin = pd_v3(c[2][1] - c[1][2], c[0][2] - c[2][0], c[1][0] - c[0][1]);
        *lin = pd_v3_madd(*lin, k->m[p], k->v[p]);
        *ang = pd_v3_madd(*ang, k->m[p],
                          pd_v3_add(cross(k->x[p], k->v[p]), pd_v3_scale(spin, dx * dx / 4)));
    }
}

/* The largest change of a body's linear momentum over its |P| and of its angular momentum over
 * its |L| in one RPIC round trip, per field (fields 1) or through the one shared field. */
static double round_trip_exchange(int fields, double* angular) {
    int32_t* field;
    cloud k = two_blocks(0.0, pd_v3(1, 0.3, 0), pd_v3(-1, 0, 0.2), &field);
    pd_grid g;
    pd_grid_init(&g, 0.02);
    pd_error err = {0};
    pd_grid_fit(&g, k.x, k.n, 2, 1u << 24, &err);
    pd_grid_fields f;
    pd_grid_fields_init(&f, 2);
    pd_vec3 lin0[2], ang0[2], lin1, ang1;
    for (int b = 0; b < 2; ++b)
        body_momenta(&k, field, b, g.dx, &lin0[b], &ang0[b]);
    pd_mat3* scratch = malloc(k.n * sizeof *scratch);
    if (fields)
        pd_grid_fields_rpic_round_trip(&g, &f, field, k.m, k.v, k.c, scratch);
    else
        pd_grid_rpic_round_trip(&g, k.m, k.v, k.c, scratch);
    double worst = 0;
    *angular = 0;
    for (int b = 0; b < 2; ++b) {
        body_momenta(&k, field, b, g.dx, &lin1, &ang1);
        worst = fmax(worst, pd_v3_len(pd_v3_sub(lin1, lin0[b])) / pd_v3_len(lin0[b]));
        *angular = fmax(*angular, pd_v3_len(pd_v3_sub(ang1, ang0[b])) / pd_v3_len(ang0[b]));
    }
    free(scratch), free(field);
    pd_grid_fields_free(&f);
    pd_grid_free(&g);
    free_cloud(&k);
    return worst;
}

/* RPIC damping with a field per body (Fang 2019 Sec. 8; Jiang et al. 2015): two cubes whose
 * facing layers are a spacing apart (they share nodes), approaching at 1 m/s each with random C:
 * a round trip through each body's own field keeps each body's linear and angular momentum to
 * round-off; through the one shared field the cubes exchange momentum (the check below can
 * fail: a round trip that mixed the fields would show the shared field's exchange). */
PD_TEST(rpic_round_trip_per_field_keeps_each_bodys_momentum) {
    double ang_fields, ang_shared;
    double fields = round_trip_exchange(1, &ang_fields);
    double shared = round_trip_exchange(0, &ang_shared);
    printf("  per field: body momentum changed %.2e (linear), %.2e (angular); through the shared "
           "field %.3g, %.3g\n",
           fields, ang_fields, shared, ang_shared);
    PD_CHECK(fields < 1e-12 && ang_fields < 1e-12);
    PD_CHECK(shared > 1e-3);
}
