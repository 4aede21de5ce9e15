/* Filling bodies with particles: a lattice over the shape's bounding box (grid, jittered) or
 * dart throwing (poisson_disk; poisson_disk_relaxed then shifts the darts so that every
 * particle's kernel neighbourhood is balanced), kept where the shape's inside test holds. Meshes
 * use the generalised winding number (Jacobson et al. 2013, w >= 1/2 is inside), evaluated through
 * pd_mesh_tree, so open or non-manifold meshes still sample sensibly. Every random number is a
 * hash of (seed, lattice index, axis), so the points do not depend on the thread count. */
#define _DEFAULT_SOURCE /* M_PI */
#include "geometry/sampling.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "geometry/mesh.h"
#include "parallel/parallel.h"
#include "sph/kernels.h"

/* Lattice points beyond this are refused (PD_ERR_TOO_LARGE): 2^31. */
static const double MAX_LATTICE_POINTS = 2147483648.0;
/* Poisson-disk minimum distance (spacings) and dart passes: random sequential packing
 * saturates slowly (density ~ 1 - c t^(-1/3)), so rather than throwing darts for ever the
 * distance is set a little under the saturated 0.9 so that 40 passes give about one particle per
 * spacing^3 (measured 0.985; 0.92 per spacing^2 for one layer). */
static const pd_real POISSON_MIN_DISTANCE = 0.85;
static const int POISSON_PASSES = 40;
static const pd_real JITTER = 0.25; /* spacings */
/* poisson_disk_relaxed: Jacobi iterations of the shift, its gain (of the step that would zero a
 * lone particle's residual), the largest move an iteration (spacings), the kernel's support
 * (spacings: xpbi's k = 2 r at radius 1) and the reference lattice's spacing (spacings). 30 at
 * 0.6 took the cross-method bar's mean uniform-stress force under xpbi from 0.60 to 0.030 V
 * sigma / h (10 iterations: 0.09; 60: 0.025). */
static const int RELAX_ITERATIONS = 30;
static const pd_real RELAX_GAIN = 0.6;
static const pd_real RELAX_MAX_MOVE = 0.1;
static const pd_real RELAX_SUPPORT = 2;
static const pd_real RELAX_REFERENCE = 1.0 / 3.0;

/* ---- deterministic random numbers ---- */

/* splitmix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mix. */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) from (seed, a, b): a counter-based stream, same value whatever thread asks. */
static pd_real uniform01(uint64_t seed, uint64_t a, uint64_t b) {
    uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL * (mix64(a) ^ (b + 1)));
    return (pd_real)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- analytic shapes ---- */

static int box_contains(const pd_shape_def* s, pd_vec3 p) {
    pd_vec3 e = pd_v3_sub(s->max, s->min);
    pd_real tol = 1e-12 * (fabs(e.x) + fabs(e.y) + fabs(e.z)) + 1e-300;
    return p.x >= s->min.x - tol && p.x <= s->max.x + tol && p.y >= s->min.y - tol &&
           p.y <= s->max.y + tol && p.z >= s->min.z - tol && p.z <= s->max.z + tol;
}

static int sphere_contains(const pd_shape_def* s, pd_vec3 p) {
    return pd_v3_len2(pd_v3_sub(p, s->center)) <= s->radius * s->radius * (1 + 1e-9);
}

static int cylinder_contains(const pd_shape_def* s, pd_vec3 p) {
    pd_vec3 d = pd_v3_sub(p, s->base);
    pd_real t = pd_v3_dot(d, s->axis), tol = 1e-9 * s->height;
    if (t < -tol || t > s->height + tol)
        return 0;
    pd_vec3 radial = pd_v3_madd(d, -t, s->axis);
    return pd_v3_len2(radial) <= s->radius * s->radius * (1 + 1e-9);
}

int pd_shape_contains(const pd_shape_def* shape, pd_vec3 p) {
    switch (shape->type) {
        case PD_SHAPE_BOX:
            return box_contains(shape, p);
        case PD_SHAPE_SPHERE:
            return sphere_contains(shape, p);
        case PD_SHAPE_CYLINDER:
            return cylinder_contains(shape, p);
        default:
            return 0;
    }
}

/* Exact box of a cylinder: the end discs reach r*sqrt(1 - a_k^2) along axis k. */
static void cylinder_bounds(const pd_shape_def* s, pd_vec3* lo, pd_vec3* hi) {
    pd_vec3 a = s->axis, top = pd_v3_madd(s->base, s->height, a);
    pd_vec3 reach =
        pd_v3(s->radius * sqrt(fmax(0, 1 - a.x * a.x)), s->radius * sqrt(fmax(0, 1 - a.y * a.y)),
              s->radius * sqrt(fmax(0, 1 - a.z * a.z)));
    *lo = pd_v3_sub(pd_v3_min(s->base, top), reach);
    *hi = pd_v3_add(pd_v3_max(s->base, top), reach);
}

