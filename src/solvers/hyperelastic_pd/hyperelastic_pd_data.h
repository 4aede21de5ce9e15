/* Data of the hyperelastic_pd method (Xu, He, Chen, Li, Wang 2018, Reformulating Hyperelastic
 * Materials with Peridynamic Modeling): options, materials, per-particle and per-bond state. The
 * algorithm is in hyperelastic_pd.c, the basis functions in hyperelastic_pd_basis.c. */
#ifndef PD_HYPERELASTIC_PD_DATA_H
#define PD_HYPERELASTIC_PD_DATA_H

#include <math.h>

#include "boundary/collider_contact.h"
#include "contact/contact.h"
#include "contact/contact_hooks.h"
#include "core/param.h"
#include "linalg/sym_direct.h"
#include "neighbor/family.h"
#include "optim/descent.h"
#include "solvers/solver.h"
#include "world/state_arrays.h"

/* time.dt "auto" (s): the step of the shipped Xu 2018 cloth and drop scenes (Fig. 5, 6, 9,
 * 11); the implicit step of Sec. 5.2 holds any dt, smaller ones damp less. */
#define PD_HPD_AUTO_DT 0.01

struct pd_world;
struct pd_particles;

/* Weight functions w(|xi|/delta) before normalisation (Sec. 6, Fig. 9). */
enum { PD_HPD_WEIGHT_CONSTANT, PD_HPD_WEIGHT_INVERSE, PD_HPD_WEIGHT_LINEAR };

/* solver.lame_mapping: E, nu to lambda, mu of Eq. 12 so that the bulk shows them
 * (docs/methods/hyperelastic_pd.md), or the paper's Eq. 26. */
enum { PD_HPD_LAME_CONSISTENT, PD_HPD_LAME_PAPER_EQ26 };

/* solver.collisions: the colliders inside the minimisation of Eq. 21 (beyond the paper), or
 * the paper's position-based resolution of the solve's solution [BMM15]. */
enum { PD_HPD_COLLISIONS_IN_SOLVE, PD_HPD_COLLISIONS_AFTER_SOLVE };

/* Presets of the `hyperelastic` block: g = h = B_1, A_1 + 3 A_2 - 3 B_1, (3 B_3 - B_1)/2, A_4. */
enum { PD_HPD_LINEAR, PD_HPD_NEO_HOOKEAN, PD_HPD_STVK, PD_HPD_A4 };

/* Basis orders n = 1 .. PD_HPD_ORDERS of A_n and B_n (Eq. 15); the names of a `g` or `h`
 * object, in the order of its slots. */
#define PD_HPD_ORDERS      8
#define PD_HPD_BASIS_NAMES "A1|A2|A3|A4|A5|A6|A7|A8|B1|B2|B3|B4|B5|B6|B7|B8"

/* Particles per chunk of the parallel loops (and of the partial sums). */
#define PD_HPD_GRAIN 256

typedef struct pd_hpd_params {
    int iterations;
    pd_real tolerance; /* Eq. 25 */
    pd_real horizon;   /* spacings */
    int weight;        /* PD_HPD_WEIGHT_* */
    int history;       /* L-BFGS pairs */
    int line_search;
    int isotropic_weights;       /* direction factors making a lattice's families isotropic */
    int surface_correction;      /* per-particle factors making cut families' moments the bulk's */
    pd_real inversion_stiffness; /* multiplies k_ij of Eq. 24 (0: no inversion force) */
    int lame_mapping;            /* PD_HPD_LAME_* */
    int collisions;              /* PD_HPD_COLLISIONS_* */
    pd_real stick_speed;         /* friction's smoothing speed (m/s, boundary/friction.h) */
    int contact;                 /* contact between bodies (src/contact) */
    pd_real contact_stiffness;
} pd_hpd_params;

extern const pd_param_table pd_hpd_param_table;

/* The method's material keys (pd_material_def.method_params): the `hyperelastic` block. */
typedef struct pd_hpd_material_params {
    int hyperelastic; /* 1 when the block is given */
    int preset;       /* PD_HPD_* */
    pd_param_reals g; /* coefficients of A_1..A_8, B_1..B_8; all 0: the preset's */
    pd_param_reals h;
    pd_real contact_friction; /* between bodies (src/contact) */
    int anisotropy;           /* 1 when the block is given (Eq. 18) */
    pd_vec3 direction1, direction2, stretches;
    int fracture; /* 1 when the block is given */
    pd_real critical_stretch;
} pd_hpd_material_params;

