/* The sparse Cholesky solve over the moving points (linalg/sym_direct.h) on a chain's matrix
 * (m/h^2 + a spring Laplacian), against the Thomas algorithm (independent code): a factor
 * solves A z = b, and a numeric refactorisation with a changed diagonal (hyperelastic_pd adds
 * friction's tangential stiffness so) solves the new system as a fresh factor of it would. */
#include <math.h>

#include "linalg/sym_direct.h"
#include "test.h"

#define NP 30

typedef struct chain {
    uint32_t offsets[NP + 1], cols[2 * NP];
    pd_real weight[2 * NP], diag[NP];
} chain;

static pd_sym_csr chain_init(chain* m, pd_real k, const pd_real* extra) {
    uint32_t e = 0;
    for (int i = 0; i < NP; ++i) {
        m->offsets[i] = e;
        m->diag[i] = 1 + (extra ? extra[i] : 0);
        if (i > 0)
            m->cols[e] = (uint32_t)(i - 1), m->weight[e++] = k, m->diag[i] += k;
        if (i + 1 < NP)
            m->cols[e] = (uint32_t)(i + 1), m->weight[e++] = k, m->diag[i] += k;
    }
    m->offsets[NP] = e;
    return (pd_sym_csr){NP, m->offsets, m->cols, m->weight, m->diag, NULL, NULL};
}

/* Thomas algorithm for the tridiagonal (diag, -k), componentwise. */
static void thomas(const pd_real* diag, pd_real k, const pd_vec3* b, pd_vec3* z) {
    pd_real cp[NP];
    pd_vec3 dp[NP];
    for (int i = 0; i < NP; ++i) {
        pd_real denom = diag[i] + (i > 0 ? k * cp[i - 1] : 0);
        cp[i] = (i + 1 < NP ? -k : 0) / denom;
        dp[i] = pd_v3_scale(i > 0 ? pd_v3_madd(b[i], k, dp[i - 1]) : b[i], 1 / denom);
    }
    z[NP - 1] = dp[NP - 1];
    for (int i = NP - 2; i >= 0; --i)
        z[i] = pd_v3_madd(dp[i], -cp[i], z[i + 1]);
}

static double largest_difference(const pd_vec3* a, const pd_vec3* b) {
    double worst = 0;
    for (int i = 0; i < NP; ++i)
        worst = fmax(worst, pd_v3_len(pd_v3_sub(a[i], b[i])));
    return worst;
}

PD_TEST(refactor_with_a_new_diagonal_solves_the_new_system) {
    pd_real k = 50, extra[NP];
    pd_vec3 b[NP], z[NP], want[NP];
    for (int i = 0; i < NP; ++i) {
        b[i] = pd_v3(sin(0.3 * i), 1, i % 3 - 1.0);
        extra[i] = i % 4 == 0 ? 200.0 * i : 0; /* stiff spots, as sticking contacts */
    }
    chain m;
    pd_sym_csr a = chain_init(&m, k, NULL);
    pd_sym_direct d;
    PD_REQUIRE(pd_sym_direct_init(&d, NP, NP) == PD_OK);
    PD_REQUIRE(pd_sym_direct_factor(&d, &a, NULL) == PD_OK);
    PD_REQUIRE(pd_sym_direct_solve(&d, b, z) == PD_OK);
    thomas(m.diag, k, b, want);
    double plain = largest_difference(z, want);
    pd_sym_csr a2 = chain_init(&m, k, extra);
    PD_REQUIRE(pd_sym_direct_refactor(&d, &a2) == PD_OK);
    PD_REQUIRE(pd_sym_direct_solve(&d, b, z) == PD_OK);
    thomas(m.diag, k, b, want);
    double changed = largest_difference(z, want);
    pd_vec3 before[NP]; /* the old system's solution differs: the refactor took effect */
    chain m0;
    chain_init(&m0, k, NULL);
    thomas(m0.diag, k, b, before);
    printf("  factor vs Thomas %.3g; refactored vs Thomas of the new system %.3g; the two "
           "systems' solutions differ by %.3g\n",
           plain, changed, largest_difference(before, want));
    PD_CHECK_NEAR(plain, 0, 1e-12);
    PD_CHECK_NEAR(changed, 0, 1e-12);
    PD_CHECK(largest_difference(before, want) > 1e-3);
    pd_sym_direct_free(&d);
}

/* Without a factor there is nothing to refactor on: refused, not guessed. */
PD_TEST(refactor_needs_a_factor) {
    chain m;
    pd_sym_csr a = chain_init(&m, 1, NULL);
    pd_sym_direct d;
    PD_REQUIRE(pd_sym_direct_init(&d, NP, NP) == PD_OK);
    PD_CHECK(pd_sym_direct_refactor(&d, &a) == PD_ERR_INVALID_ARGUMENT);
    pd_sym_direct_free(&d);
}

/* The chain renumbered: new point i is old point perm[i] (CSR over the new numbering, each
 * row's neighbours sorted as a family's), with extra[] given per old point. */
typedef struct renumbered_chain {
    uint32_t offsets[NP + 1], cols[2 * NP];
    pd_real weight[2 * NP], diag[NP];
} renumbered_chain;

