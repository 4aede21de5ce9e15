/* He 2017 Sec. 4.1, Fig. 3: an elastic body recovers from a degenerate (flattened) and from an
 * inverted start, the latter thanks to permuting the first two rows of F when det F < 0.
 * Reference: the rest shape itself (each principal size within 5 %), the right way round. */
#include "support.h"

static const char* k_block =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":30},"
    "\"time\":{\"dt\":0.0333333333333,\"fps\":30,\"frames\":1},\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"block\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.12,0.07,0.05]}}]}";

/* det of the best-fit linear map from rest to current positions: > 0 unless the body came back
 * mirrored (a reflection has the same principal sizes). */
static double orientation(const pd_vec3* x, const pd_vec3* y, size_t n) {
    pd_vec3 cx = pd_v3(0, 0, 0), cy = pd_v3(0, 0, 0);
    for (size_t i = 0; i < n; ++i)
        cx = pd_v3_add(cx, x[i]), cy = pd_v3_add(cy, y[i]);
    cx = pd_v3_scale(cx, 1.0 / (double)n), cy = pd_v3_scale(cy, 1.0 / (double)n);
    pd_mat3 yx = pd_m3_zero(), xx = pd_m3_zero(), xinv;
    for (size_t i = 0; i < n; ++i) {
        pd_m3_add_outer(&yx, 1, pd_v3_sub(y[i], cy), pd_v3_sub(x[i], cx));
        pd_m3_add_outer(&xx, 1, pd_v3_sub(x[i], cx), pd_v3_sub(x[i], cx));
    }
    if (!pd_m3_inverse(xx, &xinv))
        return 0;
    return pd_m3_det(pd_m3_mul(yx, xinv));
}

static void recover(double squash, const char* what) {
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_block, NULL, 0));
    pd_particles* p = &t.world->particles;
    for (size_t i = 0; i < p->count; ++i)
        p->pos[i].y = 0.035 + squash * (p->pos[i].y - 0.035);
    PD_REQUIRE(pd_test_sim_run(&t, 3.0));
    double e0[3], e1[3];
    pd_test_principal_sizes(p->rest, p->count, e0);
    pd_test_principal_sizes(p->pos, p->count, e1);
    printf("  %s: principal sizes at rest %.4g %.4g %.4g m, after 3 s %.4g %.4g %.4g m\n", what,
           e0[0], e0[1], e0[2], e1[0], e1[1], e1[2]);
    for (int k = 0; k < 3; ++k)
        PD_CHECK_REL(e1[k], e0[k], 0.05);
    double det = orientation(p->rest, p->pos, p->count);
    printf("  det of the best-fit map rest -> now: %.4f (1: recovered, -1: mirrored)\n", det);
    PD_CHECK_NEAR(det, 1, 0.05);
    pd_test_sim_close(&t);
}

PD_TEST(flattened_block_recovers) {
    recover(0.05, "flattened to 5 %");
}
PD_TEST(inverted_block_recovers) {
    recover(-0.5, "mirrored (inverted) and halved");
}
