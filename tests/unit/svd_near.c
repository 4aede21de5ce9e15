/* Unit test of pd_left_singular3_near (src/math/svd3.c; xpbi's Eq. 9 F in every particle
 * constraint, started from the last iteration's U): from a nearby matrix's U, from a random
 * rotation and from the identity, U orthogonal, U diag(s^2) U^T = A A^T, and the sorted s equal
 * to pd_svd3's |s| (an independent start: the full SVD from the identity, on A, not A^T). A
 * start applied on the wrong side (A u0 for A^T u0) or left out of U fails all three. */
#include "test.h"

#include "math/svd3.h"
#include "random_matrices.h"

#include <stdint.h>

static void sort_down(double v[3]) {
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < 2 - pass; ++i)
            if (v[i] < v[i + 1]) {
                double t = v[i];
                v[i] = v[i + 1], v[i + 1] = t;
            }
}

typedef struct near_stats {
    double orth, recon, vs_svd;
} near_stats;

static void near_check(pd_mat3 a, pd_mat3 start, near_stats* st) {
    pd_mat3 u, us, vs;
    pd_vec3 s, ss;
    pd_left_singular3_near(a, start, &u, &s);
    pd_svd3(a, &us, &ss, &vs);
    st->orth = fmax(st->orth, frob(pd_m3_sub(pd_m3_mul(pd_m3_transpose(u), u), pd_m3_identity())));
    pd_mat3 back = pd_m3_from_eigen(u, pd_v3(s.x * s.x, s.y * s.y, s.z * s.z));
    pd_mat3 aat = pd_m3_mul(a, pd_m3_transpose(a));
    st->recon = fmax(st->recon, frob(pd_m3_sub(back, aat)) / fmax(pd_m3_frob2(a), 1e-300));
    double v[3] = {s.x, s.y, s.z}, e[3] = {ss.x, ss.y, fabs(ss.z)};
    sort_down(v);
    for (int k = 0; k < 3; ++k)
        st->vs_svd = fmax(st->vs_svd, fabs(v[k] - e[k]) / fmax(e[0], 1e-300));
}

PD_TEST(left_singular_started_near_agrees_with_the_svd) {
    rng r = {31337};
    near_stats nearby = {0, 0, 0}, any = {0, 0, 0}, identity = {0, 0, 0};
    for (int n = 0; n < 20000; ++n) {
        /* a deformation gradient near a rotation (xpbi's F) and the one of the last iteration */
        pd_mat3 f =
            pd_m3_mul(rand_rot(&r), pd_m3_add(pd_m3_identity(), pd_m3_scale(rand_mat(&r), 0.1)));
        pd_mat3 last = pd_m3_add(f, pd_m3_scale(rand_mat(&r), 1e-4)), u_last;
        pd_vec3 s_last;
        pd_left_singular3(last, &u_last, &s_last);
        near_check(f, u_last, &nearby);
        near_check(rand_mat(&r), rand_rot(&r), &any);
        near_check(rand_mat(&r), pd_m3_identity(), &identity);
    }
    printf("  from the last iteration's U: orth %.2e, A A^T back %.2e, s against pd_svd3 %.2e\n",
           nearby.orth, nearby.recon, nearby.vs_svd);
    printf("  random A from a random rotation: %.2e, %.2e, %.2e; from the identity: %.2e, %.2e, "
           "%.2e\n",
           any.orth, any.recon, any.vs_svd, identity.orth, identity.recon, identity.vs_svd);
    near_stats all[3] = {nearby, any, identity};
    for (int k = 0; k < 3; ++k) {
        PD_CHECK(all[k].orth < 1e-13);
        PD_CHECK(all[k].recon < 1e-13);
        PD_CHECK(all[k].vs_svd < 1e-13);
    }
}
