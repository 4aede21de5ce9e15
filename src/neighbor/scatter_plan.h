/* Parallel loops whose particles add into their neighbours' entries (a force gathered from
 * every bond's two ends) without atomics and in an order that no schedule changes.
 *
 * The particles are binned in cubic cells wider than twice the longest bond, and the cells
 * coloured by the parity of their three coordinates (8 colours). Two particles in different
 * cells of one colour are more than a cell width apart, so no particle is bonded to both and
 * neither is bonded to the other: the cells of a colour may run at once. The colours run one
 * after another, a cell's particles in index order, so every entry receives its terms in the
 * same order on any number of threads. */
#ifndef PD_SCATTER_PLAN_H
#define PD_SCATTER_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "neighbor/family.h"

#define PD_SCATTER_COLORS 8

typedef struct pd_scatter_plan {
    size_t count;    /* particles planned */
    size_t capacity; /* particles order holds */
    uint32_t* order; /* the particles by colour, cell (Z order) and index */
    uint32_t* task;  /* task k runs order[task[k] .. task[k+1]): whole cells of one colour */
    size_t tasks;    /* tasks in all */
    size_t color_task[PD_SCATTER_COLORS + 1]; /* colour c's tasks: color_task[c] .. [c+1] */
    pd_real cell;        /* the cells' width (m); 0: one serial task (no finite bond length) */
    uint64_t generation; /* the family's generation it was planned for */
    /* the tasks task holds (task_capacity + 1 entries): as many as a plan may make, not one a
     * particle (pd_scatter_plan_reserve) */
    size_t task_capacity;
} pd_scatter_plan;

/* Plans f's particles at positions pos (any positions: the cells follow its bond lengths
 * there), in tasks of about `grain` particles. With base_cell > 0 the cells are base_cell
 * times the smallest power of two that is wide enough, measured from pd_finite_lower_corner:
 * particles sorted by pd_morton_order(pos, n, base_cell) then find each cell's particles at
 * consecutive indices, and a task reads its particles' bonds in one sweep of memory (measured
 * on the 25K block of bench/'s peers case, 1 thread: 16.7-17.3 ns a bond so, 22.8-24.3 ns with
 * cells cut across the Z curve).
 * Reuses the plan's arrays. */
pd_status pd_scatter_plan_build(pd_scatter_plan* plan, const pd_family* f, const pd_vec3* pos,
                                pd_real base_cell, size_t grain);
/* Room for a plan of n particles in `tasks` tasks (the arrays reused when they hold it): a plan
 * read back from a checkpoint, whose order the bond forces must be summed in again. */
pd_status pd_scatter_plan_reserve(pd_scatter_plan* plan, size_t n, size_t tasks);
/* The plan was made for f's bonds as they are. */
int pd_scatter_plan_current(const pd_scatter_plan* plan, const pd_family* f);
void pd_scatter_plan_free(pd_scatter_plan* plan);

/* fn(ctx, particles, count, task, thread) for every task: the colours in turn, the tasks of a
 * colour in parallel (pd_parallel_for). `task` numbers the task in [0, plan->tasks), for
 * per-task partial sums that add up in a fixed order. */
typedef void pd_scatter_fn(void* ctx, const uint32_t* particles, size_t count, size_t task,
                           int thread);
void pd_scatter_for(const pd_scatter_plan* plan, pd_scatter_fn* fn, void* ctx);

#endif
