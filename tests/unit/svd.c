/* Unit tests of src/math/svd3.c: SVD on 1e5 random matrices and on degenerate sets (zero,
 * rank 1 and 2, repeated and near-singular spectra, inverted, huge and tiny scales), polar
 * decomposition, symmetric eigen-decomposition, inverse and pseudo-inverse of a planar
 * covariance. Every check prints the largest error measured over its set. */
#include "test.h"

#include "math/svd3.h"
#include "random_matrices.h"

#include <stdint.h>

static pd_vec3 rand_vec(rng* r) {
    return pd_v3(rng_sym(r), rng_sym(r), rng_sym(r));
}

static pd_mat3 rand_sym(rng* r) {
    pd_mat3 a = rand_mat(r);
    return pd_m3_scale(pd_m3_add(a, pd_m3_transpose(a)), 0.5);
}

/* ||M^T M - I||_F */
static double orth_error(pd_mat3 m) {
    return frob(pd_m3_sub(pd_m3_mul(pd_m3_transpose(m), m), pd_m3_identity()));
}

/* R1 diag(d) R2 */
static pd_mat3 with_spectrum(rng* r, double d0, double d1, double d2) {
    return pd_m3_mul(pd_m3_mul(rand_rot(r), pd_m3_diag(d0, d1, d2)), rand_rot(r));
}

/* ---- SVD checks accumulated over a set ---- */

typedef struct svd_stats {
    int count;
    double recon; /* max ||U S V^T - A||_F / ||A||_F (absolute when A = 0) */
    double orth;  /* max of ||U^T U - I||, ||V^T V - I|| */
    double det;   /* max of |det U - 1|, |det V - 1| */
    double value; /* max |s_i - expected_i| / scale, when expected values are given */
    int order_bad;
    int sign_bad;
    int sign_checked;
} svd_stats;

/* det A is "clearly signed" when it is well above its rounding error. */
static int det_clear(pd_mat3 a) {
    double n = frob(a);
    return fabs(pd_m3_det(a)) > 1e-9 * n * n * n;
}

static void svd_check(svd_stats* st, pd_mat3 a, const double* expect) {
    pd_mat3 u, v;
    pd_vec3 s;
    pd_svd3(a, &u, &s, &v);
    pd_mat3 us = u;
    for (int i = 0; i < 3; ++i) {
        us.m[i][0] *= s.x;
        us.m[i][1] *= s.y;
        us.m[i][2] *= s.z;
    }
    double na = frob(a);
    double err = frob(pd_m3_sub(pd_m3_mul(us, pd_m3_transpose(v)), a));
    st->recon = fmax(st->recon, na > 0 ? err / na : err);
    st->orth = fmax(st->orth, fmax(orth_error(u), orth_error(v)));
    st->det = fmax(st->det, fmax(fabs(pd_m3_det(u) - 1), fabs(pd_m3_det(v) - 1)));
    if (!(s.x >= s.y && s.y >= fabs(s.z)))
        st->order_bad++;
    if (det_clear(a)) {
        st->sign_checked++;
        if ((s.z < 0) != (pd_m3_det(a) < 0))
            st->sign_bad++;
    }
    if (expect) {
        double scale = fmax(fabs(expect[0]), 1e-300);
        st->value = fmax(st->value, fabs(s.x - expect[0]) / scale);
        st->value = fmax(st->value, fabs(s.y - expect[1]) / scale);
        st->value = fmax(st->value, fabs(s.z - expect[2]) / scale);
    }
    st->count++;
}

static void svd_report(const svd_stats* st, const char* set, double recon_tol) {
    printf("  set %-28s n=%d recon=%.3g orth=%.3g det=%.3g value=%.3g order_bad=%d "
           "sign_bad=%d/%d\n",
           set, st->count, st->recon, st->orth, st->det, st->value, st->order_bad, st->sign_bad,
           st->sign_checked);
    PD_CHECK_NEAR(st->recon, 0, recon_tol);
    PD_CHECK_NEAR(st->orth, 0, 1e-10);
    PD_CHECK_NEAR(st->det, 0, 1e-10);
    PD_CHECK_NEAR(st->order_bad, 0, 0);
    PD_CHECK_NEAR(st->sign_bad, 0, 0);
}

