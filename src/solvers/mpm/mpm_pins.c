/* mpm's pins on the grid (docs/methods/mpm.md "Pins"; beyond Fang 2019, whose scenes hold
 * their bars' ends without saying how). A pinned particle p's velocity is prescribed, v_p (the
 * world moves it along its pin's keyframes); the grid must give it that velocity,
 *
 *   (W v)_p = sum_i w_ip v_i = v_p,                                                  (1)
 *
 * so that the body around it moves with it (the transfer back reads the nodes, not v_p).
 * Each pin's velocity gradient L_k is fitted to its particles' velocities (least squares; exact
 * for a pin's rigid motion, affine within a step) and the pinned particles alone transferred by
 * APIC with it, v_pin,i = sum_p w_ip m_p (v_p + L_k (x_i - x_p)) / sum_p w_ip m_p: where the
 * pins move affinely, v_pin meets (1) at every pinned particle (APIC reproduces an affine
 * field). (1)'s other solutions differ from v_pin by W's null space:
 *  - a node only pinned particles reach (no free mass there) is held at v_pin (it moves no free
 *    particle; the pinned particles' velocity gradient takes the pin's there);
 *  - on the nodes the pins share with the free body, N, (1) reads W_N v_N = v_p - W v_pin off N,
 *    met by v_pin,N; its solutions are v_pin,N + Z y, Z an orthonormal basis of W_N's null space.
 *    N falls into blocks no pinned particle couples (two nodes one pinned particle reaches are
 *    in one block): S = W_N^T W_N (one scalar matrix for the three components) is block
 *    diagonal, and each block is factorised alone by Cholesky with symmetric pivoting to its
 *    rank r; of its nb nodes it keeps an orthonormal basis of W's null space (Z, nb - r columns)
 *    or of its complement, W^T's range (Q, r columns; Z Z^T = I - Q Q^T), whichever is smaller.
 *    The target t = (I - Z Z^T) v_pin,N is what (1) fixes, Z Z^T what it leaves free. The basis
 *    is kept while the shared nodes and the pinned particles' positions are the same bytes (a
 *    still pin: S would be the same), and a block found again with the same nodes and particles
 *    takes the basis it had (a still pin beside a moving one). A block past PIN_MAX_BLOCK nodes
 *    is held whole.
 * A block of pinned particles three layers thick or more fixes its shared nodes (W_N has full
 * column rank: Z is empty, the nodes held 1.5 cells past the particles because (1) says so); a
 * thinner pin leaves some free (a pin of one layer, most).
 * The explicit step (one field): the least change of the nodes' kinetic energy that meets (1),
 * v_N = t + Z y with (Z^T M Z) y = Z^T M (v* - t), v* the updated grid velocity (the multiplier
 * form v* + M^-1 W^T lambda solved in the null space: exact, without iterations; with Q the
 * same change v_N - v* = M^-1 Q mu, (Q^T M^-1 Q) mu = Q^T (t - v*)). The implicit steps:
 * Sec. 7.2's constraints projected inside the grid solves, u_N <- Z Z^T u_N
 * (pd_mpm_pin_project). The impulse the constraint takes at the held and shared nodes (its
 * range part) is the pins' reaction. A field per body (the explicit step with several bodies):
 * the same on each pinned body's own field, its mass and velocity, after the contact; the other
 * bodies' fields are the contact's. All loops here are sequential, in the particles' and the
 * nodes' order: the same bytes on any thread count. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "math/svd3.h"
#include "solvers/mpm/mpm_internal.h"
#include "world/world.h"

/* The per-node arrays for `nodes` nodes (grown by half again, never shrunk). */
static pd_status reserve_nodes(pd_mpm_state* s, size_t nodes) {
    if (nodes <= s->pin_nodes)
        return PD_OK;
    size_t cap = nodes + nodes / 2;
    PD_FREE_ARRAY(s->pin_node_mass, pd_real, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_node_velocity, pd_vec3, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_node_impulse, pd_vec3, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_node_hold, pd_real, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_local, int32_t, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_field_mass, pd_real, s->pin_nodes);
    PD_FREE_ARRAY(s->pin_field_velocity, pd_vec3, s->pin_nodes);
    s->pin_nodes = cap;
    s->pin_node_mass = PD_NEW_ARRAY(pd_real, cap);
    s->pin_node_velocity = PD_NEW_ARRAY(pd_vec3, cap);
    s->pin_node_impulse = PD_NEW_ARRAY(pd_vec3, cap);
    s->pin_node_hold = PD_NEW_ARRAY(pd_real, cap);
    s->pin_local = PD_NEW_ARRAY(int32_t, cap);
    s->pin_field_mass = s->fields.count > 0 ? PD_NEW_ARRAY(pd_real, cap) : NULL;
    s->pin_field_velocity = s->fields.count > 0 ? PD_NEW_ARRAY(pd_vec3, cap) : NULL;
    return s->pin_node_mass && s->pin_node_velocity && s->pin_node_impulse && s->pin_node_hold &&
                   s->pin_local &&
                   (s->fields.count == 0 || (s->pin_field_mass && s->pin_field_velocity))
               ? PD_OK
               : PD_ERR_OUT_OF_MEMORY;
}

/* Whether particle q is pinned and of the body the pins' step takes now (pin_only_body). */
static int pinned(const pd_mpm_state* s, const pd_particles* p, size_t q) {
    return (p->flags[q] & PD_P_PINNED) && (s->pin_only_body < 0 || p->body[q] == s->pin_only_body);
}

