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
 *    met by v_pin,N; its solutions are v_pin,N + Z y, Z an orthonormal basis of W_N's null space,
 *    found each step from S = W_N^T W_N (one scalar matrix for the three components; per pin
 *    where no node is shared by two pins) by Cholesky with symmetric pivoting to its rank. The
 *    target t = (I - Z Z^T) v_pin,N is what (1) fixes, Z Z^T what it leaves free.
 * A block of pinned particles three layers thick or more fixes its shared nodes (W_N has full
 * column rank: Z is empty, the nodes held 1.5 cells past the particles because (1) says so); a
 * thinner pin leaves some free (a pin of one layer, most).
 * The explicit step (one field): the least change of the nodes' kinetic energy that meets (1),
 * v_N = t + Z y with (Z^T M Z) y = Z^T M (v* - t), v* the updated grid velocity (the multiplier
 * form v* + M^-1 W^T lambda solved in the null space: exact, without iterations). The implicit
 * steps: Sec. 7.2's constraints projected inside the grid solves, u_N <- Z Z^T u_N
 * (pd_mpm_pin_project). The impulse the constraint takes at the held and shared nodes (its
 * range part) is the pins' reaction. A field per body (the explicit step with several bodies)
 * still holds every node a pinned particle reaches at v_pin. All loops here are sequential, in
 * the particles' and the nodes' order: the same bytes on any thread count. */
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
    s->pin_nodes = cap;
    s->pin_node_mass = PD_NEW_ARRAY(pd_real, cap);
    s->pin_node_velocity = PD_NEW_ARRAY(pd_vec3, cap);
    s->pin_node_impulse = PD_NEW_ARRAY(pd_vec3, cap);
    s->pin_node_hold = PD_NEW_ARRAY(pd_real, cap);
    s->pin_local = PD_NEW_ARRAY(int32_t, cap);
    return s->pin_node_mass && s->pin_node_velocity && s->pin_node_impulse && s->pin_node_hold &&
                   s->pin_local
               ? PD_OK
               : PD_ERR_OUT_OF_MEMORY;
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
        if (!(p->flags[q] & PD_P_PINNED))
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

pd_status pd_mpm_pin_share(pd_mpm_state* s, const pd_particles* p) {
    pd_status st = reserve_nodes(s, s->grid.nodes);
    if (st != PD_OK)
        return st;
    fit_pins(s, p);
    scatter_pins(s, p);
    return PD_OK;
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
/* Shared nodes beyond this are all held instead: S takes n^2 numbers, its factorisation n^3 / 3
 * multiply-adds and the dense null space n times its columns at every projection (Fig. 7's two
 * clamps share 384; the sheared block of physics.mpm_implicit, one layer pinned over each
 * 0.2 x 0.04 m face, about 970, most of them free: its test took 600 s of CPU for a few). */
#define PIN_MAX_SHARED 400

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
    PD_FREE_ARRAY(s->pin_coef, pd_real, 3 * old);
    PD_FREE_ARRAY(s->pin_s, pd_real, old * old);
    PD_FREE_ARRAY(s->pin_z, pd_real, old * old);
    s->pin_shared_cap = cap;
    s->pin_shared = PD_NEW_ARRAY(uint32_t, cap);
    s->pin_perm = PD_NEW_ARRAY(uint32_t, cap);
    s->pin_coef = PD_NEW_ARRAY(pd_real, 3 * cap);
    s->pin_s = PD_NEW_ARRAY(pd_real, cap * cap);
    s->pin_z = PD_NEW_ARRAY(pd_real, cap * cap);
    return s->pin_shared && s->pin_perm && s->pin_coef && s->pin_s && s->pin_z
               ? PD_OK
               : PD_ERR_OUT_OF_MEMORY;
}

/* S = W^T W on the shared nodes (one scalar matrix for the three components), S_ij = sum_p
 * w_ip w_jp over the pinned particles, row-major; sequential, in the particles' order. */
