/* Particle-particle contact between bodies and self-contact: pairs through the hash grid, a
 * quadratic penalty energy and a lagged Coulomb friction energy, their gradients and a
 * diagonal Hessian bound for implicit solvers. contact.h explains the choices. Friction after
 * Li et al. 2020, "Incremental Potential Contact", ACM TOG 39(4), Sec. 5 (lagged normal
 * force and tangent basis; our smoothing is the quadratic one of contact.h). */
#include "constitutive/elastic_constants.h"
#include "contact/contact.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "parallel/parallel.h"
#include "world/particles.h"

enum { PD_CONTACT_GRAIN = 512 };

pd_contact_def pd_default_contact_def(void) {
    return (pd_contact_def){.horizon = 2.01, .stiffness = 4, .slip_velocity = 1e-3};
}

/* The Verlet skin: a quarter of the smallest spacing s, or more, up to where the candidates
 * reach the families' horizon (radius + 2 skin = horizon s). A candidate within the horizon of a
 * body at rest is a bonded neighbour, never eligible and dropped from the list (keep_eligible),
 * so up to there a wider skin costs only the search, and the list goes stale less often: on the
 * 25K bunny's landing (1 thread) a skin of s/2 rebuilt it 38 times in 9 steps instead of 52 and
 * the local step took 620 ms a step instead of 690. Beyond the horizon, unbonded pairs of the
 * same body would stay in the list and be tested at every evaluation (3 s/4: 860 ms). */
static pd_real candidate_skin(pd_real radius, pd_real smin, pd_real horizon) {
    return fmax(0.25 * smin, 0.5 * (horizon * smin - radius));
}

pd_status pd_contact_init(pd_contact* c, const pd_contact_def* def, const pd_particles* p) {
    memset(c, 0, sizeof *c);
    c->def = *def;
    c->p = p;
    c->n = p->count;
    c->grid.keep_rows = 1; /* the candidates are searched again as the bodies move */
    for (size_t i = 0; i < c->n; ++i)
        c->radius = fmax(c->radius, p->spacing[i]);
    pd_real smin = INFINITY;
    for (size_t i = 0; i < c->n; ++i)
        smin = fmin(smin, p->spacing[i]);
    c->skin = candidate_skin(c->radius, smin, def->horizon);
    c->chunks = (c->n + PD_CONTACT_GRAIN - 1) / PD_CONTACT_GRAIN;
    c->grad = PD_NEW_ARRAY(pd_vec3, c->n + 1);
    c->diag = PD_NEW_ARRAY(pd_real, c->n + 1);
    c->partial = PD_NEW_ARRAY(pd_real, 4 * c->chunks + 1);
    if (def->friction) /* the friction pairs' offsets: 4 bytes a particle where none is */
        c->f_offsets = PD_NEW_ARRAY(uint32_t, c->n + 1);
    c->near_at = PD_NEW_ARRAY(float, 3 * c->n + 1);
    if (!c->grad || !c->diag || !c->partial || (def->friction && !c->f_offsets) || !c->near_at)
        return PD_ERR_OUT_OF_MEMORY;
    return PD_OK;
}

void pd_contact_add_gradient_to_callers(pd_contact* c) {
    if (!c->grad_adds)
        PD_FREE_ARRAY(c->grad, pd_vec3, c->n + 1);
    c->grad = NULL;
    c->grad_adds = 1;
}

static void free_friction_pairs(pd_contact* c) {
    PD_FREE_ARRAY(c->f_j, uint32_t, c->f_capacity);
    PD_FREE_ARRAY(c->f_normal, pd_vec3, c->f_capacity);
    PD_FREE_ARRAY(c->f_force, pd_real, c->f_capacity);
    c->f_j = NULL, c->f_normal = NULL, c->f_force = NULL;
    c->f_capacity = 0;
}

static void free_pairs(pd_contact* c) {
    PD_FREE_ARRAY(c->pair_k, pd_real, c->pair_capacity);
    c->pair_k = NULL;
    c->pair_capacity = 0;
}

void pd_contact_search_begins(pd_contact* c) {
    c->floor = fmin(PD_CONTACT_FLOOR, c->closest - PD_CONTACT_SLACK);
}

int pd_contact_admissible(const pd_contact* c) {
    return c->closest >= c->floor;
}

