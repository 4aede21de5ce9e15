/* Preconditioned descent with L-BFGS pairs and an Armijo line search (descent.h). */
#include "optim/descent.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "parallel/parallel.h"

#define PD_DESCENT_GRAIN 512

pd_descent_def pd_default_descent_def(void) {
    return (pd_descent_def){.iterations = 20,
                            .tolerance = 1e-4,
                            .history = 5,
                            .line_search = 1,
                            .armijo = 1e-4,
                            .halvings = 12};
}

/* The arrays of one solve, each n points: one list drives allocation and release. */
#define DESCENT_ARRAYS(X) X(y) X(r) X(ytrial) X(yold) X(rold) X(dir) X(work)

static size_t pair_point_bytes(const pd_descent* d) {
    return d->def.single_pairs ? sizeof(pd_descent_vec3f) : sizeof(pd_vec3);
}

pd_status pd_descent_init(pd_descent* d, size_t n, const pd_descent_def* def) {
    memset(d, 0, sizeof *d);
    d->def = *def;
    if (d->def.history > PD_DESCENT_MAX_HISTORY)
        d->def.history = PD_DESCENT_MAX_HISTORY;
    d->n = n;
    d->chunks = (n + PD_DESCENT_GRAIN - 1) / PD_DESCENT_GRAIN;
#define ALLOC_ONE(a) d->a = PD_NEW_ARRAY(pd_vec3, n + 1);
    DESCENT_ARRAYS(ALLOC_ONE)
#undef ALLOC_ONE
    int ok = 1;
#define CHECK_ONE(a) ok &= d->a != NULL;
    DESCENT_ARRAYS(CHECK_ONE)
#undef CHECK_ONE
    for (int k = 0; k < d->def.history; ++k) {
        d->hist_s[k] = pd_calloc(n + 1, pair_point_bytes(d));
        d->hist_y[k] = pd_calloc(n + 1, pair_point_bytes(d));
        ok &= d->hist_s[k] && d->hist_y[k];
    }
    d->partial = PD_NEW_ARRAY(pd_real, d->chunks + 1);
    ok &= d->partial != NULL;
    if (!ok) {
        pd_descent_free(d);
        return PD_ERR_OUT_OF_MEMORY;
    }
    return PD_OK;
}

void pd_descent_free(pd_descent* d) {
    size_t n = d->n;
#define FREE_ONE(a) PD_FREE_ARRAY(d->a, pd_vec3, n + 1);
    DESCENT_ARRAYS(FREE_ONE)
#undef FREE_ONE
    for (int k = 0; k < d->def.history; ++k) {
        pd_free(d->hist_s[k], (n + 1) * pair_point_bytes(d));
        pd_free(d->hist_y[k], (n + 1) * pair_point_bytes(d));
    }
    PD_FREE_ARRAY(d->partial, pd_real, d->chunks + 1);
    memset(d, 0, sizeof *d);
}

/* ---------------------------------------------------------------- vector helpers */

/* A vector of n points, double (f NULL) or single precision (v NULL), read in double. */
typedef struct any_vec {
    const pd_vec3* v;
    const pd_descent_vec3f* f;
} any_vec;

static inline pd_vec3 any_at(any_vec a, size_t i) {
    return a.f ? pd_v3(a.f[i].x, a.f[i].y, a.f[i].z) : a.v[i];
}

static any_vec dbl(const pd_vec3* v) {
    return (any_vec){v, NULL};
}

/* Pair vector h (y_side: its change of r, else its change of y). */
static any_vec pair(const pd_descent* d, int y_side, int h) {
    const void* p = y_side ? d->hist_y[h] : d->hist_s[h];
    return d->def.single_pairs ? (any_vec){NULL, p} : (any_vec){p, NULL};
}

typedef struct dot_ctx {
    pd_descent* d;
    any_vec a, b;
} dot_ctx;

