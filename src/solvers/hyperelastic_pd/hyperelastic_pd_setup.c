/* hyperelastic_pd set-up (Xu 2018): materials mapped to lambda, mu (consistently or by Eq. 26),
 * families with the normalised weights of Eq. 19, and the constant matrix L + M/h^2 of Eq. 23
 * factored once. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "constitutive/elastic_constants.h"
#include "core/alloc.h"
#include "io/checkpoint_file.h"
#include "core/error.h"
#include "neighbor/isotropy.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"
#include "world/bodies.h"
#include "world/world.h"

/* Both mappings diverge at nu = 1/2; above this the matrix is too stiff to factor usefully. */
#define HPD_NU_MAX 0.49

/* Eq. 18 needs two orthogonal directions and sigma_1 sigma_2 sigma_3 = 1 (Sec. 4.2: G then
 * shapes the stiffness without changing its amount); refused rather than normalised, so that
 * the scene says what runs. */
static pd_status check_anisotropy(const pd_material_def* m, const char* path, pd_error* err) {
    const pd_hpd_material_params* mp = (const pd_hpd_material_params*)m->method_params;
    if (!mp->anisotropy)
        return PD_OK;
    pd_real l1 = pd_v3_len(mp->direction1), l2 = pd_v3_len(mp->direction2);
    char at[PD_PATH_MAX];
    snprintf(at, sizeof at, "%s.anisotropy", path);
    if (!(l1 > 0) || !(l2 > 0))
        return pd_fail(err, PD_ERR_BAD_SCENE, at,
                       "give both material directions, direction1 and direction2 (non-zero)");
    pd_real c = pd_v3_dot(mp->direction1, mp->direction2) / (l1 * l2);
    if (fabs(c) > 1e-6)
        return pd_fail(err, PD_ERR_BAD_SCENE, at,
                       "direction1 and direction2 must be orthogonal (cosine %.3g): they are "
                       "two columns of the rotation R of Eq. 18",
                       c);
    pd_vec3 sg = mp->stretches;
    pd_real prod = sg.x * sg.y * sg.z;
    if (fabs(prod - 1) > 1e-6) {
        pd_real k = cbrt(prod);
        snprintf(at, sizeof at, "%s.anisotropy.stretches", path);
        return pd_fail(err, PD_ERR_BAD_SCENE, at,
                       "Eq. 18 needs sigma_1 sigma_2 sigma_3 = 1 (got %.6g): e.g. [%.6g, %.6g, "
                       "%.6g] keeps the ratios",
                       prod, sg.x / k, sg.y / k, sg.z / k);
    }
    return PD_OK;
}

/* Under a small strain e, with sum_j w_ij V_j = 1, isotropic families and g''(1) = h''(1) = 2
 * (every A_n, B_n), Eq. 12-14 give W = lambda (tr e)^2 / 9 + mu (2 e:e + (tr e)^2) / 15: Lame
 * constants lambda_0 = 2 lambda / 9 + 2 mu / 15 and mu_0 = 2 mu / 15 (the bond term carries a
 * volumetric part, as Eq. 10's k/2 - alpha m / 18 does). Solved for lambda and mu, the
 * consistent mapping; Eq. 26 sets 2 lambda / 9 = lambda_0 and counts that part twice. */
void pd_hpd_lame(int mapping, pd_real E, pd_real nu, pd_real* lambda, pd_real* mu) {
    *mu = 15 * E / (4 * (1 + nu)); /* both: mu_0 = 2 mu / 15 */
    if (mapping == PD_HPD_LAME_PAPER_EQ26)
        *lambda = 9 * E * nu / (2 * (1 + nu) * (1 - 2 * nu)); /* Eq. 26 */
    else
        *lambda =
            9 * E * (4 * nu - 1) / (4 * (1 + nu) * (1 - 2 * nu)); /* 9 (lambda_0 - mu_0) / 2 */
}

static int same_basis(const pd_hpd_basis* f, const pd_hpd_basis* g) {
    for (int n = 0; n < PD_HPD_ORDERS; ++n)
        if (f->a[n] != g->a[n] || f->b[n] != g->b[n])
            return 0;
    return 1;
}

