/* The optimiser the implicit methods share: a preconditioned descent on a merit E(y) over n
 * points, with L-BFGS pairs on top of the preconditioner and a backtracking line search with
 * the Armijo condition; contacts enter as a projection of every trial point and a filter S
 * that removes blocked directions from the residual and every direction.
 *
 * He 2017 Sec. 4.2 reads its local/global iteration as this descent with the global matrix as
 * preconditioner (Eq. 12-13); L-BFGS with that matrix as initial Hessian is Liu, Bouaziz,
 * Kavan 2017 (Quasi-Newton methods for real-time simulation of hyperelastic materials,
 * Alg. 1); the two-loop recursion is Nocedal & Wright, Numerical Optimization, Alg. 7.4; the
 * Armijo condition is their Eq. 3.6a. Xu 2018 (hyperelastic_pd) solves its step with the same
 * pieces. The method supplies the merit, its residual and the preconditioner; the optimiser
 * owns the iterate and its work arrays (no allocation after pd_descent_init). */
#ifndef PD_DESCENT_H
#define PD_DESCENT_H

#include <stddef.h>

#include "peridot/math.h"
#include "peridot/status.h"

#define PD_DESCENT_MAX_HISTORY 16

/* What one implicit step minimises, as the optimiser sees it. */
typedef struct pd_descent_problem {
    void* ctx;
    /* E at y (J); writes the residual r = S dE/dy (N) and |r| into *r_norm. Sets *not_gradient
     * when r is not E's gradient at y (a force the method follows without an energy, such as
     * He 2017's inversion fix): the curvature pairs are meaningless then and are dropped, and
     * the line search measures |r| instead of E. The
     * method may keep per-point state of the last evaluation (contacts, blocked normals). */
    pd_real (*evaluate)(void* ctx, const pd_vec3* y, pd_vec3* r, pd_real* r_norm,
                        int* not_gradient);
    /* z = P b with P symmetric positive definite on the unblocked directions (the method's
     * global step); z is filtered by the optimiser. */
    pd_status (*precondition)(void* ctx, const pd_vec3* b, pd_vec3* z);
    /* v <- S v: removes the directions blocked at the last evaluation. NULL: none. */
    void (*filter)(void* ctx, pd_vec3* v, size_t n);
    /* Moves a trial point onto the admissible set (out of colliders). NULL: none. */
    void (*project)(void* ctx, pd_vec3* y);
    /* A line search begins from the last evaluated point: the method may note what a trial must
     * keep (e.g. how close contact pairs are now). NULL: nothing. */
    void (*search_begins)(void* ctx);
    /* 0 rejects the trial just evaluated whatever its merit (a state the merit does not guard,
     * e.g. bodies passing through each other between particles); the step is halved. NULL:
     * every trial is admissible. */
    int (*trial_admissible)(void* ctx);
    /* The ctx the four hooks above get (filter, project, search_begins, trial_admissible);
     * NULL: ctx. Lets a method use constraint hooks written once elsewhere
     * (contact/contact_hooks.h) beside its own evaluate and precondition. */
    void* constraint_ctx;
} pd_descent_problem;

typedef struct pd_descent_def {
    int iterations;    /* at most this many per solve */
    pd_real tolerance; /* stop when |r| <= tolerance * r_scale */
    int history;       /* L-BFGS pairs (0: plain preconditioned descent) */
    int line_search;   /* 0: every full step is taken */
    pd_real armijo;    /* sufficient-decrease constant c */
    int halvings;      /* step halvings before a line search gives up */
    /* Xu 2018 Eq. 25 with the last iterate standing for the solution: stop when an iteration
     * lowered E by at most this fraction of what the solve has lowered it in all (0: off) */
    pd_real decrease_tolerance;
    /* Keep the L-BFGS pairs while the residual is no gradient (0: drop them; every method but
     * mpm's lbfgs). The solve is then of r(y) = 0 as an equation. Its merit is |r| (the line
     * search of not_gradient), not E: a non-associated plastic return's r differs from the
     * associated energy's gradient by a pressure that stays at the root (mpm_implicit.c), so E
     * is not stationary there and an Armijo test on E refuses steps towards it. The pairs
     * (s, r - r_old) are secant pairs of r's Jacobian J, kept only when s . (r - r_old) > 0
     * (history_push), i.e. where J's symmetric part is positive along s: H stays positive
     * definite (Nocedal & Wright Eq. 6.7), and -H r is a descent direction of |r|^2 / 2 (slope
     * -r^T J H r) while H J stays near the identity; when it is not, the line search fails and
     * the iteration is retried without pairs (history_resets). */
    int secant_pairs;
    /* 1: the L-BFGS pairs are stored in single precision (12 bytes a point instead of 24 each),
     * their dot products and updates still in double. rho = 1 / (s . y) is taken from the
     * rounded pairs, so H is the exact L-BFGS matrix of pairs within 6e-8 of the iterates':
     * still symmetric positive definite, the direction still a descent direction
     * (docs/optimiser.md). 0: double. */
    int single_pairs;
} pd_descent_def;
pd_descent_def pd_default_descent_def(void);

