/* Unit tests of the shared SPH pieces (src/sph): the kernels against quadratures and finite
 * differences, the colliders' share of a kernel against a quadrature of the kernel over the
 * solid, and the position-based density constraints on compressed and loose lattices. */
#include "test.h"

#include <math.h>
#include <string.h>

#include "boundary/collider.h"
#include "core/alloc.h"
#include "sph/density_constraint.h"
#include "sph/kernels.h"
#include "sph/redistribution.h"
#include "sph/viscosity.h"
#include "sph/wall_density.h"

/* The Spiky kernel itself, 15 / (pi H^6) (H - r)^3 (Mueller 2003 Eq. 21), for the finite
 * difference of its gradient. */
static pd_real spiky(pd_real r, pd_real H) {
    return r < H ? 15.0 / (PD_PI * pow(H, 6)) * pow(H - r, 3) : 0;
}

/* Midpoint quadrature of Poly6 over the part of its ball where inside(p) holds. */
static pd_real poly6_over(pd_real H, int (*inside)(pd_vec3, const void*), const void* ctx) {
    const int n = 80;
    pd_real step = 2 * H / n, sum = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < n; ++k) {
                pd_vec3 p =
                    pd_v3(-H + (i + 0.5) * step, -H + (j + 0.5) * step, -H + (k + 0.5) * step);
                if (inside(p, ctx))
                    sum += pd_sph_poly6(pd_v3_len2(p), H);
            }
    return sum * step * step * step;
}

static int anywhere(pd_vec3 p, const void* ctx) {
    (void)p, (void)ctx;
    return 1;
}

static int beyond_plane(pd_vec3 p, const void* ctx) {
    return p.y < -*(const pd_real*)ctx; /* the solid y < -d below a centre at height d */
}

PD_TEST(poly6_integrates_to_one) {
    pd_real H = 0.01, total = poly6_over(H, anywhere, NULL);
    printf("  integral of Poly6 over its ball: %.5f\n", total);
    PD_CHECK_NEAR(total, 1, 2e-3);
}

/* Wendland C2 (3D constant 21 / (2 pi H^3)) by the same midpoint rule in radius: 4 pi r^2 W(r). */
PD_TEST(wendland_c2_integrates_to_one) {
    const int n = 4000;
    pd_real H = 0.02, dr = H / n, total = 0;
    for (int i = 0; i < n; ++i) {
        pd_real r = (i + 0.5) * dr;
        total += 4 * PD_PI * r * r * pd_sph_wendland_c2(r, H) * dr;
    }
    printf("  integral of Wendland C2 over its ball: %.8f\n", total);
    PD_CHECK_NEAR(total, 1, 1e-6);
    PD_CHECK(pd_sph_wendland_c2_shape(0) == 1 && pd_sph_wendland_c2_shape(1) == 0);
    PD_CHECK_NEAR(pd_sph_wendland_c2_shape(0.5), 0.1875, 1e-15); /* 0.5^4 * 3 */
}

PD_TEST(spiky_gradient_matches_finite_difference) {
    pd_real H = 0.02, e = 1e-8;
    pd_vec3 r = pd_v3(0.004, -0.007, 0.003);
    pd_vec3 g = pd_sph_spiky_gradient(r, H);
    pd_real fd[3];
    for (int a = 0; a < 3; ++a) {
        pd_vec3 rp = r, rm = r;
        ((pd_real*)&rp)[a] += e, ((pd_real*)&rm)[a] -= e;
        fd[a] = (spiky(pd_v3_len(rp), H) - spiky(pd_v3_len(rm), H)) / (2 * e);
    }
    printf("  gradient (%.6g %.6g %.6g), finite difference (%.6g %.6g %.6g)\n", g.x, g.y, g.z,
           fd[0], fd[1], fd[2]);
    PD_CHECK_REL(g.x, fd[0], 1e-5);
    PD_CHECK_REL(g.y, fd[1], 1e-5);
    PD_CHECK_REL(g.z, fd[2], 1e-5);
}

