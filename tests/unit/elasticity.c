/* The elastic constants every method reads (src/constitutive/elastic_constants.h): E, nu and
 * lame [lambda, mu] describe one material either way round, and the default material's two
 * descriptions agree bit for bit. The energies (src/constitutive/energies.h): each stress is
 * the derivative of its energy and each derivative that of its stress, by central
 * differences, and every model is linear elasticity at small strain. */
#include <math.h>

#include "constitutive/elastic_constants.h"
#include "constitutive/energies.h"
#include "math/svd3.h"
#include "test.h"

/* Steel-like and rubber-like numbers: lambda = E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 +
 * nu)) worked by hand, K = E / (3 (1 - 2 nu)), and the lame route gives E and nu back. */
PD_TEST(e_nu_and_lame_describe_one_material) {
    pd_elastic c = pd_elastic_from_e_nu(200e9, 0.3);
    PD_CHECK_REL(c.lambda, 200e9 * 0.3 / (1.3 * 0.4), 1e-14); /* 115.38 GPa */
    PD_CHECK_REL(c.mu, 200e9 / 2.6, 1e-14);                   /* 76.92 GPa */
    PD_CHECK_REL(c.K, 200e9 / 1.2, 1e-14);                    /* 166.67 GPa */
    PD_CHECK_REL(c.K, c.lambda + 2 * c.mu / 3, 1e-14);
    pd_elastic back = pd_elastic_from_lame(c.lambda, c.mu);
    PD_CHECK_REL(back.E, 200e9, 1e-14);
    PD_CHECK_REL(back.nu, 0.3, 1e-14);
    PD_CHECK_REL(back.K, c.K, 1e-14);
    pd_elastic rubber = pd_elastic_from_lame(1e6, 1e4); /* nu near 1/2 */
    PD_CHECK(rubber.lambda == 1e6 && rubber.mu == 1e4);
    PD_CHECK_REL(rubber.nu, 1e6 / (2 * 1.01e6), 1e-14);
    PD_CHECK_REL(rubber.E, 1e4 * 3.02e6 / 1.01e6, 1e-14);
}

/* pd_material_elastic takes the lame pair when the scene gave one, and E, nu otherwise. */
PD_TEST(a_material_takes_what_it_was_given) {
    pd_material_def m = pd_default_material_def();
    pd_elastic c = pd_material_elastic(&m);
    PD_CHECK(c.E == 1e5 && c.nu == 0.25);
    PD_CHECK(c.lambda == m.lame_lambda && c.mu == m.lame_mu); /* 4e4 each, exactly */
    m.has_lame = 1, m.lame_lambda = 3e4, m.lame_mu = 2e4;     /* E, nu left stale */
    c = pd_material_elastic(&m);
    PD_CHECK(c.lambda == 3e4 && c.mu == 2e4);
    PD_CHECK_REL(c.E, 2e4 * 13e4 / 5e4, 1e-14);
    PD_CHECK_REL(c.nu, 0.3, 1e-14);
}

/* ---- the energies (src/constitutive/energies.h) */

static pd_real uniform(unsigned* seed) {
    *seed = *seed * 1103515245u + 12345u;
    return (pd_real)((*seed >> 8) & 0xFFFFFF) / (pd_real)0x1000000;
}

/* A rotation from a random axis and angle (Rodrigues). */
static pd_mat3 random_rotation(unsigned* seed) {
    pd_vec3 k = pd_v3(uniform(seed) - 0.5, uniform(seed) - 0.5, uniform(seed) - 0.5 + 1e-3);
    k = pd_v3_scale(k, 1 / pd_v3_len(k));
    pd_real t = 6.283185307 * uniform(seed), c = cos(t), s = sin(t), v = 1 - c;
    pd_mat3 r;
    r.m[0][0] = c + v * k.x * k.x, r.m[0][1] = v * k.x * k.y - s * k.z;
    r.m[0][2] = v * k.x * k.z + s * k.y, r.m[1][0] = v * k.x * k.y + s * k.z;
    r.m[1][1] = c + v * k.y * k.y, r.m[1][2] = v * k.y * k.z - s * k.x;
    r.m[2][0] = v * k.x * k.z - s * k.y, r.m[2][1] = v * k.y * k.z + s * k.x;
    r.m[2][2] = c + v * k.z * k.z;
    return r;
}

