/* xpbi (Yu et al. 2024): what only this method does. Eq. 10-11's corrected velocity gradient
 * is exact for a linear field on an irregular neighbourhood, Eq. 12-13 match finite
 * differences of C, a step keeps linear momentum, the coloured sweeps give the same bytes on
 * any thread count, and Gauss-Seidel's residual falls with the iterations faster than Jacobi's
 * (Fig. 14). The cross-method suite (elastic_bar.c, ball_drop.c, incline.c, cantilever.c) runs
 * it beside the other methods. A sheared von Mises slab carries its yield stress (Eq. 14); a
 * Herschel-Bulkley one its flow curve, and a Bingham cylinder slumps as Pashias 1996. */
#include <stdlib.h>

#include "peridot/parallel.h"

#include "bar.h"
#include "triaxial.h"
#include "methods.h"
#include "support.h"
#include "solvers/xpbi/xpbi_data.h"

extern const pd_solver_vtable pd_xpbi_solver;

/* The cross-method bar (elastic_bar.c: 0.3 x 0.08 x 0.08 m, E 1e5 Pa, nu 0.25, pinned ends, 0.5 %
 * stretch over 0.15 s). Eq. 11's velocity gradient is blind to a displacement that alternates
 * from one layer to the next (the two neighbours across p move alike, their corrected kernel
 * gradients are opposite). Once the layers alternate by a, the neighbour across p on one side is
 * nearer than the one on the other, and the corrected kernel reads the alternation's growth as
 * a compression on either parity: under tension the mode grows and F stops following the
 * positions (a tensile instability; docs/methods/xpbi.md, "The bar"). */
static const char* k_bar =
    "{\"version\":1,\"method\":\"xpbi\","
    "\"time\":{\"dt\":0.001,\"fps\":50,\"frames\":30},"
    "\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.25}},"
    "\"bodies\":[{\"name\":\"bar\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.3,0.08,0.08]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[0.02,1,1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[0.28,-1,-1],\"max\":[1,1,1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":0.15,\"translate\":[0.0014,0,0]}]}]}]}";

typedef struct bar_interior {
    double alternation; /* mean |u_k - (u_{k-1} + u_{k+1}) / 2| of the free layers' x (m) */
    double f;           /* mean F_xx - 1 of the interior's middle half (Eq. 9's F) */
    double fit;         /* mean slope of the least-squares line through each such particle's
                         * neighbours within 1.5 spacings at rest: what F should show */
    double slope;       /* the displacements' slope over the middle half (bar.h) */
} bar_interior;

static double neighbours_slope(const pd_particles* p, size_t i) {
    double sxx = 0, sxu = 0;
    for (size_t j = 0; j < p->count; ++j) {
        pd_vec3 d = pd_v3_sub(p->rest[j], p->rest[i]);
        if (j != i && pd_v3_len(d) < 0.015)
            sxx += d.x * d.x, sxu += d.x * (p->pos[j].x - p->pos[i].x - d.x);
    }
    return sxu / sxx;
}

/* Inside the bar (1.5 spacings from its sides): per layer the mean x displacement u_k. */
static bar_interior measure_interior(const pd_test_sim* t) {
    const pd_xpbi_state* xs = t->world->solver_state;
    const pd_particles* p = &t->world->particles;
    double u[30] = {0}, c[30] = {0}, n = 0;
    bar_interior b = {0};
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 x = p->rest[i];
        if (!(x.y > 0.015 && x.y < 0.065 && x.z > 0.015 && x.z < 0.065))
            continue;
        int k = (int)(x.x / 0.01);
        u[k] += p->pos[i].x - x.x, c[k] += 1;
        if (fabs(x.x - 0.15) < 0.075)
            b.f += xs->f[i].m[0][0] - 1, b.fit += neighbours_slope(p, i), n += 1;
    }
    b.f /= n, b.fit /= n;
    for (int k = 3; k < 27; ++k)
        b.alternation += fabs(u[k] / c[k] - 0.5 * (u[k - 1] / c[k - 1] + u[k + 1] / c[k + 1])) / 24;
    b.slope = pd_test_bar_strains(t, 0.3, 0.08).axial;
    return b;
}

/* The paper's xpbi (solver.hourglass 0, and XSPH per step as Eq. 20 prints it, xsph_scaling step):
 * the alternation over time, in the bar stretched and in the bar squeezed by as much. Measured:
 * stretched, 9.7e-6 m at 0.03 s and 3.7e-4 m at 0.09 s (doubling about every 10 ms), F_xx - 1
 * 0.00135 where the neighbours show 0.0039; squeezed, 2.9e-6 and 6.7e-6 m, F_xx - 1 -0.00307 where
 * they show -0.00307. The checks: stretched, a growth of 10 times at least and F below half of the
 * neighbours' slope; squeezed, a growth below 5 times and F within 5 % of it (the mode is a tensile
 * instability). With XSPH per unit time (xsph_scaling time: c = 0.1 a step of 1 ms) the mode grows
 * more slowly: 7.2e-6 and 2.8e-4 m, F_xx - 1 0.0020 where the neighbours show 0.0034 at 0.09 s. */
static int paper_bar(const char* translate, bar_interior* at) {
    const char* sets[] = {"solver.hourglass=0", "solver.xpbi.xsph_scaling=step", translate};
    const double times[3] = {0.03, 0.06, 0.09};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_bar, sets, 3))
        return 0;
    int ok = 1;
    for (int k = 0; ok && k < 3; ++k) {
        ok = pd_test_sim_run(&t, times[k]);
        at[k] = measure_interior(&t);
        printf("  t %.2f s: alternation %.3g m; F_xx - 1 %.4g, the neighbours' slope %.4g, the "
               "displacements' %.4g\n",
               times[k], at[k].alternation, at[k].f, at[k].fit, at[k].slope);
    }
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(paper_bar_alternation_grows_under_tension_only) {
    bar_interior at[3];
    printf("  stretched:\n");
    PD_REQUIRE(paper_bar("bodies[0].pins[1].keyframes[1].translate=[0.0014,0,0]", at));
    PD_CHECK(at[2].alternation > 10 * at[0].alternation);
    PD_CHECK(at[2].f < 0.5 * at[2].fit);
    printf("  squeezed:\n");
    PD_REQUIRE(paper_bar("bodies[0].pins[1].keyframes[1].translate=[-0.0014,0,0]", at));
    PD_CHECK(at[2].alternation < 5 * at[0].alternation);
    PD_CHECK_REL(at[2].f, at[2].fit, 0.05);
}

/* With the hourglass constraint (default): at 0.2 s the interior's F_xx - 1 within 10 % of the
 * displacements' slope, and the alternation below a tenth of what the stretch puts between
 * two layers. */
PD_TEST(bar_interior_f_follows_the_stretch) {
    g_pd_method = (pd_test_method_ctx){&pd_xpbi_solver, "bar_interior_f_follows_the_stretch",
                                       PD_CAP_ELASTIC, 0};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_bar, NULL, 0));
    PD_REQUIRE(pd_test_sim_run(&t, 0.2));
    bar_interior b = measure_interior(&t);
    printf("  interior: mean F_xx - 1 %.5g against the displacement's slope %.5g (neighbours' "
           "%.5g); layers' displacements alternate by %.3g m (the stretch moves a layer %.3g m "
           "from the next)\n",
           b.f, b.slope, b.fit, b.alternation, b.slope * 0.01);
    pd_test_method_check("interior mean F_xx - 1 against the displacements' slope", b.f, b.slope,
                         0.1, 1);
    pd_test_method_bound("layers' alternation / the stretch between two layers",
                         b.alternation / (b.slope * 0.01), 0, 0.1);
    pd_test_sim_close(&t);
}

