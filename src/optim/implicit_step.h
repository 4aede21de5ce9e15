/* The implicit step the energy-based methods share around the optimiser (optim/descent.h),
 * written once: projective_pd (He 2017 Sec. 4, Eq. 12-13) and hyperelastic_pd (Xu 2018 Eq. 21,
 * Sec. 5.2) minimise E(y) = |y - y*|^2_M / (2 h^2) + W(y) over the end-of-step positions y,
 * with the colliders' contact and Coulomb friction inside the solve. One step is:
 *   1. y* = x + h v + h^2 g; pinned and fixed particles (PD_P_CONSTRAINED) stay where the
 *      world put them;
 *   2. the step's collider contact (boundary/collider_contact.h) and, when the method has it,
 *      the contact between bodies with its friction pairs lagged at x (contact/contact.h);
 *   3. Coulomb friction's limits mu lambda from x + h v, where a body resting on a collider
 *      presses on it with its weight as at the end of the last step (y* would deform it by
 *      h^2 g); a body still moving into the collider is lifted there by its touching layer
 *      alone, whose elastic force the guess then counts (hyperelastic_pd lags and renews
 *      lambda instead: pd_collider_contact_lag_friction);
 *   4. the method's start point, then what it does before the solve (a start moved off a
 *      contact, a refactorisation);
 *   5. the method's solve, told the force the step has to produce anyway,
 *      sqrt(sum (m (|g| + |v| / h))^2), against which it measures the residual (a body in free
 *      flight, whose starting residual is round-off, does not chase round-off);
 *   6. what the method does to the solution before the write-back (NULL: nothing);
 *   7. x <- y, v <- (y - x) / h (contacts and friction were in the solve: the world leaves the
 *      velocity alone, contact_in_solve), and a pinned particle's force <- its internal force
 *      -dE/dy, from which the world derives the pin's reaction.
 * The method supplies its descent problem (merit, residual, global step, constraint hooks:
 * contact/contact_hooks.h) and the hooks of steps 4-6; the arrays are the method's. */
#ifndef PD_IMPLICIT_STEP_H
#define PD_IMPLICIT_STEP_H

#include "boundary/collider_contact.h"
#include "contact/contact.h"
#include "optim/descent.h"
#include "world/step_context.h"

typedef struct pd_implicit_step {
    void* ctx;                  /* handed to the hooks below */
    pd_descent* opt;            /* the method's optimiser: opt->y and opt->r are the iterate */
    pd_descent_problem problem; /* what the solve minimises */
    pd_collider_contact* cc;    /* the method's collider contact */
    pd_contact* contact;        /* its contact between bodies; NULL: none */
    pd_vec3* ystar;             /* y*, written by step 1 (one per particle) */
    /* dE/dy of the internal energy at the accepted iterate, read at the write-back */
    const pd_vec3* gradient;
    /* The start point, evaluated and admissible, into opt->y: returns its merit and its |r|
     * in *r_norm. */
    pd_real (*start_point)(void* ctx, pd_real* r_norm);
    /* Between the start point and the solve; may move the start (merit and r_norm updated).
     * Another status than PD_OK ends the step with it. NULL: nothing. */
    pd_status (*before_solve)(void* ctx, pd_real* merit, pd_real* r_norm);
    /* Solves from opt->y (merit, r_norm: its merit and |r|); force_scale (N) as in step 5. */
    pd_status (*solve)(void* ctx, pd_real merit, pd_real r_norm, pd_real force_scale);
    /* After the solve, before the write-back: corrections of opt->y. NULL: nothing. */
    void (*after_solve)(void* ctx);
} pd_implicit_step;

/* One implicit step (steps 1-7 above) of the world's particles, ctx->particles. */
pd_status pd_implicit_step_run(const pd_implicit_step* m, const pd_step_context* ctx);

/* Step 1 alone: out[i] = x + h v + h^2 g, or x for a constrained particle (a method that needs
 * y* outside a step, for factors built at set-up). */
void pd_implicit_predict(const pd_particles* p, pd_real h, pd_vec3 gravity, pd_vec3* out);

#endif