/* Each pin's velocity gradient L_k, the least-squares fit v_p = v_k + L_k (x_p - x_k) over its
 * pinned particles (x_k, v_k their centres of mass): L_k = K S^+, K = sum m (v - v_k) (x -
 * x_k)^T, S = sum m (x - x_k) (x - x_k)^T (its pseudo-inverse: a pin of one layer fits the
 * gradient in its plane; of one particle, none). */
static void fit_pins(pd_mpm_state* s, const pd_particles* p) {
    pd_mpm_pin_fit* fit = s->pin_fit;
    memset(fit, 0, (size_t)s->pin_count * sizeof *fit);
    for (size_t i = 0; i < s->n; ++i) {
        if (!(p->flags[i] & PD_P_PINNED))
            continue;
        pd_mpm_pin_fit* f = &fit[p->pin[i]];
        f->mass += p->mass[i];
        f->x = pd_v3_madd(f->x, p->mass[i], p->pos[i]);
        f->v = pd_v3_madd(f->v, p->mass[i], p->vel[i]);
    }
    for (int k = 0; k < s->pin_count; ++k)
        if (fit[k].mass > 0)
            fit[k].x = pd_v3_scale(fit[k].x, 1 / fit[k].mass),
            fit[k].v = pd_v3_scale(fit[k].v, 1 / fit[k].mass);
    for (size_t i = 0; i < s->n; ++i) {
        if (!(p->flags[i] & PD_P_PINNED))
            continue;
        pd_mpm_pin_fit* f = &fit[p->pin[i]];
        pd_vec3 d = pd_v3_sub(p->pos[i], f->x);
        pd_m3_add_outer(&f->xx, p->mass[i], d, d);
        pd_m3_add_outer(&f->vx, p->mass[i], pd_v3_sub(p->vel[i], f->v), d);
    }
    for (int k = 0; k < s->pin_count; ++k)
        fit[k].grad = pd_m3_mul(fit[k].vx, pd_m3_pinv_sym(fit[k].xx, 1e-9));
}

/* Node index and weight of particle p's stencil entry (di, dj, dk), and x_i - x_p. */
typedef struct stencil {
    size_t si, sj;
    pd_real w[3][3];
} stencil;

static stencil stencil_of(const pd_grid* g, size_t p) {
    stencil st = {(size_t)g->dim[1] * (size_t)g->dim[2], (size_t)g->dim[2], {{0}}};
    pd_grid_weights(g, p, st.w);
    return st;
}

/* The held nodes' velocities: the pinned particles' APIC transfer alone with each pin's fitted
 * gradient, m_i = sum w m_p, v_i = sum w m_p (v_p + L_k (x_i - x_p)) / m_i (the file's head). */
static void scatter_pins(pd_mpm_state* s, const pd_particles* p) {
    const pd_grid* g = &s->grid;
    memset(s->pin_node_mass, 0, g->nodes * sizeof *s->pin_node_mass);
    memset(s->pin_node_velocity, 0, g->nodes * sizeof *s->pin_node_velocity);
    for (size_t q = 0; q < s->n; ++q) {
        if (!pinned(s, p, q))
            continue;
        stencil st = stencil_of(g, q);
        pd_mat3 grad = s->pin_fit[p->pin[q]].grad;
        pd_real m = p->mass[q];
        for (int di = 0; di < 3; ++di)
            for (int dj = 0; dj < 3; ++dj)
                for (int dk = 0; dk < 3; ++dk) {
                    size_t n = g->base[q] + di * st.si + dj * st.sj + (size_t)dk;
                    pd_real w = st.w[0][di] * st.w[1][dj] * st.w[2][dk] * m;
                    pd_vec3 r = pd_v3_sub(pd_v3_scale(pd_v3(di, dj, dk), g->dx), g->offset[q]);
                    pd_vec3 v = pd_v3_add(p->vel[q], pd_m3_mulv(grad, r));
                    s->pin_node_mass[n] += w;
                    s->pin_node_velocity[n] = pd_v3_madd(s->pin_node_velocity[n], w, v);
                }
    }
    for (size_t n = 0; n < g->nodes; ++n)
        if (s->pin_node_mass[n] > 0)
            s->pin_node_velocity[n] = pd_v3_scale(s->pin_node_velocity[n], 1 / s->pin_node_mass[n]);
}

/* The share of body `body`'s pinned particles (-1: every body's). */
static pd_status share_body(pd_mpm_state* s, const pd_particles* p, int body) {
    pd_status st = reserve_nodes(s, s->grid.nodes);
    if (st != PD_OK)
        return st;
    s->pin_only_body = body;
    fit_pins(s, p);
    scatter_pins(s, p);
    return PD_OK;
}

pd_status pd_mpm_pin_share(pd_mpm_state* s, const pd_particles* p) {
    return share_body(s, p, -1);
}

void pd_mpm_pin_nodes(pd_mpm_state* s) {
    for (size_t n = 0; n < s->grid.nodes; ++n)
        s->pin_node_hold[n] = s->grid.mass[n] > 0 && s->pin_node_mass[n] > 0 ? 1 : 0;
}

/* sum_i w_ip u_i at pinned particle q (the transfer back's v_p of a node field). */
static pd_vec3 gather(const pd_grid* g, const pd_vec3* u, size_t q) {
    stencil st = stencil_of(g, q);
    pd_vec3 sum = pd_v3(0, 0, 0);
    for (int di = 0; di < 3; ++di)
        for (int dj = 0; dj < 3; ++dj)
            for (int dk = 0; dk < 3; ++dk) {
                size_t n = g->base[q] + di * st.si + dj * st.sj + (size_t)dk;
                pd_real w = st.w[0][di] * st.w[1][dj] * st.w[2][dk];
                sum = pd_v3_madd(sum, w, u[n]);
            }
    return sum;
}

