/* Options of the mpm method (Fang et al. 2019). One table drives parsing, `--set`, the resolved
 * scene and docs/scene-format.md. */
#include <stddef.h>

#include "optim/descent.h"
#include "contact/contact.h"
#include "solvers/mpm/mpm_data.h"

#define P(field) offsetof(pd_mpm_params, field)

static const pd_param_info k_params[] = {
    {"dx", PD_PARAM_REAL, P(dx), 2.0, 0.5, 8.0, "spacing", NULL,
     "Grid cell size in particle spacings (of the body with the smallest spacing): 2 puts 2 x 2 x "
     "2 "
     "= 8 particles in a cell, the usual density (Fang 2019 Sec. 9 and Table 2: 8 per cell)."},
    {"cfl", PD_PARAM_REAL, P(cfl), 0.3, 0.01, 1.0, "1", NULL,
     "time.dt \"auto\": the step is at most this fraction of dx over the fastest speed a "
     "particle has plus the material's elastic P-wave speed sqrt((lambda + 2 mu) / rho), taken "
     "at each frame's start and again before every step: a step above 0.9 of it splits the "
     "frame's rest into shorter steps."},
    {"damping_round_trips", PD_PARAM_INT, P(damping_round_trips), 0, 0, 100, "1", NULL,
     "RPIC round trips before each step (Sec. 8): each is a Newtonian viscosity nu = dx^2 / (8 "
     "dt) (Eq. 11) that keeps linear and angular momentum. 0: none."},
    {"integrator", PD_PARAM_ENUM, P(integrator), PD_MPM_EXPLICIT, 0, 0, "-",
     "explicit|admm|newton|lbfgs",
     "explicit: symplectic Euler with MLS-MPM forces (Sec. 6), a step within the CFL bound. admm: "
     "backward Euler solved by the augmented Lagrangian of Sec. 7 (particle, grid and dual "
     "steps), for steps well beyond it. newton, lbfgs: the same backward Euler as the "
     "minimisation of the incremental potential over the grid velocity change (Gast et al. "
     "2015), by the shared optimiser: Newton with the projected Hessian solved by conjugate "
     "gradients, or L-BFGS over the grid matrix (docs/methods/mpm.md). Von Mises and the Maxwell "
     "branch enter by the incremental potentials of their corrections; Drucker-Prager, whose "
     "stress has none, by its returned stress with the line search on the residual."},
    {"contact", PD_PARAM_BOOL, P(contact), 1, 0, 1, "-", NULL,
     "Contact between bodies by multi-field MPM (Bardenhagen et al. 2000; beyond the paper): "
     "each body has its own velocity field on the grid, and where two meet at a node whose "
     "particles' surfaces (each particle reaching half its spacing) overlap by the step's end, "
     "a field that approaches the node's centre-of-mass velocity along the normal "
     "(contact_normal) loses that normal part, with Coulomb friction (materials' "
     "`contact_friction`) on the tangential one; fields moving apart are free, so bodies bounce "
     "and separate. "
     "False: the fields do not meet, so bodies pass through each other. Explicit integrator "
     "only: admm, newton and lbfgs have one field for all bodies (they would stick) and refuse "
     "two or more."},
    {"contact_normal", PD_PARAM_ENUM, P(contact_normal), PD_GRID_NORMAL_FITTED, 0, 0, "-",
     "fitted|mass_gradient",
     "The normal of the contact between bodies at a node two fields share. fitted: the plane "
     "that best separates the larger body's particles from the others' among those the node's "
     "stencil reaches, by a weighted logistic regression (Nairn, Hammerquist, Smith 2020), along "
     "which the gap is measured too. mass_gradient: the larger body's own mass gradient, the gap "
     "along the difference of the two bodies' normals (tilts where a body's surface turns: at an "
     "edge where two blocks meet over part of a face they part sideways; docs/methods/mpm.md).",
     "contact=true,integrator=explicit"},
    {"auto_step_factor", PD_PARAM_REAL, P(auto_step_factor), 10, 1, 1000, "1", NULL,
     "admm, newton, lbfgs: time.dt \"auto\" takes this many times the explicit bound (its CFL and "
     "P-wave "
     "speed), followed as the explicit step's is (cfl).",
     "integrator=admm|newton|lbfgs"},
    {"auto_step_cfl", PD_PARAM_REAL, P(auto_step_cfl), 0, 0, 10, "1", NULL,
     "admm, newton, lbfgs: above 0, time.dt \"auto\" is also at most this fraction of dx over "
     "the fastest particle's speed (a velocity CFL, without the P-wave speed: Table 2's steps "
     "are about dx / (1 m/s)), so that auto_step_factor may be large while the flow is slow. 0: "
     "auto_step_factor's alone.",
     "integrator=admm|newton|lbfgs"},
    {"rho", PD_PARAM_REAL, P(rho), 1, 1e-6, 1e6, "1", NULL,
     "admm: the penalty rho of the augmented Lagrangian (Eq. 9-10). The constraint weights w_p^2 "
     "= V_p^0 |d^2 Psi / d Sigma^2|_F (SEW, Sec. 7.3) carry the stiffness, so rho is a pure "
     "number.",
     "integrator=admm"},
    {"relaxation", PD_PARAM_REAL, P(relaxation), 1.5, 1, 1.95, "1", NULL,
     "admm: over-relaxation alpha of the grid and dual steps (Sec. 7.3; Fig. 12: 1.4-1.6 "
     "helped); 1 is the paper's 3D runs (Sec. 9), 1.5 halves the Fig. 7 bar's residual at no "
     "cost.",
     "integrator=admm"},
    {"friction_in_solve", PD_PARAM_BOOL, P(friction_in_solve), 1, 0, 1, "-", NULL,
     "admm: Coulomb friction at the colliders inside the iterations, as one more splitting of "
     "the augmented Lagrangian: each slip node's tangential velocity is copied into a variable "
     "that carries the dissipation mu j_n m |z| (j_n: the last grid step's normal reaction), "
     "updated by a soft threshold after each grid step with its multiplier (the friction "
     "impulse), so that the body above a floor node feels its friction within the step. "
     "false: friction after the solve, on the constrained nodes alone (at long steps a body "
     "Coulomb holds creeps). Beyond the paper.",
     "integrator=admm"},
    {"iterations", PD_PARAM_INT, P(iterations), 30, 1, 10000, "1", NULL,
     "admm: iterations per step at most (the paper prints only Fig. 16's 15; 30 leaves the "
     "Fig. 7 bar at a residual about 1e-6).",
     "integrator=admm"},
    {"tolerance", PD_PARAM_REAL, P(tolerance), 1e-5, 0, 1, "1", NULL,
     "admm: a step ends once the larger of the primal residual |w (F - D dv - b)| and the dual "
     "residual |w D (dv^{k+1} - dv^k)|, over |w b|, is below this (docs/methods/mpm.md).",
     "integrator=admm"},
    {"cg_iterations", PD_PARAM_INT, P(cg_iterations), 50, 1, 10000, "1", NULL,
     "admm, newton: conjugate gradient iterations of a grid step (a Newton step) at most.",
     "integrator=admm|newton|lbfgs"},
    {"cg_tolerance", PD_PARAM_REAL, P(cg_tolerance), 1e-3, 0, 1, "1", NULL,
     "admm, newton: a grid step's (a Newton step's) conjugate gradients stop once the residual "
     "fell by this factor.",
     "integrator=admm|newton|lbfgs"},
    {"grid_solver", PD_PARAM_ENUM, P(grid_solver), PD_MPM_GRID_CG, 0, 0, "-", "cg|cholesky",
     "admm: how the grid step solves A dv = rhs (Sec. 7.1). cg: conjugate gradients with A's "
     "diagonal (cg_iterations, cg_tolerance), the paper's. cholesky: A factored once a step "
     "(sparse Cholesky by CHOLMOD, one scalar system per velocity component: A's blocks are "
     "multiples of "
     "the identity) and each iteration's step solved exactly by its factor; beyond the paper. "
     "Falls back to cg for a step with pins or a collider node whose normal is not along an "
     "axis.",
     "integrator=admm"},
    {"anderson", PD_PARAM_INT, P(anderson), 0, 0, PD_ANDERSON_MAX_HISTORY, "1", NULL,
     "admm: Anderson acceleration of the iterations (Zhang, Peng, Zhang and Deng 2019; beyond "
     "the paper): each iteration is a fixed-point map of (D dv, y) and the friction split's "
     "variables, and the next iterate mixes the last anderson + 1 maps' outputs with the weights "
     "that minimise their combined residual; an accelerated iterate whose residual does not "
     "fall below the last accepted one's is replaced by that one's plain iterate, and the "
     "history restarts (their safeguard). 0: the paper's plain iteration. Refused with the "
     "Maxwell branch (its variables are not in the map).",
     "integrator=admm"},
    {"collider_normal", PD_PARAM_ENUM, P(collider_normal), PD_MPM_CONTACT_UNILATERAL, 0, 0, "-",
     "unilateral|held",
     "admm: a collider node's velocity along the collider's normal (Sec. 7.2's projection). "
     "unilateral: held while the collider pushes, a contact inside the iterations: after each "
     "grid step a held node whose normal reaction (A dv - rhs) . n would pull is let go, and a "
     "let-go node whose velocity moves into the collider is held again, so that material leaves "
     "a floor within the step as the explicit step's does. held: every node whose material "
     "reached the collider at the step's start keeps the collider's normal velocity through the "
     "step.",
     "integrator=admm"},
    {"optimiser_iterations", PD_PARAM_INT, P(optimiser_iterations), 50, 1, 10000, "1", NULL,
     "newton, lbfgs: iterations of the optimiser per step at most.", "integrator=newton|lbfgs"},
    {"optimiser_tolerance", PD_PARAM_REAL, P(optimiser_tolerance), 1e-6, 0, 1, "1", NULL,
     "newton, lbfgs: a step ends once |dE/d dv| (the momentum residual of backward Euler, free "
     "directions) is below this times the momentum the step moves, sqrt(sum_i (m_i (|v_i| + dt "
     "|g|))^2).",
     "integrator=newton|lbfgs"},
    {"history", PD_PARAM_INT, P(history), 5, 1, PD_DESCENT_MAX_HISTORY, "1", NULL,
     "lbfgs: curvature pairs kept (Nocedal and Wright Alg. 7.4) over the diagonal of the "
     "incremental potential's Hessian.",
     "integrator=lbfgs"},
    {"lbfgs_preconditioner", PD_PARAM_ENUM, P(lbfgs_preconditioner), PD_MPM_LBFGS_GRID_MATRIX, 0, 0,
     "-", "diagonal|grid_matrix",
     "lbfgs: the initial Hessian of its two-loop recursion. grid_matrix: the ADMM's stored grid "
     "matrix M + D^T w^2 D (Sec. 7.1, SEW weights w^2 = V0 |d^2 Psi / d Sigma^2|_F at the step's "
     "start) solved by conjugate gradients (cg_iterations, cg_tolerance) at every iteration; "
     "diagonal: its diagonal.",
     "integrator=lbfgs"},
};