pd_status pd_contact_check_friction(int contact_on, pd_real friction, const char* path,
                                    pd_error* err) {
    if (contact_on || !(friction > 0))
        return PD_OK;
    return pd_fail(err, PD_ERR_BAD_SCENE, path,
                   "contact_friction acts only in particle-particle contact, which "
                   "solver.contact = false turns off; drop the key or turn contact on");
}

pd_status pd_contact_init_scene(pd_contact* c, pd_contact_def def, const pd_particles* p,
                                const pd_material_def* materials, int count, size_t friction_offset,
                                const uint8_t* renews) {
    size_t m_cap = (size_t)count + 1;
    pd_real* modulus = PD_NEW_ARRAY(pd_real, m_cap);
    pd_real* friction = PD_NEW_ARRAY(pd_real, m_cap);
    uint8_t* own_renews = PD_NEW_ARRAY(uint8_t, m_cap);
    int any_friction = 0;
    for (int m = 0; modulus && friction && own_renews && m < count; ++m) {
        modulus[m] = pd_material_elastic(&materials[m]).E;
        memcpy(&friction[m], (const char*)materials[m].method_params + friction_offset,
               sizeof(pd_real));
        any_friction |= friction[m] > 0;
        own_renews[m] = renews ? renews[m] : 0;
    }
    def.modulus = modulus;
    def.friction = any_friction ? friction : NULL;
    def.renews = own_renews;
    pd_status st = pd_contact_init(c, &def, p); /* clears c: the arrays are attached after */
    c->own_modulus = modulus, c->own_friction = friction, c->own_renews = own_renews;
    c->material_count = count;
    return st == PD_OK && !(modulus && friction && own_renews) ? PD_ERR_OUT_OF_MEMORY : st;
}

void pd_contact_free(pd_contact* c) {
    if (!c)
        return;
    PD_FREE_ARRAY(c->own_modulus, pd_real, (size_t)c->material_count + 1);
    PD_FREE_ARRAY(c->own_friction, pd_real, (size_t)c->material_count + 1);
    PD_FREE_ARRAY(c->own_renews, uint8_t, (size_t)c->material_count + 1);
    PD_FREE_ARRAY(c->near_at, float, 3 * c->n + 1);
    free_pairs(c);
    if (!c->grad_adds)
        PD_FREE_ARRAY(c->grad, pd_vec3, c->n + 1);
    PD_FREE_ARRAY(c->diag, pd_real, c->n + 1);
    PD_FREE_ARRAY(c->partial, pd_real, 4 * c->chunks + 1);
    PD_FREE_ARRAY(c->f_offsets, uint32_t, c->n + 1);
    free_friction_pairs(c);
    pd_hash_grid_destroy(&c->grid);
    pd_neighbor_list_destroy(&c->near);
    memset(c, 0, sizeof *c);
}

static inline pd_real dist2(pd_vec3 a, pd_vec3 b) {
    return pd_v3_len2(pd_v3_sub(a, b));
}

/* pd_contact_eligible with the bonded radius horizon * s (s the spacing it is of). */
static int eligible_beyond(const pd_contact* c, uint32_t i, uint32_t j, pd_real s) {
    const pd_particles* p = c->p;
    uint8_t fi = p->flags[i], fj = p->flags[j];
    if (i == j || ((fi | fj) & PD_P_GHOST))
        return 0;
    if ((fi & PD_P_CONSTRAINED) && (fj & PD_P_CONSTRAINED))
        return 0; /* neither can move: nothing to resolve */
    if (p->body[i] != p->body[j])
        return 1;
    const uint8_t* grains = c->def.grains;
    if (grains && grains[p->material[i]] && grains[p->material[j]])
        return 1;
    const uint8_t* renews = c->def.renews;
    if (renews && (renews[p->material[i]] || renews[p->material[j]]))
        return 0; /* bonded by the last renewal when closer than the horizon */
    pd_real bonded = c->def.horizon * s;
    return dist2(p->rest[i], p->rest[j]) > bonded * bonded;
}

int pd_contact_eligible(const pd_contact* c, uint32_t i, uint32_t j) {
    return eligible_beyond(c, i, j, c->p->spacing[i]);
}

