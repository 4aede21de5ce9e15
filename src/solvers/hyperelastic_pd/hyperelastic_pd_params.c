/* Options and material keys of the hyperelastic_pd method (Xu 2018). One table each drives
 * parsing, `--set`, the resolved scene and docs/scene-format.md. */
#include <stddef.h>

#include "contact/contact.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"

#define P(field) offsetof(pd_hpd_params, field)

static const pd_param_info k_params[] = {
    {"iterations", PD_PARAM_INT, P(iterations), 25, 1, 100000, "1", NULL,
     "Most quasi-Newton iterations per time step (Sec. 6: 5 to 25 reach the tolerance)."},
    {"tolerance", PD_PARAM_REAL, P(tolerance), 1e-4, 0, 1, "1", NULL,
     "Stop a step when the relative error of Eq. 25 falls to this (the last iteration's decrease "
     "of E over the step's, the new iterate standing for the solution; Sec. 6: 1e-4)."},
    {"horizon", PD_PARAM_REAL, P(horizon), 2.01, 1.01, 6.0, "spacing", NULL,
     "Family radius delta in particle spacings (Sec. 3: twice the spacing; a cloth bends "
     "harder with a larger one, Fig. 9). Families must hold bonds across the axes for shear "
     "stiffness: on a grid a horizon below 1.42 (axis bonds only) is refused."},
    {"weight", PD_PARAM_ENUM, P(weight), PD_HPD_WEIGHT_CONSTANT, 0, 0, "-",
     "constant|inverse|linear",
     "Weight w(xi) before the normalisation sum_j w V_j = 1 of Eq. 19: 1, (1 + |xi|/delta)^-1 or "
     "|xi|/delta (Fig. 9)."},
    {"history", PD_PARAM_INT, P(history), 5, 0, PD_DESCENT_MAX_HISTORY, "1", NULL,
     "L-BFGS pairs on top of the prefactored matrix L of Eq. 23 (Liu et al. 2017, Sec. 5.2); 0 "
     "takes L's step alone."},
    {"line_search", PD_PARAM_BOOL, P(line_search), 1, 0, 1, "-", NULL,
     "Halve a step until E(q) falls (Sec. 5.2); false takes every full step."},
    {"isotropic_weights", PD_PARAM_BOOL, P(isotropic_weights), 1, 0, 1, "-", NULL,
     "Weigh each bond's h by a factor of its direction that makes the interior families' fourth "
     "moment isotropic (src/neighbor/isotropy.h; beyond the paper): without it a grid-sampled "
     "bar is 38-62 % stiffer along the grid's axes than Eq. 26 says (measured). Fitted for the "
     "constant weight; with the other weights the factor is 1.",
     "weight=constant"},
    {"surface_correction", PD_PARAM_BOOL, P(surface_correction), 1, 0, 1, "-", NULL,
     "Fit, at set-up, factors of the bond directions of each family cut by a free surface (on "
     "its bonds' shares of theta and on G) so that its second and fourth moments are the "
     "bulk's: a small homogeneous strain then has the bulk's energy density there (after Le & "
     "Bobaru 2018's surface corrections; beyond the paper). false: the paper's cut families, "
     "stiffer along a surface (a cantilever 6 particles thick swings 19.7 % fast against 6.0 "
     "%; docs/methods/hyperelastic_pd.md)."},
    {"inversion_stiffness", PD_PARAM_REAL, P(inversion_stiffness), 1, 0, 100, "1", NULL,
     "Multiplies k_ij of the inversion force of Eq. 24, k_ij (y_ij - F_i xi_ij) with F_i's first "
     "two rows exchanged where det F_i < 0 (1: the paper's; 0: none). It vanishes under an "
     "affine deformation; one-layer families (cloth) take none."},
    {"lame_mapping", PD_PARAM_ENUM, P(lame_mapping), PD_HPD_LAME_CONSISTENT, 0, 0, "-",
     "consistent|paper_eq26",
     "E, nu to lambda, mu of Eq. 12. consistent: lambda = 9 E (4 nu - 1) / (4 (1 + nu) (1 - 2 "
     "nu)), mu = 15 E / (4 (1 + nu)), which the bulk shows as E and nu (the bond term's "
     "volumetric part counted; docs/methods/hyperelastic_pd.md); lambda < 0 below nu = 1/4 is "
     "refused unless g = h. paper_eq26: Eq. 26, lambda = 9 E nu / (2 (1 + nu) (1 - 2 nu)), "
     "whose bulk shows the Lame constants (lambda_0 + mu_0, mu_0) of the asked (lambda_0, mu_0): "
     "nu "
     "0.25 when 0 is asked, never below 1/4."},
    {"collisions", PD_PARAM_ENUM, P(collisions), PD_HPD_COLLISIONS_IN_SOLVE, 0, 0, "-",
     "in_solve|after_solve",
     "Where the colliders act. in_solve: inside the minimisation of Eq. 21 (every trial projected "
     "out, pushing normals blocked, Coulomb friction as a potential; beyond the paper). "
     "after_solve: the paper's position-based resolution [BMM15], the solve's solution projected "
     "out of the colliders with positional friction; a body resting on a collider is then held "
     "in the solve by its inertia m / h^2 alone and sinks by about N h^2 g (N its layers; "
     "docs/methods/hyperelastic_pd.md). Contact between bodies (solver.contact) stays in the "
     "solve."},
    {"friction_stick_speed", PD_PARAM_REAL, P(stick_speed), 1e-2, 1e-6, 1, "m/s", NULL,
     "Coulomb friction with the colliders in the solve is smoothed below this slip speed (Li "
     "et al. 2020's eps_v; boundary/friction.h): a contact whose load stays below mu lambda "
     "sticks, creeping slower than this. With the core's 3e-4, 9 of Fig. 5's 40 drop steps "
     "ended short of Eq. 25's 1e-4 within 25 iterations, with 1e-2 none; a block held at mu 1 "
     "on a 20 degree incline creeps 2.0 mm in 1 s (0.14 mm with 3e-4; "
     "docs/methods/hyperelastic_pd.md).",
     "collisions=in_solve"},
    PD_CONTACT_SOLVER_ROWS(pd_hpd_params, contact, contact_stiffness),
};

