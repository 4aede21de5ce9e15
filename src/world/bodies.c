/* Turning the scene's bodies into particles: sampling, mass, initial motion, rod ghosts, pins. */
#include "world/bodies.h"

#include <stdio.h>

#include "core/alloc.h"
#include "core/error.h"
#include "geometry/sampling.h"
#include "math/svd3.h"
#include "neighbor/isotropy.h"
#include "world/particles.h"

void pd_perpendicular_pair(pd_vec3 axis, pd_vec3* u, pd_vec3* v) {
    pd_vec3 a = pd_v3_scale(axis, 1.0 / pd_v3_len(axis));
    pd_vec3 t = fabs(a.x) < 0.9 ? pd_v3(1, 0, 0) : pd_v3(0, 1, 0);
    *u = pd_v3_cross(a, t);
    *u = pd_v3_scale(*u, 1.0 / pd_v3_len(*u));
    *v = pd_v3_cross(a, *u);
}

/* Direction of a rod: the cylinder axis, else the longest side of the box. */
static pd_vec3 rod_axis(const pd_shape_def* s) {
    if (s->type == PD_SHAPE_CYLINDER)
        return s->axis;
    pd_vec3 d = pd_v3_sub(s->max, s->min);
    if (d.x >= d.y && d.x >= d.z)
        return pd_v3(1, 0, 0);
    return d.y >= d.z ? pd_v3(0, 1, 0) : pd_v3(0, 0, 1);
}

static pd_status push_points(pd_world* w, const pd_body_def* b, int body, const pd_vec3* pts,
                             size_t n, pd_real vol, uint8_t flags) {
    pd_particles* p = &w->particles;
    pd_status st = pd_particles_reserve(p, p->count + n);
    if (st != PD_OK)
        return st;
    const pd_material_def* m = &w->scene->materials[b->material];
    for (size_t k = 0; k < n; ++k) {
        size_t i = pd_particles_push(p, pts[k]);
        p->volume[i] = vol;
        p->mass[i] = m->density * vol;
        p->spacing[i] = b->spacing;
        p->material[i] = b->material;
        p->body[i] = body;
        p->flags[i] = flags;
    }
    return PD_OK;
}

/* He 2017 Sec. 4.1, Fig. 6: a rod (one line of particles) cannot resist twist, so each rod
 * particle gets a ring of four ghost particles one spacing away, perpendicular to the rod. */
static pd_status push_rod_ghosts(pd_world* w, const pd_body_def* b, int body, const pd_vec3* pts,
                                 size_t n) {
    pd_vec3 u, v;
    pd_perpendicular_pair(rod_axis(&b->shape), &u, &v);
    pd_vec3 dirs[4] = {u, pd_v3_scale(u, -1), v, pd_v3_scale(v, -1)};
    for (int d = 0; d < 4; ++d) {
        for (size_t k = 0; k < n; ++k) {
            pd_vec3 g = pd_v3_madd(pts[k], b->spacing, dirs[d]);
            pd_status st =
                push_points(w, b, body, &g, 1, b->spacing * b->spacing * b->spacing, PD_P_GHOST);
            if (st != PD_OK)
                return st;
        }
    }
    return PD_OK;
}

static void set_initial_motion(pd_world* w, const pd_body_def* b, size_t first, size_t last) {
    pd_particles* p = &w->particles;
    pd_vec3 c = pd_v3(0, 0, 0);
    for (size_t i = first; i < last; ++i)
        c = pd_v3_add(c, p->pos[i]);
    c = pd_v3_scale(c, 1.0 / (pd_real)(last - first));
    for (size_t i = first; i < last; ++i) {
        if (p->flags[i] & PD_P_FIXED)
            continue;
        pd_vec3 r = pd_v3_sub(p->pos[i], c);
        p->vel[i] = pd_v3_add(b->velocity, pd_v3_cross(b->angular_velocity, r));
    }
}

static pd_vec3 region_center(const pd_shape_def* s) {
    switch (s->type) {
        case PD_SHAPE_BOX:
            return pd_v3_scale(pd_v3_add(s->min, s->max), 0.5);
        case PD_SHAPE_SPHERE:
            return s->center;
        case PD_SHAPE_CYLINDER:
            return pd_v3_madd(s->base, 0.5 * s->height, s->axis);
        default:
            return s->translate;
    }
}