PD_TEST(svd_random_1e5) {
    rng r = {12345};
    svd_stats st = {0};
    double sum_sq = 0, det_err = 0, vs_eigen = 0;
    int negative = 0;
    for (int n = 0; n < 100000; ++n) {
        pd_mat3 a = rand_mat(&r);
        svd_check(&st, a, NULL);
        pd_mat3 u, v;
        pd_vec3 s;
        pd_svd3(a, &u, &s, &v);
        /* Cross-checks against invariants and an independent route (eigenvalues of A^T A). */
        double na2 = pd_m3_frob2(a);
        sum_sq = fmax(sum_sq, fabs(s.x * s.x + s.y * s.y + s.z * s.z - na2) / na2);
        det_err = fmax(det_err, fabs(s.x * s.y * s.z - pd_m3_det(a)) / (na2 * sqrt(na2)));
        pd_vec3 l;
        pd_mat3 q;
        pd_eigen_sym3(pd_m3_mul(pd_m3_transpose(a), a), &l, &q);
        vs_eigen = fmax(vs_eigen, fabs(s.x * s.x - l.z) / na2);
        vs_eigen = fmax(vs_eigen, fabs(s.y * s.y - l.y) / na2);
        vs_eigen = fmax(vs_eigen, fabs(s.z * s.z - l.x) / na2);
        negative += pd_m3_det(a) < 0;
    }
    svd_report(&st, "random [-1,1]", 1e-10);
    PD_CHECK_NEAR(sum_sq, 0, 1e-12);
    PD_CHECK_NEAR(det_err, 0, 1e-12);
    PD_CHECK_NEAR(vs_eigen, 0, 1e-12);
    /* About half of the set must be inverted, or the sign rule was hardly exercised. */
    PD_CHECK_NEAR(negative, 50000, 2000);
    PD_CHECK(st.sign_checked > 99000);
}

PD_TEST(svd_zero) {
    svd_stats st = {0};
    double zero[3] = {0, 0, 0};
    svd_check(&st, pd_m3_zero(), zero);
    svd_report(&st, "zero", 0);
    PD_CHECK_NEAR(st.value, 0, 0);
}

PD_TEST(svd_rank1) {
    rng r = {777};
    svd_stats st = {0};
    for (int n = 0; n < 10000; ++n) {
        pd_vec3 a = rand_vec(&r), b = rand_vec(&r);
        double e[3] = {pd_v3_len(a) * pd_v3_len(b), 0, 0};
        svd_check(&st, pd_m3_outer(a, b), e);
    }
    /* Axis-aligned and single-entry cases: the zero columns need a completion. */
    double e1[3] = {2, 0, 0};
    pd_mat3 single = pd_m3_zero();
    single.m[1][2] = -2;
    svd_check(&st, single, e1);
    svd_check(&st, pd_m3_outer(pd_v3(0, 0, 2), pd_v3(1, 0, 0)), e1);
    svd_report(&st, "rank-1 outer products", 1e-13);
    PD_CHECK_NEAR(st.value, 0, 1e-13);
}

PD_TEST(svd_rank2) {
    rng r = {4242};
    svd_stats st = {0};
    double max_s2 = 0;
    for (int n = 0; n < 10000; ++n) {
        pd_mat3 a = pd_m3_outer(rand_vec(&r), rand_vec(&r));
        pd_m3_add_outer(&a, 1, rand_vec(&r), rand_vec(&r));
        svd_check(&st, a, NULL);
        pd_mat3 u, v;
        pd_vec3 s;
        pd_svd3(a, &u, &s, &v);
        max_s2 = fmax(max_s2, fabs(s.z) / s.x);
    }
    /* Known spectra: planar (zero third column) and a rotated diag(3, 1, 0). */
    pd_mat3 planar = {{{1, 2, 0}, {3, 4, 0}, {5, 6, 0}}};
    svd_check(&st, planar, NULL);
    for (int n = 0; n < 1000; ++n) {
        double e[3] = {3, 1, 0};
        svd_check(&st, with_spectrum(&r, 3, 1, 0), e);
    }
    svd_report(&st, "rank-2", 1e-13);
    PD_CHECK_NEAR(st.value, 0, 1e-13);
    PD_CHECK_NEAR(max_s2, 0, 1e-14);
}