/* The closed form of the share beyond a plane against the quadrature, on both sides of it. */
PD_TEST(share_beyond_plane_matches_quadrature) {
    pd_real H = 0.01, ds[] = {-0.6, -0.2, 0, 0.3, 0.7};
    for (int k = 0; k < 5; ++k) {
        pd_real d = ds[k] * H, q = poly6_over(H, beyond_plane, &d);
        pd_real closed = pd_sph_poly6_beyond_plane(d, H);
        printf("  d = %+.1f H: closed form %.5f, quadrature %.5f\n", ds[k], closed, q);
        PD_CHECK_NEAR(closed, q, 2e-3);
    }
    PD_CHECK_NEAR(pd_sph_poly6_beyond_plane(0, H), 0.5, 1e-15);
    PD_CHECK(pd_sph_poly6_beyond_plane(H, H) == 0);
}

/* A floor y = 0 and a wall x = 0: a centre near the corner has part of its kernel inside both
 * solids; the union rule against the quadrature over the union (the plain sum counts the
 * corner twice), and its gradient against a central difference. */
typedef struct corner {
    pd_vec3 c;
} corner;

static int inside_corner(pd_vec3 p, const void* ctx) {
    const corner* k = ctx;
    return p.y + k->c.y < 0 || p.x + k->c.x < 0;
}

/* The colliders' share's gradient g at c against central differences of the share. */
static void check_share_gradient(const pd_colliders* cols, pd_vec3 c, pd_real H, pd_vec3 g) {
    pd_real e = 1e-7;
    for (int a = 0; a < 3; ++a) {
        pd_vec3 p = c, m = c;
        ((pd_real*)&p)[a] += e, ((pd_real*)&m)[a] -= e;
        pd_real fd =
            (pd_sph_collider_share(cols, p, H, 0) - pd_sph_collider_share(cols, m, H, 0)) / (2 * e);
        PD_CHECK_NEAR(((pd_real*)&g)[a], fd, 1e-4 * (fabs(fd) + 1));
    }
}

PD_TEST(collider_share_of_a_corner) {
    pd_collider_def defs[2];
    defs[0] = pd_default_collider_def();
    defs[0].type = PD_COLLIDER_PLANE;
    defs[0].normal = pd_v3(0, 1, 0);
    defs[1] = defs[0];
    defs[1].normal = pd_v3(1, 0, 0);
    pd_colliders cols;
    pd_error err = {0};
    PD_REQUIRE(pd_colliders_create(defs, 2, &cols, &err) == PD_OK);
    pd_real H = 0.01;
    corner k = {pd_v3(0.1 * H, 0.15 * H, 0.3)};
    pd_vec3 g;
    pd_real share = pd_sph_collider_share_gradient(&cols, k.c, H, 0, &g);
    pd_real q = poly6_over(H, inside_corner, &k);
    pd_real sum = pd_sph_poly6_beyond_plane(0.1 * H, H) + pd_sph_poly6_beyond_plane(0.15 * H, H);
    printf("  corner share: union rule %.4f, quadrature %.4f, plain sum %.4f\n", share, q, sum);
    PD_CHECK_NEAR(share, q, 0.01);
    PD_CHECK(fabs(share - q) < 0.2 * (sum - q)); /* the plain sum counts the corner twice */
    check_share_gradient(&cols, k.c, H, g);
    pd_colliders_destroy(&cols);
}

/* The share of the rows of a unit cubic lattice continued past a plane at distance d (rows at
 * d + 1/2, d + 3/2, ... beyond it, every lattice site summed), over the interior rest sum: what
 * a particle of a lattice resting on a wall misses. The continued rows' share
 * (pd_sph_poly6_layers_beyond_plane: each row's plane integral) within 0.005 of it from a
 * particle on the wall to one a spacing from it, where the half-space is 0.025 off at half a
 * spacing; and its derivative against a central difference. */