static pd_status attach_pins(pd_world* w, const pd_body_def* b, int body, size_t first, size_t last,
                             char* path, size_t cap, pd_error* err) {
    pd_particles* p = &w->particles;
    for (int k = 0; k < b->pin_count; ++k) {
        pd_pin* pin = &w->pins[w->pin_count];
        pin->body = body;
        pin->index_in_body = k;
        pin->def = b->pins[k];
        pin->center = region_center(&b->pins[k].region);
        pin->force = pd_v3(0, 0, 0);
        size_t caught = 0;
        for (size_t i = first; i < last; ++i) {
            if (p->pin[i] < 0 && pd_shape_contains(&b->pins[k].region, p->rest[i])) {
                p->pin[i] = w->pin_count;
                p->flags[i] |= PD_P_PINNED;
                caught++;
            }
        }
        if (caught == 0) {
            snprintf(path, cap, "bodies[%d].pins[%d].region", body, k);
            return pd_fail(err, PD_ERR_BAD_SCENE, path,
                           "the pin region contains no particle of body '%s'", b->name);
        }
        w->pin_count++;
    }
    return PD_OK;
}

/* A particle's volume (its mass over the density): spacing^3 on a lattice (grid, jittered: one
 * point per cell); a Poisson-disk body's points are packed at their own density (0.85 spacing
 * apart at least: 2066 in the 0.3 x 0.08 x 0.08 m bar, 1.076 a spacing^3), so each gets the
 * shape's volume over their count, and the body the shape's volume and mass (spacing^3 made the
 * bar 7.6 % heavier than density times its volume, and every force read from its constraints
 * as much larger). */
static pd_status particle_volume(const pd_body_def* body, size_t n, pd_real* vol, const char* path,
                                 pd_error* err) {
    *vol = body->spacing * body->spacing * body->spacing;
    int disk = body->sampling == PD_SAMPLING_POISSON_DISK ||
               body->sampling == PD_SAMPLING_POISSON_DISK_RELAXED;
    if (!disk || body->kind == PD_BODY_ROD || n == 0)
        return PD_OK;
    double volume;
    pd_status st = pd_shape_occupied_volume(&body->shape, body->spacing, &volume, path, err);
    if (st == PD_OK && volume > 0)
        *vol = volume / (double)n;
    return st;
}

pd_status pd_world_add_bodies(pd_world* w, pd_error* err) {
    const pd_scene* s = w->scene;
    int pins = 0;
    for (int b = 0; b < s->body_count; ++b)
        pins += s->bodies[b].pin_count;
    w->pins = pins ? PD_NEW_ARRAY(pd_pin, pins) : NULL;
    if (pins && !w->pins)
        return PD_ERR_OUT_OF_MEMORY;
    char path[64];
    for (int b = 0; b < s->body_count; ++b) {
        const pd_body_def* body = &s->bodies[b];
        snprintf(path, sizeof path, "bodies[%d]", b);
        pd_vec3* pts = NULL;
        size_t n = 0;
        pd_status st = pd_sample_shape(&body->shape, body->spacing, body->sampling,
                                       s->world.seed + (uint64_t)b, &pts, &n, path, err);
        if (st != PD_OK)
            return st;
        size_t first = w->particles.count;
        uint8_t flags = body->kind == PD_BODY_FIXED   ? PD_P_FIXED
                        : body->kind == PD_BODY_SHELL ? PD_P_SHELL
                                                      : 0;
        pd_real vol;
        st = particle_volume(body, n, &vol, path, err);
        if (st == PD_OK)
            st = push_points(w, body, b, pts, n, vol, flags);
        if (st == PD_OK && body->kind == PD_BODY_ROD)
            st = push_rod_ghosts(w, body, b, pts, n);
        pd_free(pts, n * sizeof(pd_vec3));
        if (st != PD_OK)
            return st;
        size_t last = w->particles.count;
        set_initial_motion(w, body, first, last);
        st = attach_pins(w, body, b, first, last, path, sizeof path, err);
        if (st != PD_OK)
            return st;
    }
    return PD_OK;
}

/* A particle this far inside a collider (in spacings) counts as inside: rounding on a surface
 * the body merely touches is not. */
#define PD_INSIDE_TOLERANCE 1e-6

