/* The kernel density a particle misses where its kernel reaches past a collider's surface:
 * the solid is counted as filled with matter at the rest density, the half-space beyond a
 * plane tangent to the surface (as SPH boundary treatments by volume integrals do, e.g.
 * Koschier and Bender 2017's density maps). Without it a grain resting on a floor or between
 * the walls of a channel counts as loose (He 2017 Eq. 25-26 compare the density with the rest
 * density), which a thin channel makes of every grain (measured: 94 % of a 4-spacing-deep
 * column). Or the solid is counted as the particle's own lattice continued past the plane, row
 * by row (pd_sph_poly6_layers_beyond_plane): what a lattice resting on a wall misses, which
 * the half-space over-reads by 2.5 % half a spacing from the wall. */
#ifndef PD_SPH_WALL_DENSITY_H
#define PD_SPH_WALL_DENSITY_H

#include "peridot/math.h"

struct pd_colliders;

/* The share of the Poly6 kernel of radius H beyond a plane at distance d from its centre
 * (d <= 0: half or more of it; d >= H: 0); the whole kernel integrates to 1. */
pd_real pd_sph_poly6_beyond_plane(pd_real d, pd_real H);

/* The Poly6 kernel sum of a particle of a unit cubic lattice (a unit volume a point, radius
 * `horizon` in spacings) over the lattice rows at heights >= lowest_row above its own (rows at
 * every height: lowest_row <= -horizon): the rest sum of an interior particle, or that of one
 * in a layer's bottom row (lowest_row 0). */
pd_real pd_sph_poly6_lattice_sum(pd_real horizon, int lowest_row);

/* The share of Poly6 (radius H) in the rows of a cubic lattice of spacing s continued past a
 * plane at distance d from the kernel's centre: rows at z = d + s/2, d + 3s/2, ... beyond it,
 * each s times the kernel's integral over its plane, pi C (H^2 - z^2)^4 / 4 (C = 315 / (64 pi
 * H^9)); its derivative with respect to d in *deriv (may be NULL). What the matter beyond a wall
 * is for a particle of a lattice resting on it: at d = s/2 (H = 2.01 s) the discrete rows
 * hold 0.193 of the kernel, this 0.196, the half-space (pd_sph_poly6_beyond_plane) 0.218. */
pd_real pd_sph_poly6_layers_beyond_plane(pd_real d, pd_real H, pd_real s, pd_real* deriv);

/* The height above a plane (in spacings) at which a particle of the bottom row of a cubic
 * lattice layer resting on it reaches the interior rest sum, the plane's share standing in for
 * the rows the layer misses: where a density constraint or penalty at rho_0 carries an unloaded
 * bottom row; a loaded one is pressed below it. With layers 0 the share is the half-space
 * (0.5545 at a horizon of 2.01: the continuum half-space holds less kernel near the plane than
 * the discrete rows it replaces), with layers 1 the continued rows (0.5069). */
pd_real pd_sph_poly6_rest_height(pd_real horizon, int layers);

/* The share of particle p's Poly6 kernel (radius H) inside the colliders, each collider's solid
 * the union of its faces (pd_collider_faces), each face's share that of the lattice of spacing
 * s continued past it (pd_sph_poly6_layers_beyond_plane) or, for s = 0, the half-space beyond
 * it; overlapping solids as a union of independent regions (wall_density.c). */
pd_real pd_sph_collider_share(const struct pd_colliders* c, pd_vec3 p, pd_real H, pd_real s);

/* The same share and its gradient with respect to p (1/m) in *grad. */
pd_real pd_sph_collider_share_gradient(const struct pd_colliders* c, pd_vec3 p, pd_real H,
                                       pd_real s, pd_vec3* grad);

#endif