static pd_real continued_rows(pd_real d, pd_real horizon) {
    pd_real sum = 0;
    int r = (int)ceil(horizon);
    for (int j = 0; d + 0.5 + j < horizon; ++j)
        for (int i = -r; i <= r; ++i)
            for (int k = -r; k <= r; ++k) {
                pd_real z = d + 0.5 + j;
                sum += pd_sph_poly6(i * i + k * k + z * z, horizon);
            }
    return sum / pd_sph_poly6_lattice_sum(horizon, -r);
}

PD_TEST(layers_share_matches_the_continued_rows) {
    pd_real hz = 2.01, ds[] = {0, 0.25, 0.5, 0.75, 1};
    for (int k = 0; k < 5; ++k) {
        pd_real deriv, layers = pd_sph_poly6_layers_beyond_plane(ds[k], hz, 1, &deriv);
        pd_real rows = continued_rows(ds[k], hz), half = pd_sph_poly6_beyond_plane(ds[k], hz);
        pd_real e = 1e-6, fd = (pd_sph_poly6_layers_beyond_plane(ds[k] + e, hz, 1, NULL) -
                                pd_sph_poly6_layers_beyond_plane(ds[k] - e, hz, 1, NULL)) /
                               (2 * e);
        printf("  d = %.2f s: rows %.4f, continued rows' share %.4f, half-space %.4f\n", ds[k],
               rows, layers, half);
        PD_CHECK_NEAR(layers, rows, 0.005);
        PD_CHECK_NEAR(deriv, fd, 1e-6);
    }
    PD_CHECK(pd_sph_poly6_beyond_plane(0.5, hz) - continued_rows(0.5, hz) > 0.02);
    /* scaled: spacing s and radius 2.01 s read the same */
    PD_CHECK_NEAR(pd_sph_poly6_layers_beyond_plane(0.0025, 0.01005, 0.005, NULL),
                  pd_sph_poly6_layers_beyond_plane(0.5, hz, 1, NULL), 1e-12);
}

/* A container box's solid is the union of the half-spaces beyond its faces: a centre near the
 * edge of two faces (x = 0, y = 0 of a box reaching far in z) has the corner's share of the two
 * planes of collider_share_of_a_corner (the same quadrature), where the nearest face alone
 * counts one wall; and its gradient against a central difference. */
PD_TEST(container_box_counts_both_faces_at_its_edge) {
    pd_collider_def def = pd_default_collider_def();
    def.type = PD_COLLIDER_BOX;
    def.shape.min = pd_v3(0, 0, -1);
    def.shape.max = pd_v3(1, 1, 1);
    def.inside = 1;
    pd_colliders cols;
    pd_error err = {0};
    PD_REQUIRE(pd_colliders_create(&def, 1, &cols, &err) == PD_OK);
    pd_real H = 0.01;
    corner k = {pd_v3(0.1 * H, 0.15 * H, 0.3)};
    pd_vec3 g;
    pd_real share = pd_sph_collider_share_gradient(&cols, k.c, H, 0, &g);
    pd_real q = poly6_over(H, inside_corner, &k), nearest = pd_sph_poly6_beyond_plane(0.1 * H, H);
    printf("  container edge share: faces %.4f, quadrature %.4f, nearest face alone %.4f\n", share,
           q, nearest);
    PD_CHECK_NEAR(share, q, 0.01);
    PD_CHECK(q - nearest > 0.1);
    check_share_gradient(&cols, k.c, H, g);
    pd_colliders_destroy(&cols);
}

/* A cube of n^3 particles at spacing s scaled by `scale` about its centre, with brute-force
 * neighbour lists within H = 2.01 s. */
typedef struct lattice {
    size_t n;
    pd_vec3* y;
    pd_real *volume, *inv_mass, *radius, *rest;
    uint8_t* kind;
    uint32_t *offsets, *nbr;
} lattice;

static pd_real lattice_rest_sum(pd_real horizon) {
    pd_real sum = 0;
    for (int i = -3; i <= 3; ++i)
        for (int j = -3; j <= 3; ++j)
            for (int k = -3; k <= 3; ++k)
                sum += pd_sph_poly6((pd_real)(i * i + j * j + k * k), horizon);
    return sum;
}