static void analytic_bounds(const pd_shape_def* shape, pd_vec3* lo, pd_vec3* hi) {
    switch (shape->type) {
        case PD_SHAPE_BOX:
            *lo = pd_v3_min(shape->min, shape->max);
            *hi = pd_v3_max(shape->min, shape->max);
            break;
        case PD_SHAPE_SPHERE: {
            pd_vec3 r = pd_v3(shape->radius, shape->radius, shape->radius);
            *lo = pd_v3_sub(shape->center, r);
            *hi = pd_v3_add(shape->center, r);
            break;
        }
        default:
            cylinder_bounds(shape, lo, hi);
            break;
    }
}

/* Area of a triangle soup (m^2). */
static double mesh_area(const pd_mesh* m) {
    double area = 0;
    for (size_t t = 0; t < m->triangle_count; ++t) {
        pd_vec3 a = m->vertices[m->triangles[3 * t]], b = m->vertices[m->triangles[3 * t + 1]];
        pd_vec3 c = m->vertices[m->triangles[3 * t + 2]];
        area += 0.5 * pd_v3_len(pd_v3_cross(pd_v3_sub(b, a), pd_v3_sub(c, a)));
    }
    return area;
}

pd_status pd_shape_measure(const pd_shape_def* shape, pd_vec3* lo, pd_vec3* hi, double* volume,
                           double* area, const char* path, pd_error* err) {
    if (shape->type != PD_SHAPE_MESH) {
        analytic_bounds(shape, lo, hi);
        pd_vec3 e = pd_v3_sub(*hi, *lo);
        double r = shape->radius;
        if (shape->type == PD_SHAPE_SPHERE)
            *volume = 4.0 / 3.0 * M_PI * r * r * r, *area = 4 * M_PI * r * r;
        else if (shape->type == PD_SHAPE_CYLINDER)
            *volume = M_PI * r * r * shape->height,
            *area = 2 * M_PI * r * r + 2 * M_PI * r * shape->height;
        else
            *volume = (double)e.x * e.y * e.z,
            *area = 2 * ((double)e.x * e.y + (double)e.y * e.z + (double)e.z * e.x);
        return PD_OK;
    }
    pd_mesh mesh;
    pd_status st = pd_mesh_load(shape, &mesh, path, err);
    if (st != PD_OK)
        return st;
    pd_mesh_bounds(&mesh, lo, hi);
    *volume = pd_mesh_enclosed_volume(&mesh);
    *area = mesh_area(&mesh);
    pd_mesh_free(&mesh);
    return PD_OK;
}

pd_status pd_shape_bounds(const pd_shape_def* shape, pd_vec3* lo, pd_vec3* hi, const char* path,
                          pd_error* err) {
    double volume, area;
    if (shape->type != PD_SHAPE_MESH) { /* no mesh to load only for its volume */
        analytic_bounds(shape, lo, hi);
        return PD_OK;
    }
    return pd_shape_measure(shape, lo, hi, &volume, &area, path, err);
}

/* ---- lattice ---- */

typedef struct lattice {
    pd_real origin[3]; /* coordinate of lattice index 0 along each axis */
    size_t n[3];       /* points per axis */
    int thin[3];       /* 1: the box is thinner than spacing here, one layer at its middle */
    pd_real spacing;
} lattice;

/* Points (or poisson cells, `cells` = 1) per axis; refuses more than 2^31 in all. */
static pd_status lattice_setup(lattice* l, pd_vec3 lo, pd_vec3 hi, pd_real spacing, int cells) {
    double total = 1;
    l->spacing = spacing;
    for (int k = 0; k < 3; ++k) {
        pd_real a = pd_v3_comp(lo, k), e = pd_v3_comp(hi, k) - a;
        l->thin[k] = e < spacing;
        /* min + spacing*(i + 1/2) <= max  <=>  i < e/spacing + 1/2 */
        double n = l->thin[k] ? 1 : (cells ? ceil(e / spacing) : floor(e / spacing + 0.5));
        total *= n;
        if (total > MAX_LATTICE_POINTS)
            return PD_ERR_TOO_LARGE;
        l->n[k] = (size_t)n;
        l->origin[k] = l->thin[k] ? a + 0.5 * e : a + (cells ? 0 : 0.5 * spacing);
    }
    return PD_OK;
}

static size_t lattice_size(const lattice* l) {
    return l->n[0] * l->n[1] * l->n[2];
}

/* x runs fastest: index = i + n0 (j + n1 k). */
static void lattice_unpack(const lattice* l, size_t index, size_t ijk[3]) {
    ijk[0] = index % l->n[0];
    ijk[1] = (index / l->n[0]) % l->n[1];
    ijk[2] = index / (l->n[0] * l->n[1]);
}

/* Grid point, plus a jitter of up to JITTER spacings on the axes that have several layers. */
static pd_vec3 lattice_point(const lattice* l, size_t index, int jitter, uint64_t seed) {
    size_t ijk[3];
    lattice_unpack(l, index, ijk);
    pd_real x[3];
    for (int k = 0; k < 3; ++k) {
        x[k] = l->origin[k] + (l->thin[k] ? 0 : l->spacing * (pd_real)ijk[k]);
        if (jitter && !l->thin[k])
            x[k] += l->spacing * JITTER * (2 * uniform01(seed, index, (uint64_t)k) - 1);
    }
    return pd_v3(x[0], x[1], x[2]);
}