static const char* k_block =
    "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":0.001,\"fps\":50,\"frames\":1},"
    "\"gravity\":[0,0,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"block\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.06,0.06,0.06]}}]}";

/* A deterministic jitter in [-a, a]. */
static double jitter(unsigned* state, double a) {
    *state = *state * 1664525u + 1013904223u;
    return a * (2.0 * (double)(*state >> 8) / (double)(1u << 24) - 1.0);
}

PD_TEST(lp_makes_the_gradient_of_a_linear_field_exact) {
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_block, NULL, 0));
    pd_particles* p = &t.world->particles;
    pd_xpbi_state* s = t.world->solver_state;
    unsigned seed = 7;
    for (size_t i = 0; i < p->count; ++i)
        p->pos[i] = pd_v3_add(
            p->pos[i], pd_v3(jitter(&seed, 0.003), jitter(&seed, 0.003), jitter(&seed, 0.003)));
    PD_REQUIRE(pd_xpbi_neighborhoods(s, p) == PD_OK);
    pd_mat3 g = {{{0.3, -1.2, 0.5}, {2.0, 0.1, -0.7}, {-0.4, 0.9, 1.5}}};
    for (size_t i = 0; i < p->count; ++i)
        p->vel[i] = pd_v3_add(pd_m3_mulv(g, p->pos[i]), pd_v3(1, 2, 3));
    double worst = 0;
    for (size_t i = 0; i < p->count; ++i) {
        pd_mat3 e = pd_m3_sub(pd_xpbi_velocity_gradient(s, (uint32_t)i, p->vel), g);
        worst = fmax(worst, sqrt(pd_m3_frob2(e)) / sqrt(pd_m3_frob2(g)));
    }
    printf("  %zu particles jittered by up to 0.3 spacing: worst relative error of grad v %.3g\n",
           p->count, worst);
    PD_CHECK(worst < 1e-10);
    pd_test_sim_close(&t);
}

/* Jitters the block's positions by up to 2 mm, gives it random velocities (0.5 m/s) and a
 * deformed F^n (entries off the identity by up to 0.05): a generic state for the gradient tests. */
static void deform_at_random(pd_particles* p, pd_xpbi_state* s, unsigned seed) {
    for (size_t i = 0; i < p->count; ++i) {
        p->pos[i] = pd_v3_add(
            p->pos[i], pd_v3(jitter(&seed, 0.002), jitter(&seed, 0.002), jitter(&seed, 0.002)));
        p->vel[i] = pd_v3(jitter(&seed, 0.5), jitter(&seed, 0.5), jitter(&seed, 0.5));
        pd_mat3 f = pd_m3_identity();
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                f.m[a][b] += jitter(&seed, 0.05);
        s->f[i] = f, s->f_ref[i] = f;
    }
}

/* Eq. 12-13 against central differences of C_p in the end-of-step positions x_b = x_b^n + dt
 * v_b, on the jittered block with a deformed F^n and random velocities: the worst relative
 * error over an interior and a corner particle's neighbours and the particle itself. */
PD_TEST(constraint_gradient_matches_finite_differences) {
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_block, NULL, 0));
    pd_particles* p = &t.world->particles;
    pd_xpbi_state* s = t.world->solver_state;
    deform_at_random(p, s, 11);
    PD_REQUIRE(pd_xpbi_neighborhoods(s, p) == PD_OK);
    double dt = 1e-3, h = 1e-7, worst = 0, sum_err = 0;
    uint32_t probes[2] = {0, 0};
    for (size_t i = 0; i < p->count; ++i) /* the corner at the origin and an inner particle */
        if (pd_v3_len(p->rest[i]) < 0.01)
            probes[0] = (uint32_t)i;
        else if (pd_v3_len(pd_v3_sub(p->rest[i], pd_v3(0.025, 0.025, 0.025))) < 0.01)
            probes[1] = (uint32_t)i;
    for (int k = 0; k < 2; ++k) {
        uint32_t q = probes[k];
        pd_mat3 m;
        double c = pd_xpbi_particle_constraint(s, p, q, p->vel, dt, &m);
        pd_vec3 gq = pd_v3(0, 0, 0);
        for (uint32_t e = s->near.offsets[q]; e <= s->near.offsets[q + 1]; ++e) {
            int self = e == s->near.offsets[q + 1];
            uint32_t b = self ? q : s->near.indices[e];
            pd_vec3 g = self ? gq : pd_m3_mulv(m, s->nb_g[e]);
            if (!self)
                gq = pd_v3_sub(gq, g);
            double fd[3];
            for (int a = 0; a < 3; ++a) {
                pd_vec3 keep = p->vel[b];
                pd_mat3 unused;
                double* comp = a == 0 ? &p->vel[b].x : a == 1 ? &p->vel[b].y : &p->vel[b].z;
                *comp += h / dt;
                double cp = pd_xpbi_particle_constraint(s, p, q, p->vel, dt, &unused);
                *comp -= 2 * h / dt;
                double cm = pd_xpbi_particle_constraint(s, p, q, p->vel, dt, &unused);
                p->vel[b] = keep;
                fd[a] = (cp - cm) / (2 * h);
            }
            pd_vec3 err = pd_v3_sub(g, pd_v3(fd[0], fd[1], fd[2]));
            double scale = fmax(pd_v3_len(pd_v3(fd[0], fd[1], fd[2])), 1e-3 * c / 0.01);
            worst = fmax(worst, pd_v3_len(err) / scale);
            sum_err += pd_v3_len(err);
        }
        printf("  particle %u (%s): C %.5g sqrt(Pa), %u neighbours\n", q, k ? "inner" : "corner", c,
               s->near.offsets[q + 1] - s->near.offsets[q]);
    }
    printf("  worst relative error of Eq. 12-13 against central differences: %.3g\n", worst);
    PD_CHECK(worst < 1e-5);
    pd_test_sim_close(&t);
}

/* The block deformed by x = A X + c with F^n = A, moving with v = B x + d: C_h of every
 * particle, over sqrt(beta E) (the worst), then again with the layers alternating by 1e-6 m
 * along x (the smallest C_h inside). */
static void hourglass_of_affine(pd_mat3 a, pd_mat3 b, double* affine, double* alternating) {
    pd_test_sim t;
    *affine = *alternating = NAN;
    if (!pd_test_sim_open(&t, k_block, NULL, 0))
        return;
    pd_particles* p = &t.world->particles;
    pd_xpbi_state* s = t.world->solver_state;
    double dt = 1e-3, scale = sqrt(s->mat[0].hourglass);
    for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < p->count; ++i) {
            int layer = (int)(p->rest[i].x / 0.01);
            pd_vec3 zig = pd_v3(pass && layer % 2 ? 1e-6 : 0, 0, 0);
            p->pos[i] = pd_v3_add(pd_v3_add(pd_m3_mulv(a, p->rest[i]), pd_v3(0.1, -0.2, 0.3)), zig);
            p->vel[i] = pd_v3_add(pd_m3_mulv(b, p->pos[i]), pd_v3(0.5, 0, -1));
            s->f[i] = a, s->f_ref[i] = a; /* an elastic material: F_ref = F */
        }
        if (pd_xpbi_neighborhoods(s, p) != PD_OK || pd_xpbi_hourglass_prepare(s, p) != PD_OK)
            break;
        double worst = 0, least = INFINITY;
        for (size_t i = 0; i < p->count; ++i) {
            static pd_vec3 grads[256];
            pd_vec3 gp;
            double norm;
            PD_REQUIRE(s->near.offsets[i + 1] - s->near.offsets[i] <= 256);
            double c =
                pd_xpbi_hourglass_constraint(s, p->pos, (uint32_t)i, p->vel, dt, grads, &gp, &norm);
            c /= scale;
            worst = fmax(worst, c);
            if (pd_v3_len(pd_v3_sub(p->rest[i], pd_v3(0.03, 0.03, 0.03))) < 0.015)
                least = fmin(least, c);
        }
        *(pass ? alternating : affine) = pass ? least : worst;
    }
    pd_test_sim_close(&t);
}

