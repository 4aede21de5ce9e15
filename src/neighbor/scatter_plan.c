/* Colouring of a family's particles for parallel scatter loops (scatter_plan.h). */
#include "neighbor/scatter_plan.h"

#include <math.h>

#include "core/alloc.h"
#include "neighbor/morton.h"
#include "parallel/parallel.h"

enum { PLAN_GRAIN = 4096 };
/* The cells are this much wider than twice the longest bond: a margin for the rounding of the
 * binning, far below any spacing. */
#define PLAN_MARGIN 1e-6

typedef struct plan_job {
    const pd_family* f;
    const pd_vec3* pos;
    pd_vec3 origin;
    pd_real cell;
    pd_real* longest; /* per chunk: the longest bond squared, infinite when one is not finite */
    uint64_t* keys;
} plan_job;

static void longest_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    plan_job* job = ctx;
    const pd_family* f = job->f;
    pd_real m = 0;
    int finite = 1;
    for (size_t i = begin; i < end; ++i)
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            pd_real d2 = pd_v3_len2(pd_v3_sub(job->pos[f->j[b]], job->pos[i]));
            finite &= isfinite(d2) != 0;
            m = d2 > m ? d2 : m;
        }
    job->longest[begin / PLAN_GRAIN] = finite ? m : INFINITY;
}

/* The key sorts by colour (the parities of the cell's coordinates: the Morton code's three
 * lowest bits), then by cell along the Z curve. */
static void key_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    plan_job* job = ctx;
    for (size_t i = begin; i < end; ++i) {
        uint64_t code = pd_morton_code(job->pos[i], job->origin, job->cell);
        job->keys[i] = code >> 3 | (code & 7) << 60;
    }
}

static pd_status longest_bond(plan_job* job, pd_real* out) {
    size_t n = job->f->count, chunks = (n + PLAN_GRAIN - 1) / PLAN_GRAIN;
    job->longest = PD_NEW_ARRAY(pd_real, chunks + 1);
    if (!job->longest)
        return PD_ERR_OUT_OF_MEMORY;
    pd_parallel_for(n, PLAN_GRAIN, longest_range, job);
    pd_real m = 0;
    for (size_t c = 0; c < chunks; ++c)
        m = fmax(m, job->longest[c]);
    PD_FREE_ARRAY(job->longest, pd_real, chunks + 1);
    *out = sqrt(m);
    return PD_OK;
}

/* Every particle in one task, in index order: bonds of no finite length give no cells. */
static void serial_plan(pd_scatter_plan* p) {
    for (size_t i = 0; i < p->count; ++i)
        p->order[i] = (uint32_t)i;
    p->task[0] = 0, p->task[1] = (uint32_t)p->count;
    p->tasks = 1;
    p->color_task[0] = 0;
    for (int c = 1; c <= PD_SCATTER_COLORS; ++c)
        p->color_task[c] = 1;
    p->cell = 0;
}

/* Cuts the sorted particles into tasks of whole cells, at least `grain` particles each unless
 * a colour ends first. */
static void split_tasks(pd_scatter_plan* p, const uint64_t* keys, size_t grain) {
    size_t n = p->count, tasks = 0, start = 0;
    int color = 0;
    p->color_task[0] = 0;
    for (size_t k = 1; k <= n; ++k) {
        if (k < n && keys[k] == keys[k - 1])
            continue; /* inside a cell */
        int next = k < n ? (int)(keys[k] >> 60) : PD_SCATTER_COLORS;
        if (k - start >= grain || next != color) {
            p->task[tasks++] = (uint32_t)start;
            start = k;
        }
        for (; color < next; ++color)
            p->color_task[color + 1] = tasks;
    }
    p->task[tasks] = (uint32_t)n;
    p->tasks = tasks;
}

/* The task array holds the tasks a plan may make, not a task per particle (4 bytes a particle
 * less): split_tasks closes a task at `grain` particles or at a colour's end, so a plan of n
 * particles makes at most n / grain + PD_SCATTER_COLORS of them. */