static void assemble_s(pd_mpm_state* s, const pd_particles* p) {
    const pd_grid* g = &s->grid;
    size_t n = s->pin_shared_count;
    pd_real* a = s->pin_s;
    memset(a, 0, n * n * sizeof *a);
    for (size_t q = 0; q < s->n; ++q) {
        if (!(p->flags[q] & PD_P_PINNED))
            continue;
        stencil st = stencil_of(g, q);
        int32_t at[27];
        pd_real w[27];
        int k = 0;
        for (int di = 0; di < 3; ++di)
            for (int dj = 0; dj < 3; ++dj)
                for (int dk = 0; dk < 3; ++dk) {
                    int32_t l = s->pin_local[g->base[q] + di * st.si + dj * st.sj + (size_t)dk];
                    pd_real wt = st.w[0][di] * st.w[1][dj] * st.w[2][dk];
                    if (l >= 0 && wt > 0)
                        at[k] = l, w[k++] = wt;
                }
        for (int i = 0; i < k; ++i)
            for (int j = 0; j < k; ++j)
                a[(size_t)at[i] * n + (size_t)at[j]] += w[i] * w[j];
    }
}

static void swap_rows_columns(pd_real* a, size_t stride, size_t n, size_t i, size_t j,
                              uint32_t* perm) {
    for (size_t c = 0; c < n; ++c) {
        pd_real t = a[i * stride + c];
        a[i * stride + c] = a[j * stride + c], a[j * stride + c] = t;
    }
    for (size_t r = 0; r < n; ++r) {
        pd_real t = a[r * stride + i];
        a[r * stride + i] = a[r * stride + j], a[r * stride + j] = t;
    }
    uint32_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
}

/* Cholesky with symmetric pivoting of the n x n symmetric positive semi-definite block a (rows
 * `stride` apart, overwritten: L below the diagonal in the pivots' order perm): P^T S P = L L^T
 * to the rank returned, the first pivot below PIN_RANK_TOLERANCE times the largest diagonal
 * ending it. */
static size_t pivoted_cholesky(pd_real* a, size_t stride, size_t n, uint32_t* perm) {
    pd_real largest = 0;
    for (size_t i = 0; i < n; ++i)
        perm[i] = (uint32_t)i, largest = fmax(largest, a[i * stride + i]);
    size_t k = 0;
    for (; k < n; ++k) {
        size_t piv = k;
        for (size_t j = k + 1; j < n; ++j)
            if (a[j * stride + j] > a[piv * stride + piv])
                piv = j;
        if (!(a[piv * stride + piv] > PIN_RANK_TOLERANCE * largest))
            break;
        if (piv != k)
            swap_rows_columns(a, stride, n, k, piv, perm);
        pd_real d = sqrt(a[k * stride + k]);
        a[k * stride + k] = d;
        for (size_t i = k + 1; i < n; ++i)
            a[i * stride + k] /= d;
        for (size_t i = k + 1; i < n; ++i) /* the trailing Schur complement, kept symmetric */
            for (size_t j = k + 1; j <= i; ++j)
                a[i * stride + j] = a[j * stride + i] =
                    a[i * stride + j] - a[i * stride + k] * a[j * stride + k];
    }
    return k;
}

/* W's null space on the block of shared nodes [o, o + nb) (S's diagonal block there factorised:
 * P^T S P = [L11; L21] [L11; L21]^T of rank r): the columns P [-L11^-T L21^T; I] (L^T x = 0),
 * zero outside the block, after the columns found so far; all orthonormalised by Gram-Schmidt
 * twice, column c at z + c n. */
