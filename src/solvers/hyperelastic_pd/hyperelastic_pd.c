/* Xu, He, Chen, Li, Wang 2018, Reformulating Hyperelastic Materials with Peridynamic Modeling
 * (Pacific Graphics): the strain energy W(theta, tau) of Eq. 12 and its forces (Eq. 13, 19),
 * integrated by implicit Euler as the minimisation of Eq. 21 with the quasi-Newton method of
 * Sec. 5.2 (the prefactored L of Eq. 23, L-BFGS pairs after Liu et al. 2017, step halving
 * until E falls) stopped by the relative error of Eq. 25; colliders inside the solve
 * (boundary/collider_contact.h). docs/methods/hyperelastic_pd.md has the derivations. */
#include <math.h>
#include <string.h>

#include "boundary/collider.h"
#include "boundary/friction.h"
#include "core/timer.h"
#include "optim/implicit_step.h"
#include "parallel/parallel.h"
#include "solvers/hyperelastic_pd/hyperelastic_pd_data.h"
#include "solvers/solver.h"
#include "world/world.h"

/* Solves again after friction's normal forces were renewed from the solution, at most; and
 * the part of their sum they must move by for that. */
#define HPD_FRICTION_RENEWALS 3
#define HPD_FRICTION_RENEWAL  0.1

/* Eq. 25's tolerance of a step's first pass when friction acts: its normal forces and
 * tangential stiffness are then renewed at an iterate near the solution, and the step goes on
 * to solver.tolerance (solve_renewing_friction). */
#define HPD_FIRST_PASS_TOLERANCE 1e-2

typedef struct hpd_ctx {
    pd_hpd_state* s;
    const pd_vec3* y;
    pd_vec3* r;
} hpd_ctx;

/* The bond b of i at y: its reference length |xi| (m), unit direction e of y_j - y_i, and
 * stretch tau = |y_j - y_i| / |xi| (floored: A_n diverges at tau = 0). */
typedef struct hpd_bond {
    pd_real len, tau;
    pd_vec3 e;
} hpd_bond;

static inline hpd_bond bond_at(const pd_hpd_state* s, const pd_vec3* y, uint32_t i, uint32_t b) {
    hpd_bond out;
    pd_vec3 Y = pd_v3_sub(y[s->fam.j[b]], y[i]);
    out.len = pd_v3_len(pd_family_xi(&s->fam, i, b));
    /* fmax's value (a NaN length takes the floor, as with fmax) without libm's out-of-line
     * call: 2 % of the kernels' time */
    pd_real ly = pd_v3_len(Y), floor = 1e-9 * out.len;
    ly = ly > floor ? ly : floor;
    out.tau = ly / out.len;
    out.e = pd_v3_scale(Y, 1 / ly);
    return out;
}

/* theta_i of Eq. 14 (sum_j w_ij V_j q_ij tau_ij, q the surface correction's factor), lambda
 * g'(theta_i) into s->slope, and V_i W_i of Eq. 12 summed per chunk. */
static void dilatation_kernel(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    hpd_ctx* c = vctx;
    pd_hpd_state* s = c->s;
    pd_real energy = 0;
    for (uint32_t i = (uint32_t)begin; i < end; ++i) {
        const pd_hpd_material* m = &s->mat[s->material[i]];
        pd_real theta = 0, bonds = 0;
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            hpd_bond bd = bond_at(s, c->y, i, b);
            pd_real wv = pd_hpd_bond_weight(s, i, bd.len) * s->volume[s->fam.j[b]];
            theta += wv * s->bond_q[b] * bd.tau;
            bonds += wv * s->bond_g[b] * pd_hpd_basis_value(&m->h, bd.tau);
        }
        s->slope[i] = m->lambda * pd_hpd_basis_slope(&m->g, theta);
        energy += s->volume[i] * (m->lambda * pd_hpd_basis_value(&m->g, theta) + m->mu * bonds);
    }
    s->partial[begin / PD_HPD_GRAIN] = energy;
}

