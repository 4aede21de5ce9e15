/* Data of the sbpd method (Wang et al. 2025, Peridynamics-based simulation of
 * viscoelastic solids and granular materials): options, materials, per-particle and per-bond
 * state. The algorithm (Algorithm 1) is in sbpd.c, the set-up in sbpd_setup.c. */
#ifndef PD_SBPD_DATA_H
#define PD_SBPD_DATA_H

#include "boundary/collider.h"
#include "contact/contact.h"
#include "core/param.h"
#include "neighbor/family.h"
#include "neighbor/family_renewal.h"
#include "constitutive/return_map.h"
#include "solvers/solver.h"
#include "world/state_arrays.h"

struct pd_world;

/* What a bond's Prony histories follow (solver.history). */
enum { PD_SBPD_HISTORY_SQUARED, PD_SBPD_HISTORY_STRETCH };

/* What pushed a particle in the collisions (s->touched): Eq. 28 reads each its own way. */
enum { PD_SBPD_TOUCHED_BOUNDARY = 1, PD_SBPD_TOUCHED_GRAIN = 2 };

/* Particles per chunk of the parallel loops. */
#define PD_SBPD_GRAIN 256

typedef struct pd_sbpd_params {
    int iterations;          /* iter_max of Algorithm 1 */
    pd_real tolerance;       /* epsilon: the passes stop when no particle moves more (m) */
    pd_real horizon;         /* r in spacings (Sec. 3: twice the particle size) */
    int isotropic_weights;   /* direction factors making the interior families isotropic */
    int history;             /* PD_SBPD_HISTORY_*: q follows W = s^2 (Eq. 9) or the stretch s */
    int contact;             /* collisions between bodies (Eq. 25) */
    pd_real static_friction; /* eta of Eq. 28 (0: off) */
} pd_sbpd_params;

extern const pd_param_table pd_sbpd_param_table;

/* Method keys inside a material (sbpd_params.c). */
typedef struct pd_sbpd_material_params {
    pd_real hardening;        /* xi of Eq. 24 (sand only; 0: none) */
    pd_real contact_friction; /* c_b of Eq. 26-27 against other bodies (the core's row) */
} pd_sbpd_material_params;

extern const pd_param_table pd_sbpd_material_table;

/* One material's constants. Term 0 is the long-term one (E_inf = E_0 - sum E_k), term k + 1
 * Prony mode k; every term has the material's nu (SCENE.md). mu and lambda are those of
 * Eq. 6-11 scaled so that a body shows the shear modulus E / (2 (1 + nu)) (sbpd_setup.c);
 * kv is the dilatation term's modulus, beyond the paper (0 at nu = 1/4). */
typedef struct pd_sbpd_material {
    int modes;                        /* N of Eq. 3 */
    pd_real mu[PD_MAX_PRONY + 1];     /* Pa */
    pd_real lambda[PD_MAX_PRONY + 1]; /* Pa */
    pd_real kv[PD_MAX_PRONY + 1];     /* Pa */
    pd_real theta[PD_MAX_PRONY];      /* relaxation times (s) */
    pd_real alpha[PD_MAX_PRONY];      /* exp(-dt / theta_k) of Eq. 4 and 9 */
    pd_real mu0, lambda0, kv0;        /* the instantaneous sums over the terms */
    int sand;                         /* Drucker-Prager: the sand phase (Sec. 5) */
    pd_dp_map yield;                  /* its Eq. 13 and 15 constants */
    pd_real hardening;                /* xi of Eq. 24 (sand; 0: none) */
} pd_sbpd_material;

/* Rigid boundary particles (Sec. 6): the particles of fixed bodies within a horizon of their
 * body's surface, with phi and their body, sorted into a dense grid of cells at least a horizon
 * wide; each fixed body's shape as a collider, whose signed distance is phi (sbpd_boundary.c).
 * Entries carry what the collisions read, not particle indices, so reorderings leave them
 * valid. */
typedef struct pd_sbpd_boundary {
    size_t count;
    pd_vec3* at;    /* positions (fixed bodies never move) */
    pd_real* phi;   /* signed distance to the body's surface (m, negative inside) */
    int32_t* shape; /* the body's collider in `shapes` */
    uint32_t* cell_start;
    int dims[3];
    pd_vec3 origin;
    pd_real cell;
    pd_colliders shapes;     /* one per fixed body: its shape as a solid */
    int32_t* body_shape;     /* per body: its collider (-1: not fixed) */
    pd_real* shape_friction; /* per collider: its body's material's contact_friction */
    int body_count;
} pd_sbpd_boundary;