static void null_basis(pd_mpm_state* s, size_t o, size_t nb, size_t r) {
    size_t n = s->pin_shared_count;
    const pd_real* a = s->pin_s + o * n + o;
    const uint32_t* perm = s->pin_perm + o;
    pd_real* x = s->pin_coef; /* scratch: 3 n, nb needed */
    for (size_t c = 0; c < nb - r; ++c) {
        pd_real* z = s->pin_z + s->pin_null_cols * n;
        memset(x, 0, nb * sizeof *x);
        x[r + c] = 1;
        for (size_t i = r; i-- > 0;) { /* L11^T x_top = -L21^T e_c */
            pd_real sum = -a[(r + c) * n + i];
            for (size_t j = i + 1; j < r; ++j)
                sum -= a[j * n + i] * x[j];
            x[i] = sum / a[i * n + i];
        }
        memset(z, 0, n * sizeof *z);
        for (size_t i = 0; i < nb; ++i)
            z[o + perm[i]] = x[i];
        for (int pass = 0; pass < 2; ++pass) {
            for (size_t b = 0; b < s->pin_null_cols; ++b) {
                const pd_real* y = s->pin_z + b * n;
                pd_real dot = 0;
                for (size_t i = 0; i < n; ++i)
                    dot += y[i] * z[i];
                for (size_t i = 0; i < n; ++i)
                    z[i] -= dot * y[i];
            }
            pd_real norm = 0;
            for (size_t i = 0; i < n; ++i)
                norm += z[i] * z[i];
            for (size_t i = 0; i < n; ++i)
                z[i] /= sqrt(norm);
        }
        s->pin_null_cols++;
    }
}

/* Each shared node's pin (in pin_perm, before the factorisation uses it); 0 when two pins
 * reach one node (then the shared nodes stay one block). */
static int group_by_pin(pd_mpm_state* s, const pd_particles* p) {
    const pd_grid* g = &s->grid;
    size_t n = s->pin_shared_count;
    for (size_t i = 0; i < n; ++i)
        s->pin_perm[i] = UINT32_MAX;
    for (size_t q = 0; q < s->n; ++q) {
        if (!(p->flags[q] & PD_P_PINNED))
            continue;
        stencil st = stencil_of(g, q);
        uint32_t pin = (uint32_t)p->pin[q];
        for (int di = 0; di < 3; ++di)
            for (int dj = 0; dj < 3; ++dj)
                for (int dk = 0; dk < 3; ++dk) {
                    int32_t l = s->pin_local[g->base[q] + di * st.si + dj * st.sj + (size_t)dk];
                    if (l < 0 || !(st.w[0][di] * st.w[1][dj] * st.w[2][dk] > 0))
                        continue;
                    if (s->pin_perm[l] != UINT32_MAX && s->pin_perm[l] != pin)
                        return 0;
                    s->pin_perm[l] = pin;
                }
    }
    return 1;
}

/* The shared nodes pin by pin (group_by_pin's pin in pin_perm), each pin's in the nodes' order:
 * S is then block diagonal, and its factorisation n^3 / 3 per pin. pin_s (not yet assembled)
 * holds the new order meanwhile. */
static void order_by_pin(pd_mpm_state* s) {
    size_t count = s->pin_shared_count, k = 0;
    for (int pin = 0; pin < s->pin_count; ++pin)
        for (size_t i = 0; i < count; ++i)
            if (s->pin_perm[i] == (uint32_t)pin)
                s->pin_s[k++] = (pd_real)s->pin_shared[i];
    for (size_t i = 0; i < count; ++i) {
        s->pin_shared[i] = (uint32_t)s->pin_s[i];
        s->pin_local[s->pin_shared[i]] = (int32_t)i;
    }
}

pd_status pd_mpm_pin_basis(pd_mpm_state* s, const pd_particles* p) {
    const pd_grid* g = &s->grid;
    size_t count = 0;
    for (size_t n = 0; n < g->nodes; ++n) {
        s->pin_local[n] = -1;
        count += (size_t)pd_mpm_pin_shared_node(s, n);
    }
    s->pin_shared_count = s->pin_null_cols = 0;
    if (count == 0 || count > PIN_MAX_SHARED) /* none, or all held */
        return PD_OK;
    pd_status st = reserve_shared(s, count);
    if (st != PD_OK)
        return st;
    for (size_t n = 0; n < g->nodes; ++n)
        if (pd_mpm_pin_shared_node(s, n)) {
            s->pin_local[n] = (int32_t)s->pin_shared_count;
            s->pin_shared[s->pin_shared_count++] = (uint32_t)n;
        }
    if (s->pin_count > 1 && group_by_pin(s, p))
        order_by_pin(s);
    assemble_s(s, p);
    size_t n = s->pin_shared_count;
    for (size_t o = 0; o < n;) { /* the diagonal blocks of S: no entry couples them */
        size_t end = o + 1;
        for (size_t i = o; i < end && end < n; ++i)
            for (size_t j = end; j < n; ++j)
                if (s->pin_s[i * n + j] != 0)
                    end = j + 1;
        size_t r = pivoted_cholesky(s->pin_s + o * n + o, n, end - o, s->pin_perm + o);
        null_basis(s, o, end - o, r);
        o = end;
    }
    return PD_OK;
}