/* The hourglass constraint vanishes for any affine motion (its eps = x_pb - F~ X_pb is 0 when
 * Eq. 11 is exact: a linear field) and sees the alternation Eq. 11 cannot: a rigid rotation
 * (F^n a rotation of 0.7 rad, spinning at 3 rad/s) and a uniform stretch (F^n = diag(1.02,
 * 0.99, 0.97) growing at diag(2, -1, -0.5) / s), the worst C_h / sqrt(beta E) below 1e-10 (a
 * relative eps of about 1e-10); alternating layers of 1e-6 m (1e-4 spacing) give an interior
 * C_h / sqrt(beta E) of 1e-5 at least. */
PD_TEST(hourglass_vanishes_for_affine_motion) {
    double c = cos(0.7), s = sin(0.7);
    pd_mat3 rot = {{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}};
    pd_mat3 spin = {{{0, -3, 0}, {3, 0, 0}, {0, 0, 0}}};
    pd_mat3 stretch = pd_m3_diag(1.02, 0.99, 0.97), rate = pd_m3_diag(2, -1, -0.5);
    double affine[2], alternating[2];
    hourglass_of_affine(rot, spin, &affine[0], &alternating[0]);
    hourglass_of_affine(stretch, rate, &affine[1], &alternating[1]);
    for (int k = 0; k < 2; ++k) {
        printf("  %s: worst C_h / sqrt(beta E) %.3g; with layers alternating by 1e-6 m, the "
               "least inside %.3g\n",
               k ? "uniform stretch" : "rigid rotation", affine[k], alternating[k]);
        PD_CHECK(affine[k] < 1e-10);
        PD_CHECK(alternating[k] > 1e-5);
    }
}

/* The hourglass constraint's gradients (xpbi_hourglass.c) against central differences of C_h in
 * the candidate positions, on the jittered block with a deformed F^n and random velocities, at
 * a corner and an inner particle. */
PD_TEST(hourglass_gradient_matches_finite_differences) {
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_block, NULL, 0));
    pd_particles* p = &t.world->particles;
    pd_xpbi_state* s = t.world->solver_state;
    deform_at_random(p, s, 5);
    PD_REQUIRE(pd_xpbi_neighborhoods(s, p) == PD_OK && pd_xpbi_hourglass_prepare(s, p) == PD_OK);
    double dt = 1e-3, h = 1e-8, worst = 0;
    uint32_t probes[2] = {0, 0};
    for (size_t i = 0; i < p->count; ++i)
        if (pd_v3_len(p->rest[i]) < 0.01)
            probes[0] = (uint32_t)i;
        else if (pd_v3_len(pd_v3_sub(p->rest[i], pd_v3(0.025, 0.025, 0.025))) < 0.01)
            probes[1] = (uint32_t)i;
    static pd_vec3 grads[64], unused_grads[64];
    for (int k = 0; k < 2; ++k) {
        uint32_t q = probes[k], first = s->near.offsets[q], count = s->near.offsets[q + 1] - first;
        pd_vec3 gq;
        PD_REQUIRE(count < 64);
        double norm, c = pd_xpbi_hourglass_constraint(s, p->pos, q, p->vel, dt, grads, &gq, &norm);
        for (uint32_t e = 0; e <= count; ++e) {
            uint32_t b = e == count ? q : s->near.indices[first + e];
            pd_vec3 g = e == count ? gq : grads[e], fd, unused;
            double* comp[3] = {&p->vel[b].x, &p->vel[b].y, &p->vel[b].z};
            double* out[3] = {&fd.x, &fd.y, &fd.z};
            for (int a = 0; a < 3; ++a) {
                double keep = *comp[a];
                *comp[a] = keep + h / dt;
                double cp = pd_xpbi_hourglass_constraint(s, p->pos, q, p->vel, dt, unused_grads,
                                                         &unused, &norm);
                *comp[a] = keep - h / dt;
                double cm = pd_xpbi_hourglass_constraint(s, p->pos, q, p->vel, dt, unused_grads,
                                                         &unused, &norm);
                *comp[a] = keep;
                *out[a] = (cp - cm) / (2 * h);
            }
            worst = fmax(worst, pd_v3_len(pd_v3_sub(g, fd)) / fmax(pd_v3_len(fd), 1e-3 * c / 0.01));
        }
        printf("  particle %u (%s): C_h %.5g sqrt(Pa), %u neighbours\n", q, k ? "inner" : "corner",
               c, count);
    }
    printf("  worst relative error of the hourglass gradients against central differences: %.3g\n",
           worst);
    PD_CHECK(worst < 1e-5);
    pd_test_sim_close(&t);
}

/* Without gravity and colliders the constraints' velocity changes sum to zero (Eq. 13: the
 * gradients of a constraint sum to zero; Eq. 21's pair changes are opposite), so a step keeps
 * the total momentum; XSPH (Eq. 20) keeps it only where neighbours have equal m_p V_b and m_b V_p
 * (equal densities), so it is off here and its drift is printed beside. */
static void momentum_drift(const char* xsph, double* drift) {
    const char* sets[] = {"gravity=[0,0,0]", xsph};
    pd_test_sim t;
    *drift = INFINITY;
    if (!pd_test_sim_open(&t, k_block, sets, 2))
        return;
    pd_particles* p = &t.world->particles;
    unsigned seed = 3;
    for (size_t i = 0; i < p->count; ++i)
        p->vel[i] = pd_v3(jitter(&seed, 0.3), jitter(&seed, 0.3), jitter(&seed, 0.3));
    pd_vec3 p0 = pd_v3(0, 0, 0);
    double scale = 0;
    for (size_t i = 0; i < p->count; ++i)
        p0 = pd_v3_madd(p0, p->mass[i], p->vel[i]), scale += p->mass[i] * pd_v3_len(p->vel[i]);
    int ok = pd_test_sim_run(&t, 0.02);
    pd_vec3 p1 = pd_v3(0, 0, 0);
    for (size_t i = 0; i < p->count; ++i)
        p1 = pd_v3_madd(p1, p->mass[i], p->vel[i]);
    *drift = ok ? pd_v3_len(pd_v3_sub(p1, p0)) / scale : INFINITY;
    pd_test_sim_close(&t);
}

PD_TEST(a_step_keeps_linear_momentum) {
    double exact, with_xsph;
    momentum_drift("solver.xpbi.xsph_viscosity=0", &exact);
    momentum_drift("solver.xpbi.xsph_scaling=viscosity", &with_xsph); /* the default */
    printf("  |P(0.02 s) - P(0)| / sum m |v| over 20 steps: %.3g without XSPH, %.3g with the "
           "default\n",
           exact, with_xsph);
    PD_CHECK(exact < 1e-12);
}

/* A block of 512 particles thrown onto a floor with friction, 30 steps of 1 ms: every position
 * the same bytes on 1 and 3 threads (the colours' tasks touch disjoint particles, Sec. 4.3);
 * also a von Mises block (yielding at the impact) with the hourglass pairs returned
 * (hourglass_relaxation plastic: each pair's offset kept from step to step). */
static const char* k_throw =
    "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":0.001,\"fps\":50,\"frames\":1},"
    "\"gravity\":[0,-9.81,0],"
    "\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"block\",\"material\":\"m\",\"spacing\":0.01,"
    "\"velocity\":[1,-1,0.5],"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0.001,0],\"max\":[0.08,0.081,0.08]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],"
    "\"friction\":0.4}]}";

