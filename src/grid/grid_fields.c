/* Multi-field transfers and contact (grid_fields.h; Bardenhagen et al. 2000 Sec. 3). */
#include "grid/grid_fields.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "grid/grid_cursor.h"
#include "parallel/parallel.h"

void pd_grid_fields_init(pd_grid_fields* f, int count) {
    memset(f, 0, sizeof *f);
    f->count = count;
}

void pd_grid_fields_free(pd_grid_fields* f) {
    size_t n = f->cap * (size_t)f->count;
    PD_FREE_ARRAY(f->mass, pd_real, n);
    PD_FREE_ARRAY(f->velocity, pd_vec3, n);
    PD_FREE_ARRAY(f->moment, pd_vec3, n);
    PD_FREE_ARRAY(f->extent, pd_real, n);
    pd_grid_fields_init(f, f->count);
}

/* Room for `nodes` nodes; grown by half again, never shrunk (no allocation once the grid has
 * reached its size). */
static pd_status reserve(pd_grid_fields* f, size_t nodes) {
    if (nodes <= f->cap)
        return PD_OK;
    int count = f->count;
    pd_grid_fields_free(f);
    f->cap = nodes + nodes / 2;
    size_t n = f->cap * (size_t)count;
    f->mass = PD_NEW_ARRAY(pd_real, n);
    f->velocity = PD_NEW_ARRAY(pd_vec3, n);
    f->moment = PD_NEW_ARRAY(pd_vec3, n);
    f->extent = PD_NEW_ARRAY(pd_real, n);
    return f->mass && f->velocity && f->moment && f->extent ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}

/* ------------------------------------------------------------ particle to grid */

typedef struct p2g_job {
    pd_grid* g;
    pd_grid_fields* f;
    const int32_t* field_of;
    const pd_real* mass;
    const pd_vec3* v;
    const pd_mat3* affine;
} p2g_job;

/* Node n sums its particles into their fields (the momentum in `velocity` until the division)
 * and into the combined node. */
static void p2g_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const p2g_job* job = ctx;
    pd_grid* g = job->g;
    size_t k = (size_t)job->f->count;
    for (size_t n = begin; n < end; ++n) {
        pd_real* fm = &job->f->mass[n * k];
        pd_vec3 *fv = &job->f->velocity[n * k], *fg = &job->f->moment[n * k];
        for (size_t b = 0; b < k; ++b)
            fm[b] = 0, fv[b] = fg[b] = pd_v3(0, 0, 0);
        pd_real m = 0, w;
        pd_vec3 mv = pd_v3(0, 0, 0), d;
        uint32_t p;
        for (node_cursor c = node_cursor_at(g, n); node_cursor_next(g, &c, &p, &w, &d);) {
            pd_vec3 mom = pd_v3_scale(job->v[p], job->mass[p]);
            if (job->affine) /* A_p (x_i - x_p) */
                mom = pd_v3_add(mom, pd_m3_mulv(job->affine[p], d));
            size_t b = (size_t)job->field_of[p];
            fm[b] += w * job->mass[p];
            fv[b] = pd_v3_madd(fv[b], w, mom);
            fg[b] = pd_v3_madd(fg[b], w * job->mass[p], d);
            m += w * job->mass[p];
            mv = pd_v3_madd(mv, w, mom);
        }
        for (size_t b = 0; b < k; ++b)
            fv[b] = fm[b] > 0 ? pd_v3_scale(fv[b], 1 / fm[b]) : pd_v3(0, 0, 0);
        g->mass[n] = m;
        g->velocity[n] = m > 0 ? pd_v3_scale(mv, 1 / m) : pd_v3(0, 0, 0);
    }
}

pd_status pd_grid_fields_from_particles(pd_grid* g, pd_grid_fields* f, const int32_t* field_of,
                                        const pd_real* mass, const pd_vec3* v,
                                        const pd_mat3* affine) {
    pd_status st = reserve(f, g->nodes);
    if (st != PD_OK)
        return st;
    p2g_job job = {g, f, field_of, mass, v, affine};
    pd_parallel_for(g->nodes, 256, p2g_range, &job);
    return PD_OK;
}