pd_status pd_world_check_clear_of_colliders(const pd_world* w, pd_error* err) {
    const pd_particles* p = &w->particles;
    for (int c = 0; c < w->colliders.count; ++c) {
        const pd_collider* col = &w->colliders.items[c];
        for (size_t i = 0; i < p->count; ++i) {
            if (p->flags[i] & (PD_P_CONSTRAINED | PD_P_GHOST))
                continue;
            pd_real d = pd_collider_sdf(col, p->pos[i], NULL);
            if (!(d < -PD_INSIDE_TOLERANCE * p->spacing[i]))
                continue;
            char path[64];
            int b = p->body[i];
            snprintf(path, sizeof path, "bodies[%d]", b);
            return pd_fail(err, PD_ERR_BAD_SCENE, path,
                           "body '%s' starts inside colliders[%d] (a particle at (%.4g, %.4g, "
                           "%.4g) is %.3g m deep); move the body or the collider so that they "
                           "do not overlap at t = 0",
                           w->scene->bodies[b].name, c, p->pos[i].x, p->pos[i].y, p->pos[i].z, -d);
        }
    }
    return PD_OK;
}

/* Families of a body that go into its direction check: at most this many of its fullest ones
 * (a sample of its interior: on a grid they all span the same directions). */
#define PD_DIRECTION_SAMPLE 64
/* A family whose second moment's smallest eigenvalue is below this fraction of its largest
 * spans a plane or a line (a one-layer body's): it cannot be an isotropic solid's. */
#define PD_PLANAR_FAMILY 1e-6
/* Largest deviation of the corrected fourth moment from isotropic that counts as isotropic
 * (pd_moment_fit_solve: ~1e-17 when the bond directions allow it, 0.067 with axis bonds only). */
#define PD_ISOTROPY_TOL 1e-6
/* The smallest horizon (in spacings) at which a grid's families hold more than axis bonds:
 * the face diagonals, sqrt(2) spacings away, rounded up. */
#define PD_GRID_MIN_HORIZON 1.42

static int planar_family(const pd_family* f, uint32_t i) {
    pd_mat3 k = pd_m3_zero();
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 X = pd_family_xi(f, i, b);
        pd_m3_add_outer(&k, 1.0, X, X);
    }
    pd_vec3 l;
    pd_mat3 q;
    pd_eigen_sym3(k, &l, &q);
    return !(l.x > PD_PLANAR_FAMILY * l.z);
}

/* The fourth moment of the fullest families of body b (free particles, not planar) corrected
 * as far as their bond directions allow: its deviation from isotropic, 0 for a body with no
 * such family. (-1: out of memory.) */
static pd_real body_direction_deviation(const pd_world* w, const pd_family* f, int body) {
    const pd_particles* p = &w->particles;
    uint32_t fullest = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (p->body[i] == body && !(p->flags[i] & (PD_P_CONSTRAINED | PD_P_GHOST)) &&
            f->offsets[i + 1] - f->offsets[i] > fullest)
            fullest = f->offsets[i + 1] - f->offsets[i];
    if (fullest < 2)
        return 0;
    pd_moment_fit* fit = pd_calloc(1, sizeof *fit);
    if (!fit)
        return -1;
    int added = 0;
    for (size_t i = 0; i < p->count && added < PD_DIRECTION_SAMPLE; ++i) {
        if (p->body[i] != body || (p->flags[i] & (PD_P_CONSTRAINED | PD_P_GHOST)) ||
            f->offsets[i + 1] - f->offsets[i] < 0.75 * fullest || planar_family(f, (uint32_t)i))
            continue;
        pd_moment_fit_add(fit, f, p->volume, (uint32_t)i);
        added++;
    }
    pd_direction_weight dw;
    pd_real dev = pd_moment_fit_solve(fit, &dw);
    pd_free(fit, sizeof *fit);
    return dev;
}