PD_TEST(svd_repeated) {
    rng r = {99};
    svd_stats st = {0};
    for (int n = 0; n < 5000; ++n) {
        double one[3] = {1, 1, 1};
        svd_check(&st, rand_rot(&r), one);
        double k = 0.1 + 5 * fabs(rng_sym(&r));
        double kk[3] = {k, k, k};
        svd_check(&st, pd_m3_scale(rand_rot(&r), k), kk);
        double e211[3] = {2, 1, 1}, e221[3] = {2, 2, 1};
        svd_check(&st, with_spectrum(&r, 1, 1, 2), e211);
        svd_check(&st, with_spectrum(&r, 2, 1, 2), e221);
    }
    double e211[3] = {2, 1, 1}, e111[3] = {1, 1, 1}, e002[3] = {2, 0, 0};
    svd_check(&st, pd_m3_diag(1, 1, 2), e211);
    svd_check(&st, pd_m3_diag(2, 1, 1), e211);
    svd_check(&st, pd_m3_identity(), e111);
    pd_mat3 two_zero_equal = pd_m3_diag(0, 0, 2); /* repeated zero singular value */
    svd_check(&st, two_zero_equal, e002);
    svd_report(&st, "repeated singular values", 1e-13);
    PD_CHECK_NEAR(st.value, 0, 1e-13);
}

PD_TEST(svd_near_singular) {
    rng r = {2718};
    svd_stats tiny = {0}, nearly = {0}, graded = {0};
    for (int n = 0; n < 10000; ++n)
        svd_check(&tiny, pd_m3_scale(rand_mat(&r), 1e-12), NULL);
    for (int n = 0; n < 10000; ++n) {
        pd_mat3 a = pd_m3_outer(rand_vec(&r), rand_vec(&r));
        pd_m3_add_outer(&a, 1, rand_vec(&r), rand_vec(&r));
        svd_check(&nearly, pd_m3_add(a, pd_m3_scale(rand_mat(&r), 1e-12)), NULL);
    }
    /* Graded spectrum: the small values are accurate to rounding of the entries (~1e-16). */
    for (int n = 0; n < 10000; ++n) {
        double e[3] = {1, 1e-12, -1e-13};
        svd_check(&graded, with_spectrum(&r, 1, 1e-12, -1e-13), e);
    }
    svd_report(&tiny, "random * 1e-12", 1e-12);
    svd_report(&nearly, "rank-2 + 1e-12 noise", 1e-12);
    svd_report(&graded, "spectrum (1, 1e-12, -1e-13)", 1e-12);
    PD_CHECK_NEAR(graded.value, 0, 1e-14);
}

/* Householder reflection I - 2 n n^T for a random unit n. */
static pd_mat3 rand_reflection(rng* r) {
    pd_vec3 n = rand_vec(r);
    n = pd_v3_scale(n, 1.0 / pd_v3_len(n));
    pd_mat3 h = pd_m3_identity();
    pd_m3_add_outer(&h, -2, n, n);
    return h;
}

PD_TEST(svd_inverted) {
    rng r = {31415};
    svd_stats st = {0};
    int negative_s2 = 0, total = 0;
    for (int n = 0; n < 10000; ++n) {
        pd_mat3 set[3];
        set[0] = rand_reflection(&r);
        set[1] = pd_m3_mul(rand_rot(&r), pd_m3_diag(1, 1, -1));
        set[2] = rand_mat(&r);
        if (pd_m3_det(set[2]) > 0)
            for (int j = 0; j < 3; ++j)
                set[2].m[0][j] = -set[2].m[0][j];
        double e[3] = {1, 1, -1};
        for (int k = 0; k < 3; ++k) {
            svd_check(&st, set[k], k < 2 ? e : NULL);
            pd_mat3 u, v;
            pd_vec3 s;
            pd_svd3(set[k], &u, &s, &v);
            negative_s2 += s.z < 0;
            total++;
        }
    }
    svd_check(&st, pd_m3_scale(pd_m3_identity(), -1), (double[3]){1, 1, -1});
    svd_check(&st, pd_m3_diag(-3, 1, 2), (double[3]){3, 2, -1});
    svd_report(&st, "inverted (det < 0)", 1e-13);
    PD_CHECK_NEAR(st.value, 0, 1e-13);
    PD_CHECK_NEAR(negative_s2, total, 0);
}