static void lattice_make(lattice* L, int side, pd_real scale, uint8_t kind) {
    pd_real s = 0.01, H = 2.01 * s;
    L->n = (size_t)(side * side * side);
    L->y = PD_NEW_ARRAY(pd_vec3, L->n);
    L->volume = PD_NEW_ARRAY(pd_real, L->n);
    L->inv_mass = PD_NEW_ARRAY(pd_real, L->n);
    L->radius = PD_NEW_ARRAY(pd_real, L->n);
    L->rest = PD_NEW_ARRAY(pd_real, L->n);
    L->kind = PD_NEW_ARRAY(uint8_t, L->n);
    L->offsets = PD_NEW_ARRAY(uint32_t, L->n + 1);
    L->nbr = PD_NEW_ARRAY(uint32_t, L->n * L->n);
    pd_real rest = lattice_rest_sum(2.01), c = 0.5 * (side - 1) * s;
    size_t i = 0;
    for (int a = 0; a < side; ++a)
        for (int b = 0; b < side; ++b)
            for (int d = 0; d < side; ++d, ++i) {
                L->y[i] = pd_v3_scale(pd_v3(a * s - c, b * s - c, d * s - c), scale);
                L->volume[i] = s * s * s;
                L->inv_mass[i] = 1 / (1000 * s * s * s);
                L->radius[i] = H;
                L->rest[i] = rest;
                L->kind[i] = kind;
            }
    uint32_t k = 0;
    for (size_t p = 0; p < L->n; ++p) {
        L->offsets[p] = k;
        for (size_t q = 0; q < L->n; ++q)
            if (q != p && pd_v3_len(pd_v3_sub(L->y[p], L->y[q])) < H)
                L->nbr[k++] = (uint32_t)q;
    }
    L->offsets[L->n] = k;
}

static void lattice_free(lattice* L) {
    PD_FREE_ARRAY(L->y, pd_vec3, L->n);
    PD_FREE_ARRAY(L->volume, pd_real, L->n);
    PD_FREE_ARRAY(L->inv_mass, pd_real, L->n);
    PD_FREE_ARRAY(L->radius, pd_real, L->n);
    PD_FREE_ARRAY(L->rest, pd_real, L->n);
    PD_FREE_ARRAY(L->kind, uint8_t, L->n);
    PD_FREE_ARRAY(L->offsets, uint32_t, L->n + 1);
    PD_FREE_ARRAY(L->nbr, uint32_t, L->n * L->n);
}

static pd_density_constraint_def lattice_def(const lattice* L, pd_real relaxation) {
    return (pd_density_constraint_def){L->n,      L->offsets, L->nbr,  L->volume, L->inv_mass,
                                       L->radius, L->rest,    L->kind, NULL,      relaxation};
}

/* Largest rho / rho_0 - 1 over the particles two layers or more inside the cube (the outer
 * ones have part of their kernel outside the cube). */
static pd_real interior_excess(const lattice* L, const pd_density_constraint_def* d, int side,
                               pd_real* lowest) {
    pd_real worst = -1;
    *lowest = 1e30;
    for (size_t i = 0; i < L->n; ++i) {
        int a = (int)(i / (size_t)(side * side)), b = (int)(i / (size_t)side) % side,
            c = (int)(i % (size_t)side);
        if (a < 2 || b < 2 || c < 2 || a >= side - 2 || b >= side - 2 || c >= side - 2)
            continue;
        pd_real e = pd_density_ratio(d, L->y, i) - 1;
        worst = fmax(worst, e);
        *lowest = fmin(*lowest, e);
    }
    return worst;
}

static pd_density_scratch scratch_new(size_t n) {
    return (pd_density_scratch){PD_NEW_ARRAY(pd_real, n), PD_NEW_ARRAY(pd_vec3, n),
                                PD_NEW_ARRAY(pd_vec3, n),
                                PD_NEW_ARRAY(pd_real, pd_density_chunks(n)), NULL};
}