pd_status pd_scatter_plan_reserve(pd_scatter_plan* p, size_t n, size_t tasks) {
    if (n > p->capacity || !p->order) {
        PD_FREE_ARRAY(p->order, uint32_t, p->capacity + 1);
        p->order = PD_NEW_ARRAY(uint32_t, n + 1);
        p->capacity = p->order ? n : 0;
    }
    if (tasks > p->task_capacity || !p->task) {
        PD_FREE_ARRAY(p->task, uint32_t, p->task_capacity + 1);
        p->task = PD_NEW_ARRAY(uint32_t, tasks + 1);
        p->task_capacity = p->task ? tasks : 0;
    }
    if (!p->order || !p->task) {
        pd_scatter_plan_free(p);
        return PD_ERR_OUT_OF_MEMORY;
    }
    return PD_OK;
}

pd_status pd_scatter_plan_build(pd_scatter_plan* plan, const pd_family* f, const pd_vec3* pos,
                                pd_real base_cell, size_t grain) {
    size_t n = f->count;
    if (n >= UINT32_MAX)
        return PD_ERR_TOO_LARGE;
    size_t most_tasks = n / (grain ? grain : 1) + PD_SCATTER_COLORS; /* split_tasks */
    pd_status st = pd_scatter_plan_reserve(plan, n, most_tasks);
    if (st != PD_OK)
        return st;
    plan->count = n;
    plan->generation = 0; /* until planned: never a family's (pd_family_touch starts at 1) */
    plan_job job = {.f = f, .pos = pos};
    pd_real longest = 0;
    st = n ? longest_bond(&job, &longest) : PD_OK;
    if (st != PD_OK)
        return st;
    if (n == 0 || !(longest > 0) || !isfinite(longest)) {
        serial_plan(plan);
        plan->generation = f->generation;
        return PD_OK;
    }
    /* Two particles of one colour in different cells differ by two cells or more along some
     * axis, so they are more than a cell, twice the longest bond, apart. */
    plan->cell = 2 * longest * (1 + PLAN_MARGIN);
    if (base_cell > 0 && isfinite(base_cell)) {
        pd_real cell = base_cell; /* base_cell 2^k: pd_morton_code's cells at level k */
        while (cell < plan->cell)
            cell *= 2;
        plan->cell = cell;
    }
    job.origin = pd_finite_lower_corner(pos, n);
    job.cell = plan->cell;
    job.keys = PD_NEW_ARRAY(uint64_t, n);
    if (!job.keys)
        return PD_ERR_OUT_OF_MEMORY;
    pd_parallel_for(n, PLAN_GRAIN, key_range, &job);
    st = pd_sort_by_key(job.keys, n, plan->order);
    if (st == PD_OK) {
        split_tasks(plan, job.keys, grain ? grain : 1);
        plan->generation = f->generation;
    }
    PD_FREE_ARRAY(job.keys, uint64_t, n);
    return st;
}

int pd_scatter_plan_current(const pd_scatter_plan* plan, const pd_family* f) {
    return plan->order && plan->count == f->count && plan->generation == f->generation;
}

void pd_scatter_plan_free(pd_scatter_plan* plan) {
    PD_FREE_ARRAY(plan->order, uint32_t, plan->capacity + 1);
    PD_FREE_ARRAY(plan->task, uint32_t, plan->task_capacity + 1);
    *plan = (pd_scatter_plan){0};
}

typedef struct scatter_job {
    const pd_scatter_plan* plan;
    size_t first; /* the colour's first task */
    pd_scatter_fn* fn;
    void* ctx;
} scatter_job;

static void run_tasks(void* ctx, size_t begin, size_t end, int thread) {
    const scatter_job* job = ctx;
    const pd_scatter_plan* p = job->plan;
    for (size_t t = job->first + begin; t < job->first + end; ++t)
        job->fn(job->ctx, p->order + p->task[t], p->task[t + 1] - p->task[t], t, thread);
}

void pd_scatter_for(const pd_scatter_plan* plan, pd_scatter_fn* fn, void* ctx) {
    for (int c = 0; c < PD_SCATTER_COLORS; ++c) {
        scatter_job job = {plan, plan->color_task[c], fn, ctx};
        pd_parallel_for(plan->color_task[c + 1] - plan->color_task[c], 1, run_tasks, &job);
    }
}
