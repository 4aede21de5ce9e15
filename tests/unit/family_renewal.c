/* Families that change (neighbor/family_renewal.h): a renewal on current positions equals a
 * fresh build there, carries the state of bonds that persist and marks new ones; a body that
 * does not renew keeps its bonds however its particles move; removed bonds go in pairs and
 * broken ones never come back; nothing leaks. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "neighbor/family_renewal.h"
#include "world/state_arrays.h"
#include "test.h"

#define M  6
#define NP (2 * M * M * M)

typedef struct blocks {
    pd_vec3 pos[NP];
    pd_real vol[NP], h[NP];
    int32_t body[NP], id[NP];
} blocks;

/* Two lattice cubes of M^3 particles side by side (bodies 0 and 1), spacing s. */
static size_t two_blocks(blocks* b, pd_real s) {
    size_t n = 0;
    for (int c = 0; c < 2; ++c)
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < M; ++j)
                for (int k = 0; k < M; ++k, ++n) {
                    b->pos[n] = pd_v3(s * (i + c * M), s * j, s * k);
                    b->vol[n] = s * s * s, b->h[n] = s;
                    b->body[n] = c, b->id[n] = (int32_t)(1000 + n);
                }
    return n;
}

/* Body 1's top layers (above 2.5 spacings) slid a horizon sideways, into `moved`. */
static void shear_body_1(const blocks* b, size_t n, pd_real s, pd_vec3* moved) {
    for (size_t i = 0; i < n; ++i) {
        moved[i] = b->pos[i];
        if (b->body[i] == 1 && b->pos[i].y > 2.5 * s)
            moved[i].z += 2.5 * s;
    }
}

static pd_renewal_def renewal(const blocks* b, const pd_vec3* pos, const uint8_t* renew,
                              const pd_bond_set* broken) {
    return (pd_renewal_def){.pos = pos,
                            .volume = b->vol,
                            .spacing = b->h,
                            .body = b->body,
                            .id = b->id,
                            .body_renews = renew,
                            .broken = broken,
                            .horizon = 2.01};
}

/* Bonds of i in f and g are the same neighbours. */
static int same_neighbours(const pd_family* f, const pd_family* g, uint32_t i) {
    uint32_t nf = f->offsets[i + 1] - f->offsets[i], ng = g->offsets[i + 1] - g->offsets[i];
    return nf == ng &&
           memcmp(f->j + f->offsets[i], g->j + g->offsets[i], nf * sizeof(uint32_t)) == 0;
}

static int rev_consistent(const pd_family* f) {
    for (uint32_t i = 0; i < f->count; ++i)
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
            if (f->rev[b] == UINT32_MAX || f->j[f->rev[b]] != i)
                return 0;
    return 1;
}

/* Body 1 is sheared (its top layers slide a horizon sideways) and renews; the renewed family
 * must equal a fresh build on the sheared positions, persisting bonds keep their reference
 * vector, new ones are marked new and get the body's weight. */