static void scratch_free(pd_density_scratch* sc, size_t n) {
    PD_FREE_ARRAY(sc->lambda, pd_real, n);
    PD_FREE_ARRAY(sc->grad, pd_vec3, n);
    PD_FREE_ARRAY(sc->move, pd_vec3, n);
    PD_FREE_ARRAY(sc->partial, pd_real, pd_density_chunks(n));
}

static void run_constraints(lattice* L, const pd_density_constraint_def* d, int iterations) {
    pd_density_scratch sc = scratch_new(L->n);
    pd_density_constraint_solve(d, L->y, iterations, &sc);
    scratch_free(&sc, L->n);
}

/* A lattice squeezed to 0.92 of its spacing (rho / rho_0 = 1.28 inside) is pushed back to its
 * rest density by the unilateral constraints. */
PD_TEST(density_constraints_undo_compression) {
    const int side = 8;
    lattice L;
    lattice_make(&L, side, 0.92, PD_DENSITY_ACTIVE | PD_DENSITY_UNILATERAL);
    pd_density_constraint_def d = lattice_def(&L, 1);
    pd_real low, before = interior_excess(&L, &d, side, &low);
    run_constraints(&L, &d, 30);
    pd_real after = interior_excess(&L, &d, side, &low);
    printf("  interior rho/rho_0 - 1: %.3f before, %.4f after 30 iterations\n", before, after);
    PD_CHECK(before > 0.25);
    PD_CHECK(after < 0.01);
    lattice_free(&L);
}

/* A loose lattice (1.05 of its spacing): unilateral constraints leave it where it is, bilateral
 * ones (a fluid's) pull it together to its rest density. */
PD_TEST(unilateral_constraints_leave_loose_matter_alone) {
    const int side = 8;
    lattice uni, bi;
    lattice_make(&uni, side, 1.05, PD_DENSITY_ACTIVE | PD_DENSITY_UNILATERAL);
    lattice_make(&bi, side, 1.05, PD_DENSITY_ACTIVE);
    pd_vec3 first = uni.y[0];
    pd_density_constraint_def du = lattice_def(&uni, 1), db = lattice_def(&bi, 1);
    pd_real low, loose = interior_excess(&bi, &db, side, &low);
    (void)loose;
    pd_real loose_low = low;
    run_constraints(&uni, &du, 30);
    run_constraints(&bi, &db, 30);
    interior_excess(&uni, &du, side, &low);
    pd_real uni_low = low;
    interior_excess(&bi, &db, side, &low);
    printf("  lowest interior rho/rho_0 - 1: %.4f loose, %.4f unilateral, %.4f bilateral\n",
           loose_low, uni_low, low);
    PD_CHECK(loose_low < -0.1);
    PD_CHECK(uni_low == loose_low && uni.y[0].x == first.x);
    PD_CHECK(low > -0.02);
    lattice_free(&uni);
    lattice_free(&bi);
}

/* The relaxation epsilon scales each iteration's correction by 1 / (1 + epsilon): after one
 * iteration from the same squeezed lattice, epsilon = 1 moves every particle half as far as
 * epsilon = 0. */
PD_TEST(relaxation_scales_the_correction) {
    const int side = 6;
    lattice a, b;
    lattice_make(&a, side, 0.95, PD_DENSITY_ACTIVE);
    lattice_make(&b, side, 0.95, PD_DENSITY_ACTIVE);
    pd_vec3 start = a.y[7];
    pd_density_constraint_def da = lattice_def(&a, 0), db = lattice_def(&b, 1);
    run_constraints(&a, &da, 1);
    run_constraints(&b, &db, 1);
    pd_real ma = pd_v3_len(pd_v3_sub(a.y[7], start)), mb = pd_v3_len(pd_v3_sub(b.y[7], start));
    printf("  one iteration moves particle 7 by %.4g m (epsilon 0) and %.4g m (epsilon 1)\n", ma,
           mb);
    PD_CHECK(ma > 0);
    PD_CHECK_REL(mb, 0.5 * ma, 1e-9);
    lattice_free(&a);
    lattice_free(&b);
}

