/* Multi-field contact on the background grid (Bardenhagen, Brackbill, Sulsky 2000, "The
 * material-point method for granular materials", Sec. 3; Bardenhagen et al. 2001, "An improved
 * contact algorithm for the material point method"): each body carries its own velocity field on
 * the nodes its particles reach, so two bodies that meet can also part (on one shared field they
 * stick: perfectly inelastic). At a node that two or more fields share:
 *   normal:  n, outward of the field L of the largest body there, by pd_grid_contact.normal:
 *            fitted (the default): the plane that best separates L's particles from the
 *            others' among those the node's stencil reaches, by a weighted logistic
 *            regression (Nairn, Hammerquist, Smith 2020, Sec. 2; grid_fields.c,
 *            fitted_normal): it follows the interface where one body's surface turns (two
 *            blocks meeting over half a face), where a body's own gradient tilts; u = n.
 *            mass_gradient: along g_L, the mass times the node's offset from L's local centre
 *            of mass (minus L's mass gradient; Nairn's "maximum volume" normal, NairnMPM docs
 *            "Surface Normals", taken per body); u = M_L n_L - M_o n_o over its length (n the
 *            fields' own outward normals, M their bodies' masses, o the heaviest other field);
 *   gap:     field b (not L) is in contact with L when the particles' extents, each particle
 *            reaching its half spacing r about its position, overlap by the step's end along
 *            the unit vector u:
 *              min_{p in b} (x_p - x_i) . u - r_b - max_{p in L} ((x_p - x_i) . u + r_L)
 *                - dt (v_L - v_b) . u  <=  0,
 *            over the particles with weight at the node within a spacing (at least half a
 *            cell) of the line through the node along u (a displacement check: Lemiale et al.
 *            2010, Nairn 2013; the separation from the particles' positions and sizes as
 *            Nairn, Hammerquist, Smith 2020 take it, here the extreme particles along u rather
 *            than the distances to the fitted plane);
 *   contact: for L and the fields in contact with it, when field b approaches their
 *            centre-of-mass velocity v_cm along its normal (n_L = n, n_b = -n),
 *              (v_b - v_cm) . n_b > 0:  v_b <- v_b - ((v_b - v_cm) . n_b) n_b, and Coulomb
 *              friction takes up to mu of that normal change off the tangential part of v_b - v_cm;
 *            a field moving away is left free (the bodies separate). With two fields the changes
 *            m_L dv_L + m_b dv_b cancel: momentum is kept to round-off.
 *
 * Layout: node-major, field b of node i at [i * count + b]. Every node gathers its particles in
 * the grid's fixed order (grid_cursor.h): no atomics, the same bytes on any thread count. */
#ifndef PD_GRID_FIELDS_H
#define PD_GRID_FIELDS_H

#include <stdint.h>

#include "grid/grid.h"

typedef struct pd_grid_fields {
    int count;         /* fields (2 or more) */
    size_t cap;        /* nodes the arrays hold */
    pd_real* mass;     /* [node * count + field] */
    pd_vec3* velocity; /* its velocity (momentum / mass; 0 without mass) */
    /* sum_p m_p w_ip (x_i - x_p) over the field's particles: the mass times node i's offset from
     * the field's local centre of mass, along minus the gradient of its mass (with the MLS
     * kernel gradient of pd_grid_gradient) */
    pd_vec3* moment;
    pd_real* extent; /* contact's scratch: a field's particles' extent along the normal */
} pd_grid_fields;

/* The contact normal at a node (pd_grid_contact.normal). */
typedef enum pd_grid_contact_normal {
    PD_GRID_NORMAL_FITTED,       /* the plane fitted between the fields' particles (Nairn 2020) */
    PD_GRID_NORMAL_MASS_GRADIENT /* L's mass gradient; the gap along u (the header) */
} pd_grid_contact_normal;

/* What the contact needs besides the fields (per field b: friction[b], body_mass[b],
 * half_spacing[b]). */
typedef struct pd_grid_contact {
    const int32_t* field_of;       /* per particle: its field */
    const pd_real* friction;       /* Coulomb's coefficient (a pair takes sqrt(mu_a mu_b)) */
    const pd_real* body_mass;      /* the body's mass (kg): the largest present gives the normal */
    const pd_real* half_spacing;   /* how far a particle reaches about its position (m) */
    pd_real dt;                    /* the step (s): the gap may close within it */
    pd_grid_contact_normal normal; /* how the normal is found (0: fitted) */
} pd_grid_contact;

void pd_grid_fields_init(pd_grid_fields* f, int count);
void pd_grid_fields_free(pd_grid_fields* f);

/* Particle to grid for every field (particle p in field field_of[p]), as pd_grid_from_particles
 * (APIC / MLS-MPM with the affine momentum, NULL: PIC), which it also does for the grid's own
 * combined arrays in the same pass. Grows f to the grid's nodes: PD_ERR_OUT_OF_MEMORY. */
pd_status pd_grid_fields_from_particles(pd_grid* g, pd_grid_fields* f, const int32_t* field_of,
                                        const pd_real* mass, const pd_vec3* v,
                                        const pd_mat3* affine);

/* v += dv at every field's node with mass (gravity). */
void pd_grid_fields_add_velocity(const pd_grid* g, pd_grid_fields* f, pd_vec3 dv);

/* The contact of the header at every node that fields share, from the fields of the last
 * transfer and the positions of the last fit. */
void pd_grid_fields_contact(const pd_grid* g, pd_grid_fields* f, const pd_grid_contact* c);

/* The contact's unit normal at node n, outward of the largest body's field there (c->normal
 * says how it is found), and when gap_direction is not NULL the unit vector the gap is measured
 * along; zero vectors where fewer than two fields have mass or the normal has no direction. */
pd_vec3 pd_grid_fields_contact_normal(const pd_grid* g, const pd_grid_fields* f,
                                      const pd_grid_contact* c, size_t n, pd_vec3* gap_direction);

/* Grid to particle from each particle's own field: v_p and, when c is not NULL, APIC's C_p, as
 * pd_grid_to_particles. */
void pd_grid_fields_to_particles(const pd_grid* g, const pd_grid_fields* f, const int32_t* field_of,
                                 pd_vec3* v, pd_mat3* c);

/* One RPIC round trip (Jiang et al. 2015; Fang 2019 Sec. 8; pd_grid_rpic_round_trip) through
 * each particle's own field: to the fields with the affine momentum m_p (C_p - C_p^T) / 2 and
 * back, giving new v and C. Each field keeps its own linear and angular momentum, so bodies
 * within a stencil of each other exchange none (through the one shared field they would).
 * affine: scratch of one matrix per particle. PD_ERR_OUT_OF_MEMORY as the transfer. */
pd_status pd_grid_fields_rpic_round_trip(pd_grid* g, pd_grid_fields* f, const int32_t* field_of,
                                         const pd_real* mass, pd_vec3* v, pd_mat3* c,
                                         pd_mat3* affine);

#endif
