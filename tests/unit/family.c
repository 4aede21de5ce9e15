/* Peridynamic families (He 2017 Sec. 3): symmetric bonds within the horizon of the same body,
 * reverse-bond indices, and weights normalised so that sum_j w V_j = 1 over a full family
 * (less near a surface); the shape tensor of a full lattice family is isotropic, and the
 * deformation gradient of a family recovers an affine map. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "math/svd3.h"
#include "neighbor/family_renewal.h"
#include "lattice.h"
#include "test.h"

#define N 10

/* The lattice as two bodies touching (the halves along x): no bonds across. */
static size_t lattice(pd_vec3* pos, pd_real* vol, pd_real* h, int32_t* body, pd_real s) {
    size_t n = pd_test_lattice(pos, vol, h, body, N, s);
    for (size_t i = 0; i < n; ++i)
        body[i] = i < n / 2 ? 0 : 1;
    return n;
}

PD_TEST(families_are_symmetric_and_weights_normalise) {
    static pd_vec3 pos[N * N * N];
    static pd_real vol[N * N * N], h[N * N * N];
    static int32_t body[N * N * N];
    pd_real s = 0.01;
    size_t n = lattice(pos, vol, h, body, s);
    pd_family f;
    pd_hash_grid grid = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, pos, vol, h, body, n, 2.01) == PD_OK);
    int asym = 0, cross = 0, full = 0;
    double worst_full = 0, lowest = 1;
    for (uint32_t i = 0; i < n; ++i) {
        double wv = 0;
        for (uint32_t b = f.offsets[i]; b < f.offsets[i + 1]; ++b) {
            uint32_t j = f.j[b], r = f.rev[b];
            asym += f.j[r] != i || f.w[j] != f.w[i]; /* a body's bonds share one weight */
            cross += body[j] != body[i];
            wv += f.w[i] * vol[j];
        }
        if (f.offsets[i + 1] - f.offsets[i] == 32)
            worst_full = fmax(worst_full, fabs(wv - 1)), full++;
        lowest = fmin(lowest, wv);
    }
    printf("  %d full families (32 bonds); worst |sum w V - 1| %.3g; corner sum %.3g\n", full,
           worst_full, lowest);
    PD_CHECK(asym == 0);
    PD_CHECK(cross == 0);
    PD_CHECK(full > 0);
    PD_CHECK_NEAR(worst_full, 0, 1e-12);
    PD_CHECK(lowest < 0.5); /* corners miss most of their family */
    pd_family_free(&f);
    pd_hash_grid_destroy(&grid);
}

/* (X*X) of a full lattice family is (sum w V |xi|^2 / 3) I: cubic symmetry makes it
 * isotropic, so F = (Y*X)(X*X)^-1 is unbiased in the bulk. */
PD_TEST(full_family_shape_tensor_is_isotropic) {
    static pd_vec3 pos[N * N * N];
    static pd_real vol[N * N * N], h[N * N * N];
    static int32_t body[N * N * N];
    size_t n = lattice(pos, vol, h, body, 0.01);
    for (size_t i = 0; i < n; ++i)
        body[i] = 0;
    pd_family f;
    pd_hash_grid grid = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, pos, vol, h, body, n, 2.01) == PD_OK);
    uint32_t centre = (N / 2) * N * N + (N / 2) * N + N / 2;
    pd_mat3 k = pd_family_shape_tensor(&f, centre, NULL, vol); /* w V_j */
    double off = fabs(k.m[0][1]) + fabs(k.m[0][2]) + fabs(k.m[1][2]);
    printf("  K diag %.6g %.6g %.6g, off-diagonal sum %.3g\n", k.m[0][0], k.m[1][1], k.m[2][2],
           off);
    PD_CHECK_REL(k.m[1][1], k.m[0][0], 1e-12);
    PD_CHECK_REL(k.m[2][2], k.m[0][0], 1e-12);
    PD_CHECK_NEAR(off, 0, 1e-15);
    pd_family_free(&f);
    pd_hash_grid_destroy(&grid);
}

/* pd_family_deformation_gradient recovers an affine map y = A x + c exactly in the bulk and at
 * a corner (a lopsided family), with the family's weight times V_j and with per-bond weights
 * alone; pd_family_shape_tensor is the sum of w X X^T it inverts (A comes back only if both
 * use the same weights: a K of other weights gives another F). */