extern const pd_param_table pd_hpd_material_table;

/* A function of one variable as a combination of the basis: a[n-1] A_n + b[n-1] B_n, and the
 * same expanded into powers of s (what the bond loops evaluate): f(s) = sum_k up[k] s^k +
 * sum_k down[k] s^-k + lg log s, f'(s) = sum_k dup[k] s^k + sum_k ddown[k] s^-k. */
typedef struct pd_hpd_basis {
    pd_real a[PD_HPD_ORDERS], b[PD_HPD_ORDERS];
    int orders; /* the highest n with a coefficient */
    pd_real up[PD_HPD_ORDERS + 2], down[PD_HPD_ORDERS + 2], lg;
    pd_real dup[PD_HPD_ORDERS + 2], ddown[PD_HPD_ORDERS + 2];
    int n_up, n_down; /* the highest powers with a coefficient */
} pd_hpd_basis;

/* sum_{k=0..n_up} up[k] s^k + sum_{k=1..n_down} down[k] s^-k (Horner's rule in s and 1/s). */
static inline pd_real pd_hpd_powers(const pd_real* up, int n_up, const pd_real* down, int n_down,
                                    pd_real s) {
    pd_real v = 0, w = 0, inv = 1 / s;
    for (int k = n_up; k >= 0; --k)
        v = v * s + up[k];
    for (int k = n_down; k >= 1; --k)
        w = (w + down[k]) * inv;
    return v + w;
}
/* f(s), f'(s), f''(s) of a combination (Eq. 15-17); s > 0. Value and slope inline: the bond
 * loops call them for every bond at every evaluation (hyperelastic_pd_basis.c). */
/* Eq. 15: A_n = ((s^(n+1) - 1)/(n+1) + (s^(1-n) - 1)/(n-1)) / n, A_1 = (s^2 - 1)/2 - log s;
 * B_n = 2/n ((s^(n+1) - 1)/(n+1) - s + 1). */
static inline pd_real pd_hpd_basis_value(const pd_hpd_basis* f, pd_real s) {
    pd_real v = pd_hpd_powers(f->up, f->n_up, f->down, f->n_down, s);
    return f->lg != 0 ? v + f->lg * log(s) : v;
}
/* Eq. 16: A_n' = (s^n - s^-n)/n, B_n' = 2 (s^n - 1)/n. */
static inline pd_real pd_hpd_basis_slope(const pd_hpd_basis* f, pd_real s) {
    return pd_hpd_powers(f->dup, f->n_up - 1 > 0 ? f->n_up - 1 : 0, f->ddown, f->n_down + 1, s);
}
pd_real pd_hpd_basis_curvature(const pd_hpd_basis* f, pd_real s);
/* The g or h of a material: its own coefficients when any is non-zero, else its preset's. */
pd_hpd_basis pd_hpd_basis_of(const pd_hpd_material_params* mp, int which_h);

/* Stretches over which a given g or h must be convex (f'' > 0), checked at set-up: a
 * combination with negative coefficients may turn concave outside them, where Sec. 4's
 * conditions and the bound W_i >= (lambda + mu) h(theta_i) no longer hold. */
#define PD_HPD_CONVEX_LO      0.2
#define PD_HPD_CONVEX_HI      5.0
#define PD_HPD_CONVEX_SAMPLES 400
/* The least stretch in [lo, hi] where f'' <= 0 (sampled); 0 when none. */
pd_real pd_hpd_basis_first_concave(const pd_hpd_basis* f, pd_real lo, pd_real hi);

/* lambda, mu of Eq. 12 for a material of E, nu under solver.lame_mapping (Pa). */
void pd_hpd_lame(int mapping, pd_real E, pd_real nu, pd_real* lambda, pd_real* mu);

