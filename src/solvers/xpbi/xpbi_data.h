/* Data of the xpbi method (Yu, Li, Lan, Yang, Jiang 2024, "XPBI: Position-Based Dynamics with
 * Smoothing Kernels Handles Continuum Inelasticity"): options, per-material constants and the
 * per-particle state. The step (Alg. 1) is in yu2024_xpbi.c, the neighbourhoods, kernels and
 * colouring of a step's start (Sec. 3.2, 4.2, 4.3) in xpbi_neighbors.c, the set-up in
 * xpbi_setup.c. */
#ifndef PD_XPBI_DATA_H
#define PD_XPBI_DATA_H

#include "constitutive/cam_clay.h"
#include "constitutive/hencky_plasticity.h"
#include "contact/contact_velocity.h"
#include "constitutive/herschel_bulkley.h"
#include "core/param.h"
#include "neighbor/family.h"
#include "neighbor/hash_grid.h"
#include "solvers/solver.h"
#include "world/state_arrays.h"

struct pd_world;

/* Particles per chunk of the per-particle loops. */
#define PD_XPBI_GRAIN 256

/* solver.xpbi.solver */
enum { PD_XPBI_GAUSS_SEIDEL, PD_XPBI_JACOBI };

/* solver.xpbi.constraints: Eq. 6's one constraint per particle, or Eq. 4-5's two */
enum { PD_XPBI_ONE_CONSTRAINT, PD_XPBI_TWO_CONSTRAINTS };
/* which of Eq. 4-5's constraints pd_xpbi_split_constraint evaluates */
enum { PD_XPBI_C_MU, PD_XPBI_C_LAMBDA };

/* solver.xpbi.plasticity: the return of Eq. 14 in every constraint evaluation (implicit) or at
 * the step's end only (semi_implicit, Sec. 5.1's comparison, Fig. 9) */
enum { PD_XPBI_PLASTIC_IMPLICIT, PD_XPBI_PLASTIC_SEMI_IMPLICIT };

/* solver.xpbi.hourglass_relaxation: how a plastic material's hourglass reference follows its
 * flow (xpbi_hourglass.c): fitted to the positions and renewed (hourglass_renewal), or each
 * pair's misfit returned with the particle's own plastic return every step */
enum { PD_XPBI_HG_RENEWAL, PD_XPBI_HG_PLASTIC };

/* solver.xpbi.xsph_scaling: how Eq. 20's smoothing is sized each step (xsph_c): as the kinematic
 * viscosity xsph_viscosity, as c per xsph_time of simulated time, or as c every step (Eq. 20 as
 * printed) */
enum { PD_XPBI_XSPH_VISCOSITY, PD_XPBI_XSPH_TIME, PD_XPBI_XSPH_STEP };

typedef struct pd_xpbi_params {
    int iterations;            /* XPBD iterations per step (the cap when tolerance > 0) */
    pd_real tolerance;         /* > 0: stop once |h| / |h^(0)| is below it (Fig. 18) */
    pd_real radius;            /* r in particle spacings; the kernel's support is k = 2 r */
    pd_real svd_cutoff;        /* L_p's pseudo-inverse drops singular values below this x max */
    int xsph_scaling;          /* PD_XPBI_XSPH_VISCOSITY, _TIME or _STEP */
    pd_real xsph_viscosity;    /* viscosity: Eq. 20 as this kinematic viscosity (m^2/s) */
    pd_real xsph;              /* time, step: c of Eq. 20 */
    pd_real xsph_time;         /* time: c applies per this much simulated time (s) */
    pd_real distance_epsilon;  /* epsilon of Eq. 21 in r */
    int solver;                /* PD_XPBI_GAUSS_SEIDEL or PD_XPBI_JACOBI */
    pd_real jacobi_relaxation; /* jacobi: the summed velocity changes are scaled by this */
    pd_real courant;           /* time.dt "auto": dt (c_P + |v|) / r at most */
    int plasticity;            /* PD_XPBI_PLASTIC_IMPLICIT or PD_XPBI_PLASTIC_SEMI_IMPLICIT */
    pd_real hourglass;         /* beta: the hourglass constraint's stiffness in E (0: off) */
    int contact;               /* 1: contact between bodies (contact_velocity.h) */
    pd_real damping;           /* tau (s): XPBD constraint damping, gamma = tau / dt (0: off) */
    pd_real hourglass_renewal; /* the Green strain of a plastic particle's fitted F_ref at
                                * which the hourglass reference is renewed (xpbi_hourglass.c) */
    int constraints;           /* PD_XPBI_ONE_CONSTRAINT (Eq. 6) or PD_XPBI_TWO_CONSTRAINTS */
    int hourglass_plastic;     /* 1: the hourglass constraint with the updated reference on a
                                * von Mises, Herschel-Bulkley or Cam-clay material */
    int hourglass_relaxation;  /* PD_XPBI_HG_RENEWAL or PD_XPBI_HG_PLASTIC */
} pd_xpbi_params;

