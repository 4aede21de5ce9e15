/* Chebyshev-Jacobi sweeps (linalg/chebyshev.h) on a chain's matrix (m/h^2 + a spring
 * Laplacian): enough sweeps reach A^-1 b (checked against the Thomas algorithm, independent
 * code), and the per-point constraints hold exactly in the result: fixed points stay at 0, a
 * blocked point moves only in its plane, a point on a line only along it; a tangential
 * stiffness on the diagonal blocks gives the solve with it. */
#include <string.h>

#include "linalg/chebyshev.h"
#include "test.h"

#define NP 40

typedef struct chain_matrix {
    uint32_t offsets[NP + 1], cols[2 * NP];
    pd_real weight[2 * NP], diag[NP];
    pd_sym_csr a;
} chain_matrix;

static void chain_matrix_init(chain_matrix* m, pd_real k) {
    uint32_t e = 0;
    for (int i = 0; i < NP; ++i) {
        m->offsets[i] = e;
        m->diag[i] = 1;
        if (i > 0)
            m->cols[e] = (uint32_t)(i - 1), m->weight[e++] = k, m->diag[i] += k;
        if (i + 1 < NP)
            m->cols[e] = (uint32_t)(i + 1), m->weight[e++] = k, m->diag[i] += k;
    }
    m->offsets[NP] = e;
    m->a = (pd_sym_csr){NP, m->offsets, m->cols, m->weight, m->diag, NULL, NULL};
}

/* Thomas algorithm on the same tridiagonal matrix, componentwise. */
static void thomas(const chain_matrix* m, pd_real k, const pd_vec3* b, pd_vec3* z) {
    pd_real cp[NP];
    pd_vec3 dp[NP];
    for (int i = 0; i < NP; ++i) {
        pd_real lo = i > 0 ? -k : 0, denom = m->diag[i] - (i > 0 ? lo * cp[i - 1] : 0);
        cp[i] = (i + 1 < NP ? -k : 0) / denom;
        dp[i] = pd_v3_scale(i > 0 ? pd_v3_madd(b[i], -lo, dp[i - 1]) : b[i], 1 / denom);
    }
    z[NP - 1] = dp[NP - 1];
    for (int i = NP - 2; i >= 0; --i)
        z[i] = pd_v3_madd(dp[i], -cp[i], z[i + 1]);
}

PD_TEST(sweeps_reach_the_solve_and_keep_constraints) {
    static chain_matrix m;
    chain_matrix_init(&m, 3);
    pd_vec3 b[NP], z[NP], ref[NP], sa[NP], sb[NP], blocked[NP], line[NP];
    uint8_t fixed[NP] = {0};
    for (int i = 0; i < NP; ++i)
        b[i] = pd_v3(sin(0.3 * i), cos(0.2 * i), 0.5);
    thomas(&m, 3, b, ref);
    pd_chebyshev_def def = {.sweeps = 200, .scratch_a = sa, .scratch_b = sb};
    def.rho = pd_jacobi_bound(&m.a, NULL);
    pd_chebyshev_jacobi(&m.a, &def, b, z);
    pd_real err = 0;
    for (int i = 0; i < NP; ++i)
        err = fmax(err, pd_v3_len(pd_v3_sub(z[i], ref[i])));
    printf("  rho %.4f; 200 sweeps from zero: largest distance to A^-1 b %.3g\n", def.rho, err);
    PD_CHECK_NEAR(err, 0, 1e-10);
    memset(blocked, 0, sizeof blocked);
    memset(line, 0, sizeof line);
    fixed[3] = 1;
    blocked[10] = pd_v3(0, 1, 0);
    line[20] = pd_v3(0.6, 0.8, 0);
    blocked[30] = line[30] = pd_v3(0, 0, 1); /* both along one normal: does not move */
    def.sweeps = 40;
    def.fixed = fixed, def.blocked = blocked, def.line = line;
    pd_chebyshev_jacobi(&m.a, &def, b, z);
    pd_vec3 off_line = pd_v3_madd(z[20], -pd_v3_dot(z[20], line[20]), line[20]);
    printf("  fixed %.3g, blocked normal part %.3g, off the line %.3g (along it %.3g), both %.3g\n",
           pd_v3_len(z[3]), fabs(z[10].y), pd_v3_len(off_line), pd_v3_dot(z[20], line[20]),
           pd_v3_len(z[30]));
    PD_CHECK(pd_v3_len(z[3]) == 0);
    PD_CHECK_NEAR(z[10].y, 0, 1e-15);
    PD_CHECK(fabs(z[10].x) > 1e-3); /* it does move in its plane */
    PD_CHECK_NEAR(pd_v3_len(off_line), 0, 1e-15);
    PD_CHECK(fabs(pd_v3_dot(z[20], line[20])) > 1e-3);
    PD_CHECK_NEAR(pd_v3_len(z[30]), 0, 1e-15);
    /* the same sweeps told which points have constraints (active) read them there only, and
     * give the same bits */
    pd_vec3 again[NP];
    uint8_t active[NP] = {0};
    active[10] = active[20] = active[30] = 1;
    def.active = active;
    pd_chebyshev_jacobi(&m.a, &def, b, again);
    PD_CHECK(memcmp(again, z, sizeof z) == 0);
    active[10] = 0; /* a constrained point left out is not blocked: the flag is read */
    pd_chebyshev_jacobi(&m.a, &def, b, again);
    printf("  point 10 left out of active: normal part %.3g\n", fabs(again[10].y));
    PD_CHECK(fabs(again[10].y) > 1e-3);
}