/* lambda < 0 (the consistent mapping below nu = 1/4) keeps the energy bounded below only
 * through the bond term: with g = h convex and sum_j w_ij V_j = 1, Jensen gives
 * sum_j w_ij V_j h(tau_ij) >= h(theta_i), so W_i >= (lambda + mu) h(theta_i), lambda / mu >=
 * -0.6. With g != h nothing bounds lambda g(theta) from below: a particle could gain energy
 * without end by changing its volume. */
static pd_status check_negative_lambda(const pd_material_def* m, const pd_hpd_params* prm,
                                       const char* path, pd_error* err) {
    const pd_hpd_material_params* mp = (const pd_hpd_material_params*)m->method_params;
    pd_elastic el = pd_material_elastic(m);
    pd_real lambda, mu;
    pd_hpd_lame(prm->lame_mapping, el.E, el.nu, &lambda, &mu);
    pd_hpd_basis g = pd_hpd_basis_of(mp, 0), h = pd_hpd_basis_of(mp, 1);
    if (lambda >= 0 || same_basis(&g, &h))
        return PD_OK;
    char at[PD_PATH_MAX];
    snprintf(at, sizeof at, "%s.hyperelastic", path);
    return pd_fail(err, PD_ERR_BAD_SCENE, at,
                   "nu = %.3g maps to lambda = %.3g E < 0 (solver.lame_mapping consistent, below "
                   "nu = 1/4), which is bounded below only when g = h (then W >= (lambda + mu) "
                   "h(theta)); here g != h: give g = h, nu >= 0.25, or lame_mapping paper_eq26",
                   el.nu, lambda / el.E);
}

static int any_given(const pd_param_reals* c) {
    for (int k = 0; k < c->count; ++k)
        if (c->v[k] != 0)
            return 1;
    return 0;
}

/* A g or h given with negative coefficients (issue 34) must stay convex over the stretches a
 * run reaches, [PD_HPD_CONVEX_LO, PD_HPD_CONVEX_HI]: g'' > 0 and h'' > 0 are Sec. 4's third
 * condition, and the bound W_i >= (lambda + mu) h(theta_i) (Jensen, for lambda < 0) needs h
 * convex. Non-negative combinations pass by construction; the presets are not checked (StVK's
 * Eq. 28 is concave below 1/sqrt(3), as StVK itself). Refused at the block, naming the least
 * stretch where f'' <= 0. */
static pd_status check_convex(const pd_hpd_material_params* mp, const char* path, pd_error* err) {
    for (int which_h = 0; which_h < 2; ++which_h) {
        if (!any_given(which_h ? &mp->h : &mp->g))
            continue;
        pd_hpd_basis f = pd_hpd_basis_of(mp, which_h);
        pd_real s = pd_hpd_basis_first_concave(&f, PD_HPD_CONVEX_LO, PD_HPD_CONVEX_HI);
        if (s == 0)
            continue;
        char at[PD_PATH_MAX];
        snprintf(at, sizeof at, "%s.hyperelastic.%s", path, which_h ? "h" : "g");
        return pd_fail(err, PD_ERR_BAD_SCENE, at,
                       "%s is not convex at stretch %.3g (%s'' = %.3g there): negative "
                       "coefficients are accepted only where the combination stays convex over "
                       "stretches %g to %g (Sec. 4's %s'' > 0, which bounds the energy below)",
                       which_h ? "h" : "g", s, which_h ? "h" : "g", pd_hpd_basis_curvature(&f, s),
                       PD_HPD_CONVEX_LO, PD_HPD_CONVEX_HI, which_h ? "h" : "g");
    }
    return PD_OK;
}