/* ---- inside test over many points, in parallel ---- */

typedef struct inside_job {
    const pd_shape_def* shape;
    const pd_mesh_tree* tree; /* mesh shapes */
    pd_real orientation;      /* +1, or -1 for a mesh whose faces wind inward */
    const lattice* lat;
    int jitter;
    uint64_t seed;
    const pd_vec3* points; /* explicit candidates (poisson); NULL: the lattice */
    uint8_t* inside;       /* one flag per candidate */
} inside_job;

static pd_vec3 job_point(const inside_job* job, size_t i) {
    return job->points ? job->points[i] : lattice_point(job->lat, i, job->jitter, job->seed);
}

static int job_contains(const inside_job* job, pd_vec3 p) {
    if (!job->tree)
        return pd_shape_contains(job->shape, p);
    return job->orientation * pd_mesh_tree_winding_number(job->tree, p) >= 0.5;
}

static void inside_range(void* ctx, size_t begin, size_t end, int thread) {
    const inside_job* job = ctx;
    for (size_t i = begin; i < end; ++i)
        job->inside[i] = (uint8_t)job_contains(job, job_point(job, i));
}

/* Keeps the candidates flagged inside, in candidate order. */
static pd_status collect_inside(const inside_job* job, size_t n, pd_vec3** points, size_t* count) {
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i)
        kept += job->inside[i];
    *count = kept;
    *points = NULL;
    if (kept == 0)
        return PD_OK;
    *points = PD_NEW_ARRAY(pd_vec3, kept);
    if (!*points)
        return PD_ERR_OUT_OF_MEMORY;
    for (size_t i = 0, o = 0; i < n; ++i)
        if (job->inside[i])
            (*points)[o++] = job_point(job, i);
    return PD_OK;
}

static pd_status filter_inside(inside_job* job, size_t n, pd_vec3** points, size_t* count) {
    *points = NULL;
    *count = 0;
    if (n == 0)
        return PD_OK;
    job->inside = PD_NEW_ARRAY(uint8_t, n);
    if (!job->inside)
        return PD_ERR_OUT_OF_MEMORY;
    pd_parallel_for(n, job->tree ? 256 : 16384, inside_range, job);
    pd_status st = collect_inside(job, n, points, count);
    PD_FREE_ARRAY(job->inside, uint8_t, n);
    job->inside = NULL;
    return st;
}

/* ---- poisson disk: dart throwing into lattice cells of one spacing ---- */

typedef struct dart_board {
    const lattice* cells;
    size_t* head;    /* per cell: first accepted point, or SIZE_MAX */
    size_t* next;    /* per point: next point in the same cell */
    pd_vec3* points; /* accepted, in acceptance order */
    size_t count, capacity;
    pd_real min_dist2;
} dart_board;

static int dart_too_close(const dart_board* b, const size_t ijk[3], pd_vec3 p) {
    const lattice* l = b->cells;
    size_t from[3], to[3];
    for (int k = 0; k < 3; ++k) {
        from[k] = ijk[k] > 0 ? ijk[k] - 1 : 0;
        to[k] = ijk[k] + 1 < l->n[k] ? ijk[k] + 1 : ijk[k];
    }
    for (size_t z = from[2]; z <= to[2]; ++z)
        for (size_t y = from[1]; y <= to[1]; ++y)
            for (size_t x = from[0]; x <= to[0]; ++x)
                for (size_t q = b->head[x + l->n[0] * (y + l->n[1] * z)]; q != SIZE_MAX;
                     q = b->next[q])
                    if (pd_v3_len2(pd_v3_sub(b->points[q], p)) < b->min_dist2)
                        return 1;
    return 0;
}

static pd_status dart_grow(dart_board* b) {
    size_t cap = b->capacity * 2;
    pd_vec3* p = PD_NEW_ARRAY(pd_vec3, cap);
    size_t* n = PD_NEW_ARRAY(size_t, cap);
    if (!p || !n) {
        if (p)
            PD_FREE_ARRAY(p, pd_vec3, cap);
        if (n)
            PD_FREE_ARRAY(n, size_t, cap);
        return PD_ERR_OUT_OF_MEMORY;
    }
    memcpy(p, b->points, b->count * sizeof(pd_vec3));
    memcpy(n, b->next, b->count * sizeof(size_t));
    PD_FREE_ARRAY(b->points, pd_vec3, b->capacity);
    PD_FREE_ARRAY(b->next, size_t, b->capacity);
    b->points = p;
    b->next = n;
    b->capacity = cap;
    return PD_OK;
}

static pd_vec3 dart_candidate(const lattice* l, size_t cell, const size_t ijk[3], uint64_t seed,
                              int pass) {
    pd_real x[3];
    for (int k = 0; k < 3; ++k) {
        pd_real u = uniform01(seed, cell, (uint64_t)(3 * pass + k) + 7);
        x[k] = l->thin[k] ? l->origin[k] : l->origin[k] + l->spacing * ((pd_real)ijk[k] + u);
    }
    return pd_v3(x[0], x[1], x[2]);
}