/* The grid's filter of the candidates (pd_hash_grid.keep): i and j may touch in either order
 * (the bonded radius is of i's spacing, so of the smaller of the two), symmetric as the grid
 * asks. The evaluations test pd_contact_eligible(i, j) anyway: the pairs are those of a list
 * filtered by it. */
static int eligible_either_way(const void* ctx, uint32_t i, uint32_t j) {
    const pd_contact* c = ctx;
    return eligible_beyond(c, i, j, fmin(c->p->spacing[i], c->p->spacing[j]));
}

pd_real pd_contact_distance(const pd_contact* c, uint32_t i, uint32_t j) {
    return 0.5 * (c->p->spacing[i] + c->p->spacing[j]);
}

pd_real pd_contact_stiffness(const pd_contact* c, uint32_t i, uint32_t j) {
    const pd_real* E = c->def.modulus;
    pd_real ei = E[c->p->material[i]], ej = E[c->p->material[j]];
    pd_real e = ei + ej > 0 ? 2 * ei * ej / (ei + ej) : 0;
    return c->def.stiffness * e * pd_contact_distance(c, i, j);
}

static pd_real pair_friction(const pd_contact* c, uint32_t i, uint32_t j) {
    if (!c->def.friction)
        return 0;
    return sqrt(c->def.friction[c->p->material[i]] * c->def.friction[c->p->material[j]]);
}

/* ---------------------------------------------------------------- pairs */

/* Room for a pair stiffness per candidate (grown, never shrunk). */
static pd_status reserve_pairs(pd_contact* c, size_t need) {
    if (need <= c->pair_capacity && c->pair_k)
        return PD_OK;
    free_pairs(c);
    size_t grown = need + need / 4 + 16;
    c->pair_k = PD_NEW_ARRAY(pd_real, grown);
    c->pair_capacity = grown;
    if (!c->pair_k) {
        free_pairs(c);
        return PD_ERR_OUT_OF_MEMORY;
    }
    return PD_OK;
}

/* 1 when some particle moved more than the skin since the candidates were found (or there
 * are none yet), relative to a common translation T of all particles: a pair's distance
 * changes by at most |(u_i - T) - (u_j - T)| for displacements u, whatever T, so a pair
 * farther than d_c + 2 skin then is still farther than d_c now. T is the centre of the
 * displacements' bounding box; without it a body falling or sliding as a whole found its
 * candidates anew at nearly every evaluation (measured on the 25K bunny's landing, 1 thread:
 * the local step's 645 ms per step fell to 602). */
static pd_vec3 found_at(const pd_contact* c, size_t i) {
    const float* a = c->near_at + 3 * i;
    return pd_v3(a[0], a[1], a[2]);
}

/* Whether pair (i, j), eligible from i and closer than d_c at y, is missing from i's row
 * (rows are sorted). */