pd_status pd_world_check_families(const pd_world* w, const pd_family* f, pd_real horizon,
                                  pd_error* err) {
    const pd_particles* p = &w->particles;
    for (size_t i = 0; i < p->count; ++i)
        if (f->offsets[i + 1] - f->offsets[i] < 2 && !(p->flags[i] & PD_P_CONSTRAINED))
            return pd_fail(err, PD_ERR_BAD_SCENE, "solver.horizon",
                           "particle %d of body '%s' has fewer than 2 neighbours within the "
                           "horizon; raise solver.horizon or refine the body's spacing",
                           (int)p->id[i], w->scene->bodies[p->body[i]].name);
    /* He 2017 Sec. 3, Xu 2018 Sec. 3, Wang 2025 Sec. 4: a solid's bonds must resist shear. On a
     * grid a horizon below sqrt(2) spacings keeps the axis bonds alone: such a body has no shear
     * stiffness (hyperelastic_pd: a cantilever sagged 93 mm instead of 14; projective_pd: E along
     * [1,1,1] 0.001 of the asked value). Checked per solid body (shells and rods have planar
     * families of their own) by whether its families' fourth moment can be made isotropic
     * (neighbor/isotropy.h): only if their bond directions span enough of the quartic forms. */
    for (int b = 0; b < w->scene->body_count; ++b) {
        const pd_body_def* body = &w->scene->bodies[b];
        if (body->kind == PD_BODY_SHELL || body->kind == PD_BODY_ROD)
            continue;
        pd_real dev = body_direction_deviation(w, f, b);
        if (dev < 0)
            return PD_ERR_OUT_OF_MEMORY;
        if (dev > PD_ISOTROPY_TOL)
            return pd_fail(
                err, PD_ERR_BAD_SCENE, "solver.horizon",
                "the families of body '%s' (bodies[%d]) span too few bond directions "
                "for a solid (their fourth moment stays %.2g from isotropic): with "
                "solver.horizon %g a grid keeps only the axis bonds, and such a body has "
                "no shear stiffness; the smallest horizon accepted on a grid is %.2f "
                "spacings (the face diagonals join)",
                body->name, b, dev, horizon, PD_GRID_MIN_HORIZON);
    }
    return PD_OK;
}

/* Two bodies start interpenetrated when their particles are closer than the contact distance
 * d_c = (s_i + s_j) / 2 (src/contact/contact.h: grid-sampled bodies that touch have their outer
 * layers one spacing apart) by more than this fraction of d_c: the overlap of their sampled
 * shapes, as a body's particle inside a collider is one whose shape overlaps it by more than
 * half a spacing. Jittered bodies that touch come up to half a spacing closer. */
#define PD_OVERLAP_TOLERANCE 0.5

/* A pair of particles of bodies a < b closer than their contact distance. */
static int overlapping_pair(const pd_particles* p, uint32_t i, uint32_t j) {
    if (p->body[i] == p->body[j] || ((p->flags[i] | p->flags[j]) & PD_P_GHOST) ||
        ((p->flags[i] & PD_P_CONSTRAINED) && (p->flags[j] & PD_P_CONSTRAINED)))
        return 0;
    pd_real dc = 0.5 * (p->spacing[i] + p->spacing[j]);
    return pd_v3_len(pd_v3_sub(p->pos[j], p->pos[i])) < dc * (1 - 1e-9);
}

/* The overlap of bodies a and b: over the particles of each within the contact distance of
 * the other's, the least depth along x, y, z or the line between the bodies' centres by which
 * one side's layer (half a spacing beyond its particles) passes the other's. */
typedef struct overlap_extent {
    pd_real lo[2][4], hi[2][4], s[2];
} overlap_extent;

static pd_real overlap_depth(const pd_particles* p, const pd_neighbor_list* near, int a, int b,
                             pd_vec3 axis) {
    overlap_extent e;
    pd_vec3 dirs[4] = {pd_v3(1, 0, 0), pd_v3(0, 1, 0), pd_v3(0, 0, 1), axis};
    for (int side = 0; side < 2; ++side)
        for (int k = 0; k < 4; ++k)
            e.lo[side][k] = INFINITY, e.hi[side][k] = -INFINITY;
    e.s[0] = e.s[1] = 0;
    for (size_t i = 0; i < p->count; ++i) {
        if (p->body[i] != a && p->body[i] != b)
            continue;
        int close = 0;
        for (uint32_t k = near->offsets[i]; k < near->offsets[i + 1] && !close; ++k) {
            uint32_t j = near->indices[k];
            close = (p->body[j] == a || p->body[j] == b) && overlapping_pair(p, (uint32_t)i, j);
        }
        if (!close)
            continue;
        int side = p->body[i] == b;
        e.s[side] = fmax(e.s[side], p->spacing[i]);
        for (int k = 0; k < 4; ++k) {
            pd_real x = pd_v3_dot(p->pos[i], dirs[k]);
            e.lo[side][k] = fmin(e.lo[side][k], x), e.hi[side][k] = fmax(e.hi[side][k], x);
        }
    }
    pd_real depth = INFINITY, half = 0.5 * (e.s[0] + e.s[1]);
    for (int k = 0; k < 4; ++k) {
        if (k == 3 && !(pd_v3_len(axis) > 0))
            continue;
        pd_real b_after_a = e.hi[0][k] - e.lo[1][k] + half; /* b on the + side */
        pd_real a_after_b = e.hi[1][k] - e.lo[0][k] + half;
        depth = fmin(depth, fmin(b_after_a, a_after_b));
    }
    return depth;
}