PD_TEST(svd_scales) {
    rng r = {1618};
    svd_stats huge = {0}, small = {0}, mixed = {0};
    for (int n = 0; n < 10000; ++n) {
        svd_check(&huge, pd_m3_scale(rand_mat(&r), 1e8), NULL);
        svd_check(&small, pd_m3_scale(rand_mat(&r), 1e-8), NULL);
        /* Rows of very different size (a strongly anisotropic deformation). */
        svd_check(&mixed, pd_m3_mul(pd_m3_diag(1e8, 1, 1e-8), rand_mat(&r)), NULL);
    }
    svd_report(&huge, "random * 1e8", 1e-13);
    svd_report(&small, "random * 1e-8", 1e-13);
    svd_report(&mixed, "diag(1e8,1,1e-8) * random", 1e-13);
}

PD_TEST(svd_started_near_its_v) {
    /* pd_svd3_near (the ADMM's particle step: Z's rotations from the last iteration's V): from
     * a nearby matrix's V and from any rotation, the same singular values as pd_svd3 and A back. */
    rng r = {2718};
    double worst_s = 0, worst_recon = 0, worst_orth = 0;
    for (int n = 0; n < 10000; ++n) {
        pd_mat3 a = rand_mat(&r), near = pd_m3_add(a, pd_m3_scale(rand_mat(&r), 1e-3)), u, v, un,
                vn, start;
        pd_vec3 s, sn, sk;
        pd_svd3(near, &un, &sn, &vn);
        pd_svd3(a, &u, &s, &v);
        for (int pass = 0; pass < 2; ++pass) {
            start = pass == 0 ? vn : rand_rot(&r);
            pd_svd3_near(a, start, &u, &sk, &v);
            pd_mat3 back =
                pd_m3_mul(pd_m3_mul(u, pd_m3_diag(sk.x, sk.y, sk.z)), pd_m3_transpose(v));
            worst_recon = fmax(worst_recon, frob(pd_m3_sub(back, a)) / frob(a));
            worst_s = fmax(worst_s,
                           fmax(fabs(sk.x - s.x), fmax(fabs(sk.y - s.y), fabs(sk.z - s.z))) / s.x);
            worst_orth = fmax(worst_orth, fmax(orth_error(u), orth_error(v)));
            PD_CHECK(pd_m3_det(u) > 0 && pd_m3_det(v) > 0);
        }
    }
    printf("  started near: |s - pd_svd3's s| / s0 %.2e, |U S V^T - A| / |A| %.2e, orthogonality "
           "%.2e\n",
           worst_s, worst_recon, worst_orth);
    PD_CHECK(worst_s < 1e-13);
    PD_CHECK(worst_recon < 1e-13);
    PD_CHECK(worst_orth < 1e-13);
}