static int missing_from_row(const pd_contact* c, const pd_vec3* y, uint32_t i, uint32_t j) {
    if (!pd_contact_eligible(c, i, j) ||
        !(pd_v3_len(pd_v3_sub(y[i], y[j])) < pd_contact_distance(c, i, j)))
        return 0;
    uint32_t lo = c->near.offsets[i], hi = c->near.offsets[i + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->near.indices[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return !(lo < c->near.offsets[i + 1] && c->near.indices[lo] == j);
}

static int moved_beyond(const pd_contact* c, const pd_vec3* y, size_t i, pd_vec3 T, pd_real skin2) {
    return !(pd_v3_len2(pd_v3_sub(pd_v3_sub(y[i], found_at(c, i)), T)) <= skin2);
}

/* Whether a particle i that moved more than the skin (relative to T) now touches a particle j
 * that did not, their pair missing from the list. Such a j is within skin of where it was found
 * (+ T), so within d_c + skin of y_i - T: within the grid's cell (d_c + 2 skin), among the
 * last build's buckets near y_i - T. */
static int moved_one_touches_unlisted(const pd_contact* c, const pd_vec3* y, uint32_t i, pd_vec3 T,
                                      pd_real skin2) {
    uint32_t buckets[27];
    int nb = pd_hash_grid_buckets_near(&c->grid, pd_v3_sub(y[i], T), buckets);
    for (int b = 0; b < nb; ++b)
        for (uint32_t s = c->grid.cell_start[buckets[b]]; s < c->grid.cell_start[buckets[b] + 1];
             ++s) {
            uint32_t j = c->grid.sorted[s];
            if (j == i || moved_beyond(c, y, j, T, skin2))
                continue;
            if (missing_from_row(c, y, i, j) || missing_from_row(c, y, j, i))
                return 1;
        }
    return 0;
}

/* Whether two particles that both moved more than the skin touch through a pair not listed:
 * every pair of the few (at most PD_CONTACT_FEW_MOVED) tested, or the many when they moved
 * alike (within the skin of T2: their pairs among themselves changed by at most 2 skin). */
enum { PD_CONTACT_FEW_MOVED = 128 };
static int moved_pair_unlisted(const pd_contact* c, const pd_vec3* y, const uint32_t* few,
                               size_t moved, pd_vec3 T, pd_vec3 T2, pd_real skin2) {
    if (moved <= PD_CONTACT_FEW_MOVED) {
        for (size_t a = 0; a < moved; ++a)
            for (size_t b = a + 1; b < moved; ++b)
                if (missing_from_row(c, y, few[a], few[b]) ||
                    missing_from_row(c, y, few[b], few[a]))
                    return 1;
        return 0;
    }
    for (size_t i = 0; i < c->n; ++i)
        if (moved_beyond(c, y, i, T, skin2) && moved_beyond(c, y, i, T2, skin2))
            return 1;
    return 0;
}

/* The list still holds every pair closer than d_c when the particles that moved more than the
 * skin relative to T (the displacements' mean: a body's bulk, where the bounding box's centre
 * is pulled halfway to a few outliers) are at most a quarter of them, touch no other through a
 * pair not listed (moved_pair_unlisted), and touch no particle that did not move so far through
 * a pair not listed (moved_one_touches_unlisted). Then the list is kept as it is (its pairs
 * beyond d_c add nothing, so the energy, gradient and pair springs are those of a list found
 * anew), and the next evaluation asks again. Measured on the 25K bunny's landing
 * (semi_iterative, 5 iterations): the iterations' tests failed by 1 to 57 particles (the
 * floor's layer) of 25475, each failure a search of about 1.5 bond evaluations' cost. */
static int few_moved_apart(const pd_contact* c, const pd_vec3* y, pd_vec3 T, pd_real skin2) {
    uint32_t few[PD_CONTACT_FEW_MOVED];
    size_t moved = 0;
    pd_vec3 lo = pd_v3(INFINITY, INFINITY, INFINITY), hi = pd_v3(-INFINITY, -INFINITY, -INFINITY);
    for (size_t i = 0; i < c->n; ++i)
        if (moved_beyond(c, y, i, T, skin2)) {
            pd_vec3 u = pd_v3_sub(y[i], found_at(c, i));
            lo = pd_v3_min(lo, u), hi = pd_v3_max(hi, u);
            if (moved < PD_CONTACT_FEW_MOVED)
                few[moved] = (uint32_t)i;
            if (++moved > c->n / 4)
                return 0;
        }
    pd_vec3 T2 = pd_v3_scale(pd_v3_add(lo, hi), 0.5);
    if (moved_pair_unlisted(c, y, few, moved, T, T2, skin2))
        return 0;
    for (size_t i = 0; i < c->n; ++i)
        if (moved_beyond(c, y, i, T, skin2) &&
            moved_one_touches_unlisted(c, y, (uint32_t)i, T, skin2))
            return 0;
    return 1;
}

/* The positions are kept rounded to single precision, each within near_slack of the true one:
 * a displacement measured from them is within near_slack of the true displacement, so a
 * particle that measures at most skin - near_slack has moved at most the skin. */
static int candidates_stale(const pd_contact* c, const pd_vec3* y) {
    if (!c->near_valid)
        return 1;
    pd_vec3 lo = pd_v3(INFINITY, INFINITY, INFINITY), hi = pd_v3(-INFINITY, -INFINITY, -INFINITY);
    pd_vec3 sum = pd_v3(0, 0, 0);
    for (size_t i = 0; i < c->n; ++i) {
        pd_vec3 u = pd_v3_sub(y[i], found_at(c, i));
        lo = pd_v3_min(lo, u), hi = pd_v3_max(hi, u);
        sum = pd_v3_add(sum, u);
    }
    pd_vec3 T = pd_v3_scale(pd_v3_add(lo, hi), 0.5);
    pd_real skin = c->skin - c->near_slack, skin2 = skin * skin;
    if (!(skin > 0))
        return 1;
    for (size_t i = 0; i < c->n; ++i)
        if (moved_beyond(c, y, i, T, skin2))
            return !few_moved_apart(c, y, pd_v3_scale(sum, 1.0 / (pd_real)c->n), skin2);
    return 0;
}

/* near_at from y, and the bound on its rounding: half a unit in the last place of single
 * precision (2^-24 relative) on each component, sqrt(3) of that on the vector. */
static void keep_found_at(pd_contact* c, const pd_vec3* y) {
    pd_real largest = 0;
    for (size_t i = 0; i < c->n; ++i) {
        float* a = c->near_at + 3 * i;
        a[0] = (float)y[i].x, a[1] = (float)y[i].y, a[2] = (float)y[i].z;
        largest = fmax(largest, fmax(fabs(y[i].x), fmax(fabs(y[i].y), fabs(y[i].z))));
    }
    c->near_slack = sqrt(3.0) * 0x1p-24 * largest;
}

/* Drops the candidates that may never touch (pd_contact_eligible: bonded, both fixed, a ghost),
 * compacting the CSR list in place: eligibility does not change within a step, and a body
 * whose candidates are all its own bonded neighbours (an elastic body alone) then has no pairs
 * to test at an evaluation (measured on the 25K bunny, 1 thread: the local step's 670 ms per
 * step fell to 645). The grid has already dropped the pairs eligible in neither order
 * (eligible_either_way): this keeps row i's j eligible from i. */
static void keep_eligible(pd_contact* c) {
    pd_neighbor_list* l = &c->near;
    uint32_t kept = 0, begin = 0;
    for (size_t i = 0; i < c->n; ++i) {
        uint32_t end = l->offsets[i + 1];
        l->offsets[i] = kept;
        for (uint32_t k = begin; k < end; ++k)
            if (pd_contact_eligible(c, (uint32_t)i, l->indices[k]))
                l->indices[kept++] = l->indices[k];
        begin = end;
    }
    l->offsets[c->n] = kept;
}

/* The candidates at y (the grid's CSR list): every pair within the largest contact distance
 * plus two skins (a Verlet list), so that they hold every pair closer than d_c until some
 * particle has moved a skin (candidate_skin) from where they were found:
 * the grid is rebuilt only then, not at every line-search trial. */
static pd_status find_candidates(pd_contact* c, const pd_vec3* y) {
    if (!candidates_stale(c, y))
        return PD_OK;
    c->near_valid = 0;
    if (c->eligible_only) {
        /* only the eligible pairs are kept in the grid's rows and the list: the list, its rows
         * and the pair slots are sized to them, not to every bonded neighbour within the
         * reach; the grid without the sorted positions (24 bytes a particle; the scan reads
         * them through the sorted indices) and with a table of n / 2 buckets, not 2 n (a cell
         * of the reach, about 2 spacings, holds about 8 particles of a body) */
        c->grid.keep = eligible_either_way, c->grid.keep_ctx = c;
        c->grid.lean = 1;
        c->grid.fixed_table_size = c->n / 2 + 1;
    }
    pd_status st = pd_neighbors_build(&c->grid, y, c->n, c->radius + 2 * c->skin, &c->near);
    if (st == PD_OK) {
        size_t listed = c->near.offsets[c->n]; /* the list's need, before keep_eligible */
        c->step_most = c->step_most > listed ? c->step_most : listed;
        c->kept_listed = listed;
        keep_eligible(c);
        st = reserve_pairs(c, c->near.offsets[c->n]);
    }
    if (st != PD_OK)
        return st;
    keep_found_at(c, y);
    /* the pairs were of the old list */
    memset(c->pair_k, 0, c->near.offsets[c->n] * sizeof(pd_real));
    c->near_valid = 1;
    return PD_OK;
}

/* ---------------------------------------------------------------- friction pairs */

typedef struct contact_job {
    pd_contact* c;
    const pd_vec3* y;
} contact_job;

/* Pair (i, j) is touching at y: returns its normal force k (d_c - d) and normal, else 0. */
static pd_real touching(const pd_contact* c, const pd_vec3* y, uint32_t i, uint32_t j, pd_vec3* n) {
    if (!pd_contact_eligible(c, i, j))
        return 0;
    pd_vec3 dx = pd_v3_sub(y[i], y[j]);
    pd_real d = pd_v3_len(dx), dc = pd_contact_distance(c, i, j);
    if (!(d < dc) || !(d > 1e-12 * dc))
        return 0;
    *n = pd_v3_scale(dx, 1.0 / d);
    return pd_contact_stiffness(c, i, j) * (dc - d);
}

static void count_friction_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    contact_job* job = ctx;
    pd_contact* c = job->c;
    for (size_t i = begin; i < end; ++i) {
        uint32_t count = 0;
        for (uint32_t k = c->near.offsets[i]; k < c->near.offsets[i + 1]; ++k) {
            uint32_t j = c->near.indices[k];
            pd_vec3 n;
            count += touching(c, job->y, (uint32_t)i, j, &n) > 0 && pair_friction(c, i, j) > 0;
        }
        c->f_offsets[i + 1] = count;
    }
}

static void fill_friction_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    contact_job* job = ctx;
    pd_contact* c = job->c;
    for (size_t i = begin; i < end; ++i) {
        uint32_t at = c->f_offsets[i];
        for (uint32_t k = c->near.offsets[i]; k < c->near.offsets[i + 1]; ++k) {
            uint32_t j = c->near.indices[k];
            pd_vec3 n;
            pd_real lambda = touching(c, job->y, (uint32_t)i, j, &n), mu = pair_friction(c, i, j);
            if (!(lambda > 0 && mu > 0))
                continue;
            c->f_j[at] = j;
            c->f_normal[at] = n;
            c->f_force[at] = mu * lambda;
            ++at;
        }
    }
}