/* Method keys inside a material (xpbi_params.c). */
typedef struct pd_xpbi_material_params {
    pd_real contact_friction; /* Coulomb against other bodies (the core's row) */
} pd_xpbi_material_params;

extern const pd_param_table pd_xpbi_param_table;
extern const pd_param_table pd_xpbi_material_table;
extern const pd_material_support pd_xpbi_material_support;

/* One material: StVK with Hencky strain (Eq. 3) and its plastic return Z (Eq. 14, 22). */
typedef struct pd_xpbi_material {
    pd_real mu, lambda; /* Pa */
    int plastic;        /* 1: Z projects F onto `yield` (drucker_prager, von_mises), 2: Z is
                           Herschel-Bulkley's return of a step dt (`flow`), 3: non-associated
                           Cam-clay's (`clay`, with the particle's log_jp) */
    pd_real hourglass;  /* beta E (Pa): 0 where off, and for Drucker-Prager */
    int hg_returned;    /* 1: plastic with the hourglass constraint, its pairs' misfits returned
                           with the particle's return (hourglass_relaxation plastic) */
    pd_real friction;   /* contact_friction against other bodies (1) */
    pd_hencky_yield yield;
    pd_herschel_bulkley flow;
    pd_cam_clay clay;
    pd_real log_jp0; /* cam_clay: alpha_0 */
} pd_xpbi_material;

/* One neighbour entry's hourglass data (xpbi_hourglass.c): y = F_ref,p^n X_pb with the reference
 * offset X_pb = X_b - X_p (x_ref) and k = beta E V_b^0 W(|X_pb|) / |X_pb|^2 (the constraint's
 * gradients go to a buffer of the caller's: 32 bytes an entry to read, none to write back). */
typedef struct pd_xpbi_hourglass {
    pd_vec3 y; /* m */
    pd_real k; /* Pa m (energy density per m^2 of eps) */
} pd_xpbi_hourglass;

/* Constraint sets of one colour that touch disjoint particles (Sec. 4.3): tasks of whole cells
 * of one parity colour, cells at least 2 k wide. */
#define PD_XPBI_COLORS 8