pd_status pd_hpd_check_material(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err) {
    const pd_hpd_params* prm = params;
    const pd_hpd_material_params* mp = (const pd_hpd_material_params*)m->method_params;
    pd_status st = pd_contact_check_friction(prm->contact, mp->contact_friction, path, err);
    if (st != PD_OK)
        return st;
    pd_elastic el = pd_material_elastic(m);
    pd_real nu = el.nu, lambda = 0, mu = 0;
    if (nu < 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "hyperelastic_pd maps Poisson ratios in [0, %.2f] (got %.3g): a negative "
                       "one gives lambda < 0 under Eq. 26 (which breaks g'' > 0, Sec. 4) and "
                       "lambda / mu below -0.6 under the consistent mapping, past the bound "
                       "W >= (lambda + mu) h(theta) was checked for",
                       HPD_NU_MAX, nu);
    if (nu > HPD_NU_MAX) {
        if (nu < 0.5)
            pd_hpd_lame(prm->lame_mapping, 1, nu, &lambda, &mu);
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "hyperelastic_pd maps Poisson ratios in [0, %.2f] (got %.3g): lambda "
                       "grows without bound as nu nears 1/2 (%.0f times E at nu = %.3g), and "
                       "the factored matrix of Sec. 5.2 drowns the inertia",
                       HPD_NU_MAX, nu, nu < 0.5 ? lambda : INFINITY, nu);
    }
    if ((st = check_convex(mp, path, err)) != PD_OK)
        return st;
    st = check_negative_lambda(m, prm, path, err);
    return st == PD_OK ? check_anisotropy(m, path, err) : st;
}

/* The mapping (pd_hpd_lame) and the material's g and h (hyperelastic_pd_basis.c). */
static pd_hpd_material map_material(const pd_material_def* m, int mapping) {
    const pd_hpd_material_params* mp = (const pd_hpd_material_params*)m->method_params;
    pd_elastic el = pd_material_elastic(m);
    pd_hpd_material out;
    pd_hpd_lame(mapping, el.E, el.nu, &out.lambda, &out.mu);
    out.g = pd_hpd_basis_of(mp, 0);
    out.h = pd_hpd_basis_of(mp, 1);
    out.g2 = pd_hpd_basis_curvature(&out.g, 1);
    out.h2 = pd_hpd_basis_curvature(&out.h, 1);
    out.anisotropic = mp->anisotropy;
    if (mp->anisotropy) {
        out.axis[0] = pd_v3_scale(mp->direction1, 1 / pd_v3_len(mp->direction1));
        out.axis[1] = pd_v3_scale(mp->direction2, 1 / pd_v3_len(mp->direction2));
        out.axis[2] = pd_v3_cross(out.axis[0], out.axis[1]);
        out.sigma[0] = mp->stretches.x;
        out.sigma[1] = mp->stretches.y;
        out.sigma[2] = mp->stretches.z;
    }
    out.critical_stretch = mp->fracture ? mp->critical_stretch : INFINITY;
    return out;
}

/* Eq. 18 with R's columns the material directions d_k: R^T e holds e's components along them
 * (the paper writes R e, which reads the same only for a symmetric R). */
pd_real pd_hpd_anisotropy(const pd_hpd_material* m, pd_vec3 e) {
    if (!m->anisotropic)
        return 1;
    pd_real sum = 0;
    for (int k = 0; k < 3; ++k) {
        pd_real c = m->sigma[k] * pd_v3_dot(m->axis[k], e);
        sum += c * c;
    }
    return sqrt(sum);
}

/* c_i of Eq. 19: sum_j w_ij V_j q_ij = 1 over i's own family (q: the surface correction's
 * factors on theta, 1 without), so that theta_i = 1 at rest for a
 * particle at a surface as in the bulk (g'(theta) = 0 there: no stress without deformation,
 * the first condition of Sec. 4). */
void pd_hpd_normalise_weights(pd_hpd_state* s, const pd_particles* p) {
    for (uint32_t i = 0; i < s->n; ++i) {
        s->delta[i] = s->prm.horizon * p->spacing[i];
        pd_real sum = 0;
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            pd_real len = pd_v3_len(pd_family_xi(&s->fam, i, b));
            sum += pd_hpd_weight_shape(s->prm.weight, len / s->delta[i]) * p->volume[s->fam.j[b]] *
                   s->bond_q[b];
        }
        s->norm[i] = sum > 0 ? 1 / sum : 0;
    }
}

pd_real* pd_hpd_fullest_families(const pd_hpd_state* s, const pd_particles* p, size_t* count) {
    int bodies = 0;
    for (size_t i = 0; i < s->n; ++i)
        bodies = p->body[i] + 1 > bodies ? p->body[i] + 1 : bodies;
    *count = (size_t)bodies + 1;
    pd_real* fullest = pd_calloc(*count, sizeof *fullest);
    if (!fullest)
        return NULL;
    for (uint32_t i = 0; i < s->n; ++i)
        fullest[p->body[i]] = fmax(fullest[p->body[i]], pd_family_volume(&s->fam, p->volume, i));
    return fullest;
}