/* a_ij + a_ji, a_ij = V_i w_ij V_j / |xi| (lambda g'(theta_i) q_ij + mu G_ij h'(tau_ij)): the
 * magnitude of d(V_i W_i + V_j W_j)/dy_j along e_ij (Eq. 13 times the volumes of Eq. 20), for
 * i's bond b. G_ij is bond_g[b], G_ji that of the opposite bond (two materials, or two
 * orthotropies, differ); h' is evaluated once when both ends share a material. */
static pd_real pair_force(const pd_hpd_state* s, uint32_t i, uint32_t b, const hpd_bond* bd) {
    uint32_t j = s->fam.j[b];
    int mi = s->material[i], mj = s->material[j];
    const pd_hpd_material* m = &s->mat[mi];
    pd_real slope = pd_hpd_basis_slope(&m->h, bd->tau);
    pd_real hi = m->mu * s->bond_g[b] * slope;
    pd_real hj =
        (mj == mi ? m->mu * slope : s->mat[mj].mu * pd_hpd_basis_slope(&s->mat[mj].h, bd->tau)) *
        s->bond_g[s->fam.rev[b]];
    pd_real ai = pd_hpd_bond_weight(s, i, bd->len) * (s->slope[i] * s->bond_q[b] + hi);
    pd_real aj = pd_hpd_bond_weight(s, j, bd->len) * (s->slope[j] * s->bond_q[s->fam.rev[b]] + hj);
    return s->volume[i] * s->volume[j] / bd->len * (ai + aj);
}

/* dE/dy_i = -sum_j (a_ij + a_ji) e_ij: i's own bonds and, through the symmetric families,
 * the bonds of its neighbours to it (Eq. 20's T_ij - T_ji), gathered per particle so that no
 * two threads write one entry. */
static void gradient_kernel(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    hpd_ctx* c = vctx;
    pd_hpd_state* s = c->s;
    for (uint32_t i = (uint32_t)begin; i < end; ++i) {
        pd_vec3 g = pd_v3(0, 0, 0);
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            hpd_bond bd = bond_at(s, c->y, i, b);
            g = pd_v3_madd(g, -pair_force(s, i, b, &bd), bd.e);
        }
        s->grad[i] = pd_v3_add(g, pd_hpd_inversion_gradient(s, c->y, i));
    }
}

static pd_real sum_partials(const pd_real* partial, size_t count) {
    pd_real sum = 0;
    for (size_t k = 0; k < count; ++k)
        sum += partial[k];
    return sum;
}

static pd_real elastic_energy(pd_hpd_state* s, hpd_ctx* c) {
    pd_parallel_for(s->n, PD_HPD_GRAIN, dilatation_kernel, c);
    pd_real e = sum_partials(s->partial, s->chunks);
    e += pd_hpd_inversion_energy(s, c->y); /* Eq. 24; F_i for the gradient */
    pd_parallel_for(s->n, PD_HPD_GRAIN, gradient_kernel, c);
    return e;
}

/* r = M (y - y*)/h^2 + dE/dy on free particles (the gradient of Eq. 21), 0 on constrained
 * ones, then the colliders' friction and blocked normals; partial sums of |r|^2 and of the
 * inertia and friction potentials. */
static void residual_kernel(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    hpd_ctx* c = vctx;
    pd_hpd_state* s = c->s;
    pd_real r2 = 0, inertia = 0, ih2 = 1 / (s->step->dt * s->step->dt);
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 r = pd_v3(0, 0, 0);
        if (!s->fixed[i]) {
            pd_vec3 d = pd_v3_sub(c->y[i], s->ystar[i]);
            r = pd_v3_madd(s->grad[i], s->mass[i] * ih2, d);
            if (s->prm.contact)
                r = pd_v3_add(r, s->contact.grad[i]);
            inertia += 0.5 * s->mass[i] * ih2 * pd_v3_len2(d);
        }
        inertia += pd_collider_contact_apply(&s->cc, i, c->y[i], &r);
        c->r[i] = r;
        r2 += pd_v3_len2(r);
    }
    s->partial[begin / PD_HPD_GRAIN] = r2;
    s->partial[s->chunks + begin / PD_HPD_GRAIN] = inertia;
}

/* The contact energy between bodies at y (src/contact); its gradient stays in s->contact. */
static pd_real contact_energy(pd_hpd_state* s, const pd_vec3* y) {
    if (!s->prm.contact)
        return 0;
    pd_real e;
    pd_status st = pd_contact_evaluate(&s->contact, y, &e);
    if (st != PD_OK)
        s->contact_status = st;
    return e;
}

