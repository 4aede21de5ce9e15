/* Direction weights that make a family's fourth moment isotropic (src/neighbor/isotropy.h).
 * References: the fourth moment of an isotropic set of directions is
 * (d_ab d_cd + d_ac d_bd + d_ad d_bc) / 15 (M_xxxx = 1/5, M_xxyy = 1/15); the 12 vertices of
 * an icosahedron are a spherical 5-design, so their fourth moment is isotropic already. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "neighbor/isotropy.h"
#include "test.h"

#define MAXB 64

/* A single family: particle 0 at the origin bonded to `count` neighbours at `dirs`, weight 1
 * and volume 1 each. */
typedef struct star {
    pd_family f;
    uint32_t offsets[2], j[MAXB], rev[MAXB];
    pd_vec3 xi[MAXB];
    pd_real w[MAXB], vol[MAXB + 1];
} star;

static void make_star(star* s, const pd_vec3* dirs, int count) {
    s->f.count = 1;
    s->f.bond_count = (size_t)count;
    s->offsets[0] = 0, s->offsets[1] = (uint32_t)count;
    for (int b = 0; b < count; ++b) {
        s->j[b] = (uint32_t)b + 1, s->rev[b] = 0;
        s->xi[b] = dirs[b], s->w[b] = 1;
    }
    for (int b = 0; b <= count; ++b)
        s->vol[b] = 1;
    s->f.offsets = s->offsets, s->f.j = s->j, s->f.rev = s->rev, s->f.xi = s->xi, s->f.w = s->w;
}

/* The 32 bonds of a cubic lattice within 2.01 spacings. */
static int lattice_dirs(pd_vec3* d) {
    int n = 0;
    for (int i = -2; i <= 2; ++i)
        for (int j = -2; j <= 2; ++j)
            for (int k = -2; k <= 2; ++k) {
                int r2 = i * i + j * j + k * k;
                if (r2 > 0 && r2 <= 4)
                    d[n++] = pd_v3(i, j, k);
            }
    return n;
}

/* sum_b f(n_b) c_b (n_b . u)^4 / sum_b c_b */
static double moment_along(const star* s, const pd_direction_weight* dw, pd_vec3 u) {
    double m = 0, total = 0;
    for (size_t b = 0; b < s->f.bond_count; ++b) {
        pd_vec3 n = pd_v3_scale(s->xi[b], 1 / pd_v3_len(s->xi[b]));
        double d = pd_v3_dot(n, u), f = dw ? pd_direction_weight_at(dw, n) : 1;
        m += f * d * d * d * d;
        total += 1;
    }
    return m / total;
}

PD_TEST(cubic_lattice_made_isotropic) {
    static star s;
    pd_vec3 d[MAXB];
    int n = lattice_dirs(d);
    PD_REQUIRE(n == 32);
    make_star(&s, d, n);
    pd_moment_fit fit;
    memset(&fit, 0, sizeof fit);
    pd_moment_fit_add(&fit, &s.f, s.vol, 0);
    pd_direction_weight dw;
    double dev = pd_moment_fit_solve(&fit, &dw);
    pd_vec3 x = pd_v3(1, 0, 0), xy = pd_v3(sqrt(0.5), sqrt(0.5), 0);
    pd_vec3 xyz = pd_v3(sqrt(1 / 3.0), sqrt(1 / 3.0), sqrt(1 / 3.0));
    printf("  lattice moment along x %.5f, [110] %.5f, [111] %.5f (isotropic: 0.2)\n",
           moment_along(&s, NULL, x), moment_along(&s, NULL, xy), moment_along(&s, NULL, xyz));
    printf("  f: axis %.4f, face diagonal %.4f, body diagonal %.4f; deviation %.3g\n",
           pd_direction_weight_at(&dw, x), pd_direction_weight_at(&dw, xy),
           pd_direction_weight_at(&dw, xyz), dev);
    PD_CHECK(moment_along(&s, NULL, x) > 0.21); /* the lattice is anisotropic to start */
    PD_CHECK_NEAR(moment_along(&s, &dw, x), 0.2, 1e-12);
    PD_CHECK_NEAR(moment_along(&s, &dw, xy), 0.2, 1e-12);
    PD_CHECK_NEAR(moment_along(&s, &dw, xyz), 0.2, 1e-12);
    PD_CHECK_NEAR(moment_along(&s, &dw, pd_v3(0.36, 0.48, 0.8)), 0.2, 1e-12);
    PD_CHECK(dev < 1e-12);
    double total = 0; /* the trace (sum of the weights) is kept */
    for (int b = 0; b < n; ++b)
        total += pd_direction_weight_at(&dw, pd_v3_scale(d[b], 1 / pd_v3_len(d[b])));
    PD_CHECK_NEAR(total, n, 1e-9);
    for (int b = 0; b < n; ++b)
        PD_CHECK(pd_direction_weight_at(&dw, pd_v3_scale(d[b], 1 / pd_v3_len(d[b]))) > 0.5);
}

PD_TEST(isotropic_family_left_alone) {
    static star s;
    double p = (1 + sqrt(5.0)) / 2;
    pd_vec3 d[12];
    int n = 0;
    for (int a = -1; a <= 1; a += 2)
        for (int b = -1; b <= 1; b += 2) {
            d[n++] = pd_v3(0, a, b * p);
            d[n++] = pd_v3(a, b * p, 0);
            d[n++] = pd_v3(b * p, 0, a);
        }
    make_star(&s, d, n);
    pd_moment_fit fit;
    memset(&fit, 0, sizeof fit);
    pd_moment_fit_add(&fit, &s.f, s.vol, 0);
    pd_direction_weight dw;
    double dev = pd_moment_fit_solve(&fit, &dw), worst = 0;
    for (int b = 0; b < n; ++b)
        worst = fmax(worst,
                     fabs(pd_direction_weight_at(&dw, pd_v3_scale(d[b], 1 / pd_v3_len(d[b]))) - 1));
    printf("  icosahedron: moment along x %.6f, largest |f - 1| %.3g, deviation %.3g\n",
           moment_along(&s, NULL, pd_v3(1, 0, 0)), worst, dev);
    PD_CHECK_NEAR(moment_along(&s, NULL, pd_v3(1, 0, 0)), 0.2, 1e-12);
    PD_CHECK(worst < 1e-12);
    PD_CHECK(dev < 1e-12);
}

/* pd_quartic_at(u) = sum c (n . u)^4, checked against the direct sum for a lopsided set. */
PD_TEST(quartic_form_matches_direct_sum) {
    pd_vec3 n[4] = {pd_v3(1, 0, 0), pd_v3(0.6, 0.8, 0), pd_v3(0, 0.28, 0.96),
                    pd_v3(2 / 3.0, -2 / 3.0, 1 / 3.0)};
    pd_real c[4] = {0.5, 1.5, 2.0, 0.25}, q[PD_QUARTIC_TERMS] = {0};
    for (int b = 0; b < 4; ++b)
        pd_quartic_add(q, c[b], n[b]);
    pd_vec3 u = pd_v3_scale(pd_v3(0.3, -0.7, 0.4), 1 / pd_v3_len(pd_v3(0.3, -0.7, 0.4)));
    double direct = 0;
    for (int b = 0; b < 4; ++b) {
        double d = pd_v3_dot(n[b], u);
        direct += c[b] * d * d * d * d;
    }
    PD_CHECK_NEAR(pd_quartic_at(q, u), direct, 1e-14);
}