/* One material's constants: lambda, mu of Eq. 12 mapped from E, nu (pd_hpd_lame), and g, h. */
typedef struct pd_hpd_material {
    pd_real lambda, mu; /* Pa */
    pd_hpd_basis g, h;
    pd_real g2, h2; /* g''(1), h''(1): the bond stiffness of Eq. 23 */
    int anisotropic;
    pd_vec3 axis[3];          /* unit d1, d2, d1 x d2: the columns of R in Eq. 18 */
    pd_real sigma[3];         /* the diagonal of Sigma */
    pd_real critical_stretch; /* s_0 of a bond's failure; INFINITY: never breaks */
} pd_hpd_material;

typedef struct pd_hpd_state {
    pd_hpd_params prm;
    /* the world's context of the step under way (dt, gravity, particles), set by step() for
     * its duration and NULL between steps; set-up reads the world */
    const pd_step_context* step;
    size_t n;
    pd_family fam;
    pd_state_arrays persist; /* what lasts from step to step (state_arrays.h) */
    pd_hash_grid grid;
    pd_hpd_material* mat; /* per scene material */
    int material_count;
    const pd_real* mass; /* the world's arrays */
    const pd_real* volume;
    const int32_t* material;
    /* per particle */
    pd_real* norm;          /* c_i: w_ij = c_i w(|xi|/delta), so that sum_j w_ij V_j = 1 (Eq. 19) */
    pd_real* slope;         /* lambda g'(theta_i) at the last evaluation (Pa) */
    pd_real* diag;          /* m/h^2 + sum of i's couplings in L (Eq. 23) (N/m) */
    pd_real* diag_extra;    /* diag plus friction's stiffness (pd_hpd_refactor) */
    pd_real* ktan_factored; /* friction's tangential stiffness the factor holds (N/m) */
    pd_real* last_push;     /* normal force of i's collider contact at the end of the last step
                             * (N; NaN before the first): friction's lagged lambda */
    pd_real* limit_prev;    /* friction's limits before a renewal (scratch of the step) */
    int refactors;          /* numeric refactorisations for friction so far */
    pd_vec3* ystar;         /* q* of Eq. 21 */
    pd_vec3* grad;          /* dE/dy of the elastic energy (N) */
    uint8_t* fixed;         /* pinned or fixed: never moves in the solve */
    pd_real* delta;         /* the horizon (m) */
    pd_real* couple;        /* per bond: k_ij + k_ji of Eq. 23 (N/m) */
    pd_real* k_bond;        /* per bond: k_ij, i's side of the coupling (N/m) */
    /* the inversion force (Eq. 24, hyperelastic_pd_inversion.c) */
    pd_real inversion;  /* solver.inversion_stiffness */
    pd_mat3* kinv;      /* per particle: (sum_j k_ij xi xi^T)^-1 (0 when planar) */
    pd_mat3* fbar;      /* per particle: F_i at the last evaluation, rows exchanged if inverted */
    uint8_t* planar;    /* per particle: a family spanning no volume (no F, no inversion force) */
    pd_real* bond_g;    /* per bond: the factor G of Eq. 12 on mu h (1 for an isotropic family; the
                         * direction factor of neighbor/isotropy.h on a lattice's; times the
                         * surface correction's) */
    pd_real* bond_q;    /* per bond: the surface correction's factor on the bond's share of
                         * theta_i (Eq. 14; 1 in a full family; sum_j w_ij V_j q_ij = 1) */
    int fractures;      /* a material has a critical stretch */
    uint8_t* cut;       /* per bond: removed by this fracture pass (allocated at the first) */
    uint32_t* bond_map; /* per bond: new -> old across a removal */
    pd_real* partial;   /* per chunk: deterministic sums */
    size_t chunks;
    pd_sym_direct direct;      /* L + M/h^2 over the free particles, factored once */
    pd_descent opt;            /* the iterate and the L-BFGS pairs (src/optim) */
    pd_collider_contact cc;    /* contact with the colliders inside the solve */
    pd_colliders no_colliders; /* what the solve sees under collisions after_solve: none */
    pd_contact contact;        /* between bodies, inside the solve (with prm.contact) */
    pd_contact_hooks hooks;    /* the descent's constraint hooks over cc and contact */
    pd_status contact_status;  /* a contact buffer that could not grow during the step */
    pd_descent_report report;
    double last_residual;                /* |r| / its yardstick at the end of the last step */
    double t_local, t_global, t_contact; /* t_contact: the part of t_local in src/contact */
    int evaluations;
} pd_hpd_state;

