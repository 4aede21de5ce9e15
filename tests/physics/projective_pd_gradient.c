/* The exact gradient of the projective_pd energy (Eq. 8 + dilatation) that drives the line
 * search of Eq. 13 matches central finite differences of the energy. */
#include <stdlib.h>
#include <string.h>

#include "projective_pd_support.h"

static const char* k_block =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{},"
    "\"time\":{\"dt\":0.01,\"fps\":100,\"frames\":1},"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.35}},"
    "\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.05,0.04,0.03]}}]}";

/* The block's particles moved by a smooth large deformation (squash < 0 inverts it) plus noise
 * along x; the caller frees the positions. */
static pd_vec3* deformed(const pd_particles* p, double squash) {
    pd_vec3* y = calloc(p->count, sizeof *y);
    unsigned seed = 12345;
    for (size_t i = 0; y && i < p->count; ++i) {
        pd_vec3 x = p->rest[i];
        double nx = (double)rand_r(&seed) / RAND_MAX - 0.5;
        y[i] = pd_v3(x.x + 0.3 * x.y + 0.002 * nx, squash * x.y + 0.2 * x.x * x.x,
                     x.z * (1 + 0.1 * x.x / 0.05));
    }
    return y;
}

/* The block deformed by `squash`, with the energy there and its gradient (a copy). */
typedef struct deformed_block {
    pd_test_sim t;
    pd_ppd_state* s;
    pd_particles* p;
    size_t n;
    pd_vec3 *y, *g;
    pd_real e;
} deformed_block;

static int block_open(deformed_block* b, double squash) {
    if (!pd_test_sim_open(&b->t, k_block, NULL, 0))
        return 0;
    b->s = pd_test_ppd(&b->t);
    b->p = &b->t.world->particles;
    b->n = b->p->count;
    b->y = deformed(b->p, squash);
    b->g = calloc(b->n, sizeof *b->g);
    if (!b->y || !b->g)
        return 0;
    b->e = pd_ppd_elastic_energy(b->s, b->y, b->p->flags);
    memcpy(b->g, b->s->g, b->n * sizeof *b->g);
    return 1;
}

static void block_close(deformed_block* b) {
    free(b->y);
    free(b->g);
    pd_test_sim_close(&b->t);
}

static void check_gradient(double squash) {
    deformed_block b;
    PD_REQUIRE(block_open(&b, squash));
    double worst = 0, scale = 0;
    for (size_t i = 0; i < b.n; i += 7) {
        for (int k = 0; k < 3; ++k) {
            pd_real* c = k == 0 ? &b.y[i].x : (k == 1 ? &b.y[i].y : &b.y[i].z);
            pd_real keep = *c, h = 1e-7;
            *c = keep + h;
            pd_real ep = pd_ppd_elastic_energy(b.s, b.y, b.p->flags);
            *c = keep - h;
            pd_real em = pd_ppd_elastic_energy(b.s, b.y, b.p->flags);
            *c = keep;
            double fd = (ep - em) / (2 * h), an = pd_v3_comp(b.g[i], k);
            worst = fmax(worst, fabs(fd - an));
            scale = fmax(scale, fabs(fd));
        }
    }
    printf("  squash %.2f: energy %.4g J, largest |dE/dy| %.4g N, worst gradient error %.3g N\n",
           squash, b.e, scale, worst);
    PD_CHECK(b.e > 0);
    PD_CHECK_NEAR(worst / scale, 0, 1e-5);
    block_close(&b);
}

/* The vectorised local step (its bond loops over a staged family) gives the energy and gradient
 * of the reference scalar form, to round-off, at the same large deformations. */
static void check_vectorised(double squash) {
    deformed_block b;
    PD_REQUIRE(block_open(&b, squash));
    b.s->scalar_local = 1;
    pd_real e_ref = pd_ppd_elastic_energy(b.s, b.y, b.p->flags);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < b.n; ++i) {
        worst = fmax(worst, pd_v3_len(pd_v3_sub(b.g[i], b.s->g[i])));
        scale = fmax(scale, pd_v3_len(b.s->g[i]));
    }
    printf("  squash %.2f: energy %.10g J (scalar form %.10g), worst gradient difference %.3g N "
           "of %.3g\n",
           squash, b.e, e_ref, worst, scale);
    PD_CHECK(b.e > 0);
    PD_CHECK_NEAR(b.e / e_ref, 1, 1e-12);
    PD_CHECK_NEAR(worst / scale, 0, 1e-12);
    block_close(&b);
}

PD_TEST(vectorised_local_step_matches_the_scalar_form) {
    check_vectorised(0.8);
    check_vectorised(-0.6);
}

PD_TEST(gradient_matches_finite_differences) {
    check_gradient(0.8);
}
PD_TEST(gradient_matches_finite_differences_inverted) {
    check_gradient(-0.6);
}