/* E(q) of Eq. 21 at y (with the contact between bodies) and its residual. */
static pd_real evaluate(void* ctx, const pd_vec3* y, pd_vec3* r, pd_real* r_norm,
                        int* not_gradient) {
    pd_hpd_state* s = ctx;
    double t0 = pd_now();
    hpd_ctx c = {s, y, r};
    pd_real energy = elastic_energy(s, &c);
    double t1 = pd_now();
    energy += contact_energy(s, y);
    s->t_contact += pd_now() - t1;
    pd_parallel_for(s->n, PD_HPD_GRAIN, residual_kernel, &c);
    *r_norm = sqrt(sum_partials(s->partial, s->chunks));
    energy += sum_partials(s->partial + s->chunks, s->chunks);
    *not_gradient = 0;
    s->t_local += pd_now() - t0;
    s->evaluations++;
    return energy;
}

/* z = (L + M/h^2)^-1 b with the factor of Eq. 23 (constrained particles: 0). */
static pd_status precondition(void* ctx, const pd_vec3* b, pd_vec3* z) {
    pd_hpd_state* s = ctx;
    double t0 = pd_now();
    pd_status st = pd_sym_direct_solve(&s->direct, b, z);
    s->t_global += pd_now() - t0;
    return st;
}

/* The colliders' and the bodies' contact constrain the descent (contact/contact_hooks.h):
 * a trial may bring two bodies' particles no closer than PD_CONTACT_FLOOR, since between two
 * particles a penalty is finite and a long step would carry a body through another. */
static pd_descent_problem problem(pd_hpd_state* s) {
    s->hooks = (pd_contact_hooks){&s->cc, s->prm.contact ? &s->contact : NULL};
    return (pd_descent_problem){s,
                                evaluate,
                                precondition,
                                pd_contact_hooks_filter,
                                pd_contact_hooks_project,
                                pd_contact_hooks_search_begins,
                                pd_contact_hooks_admissible,
                                &s->hooks};
}

/* Start candidates: the step's start positions x, x + h v (y* without gravity's h^2 g) and
 * y* itself. */
enum { HPD_START_X, HPD_START_MOTION, HPD_START_STAR, HPD_STARTS };

/* Candidate k into y, projected out of the colliders (y* holds a constrained particle where
 * the world put it, x + h v too: its velocity is the keyframes'). */
static void start_candidate(pd_hpd_state* s, const pd_particles* p, int k, pd_vec3* y) {
    for (size_t i = 0; i < s->n; ++i) {
        if (k == HPD_START_STAR || (k == HPD_START_MOTION && s->fixed[i]))
            y[i] = s->ystar[i];
        else if (k == HPD_START_MOTION)
            y[i] = pd_v3_madd(p->pos[i], s->step->dt, p->vel[i]);
        else
            y[i] = p->pos[i];
    }
    pd_collider_contact_project(&s->cc, y);
}

/* Where the iterations start (the paper leaves q^0 open): of x, x + h v and y*, projected,
 * the one of the lowest merit, x where the others bring contact pairs closer than
 * PD_CONTACT_FLOOR. Projected out of a collider, y* of a body landing fast puts a column of
 * particles onto one point of the floor, where tau -> 0 and an A_n energy diverges (measured:
 * two bunnies landing at 2 m/s were flattened, every later step ending after one refused line
 * search); y* of two bodies meeting fast lies inside each other, where the line search,
 * keeping pairs from coming closer, would hold them. x is always admissible and keeps the
 * particles apart, but a body sliding on a floor starts there with every contact stuck (its
 * anchor is x): friction's stiffness, up to 2 mu lambda / eps, then went into the factor and
 * the solve could not slide it within 25 iterations (a box landing at 2 m/s sideways lost
 * 0.84 m/s in the step after the landing where Coulomb allows 0.16); x + h v starts it
 * sliding, and for a body at rest it is x again without y*'s sag of h^2 g. Returns the merit;
 * the state is that of the optimiser's y. */