/* The unit vector from body a's centre to body b's (0 when they coincide). */
static pd_vec3 centre_line(const pd_particles* p, int a, int b) {
    pd_vec3 c[2] = {pd_v3(0, 0, 0), pd_v3(0, 0, 0)};
    double n[2] = {0, 0};
    for (size_t i = 0; i < p->count; ++i) {
        int side = p->body[i] == a ? 0 : p->body[i] == b ? 1 : -1;
        if (side >= 0 && !(p->flags[i] & PD_P_GHOST)) {
            c[side] = pd_v3_add(c[side], p->pos[i]);
            n[side] += 1;
        }
    }
    pd_vec3 d = pd_v3_sub(pd_v3_scale(c[1], 1 / n[1]), pd_v3_scale(c[0], 1 / n[0]));
    pd_real len = pd_v3_len(d);
    return len > 1e-12 ? pd_v3_scale(d, 1 / len) : pd_v3(0, 0, 0);
}

/* The first pair of bodies (a, b) after (*a, *b) in order with particles closer than their
 * contact distance, and one such pair of particles; 0 when there is none. */
static int next_touching_bodies(const pd_particles* p, const pd_neighbor_list* near, int* a, int* b,
                                uint32_t* pi, uint32_t* pj) {
    int64_t best = -1, after = (int64_t)*a * INT32_MAX + *b, key;
    for (size_t i = 0; i < p->count; ++i)
        for (uint32_t k = near->offsets[i]; k < near->offsets[i + 1]; ++k) {
            uint32_t j = near->indices[k];
            if (j <= i || !overlapping_pair(p, (uint32_t)i, j))
                continue;
            int lo = p->body[i] < p->body[j] ? p->body[i] : p->body[j];
            int hi = p->body[i] < p->body[j] ? p->body[j] : p->body[i];
            key = (int64_t)lo * INT32_MAX + hi;
            if (key > after && (best < 0 || key < best)) {
                best = key, *pi = (uint32_t)i, *pj = j;
            }
        }
    if (best < 0)
        return 0;
    *a = (int)(best / INT32_MAX), *b = (int)(best % INT32_MAX);
    return 1;
}

pd_status pd_world_check_bodies_apart(const pd_world* w, pd_error* err) {
    const pd_particles* p = &w->particles;
    if (w->scene->body_count < 2 || p->count == 0)
        return PD_OK;
    pd_real widest = 0;
    for (size_t i = 0; i < p->count; ++i)
        widest = fmax(widest, p->spacing[i]);
    pd_hash_grid grid = {0};
    pd_neighbor_list near = {0};
    pd_status st = pd_neighbors_build(&grid, p->pos, p->count, widest * (1 - 1e-9), &near);
    int a = 0, b = 0;
    uint32_t pi = 0, pj = 0;
    while (st == PD_OK && next_touching_bodies(p, &near, &a, &b, &pi, &pj)) {
        pd_real depth = overlap_depth(p, &near, a, b, centre_line(p, a, b));
        pd_real dc = 0.5 * (w->scene->bodies[a].spacing + w->scene->bodies[b].spacing);
        if (!(depth > PD_OVERLAP_TOLERANCE * dc))
            continue;
        char path[64];
        snprintf(path, sizeof path, "bodies[%d]", b);
        pd_vec3 x = p->pos[pi], y = p->pos[pj];
        st = pd_fail(err, PD_ERR_BAD_SCENE, path,
                     "body '%s' starts overlapping bodies[%d] ('%s') by %.3g m (particles %.3g "
                     "m apart at (%.4g, %.4g, %.4g) and (%.4g, %.4g, %.4g), closer than the "
                     "contact distance %.3g m): the methods would leave them interpenetrated or "
                     "throw them apart; move them apart so that they at most touch (an overlap "
                     "up to %.3g m, half the contact distance, is taken as touching)",
                     w->scene->bodies[b].name, a, w->scene->bodies[a].name, depth,
                     pd_v3_len(pd_v3_sub(y, x)), x.x, x.y, x.z, y.x, y.y, y.z, dc,
                     PD_OVERLAP_TOLERANCE * dc);
    }
    pd_neighbor_list_destroy(&near);
    pd_hash_grid_destroy(&grid);
    return st;
}