/* Redistribution (He 2017 Eq. 21-24) on a lattice whose interior particles were shifted by a
 * deterministic pseudo-random jitter of up to 0.3 spacings, the outer two layers fixed (ghosts):
 * the interior's mean C_i H^2 falls and its closest pair opens, towards the lattice's (C = 0,
 * one spacing). The printed sign of Eq. 24 fails both. */
static pd_real closest_pair(const lattice* L) {
    pd_real best = 1e30;
    for (size_t i = 0; i < L->n; ++i)
        for (uint32_t b = L->offsets[i]; b < L->offsets[i + 1]; ++b)
            best = fmin(best, pd_v3_len(pd_v3_sub(L->y[i], L->y[L->nbr[b]])));
    return best;
}

static pd_real extent(const lattice* L) {
    pd_real e = 0;
    for (size_t i = 0; i < L->n; ++i)
        e = fmax(e, fmax(fabs(L->y[i].x), fmax(fabs(L->y[i].y), fabs(L->y[i].z))));
    return e;
}

PD_TEST(redistribution_evens_a_jittered_lattice) {
    const int side = 8;
    lattice L;
    lattice_make(&L, side, 1, PD_DENSITY_ACTIVE);
    uint32_t seed = 12345;
    for (size_t i = 0; i < L.n; ++i) {
        int a = (int)(i / (size_t)(side * side)), b = (int)(i / (size_t)side) % side,
            c = (int)(i % (size_t)side);
        if (a < 2 || b < 2 || c < 2 || a >= side - 2 || b >= side - 2 || c >= side - 2) {
            L.inv_mass[i] = 0;
            continue;
        }
        for (int k = 0; k < 3; ++k) {
            seed = seed * 1664525u + 1013904223u;
            ((pd_real*)&L.y[i])[k] += 0.003 * ((seed >> 8) / 16777216.0 * 2 - 1);
        }
    }
    pd_density_constraint_def d = lattice_def(&L, 1);
    pd_real* delta = PD_NEW_ARRAY(pd_real, L.n);
    for (size_t i = 0; i < L.n; ++i)
        delta[i] = 1;
    pd_density_scratch sc = scratch_new(L.n);
    pd_real close0 = closest_pair(&L), ext0 = extent(&L);
    pd_real e0 = pd_redistribute(&d, delta, L.y, 1, &sc), e = e0;
    for (int k = 0; k < 6; ++k) {
        e = pd_redistribute(&d, delta, L.y, 5, &sc);
        printf("  after %2d iterations: mean C H^2 %.4f, closest pair %.4f m, extent %.4f m\n",
               1 + 5 * (k + 1), e, closest_pair(&L), extent(&L));
    }
    printf("  start: mean C H^2 %.4f, closest pair %.4f m, extent %.4f m\n", e0, close0, ext0);
    PD_CHECK(e < 0.5 * e0);
    PD_CHECK(closest_pair(&L) > close0 + 0.0003);
    PD_CHECK_NEAR(extent(&L), ext0, 1e-12); /* the ghosts stayed */
    PD_FREE_ARRAY(delta, pd_real, L.n);
    scratch_free(&sc, L.n);
    lattice_free(&L);
}

/* Implicit viscosity (Mueller 2003's Laplacian, backward Euler, Jacobi): on a lattice moving
 * with a shear velocity v_x = U sin(2 pi z / L), enough iterations satisfy
 * v_i (1 + h nu sum_j V_j L_ij) - h nu sum_j V_j L_ij v_j = v*_i (each iteration reads the
 * distances of the previous one: a fixed point), the kinetic energy falls, and a particle that
 * does not move (a ghost) keeps its velocity, 0. */
