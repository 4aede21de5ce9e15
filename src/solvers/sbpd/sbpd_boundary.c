/* Rigid boundary particles (Wang et al. 2025 Sec. 6, Eq. 25-27). The paper stores on each rigid
 * boundary particle the signed distance phi to the boundary and its gradient; a particle within
 * the horizon r of one collides with the boundary (|phi| < r), and is displaced along the
 * gradient by a depth from phi, with the mass weights of Eq. 25 (w = 0 for the rigid side).
 *
 * Ours are the particles of fixed bodies within r of their body's surface (deeper ones never
 * touch anything: the paper's sparse field), each keeping phi and which body it belongs to. A
 * moving particle within r of one of them collides with that body: phi and its gradient are
 * the body's shape's signed distance evaluated at the moving particle itself (box, sphere,
 * cylinder or mesh, as a collider), and it is pushed along the gradient until phi = s / 2, its
 * half spacing, where two particles touch. The paper's d = min(|phi_i|, |phi_j|) needs a phi at
 * the moving particle, which it does not say how to get. Read from the samples instead (the
 * tangent plane of the sample nearest to the particle, or of the sample whose surface point is
 * nearest), a box's edges broke it: an edge particle's distance is a tie between two faces and
 * it keeps one normal, so grains going over a floor's edge were lifted by most of a spacing in
 * one step and flung off at 65 m/s (measured). Against the particles' own gaps instead of phi
 * (the pairs of sbpd_contact.c), a block slid into the hollows between a slab's particles and
 * stopped with no friction (0.5 m/s to rest within 45 mm, measured); against phi the slab is
 * flat. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "boundary/collider.h"
#include "core/alloc.h"
#include "core/error.h"
#include "solvers/sbpd/sbpd_data.h"
#include "world/world.h"

/* The most fixed bodies one particle is near at once (more are not looked at). */
#define NEAR_BODIES 4

static pd_collider_type collider_of(pd_shape_type t) {
    switch (t) {
        case PD_SHAPE_BOX:
            return PD_COLLIDER_BOX;
        case PD_SHAPE_SPHERE:
            return PD_COLLIDER_SPHERE;
        case PD_SHAPE_CYLINDER:
            return PD_COLLIDER_CYLINDER;
        default:
            return PD_COLLIDER_MESH;
    }
}

static size_t cell_count(const pd_sbpd_boundary* b) {
    return (size_t)b->dims[0] * (size_t)b->dims[1] * (size_t)b->dims[2];
}

static int cell_coord(const pd_sbpd_boundary* b, pd_real v, pd_real origin, int dim) {
    pd_real c = floor((v - origin) / b->cell);
    return c < 0 ? 0 : c >= dim ? dim - 1 : (int)c;
}

static size_t cell_index(const pd_sbpd_boundary* b, int i, int j, int k) {
    return ((size_t)k * (size_t)b->dims[1] + (size_t)j) * (size_t)b->dims[0] + (size_t)i;
}

static size_t cell_of(const pd_sbpd_boundary* b, pd_vec3 p) {
    return cell_index(b, cell_coord(b, p.x, b->origin.x, b->dims[0]),
                      cell_coord(b, p.y, b->origin.y, b->dims[1]),
                      cell_coord(b, p.z, b->origin.z, b->dims[2]));
}

static int allocate(pd_sbpd_boundary* b, size_t n) {
    b->at = PD_NEW_ARRAY(pd_vec3, n + 1);
    b->phi = PD_NEW_ARRAY(pd_real, n + 1);
    b->shape = PD_NEW_ARRAY(int32_t, n + 1);
    return b->at && b->phi && b->shape;
}

static void release(pd_sbpd_boundary* b, size_t n) {
    PD_FREE_ARRAY(b->at, pd_vec3, n + 1);
    PD_FREE_ARRAY(b->phi, pd_real, n + 1);
    PD_FREE_ARRAY(b->shape, int32_t, n + 1);
    b->at = NULL, b->phi = NULL, b->shape = NULL;
}

/* Each fixed body's shape as a solid collider (negative inside it), in body order; body_shape
 * maps a body to its collider (-1: not fixed). */