/* Interior families, those whose volume sum_j V_j reaches 0.99 of the fullest of their body's,
 * go into the fit of the direction factor. A family one bond short (of 32 on a grid: 0.97) is
 * left out: such families made the fitted mean isotropic but a full family's xxxx 0.198 (a
 * threshold of 0.95, measured). */
static pd_status fit_interior(const pd_hpd_state* s, const pd_particles* p, pd_moment_fit* fit) {
    size_t count;
    pd_real* fullest = pd_hpd_fullest_families(s, p, &count);
    if (!fullest)
        return PD_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < s->n; ++i)
        if (pd_family_volume(&s->fam, p->volume, i) >= 0.99 * fullest[p->body[i]])
            pd_moment_fit_add(fit, &s->fam, p->volume, i);
    pd_free(fullest, count * sizeof *fullest);
    return PD_OK;
}

/* G of each bond: its material's orthotropy (Eq. 18) times 1, or with isotropic_weights the
 * factor f(n) of its direction fitted on the interior families (neighbor/isotropy.h) for the
 * constant weight, times with surface_correction the factor of a cut family
 * (hyperelastic_pd_surface.c). A cubic lattice's families are stiffer along its axes (fourth moment
 * xxxx 0.215 against the isotropic 0.2 at a horizon of 2.01), which Eq. 26 assumes they are not.
 * bond_g[b] is i's G of its bond b; the opposite bond holds j's. */
static pd_status direction_weights(pd_hpd_state* s, const pd_particles* p) {
    pd_direction_weight dw;
    memset(&dw, 0, sizeof dw);
    if (s->prm.isotropic_weights && s->prm.weight == PD_HPD_WEIGHT_CONSTANT) {
        pd_moment_fit* fit = pd_calloc(1, sizeof *fit);
        pd_status st = fit ? fit_interior(s, p, fit) : PD_ERR_OUT_OF_MEMORY;
        if (st == PD_OK)
            pd_moment_fit_solve(fit, &dw);
        pd_free(fit, sizeof *fit);
        if (st != PD_OK)
            return st;
    }
    for (uint32_t i = 0; i < s->n; ++i)
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            pd_vec3 X = pd_family_xi(&s->fam, i, b);
            s->bond_g[b] = pd_direction_weight_at(&dw, pd_v3_scale(X, 1 / pd_v3_len(X)));
        }
    if (s->prm.surface_correction) { /* on the lattice's factor, before the material's */
        pd_status st = pd_hpd_surface_correction(s, p);
        if (st != PD_OK)
            return st;
    }
    for (uint32_t i = 0; i < s->n; ++i)
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            pd_vec3 X = pd_family_xi(&s->fam, i, b);
            pd_vec3 e = pd_v3_scale(X, 1 / pd_v3_len(X));
            s->bond_g[b] *= pd_hpd_anisotropy(&s->mat[s->material[i]], e);
        }
    return PD_OK;
}

/* With lambda < 0 the coupling of Eq. 23 per bond, lambda g''(1) + mu G h''(1), is positive
 * only where G > -lambda g''(1) / (mu h''(1)) (0.6 at nu = 0): a strong anisotropy (Eq. 18)
 * with a small sigma breaks it, and with it the bound W_i >= (lambda + mu min G) h(theta_i)
 * and the factor. Refused at the material, naming the first such G. */
static pd_status check_bond_couplings(const pd_hpd_state* s, const pd_scene* scene, pd_error* err) {
    for (uint32_t i = 0; i < s->n; ++i) {
        const pd_hpd_material* m = &s->mat[s->material[i]];
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            if (m->lambda * m->g2 * s->bond_q[b] + m->mu * s->bond_g[b] * m->h2 > 0)
                continue;
            char at[PD_PATH_MAX];
            snprintf(at, sizeof at, "materials.%s", scene->materials[s->material[i]].name);
            return pd_fail(err, PD_ERR_BAD_SCENE, at,
                           "lambda = %.3g mu (nu below 1/4, solver.lame_mapping consistent) needs "
                           "every bond's factor G above %.3g, and a bond has G = %.3g (its "
                           "anisotropy's stretches times the lattice's direction factor): the "
                           "energy would not be bounded below; give "
                           "nu >= 0.25 or milder stretches",
                           m->lambda / m->mu, -m->lambda * m->g2 / (m->mu * m->h2),
                           s->bond_g[b] / s->bond_q[b]);
        }
    }
    return PD_OK;
}

