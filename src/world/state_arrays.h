/* A method's arrays that persist from one step to the next, declared once: name, bytes per
 * element, per particle or per bond of its family. The core permutes them when the world
 * reorders its particles (the methods' copy loops are gone), and the same declaration is what a
 * checkpoint will write and read (issue 30, item 5). Per-step scratch is not declared: the next
 * step rebuilds it. */
#ifndef PD_STATE_ARRAYS_H
#define PD_STATE_ARRAYS_H

#include <stddef.h>

#include "neighbor/family.h"
#include "neighbor/family_renewal.h"

typedef enum pd_state_kind { PD_STATE_PER_PARTICLE, PD_STATE_PER_BOND } pd_state_kind;

typedef struct pd_state_array {
    const char* name;
    void* pointer; /* the address of the method's pointer to the array (T**): an array the
                    * method reallocates (a renewal) or has not allocated (NULL) is found there */
    size_t size;   /* bytes per particle or per bond */
    pd_state_kind kind;
} pd_state_array;

#define PD_MAX_STATE_ARRAYS 24

typedef struct pd_state_arrays {
    pd_family* family; /* the bonds the per-bond arrays follow */
    int count;
    pd_state_array items[PD_MAX_STATE_ARRAYS];
} pd_state_arrays;

void pd_state_arrays_init(pd_state_arrays* s, pd_family* family);
/* Declares the array whose pointer is at `pointer` (e.g. &state->plastic_strain). */
void pd_state_declare(pd_state_arrays* s, const char* name, void* pointer, size_t size,
                      pd_state_kind kind);

/* The array s->field of one element per particle or per bond, named as its field. */
#define PD_STATE_PARTICLES(a, s, field)                                                            \
    pd_state_declare(a, #field, &(s)->field, sizeof *(s)->field, PD_STATE_PER_PARTICLE)
#define PD_STATE_BONDS(a, s, field)                                                                \
    pd_state_declare(a, #field, &(s)->field, sizeof *(s)->field, PD_STATE_PER_BOND)

/* After the world reordered its particles (new i = old perm[i]): renumbers the family and
 * permutes every declared array. r is left begun, its scratch room for the largest element,
 * for what the method permutes beyond the arrays (a factor's rows); end it with
 * pd_reorder_end. */
pd_status pd_state_arrays_reorder(const pd_state_arrays* s, const uint32_t* perm, pd_reorder* r);

#endif
