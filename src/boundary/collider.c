/* Colliders: exact signed distances of a plane, box, sphere and capped cylinder, and of
 * triangle meshes (geometry/mesh_sdf.h) (obstacles, or containers when `inside`), their rigid
 * motion (velocity + angular velocity, or piecewise-linear keyframes) and the projection of
 * particles out of them with slip + Coulomb friction or no-slip. */
#include "boundary/collider.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/keyframes.h"
#include "geometry/mesh.h"
#include "geometry/mesh_sdf.h"
#include "parallel/parallel.h"

/* Particles per parallel chunk: large enough that scheduling overhead is negligible. */
#define PD_COLLIDER_GRAIN 2048

/* ---- geometry helper ---- */

/* A unit vector perpendicular to the unit vector a, chosen deterministically. */
static pd_vec3 any_perpendicular(pd_vec3 a) {
    pd_vec3 e = fabs(a.x) < 0.57 ? pd_v3(1, 0, 0) : pd_v3(0, 1, 0);
    pd_vec3 p = pd_v3_cross(a, e);
    return pd_v3_scale(p, 1 / pd_v3_len(p));
}

/* ---- shape SDFs in the rest frame (negative inside the solid, gradient as normal) ---- */

static pd_real plane_sdf(const pd_collider_def* d, pd_vec3 p, pd_vec3* n) {
    *n = d->normal;
    return pd_v3_dot(pd_v3_sub(p, d->point), d->normal);
}

static pd_real sign_or_plus(pd_real x) {
    return x < 0 ? -1 : 1;
}

/* Exact box distance: outside, the length of the positive part of q = |p - c| - h; inside,
 * the largest (least negative) component of q, whose face gives the normal. */
static pd_real box_sdf(const pd_shape_def* s, pd_vec3 p, pd_vec3* n) {
    pd_vec3 c = pd_v3_scale(pd_v3_add(s->min, s->max), 0.5);
    pd_vec3 h = pd_v3_scale(pd_v3_sub(s->max, s->min), 0.5);
    pd_vec3 r = pd_v3_sub(p, c);
    pd_real rv[3] = {r.x, r.y, r.z}, hv[3] = {h.x, h.y, h.z}, q[3], qp[3];
    int kmax = 0;
    for (int k = 0; k < 3; ++k) {
        q[k] = fabs(rv[k]) - hv[k];
        qp[k] = q[k] > 0 ? q[k] : 0;
        if (q[k] > q[kmax])
            kmax = k;
    }
    pd_real out = sqrt(qp[0] * qp[0] + qp[1] * qp[1] + qp[2] * qp[2]);
    if (out > 0) {
        *n = pd_v3(sign_or_plus(rv[0]) * qp[0] / out, sign_or_plus(rv[1]) * qp[1] / out,
                   sign_or_plus(rv[2]) * qp[2] / out);
        return out;
    }
    pd_real nv[3] = {0, 0, 0};
    nv[kmax] = sign_or_plus(rv[kmax]);
    *n = pd_v3(nv[0], nv[1], nv[2]);
    return q[kmax];
}

static pd_real sphere_sdf(const pd_shape_def* s, pd_vec3 p, pd_vec3* n) {
    pd_vec3 r = pd_v3_sub(p, s->center);
    pd_real len = pd_v3_len(r);
    /* At the centre every direction is nearest: y (up) is as good as any. */
    *n = len > 0 ? pd_v3_scale(r, 1 / len) : pd_v3(0, 1, 0);
    return len - s->radius;
}