static int run_threads(int threads, const char* const* sets, int count, pd_vec3* out, size_t cap,
                       size_t* n) {
    pd_set_threads(threads);
    pd_test_sim t;
    int ok = pd_test_sim_open(&t, k_throw, sets, count);
    if (ok)
        ok = pd_test_sim_run(&t, 0.03);
    if (ok) {
        const pd_particles* p = &t.world->particles;
        *n = p->count < cap ? p->count : cap;
        for (size_t i = 0; i < *n; ++i)
            out[p->id[i]] = p->pos[i];
        pd_test_sim_close(&t);
    }
    pd_set_threads(0);
    return ok;
}

PD_TEST(results_do_not_depend_on_the_thread_count) {
    static pd_vec3 one[1024], three[1024];
    const char* solvers[] = {"solver.solver=gauss_seidel", "solver.solver=jacobi",
                             "solver.solver=gauss_seidel"};
    const char* returned[] = {"materials.m.plasticity={\"model\":\"von_mises\","
                              "\"yield_stress\":500}",
                              "solver.hourglass_plastic=true",
                              "solver.hourglass_relaxation=plastic"};
    for (int k = 0; k < 3; ++k) {
        const char* sets[4] = {solvers[k], returned[0], returned[1], returned[2]};
        int count = k < 2 ? 1 : 4;
        size_t n1 = 0, n3 = 0;
        PD_REQUIRE(run_threads(1, sets, count, one, 1024, &n1));
        PD_REQUIRE(run_threads(3, sets, count, three, 1024, &n3));
        PD_REQUIRE(n1 == n3 && n1 > 0);
        size_t differ = 0;
        for (size_t i = 0; i < n1; ++i)
            differ += memcmp(&one[i], &three[i], sizeof one[i]) != 0;
        printf("  %s%s: %zu particles, %zu differ between 1 and 3 threads\n", solvers[k],
               k < 2 ? "" : ", von Mises, returned hourglass pairs", n1, differ);
        PD_CHECK(differ == 0);
    }
}

/* One step of 2 ms of the 216-particle block (E 5 MPa: a wave crosses r = 1 cm in 0.13 ms)
 * squeezed along x and stretched across at 1 / s: the residual |h| / |h^(0)| after each of 30
 * iterations (Fig. 14). */
static int residual_history(const char* solver, const char* modulus, double* out) {
    const char* sets[] = {"gravity=[0,0,0]", "solver.iterations=30", "time.dt=0.002", solver,
                          modulus};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_block, sets, 5))
        return 0;
    pd_particles* p = &t.world->particles;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 d = pd_v3_sub(p->pos[i], pd_v3(0.03, 0.03, 0.03));
        p->vel[i] = pd_v3(-d.x, 0.5 * d.y, 0.5 * d.z);
    }
    int ok = pd_test_sim_run(&t, 0.002);
    const pd_xpbi_state* s = t.world->solver_state;
    for (int k = 0; ok && k < 30; ++k)
        out[k] = k < s->history_count ? s->history[k] : NAN;
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(gauss_seidel_residual_falls_with_iterations) {
    const char* moduli[] = {"materials.m.youngs_modulus=1e5", "materials.m.youngs_modulus=5e6"};
    for (int m = 0; m < 2; ++m) {
        double gs[30], jac[30];
        PD_REQUIRE(residual_history("solver.solver=gauss_seidel", moduli[m], gs));
        PD_REQUIRE(residual_history("solver.solver=jacobi", moduli[m], jac));
        printf("  %s: |h| / |h^(0)| after 1, 5, 10, 30 iterations: gauss_seidel %.3g %.3g %.3g "
               "%.3g, jacobi %.3g %.3g %.3g %.3g\n",
               moduli[m], gs[0], gs[4], gs[9], gs[29], jac[0], jac[4], jac[9], jac[29]);
        PD_CHECK(gs[4] < gs[0] && gs[9] < gs[4] && gs[29] < gs[9]);
        PD_CHECK(gs[9] < 0.05); /* measured 2.3e-5 (E 1e5), 0.018 (E 5e6) */
        if (m == 1)             /* Fig. 14: at high stiffness Jacobi converges no better */
            PD_CHECK(jac[9] >= gs[9]);
    }
}

/* What xpbi does not implement yet is refused at its JSON path, never ignored: a plasticity
 * Cam-clay's cohesion (its tension comes from tension_ratio), a shell body, the penalty
 * contact's stiffness
 * (xpbi's contact is a hard constraint),
 * a key of no method, a kernel radius whose distance constraints (Eq. 21) would push nearest
 * neighbours apart (r = 1.5 spacings inflated the bar by 7 %). */
PD_TEST(refuses_what_it_does_not_implement) {
    const struct {
        const char* set;
        const char* path;
    } cases[] = {
        {"materials.m.plasticity={\"model\":\"cam_clay\",\"cohesion\":100}",
         "materials.m.plasticity.cohesion"},
        {"bodies[0].kind=shell", "bodies[0].kind"},
        {"solver.contact_stiffness=4", "solver.xpbi.contact_stiffness"}, /* a penalty's */
        {"solver.xsph_strength=1", "solver.xpbi.xsph_strength"},
        {"solver.xpbi.xsph_time=1e-3", "solver.xpbi.xsph_time"}, /* acts with scaling time */
        {"solver.radius=1.5", "solver.xpbi.radius"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        pd_scene scene;
        pd_error err = {0};
        const char* sets[] = {cases[k].set};
        pd_status st = pd_scene_parse(k_block, "block.json", ".", sets, 1, &scene, &err);
        printf("  %s -> %s: %s\n", cases[k].set, err.path, err.message);
        if (st == PD_OK) {
            pd_world* w = NULL;
            st = pd_create_world(&scene, &w, &err);
            printf("    at creation -> %s: %s\n", err.path, err.message);
            if (w)
                pd_destroy_world(w);
            pd_scene_free(&scene);
        }
        PD_CHECK(st == PD_ERR_BAD_SCENE);
        PD_CHECK(strncmp(err.path, cases[k].path, strlen(cases[k].path)) == 0);
    }
}

/* Pins take the constraints' impulses on their particles as force (world.c's pin reaction m a -
 * f - m g): a block hanging from its pinned top layer carries its weight there. Statics: the
 * pin's force on the body is the weight of the whole block, M g upward; its mean over 0.3-0.6 s
 * (the block rings about its sag) within 2 %. */
PD_TEST(hanging_block_pin_carries_its_weight) {
    g_pd_method = (pd_test_method_ctx){&pd_xpbi_solver, "hanging_block_pin_carries_its_weight",
                                       PD_CAP_ELASTIC, 0};
    const char* sets[] = {"gravity=[0,-9.81,0]",
                          "bodies[0].pins=[{\"region\":{\"type\":\"box\",\"min\":[-1,0.05,-1],"
                          "\"max\":[1,1,1]}}]",
                          "time.dt=\"auto\""};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_block, sets, 3));
    PD_REQUIRE(pd_test_sim_run(&t, 0.3));
    double fy = 0, n = 0, mass = 0;
    while (t.world->time < 0.6 - 1e-9) {
        PD_REQUIRE(pd_test_sim_run(&t, t.world->time + t.world->def.dt));
        fy += t.world->pins[0].force.y, n += 1;
    }
    const pd_particles* p = &t.world->particles;
    for (size_t i = 0; i < p->count; ++i)
        mass += p->mass[i];
    printf("  mean pin force %.5g N over %g steps of %.3g s; weight %.5g N\n", fy / n, n,
           t.world->def.dt, mass * 9.81);
    pd_test_method_check("mean pin force 0.3-0.6 s (N) against the weight", fy / n, mass * 9.81,
                         0.02, 1);
    pd_test_sim_close(&t);
}