PD_TEST(implicit_viscosity_solves_backward_euler) {
    const int side = 6;
    const pd_real h = 0.002, U = 0.1, L_z = 0.06;
    lattice L;
    lattice_make(&L, side, 1, PD_DENSITY_ACTIVE);
    pd_density_constraint_def d = lattice_def(&L, 1);
    pd_real* nu = PD_NEW_ARRAY(pd_real, L.n);
    pd_vec3* x = PD_NEW_ARRAY(pd_vec3, L.n);
    pd_real energy0 = 0;
    for (size_t i = 0; i < L.n; ++i) {
        nu[i] = 0.05; /* h nu / H^2 = 0.25 */
        x[i] = L.y[i];
        pd_real vx = U * sin(2 * PD_PI * L.y[i].z / L_z);
        L.y[i].x += h * vx;
        energy0 += vx * vx;
    }
    L.inv_mass[0] = 0, L.y[0] = x[0]; /* particle 0 is still */
    pd_density_scratch sc = scratch_new(L.n);
    pd_vec3* vstar = PD_NEW_ARRAY(pd_vec3, L.n);
    for (size_t i = 0; i < L.n; ++i)
        vstar[i] = pd_v3_scale(pd_v3_sub(L.y[i], x[i]), 1 / h);
    pd_sph_implicit_viscosity(&d, nu, x, h, L.y, 100, &sc);
    pd_real worst = 0, energy = 0, H = L.radius[0], h3 = H * H * H;
    for (size_t i = 1; i < L.n; ++i) {
        pd_vec3 vi = pd_v3_scale(pd_v3_sub(L.y[i], x[i]), 1 / h), r = vstar[i];
        r = pd_v3_sub(r, vi);
        for (uint32_t b = L.offsets[i]; b < L.offsets[i + 1]; ++b) {
            uint32_t j = L.nbr[b];
            pd_real dist = pd_v3_len(pd_v3_sub(L.y[i], L.y[j]));
            pd_real a = h * nu[i] * L.volume[j] * 45.0 / (PD_PI * h3 * h3) * (H - dist);
            pd_vec3 vj = pd_v3_scale(pd_v3_sub(L.y[j], x[j]), 1 / h);
            r = pd_v3_madd(r, a, pd_v3_sub(vj, vi));
        }
        worst = fmax(worst, pd_v3_len(r));
        energy += pd_v3_len2(vi);
    }
    printf("  backward-Euler residual %.2e m/s; kinetic energy x %.3f; the still particle moved "
           "%.1e m\n",
           worst, energy / energy0, pd_v3_len(pd_v3_sub(L.y[0], x[0])));
    PD_CHECK(worst < 1e-6 * U);
    PD_CHECK(energy < 0.9 * energy0);
    PD_CHECK(pd_v3_len(pd_v3_sub(L.y[0], x[0])) == 0);
    PD_FREE_ARRAY(vstar, pd_vec3, L.n);
    PD_FREE_ARRAY(nu, pd_real, L.n);
    PD_FREE_ARRAY(x, pd_vec3, L.n);
    scratch_free(&sc, L.n);
    lattice_free(&L);
}

/* Wendland C2's derivative (xpbi's kernel gradient) against central differences of the kernel,
 * across the support, and 0 at r = 0 and beyond H. */
PD_TEST(wendland_c2_derivative_matches_finite_differences) {
    double H = 0.02, worst = 0, h = 1e-7;
    for (int k = 1; k < 100; ++k) {
        double r = H * k / 100.0;
        double fd = (pd_sph_wendland_c2(r + h, H) - pd_sph_wendland_c2(r - h, H)) / (2 * h);
        double scale = 21.0 / (2.0 * PD_PI * H * H * H * H);
        worst = fmax(worst, fabs(pd_sph_wendland_c2_derivative(r, H) - fd) / scale);
    }
    printf("  worst |dW/dr - central difference| over 21 / (2 pi H^4): %.3g\n", worst);
    PD_CHECK(worst < 1e-6);
    PD_CHECK(pd_sph_wendland_c2_derivative(0, H) == 0);
    PD_CHECK(pd_sph_wendland_c2_derivative(H, H) == 0);
    PD_CHECK(pd_sph_wendland_c2_derivative(1.5 * H, H) == 0);
}