/* Capped cylinder as a 2-D box in (radial distance, axial offset from the mid-height). */
static pd_real cylinder_sdf(const pd_shape_def* s, pd_vec3 p, pd_vec3* n) {
    pd_vec3 r = pd_v3_sub(p, s->base);
    pd_real along = pd_v3_dot(r, s->axis);
    pd_vec3 radial = pd_v3_madd(r, -along, s->axis);
    pd_real rho = pd_v3_len(radial);
    pd_vec3 er = rho > 0 ? pd_v3_scale(radial, 1 / rho) : any_perpendicular(s->axis);
    pd_real mid = along - 0.5 * s->height;
    pd_vec3 ea = pd_v3_scale(s->axis, sign_or_plus(mid));
    pd_real dr = rho - s->radius, da = fabs(mid) - 0.5 * s->height;
    pd_real pr = dr > 0 ? dr : 0, pa = da > 0 ? da : 0;
    pd_real out = sqrt(pr * pr + pa * pa);
    if (out > 0) {
        *n = pd_v3_add(pd_v3_scale(er, pr / out), pd_v3_scale(ea, pa / out));
        return out;
    }
    *n = dr >= da ? er : ea;
    return dr >= da ? dr : da;
}

static pd_real rest_sdf(const pd_collider* col, pd_vec3 p, pd_vec3* n) {
    const pd_collider_def* d = &col->def;
    switch (d->type) {
        case PD_COLLIDER_PLANE:
            return plane_sdf(d, p, n);
        case PD_COLLIDER_BOX:
            return box_sdf(&d->shape, p, n);
        case PD_COLLIDER_SPHERE:
            return sphere_sdf(&d->shape, p, n);
        case PD_COLLIDER_CYLINDER:
            return cylinder_sdf(&d->shape, p, n);
        case PD_COLLIDER_MESH:
            return pd_mesh_sdf_eval(col->mesh, p, n);
        default:
            /* Unknown types are refused by pd_colliders_create; nothing else reaches here. */
            *n = pd_v3(0, 1, 0);
            return INFINITY;
    }
}

/* ---- pose ---- */

/* Back to the rest frame: x_rest = R^T (x - c - T) + c. */
static pd_vec3 to_rest_frame(const pd_collider* col, pd_vec3 p) {
    pd_vec3 local = pd_v3_sub(p, pd_v3_add(col->center, col->translation));
    return pd_v3_add(pd_m3_mulv(pd_m3_transpose(col->rotation), local), col->center);
}

int pd_collider_clear_of(const pd_collider* col, pd_vec3 p, pd_real margin) {
    if (col->def.type != PD_COLLIDER_MESH) /* analytic distances are cheap: no bound kept */
        return 0;
    return pd_mesh_sdf_lower_bound(col->mesh, to_rest_frame(col, p)) >= margin;
}

pd_real pd_collider_sdf(const pd_collider* col, pd_vec3 p, pd_vec3* normal) {
    pd_vec3 n_rest;
    pd_real d = rest_sdf(col, to_rest_frame(col, p), &n_rest);
    pd_vec3 n = pd_m3_mulv(col->rotation, n_rest);
    /* A container allows its interior: flip the sign so the wall's outside is "solid". Meshes
     * exchange their sides themselves (an open mesh's wall is not the complement). */
    if (col->def.inside && col->def.type != PD_COLLIDER_PLANE &&
        col->def.type != PD_COLLIDER_MESH) {
        d = -d;
        n = pd_v3_scale(n, -1);
    }
    if (normal)
        *normal = n;
    return d;
}

/* A container box's six faces in the rest frame, each turned with the box: face 2a + 0 is
 * the one at max along axis a (inward normal -e_a), 2a + 1 the one at min (+e_a). */
static int container_box_faces(const pd_collider* col, pd_vec3 p, pd_real* dist, pd_vec3* normal) {
    const pd_shape_def* s = &col->def.shape;
    pd_vec3 q = to_rest_frame(col, p);
    pd_real lo[3] = {s->min.x, s->min.y, s->min.z}, hi[3] = {s->max.x, s->max.y, s->max.z};
    pd_real x[3] = {q.x, q.y, q.z};
    for (int a = 0; a < 3; ++a) {
        pd_real e[3] = {0, 0, 0};
        e[a] = 1;
        pd_vec3 n = pd_m3_mulv(col->rotation, pd_v3(e[0], e[1], e[2]));
        dist[2 * a] = hi[a] - x[a], normal[2 * a] = pd_v3_scale(n, -1);
        dist[2 * a + 1] = x[a] - lo[a], normal[2 * a + 1] = n;
    }
    return 6;
}