void pd_grid_fields_add_velocity(const pd_grid* g, pd_grid_fields* f, pd_vec3 dv) {
    size_t n = g->nodes * (size_t)f->count;
    for (size_t i = 0; i < n; ++i)
        if (f->mass[i] > 0)
            f->velocity[i] = pd_v3_add(f->velocity[i], dv);
}

/* ------------------------------------------------------------ contact */

/* Field b's change at a node (Bardenhagen 2000 Sec. 3): rel = v_b - v_cm; when it approaches
 * along the unit normal nrm (rel . nrm > 0) its normal part goes, and Coulomb friction takes
 * min(|rel_t|, mu rel . nrm) off the tangential part; else nothing. */
static pd_vec3 contact_change(pd_vec3 rel, pd_vec3 nrm, pd_real mu) {
    pd_real vn = pd_v3_dot(rel, nrm);
    if (!(vn > 0))
        return pd_v3(0, 0, 0); /* separating, or at rest against the others: free */
    pd_vec3 tangential = pd_v3_madd(rel, -vn, nrm);
    pd_real speed = pd_v3_len(tangential);
    pd_real cut = speed > 0 ? fmin(1, mu * vn / speed) : 0;
    return pd_v3_scale(pd_v3_madd(pd_v3_scale(tangential, cut), vn, nrm), -1);
}

/* The field at node n whose body is the largest (the first of equals), or -1 when fewer than
 * two fields have mass there. */
static int normal_field(const pd_real* fm, size_t k, const pd_real* body_mass) {
    int largest = -1, present = 0;
    for (size_t b = 0; b < k; ++b)
        if (fm[b] > 0) {
            ++present;
            if (largest < 0 || body_mass[b] > body_mass[largest])
                largest = (int)b;
        }
    return present >= 2 ? largest : -1;
}

/* The particles' extents along the unit vector u in the column about node n's line along u:
 * ext[l] = the max of (x_p - x_n) . u over field l's particles, ext[b] = the min over field b's
 * for the others, each over the particles with weight at n within a spacing (2 r_b, at least
 * half a cell) of the line; +-INFINITY: none. A lattice of that spacing crossing the line has a
 * particle there; particles beside the interface stay out: with u tilted by theta from the
 * interface's normal, one a lateral distance s away moves the extent by s sin theta (over the
 * stencil's whole reach, 1.5 cells, a block sliding on a slab dragged: 1.36 m/s^2 for Coulomb's
 * 1.51). */
static void extents(const pd_grid* g, size_t n, const pd_grid_contact* c, size_t k, size_t l,
                    pd_vec3 u, pd_real* ext) {
    for (size_t b = 0; b < k; ++b)
        ext[b] = b == l ? -INFINITY : INFINITY;
    pd_real w;
    pd_vec3 d;
    uint32_t p;
    for (node_cursor q = node_cursor_at(g, n); node_cursor_next(g, &q, &p, &w, &d);) {
        size_t b = (size_t)c->field_of[p];
        pd_real along = -pd_v3_dot(d, u); /* d = x_n - x_p */
        pd_real reach = fmax(g->dx / 2, 2 * c->half_spacing[b]);
        if (!(w > 0) || pd_v3_len2(d) - along * along >= reach * reach)
            continue;
        ext[b] = b == l ? fmax(ext[b], along) : fmin(ext[b], along);
    }
}

/* The unit vector across the interface between field l and the heaviest other field o at a
 * node, along which the gap is measured: M_l n_l - M_o n_o over its length, n_b = g_b / |g_b| a
 * field's own outward normal, M_b its body's mass; zero when it has no direction. Equal bodies
 * weigh alike, so each one's own tilt where its surface turns cancels against the other's (two
 * spheres: l's own normal at the nodes off their axis tilted the column, and contact came 0.68
 * spacing before the surfaces met; physics.mpm); a body much larger than the other gives
 * nearly its own normal. */
