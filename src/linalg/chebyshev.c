/* Chebyshev-accelerated Jacobi sweeps (chebyshev.h). */
#include "linalg/chebyshev.h"

#include <string.h>

#include "parallel/parallel.h"

#define PD_CHEBYSHEV_GRAIN 512

typedef struct sweep_ctx {
    const pd_sym_csr* a;
    const pd_chebyshev_def* def;
    const pd_vec3* b;
    const pd_vec3* cur;  /* z_k */
    const pd_vec3* prev; /* z_{k-1} */
    pd_vec3* next;       /* z_{k+1} */
    pd_real omega;
} sweep_ctx;

static pd_vec3 unblocked(const pd_chebyshev_def* def, size_t i, pd_vec3 v) {
    if (def->line && (def->line[i].x != 0 || def->line[i].y != 0 || def->line[i].z != 0))
        v = pd_v3_scale(def->line[i], pd_v3_dot(v, def->line[i]));
    if (def->blocked) {
        pd_vec3 n = def->blocked[i];
        v = pd_v3_madd(v, -pd_v3_dot(v, n), n);
    }
    if (def->blocked2) {
        pd_vec3 m = def->blocked2[i];
        v = pd_v3_madd(v, -pd_v3_dot(v, m), m);
    }
    return v;
}

/* The point's diagonal block, diag I + k (I - n n^T), solved for acc. */
static pd_vec3 diagonal_solve(const pd_chebyshev_def* def, size_t i, pd_real diag, pd_vec3 acc) {
    pd_real k = def->tangent_k ? def->tangent_k[i] : 0;
    if (!(k > 0))
        return pd_v3_scale(acc, 1.0 / diag);
    pd_vec3 n = def->tangent_n[i];
    pd_real an = pd_v3_dot(acc, n);
    pd_vec3 at = pd_v3_madd(acc, -an, n);
    return pd_v3_madd(pd_v3_scale(at, 1.0 / (diag + k)), an / diag, n);
}

/* sum_k w_k x[col_k] over row i, in two interleaved sums: with one, every coupling's
 * multiply-add waits for the previous one, and the adder's latency, not memory, bounded the
 * sweep (25K bunny, 1 thread: 805-858 ms of sweeps per step with one sum, 537-593 with two). */
#define PD_ROW_SUM(name, W)                                                                        \
    static pd_vec3 name(const pd_sym_csr* a, const pd_vec3* x, size_t i) {                         \
        pd_real s0x = 0, s0y = 0, s0z = 0, s1x = 0, s1y = 0, s1z = 0;                              \
        uint32_t k = a->offsets[i], end = pd_sym_csr_end(a, i);                                    \
        for (; k + 1 < end; k += 2) {                                                              \
            pd_real w0 = a->W[k], w1 = a->W[k + 1];                                                \
            pd_vec3 x0 = x[a->cols[k]], x1 = x[a->cols[k + 1]];                                    \
            s0x += w0 * x0.x, s0y += w0 * x0.y, s0z += w0 * x0.z;                                  \
            s1x += w1 * x1.x, s1y += w1 * x1.y, s1z += w1 * x1.z;                                  \
        }                                                                                          \
        if (k < end) {                                                                             \
            pd_real w0 = a->W[k];                                                                  \
            pd_vec3 x0 = x[a->cols[k]];                                                            \
            s0x += w0 * x0.x, s0y += w0 * x0.y, s0z += w0 * x0.z;                                  \
        }                                                                                          \
        return pd_v3(s0x + s1x, s0y + s1y, s0z + s1z);                                             \
    }
PD_ROW_SUM(row_sum64, weight)
PD_ROW_SUM(row_sum32, weight32)

/* next = omega (J(cur) - prev) + prev, J the Jacobi update; omega = 1 is plain Jacobi. */
static void sweep_kernel(void* vctx, size_t begin, size_t end, int thread) {
    sweep_ctx* c = vctx;
    const pd_sym_csr* a = c->a;
    for (size_t i = begin; i < end; ++i) {
        if (c->def->fixed && c->def->fixed[i]) {
            c->next[i] = pd_v3(0, 0, 0);
            continue;
        }
        pd_vec3 acc = c->b[i];
        pd_real diag = a->diag[i];
        acc = pd_v3_add(acc, a->weight ? row_sum64(a, c->cur, i) : row_sum32(a, c->cur, i));
        const pd_sym_csr* e = c->def->extra;
        if (e) {
            for (uint32_t k = e->offsets[i]; k < pd_sym_csr_end(e, i); ++k)
                acc = pd_v3_madd(acc, pd_sym_csr_weight(e, k), c->cur[e->cols[k]]);
            diag += c->def->extra_diag[i];
        }
        pd_vec3 jac = c->def->active && !c->def->active[i]
                          ? pd_v3_scale(acc, 1.0 / diag)
                          : unblocked(c->def, i, diagonal_solve(c->def, i, diag, acc));
        c->next[i] = pd_v3_madd(c->prev[i], c->omega, pd_v3_sub(jac, c->prev[i]));
    }
}

void pd_chebyshev_jacobi(const pd_sym_csr* a, const pd_chebyshev_def* def, const pd_vec3* b,
                         pd_vec3* z) {
    pd_vec3 *cur = def->scratch_a, *prev = def->scratch_b, *next = z;
    memset(cur, 0, a->n * sizeof(pd_vec3));
    memset(prev, 0, a->n * sizeof(pd_vec3));
    pd_real omega = 1, rho2 = def->rho * def->rho;
    for (int k = 0; k < def->sweeps; ++k) {
        omega = k == 0 ? 1 : (k == 1 ? 2 / (2 - rho2) : 4 / (4 - rho2 * omega));
        sweep_ctx c = {a, def, b, cur, prev, next, omega};
        pd_parallel_for(a->n, PD_CHEBYSHEV_GRAIN, sweep_kernel, &c);
        pd_vec3* t = prev;
        prev = cur;
        cur = next;
        next = t;
    }
    if (cur != z)
        memcpy(z, cur, a->n * sizeof(pd_vec3));
}

pd_real pd_jacobi_bound(const pd_sym_csr* a, const uint8_t* fixed) {
    pd_real rho = 0;
    for (size_t i = 0; i < a->n; ++i) {
        if (fixed && fixed[i])
            continue;
        pd_real sum = 0;
        for (uint32_t k = a->offsets[i]; k < pd_sym_csr_end(a, i); ++k)
            sum += pd_sym_csr_weight(a, k);
        rho = fmax(rho, sum / a->diag[i]);
    }
    return rho;
}
