/* Peridynamic families (He 2017 Sec. 3): for each particle the bonds to the particles of the
 * same body within its horizon, with editable reference vectors X<xi> and weights w<xi>. */
#ifndef PD_FAMILY_H
#define PD_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "neighbor/hash_grid.h"
#include "peridot/types.h"

typedef struct pd_family {
    size_t count;         /* particles */
    size_t bond_count;    /* directed bonds */
    size_t bond_capacity; /* bonds the arrays hold (removal shrinks bond_count only) */
    uint32_t* offsets;    /* bonds of i: offsets[i] .. offsets[i+1] */
    uint32_t* j;          /* the neighbour of each bond */
    uint32_t* rev;        /* the opposite bond j -> i, or NULL (pd_family_drop_reverse) */
    /* reference vector X<xi> = x_j - x_i of each bond (m), which plasticity may edit; or NULL
     * when the bonds keep the reference positions they were built on (pd_family_share_rest):
     * X = ref[j] - ref[i], 24 bytes a bond less. Read it through pd_family_xi. */
    pd_vec3* xi;
    const pd_vec3* ref; /* with xi NULL: the reference positions (the owner keeps them) */
    /* per particle: the weight w<xi> of each of i's bonds (1/m^3), sum_j w V_j = 1 over a full
     * family of i's body; one value per body (normalise_weights), so kept per particle rather
     * than per bond (8 bytes a bond less) */
    pd_real* w;
    /* a number no other state of the bonds (of any family) had: build, renewal, removal and
     * renumbering give the family a new one, so that what was derived from its bonds (a
     * pd_scatter_plan) can tell it is out of date */
    uint64_t generation;
} pd_family;

/* Families on `rest` positions: j is in i's family when both belong to the same body and
 * |x_j - x_i| <= horizon * spacing_i. Families are symmetric. */
pd_status pd_family_build(pd_family* f, pd_hash_grid* grid, const pd_vec3* rest,
                          const pd_real* volume, const pd_real* spacing, const int32_t* body,
                          size_t n, pd_real horizon);
void pd_family_free(pd_family* f);
/* Allocates (zeroed) the arrays of n particles and `bonds` directed bonds. */
pd_status pd_family_allocate(pd_family* f, size_t n, size_t bonds);
/* Index of the bond i -> j, or UINT32_MAX when j is not in i's family (bonds of a family are
 * sorted by j). */
uint32_t pd_family_find_bond(const pd_family* f, uint32_t i, uint32_t j);
/* f->rev from f->j (each particle's bonds sorted by j): particles in increasing order, each bond
 * i -> j takes the next unmatched entry of j's family, which is i's when the family is
 * symmetric (a binary search where it is not). `cursor`: scratch of f->count entries, or NULL
 * for a binary search per bond. */
void pd_family_link_reverse(pd_family* f, uint32_t* cursor);
/* X<xi> of i's bond b. */
static inline pd_vec3 pd_family_xi(const pd_family* f, uint32_t i, uint32_t b) {
    return f->xi ? f->xi[b] : pd_v3_sub(f->ref[f->j[b]], f->ref[i]);
}
/* The opposite bond j -> i of i's bond b. */
static inline uint32_t pd_family_rev(const pd_family* f, uint32_t i, uint32_t b) {
    return f->rev ? f->rev[b] : pd_family_find_bond(f, f->j[b], i);
}
/* Frees the opposite-bond indices (4 bytes a bond): pd_family_rev looks them up (a binary
 * search in j's family), for families that need them only when they are rebuilt. */
void pd_family_drop_reverse(pd_family* f);
/* Frees the bonds' own X<xi>: from now on X = ref[j] - ref[i]. Only for bonds whose X are
 * those differences (built on ref by pd_family_build, never edited), whose owner renumbers ref
 * with the family (pd_family_permute) and never moves it. A renewal gives the new family its
 * own X<xi> again. */
void pd_family_share_rest(pd_family* f, const pd_vec3* ref);
/* Gives f a new generation (the bonds changed). */
void pd_family_touch(pd_family* f);
/* sum_j V_j over i's family (m^3). */
pd_real pd_family_volume(const pd_family* f, const pd_real* volume, uint32_t i);

/* The weighted sums of a family that every correspondence method builds on (He 2017 Sec. 3,
 * Wang et al. 2025 Eq. 1, Xu et al. 2018 Eq. 24), kept here beside the bonds rather than in
 * src/constitutive/: they are sums over a family's bonds and weights with no material in them,
 * and each method inverts the shape tensor its own way (pseudo-inverse, planar test).
 * The weight of i's bond b is (bond_w ? bond_w[b] : f->w[i]) * (volume ? volume[j] : 1): per
 * bond (sbpd's Wendland weights, hyperelastic_pd's stiffnesses) or the family's, times V_j or
 * not. */
static inline pd_real pd_family_bond_weight(const pd_family* f, uint32_t i, uint32_t b,
                                            const pd_real* bond_w, const pd_real* volume) {
    pd_real w = bond_w ? bond_w[b] : f->w[i];
    return volume ? w * volume[f->j[b]] : w;
}
/* The shape tensor K = sum_b w_b X X^T over i's family (X = X<xi> of bond b). */
static inline pd_mat3 pd_family_shape_tensor(const pd_family* f, uint32_t i, const pd_real* bond_w,
                                             const pd_real* volume) {
    pd_mat3 k = pd_m3_zero();
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 X = pd_family_xi(f, i, b);
        pd_m3_add_outer(&k, pd_family_bond_weight(f, i, b, bond_w, volume), X, X);
    }
    return k;
}
/* The deformation gradient F = (sum_b w_b Y X^T) K^-1 at positions y (Y = y_j - y_i), with
 * kinv the inverse (or pseudo-inverse) of the shape tensor of the same weights. */
static inline pd_mat3 pd_family_deformation_gradient(const pd_family* f, uint32_t i,
                                                     const pd_real* bond_w, const pd_real* volume,
                                                     const pd_vec3* y, pd_mat3 kinv) {
    pd_mat3 yx = pd_m3_zero();
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        pd_m3_add_outer(&yx, pd_family_bond_weight(f, i, b, bond_w, volume),
                        pd_v3_sub(y[f->j[b]], y[i]), pd_family_xi(f, i, b));
    return pd_m3_mul(yx, kinv);
}

#endif