/* Stretches between 0.7 (compression) and 1.3 (tension); k = 0 all compressed. */
static pd_vec3 random_stretches(unsigned* seed, int k) {
    pd_real lo = 0.7, span = k == 0 ? 0.25 : 0.6;
    return pd_v3(lo + span * uniform(seed), lo + span * uniform(seed), lo + span * uniform(seed));
}

static pd_mat3 random_matrix(unsigned* seed) {
    pd_mat3 m;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            m.m[r][c] = uniform(seed) - 0.5;
    return m;
}

static pd_real frob(pd_mat3 a) {
    return sqrt(pd_m3_frob2(a));
}

typedef struct model {
    const char* name;
    pd_real (*energy)(pd_real, pd_real, pd_mat3);
    pd_mat3 (*piola)(pd_real, pd_real, pd_mat3);
    pd_mat3 (*differential)(pd_real, pd_real, pd_mat3, pd_mat3);
} model;

static pd_mat3 linear_differential(pd_real l, pd_real m, pd_mat3 F, pd_mat3 dF) {
    (void)F;
    return pd_linear_piola_differential(l, m, dF);
}

static const model k_models[] = {
    {"linear", pd_linear_energy, pd_linear_piola, linear_differential},
    {"stvk", pd_stvk_energy, pd_stvk_piola, pd_stvk_piola_differential},
    {"fixed_corotated", pd_fixed_corotated_energy, pd_fixed_corotated_piola,
     pd_fixed_corotated_piola_differential},
};

/* P against central differences of Psi, entry by entry, and dP against central differences
 * of P along a random dF, at 20 F = R1 diag(s) R2 each (compressed, stretched, rotated). Worst
 * error relative to |P| (|dP|): a factor 2 or a sign would be O(1). */
PD_TEST(piola_and_its_differential_match_finite_differences) {
    const pd_real lambda = 3.0, mu = 2.0, h = 1e-6;
    for (int m = 0; m < 3; ++m) {
        const model* md = &k_models[m];
        unsigned seed = 5 + m;
        pd_real worst_p = 0, worst_d = 0;
        for (int k = 0; k < 20; ++k) {
            pd_vec3 s = random_stretches(&seed, k);
            pd_mat3 F = pd_m3_mul(pd_m3_mul(random_rotation(&seed), pd_m3_diag(s.x, s.y, s.z)),
                                  random_rotation(&seed));
            pd_mat3 P = md->piola(lambda, mu, F), fd;
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) {
                    pd_mat3 fp = F, fm = F;
                    fp.m[r][c] += h, fm.m[r][c] -= h;
                    fd.m[r][c] =
                        (md->energy(lambda, mu, fp) - md->energy(lambda, mu, fm)) / (2 * h);
                }
            worst_p = fmax(worst_p, frob(pd_m3_sub(P, fd)) / frob(P));
            pd_mat3 dF = random_matrix(&seed), dP = md->differential(lambda, mu, F, dF);
            pd_mat3 Pp = md->piola(lambda, mu, pd_m3_add(F, pd_m3_scale(dF, h)));
            pd_mat3 Pm = md->piola(lambda, mu, pd_m3_sub(F, pd_m3_scale(dF, h)));
            pd_mat3 dfd = pd_m3_scale(pd_m3_sub(Pp, Pm), 1 / (2 * h));
            worst_d = fmax(worst_d, frob(pd_m3_sub(dP, dfd)) / frob(dP));
        }
        printf("  %s: |P - dPsi/dF| / |P| <= %.2e, |dP - FD| / |dP| <= %.2e\n", md->name, worst_p,
               worst_d);
        PD_CHECK(worst_p < 1e-6);
        PD_CHECK(worst_d < 1e-6);
    }
}

