/* Particle redistribution of He 2017 Sec. 6 (Eq. 21-24): a viscoelastic fluid's particles
 * clump and open voids (the tensile instability of particle fluids); redistribution moves them
 * towards an even distribution by driving the constraint
 *   C_i = |grad_i rho|^2 = 0                                                    (Eq. 21)
 * with Spiky kernel gradients, rho the kernel density over the rest density of the density
 * constraints (density_constraint.h, the colliders' share included). Per iteration
 *   tau_i = C_i / ((1 + relaxation) sum_l |grad_l C_i|^2)                          (Eq. 22-23)
 *   y_i <- y_i - delta_i sum_j (tau_i + tau_j) / 2 grad_i W_ij                     (Eq. 24)
 * Eq. 24 is read in kernel units (positions over the kernel radius H, where tau and the kernel
 * gradient carry no units: in metres the printed update is not a length), and with the sign
 * that lowers C_i: a particle moves away from the neighbours that crowd it, down the density
 * gradient (the printed sign moves it up, into a clump). grad_l C_i of Eq. 23 uses the Spiky
 * kernel's Hessian; the colliders' share enters grad_i rho but not the Hessian, and in Eq. 24
 * the solid is a neighbour with the particle's own tau (without it a particle beside a wall,
 * whose neighbours all lie on one side, is pushed into the wall). A particle at a free surface
 * (kernel density below 0.95 of the rest density) takes no part (tau = 0, no move): there
 * Eq. 24 pushes the surface outward every iteration, and moving it tangentially only (Lind et
 * al. 2012) still let a fluid column shed particles (measured). Every update reads
 * the previous iterate only: the result does not depend on the thread count. */
#ifndef PD_SPH_REDISTRIBUTION_H
#define PD_SPH_REDISTRIBUTION_H

#include "sph/density_constraint.h"

/* `iterations` Jacobi iterations of Eq. 22-24 on y for the particles whose strength (delta of
 * Eq. 24, in [0, 1]) is positive and which move (inv_mass > 0); every particle of `def` counts
 * in their densities (a fixed one as a ghost, Sec. 6). Returns the mean of C_i H_i^2 over those
 * particles before the last iteration (the paper's "average error", in kernel units).
 * scratch->lambda holds tau, scratch->grad grad_i rho, scratch->move the corrections. */
pd_real pd_redistribute(const pd_density_constraint_def* def, const pd_real* strength, pd_vec3* y,
                        int iterations, pd_density_scratch* scratch);

#endif