/* k_ij of Eq. 23 with the volumes of the energy sum_i V_i W_i:
 * V_i V_j w_ij / |xi|^2 (lambda g''(1) q + mu G h''(1)) (q, G: the bond's factors). */
static pd_real bond_stiffness(const pd_hpd_state* s, uint32_t i, uint32_t j, pd_real len, pd_real q,
                              pd_real G) {
    const pd_hpd_material* m = &s->mat[s->material[i]];
    return s->volume[i] * s->volume[j] * pd_hpd_bond_weight(s, i, len) / (len * len) *
           (m->lambda * m->g2 * q + m->mu * G * m->h2);
}

pd_status pd_hpd_factor(pd_hpd_state* s, pd_real dt, pd_error* err) {
    pd_real ih2 = 1 / (dt * dt);
    for (uint32_t i = 0; i < s->n; ++i)
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b)
            s->k_bond[b] = bond_stiffness(s, i, s->fam.j[b], pd_v3_len(pd_family_xi(&s->fam, i, b)),
                                          s->bond_q[b], s->bond_g[b]);
    for (uint32_t i = 0; i < s->n; ++i) {
        pd_real d = s->mass[i] * ih2;
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            s->couple[b] = s->k_bond[b] + s->k_bond[s->fam.rev[b]];
            d += s->couple[b];
        }
        s->diag[i] = d;
    }
    pd_hpd_inversion_setup(s);
    pd_sym_csr a = {s->n, s->fam.offsets, s->fam.j, s->couple, s->diag, NULL, NULL};
    pd_status st = pd_sym_direct_factor(&s->direct, &a, s->fixed);
    if (st != PD_OK)
        return pd_fail(err, st, "solver", "the sparse Cholesky factorisation of L failed (%s)",
                       pd_status_string(st));
    memset(s->ktan_factored, 0, s->n * sizeof *s->ktan_factored);
    return PD_OK;
}

pd_state_arrays* pd_hpd_persistent(void* state) {
    return &((pd_hpd_state*)state)->persist;
}

/* After a checkpoint was read: the factor as it was, L + M/h^2 (Eq. 23) plus the friction
 * stiffness it held, with the rows it was numbered with; everything else is in the arrays. */
pd_status pd_hpd_restored(void* state, pd_world* w, pd_ckpt_reader* r, pd_error* err) {
    pd_hpd_state* s = state;
    (void)w, (void)r;
    for (size_t i = 0; i < s->n; ++i)
        s->diag_extra[i] = s->diag[i] + s->ktan_factored[i];
    pd_sym_csr a = {s->n, s->fam.offsets, s->fam.j, s->couple, s->diag_extra, NULL, NULL};
    pd_status st = pd_sym_direct_factor_rows(&s->direct, &a);
    if (st != PD_OK)
        return pd_fail(err, st, "solver", "the sparse Cholesky factorisation of L failed (%s)",
                       pd_status_string(st));
    return PD_OK;
}

pd_status pd_hpd_refactor(pd_hpd_state* s, const pd_real* extra, pd_error* err) {
    const pd_real* diag = s->diag;
    if (extra) {
        for (size_t i = 0; i < s->n; ++i)
            s->diag_extra[i] = s->diag[i] + extra[i];
        diag = s->diag_extra;
    }
    pd_sym_csr a = {s->n, s->fam.offsets, s->fam.j, s->couple, diag, NULL, NULL};
    pd_status st = pd_sym_direct_refactor(&s->direct, &a);
    if (st != PD_OK)
        return pd_fail(err, st, "solver", "the sparse Cholesky factorisation of L failed (%s)",
                       pd_status_string(st));
    return PD_OK;
}

