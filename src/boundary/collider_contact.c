/* Contact with colliders inside an implicit solve (collider_contact.h). */
#include "boundary/collider_contact.h"

#include <math.h>
#include <string.h>

#include "boundary/friction.h"
#include "core/alloc.h"
#include "linalg/chebyshev.h"
#include "parallel/parallel.h"

/* Particles a task of begin_step's pass takes: each costs a distance query per collider. */
#define PD_CC_GRAIN 256

/* The per-particle arrays every scene with colliders uses: one list drives allocation and
 * release. */
#define CC_ARRAYS(X)                                                                               \
    X(skip, uint8_t)                                                                               \
    X(held, uint8_t)                                                                               \
    X(blocked, pd_vec3)                                                                            \
    X(push, pd_real)                                                                               \
    X(anchor, pd_vec3)                                                                             \
    X(normal, pd_vec3)                                                                             \
    X(limit, pd_real)                                                                              \
    X(ktan, pd_real)                                                                               \
    X(active, uint8_t)

/* The start queries (pd_collider_contact_begin_step), where a collider is a mesh. */
#define CC_START_ARRAYS(X)                                                                         \
    X(start_collider, int32_t)                                                                     \
    X(start_dist, pd_real)                                                                         \
    X(start_normal, pd_vec3)

/* The i-th of count collider definitions `stride` bytes apart. */
static const pd_collider_def* def_at(const pd_collider_def* defs, size_t stride, int i) {
    return (const pd_collider_def*)((const char*)defs + (size_t)i * stride);
}

/* The colliders may make a corner (two surfaces at once) unless they are a lone plane: the
 * residual with its normal taken out moves a particle along it, at the same distance, and
 * corner_normal finds nothing. Only a no_slip collider's contacts are stuck. */
unsigned pd_collider_contact_features(const pd_collider_def* defs, int count, size_t stride) {
    unsigned f = 0;
    if (count > 1 || (count == 1 && defs->type != PD_COLLIDER_PLANE))
        f |= PD_CC_CORNERS;
    for (int k = 0; k < count; ++k) {
        if (def_at(defs, stride, k)->boundary == PD_BOUNDARY_NO_SLIP)
            f |= PD_CC_STICKS;
        if (def_at(defs, stride, k)->type == PD_COLLIDER_MESH)
            f |= PD_CC_MESH;
    }
    return f;
}

size_t pd_collider_contact_bytes(unsigned features) {
    size_t bytes = 3 * sizeof(pd_vec3) + 3 * sizeof(pd_real) + 3; /* CC_ARRAYS */
    if (features & PD_CC_MESH)                                    /* CC_START_ARRAYS */
        bytes += sizeof(int32_t) + sizeof(pd_real) + sizeof(pd_vec3);
    if (features & PD_CC_CORNERS)
        bytes += sizeof(pd_vec3);
    if (features & PD_CC_STICKS)
        bytes += sizeof(pd_vec3) + 1;
    return bytes;
}

pd_status pd_collider_contact_init(pd_collider_contact* c, size_t n,
                                   const pd_colliders* colliders) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->stick_speed = PD_FRICTION_STICK_SPEED;
    int ok = 1;
#define ALLOC_ONE(a, T) ok &= (c->a = PD_NEW_ARRAY(T, n + 1)) != NULL;
    CC_ARRAYS(ALLOC_ONE)
    unsigned f = PD_CC_CORNERS | PD_CC_STICKS | PD_CC_MESH;
    if (colliders)
        f = colliders->count ? pd_collider_contact_features(&colliders->items[0].def,
                                                            colliders->count, sizeof(pd_collider))
                             : 0;
    if (f & PD_CC_MESH) {
        CC_START_ARRAYS(ALLOC_ONE)
    }
