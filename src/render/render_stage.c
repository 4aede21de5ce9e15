/* The colliders in a render: planes as a ground with a grid, boxes, spheres and capped
 * cylinders ray-cast exactly in their rest frame (a collider is its rest shape moved by one
 * rigid motion, boundary/collider.h), meshes rasterised triangle by triangle, all into the
 * particles' z-buffer. An obstacle shows its outside; a container (`inside`) shows only its far
 * walls, a cut-away, so that what it holds stays in view. The camera is never inside a drawn
 * solid: a solid the eye is in, or a plane it is behind, is left out. */
#include <float.h>
#include <stdio.h>

#include "boundary/collider.h"
#include "core/alloc.h"
#include "core/error.h"
#include "geometry/mesh.h"
#include "render/render_internal.h"

struct pd_render_stage {
    pd_colliders colliders;
    pd_mesh* meshes; /* per collider: the triangles in the rest pose (none for analytic) */
    double* outward; /* per collider: +1 / -1 when a mesh's faces wind outward / inward */
};

/* Albedos (linear RGB): a light ground with darker grid lines, steel-blue obstacles, lighter
 * container walls; none of them on the particles' colormap, so that a test can tell them. */
static const float k_ground[3] = {0.86f, 0.84f, 0.80f};
static const float k_grid[3] = {0.60f, 0.58f, 0.55f};
static const float k_obstacle[3] = {0.50f, 0.58f, 0.72f};
static const float k_container[3] = {0.80f, 0.82f, 0.86f};
#define PD_STAGE_SHADOW_DARKEN 0.45f
#define PD_GROUND_EXTENT       3.0 /* ground disc radius, in view-box diagonals */

/* ---- stage ---- */

pd_status pd_render_stage_create(const pd_collider_def* defs, int count, pd_render_stage** out,
                                 pd_error* err) {
    *out = NULL;
    pd_render_stage* s = pd_calloc(1, sizeof *s);
    if (!s)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "colliders", "out of memory");
    pd_status st = pd_colliders_create(defs, count, &s->colliders, err);
    if (st == PD_OK && count > 0) {
        s->meshes = pd_calloc((size_t)count, sizeof *s->meshes);
        s->outward = pd_calloc((size_t)count, sizeof *s->outward);
        if (!s->meshes || !s->outward)
            st = pd_fail(err, PD_ERR_OUT_OF_MEMORY, "colliders", "out of memory");
    }
    for (int k = 0; st == PD_OK && k < count; ++k) {
        if (defs[k].type != PD_COLLIDER_MESH)
            continue;
        char path[64];
        snprintf(path, sizeof path, "colliders[%d].shape", k);
        st = pd_mesh_load(&defs[k].shape, &s->meshes[k], path, err);
        s->outward[k] = st == PD_OK && pd_mesh_signed_volume(&s->meshes[k]) < 0 ? -1.0 : 1.0;
    }
    if (st != PD_OK) {
        pd_render_stage_destroy(s);
        return st;
    }
    *out = s;
    return PD_OK;
}

void pd_render_stage_destroy(pd_render_stage* s) {
    if (!s)
        return;
    int count = s->colliders.count;
    for (int k = 0; s->meshes && k < count; ++k)
        pd_mesh_free(&s->meshes[k]);
    pd_free(s->meshes, (size_t)count * sizeof *s->meshes);
    pd_free(s->outward, (size_t)count * sizeof *s->outward);
    pd_colliders_destroy(&s->colliders);
    pd_free(s, sizeof *s);
}

void pd_render_stage_pose(pd_render_stage* s, double t) {
    if (s)
        pd_colliders_update(&s->colliders, t);
}

/* ---- ray against a rest shape ---- */

/* Entry and exit of a ray o + t d through a solid, with the outward normals there. */
typedef struct pd_span {
    double tn, tf;
    pd_vec3 nn, nf;
} pd_span;

static double axis_of(pd_vec3 v, int k) {
    return k == 0 ? v.x : (k == 1 ? v.y : v.z);
}