static pd_real start_point(pd_hpd_state* s, const pd_particles* p, pd_real* r) {
    pd_descent* d = &s->opt;
    pd_descent_problem pr = problem(s);
    int best = HPD_START_X;
    pd_real best_merit = INFINITY, best_r = 0;
    for (int k = 0; k < HPD_STARTS; ++k) {
        start_candidate(s, p, k, d->y);
        pd_real rk, mk = pd_descent_evaluate(d, &pr, &rk);
        int apart = k == HPD_START_X || !s->prm.contact || s->contact.closest >= PD_CONTACT_FLOOR;
        if (apart && mk < best_merit)
            best = k, best_merit = mk, best_r = rk;
    }
    if (best == HPD_STARTS - 1) {
        *r = best_r;
        return best_merit;
    }
    start_candidate(s, p, best, d->y);
    return pd_descent_evaluate(d, &pr, r);
}

/* 1 when friction's tangential stiffness k (boundary/friction.h) at the start point differs
 * from the one factored, kf, by more than a quarter of their sum: sum |k - kf| > (sum k +
 * sum kf) / 4 (a preconditioner need not be exact; a contact or two coming and going each
 * step of a settling body would otherwise refactor every step). */
static int friction_changed(const pd_hpd_state* s) {
    pd_real change = 0, total = 0;
    for (size_t i = 0; i < s->n; ++i) {
        pd_real k = s->fixed[i] ? 0 : s->cc.ktan[i], kf = s->ktan_factored[i];
        change += fabs(k - kf), total += k + kf;
    }
    return change > 0.25 * total;
}

/* Coulomb friction's tangential stiffness at the start point (up to mu lambda / eps where a
 * contact sticks) on the diagonal of the factor, which Eq. 23 leaves out: without it the
 * quasi-Newton steps of a body resting on a rough floor overshoot along the floor and the line
 * search halves them (measured on Fig. 5's drop after the landing: 25 iterations and 85 to
 * 234 evaluations a step, against 13 to 19 and about 20 on a frictionless floor). A numeric
 * refactorisation on the factor's pattern (about 150 ms for 6.7K particles), taken when the
 * stiffness changed (friction_changed). */
static pd_status factor_friction(pd_hpd_state* s, pd_error* err) {
    if (!friction_changed(s))
        return PD_OK;
    double t0 = pd_now();
    for (size_t i = 0; i < s->n; ++i)
        s->ktan_factored[i] = s->fixed[i] ? 0 : s->cc.ktan[i];
    pd_status st = pd_hpd_refactor(s, s->ktan_factored, err);
    s->t_global += pd_now() - t0;
    s->refactors++;
    return st;
}

/* The stages peridot_bench reports: local, every evaluation of E(q) of Eq. 21 and its gradient
 * (with the colliders' and the bodies' contact); global, the solves with the factor of Eq. 23
 * and friction's refactorisations. */
static const char* const k_stages[] = {"local", "global"};

/* The hooks of the shared implicit step (optim/implicit_step.h): the start point, friction's
 * stiffness refactored into the preconditioner, and the quasi-Newton solve of Sec. 5.2. */
typedef struct hpd_step_hooks {
    pd_hpd_state* s;
    pd_real r0; /* the residual's yardstick: max(|r| at the start, the force scale) */
} hpd_step_hooks;

static pd_real hook_start_point(void* ctx, pd_real* r) {
    hpd_step_hooks* h = ctx;
    pd_collider_contact_lag_friction(&h->s->cc, h->s->last_push);
    return start_point(h->s, h->s->step->particles, r);
}

static pd_status hook_before_solve(void* ctx, pd_real* merit, pd_real* r) {
    hpd_step_hooks* h = ctx;
    pd_error err = {0};
    (void)merit, (void)r;
    return factor_friction(h->s, &err);
}

/* 1 when a collider has Coulomb friction (slip with friction > 0): no_slip holds its contacts
 * whatever their normal force. */
static int coulomb_colliders(const pd_colliders* c) {
    for (int k = 0; c && k < c->count; ++k)
        if (c->items[k].def.boundary != PD_BOUNDARY_NO_SLIP && c->items[k].def.friction > 0)
            return 1;
    return 0;
}

