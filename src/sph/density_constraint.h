/* Position-based density constraints (Macklin and Mueller 2013, Position Based Fluids, Eq. 1-12),
 * shared by the methods: He 2017 enforces incompressibility of viscoelastic fluids with them
 * (Sec. 6) and solves them for sand too (Sec. 8, Table 1's t_rho). Per particle i,
 *   C_i = rho_i / rho_0 - 1,   rho_i / rho_0 = (sum_j V_j W(y_i - y_j, H_i) + V_i W(0, H_i)) / R_i
 *                                               + (the colliders' share of i's kernel),
 * Poly6 for the density and the Spiky gradient for its derivatives (Mueller 2003), R_i the
 * kernel sum at the rest density. Each Jacobi iteration takes, with inverse masses w,
 *   lambda_i = -C_i / ((1 + relaxation) sum_k w_k |grad_k C_i|^2)
 *   dy_i = w_i (lambda_i grad_i C_i + sum_j lambda_j grad_i C_j)
 * (the mass-weighted form of PBF's Eq. 11-12; `relaxation` plays the part of its epsilon,
 * relative to the denominator so that it needs no units). A unilateral particle (granular
 * matter) only resists compression: its C_i is max(C_i, 0). Every update reads the previous
 * iterate only: the result does not depend on the thread count. */
#ifndef PD_SPH_DENSITY_CONSTRAINT_H
#define PD_SPH_DENSITY_CONSTRAINT_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/math.h"

struct pd_colliders;

enum {
    PD_DENSITY_ACTIVE = 1,     /* the particle has a density constraint */
    PD_DENSITY_UNILATERAL = 2, /* ... that only resists compression */
};

typedef struct pd_density_constraint_def {
    size_t count;
    const uint32_t* offsets; /* CSR of symmetric neighbour lists within the kernel radius */
    const uint32_t* nbr;
    const pd_real* volume;                /* m^3 */
    const pd_real* inv_mass;              /* 1/kg; 0: never moves */
    const pd_real* radius;                /* kernel radius H_i (m) */
    const pd_real* rest_sum;              /* R_i: kernel sum at the rest density (1) */
    const uint8_t* kind;                  /* PD_DENSITY_* bits per particle */
    const struct pd_colliders* colliders; /* may be NULL: no wall share */
    pd_real relaxation;                   /* >= 0 */
    const pd_real* wall_spacing; /* per particle (m): the walls' share the rows of its lattice
                                  * continued past them; NULL or 0: the half-space beyond them
                                  * (src/sph/wall_density.h) */
} pd_density_constraint_def;

/* Particle i's wall_spacing (0 without one). */
static inline pd_real pd_density_wall_spacing(const pd_density_constraint_def* d, size_t i) {
    return d->wall_spacing ? d->wall_spacing[i] : 0;
}

/* Scratch the iterations use: lambda, grad_i C_i and the corrections (count entries each), and
 * one partial maximum per chunk (pd_density_chunks(count) entries). lambda_sum, when not NULL,
 * receives each constraint's lambda summed over the iterations (kg m^2): the constraint's impulse
 * h f_i = lambda grad C / h, from which a caller reads the pressure it carried,
 * p_i = -lambda_sum_i / (V_i h^2). */
typedef struct pd_density_scratch {
    pd_real* lambda;
    pd_vec3* grad;
    pd_vec3* move;
    pd_real* partial;
    pd_real* lambda_sum;
} pd_density_scratch;

/* Particles per parallel chunk of the density passes (fixed: chunk sums do not depend on the
 * thread count); pd_density_chunks(count) chunks cover count particles. */
#define PD_DENSITY_GRAIN 512
size_t pd_density_chunks(size_t count);

/* rho_i / rho_0 of particle i at y (the density above over the rest density). */
pd_real pd_density_ratio(const pd_density_constraint_def* def, const pd_vec3* y, size_t i);

/* The same ratio and its gradient with respect to y_i (1/m, Spiky kernel) in *grad. */
pd_real pd_density_ratio_gradient(const pd_density_constraint_def* def, const pd_vec3* y, size_t i,
                                  pd_vec3* grad);

/* `iterations` Jacobi iterations on y; returns the largest C_i (unilateral ones clamped at 0)
 * before the last iteration's correction, over the active particles. */
pd_real pd_density_constraint_solve(const pd_density_constraint_def* def, pd_vec3* y,
                                    int iterations, pd_density_scratch* scratch);

#endif