PD_TEST(renewal_equals_fresh_build_and_carries_bonds) {
    static blocks b;
    static pd_vec3 moved[NP];
    size_t bytes0 = pd_bytes_in_use();
    pd_real s = 0.01;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_family f, g, fresh;
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    shear_body_1(&b, n, s, moved);
    uint8_t renew[2] = {1, 1};
    pd_renewal_def d = renewal(&b, moved, renew, NULL);
    uint32_t* map = NULL;
    PD_REQUIRE(pd_family_renew(&f, &grid, &d, &g, &map) == PD_OK);
    PD_REQUIRE(pd_family_build(&fresh, &grid, moved, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    int differ = 0, carried_wrong = 0, fresh_wrong = 0, news = 0, carried = 0;
    for (uint32_t i = 0; i < n; ++i) {
        differ += !same_neighbours(&g, &fresh, i);
        for (uint32_t k = g.offsets[i]; k < g.offsets[i + 1]; ++k) {
            if (map[k] == PD_BOND_NEW) {
                news++;
                pd_vec3 now = pd_v3_sub(moved[g.j[k]], moved[i]);
                fresh_wrong += pd_v3_len(pd_v3_sub(g.xi[k], now)) > 1e-15 || g.w[i] != f.w[i];
                continue;
            }
            carried++;
            carried_wrong +=
                f.j[map[k]] != g.j[k] || pd_v3_len(pd_v3_sub(g.xi[k], f.xi[map[k]])) > 0;
        }
    }
    printf("  bonds %zu -> %zu: %d carried, %d new\n", f.bond_count, g.bond_count, carried, news);
    PD_CHECK(differ == 0);
    PD_CHECK(carried_wrong == 0 && fresh_wrong == 0);
    PD_CHECK(news > 0 && g.bond_count < f.bond_count + (size_t)news); /* some bonds left */
    PD_CHECK(rev_consistent(&g));
    pd_bonds_map_free(map, &g);
    pd_family_free(&f), pd_family_free(&g), pd_family_free(&fresh);
    pd_hash_grid_destroy(&grid);
    PD_CHECK(pd_bytes_in_use() == bytes0);
}

/* A body that does not renew keeps every bond (and its reference vectors) even when its
 * particles are pulled far apart; the renewing one loses the bonds that stretched. */
PD_TEST(elastic_body_keeps_its_bonds) {
    static blocks b;
    static pd_vec3 moved[NP];
    pd_real s = 0.01;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_family f, g;
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    for (size_t i = 0; i < n; ++i) /* stretch both bodies to three times their length in y */
        moved[i] = pd_v3(b.pos[i].x, 3 * b.pos[i].y, b.pos[i].z);
    uint8_t renew[2] = {0, 1};
    pd_renewal_def d = renewal(&b, moved, renew, NULL);
    uint32_t* map = NULL;
    PD_REQUIRE(pd_family_renew(&f, &grid, &d, &g, &map) == PD_OK);
    int kept_same = 1;
    size_t bonds0 = 0, bonds1_old = 0, bonds1_new = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t deg_old = f.offsets[i + 1] - f.offsets[i], deg = g.offsets[i + 1] - g.offsets[i];
        if (b.body[i] == 0) {
            kept_same &= same_neighbours(&f, &g, i);
            for (uint32_t k = g.offsets[i]; k < g.offsets[i + 1]; ++k)
                kept_same &= map[k] != PD_BOND_NEW && g.xi[k].y == f.xi[map[k]].y;
            bonds0 += deg;
        } else {
            bonds1_old += deg_old, bonds1_new += deg;
        }
    }
    printf("  kept body: %zu bonds; renewing body: %zu -> %zu bonds\n", bonds0, bonds1_old,
           bonds1_new);
    PD_CHECK(kept_same);
    PD_CHECK(bonds1_new < bonds1_old / 2);
    PD_CHECK(rev_consistent(&g));
    pd_bonds_map_free(map, &g);
    pd_family_free(&f), pd_family_free(&g);
    pd_hash_grid_destroy(&grid);
}

/* Cutting bonds across a plane: both directions go, the map carries the rest, and a renewal
 * on the unchanged positions does not restore them (broken for good). */
PD_TEST(broken_bonds_stay_broken) {
    static blocks b;
    static uint8_t cut[NP * 40];
    static uint32_t map[NP * 40];
    size_t bytes0 = pd_bytes_in_use();
    pd_real s = 0.01;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_family f, g;
    pd_bond_set broken = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    PD_REQUIRE(f.bond_count < NP * 40);
    size_t crossing = 0;
    pd_real plane = 2.5 * s; /* inside body 0 */
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = f.offsets[i]; k < f.offsets[i + 1]; ++k) {
            int across = (b.pos[i].x < plane) != (b.pos[f.j[k]].x < plane);
            crossing += across;
            cut[k] = across && b.pos[i].x < plane; /* flag one direction only */
        }
    size_t before = f.bond_count, removed = 0;
    PD_REQUIRE(pd_family_remove(&f, cut, b.id, &broken, map, &removed) == PD_OK);
    int left_across = 0, map_wrong = 0;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = f.offsets[i]; k < f.offsets[i + 1]; ++k)
            left_across += (b.pos[i].x < plane) != (b.pos[f.j[k]].x < plane);
    printf("  %zu bonds crossed the cut; removed %zu; %zu broken pairs\n", crossing, removed,
           broken.count);
    PD_CHECK(removed == crossing && before - f.bond_count == crossing);
    PD_CHECK(broken.count == crossing / 2);
    PD_CHECK(left_across == 0);
    PD_CHECK(rev_consistent(&f));
    uint8_t renew[2] = {1, 1};
    pd_renewal_def d = renewal(&b, b.pos, renew, &broken);
    uint32_t* map2 = NULL;
    PD_REQUIRE(pd_family_renew(&f, &grid, &d, &g, &map2) == PD_OK);
    for (uint32_t i = 0; i < n; ++i) {
        map_wrong += !same_neighbours(&f, &g, i);
        for (uint32_t k = g.offsets[i]; k < g.offsets[i + 1]; ++k)
            map_wrong += map2[k] != k;
    }
    PD_CHECK(g.bond_count == f.bond_count && map_wrong == 0);
    pd_bonds_map_free(map2, &g);
    pd_family_free(&f), pd_family_free(&g);
    pd_bond_set_free(&broken);
    pd_hash_grid_destroy(&grid);
    PD_CHECK(pd_bytes_in_use() == bytes0);
}