/* Von Mises under Eq. 14 (plasticity inside the iterations): a slab 0.2 x 0.06 x 0.2 m (E 1e4
 * Pa, nu 0.3, sigma_Y 50 Pa) between its pinned bottom layer and its top layer, which a pin
 * moves along x by 1 % of the 5 cm gap every 0.05 s (simple shear). Von Mises yields in shear
 * at tau_Y = sigma_Y / sqrt(3) = 28.9 Pa, a shear strain of tau_Y / mu = 0.75 %. The top pin's
 * force over the 0.04 m^2 slab, and the force on its central quarter (away from the free ends,
 * which carry no shear) over that quarter's area, at 6 % shear; the middle layers' plastic strain
 * at 0.4 % shear (still elastic) and at 6 %. */
typedef struct sheared_slab {
    double elastic_plastic; /* the middle layers' largest plastic strain at 0.4 % shear */
    double plastic;         /* ... and their mean at 6 % */
    double pin, central;    /* the top pin's x force over the area (Pa), all of it and the centre */
    double layer_v[8];      /* the central quarter's mean x velocity of each layer (m/s) */
} sheared_slab;

static const char* k_shear =
    "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":50,\"frames\":15},"
    "\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e4,"
    "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"von_mises\",\"yield_stress\":50}}},"
    "\"bodies\":[{\"name\":\"slab\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.2,0.06,0.2]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[1,0.01,1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[-1,0.05,-1],\"max\":[1,1,1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":0.5,\"translate\":[0.005,0,0]}]}]}]}";

/* The same slab between walls as thick as the kernel's support (two pinned layers each, k = 2
 * spacings): 0.08 m thick, the walls' inner layers 5 cm apart as above (shear_between_walls). */
static const char* k_shear_walls =
    "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":50,\"frames\":15},"
    "\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e4,"
    "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"von_mises\",\"yield_stress\":50}}},"
    "\"bodies\":[{\"name\":\"slab\",\"material\":\"m\",\"spacing\":0.01,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.2,0.08,0.2]},"
    "\"pins\":[{\"region\":{\"type\":\"box\",\"min\":[-1,-1,-1],\"max\":[1,0.02,1]}},"
    "{\"region\":{\"type\":\"box\",\"min\":[-1,0.06,-1],\"max\":[1,1,1]},"
    "\"keyframes\":[{\"t\":0,\"translate\":[0,0,0]},{\"t\":0.5,\"translate\":[0.005,0,0]}]}]}]}";

/* The middle layers' (between the walls of `walls` layers) largest and mean plastic strain. */
static void middle_plastic_strain(const pd_test_sim* t, int walls, double* largest, double* mean) {
    const pd_xpbi_state* xs = t->world->solver_state;
    const pd_particles* p = &t->world->particles;
    double sum = 0;
    int n = 0;
    *largest = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->rest[i].y > 0.01 * walls && p->rest[i].y < 0.01 * (4 + walls))
            *largest = fmax(*largest, xs->plastic_strain[i]), sum += xs->plastic_strain[i], n++;
    *mean = sum / n;
}

/* The slab of `walls` pinned layers top and bottom (k_shear: 1, k_shear_walls: 2); the central
 * quarter's force is the top wall's there over the quarter's area (a column of `walls`
 * particles per 1e-4 m^2). */
static int shear_slab_walls(const char* json, int walls, const char* const* sets, int count,
                            sheared_slab* out) {
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, count))
        return 0;
    double mean;
    int ok = pd_test_sim_run(&t, 0.02);
    middle_plastic_strain(&t, walls, &out->elastic_plastic, &mean);
    ok = ok && pd_test_sim_run(&t, 0.3);
    double largest, central = 0;
    middle_plastic_strain(&t, walls, &largest, &out->plastic);
    const pd_particles* p = &t.world->particles;
    int n = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->rest[i].y > 0.01 * (4 + walls) && fabs(p->rest[i].x - 0.1) < 0.05 &&
            fabs(p->rest[i].z - 0.1) < 0.05)
            central += p->force[i].x, n++;
    for (int l = 0; l < 4 + 2 * walls; ++l) {
        int in = 0;
        out->layer_v[l] = 0;
        for (size_t i = 0; i < p->count; ++i)
            if (fabs(p->rest[i].y - (0.005 + 0.01 * l)) < 1e-4 && fabs(p->rest[i].x - 0.1) < 0.05 &&
                fabs(p->rest[i].z - 0.1) < 0.05)
                out->layer_v[l] += p->vel[i].x, in++;
        out->layer_v[l] /= in;
    }
    out->pin = fabs(pd_world_pin(t.world, 1).force.x) / 0.04;
    out->central = fabs(central) / ((double)n / walls * 0.01 * 0.01);
    printf("  dt %.3g s; plastic strain of the middle layers at 0.4 %% shear %.3g (largest), at 6 "
           "%% %.4f (mean); the top pin's force over the area at 6 %% shear %.2f Pa, its central "
           "quarter's %.2f Pa (tau_Y %.2f Pa)\n",
           t.world->def.dt, out->elastic_plastic, out->plastic, out->pin, out->central,
           50 / sqrt(3.0));
    pd_test_sim_close(&t);
    return ok;
}

static int shear_slab(const char* const* sets, int count, sheared_slab* out) {
    return shear_slab_walls(k_shear, 1, sets, count, out);
}

PD_TEST(von_mises_slab_shears_at_its_yield_stress) {
    sheared_slab s;
    PD_REQUIRE(shear_slab(NULL, 0, &s));
    double tau_y = 50 / sqrt(3.0);
    PD_CHECK_REL(s.central, tau_y, 0.05);
    PD_CHECK_REL(s.pin, tau_y, 0.05);
    PD_CHECK(s.elastic_plastic == 0);
    PD_CHECK(s.plastic > 0.03); /* 6 % shear less 0.75 % elastic: about 0.05 of Hencky strain */
}

/* Herschel-Bulkley (Yue 2015, herschel_bulkley.h) as Eq. 14's Z: the same slab of a Bingham
 * material (h = 1, eta 100 Pa s) sheared at 0.2 /s flows on Yue's steady flow curve tau =
 * sigma_Y / sqrt 3 + (eta / sqrt 2) (gamma' / sqrt 2)^h = 28.87 + 10 = 38.87 Pa (its relaxation
 * time eta / (2 mu) = 13 ms is short beside the 0.32 s of shearing); at h = 2 the viscous part
 * is (eta / 2) gamma'^2 / sqrt 2 = 1.41 Pa. The top pin carries the slab's mean shear stress
 * (statics of the pinned layer). A viscosity that were ignored would give tau_y, an exponent
 * ignored 10 Pa more. The two slabs are run once for both tests below (ctest runs a file's
 * tests in one process). */
typedef struct hb_slabs {
    int done, ok;
    sheared_slab bingham, thickening;
    double flow1, flow2; /* Yue's flow curve at h = 1 and 2 (Pa) */
} hb_slabs;

static const hb_slabs* herschel_bulkley_slabs(void) {
    static hb_slabs r;
    if (r.done)
        return &r;
    const double tau_y = 50 / sqrt(3.0), rate = 0.01 / 0.05;
    const char* bingham[] = {"materials.m.plasticity={\"model\":\"herschel_bulkley\","
                             "\"yield_stress\":50,\"viscosity\":100}"};
    const char* thickening[] = {"materials.m.plasticity={\"model\":\"herschel_bulkley\","
                                "\"yield_stress\":50,\"viscosity\":100,\"exponent\":2}"};
    r.done = 1;
    r.ok = shear_slab(bingham, 1, &r.bingham) && shear_slab(thickening, 1, &r.thickening);
    r.flow1 = tau_y + 100 / sqrt(2.0) * rate / sqrt(2.0);
    r.flow2 = tau_y + 100 / sqrt(2.0) * pow(rate / sqrt(2.0), 2);
    printf("  top pin over the area: h 1 %.2f Pa, h 2 %.2f Pa; its central quarter: h 1 %.2f Pa, "
           "h 2 %.2f Pa (Yue's flow curve %.2f and %.2f)\n",
           r.bingham.pin, r.thickening.pin, r.bingham.central, r.thickening.central, r.flow1,
           r.flow2);
    return &r;
}