/* Material changes (bodies[i].material_changes; the world has set the changed particles'
 * material and mass): a changed particle keeps its bonds, their rest vectors and weights, so
 * its new material's energy is measured from the body's rest shape (at t = 0: a body of
 * several materials, Fig. 1's stiff stem and soft leaves). What depends on the materials is
 * rebuilt: G (the new anisotropy), the couplings and diagonal of Eq. 23 (new lambda, mu and
 * mass), the inversion fit, and the factor. */
pd_status pd_hpd_change_materials(void* state, pd_world* w, const uint8_t* changed, pd_error* err) {
    (void)changed;
    pd_hpd_state* s = state;
    pd_status st = direction_weights(s, &w->particles);
    if (st != PD_OK)
        return pd_fail(err, st, "", "changing materials failed (%s)", pd_status_string(st));
    st = check_bond_couplings(s, w->scene, err);
    return st == PD_OK ? pd_hpd_factor(s, w->def.dt, err) : st;
}

#define HPD_PARTICLE_ARRAYS(X)                                                                     \
    X(norm, pd_real)                                                                               \
    X(slope, pd_real)                                                                              \
    X(diag, pd_real)                                                                               \
    X(diag_extra, pd_real)                                                                         \
    X(ktan_factored, pd_real)                                                                      \
    X(last_push, pd_real)                                                                          \
    X(limit_prev, pd_real)                                                                         \
    X(delta, pd_real)                                                                              \
    X(ystar, pd_vec3)                                                                              \
    X(grad, pd_vec3)                                                                               \
    X(kinv, pd_mat3)                                                                               \
    X(fbar, pd_mat3)                                                                               \
    X(planar, uint8_t)                                                                             \
    X(fixed, uint8_t)

/* What lasts from step to step and follows the particles when the world reorders them: the
 * bonds' coupling, stiffness and G (Eq. 18), the shape tensors, Eq. 19's weights and the
 * factored diagonal; the Cholesky factor keeps its rows (pd_sym_direct_permute). */
static void declare_persistent(pd_hpd_state* s) {
    pd_state_arrays* a = &s->persist;
    pd_state_arrays_init(a, &s->fam);
    PD_STATE_BONDS(a, s, couple);
    PD_STATE_BONDS(a, s, k_bond);
    PD_STATE_BONDS(a, s, bond_g);
    PD_STATE_BONDS(a, s, bond_q);
    PD_STATE_PARTICLES(a, s, kinv);
    PD_STATE_PARTICLES(a, s, planar);
    PD_STATE_PARTICLES(a, s, norm);
    PD_STATE_PARTICLES(a, s, delta);
    PD_STATE_PARTICLES(a, s, diag);
    PD_STATE_PARTICLES(a, s, ktan_factored);
    PD_STATE_PARTICLES(a, s, last_push);
    PD_STATE_PARTICLES(a, s, fixed);
    /* the factor's numbering of the points: a reordering permutes it (the factor keeps its
     * rows), a checkpoint restores it so that the factor is rebuilt with the same rows */
    pd_state_declare(a, "factor_row", &s->direct.row_of, sizeof(int32_t), PD_STATE_PER_PARTICLE);
}

static pd_status allocate(pd_hpd_state* s, const pd_world* w) {
    size_t n = s->n;
#define ALLOC_ONE(field, T)                                                                        \
    if (!(s->field = PD_NEW_ARRAY(T, n + 1)))                                                      \
        return PD_ERR_OUT_OF_MEMORY;
    HPD_PARTICLE_ARRAYS(ALLOC_ONE)
#undef ALLOC_ONE
    s->chunks = (n + PD_HPD_GRAIN - 1) / PD_HPD_GRAIN;
    s->partial = PD_NEW_ARRAY(pd_real, 2 * s->chunks + 1); /* sums, then potentials */
    s->mat = PD_NEW_ARRAY(pd_hpd_material, (size_t)s->material_count + 1);
    if (!s->partial || !s->mat ||
        pd_state_bonds_reserve(&s->persist, s->fam.bond_capacity) != PD_OK)
        return PD_ERR_OUT_OF_MEMORY;
    pd_descent_def def = pd_default_descent_def();
    def.iterations = s->prm.iterations;
    def.tolerance = 1e-12; /* the residual only ends a step already exact (free flight) */
    def.decrease_tolerance = s->prm.tolerance;
    def.history = s->prm.history;
    def.line_search = s->prm.line_search;
    def.armijo = 0; /* Sec. 5.2: any decrease of E is accepted */
    if (pd_descent_init(&s->opt, n, &def) != PD_OK ||
        pd_collider_contact_init(&s->cc, n, &w->colliders) != PD_OK)
        return PD_ERR_OUT_OF_MEMORY;
    s->cc.stick_speed = s->prm.stick_speed;
    return PD_OK;
}