/* What the last solve did. */
typedef struct pd_descent_report {
    int iterations;
    pd_real residual;         /* |r| at the end (N) */
    pd_real merit;            /* E at the end (J) */
    int line_search_failures; /* iterations where no step length met the Armijo condition */
    int residual_increases;
    int merit_increases;
    int history_resets; /* iterations whose L-BFGS direction failed and were retried plainly */
    pd_real shortest_step;
    /* the last iteration's decrease of E over the solve's (Xu 2018 Eq. 25, as
     * decrease_tolerance reads it); 0 when no iteration lowered E */
    pd_real relative_error;
} pd_descent_report;

/* Adds a continued solve's report to the step's: counts summed, the end state the last part's. */
void pd_descent_report_add(pd_descent_report* total, const pd_descent_report* part);

/* A point of a single-precision L-BFGS pair. */
typedef struct pd_descent_vec3f {
    float x, y, z;
} pd_descent_vec3f;

typedef struct pd_descent {
    pd_descent_def def;
    size_t n;
    pd_vec3* y;      /* the iterate */
    pd_vec3* r;      /* its residual */
    pd_vec3* ytrial; /* line-search trial */
    pd_vec3* yold;
    pd_vec3* rold;
    pd_vec3* dir;
    pd_vec3* work;
    /* the pairs: pd_vec3, or pd_descent_vec3f when def.single_pairs */
    void* hist_s[PD_DESCENT_MAX_HISTORY];
    void* hist_y[PD_DESCENT_MAX_HISTORY];
    pd_real hist_rho[PD_DESCENT_MAX_HISTORY];
    int hist_head, hist_count;
    int not_gradient; /* the last evaluation's residual is no gradient */
    int keep_history; /* set before a solve: it goes on with the pairs of the last one */
    /* set before a solve: the decrease of the merit earlier solves of the same step made
     * (J), which Eq. 25's whole decrease counts beside this solve's (a solve continued after
     * the merit changed, e.g. friction's normal forces renewed); reset to 0 by the solve */
    pd_real decrease_before;
    pd_real* partial; /* one per chunk: reductions in a fixed order */
    size_t chunks;
    /* Called after every iteration of a solve with its count and |r| / r_scale (NULL: not
     * called): how a benchmark plots convergence against time. */
    void (*on_iteration)(void* ctx, int iteration, pd_real relative_residual);
    void* on_iteration_ctx;
} pd_descent;

pd_status pd_descent_init(pd_descent* d, size_t n, const pd_descent_def* def);
void pd_descent_free(pd_descent* d);

/* Evaluates the problem at d->y (admissible: projected by the caller); returns E and leaves
 * |r| in *r_norm. Call it on the starting point before pd_descent_solve. */
pd_real pd_descent_evaluate(pd_descent* d, const pd_descent_problem* p, pd_real* r_norm);

/* Iterates from d->y (evaluated, with merit `merit` and residual norm r_norm) until
 * |r| <= tolerance * r_scale, the iteration limit, or a line search that finds no descent.
 * On return d->y is the last accepted iterate and the problem's state is that of d->y. */
pd_status pd_descent_solve(pd_descent* d, const pd_descent_problem* p, pd_real merit,
                           pd_real r_norm, pd_real r_scale, pd_descent_report* report);

/* a . b over n points, summed per chunk in a fixed order (the same bits on any thread
 * count). */
pd_real pd_descent_dot(pd_descent* d, const pd_vec3* a, const pd_vec3* b);

#endif