static pd_vec3 across_normal(const pd_real* fm, const pd_vec3* fg, size_t k, size_t l,
                             const pd_real* body_mass) {
    size_t o = l;
    for (size_t b = 0; b < k; ++b)
        if (b != l && fm[b] > 0 && (o == l || fm[b] > fm[o]))
            o = b;
    pd_real ll = pd_v3_len(fg[l]), lo = pd_v3_len(fg[o]);
    pd_vec3 u = pd_v3(0, 0, 0);
    if (ll > 0)
        u = pd_v3_scale(fg[l], body_mass[l] / ll);
    if (lo > 0)
        u = pd_v3_madd(u, -body_mass[o] / lo, fg[o]);
    pd_real len = pd_v3_len(u);
    return len > 0 ? pd_v3_scale(u, 1 / len) : pd_v3(0, 0, 0);
}

/* ---- the fitted normal (Nairn, Hammerquist, Smith 2020, Sec. 2: logistic regression) ----
 *
 * The plane that best separates field l's particles (class y = -1) from the others' (y = +1)
 * among those whose stencils reach node n: with xi_p = (x_p - x_n) / dx, the weighted logistic
 * model P(y = +1 | xi) = s(z), z = a . xi + a_0, s(z) = 1 / (1 + e^-z), fitted by minimising
 *   J(a, a_0) = sum_p w_p ln(1 + e^(-y_p z_p)) + (lambda / 2) |a|^2,
 * w_p the particle's weight at the node scaled so that each class sums to 1/2 (a body that
 * reaches the node with a few particles at the stencil's edge counts as much as the other).
 * Its normal a / |a| points from l into the others. J is convex. Without the ridge its least
 * does not exist when the classes separate (|a| grows without bound) and a / |a| tends to the
 * plane of largest margin between them: the facing layers decide it, not where each body's
 * particles lie in the stencil, which is what tilts the mass gradient and the centres of mass
 * at an edge. The ridge keeps |a| finite: at lambda 1e-10, about 54 per cell on the blocks of
 * physics.mpm_contact_normal, where a particle one spacing behind its facing layer weighs
 * e^-27 of it; the direction's error falls only as 1 / ln(1 / lambda) (unit.grid: 2.7 %, 1.5 %,
 * 0.99 %, 0.75 % of the normal impulse sideways at 1e-4, 1e-6, 1e-8, 1e-10). Newton's method
 * with a halving line search on J, from a = 0 (whose first step is along the difference of the
 * classes' weighted means), until the Newton decrement is below FIT_DECREMENT or after
 * FIT_ITERATIONS steps (21 on average there, at most 25). Nairn et al.'s own objective, their
 * stopping rule and their separation from the particles' deformed shapes are not taken from the
 * paper (not at hand): the loss, the class weights, the ridge and the stop are this code's
 * (docs/methods/mpm.md "Contact"). */
#define FIT_RIDGE      1e-10
#define FIT_ITERATIONS 32
#define FIT_DECREMENT  1e-12
#define FIT_POINTS     1024
#define FIT_SETTLED    40

/* A particle of the fit: xi = (x_p - x_n) / dx, its weight w_p (each class's summing to 1/2),
 * y = +1 (the others) or -1 (field l). */
typedef struct fit_point {
    pd_real xi[3], w, y;
} fit_point;

/* Node n's particles with weight there, in the cursor's fixed order, at most FIT_POINTS (a
 * stencil of 27 cells holds 216 at 8 a cell; past FIT_POINTS, 38 a cell on average, the rest are
 * left out); 0 when a class has none. */
static size_t fit_points(const pd_grid* g, size_t n, const int32_t* field_of, size_t l,
                         fit_point* pts) {
    pd_real total[2] = {0, 0}, w;
    pd_vec3 d;
    uint32_t p;
    size_t count = 0;
    for (node_cursor cur = node_cursor_at(g, n);
         count < FIT_POINTS && node_cursor_next(g, &cur, &p, &w, &d);) {
        if (!(w > 0))
            continue;
        int other = (size_t)field_of[p] != l;
        fit_point f = {{-d.x * g->inv_dx, -d.y * g->inv_dx, -d.z * g->inv_dx}, w, other ? 1 : -1};
        pts[count++] = f;
        total[other] += w;
    }
    if (!(total[0] > 0 && total[1] > 0))
        return 0;
    for (size_t i = 0; i < count; ++i) /* each class weighs 1/2: a body's few particles count */
        pts[i].w /= 2 * total[pts[i].y > 0];
    return count;
}