/* A tangential stiffness k (I - n n^T) on every point's diagonal block (n = z here): the sweeps,
 * with rho the bound of A alone, reach (A + k) z = b in x and y and A z = b along z. */
PD_TEST(tangent_stiffness_joins_the_diagonal_blocks) {
    static chain_matrix m, mk;
    const pd_real k = 2.5;
    chain_matrix_init(&m, 3);
    chain_matrix_init(&mk, 3);
    for (int i = 0; i < NP; ++i)
        mk.diag[i] += k;
    pd_vec3 b[NP], z[NP], ref[NP], refk[NP], sa[NP], sb[NP], n[NP];
    pd_real kt[NP];
    for (int i = 0; i < NP; ++i)
        b[i] = pd_v3(sin(0.3 * i), cos(0.2 * i), 0.5), n[i] = pd_v3(0, 0, 1), kt[i] = k;
    thomas(&m, 3, b, ref);
    thomas(&mk, 3, b, refk);
    pd_chebyshev_def def = {.sweeps = 200, .scratch_a = sa, .scratch_b = sb};
    def.rho = pd_jacobi_bound(&m.a, NULL);
    def.tangent_k = kt, def.tangent_n = n;
    pd_chebyshev_jacobi(&m.a, &def, b, z);
    pd_real err_t = 0, err_n = 0;
    for (int i = 0; i < NP; ++i) {
        err_t = fmax(err_t, fabs(z[i].x - refk[i].x) + fabs(z[i].y - refk[i].y));
        err_n = fmax(err_n, fabs(z[i].z - ref[i].z));
    }
    printf("  largest distance to (A + k)^-1 b in the plane %.3g, to A^-1 b along n %.3g\n", err_t,
           err_n);
    PD_CHECK_NEAR(err_t, 0, 1e-10);
    PD_CHECK_NEAR(err_n, 0, 1e-10);
}

/* Weights in single precision (weight32): the sweeps solve the matrix of the rounded weights,
 * whose diagonal the caller sums from them, and the Jacobi bound reads them too. */
PD_TEST(single_precision_weights_solve_the_rounded_matrix) {
    static chain_matrix m, mr;
    const pd_real k = 0.1, kr = (float)0.1; /* 0.1 is not a float: kr - k = 1.5e-9 */
    chain_matrix_init(&m, k);
    chain_matrix_init(&mr, kr);
    float w32[2 * NP];
    for (int e = 0; e < (int)m.offsets[NP]; ++e)
        w32[e] = (float)m.weight[e];
    pd_sym_csr a32 = {NP, m.offsets, m.cols, NULL, mr.diag, NULL, w32};
    pd_vec3 b[NP], z[NP], ref[NP], refr[NP], sa[NP], sb[NP];
    for (int i = 0; i < NP; ++i)
        b[i] = pd_v3(sin(0.3 * i), cos(0.2 * i), 0.5);
    thomas(&m, k, b, ref);
    thomas(&mr, kr, b, refr);
    pd_chebyshev_def def = {.sweeps = 200, .scratch_a = sa, .scratch_b = sb};
    def.rho = pd_jacobi_bound(&a32, NULL);
    pd_chebyshev_jacobi(&a32, &def, b, z);
    pd_real err = 0, apart = 0;
    for (int i = 0; i < NP; ++i) {
        err = fmax(err, pd_v3_len(pd_v3_sub(z[i], refr[i])));
        apart = fmax(apart, pd_v3_len(pd_v3_sub(refr[i], ref[i])));
    }
    printf("  rho %.9f (double weights %.9f); to the rounded matrix's solve %.3g (the two solves "
           "%.3g apart)\n",
           def.rho, pd_jacobi_bound(&m.a, NULL), err, apart);
    PD_CHECK(apart > 1e-10);
    PD_CHECK_NEAR(err, 0, 1e-13);
    PD_CHECK_NEAR(def.rho, pd_jacobi_bound(&mr.a, NULL), 1e-15);
}