static pd_status setup(pd_hpd_state* s, pd_world* w, pd_error* err) {
    const pd_particles* p = &w->particles;
    pd_status st = pd_family_build(&s->fam, &s->grid, p->rest, p->volume, p->spacing, p->body,
                                   p->count, s->prm.horizon);
    if (st == PD_OK)
        st = pd_world_check_families(w, &s->fam, s->prm.horizon, err);
    declare_persistent(s);
    if (st == PD_OK)
        st = allocate(s, w);
    if (st != PD_OK)
        return st;
    for (int m = 0; m < s->material_count; ++m) {
        s->mat[m] = map_material(&w->scene->materials[m], s->prm.lame_mapping);
        s->fractures |= isfinite(s->mat[m].critical_stretch);
    }
    for (uint32_t b = 0; b < s->fam.bond_count; ++b)
        s->bond_q[b] = 1; /* the surface correction's, if on, in direction_weights */
    pd_hpd_normalise_weights(s, p);
    st = direction_weights(s, p);
    if (st != PD_OK)
        return st;
    if ((st = check_bond_couplings(s, w->scene, err)) != PD_OK)
        return st;
    size_t free_count = 0;
    for (size_t i = 0; i < s->n; ++i) {
        s->last_push[i] = NAN; /* no last step: friction starts from the step's guess */
        s->fixed[i] = (p->flags[i] & PD_P_CONSTRAINED) != 0;
        free_count += !s->fixed[i];
    }
    st = pd_sym_direct_init(&s->direct, s->n, free_count);
    if (st == PD_OK && s->prm.contact) {
        pd_contact_def def = pd_default_contact_def();
        def.horizon = s->prm.horizon;
        def.stiffness = s->prm.contact_stiffness;
        st = pd_contact_init_scene(&s->contact, def, p, w->scene->materials, s->material_count,
                                   offsetof(pd_hpd_material_params, contact_friction), NULL);
    }
    return st == PD_OK ? pd_hpd_factor(s, w->def.dt, err) : st;
}

pd_status pd_hpd_create(pd_world* w, const void* params, void** state, pd_error* err) {
    pd_hpd_state* s = pd_calloc(1, sizeof *s);
    if (!s)
        return PD_ERR_OUT_OF_MEMORY;
    memcpy(&s->prm, params, sizeof s->prm);
    s->inversion = s->prm.inversion_stiffness;
    s->n = w->particles.count;
    s->mass = w->particles.mass;
    s->volume = w->particles.volume;
    s->material = w->particles.material;
    s->material_count = w->scene->material_count;
    pd_status st = setup(s, w, err);
    if (st != PD_OK) {
        pd_hpd_destroy(s);
        return st;
    }
    w->bond_count = s->fam.bond_count;
    *state = s;
    return PD_OK;
}

void pd_hpd_destroy(void* state) {
    pd_hpd_state* s = state;
    size_t n = s->n;
#define FREE_ONE(field, T) PD_FREE_ARRAY(s->field, T, n + 1);
    HPD_PARTICLE_ARRAYS(FREE_ONE)
#undef FREE_ONE
    PD_FREE_ARRAY(s->partial, pd_real, 2 * s->chunks + 1);
    pd_state_bonds_free(&s->persist);
    PD_FREE_ARRAY(s->mat, pd_hpd_material, (size_t)s->material_count + 1);
    pd_hpd_free_bond_scratch(s);
    pd_descent_free(&s->opt);
    pd_collider_contact_free(&s->cc);
    pd_contact_free(&s->contact);
    pd_sym_direct_free(&s->direct);
    pd_family_free(&s->fam);
    pd_hash_grid_destroy(&s->grid);
    pd_free(s, sizeof *s);
}