PD_TEST(herschel_bulkley_slab_shears_on_its_flow_curve) {
    const hb_slabs* r = herschel_bulkley_slabs();
    PD_REQUIRE(r->ok);
    PD_CHECK_REL(r->bingham.pin, r->flow1, 0.05);
    PD_CHECK_REL(r->thickening.pin, r->flow2, 0.05);
}

/* The central quarter of the top pin (the von Mises slab's second reading) reads the Bingham
 * slab's viscous part 30 % high where written (41.83 Pa for 38.87). The velocity is why: the six
 * layers move in pairs (measured at 0.32 s: 0, 0.0000, 0.0046, 0.0054, 0.0100, 0.0100 m/s), and
 * Eq. 11 at a layer, which takes the layers on either side, reads 0.23-0.27 /s where the pins
 * shear at 0.2: the viscous part of Yue's curve at 0.245 /s is 12.2 Pa. The return is right for
 * the rate it is given; the rate is not the imposed one. The pairs are the one-layer pins'
 * equilibrium: a pinned layer's one-sided L_p leaves a uniform stress's forces on the first free
 * layer unbalanced (the slab between thick walls below flows on the curve), and an hourglass
 * constraint that straightens them here carries that force to the pins (46.40 Pa with
 * hourglass_plastic's renewed reference, 43.76 with the returned pairs). The whole pin's 40.37
 * is nearer partly because the free sides carry less shear. */
PD_TEST(known_failure_herschel_bulkley_slab_central_quarter_on_its_flow_curve) {
    const hb_slabs* r = herschel_bulkley_slabs();
    PD_REQUIRE(r->ok);
    const double* v = r->bingham.layer_v;
    printf("  h 1, the central quarter's layers' x velocity (m/s):");
    for (int l = 0; l < 6; ++l)
        printf(" %.5f", v[l]);
    printf("; Eq. 11's rate at layers 1-4 (/s): %.3f %.3f %.3f %.3f for 0.2\n",
           (v[2] - v[0]) / 0.02, (v[3] - v[1]) / 0.02, (v[4] - v[2]) / 0.02, (v[5] - v[3]) / 0.02);
    PD_CHECK_REL(v[1], 0.002, 0.1); /* a linear profile between the pins */
    PD_CHECK_REL(r->bingham.central, r->flow1, 0.05);
    PD_CHECK_REL(r->thickening.central, r->flow2, 0.05);
    /* with the hourglass constraint's updated reference (hourglass_plastic, xpbi_plastic.c):
     * the layers move linearly, but the constraint resists the profile's small non-affine part
     * with its elastic stiffness, and the slab carries more */
    const char* held[] = {"materials.m.plasticity={\"model\":\"herschel_bulkley\","
                          "\"yield_stress\":50,\"viscosity\":100}",
                          "solver.xpbi.hourglass_plastic=true"};
    sheared_slab h;
    PD_REQUIRE(shear_slab(held, 2, &h));
    printf("  hourglass_plastic: the layers' x velocity (m/s):");
    for (int l = 0; l < 6; ++l)
        printf(" %.5f", h.layer_v[l]);
    printf("\n");
    PD_CHECK_REL(h.layer_v[1], 0.002, 0.1);
    PD_CHECK_REL(h.central, r->flow1, 0.05);
}

/* The forces of a uniform stress P on a particle i, -P (sum_p V_p^0 g_pi - V_i^0 sum_c g_ic) by
 * Eq. 12-13 (g the corrected kernel gradients of Eq. 10-11, the step's nb_g), over the interior
 * of the cross-method bar (0.3 x 0.08 x 0.08 m at 1 cm, at least 2 spacings from each face) after
 * one step, in units of V / h: 0 on the lattice (each neighbourhood symmetric: a bug in the
 * gradients' bookkeeping shows as 1e-2 and more), and not 0 on a Poisson-disk body, where the
 * particles then relax away from an affine stretch (known_failure_bar_shows_e_on_a_poisson_disk_
 * body, docs/methods/xpbi.md "Not yet"). */
static double uniform_stress_force(const char* sampling) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":1e-4,\"fps\":50,"
             "\"frames\":1},\"gravity\":[0,0,0],\"materials\":{\"m\":{\"density\":1000,"
             "\"youngs_modulus\":1e5,\"poisson_ratio\":0.25}},\"bodies\":[{\"name\":\"bar\","
             "\"material\":\"m\",\"spacing\":0.01,\"sampling\":\"%s\",\"shape\":{\"type\":"
             "\"box\",\"min\":[0,0,0],\"max\":[0.3,0.08,0.08]}}]}",
             sampling);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0) || !pd_test_sim_run(&t, 1e-4))
        return -1;
    const pd_xpbi_state* s = t.world->solver_state;
    const pd_particles* p = &t.world->particles;
    static pd_vec3 net[4096];
    size_t n = p->count < 4096 ? p->count : 4096;
    for (size_t i = 0; i < n; ++i)
        net[i] = pd_v3(0, 0, 0);
    for (size_t q = 0; q < n; ++q)
        for (uint32_t e = s->near.offsets[q]; e < s->near.offsets[q + 1]; ++e) {
            uint32_t b = s->near.indices[e];
            if (b < n)
                net[b] = pd_v3_madd(net[b], s->volume0[q], s->nb_g[e]);
            net[q] = pd_v3_madd(net[q], -s->volume0[q], s->nb_g[e]);
        }
    double sum = 0;
    int m = 0;
    for (size_t i = 0; i < n; ++i) {
        pd_vec3 x = p->pos[i];
        if (x.x < 0.02 || x.x > 0.28 || x.y < 0.02 || x.y > 0.06 || x.z < 0.02 || x.z > 0.06)
            continue;
        sum += pd_v3_len(net[i]) / (s->volume0[i] / 0.01), m++;
    }
    printf(
        "  %s: %zu particles, %d inside: mean |force of a uniform stress| / (V sigma / h) %.3g\n",
        sampling, p->count, m, sum / m);
    pd_test_sim_close(&t);
    return sum / m;
}

/* ... and on the Poisson-disk darts relaxed (poisson_disk_relaxed, src/geometry/sampling.c):
 * 0.030, a twentieth of the raw sample's (10 iterations of the shift gave 0.09, 60 gave 0.025). */
PD_TEST(uniform_stress_forces_cancel_on_the_lattice_not_on_a_poisson_disk_body) {
    double grid = uniform_stress_force("grid"), disk = uniform_stress_force("poisson_disk");
    double relaxed = uniform_stress_force("poisson_disk_relaxed");
    PD_REQUIRE(grid >= 0 && disk >= 0 && relaxed >= 0);
    PD_CHECK(grid < 1e-12);
    PD_CHECK(disk > 0.1);
    PD_CHECK(relaxed < 0.1 * disk);
}

/* Why the central quarter reads high with one pinned layer a side: the pinned layer's kernel
 * neighbourhood is one-sided, and Eq. 10's L_p there weighs the first free layer's velocity by
 * 1 / h where an inner layer weighs its neighbours' by 1 / (2 h) (the support k = 2 h reaches
 * the next layer only). A uniform stress then leaves V sigma / (2 h) on the first free layer
 * (Eq. 12-13's forces do not cancel there): the linear profile is not the discrete
 * equilibrium, the layers move in pairs, and a constraint that straightens them carries that
 * force to the pins. Between walls as thick as the support (two pinned layers a side,
 * k_shear_walls) every free layer's neighbourhood is whole, the walls' inner layers 5 cm apart
 * as before (0.2 /s). With the hourglass pairs returned with the material (hourglass_relaxation
 * plastic) the Bingham layers move linearly (the first free one within 10 % of 0.002 m/s) and
 * the central quarter is on Yue's flow curve within 5 % at h = 1 and 2 (a viscosity ignored
 * reads tau_y = 28.87 Pa, an exponent ignored 10 Pa more); without the constraint the central
 * quarter read 37.16 and 30.01 Pa, the layers 0.00232, 0.00388, 0.00602, 0.00758 m/s. */