#undef ALLOC_ONE
    if (f & PD_CC_CORNERS)
        ok &= (c->blocked2 = PD_NEW_ARRAY(pd_vec3, n + 1)) != NULL;
    if (f & PD_CC_STICKS) {
        ok &= (c->stuck = PD_NEW_ARRAY(uint8_t, n + 1)) != NULL;
        ok &= (c->line = PD_NEW_ARRAY(pd_vec3, n + 1)) != NULL;
    }
    if (!ok) {
        pd_collider_contact_free(c);
        return PD_ERR_OUT_OF_MEMORY;
    }
    return PD_OK;
}

void pd_collider_contact_free(pd_collider_contact* c) {
    size_t n = c->n;
#define FREE_ONE(a, T) PD_FREE_ARRAY(c->a, T, n + 1);
    CC_ARRAYS(FREE_ONE)
    CC_START_ARRAYS(FREE_ONE)
#undef FREE_ONE
    PD_FREE_ARRAY(c->blocked2, pd_vec3, n + 1);
    PD_FREE_ARRAY(c->stuck, uint8_t, n + 1);
    PD_FREE_ARRAY(c->line, pd_vec3, n + 1);
    memset(c, 0, sizeof *c);
}

typedef struct begin_ctx {
    pd_collider_contact* c;
    const pd_vec3* start;
    const pd_vec3* predicted;
    const uint8_t* skip_always;
} begin_ctx;

/* Particles [begin, end): skipped or not (begin_step), and where not, the collider nearest the
 * start position. */
static void begin_range(void* vctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const begin_ctx* b = vctx;
    pd_collider_contact* c = b->c;
    const pd_colliders* col = c->colliders;
    for (size_t i = begin; i < end; ++i) {
        int near = 0;
        for (int k = 0; k < col->count && !near; ++k)
            near = pd_collider_sdf(&col->items[k], b->predicted[i], NULL) < 3 * c->spacing[i];
        c->skip[i] = (uint8_t)(!near || (b->skip_always && b->skip_always[i]));
        if (!c->start_collider)
            continue;
        c->start_collider[i] = -1;
        if (!c->skip[i])
            c->start_collider[i] =
                pd_colliders_nearest(col, b->start[i], &c->start_dist[i], &c->start_normal[i]);
    }
}

/* The collider nearest particle i's step-start position (not skipped): begin_step's where a
 * collider is a mesh, else found now (an analytic distance costs less than the 36 bytes a
 * particle of keeping it); its signed distance and outward normal there. */
static int start_nearest(const pd_collider_contact* c, size_t i, pd_real* d, pd_vec3* n) {
    if (!c->start_collider)
        return pd_colliders_nearest(c->colliders, c->start[i], d, n);
    *d = c->start_dist[i], *n = c->start_normal[i];
    return c->start_collider[i];
}

void pd_collider_contact_begin_step(pd_collider_contact* c, const pd_colliders* colliders,
                                    const pd_vec3* start, const pd_vec3* predicted,
                                    const pd_real* spacing, const uint8_t* skip_always,
                                    pd_real dt) {
    memset(c->held, 0, c->n);
    memset(c->limit, 0, c->n * sizeof(pd_real));
    if (c->stuck)
        memset(c->stuck, 0, c->n);
    c->colliders = colliders;
    c->spacing = spacing;
    c->start = start;
    c->dt = dt;
    if (!colliders || !colliders->count)
        return;
    begin_ctx b = {c, start, predicted, skip_always};
    pd_parallel_for(c->n, PD_CC_GRAIN, begin_range, &b);
}

void pd_collider_contact_project(pd_collider_contact* c, pd_vec3* y) {
    if (!c->colliders || !c->colliders->count)
        return;
    for (size_t i = 0; i < c->n; ++i)
        if (c->limit[i] > 0)
            y[i] = pd_friction_snap(y[i], c->anchor[i], c->normal[i], c->limit[i]);
    pd_colliders_project(c->colliders, c->n, y, NULL, c->skip, c->held, c->dt);
}