PD_TEST(polar_decomposition) {
    rng r = {55};
    double recon = 0, orth = 0, det = 0, sym = 0, recover = 0;
    int psd_bad = 0, indefinite_bad = 0;
    for (int n = 0; n < 20000; ++n) {
        pd_mat3 a = rand_mat(&r);
        pd_mat3 rr, s;
        pd_polar3(a, &rr, &s);
        recon = fmax(recon, frob(pd_m3_sub(pd_m3_mul(rr, s), a)) / frob(a));
        orth = fmax(orth, orth_error(rr));
        det = fmax(det, fabs(pd_m3_det(rr) - 1));
        sym = fmax(sym, frob(pd_m3_sub(s, pd_m3_transpose(s))));
        pd_vec3 l;
        pd_mat3 q;
        pd_eigen_sym3(s, &l, &q);
        double tol = 1e-12 * frob(a);
        if (pd_m3_det(a) > 0 && l.x < -tol)
            psd_bad++; /* S must be positive semi-definite */
        if (pd_m3_det(a) < 0 && det_clear(a) && !(l.x < 0 && l.y > 0))
            indefinite_bad++; /* exactly one negative eigenvalue */
        /* A = R0 S0 with S0 SPD: the rotation must be recovered. */
        pd_mat3 r0 = rand_rot(&r);
        pd_mat3 q0 = rand_rot(&r);
        pd_mat3 s0 = pd_m3_mul(pd_m3_mul(q0, pd_m3_diag(0.5, 1.5, 3)), pd_m3_transpose(q0));
        pd_polar3(pd_m3_mul(r0, s0), &rr, &s);
        recover = fmax(recover, frob(pd_m3_sub(rr, r0)) + frob(pd_m3_sub(s, s0)));
    }
    printf("  polar: recon=%.3g orth=%.3g det=%.3g sym=%.3g recover=%.3g\n", recon, orth, det, sym,
           recover);
    PD_CHECK_NEAR(recon, 0, 1e-10);
    PD_CHECK_NEAR(orth, 0, 1e-10);
    PD_CHECK_NEAR(det, 0, 1e-10);
    PD_CHECK_NEAR(sym, 0, 1e-15);
    PD_CHECK_NEAR(recover, 0, 1e-12);
    PD_CHECK_NEAR(psd_bad, 0, 0);
    PD_CHECK_NEAR(indefinite_bad, 0, 0);
}

typedef struct eig_stats {
    int count;
    double recon, orth, det, value;
    int order_bad;
} eig_stats;

static void eig_check(eig_stats* st, pd_mat3 a, const double* expect) {
    pd_vec3 l;
    pd_mat3 q;
    pd_eigen_sym3(a, &l, &q);
    pd_mat3 b = pd_m3_mul(pd_m3_mul(q, pd_m3_diag(l.x, l.y, l.z)), pd_m3_transpose(q));
    double na = frob(a);
    double err = frob(pd_m3_sub(b, a));
    st->recon = fmax(st->recon, na > 0 ? err / na : err);
    st->orth = fmax(st->orth, orth_error(q));
    st->det = fmax(st->det, fabs(pd_m3_det(q) - 1));
    if (!(l.x <= l.y && l.y <= l.z))
        st->order_bad++;
    if (expect) {
        double scale = fmax(fmax(fabs(expect[0]), fabs(expect[2])), 1e-300);
        st->value = fmax(st->value, fabs(l.x - expect[0]) / scale);
        st->value = fmax(st->value, fabs(l.y - expect[1]) / scale);
        st->value = fmax(st->value, fabs(l.z - expect[2]) / scale);
    }
    st->count++;
}

static void eig_report(const eig_stats* st, const char* set) {
    printf("  set %-24s n=%d recon=%.3g orth=%.3g det=%.3g value=%.3g order_bad=%d\n", set,
           st->count, st->recon, st->orth, st->det, st->value, st->order_bad);
    PD_CHECK_NEAR(st->recon, 0, 1e-12);
    PD_CHECK_NEAR(st->orth, 0, 1e-12);
    PD_CHECK_NEAR(st->det, 0, 1e-12);
    PD_CHECK_NEAR(st->value, 0, 1e-13);
    PD_CHECK_NEAR(st->order_bad, 0, 0);
}

/* Q diag(d) Q^T for a random rotation Q. */
static pd_mat3 sym_with_spectrum(rng* r, double d0, double d1, double d2) {
    pd_mat3 q = rand_rot(r);
    return pd_m3_mul(pd_m3_mul(q, pd_m3_diag(d0, d1, d2)), pd_m3_transpose(q));
}

PD_TEST(eigen_sym3_random) {
    rng r = {8080};
    eig_stats st = {0}, known = {0};
    for (int n = 0; n < 100000; ++n)
        eig_check(&st, rand_sym(&r), NULL);
    for (int n = 0; n < 10000; ++n) {
        double e[3] = {-2, 0.5, 3};
        eig_check(&known, sym_with_spectrum(&r, 3, -2, 0.5), e);
    }
    eig_report(&st, "random symmetric");
    eig_report(&known, "spectrum (-2, 0.5, 3)");
}