static pd_status reserve_friction(pd_contact* c, size_t need) {
    if (need <= c->f_capacity && c->f_j)
        return PD_OK;
    free_friction_pairs(c);
    size_t grown = need + need / 4 + 16;
    c->f_j = PD_NEW_ARRAY(uint32_t, grown);
    c->f_normal = PD_NEW_ARRAY(pd_vec3, grown);
    c->f_force = PD_NEW_ARRAY(pd_real, grown);
    c->f_capacity = grown;
    if (!c->f_j || !c->f_normal || !c->f_force) {
        free_friction_pairs(c);
        return PD_ERR_OUT_OF_MEMORY;
    }
    return PD_OK;
}

/* The candidates' buffers sized to `most` candidates, a quarter spare, each freed before its
 * smaller one is made (no peak beyond what was held): the list is dropped (found again at the
 * next evaluation: the same pairs, in the same order) and with it the last evaluation's pairs;
 * the grid's rows are given back whole (the next search grows them to its need). */
static pd_status fit_room(pd_contact* c, size_t most) {
    size_t fitted = most + most / 4 + 16;
    c->near_valid = 0;
    free_pairs(c);
    pd_hash_grid_release_rows(&c->grid);
    pd_status st = pd_neighbor_list_fit(&c->near, fitted, &c->grid);
    if (st != PD_OK)
        return st;
    c->pair_k = PD_NEW_ARRAY(pd_real, fitted);
    if (!c->pair_k)
        return PD_ERR_OUT_OF_MEMORY;
    c->pair_capacity = fitted;
    return PD_OK;
}