static pd_status make_shapes(pd_sbpd_boundary* b, const pd_world* w, pd_error* err) {
    int bodies = w->scene->body_count, count = 0;
    pd_collider_def* defs = PD_NEW_ARRAY(pd_collider_def, (size_t)bodies + 1);
    b->body_shape = PD_NEW_ARRAY(int32_t, (size_t)bodies + 1);
    b->shape_friction = PD_NEW_ARRAY(pd_real, (size_t)bodies + 1);
    b->body_count = bodies;
    if (!defs || !b->body_shape || !b->shape_friction) {
        PD_FREE_ARRAY(defs, pd_collider_def, (size_t)bodies + 1);
        return PD_ERR_OUT_OF_MEMORY;
    }
    for (int k = 0; k < bodies; ++k) {
        const pd_body_def* body = &w->scene->bodies[k];
        b->body_shape[k] = -1;
        if (body->kind != PD_BODY_FIXED)
            continue;
        defs[count] = pd_default_collider_def();
        defs[count].type = collider_of(body->shape.type);
        defs[count].shape = body->shape;
        b->shape_friction[count] =
            ((const pd_sbpd_material_params*)w->scene->materials[body->material].method_params)
                ->contact_friction;
        b->body_shape[k] = count++;
    }
    pd_error why;
    pd_status st = pd_colliders_create(defs, count, &b->shapes, &why);
    PD_FREE_ARRAY(defs, pd_collider_def, (size_t)bodies + 1);
    if (st == PD_OK)
        return PD_OK;
    int shape = 0, k = 0; /* the fixed body whose shape failed: colliders[shape] of the message */
    sscanf(why.path, "colliders[%d]", &shape);
    while (k + 1 < bodies && b->body_shape[k] != shape)
        ++k;
    char path[64];
    snprintf(path, sizeof path, "bodies[%d].shape", k);
    return pd_fail(err, st == PD_ERR_OUT_OF_MEMORY ? st : PD_ERR_BAD_SCENE, path,
                   "a fixed body is sbpd's rigid boundary (Sec. 6), which needs the signed "
                   "distance of its shape: %s",
                   why.message);
}

/* The fixed particles within the horizon of their body's surface, with phi and their body's
 * shape, and the cell each falls in. */
static size_t sample(pd_sbpd_boundary* b, const pd_particles* p, pd_real horizon,
                     uint32_t* cell_of_entry) {
    size_t k = 0;
    for (size_t i = 0; i < p->count; ++i) {
        int shape = b->body_shape[p->body[i]];
        if (shape < 0)
            continue;
        pd_real phi = pd_collider_sdf(&b->shapes.items[shape], p->pos[i], NULL);
        if (!(fabs(phi) < horizon * p->spacing[i]))
            continue;
        b->at[k] = p->pos[i], b->phi[k] = phi, b->shape[k] = shape;
        cell_of_entry[k++] = (uint32_t)cell_of(b, p->pos[i]);
    }
    return k;
}

/* The entries in cell order (a counting sort): cell_start[c] .. cell_start[c + 1] are c's. */
static pd_status sort_into_cells(pd_sbpd_boundary* b, const uint32_t* cell_of_entry,
                                 size_t sampled) {
    size_t cells = cell_count(b), n = b->count;
    pd_sbpd_boundary sorted = {0};
    b->cell_start = PD_NEW_ARRAY(uint32_t, cells + 1);
    uint32_t* next = PD_NEW_ARRAY(uint32_t, cells + 1);
    int ok = b->cell_start && next && allocate(&sorted, n);
    for (size_t k = 0; ok && k < n; ++k)
        ++b->cell_start[cell_of_entry[k] + 1];
    for (size_t c = 0; ok && c < cells; ++c)
        b->cell_start[c + 1] += b->cell_start[c];
    if (ok)
        memcpy(next, b->cell_start, cells * sizeof *next);
    for (size_t k = 0; ok && k < n; ++k) {
        uint32_t to = next[cell_of_entry[k]]++;
        sorted.at[to] = b->at[k], sorted.phi[to] = b->phi[k], sorted.shape[to] = b->shape[k];
    }
    PD_FREE_ARRAY(next, uint32_t, cells + 1);
    release(b, sampled);
    b->at = sorted.at, b->phi = sorted.phi, b->shape = sorted.shape;
    if (!ok)
        release(b, n);
    return ok ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

/* The dense grid over the fixed particles, cells a horizon of the widest spacing wide (so the
 * 27 cells about a point hold every boundary particle within its horizon). */
static void size_grid(pd_sbpd_boundary* b, const pd_particles* p, pd_real horizon) {
    pd_vec3 lo = pd_v3(INFINITY, INFINITY, INFINITY), hi = pd_v3(-INFINITY, -INFINITY, -INFINITY);
    pd_real widest = 0;
    for (size_t i = 0; i < p->count; ++i) {
        widest = fmax(widest, p->spacing[i]);
        if (!(p->flags[i] & PD_P_FIXED))
            continue;
        lo = pd_v3(fmin(lo.x, p->pos[i].x), fmin(lo.y, p->pos[i].y), fmin(lo.z, p->pos[i].z));
        hi = pd_v3(fmax(hi.x, p->pos[i].x), fmax(hi.y, p->pos[i].y), fmax(hi.z, p->pos[i].z));
    }
    b->cell = horizon * widest;
    b->origin = lo;
    pd_real e[3] = {hi.x - lo.x, hi.y - lo.y, hi.z - lo.z};
    for (int a = 0; a < 3; ++a)
        b->dims[a] = (int)floor(e[a] / b->cell) + 1;
}

pd_status pd_sbpd_boundary_init(pd_sbpd_state* s, const pd_world* w, pd_error* err) {
    const pd_particles* p = &w->particles;
    pd_sbpd_boundary* b = &s->boundary;
    memset(b, 0, sizeof *b);
    size_t fixed = 0;
    for (size_t i = 0; i < p->count; ++i)
        fixed += (p->flags[i] & PD_P_FIXED) != 0;
    if (!s->prm.contact || fixed == 0)
        return PD_OK;
    size_grid(b, p, s->prm.horizon);
    uint32_t* cell_of_entry = PD_NEW_ARRAY(uint32_t, fixed + 1);
    b->count = fixed; /* the arrays' size until sorted (pd_sbpd_boundary_free reads it) */
    pd_status st =
        cell_of_entry && allocate(b, fixed) ? make_shapes(b, w, err) : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK) {
        b->count = sample(b, p, s->prm.horizon, cell_of_entry);
        st = sort_into_cells(b, cell_of_entry, fixed);
    }
    PD_FREE_ARRAY(cell_of_entry, uint32_t, fixed + 1);
    return st;
}