/* Renews friction's limits from the iterate (pd_collider_contact_renew_friction) and says
 * whether they moved by more than HPD_FRICTION_RENEWAL of their sum (a contact that came or
 * went counts with its whole limit): a settling body's limits move by a few per cent from pass
 * to pass, which is not worth a new solve, a landing's from nothing to all its weight. */
static int friction_moved(pd_hpd_state* s, const pd_particles* p) {
    pd_real* old = s->limit_prev;
    memcpy(old, s->cc.limit, s->n * sizeof *old);
    pd_collider_contact_renew_friction(&s->cc, p->pos, s->opt.y, s->opt.r);
    pd_real change = 0, total = 0;
    for (size_t i = 0; i < s->n; ++i) {
        pd_real a = isfinite(old[i]) ? old[i] : 0,
                b = isfinite(s->cc.limit[i]) ? s->cc.limit[i] : 0;
        change += fabs(b - a), total += fmax(a, b);
        if (isinf(old[i]) != isinf(s->cc.limit[i]))
            return 1; /* a no_slip contact came or went */
    }
    return change > HPD_FRICTION_RENEWAL * total;
}

/* The quasi-Newton solve of Sec. 5.2 with Coulomb friction's normal forces renewed from the
 * solution and the step solved again while they move (friction_moved), at most
 * HPD_FRICTION_RENEWALS times, within the step's budget of iterations. The normal forces a
 * step starts with are the last step's (pd_collider_contact_lag_friction): none for a contact
 * that begins in the step, and a landing's impact force one step late without the renewal
 * (the core's guess from x + h v counted the lifted bottom layer's elastic force: a box landing
 * at 2 m/s sideways stopped dead, docs/methods/hyperelastic_pd.md). Eq. 25's whole decrease
 * counts every pass's: per pass, a short renewal pass ran to the cap. The first pass stops at
 * HPD_FIRST_PASS_TOLERANCE, and every renewal also puts friction's tangential stiffness at the
 * iterate on the factor (factor_friction): on Fig. 5's drop the residual left at the steps
 * that missed Eq. 25 sat at the friction contacts, most of them sliding by then, which the
 * start point's stiffness (up to 2 mu lambda / eps where it stuck) held in the factor; renewed
 * only after a pass converged, the renewal passes then ran out of iterations. With friction's
 * smoothing eps widened (solver.friction_stick_speed) all 40 of the drop's iterating steps reach
 * 1e-4 within 25 iterations (29 before, largest relative error 2.8e-3; these passes alone: 31,
 * 7.3e-4; docs/methods/hyperelastic_pd.md). */
static pd_status solve_renewing_friction(hpd_step_hooks* h, pd_real merit, pd_real r) {
    pd_hpd_state* s = h->s;
    pd_descent* d = &s->opt;
    pd_descent_problem pr = problem(s);
    pd_descent_report part;
    int budget = s->prm.iterations, friction = coulomb_colliders(s->cc.colliders);
    s->report = (pd_descent_report){.shortest_step = 1};
    pd_status st = PD_OK;
    pd_real decrease = 0; /* of the passes so far, each in its own merit (Eq. 25's whole) */
    int first = friction; /* a first pass to HPD_FIRST_PASS_TOLERANCE */
    for (int pass = 0;; ++pass) {
        d->def.iterations = budget - s->report.iterations;
        d->def.decrease_tolerance = first ? HPD_FIRST_PASS_TOLERANCE : s->prm.tolerance;
        d->decrease_before = decrease;
        st = pd_descent_solve(d, &pr, merit, r, h->r0, &part);
        decrease += merit - part.merit;
        pd_descent_report_add(&s->report, &part);
        if (st == PD_OK)
            st = s->contact_status; /* a contact buffer that could not grow */
        if (st != PD_OK || !friction || s->report.iterations >= budget)
            break;
        int moved = friction_moved(s, s->step->particles);
        if (!first && (pass >= HPD_FRICTION_RENEWALS || !moved))
            break;
        first = 0;
        pd_collider_contact_project(&s->cc, d->y); /* a new no_slip contact at its anchor */
        merit = pd_descent_evaluate(d, &pr, &r);
        d->keep_history = 1;
        pd_error err = {0};
        if ((st = factor_friction(s, &err)) != PD_OK) /* the stiffness at this iterate */
            break;
    }
    d->def.iterations = budget;
    d->def.decrease_tolerance = s->prm.tolerance;
    memcpy(s->last_push, s->cc.push, s->n * sizeof *s->last_push); /* at the accepted y */
    return st;
}