/* Once a step, the rule of contact.h: the step that ended was quiet when its searches listed
 * under a quarter of the list's room (their lists before keep_eligible: a method that keeps
 * every pair within the reach lists many more than are eligible); after PD_CONTACT_QUIET_STEPS
 * quiet steps in a row the room is fitted to the most they held (the list kept into this step
 * included), when that at least halves it. */
static pd_status follow_the_need(pd_contact* c) {
    size_t ended = c->step_most;
    /* the kept list is this step's, counted as its search counted it (before keep_eligible: a
     * step that kept the list is as quiet as the search that made it) */
    c->step_most = c->near_valid ? c->kept_listed : 0;
    if (!c->pair_k || 4 * ended >= c->near.indices_capacity) {
        c->quiet_steps = 0, c->quiet_most = 0;
        return PD_OK;
    }
    c->quiet_most = c->quiet_most > ended ? c->quiet_most : ended;
    if (++c->quiet_steps < PD_CONTACT_QUIET_STEPS)
        return PD_OK;
    size_t most = c->quiet_most > c->step_most ? c->quiet_most : c->step_most;
    c->quiet_steps = 0, c->quiet_most = 0;
    if (2 * (most + most / 4 + 16) > c->near.indices_capacity)
        return PD_OK;
    return fit_room(c, most);
}