static pd_sym_csr renumbered_init(renumbered_chain* m, pd_real k, const uint32_t* perm,
                                  const uint32_t* inv, const pd_real* extra) {
    uint32_t e = 0;
    for (int i = 0; i < NP; ++i) {
        int o = (int)perm[i];
        uint32_t nb[2];
        int c = 0;
        if (o > 0)
            nb[c++] = inv[o - 1];
        if (o + 1 < NP)
            nb[c++] = inv[o + 1];
        if (c == 2 && nb[0] > nb[1]) {
            uint32_t t = nb[0];
            nb[0] = nb[1], nb[1] = t;
        }
        m->offsets[i] = e;
        m->diag[i] = 1 + extra[o] + c * k;
        for (int q = 0; q < c; ++q)
            m->cols[e] = nb[q], m->weight[e++] = k;
    }
    m->offsets[NP] = e;
    return (pd_sym_csr){NP, m->offsets, m->cols, m->weight, m->diag, NULL, NULL};
}

/* After the points are renumbered (a Morton reordering: pd_sym_direct_permute), a
 * refactorisation still solves the new system: new point i is old point 7 i mod 30, and the
 * solution follows it (Thomas on the old numbering). The measured failure before: CHOLMOD's
 * "linear solver failed" at the first refactorisation after the world's first reordering
 * (compressed columns built in the new point order on the old rows). */
PD_TEST(refactor_after_a_renumbering_solves_the_new_system) {
    pd_real k = 50, extra[NP], diag_old[NP];
    pd_vec3 b_old[NP], b_new[NP], z[NP], want_old[NP];
    uint32_t perm[NP], inv[NP];
    int32_t scratch[NP];
    for (int i = 0; i < NP; ++i) {
        perm[i] = (uint32_t)(7 * i % NP);
        inv[perm[i]] = (uint32_t)i;
        b_old[i] = pd_v3(cos(0.2 * i), i % 2, 0.5);
        extra[i] = i % 3 == 0 ? 300.0 : 0;
    }
    for (int i = 0; i < NP; ++i)
        b_new[i] = b_old[perm[i]];
    pd_real none[NP] = {0};
    renumbered_chain m;
    uint32_t identity[NP];
    for (int i = 0; i < NP; ++i)
        identity[i] = (uint32_t)i;
    pd_sym_csr a = renumbered_init(&m, k, identity, identity, none);
    pd_sym_direct d;
    PD_REQUIRE(pd_sym_direct_init(&d, NP, NP) == PD_OK);
    PD_REQUIRE(pd_sym_direct_factor(&d, &a, NULL) == PD_OK);
    pd_sym_direct_permute(&d, perm, scratch);
    pd_sym_csr a2 = renumbered_init(&m, k, perm, inv, extra);
    PD_REQUIRE(pd_sym_direct_refactor(&d, &a2) == PD_OK);
    PD_REQUIRE(pd_sym_direct_solve(&d, b_new, z) == PD_OK);
    for (int i = 0; i < NP; ++i)
        diag_old[i] = 1 + extra[i] + k * ((i > 0) + (i + 1 < NP));
    thomas(diag_old, k, b_old, want_old);
    double worst = 0;
    for (int i = 0; i < NP; ++i)
        worst = fmax(worst, pd_v3_len(pd_v3_sub(z[i], want_old[perm[i]])));
    printf("  refactored after the renumbering vs Thomas: %.3g\n", worst);
    PD_CHECK_NEAR(worst, 0, 1e-12);
    pd_sym_direct_free(&d);
}

/* CHOLMOD's common is started once per solver (cholmod_start was called for every factor):
 * fresh factors, refactorisations and resizes (mpm's grid, every step) all run on the one
 * start, and each factor solves its system. */
PD_TEST(a_solver_starts_cholmod_once) {
    pd_real k = 20;
    pd_vec3 b[NP], z[NP], want[NP];
    for (int i = 0; i < NP; ++i)
        b[i] = pd_v3(1, cos(0.4 * i), 0.1 * i);
    chain m;
    pd_sym_csr a = chain_init(&m, k, NULL);
    pd_sym_direct d;
    PD_REQUIRE(pd_sym_direct_init(&d, NP, NP) == PD_OK);
    double worst = 0;
    for (int round = 0; round < 3; ++round) {
        PD_REQUIRE(pd_sym_direct_factor(&d, &a, NULL) == PD_OK);
        PD_REQUIRE(pd_sym_direct_refactor(&d, &a) == PD_OK);
        PD_REQUIRE(pd_sym_direct_solve(&d, b, z) == PD_OK);
        thomas(m.diag, k, b, want);
        worst = fmax(worst, largest_difference(z, want));
        PD_REQUIRE(pd_sym_direct_resize(&d, NP, NP) == PD_OK);
    }
    printf("  %zu start(s) of CHOLMOD for 3 factors, 3 refactorisations and 3 resizes; worst "
           "solve vs Thomas %.3g\n",
           d.chol.starts, worst);
    PD_CHECK_NEAR((double)d.chol.starts, 1, 0);
    PD_CHECK_NEAR(worst, 0, 1e-12);
    pd_sym_direct_free(&d);
}