typedef struct pd_sbpd_state {
    pd_sbpd_params prm;
    /* the world's context of the step under way (dt, gravity, particles), set by step() for
     * its duration and NULL between steps; set-up reads the world */
    const pd_step_context* step;
    size_t n;
    pd_family fam;
    pd_state_arrays persist; /* what lasts from step to step (state_arrays.h) */
    /* the family before the last renewal (its per-bond arrays are the persist's spares): the
     * next renewal writes into it when it holds its bonds, so that a step does not allocate
     * and fault in the families anew */
    pd_family spare;
    pd_hash_grid grid;
    pd_neighbor_cache renewal_list; /* the sand's renewals search into its list (no skin) */
    pd_sbpd_material* mat;          /* per scene material */
    int material_count;
    int modes;           /* the most Prony modes of any material: the stride of the histories */
    const pd_real* mass; /* the world's arrays */
    const pd_real* volume;
    const pd_real* spacing;
    const int32_t* material;
    const uint8_t* flags;
    /* per bond */
    pd_real* w;    /* w(xi) of Eq. 1: Wendland C2 times the direction factor, normalised so
                    * that sum_j w V_j = 1 over i's family (1/m^3) */
    pd_real* qdev; /* q^{dev,k}_ij of Eq. 9, `modes` per bond (NULL when modes is 0) */
    pd_real* qiso; /* q^{iso,k}_ij */
    pd_vec3* t;    /* T_ij of the last evaluation (scratch: each bond's force once, then a
                    * gather of both ends) */
    /* per particle */
    pd_mat3* kinv;    /* (X * X)^-1 of Eq. 1 (m^-2); zero for a family spanning no volume */
    pd_mat3* F;       /* F_i of Eq. 1 at the last evaluation */
    pd_mat3* M;       /* the dilatation term's dPsi/dF K^-1 at the last evaluation (Pa/m^2) */
    uint8_t* planar;  /* a family spanning no volume: Yhat = Y, no dilatation */
    pd_real* qvol;    /* the dilatation term's histories, `modes` per particle */
    pd_vec3* y;       /* the iterate y^{t+1} */
    pd_vec3* acc;     /* sum_j (T_ij - T_ji) V_j / rho_i of Eq. 12 at the last evaluation */
    pd_real* partial; /* per chunk: the largest displacement of a pass */
    size_t chunks;
    pd_real dt_max; /* the largest stable time step at set-up (sbpd_setup.c) */
    /* collisions between bodies (Eq. 25, sbpd_contact.c): pairs from the core's contact */
    pd_contact contact;
    pd_real* contact_modulus;  /* per material: 1 (the pairs' penalty is not used) */
    pd_real* contact_friction; /* per material: c_b of Eq. 26-27 between bodies (0: none) */
    uint8_t* contact_sand;     /* per material: sand (renews its families; grains collide) */
    pd_vec3* push;             /* per particle: the correction of the current iteration */
    const pd_vec3* x0;         /* the positions the step started from (the world's) */
    pd_sbpd_boundary boundary; /* rigid boundary particles (Eq. 25 against their phi) */
    size_t constrained;        /* pinned or fixed particles when the pairs were last sought */
    pd_vec3* projected;        /* per particle: y projected out of the colliders (Eq. 28) */
    uint8_t* touched;          /* per particle: a collider projected it (PD_SBPD_TOUCHED_*
                                  in the collisions) */
    size_t frozen;             /* particles Eq. 28 held in the last step */
    /* the sand phase (sbpd_sand.c) */
    int has_sand;
    int body_count;
    uint8_t* sand;        /* per particle: of a Drucker-Prager material */
    uint8_t* body_renews; /* per body: its families are renewed every step (sand) */
    pd_mat3* Fe;          /* per particle: the elastic F at the step's start (sand) */
    pd_real* plastic;     /* per particle: accumulated plastic strain (published) */
    pd_real* harden;      /* per particle: Eq. 24's factor on mu and kappa this step (1: none) */
    pd_real* body_rho0;   /* per body: rho_0 of Eq. 24 as Eq. 23's kernel sees it (sand) */
} pd_sbpd_state;

/* The `modes` Prony histories of bond (or particle) b in q; NULL when no material has modes
 * (q is not allocated then). */
static inline pd_real* pd_sbpd_history(pd_real* q, uint32_t b, int modes) {
    return modes ? q + (size_t)b * (size_t)modes : NULL;
}

/* Eq. 25 between bodies: up to solver.iterations rounds of pushing apart the pairs closer than
 * their contact distance, at s->y, with the friction of Eq. 26-27 on their relative motion
 * since x (the step's start) (sbpd_contact.c). */