/* A family that keeps neither its X nor its opposite bonds (pd_family_share_rest,
 * pd_family_drop_reverse) loses the same bonds in a cut as one that keeps both: bonds flagged
 * in one direction take their opposites along, found by look-up. */
PD_TEST(lean_family_removes_the_same_bonds) {
    static blocks b;
    static uint8_t cut[NP * 40];
    static uint32_t map_f[NP * 40], map_g[NP * 40];
    size_t bytes0 = pd_bytes_in_use();
    pd_real s = 0.01;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_family f, g;
    pd_bond_set broken_f = {0}, broken_g = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    PD_REQUIRE(pd_family_build(&g, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    PD_REQUIRE(f.bond_count < NP * 40);
    pd_family_share_rest(&g, b.pos);
    pd_family_drop_reverse(&g);
    pd_real plane = 2.5 * s;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = f.offsets[i]; k < f.offsets[i + 1]; ++k)
            cut[k] = b.pos[i].x < plane && b.pos[f.j[k]].x >= plane; /* one direction */
    size_t removed_f = 0, removed_g = 0;
    PD_REQUIRE(pd_family_remove(&f, cut, b.id, &broken_f, map_f, &removed_f) == PD_OK);
    PD_REQUIRE(pd_family_remove(&g, cut, b.id, &broken_g, map_g, &removed_g) == PD_OK);
    int differ = f.bond_count != g.bond_count;
    for (uint32_t i = 0; !differ && i <= n; ++i)
        differ += f.offsets[i] != g.offsets[i];
    for (uint32_t k = 0; !differ && k < f.bond_count; ++k)
        differ += f.j[k] != g.j[k] || map_f[k] != map_g[k];
    int lost = 0;
    for (uint32_t i = 0; !differ && i < n; ++i)
        for (uint32_t k = g.offsets[i]; k < g.offsets[i + 1]; ++k)
            lost += pd_family_rev(&g, i, k) != f.rev[k];
    printf("  removed %zu and %zu bonds; %d differences, %d opposite bonds not found\n", removed_f,
           removed_g, differ, lost);
    PD_CHECK(removed_f > 0 && removed_g == removed_f && broken_g.count == broken_f.count);
    PD_CHECK(differ == 0 && lost == 0);
    PD_CHECK(g.xi == NULL && g.rev == NULL);
    pd_family_free(&f), pd_family_free(&g);
    pd_bond_set_free(&broken_f), pd_bond_set_free(&broken_g);
    pd_hash_grid_destroy(&grid);
    PD_CHECK(pd_bytes_in_use() == bytes0);
}

PD_TEST(bond_set_is_unordered_and_unique) {
    pd_bond_set set = {0};
    for (int32_t k = 0; k < 300; ++k) /* past the first capacity, in scrambled order */
        PD_REQUIRE(pd_bond_set_add(&set, (k * 7919) % 300, 5000 + k % 3) == PD_OK);
    PD_REQUIRE(pd_bond_set_add(&set, 5002, 1) == PD_OK); /* (1, 5002) again, reversed */
    PD_CHECK(set.count == 300);
    PD_CHECK(pd_bond_set_has(&set, 5002, 1) && pd_bond_set_has(&set, 1, 5002));
    PD_CHECK(!pd_bond_set_has(&set, 1, 5001) && !pd_bond_set_has(&set, 7, 5001));
    int sorted = 1;
    for (size_t k = 1; k < set.count; ++k)
        sorted &= set.keys[k - 1] < set.keys[k];
    PD_CHECK(sorted);
    pd_bond_set_free(&set);
}

/* The pair of particle ids a bond joins, as a per-bond value that tells where it went. */
static uint64_t pair_key(const blocks* b, uint32_t i, uint32_t j) {
    return (uint64_t)b->id[i] << 32 | (uint64_t)b->id[j];
}

/* Bonds whose declared value is not their own pair's: new bonds must hold zero, carried bonds
 * the key of the pair they join (tag[b] == pair_key(i, j)). */
static int misplaced(const pd_family* f, const blocks* b, const uint64_t* tag,
                     const uint32_t* map) {
    int wrong = 0;
    for (uint32_t i = 0; i < f->count; ++i)
        for (uint32_t k = f->offsets[i]; k < f->offsets[i + 1]; ++k)
            wrong += tag[k] != (map && map[k] == PD_BOND_NEW ? 0 : pair_key(b, i, f->j[k]));
    return wrong;
}

/* world/state_arrays.h: a declared per-bond array follows its bonds through two renewals and a
 * removal (each bond's value is its pair's key; a new bond's is zero), a scratch array is sized
 * with the family, the second renewal reuses the arrays the first replaced (it allocates
 * nothing that stays), and everything is freed. */
PD_TEST(declared_bond_arrays_follow_renewal_and_removal) {
    static blocks b;
    static pd_vec3 moved[NP];
    static uint8_t cut[NP * 60];
    static uint32_t removal_map[NP * 60];
    size_t bytes0 = pd_bytes_in_use();
    pd_real s = 0.01;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_family f, spare = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    struct {
        uint64_t* tag;
        pd_vec3* scratch;
    } st = {NULL, NULL};
    pd_state_arrays a;
    pd_state_arrays_init(&a, &f);
    PD_STATE_BONDS(&a, &st, tag);
    PD_STATE_BOND_SCRATCH(&a, &st, scratch);
    PD_REQUIRE(pd_state_bonds_reserve(&a, f.bond_capacity) == PD_OK);
    for (uint32_t i = 0; i < f.count; ++i)
        for (uint32_t k = f.offsets[i]; k < f.offsets[i + 1]; ++k)
            st.tag[k] = pair_key(&b, i, f.j[k]);
    shear_body_1(&b, n, s, moved);
    uint8_t renew[2] = {0, 1};
    int wrong[2] = {0, 0}, fresh = 0;
    size_t kept_bytes = 0;
    for (int pass = 0; pass < 2; ++pass) { /* sheared, then back */
        pd_renewal_def d = renewal(&b, pass == 0 ? moved : b.pos, renew, NULL);
        uint32_t* map = NULL;
        pd_family out = spare;
        size_t before = pd_bytes_in_use();
        PD_REQUIRE(pd_family_renew_into(&f, &grid, &d, &out, &map) == PD_OK);
        PD_REQUIRE(pd_state_bonds_renew(&a, &out, map) == PD_OK);
        for (uint32_t k = 0; k < out.bond_count; ++k)
            fresh += map[k] == PD_BOND_NEW;
        spare = f, f = out;
        wrong[pass] = misplaced(&f, &b, st.tag, map);
        for (uint32_t i = 0; i < f.count; ++i) /* the method sets its new bonds' values */
            for (uint32_t k = f.offsets[i]; k < f.offsets[i + 1]; ++k)
                st.tag[k] = map[k] == PD_BOND_NEW ? pair_key(&b, i, f.j[k]) : st.tag[k];
        pd_bonds_map_free(map, &f);
        kept_bytes = pd_bytes_in_use() - before;
    }
    PD_CHECK(a.bond_capacity >= f.bond_capacity && st.scratch != NULL);
    for (uint32_t i = 0; i < f.count; ++i)
        for (uint32_t k = f.offsets[i]; k < f.offsets[i + 1]; ++k)
            cut[k] = (b.pos[i].x < 2.5 * s) != (b.pos[f.j[k]].x < 2.5 * s);
    size_t removed = 0;
    PD_REQUIRE(f.bond_count <= NP * 60);
    PD_REQUIRE(pd_state_bonds_remove(&a, cut, b.id, NULL, removal_map, &removed) == PD_OK);
    int wrong_removed = misplaced(&f, &b, st.tag, NULL);
    printf("  renewals: %d new bonds, %d and %d misplaced values, %zu bytes kept by the second; "
           "removal of %zu bonds: %d misplaced\n",
           fresh, wrong[0], wrong[1], kept_bytes, removed, wrong_removed);
    PD_CHECK(fresh > 0 && removed > 0);
    PD_CHECK(wrong[0] == 0 && wrong[1] == 0 && wrong_removed == 0);
    PD_CHECK(kept_bytes == 0);
    pd_state_bonds_free(&a);
    PD_CHECK(st.tag == NULL && st.scratch == NULL);
    pd_family_free(&f), pd_family_free(&spare);
    pd_hash_grid_destroy(&grid);
    PD_CHECK(pd_bytes_in_use() == bytes0);
}

/* The broken set holds ids, so it survives a renumbering of the particles (a Morton
 * reordering): renewing the reversed particles of a cut body restores none of the cut bonds. */
PD_TEST(broken_bonds_survive_renumbering) {
    static blocks b, r;
    static uint8_t cut[NP * 40];
    static uint32_t map[NP * 40];
    pd_real s = 0.01;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_family f, g, h;
    pd_bond_set broken = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    PD_REQUIRE(f.bond_count < NP * 40);
    pd_real plane = 2.5 * s;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = f.offsets[i]; k < f.offsets[i + 1]; ++k)
            cut[k] = (b.pos[i].x < plane) != (b.pos[f.j[k]].x < plane);
    size_t removed = 0;
    PD_REQUIRE(pd_family_remove(&f, cut, b.id, &broken, map, &removed) == PD_OK);
    for (size_t i = 0; i < n; ++i) { /* particle i is now n - 1 - i */
        size_t o = n - 1 - i;
        r.pos[i] = b.pos[o], r.vol[i] = b.vol[o], r.h[i] = b.h[o];
        r.body[i] = b.body[o], r.id[i] = b.id[o];
    }
    PD_REQUIRE(pd_family_build(&g, &grid, r.pos, r.vol, r.h, r.body, n, 2.01) == PD_OK);
    uint8_t renew[2] = {1, 1};
    pd_renewal_def d = renewal(&r, r.pos, renew, &broken);
    uint32_t* map2 = NULL;
    PD_REQUIRE(pd_family_renew(&g, &grid, &d, &h, &map2) == PD_OK);
    int across = 0;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = h.offsets[i]; k < h.offsets[i + 1]; ++k)
            across += (r.pos[i].x < plane) != (r.pos[h.j[k]].x < plane);
    printf("  %zu bonds removed; after renumbering and renewal %zu bonds (%zu before the cut), "
           "%d across the cut\n",
           removed, h.bond_count, g.bond_count, across);
    PD_CHECK(across == 0 && h.bond_count == g.bond_count - removed);
    pd_bonds_map_free(map2, &h);
    pd_family_free(&f), pd_family_free(&g), pd_family_free(&h);
    pd_bond_set_free(&broken);
    pd_hash_grid_destroy(&grid);
}