typedef struct pd_xpbi_state {
    pd_xpbi_params prm;
    int material_count;
    pd_xpbi_material* mat;
    size_t n;
    size_t cap;      /* particles every per-particle array holds (the world's capacity: emitters) */
    pd_real r;       /* the kernel radius r (m); support k = 2 r */
    pd_real spacing; /* the finest body's spacing (m) */
    int collider_count;
    /* per particle, kept across steps (declared in persist) */
    pd_mat3* f;              /* F_p^n: the elastic deformation gradient (Eq. 9, 22) */
    pd_real* volume0;        /* V_p^0 (m^3) */
    pd_real* plastic_strain; /* sum of |ln s_tr - ln s| of the returns at the steps' ends */
    pd_real* log_jp;         /* cam_clay: alpha = ln J^P, hardening (cam_clay.h) */
    pd_vec3* x_ref;          /* the positions of the first step, where F = I: the reference X of
                              * the hourglass constraint (the sampled ones until then) */
    pd_mat3* f_ref;          /* the deformation since x_ref (xpbi_hourglass.c): Eq. 22's
                              * (I + dt L) products, F itself, for an elastic material; for a
                              * plastic one fitted to the neighbours' positions each step */
    int have_ref;            /* x_ref holds the first step's positions */
    int renewals;            /* how often the reference was renewed (tests) */
    /* hourglass_relaxation plastic (xpbi_hourglass.c): the part of the deviatoric elastic strain
     * the step's end return kept, |dev ln s| / |dev ln s_tr| (1 where elastic), per particle;
     * the last step's neighbour lists (near) and each entry's reference offset y as returned at
     * its end, for this step's pairs to take over (none: the first step, after a reorder or a
     * checkpoint) */
    pd_real* hg_keep;
    uint32_t *hg_old_offsets, *hg_old_index;
    pd_vec3* hg_old_y;
    size_t hg_old_index_capacity, hg_old_y_capacity;
    int hg_old_valid;
    /* rebuilt every step */
    pd_real* volume;         /* V_p^n = V_p^0 det F_p^n (m^3) */
    pd_real* inv_mass;       /* 1 / m, 0 for pinned and fixed particles */
    pd_real* lambda;         /* the multiplier of C_p (Eq. 17, 19) */
    pd_real* lambda_h;       /* the multiplier of the hourglass constraint C_h,p */
    pd_real* lambda_v;       /* constraints two: the multiplier of C_lambda (Eq. 5); lambda
                              * holds C_mu's (Eq. 4) */
    pd_real* dlambda_h;      /* jacobi: this sweep's change of it */
    pd_real* dlambda;        /* jacobi: this sweep's change of it */
    pd_mat3* dcdf_ft;        /* jacobi: dC_p/dF F_p^n^T of this sweep */
    pd_mat3* u_near;         /* the left singular vectors of F_p of the last iteration (Eq. 9) */
    int warm;                /* u_near holds this step's: the SVDs start from it */
    pd_mat3* grad_moment;    /* Q_p = sum_b w_b g_b g_b^T + w_p (sum g)(sum g)^T (1/m^2 kg) */
    pd_vec3* v_start;        /* v^n + dt g (Alg. 1's third line) */
    pd_vec3* dv;             /* jacobi: summed changes; xsph: the smoothed velocities */
    pd_vec3* impulse;        /* what the constraints gave a pinned particle this step (N s) */
    pd_vec3* surface_normal; /* bodies touch: away from the other bodies near (unit or 0) */
    pd_real* contact_n;      /* per particle and collider: the normal dv accumulated (m/s) */
    pd_vec3* contact_t;      /* ... and the friction's tangential dv accumulated (m/s) */
    pd_real* collider_gap;   /* ... and the collider's signed distance at x^n (m; -inf: mesh) */
    pd_real* sweep_h2;       /* per task (per chunk: jacobi): the sum of h^2 of the last sweep */
    pd_real* pair_gap;       /* per particle: min |x_b^n - x_p^n| over its neighbours b > p (m) */
    pd_real*
        speed_chunk; /* 3 per chunk: the largest |v|^2, the smallest pair_gap, colliders idle */
    uint32_t* task_fired; /* per task: a distance constraint of it acted in this sweep */
    pd_real pair_speed;   /* the largest |v| before this distance sweep (m/s) */
    int pair_fired;       /* a distance constraint of an earlier colour of this sweep acted */
    pd_hash_grid grid;
    double search_seconds; /* the last pd_xpbi_neighborhoods' V^n and search (the bench's stage) */
    pd_neighbor_list near; /* within k at the step's start, all bodies */
    /* per entry e of near (neighbour b = near.indices[e] of p at the step's start, Sec. 4.2),
     * apart (structure of arrays: the iterations stream the gradients and indices alone) */
    pd_vec3* nb_g; /* V_b^n L_p grad W_b(x_p^n), Eq. 10-11 (1/m); 0 for another body's b,
                    * whose velocity the continuum does not see */
    pd_real* nb_w; /* V_b^n W_b(x_p^n), Eq. 20's weight (1); 0 for another body's b */
    size_t nb_g_capacity, nb_w_capacity;
    pd_xpbi_hourglass* hg; /* per entry of near when hourglass > 0 */
    size_t hg_capacity;
    pd_vec3* hg_grad; /* per entry: the hourglass gradients (sqrt(Pa) / m) where a sweep keeps
                       * them beyond a particle (jacobi, or too many neighbours for the stack) */
    size_t hg_grad_capacity;
    /* per entry of near when bodies touch (contact on, two bodies or more): what the pair's
     * contact gave over the step (contact_velocity.h), on the entry of the smaller index */
    pd_contact_pair_sum* pair_sum;
    size_t pair_capacity;
    int bodies_touch; /* contact on and more than one body */
    /* the colouring (Sec. 4.3): particles by colour and cell, tasks of whole cells */
    uint32_t* order;
    uint32_t* task;
    uint64_t* keys;
    size_t tasks;
    size_t color_task[PD_XPBI_COLORS + 1];
    /* the last step's residual |h| / |h^(0)| after each iteration (tests, Fig. 14) */
    pd_real* history;
    int history_count;
    pd_family none; /* no bonds: an empty family for the per-particle arrays, reordering and
                     * checkpoints */
    pd_state_arrays persist;
    const pd_step_context* step; /* valid during a step */
} pd_xpbi_state;