const pd_param_table pd_hpd_param_table = {k_params, (int)(sizeof k_params / sizeof k_params[0]),
                                           sizeof(pd_hpd_params)};

#define M(field) offsetof(pd_hpd_material_params, field)

static const pd_param_info k_material_params[] = {
    {"hyperelastic", PD_PARAM_BLOCK, M(hyperelastic), 0, 0, 1, "-", NULL,
     "The strain energy of Eq. 12, lambda g(theta) + mu sum w h(tau): a preset, or g and h "
     "combined from the basis of Eq. 15. Absent: the linear preset."},
    {"hyperelastic.preset", PD_PARAM_ENUM, M(preset), PD_HPD_LINEAR, 0, 0, "-",
     "linear|neo_hookean|stvk|A4",
     "g = h = B_1 (linear, Fig. 8), A_1 + 3 A_2 - 3 B_1 (neo-Hookean: fitted to the compressible "
     "law's stress in the bulk, issue 34; the paper's Eq. 27 is A_1, give g and h {\"A1\": 1}), "
     "(3 B_3 - B_1)/2 (StVK, Eq. 28) or A_4 (Fig. 5)."},
    {"hyperelastic.g", PD_PARAM_TERMS, M(g), 0, -1e3, 1e3, "1", PD_HPD_BASIS_NAMES,
     "g(theta) as coefficients of A_n and B_n (Eq. 15), e.g. {\"A1\": 1}; given, it replaces the "
     "preset's g. Negative coefficients are accepted when g stays convex (g'' > 0) over stretches "
     "0.2 to 5, refused otherwise with the stretch where it fails. Terms that are all 0 are "
     "refused (they read as g left out: the preset's); {} is the preset's g."},
    {"hyperelastic.h", PD_PARAM_TERMS, M(h), 0, -1e3, 1e3, "1", PD_HPD_BASIS_NAMES,
     "h(tau) likewise, e.g. {\"A4\": 0.5, \"B1\": 0.5}; given, it replaces the preset's h, "
     "convex over stretches 0.2 to 5."},
    PD_CONTACT_MATERIAL_ROW(pd_hpd_material_params, contact_friction),
    {"anisotropy", PD_PARAM_BLOCK, M(anisotropy), 0, 0, 1, "-", NULL,
     "Orthotropy of the bond term (Eq. 18): each bond's mu h is scaled by G = |Sigma R^T e|, e "
     "its rest direction, R = [d1 d2 d1 x d2], Sigma = diag(stretches). Absent: G = 1."},
    {"anisotropy.direction1", PD_PARAM_VEC3, M(direction1), 0, -1e6, 1e6, "-", NULL,
     "First material direction d1 (any length; required)."},
    {"anisotropy.direction2", PD_PARAM_VEC3, M(direction2), 0, -1e6, 1e6, "-", NULL,
     "Second material direction d2, orthogonal to d1 (required); the third is d1 x d2."},
    {"anisotropy.stretches", PD_PARAM_VEC3, M(stretches), 1, 1e-3, 1e3, "1", NULL,
     "sigma_1, sigma_2, sigma_3 along d1, d2, d1 x d2, with sigma_1 sigma_2 sigma_3 = 1 so that "
     "G changes the direction of stiffness, not its amount (Sec. 4.2; Fig. 6: [4, 0.25, 1])."},
    {"fracture", PD_PARAM_BLOCK, M(fracture), 0, 0, 1, "-", NULL,
     "Bond failure after Silling and Askari 2005 (the tearing cloth of Sec. 7): a bond whose "
     "stretch passes the critical one at the end of a step is removed for good."},
    {"fracture.critical_stretch", PD_PARAM_REAL, M(critical_stretch), 0.1, 1e-6, 100, "1", NULL,
     "s_0: a bond breaks when (|y_j - y_i| - |xi|) / |xi| > s_0 (of either end's material, the "
     "smaller)."},
};

const pd_param_table pd_hpd_material_table = {
    k_material_params, (int)(sizeof k_material_params / sizeof k_material_params[0]),
    sizeof(pd_hpd_material_params)};