void pd_contact_particles_reordered(pd_contact* c) {
    c->near_valid = 0;
}

pd_status pd_contact_begin_step(pd_contact* c, const pd_vec3* x0, pd_real dt) {
    if (!c->keep_candidates)
        c->near_valid = 0; /* the world may have reordered the particles since the last step */
    pd_status room = follow_the_need(c);
    if (room != PD_OK)
        return room;
    c->x0 = x0;
    c->eps = c->def.slip_velocity * dt;
    c->f_ready = 0;
    c->friction_pairs = 0;
    if (c->n == 0 || !c->def.friction)
        return PD_OK;
    pd_status st = find_candidates(c, x0);
    if (st != PD_OK)
        return st;
    contact_job job = {c, x0};
    pd_parallel_for(c->n, PD_CONTACT_GRAIN, count_friction_range, &job);
    c->f_offsets[0] = 0;
    for (size_t i = 0; i < c->n; ++i)
        c->f_offsets[i + 1] += c->f_offsets[i];
    st = reserve_friction(c, c->f_offsets[c->n]);
    if (st != PD_OK)
        return st;
    pd_parallel_for(c->n, PD_CONTACT_GRAIN, fill_friction_range, &job);
    c->friction_pairs = c->f_offsets[c->n] / 2;
    c->f_ready = 1;
    return PD_OK;
}

/* ---------------------------------------------------------------- energy and gradient */

/* Penalty of the pairs of i at y: adds dE/dy_i to *g and k to *diag; returns i's half of
 * the pair energies. Counts i's pairs with j > i in *pairs. */
static pd_real penalty_of(pd_contact* c, const pd_vec3* y, uint32_t i, pd_vec3* g, pd_real* diag,
                          size_t* pairs, pd_real* closest) {
    pd_real e = 0;
    for (uint32_t k = c->near.offsets[i]; k < c->near.offsets[i + 1]; ++k) {
        uint32_t j = c->near.indices[k];
        c->pair_k[k] = 0; /* no pair, unless it is one below */
        if (!pd_contact_eligible(c, i, j))
            continue;
        pd_vec3 dx = pd_v3_sub(y[i], y[j]);
        pd_real d = pd_v3_len(dx), dc = pd_contact_distance(c, i, j);
        if (!(d < dc))
            continue;
        pd_real kij = pd_contact_stiffness(c, i, j), gap = dc - d;
        *closest = fmin(*closest, d / dc);
        e += 0.25 * kij * gap * gap; /* half of k/2 (d_c - d)^2: j adds the other half */
        *diag += kij;
        *pairs += j > i;
        c->pair_k[k] = kij;
        if (d > 1e-12 * dc) /* coincident particles: no direction, no force */
            *g = pd_v3_madd(*g, -kij * gap / d, dx);
    }
    return e;
}

/* The closest eligible pair of i at y over its d_c, as penalty_of finds it. */
static pd_real closest_of(const pd_contact* c, const pd_vec3* y, uint32_t i) {
    pd_real closest = 1;
    for (uint32_t k = c->near.offsets[i]; k < c->near.offsets[i + 1]; ++k) {
        uint32_t j = c->near.indices[k];
        if (!pd_contact_eligible(c, i, j))
            continue;
        pd_real d = pd_v3_len(pd_v3_sub(y[i], y[j])), dc = pd_contact_distance(c, i, j);
        if (d < dc)
            closest = fmin(closest, d / dc);
    }
    return closest;
}

/* Lagged friction of i's pairs (contact.h): adds dD/dy_i to *g and the tangential stiffness
 * to *diag; returns i's half of the friction energy. */