PD_TEST(eigen_sym3_repeated) {
    rng r = {6};
    eig_stats st = {0};
    for (int n = 0; n < 5000; ++n) {
        double e113[3] = {1, 1, 3}, e133[3] = {1, 3, 3}, e222[3] = {-2, -2, -2};
        eig_check(&st, sym_with_spectrum(&r, 1, 3, 1), e113);
        eig_check(&st, sym_with_spectrum(&r, 3, 1, 3), e133);
        eig_check(&st, sym_with_spectrum(&r, -2, -2, -2), e222);
        pd_vec3 v = rand_vec(&r);
        double e00[3] = {0, 0, pd_v3_len2(v)};
        eig_check(&st, pd_m3_outer(v, v), e00);
    }
    double zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    eig_check(&st, pd_m3_zero(), zero);
    eig_check(&st, pd_m3_identity(), one);
    eig_report(&st, "repeated eigenvalues");
}

PD_TEST(inverse_general) {
    rng r = {1001};
    double err = 0;
    for (int n = 0; n < 10000; ++n) {
        double scale = n % 3 == 0 ? 1e8 : (n % 3 == 1 ? 1e-8 : 1);
        pd_mat3 a = pd_m3_scale(
            with_spectrum(&r, 0.5 + 1.5 * fabs(rng_sym(&r)), 0.5 + 1.5 * fabs(rng_sym(&r)),
                          (rng_sym(&r) < 0 ? -1 : 1) * (0.5 + 1.5 * fabs(rng_sym(&r)))),
            scale);
        pd_mat3 inv;
        PD_REQUIRE(pd_m3_inverse(a, &inv));
        err = fmax(err, frob(pd_m3_sub(pd_m3_mul(a, inv), pd_m3_identity())));
        err = fmax(err, frob(pd_m3_sub(pd_m3_mul(inv, a), pd_m3_identity())));
    }
    printf("  inverse: max ||A A^-1 - I|| = %.3g over well-conditioned A at scales 1e-8..1e8\n",
           err);
    PD_CHECK_NEAR(err, 0, 1e-13);
    /* Singular input: refused and the output left untouched. */
    pd_mat3 sentinel = pd_m3_diag(7, 7, 7), out = sentinel;
    PD_CHECK(!pd_m3_inverse(pd_m3_zero(), &out));
    pd_mat3 planar = {{{1, 2, 0}, {3, 4, 0}, {5, 6, 0}}};
    PD_CHECK(!pd_m3_inverse(planar, &out));
    PD_CHECK(!pd_m3_inverse(pd_m3_outer(pd_v3(1, 2, 3), pd_v3(-1, 0, 2)), &out));
    PD_CHECK_NEAR(frob(pd_m3_sub(out, sentinel)), 0, 0);
}

/* sum of x x^T over points x = Q (a, b, c * t) for random a, b, t: planar when c = 0. */
static pd_mat3 covariance(rng* r, pd_mat3 q, double c, int count) {
    pd_mat3 k = pd_m3_zero();
    for (int i = 0; i < count; ++i) {
        pd_vec3 x = pd_m3_mulv(q, pd_v3(rng_sym(r), rng_sym(r), c * rng_sym(r)));
        pd_m3_add_outer(&k, 1, x, x);
    }
    return k;
}