pd_status pd_sbpd_collide(pd_sbpd_state* s, const pd_vec3* x);
pd_status pd_sbpd_contact_init(pd_sbpd_state* s, const struct pd_world* w, pd_error* err);
/* Eq. 26-27 as a position change: the tangential part (to n) of a contact's motion u over the
 * step is taken away up to mu times the depth its collision resolves, all of it when that is
 * enough. Eq. 27 removes from a particle's tangential velocity c_b |j| / m, j = m dv the
 * collision's impulse: with dv = depth / dt it is this cut on the step's displacement. */
pd_vec3 pd_sbpd_friction_cut(pd_real mu, pd_vec3 u, pd_vec3 n, pd_real depth);
/* The rigid boundary particles of the fixed bodies (sbpd_boundary.c); a fixed body whose shape
 * has no signed distance (an open mesh) is refused at bodies[k].shape. */
pd_status pd_sbpd_boundary_init(pd_sbpd_state* s, const struct pd_world* w, pd_error* err);
void pd_sbpd_boundary_free(pd_sbpd_boundary* b);
/* Eq. 25 of a moving particle i at y against the fixed bodies with a boundary particle within
 * its horizon: pushed along the gradient of the body's phi at y until phi(y) = s_i / 2 (the
 * particle's half spacing, as between two particles), out of the body it is deepest in, less
 * Eq. 26-27's friction cut of its motion since x; returns the depth (0: no contact) and sets
 * *push. */
pd_real pd_sbpd_boundary_push(const pd_sbpd_state* s, uint32_t i, pd_vec3 y, pd_vec3 x,
                              pd_vec3* push);
/* The gradient of phi at y of the fixed body near i that i is deepest in, or else nearest to
 * (zero when none is near): the normal Eq. 28 reads the collision's correction along. */
pd_vec3 pd_sbpd_boundary_normal(const pd_sbpd_state* s, uint32_t i, pd_vec3 y);
/* Eq. 28 at the colliders after the collisions (sbpd_contact.c). */
pd_status pd_sbpd_static_friction_init(pd_sbpd_state* s);
void pd_sbpd_static_friction_free(pd_sbpd_state* s);
void pd_sbpd_static_friction(pd_sbpd_state* s, const struct pd_world* w);
void pd_sbpd_contact_free(pd_sbpd_state* s);

pd_status pd_sbpd_create(struct pd_world* w, const void* params, void** state, pd_error* err);
void pd_sbpd_destroy(void* state);
pd_status pd_sbpd_check_material(const pd_material_def* m, const void* params, const char* path,
                                 pd_error* err);
pd_status pd_sbpd_on_reorder(void* state, struct pd_world* w, const uint32_t* perm);
pd_status pd_sbpd_on_time_step(void* state, struct pd_world* w, pd_error* err);
/* F_i of Eq. 1 at y into s->F (identity-free: zero for a planar family). */
void pd_sbpd_deformation_gradients(pd_sbpd_state* s, const pd_vec3* y);
/* (X * X)^-1 of Eq. 1 and the planar flag of particle i from its bonds' w and X. */
void pd_sbpd_shape_tensor(pd_sbpd_state* s, uint32_t i);
/* The sand phase at a step's start: the elastic F of the last step's end committed at the
 * positions it really ended at, then the families of sand bodies renewed on them, which are
 * the step's reference (weights and shape tensors with them). */
pd_status pd_sbpd_sand_begin_step(pd_sbpd_state* s, struct pd_world* w);
/* Room for `bonds` bonds in the family and its per-bond arrays (a checkpoint's family, grown
 * by the renewals since the start); what they held is not kept. */
pd_status pd_sbpd_reserve_bonds(void* state, size_t bonds);
pd_state_arrays* pd_sbpd_persistent(void* state);
/* The stability bound of the passes of Eq. 12 in the current state (docs/methods/sbpd.md). */
pd_real pd_sbpd_max_time_step(void* state, const struct pd_world* w);
pd_status pd_sbpd_restored(void* state, struct pd_world* w, struct pd_ckpt_reader* r,
                           pd_error* err);
/* rho_i of Eq. 23 over i's family at positions x: sum_j m_j W(|x_j - x_i|, r) with i itself,
 * W the Wendland C2 kernel normalised in 3-D, r the horizon. */
pd_real pd_sbpd_kernel_density(const pd_sbpd_state* s, const pd_vec3* x, uint32_t i);
/* For sand particle i: F_inc of Eq. 1 at y, F_tr = F_inc Fe projected (Eq. 13-22) into s->F[i],
 * and M_i = tau F_inc^-T K^-1 (tau of Eq. 15), the correspondence force w M_i xi of its bonds. */
void pd_sbpd_sand_stress(pd_sbpd_state* s, const pd_vec3* y, uint32_t i, pd_real* plastic);

#endif