/* ---- W's null space on the shared nodes ---- */

/* Pivots of S = W^T W below this times its largest diagonal end its rank: a direction the
 * pinned particles see with weights below about 1e-5 of theirs is left free (it moves them by
 * less than that fraction of its velocity). */
#define PIN_RANK_TOLERANCE 1e-10
/* A block of more shared nodes than this is held whole instead (its S takes n^2 numbers and
 * n^3 / 3 multiply-adds; the sheared block's faces, the largest blocks met, have 485). */
#define PIN_MAX_BLOCK 2000

int pd_mpm_pin_shared_node(const pd_mpm_state* s, size_t n) {
    pd_real m = s->grid.mass[n], pinned = s->pin_node_mass[n];
    return m > 0 && pinned > 0 && m - pinned > 1e-9 * m;
}

static pd_status reserve_shared(pd_mpm_state* s, size_t count) {
    if (count <= s->pin_shared_cap)
        return PD_OK;
    size_t cap = count + count / 2, old = s->pin_shared_cap;
    PD_FREE_ARRAY(s->pin_shared, uint32_t, old);
    PD_FREE_ARRAY(s->pin_perm, uint32_t, old);
    PD_FREE_ARRAY(s->pin_order, uint32_t, old);
    PD_FREE_ARRAY(s->pin_label, uint32_t, old);
    PD_FREE_ARRAY(s->pin_coef, pd_real, 3 * old);
    s->pin_shared_cap = cap;
    s->pin_shared = PD_NEW_ARRAY(uint32_t, cap);
    s->pin_perm = PD_NEW_ARRAY(uint32_t, cap);
    s->pin_order = PD_NEW_ARRAY(uint32_t, cap);
    s->pin_label = PD_NEW_ARRAY(uint32_t, cap);
    s->pin_coef = PD_NEW_ARRAY(pd_real, 3 * cap);
    return s->pin_shared && s->pin_perm && s->pin_order && s->pin_label && s->pin_coef
               ? PD_OK
               : PD_ERR_OUT_OF_MEMORY;
}

/* The local places of the shared nodes in pinned particle q's stencil (at most 27), with their
 * weights w_iq > 0; returns how many. */
static int shared_stencil(const pd_mpm_state* s, size_t q, int32_t* at, pd_real* w) {
    const pd_grid* g = &s->grid;
    stencil st = stencil_of(g, q);
    int k = 0;
    for (int di = 0; di < 3; ++di)
        for (int dj = 0; dj < 3; ++dj)
            for (int dk = 0; dk < 3; ++dk) {
                int32_t l = s->pin_local[g->base[q] + di * st.si + dj * st.sj + (size_t)dk];
                pd_real wt = st.w[0][di] * st.w[1][dj] * st.w[2][dk];
                if (l >= 0 && wt > 0)
                    at[k] = l, w[k++] = wt;
            }
    return k;
}

/* ---- the kept basis (while the pinned particles stay) ---- */

/* Whether the basis found last was found from these shared nodes (pin_order, `count` in the
 * nodes' order), these pinned particles (the same positions bitwise, pins and order) on the
 * same grid: then S, and every number found from it, would be the same bytes. */
static int key_matches(const pd_mpm_state* s, const pd_particles* p, size_t count) {
    const pd_grid* g = &s->grid;
    if (!s->pin_key_valid || s->pin_key_body != s->pin_only_body || s->pin_key_nodes != count ||
        memcmp(s->pin_key_dim, g->dim, sizeof g->dim) != 0 ||
        memcmp(&s->pin_key_origin, &g->origin, sizeof g->origin) != 0 ||
        memcmp(s->pin_key_node, s->pin_order, count * sizeof *s->pin_order) != 0)
        return 0;
    size_t k = 0;
    for (size_t q = 0; q < s->n; ++q) {
        if (!pinned(s, p, q))
            continue;
        if (k >= s->pin_key_pinned || s->pin_key_pin[k] != p->pin[q] ||
            memcmp(&s->pin_key_pos[k], &p->pos[q], sizeof p->pos[q]) != 0)
            return 0;
        k++;
    }
    return k == s->pin_key_pinned;
}

/* Keeps the key of the basis just found (key_matches); a failed allocation keeps none. */
static void keep_key(pd_mpm_state* s, const pd_particles* p, size_t count) {
    size_t pinned_count = 0;
    for (size_t q = 0; q < s->n; ++q)
        pinned_count += (size_t)pinned(s, p, q);
    size_t need = count > pinned_count ? count : pinned_count;
    s->pin_key_valid = 0;
    if (need > s->pin_key_cap) {
        size_t old = s->pin_key_cap, cap = need + need / 2;
        PD_FREE_ARRAY(s->pin_key_node, uint32_t, old);
        PD_FREE_ARRAY(s->pin_key_pos, pd_vec3, old);
        PD_FREE_ARRAY(s->pin_key_pin, int32_t, old);
        s->pin_key_node = PD_NEW_ARRAY(uint32_t, cap);
        s->pin_key_pos = PD_NEW_ARRAY(pd_vec3, cap);
        s->pin_key_pin = PD_NEW_ARRAY(int32_t, cap);
        s->pin_key_cap = s->pin_key_node && s->pin_key_pos && s->pin_key_pin ? cap : 0;
        if (s->pin_key_cap == 0)
            return;
    }
    memcpy(s->pin_key_node, s->pin_order, count * sizeof *s->pin_order);
    size_t k = 0;
    for (size_t q = 0; q < s->n; ++q)
        if (pinned(s, p, q))
            s->pin_key_pos[k] = p->pos[q], s->pin_key_pin[k++] = p->pin[q];
    s->pin_key_nodes = count, s->pin_key_pinned = k, s->pin_key_body = s->pin_only_body;
    memcpy(s->pin_key_dim, s->grid.dim, sizeof s->grid.dim);
    s->pin_key_origin = s->grid.origin;
    s->pin_key_valid = 1;
}