PD_TEST(pinv_planar_covariance) {
    rng r = {2024};
    double penrose = 0, normal = 0, in_plane = 0, full_vs_inv = 0, sym = 0, noisy_rank = 0;
    int refused = 0;
    for (int n = 0; n < 2000; ++n) {
        pd_mat3 q = rand_rot(&r);
        pd_vec3 nrm = pd_v3(q.m[0][2], q.m[1][2], q.m[2][2]); /* plane normal */
        pd_mat3 k = covariance(&r, q, 0, 30);
        pd_mat3 out = pd_m3_identity();
        refused += !pd_m3_inverse(k, &out);
        pd_mat3 p = pd_m3_pinv_sym(k, 1e-8);
        double nk = frob(k), np = frob(p);
        /* Moore-Penrose conditions: K P K = K, P K P = P, K P symmetric. */
        penrose = fmax(penrose, frob(pd_m3_sub(pd_m3_mul(pd_m3_mul(k, p), k), k)) / nk);
        penrose = fmax(penrose, frob(pd_m3_sub(pd_m3_mul(pd_m3_mul(p, k), p), p)) / np);
        pd_mat3 kp = pd_m3_mul(k, p);
        penrose = fmax(penrose, frob(pd_m3_sub(kp, pd_m3_transpose(kp))));
        sym = fmax(sym, frob(pd_m3_sub(p, pd_m3_transpose(p))));
        normal = fmax(normal, pd_v3_len(pd_m3_mulv(p, nrm)) / np);
        /* K P is the projector onto the plane: in-plane vectors come back unchanged. */
        pd_vec3 w = pd_m3_mulv(q, pd_v3(rng_sym(&r), rng_sym(&r), 0));
        in_plane = fmax(in_plane, pd_v3_len(pd_v3_sub(pd_m3_mulv(kp, w), w)));
        /* Normal noise far below rel_tol is dropped too; a full-rank cloud inverts. */
        /* ||P K||_F^2 = rank, since P K is an orthogonal projector. */
        pd_mat3 noisy = covariance(&r, q, 1e-7, 30);
        double pk = frob(pd_m3_mul(pd_m3_pinv_sym(noisy, 1e-8), noisy));
        noisy_rank = fmax(noisy_rank, fabs(pk * pk - 2));
        pd_mat3 full = covariance(&r, q, 1, 30), inv;
        PD_REQUIRE(pd_m3_inverse(full, &inv));
        full_vs_inv =
            fmax(full_vs_inv, frob(pd_m3_sub(pd_m3_pinv_sym(full, 1e-8), inv)) / frob(inv));
    }
    printf("  pinv: penrose=%.3g normal=%.3g in_plane=%.3g full_vs_inverse=%.3g sym=%.3g "
           "noisy_rank=%.3g refused=%d/2000\n",
           penrose, normal, in_plane, full_vs_inv, sym, noisy_rank, refused);
    PD_CHECK_NEAR(refused, 2000, 0);
    PD_CHECK_NEAR(penrose, 0, 1e-12);
    PD_CHECK_NEAR(normal, 0, 1e-12);
    PD_CHECK_NEAR(in_plane, 0, 1e-12);
    PD_CHECK_NEAR(full_vs_inv, 0, 1e-12);
    PD_CHECK_NEAR(sym, 0, 0);
    PD_CHECK_NEAR(noisy_rank, 0, 1e-12);
    /* A linear neighbourhood (all points on a line) keeps only the line direction. */
    pd_vec3 d = pd_v3(0.6, 0, 0.8);
    pd_mat3 line = pd_m3_scale(pd_m3_outer(d, d), 4);
    pd_mat3 pl = pd_m3_pinv_sym(line, 1e-8);
    pd_mat3 expect = pd_m3_scale(pd_m3_outer(d, d), 0.25);
    PD_CHECK_NEAR(frob(pd_m3_sub(pl, expect)), 0, 1e-15);
    PD_CHECK_NEAR(frob(pd_m3_pinv_sym(pd_m3_zero(), 1e-8)), 0, 0);
}

PD_TEST(non_finite_input) {
    pd_mat3 a = pd_m3_identity(), u, v, q, inv = pd_m3_zero();
    a.m[1][2] = NAN;
    pd_vec3 s, l;
    pd_svd3(a, &u, &s, &v);
    /* A NaN must come out as NaN, not be hidden as a zero matrix; U, V stay rotations. */
    PD_CHECK(isnan(s.x) && isnan(s.y) && isnan(s.z));
    PD_CHECK_NEAR(orth_error(u) + orth_error(v), 0, 0);
    pd_eigen_sym3(a, &l, &q);
    PD_CHECK(isnan(l.x) && isnan(l.y) && isnan(l.z));
    PD_CHECK(!pd_m3_inverse(a, &inv));
    a.m[1][2] = INFINITY;
    pd_svd3(a, &u, &s, &v);
    PD_CHECK(isnan(s.x));
    PD_CHECK(!pd_m3_inverse(a, &inv));
}