int pd_collider_faces(const pd_collider* col, pd_vec3 p, pd_real dist[PD_COLLIDER_MAX_FACES],
                      pd_vec3 normal[PD_COLLIDER_MAX_FACES]) {
    if (col->def.type == PD_COLLIDER_BOX && col->def.inside)
        return container_box_faces(col, p, dist, normal);
    dist[0] = pd_collider_sdf(col, p, &normal[0]);
    return 1;
}

pd_vec3 pd_collider_to_world(const pd_collider* col, pd_vec3 rest_point) {
    pd_vec3 r = pd_m3_mulv(col->rotation, pd_v3_sub(rest_point, col->center));
    return pd_v3_add(pd_v3_add(col->center, col->translation), r);
}

pd_vec3 pd_collider_velocity_at(const pd_collider* col, pd_vec3 p) {
    pd_vec3 pivot = pd_v3_add(col->center, col->translation);
    return pd_v3_add(col->lin_vel, pd_v3_cross(col->ang_vel, pd_v3_sub(p, pivot)));
}

static pd_vec3 rest_center(const pd_collider_def* d) {
    switch (d->type) {
        case PD_COLLIDER_PLANE:
            return d->point;
        case PD_COLLIDER_BOX:
            return pd_v3_scale(pd_v3_add(d->shape.min, d->shape.max), 0.5);
        case PD_COLLIDER_SPHERE:
            return d->shape.center;
        case PD_COLLIDER_CYLINDER:
            return pd_v3_madd(d->shape.base, 0.5 * d->shape.height, d->shape.axis);
        default:
            return pd_v3(0, 0, 0);
    }
}

/* Keyframed motion: the one interpolator of core/keyframes.c. t ends a step, so the velocity is
 * the one the collider had during it: the segment ending at t when t falls on a key. */
static void keyframe_pose(pd_collider* col, pd_real t) {
    pd_keyframe_motion m =
        pd_keyframes_motion_ending(col->def.keyframes, col->def.keyframe_count, t);
    col->translation = m.translate;
    col->rotation = m.rotation;
    col->lin_vel = m.velocity;
    col->ang_vel = m.angular_velocity;
}

static void velocity_pose(pd_collider* col, pd_real t) {
    col->lin_vel = col->def.velocity;
    col->ang_vel = col->def.angular_velocity;
    col->translation = pd_v3_scale(col->def.velocity, t);
    pd_real w = pd_v3_len(col->def.angular_velocity);
    col->rotation = w > 0
                        ? pd_rotation_axis_angle(col->def.angular_velocity, w * t * (180.0 / PD_PI))
                        : pd_m3_identity();
}

void pd_colliders_update(pd_colliders* c, pd_real t) {
    for (int k = 0; k < c->count; ++k) {
        pd_collider* col = &c->items[k];
        if (col->def.keyframe_count > 0)
            keyframe_pose(col, t);
        else
            velocity_pose(col, t);
    }
}

/* The pose pd_colliders_update set, as a keyframe at t. */
static pd_keyframe pose_now(const pd_collider* col, pd_real t) {
    pd_keyframe k = {.t = t, .translate = col->translation};
    pd_rotation_to_axis_angle(col->rotation, &k.rotate_axis, &k.rotate_degrees);
    return k;
}