PD_TEST(deformation_gradient_recovers_an_affine_map) {
    static pd_vec3 pos[N * N * N], y[N * N * N];
    static pd_real vol[N * N * N], h[N * N * N], bond_w[N * N * N * 40];
    static int32_t body[N * N * N];
    size_t n = lattice(pos, vol, h, body, 0.01);
    for (size_t i = 0; i < n; ++i)
        body[i] = 0;
    pd_family f;
    pd_hash_grid grid = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, pos, vol, h, body, n, 2.01) == PD_OK);
    PD_REQUIRE(f.bond_count <= N * N * N * 40);
    for (size_t b = 0; b < f.bond_count; ++b)
        bond_w[b] = 1 + 0.5 * sin(3.0 * (double)b); /* uneven, positive */
    pd_mat3 A = {{{1.1, 0.2, -0.1}, {0.05, 0.9, 0.3}, {-0.2, 0.1, 1.2}}};
    for (size_t i = 0; i < n; ++i)
        y[i] = pd_v3_add(pd_m3_mulv(A, pos[i]), pd_v3(0.3, -0.2, 0.1));
    uint32_t at[2] = {(N / 2) * N * N + (N / 2) * N + N / 2, 0}; /* the centre, a corner */
    pd_real worst = 0, mixed = 0;
    for (int k = 0; k < 2; ++k)
        for (int form = 0; form < 2; ++form) {
            const pd_real* bw = form ? bond_w : NULL;
            const pd_real* v = form ? NULL : vol;
            pd_mat3 kinv;
            PD_REQUIRE(pd_m3_inverse(pd_family_shape_tensor(&f, at[k], bw, v), &kinv));
            pd_mat3 F = pd_family_deformation_gradient(&f, at[k], bw, v, y, kinv);
            worst = fmax(worst, sqrt(pd_m3_frob2(pd_m3_sub(F, A))));
            /* the other form's K with this form's sum: not A at the corner */
            pd_mat3 kother;
            PD_REQUIRE(pd_m3_inverse(
                pd_family_shape_tensor(&f, at[k], form ? NULL : bond_w, form ? vol : NULL),
                &kother));
            if (k == 1)
                mixed = fmax(mixed,
                             sqrt(pd_m3_frob2(pd_m3_sub(
                                 pd_family_deformation_gradient(&f, at[k], bw, v, y, kother), A))));
        }
    printf("  |F - A| <= %.2e over both families and weightings; mismatched K at the corner: "
           "%.2e\n",
           worst, mixed);
    PD_CHECK(worst < 1e-12);
    PD_CHECK(mixed > 1e-3);
    pd_family_free(&f);
    pd_hash_grid_destroy(&grid);
}

/* A family that shares its reference positions (pd_family_share_rest) reads the X each bond
 * stored, bit for bit, before and after a renumbering that moves the positions with it. */
PD_TEST(shared_rest_gives_the_stored_references) {
    static pd_vec3 pos[N * N * N], ref[N * N * N];
    static pd_real vol[N * N * N], h[N * N * N];
    static int32_t body[N * N * N];
    static uint32_t perm[N * N * N], from_a[N * N * N * 40], from_b[N * N * N * 40];
    size_t n = lattice(pos, vol, h, body, 0.01);
    for (size_t i = 0; i < n; ++i) /* an uneven lattice, so that X differ in their last bits */
        pos[i] = pd_v3_madd(pos[i], 1e-3 * (double)(i % 7), pd_v3(1, 0.3, 0.7));
    pd_family a, b;
    pd_hash_grid grid = {0};
    PD_REQUIRE(pd_family_build(&a, &grid, pos, vol, h, body, n, 2.01) == PD_OK);
    PD_REQUIRE(pd_family_build(&b, &grid, pos, vol, h, body, n, 2.01) == PD_OK);
    PD_REQUIRE(a.bond_count <= N * N * N * 40);
    pd_family_share_rest(&b, pos);
    PD_CHECK(b.xi == NULL);
    int differ = 0;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = a.offsets[i]; k < a.offsets[i + 1]; ++k) {
            pd_vec3 x = a.xi[k], y = pd_family_xi(&b, i, k);
            differ += x.x != y.x || x.y != y.y || x.z != y.z;
        }
    for (size_t i = 0; i < n; ++i) /* a scrambled renumbering; the owner moves ref alike */
        perm[i] = (uint32_t)((i * 389) % n);
    for (size_t i = 0; i < n; ++i)
        ref[i] = pos[perm[i]];
    PD_REQUIRE(pd_family_permute(&a, perm, from_a) == PD_OK);
    PD_REQUIRE(pd_family_permute(&b, perm, from_b) == PD_OK);
    b.ref = ref;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = a.offsets[i]; k < a.offsets[i + 1]; ++k) {
            pd_vec3 x = a.xi[k], y = pd_family_xi(&b, i, k);
            differ += x.x != y.x || x.y != y.y || x.z != y.z;
        }
    printf("  %zu bonds: %d read another X than the one stored\n", a.bond_count, differ);
    PD_CHECK(differ == 0);
    pd_family_free(&a);
    pd_family_free(&b);
    pd_hash_grid_destroy(&grid);
}

/* pd_family_link_reverse's cursor walk gives each bond its opposite, also where the family is
 * not symmetric: four particles, rows 0: {1, 2, 3}, 1: {0, 2}, 2: {1} (no 2 -> 0: 0 -> 2 has
 * no opposite, and 1's and 3's cursors into 2's and 0's rows stall), 3: {0}. Every bond's link
 * against the binary search, and the opposites that exist against the rows by hand. */
PD_TEST(reverse_links_hold_in_an_asymmetric_family) {
    static const uint32_t offsets[] = {0, 3, 5, 6, 7}, j[] = {1, 2, 3, 0, 2, 1, 0};
    pd_family f = {0};
    PD_REQUIRE(pd_family_allocate(&f, 4, 7) == PD_OK);
    memcpy(f.offsets, offsets, sizeof offsets);
    memcpy(f.j, j, sizeof j);
    uint32_t cursor[4];
    pd_family_link_reverse(&f, cursor);
    int wrong = 0;
    for (uint32_t i = 0; i < 4; ++i)
        for (uint32_t k = f.offsets[i]; k < f.offsets[i + 1]; ++k)
            wrong += f.rev[k] != pd_family_find_bond(&f, f.j[k], i);
    static const uint32_t expect[] = {3, UINT32_MAX, 6, 0, 5, 4, 2};
    for (int k = 0; k < 7; ++k)
        wrong += f.rev[k] != expect[k];
    printf("  %d of 7 links wrong\n", wrong);
    PD_CHECK(wrong == 0);
    pd_family_free(&f);
}