/* The paper's collisions, "handled with the position-based method [BMM15]" after the solve
 * (solver.collisions after_solve), for one particle at the solve's solution y (start position
 * x): out of each collider it entered, by its depth d along the normal n, then positional
 * Coulomb friction (Macklin et al. 2014, Unified Particle Physics, Eq. 24): the tangential
 * displacement u relative to the surface over the step is cancelled while |u| <= mu d (static)
 * and shortened by mu d otherwise (kinetic), mu d the tangential displacement Coulomb allows
 * against the normal one; no_slip cancels it. The velocity written back, (y - x) / h, takes
 * both, as a position-based method's does. */
static pd_vec3 resolve_after_solve(const pd_colliders* c, pd_vec3 x, pd_vec3 y, pd_real dt) {
    for (int k = 0; k < c->count; ++k) {
        const pd_collider* col = &c->items[k];
        if (pd_collider_clear_of(col, y, PD_FRICTION_TOUCH))
            continue;
        pd_vec3 n;
        pd_real d = pd_collider_sdf(col, y, &n);
        if (!(d < 0))
            continue;
        y = pd_v3_madd(y, -d, n);
        pd_vec3 u = pd_friction_slip(y, pd_friction_anchor(col, x, dt), n);
        pd_real len = pd_v3_len(u);
        pd_real cut = col->def.boundary == PD_BOUNDARY_NO_SLIP ? len : -d * col->def.friction;
        if (len > 0)
            y = pd_v3_madd(y, -fmin(1, cut / len), u);
    }
    return y;
}

typedef struct hpd_after_ctx {
    const pd_hpd_state* s;
    const pd_step_context* step;
    pd_vec3* y;
} hpd_after_ctx;

static void after_solve_kernel(void* vctx, size_t begin, size_t end, int thread) {
    hpd_after_ctx* c = vctx;
    const pd_vec3* x = c->step->particles->pos;
    const uint8_t* skip = c->step->contact_skip;
    (void)thread;
    for (size_t i = begin; i < end; ++i)
        if (!c->s->fixed[i] && !(skip && skip[i]))
            c->y[i] = resolve_after_solve(c->step->colliders, x[i], c->y[i], c->step->dt);
}

static void hook_after_solve(void* ctx) {
    hpd_step_hooks* h = ctx;
    pd_hpd_state* s = h->s;
    if (s->prm.collisions != PD_HPD_COLLISIONS_AFTER_SOLVE || !s->step->colliders ||
        !s->step->colliders->count)
        return;
    hpd_after_ctx c = {s, s->step, s->opt.y};
    pd_parallel_for(s->n, PD_HPD_GRAIN, after_solve_kernel, &c);
}

static pd_status hook_solve(void* ctx, pd_real merit, pd_real r, pd_real force_scale) {
    hpd_step_hooks* h = ctx;
    h->r0 = fmax(force_scale, r);
    return solve_renewing_friction(h, merit, r);
}