/* Random sequential adsorption over the whole box: each pass throws one dart per cell, in
 * lattice order; the later inside filter keeps a uniform density up to the surface. */
static pd_status dart_throw(dart_board* b, uint64_t seed) {
    const lattice* l = b->cells;
    size_t cells = lattice_size(l);
    for (int pass = 0; pass < POISSON_PASSES; ++pass)
        for (size_t c = 0; c < cells; ++c) {
            size_t ijk[3];
            lattice_unpack(l, c, ijk);
            pd_vec3 p = dart_candidate(l, c, ijk, seed, pass);
            if (dart_too_close(b, ijk, p))
                continue;
            if (b->count == b->capacity && dart_grow(b) != PD_OK)
                return PD_ERR_OUT_OF_MEMORY;
            b->points[b->count] = p;
            b->next[b->count] = b->head[c];
            b->head[c] = b->count++;
        }
    return PD_OK;
}

static void dart_free(dart_board* b, size_t cells) {
    if (b->head)
        PD_FREE_ARRAY(b->head, size_t, cells);
    if (b->next)
        PD_FREE_ARRAY(b->next, size_t, b->capacity);
    if (b->points)
        PD_FREE_ARRAY(b->points, pd_vec3, b->capacity);
}

/* The accepted darts in lattice (cell) order, so the result reads like the grid's. */
static pd_vec3* dart_points_in_cell_order(const dart_board* b, size_t cells) {
    pd_vec3* out = PD_NEW_ARRAY(pd_vec3, b->count);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t c = 0; c < cells; ++c)
        for (size_t q = b->head[c]; q != SIZE_MAX; q = b->next[q])
            out[o++] = b->points[q];
    return out;
}

static pd_status poisson_candidates(const lattice* cells, uint64_t seed, pd_vec3** out,
                                    size_t* count) {
    size_t n = lattice_size(cells);
    dart_board b = {cells, PD_NEW_ARRAY(size_t, n), NULL, NULL, 0, 0, 0};
    b.capacity = n + 16;
    b.next = PD_NEW_ARRAY(size_t, b.capacity);
    b.points = PD_NEW_ARRAY(pd_vec3, b.capacity);
    b.min_dist2 = POISSON_MIN_DISTANCE * POISSON_MIN_DISTANCE * cells->spacing * cells->spacing;
    pd_status st = b.head && b.next && b.points ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK) {
        for (size_t c = 0; c < n; ++c)
            b.head[c] = SIZE_MAX;
        st = dart_throw(&b, seed);
    }
    if (st == PD_OK) {
        *count = b.count;
        *out = dart_points_in_cell_order(&b, n);
        st = *out ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    }
    dart_free(&b, n);
    return st;
}

/* ---- relaxing a Poisson-disk sample (poisson_disk_relaxed) ----
 *
 * A particle method whose gradients are corrected to be exact for a linear field on any
 * neighbourhood (xpbi's Eq. 10-11, corrected SPH) still puts a force on a particle under a
 * uniform stress unless its neighbourhood is balanced: with Eq. 12-13 the force on i is
 * -V_i P sum_j V_j (L_i + L_j) grad W_ij, which for L near a common L is 2 L times the kernel
 * gradient sum g_i = sum_j V_j grad_i W(|x_i - x_j|) (the discrete patch test; Bonet & Lok
 * 1999). A random sequential packing leaves g_i of the order of 1 / h at every particle, and
 * the particles then relax non-affinely under load (xpbi's bar softer by 17 %). The shift here
 * (as SPH's particle shifting, Lind et al. 2012, J. Comput. Phys. 231, moves particles down
 * the concentration gradient) moves every point by -D (g_i - g0(x_i)), where g0(x) is the same
 * sum over the shape's continuum, integral over the inside of grad W(|x - y|) dy, taken on a
 * lattice of RELAX_REFERENCE spacings (0 where the support lies wholly inside, without the
 * lattice's sum): at a free surface the truncated kernel's,
 * so a surface particle is not pushed out (the shape's own boundary term, which the patch test
 * keeps). D follows from the residual's change for a lone particle moved by delta: sum_j V_j
 * Hess W(x_i - x_j) delta = -V W''(0) delta (the continuum integral of Hess W is 0), W''(0) =
 * -20 C / H^2 for the Wendland C2 (C = 21 / (2 pi H^3)). Jacobi (every move from the same
 * positions: the same points on any thread count); a move that would leave the shape is not
 * made. */

/* Points binned in cubic cells of the kernel's support over a padded box: cell c holds
 * items[start[c] .. start[c + 1]). */
typedef struct cell_list {
    pd_vec3 origin;
    pd_real size;
    size_t n[3];
    size_t* start;
    uint32_t* items;
    size_t cells, count;
} cell_list;

static size_t cell_axis(const cell_list* c, pd_real x, pd_real o, int k) {
    pd_real f = floor((x - o) / c->size);
    if (f < 0)
        return 0;
    return f >= (pd_real)c->n[k] ? c->n[k] - 1 : (size_t)f;
}