const pd_param_table pd_mpm_param_table = {k_params, (int)(sizeof k_params / sizeof k_params[0]),
                                           sizeof(pd_mpm_params)};

#define M(field) offsetof(pd_mpm_material_params, field)

static const pd_param_info k_material_params[] = {
    {"elastic_energy", PD_PARAM_ENUM, M(elastic_energy), PD_MPM_HENCKY, 0, 0, "-",
     "hencky|neo_hookean|fixed_corotated",
     "Psi_E, the elastic energy of F_E, with the material's lambda and mu: hencky, StVK with "
     "Hencky strain (Fang 2019 Eq. 6); neo_hookean, mu / 2 (J^(-2/3) tr(F^T F) - 3) + K / 4 (J^2 "
     "- 1 - 2 ln J), K = lambda + 2 mu / 3; fixed_corotated, mu |F - R|^2 + lambda / 2 (J - 1)^2 "
     "(Stomakhin et al. 2012). All three are linear elasticity at small strain. Plasticity's "
     "returns act on the Hencky strain, so a plastic material takes hencky."},
    PD_CONTACT_MATERIAL_ROW(pd_mpm_material_params, contact_friction),
};

const pd_param_table pd_mpm_material_table = {
    k_material_params, (int)(sizeof k_material_params / sizeof k_material_params[0]),
    sizeof(pd_mpm_material_params)};
