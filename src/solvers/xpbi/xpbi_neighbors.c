/* xpbi's step start (Yu et al. 2024): the neighbours within the Wendland kernel's support
 * k = 2 r of x^n (Sec. 4.2, the core's hash grid), the volumes V^n = V^0 det F^n, the kernel
 * gradient correction L_p (Eq. 10, an SVD pseudo-inverse) with the corrected gradients each
 * neighbour's velocity enters Eq. 11 with, and the colouring of the Gauss-Seidel sweeps
 * (Sec. 4.3). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/timer.h"
#include "math/svd3.h"
#include "neighbor/morton.h"
#include "parallel/parallel.h"
#include "solvers/xpbi/xpbi_data.h"
#include "sph/kernels.h"

/* The colour cells are this much wider than 2 k: a margin for the rounding of the binning. */
#define XPBI_CELL_MARGIN 1e-6
/* Particles per Gauss-Seidel task at least (whole cells): the tasks of a colour run at once. */
#define XPBI_TASK_GRAIN 64

pd_mat3 pd_xpbi_correction(pd_mat3 a, pd_real cutoff) {
    pd_mat3 u, v;
    pd_vec3 s;
    pd_svd3(a, &u, &s, &v);
    pd_real top = fabs(s.x), cut = cutoff * top; /* s sorted by decreasing magnitude */
    pd_real sv[3] = {s.x, s.y, s.z}, inv[3];
    for (int k = 0; k < 3; ++k)
        inv[k] = top > 0 && fabs(sv[k]) > cut ? 1 / sv[k] : 0;
    /* A^+ = V Sigma^+ U^T (Sec. 3.2, after Eq. 10) */
    return pd_m3_mul(pd_m3_mul(v, pd_m3_diag(inv[0], inv[1], inv[2])), pd_m3_transpose(u));
}

typedef struct kernel_job {
    pd_xpbi_state* s;
    const pd_vec3* x; /* x^n */
    const int32_t* body;
} kernel_job;

/* V_p^n = V_p^0 det F_p^n (Sec. 3.2, after Eq. 10). */
static void volume_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    pd_xpbi_state* s = ((kernel_job*)ctx)->s;
    for (size_t i = begin; i < end; ++i)
        s->volume[i] = s->volume0[i] * pd_m3_det(s->f[i]);
}

/* Per particle p: A = sum_b V_b grad W_b(x_p) (x_b - x_p)^T over p's body (Eq. 10), L_p its
 * pseudo-inverse, and per neighbour g = V_b L_p grad W_b(x_p) and V_b W_b(x_p); a neighbour of
 * another body gets zeros (the continuum of each body sees its own particles only). */
static void kernel_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const kernel_job* job = ctx;
    pd_xpbi_state* s = job->s;
    pd_real H = 2 * s->r;
    for (size_t p = begin; p < end; ++p) {
        pd_mat3 a = pd_m3_zero();
        pd_real gap = INFINITY;
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
            uint32_t b = s->near.indices[e];
            pd_vec3* g = &s->nb_g[e];
            s->nb_w[e] = 0, *g = pd_v3(0, 0, 0);
            if (job->body[b] != job->body[p])
                continue;
            pd_vec3 d = pd_v3_sub(job->x[p], job->x[b]);
            pd_real r = pd_v3_len(d);
            if (b > p && r < gap)
                gap = r;
            pd_real dw = pd_sph_wendland_c2_derivative(r, H);
            *g = r > 0 ? pd_v3_scale(d, dw / r) : pd_v3(0, 0, 0); /* grad W_b(x_p) */
            s->nb_w[e] = s->volume[b] * pd_sph_wendland_c2(r, H);
            pd_xpbi_add_outer(&a, s->volume[b], *g, pd_v3_scale(d, -1));
        }
        s->pair_gap[p] = gap;
        pd_mat3 l = pd_xpbi_correction(a, s->prm.svd_cutoff);
        for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e)
            s->nb_g[e] = pd_v3_scale(pd_m3_mulv(l, s->nb_g[e]), s->volume[s->near.indices[e]]);
    }
}

typedef struct color_job {
    pd_xpbi_state* s;
    const pd_vec3* x;
    pd_vec3 origin;
    pd_real cell;
} color_job;

