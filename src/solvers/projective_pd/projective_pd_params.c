/* Options of the projective_pd method (He, Wang, Wu 2017). One table drives parsing of the
 * scene's `solver` object, `--set solver.<key>=...`, and docs/scene-format.md. */
#include "solvers/projective_pd/projective_pd_data.h"

#include <stddef.h>

#include "solvers/solver.h"

#define P(field) offsetof(pd_ppd_params, field)

static const pd_param_info k_params[] = {
    {"iterations", PD_PARAM_INT, P(iterations), 20, 1, 100000, "1", NULL,
     "Maximum local/global iterations per time step (Sec. 4.1); with iteration semi_iterative, "
     "the outer iterations a step takes unless the residual reaches tolerance first."},
    {"iteration", PD_PARAM_ENUM, P(iteration), PD_PPD_ACCURATE, 0, 0, "-",
     "accurate|semi_iterative",
     "accurate: the descent on Eq. 12's energy (global step of linear_iterations Chebyshev "
     "sweeps, Eq. 13's line search, L-BFGS pairs) until the residual reaches tolerance. "
     "semi_iterative: the paper's iteration (Wang 2015): per outer iteration one local step and "
     "one Jacobi sweep of the global system, the outer iterates Chebyshev-accelerated with "
     "semi_rho, the energy checked every semi_check iterations (the acceleration restarts from "
     "the last check when it rose); starts at y*, no line search."},
    {"semi_rho", PD_PARAM_REAL, P(semi_rho), 0, 0, 0.99999, "1", NULL,
     "Spectral radius the semi_iterative weights assume; 0: the Gershgorin bound of the Jacobi "
     "iteration on the global matrix (with the contact springs when contact is on), computed "
     "for the scene.",
     "iteration=semi_iterative"},
    {"semi_check", PD_PARAM_INT, P(semi_check), 5, 1, 1000, "1", NULL,
     "semi_iterative: outer iterations between energy checks (a rise restarts the "
     "acceleration from the last check, with semi_rho lowered by 10 %).",
     "iteration=semi_iterative"},
    {"tolerance", PD_PARAM_REAL, P(tolerance), 1e-4, 0, 1, "1", NULL,
     "Stop a step when the residual of Eq. 12, relative to its value at the step's start, falls "
     "below this."},
    {"global_solve", PD_PARAM_ENUM, P(global_solve), PD_PPD_CHEBYSHEV, 0, 0, "-",
     "chebyshev|direct|position_based",
     "Global step: Jacobi with Chebyshev acceleration (Wang 2015), sparse Cholesky (CHOLMOD, "
     "factored while families are fixed), or neighbourhood averaging (Fig. 7)."},
    {"linear_iterations", PD_PARAM_INT, P(linear_iterations), 40, 1, 100000, "1", NULL,
     "Jacobi sweeps (with Chebyshev acceleration) per global step; stiff bodies at large time "
     "steps need tens of them.",
     "iteration=accurate,global_solve=chebyshev"},
    {"horizon", PD_PARAM_REAL, P(horizon), 2.01, 1.01, 4.0, "spacing", NULL,
     "Family radius in particle spacings; 2.01 gives 32 neighbours on a lattice (Sec. 8: "
     "about 30). Families must span enough bond directions for an isotropic solid: on a grid "
     "a horizon below 1.42 (axis bonds only) is refused."},
    {"line_search", PD_PARAM_BOOL, P(line_search), 1, 0, 1, "-", NULL,
     "Backtracking line search with the Armijo condition on the step of Eq. 13.",
     "iteration=accurate"},
    {"armijo", PD_PARAM_REAL, P(armijo), 1e-4, 0, 0.5, "1", NULL,
     "Sufficient-decrease constant c of the Armijo condition.",
     "iteration=accurate,line_search=true"},
    {"dilatation", PD_PARAM_BOOL, P(dilatation), 1, 0, 1, "-", NULL,
     "Adds a volumetric term (beyond the paper) so that Poisson ratios in [0.25, 0.49] are "
     "honoured; off, the paper's energy shows nu = 1/4 and other ratios are refused."},
    {"inversion_fix", PD_PARAM_BOOL, P(inversion_fix), 1, 0, 1, "-", NULL,
     "Permute the first two rows of F when det F < 0 (Sec. 4.1, Fig. 3)."},
    {"surface_correction", PD_PARAM_BOOL, P(surface_correction), 1, 0, 1, "-", NULL,
     "Stiffen bonds near free surfaces so that surface layers match the bulk (Madenci & "
     "Oterkus 2014; beyond the paper)."},
    {"history", PD_PARAM_INT, P(history), 5, 0, PD_PPD_MAX_HISTORY, "1", NULL,
     "L-BFGS pairs kept within a step, with the global step as initial Hessian (Liu et al. "
     "2017; beyond the paper); 0 is the paper's preconditioned descent (Sec. 4.2, Eq. 13).",
     "iteration=accurate"},
    PD_CONTACT_SOLVER_ROWS(pd_ppd_params, contact, contact_stiffness),
    {"plastic_return", PD_PARAM_ENUM, P(plastic_return), PD_PPD_RETURN_AFTER_SOLVE, 0, 0, "-",
     "after_solve|in_solve",
     "Where plastic materials return to the yield surface (Sec. 5, Eq. 18-19). after_solve: the "
     "paper's order, once after the step's elastic solve (plastic_passes splits it). in_solve "
     "(beyond the paper; implicit elastoplasticity, Simo & Hughes 1998, Ortiz & Stainier 1999): "
     "at every iterate the reference vectors are returned from the step's start at that iterate, "
     "and the solve balances momentum with the returned stress (its line search on the "
     "residual where a particle yields), so that it never resists a flow with the elastic trial "
     "stress. With it, granular matter's static friction (Eq. 28) holds only grains inside the "
     "cone at the solution, and a cohesionless grain with fewer than 5 bonds (off the packing) "
     "returns to the cone's apex."},
    {"plastic_passes", PD_PARAM_INT, P(plastic_passes), 1, 1, 20, "1", NULL,
     "Plastic corrections per step for plastic materials: 1 is the paper's order (Sec. 5: after "
     "the step's solve); more split the solve's iterations evenly and correct the reference "
     "vectors at the iterate in between, so that the solve sees a stress bounded by the yield "
     "surface, not the step's elastic trial stress (which resists flow like a viscosity of "
     "about G h).",
     "plastic_return=after_solve"},
    {"plastic_invariants", PD_PARAM_ENUM, P(plastic_invariants), PD_PPD_INVARIANTS_AUTO, 0, 0, "-",
     "auto|deformation_gradient|bond_strains",
     "Where the yield test (Eq. 14) takes I1 and J2: deformation_gradient from the principal "
     "stretches of the family's F (beyond the paper: exact for a homogeneous strain on any "
     "family, so triaxial compression yields on the friction angle's cone); bond_strains from "
     "the mean and spread of the bond strains (Eq. 16-17 as printed: along a lattice axis its "
     "sqrt(J2) reads 8 % high and a solid yields 7.7 % early). auto: deformation_gradient for "
     "plastic solids and for granular matter under plastic_return in_solve (from the bonds, its "
     "uncompressed rows read I1 without the density penalty's pressure and a layer tilted 5 "
     "degrees below its angle slid), bond_strains for granular matter after the solve (its tests "
     "are measured so; docs/methods/projective_pd.md). A fluid always takes bond_strains."},
    {"density_iterations", PD_PARAM_INT, P(density_iterations), 4, 0, 100, "1", NULL,
     "Jacobi iterations per step of the position-based density constraints (Macklin and Mueller "
     "2013) that keep granular matter from compressing past its rest density (Sec. 8, Table 1's "
     "t_rho); 0 turns them off."},
    {"redistribution_iterations", PD_PARAM_INT, P(redistribution_iterations), 5, 0, 100, "1", NULL,
     "Jacobi iterations per step of a fluid's particle redistribution (Sec. 6, Eq. 22-24; the "
     "paper: 3 to 10)."},
    {"viscosity_iterations", PD_PARAM_INT, P(viscosity_iterations), 10, 0, 1000, "1", NULL,
     "Jacobi iterations per step of a fluid's implicit viscosity (Sec. 6); the error falls by "
     "a / (1 + a) per iteration, a = h nu sum_j V_j lap W_ij."},
    {"density_relaxation", PD_PARAM_REAL, P(density_relaxation), 1, 0, 1000, "1", NULL,
     "Relaxation epsilon of the density constraints, relative to each constraint's stiffness "
     "(lambda_i = -C_i / ((1 + epsilon) sum w |grad C|^2)): Jacobi updates of neighbours "
     "overshoot without it."},
    {"granular_constraints", PD_PARAM_ENUM, P(granular_constraints), PD_PPD_GRANULAR_AFTER_SOLVE, 0,
     0, "-", "after_solve|in_solve",
     "Where granular matter's density constraints and repulsion (Sec. 8) act. after_solve: the "
     "paper's order, density_iterations Jacobi iterations and the repulsion passes on the "
     "solve's result. in_solve (beyond the paper): as energies of the step's solve, a "
     "unilateral density penalty (stiffness density_stiffness) and a penalty on grains closer "
     "than granular.repulsion, so the solve's result is their equilibrium with the bonds and "
     "nothing moves the grains after it (a settled layer then gains no plastic strain at rest). "
     "Not yet the default: with the plastic return after the solve a sand column then stands "
     "(docs/methods/projective_pd.md). Fluids (Sec. 6) keep their density constraints after the "
     "solve either way."},
    {"density_stiffness", PD_PARAM_REAL, P(density_stiffness), 1, 0.01, 1000, "1", NULL,
     "granular_constraints in_solve: the density penalty's energy V K/2 max(rho/rho_0 - 1, 0)^2 "
     "per grain, K this times the material's bulk modulus.",
     "granular_constraints=in_solve"},
    {"yield_pressure", PD_PARAM_ENUM, P(yield_pressure), PD_PPD_YIELD_PRESSURE_OWN, 0, 0, "-",
     "own|kernel_mean",
     "plastic_return and granular_constraints in_solve, granular matter: the density penalty's "
     "pressure the yield check "
     "(Eq. 14) adds to I1. own: the grain's own K max(C, 0). kernel_mean (beyond the paper): "
     "its Shepard mean over the density kernel's neighbourhood, the pressure field an SPH "
     "pressure exerts at the grain (a settled lattice layer's penalty compresses alternate rows: "
     "their own pressure read 2-2.5 times the weight they bear; docs/methods/projective_pd.md).",
     "plastic_return=in_solve,granular_constraints=in_solve"},
    {"apex_return", PD_PARAM_ENUM, P(apex_return), PD_PPD_APEX_IN_SOLVE, 0, 0, "-",
     "in_solve|after_solve",
     "plastic_return in_solve: where a state past the Drucker-Prager cone's apex (Eq. 18's "
     "second case) goes to the apex. in_solve: at every iterate, a state with no stiffness in "
     "further tension, so a transient's tension becomes plastic volume (the indented clay at 30 "
     "degrees rose 2.66 mm above its far surface). after_solve (beyond the paper): at the "
     "iterates its deviator alone returns and the solve resists its tension elastically; the "
     "correction after the solve takes it to the apex (docs/methods/projective_pd.md).",
     "plastic_return=in_solve"},
};

const pd_param_table pd_ppd_param_table = {k_params, (int)(sizeof k_params / sizeof k_params[0]),
                                           sizeof(pd_ppd_params)};

/* Material blocks: Drucker-Prager and von Mises plasticity (Sec. 5). He 2017's viscoelastic
 * fluids (Sec. 6) are the method's own `fluid` block (projective_pd_setup.c); the scene
 * format's `viscoelasticity` block (a Prony series) is refused rather than run elastic. */
const pd_material_support pd_ppd_material_support = {
    .plasticity = (1u << PD_PLASTICITY_DRUCKER_PRAGER) | (1u << PD_PLASTICITY_VON_MISES),
    .viscoelasticity = 0};