pd_status pd_collider_move_to(pd_collider* col, pd_real t0, pd_keyframe to, const char* path,
                              pd_error* err) {
    pd_status st = pd_keyframe_check_move(&to, t0, path, err);
    if (st != PD_OK)
        return st;
    if (col->def.keyframe_count != 2) { /* the scene's keys, or none: room for two */
        pd_keyframe* keys = PD_NEW_ARRAY(pd_keyframe, 2);
        if (!keys)
            return pd_fail(err, PD_ERR_OUT_OF_MEMORY, path, "out of memory");
        if (col->def.keyframes)
            PD_FREE_ARRAY(col->def.keyframes, pd_keyframe, col->def.keyframe_count);
        col->def.keyframes = keys;
        col->def.keyframe_count = 2;
    }
    col->def.keyframes[0] = pose_now(col, t0);
    col->def.keyframes[1] = to;
    return PD_OK;
}

/* ---- creation and validation ---- */

static pd_status fail_key(pd_error* err, pd_status st, int k, const char* key, const char* msg) {
    char path[128];
    snprintf(path, sizeof path, "colliders[%d].%s", k, key);
    return pd_fail(err, st, path, "%s", msg);
}

static int normalize_in_place(pd_vec3* v) {
    pd_real len = pd_v3_len(*v);
    if (!(len > 0) || !isfinite(len))
        return 0;
    *v = pd_v3_scale(*v, 1 / len);
    return 1;
}

static pd_status validate_shape(pd_collider_def* d, int k, pd_error* err) {
    pd_shape_def* s = &d->shape;
    switch (d->type) {
        case PD_COLLIDER_PLANE:
            if (!normalize_in_place(&d->normal))
                return fail_key(err, PD_ERR_BAD_SCENE, k, "normal",
                                "plane normal must be a non-zero vector");
            return PD_OK;
        case PD_COLLIDER_BOX:
            if (!(s->min.x < s->max.x && s->min.y < s->max.y && s->min.z < s->max.z))
                return fail_key(err, PD_ERR_BAD_SCENE, k, "max",
                                "box max must be greater than min in x, y and z");
            return PD_OK;
        case PD_COLLIDER_SPHERE:
            if (!(s->radius > 0))
                return fail_key(err, PD_ERR_BAD_SCENE, k, "radius", "radius must be > 0");
            return PD_OK;
        case PD_COLLIDER_CYLINDER:
            if (!(s->radius > 0))
                return fail_key(err, PD_ERR_BAD_SCENE, k, "radius", "radius must be > 0");
            if (!(s->height > 0))
                return fail_key(err, PD_ERR_BAD_SCENE, k, "height", "height must be > 0");
            if (!normalize_in_place(&s->axis))
                return fail_key(err, PD_ERR_BAD_SCENE, k, "axis",
                                "cylinder axis must be a non-zero vector");
            return PD_OK;
        case PD_COLLIDER_MESH:
            return PD_OK; /* checked while loading (load_mesh) */
        default:
            return fail_key(err, PD_ERR_BAD_SCENE, k, "type", "unknown collider type");
    }
}

static pd_status validate_keyframes(pd_collider_def* d, int k, pd_error* err) {
    char key[64];
    for (int j = 0; j < d->keyframe_count; ++j) {
        pd_keyframe* kf = &d->keyframes[j];
        if (j > 0 && !(kf->t > d->keyframes[j - 1].t)) {
            snprintf(key, sizeof key, "keyframes[%d].t", j);
            return fail_key(err, PD_ERR_BAD_SCENE, k, key,
                            "keyframe times must be strictly increasing");
        }
        if (kf->rotate_degrees != 0 && !normalize_in_place(&kf->rotate_axis)) {
            snprintf(key, sizeof key, "keyframes[%d].rotate", j);
            return fail_key(err, PD_ERR_BAD_SCENE, k, key,
                            "a keyframe rotation needs a non-zero axis");
        }
    }
    return PD_OK;
}

/* Loads the mesh file (scale, rotate, translate of the def) and builds its distance field;
 * the rest centre is the middle of the mesh's bounding box. */