/* ---- the blocks: the shared nodes no pinned particle couples ---- */

static uint32_t root_of(uint32_t* parent, uint32_t i) {
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

/* The shared nodes (pin_order, in the nodes' order) in blocks: two nodes one pinned particle
 * reaches are in one block (union-find in pin_perm, each root the block's first node); the
 * blocks in the order of their first nodes, each block's nodes in the nodes' order, into
 * pin_shared (pin_local their places), and the pinned particles block by block into pin_list
 * (a particle's block is that of the shared nodes it reaches). S is block diagonal in this
 * order: each block is factorised alone. */
static pd_status find_blocks(pd_mpm_state* s, const pd_particles* p, size_t count) {
    uint32_t* parent = s->pin_perm;
    for (size_t i = 0; i < count; ++i)
        parent[i] = (uint32_t)i, s->pin_local[s->pin_order[i]] = (int32_t)i;
    int32_t at[27];
    pd_real w[27];
    size_t pinned_count = 0;
    for (size_t q = 0; q < s->n; ++q) {
        if (!pinned(s, p, q))
            continue;
        pinned_count++;
        int k = shared_stencil(s, q, at, w);
        for (int i = 1; i < k; ++i) {
            uint32_t a = root_of(parent, (uint32_t)at[0]), b = root_of(parent, (uint32_t)at[i]);
            if (a != b)
                parent[a > b ? a : b] = a < b ? a : b;
        }
    }
    size_t blocks = 0;
    for (size_t i = 0; i < count; ++i) /* a block per root, its number in pin_label */
        if (root_of(parent, (uint32_t)i) == i)
            s->pin_label[i] = (uint32_t)blocks++;
    if (!pd_reserve_scratch((void**)&s->pin_block, &s->pin_block_cap, blocks,
                            sizeof *s->pin_block) ||
        !pd_reserve_scratch((void**)&s->pin_list, &s->pin_list_cap, pinned_count,
                            sizeof *s->pin_list))
        return PD_ERR_OUT_OF_MEMORY;
    memset(s->pin_block, 0, blocks * sizeof *s->pin_block);
    for (size_t i = 0; i < count; ++i)
        s->pin_block[s->pin_label[root_of(parent, (uint32_t)i)]].count++;
    for (size_t b = 1; b < blocks; ++b)
        s->pin_block[b].start = s->pin_block[b - 1].start + s->pin_block[b - 1].count;
    for (size_t b = 0; b < blocks; ++b)
        s->pin_block[b].count = 0;
    for (size_t i = 0; i < count; ++i) {
        pd_mpm_pin_block* blk = &s->pin_block[s->pin_label[root_of(parent, (uint32_t)i)]];
        s->pin_shared[blk->start + blk->count++] = s->pin_order[i];
    }
    for (size_t i = 0; i < count; ++i)
        s->pin_local[s->pin_shared[i]] = (int32_t)i;
    /* the pinned particles by block: counted, placed (a particle reaching no shared node in none)
     */
    uint32_t* block_of = s->pin_label; /* per shared node now */
    for (size_t b = 0; b < blocks; ++b)
        for (size_t i = 0; i < s->pin_block[b].count; ++i)
            s->pin_perm[s->pin_block[b].start + i] = (uint32_t)b;
    memcpy(block_of, s->pin_perm, count * sizeof *block_of);
    for (size_t q = 0; q < s->n; ++q)
        if (pinned(s, p, q) && shared_stencil(s, q, at, w) > 0)
            s->pin_block[block_of[at[0]]].pinned++;
    for (size_t b = 1; b < blocks; ++b)
        s->pin_block[b].first = s->pin_block[b - 1].first + s->pin_block[b - 1].pinned;
    for (size_t b = 0; b < blocks; ++b)
        s->pin_block[b].pinned = 0;
    for (size_t q = 0; q < s->n; ++q)
        if (pinned(s, p, q) && shared_stencil(s, q, at, w) > 0) {
            pd_mpm_pin_block* blk = &s->pin_block[block_of[at[0]]];
            s->pin_list[blk->first + blk->pinned++] = (uint32_t)q;
        }
    s->pin_blocks = blocks;
    return PD_OK;
}

/* S = W^T W on block b's nodes (one scalar matrix for the three components), S_ij = sum_p w_ip
 * w_jp over its pinned particles in the particles' order, into pin_s (row-major, nb x nb). */
static void assemble_s(pd_mpm_state* s, const pd_mpm_pin_block* b) {
    size_t nb = b->count;
    pd_real* a = s->pin_s;
    memset(a, 0, nb * nb * sizeof *a);
    int32_t at[27];
    pd_real w[27];
    for (size_t k = 0; k < b->pinned; ++k) {
        int m = shared_stencil(s, s->pin_list[b->first + k], at, w);
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < m; ++j)
                a[(size_t)(at[i] - (int32_t)b->start) * nb + (size_t)(at[j] - (int32_t)b->start)] +=
                    w[i] * w[j];
    }
}

static void swap_rows_columns(pd_real* a, size_t n, size_t i, size_t j, uint32_t* perm) {
    for (size_t c = 0; c < n; ++c) {
        pd_real t = a[i * n + c];
        a[i * n + c] = a[j * n + c], a[j * n + c] = t;
    }
    for (size_t r = 0; r < n; ++r) {
        pd_real t = a[r * n + i];
        a[r * n + i] = a[r * n + j], a[r * n + j] = t;
    }
    uint32_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
}

