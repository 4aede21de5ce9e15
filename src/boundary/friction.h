/* Coulomb friction against colliders inside an implicit solve, shared by every implicit method.
 *
 * A step of an implicit method minimises a merit phi(y) over the end-of-step positions y.
 * Friction enters it as a dissipation potential on each contact's tangential displacement
 * over the step, u = P_t (y - a) (P_t = I - n n^T, a = the particle's start-of-step position
 * carried along by the collider's surface velocity):
 *
 *     D(y) = sum_contacts  mu lambda f0(|u|)
 *
 * with the normal force lambda lagged (taken at the step's start and held through the step,
 * as in the lagged friction of Li et al. 2020, "Incremental Potential Contact", Sec. 5), so
 * that D depends on y alone and the line search and L-BFGS see one fixed function. The kink of
 * |u| at u = 0 is smoothed as in IPC: |u| becomes f0(|u|), equal to |u| beyond eps and a cubic
 * inside (C1, convex), so D has a continuous gradient: where |u| >= eps the contact feels the
 * force mu lambda against the slip, inside it a stiff tangential spring of stiffness up to
 * 2 mu lambda / eps holds it. A contact whose tangential load stays below mu lambda therefore
 * sticks up to a creep of less than eps per step (eps = PD_FRICTION_STICK_SPEED h: less than
 * that speed), and one whose load exceeds it slides. (Unsmoothed, with sticking decided per
 * contact, the merit had a kink the line search could not cross: a rocking block that sticks
 * stopped the iterations of the whole scene, and a block sliding beside it on the shipped
 * incline scene came out 7.6 % slower than Coulomb.) `no_slip` is mu = infinity: the
 * contact's tangential displacement is held at zero exactly, a constraint. */
#ifndef PD_FRICTION_H
#define PD_FRICTION_H

#include "boundary/collider.h"

/* A tangential displacement below this (m) counts as none (no_slip contacts are put at
 * their anchor to round-off). */
#define PD_FRICTION_AT_REST 1e-12

/* Slip speed (m/s) below which friction is smoothed (eps = this times the step): the fastest
 * a sticking contact creeps. */
#define PD_FRICTION_STICK_SPEED 3e-4

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
 * along r moves the merit up). Adds the gradient of the contact's part of D (smoothed within
 * eps of the anchor) to r, returns that part (J) and sets *k_t to the tangential stiffness a
 * preconditioner may use (N/m; mu lambda f1(|u|)/|u|, at most 2 mu lambda / eps). A no_slip
 * contact (limit infinite) sets *stuck and loses the tangential part of r (the caller holds
 * it on its normal line); away from its anchor it returns infinity: no admissible point. */
pd_real pd_friction_apply(pd_vec3* r, pd_vec3 y, pd_vec3 anchor, pd_vec3 n, pd_real limit,
                          pd_real eps, pd_real* k_t, uint8_t* stuck);

/* A trial point y of a no_slip contact (limit infinite) put at its anchor tangentially;
 * other contacts are left alone. */
pd_vec3 pd_friction_snap(pd_vec3 y, pd_vec3 anchor, pd_vec3 n, pd_real limit);

#endif