/* J at q = (a, a_0) over the points, and when grad is not NULL its gradient and Hessian (upper
 * triangle of the symmetric 4 x 4 matrix in h[i][j], j >= i). */
static pd_real logistic_sums(const fit_point* pts, size_t count, const pd_real q[4],
                             pd_real grad[4], pd_real h[4][4]) {
    pd_real loss = 0;
    if (grad)
        for (int i = 0; i < 4; ++i) {
            grad[i] = 0;
            for (int j = 0; j < 4; ++j)
                h[i][j] = 0;
        }
    for (size_t k = 0; k < count; ++k) {
        const fit_point* f = &pts[k];
        pd_real xi[4] = {f->xi[0], f->xi[1], f->xi[2], 1};
        pd_real z = q[0] * xi[0] + q[1] * xi[1] + q[2] * xi[2] + q[3];
        pd_real e = exp(-fabs(z));
        loss += f->w * (fmax(-f->y * z, 0) + log1p(e)); /* ln(1 + e^(-y z)) without overflow */
        if (!grad)
            continue;
        pd_real s = z >= 0 ? 1 / (1 + e) : e / (1 + e);
        pd_real r = f->w * (s - (f->y + 1) / 2), c = f->w * s * (1 - s);
        for (int i = 0; i < 4; ++i) {
            grad[i] += r * xi[i];
            for (int j = i; j < 4; ++j)
                h[i][j] += c * xi[i] * xi[j];
        }
    }
    for (int i = 0; i < 3; ++i) {
        loss += FIT_RIDGE / 2 * q[i] * q[i];
        if (grad)
            grad[i] += FIT_RIDGE * q[i], h[i][i] += FIT_RIDGE;
    }
    if (grad)
        h[3][3] += 1e-9 * FIT_RIDGE; /* a_0 free: only keeps the matrix definite */
    return loss;
}

/* Leaves out the points classified right by more than FIT_SETTLED (y z > FIT_SETTLED): their
 * terms in J, its gradient and Hessian are below e^-FIT_SETTLED of their weight, under round-off
 * beside the rest (they are the particles behind each body's facing layers once |a| has grown);
 * their loss is taken off *loss so that J stays comparable. The fit's later steps then sum over
 * the facing layers alone. */
static size_t drop_settled(fit_point* pts, size_t count, const pd_real q[4], pd_real* loss) {
    size_t kept = 0;
    for (size_t k = 0; k < count; ++k) {
        const fit_point* f = &pts[k];
        pd_real yz = f->y * (q[0] * f->xi[0] + q[1] * f->xi[1] + q[2] * f->xi[2] + q[3]);
        if (yz > FIT_SETTLED)
            *loss -= f->w * log1p(exp(-yz));
        else
            pts[kept++] = *f;
    }
    return kept;
}

/* Solves h x = b for the symmetric positive definite h (upper triangle) by Cholesky; 0 when it
 * is not positive definite to round-off. */
static int solve4(pd_real h[4][4], const pd_real b[4], pd_real x[4]) {
    pd_real l[4][4] = {{0}};
    for (int j = 0; j < 4; ++j) {
        pd_real dsum = h[j][j];
        for (int k = 0; k < j; ++k)
            dsum -= l[j][k] * l[j][k];
        if (!(dsum > 0))
            return 0;
        l[j][j] = sqrt(dsum);
        for (int i = j + 1; i < 4; ++i) {
            pd_real sum = h[j][i];
            for (int k = 0; k < j; ++k)
                sum -= l[i][k] * l[j][k];
            l[i][j] = sum / l[j][j];
        }
    }
    pd_real y[4];
    for (int i = 0; i < 4; ++i) {
        y[i] = b[i];
        for (int k = 0; k < i; ++k)
            y[i] -= l[i][k] * y[k];
        y[i] /= l[i][i];
    }
    for (int i = 3; i >= 0; --i) {
        x[i] = y[i];
        for (int k = i + 1; k < 4; ++k)
            x[i] -= l[k][i] * x[k];
        x[i] /= l[i][i];
    }
    return 1;
}