/* The height at which a layer's bottom row rests on a wall at rho_0 (issue 37 item 1: the
 * distance within which a no_slip collider holds a grain the density penalty carries). Checked
 * through the density module itself: a layer of particles (spacing s, rows 0..3 above the
 * grain's, 7 x 7 wide) over a floor plane at the returned height below the centre particle of
 * its bottom row, whose pd_density_ratio (neighbour sums and the plane's share, the interior
 * lattice's rest sum) must be 1; half a spacing above the floor it reads more (the floor's
 * share there exceeds the rows it stands for). */
static pd_real bottom_row_ratio(pd_real height, int layers) {
    pd_real s = 0.005, H = 2.01 * s;
    enum { W = 7, ROWS = 4, N = W * ROWS * W };
    static pd_vec3 y[N];
    static pd_real volume[N], radius[N], rest[N], spacing[N];
    static uint32_t nbr[N];
    size_t count = 0, centre = 0;
    for (int i = 0; i < W; ++i)
        for (int j = 0; j < ROWS; ++j)
            for (int k = 0; k < W; ++k) {
                if (i == W / 2 && j == 0 && k == W / 2)
                    centre = count;
                y[count] = pd_v3((i - W / 2) * s, height * s + j * s, (k - W / 2) * s);
                volume[count] = s * s * s, radius[count] = H, spacing[count] = layers ? s : 0;
                rest[count] = 1.0105648891822328; /* kernel sum inside the lattice, unit s */
                count++;
            }
    uint32_t offsets[N + 1] = {0}, m = 0;
    for (size_t q = 0; q < count; ++q)
        if (q != centre)
            nbr[m++] = (uint32_t)q;
    for (size_t q = centre + 1; q <= count; ++q)
        offsets[q] = m; /* the centre's list holds every other particle; the rest have none */
    pd_collider_def def = pd_default_collider_def();
    def.type = PD_COLLIDER_PLANE;
    def.normal = pd_v3(0, 1, 0);
    pd_colliders cols;
    pd_error err = {0};
    if (pd_colliders_create(&def, 1, &cols, &err) != PD_OK)
        return -1;
    pd_density_constraint_def d = {.count = count,
                                   .offsets = offsets,
                                   .nbr = nbr,
                                   .volume = volume,
                                   .radius = radius,
                                   .rest_sum = rest,
                                   .colliders = &cols,
                                   .wall_spacing = spacing};
    pd_real ratio = pd_density_ratio(&d, y, centre);
    pd_colliders_destroy(&cols);
    return ratio;
}

PD_TEST(bottom_row_rests_on_a_wall_at_its_rest_height) {
    pd_real h = pd_sph_poly6_rest_height(2.01, 0);
    pd_real at = bottom_row_ratio(h, 0), half = bottom_row_ratio(0.5, 0);
    printf("  rest height %.4f spacings: density ratio there %.10f, at half a spacing %.4f; "
           "rest sum %.10f\n",
           h, at, half, pd_sph_poly6_lattice_sum(2.01, -3));
    PD_CHECK_NEAR(pd_sph_poly6_lattice_sum(2.01, -3), 1.0105648891822328, 1e-12);
    PD_CHECK_NEAR(at, 1, 1e-9);
    PD_CHECK(half > 1.02);
    PD_CHECK(h > 0.5 && h < 0.6);
}

/* The same with the wall's share the lattice's rows continued past it: the bottom row rests
 * near the half spacing at which the continued lattice puts it (within 0.01 spacing, against
 * the half-space's 0.0545), and reads 1 there through the density module. */
PD_TEST(bottom_row_rests_near_half_a_spacing_on_the_continued_rows) {
    pd_real h = pd_sph_poly6_rest_height(2.01, 1);
    pd_real at = bottom_row_ratio(h, 1), half = bottom_row_ratio(0.5, 1);
    printf("  rest height %.4f spacings: density ratio there %.10f, at half a spacing %.4f\n", h,
           at, half);
    PD_CHECK_NEAR(at, 1, 1e-9);
    PD_CHECK_NEAR(h, 0.5, 0.01);
    PD_CHECK_NEAR(half, 1, 0.005);
}