static pd_vec3 unit_axis(int k, double sign) {
    return pd_v3(k == 0 ? sign : 0, k == 1 ? sign : 0, k == 2 ? sign : 0);
}

/* Slab test (Kay and Kajiya 1986). */
static int ray_box(const pd_shape_def* b, pd_vec3 o, pd_vec3 d, pd_span* s) {
    s->tn = -DBL_MAX;
    s->tf = DBL_MAX;
    s->nn = s->nf = pd_v3(0, 1, 0); /* d != 0 sets both below */
    for (int k = 0; k < 3; ++k) {
        double ok = axis_of(o, k), dk = axis_of(d, k);
        double lo = axis_of(b->min, k), hi = axis_of(b->max, k);
        if (fabs(dk) < 1e-300) {
            if (ok < lo || ok > hi)
                return 0;
            continue;
        }
        double t1 = (lo - ok) / dk, t2 = (hi - ok) / dk;
        double sign = dk > 0 ? 1.0 : -1.0;
        if (fmin(t1, t2) > s->tn) {
            s->tn = fmin(t1, t2);
            s->nn = unit_axis(k, -sign);
        }
        if (fmax(t1, t2) < s->tf) {
            s->tf = fmax(t1, t2);
            s->nf = unit_axis(k, sign);
        }
    }
    return s->tn <= s->tf;
}

static int ray_sphere(const pd_shape_def* b, pd_vec3 o, pd_vec3 d, pd_span* s) {
    pd_vec3 oc = pd_v3_sub(o, b->center);
    double a = pd_v3_dot(d, d), half_b = pd_v3_dot(oc, d);
    double c = pd_v3_dot(oc, oc) - b->radius * b->radius;
    double disc = half_b * half_b - a * c;
    if (disc < 0 || a <= 0)
        return 0;
    double root = sqrt(disc);
    s->tn = (-half_b - root) / a;
    s->tf = (-half_b + root) / a;
    s->nn = pd_v3_scale(pd_v3_madd(oc, s->tn, d), 1.0 / b->radius);
    s->nf = pd_v3_scale(pd_v3_madd(oc, s->tf, d), 1.0 / b->radius);
    return 1;
}

/* Outward normal of a capped cylinder's side at the point o + t d. */
static pd_vec3 cylinder_side_normal(const pd_shape_def* b, pd_vec3 oc, pd_vec3 d, double t) {
    pd_vec3 p = pd_v3_madd(oc, t, d);
    pd_vec3 radial = pd_v3_madd(p, -pd_v3_dot(p, b->axis), b->axis);
    double len = pd_v3_len(radial);
    return len > 0 ? pd_v3_scale(radial, 1.0 / len) : b->axis;
}

/* The axial slab [0, height] intersected with the infinite cylinder of `radius`. */
static int ray_cylinder(const pd_shape_def* b, pd_vec3 o, pd_vec3 d, pd_span* s) {
    pd_vec3 oc = pd_v3_sub(o, b->base);
    double ao = pd_v3_dot(oc, b->axis), ad = pd_v3_dot(d, b->axis);
    pd_vec3 ocr = pd_v3_madd(oc, -ao, b->axis), dr = pd_v3_madd(d, -ad, b->axis);
    double ta0 = -DBL_MAX, ta1 = DBL_MAX, tc0 = -DBL_MAX, tc1 = DBL_MAX;
    if (fabs(ad) > 1e-300) {
        double t1 = -ao / ad, t2 = (b->height - ao) / ad;
        ta0 = fmin(t1, t2);
        ta1 = fmax(t1, t2);
    } else if (ao < 0 || ao > b->height) {
        return 0;
    }
    double a = pd_v3_dot(dr, dr), half_b = pd_v3_dot(ocr, dr);
    double c = pd_v3_dot(ocr, ocr) - b->radius * b->radius;
    if (a > 1e-300) {
        double disc = half_b * half_b - a * c;
        if (disc < 0)
            return 0;
        tc0 = (-half_b - sqrt(disc)) / a;
        tc1 = (-half_b + sqrt(disc)) / a;
    } else if (c > 0) {
        return 0;
    }
    double cap = ad > 0 ? 1.0 : -1.0; /* entering through the base (-axis) when going up */
    s->tn = fmax(ta0, tc0);
    s->tf = fmin(ta1, tc1);
    s->nn = ta0 > tc0 ? pd_v3_scale(b->axis, -cap) : cylinder_side_normal(b, oc, d, s->tn);
    s->nf = ta1 < tc1 ? pd_v3_scale(b->axis, cap) : cylinder_side_normal(b, oc, d, s->tf);
    return s->tn <= s->tf;
}