/* Cholesky with symmetric pivoting of the n x n symmetric positive semi-definite a (row-major,
 * overwritten: L below the diagonal in the pivots' order perm): P^T S P = L L^T to the rank
 * returned, the first pivot below PIN_RANK_TOLERANCE times the largest diagonal ending it. */
static size_t pivoted_cholesky(pd_real* a, size_t n, uint32_t* perm) {
    pd_real largest = 0;
    for (size_t i = 0; i < n; ++i)
        perm[i] = (uint32_t)i, largest = fmax(largest, a[i * n + i]);
    size_t k = 0;
    for (; k < n; ++k) {
        size_t piv = k;
        for (size_t j = k + 1; j < n; ++j)
            if (a[j * n + j] > a[piv * n + piv])
                piv = j;
        if (!(a[piv * n + piv] > PIN_RANK_TOLERANCE * largest))
            break;
        if (piv != k)
            swap_rows_columns(a, n, k, piv, perm);
        pd_real d = sqrt(a[k * n + k]);
        a[k * n + k] = d;
        for (size_t i = k + 1; i < n; ++i)
            a[i * n + k] /= d;
        for (size_t i = k + 1; i < n; ++i) /* the trailing Schur complement, kept symmetric */
            for (size_t j = k + 1; j <= i; ++j)
                a[i * n + j] = a[j * n + i] = a[i * n + j] - a[i * n + k] * a[j * n + k];
    }
    return k;
}

/* Column z (nb numbers) made orthogonal to the `done` columns before it (nb apart) and of unit
 * length: Gram-Schmidt twice. */
static void orthonormalise(const pd_real* before, size_t done, size_t nb, pd_real* z) {
    for (int pass = 0; pass < 2; ++pass) {
        for (size_t b = 0; b < done; ++b) {
            const pd_real* y = before + b * nb;
            pd_real dot = 0;
            for (size_t i = 0; i < nb; ++i)
                dot += y[i] * z[i];
            for (size_t i = 0; i < nb; ++i)
                z[i] -= dot * y[i];
        }
        pd_real norm = 0;
        for (size_t i = 0; i < nb; ++i)
            norm += z[i] * z[i];
        for (size_t i = 0; i < nb; ++i)
            z[i] /= sqrt(norm);
    }
}

/* Block b's basis from P^T S P = [L11; L21] [L11; L21]^T of rank r (pin_s, pin_perm): where r
 * is at most half its nodes, W^T's range, the columns of P L; else W's null space, the columns
 * P [-L11^-T L21^T; I] (L^T x = 0); orthonormalised, at pin_z + b->z. The two span orthogonal
 * complements, so Z Z^T = I - Q Q^T: either serves, the smaller costs less at every projection. */
static void block_basis(pd_mpm_state* s, pd_mpm_pin_block* b) {
    size_t nb = b->count, r = b->rank;
    const pd_real* a = s->pin_s;
    const uint32_t* perm = s->pin_perm;
    pd_real* x = s->pin_coef; /* scratch: nb numbers */
    b->range = r <= nb - r;
    b->cols = b->range ? r : nb - r;
    for (size_t c = 0; c < b->cols; ++c) {
        pd_real* z = s->pin_z + b->z + c * nb;
        memset(x, 0, nb * sizeof *x);
        if (b->range) /* L's column c, below the diagonal */
            for (size_t i = c; i < nb; ++i)
                x[i] = a[i * nb + c];
        else {
            x[r + c] = 1;
            for (size_t i = r; i-- > 0;) { /* L11^T x_top = -L21^T e_c */
                pd_real sum = -a[(r + c) * nb + i];
                for (size_t j = i + 1; j < r; ++j)
                    sum -= a[j * nb + i] * x[j];
                x[i] = sum / a[i * nb + i];
            }
        }
        for (size_t i = 0; i < nb; ++i)
            z[perm[i]] = x[i];
        orthonormalise(s->pin_z + b->z, c, nb, z);
    }
}

/* Whether block b's nodes and pinned particles (positions and pins, in its order) are those of
 * a block found last on the same grid for the same body: then its S, and its basis, are that
 * block's. Returns that block, or NULL. */
static const pd_mpm_pin_block* same_block(const pd_mpm_state* s, const pd_particles* p,
                                          const pd_mpm_pin_block* b) {
    if (s->pin_prev_body != s->pin_only_body ||
        memcmp(s->pin_prev_dim, s->grid.dim, sizeof s->grid.dim) != 0 ||
        memcmp(&s->pin_prev_origin, &s->grid.origin, sizeof s->grid.origin) != 0)
        return NULL;
    for (size_t k = 0; k < s->pin_prev_blocks; ++k) {
        const pd_mpm_pin_block* o = &s->pin_prev_block[k];
        if (o->count != b->count || o->pinned != b->pinned ||
            memcmp(s->pin_prev_shared + o->start, s->pin_shared + b->start,
                   b->count * sizeof *s->pin_shared) != 0)
            continue;
        size_t i = 0;
        for (; i < b->pinned; ++i) {
            uint32_t q = s->pin_list[b->first + i];
            if (s->pin_prev_pin[o->first + i] != p->pin[q] ||
                memcmp(&s->pin_prev_pos[o->first + i], &p->pos[q], sizeof p->pos[q]) != 0)
                break;
        }
        if (i == b->pinned)
            return o;
    }
    return NULL;
}