/* With a particle mask (a body part flowing, another elastic: material changes), a renewing
 * body finds anew only the pairs with a renewing end, as a fresh build would on the current
 * positions; a pair of two particles that do not renew keeps its bond and reference vector
 * exactly, however far it stretched, and a bond it did not have is not made. Body 1 is sheared
 * (its top layers slide 2.5 spacings) and renews, its particles with x below the middle
 * flagged; an all-ones mask must give the family of the unmasked renewal. */
PD_TEST(particle_mask_renews_only_pairs_with_a_flagged_end) {
    static blocks b;
    static pd_vec3 moved[NP];
    static uint8_t flagged[NP], all[NP];
    size_t bytes0 = pd_bytes_in_use();
    pd_real s = 0.01;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_family f, g, fresh, whole, ones;
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    shear_body_1(&b, n, s, moved);
    for (size_t i = 0; i < n; ++i) {
        flagged[i] = b.body[i] == 1 && b.pos[i].x < (M + M / 2) * s;
        all[i] = 1;
    }
    uint8_t renew[2] = {0, 1};
    pd_renewal_def d = renewal(&b, moved, renew, NULL);
    d.particle_renews = flagged;
    uint32_t *map = NULL, *map_whole = NULL, *map_ones = NULL;
    PD_REQUIRE(pd_family_renew(&f, &grid, &d, &g, &map) == PD_OK);
    PD_REQUIRE(pd_family_build(&fresh, &grid, moved, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    int wrong_renewed = 0, wrong_kept = 0, renewed_pairs = 0, kept_pairs = 0, stretched = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (b.body[i] == 0) { /* a body that does not renew */
            wrong_kept += !same_neighbours(&f, &g, i);
            continue;
        }
        /* every pair of i, from the old family, the fresh one and the renewed one */
        for (uint32_t j = 0; j < n; ++j) {
            if (b.body[j] != 1 || j == i)
                continue;
            uint32_t old = pd_family_find_bond(&f, i, j), now = pd_family_find_bond(&g, i, j);
            uint32_t near = pd_family_find_bond(&fresh, i, j);
            if (flagged[i] || flagged[j]) {
                renewed_pairs += near != UINT32_MAX;
                wrong_renewed += (now != UINT32_MAX) != (near != UINT32_MAX);
                if (now != UINT32_MAX && map[now] != (old == UINT32_MAX ? PD_BOND_NEW : old))
                    ++wrong_renewed;
            } else {
                kept_pairs += old != UINT32_MAX;
                stretched += old != UINT32_MAX && near == UINT32_MAX;
                wrong_kept += (now != UINT32_MAX) != (old != UINT32_MAX);
                if (now != UINT32_MAX && (map[now] != old || g.xi[now].x != f.xi[old].x ||
                                          g.xi[now].y != f.xi[old].y || g.xi[now].z != f.xi[old].z))
                    ++wrong_kept;
            }
        }
    }
    d.particle_renews = NULL;
    PD_REQUIRE(pd_family_renew(&f, &grid, &d, &whole, &map_whole) == PD_OK);
    d.particle_renews = all;
    PD_REQUIRE(pd_family_renew(&f, &grid, &d, &ones, &map_ones) == PD_OK);
    int same = whole.bond_count == ones.bond_count;
    for (uint32_t i = 0; same && i < n; ++i)
        same = same_neighbours(&whole, &ones, i);
    printf("  body 1: %d bonds with a flagged end (as a fresh build), %d kept bonds (%d of them "
           "stretched past the horizon); %d and %d wrong; all-ones mask = no mask: %d\n",
           renewed_pairs, kept_pairs, stretched, wrong_renewed, wrong_kept, same);
    PD_CHECK(wrong_renewed == 0 && wrong_kept == 0);
    PD_CHECK(renewed_pairs > 0 && kept_pairs > 0 && stretched > 0);
    PD_CHECK(rev_consistent(&g));
    PD_CHECK(same);
    pd_bonds_map_free(map, &g);
    pd_bonds_map_free(map_whole, &whole);
    pd_bonds_map_free(map_ones, &ones);
    pd_family_free(&f), pd_family_free(&g), pd_family_free(&fresh);
    pd_family_free(&whole), pd_family_free(&ones);
    pd_hash_grid_destroy(&grid);
    PD_CHECK(pd_bytes_in_use() == bytes0);
}

/* pd_family_renew_into: the sheared body renewed into a spare family of the same particles.
 * Into an empty one it allocates room for an eighth more bonds than it has; renewed back into
 * the first family (the unsheared positions: as many bonds as it holds) it keeps that family's
 * arrays; both equal pd_family_renew's result bond for bond. */
PD_TEST(renewing_into_a_spare_reuses_its_arrays) {
    static blocks b;
    static pd_vec3 moved[NP];
    size_t bytes0 = pd_bytes_in_use();
    pd_real s = 0.01;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_family f, plain, spare = {0};
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, 2.01) == PD_OK);
    shear_body_1(&b, n, s, moved);
    uint8_t renew[2] = {1, 1};
    pd_renewal_def d = renewal(&b, moved, renew, NULL);
    uint32_t *map = NULL, *map_plain = NULL, *map_back = NULL;
    PD_REQUIRE(pd_family_renew_into(&f, &grid, &d, &spare, &map) == PD_OK);
    PD_REQUIRE(pd_family_renew(&f, &grid, &d, &plain, &map_plain) == PD_OK);
    int differ = 0;
    for (uint32_t k = 0; k < plain.bond_count; ++k)
        differ +=
            spare.j[k] != plain.j[k] || spare.rev[k] != plain.rev[k] || map[k] != map_plain[k];
    size_t room = spare.bond_capacity;
    const uint32_t* kept = f.j;
    pd_renewal_def back = renewal(&b, b.pos, renew, NULL);
    size_t before = f.bond_count;
    PD_REQUIRE(pd_family_renew_into(&spare, &grid, &back, &f, &map_back) == PD_OK);
    printf("  %zu bonds into an empty spare: room for %zu; back into the first family: %zu bonds "
           "(%zu before), its arrays %s; %d differences from pd_family_renew\n",
           spare.bond_count, room, f.bond_count, before, f.j == kept ? "kept" : "new", differ);
    PD_CHECK(room >= spare.bond_count + spare.bond_count / 8);
    PD_CHECK(f.bond_count == before && f.j == kept);
    PD_CHECK(differ == 0);
    pd_bonds_map_free(map, &spare);
    pd_bonds_map_free(map_plain, &plain);
    pd_bonds_map_free(map_back, &f);
    pd_family_free(&f);
    pd_family_free(&plain);
    pd_family_free(&spare);
    pd_hash_grid_destroy(&grid);
    PD_CHECK(pd_bytes_in_use() == bytes0);
}