/* ---- ray against a posed collider ---- */

typedef struct pd_hit {
    double t;
    pd_vec3 normal; /* unit, world frame, outward of the surface met */
    int k;          /* collider */
} pd_hit;

/* A collider's pose, inverted once per frame: x_rest = rt (x - pivot) + center. */
typedef struct pd_posed {
    const pd_collider* col;
    pd_mat3 rt;
    pd_vec3 pivot;
} pd_posed;

static pd_posed posed(const pd_collider* col) {
    pd_posed p = {col, pd_m3_transpose(col->rotation), pd_v3_add(col->center, col->translation)};
    return p;
}

/* Nearest surface the ray o + t d (t > t_min) meets on an analytic collider that the viewer may
 * see: an obstacle's entry, a container's exit, a plane from its allowed side. */
static int ray_collider(const pd_posed* pc, pd_vec3 o, pd_vec3 d, double t_min, pd_hit* h) {
    const pd_collider* col = pc->col;
    const pd_collider_def* def = &col->def;
    pd_vec3 ro = pd_v3_add(pd_m3_mulv(pc->rt, pd_v3_sub(o, pc->pivot)), col->center);
    pd_vec3 rd = pd_m3_mulv(pc->rt, d);
    pd_span s;
    int met = 0;
    if (def->type == PD_COLLIDER_PLANE) {
        double side = pd_v3_dot(pd_v3_sub(ro, def->point), def->normal);
        double rate = pd_v3_dot(rd, def->normal);
        if (side <= 0 || rate >= 0)
            return 0;
        s.tn = s.tf = -side / rate;
        s.nn = s.nf = def->normal;
        met = 1;
    } else if (def->type == PD_COLLIDER_BOX) {
        met = ray_box(&def->shape, ro, rd, &s);
    } else if (def->type == PD_COLLIDER_SPHERE) {
        met = ray_sphere(&def->shape, ro, rd, &s);
    } else if (def->type == PD_COLLIDER_CYLINDER) {
        met = ray_cylinder(&def->shape, ro, rd, &s);
    }
    if (!met)
        return 0;
    int container = def->inside && def->type != PD_COLLIDER_PLANE;
    if (!container && s.tn <= t_min) /* behind, or the eye is inside the obstacle */
        return 0;
    h->t = container ? s.tf : s.tn;
    h->normal = pd_m3_mulv(col->rotation, container ? s.nf : s.nn);
    return h->t > t_min;
}

/* Möller and Trumbore 1997: the ray parameter where o + t d crosses triangle abc, or -1. */
static double ray_triangle(pd_vec3 o, pd_vec3 d, pd_vec3 a, pd_vec3 b, pd_vec3 c) {
    pd_vec3 e1 = pd_v3_sub(b, a), e2 = pd_v3_sub(c, a);
    pd_vec3 p = pd_v3_cross(d, e2);
    double det = pd_v3_dot(e1, p);
    if (fabs(det) < 1e-300)
        return -1;
    pd_vec3 tv = pd_v3_sub(o, a);
    double u = pd_v3_dot(tv, p) / det;
    pd_vec3 q = pd_v3_cross(tv, e1);
    double v = pd_v3_dot(d, q) / det;
    if (u < 0 || v < 0 || u + v > 1)
        return -1;
    return pd_v3_dot(e2, q) / det;
}