static size_t cell_of(const cell_list* c, pd_vec3 p) {
    return cell_axis(c, p.x, c->origin.x, 0) +
           c->n[0] *
               (cell_axis(c, p.y, c->origin.y, 1) + c->n[1] * cell_axis(c, p.z, c->origin.z, 2));
}

static void cell_list_free(cell_list* c) {
    if (c->start)
        PD_FREE_ARRAY(c->start, size_t, c->cells + 1);
    if (c->items)
        PD_FREE_ARRAY(c->items, uint32_t, c->count);
    c->start = NULL, c->items = NULL;
}

static pd_status cell_list_build(cell_list* c, pd_vec3 lo, pd_vec3 hi, pd_real size,
                                 const pd_vec3* x, size_t count) {
    c->size = size;
    c->origin = pd_v3_sub(lo, pd_v3(size, size, size));
    c->cells = 1;
    for (int k = 0; k < 3; ++k) {
        c->n[k] = (size_t)ceil((pd_v3_comp(hi, k) - pd_v3_comp(lo, k)) / size) + 2;
        c->cells *= c->n[k];
    }
    c->count = count;
    c->start = PD_NEW_ARRAY(size_t, c->cells + 1);
    c->items = count ? PD_NEW_ARRAY(uint32_t, count) : NULL;
    if (!c->start || (count && !c->items)) {
        cell_list_free(c);
        return PD_ERR_OUT_OF_MEMORY;
    }
    memset(c->start, 0, (c->cells + 1) * sizeof(size_t));
    for (size_t i = 0; i < count; ++i)
        c->start[cell_of(c, x[i]) + 1]++;
    for (size_t k = 0; k < c->cells; ++k)
        c->start[k + 1] += c->start[k];
    size_t* fill = PD_NEW_ARRAY(size_t, c->cells);
    if (!fill) {
        cell_list_free(c);
        return PD_ERR_OUT_OF_MEMORY;
    }
    memcpy(fill, c->start, c->cells * sizeof(size_t));
    for (size_t i = 0; i < count; ++i)
        c->items[fill[cell_of(c, x[i])]++] = (uint32_t)i;
    PD_FREE_ARRAY(fill, size_t, c->cells);
    return PD_OK;
}

/* sum_j v grad W(|p - x_j|) over the points of c within H of p, skipping index `self`. */
static pd_vec3 kernel_gradient_sum(const cell_list* c, const pd_vec3* x, pd_vec3 p, size_t self,
                                   pd_real v, pd_real H) {
    size_t ijk[3] = {cell_axis(c, p.x, c->origin.x, 0), cell_axis(c, p.y, c->origin.y, 1),
                     cell_axis(c, p.z, c->origin.z, 2)};
    pd_vec3 g = pd_v3(0, 0, 0);
    for (size_t z = ijk[2] ? ijk[2] - 1 : 0; z <= ijk[2] + 1 && z < c->n[2]; ++z)
        for (size_t y = ijk[1] ? ijk[1] - 1 : 0; y <= ijk[1] + 1 && y < c->n[1]; ++y)
            for (size_t xx = ijk[0] ? ijk[0] - 1 : 0; xx <= ijk[0] + 1 && xx < c->n[0]; ++xx) {
                size_t cell = xx + c->n[0] * (y + c->n[1] * z);
                for (size_t q = c->start[cell]; q < c->start[cell + 1]; ++q) {
                    uint32_t j = c->items[q];
                    if (j == self)
                        continue;
                    pd_vec3 d = pd_v3_sub(p, x[j]);
                    pd_real r = pd_v3_len(d);
                    if (r < H && r > 0)
                        g = pd_v3_madd(g, v * pd_sph_wendland_c2_derivative(r, H) / r, d);
                }
            }
    return g;
}

typedef struct relax_job {
    const inside_job* inside;
    pd_vec3* x;
    pd_vec3* move;
    const cell_list* cells;
    const pd_vec3* ref;
    const cell_list* ref_cells;
    const uint8_t* whole; /* per cell of ref_cells: inside the box and every lattice point in */
    pd_real volume, ref_volume, H, gain, cap;
} relax_job;

/* 1 when the support around p (the 27 cells about its own) lies wholly inside the shape: there
 * the continuum's sum is 0 (the lattice's would add its quadrature error, and its cost). */
static int support_inside(const cell_list* c, const uint8_t* whole, pd_vec3 p) {
    size_t ijk[3] = {cell_axis(c, p.x, c->origin.x, 0), cell_axis(c, p.y, c->origin.y, 1),
                     cell_axis(c, p.z, c->origin.z, 2)};
    for (int k = 0; k < 3; ++k)
        if (ijk[k] == 0 || ijk[k] + 1 >= c->n[k])
            return 0;
    for (size_t z = ijk[2] - 1; z <= ijk[2] + 1; ++z)
        for (size_t y = ijk[1] - 1; y <= ijk[1] + 1; ++y)
            for (size_t x = ijk[0] - 1; x <= ijk[0] + 1; ++x)
                if (!whole[x + c->n[0] * (y + c->n[1] * z)])
                    return 0;
    return 1;
}

