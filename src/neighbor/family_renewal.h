/* Families that change during a run: renewal from current positions (plastic flow, granular
 * matter, He 2017 Sec. 8), bonds removed, and bonds broken for good (fracture). A method keeps
 * per-bond state across a change through the map each call returns: new bond b was old bond
 * old_bond[b], or PD_BOND_NEW. Particle indices are those of the moment; the ids of the
 * broken-bond set survive Morton reorderings (the world renumbers families through the
 * method's on_reorder, ids never change). */
#ifndef PD_FAMILY_RENEWAL_H
#define PD_FAMILY_RENEWAL_H

#include "neighbor/family.h"

#define PD_BOND_NEW UINT32_MAX

/* Unordered pairs of particle ids whose bond is broken for good: renewal never bonds them
 * again. Sorted keys, so a look-up is a binary search. */
typedef struct pd_bond_set {
    size_t count, capacity;
    uint64_t* keys;
} pd_bond_set;

pd_status pd_bond_set_add(pd_bond_set* set, int32_t id_a, int32_t id_b);
int pd_bond_set_has(const pd_bond_set* set, int32_t id_a, int32_t id_b);
void pd_bond_set_free(pd_bond_set* set);

/* A Verlet list for renewals (Verlet 1967's neighbour list with a skin): the pairs within the
 * search radius plus a skin at the positions of its last search (anchor), valid while no particle
 * has moved half the skin since, so that every pair within the radius now is on it. A renewal
 * then filters it by the exact distance instead of searching the grid again: the families come
 * out the same (the list is sorted, every pair tested at the current positions). A list that
 * lasted a single renewal (particles moving fast) is searched without a skin for the next
 * PD_VERLET_PAUSE renewals, which then cost what a search without a list costs. */
typedef struct pd_neighbor_cache {
    pd_neighbor_list list;
    pd_vec3* anchor; /* positions of the last search */
    size_t count, anchor_capacity;
    pd_real radius, skin; /* of the last search (m) */
    /* the skin, in the largest spacing; 0: the list is searched anew at every renewal (into
     * `list`: kept, so a warm search allocates nothing) */
    pd_real skin_spacings;
    int valid, uses, pause;
    size_t searches, renewals; /* counters, for measurements */
} pd_neighbor_cache;
#define PD_VERLET_PAUSE 8
/* Forget the list (the particles were renumbered). */
void pd_neighbor_cache_invalidate(pd_neighbor_cache* c);
void pd_neighbor_cache_destroy(pd_neighbor_cache* c);

/* What a renewal reads: the particles of the moment and which bodies renew. */
typedef struct pd_renewal_def {
    const pd_vec3* pos;         /* positions the new neighbourhoods are found on (m) */
    const pd_real* volume;      /* m^3 */
    const pd_real* spacing;     /* m */
    const int32_t* body;        /* body of each particle */
    const int32_t* id;          /* stable id of each particle */
    const uint8_t* body_renews; /* per body: 1 renews its families, 0 keeps its bonds */
    /* per particle, or NULL (every particle of a renewing body renews): within a renewing
     * body, a pair is found anew when either end renews; a pair of two that do not keeps its
     * bond, however far apart they are (a body part flowing, another elastic) */
    const uint8_t* particle_renews;
    const pd_bond_set* broken; /* may be NULL */
    pd_real horizon;           /* in spacings, as pd_family_build */
    pd_neighbor_cache* cache;  /* may be NULL: the grid searched at every renewal */
} pd_renewal_def;

/* Builds `out` from `old`: a particle of a renewing body is bonded to every particle of its
 * body within horizon * spacing at `pos`, except broken pairs (with particle_renews: only the
 * pairs with a renewing end are found so, the others keep their bonds); a particle of any other
 * body keeps its old bonds. Carried bonds keep X<xi> and w; a new bond gets X<xi> = pos_j - pos_i
 * (the method sets its own reference, e.g. He 2017 Eq. 20) and its body's bulk weight (the w
 * every bond of the body had at creation). *old_bond gets the map from new bonds to old ones
 * (pd_alloc'd, out->bond_capacity + 1 entries: free with pd_bonds_map_free(map, out)). `old` is
 * left intact; `out` is overwritten. On failure `out` is freed. */
pd_status pd_family_renew(const pd_family* old, pd_hash_grid* grid, const pd_renewal_def* def,
                          pd_family* out, uint32_t** old_bond);
/* The same into `out`, a family of the same particles from an earlier renewal (or zeroed),
 * whose arrays are reused when they hold the bonds (a renewal every step then allocates only
 * its map and neighbour list) and allocated anew, with an eighth more room, when not: its
 * bond_capacity may exceed bond_count. */
pd_status pd_family_renew_into(const pd_family* old, pd_hash_grid* grid, const pd_renewal_def* def,
                               pd_family* out, uint32_t** old_bond);

/* Removes every bond with remove[b] != 0 together with its opposite bond, in place (the arrays
 * keep their capacity; bond_count shrinks), and adds
 * the pairs to `broken` (may be NULL) so that renewals never restore them. old_bond (at least
 * f->bond_count entries before the call) receives the map from new bonds to old ones; returns
 * the number of directed bonds removed in *removed. */
pd_status pd_family_remove(pd_family* f, const uint8_t* remove, const int32_t* id,
                           pd_bond_set* broken, uint32_t* old_bond, size_t* removed);

void pd_bonds_map_free(uint32_t* old_bond, const pd_family* f);

/* The particles were renumbered (new i = old perm[i], a Morton reordering): renumbers the
 * family, each particle's bonds sorted again by neighbour index (pd_family_find_bond and
 * renewal rely on it). bond_from (bond_count entries) receives the map from new bonds to old
 * ones, for the method's per-bond arrays. */
pd_status pd_family_permute(pd_family* f, const uint32_t* perm, uint32_t* bond_from);

/* A method's renumbering after a Morton reordering, written once: pd_reorder_begin renumbers
 * the family (pd_family_permute) and keeps the bond map and a scratch buffer for items of up to
 * `item_max` bytes; pd_reorder_bonds / pd_reorder_points carry a per-bond / per-particle array;
 * pd_reorder_end frees the two. */
typedef struct pd_reorder {
    const uint32_t* perm;
    uint32_t* bond_from; /* new bond -> old bond */
    void* scratch;
    size_t n, bonds, scratch_bytes;
} pd_reorder;
pd_status pd_reorder_begin(pd_reorder* r, pd_family* f, const uint32_t* perm, size_t item_max);
void pd_reorder_bonds(pd_reorder* r, void* a, size_t size);
void pd_reorder_points(pd_reorder* r, void* a, size_t size);
void pd_reorder_end(pd_reorder* r);

/* a[k] = a[map[k]] for `count` items of `size` bytes, in place through scratch (count * size
 * bytes): a per-bond array after pd_family_permute or pd_family_remove, a per-particle one after
 * a reordering. */
void pd_items_permute(void* a, void* scratch, const uint32_t* map, size_t count, size_t size);

#endif