/* The unit normal of the plane fitted between field l's particles and the others' at node n,
 * pointing from l into the others (the comment above); zero when it has no direction. */
static pd_vec3 fitted_normal(const pd_grid* g, size_t n, const int32_t* field_of, size_t l) {
    fit_point pts[FIT_POINTS];
    size_t count = fit_points(g, n, field_of, l, pts);
    if (count == 0)
        return pd_v3(0, 0, 0);
    pd_real q[4] = {0, 0, 0, 0}, grad[4], h[4][4], step[4], trial[4];
    pd_real loss = logistic_sums(pts, count, q, grad, h);
    for (int it = 0; it < FIT_ITERATIONS; ++it) {
        pd_real minus[4] = {-grad[0], -grad[1], -grad[2], -grad[3]};
        if (!solve4(h, minus, step))
            break;
        pd_real decrement =
            -(grad[0] * step[0] + grad[1] * step[1] + grad[2] * step[2] + grad[3] * step[3]);
        if (!(decrement > FIT_DECREMENT))
            break; /* J is within about decrement / 2 of its least */
        /* the trial's sums in one pass: a full step is taken nearly always, its sums kept */
        pd_real t = 1, tl = loss, tg[4], th[4][4];
        for (int half = 0; half < 30; ++half, t /= 2) {
            for (int i = 0; i < 4; ++i)
                trial[i] = q[i] + t * step[i];
            tl = logistic_sums(pts, count, trial, tg, th);
            if (tl <= loss - 1e-4 * t * decrement)
                break;
        }
        if (!(tl < loss))
            break; /* no descent left at round-off */
        loss = tl;
        memcpy(q, trial, sizeof q);
        memcpy(grad, tg, sizeof grad);
        memcpy(h, th, sizeof th);
        count = drop_settled(pts, count, q, &loss);
    }
    pd_vec3 a = pd_v3(q[0], q[1], q[2]);
    pd_real len = pd_v3_len(a);
    return len > 0 ? pd_v3_scale(a, 1 / len) : pd_v3(0, 0, 0);
}

/* Node n's field L (the largest body's), its outward unit normal and the unit vector u the gap
 * is measured along, by c->normal; -1 when fewer than two fields have mass there or the normal
 * has no direction. */
static int node_normal(const pd_grid* g, size_t n, const pd_grid_fields* f,
                       const pd_grid_contact* c, pd_vec3* nrm, pd_vec3* u) {
    size_t k = (size_t)f->count;
    const pd_real* fm = &f->mass[n * k];
    const pd_vec3* fg = &f->moment[n * k];
    int large = normal_field(fm, k, c->body_mass);
    if (large < 0)
        return -1;
    size_t l = (size_t)large;
    if (c->normal == PD_GRID_NORMAL_MASS_GRADIENT) {
        pd_real len = pd_v3_len(fg[l]);
        *u = across_normal(fm, fg, k, l, c->body_mass);
        if (!(len > 0) || !(pd_v3_len2(*u) > 0))
            return -1; /* L's particles balanced about the node: no surface of L here */
        *nrm = pd_v3_scale(fg[l], 1 / len);
    } else {
        *nrm = *u = fitted_normal(g, n, c->field_of, l);
        if (!(pd_v3_len2(*u) > 0))
            return -1;
    }
    return large;
}

pd_vec3 pd_grid_fields_contact_normal(const pd_grid* g, const pd_grid_fields* f,
                                      const pd_grid_contact* c, size_t n, pd_vec3* gap_direction) {
    pd_vec3 nrm = pd_v3(0, 0, 0), u = nrm;
    if (node_normal(g, n, f, c, &nrm, &u) < 0)
        nrm = u = pd_v3(0, 0, 0);
    if (gap_direction)
        *gap_direction = u;
    return nrm;
}

/* One node's contact (the header's rule; Jacobi: each change from the velocities before any):
 * L's normal, the fields whose gap to L closes within the step, their centre-of-mass velocity,
 * and each one's change. */