/* Keeps the blocks just found, with their bases, for same_block (none when out of memory). */
static void keep_blocks(pd_mpm_state* s, const pd_particles* p, size_t room) {
    size_t blocks = s->pin_blocks, count = s->pin_shared_count, pinned = 0;
    for (size_t k = 0; k < blocks; ++k)
        pinned += s->pin_block[k].pinned;
    s->pin_prev_blocks = 0;
    if (!pd_reserve_scratch((void**)&s->pin_prev_block, &s->pin_prev_block_cap, blocks,
                            sizeof *s->pin_prev_block) ||
        !pd_reserve_scratch((void**)&s->pin_prev_shared, &s->pin_prev_shared_cap, count,
                            sizeof *s->pin_prev_shared) ||
        !pd_reserve_scratch((void**)&s->pin_prev_z, &s->pin_prev_z_cap, room,
                            sizeof *s->pin_prev_z) ||
        !pd_reserve_scratch((void**)&s->pin_prev_pos, &s->pin_prev_pos_cap, pinned,
                            sizeof *s->pin_prev_pos) ||
        !pd_reserve_scratch((void**)&s->pin_prev_pin, &s->pin_prev_pin_cap, pinned,
                            sizeof *s->pin_prev_pin))
        return;
    memcpy(s->pin_prev_block, s->pin_block, blocks * sizeof *s->pin_block);
    memcpy(s->pin_prev_shared, s->pin_shared, count * sizeof *s->pin_shared);
    memcpy(s->pin_prev_z, s->pin_z, room * sizeof *s->pin_z);
    for (size_t i = 0; i < pinned; ++i) /* the blocks' lists are contiguous, in order */
        s->pin_prev_pos[i] = p->pos[s->pin_list[i]], s->pin_prev_pin[i] = p->pin[s->pin_list[i]];
    s->pin_prev_body = s->pin_only_body;
    memcpy(s->pin_prev_dim, s->grid.dim, sizeof s->grid.dim);
    s->pin_prev_origin = s->grid.origin;
    s->pin_prev_blocks = blocks;
}

/* Each block's basis: S assembled and factorised block by block (a block past PIN_MAX_BLOCK
 * held: rank nb, no columns), or a block found last again taken as it was. */
static pd_status find_bases(pd_mpm_state* s, const pd_particles* p) {
    size_t largest = 0, room = 0;
    for (size_t k = 0; k < s->pin_blocks; ++k) {
        pd_mpm_pin_block* b = &s->pin_block[k];
        b->z = room;
        if (b->count <= PIN_MAX_BLOCK)
            largest = b->count > largest ? b->count : largest, room += b->count * (b->count / 2);
    }
    if (!pd_reserve_scratch((void**)&s->pin_s, &s->pin_s_cap, largest * largest,
                            sizeof *s->pin_s) ||
        !pd_reserve_scratch((void**)&s->pin_z, &s->pin_z_cap, room, sizeof *s->pin_z))
        return PD_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; k < s->pin_blocks; ++k) {
        pd_mpm_pin_block* b = &s->pin_block[k];
        if (b->count > PIN_MAX_BLOCK) {
            b->rank = b->count, b->cols = 0, b->range = 0;
            continue;
        }
        const pd_mpm_pin_block* o = same_block(s, p, b);
        if (o) {
            b->rank = o->rank, b->cols = o->cols, b->range = o->range;
            memcpy(s->pin_z + b->z, s->pin_prev_z + o->z, b->cols * b->count * sizeof *s->pin_z);
            continue;
        }
        assemble_s(s, b);
        b->rank = pivoted_cholesky(s->pin_s, b->count, s->pin_perm);
        block_basis(s, b);
        s->pin_block_factorisations++;
    }
    keep_blocks(s, p, room);
    s->pin_factorisations++;
    return PD_OK;
}

pd_status pd_mpm_pin_basis(pd_mpm_state* s, const pd_particles* p) {
    const pd_grid* g = &s->grid;
    size_t count = 0;
    for (size_t n = 0; n < g->nodes; ++n) {
        s->pin_local[n] = -1;
        count += (size_t)pd_mpm_pin_shared_node(s, n);
    }
    s->pin_shared_count = 0;
    if (count == 0)
        return PD_OK;
    pd_status st = reserve_shared(s, count);
    if (st != PD_OK)
        return st;
    size_t k = 0;
    for (size_t n = 0; n < g->nodes; ++n)
        if (pd_mpm_pin_shared_node(s, n))
            s->pin_order[k++] = (uint32_t)n;
    s->pin_shared_count = count;
    if (key_matches(s, p, count)) { /* the same S: the basis kept, its nodes' places back */
        for (size_t i = 0; i < count; ++i)
            s->pin_local[s->pin_shared[i]] = (int32_t)i;
        return PD_OK;
    }
    s->pin_key_valid = 0;
    if ((st = find_blocks(s, p, count)) != PD_OK || (st = find_bases(s, p)) != PD_OK) {
        s->pin_shared_count = 0;
        return st;
    }
    keep_key(s, p, count);
    return PD_OK;
}

/* Block b's columns' coefficients c = B^T u on its nodes (B its basis). */
static void coefficients(const pd_mpm_state* s, const pd_mpm_pin_block* b, const pd_vec3* u,
                         pd_vec3* coef) {
    const uint32_t* node = s->pin_shared + b->start;
    for (size_t c = 0; c < b->cols; ++c) {
        const pd_real* z = s->pin_z + b->z + c * b->count;
        pd_vec3 sum = pd_v3(0, 0, 0);
        for (size_t i = 0; i < b->count; ++i)
            sum = pd_v3_madd(sum, z[i], u[node[i]]);
        coef[c] = sum;
    }
}