static void posed_triangle(const pd_render_stage* s, int k, size_t tri, pd_vec3 v[3]) {
    const pd_mesh* m = &s->meshes[k];
    for (int c = 0; c < 3; ++c)
        v[c] = pd_collider_to_world(&s->colliders.items[k], m->vertices[m->triangles[3 * tri + c]]);
}

/* Nearest crossing of a mesh collider by a ray (brute force: used once per frame). */
static int ray_mesh(const pd_render_stage* s, int k, pd_vec3 o, pd_vec3 d, double* t) {
    *t = DBL_MAX;
    for (size_t tri = 0; tri < s->meshes[k].triangle_count; ++tri) {
        pd_vec3 v[3];
        posed_triangle(s, k, tri, v);
        double ti = ray_triangle(o, d, v[0], v[1], v[2]);
        if (ti > 0 && ti < *t)
            *t = ti;
    }
    return *t < DBL_MAX;
}

/* Distance along `d` from p to the surface of collider k it meets first; 0 when none. */
static int ray_distance(const pd_render_stage* s, int k, pd_vec3 p, pd_vec3 d, double* t) {
    const pd_collider* col = &s->colliders.items[k];
    if (col->def.type == PD_COLLIDER_MESH)
        return ray_mesh(s, k, p, d, t);
    pd_hit h;
    pd_posed pc = posed(col);
    if (!ray_collider(&pc, p, d, 0, &h))
        return 0;
    *t = h.t;
    return 1;
}

int pd_stage_surface_below(const pd_render_stage* s, pd_vec3 p, double reach, double* y) {
    double best = reach, t;
    int found = 0;
    for (int k = 0; k < s->colliders.count; ++k)
        if (ray_distance(s, k, p, pd_v3(0, -1, 0), &t) && t <= best) {
            best = t;
            found = 1;
        }
    if (found)
        *y = p.y - best;
    return found;
}

/* ---- shading ---- */

typedef struct pd_stage_view {
    const pd_camera* cam;
    const pd_posed* posed; /* per collider (analytic ones used) */
    const pd_shadow_map* shadow;
    pd_vec3 light;        /* world direction towards the light of the particles' shading */
    pd_vec3 centre;       /* of the view box */
    double ground_extent; /* radius of the drawn part of a plane about `centre` */
    double grid;          /* spacing of the ground's grid lines (m) */
} pd_stage_view;

static uint8_t to_byte(double v) {
    return v <= 0 ? 0 : (v >= 1 ? 255 : (uint8_t)(v * 255.0 + 0.5));
}

/* A round spacing (1, 2 or 5 times a power of ten) of about a fifth of the view. */
static double grid_spacing(double view_size) {
    double target = view_size > 0 ? view_size / 5 : 1;
    double p = pow(10.0, floor(log10(target)));
    return target >= 5 * p ? 5 * p : (target >= 2 * p ? 2 * p : p);
}

/* 1 where p lies on a grid line of the plane with normal n, at a sample of `footprint` m. */
static int on_grid_line(const pd_stage_view* v, pd_vec3 p, pd_vec3 n, double footprint) {
    pd_vec3 e1 = fabs(n.x) < 0.9 ? pd_v3(1, 0, 0) : pd_v3(0, 0, 1);
    e1 = pd_v3_sub(e1, pd_v3_scale(n, pd_v3_dot(e1, n)));
    e1 = pd_v3_scale(e1, 1.0 / pd_v3_len(e1));
    pd_vec3 e2 = pd_v3_cross(n, e1);
    double half = 0.6 * footprint;
    if (half > v->grid / 6) /* lines closer than a few samples would grey the ground out */
        return 0;
    double u = pd_v3_dot(p, e1) / v->grid, w = pd_v3_dot(p, e2) / v->grid;
    double du = fabs(u - floor(u + 0.5)) * v->grid, dw = fabs(w - floor(w + 0.5)) * v->grid;
    return du < half || dw < half;
}

static const float* surface_albedo(const pd_stage_view* v, const pd_collider_def* def, pd_vec3 p,
                                   pd_vec3 n, double footprint) {
    if (def->type == PD_COLLIDER_PLANE)
        return on_grid_line(v, p, n, footprint) ? k_grid : k_ground;
    return def->inside ? k_container : k_obstacle;
}