/* pd_left_singular3 against pd_svd3 (the same one-sided Jacobi, run on A^T): U orthogonal,
 * U diag(s^2) U^T = A A^T, the sorted s equal to |pd_svd3's|, and the small values of a graded
 * spectrum (1, 1e-12, 1e-13) to 1e-14 as pd_svd3's (a route through A A^T's eigenvalues, whose
 * 1e-24 and 1e-26 drown in the rounding of 1, would miss them by about 1e-8). */
static void left_check(pd_mat3 a, double* orth, double* recon, double* vs_svd) {
    pd_mat3 u, us, vs;
    pd_vec3 s, ss;
    pd_left_singular3(a, &u, &s);
    pd_svd3(a, &us, &ss, &vs);
    double na2 = fmax(pd_m3_frob2(a), 1e-300);
    pd_mat3 aat = pd_m3_mul(a, pd_m3_transpose(a));
    *orth = fmax(*orth, orth_error(u));
    pd_mat3 back = pd_m3_from_eigen(u, pd_v3(s.x * s.x, s.y * s.y, s.z * s.z));
    *recon = fmax(*recon, frob(pd_m3_sub(back, aat)) / na2);
    double v[3] = {s.x, s.y, s.z};
    for (int pass = 0; pass < 2; ++pass) /* decreasing, as pd_svd3's */
        for (int i = 0; i < 2 - pass; ++i)
            if (v[i] < v[i + 1]) {
                double t = v[i];
                v[i] = v[i + 1], v[i + 1] = t;
            }
    double e[3] = {ss.x, ss.y, fabs(ss.z)};
    for (int k = 0; k < 3; ++k)
        *vs_svd = fmax(*vs_svd, fabs(v[k] - e[k]) / fmax(e[0], 1e-300));
}

PD_TEST(left_singular_vectors_agree_with_the_svd) {
    rng r = {4242};
    double orth = 0, recon = 0, vs_svd = 0, near_id = 0, graded = 0;
    for (int n = 0; n < 20000; ++n)
        left_check(rand_mat(&r), &orth, &recon, &vs_svd);
    for (int n = 0; n < 20000; ++n) { /* a deformation gradient near a rotation, as mpm's */
        pd_mat3 f =
            pd_m3_mul(rand_rot(&r), pd_m3_add(pd_m3_identity(), pd_m3_scale(rand_mat(&r), 1e-3)));
        left_check(f, &orth, &recon, &near_id);
    }
    for (int n = 0; n < 10000; ++n) {
        pd_mat3 u;
        pd_vec3 s;
        pd_left_singular3(with_spectrum(&r, 1, 1e-12, -1e-13), &u, &s);
        double v[3] = {s.x, s.y, s.z};
        for (int pass = 0; pass < 2; ++pass)
            for (int i = 0; i < 2 - pass; ++i)
                if (v[i] < v[i + 1]) {
                    double t = v[i];
                    v[i] = v[i + 1], v[i + 1] = t;
                }
        graded = fmax(graded, fmax(fabs(v[1] - 1e-12), fabs(v[2] - 1e-13)));
    }
    pd_mat3 u;
    pd_vec3 s;
    pd_left_singular3(pd_m3_zero(), &u, &s);
    double zero = fabs(s.x) + fabs(s.y) + fabs(s.z) + orth_error(u);
    pd_mat3 bad = pd_m3_identity();
    bad.m[0][1] = NAN;
    pd_left_singular3(bad, &u, &s);
    printf("  orth %.3g, A A^T back %.3g, s against pd_svd3 %.3g (near a rotation %.3g), graded "
           "spectrum's small values %.3g, zero %g, NaN in: s %g\n",
           orth, recon, vs_svd, near_id, graded, zero, s.x);
    PD_CHECK_NEAR(orth, 0, 1e-13);
    PD_CHECK_NEAR(recon, 0, 1e-13);
    PD_CHECK_NEAR(vs_svd, 0, 1e-13);
    PD_CHECK_NEAR(near_id, 0, 1e-14);
    PD_CHECK_NEAR(graded, 0, 1e-14);
    PD_CHECK_NEAR(zero, 0, 0);
    PD_CHECK(isnan(s.x) && isnan(s.y) && isnan(s.z));
}
