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
    return f->mass && f->velocity && f->moment ? PD_OK : PD_ERR_OUT_OF_MEMORY;
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
        g->momentum[n] = mv;
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

void pd_grid_fields_hold(const pd_grid* g, pd_grid_fields* f, const uint8_t* held,
                         const pd_vec3* velocity) {
    size_t k = (size_t)f->count;
    for (size_t n = 0; n < g->nodes; ++n)
        for (size_t b = 0; held[n] && b < k; ++b)
            if (f->mass[n * k + b] > 0)
                f->velocity[n * k + b] = velocity[n];
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

/* Pair friction of field b at a node: sqrt(mu_b mu_o), o the heaviest other field there. */
static pd_real pair_friction(const pd_real* fm, size_t k, size_t b, const pd_real* friction) {
    size_t o = b;
    for (size_t a = 0; a < k; ++a)
        if (a != b && (o == b || fm[a] > fm[o]))
            o = a;
    return sqrt(friction[b] * friction[o]);
}

/* One node's contact: every field against the centre of mass of all (Jacobi: each change
 * from the velocities before any). Field b's normal points from its local centre of mass at the
 * node, x_i - g_b / m_b, to that of the others, x_i - (G - g_b) / (M - m_b) (the mass gradients
 * over the masses: at the rim where two bodies' free surfaces meet, a plain difference of the
 * gradients would tilt towards the free surface's normal with the masses' imbalance); with two
 * fields n_a = -n_b. */
static void node_contact(pd_real* fm, pd_vec3* fv, const pd_vec3* fg, size_t k,
                         const pd_real* friction) {
    pd_real m = 0;
    pd_vec3 p = pd_v3(0, 0, 0), moment = pd_v3(0, 0, 0);
    int present = 0;
    for (size_t b = 0; b < k; ++b) {
        if (!(fm[b] > 0))
            continue;
        ++present;
        m += fm[b];
        p = pd_v3_madd(p, fm[b], fv[b]);
        moment = pd_v3_add(moment, fg[b]);
    }
    if (present < 2)
        return;
    pd_vec3 vcm = pd_v3_scale(p, 1 / m);
    for (size_t b = 0; b < k; ++b) {
        if (!(fm[b] > 0))
            continue;
        pd_vec3 nrm = pd_v3_sub(pd_v3_scale(fg[b], 1 / fm[b]),
                                pd_v3_scale(pd_v3_sub(moment, fg[b]), 1 / (m - fm[b])));
        pd_real len = pd_v3_len(nrm);
        if (!(len > 0))
            continue;
        nrm = pd_v3_scale(nrm, 1 / len);
        pd_real mu = pair_friction(fm, k, b, friction);
        fv[b] = pd_v3_add(fv[b], contact_change(pd_v3_sub(fv[b], vcm), nrm, mu));
    }
}

typedef struct contact_job {
    pd_grid_fields* f;
    const pd_real* friction;
} contact_job;

static void contact_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    const contact_job* job = ctx;
    size_t k = (size_t)job->f->count;
    for (size_t n = begin; n < end; ++n)
        node_contact(&job->f->mass[n * k], &job->f->velocity[n * k], &job->f->moment[n * k], k,
                     job->friction);
}

void pd_grid_fields_contact(const pd_grid* g, pd_grid_fields* f, const pd_real* friction) {
    contact_job job = {f, friction};
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
