/* Options of the xpbi method (Yu et al. 2024). One table drives parsing, `--set`, the resolved
 * scene and docs/scene-format.md. */
#include <stddef.h>

#include "contact/contact.h"
#include "solvers/xpbi/xpbi_data.h"

#define P(field) offsetof(pd_xpbi_params, field)

static const pd_param_info k_params[] = {
    {"iterations", PD_PARAM_INT, P(iterations), 10, 1, 10000, "1", NULL,
     "XPBD iterations per step (Alg. 1; Table 2: 5 to 10), each a sweep over the particle "
     "constraints (Eq. 17-19) then over the distance constraints (Eq. 21) and the colliders. "
     "With a tolerance, the most a step takes."},
    {"tolerance", PD_PARAM_REAL, P(tolerance), 0, 0, 1, "1", NULL,
     "0: every step takes `iterations`. Above 0: a step stops once the residual |h| of Fig. 14, "
     "h_p = C_p + alpha~ lambda_p over the particle constraints as the last sweep met them, is "
     "below this times that of the first sweep (Fig. 18's adaptive iterations)."},
    {"radius", PD_PARAM_REAL, P(radius), 1.0, 0.75, 3.0, "spacing", NULL,
     "The particle kernel radius r in particle spacings (of the body with the smallest "
     "spacing); the Wendland C2 kernel's support is k = 2 r (Sec. 4.2). 1: r is the spacing, as "
     "in Sec. 5.1 (\"each particle was initially positioned at intervals equal to the particle "
     "radius\"), about 26 neighbours with a weight inside a body (Table 2: about 24). Above 1 / "
     "(1 - distance_epsilon) spacings (4/3) it is refused: Eq. 21 would push nearest neighbours "
     "apart."},
    {"svd_cutoff", PD_PARAM_REAL, P(svd_cutoff), 1e-2, 0, 0.5, "1", NULL,
     "The kernel gradient correction L_p of Eq. 10 is an SVD pseudo-inverse: singular values of "
     "sum_b V_b grad W_b (x_b - x_p)^T below this times the largest are dropped (a flat or "
     "linear neighbourhood; the paper gives no value)."},
    {"xsph_scaling", PD_PARAM_ENUM, P(xsph_scaling), PD_XPBI_XSPH_VISCOSITY, 0, 0, "-",
     "viscosity|time|step",
     "How XSPH (Eq. 20) is sized each step (beyond the paper; docs/methods/xpbi.md, "
     "\"Departures\"). Eq. 20 smooths a fraction c of the neighbours' velocity differences, a "
     "kinematic viscosity c k^2 / (30 dt) (k = 2 r). viscosity: c = 30 xsph_viscosity dt / k^2 "
     "each step (at most 1), the same viscosity at any step and spacing. time: c per xsph_time "
     "of simulated time. step: c every step, Eq. 20 as printed (a viscosity that grows as "
     "1 / dt: a slump at 1e-4 s spread 16 % less than at 1e-3 s)."},
    {"xsph_viscosity", PD_PARAM_REAL, P(xsph_viscosity), 1e-4, 0, 1, "m^2/s", NULL,
     "xsph_scaling viscosity: the kinematic viscosity XSPH smooths with. 1e-4 m^2/s: the median "
     "of what c = 0.01 per step gave the paper's scenes at their spacing and step (Table 2: "
     "1.3e-5 to 2.0e-4). 0: none.",
     "xsph_scaling=viscosity"},
    {"xsph", PD_PARAM_REAL, P(xsph), 0.01, 0, 1, "1", NULL,
     "xsph_scaling time or step: c of XSPH smoothing, Eq. 20 (Sec. 4.4: 0.01 in all "
     "examples), per xsph_time of simulated time or per step. 0: none.",
     "xsph_scaling=time|step"},
    {"xsph_time", PD_PARAM_REAL, P(xsph_time), 1e-4, 1e-7, 1, "s", NULL,
     "xsph_scaling time: each step smooths by c dt / xsph_time (at most 1), a rate c / "
     "xsph_time whatever the step. 1e-4 s: the paper's step (Fig. 13, 19), where it is Eq. 20's "
     "c every step.",
     "xsph_scaling=time"},
    {"distance_epsilon", PD_PARAM_REAL, P(distance_epsilon), 0.25, 0, 1, "r", NULL,
     "epsilon of the point-point distance constraints, Eq. 21, in r (Sec. 4.4: 0.25 r): every "
     "pair of neighbours (any bodies) is kept at least r - epsilon apart at the candidate "
     "positions. 1: off."},
    {"solver", PD_PARAM_ENUM, P(solver), PD_XPBI_GAUSS_SEIDEL, 0, 0, "-", "gauss_seidel|jacobi",
     "gauss_seidel: coloured Gauss-Seidel over cells with 8 colours (Sec. 4.3; cells of 2 k, "
     "not the paper's 2 r, so that the constraints a colour runs at once share no particle and "
     "results do not depend on the thread count). jacobi: every multiplier of a sweep from the "
     "same velocities, their velocity changes summed and scaled by jacobi_relaxation (Fig. 14's "
     "comparison)."},
    {"jacobi_relaxation", PD_PARAM_REAL, P(jacobi_relaxation), 0.2, 0.01, 1, "1", NULL,
     "jacobi: the factor on a sweep's summed velocity changes (a particle takes changes from "
     "each of its about 27 neighbours' constraints: 1 overshoots).",
     "solver=jacobi"},
    {"courant", PD_PARAM_REAL, P(courant), 1.0, 0.01, 100, "1", NULL,
     "time.dt \"auto\": the step is 0.9 (the world's margin) of this many times r over the "
     "fastest speed a particle has "
     "plus its material's P-wave speed sqrt((lambda + 2 mu) / rho), taken at each frame's "
     "start: an accuracy choice, not a stability bound (XPBD is stable at any step, but with "
     "`iterations` 10 a body's constraints converge only while a wave crosses about r a step: "
     "measured, docs/methods/xpbi.md). A numeric time.dt is taken as given."},
    {"plasticity", PD_PARAM_ENUM, P(plasticity), PD_XPBI_PLASTIC_IMPLICIT, 0, 0, "-",
     "implicit|semi_implicit",
     "Where a plastic material's return mapping (Eq. 14) runs. implicit: in every evaluation of "
     "a particle constraint, on the trial F of the iteration's velocities (Alg. 1, Sec. 3.3), and "
     "again at the step's end. semi_implicit: at the step's end only (Eq. 22), the iterations "
     "solving elasticity alone (Sec. 5.1's comparison, Fig. 9, as in Stomakhin et al. 2013)."},
    {"hourglass", PD_PARAM_REAL, P(hourglass), 1.0, 0, 100, "E", NULL,
     "beta: the stiffness of the hourglass constraint (beyond the paper; docs/methods/xpbi.md), "
     "one more XPBD constraint per particle on the part of its neighbours' relative positions "
     "that its F does not predict, eps = x_b - x_p - F_p (X_b - X_p) with X the positions of the "
     "first step (F = I there): "
     "energy density beta E / 2 sum_b V_b W_b |eps|^2 / |X_b - X_p|^2. It holds the "
     "layer-by-layer alternation Eq. 11 cannot see (under tension it grows and F stops "
     "following the positions: the bar showed E x 0.36) and vanishes for any affine motion. "
     "Off for a plastic material unless hourglass_plastic. 0: off (the paper)."},
    {"contact", PD_PARAM_BOOL, P(contact), 1, 0, 1, "-", NULL,
     "Contact between bodies (beyond the paper, in its Alg. 1 loop over the constraints C_i): "
     "every pair of particles of two bodies within k at the step's start is a hard constraint "
     "|x~_i - x~_j| >= d_c = (s_i + s_j) / 2 at the candidate positions x~ = x^n + dt v (the "
     "core's contact distance, where the sampled surfaces meet), solved in every iteration with "
     "Coulomb friction on the pair's relative motion (materials' `contact_friction`, a pair "
     "taking sqrt(mu_a mu_b); src/contact/contact_velocity.h). The distance constraints of Eq. "
     "21 then act within a body only. False lets bodies pass through each other. Far-apart parts "
     "of one body do not collide: within k they are kernel neighbours."},
    {"damping", PD_PARAM_REAL, P(damping), 0, 0, 10, "s", NULL,
     "tau: XPBD constraint damping (Macklin et al. 2016, Eq. 26; the paper's Sec. 6 names it "
     "beside XSPH) on the particle and hourglass constraints, with beta = tau / alpha, so that "
     "gamma = alpha~ beta~ / dt = tau / dt: each constraint's force becomes -(C + tau dC/dt) "
     "grad C / alpha, Kelvin-Voigt with the retardation time tau. A vibration of angular "
     "frequency omega then decays at tau omega^2 / 2 beyond the implicit step's own "
     "(docs/methods/xpbi.md). 0: off (the paper gives no value)."},

    {"hourglass_plastic", PD_PARAM_BOOL, P(hourglass_plastic), 0, 0, 1, "-", NULL,
     "The hourglass constraint on a von Mises, Herschel-Bulkley or Cam-clay material too "
     "(beyond the paper; docs/methods/xpbi.md, \"Departures\"), with its updated reference: F "
     "in eps is the whole deformation since the reference, fitted each step to the neighbours' "
     "positions, renewed as the material flows (hourglass_renewal). It holds the alternation "
     "a von Mises bar pulled past yield otherwise takes its stretch in, but it resists any "
     "non-affine plastic flow with its elastic stiffness (a sheared slab carried 19 % more "
     "than its yield stress), hence false: off for a plastic material. Never on Drucker-Prager "
     "(a cohesionless flow rearranges its grains at the particle scale)."},
    {"hourglass_renewal", PD_PARAM_REAL, P(hourglass_renewal), 0.25, 0, 10, "1", NULL,
     "The hourglass constraint's updated reference for a flowing material (beyond the paper; "
     "docs/methods/xpbi.md): a plastic particle's F in eps = x_b - x_p - F (X_b - X_p) is "
     "fitted each step to its neighbours' positions against the reference (Eq. 10's corrected "
     "kernel taken in the reference), so that an affine plastic flow feels nothing; once a "
     "fit's Green strain |F^T F - I| / 2 reaches this, every particle's reference becomes its "
     "step-start position. 0: renewed every step (the constraint then holds only the "
     "alternation's growth within a step). Acts only with hourglass_plastic."},
    {"hourglass_relaxation", PD_PARAM_ENUM, P(hourglass_relaxation), PD_XPBI_HG_RENEWAL, 0, 0, "-",
     "renewal|plastic",
     "How a plastic material's hourglass reference follows its flow (beyond the paper; "
     "docs/methods/xpbi.md, \"Departures\"; acts only with hourglass_plastic). renewal: F in "
     "eps fitted each step to the neighbours' positions, every reference renewed at "
     "hourglass_renewal. plastic: each pair's reference offset y_pb is carried with the "
     "particle's velocity gradient like F, and at the step's end its misfit eps_pb = x_b - x_p - "
     "y_pb is scaled by the part of the deviatoric elastic strain the particle's plastic return "
     "kept (F = F_E F_P for the constraint: a Maxwell element whose relaxation is the "
     "material's own); a pair that comes within the kernel's support starts without misfit."},
    {"constraints", PD_PARAM_ENUM, P(constraints), PD_XPBI_ONE_CONSTRAINT, 0, 0, "-", "one|two",
     "one: a constraint per particle, C = sqrt(2 Psi) with alpha = 1 / V^0 (Eq. 6, the paper's "
     "choice). two: Eq. 4-5's pair, C_mu = |ln Sigma| with alpha = 1 / (2 mu V^0) and C_lambda "
     "= tr ln Sigma with alpha = 1 / (lambda V^0), each with its multiplier, swept one after the "
     "other (the same energy; two SVDs a particle and iteration). gauss_seidel only."},
};

const pd_param_table pd_xpbi_param_table = {k_params, (int)(sizeof k_params / sizeof k_params[0]),
                                            sizeof(pd_xpbi_params)};

#define M(field) offsetof(pd_xpbi_material_params, field)

static const pd_param_info k_material_params[] = {
    PD_CONTACT_MATERIAL_ROW(pd_xpbi_material_params, contact_friction),
};

const pd_param_table pd_xpbi_material_table = {
    k_material_params, (int)(sizeof k_material_params / sizeof k_material_params[0]),
    sizeof(pd_xpbi_material_params)};
