/* The constraint hooks of the shared optimiser (optim/descent.h) for an implicit method that
 * resolves collider contact inside its solve (boundary/collider_contact.h) and, optionally,
 * contact between bodies (src/contact): the search direction filtered by the blocked normals,
 * every trial projected out of the colliders, and trials that bring two bodies' particles
 * closer than PD_CONTACT_FLOOR refused. A method keeps a pd_contact_hooks in its state and
 * passes it as the problem's constraint_ctx; projective_pd and hyperelastic_pd do. */
#ifndef PD_CONTACT_HOOKS_H
#define PD_CONTACT_HOOKS_H

#include <stddef.h>

#include "boundary/collider_contact.h"
#include "contact/contact.h"

typedef struct pd_contact_hooks {
    pd_collider_contact* cc;
    pd_contact* contact; /* NULL: no contact between bodies */
} pd_contact_hooks;

/* v <- the directions the colliders' blocked normals leave (pd_collider_contact_filter). */
void pd_contact_hooks_filter(void* hooks, pd_vec3* v, size_t n);
/* y out of the colliders (pd_collider_contact_project). */
void pd_contact_hooks_project(void* hooks, pd_vec3* y);
/* The floor of the line search that begins (pd_contact_search_begins). */
void pd_contact_hooks_search_begins(void* hooks);
/* 1 when the trial just evaluated kept it (pd_contact_admissible). */
int pd_contact_hooks_admissible(void* hooks);

#endif