static pd_status load_mesh(pd_collider* col, int k, pd_error* err) {
    char path[64];
    snprintf(path, sizeof path, "colliders[%d]", k);
    if (col->def.shape.type != PD_SHAPE_MESH)
        return fail_key(err, PD_ERR_INVALID_ARGUMENT, k, "type",
                        "a mesh collider needs a mesh shape (shape.type = mesh)");
    pd_mesh mesh;
    pd_status st = pd_mesh_load(&col->def.shape, &mesh, path, err);
    if (st != PD_OK)
        return st;
    col->mesh = pd_alloc(sizeof *col->mesh);
    if (!col->mesh)
        st = pd_fail(err, PD_ERR_OUT_OF_MEMORY, path, "out of memory");
    else
        st = pd_mesh_sdf_build(&mesh, col->def.thickness, col->def.inside, col->mesh, path, err);
    if (st != PD_OK && col->mesh) {
        pd_free(col->mesh, sizeof *col->mesh);
        col->mesh = NULL;
    }
    pd_mesh_free(&mesh);
    if (st == PD_OK)
        col->center = pd_v3_scale(pd_v3_add(col->mesh->lo, col->mesh->hi), 0.5);
    return st;
}

/* Copies def into col (keyframes into memory the collider owns) and checks it. */
static pd_status collider_init(pd_collider* col, const pd_collider_def* def, int k, pd_error* err) {
    col->def = *def;
    col->def.keyframes = NULL;
    col->def.keyframe_count = 0;
    if (!(def->friction >= 0))
        return fail_key(err, PD_ERR_BAD_SCENE, k, "friction", "friction must be >= 0");
    pd_status st = validate_shape(&col->def, k, err);
    if (st != PD_OK)
        return st;
    if (def->type != PD_COLLIDER_MESH && def->thickness != 0)
        return fail_key(err, PD_ERR_BAD_SCENE, k, "thickness",
                        "thickness is only for mesh colliders");
    if (def->keyframe_count > 0) {
        if (!def->keyframes)
            return fail_key(err, PD_ERR_INVALID_ARGUMENT, k, "keyframes", "keyframes missing");
        col->def.keyframes = PD_NEW_ARRAY(pd_keyframe, def->keyframe_count);
        if (!col->def.keyframes)
            return fail_key(err, PD_ERR_OUT_OF_MEMORY, k, "keyframes", "out of memory");
        col->def.keyframe_count = def->keyframe_count;
        memcpy(col->def.keyframes, def->keyframes, sizeof(pd_keyframe) * def->keyframe_count);
        st = validate_keyframes(&col->def, k, err);
        if (st != PD_OK)
            return st;
    }
    col->center = rest_center(&col->def);
    return def->type == PD_COLLIDER_MESH ? load_mesh(col, k, err) : PD_OK;
}

pd_status pd_colliders_create(const pd_collider_def* defs, int count, pd_colliders* out,
                              pd_error* err) {
    out->count = 0;
    out->items = NULL;
    if (count < 0 || (count > 0 && !defs))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "colliders", "bad collider list");
    if (count == 0)
        return PD_OK;
    out->items = PD_NEW_ARRAY(pd_collider, count);
    if (!out->items)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "colliders", "out of memory");
    out->count = count;
    for (int k = 0; k < count; ++k) {
        pd_status st = collider_init(&out->items[k], &defs[k], k, err);
        if (st != PD_OK) {
            pd_colliders_destroy(out);
            return st;
        }
    }
    pd_colliders_update(out, 0);
    return PD_OK;
}

void pd_colliders_destroy(pd_colliders* c) {
    if (!c || !c->items)
        return;
    for (int k = 0; k < c->count; ++k) {
        pd_collider_def* d = &c->items[k].def;
        if (d->keyframes)
            PD_FREE_ARRAY(d->keyframes, pd_keyframe, d->keyframe_count);
        if (c->items[k].mesh) {
            pd_mesh_sdf_free(c->items[k].mesh);
            pd_free(c->items[k].mesh, sizeof *c->items[k].mesh);
        }
    }
    PD_FREE_ARRAY(c->items, pd_collider, c->count);
    c->items = NULL;
    c->count = 0;
}