/* Marks the cells of c (binning the inside points of lattice l) that lie within [lo, hi] and
 * hold every lattice point the box puts in them. */
static pd_status whole_cells(const cell_list* c, const lattice* l, pd_vec3 lo, pd_vec3 hi,
                             uint8_t** out) {
    uint32_t* all = PD_NEW_ARRAY(uint32_t, c->cells);
    uint8_t* whole = PD_NEW_ARRAY(uint8_t, c->cells);
    if (!all || !whole) {
        if (all)
            PD_FREE_ARRAY(all, uint32_t, c->cells);
        if (whole)
            PD_FREE_ARRAY(whole, uint8_t, c->cells);
        return PD_ERR_OUT_OF_MEMORY;
    }
    memset(all, 0, c->cells * sizeof(uint32_t));
    for (size_t i = 0, n = lattice_size(l); i < n; ++i)
        all[cell_of(c, lattice_point(l, i, 0, 0))]++;
    for (size_t k = 0; k < c->cells; ++k) {
        size_t ijk[3] = {k % c->n[0], (k / c->n[0]) % c->n[1], k / (c->n[0] * c->n[1])};
        int in = 1;
        for (int a = 0; a < 3; ++a) {
            pd_real from = pd_v3_comp(c->origin, a) + c->size * (pd_real)ijk[a];
            in = in && from >= pd_v3_comp(lo, a) && from + c->size <= pd_v3_comp(hi, a);
        }
        whole[k] = (uint8_t)(in && all[k] == c->start[k + 1] - c->start[k]);
    }
    PD_FREE_ARRAY(all, uint32_t, c->cells);
    *out = whole;
    return PD_OK;
}

static void relax_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const relax_job* job = ctx;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 g = kernel_gradient_sum(job->cells, job->x, job->x[i], i, job->volume, job->H);
        pd_vec3 g0 = support_inside(job->ref_cells, job->whole, job->x[i])
                         ? pd_v3(0, 0, 0)
                         : kernel_gradient_sum(job->ref_cells, job->ref, job->x[i], SIZE_MAX,
                                               job->ref_volume, job->H);
        pd_vec3 m = pd_v3_scale(pd_v3_sub(g, g0), -job->gain);
        pd_real len = pd_v3_len(m);
        if (len > job->cap)
            m = pd_v3_scale(m, job->cap / len);
        job->move[i] = m;
    }
}

static pd_status relax_points(inside_job* job, pd_vec3 lo, pd_vec3 hi, pd_real spacing, pd_vec3* x,
                              size_t n) {
    pd_real fine = RELAX_REFERENCE * spacing, H = RELAX_SUPPORT * spacing;
    pd_vec3* ref = NULL;
    size_t ref_n = 0;
    lattice lat;
    pd_status st = lattice_setup(&lat, lo, hi, fine, 0);
    if (st != PD_OK)
        return st;
    job->lat = &lat;
    job->points = NULL;
    job->jitter = 0;
    st = filter_inside(job, lattice_size(&lat), &ref, &ref_n);
    job->lat = NULL;
    if (st != PD_OK || ref_n == 0)
        return st;
    cell_list rc = {0}, pc = {0};
    pd_vec3* move = PD_NEW_ARRAY(pd_vec3, n);
    uint8_t* whole = NULL;
    st = move ? cell_list_build(&rc, lo, hi, H, ref, ref_n) : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK)
        st = whole_cells(&rc, &lat, lo, hi, &whole);
    /* each point's volume: the inside's (the reference lattice's) over the count */
    pd_real ref_volume = fine * fine * fine, volume = ref_volume * (pd_real)ref_n / (pd_real)n;
    /* D = gain H^2 / (20 C V) with C = 21 / (2 pi H^3) */
    pd_real gain = RELAX_GAIN * 2 * M_PI * pow(H, 5) / (420 * volume);
    relax_job rj = {job,   x,      move,       &pc, ref,  &rc,
                    whole, volume, ref_volume, H,   gain, RELAX_MAX_MOVE * spacing};
    for (int it = 0; st == PD_OK && it < RELAX_ITERATIONS; ++it) {
        st = cell_list_build(&pc, lo, hi, H, x, n);
        if (st != PD_OK)
            break;
        pd_parallel_for(n, 64, relax_range, &rj);
        for (size_t i = 0; i < n; ++i) {
            pd_vec3 y = pd_v3_add(x[i], move[i]);
            if (job_contains(job, y))
                x[i] = y;
        }
        cell_list_free(&pc);
    }
    if (whole)
        PD_FREE_ARRAY(whole, uint8_t, rc.cells);
    cell_list_free(&rc);
    if (move)
        PD_FREE_ARRAY(move, pd_vec3, n);
    if (ref)
        PD_FREE_ARRAY(ref, pd_vec3, ref_n);
    return st;
}

/* ---- sampling ---- */

static void append_key(char* out, size_t cap, const char* path, const char* key) {
    snprintf(out, cap, "%s%s%s", path && path[0] ? path : "", path && path[0] ? "." : "", key);
}