static void dot_kernel(void* vctx, size_t begin, size_t end, int thread) {
    dot_ctx* c = vctx;
    pd_real sum = 0;
    for (size_t i = begin; i < end; ++i)
        sum += pd_v3_dot(any_at(c->a, i), any_at(c->b, i));
    c->d->partial[begin / PD_DESCENT_GRAIN] = sum;
}

static pd_real dot_any(pd_descent* d, any_vec a, any_vec b) {
    dot_ctx c = {d, a, b};
    pd_parallel_for(d->n, PD_DESCENT_GRAIN, dot_kernel, &c);
    pd_real sum = 0;
    for (size_t k = 0; k < d->chunks; ++k)
        sum += d->partial[k];
    return sum;
}

pd_real pd_descent_dot(pd_descent* d, const pd_vec3* a, const pd_vec3* b) {
    return dot_any(d, dbl(a), dbl(b));
}

/* out += alpha v */
static void axpy(size_t n, pd_vec3* out, pd_real alpha, any_vec v) {
    for (size_t i = 0; i < n; ++i)
        out[i] = pd_v3_madd(out[i], alpha, any_at(v, i));
}

static void* constraint_ctx(const pd_descent_problem* p) {
    return p->constraint_ctx ? p->constraint_ctx : p->ctx;
}

static void filter(const pd_descent_problem* p, pd_vec3* v, size_t n) {
    if (p->filter)
        p->filter(constraint_ctx(p), v, n);
}

static void project(const pd_descent_problem* p, pd_vec3* y) {
    if (p->project)
        p->project(constraint_ctx(p), y);
}

static void swap(pd_vec3** a, pd_vec3** b) {
    pd_vec3* t = *a;
    *a = *b;
    *b = t;
}

pd_real pd_descent_evaluate(pd_descent* d, const pd_descent_problem* p, pd_real* r_norm) {
    d->not_gradient = 0;
    return p->evaluate(p->ctx, d->y, d->r, r_norm, &d->not_gradient);
}

/* ---------------------------------------------------------------- search direction */

/* d = -S H r with H the L-BFGS inverse Hessian over the kept pairs and S P S its initial
 * matrix (Nocedal & Wright Alg. 7.4; Liu et al. 2017). Without pairs it is the preconditioned
 * descent of He 2017 Sec. 4.2. Returns the slope r . d. */
static pd_real search_direction(pd_descent* d, const pd_descent_problem* p, pd_status* st) {
    int m = d->hist_count;
    pd_real alpha[PD_DESCENT_MAX_HISTORY];
    memcpy(d->work, d->r, d->n * sizeof(pd_vec3));
    for (int k = m - 1; k >= 0; --k) {
        int h = (d->hist_head + k) % d->def.history;
        alpha[k] = d->hist_rho[h] * dot_any(d, pair(d, 0, h), dbl(d->work));
        axpy(d->n, d->work, -alpha[k], pair(d, 1, h));
    }
    filter(p, d->work, d->n);
    *st = p->precondition(p->ctx, d->work, d->dir);
    filter(p, d->dir, d->n);
    for (int k = 0; k < m; ++k) {
        int h = (d->hist_head + k) % d->def.history;
        pd_real beta = d->hist_rho[h] * dot_any(d, pair(d, 1, h), dbl(d->dir));
        axpy(d->n, d->dir, alpha[k] - beta, pair(d, 0, h));
    }
    filter(p, d->dir, d->n);
    for (size_t i = 0; i < d->n; ++i)
        d->dir[i] = pd_v3_scale(d->dir[i], -1);
    return pd_descent_dot(d, d->r, d->dir);
}

static pd_descent_vec3f single(pd_vec3 v) {
    return (pd_descent_vec3f){(float)v.x, (float)v.y, (float)v.z};
}