static pd_status advance(pd_hpd_state* s, pd_world* w, pd_step_stats* stats) {
    pd_error err = {0};
    size_t broken;
    s->t_local = s->t_global = 0;
    s->evaluations = 0;
    s->contact_status = PD_OK;
    s->t_contact = 0;
    hpd_step_hooks hooks = {s, 0};
    /* after_solve: the solve sees no colliders (hook_after_solve resolves them) */
    pd_step_context solve_ctx = *s->step;
    if (s->prm.collisions == PD_HPD_COLLISIONS_AFTER_SOLVE)
        solve_ctx.colliders = &s->no_colliders;
    pd_implicit_step implicit = {.ctx = &hooks,
                                 .opt = &s->opt,
                                 .problem = problem(s),
                                 .cc = &s->cc,
                                 .contact = s->prm.contact ? &s->contact : NULL,
                                 .ystar = s->ystar,
                                 .gradient = s->grad, /* the accepted iterate's (descent.h) */
                                 .start_point = hook_start_point,
                                 .before_solve = hook_before_solve,
                                 .solve = hook_solve,
                                 .after_solve = hook_after_solve};
    pd_status st = pd_implicit_step_run(&implicit, &solve_ctx);
    if (st != PD_OK)
        return st;
    st = pd_hpd_fracture(s, w, &broken, &err);
    if (st != PD_OK)
        return st;
    pd_real r0 = hooks.r0;
    s->last_residual = r0 > 0 ? s->report.residual / r0 : 0;
    stats->iterations = s->report.iterations;
    stats->residual = s->last_residual;
    stats->energy = s->report.merit;
    stats->relative_error = s->report.relative_error;
    if (s->report.iterations >= s->prm.iterations &&
        s->report.relative_error > 10 * s->prm.tolerance)
        stats->unconverged_by = s->report.relative_error / s->prm.tolerance;
    const double seconds[] = {s->t_local, s->t_global};
    pd_step_stats_stages(stats, k_stages, seconds, 2);
    stats->t_bond_forces = s->t_local - s->t_contact;
    stats->local_evaluations = s->evaluations;
    stats->bonds = s->fam.bond_count;
    return PD_OK;
}

static pd_status hpd_step(void* state, pd_world* w, const pd_step_context* ctx,
                          pd_step_stats* stats) {
    pd_hpd_state* s = state;
    s->step = ctx;
    pd_status st = advance(s, w, stats);
    s->step = NULL;
    return st;
}

static pd_status hpd_on_time_step(void* state, pd_world* w, pd_error* err) {
    return pd_hpd_factor(state, w->def.dt, err); /* L + M/h^2 at the new h */
}

/* About 4.2 h^3 bonds (j, rev, X, the coupling and k_ij of L, G) and the factor's fill; per
 * particle 9 vectors (q*, gradient, the optimiser's seven) and 2 per L-BFGS pair, 5 for the
 * collider contact, two 3x3 matrices (K^-1, F of Eq. 24) and 8 reals; the rows the contact's
 * hash grid keeps (its candidates: about the bonds). */
static size_t hpd_bytes_per_particle(const pd_scene* scene, double bond_fraction) {
    const pd_hpd_params* prm = scene->solver_params;
    size_t bonds = (size_t)(bond_fraction * 4.2 * prm->horizon * prm->horizon * prm->horizon) + 1;
    size_t per_bond = 2 * sizeof(uint32_t) + sizeof(pd_vec3) + 3 * sizeof(pd_real);
    size_t per_particle = (9 + 2 * (size_t)prm->history + 5) * sizeof(pd_vec3) +
                          2 * sizeof(pd_mat3) + 8 * sizeof(pd_real);
    double rows = prm->contact ? pd_hash_grid_kept_row_bytes(bonds) : 0;
    return bonds * (per_bond + 40) + per_particle + (size_t)ceil(rows);
}

pd_real pd_hpd_elastic_energy(pd_hpd_state* s, const pd_vec3* y) {
    hpd_ctx c = {s, y, NULL};
    return elastic_energy(s, &c);
}

const pd_solver_vtable pd_hyperelastic_pd_solver = {
    .name = "hyperelastic_pd",
    .paper = "Xu, He, Chen, Li, Wang 2018, Reformulating Hyperelastic Materials with Peridynamic "
             "Modeling",
    .params = &pd_hpd_param_table,
    .material_params = &pd_hpd_material_table,
    .check_material = pd_hpd_check_material,
    .create = pd_hpd_create,
    .destroy = pd_hpd_destroy,
    .step = hpd_step,
    .on_reorder = pd_hpd_on_reorder,
    .persistent = pd_hpd_persistent,
    .restored = pd_hpd_restored,
    .break_bonds = pd_hpd_break_bonds,
    .change_materials = pd_hpd_change_materials,
    .auto_time_step = PD_HPD_AUTO_DT,
    .on_time_step = hpd_on_time_step,
    .bytes_per_particle = hpd_bytes_per_particle,
    .contact_in_solve = 1,
    .capabilities =
        PD_CAP_ELASTIC | PD_CAP_SHELL | PD_CAP_FRACTURE | PD_CAP_CONTACT | PD_CAP_COLLIDER_FRICTION,
};