static void node_contact(const pd_grid* g, size_t n, pd_grid_fields* f, const pd_grid_contact* c) {
    size_t k = (size_t)f->count;
    pd_real *fm = &f->mass[n * k], *ext = &f->extent[n * k];
    pd_vec3* fv = &f->velocity[n * k];
    pd_vec3 nrm, u;
    int large = node_normal(g, n, f, c, &nrm, &u);
    if (large < 0)
        return;
    size_t l = (size_t)large;
    extents(g, n, c, k, l, u, ext);
    pd_real top = ext[l] + c->half_spacing[l], m = fm[l], heaviest = 0;
    pd_vec3 p = pd_v3_scale(fv[l], fm[l]);
    size_t other = l;
    for (size_t b = 0; b < k; ++b) {
        if (b == l || !(fm[b] > 0))
            continue;
        pd_real gap = ext[b] - c->half_spacing[b] - top;
        ext[b] = gap - c->dt * pd_v3_dot(pd_v3_sub(fv[l], fv[b]), u); /* at the step's end */
        if (!(ext[b] <= 0))
            continue;
        m += fm[b];
        p = pd_v3_madd(p, fm[b], fv[b]);
        if (fm[b] > heaviest)
            heaviest = fm[b], other = b;
    }
    if (other == l)
        return; /* no field's surface reaches L's within the step */
    pd_vec3 vcm = pd_v3_scale(p, 1 / m);
    pd_real mu_l = sqrt(c->friction[l] * c->friction[other]);
    fv[l] = pd_v3_add(fv[l], contact_change(pd_v3_sub(fv[l], vcm), nrm, mu_l));
    for (size_t b = 0; b < k; ++b) {
        if (b == l || !(fm[b] > 0) || !(ext[b] <= 0))
            continue;
        pd_real mu = sqrt(c->friction[b] * c->friction[l]);
        fv[b] = pd_v3_add(fv[b], contact_change(pd_v3_sub(fv[b], vcm), pd_v3_scale(nrm, -1), mu));
    }
}

typedef struct contact_job {
    const pd_grid* g;
    pd_grid_fields* f;
    const pd_grid_contact* c;
} contact_job;

static void contact_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const contact_job* job = ctx;
    for (size_t n = begin; n < end; ++n)
        node_contact(job->g, n, job->f, job->c);
}

void pd_grid_fields_contact(const pd_grid* g, pd_grid_fields* f, const pd_grid_contact* c) {
    contact_job job = {g, f, c};
    pd_parallel_for(g->nodes, 512, contact_range, &job);
}

/* ------------------------------------------------------------ grid to particle */

typedef struct g2p_job {
    const pd_grid* g;
    const pd_grid_fields* f;
    const int32_t* field_of;
    pd_vec3* v;
    pd_mat3* c;
} g2p_job;

static void g2p_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const g2p_job* job = ctx;
    pd_real scale = 4 / (job->g->dx * job->g->dx);
    for (size_t p = begin; p < end; ++p) {
        pd_mat3 b;
        pd_vec3 v = pd_grid_particle_sums(job->g, p, job->f->velocity, (size_t)job->f->count,
                                          (size_t)job->field_of[p], job->c ? &b : NULL);
        job->v[p] = v;
        if (job->c)
            job->c[p] = pd_m3_scale(b, scale);
    }
}

void pd_grid_fields_to_particles(const pd_grid* g, const pd_grid_fields* f, const int32_t* field_of,
                                 pd_vec3* v, pd_mat3* c) {
    g2p_job job = {g, f, field_of, v, c};
    pd_parallel_for(g->particles, 256, g2p_range, &job);
}

pd_status pd_grid_fields_rpic_round_trip(pd_grid* g, pd_grid_fields* f, const int32_t* field_of,
                                         const pd_real* mass, pd_vec3* v, pd_mat3* c,
                                         pd_mat3* affine) {
    for (size_t p = 0; p < g->particles; ++p) /* Sec. 8: only C's rotational part goes over */
        affine[p] = pd_m3_scale(pd_m3_sub(c[p], pd_m3_transpose(c[p])), mass[p] / 2);
    pd_status st = pd_grid_fields_from_particles(g, f, field_of, mass, v, affine);
    if (st == PD_OK)
        pd_grid_fields_to_particles(g, f, field_of, v, c);
    return st;
}
