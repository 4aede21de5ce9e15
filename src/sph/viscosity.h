/* Implicit viscosity for He 2017 Sec. 6 ("an implicit version of the viscous force [38]", [38]
 * being Mueller, Charypar, Gross 2003): the SPH viscous acceleration
 *   a_i = nu_i sum_j V_j (v_j - v_i) lap W(|y_i - y_j|, H_i),
 *   lap W = 45 / (pi H^6) (H - r)                                  (Mueller 2003, Sec. 3.5)
 * taken at the end of the step (backward Euler: v - h a(v) = v*), solved by Jacobi iterations,
 * which converge for any h nu (the system is diagonally dominant). A particle that does not
 * move (inv_mass 0: a ghost particle of a ceiling) keeps its velocity and drags its fluid
 * neighbours: the no-slip of Sec. 6's sticky ceiling. Every update reads the previous iterate
 * only: the result does not depend on the thread count. */
#ifndef PD_SPH_VISCOSITY_H
#define PD_SPH_VISCOSITY_H

#include "sph/density_constraint.h"

/* Viscosity on the step x -> y of length h for the particles whose kinematic viscosity nu
 * (m^2/s) is positive: v* = (y - x) / h, `iterations` Jacobi iterations of
 *   v_i = (v*_i + h nu_i sum_j V_j L_ij v_j) / (1 + h nu_i sum_j V_j L_ij),
 * then y = x + h v. Neighbours, volumes, radii and inverse masses come from `def`;
 * scratch->grad and scratch->move hold v* and the next iterate. */
void pd_sph_implicit_viscosity(const pd_density_constraint_def* def, const pd_real* nu,
                               const pd_vec3* x, pd_real h, pd_vec3* y, int iterations,
                               pd_density_scratch* scratch);

#endif
