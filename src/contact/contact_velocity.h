/* Contact between two particles as a hard constraint on their velocities, for the methods
 * that solve for velocities with position-based constraints (velocity-based XPBD: xpbi, Yu et
 * al. 2024 Alg. 1's loop over the constraints C_i "e.g., collision", Sec. 4.4). The pair and
 * its contact distance d_c are the core's (contact.h: particles of two bodies touch at
 * d_c = (s_i + s_j) / 2, where their sampled surfaces meet), the friction coefficient a pair
 * takes is contact.h's sqrt(mu_i mu_j); this is the response, the counterpart of the penalty
 * energy of contact.c for a method without an energy to add it to.
 *
 * With the candidate positions x~ = x^n + dt v and the pair's normal n the constraint is
 * C = (x~_i - x~_j) . n - d_c >= 0 while the candidates are within d_c across n (and while it
 * pushes): on a lattice face every pair then holds the same plane, where |x~_i - x~_j| < d_c left
 * hollows between the face's particles (a block at mu 0.5 > tan 20 crept down a slab body at
 * 0.19 m/s^2, sinking into them and popped out by the next pair, without friction). With n along
 * the pair's line, C = |x~_i - x~_j| - d_c; a method may give the normal of the bodies' surfaces
 * instead (xpbi: the other body's kernel-weighted direction, so that a lattice face is flat, not
 * a washboard of bumps one spacing apart).
 * Over a step's iterations (projected Gauss-Seidel) the pair accumulates the change it gave
 * the relative velocity u = v_i - v_j along the normal, jn >= 0 (the total, clamped at 0: a pair
 * only pushes), and across it, jt with |jt| <= mu jn (Coulomb on the impulses: the tangential
 * change that stops the relative slip, held to mu times the normal one). The change of u is
 * shared by inverse masses, particle i taking w_i / (w_i + w_j) of it and j the opposite
 * w_j / (w_i + w_j): equal and opposite impulses, momentum kept exactly. */
#ifndef PD_CONTACT_VELOCITY_H
#define PD_CONTACT_VELOCITY_H

#include "peridot/math.h"

/* What a pair's constraint has given the relative velocity over the step so far (m/s); zero at
 * the step's start. */
typedef struct pd_contact_pair_sum {
    pd_real normal;  /* jn >= 0, along n = (x~_i - x~_j) / |x~_i - x~_j| */
    pd_vec3 tangent; /* jt, |jt| <= mu jn */
} pd_contact_pair_sum;

/* One update of the pair: d = x~_i - x~_j at the current velocities, n its unit normal (from j
 * to i; zero: along d), dc its contact distance,
 * u = v_i - v_j, mu its friction coefficient (no bound below 0: none). Returns the change of u
 * that brings the candidates to d_c apart (or, once the pair separates, takes back what it gave)
 * with the friction's change, and updates *sum; zero for a pair apart that had given nothing. */
pd_vec3 pd_contact_pair_velocity(pd_vec3 d, pd_vec3 n, pd_real dc, pd_vec3 u, pd_real mu,
                                 pd_real dt, pd_contact_pair_sum* sum);

#endif