/* ---- projection ---- */

/* A particle within this distance of a surface is in contact (m). */
#define PD_CONTACT_SLOP 1e-9

/* Velocity after contact with a surface of normal n moving at vc: the approaching normal
 * part relative to the surface is removed; slip shrinks the tangential part by at most
 * friction * |dv_n| (Coulomb), no-slip drops it. */
static pd_vec3 contact_velocity(const pd_collider_def* d, pd_vec3 v, pd_vec3 vc, pd_vec3 n) {
    pd_vec3 vr = pd_v3_sub(v, vc);
    pd_real vn = pd_v3_dot(vr, n);
    pd_real dvn = vn < 0 ? -vn : 0;
    pd_real vn_kept = vn > 0 ? vn : 0;
    pd_vec3 base = pd_v3_madd(vc, vn_kept, n);
    if (d->boundary == PD_BOUNDARY_NO_SLIP)
        return base;
    pd_vec3 vt = pd_v3_madd(vr, -vn, n);
    pd_real vt_len = pd_v3_len(vt);
    pd_real cut = d->friction * dvn;
    if (vt_len <= cut)
        return base;
    return pd_v3_madd(base, 1 - cut / vt_len, vt);
}

typedef struct project_ctx {
    const pd_colliders* c;
    pd_vec3* pos;
    pd_vec3* vel;
    const uint8_t* skip;
    uint8_t* touched_mask;
    atomic_size_t touched;
} project_ctx;

/* Projects one particle against every collider in order; 1 if it touched any. */
static int project_particle(const pd_colliders* c, pd_vec3* x, pd_vec3* v) {
    int touched = 0;
    for (int k = 0; k < c->count; ++k) {
        const pd_collider* col = &c->items[k];
        if (pd_collider_clear_of(col, *x, PD_CONTACT_SLOP))
            continue;
        pd_vec3 n;
        pd_real d = pd_collider_sdf(col, *x, &n);
        if (!(d < PD_CONTACT_SLOP)) /* resting on the surface counts: friction acts on it */
            continue;
        *x = pd_v3_madd(*x, -d, n);
        if (v)
            *v = contact_velocity(&col->def, *v, pd_collider_velocity_at(col, *x), n);
        touched = 1;
    }
    return touched;
}

static void project_range(void* vctx, size_t begin, size_t end, int thread) {
    project_ctx* ctx = vctx;
    size_t touched = 0;
    for (size_t i = begin; i < end; ++i) {
        int hit = 0;
        if (!ctx->skip || !ctx->skip[i])
            hit = project_particle(ctx->c, &ctx->pos[i], ctx->vel ? &ctx->vel[i] : NULL);
        if (ctx->touched_mask)
            ctx->touched_mask[i] = (uint8_t)hit;
        touched += (size_t)hit;
    }
    /* An integer sum: the total is the same whatever order the chunks finish in. */
    atomic_fetch_add(&ctx->touched, touched);
}

size_t pd_colliders_project(const pd_colliders* c, size_t n, pd_vec3* pos, pd_vec3* vel,
                            const uint8_t* skip, uint8_t* touched, pd_real dt) {
    (void)dt; /* poses are set by pd_colliders_update; contact is resolved at the end pose */
    if (touched && (!c || c->count == 0))
        memset(touched, 0, n);
    if (!c || c->count == 0 || n == 0)
        return 0;
    project_ctx ctx = {.c = c, .pos = pos, .vel = vel, .skip = skip, .touched_mask = touched};
    atomic_init(&ctx.touched, 0);
    pd_parallel_for(n, PD_COLLIDER_GRAIN, project_range, &ctx);
    return atomic_load(&ctx.touched);
}