static pd_status sample_candidates(inside_job* job, pd_vec3 lo, pd_vec3 hi, pd_real spacing,
                                   pd_sampling sampling, pd_vec3** points, size_t* count) {
    lattice lat;
    int relaxed = sampling == PD_SAMPLING_POISSON_DISK_RELAXED;
    int poisson = sampling == PD_SAMPLING_POISSON_DISK || relaxed;
    pd_status st = lattice_setup(&lat, lo, hi, spacing, poisson);
    if (st != PD_OK)
        return st;
    job->lat = &lat;
    job->jitter = sampling == PD_SAMPLING_JITTERED;
    if (!poisson) {
        st = filter_inside(job, lattice_size(&lat), points, count);
        job->lat = NULL;
        return st;
    }
    pd_vec3* darts = NULL;
    size_t dart_count = 0;
    st = poisson_candidates(&lat, job->seed, &darts, &dart_count);
    if (st == PD_OK) {
        job->points = darts;
        st = filter_inside(job, dart_count, points, count);
        job->points = NULL;
    }
    /* a solid only: a shell's or a rod's points stay on their plane or line */
    if (st == PD_OK && relaxed && *count > 0 && !lat.thin[0] && !lat.thin[1] && !lat.thin[2])
        st = relax_points(job, lo, hi, spacing, *points, *count);
    if (darts)
        PD_FREE_ARRAY(darts, pd_vec3, dart_count);
    job->lat = NULL;
    return st;
}

/* Why a mesh gave no particles: a flat or open surface (unusable), or just too small. */
static pd_status explain_empty_mesh(inside_job* job, const pd_mesh* mesh, pd_vec3 lo, pd_vec3 hi,
                                    const char* path, pd_error* err) {
    char jpath[256];
    append_key(jpath, sizeof jpath, path, "shape.path");
    pd_real diag = pd_v3_len(pd_v3_sub(hi, lo));
    if (fabs(pd_mesh_signed_volume(mesh)) <= 1e-9 * diag * diag * diag)
        return pd_fail(err, PD_ERR_MESH, jpath,
                       "mesh '%s' encloses no volume (flat or degenerate); a closed surface is "
                       "needed",
                       job->shape->path);
    /* Probe a fine 24^3 lattice over the mesh itself. */
    pd_vec3 e = pd_v3_sub(hi, lo);
    pd_real probe = fmax(fmax(e.x, e.y), e.z) / 24;
    pd_vec3* pts = NULL;
    size_t n = 0;
    pd_status st = sample_candidates(job, lo, hi, probe, PD_SAMPLING_GRID, &pts, &n);
    if (pts)
        PD_FREE_ARRAY(pts, pd_vec3, n);
    if (st == PD_OK && n == 0)
        return pd_fail(err, PD_ERR_MESH, jpath,
                       "mesh '%s' has no inside by its winding number (is it a closed, "
                       "consistently oriented surface?)",
                       job->shape->path);
    return PD_OK;
}

static pd_status prepare_mesh(inside_job* job, pd_mesh* mesh, pd_mesh_tree* tree, pd_vec3* lo,
                              pd_vec3* hi, const char* path, pd_error* err) {
    char spath[256];
    append_key(spath, sizeof spath, path, "shape");
    pd_status st = pd_mesh_load(job->shape, mesh, spath, err);
    if (st != PD_OK)
        return st;
    pd_mesh_bounds(mesh, lo, hi);
    if (pd_mesh_tree_build(mesh, tree) != PD_OK)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, spath, "out of memory indexing mesh '%s'",
                       job->shape->path);
    job->tree = tree;
    /* Inward-wound meshes have w = -1 inside; accept them by their volume's sign. */
    job->orientation = pd_mesh_signed_volume(mesh) < 0 ? -1 : 1;
    return PD_OK;
}

static pd_status check_sampling_args(pd_real spacing, const char* path, pd_error* err) {
    char jpath[256];
    if (!(spacing > 0) || !isfinite(spacing)) {
        append_key(jpath, sizeof jpath, path, "spacing");
        return pd_fail(err, PD_ERR_BAD_SCENE, jpath, "spacing must be a finite number > 0, got %g",
                       spacing);
    }
    return PD_OK;
}

static pd_status report_sampling(pd_status st, inside_job* job, const pd_mesh* mesh, pd_vec3 lo,
                                 pd_vec3 hi, pd_real spacing, size_t count, const char* path,
                                 pd_error* err) {
    char jpath[256];
    append_key(jpath, sizeof jpath, path, "spacing");
    if (st == PD_ERR_TOO_LARGE)
        return pd_fail(err, st, jpath,
                       "shape's bounding box [%g %g %g]-[%g %g %g] holds more than 2^31 lattice "
                       "points at spacing %g m",
                       lo.x, lo.y, lo.z, hi.x, hi.y, hi.z, spacing);
    if (st != PD_OK)
        return pd_fail(err, st, jpath, "out of memory sampling the shape at spacing %g m", spacing);
    if (count > 0)
        return PD_OK;
    if (job->tree) {
        pd_status why = explain_empty_mesh(job, mesh, lo, hi, path, err);
        if (why != PD_OK)
            return why;
    }
    return pd_fail(err, PD_ERR_BAD_SCENE, jpath,
                   "shape yields no particles at spacing %g m (bounding box [%g %g %g]-[%g %g "
                   "%g]); use a smaller spacing",
                   spacing, lo.x, lo.y, lo.z, hi.x, hi.y, hi.z);
}