typedef struct principal_model {
    const char* name;
    pd_real (*energy)(pd_real, pd_real, pd_vec3);
    pd_vec3 (*kirchhoff)(pd_real, pd_real, pd_vec3);
    pd_mat3 (*derivative)(pd_real, pd_real, pd_vec3);
} principal_model;

static const principal_model k_principal[] = {
    {"hencky", pd_hencky_energy, pd_hencky_kirchhoff, pd_hencky_kirchhoff_derivative},
    {"neo_hookean", pd_neo_hookean_energy, pd_neo_hookean_kirchhoff,
     pd_neo_hookean_kirchhoff_derivative},
    {"fixed_corotated", pd_fixed_corotated_principal_energy, pd_fixed_corotated_kirchhoff,
     pd_fixed_corotated_kirchhoff_derivative},
};

static pd_real comp(pd_vec3 v, int a) {
    return a == 0 ? v.x : a == 1 ? v.y : v.z;
}

static pd_vec3 nudge(pd_vec3 v, int a, pd_real h) {
    return pd_v3(v.x + (a == 0) * h, v.y + (a == 1) * h, v.z + (a == 2) * h);
}

/* Psi of F through its singular values. */
static pd_real energy_of_f(const principal_model* pm, pd_real c1, pd_real c2, pd_mat3 F) {
    pd_mat3 U, V;
    pd_vec3 s;
    pd_svd3(F, &U, &s, &V);
    return pm->energy(c1, c2, s);
}

/* In principal stretches: tau_a against s_a dPsi/ds_a and d tau_a / d s_b against central
 * differences of tau; on F = U diag(s) V^T: pd_principal_piola against central differences
 * of Psi(F) entry by entry (Psi through F's own SVD), at 20 random states each. */
PD_TEST(principal_stresses_and_derivatives_match_finite_differences) {
    const pd_real c1 = 3.0, c2 = 2.0, h = 1e-6; /* lambda, mu; or mu, kappa */
    for (int m = 0; m < 3; ++m) {
        const principal_model* pm = &k_principal[m];
        unsigned seed = 17 + m;
        pd_real worst_t = 0, worst_d = 0, worst_p = 0;
        for (int k = 0; k < 20; ++k) {
            pd_vec3 s = random_stretches(&seed, k), tau = pm->kirchhoff(c1, c2, s);
            pd_mat3 d = pm->derivative(c1, c2, s);
            pd_real tn = pd_v3_len(tau), dn = frob(d);
            for (int b = 0; b < 3; ++b) {
                pd_vec3 sp = nudge(s, b, h), sm = nudge(s, b, -h);
                pd_real dpsi = (pm->energy(c1, c2, sp) - pm->energy(c1, c2, sm)) / (2 * h);
                worst_t = fmax(worst_t, fabs(comp(s, b) * dpsi - comp(tau, b)) / tn);
                pd_vec3 tp = pm->kirchhoff(c1, c2, sp), tm = pm->kirchhoff(c1, c2, sm);
                for (int a = 0; a < 3; ++a) {
                    pd_real fd = (comp(tp, a) - comp(tm, a)) / (2 * h);
                    worst_d = fmax(worst_d, fabs(fd - d.m[a][b]) / dn);
                }
            }
            pd_mat3 U = random_rotation(&seed), V = random_rotation(&seed);
            pd_mat3 F = pd_m3_mul(pd_m3_mul(U, pd_m3_diag(s.x, s.y, s.z)), pd_m3_transpose(V));
            pd_mat3 P = pd_principal_piola(U, s, V, tau), fd;
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) {
                    pd_mat3 fp = F, fm = F;
                    fp.m[r][c] += h, fm.m[r][c] -= h;
                    fd.m[r][c] =
                        (energy_of_f(pm, c1, c2, fp) - energy_of_f(pm, c1, c2, fm)) / (2 * h);
                }
            worst_p = fmax(worst_p, frob(pd_m3_sub(P, fd)) / frob(P));
        }
        printf("  %s: tau %.2e, d tau / d s %.2e, P on F %.2e (worst relative errors)\n", pm->name,
               worst_t, worst_d, worst_p);
        PD_CHECK(worst_t < 1e-6);
        PD_CHECK(worst_d < 1e-6);
        PD_CHECK(worst_p < 1e-6);
    }
}