pd_status pd_hpd_create(struct pd_world* w, const void* params, void** state, pd_error* err);
void pd_hpd_destroy(void* state);
pd_status pd_hpd_check_material(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err);
pd_status pd_hpd_change_materials(void* state, struct pd_world* w, const uint8_t* changed,
                                  pd_error* err);
pd_status pd_hpd_on_reorder(void* state, struct pd_world* w, const uint32_t* perm);
pd_state_arrays* pd_hpd_persistent(void* state);
pd_status pd_hpd_restored(void* state, struct pd_world* w, struct pd_ckpt_reader* r, pd_error* err);
pd_status pd_hpd_break_bonds(void* state, struct pd_world* w, pd_bond_test test, void* ctx,
                             size_t* removed, pd_error* err);
/* Removes the bonds stretched past their critical stretch at the world's positions (the end of
 * a step); nothing when no material fractures. */
pd_status pd_hpd_fracture(pd_hpd_state* s, struct pd_world* w, size_t* removed, pd_error* err);
void pd_hpd_free_bond_scratch(pd_hpd_state* s);
/* w(|xi|/delta) before normalisation (Fig. 9's two choices besides the constant). */
static inline pd_real pd_hpd_weight_shape(int weight, pd_real r) {
    switch (weight) {
        case PD_HPD_WEIGHT_INVERSE:
            return 1 / (1 + r);
        case PD_HPD_WEIGHT_LINEAR:
            return r;
        default:
            return 1;
    }
}
/* w_ij of Eq. 19 for i's bond of reference length len (1/m^3). Inline: the bond kernels call
 * it three times a bond and evaluation, and the constant weight then needs no division. */
static inline pd_real pd_hpd_bond_weight(const pd_hpd_state* s, uint32_t i, pd_real len) {
    return s->norm[i] * pd_hpd_weight_shape(s->prm.weight, len / s->delta[i]);
}
/* G of Eq. 18 for a bond of unit rest direction e in material m (1 when isotropic). */
pd_real pd_hpd_anisotropy(const pd_hpd_material* m, pd_vec3 e);
/* The largest family volume sum_j V_j of each body (indexed by body; *count entries, freed with
 * pd_free(out, *count * sizeof *out)): a family that reaches 0.99 of it is interior. NULL when
 * out of memory. */
pd_real* pd_hpd_fullest_families(const pd_hpd_state* s, const struct pd_particles* p,
                                 size_t* count);
/* Gives every family cut by a surface the factors of its bonds' directions under which it has
 * the bulk's moments: q_ij (theta_i's second moment I / 3) into bond_q, f_i (the bond term's
 * fourth moment) multiplied into bond_g (hyperelastic_pd_surface.c). */
pd_status pd_hpd_surface_correction(pd_hpd_state* s, const struct pd_particles* p);
/* Renormalises the weights of Eq. 19 over the current families (after bonds broke). */
void pd_hpd_normalise_weights(pd_hpd_state* s, const struct pd_particles* p);
/* K_i^-1 and planarity from k_bond (after the bonds or their stiffness changed). */
void pd_hpd_inversion_setup(pd_hpd_state* s);
/* E_inv at y (Eq. 24 as an energy); leaves F_i in s->fbar for the gradient. 0 when off. */
pd_real pd_hpd_inversion_energy(pd_hpd_state* s, const pd_vec3* y);
/* dE_inv/dy_i at y with the F of the last pd_hpd_inversion_energy. */
pd_vec3 pd_hpd_inversion_gradient(const pd_hpd_state* s, const pd_vec3* y, uint32_t i);
/* Factors L + M/h^2 + diag(extra) (extra NULL: none) again on the last factor's pattern
 * (numeric only: the couplings and bonds are those pd_hpd_factor built). */
pd_status pd_hpd_refactor(pd_hpd_state* s, const pd_real* extra, pd_error* err);
/* (Re)builds L + M/h^2 for the current dt and factors it. */
pd_status pd_hpd_factor(pd_hpd_state* s, pd_real dt, pd_error* err);
/* The elastic energy sum_i V_i W_i at y (Eq. 12, 14) with its gradient in s->grad (tests). */
pd_real pd_hpd_elastic_energy(pd_hpd_state* s, const pd_vec3* y);

#endif