/* ---- the volume a mesh's pieces occupy together ---- */

typedef struct winding_job {
    const inside_job* inside;
    uint8_t* count; /* per lattice point: how many pieces hold it, rounded, at most 255 */
} winding_job;

static void winding_range(void* ctx, size_t begin, size_t end, int thread) {
    const winding_job* job = ctx;
    (void)thread;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 p = lattice_point(job->inside->lat, i, 0, 0);
        double w = job->inside->orientation * pd_mesh_tree_winding_number(job->inside->tree, p);
        job->count[i] = (uint8_t)fmin(fmax(floor(w + 0.5), 0), 255);
    }
}

/* Enclosed volume x (lattice points held) / (sum of the pieces holding each): the integral of
 * the winding number counts a region twice where two closed pieces overlap (a wheel's spokes
 * through its rim), while the sampler fills the union (w >= 0.5). The lattice's error at the
 * surface is the same in both sums, so the ratio corrects the overlap alone; a mesh of
 * disjoint pieces keeps its enclosed volume exactly. */
static pd_status union_volume(inside_job* job, pd_vec3 lo, pd_vec3 hi, pd_real spacing,
                              double* volume) {
    lattice lat;
    pd_status st = lattice_setup(&lat, lo, hi, spacing, 0);
    if (st != PD_OK)
        return st;
    size_t n = lattice_size(&lat);
    winding_job wj = {job, PD_NEW_ARRAY(uint8_t, n)};
    if (!wj.count)
        return PD_ERR_OUT_OF_MEMORY;
    job->lat = &lat;
    pd_parallel_for(n, 256, winding_range, &wj);
    job->lat = NULL;
    size_t held = 0, pieces = 0;
    for (size_t i = 0; i < n; ++i)
        held += wj.count[i] > 0, pieces += wj.count[i];
    PD_FREE_ARRAY(wj.count, uint8_t, n);
    if (pieces > held)
        *volume *= (double)held / (double)pieces;
    return PD_OK;
}

pd_status pd_shape_occupied_volume(const pd_shape_def* shape, pd_real spacing, double* volume,
                                   const char* path, pd_error* err) {
    pd_vec3 lo, hi;
    double area;
    pd_status st = pd_shape_measure(shape, &lo, &hi, volume, &area, path, err);
    if (st != PD_OK || shape->type != PD_SHAPE_MESH)
        return st;
    inside_job job = {shape, NULL, 1, NULL, 0, 0, NULL, NULL};
    pd_mesh mesh = {0};
    pd_mesh_tree tree = {0};
    st = prepare_mesh(&job, &mesh, &tree, &lo, &hi, path, err);
    if (st == PD_OK) {
        st = union_volume(&job, lo, hi, spacing, volume);
        if (st != PD_OK)
            pd_fail(err, st, path, "cannot measure the shape's volume on a lattice of %g m",
                    spacing);
    }
    pd_mesh_tree_free(&tree);
    pd_mesh_free(&mesh);
    return st;
}

static int bounds_finite(pd_vec3 lo, pd_vec3 hi) {
    return isfinite(lo.x) && isfinite(lo.y) && isfinite(lo.z) && isfinite(hi.x) && isfinite(hi.y) &&
           isfinite(hi.z);
}

pd_status pd_sample_shape(const pd_shape_def* shape, pd_real spacing, pd_sampling sampling,
                          uint64_t seed, pd_vec3** points, size_t* count, const char* path,
                          pd_error* err) {
    *points = NULL;
    *count = 0;
    pd_status st = check_sampling_args(spacing, path, err);
    if (st != PD_OK)
        return st;
    inside_job job = {shape, NULL, 1, NULL, 0, seed, NULL, NULL};
    pd_mesh mesh = {0};
    pd_mesh_tree tree = {0};
    pd_vec3 lo, hi;
    if (shape->type == PD_SHAPE_MESH)
        st = prepare_mesh(&job, &mesh, &tree, &lo, &hi, path, err);
    else
        analytic_bounds(shape, &lo, &hi);
    if (st == PD_OK && !bounds_finite(lo, hi)) {
        char jpath[256];
        append_key(jpath, sizeof jpath, path, "shape");
        st = pd_fail(err, PD_ERR_BAD_SCENE, jpath, "shape has non-finite bounds");
    }
    if (st == PD_OK) {
        st = sample_candidates(&job, lo, hi, spacing, sampling, points, count);
        st = report_sampling(st, &job, &mesh, lo, hi, spacing, *count, path, err);
    }
    pd_mesh_tree_free(&tree);
    pd_mesh_free(&mesh);
    return st;
}