static pd_real ddot(pd_mat3 a, pd_mat3 b) {
    pd_real sum = 0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            sum += a.m[r][c] * b.m[r][c];
    return sum;
}

/* P of a principal model at F = U diag(s) V^T (s > 0). */
static pd_mat3 principal_p(const principal_model* pm, pd_real c1, pd_real c2, pd_mat3 F) {
    pd_mat3 U, V;
    pd_vec3 s;
    pd_svd3(F, &U, &s, &V);
    return pd_principal_piola(U, s, V, pm->kirchhoff(c1, c2, s));
}

/* pd_principal_piola_differential from the stretches' gradient and Hessian against central
 * differences of P along a random dF, at 20 random states per model and at two stretches that
 * meet (the pair factor's limit); the fixed corotated energy in stretches equals the one on F;
 * the projected (definite) differential gives dF : dP >= 0 at states compressed to 0.3, where
 * the plain one does not, and equals the plain one at a state stretched a little (every mode
 * stable). */
PD_TEST(principal_differential_matches_finite_differences) {
    const pd_real c1 = 3.0, c2 = 2.0, h = 1e-6;
    for (int m = 0; m < 3; ++m) {
        const principal_model* pm = &k_principal[m];
        unsigned seed = 41 + m;
        pd_real worst = 0, worst_def = 0, worst_plain = 0, near_rest = 0;
        for (int k = 0; k < 21; ++k) {
            pd_vec3 s = k == 20 ? pd_v3(1.1, 1.1, 0.9) : random_stretches(&seed, k);
            pd_mat3 U = random_rotation(&seed), V = random_rotation(&seed), H;
            pd_mat3 F = pd_m3_mul(pd_m3_mul(U, pd_m3_diag(s.x, s.y, s.z)), pd_m3_transpose(V));
            pd_vec3 g;
            pd_principal_gradient_hessian(s, pm->kirchhoff(c1, c2, s), pm->derivative(c1, c2, s),
                                          &g, &H);
            pd_mat3 dF = random_matrix(&seed);
            pd_mat3 dP = pd_principal_piola_differential(U, s, V, g, H, dF, 0);
            pd_mat3 fd =
                pd_m3_scale(pd_m3_sub(principal_p(pm, c1, c2, pd_m3_add(F, pd_m3_scale(dF, h))),
                                      principal_p(pm, c1, c2, pd_m3_sub(F, pd_m3_scale(dF, h)))),
                            1 / (2 * h));
            worst = fmax(worst, frob(pd_m3_sub(dP, fd)) / frob(dP));
            pd_vec3 c = pd_v3(0.3 + 0.1 * uniform(&seed), 0.3, 1.0); /* squeezed */
            pd_principal_gradient_hessian(c, pm->kirchhoff(c1, c2, c), pm->derivative(c1, c2, c),
                                          &g, &H);
            pd_mat3 dc = random_matrix(&seed);
            worst_def =
                fmin(worst_def, ddot(dc, pd_principal_piola_differential(U, c, V, g, H, dc, 1)));
            worst_plain =
                fmin(worst_plain, ddot(dc, pd_principal_piola_differential(U, c, V, g, H, dc, 0)));
        }
        pd_vec3 r = pd_v3(1.01, 1.005, 1.002), g; /* stretched a little: stable */
        pd_mat3 H, dF = random_matrix(&seed), I = pd_m3_identity();
        pd_principal_gradient_hessian(r, pm->kirchhoff(c1, c2, r), pm->derivative(c1, c2, r), &g,
                                      &H);
        near_rest = frob(pd_m3_sub(pd_principal_piola_differential(I, r, I, g, H, dF, 1),
                                   pd_principal_piola_differential(I, r, I, g, H, dF, 0)));
        printf("  %s: |dP - FD| / |dP| <= %.2e; min dF : dP squeezed %.3g projected, %.3g plain; "
               "projection near rest changes dP by %.2e\n",
               pm->name, worst, worst_def, worst_plain, near_rest);
        PD_CHECK(worst < 1e-6);
        PD_CHECK(worst_def >= -1e-12);
        PD_CHECK(near_rest < 1e-12);
    }
    unsigned seed = 3;
    pd_vec3 s = random_stretches(&seed, 1);
    pd_mat3 F = pd_m3_mul(pd_m3_mul(random_rotation(&seed), pd_m3_diag(s.x, s.y, s.z)),
                          random_rotation(&seed));
    PD_CHECK_REL(pd_fixed_corotated_principal_energy(c1, c2, s),
                 pd_fixed_corotated_energy(c1, c2, F), 1e-12);
}