PD_TEST(herschel_bulkley_slab_between_thick_walls_flows_on_its_flow_curve_with_returned_pairs) {
    const char* bingham[] = {"materials.m.plasticity={\"model\":\"herschel_bulkley\","
                             "\"yield_stress\":50,\"viscosity\":100}",
                             "solver.xpbi.hourglass_plastic=true",
                             "solver.xpbi.hourglass_relaxation=plastic"};
    const char* thickening[] = {"materials.m.plasticity={\"model\":\"herschel_bulkley\","
                                "\"yield_stress\":50,\"viscosity\":100,\"exponent\":2}",
                                "solver.xpbi.hourglass_plastic=true",
                                "solver.xpbi.hourglass_relaxation=plastic"};
    const double tau_y = 50 / sqrt(3.0), rate = 0.01 / 0.05;
    sheared_slab a, b;
    PD_REQUIRE(shear_slab_walls(k_shear_walls, 2, bingham, 3, &a));
    PD_REQUIRE(shear_slab_walls(k_shear_walls, 2, thickening, 3, &b));
    printf("  the central quarter's layers' x velocity (m/s), h 1:");
    for (int l = 0; l < 8; ++l)
        printf(" %.5f", a.layer_v[l]);
    printf("; h 2:");
    for (int l = 0; l < 8; ++l)
        printf(" %.5f", b.layer_v[l]);
    printf("\n");
    PD_CHECK_REL(a.layer_v[2], 0.002, 0.1); /* the first free layer, 1 cm off the wall */
    PD_CHECK_REL(a.central, tau_y + 100 / sqrt(2.0) * rate / sqrt(2.0), 0.05);
    PD_CHECK_REL(b.central, tau_y + 100 / sqrt(2.0) * pow(rate / sqrt(2.0), 2), 0.05);
}

/* The hourglass constraint with its pairs' misfits returned by the particle's own return
 * (hourglass_relaxation plastic, xpbi_hourglass.c): on the von Mises slab the central quarter
 * at tau_Y within 5 % (the renewed reference, hourglass_relaxation renewal, carried 34.4 Pa:
 * +19 %, resisting the flow's non-affine part elastically); the bar pulled past yield under it
 * is xpbi_plastic.c's. */
PD_TEST(von_mises_slab_shears_at_its_yield_stress_with_returned_hourglass_pairs) {
    const char* sets[] = {"solver.xpbi.hourglass_plastic=true",
                          "solver.xpbi.hourglass_relaxation=plastic"};
    sheared_slab s;
    PD_REQUIRE(shear_slab(sets, 2, &s));
    printf("  the central quarter's layers' x velocity (m/s):");
    for (int l = 0; l < 6; ++l)
        printf(" %.5f", s.layer_v[l]);
    printf("\n");
    PD_CHECK_REL(s.central, 50 / sqrt(3.0), 0.05);
}

/* The triaxial probe (triaxial.c): xpbi's return of Eq. 14 (the material's Hencky return, as
 * plastic_stretches applies it) at the stretches of a confining strain of 1e-3 and a growing
 * isochoric axial one, the onset of flow by bisection, q / p of the Hencky StVK stress there. */
double pd_test_xpbi_triaxial_ratio(double phi) {
    char set[160];
    snprintf(set, sizeof set, "materials.sand.plasticity.friction_angle=%g", phi);
    const char* json =
        "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":50,"
        "\"frames\":1},\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"
        "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"drucker_prager\"}}},"
        "\"bodies\":[{\"name\":\"sand\",\"material\":\"sand\",\"spacing\":0.025,"
        "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.1,0.1]}}]}";
    const char* sets[] = {set};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, 1))
        return -1;
    const pd_xpbi_material* m = &((const pd_xpbi_state*)t.world->solver_state)->mat[0];
    double ratio = pd_test_hencky_triaxial_ratio(&m->yield, m->mu, m->lambda);
    pd_test_sim_close(&t);
    return ratio;
}

/* The semi-implicit variant (solver.xpbi.plasticity semi_implicit: the return at the step's end
 * only, Sec. 5.1, Fig. 9) against Eq. 14's in the iterations, on the sheared slab at dt 4 ms: the
 * iterations of the semi-implicit step solve elasticity alone, so the stress the top pin feels
 * is the yield stress plus one step's elastic increment, tau_Y + mu (d gamma / dt) dt = 28.87 +
 * 3846 x 0.2 x 0.004 = 31.95 Pa (the paper's "overestimation of the material's resistance");
 * the implicit step's stays at tau_Y. A key that were ignored would give one number for both. */
PD_TEST(semi_implicit_plasticity_overshoots_by_one_steps_elastic_increment) {
    const double tau_y = 50 / sqrt(3.0), mu = 1e4 / 2.6, rate = 0.01 / 0.05, dt = 0.004;
    const char* implicit[] = {"time.dt=0.004", "solver.xpbi.plasticity=implicit"};
    const char* semi[] = {"time.dt=0.004", "solver.xpbi.plasticity=semi_implicit"};
    sheared_slab a, b;
    PD_REQUIRE(shear_slab(implicit, 2, &a));
    PD_REQUIRE(shear_slab(semi, 2, &b));
    printf("  central quarter: implicit %.2f Pa (tau_Y %.2f), semi-implicit %.2f Pa (tau_Y + mu "
           "rate dt %.2f)\n",
           a.central, tau_y, b.central, tau_y + mu * rate * dt);
    PD_CHECK_REL(a.central, tau_y, 0.05);
    PD_CHECK_REL(b.central, tau_y + mu * rate * dt, 0.02);
}

/* Time-step consistency (issue 33; Fig. 19's claim for implicit plasticity): a 6 cm cube of von
 * Mises material (125 particles at 12 mm, E 1e4 Pa, sigma_Y 100 Pa: rho g H = 589 Pa, tau_Y / (rho
 * g H) = 0.1) slumps on a floor with friction 0.5; its spread, the 95th percentile of the
 * particles' distances from the axis at 0.3 s (at rest from about 0.25 s), at dt 1e-3 and 1e-4 s.
 * XSPH (Eq. 20) smooths a fraction c of the velocity differences every step, a viscosity
 * c k^2 / (30 dt) that grows as 1 / dt at a fixed c: at the paper's c = 0.01 per step the slump at
 * 1e-4 s is held back by it, whatever the plasticity (known_failure_ below); without it the time
 * step's effect is the plasticity's. `xsph` is one --set sizing XSPH (NULL: the defaults). */
static double slump_spread_run(const char* mode, double dt, const char* xsph) {
    char json[1536], set[64];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":%.17g,\"fps\":20,"
             "\"frames\":6},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e4,"
             "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"von_mises\",\"yield_stress\":"
             "100}}},\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":0.012,"
             "\"shape\":{\"type\":\"box\",\"min\":[-0.03,0,-0.03],\"max\":[0.03,0.06,0.03]}}],"
             "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],"
             "\"friction\":0.5}]}",
             dt);
    snprintf(set, sizeof set, "solver.xpbi.plasticity=%s", mode);
    const char* sets[] = {set, xsph};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, sets, xsph ? 2 : 1))
        return -1;
    if (!pd_test_sim_run(&t, 0.3)) {
        pd_test_sim_close(&t);
        return -1;
    }
    const pd_particles* p = &t.world->particles;
    static double r[256];
    size_t n = p->count < 256 ? p->count : 256;
    for (size_t i = 0; i < n; ++i)
        r[i] = sqrt(p->pos[i].x * p->pos[i].x + p->pos[i].z * p->pos[i].z);
    qsort(r, n, sizeof *r, pd_test_compare_doubles);
    double spread = r[(size_t)(0.95 * (double)(n - 1))];
    printf("  %s, %s, dt %g s: spread %.2f mm (%zu particles)\n", mode,
           xsph ? xsph : "the default XSPH", dt, 1e3 * spread, n);
    pd_test_sim_close(&t);
    return spread;
}