void pd_mpm_pin_project(const pd_mpm_state* s, pd_vec3* u, int range) {
    if (!s->has_pins || s->pin_shared_count == 0)
        return;
    pd_vec3* coef = (pd_vec3*)s->pin_coef; /* 3 n numbers: room for cols <= n vec3 */
    for (size_t k = 0; k < s->pin_blocks; ++k) {
        const pd_mpm_pin_block* b = &s->pin_block[k];
        const uint32_t* node = s->pin_shared + b->start;
        coefficients(s, b, u, coef);
        /* Z Z^T u (range 0) or (I - Z Z^T) u (range 1): B B^T u where B spans what is asked,
         * else u - B B^T u */
        int keep_columns = b->range == range;
        if (keep_columns)
            for (size_t i = 0; i < b->count; ++i)
                u[node[i]] = pd_v3(0, 0, 0);
        for (size_t c = 0; c < b->cols; ++c) {
            const pd_real* z = s->pin_z + b->z + c * b->count;
            for (size_t i = 0; i < b->count; ++i)
                u[node[i]] = pd_v3_madd(u[node[i]], keep_columns ? z[i] : -z[i], coef[c]);
        }
    }
}

void pd_mpm_pin_impulses(pd_mpm_state* s, const pd_vec3* reaction) {
    for (size_t n = 0; n < s->grid.nodes; ++n)
        s->pin_node_impulse[n] = s->pin_node_hold[n] > 0 ? reaction[n] : pd_v3(0, 0, 0);
    pd_mpm_pin_project(s, s->pin_node_impulse, 1);
    for (size_t n = 0; n < s->grid.nodes; ++n)
        if (s->pin_node_hold[n] > 0)
            s->pin_node_impulse[n] = pd_v3_scale(s->pin_node_impulse[n], 1 / s->pin_node_mass[n]);
}

/* Cholesky of the k x k SPD a (row-major, in place) and the solve a x = b for 3 right-hand
 * sides (b: k vec3, overwritten by x). */
static void solve_spd(pd_real* a, size_t k, pd_vec3* b) {
    for (size_t j = 0; j < k; ++j) {
        for (size_t i = 0; i < j; ++i)
            a[j * k + j] -= a[j * k + i] * a[j * k + i];
        a[j * k + j] = sqrt(a[j * k + j]);
        for (size_t r = j + 1; r < k; ++r) {
            for (size_t i = 0; i < j; ++i)
                a[r * k + j] -= a[r * k + i] * a[j * k + i];
            a[r * k + j] /= a[j * k + j];
        }
    }
    for (size_t r = 0; r < k; ++r) { /* L y = b */
        for (size_t i = 0; i < r; ++i)
            b[r] = pd_v3_madd(b[r], -a[r * k + i], b[i]);
        b[r] = pd_v3_scale(b[r], 1 / a[r * k + r]);
    }
    for (size_t r = k; r-- > 0;) { /* L^T x = y */
        for (size_t i = r + 1; i < k; ++i)
            b[r] = pd_v3_madd(b[r], -a[i * k + r], b[i]);
        b[r] = pd_v3_scale(b[r], 1 / a[r * k + r]);
    }
}

/* ---- the explicit step (one field) ---- */

/* Block b's part of the least change: d <- d + delta, delta in W's null space, minimising the
 * kinetic energy sum_i m_i |d_i|^2 / 2. With the null space's basis Z: delta = Z y, (Z^T M Z) y
 * = -Z^T M d. With the range's Q (Q^T delta = 0): d <- M^-1 Q mu, (Q^T M^-1 Q) mu = Q^T d (the
 * same minimiser: its gradient M d lies in Q's span, its Q^T d unchanged). */
static void least_change_block(pd_mpm_state* s, const pd_mpm_pin_block* b, pd_vec3* d) {
    const pd_real* mass = s->grid.mass;
    const uint32_t* node = s->pin_shared + b->start;
    size_t nb = b->count, cols = b->cols;
    pd_vec3* y = (pd_vec3*)s->pin_coef;
    pd_real* a = s->pin_s; /* B^T M^+-1 B (scratch: cols <= nb / 2) */
    if (cols == 0)
        return;
    for (size_t c = 0; c < cols; ++c) {
        const pd_real* zc = s->pin_z + b->z + c * nb;
        y[c] = pd_v3(0, 0, 0);
        for (size_t i = 0; i < nb; ++i) {
            pd_real m = b->range ? 1 : -mass[node[i]];
            y[c] = pd_v3_madd(y[c], zc[i] * m, d[node[i]]);
        }
        for (size_t e = 0; e <= c; ++e) {
            const pd_real* ze = s->pin_z + b->z + e * nb;
            pd_real sum = 0;
            for (size_t i = 0; i < nb; ++i) {
                pd_real m = mass[node[i]];
                sum += zc[i] * (b->range ? 1 / m : m) * ze[i];
            }
            a[c * cols + e] = a[e * cols + c] = sum;
        }
    }
    solve_spd(a, cols, y);
    if (b->range)
        for (size_t i = 0; i < nb; ++i)
            d[node[i]] = pd_v3(0, 0, 0);
    for (size_t c = 0; c < cols; ++c) {
        const pd_real* zc = s->pin_z + b->z + c * nb;
        for (size_t i = 0; i < nb; ++i)
            d[node[i]] = pd_v3_madd(d[node[i]], b->range ? zc[i] / mass[node[i]] : zc[i], y[c]);
    }
}

/* The constraint on the grid's field (or a body's, swapped in: pd_mpm_pin_constrain_fields) for
 * body `body`'s pins (-1: all): the grid velocity's least change that meets (1); its impulse m d
 * per pinned mass, gathered at the pinned particles, their reaction. */