pd_vec3 pd_collider_contact_filter(const pd_collider_contact* c, size_t i, pd_vec3 v) {
    if (c->stuck && c->stuck[i])
        v = pd_v3_scale(c->normal[i], pd_v3_dot(v, c->normal[i]));
    pd_vec3 n = c->blocked[i];
    v = pd_v3_madd(v, -pd_v3_dot(v, n), n);
    if (!c->blocked2)
        return v;
    pd_vec3 m = c->blocked2[i];
    return pd_v3_madd(v, -pd_v3_dot(v, m), m);
}

/* A second surface in a corner: the residual r, its first blocked normal n taken out, still
 * moves the particle (along -r) into a collider a thousandth of a spacing away (the nearest
 * collider reports one surface only: a floor beside a wall, a container's other face). Returns
 * that surface's normal made orthogonal to n, or 0. */
static pd_vec3 corner_normal(const pd_collider_contact* c, size_t i, pd_vec3 y, pd_vec3 r,
                             pd_vec3 n) {
    pd_real len = pd_v3_len(r);
    if (!(len > 0) || !c->spacing)
        return pd_v3(0, 0, 0);
    pd_real d;
    pd_vec3 m;
    pd_colliders_nearest(c->colliders, pd_v3_madd(y, -1e-3 * c->spacing[i] / len, r), &d, &m);
    if (!(d < 0))
        return pd_v3(0, 0, 0);
    m = pd_v3_madd(m, -pd_v3_dot(m, n), n);
    pd_real lm = pd_v3_len(m);
    return lm > 1e-6 ? pd_v3_scale(m, 1 / lm) : pd_v3(0, 0, 0);
}

pd_real pd_collider_contact_apply(pd_collider_contact* c, size_t i, pd_vec3 y, pd_vec3* r) {
    pd_real d = 0;
    uint8_t stuck = 0;
    c->blocked[i] = pd_v3(0, 0, 0);
    if (c->blocked2)
        c->blocked2[i] = pd_v3(0, 0, 0);
    c->push[i] = 0;
    c->ktan[i] = 0;
    if (c->limit[i] > 0)
        d = pd_friction_apply(r, y, c->anchor[i], c->normal[i], c->limit[i], c->stick_speed * c->dt,
                              &c->ktan[i], &stuck);
    if (c->stuck) { /* stuck is only set by a no_slip collider's infinite limit */
        c->stuck[i] = stuck;
        c->line[i] = stuck ? c->normal[i] : pd_v3(0, 0, 0);
    }
    if (c->held[i]) {
        pd_vec3 n;
        pd_colliders_nearest(c->colliders, y, NULL, &n);
        pd_real rn = pd_v3_dot(*r, n);
        if (rn > 0) {
            c->blocked[i] = n;
            c->push[i] = rn;
            *r = pd_collider_contact_filter(c, i, *r);
            pd_vec3 m = c->blocked2 ? corner_normal(c, i, y, *r, n) : pd_v3(0, 0, 0);
            if (pd_v3_dot(*r, m) > 0) {
                c->blocked2[i] = m;
                *r = pd_collider_contact_filter(c, i, *r);
            }
        }
    }
    return d;
}

/* Whether particle i (not skipped) touched a collider at the step's start position, by the
 * nearest one begin_step found there. A no_slip collider holds the particles within half a
 * spacing of it (the grain's radius), or within the method's hold distance: a granular or fluid
 * particle rests there, on the density the collider's share gives it (src/sph/wall_density.h),
 * not on the surface, and would otherwise slide on the floor without friction (He 2017 Sec. 8
 * holds such particles by ghost particles bonded to them). */
static int touching_at_start(const pd_collider_contact* c, size_t i) {
    pd_real d;
    pd_vec3 n;
    int k = start_nearest(c, i, &d, &n);
    if (k < 0)
        return 0;
    int sticks = c->colliders->items[k].def.boundary == PD_BOUNDARY_NO_SLIP && c->spacing;
    if (!sticks)
        return d < PD_FRICTION_TOUCH;
    return d <= (c->hold ? c->hold[i] : 0.5 * c->spacing[i]);
}

/* Particle i's friction limit from the iterate y with residual r: mu lambda when it touches a
 * collider (at its start position, or held at y), else 0; *col and *n get the collider and
 * its normal (at y when held, else at the start) when it touches. */