void pd_sbpd_boundary_free(pd_sbpd_boundary* b) {
    if (b->cell_start)
        PD_FREE_ARRAY(b->cell_start, uint32_t, cell_count(b) + 1);
    release(b, b->count);
    if (b->body_shape) {
        PD_FREE_ARRAY(b->body_shape, int32_t, (size_t)b->body_count + 1);
        PD_FREE_ARRAY(b->shape_friction, pd_real, (size_t)b->body_count + 1);
    }
    pd_colliders_destroy(&b->shapes);
    memset(b, 0, sizeof *b);
}

/* The fixed bodies with a boundary particle within r of y (at most NEAR_BODIES). */
static int near_shapes(const pd_sbpd_boundary* b, pd_vec3 y, pd_real r, int32_t* out) {
    int c[3] = {cell_coord(b, y.x, b->origin.x, b->dims[0]),
                cell_coord(b, y.y, b->origin.y, b->dims[1]),
                cell_coord(b, y.z, b->origin.z, b->dims[2])};
    int found = 0;
    for (int dk = -1; dk <= 1; ++dk)
        for (int dj = -1; dj <= 1; ++dj)
            for (int di = -1; di <= 1; ++di) {
                int i = c[0] + di, j = c[1] + dj, k = c[2] + dk;
                if (i < 0 || j < 0 || k < 0 || i >= b->dims[0] || j >= b->dims[1] ||
                    k >= b->dims[2])
                    continue;
                size_t cell = cell_index(b, i, j, k);
                for (uint32_t e = b->cell_start[cell]; e < b->cell_start[cell + 1]; ++e) {
                    if (!(pd_v3_len2(pd_v3_sub(y, b->at[e])) < r * r))
                        continue;
                    int seen = 0;
                    for (int m = 0; m < found; ++m)
                        seen |= out[m] == b->shape[e];
                    if (!seen && found < NEAR_BODIES)
                        out[found++] = b->shape[e];
                }
            }
    return found;
}

/* The least phi at y over the fixed bodies with a boundary particle within i's horizon (the
 * body i is deepest in, or nearest to), that body's collider in *shape and the gradient of its
 * phi there in *n; infinity when none is near. */
static pd_real nearest_body(const pd_sbpd_state* s, uint32_t i, pd_vec3 y, int32_t* shape,
                            pd_vec3* n) {
    const pd_sbpd_boundary* b = &s->boundary;
    pd_real least = INFINITY;
    if (b->count == 0 || (s->flags[i] & PD_P_CONSTRAINED))
        return least;
    int32_t shapes[NEAR_BODIES];
    int found = near_shapes(b, y, s->prm.horizon * s->spacing[i], shapes);
    for (int m = 0; m < found; ++m) {
        pd_vec3 nm;
        pd_real phi = pd_collider_sdf(&b->shapes.items[shapes[m]], y, &nm);
        if (phi < least)
            least = phi, *shape = shapes[m], *n = nm;
    }
    return least;
}

pd_real pd_sbpd_boundary_push(const pd_sbpd_state* s, uint32_t i, pd_vec3 y, pd_vec3 x,
                              pd_vec3* push) {
    int32_t shape = -1;
    pd_vec3 n = pd_v3(0, 0, 0);
    pd_real depth = 0.5 * s->spacing[i] - nearest_body(s, i, y, &shape, &n);
    *push = pd_v3(0, 0, 0);
    if (!(depth > 0)) /* half a spacing from the surface touches, as two particles do */
        return 0;
    pd_real mu = sqrt(s->contact_friction[s->material[i]] * s->boundary.shape_friction[shape]);
    pd_vec3 cut = pd_sbpd_friction_cut(mu, pd_v3_sub(y, x), n, depth);
    *push = pd_v3_sub(pd_v3_scale(n, depth), cut);
    return depth;
}

pd_vec3 pd_sbpd_boundary_normal(const pd_sbpd_state* s, uint32_t i, pd_vec3 y) {
    int32_t shape = -1;
    pd_vec3 n = pd_v3(0, 0, 0);
    nearest_body(s, i, y, &shape, &n);
    return n;
}