pd_status pd_xpbi_create(struct pd_world* w, const void* params, void** state, pd_error* err);
void pd_xpbi_destroy(void* state);
pd_status pd_xpbi_check_material(const pd_material_def* m, const void* params, const char* path,
                                 pd_error* err);
pd_status pd_xpbi_check_body_material(const struct pd_scene* scene, int body, int material,
                                      const char* path, pd_error* err);
pd_real pd_xpbi_max_time_step(void* state, const struct pd_world* w);
pd_state_arrays* pd_xpbi_persistent(void* state);
pd_status pd_xpbi_restored(void* state, struct pd_world* w, struct pd_ckpt_reader* r,
                           pd_error* err);
pd_status pd_xpbi_on_reorder(void* state, struct pd_world* w, const uint32_t* perm);
pd_status pd_xpbi_on_emit(void* state, struct pd_world* w, size_t first, pd_error* err);
size_t pd_xpbi_bytes_per_particle(const struct pd_scene* scene, double bond_fraction);

/* m += (s a) b^T entry by entry, in the order of pd_m3_add_outer (the same products and sums:
 * -std=c11 contracts no multiply-add, so the same bits), written out so that a local m summed
 * over a neighbour loop stays in registers: pd_m3_add_outer's loops kept it in memory, a
 * store-to-load chain per entry that cost 30 % of a step (perf, the 8K bench case). */
static inline void pd_xpbi_add_outer(pd_mat3* m, pd_real s, pd_vec3 a, pd_vec3 b) {
    pd_real x = s * a.x, y = s * a.y, z = s * a.z;
    m->m[0][0] += x * b.x, m->m[0][1] += x * b.y, m->m[0][2] += x * b.z;
    m->m[1][0] += y * b.x, m->m[1][1] += y * b.y, m->m[1][2] += y * b.z;
    m->m[2][0] += z * b.x, m->m[2][1] += z * b.y, m->m[2][2] += z * b.z;
}

/* A 3-vector in the first three lanes of a 4-wide one (a matrix as its three columns): the
 * per-entry arithmetic of the iterations' passes over the neighbours a lane per component, each
 * lane's the scalar code's operations in its order (no contraction: -std=c11), so the same
 * bits (the passes were scalar: three components do not fill the registers and the sums
 * spilled). Through pointers, not returned values (mpm_admm.c's note on -Wpsabi). */
typedef pd_real pd_xpbi_v4 __attribute__((vector_size(4 * sizeof(pd_real))));

static inline void pd_xpbi_v4_of(pd_xpbi_v4* out, pd_vec3 a) {
    *out = (pd_xpbi_v4){a.x, a.y, a.z, 0};
}

/* m v with m's columns c: (c0 v_x + c1 v_y) + c2 v_z, pd_m3_mulv's order in each lane. */
static inline void pd_xpbi_v4_mulv(pd_xpbi_v4* out, const pd_xpbi_v4 c[3], pd_real x, pd_real y,
                                   pd_real z) {
    *out = c[0] * x + c[1] * y + c[2] * z;
}

/* (a_x a_x + a_y a_y) + a_z a_z, pd_v3_len2's order. */
static inline pd_real pd_xpbi_v4_len2(const pd_xpbi_v4* a) {
    pd_xpbi_v4 q = *a * *a;
    return q[0] + q[1] + q[2];
}

/* pd_m3_mul(a, b) by columns: column j of a b = ((0 + a_0 b_0j) + a_1 b_1j) + a_2 b_2j with a's
 * columns a_k, pd_m3_mul's sums in its order in each lane (the same bits, zeros' signs too). */
static inline pd_mat3 pd_xpbi_m3_mul(pd_mat3 a, pd_mat3 b) {
    pd_xpbi_v4 col[3];
    for (int k = 0; k < 3; ++k)
        col[k] = (pd_xpbi_v4){a.m[0][k], a.m[1][k], a.m[2][k], 0};
    pd_mat3 r;
    for (int j = 0; j < 3; ++j) {
        pd_xpbi_v4 c = {0, 0, 0, 0};
        c = c + col[0] * b.m[0][j];
        c = c + col[1] * b.m[1][j];
        c = c + col[2] * b.m[2][j];
        r.m[0][j] = c[0], r.m[1][j] = c[1], r.m[2][j] = c[2];
    }
    return r;
}

/* Eq. 11: grad v at x_p^n from the velocities v and p's neighbour data (inline: it is the
 * innermost loop of the iterations), by columns: column j += (v_b - v_p) g_j, the entries of
 * pd_xpbi_add_outer(grad, 1, v_b - v_p, g) in its order. */
