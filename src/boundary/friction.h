/* Coulomb friction against colliders inside an implicit solve, shared by every implicit method.
 *
 * A step of an implicit method minimises a merit phi(y) over the end-of-step positions y.
 * Friction enters it as a dissipation potential on each contact's tangential displacement
 * over the step, u = P_t (y - a) (P_t = I - n n^T, a = the particle's start-of-step position
 * carried along by the collider's surface velocity):
 *
 *     D(y) = sum_contacts  mu lambda |u|
 *
 * with the normal force lambda lagged (taken at the step's start and held through the step,
 * as in the lagged friction of Li et al. 2020, "Incremental Potential Contact", Sec. 5), so
 * that D depends on y alone and the line search and L-BFGS see one fixed function. Its
 * minimum is Coulomb's law without smoothing: where u != 0 the contact feels the force
 * mu lambda against the slip; at u = 0 D has a kink whose subdifferential is the disk of
 * radius mu lambda, so a contact whose tangential force stays inside it sticks (the particle
 * is held in all three directions) and one whose force exceeds it slides, its residual
 * reduced by mu lambda (the least-norm subgradient). `no_slip` is mu = infinity: the
 * contact's tangential displacement is held at zero. */
#ifndef PD_FRICTION_H
#define PD_FRICTION_H

#include "boundary/collider.h"

/* Below this tangential displacement (m) a contact sits at the kink of D (sticks or starts
 * to slide); the snap of pd_friction_snap puts it there to round-off. */
#define PD_FRICTION_AT_REST 1e-12

/* A particle this close to a collider's surface (m) touches it (as pd_colliders_project). */
#define PD_FRICTION_TOUCH 1e-9

/* Index of the collider nearest to p (smallest signed distance), its signed distance and
 * outward normal there (n may be NULL); -1 when there are no colliders. */
int pd_colliders_nearest(const pd_colliders* c, pd_vec3 p, pd_real* dist, pd_vec3* n);

/* The largest tangential force a contact of normal force fn (N, pressed into the collider
 * when > 0) can take: friction * fn, 0 when not pressed; infinite for `no_slip`, which holds
 * a touching particle whether pressed or not (it may still leave along the normal). */
pd_real pd_friction_limit(const pd_collider_def* d, pd_real fn);

/* Where a particle at x when the step starts would be after a step of h (s) if it moved
 * with the collider's surface: the point its tangential displacement is measured from. */
pd_vec3 pd_friction_anchor(const pd_collider* col, pd_vec3 x, pd_real h);

/* u = P_t (y - a): the tangential displacement over the step relative to the surface. */
pd_vec3 pd_friction_slip(pd_vec3 y, pd_vec3 anchor, pd_vec3 n);

/* Friction of one contact at the iterate y of the merit: r is the gradient of the rest of
 * the merit at the particle (N; the force the contact must balance, with sign: pushing
 * along r moves the merit up). Adds the friction force (the gradient of D, or at the kink its
 * least-norm subgradient) to r and returns mu lambda |u| (J), the contact's part of D.
 * *stuck gets 1 when the contact sticks: then r has lost its whole tangential part (the
 * caller blocks the particle's tangential motion), and 0 when it slides. A no-slip contact
 * away from its anchor returns infinity: such a point is not admissible. */
pd_real pd_friction_apply(pd_vec3* r, pd_vec3 y, pd_vec3 anchor, pd_vec3 n, pd_real limit,
                          uint8_t* stuck);

/* A trial point y_to reached from y_from (positions of one contact particle): when the
 * contact is no-slip (limit infinite), or when the move reverses the slip (u turns by more
 * than 90 degrees, it crossed the kink), the trial is put at the kink, u = 0: a sliding
 * contact that comes to rest stops there exactly instead of oscillating about it. */
pd_vec3 pd_friction_snap(pd_vec3 y_from, pd_vec3 y_to, pd_vec3 anchor, pd_vec3 n, pd_real limit);

#endif