/* The key sorts by colour (the parities of the cell's coordinates: the Morton code's three
 * lowest bits), then by cell along the Z curve (as src/neighbor/scatter_plan.c). */
static void key_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const color_job* job = ctx;
    for (size_t i = begin; i < end; ++i) {
        uint64_t code = pd_morton_code(job->x[i], job->origin, job->cell);
        job->s->keys[i] = code >> 3 | (code & 7) << 60;
    }
}

/* Cuts the sorted particles into tasks of whole cells, at least XPBI_TASK_GRAIN particles each
 * unless a colour ends first. */
static void split_tasks(pd_xpbi_state* s) {
    size_t n = s->n, tasks = 0, start = 0;
    int color = 0;
    s->color_task[0] = 0;
    for (size_t k = 1; k <= n; ++k) {
        if (k < n && s->keys[k] == s->keys[k - 1])
            continue; /* inside a cell */
        int next = k < n ? (int)(s->keys[k] >> 60) : PD_XPBI_COLORS;
        if (k - start >= XPBI_TASK_GRAIN || next != color) {
            s->task[tasks++] = (uint32_t)start;
            start = k;
        }
        for (; color < next; ++color)
            s->color_task[color + 1] = tasks;
    }
    s->task[tasks] = (uint32_t)n;
    s->tasks = tasks;
}

/* Sec. 4.3 with cells of 2 k (the paper's are 2 r = k): a constraint of p writes the
 * velocities of p and its neighbours within k, so two particles of one colour in different
 * cells, more than a cell apart, touch disjoint particles only when the cell is wider than
 * 2 k. Then a colour's tasks run at once and every velocity gets its changes in the same order
 * on any number of threads. */
static void color_cells(pd_xpbi_state* s, const pd_vec3* x) {
    color_job job = {s, x, pd_finite_lower_corner(x, s->n), 4 * s->r * (1 + XPBI_CELL_MARGIN)};
    pd_parallel_for(s->n, 1024, key_range, &job);
    pd_sort_by_key_with(s->keys, s->n, s->order, s->keys + s->n, s->task);
    split_tasks(s);
}

static pd_status reserve_neighbors(pd_xpbi_state* s, size_t entries) {
    void* array = s->nb_g;
    int ok = pd_reserve_scratch(&array, &s->nb_g_capacity, entries, sizeof(pd_vec3));
    s->nb_g = array;
    array = s->nb_w;
    ok = ok && pd_reserve_scratch(&array, &s->nb_w_capacity, entries, sizeof(pd_real));
    s->nb_w = array;
    return ok ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

/* Room for the contact pairs' sums, one per entry (contact_velocity.h), when bodies touch. */
static pd_status reserve_pairs(pd_xpbi_state* s, size_t entries) {
    if (!s->bodies_touch)
        return PD_OK;
    void* array = s->pair_sum;
    int ok = pd_reserve_scratch(&array, &s->pair_capacity, entries, sizeof(pd_contact_pair_sum));
    s->pair_sum = array;
    return ok ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

pd_status pd_xpbi_neighborhoods(pd_xpbi_state* s, const pd_particles* p) {
    const pd_vec3* x = s->step ? s->step->step_start : p->pos;
    if (s->n == 0) {
        memset(s->color_task, 0, sizeof s->color_task);
        s->tasks = 0;
        s->search_seconds = 0;
        return PD_OK;
    }
    kernel_job job = {s, x, p->body};
    double t0 = pd_now();
    pd_parallel_for(s->n, PD_XPBI_GRAIN, volume_range, &job);
    pd_status st = pd_neighbors_build(&s->grid, x, s->n, 2 * s->r, &s->near); /* Sec. 4.2 */
    s->search_seconds = pd_now() - t0;
    if (st != PD_OK)
        return st;
    if ((st = reserve_neighbors(s, s->near.offsets[s->n])) != PD_OK ||
        (st = reserve_pairs(s, s->near.offsets[s->n])) != PD_OK)
        return st;
    pd_parallel_for(s->n, PD_XPBI_GRAIN, kernel_range, &job);
    color_cells(s, x);
    return PD_OK;
}