/* A test's pair of spreads, at 1e-3 and 1e-4 s; their ratio printed. */
static double slump_ratio(const char* mode, const char* xsph, double* fine) {
    *fine = slump_spread_run(mode, 1e-4, xsph);
    double coarse = slump_spread_run(mode, 1e-3, xsph);
    printf("  spread at 1e-3 over 1e-4, %s, %s: %.3f\n", mode, xsph ? xsph : "the default XSPH",
           coarse / *fine);
    return coarse;
}

/* Without XSPH: implicit plasticity's spreads within 10 % (an in-loop return that lagged the
 * iterations would behave as the semi-implicit one); the semi-implicit variant's printed beside
 * them (measured: 0.88, its stresses past yield during a step resist more at the larger step). */
PD_TEST(slump_spreads_alike_at_dt_1e3_and_1e4_with_implicit_plasticity) {
    double fine, semi_fine;
    double coarse = slump_ratio("implicit", "solver.xpbi.xsph_viscosity=0", &fine);
    slump_ratio("semi_implicit", "solver.xpbi.xsph_viscosity=0", &semi_fine);
    PD_REQUIRE(fine > 0 && semi_fine > 0);
    PD_CHECK_REL(coarse, fine, 0.1);
}

/* The same with XSPH as Eq. 20 prints it, c = 0.01 every step (xsph_scaling step, the paper's
 * form): 1.19 (implicit) where written. */
PD_TEST(known_failure_slump_spreads_alike_at_dt_1e3_and_1e4_with_xsph) {
    double fine, coarse = slump_ratio("implicit", "solver.xpbi.xsph_scaling=step", &fine);
    PD_REQUIRE(fine > 0);
    PD_CHECK_REL(coarse, fine, 0.1);
}

/* XSPH per unit time (xsph_scaling time: c = 0.01 per xsph_time 1e-4 s, the paper's c at its
 * step): the step at 1e-3 s smooths by 0.1, as much per second as ten steps of 1e-4 s by 0.01
 * each, and the spreads agree within 10 % as without XSPH. Fails if xsph_time were ignored (per
 * step: the 1.19 above). */
PD_TEST(slump_spreads_alike_at_dt_1e3_and_1e4_with_xsph_per_time) {
    double fine, coarse = slump_ratio("implicit", "solver.xpbi.xsph_scaling=time", &fine);
    PD_REQUIRE(fine > 0);
    PD_CHECK_REL(coarse, fine, 0.1);
}

/* The default, XSPH as a viscosity (xsph_scaling viscosity, 1e-4 m^2/s: c = 30 nu dt / k^2, here
 * 5.2e-3 a step of 1e-3 s and 5.2e-4 of 1e-4 s): the spreads agree within 10 %. The runs set
 * nothing but the plasticity: fails if the default went back to per step (the 1.19 above). */
PD_TEST(slump_spreads_alike_at_dt_1e3_and_1e4_with_the_default_xsph) {
    double fine, coarse = slump_ratio("implicit", NULL, &fine);
    PD_REQUIRE(fine > 0);
    PD_CHECK_REL(coarse, fine, 0.1);
}

/* The Bingham slump (issue 33; Pashias, Boger, Summers, Glenister 1996, J. Rheol. 40, "A fifty
 * cent rheometer for yield stress measurement"): a cylinder of a yield-stress fluid, height H =
 * diameter, released on a floor (its mould lifted) comes to rest slumped by s' = (H - H_final) / H
 * = 1 - 2 tau' (1 - ln 2 tau'), tau' = tau_y / (rho g H) (their slump formula, from Murata 1984's
 * quasi-static analysis: the column yields where the weight above exceeds 2 tau_y, its top stays a
 * rigid plug). Here a Bingham material (h = 1, tau_y = yield_stress / sqrt 3, herschel_bulkley.h),
 * H 0.1 m as 8 particles (416 at 12.5 mm), E 1e5 Pa (the weight compresses the column's foot by 1
 * %), on a floor with friction 0.5, with eta 100 Pa s: a plastic viscosity of 50 Pa s keeps the
 * slump slow (a Reynolds number below 1), as the analysis assumes; at eta 20 inertia carries tau' =
 * 0.2's column on to 0.35 (measured). s' is the top particle's drop over H at 1.2 s, when it moves
 * by less than 0.01 H in 0.1 s. */
typedef struct slump_case {
    double tau;     /* tau' */
    double slump;   /* s' measured at the end */
    double settled; /* the slump's change over the last 0.1 s */
} slump_case;

static double top_of(const pd_particles* p) {
    double y = -1e30;
    for (size_t i = 0; i < p->count; ++i)
        y = fmax(y, p->pos[i].y);
    return y;
}

static int bingham_slump(slump_case* c) {
    const double rho = 1000, g = 9.81, h = 0.1, spacing = 0.0125, t_end = 1.2;
    char json[1536];
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"xpbi\",\"time\":{\"dt\":\"auto\",\"fps\":20,"
             "\"frames\":1},\"materials\":{\"m\":{\"density\":%g,\"youngs_modulus\":1e5,"
             "\"poisson_ratio\":0.4,\"plasticity\":{\"model\":\"herschel_bulkley\","
             "\"yield_stress\":%.17g,\"viscosity\":100,\"exponent\":1}}},"
             "\"bodies\":[{\"name\":\"b\",\"material\":\"m\",\"spacing\":%g,"
             "\"shape\":{\"type\":\"cylinder\",\"base\":[0,0,0],\"radius\":%g,\"height\":%g}}],"
             "\"colliders\":[{\"type\":\"plane\",\"point\":[0,0,0],\"normal\":[0,1,0],"
             "\"friction\":0.5}]}",
             rho, sqrt(3.0) * c->tau * rho * g * h, spacing, h / 2, h);
    pd_test_sim t;
    if (!pd_test_sim_open(&t, json, NULL, 0))
        return 0;
    const pd_particles* p = &t.world->particles;
    double top0 = top_of(p), before = 0;
    int ok = pd_test_sim_run(&t, t_end - 0.1);
    before = (top0 - top_of(p)) / h;
    ok = ok && pd_test_sim_run(&t, t_end);
    c->slump = (top0 - top_of(p)) / h;
    c->settled = c->slump - before;
    printf("  tau' %.2f: slump %.3f at %.1f s (%.3f at %.1f s), Pashias %.3f; %zu particles at %g "
           "m, dt %.3g s\n",
           c->tau, c->slump, t_end, before, t_end - 0.1, 1 - 2 * c->tau * (1 - log(2 * c->tau)),
           p->count, spacing, t.world->def.dt);
    pd_test_sim_close(&t);
    return ok;
}

PD_TEST(bingham_slump_matches_pashias) {
    slump_case c[] = {{0.1, 0, 0}, {0.2, 0, 0}};
    for (int k = 0; k < 2; ++k) {
        PD_REQUIRE(bingham_slump(&c[k]));
        double expected = 1 - 2 * c[k].tau * (1 - log(2 * c[k].tau));
        PD_CHECK(fabs(c[k].slump - expected) <= 0.05);
        PD_CHECK(c[k].settled < 0.01);
    }
}
