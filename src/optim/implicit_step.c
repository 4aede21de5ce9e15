/* The implicit step the energy-based methods share (implicit_step.h). */
#include "optim/implicit_step.h"

#include <math.h>

void pd_implicit_predict(const pd_particles* p, pd_real h, pd_vec3 gravity, pd_vec3* out) {
    for (size_t i = 0; i < p->count; ++i)
        out[i] = p->flags[i] & PD_P_CONSTRAINED
                     ? p->pos[i]
                     : pd_v3_madd(pd_v3_madd(p->pos[i], h, p->vel[i]), h * h, gravity);
}

/* Step 3: friction's limits from x + h v (constrained particles at y*), projected out of the
 * colliders and evaluated there. */
static void friction_setup(const pd_implicit_step* m, const pd_step_context* ctx) {
    if (!m->cc->colliders->count)
        return;
    const pd_particles* p = ctx->particles;
    pd_vec3* y = m->opt->y;
    for (size_t i = 0; i < p->count; ++i)
        y[i] = p->flags[i] & PD_P_CONSTRAINED ? m->ystar[i]
                                              : pd_v3_madd(p->pos[i], ctx->dt, p->vel[i]);
    pd_collider_contact_project(m->cc, y);
    pd_real r;
    int not_gradient;
    m->problem.evaluate(m->problem.ctx, y, m->opt->r, &r, &not_gradient);
    pd_collider_contact_renew_friction(m->cc, p->pos, y, m->opt->r);
}

/* Step 5's yardstick: sqrt(sum (m (|g| + |v| / h))^2). */
static pd_real force_scale(const pd_step_context* ctx) {
    const pd_particles* p = ctx->particles;
    pd_real sum = 0, g = pd_v3_len(ctx->gravity);
    for (size_t i = 0; i < p->count; ++i) {
        pd_real f = p->mass[i] * (g + pd_v3_len(p->vel[i]) / ctx->dt);
        sum += f * f;
    }
    return sqrt(sum);
}

/* Step 7. */
static void finish(const pd_implicit_step* m, const pd_step_context* ctx) {
    pd_particles* p = ctx->particles;
    const pd_vec3* y = m->opt->y;
    for (size_t i = 0; i < p->count; ++i) {
        if (p->flags[i] & PD_P_CONSTRAINED) {
            p->force[i] = pd_v3_scale(m->gradient[i], -1); /* the pin's reaction */
            continue;
        }
        p->vel[i] = pd_v3_scale(pd_v3_sub(y[i], p->pos[i]), 1 / ctx->dt);
        p->pos[i] = y[i];
    }
}

pd_status pd_implicit_step_run(const pd_implicit_step* m, const pd_step_context* ctx) {
    pd_particles* p = ctx->particles;
    pd_implicit_predict(p, ctx->dt, ctx->gravity, m->ystar);
    pd_collider_contact_begin_step(m->cc, ctx->colliders, p->pos, m->ystar, p->spacing,
                                   ctx->contact_skip, ctx->dt);
    pd_status st = m->contact ? pd_contact_begin_step(m->contact, p->pos, ctx->dt) : PD_OK;
    if (st != PD_OK)
        return st;
    friction_setup(m, ctx);
    m->opt->on_iteration = ctx->on_iteration; /* the world's observer, if any */
    m->opt->on_iteration_ctx = ctx->on_iteration_ctx;
    pd_real r, merit = m->start_point(m->ctx, &r);
    if (m->before_solve && (st = m->before_solve(m->ctx, &merit, &r)) != PD_OK)
        return st;
    if ((st = m->solve(m->ctx, merit, r, force_scale(ctx))) != PD_OK)
        return st;
    if (m->after_solve)
        m->after_solve(m->ctx);
    finish(m, ctx);
    return PD_OK;
}