static inline pd_mat3 pd_xpbi_velocity_gradient(const pd_xpbi_state* s, uint32_t p,
                                                const pd_vec3* v) {
    pd_xpbi_v4 col[3] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}, vp;
    const uint32_t* j = s->near.indices;
    pd_xpbi_v4_of(&vp, v[p]);
    /* Eq. 11: sum_b V_b (v_b - v_p) (L_p grad W)^T */
    for (uint32_t e = s->near.offsets[p]; e < s->near.offsets[p + 1]; ++e) {
        pd_xpbi_v4 vb;
        pd_xpbi_v4_of(&vb, v[j[e]]);
        pd_xpbi_v4 dv = vb - vp;
        pd_vec3 g = s->nb_g[e];
        col[0] += dv * g.x, col[1] += dv * g.y, col[2] += dv * g.z;
    }
    pd_mat3 grad;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            grad.m[r][c] = col[c][r];
    return grad;
}

/* The step's start (xpbi_neighbors.c): V^n, the neighbours within k = 2 r of x^n (Sec. 4.2),
 * the corrected kernel gradients (Eq. 10) and the colouring (Sec. 4.3). */
pd_status pd_xpbi_neighborhoods(pd_xpbi_state* s, const pd_particles* p);
/* L_p of Eq. 10: the SVD pseudo-inverse of A = sum_b V_b grad W_b(x_p) (x_b - x_p)^T, singular
 * values below cutoff times the largest dropped. */
pd_mat3 pd_xpbi_correction(pd_mat3 a, pd_real cutoff);
/* The constraint of Eq. 6 at F: C = sqrt(2 Psi) with Psi of Eq. 3, and dC/dF = P / C (0 at
 * C = 0). */
pd_real pd_xpbi_constraint(const pd_xpbi_material* m, pd_mat3 f, pd_mat3* dcdf);
/* C_p at the velocities v (Eq. 9, 11, the return of Eq. 14, Eq. 6) and m = dC/dF F_p^n^T, so
 * that grad_{x_b} C_p = m g_b for p's neighbour b (Eq. 12, g = V_b L_p grad W_b) and
 * grad_{x_p} C_p = -sum_b m g_b (Eq. 13). */
pd_real pd_xpbi_particle_constraint(const pd_xpbi_state* s, const pd_particles* pt, uint32_t p,
                                    const pd_vec3* v, pd_real dt, pd_mat3* m);
/* Eq. 4-5's constraints at the velocities v (which: PD_XPBI_C_MU, C_mu = |ln s| with alpha =
 * 1 / (2 mu V^0), or PD_XPBI_C_LAMBDA, C_lambda = tr ln s with alpha = 1 / (lambda V^0)), with m
 * as pd_xpbi_particle_constraint's. */
pd_real pd_xpbi_split_constraint(const pd_xpbi_state* s, const pd_particles* pt, uint32_t p,
                                 const pd_vec3* v, pd_real dt, int which, pd_mat3* m);
/* The hourglass constraint (xpbi_hourglass.c): the per-entry y and k of the step's start
 * (after pd_xpbi_neighborhoods; nothing when solver.xpbi.hourglass is 0), and C_h,p at the
 * velocities v from the step-start positions x0, its gradients with respect to p's neighbours
 * in grad[e - offsets[p]] (room for p's entries) and that with respect to p in *grad_p (0 where
 * C_h is 0), and *norm
 * = sum over them of w |grad|^2 with the inverse masses w (Eq. 17's denominator). */
pd_status pd_xpbi_hourglass_prepare(pd_xpbi_state* s, const pd_particles* p);
/* hourglass_relaxation plastic, after Eq. 22: each pair's reference offset carried with the
 * step's velocity gradient and its misfit returned by the particle's hg_keep, kept for the next
 * step's pairs. */
pd_status pd_xpbi_hourglass_return(pd_xpbi_state* s, const pd_particles* p);
pd_real pd_xpbi_hourglass_constraint(const pd_xpbi_state* s, const pd_vec3* x0, uint32_t p,
                                     const pd_vec3* v, pd_real dt, pd_vec3* grad, pd_vec3* grad_p,
                                     pd_real* norm);
/* The same at p's velocity gradient l (Eq. 11) given (the particle constraint's: no pass over
 * the neighbours for it). */
pd_real pd_xpbi_hourglass_constraint_at(const pd_xpbi_state* s, const pd_vec3* x0, uint32_t p,
                                        const pd_vec3* v, pd_real dt, pd_mat3 l, pd_vec3* grad,
                                        pd_vec3* grad_p, pd_real* norm);

#endif
