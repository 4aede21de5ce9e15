/* A method's arrays that persist from one step to the next, declared once: name, bytes per
 * element, per particle or per bond of its family. The core permutes them when the world
 * reorders its particles, carries the per-bond ones across a renewal or a removal of bonds, and
 * writes and reads them in checkpoints (world/checkpoint.c); no method has copy loops of its
 * own. Per-bond arrays, persistent or scratch, are allocated and freed here too, sized by the
 * family's bond capacity, so that they always hold the family's bonds. Per-particle scratch is
 * not declared: the method allocates it and the next step rebuilds it. */
#ifndef PD_STATE_ARRAYS_H
#define PD_STATE_ARRAYS_H

#include <stddef.h>

#include "neighbor/family.h"
#include "neighbor/family_renewal.h"

typedef enum pd_state_kind {
    PD_STATE_PER_PARTICLE,
    PD_STATE_PER_BOND,
    PD_STATE_BOND_SCRATCH /* per bond, rewritten every step: sized with the family, not kept */
} pd_state_kind;

typedef struct pd_state_array {
    const char* name;
    void* pointer; /* the address of the method's pointer to the array (T**): an array the
                    * method reallocates (a renewal) or has not allocated (NULL) is found there */
    size_t size;   /* bytes per particle or per bond */
    pd_state_kind kind;
    void* spare; /* per bond: the array before the last renewal, which the next one reuses */
} pd_state_array;

#define PD_MAX_STATE_ARRAYS 24

typedef struct pd_state_arrays {
    pd_family* family;     /* the bonds the per-bond arrays follow */
    size_t bond_capacity;  /* bonds each per-bond array holds */
    size_t spare_capacity; /* bonds each spare holds (0: none) */
    int count;
    pd_state_array items[PD_MAX_STATE_ARRAYS];
} pd_state_arrays;

void pd_state_arrays_init(pd_state_arrays* s, pd_family* family);
/* Declares the array whose pointer is at `pointer` (e.g. &state->plastic_strain). */
void pd_state_declare(pd_state_arrays* s, const char* name, void* pointer, size_t size,
                      pd_state_kind kind);

/* The array an item declares (NULL when not allocated). */
void* pd_state_array_data(const pd_state_array* a);

/* The array s->field of one element per particle or per bond, named as its field. */
#define PD_STATE_PARTICLES(a, s, field)                                                            \
    pd_state_declare(a, #field, &(s)->field, sizeof *(s)->field, PD_STATE_PER_PARTICLE)
#define PD_STATE_BONDS(a, s, field)                                                                \
    pd_state_declare(a, #field, &(s)->field, sizeof *(s)->field, PD_STATE_PER_BOND)
#define PD_STATE_BOND_SCRATCH(a, s, field)                                                         \
    pd_state_declare(a, #field, &(s)->field, sizeof *(s)->field, PD_STATE_BOND_SCRATCH)

/* Per-bond arrays (persistent and scratch) for at least `capacity` bonds: those that hold them
 * already are kept with their contents; otherwise all are allocated anew, zeroed (what they held
 * is dropped: for a method that rebuilds them from the family, or a checkpoint about to fill
 * them). At creation, call it with the family's bond_capacity. */
pd_status pd_state_bonds_reserve(pd_state_arrays* s, size_t capacity);
/* The family is about to be replaced by `out`, renewed from it (new bond b was old bond
 * old_bond[b] or PD_BOND_NEW): every persistent per-bond array is carried into an array of
 * out's capacity, a new bond's entry zeroed; scratch arrays are only sized. The arrays replaced
 * are kept as spares, which the next renewal writes into when they hold its bonds (a body that
 * renews every step then allocates nothing). On failure nothing has changed. */
pd_status pd_state_bonds_renew(pd_state_arrays* s, const pd_family* out, const uint32_t* old_bond);
/* Removes the bonds with remove[b] != 0 and their opposites from the family
 * (pd_family_remove: `broken` may be NULL, `map` holds bond_count entries) and compacts every
 * persistent per-bond array alike. */
pd_status pd_state_bonds_remove(pd_state_arrays* s, const uint8_t* remove, const int32_t* id,
                                pd_bond_set* broken, uint32_t* map, size_t* removed);
/* Frees the per-bond arrays and their spares (their pointers become NULL). */
void pd_state_bonds_free(pd_state_arrays* s);

/* After the world reordered its particles (new i = old perm[i]): renumbers the family and
 * permutes every declared array. r is left begun, its scratch room for the largest element,
 * for what the method permutes beyond the arrays (a factor's rows); end it with
 * pd_reorder_end. */
pd_status pd_state_arrays_reorder(const pd_state_arrays* s, const uint32_t* perm, pd_reorder* r);

#endif
