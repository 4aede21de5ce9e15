/* Renewal, removal and permanent breaking of peridynamic bonds (family_renewal.h). Infrequent
 * (a renewal every so many steps, a removal when a bond breaks), so the temporary arrays here
 * are allocated per call, never per particle or bond. */
#include "neighbor/family_renewal.h"

#include <string.h>

#include "core/alloc.h"
#include "parallel/parallel.h"

/* ---------------------------------------------------------------- broken pairs */

static uint64_t pair_key(int32_t a, int32_t b) {
    uint32_t lo = (uint32_t)(a < b ? a : b), hi = (uint32_t)(a < b ? b : a);
    return (uint64_t)lo << 32 | hi;
}

/* First index whose key is >= key. */
static size_t lower_bound(const pd_bond_set* set, uint64_t key) {
    size_t lo = 0, hi = set->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int pd_bond_set_has(const pd_bond_set* set, int32_t id_a, int32_t id_b) {
    if (!set || set->count == 0)
        return 0;
    uint64_t key = pair_key(id_a, id_b);
    size_t k = lower_bound(set, key);
    return k < set->count && set->keys[k] == key;
}

pd_status pd_bond_set_add(pd_bond_set* set, int32_t id_a, int32_t id_b) {
    uint64_t key = pair_key(id_a, id_b);
    size_t k = lower_bound(set, key);
    if (k < set->count && set->keys[k] == key)
        return PD_OK;
    if (set->count == set->capacity) {
        size_t grown = set->capacity ? 2 * set->capacity : 64;
        uint64_t* keys =
            pd_realloc(set->keys, set->capacity * sizeof(uint64_t), grown * sizeof(uint64_t));
        if (!keys)
            return PD_ERR_OUT_OF_MEMORY;
        set->keys = keys;
        set->capacity = grown;
    }
    memmove(set->keys + k + 1, set->keys + k, (set->count - k) * sizeof(uint64_t));
    set->keys[k] = key;
    set->count++;
    return PD_OK;
}

void pd_bond_set_free(pd_bond_set* set) {
    pd_free(set->keys, set->capacity * sizeof(uint64_t));
    memset(set, 0, sizeof *set);
}

/* ---------------------------------------------------------------- renewal */

static int renews(const pd_renewal_def* d, uint32_t i) {
    return d->body_renews[d->body[i]] != 0;
}

/* j joins i's renewed family: same body, within the horizon at the current positions, and
 * the pair not broken for good. */
static int bonds_now(const pd_renewal_def* d, uint32_t i, uint32_t j) {
    pd_real r = d->horizon * d->spacing[i];
    return d->body[i] == d->body[j] && pd_v3_len2(pd_v3_sub(d->pos[j], d->pos[i])) <= r * r &&
           !pd_bond_set_has(d->broken, d->id[i], d->id[j]);
}

/* Within a renewing body, whether the pair (i, j) is found anew at the current positions:
 * always without a particle mask, else when either end renews. */
static int pair_renews(const pd_renewal_def* d, uint32_t i, uint32_t j) {
    return !d->particle_renews || d->particle_renews[i] || d->particle_renews[j];
}

/* i's renewed family, merged in neighbour order from the old bonds and the neighbours within
 * the horizon now: a renewing pair is kept when within the horizon (carrying its old bond, if
 * any), another pair when it had a bond. Writes from bond b into out (NULL: counts only);
 * returns the bond after the last. */
static uint32_t merge_family(const pd_family* old, const pd_neighbor_list* list,
                             const pd_renewal_def* d, pd_family* out, uint32_t* map, uint32_t i,
                             uint32_t b) {
    uint32_t o = old->offsets[i], oe = old->offsets[i + 1];
    uint32_t k = list->offsets[i], ke = list->offsets[i + 1];
    while (o < oe || k < ke) {
        uint32_t jo = o < oe ? old->j[o] : UINT32_MAX, jk = k < ke ? list->indices[k] : UINT32_MAX;
        uint32_t j = jo < jk ? jo : jk, had = jo == j ? o : UINT32_MAX;
        o += jo == j;
        k += jk == j;
        if (pair_renews(d, i, j) ? !bonds_now(d, i, j) : had == UINT32_MAX)
            continue;
        if (out) {
            out->j[b] = j;
            out->xi[b] =
                had == UINT32_MAX ? pd_v3_sub(d->pos[j], d->pos[i]) : pd_family_xi(old, i, had);
            map[b] = had == UINT32_MAX ? PD_BOND_NEW : had;
        }
        ++b;
    }
    return b;
}

static size_t renewed_degree(const pd_family* old, const pd_neighbor_list* list,
                             const pd_renewal_def* d, uint32_t i) {
    if (!renews(d, i))
        return old->offsets[i + 1] - old->offsets[i];
    if (d->particle_renews)
        return merge_family(old, list, d, NULL, NULL, i, 0);
    size_t deg = 0;
    for (uint32_t k = list->offsets[i]; k < list->offsets[i + 1]; ++k)
        deg += bonds_now(d, i, list->indices[k]);
    return deg;
}

/* Copies i's old bonds unchanged (a body that keeps its bonds). */
static uint32_t keep_family(const pd_family* old, pd_family* out, uint32_t* map, uint32_t i,
                            uint32_t b) {
    for (uint32_t o = old->offsets[i]; o < old->offsets[i + 1]; ++o, ++b) {
        out->j[b] = old->j[o];
        out->xi[b] = pd_family_xi(old, i, o);
        map[b] = o;
    }
    return b;
}

/* i's bonds anew from its neighbour list. Both the list and the old family are sorted by
 * neighbour index, so the old bond of each neighbour is found by walking the two together (a
 * binary search per bond was a tenth of an sbpd sand step). */
static uint32_t renew_family(const pd_family* old, const pd_neighbor_list* list,
                             const pd_renewal_def* d, pd_family* out, uint32_t* map, uint32_t i,
                             uint32_t b) {
    uint32_t walk = old->offsets[i], old_end = old->offsets[i + 1];
    for (uint32_t k = list->offsets[i]; k < list->offsets[i + 1]; ++k) {
        uint32_t j = list->indices[k];
        if (!bonds_now(d, i, j))
            continue;
        while (walk < old_end && old->j[walk] < j)
            ++walk;
        uint32_t o = walk < old_end && old->j[walk] == j ? walk : UINT32_MAX;
        out->j[b] = j;
        out->xi[b] = o == UINT32_MAX ? pd_v3_sub(d->pos[j], d->pos[i]) : pd_family_xi(old, i, o);
        map[b++] = o == UINT32_MAX ? PD_BOND_NEW : o;
    }
    return b;
}

/* What the per-particle passes of a renewal share; each pass writes particle i's entries
 * only (its degree, its bonds), so the families do not depend on the threads. */
typedef struct renew_job {
    const pd_family* old;
    const pd_neighbor_list* list;
    const pd_renewal_def* d;
    pd_family* out;
    uint32_t* map;
    uint32_t* degree; /* per particle (the counting pass) */
} renew_job;

#define RENEW_GRAIN 256

static void count_range(void* ctx, size_t begin, size_t end, int thread) {
    const renew_job* r = ctx;
    for (size_t i = begin; i < end; ++i)
        r->degree[i] = (uint32_t)renewed_degree(r->old, r->list, r->d, (uint32_t)i);
}

static void fill_range(void* ctx, size_t begin, size_t end, int thread) {
    const renew_job* r = ctx;
    for (size_t k = begin; k < end; ++k) {
        uint32_t i = (uint32_t)k, b = r->out->offsets[i];
        if (!renews(r->d, i))
            keep_family(r->old, r->out, r->map, i, b);
        else if (r->d->particle_renews)
            merge_family(r->old, r->list, r->d, r->out, r->map, i, b);
        else
            renew_family(r->old, r->list, r->d, r->out, r->map, i, b);
    }
}

/* A spare's arrays, not cleared: the renewal writes every particle's entries and every bond's
 * up to bond_count, so the room beyond is never touched and its pages never become resident
 * (cleared, the eighth more room raised the 100K sand's peak by 6.6 %). */
static pd_status allocate_uncleared(pd_family* f, size_t n, size_t bonds) {
    f->count = n;
    f->bond_count = f->bond_capacity = bonds;
    f->offsets = pd_alloc((n + 1) * sizeof(uint32_t));
    f->j = pd_alloc((bonds + 1) * sizeof(uint32_t));
    f->rev = pd_alloc((bonds + 1) * sizeof(uint32_t));
    f->xi = pd_alloc((bonds + 1) * sizeof(pd_vec3));
    f->w = pd_alloc((n + 1) * sizeof(pd_real));
    pd_family_touch(f);
    return f->offsets && f->j && f->rev && f->xi && f->w ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

/* out's arrays for n particles and `bonds` bonds. With `reuse`: kept when they hold them (a
 * spare family of the same particles), else allocated anew with an eighth more room, so that
 * a count that grows a little at the next renewal still fits; without, exactly `bonds`. */
static pd_status family_room(pd_family* out, size_t n, size_t bonds, int reuse) {
    if (reuse && out->offsets && out->count == n && out->bond_capacity >= bonds && out->xi &&
        out->rev) {
        out->bond_count = bonds;
        pd_family_touch(out);
        return PD_OK;
    }
    pd_family_free(out);
    pd_status st = reuse ? allocate_uncleared(out, n, bonds + bonds / 8 + 16)
                         : pd_family_allocate(out, n, bonds);
    out->bond_count = bonds;
    return st;
}

static pd_status renew(const pd_family* old, pd_hash_grid* grid, const pd_renewal_def* d,
                       pd_family* out, uint32_t** old_bond, int reuse);

pd_status pd_family_renew(const pd_family* old, pd_hash_grid* grid, const pd_renewal_def* d,
                          pd_family* out, uint32_t** old_bond) {
    memset(out, 0, sizeof *out);
    return renew(old, grid, d, out, old_bond, 0);
}

pd_status pd_family_renew_into(const pd_family* old, pd_hash_grid* grid, const pd_renewal_def* d,
                               pd_family* out, uint32_t** old_bond) {
    return renew(old, grid, d, out, old_bond, 1);
}

void pd_neighbor_cache_invalidate(pd_neighbor_cache* c) {
    c->valid = 0;
}

void pd_neighbor_cache_destroy(pd_neighbor_cache* c) {
    pd_neighbor_list_destroy(&c->list);
    PD_FREE_ARRAY(c->anchor, pd_vec3, c->anchor_capacity);
    c->anchor = NULL, c->anchor_capacity = 0, c->valid = 0;
}

/* Whether every pair within `radius` at pos is on the cached list: no particle moved more than
 * half the skin since its search (two particles approach each other by at most twice the
 * largest move; a thousandth of the skin kept for the rounding of the distances). */
static int cache_holds(const pd_neighbor_cache* c, const pd_vec3* pos, size_t n, pd_real radius) {
    if (!c->valid || c->count != n || c->radius != radius || !(c->skin > 0))
        return 0;
    pd_real limit = 0.499 * c->skin, limit2 = limit * limit;
    for (size_t i = 0; i < n; ++i)
        if (!(pd_v3_len2(pd_v3_sub(pos[i], c->anchor[i])) <= limit2))
            return 0;
    return 1;
}

/* The list a renewal filters: the cached one while it holds, else a search of the grid (with
 * the skin, the positions kept as its anchor). */
static pd_status candidates(pd_hash_grid* grid, const pd_renewal_def* d, size_t n, pd_real radius,
                            pd_real max_spacing, pd_neighbor_list* own,
                            const pd_neighbor_list** list) {
    pd_neighbor_cache* c = d->cache;
    if (!c || !(c->skin_spacings > 0)) { /* searched anew: into the cache's list (kept) if any */
        pd_neighbor_list* into = c ? &c->list : own;
        *list = into;
        return pd_neighbors_build(grid, d->pos, n, radius, into);
    }
    *list = &c->list;
    c->renewals++;
    if (cache_holds(c, d->pos, n, radius)) {
        c->uses++;
        return PD_OK;
    }
    if (c->valid && c->skin > 0 && c->uses == 1) /* lasted one renewal: moving too fast */
        c->pause = PD_VERLET_PAUSE;
    c->valid = 0;
    c->skin = c->pause > 0 ? 0 : c->skin_spacings * max_spacing;
    c->pause -= c->pause > 0;
    if (c->anchor_capacity < n) {
        PD_FREE_ARRAY(c->anchor, pd_vec3, c->anchor_capacity);
        c->anchor_capacity = 0;
        c->anchor = PD_NEW_ARRAY(pd_vec3, n + n / 8 + 1);
        if (!c->anchor)
            return PD_ERR_OUT_OF_MEMORY;
        c->anchor_capacity = n + n / 8 + 1;
    }
    pd_status st = pd_neighbors_build(grid, d->pos, n, radius + c->skin, &c->list);
    if (st != PD_OK)
        return st;
    memcpy(c->anchor, d->pos, n * sizeof(pd_vec3));
    c->count = n, c->radius = radius, c->valid = 1, c->uses = 1;
    c->searches++;
    return PD_OK;
}

static pd_status renew(const pd_family* old, pd_hash_grid* grid, const pd_renewal_def* d,
                       pd_family* out, uint32_t** old_bond, int reuse) {
    size_t n = old->count;
    *old_bond = NULL;
    pd_real max_spacing = 0;
    for (size_t i = 0; i < n; ++i)
        max_spacing = fmax(max_spacing, d->spacing[i]);
    pd_neighbor_list own = {0};
    const pd_neighbor_list* list = &own;
    uint32_t* degree = PD_NEW_ARRAY(uint32_t, n + 1);
    pd_status st = degree
                       ? candidates(grid, d, n, d->horizon * max_spacing, max_spacing, &own, &list)
                       : PD_ERR_OUT_OF_MEMORY;
    renew_job job = {old, list, d, out, NULL, degree};
    if (st == PD_OK)
        pd_parallel_for(n, RENEW_GRAIN, count_range, &job);
    size_t bonds = 0;
    for (size_t i = 0; st == PD_OK && i < n; ++i)
        bonds += degree[i];
    if (st == PD_OK)
        st = family_room(out, n, bonds, reuse);
    uint32_t* map = st == PD_OK ? PD_NEW_ARRAY(uint32_t, out->bond_capacity + 1) : NULL;
    if (st == PD_OK && !map)
        st = PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK) {
        uint32_t b = 0;
        for (size_t i = 0; i < n; ++i)
            out->offsets[i] = b, b += degree[i];
        out->offsets[n] = b;
        memcpy(out->w, old->w, n * sizeof(pd_real)); /* a body's weight, kept from creation */
        job.map = map;
        pd_parallel_for(n, RENEW_GRAIN, fill_range, &job);
        pd_family_link_reverse(out, degree); /* degree is free: its scratch */
        *old_bond = map;
    } else {
        pd_family_free(out);
    }
    PD_FREE_ARRAY(degree, uint32_t, n + 1);
    pd_neighbor_list_destroy(&own);
    return st;
}

void pd_bonds_map_free(uint32_t* old_bond, const pd_family* f) {
    PD_FREE_ARRAY(old_bond, uint32_t, f->bond_capacity + 1);
}

/* ---------------------------------------------------------------- removal */

pd_status pd_family_remove(pd_family* f, const uint8_t* remove, const int32_t* id,
                           pd_bond_set* broken, uint32_t* old_bond, size_t* removed) {
    size_t nb = f->bond_count;
    /* the opposite bonds as they are: the compaction below moves bonds a look-up would read */
    uint32_t* rev = f->rev;
    if (!rev) {
        rev = PD_NEW_ARRAY(uint32_t, nb + 1);
        if (!rev)
            return PD_ERR_OUT_OF_MEMORY;
        for (uint32_t i = 0; i < f->count; ++i)
            for (uint32_t o = f->offsets[i]; o < f->offsets[i + 1]; ++o)
                rev[o] = pd_family_rev(f, i, o);
    }
    uint32_t b = 0;
    pd_status st = PD_OK;
    for (uint32_t i = 0; i < f->count; ++i) {
        uint32_t start = f->offsets[i];
        f->offsets[i] = b;
        for (uint32_t o = start; o < f->offsets[i + 1]; ++o) {
            if (remove[o] || remove[rev[o]]) {
                if (broken && st == PD_OK)
                    st = pd_bond_set_add(broken, id[i], id[f->j[o]]);
                continue;
            }
            f->j[b] = f->j[o];
            if (f->xi)
                f->xi[b] = f->xi[o];
            old_bond[b++] = o;
        }
    }
    f->offsets[f->count] = b;
    *removed = nb - b;
    if (f->rev)
        pd_family_link_reverse(f, NULL); /* bonds break seldom */
    else
        PD_FREE_ARRAY(rev, uint32_t, nb + 1);
    f->bond_count = b; /* the arrays keep their capacity */
    pd_family_touch(f);
    return st;
}

void pd_items_permute(void* a, void* scratch, const uint32_t* map, size_t count, size_t size) {
    for (size_t k = 0; k < count; ++k)
        memcpy((char*)scratch + k * size, (const char*)a + (size_t)map[k] * size, size);
    memcpy(a, scratch, count * size);
}

pd_status pd_reorder_begin(pd_reorder* r, pd_family* f, const uint32_t* perm, size_t item_max) {
    r->perm = perm;
    r->n = f->count;
    r->bonds = f->bond_count;
    r->scratch_bytes = (r->bonds > r->n ? r->bonds : r->n) * item_max;
    r->bond_from = PD_NEW_ARRAY(uint32_t, r->bonds + 1);
    r->scratch = pd_alloc(r->scratch_bytes);
    if (!r->bond_from || !r->scratch)
        return PD_ERR_OUT_OF_MEMORY;
    return pd_family_permute(f, perm, r->bond_from);
}

void pd_reorder_bonds(pd_reorder* r, void* a, size_t size) {
    pd_items_permute(a, r->scratch, r->bond_from, r->bonds, size);
}

void pd_reorder_points(pd_reorder* r, void* a, size_t size) {
    pd_items_permute(a, r->scratch, r->perm, r->n, size);
}

void pd_reorder_end(pd_reorder* r) {
    PD_FREE_ARRAY(r->bond_from, uint32_t, r->bonds + 1);
    pd_free(r->scratch, r->scratch_bytes);
    r->bond_from = NULL, r->scratch = NULL;
}

/* ---------------------------------------------------------------- renumbering */

/* Sorts keys[0..count) ascending, carrying vals (a family's few dozen bonds: insertion). */
static void sort_by_key(uint32_t* keys, uint32_t* vals, uint32_t count) {
    for (uint32_t a = 1; a < count; ++a) {
        uint32_t k = keys[a], v = vals[a], b = a;
        for (; b > 0 && keys[b - 1] > k; --b)
            keys[b] = keys[b - 1], vals[b] = vals[b - 1];
        keys[b] = k, vals[b] = v;
    }
}

pd_status pd_family_permute(pd_family* f, const uint32_t* perm, uint32_t* bond_from) {
    size_t n = f->count, nb = f->bond_count;
    uint32_t* inv = PD_NEW_ARRAY(uint32_t, n + 1);
    uint32_t* offsets = PD_NEW_ARRAY(uint32_t, n + 1);
    uint32_t* j = PD_NEW_ARRAY(uint32_t, nb + 1);
    size_t scratch_bytes = (nb > n ? nb : n) * sizeof(pd_vec3) + sizeof(pd_vec3);
    void* scratch = pd_alloc(scratch_bytes); /* the bonds' xi, then the particles' w */
    pd_status st = inv && offsets && j && scratch ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK) {
        for (size_t i = 0; i < n; ++i)
            inv[perm[i]] = (uint32_t)i;
        for (size_t i = 0; i < n; ++i) {
            uint32_t o = f->offsets[perm[i]], deg = f->offsets[perm[i] + 1] - o;
            offsets[i + 1] = offsets[i] + deg;
            for (uint32_t m = 0; m < deg; ++m) {
                bond_from[offsets[i] + m] = o + m;
                j[offsets[i] + m] = inv[f->j[o + m]];
            }
            sort_by_key(j + offsets[i], bond_from + offsets[i], deg);
        }
        memcpy(f->offsets, offsets, (n + 1) * sizeof(uint32_t));
        memcpy(f->j, j, nb * sizeof(uint32_t));
        pd_vec3* xi = scratch;
        for (size_t b = 0; f->xi && b < nb; ++b)
            xi[b] = f->xi[bond_from[b]];
        if (f->xi)
            memcpy(f->xi, xi, nb * sizeof(pd_vec3));
        pd_real* w = scratch;
        for (size_t i = 0; i < n; ++i)
            w[i] = f->w[perm[i]];
        memcpy(f->w, w, n * sizeof(pd_real));
        if (f->rev)
            pd_family_link_reverse(f, offsets); /* offsets is free: its scratch */
        pd_family_touch(f);
    }
    PD_FREE_ARRAY(inv, uint32_t, n + 1);
    PD_FREE_ARRAY(offsets, uint32_t, n + 1);
    PD_FREE_ARRAY(j, uint32_t, nb + 1);
    pd_free(scratch, scratch_bytes);
    return st;
}