static pd_real friction_of(const pd_contact* c, const pd_vec3* y, uint32_t i, pd_vec3* g,
                           pd_real* diag, size_t* sticking) {
    pd_real e = 0, eps = c->eps;
    pd_vec3 ui = pd_v3_sub(y[i], c->x0[i]);
    for (uint32_t k = c->f_offsets[i]; k < c->f_offsets[i + 1]; ++k) {
        uint32_t j = c->f_j[k];
        pd_vec3 n = c->f_normal[k];
        pd_vec3 u = pd_v3_sub(ui, pd_v3_sub(y[j], c->x0[j]));
        pd_vec3 ut = pd_v3_madd(u, -pd_v3_dot(u, n), n);
        pd_real s = pd_v3_len(ut), f = c->f_force[k];
        if (s < eps) {
            e += 0.5 * f * s * s / (2 * eps);
            *g = pd_v3_madd(*g, f / eps, ut);
            *diag += f / eps;
            *sticking += 1;
        } else {
            e += 0.5 * f * (s - 0.5 * eps);
            *g = pd_v3_madd(*g, f / s, ut);
            *diag += f / s;
        }
    }
    return e;
}

static void evaluate_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    contact_job* job = ctx;
    pd_contact* c = job->c;
    pd_real e = 0, closest = 1;
    size_t pairs = 0, sticking = 0;
    for (size_t i = begin; i < end; ++i) {
        pd_vec3 g = pd_v3(0, 0, 0);
        pd_real diag = 0;
        e += penalty_of(c, job->y, (uint32_t)i, &g, &diag, &pairs, &closest);
        if (c->f_ready)
            e += friction_of(c, job->y, (uint32_t)i, &g, &diag, &sticking);
        if (!c->grad_adds)
            c->grad[i] = g;
        else if (c->grad)
            c->grad[i] = pd_v3_add(c->grad[i], g); /* the caller's gradient, then the contact's */
        c->diag[i] = diag;
    }
    size_t chunk = begin / PD_CONTACT_GRAIN;
    c->partial[chunk] = e;
    c->partial[c->chunks + chunk] = (pd_real)pairs;
    c->partial[2 * c->chunks + chunk] = (pd_real)sticking;
    c->partial[3 * c->chunks + chunk] = closest;
}

static void closest_range(void* ctx, size_t begin, size_t end, int thread) {
    (void)thread;
    contact_job* job = ctx;
    pd_real closest = 1;
    for (size_t i = begin; i < end; ++i)
        closest = fmin(closest, closest_of(job->c, job->y, (uint32_t)i));
    job->c->partial[3 * job->c->chunks + begin / PD_CONTACT_GRAIN] = closest;
}

/* The candidates at y found (or kept), then fn over the particles in chunks of
 * PD_CONTACT_GRAIN, each chunk writing its partial sums. */
static pd_status over_candidates(pd_contact* c, const pd_vec3* y, pd_range_fn* fn) {
    pd_status st = find_candidates(c, y);
    if (st != PD_OK)
        return st;
    contact_job job = {c, y};
    pd_parallel_for(c->n, PD_CONTACT_GRAIN, fn, &job);
    return PD_OK;
}

pd_status pd_contact_closest(pd_contact* c, const pd_vec3* y) {
    c->closest = 1;
    if (c->n == 0)
        return PD_OK;
    pd_status st = over_candidates(c, y, closest_range);
    if (st != PD_OK)
        return st;
    for (size_t k = 0; k < c->chunks; ++k)
        c->closest = fmin(c->closest, c->partial[3 * c->chunks + k]);
    return PD_OK;
}

pd_status pd_contact_evaluate(pd_contact* c, const pd_vec3* y, pd_real* energy) {
    *energy = 0;
    c->energy = 0, c->pairs = 0, c->sticking = 0, c->closest = 1;
    if (c->n == 0)
        return PD_OK;
    pd_status st = over_candidates(c, y, evaluate_range);
    if (st != PD_OK)
        return st;
    pd_real e = 0, pairs = 0, sticking = 0;
    for (size_t k = 0; k < c->chunks; ++k) {
        c->closest = fmin(c->closest, c->partial[3 * c->chunks + k]); /* any order: a min */
        e += c->partial[k];
        pairs += c->partial[c->chunks + k];
        sticking += c->partial[2 * c->chunks + k];
    }
    c->energy = e;
    c->pairs = (size_t)pairs;
    c->sticking = (size_t)sticking / 2;
    *energy = e;
    return PD_OK;
}