/* Particles moved from the lattice by `step` spacings, into out. Pattern 0: along x, the sign
 * alternating every second lattice column, so that pairs two spacings apart along x approach
 * (or part) by twice the step. Pattern 1: along (1, 2, 0)/sqrt(5), the two parities of
 * i + j + k in opposite directions, so that pairs sqrt(5) spacings apart along it approach by
 * twice the step. */
static void move_lattice(const blocks* b, size_t n, pd_real s, pd_real step, int pattern,
                         pd_vec3* out) {
    pd_vec3 dir =
        pattern ? pd_v3_scale(pd_v3(1, 2, 0), step * s / sqrt(5.0)) : pd_v3(step * s, 0, 0);
    for (size_t i = 0; i < n; ++i) {
        long ix = lround(b->pos[i].x / s), iy = lround(b->pos[i].y / s),
             iz = lround(b->pos[i].z / s);
        int sign = pattern ? (int)((ix + iy + iz) & 1) : (int)((ix / 2) & 1);
        out[i] = pd_v3_madd(b->pos[i], sign ? -1 : 1, dir);
    }
}

/* Renewals through a Verlet list (pd_neighbor_cache, skin 0.25 spacings) equal fresh builds.
 * Horizon 1.96 spacings puts the lattice's sqrt(5) pairs (2.236) beyond the list's 2.21: moved
 * 0.1 spacings (below half the skin, pattern 0) the list is kept, and pairs two spacings apart
 * come within the horizon (1.8) or leave the list's reach; moved 0.14 (beyond half the skin,
 * pattern 1) sqrt(5) pairs come within the horizon (2.236 - 0.28), which only a new search
 * finds: a list kept past half the skin misses them. */