/* Writes the pair (y - yold, r - rold) into slot h, rounded when the pairs are single. */
static void store_pair(pd_descent* d, int h) {
    if (d->def.single_pairs) {
        pd_descent_vec3f *s = d->hist_s[h], *y = d->hist_y[h];
        for (size_t i = 0; i < d->n; ++i) {
            s[i] = single(pd_v3_sub(d->y[i], d->yold[i]));
            y[i] = single(pd_v3_sub(d->r[i], d->rold[i]));
        }
        return;
    }
    pd_vec3 *s = d->hist_s[h], *y = d->hist_y[h];
    for (size_t i = 0; i < d->n; ++i) {
        s[i] = pd_v3_sub(d->y[i], d->yold[i]);
        y[i] = pd_v3_sub(d->r[i], d->rold[i]);
    }
}

/* Keeps the pair (y - yold, r - rold) when its curvature is positive (measured on the pair as
 * stored). */
static void history_push(pd_descent* d) {
    if (d->def.history == 0)
        return;
    int h = (d->hist_head + d->hist_count) % d->def.history;
    store_pair(d, h);
    any_vec s = pair(d, 0, h), y = pair(d, 1, h);
    pd_real sy = dot_any(d, s, y);
    pd_real ss = dot_any(d, s, s);
    pd_real yy = dot_any(d, y, y);
    if (!(sy > 1e-10 * sqrt(ss * yy)))
        return;
    d->hist_rho[h] = 1 / sy;
    if (d->hist_count < d->def.history)
        d->hist_count++;
    else
        d->hist_head = (d->hist_head + 1) % d->def.history;
}

/* ---------------------------------------------------------------- line search */

/* rold . (ytrial - y): the slope along the move actually made (the projection may cancel
 * part of alpha d), with the residual of the search's start. */
static pd_real moved_slope(pd_descent* d) {
    for (size_t i = 0; i < d->n; ++i)
        d->work[i] = pd_v3_sub(d->ytrial[i], d->y[i]);
    return pd_descent_dot(d, d->rold, d->work);
}

/* The Armijo condition on E along the move (Nocedal & Wright Eq. 3.6a) when the residual at y
 * is E's gradient. When it is not (a force the method follows without an energy), E says
 * nothing about that force's direction; the step is then measured on what the force defines,
 * the equation r(y) = 0: |r| must fall by the fraction c alpha (the Armijo condition on
 * |r|^2 / 2 along a Newton-like direction, whose slope there is -|r|^2). */
static int sufficient_decrease(const pd_descent* d, pd_real moved, pd_real m, pd_real merit,
                               pd_real r_trial, pd_real r_norm, pd_real alpha) {
    if (d->not_gradient)
        return r_trial <= (1 - d->def.armijo * alpha) * r_norm;
    return moved < 0 && m <= merit + d->def.armijo * moved;
}

/* y <- y + alpha d with alpha halved from 1 until the Armijo condition holds on E (Eq. 13 of
 * He 2017 with Nocedal & Wright Eq. 3.6a); every trial is projected. Returns 0, with the
 * problem evaluated at y again, when no step length is accepted. */
static int line_search(pd_descent* d, const pd_descent_problem* p, pd_real* merit, pd_real* r_norm,
                       pd_descent_report* rep) {
    pd_real alpha = 1;
    if (p->search_begins)
        p->search_begins(constraint_ctx(p));
    for (int k = 0; k <= d->def.halvings; ++k, alpha *= 0.5) {
        for (size_t i = 0; i < d->n; ++i)
            d->ytrial[i] = pd_v3_madd(d->y[i], alpha, d->dir[i]);
        project(p, d->ytrial);
        pd_real moved = moved_slope(d), r_trial;
        int not_gradient = 0;
        pd_real m = p->evaluate(p->ctx, d->ytrial, d->r, &r_trial, &not_gradient);
        if (p->trial_admissible && !p->trial_admissible(constraint_ctx(p)))
            continue;
        if (!d->def.line_search ||
            sufficient_decrease(d, moved, m, *merit, r_trial, *r_norm, alpha)) {
            swap(&d->y, &d->ytrial);
            *merit = m;
            *r_norm = r_trial;
            d->not_gradient = not_gradient;
            rep->shortest_step = fmin(rep->shortest_step, alpha);
            return 1;
        }
    }
    memcpy(d->ytrial, d->y, d->n * sizeof(pd_vec3));
    project(p, d->ytrial); /* the method's contact state of y again, y itself unmoved */
    *merit = pd_descent_evaluate(d, p, r_norm);
    return 0;
}