static pd_real renewed_limit(const pd_collider_contact* c, size_t i, pd_vec3 y, pd_vec3 r,
                             const pd_collider** col, pd_vec3* n) {
    *col = NULL;
    if (c->skip[i] || (!c->held[i] && !touching_at_start(c, i)))
        return 0;
    pd_real d;
    int k =
        c->held[i] ? pd_colliders_nearest(c->colliders, y, NULL, n) : start_nearest(c, i, &d, n);
    *col = &c->colliders->items[k];
    pd_real rn = c->push[i] > 0 ? c->push[i] : pd_v3_dot(r, *n);
    return pd_friction_limit(&(*col)->def, rn);
}

/* Particle i's friction from the iterate: anchor, normal and limit (renewed_limit). */
static void renew_one(pd_collider_contact* c, size_t i, pd_vec3 x, pd_vec3 y, pd_vec3 r) {
    const pd_collider* col;
    pd_vec3 n;
    c->limit[i] = renewed_limit(c, i, y, r, &col, &n);
    if (!col)
        return;
    c->anchor[i] = pd_friction_anchor(col, x, c->dt);
    c->normal[i] = n;
}

pd_real pd_collider_contact_friction_change(const pd_collider_contact* c, const pd_vec3* y,
                                            const pd_vec3* r) {
    if (!c->colliders || !c->colliders->count)
        return 0;
    pd_real sum = 0;
    for (size_t i = 0; i < c->n; ++i) {
        const pd_collider* col;
        pd_vec3 n;
        pd_real old = c->limit[i], now = renewed_limit(c, i, y[i], r[i], &col, &n);
        if (isinf(old) != isinf(now))
            return INFINITY; /* a no_slip contact came or went */
        if (isfinite(old))
            sum += (now - old) * (now - old);
    }
    return sqrt(sum);
}

int pd_collider_contact_renew_friction(pd_collider_contact* c, const pd_vec3* x, const pd_vec3* y,
                                       const pd_vec3* r) {
    if (!c->colliders || !c->colliders->count)
        return 0;
    pd_real change = 0, total = 0;
    int switched = 0;
    for (size_t i = 0; i < c->n; ++i) {
        pd_real old = c->limit[i];
        renew_one(c, i, x[i], y[i], r[i]);
        if ((old > 0) != (c->limit[i] > 0) || isinf(old) != isinf(c->limit[i]))
            switched = 1;
        else if (isfinite(old) && old > 0)
            change += fabs(c->limit[i] - old), total += old;
    }
    return switched || change > 0.01 * total;
}

void pd_collider_contact_lag_friction(pd_collider_contact* c, const pd_real* fn) {
    if (!c->colliders || !c->colliders->count)
        return;
    for (size_t i = 0; i < c->n; ++i) {
        if (isinf(c->limit[i]) || c->skip[i])
            continue; /* no_slip: held whatever the force */
        if (!touching_at_start(c, i))
            c->limit[i] = 0;
        else if (!isnan(fn[i])) { /* anchor and normal: set by the renewal of step 3 */
            pd_real d;
            pd_vec3 n;
            int k = start_nearest(c, i, &d, &n);
            c->limit[i] = pd_friction_limit(&c->colliders->items[k].def, fn[i]);
        }
    }
}

static int nonzero(pd_vec3 v) {
    return v.x != 0 || v.y != 0 || v.z != 0;
}

void pd_collider_contact_sweeps(pd_collider_contact* c, pd_chebyshev_def* def) {
    for (size_t i = 0; i < c->n; ++i)
        c->active[i] =
            (uint8_t)(nonzero(c->blocked[i]) || (c->blocked2 && nonzero(c->blocked2[i])) ||
                      (c->line && nonzero(c->line[i])) || c->ktan[i] > 0);
    def->active = c->active;
    def->blocked = c->blocked;
    def->blocked2 = c->blocked2;
    def->line = c->line;
    def->tangent_k = c->ktan;
    def->tangent_n = c->normal;
}
