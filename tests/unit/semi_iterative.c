/* The Chebyshev semi-iterative weights (optim/semi_iterative.h, Wang 2015 Eq. 12-13) on a
 * model problem whose spectrum is known: Jacobi on A e = 0, A = tridiag(-1, 2 + eps, -1) of n
 * points (Dirichlet ends). Its iteration matrix B = (A's off-diagonal) / (2 + eps) has the
 * eigenvalues 2 cos(j pi / (n + 1)) / (2 + eps), j = 1..n, with the eigenvectors
 * sin(i j pi / (n + 1)); rho = the j = 1 value. Reference: Chebyshev's bound, the error after
 * k accelerated iterations is T_k(B / rho) / T_k(1 / rho) of the first, so exactly
 * 1 / T_k(1 / rho) of it along the slowest eigenvector and at most that for any start;
 * T_k(x) = cosh(k acosh x). */
#include <math.h>

#include "optim/semi_iterative.h"
#include "test.h"

#define N   50
#define EPS 0.01

/* k outer iterations from e: e_hat = B e, e <- omega (e_hat - e_prev) + e_prev. Returns
 * |e_k| / |e_0|. */
static double accelerate(double* e, int k, double rho, int plain) {
    double prev[N], hat[N], e0 = 0, ek = 0;
    for (int i = 0; i < N; ++i)
        prev[i] = e[i], e0 += e[i] * e[i];
    pd_semi_iterative w = pd_semi_iterative_start(rho);
    for (int it = 0; it < k; ++it) {
        double omega = plain ? 1 : pd_semi_iterative_next(&w);
        for (int i = 0; i < N; ++i)
            hat[i] = ((i > 0 ? e[i - 1] : 0) + (i < N - 1 ? e[i + 1] : 0)) / (2 + EPS);
        for (int i = 0; i < N; ++i) {
            double next = omega * (hat[i] - prev[i]) + prev[i];
            prev[i] = e[i], e[i] = next;
        }
    }
    for (int i = 0; i < N; ++i)
        ek += e[i] * e[i];
    return sqrt(ek / e0);
}

static double chebyshev_bound(int k, double rho) {
    return 1 / cosh(k * acosh(1 / rho));
}

/* The first weights by hand: omega_1 = 1, omega_2 = 2 / (2 - rho^2), omega_3 = 4 / (4 - rho^2
 * omega_2), and the limit 2 / (1 + sqrt(1 - rho^2)) (Golub & Varga) after many. */
PD_TEST(semi_iterative_weights_follow_the_recurrence) {
    double rho = 0.9;
    pd_semi_iterative w = pd_semi_iterative_start(rho);
    double o1 = pd_semi_iterative_next(&w), o2 = pd_semi_iterative_next(&w);
    double o3 = pd_semi_iterative_next(&w);
    for (int k = 0; k < 200; ++k)
        pd_semi_iterative_next(&w);
    printf("  rho 0.9: omega 1..3 = %.6f %.6f %.6f, after 203: %.9f\n", o1, o2, o3, w.omega);
    PD_CHECK_NEAR(o1, 1, 1e-15);
    PD_CHECK_NEAR(o2, 2 / (2 - 0.81), 1e-15);
    PD_CHECK_NEAR(o3, 4 / (4 - 0.81 * o2), 1e-15);
    PD_CHECK_NEAR(w.omega, 2 / (1 + sqrt(1 - 0.81)), 1e-12);
}

/* Along the slowest eigenvector the accelerated error is 1 / T_k(1 / rho) of the start (to
 * round-off); from a rough start it is at most that; plain Jacobi keeps rho^k. A wrong weight
 * (an index off by one, rho instead of rho^2) misses the first by far more than 1e-9. */
PD_TEST(semi_iterative_error_meets_the_chebyshev_bound) {
    double rho = 2 * cos(PD_PI / (N + 1)) / (2 + EPS), slow[N], rough[N], plainv[N];
    unsigned seed = 12345;
    for (int i = 0; i < N; ++i) {
        slow[i] = sin((i + 1) * PD_PI / (N + 1));
        seed = seed * 1103515245u + 12345u;
        rough[i] = plainv[i] = (double)(seed >> 8) / (double)(1u << 24) - 0.5;
    }
    const int ks[] = {5, 10, 30};
    for (int n = 0; n < 3; ++n) {
        int k = ks[n];
        double s[N], r[N], p[N];
        for (int i = 0; i < N; ++i)
            s[i] = slow[i], r[i] = rough[i], p[i] = plainv[i];
        double bound = chebyshev_bound(k, rho);
        double along = accelerate(s, k, rho, 0), any = accelerate(r, k, rho, 0);
        double plain = accelerate(p, k, rho, 1);
        printf("  rho %.6f, k %d: slowest mode %.6e (1/T_k(1/rho) %.6e), rough start %.4e, "
               "plain Jacobi %.4e (rho^k %.4e)\n",
               rho, k, along, bound, any, plain, pow(rho, k));
        PD_CHECK_REL(along, bound, 1e-9);
        PD_CHECK(any <= bound * (1 + 1e-9));
        PD_CHECK(plain <= pow(rho, k) * (1 + 1e-9));
    }
    double s[N];
    for (int i = 0; i < N; ++i)
        s[i] = slow[i];
    double along30 = accelerate(s, 30, rho, 0);
    PD_CHECK(along30 < 0.1 * pow(rho, 30)); /* what the acceleration buys at k = 30 */
}