/* ---------------------------------------------------------------- iterations */

/* One iteration: direction, line search, new pair. The pairs are dropped while the residual
 * is no gradient (unless def.secant_pairs: then r = 0 is solved with them), and when their
 * direction fails (then the plain preconditioned direction is tried). They are kept when contacts
 * come and go: dropping them then left the history empty at every iteration of a body resting on
 * the floor (measured in projective_pd: residual 0.39 after 20 iterations, 0.05 when kept). Returns
 * 1 if y moved. */
static int iterate(pd_descent* d, const pd_descent_problem* p, pd_real* merit, pd_real* r_norm,
                   pd_descent_report* rep, pd_status* st) {
    if (d->not_gradient && !d->def.secant_pairs)
        d->hist_count = 0;
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (attempt == 1 && d->hist_count == 0)
            return 0;
        if (attempt == 1)
            d->hist_count = 0, rep->history_resets++;
        pd_real slope = search_direction(d, p, st);
        if (*st != PD_OK)
            return 0;
        if (!(slope < 0))
            continue;
        memcpy(d->yold, d->y, d->n * sizeof(pd_vec3));
        memcpy(d->rold, d->r, d->n * sizeof(pd_vec3));
        if (line_search(d, p, merit, r_norm, rep)) {
            if (!d->not_gradient || d->def.secant_pairs)
                history_push(d);
            return 1;
        }
    }
    return 0;
}

/* Xu 2018 Eq. 25, (E_k - E) / (E_0 - E), with the new iterate's E standing for the
 * solution's: the paper stops at 1e-4 ("5 ~ 25 iterations"). */
static int decreased_enough(const pd_descent* d, pd_descent_report* rep, pd_real merit0,
                            pd_real merit_before, pd_real merit) {
    pd_real total = d->decrease_before + merit0 - merit;
    rep->relative_error = total > 0 ? (merit_before - merit) / total : 0;
    return d->def.decrease_tolerance > 0 && total > 0 &&
           rep->relative_error <= d->def.decrease_tolerance;
}

pd_status pd_descent_solve(pd_descent* d, const pd_descent_problem* p, pd_real merit,
                           pd_real r_norm, pd_real r_scale, pd_descent_report* rep) {
    memset(rep, 0, sizeof *rep);
    rep->shortest_step = 1;
    if (!d->keep_history)
        d->hist_count = d->hist_head = 0;
    d->keep_history = 0;
    pd_status st = PD_OK;
    pd_real merit0 = merit;
    int it = 0;
    while (it < d->def.iterations && r_norm > d->def.tolerance * r_scale) {
        pd_real before = r_norm, merit_before = merit;
        int moved = iterate(d, p, &merit, &r_norm, rep, &st);
        if (st != PD_OK)
            break;
        ++it;
        if (d->on_iteration)
            d->on_iteration(d->on_iteration_ctx, it, r_scale > 0 ? r_norm / r_scale : r_norm);
        if (!moved) {
            rep->line_search_failures++;
            break;
        }
        rep->residual_increases += r_norm > before;
        rep->merit_increases += merit > merit_before;
        if (decreased_enough(d, rep, merit0, merit_before, merit))
            break;
    }
    rep->iterations = it;
    rep->residual = r_norm;
    rep->merit = merit;
    d->decrease_before = 0;
    return st;
}

void pd_descent_report_add(pd_descent_report* total, const pd_descent_report* part) {
    total->iterations += part->iterations;
    total->residual = part->residual;
    total->merit = part->merit;
    total->line_search_failures += part->line_search_failures;
    total->residual_increases += part->residual_increases;
    total->merit_increases += part->merit_increases;
    total->history_resets += part->history_resets;
    total->shortest_step = fmin(total->shortest_step, part->shortest_step);
    total->relative_error = part->relative_error;
}