void pd_mpm_pin_project(const pd_mpm_state* s, pd_vec3* u, int range) {
    size_t n = s->pin_shared_count, cols = s->pin_null_cols;
    if (!s->has_pins || n == 0)
        return;
    pd_vec3* coef = (pd_vec3*)s->pin_coef; /* 3 n numbers: room for cols <= n vec3 */
    for (size_t c = 0; c < cols; ++c) {    /* Z^T u on the shared nodes */
        const pd_real* z = s->pin_z + c * n;
        pd_vec3 sum = pd_v3(0, 0, 0);
        for (size_t i = 0; i < n; ++i)
            sum = pd_v3_madd(sum, z[i], u[s->pin_shared[i]]);
        coef[c] = sum;
    }
    if (!range) /* Z Z^T u */
        for (size_t i = 0; i < n; ++i)
            u[s->pin_shared[i]] = pd_v3(0, 0, 0);
    for (size_t c = 0; c < cols; ++c) {
        const pd_real* z = s->pin_z + c * n;
        for (size_t i = 0; i < n; ++i)
            u[s->pin_shared[i]] = pd_v3_madd(u[s->pin_shared[i]], range ? -z[i] : z[i], coef[c]);
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

/* d += Z y on the shared nodes with y = -(Z^T M Z)^-1 Z^T M d: the change d of the least
 * kinetic energy sum_i m_i |d_i|^2 / 2 among those (1) allows. */
static void least_change(pd_mpm_state* s, pd_vec3* d) {
    const pd_real* mass = s->grid.mass;
    size_t ns = s->pin_shared_count, cols = s->pin_null_cols;
    pd_vec3* y = (pd_vec3*)s->pin_coef;
    pd_real* b = s->pin_s; /* Z^T M Z (the factorisation is spent) */
    for (size_t c = 0; c < cols; ++c) {
        const pd_real* zc = s->pin_z + c * ns;
        y[c] = pd_v3(0, 0, 0);
        for (size_t i = 0; i < ns; ++i)
            y[c] = pd_v3_madd(y[c], -zc[i] * mass[s->pin_shared[i]], d[s->pin_shared[i]]);
        for (size_t e = 0; e <= c; ++e) {
            const pd_real* ze = s->pin_z + e * ns;
            pd_real sum = 0;
            for (size_t i = 0; i < ns; ++i)
                sum += zc[i] * mass[s->pin_shared[i]] * ze[i];
            b[c * cols + e] = b[e * cols + c] = sum;
        }
    }
    if (cols > 0)
        solve_spd(b, cols, y);
    for (size_t c = 0; c < cols; ++c) {
        const pd_real* zc = s->pin_z + c * ns;
        for (size_t i = 0; i < ns; ++i)
            d[s->pin_shared[i]] = pd_v3_madd(d[s->pin_shared[i]], zc[i], y[c]);
    }
}

pd_status pd_mpm_pin_constrain(pd_mpm_state* s, const pd_particles* p) {
    pd_status st = pd_mpm_pin_share(s, p);
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
    least_change(s, d);
    for (size_t n = 0; n < g->nodes; ++n) { /* the impulse m d, per mass of the pins there */
        if (!(s->pin_node_hold[n] > 0))
            continue;
        g->velocity[n] = pd_v3_add(g->velocity[n], d[n]);
        d[n] = pd_v3_scale(d[n], g->mass[n] / s->pin_node_mass[n]);
    }
    for (size_t i = 0; i < s->n; ++i) /* the reaction per mass (advect_range) */
        if (p->flags[i] & PD_P_PINNED)
            s->pin_reaction[i] = gather(g, d, i);
    return PD_OK;
}