PD_TEST(renewal_through_a_verlet_list_equals_fresh_builds) {
    static blocks b;
    static pd_vec3 moved[NP];
    size_t bytes0 = pd_bytes_in_use();
    pd_real s = 0.01, horizon = 1.96;
    size_t n = two_blocks(&b, s);
    pd_hash_grid grid = {0};
    pd_neighbor_cache cache = {.skin_spacings = 0.25};
    pd_family f, g, fresh;
    PD_REQUIRE(pd_family_build(&f, &grid, b.pos, b.vol, b.h, b.body, n, horizon) == PD_OK);
    uint8_t renew[2] = {1, 1};
    const pd_real steps[] = {0, 0.1, 0.14};
    const int patterns[] = {0, 0, 1};
    size_t searches[3];
    int differ[3], news[3];
    for (int k = 0; k < 3; ++k) {
        move_lattice(&b, n, s, steps[k], patterns[k], moved);
        pd_renewal_def d = renewal(&b, moved, renew, NULL);
        d.horizon = horizon, d.cache = &cache;
        uint32_t* map = NULL;
        PD_REQUIRE(pd_family_renew(&f, &grid, &d, &g, &map) == PD_OK);
        PD_REQUIRE(pd_family_build(&fresh, &grid, moved, b.vol, b.h, b.body, n, horizon) == PD_OK);
        differ[k] = news[k] = 0;
        for (uint32_t i = 0; i < n; ++i) {
            differ[k] += !same_neighbours(&g, &fresh, i);
            for (uint32_t q = g.offsets[i]; q < g.offsets[i + 1]; ++q)
                news[k] += map[q] == PD_BOND_NEW;
        }
        searches[k] = cache.searches;
        printf("  moved %.2f spacings: %zu bonds, %d new, %zu searches in %zu renewals, %d "
               "families differ from a fresh build\n",
               steps[k], g.bond_count, news[k], cache.searches, cache.renewals, differ[k]);
        pd_bonds_map_free(map, &g);
        pd_family_free(&fresh);
        pd_family_free(&f);
        f = g;
    }
    PD_CHECK(differ[0] == 0 && differ[1] == 0 && differ[2] == 0);
    PD_CHECK(searches[0] == 1 && searches[1] == 1 && searches[2] == 2); /* kept, then searched */
    PD_CHECK(news[1] > 0 && news[2] > 0);
    pd_family_free(&f);
    pd_neighbor_cache_destroy(&cache);
    pd_hash_grid_destroy(&grid);
    PD_CHECK(pd_bytes_in_use() == bytes0);
}