/* Lambert shading of a collider sample, seen from either side, darkened by the shadow. */
static void shade_surface(const pd_stage_view* v, const float albedo[3], pd_vec3 p, pd_vec3 n,
                          pd_vec3 ray, uint8_t* out) {
    if (pd_v3_dot(n, ray) > 0)
        n = pd_v3_scale(n, -1);
    double lambert = fmax(0.0, pd_v3_dot(n, v->light));
    double dark = v->shadow ? PD_STAGE_SHADOW_DARKEN * pd_shadow_at(v->shadow, p) : 0;
    for (int c = 0; c < 3; ++c)
        out[c] = to_byte(albedo[c] * (0.45 + 0.55 * lambert) * (1.0 - dark));
}

/* ---- analytic colliders, per sample ---- */

static void cast_sample(const pd_render_stage* s, const pd_stage_view* v, pd_raster* r, int px,
                        int py) {
    size_t idx = (size_t)py * (size_t)r->w + (size_t)px;
    pd_vec3 d = pd_camera_ray(v->cam, px + 0.5, py + 0.5);
    pd_hit best = {DBL_MAX, pd_v3(0, 1, 0), -1};
    for (int k = 0; k < s->colliders.count; ++k) {
        const pd_collider* col = &s->colliders.items[k];
        pd_hit h;
        if (col->def.type == PD_COLLIDER_MESH ||
            !ray_collider(&v->posed[k], v->cam->eye, d, 1e-9, &h) || h.t >= best.t)
            continue;
        pd_vec3 p = pd_v3_madd(v->cam->eye, h.t, d);
        if (col->def.type == PD_COLLIDER_PLANE &&
            pd_v3_len(pd_v3_sub(p, v->centre)) > v->ground_extent)
            continue;
        best = h;
        best.k = k;
    }
    if (best.k < 0 || !(best.t < r->depth[idx]))
        return;
    r->depth[idx] = (float)best.t;
    pd_vec3 p = pd_v3_madd(v->cam->eye, best.t, d);
    double cosine = fabs(pd_v3_dot(best.normal, d)) / pd_v3_len(d);
    double footprint = best.t / v->cam->focal / fmax(cosine, 0.05);
    const float* albedo =
        surface_albedo(v, &s->colliders.items[best.k].def, p, best.normal, footprint);
    shade_surface(v, albedo, p, best.normal, d, r->rgb + 3 * idx);
}

/* ---- meshes, per triangle ---- */

typedef struct pd_screen_vertex {
    double sx, sy, inv_z; /* screen position, 1 / view depth */
} pd_screen_vertex;

static int to_screen(const pd_camera* cam, pd_vec3 p, pd_screen_vertex* out) {
    pd_vec3 q = pd_v3_sub(p, cam->eye);
    double zc = pd_v3_dot(q, cam->forward);
    if (zc <= 1e-9)
        return 0;
    out->sx = cam->cx + cam->focal * pd_v3_dot(q, cam->right) / zc;
    out->sy = cam->cy - cam->focal * pd_v3_dot(q, cam->up) / zc;
    out->inv_z = 1.0 / zc;
    return 1;
}

static double edge(const pd_screen_vertex* a, const pd_screen_vertex* b, double x, double y) {
    return (b->sx - a->sx) * (y - a->sy) - (b->sy - a->sy) * (x - a->sx);
}

/* Fills the samples inside the projected triangle, depth interpolated as 1/z (perspective
 * correct), where nearer than the raster holds. */
