/* Options of the sbpd method (Wang et al. 2025). One table drives parsing, `--set`, the resolved
 * scene and docs/scene-format.md. */
#include <stddef.h>

#include "solvers/sbpd/sbpd_data.h"

#define P(field) offsetof(pd_sbpd_params, field)

static const pd_param_info k_params[] = {
    {"iterations", PD_PARAM_INT, P(iterations), 6, 1, 1000, "1", NULL,
     "iter_max of Algorithm 1: the most passes of Eq. 12 per time step (Sec. 6: typically 6)."},
    {"tolerance", PD_PARAM_REAL, P(tolerance), 1e-4, 0, 1, "m", NULL,
     "epsilon of Algorithm 1: the passes of a step stop once no particle moved more than this "
     "in the last one (Sec. 6: 1e-4)."},
    {"horizon", PD_PARAM_REAL, P(horizon), 2.0, 1.5, 6.0, "spacing", NULL,
     "Radius r of the Wendland C2 kernel in particle spacings (Sec. 3: twice the particle "
     "size); neighbours at r weigh 0 and are left out."},
    {"history", PD_PARAM_ENUM, P(history), PD_SBPD_HISTORY_SQUARED, 0, 0, "-", "squared|stretch",
     "What a bond's Prony histories follow. squared: Eq. 9-11 as printed, q^k following W = "
     "(stretch)^2 and gamma = mu_inf + sum mu_k (1 - q^k / W); singular when a relaxed bond "
     "unloads (W -> 0 with q > 0): each mode's 1 - q / W is kept at -1 or above, so a body let "
     "go after relaxing springs back faster than the paper's model would (which blows up in "
     "the explicit passes). stretch: the same with the bond's stretch s in place of W, Eq. 4-5 "
     "per bond (mode force mu_k (s - q^k)): VALIDATION.md's linear Prony solid, regular when "
     "unloading (docs/methods/sbpd.md)."},
    {"contact", PD_PARAM_BOOL, P(contact), 1, 0, 1, "-", NULL,
     "Collisions between bodies (Eq. 25, Algorithm 1 lines 17-20): after the passes, up to "
     "`iterations` rounds push every pair of particles of different bodies (or far-apart parts "
     "of one elastic body) closer than d_c = (s_i + s_j) / 2, and every two grains of one sand "
     "(Algorithm 1's self collisions) closer than the paper's r = d_c / 2, apart along their "
     "line, by shares of inverse mass (pinned particles do not move), and every particle within "
     "the horizon of a fixed body's particles (the paper's rigid boundary particles, Sec. 6) out "
     "along the gradient of that body's signed distance phi until phi = r = s / 2; each particle "
     "moves by the mean of its pushes, which carry the friction of Eq. 26-27 (materials' "
     "`contact_friction`; none between the grains of one sand). False lets bodies pass through "
     "each other and grains crowd."},
    {"static_friction", PD_PARAM_REAL, P(static_friction), 0.8, 0, 1, "1", NULL,
     "eta of Eq. 28 (Sec. 6: 0.8): a particle the colliders, a fixed body's boundary "
     "particles or other grains push back, whose step y* -> y pushed satisfies (y - y*) . (x - "
     "y*) >= eta |y* - x|^2 (its motion mostly into the surface; at boundary particles y - y* "
     "along the surface's normal), stays where the step began (grains stack). On a plane it holds "
     "what moves within atan(sqrt(1 / eta - 1)) of the normal: 26.6 degrees at 0.8. 0: off. The "
     "colliders' Coulomb friction (Eq. 26-27, `colliders[k].friction`) acts after the step as for "
     "every method."},
    {"isotropic_weights", PD_PARAM_BOOL, P(isotropic_weights), 1, 0, 1, "-", NULL,
     "Multiply each bond's kernel by a factor of its direction that makes the interior "
     "families' fourth moment isotropic (src/neighbor/isotropy.h; beyond the paper). On a grid "
     "the Wendland kernel at r = 2 spacings weighs the six axis neighbours most (fourth moment "
     "xxxx 0.293, xxyy 0.020 against the isotropic 0.2 and 0.067): without the factor a bar "
     "along an axis is 1.95 times as stiff and shows nu 0.06 for 0.25 (measured), and shear "
     "along the axes meets about 0.3 of the shear modulus. The factors run from 0.28 to 4.3 on "
     "a grid."},
};

const pd_param_table pd_sbpd_param_table = {k_params, (int)(sizeof k_params / sizeof k_params[0]),
                                            sizeof(pd_sbpd_params)};

#define M(field) offsetof(pd_sbpd_material_params, field)

static const pd_param_info k_material_params[] = {
    {"hardening", PD_PARAM_REAL, M(hardening), 0, 0, 10, "1", NULL,
     "xi of Eq. 24 (sand only; the paper gives no value): the sand's mu and kappa are scaled by "
     "exp(xi (rho_0^t - rho_0) / rho_0^t) each step, rho_0^t = rho |det Fe| with rho Eq. 23's "
     "kernel density and rho_0 that of the body's densest grain at set-up. The factor is below "
     "exp(xi), and the time-step bound counts that much stiffness: it shrinks by exp(xi / 2). "
     "0: none."},
    PD_CONTACT_MATERIAL_ROW(pd_sbpd_material_params, contact_friction),
};

const pd_param_table pd_sbpd_material_table = {
    k_material_params, (int)(sizeof k_material_params / sizeof k_material_params[0]),
    sizeof(pd_sbpd_material_params)};