/* Every model meets linear elasticity at small strain with the same lambda and mu (for
 * neo-Hookean kappa = lambda + 2 mu / 3): P at F = I + e, e a stretch and shear of 1e-5,
 * against the linear P; the objective ones give Psi(Q F) = Psi(F), small strain does not. A
 * model whose constants were swapped or halved fails the first. */
PD_TEST(every_model_is_linear_elasticity_at_small_strain) {
    const pd_real lambda = 3.0, mu = 2.0, kappa = lambda + 2 * mu / 3, eps = 1e-5;
    pd_mat3 e = pd_m3_zero();
    e.m[0][0] = eps, e.m[1][1] = -0.4 * eps, e.m[2][2] = 0.3 * eps;
    e.m[0][1] = e.m[1][0] = 0.7 * eps, e.m[1][2] = e.m[2][1] = -0.2 * eps;
    pd_mat3 F = pd_m3_add(pd_m3_identity(), e), P0 = pd_linear_piola(lambda, mu, F), U, V;
    pd_vec3 s;
    pd_svd3(F, &U, &s, &V);
    pd_mat3 P[4] = {pd_stvk_piola(lambda, mu, F), pd_fixed_corotated_piola(lambda, mu, F),
                    pd_principal_piola(U, s, V, pd_hencky_kirchhoff(lambda, mu, s)),
                    pd_principal_piola(U, s, V, pd_neo_hookean_kirchhoff(mu, kappa, s))};
    pd_real err[4];
    for (int k = 0; k < 4; ++k)
        err[k] = frob(pd_m3_sub(P[k], P0)) / frob(P0);
    printf("  |P - P_linear| / |P_linear|: stvk %.2e, fixed corotated %.2e, hencky %.2e, "
           "neo-Hookean %.2e\n",
           err[0], err[1], err[2], err[3]);
    for (int k = 0; k < 4; ++k)
        PD_CHECK(err[k] < 1e-4); /* O(eps) */
    unsigned seed = 23;
    pd_mat3 Q = random_rotation(&seed);
    pd_mat3 G = pd_m3_mul(pd_m3_diag(1.2, 0.8, 0.9), random_rotation(&seed)), QG = pd_m3_mul(Q, G);
    PD_CHECK_REL(pd_stvk_energy(lambda, mu, QG), pd_stvk_energy(lambda, mu, G), 1e-12);
    PD_CHECK_REL(pd_fixed_corotated_energy(lambda, mu, QG),
                 pd_fixed_corotated_energy(lambda, mu, G), 1e-12);
    PD_CHECK(fabs(pd_linear_energy(lambda, mu, QG) / pd_linear_energy(lambda, mu, G) - 1) > 1e-3);
}