static void fill_triangle(const pd_stage_view* v, const pd_screen_vertex sv[3], pd_vec3 n,
                          const float* albedo, pd_raster* r) {
    double area = edge(&sv[0], &sv[1], sv[2].sx, sv[2].sy);
    if (fabs(area) < 1e-12)
        return;
    int x0 = (int)floor(fmin(sv[0].sx, fmin(sv[1].sx, sv[2].sx)));
    int x1 = (int)ceil(fmax(sv[0].sx, fmax(sv[1].sx, sv[2].sx)));
    int y0 = (int)floor(fmin(sv[0].sy, fmin(sv[1].sy, sv[2].sy)));
    int y1 = (int)ceil(fmax(sv[0].sy, fmax(sv[1].sy, sv[2].sy)));
    for (int py = y0 < 0 ? 0 : y0; py <= y1 && py < r->h; ++py)
        for (int px = x0 < 0 ? 0 : x0; px <= x1 && px < r->w; ++px) {
            double x = px + 0.5, y = py + 0.5;
            double b0 = edge(&sv[1], &sv[2], x, y) / area, b1 = edge(&sv[2], &sv[0], x, y) / area;
            double b2 = 1.0 - b0 - b1;
            if (b0 < 0 || b1 < 0 || b2 < 0)
                continue;
            double z = 1.0 / (b0 * sv[0].inv_z + b1 * sv[1].inv_z + b2 * sv[2].inv_z);
            size_t idx = (size_t)py * (size_t)r->w + (size_t)px;
            if (!(z < r->depth[idx]))
                continue;
            r->depth[idx] = (float)z;
            pd_vec3 d = pd_camera_ray(v->cam, x, y);
            shade_surface(v, albedo, pd_v3_madd(v->cam->eye, z, d), n, d, r->rgb + 3 * idx);
        }
}

static void draw_mesh(const pd_render_stage* s, int k, const pd_stage_view* v, pd_raster* r) {
    const pd_collider_def* def = &s->colliders.items[k].def;
    const float* albedo = def->inside ? k_container : k_obstacle;
    for (size_t tri = 0; tri < s->meshes[k].triangle_count; ++tri) {
        pd_vec3 p[3];
        posed_triangle(s, k, tri, p);
        pd_vec3 n = pd_v3_cross(pd_v3_sub(p[1], p[0]), pd_v3_sub(p[2], p[0]));
        double len = pd_v3_len(n);
        if (!(len > 0))
            continue;
        n = pd_v3_scale(n, s->outward[k] / len);
        /* A container shows the walls facing away from the eye: its far side. */
        if (def->inside && pd_v3_dot(n, pd_v3_sub(p[0], v->cam->eye)) < 0)
            continue;
        pd_screen_vertex sv[3];
        if (to_screen(v->cam, p[0], &sv[0]) && to_screen(v->cam, p[1], &sv[1]) &&
            to_screen(v->cam, p[2], &sv[2]))
            fill_triangle(v, sv, n, albedo, r);
    }
}

void pd_stage_draw(const pd_render_stage* s, const pd_camera* cam, pd_vec3 centre, double view_size,
                   const pd_shadow_map* shadow, pd_raster* r) {
    size_t bytes = (size_t)s->colliders.count * sizeof(pd_posed);
    pd_posed* poses = s->colliders.count > 0 ? pd_alloc(bytes) : NULL;
    if (s->colliders.count > 0 && !poses)
        return; /* no memory: the colliders are left out of this frame */
    pd_stage_view v = {cam,
                       poses,
                       shadow,
                       pd_v3(0, 0, 0),
                       centre,
                       PD_GROUND_EXTENT * view_size,
                       grid_spacing(view_size)};
    /* The particles' light (-0.40, 0.70, 0.59 in camera space) in the world. */
    v.light =
        pd_v3_madd(pd_v3_madd(pd_v3_scale(cam->right, -0.40), 0.70, cam->up), -0.59, cam->forward);
    int analytic = 0;
    for (int k = 0; k < s->colliders.count; ++k) {
        poses[k] = posed(&s->colliders.items[k]);
        if (s->colliders.items[k].def.type == PD_COLLIDER_MESH)
            draw_mesh(s, k, &v, r);
        else
            analytic = 1;
    }
    for (int py = 0; analytic && py < r->h; ++py)
        for (int px = 0; px < r->w; ++px)
            cast_sample(s, &v, r, px, py);
    pd_free(poses, bytes);
}