static pd_status constrain_body(pd_mpm_state* s, const pd_particles* p, int body) {
    pd_status st = share_body(s, p, body);
    if (st == PD_OK)
        st = pd_mpm_pin_basis(s, p);
    if (st != PD_OK)
        return st;
    pd_grid* g = &s->grid;
    pd_vec3* d = s->pin_node_impulse; /* the change at the held and shared nodes */
    pd_mpm_pin_nodes(s);
    for (size_t n = 0; n < g->nodes; ++n)
        d[n] = s->pin_node_hold[n] > 0 ? s->pin_node_velocity[n] : pd_v3(0, 0, 0);
    pd_mpm_pin_project(s, d, 1); /* the shared nodes' target t = (I - Z Z^T) v_pin */
    for (size_t n = 0; n < g->nodes; ++n)
        if (s->pin_node_hold[n] > 0)
            d[n] = pd_v3_sub(d[n], g->velocity[n]);
    if (s->pin_shared_count > 0)
        for (size_t k = 0; k < s->pin_blocks; ++k)
            least_change_block(s, &s->pin_block[k], d);
    for (size_t n = 0; n < g->nodes; ++n) { /* the impulse m d, per mass of the pins there */
        if (!(s->pin_node_hold[n] > 0))
            continue;
        g->velocity[n] = pd_v3_add(g->velocity[n], d[n]);
        d[n] = pd_v3_scale(d[n], g->mass[n] / s->pin_node_mass[n]);
    }
    for (size_t i = 0; i < s->n; ++i) /* the reaction per mass (advect_range) */
        if (pinned(s, p, i))
            s->pin_reaction[i] = gather(g, d, i);
    return PD_OK;
}

pd_status pd_mpm_pin_constrain(pd_mpm_state* s, const pd_particles* p) {
    return constrain_body(s, p, -1);
}

/* Whether body b has a pinned particle. */
static int body_pinned(const pd_mpm_state* s, const pd_particles* p, int b) {
    for (size_t q = 0; q < s->n; ++q)
        if ((p->flags[q] & PD_P_PINNED) && p->body[q] == b)
            return 1;
    return 0;
}

pd_status pd_mpm_pin_constrain_fields(pd_mpm_state* s, const pd_particles* p) {
    pd_grid* g = &s->grid;
    pd_grid_fields* f = &s->fields;
    size_t count = (size_t)f->count;
    pd_status st = reserve_nodes(s, g->nodes);
    for (int b = 0; b < f->count && st == PD_OK; ++b) {
        if (!body_pinned(s, p, b))
            continue;
        for (size_t n = 0; n < g->nodes; ++n) /* body b's field in the grid's place */
            s->pin_field_mass[n] = f->mass[n * count + (size_t)b],
            s->pin_field_velocity[n] = f->velocity[n * count + (size_t)b];
        pd_real* mass = g->mass;
        pd_vec3* velocity = g->velocity;
        g->mass = s->pin_field_mass, g->velocity = s->pin_field_velocity;
        st = constrain_body(s, p, b);
        g->mass = mass, g->velocity = velocity;
        for (size_t n = 0; n < g->nodes && st == PD_OK; ++n)
            if (s->pin_field_mass[n] > 0)
                f->velocity[n * count + (size_t)b] = s->pin_field_velocity[n];
    }
    s->pin_only_body = -1;
    return st;
}

void pd_mpm_pin_free(pd_mpm_state* s) {
    size_t nodes = s->pin_nodes, cap = s->pin_shared_cap, key = s->pin_key_cap;
    PD_FREE_ARRAY(s->pin_node_impulse, pd_vec3, nodes);
    PD_FREE_ARRAY(s->pin_node_mass, pd_real, nodes);
    PD_FREE_ARRAY(s->pin_node_velocity, pd_vec3, nodes);
    PD_FREE_ARRAY(s->pin_node_hold, pd_real, nodes);
    PD_FREE_ARRAY(s->pin_local, int32_t, nodes);
    PD_FREE_ARRAY(s->pin_field_mass, pd_real, nodes);
    PD_FREE_ARRAY(s->pin_field_velocity, pd_vec3, nodes);
    PD_FREE_ARRAY(s->pin_shared, uint32_t, cap);
    PD_FREE_ARRAY(s->pin_perm, uint32_t, cap);
    PD_FREE_ARRAY(s->pin_order, uint32_t, cap);
    PD_FREE_ARRAY(s->pin_label, uint32_t, cap);
    PD_FREE_ARRAY(s->pin_coef, pd_real, 3 * cap);
    pd_free(s->pin_block, s->pin_block_cap * sizeof *s->pin_block);
    pd_free(s->pin_list, s->pin_list_cap * sizeof *s->pin_list);
    pd_free(s->pin_s, s->pin_s_cap * sizeof *s->pin_s);
    pd_free(s->pin_z, s->pin_z_cap * sizeof *s->pin_z);
    PD_FREE_ARRAY(s->pin_key_node, uint32_t, key);
    PD_FREE_ARRAY(s->pin_key_pos, pd_vec3, key);
    PD_FREE_ARRAY(s->pin_key_pin, int32_t, key);
    pd_free(s->pin_prev_block, s->pin_prev_block_cap * sizeof *s->pin_prev_block);
    pd_free(s->pin_prev_shared, s->pin_prev_shared_cap * sizeof *s->pin_prev_shared);
    pd_free(s->pin_prev_z, s->pin_prev_z_cap * sizeof *s->pin_prev_z);
    pd_free(s->pin_prev_pos, s->pin_prev_pos_cap * sizeof *s->pin_prev_pos);
    pd_free(s->pin_prev_pin, s->pin_prev_pin_cap * sizeof *s->pin_prev_pin);
}
