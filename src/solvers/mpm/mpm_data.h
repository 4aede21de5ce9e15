/* Data of the mpm method (Fang et al. 2019, Silly Rubber: an implicit material point method):
 * options, per-material constants and the per-particle state. The grid and its transfers are the
 * core's (src/grid/); the step is in mpm.c, the set-up in mpm_setup.c. */
#ifndef PD_MPM_DATA_H
#define PD_MPM_DATA_H

#include "constitutive/hencky_plasticity.h"
#include "constitutive/hencky_viscoelastic.h"
#include "core/param.h"
#include "grid/grid.h"
#include "grid/grid_fields.h"
#include "linalg/anderson.h"
#include "linalg/sym_direct.h"
#include "neighbor/family.h"
#include "solvers/solver.h"
#include "world/state_arrays.h"

struct pd_world;

/* Particles per chunk of the per-particle loops. */
#define PD_MPM_GRAIN 256
/* The explicit step's bound is reduced over at most this many chunks (pd_mpm_max_time_step). */
#define PD_MPM_BOUND_CHUNKS 256
/* Steps between the world's reorderings of the particles into the grid's bin order (mpm.c's
 * mpm_order): a particle moves a fraction of a cell a step (the CFL), so few leave their bin
 * within this many. */
#define PD_MPM_REORDER_EVERY 16
/* particles per chunk of the ADMM's dual step, whose residual sums are taken per chunk (the
 * thread test's block, 1000 particles or fewer, still has 4 chunks: in parallel) */
#define PD_MPM_ADMM_GRAIN 256

/* solver.mpm.integrator */
enum { PD_MPM_EXPLICIT, PD_MPM_ADMM, PD_MPM_NEWTON, PD_MPM_LBFGS };

struct pd_mpm_optimiser; /* the optimiser's step (mpm_implicit.c) */

/* The ADMM's stages (Sec. 7): the start (SEW weights, b, A assembled), the particle steps
 * (Eq. 10), the grid steps (right-hand side, conjugate gradients, friction) and the dual steps. */
enum {
    PD_MPM_ADMM_ASSEMBLE,
    PD_MPM_ADMM_PARTICLE,
    PD_MPM_ADMM_GRID,
    PD_MPM_ADMM_DUAL,
    PD_MPM_ADMM_STAGES
};

typedef struct pd_mpm_params {
    pd_real dx;                  /* grid cell size in particle spacings */
    pd_real cfl;                 /* the auto step's fraction of dx per step at the fastest speed */
    int damping_round_trips;     /* RPIC round trips before each step (Sec. 8) */
    int integrator;              /* PD_MPM_EXPLICIT (Sec. 6) or PD_MPM_ADMM (Sec. 7) */
    int contact;                 /* 1: a velocity field per body (grid_fields.h) */
    int contact_normal;          /* pd_grid_contact_normal: fitted or mass_gradient */
    pd_real auto_step_factor;    /* admm: time.dt "auto" is this times the explicit bound */
    pd_real auto_step_cfl;       /* > 0: implicit dt "auto" <= this dx / max |v_p| too */
    pd_real rho;                 /* the ADMM penalty (1: the SEW weights carry the stiffness) */
    pd_real relaxation;          /* over-relaxation alpha (Sec. 7.3) */
    int friction_in_solve;       /* 1: Coulomb friction split inside the ADMM's iterations */
    int iterations;              /* ADMM iterations at most */
    pd_real tolerance;           /* ... until the primal residual is below this */
    int cg_iterations;           /* conjugate gradient iterations of a grid step at most */
    pd_real cg_tolerance;        /* ... until its residual fell by this factor */
    int optimiser_iterations;    /* newton, lbfgs: iterations per step at most */
    pd_real optimiser_tolerance; /* ... until |dE/d dv| is below this times the momentum scale */
    int history;                 /* lbfgs: pairs kept */
    int lbfgs_preconditioner;    /* PD_MPM_LBFGS_DIAGONAL or PD_MPM_LBFGS_GRID_MATRIX */
    int grid_solver;             /* admm: PD_MPM_GRID_CG or PD_MPM_GRID_CHOLESKY */
    int anderson;                /* admm: Anderson acceleration's history (0: off) */
    int collider_normal;         /* admm: PD_MPM_CONTACT_UNILATERAL or PD_MPM_CONTACT_HELD */
} pd_mpm_params;

/* The ADMM's collider nodes along the normal: let go when the reaction would pull, or held
 * through the step. */
enum { PD_MPM_CONTACT_UNILATERAL, PD_MPM_CONTACT_HELD };

/* The ADMM's grid step: Jacobi-preconditioned conjugate gradients, or A's Cholesky factor. */
enum { PD_MPM_GRID_CG, PD_MPM_GRID_CHOLESKY };

/* lbfgs's initial Hessian: the diagonal of the grid matrix, or the matrix by conjugate
 * gradients (mpm_implicit.c). */
enum { PD_MPM_LBFGS_DIAGONAL, PD_MPM_LBFGS_GRID_MATRIX };

extern const pd_param_table pd_mpm_param_table;
extern const pd_material_support pd_mpm_material_support;

/* A material's elastic_energy: Psi_E (and the viscoelastic branch's Psi_N stays Eq. 6's). */
enum { PD_MPM_HENCKY, PD_MPM_NEO_HOOKEAN, PD_MPM_FIXED_COROTATED };

/* mpm's keys inside a material (docs/scene-format.md). */
typedef struct pd_mpm_material_params {
    int elastic_energy;       /* PD_MPM_HENCKY ... */
    pd_real contact_friction; /* Coulomb coefficient against other bodies (the core's row) */
} pd_mpm_material_params;

extern const pd_param_table pd_mpm_material_table;

/* One material: Psi_E of `energy` (StVK with Hencky strain, Eq. 6, by default). */
typedef struct pd_mpm_material {
    int energy;         /* PD_MPM_HENCKY, PD_MPM_NEO_HOOKEAN or PD_MPM_FIXED_COROTATED */
    pd_real mu, lambda; /* Pa */
    pd_real density;    /* kg/m^3 */
    int plastic;        /* 1: Z_E projects F onto `yield` (drucker_prager, von_mises) */
    pd_hencky_yield yield;
    int volume_correction;       /* 1: Z_E with Tampubolon 2017's volume correction (dilation) */
    int maxwell;                 /* 1: the non-equilibrated branch F_N of Eq. 1-8 */
    pd_hencky_maxwell branch;    /* its mu_N, lambda_N, nu_d, nu_v */
    pd_hencky_maxwell_step step; /* Eq. 8's A and B for this step's dt */
} pd_mpm_material;

/* The slots of a row of the ADMM's stored A (mpm_admm.c): the multiples of the identity that
 * couple a node to the 5 x 5 x 5 nodes around it. */
#define PD_MPM_ROW 125

/* A pin's velocity field fitted to its particles (mpm_pins.c): their mass, centre of mass x,
 * mean velocity v, second moments sum m (x_p - x)(x_p - x)^T and sum m (v_p - v)(x_p - x)^T,
 * and the velocity gradient from them. */
typedef struct pd_mpm_pin_fit {
    pd_real mass;
    pd_vec3 x, v;
    pd_mat3 xx, vx, grad;
} pd_mpm_pin_fit;

/* A block of the nodes the pins share with the free body (mpm_pins.c): pin_shared[start ..
 * start + count), the pinned particles pin_list[first .. first + pinned) that reach them, W's
 * rank there, and its basis: `cols` columns of `count` numbers from pin_z[z], orthonormal, of
 * W's null space (range 0) or of W^T's range (range 1), whichever has fewer. */
typedef struct pd_mpm_pin_block {
    size_t start, count, first, pinned, rank, cols, z;
    int range;
} pd_mpm_pin_block;

typedef struct pd_mpm_state {
    pd_mpm_params prm;
    pd_real dx; /* m */
    pd_grid grid;
    /* contact between bodies: a velocity field per body (fields.count 0: one shared field, the
     * grid's own arrays) and each body's contact_friction, mass and its particles' largest
     * half spacing */
    pd_grid_fields fields;
    pd_real* field_friction;
    pd_real* field_wall_friction; /* each body's material's (grid_boundary.h's pd_grid_wall) */
    pd_real* field_body_mass;
    pd_real* field_half_spacing;
    int material_count;
    pd_mpm_material* mat;
    pd_real* wall_friction;        /* per material: what a no_slip collider bears (pd_grid_wall) */
    const pd_particles* particles; /* the world's (their materials, for the published stress) */
    /* per particle, kept across steps (declared in persist); NULL where no material needs it */
    pd_mat3* f;             /* the elastic deformation gradient F_E */
    pd_mat3* c;             /* APIC's affine velocity C (the velocity gradient of MLS-MPM) */
    pd_mat3* fn;            /* the non-equilibrated elastic F_N (Eq. 1; with the Maxwell branch) */
    const pd_real* volume0; /* V_p^0 (m^3): the world's sampled volumes (particles.volume) */
    pd_real* dilation;      /* log of the volume gained past the apex, given back to the next trial
                             * (Tampubolon 2017 Sec. 4.3.1; with the volume correction) */
    /* the affine momenta of the transfer to the grid (MLS-MPM's stress inside), and the scratch
     * of the RPIC round trips and the implicit solves: C's array, whose C is spent once the
     * stress pass has read it and given anew by the transfer back */
    pd_mat3* affine;
    pd_vec3* v_grid; /* fields only: the velocity each particle's field gives it (G2P) */
    /* Cauchy stress, 6 per particle (xx, yy, zz, xy, yz, xz), computed when published (NULL until
     * asked for) */
    pd_real* stress;
    pd_real* plastic_strain; /* the sum of |ln s_tr - ln s| of the returns (kept, published) */
    size_t n;
    size_t cap; /* particles every per-particle array holds (the world's capacity: emitters) */
    /* pins: per node (capacity pin_nodes) the mass and velocity the pinned particles alone give
     * it (their transfer), and whether it is held */
    size_t pin_nodes;
    pd_real* pin_node_mass;
    pd_vec3* pin_node_velocity;
    pd_vec3* pin_node_impulse; /* a held node's impulse from its pins, over their mass there */
    pd_vec3* pin_reaction;     /* per particle: that impulse per mass where it is (G2P) */
    pd_real* pin_node_hold;    /* 1 where a pinned particle reaches the node, else 0 */
    pd_real* pin_field_mass;   /* with a field per body: the pinned body's field, node by node */
    pd_vec3* pin_field_velocity;
    int has_pins;
    int pin_count;           /* the world's pins */
    pd_mpm_pin_fit* pin_fit; /* per pin: its velocity gradient fitted (mpm_pins.c) */
    /* the pins' constraint sum_i w_ip v_i = v_p on the nodes the pins share with the free body
     * (mpm_pins.c): those nodes (pin_shared, pin_shared_count of them, block by block; pin_local:
     * a node's place among them, -1 elsewhere, per node), the blocks no pinned particle couples
     * (pin_block, pin_blocks of them), each with an orthonormal basis of W's null space or of
     * its complement (in pin_z), room for pin_shared_cap nodes; the scratch of finding them
     * (pin_perm, pin_order, pin_label per shared node, pin_coef 3 per shared node, pin_s a
     * block's S, the pinned particles block by block in pin_list); the key a basis is kept
     * under while the pinned particles stay (pin_key_*), and the factorisations done */
    int32_t* pin_local;
    uint32_t *pin_shared, *pin_perm, *pin_order, *pin_label, *pin_list;
    size_t pin_shared_count, pin_shared_cap, pin_blocks, pin_block_cap, pin_s_cap, pin_z_cap;
    size_t pin_list_cap;
    pd_mpm_pin_block* pin_block;
    pd_real *pin_s, *pin_z, *pin_coef;
    int pin_only_body; /* the body whose pins the share and the basis take (-1: all) */
    int pin_key_valid, pin_key_body, pin_key_dim[3];
    pd_vec3 pin_key_origin;
    size_t pin_key_nodes, pin_key_pinned, pin_key_cap;
    uint32_t* pin_key_node; /* the shared nodes in the nodes' order */
    pd_vec3* pin_key_pos;   /* the pinned particles' positions in the particles' order */
    int32_t* pin_key_pin;   /* and their pins */
    long pin_factorisations;
    /* each block's basis found last (pin_prev_*: the blocks, their nodes, bases, and pinned
     * particles' positions and pins in the blocks' order, on that grid, for that body), kept for
     * a block found again with the same nodes and particles (a still pin beside a moving one) */
    pd_mpm_pin_block* pin_prev_block;
    uint32_t* pin_prev_shared;
    pd_real* pin_prev_z;
    pd_vec3* pin_prev_pos;
    int32_t* pin_prev_pin;
    size_t pin_prev_blocks, pin_prev_block_cap, pin_prev_shared_cap, pin_prev_z_cap,
        pin_prev_pos_cap, pin_prev_pin_cap;
    int pin_prev_body, pin_prev_dim[3];
    pd_vec3 pin_prev_origin;
    long pin_block_factorisations; /* blocks factorised (not taken from pin_prev_*) */
    int has_returns; /* a material has Z_E or the Maxwell branch: the correctors' pass runs */
    /* the implicit step (mpm_admm.c): per particle */
    pd_mat3 *admm_b, *admm_fn, *admm_f, *admm_fhat, *admm_y, *admm_du, *cg_m;
    pd_real* admm_w2;
    pd_mat3* admm_v;    /* the particle step's last V (its SVD's start at the next iteration) */
    pd_real* admm_sums; /* the dual step's residual sums per chunk of PD_MPM_ADMM_GRAIN */
    pd_mat3* admm_k;    /* A's weight rho dt^2 (w_E^2 F_E^n F_E^n^T + w_N^2 F_N^n F_N^n^T) */
    /* ... the F_N constraint (mpm_admm_maxwell.c; allocated when a material has the branch):
     * b_N, F_N^n, F_N, F_hat_N, y_N, D_N dv, D_N dv of the previous iterate, w_N^2 */
    int has_maxwell;
    pd_mat3 *mx_b, *mx_fn, *mx_f, *mx_fhat, *mx_y, *mx_du, *mx_du_prev;
    pd_real* mx_w2;
    /* ... and per node (capacity admm_nodes) */
    size_t admm_nodes;
    pd_vec3 *admm_dv, *admm_rhs, *cg_r, *cg_z, *cg_d, *cg_ad, *bc_normal, *bc_target;
    pd_vec3* bc_normal2;  /* a second collider's normal held at the node (zero: none), made
                             orthogonal to bc_normal: a corner of two colliders */
    pd_vec3* bc_target2;  /* ... and the dv along it that holds it there */
    pd_vec3* bc_stick;    /* a NORMAL node's dv that holds it on its collider */
    pd_vec3* bc_friction; /* ... its friction impulse, the split's multiplier (m v) */
    pd_vec3* bc_slide;    /* ... the split's sliding velocity z (friction_in_solve) */
    pd_real* bc_mu;       /* ... and its Coulomb friction there */
    pd_real* bc_penalty;  /* ... the split's penalty k (kg; 0: no friction inside) */
    /* A = M + rho D^T W^T W D, stored by blocks of 4 nodes (mpm_admm.c's row_at; capacity
     * admm_rows); admm_u: a product's u by component */
    pd_real *admm_a, *admm_u;
    size_t admm_rows;
    pd_real* admm_diag;
    uint8_t* bc_kind;
    uint8_t* bc_flips; /* the unilateral contact's changes of a node this step (0, 1, 2) */
    int32_t* bc_collider;
    int last_cg_iterations;
    /* the grid step by A's Cholesky factor (grid_solver cholesky, mpm_admm.c's factor_grid_matrix):
     * A's blocks are multiples of the identity, so each velocity component solves one scalar
     * system over its free nodes; up to three factors (components with the same free nodes share
     * one; direct_of: each component's, -1: conjugate gradients), A in pd_sym_csr's form over the
     * nodes with mass (direct_*, capacities direct_caps), each factor's fixed nodes */
    pd_sym_direct direct[3];
    int direct_of[3];
    uint32_t *direct_offsets, *direct_cols;
    pd_real *direct_weight, *direct_diag;
    uint8_t* direct_fixed;
    size_t direct_caps[5];
    /* ... the last step's pattern (offsets, columns over direct_nodes nodes) and each factor's
     * fixed nodes: a factor of the same pattern and fixed nodes keeps its ordering and symbolic
     * analysis (pd_sym_direct_refactor) */
    uint32_t *direct_last_offsets, *direct_last_cols;
    uint8_t* direct_last_fixed[3];
    size_t direct_last_caps[5], direct_nodes;
    int direct_last_factors;
    long direct_refactors, direct_factors;    /* factors of the run that kept their analysis, all */
    pd_real bound_chunk[PD_MPM_BOUND_CHUNKS]; /* each chunk's fastest signal (m/s) */
    double admm_seconds[PD_MPM_ADMM_STAGES];  /* the last solve's stages (s) */
    struct pd_mpm_optimiser* opt;             /* newton, lbfgs (NULL until their first step) */
    pd_family none; /* no bonds: an empty family lets the core's per-particle arrays,
                     * reordering and checkpoints work as for the bonded methods */
    pd_state_arrays persist;
    /* anderson > 0: the accelerated iteration's history, the packed iterate and its weights
     * (mpm_admm.c, anderson_*), the run's accepted and rejected mixes */
    pd_anderson aa;
    pd_real *aa_x, *aa_w;
    size_t aa_cap;
    uint32_t* aa_node; /* the nodes with mass, then the friction split's */
    size_t aa_node_cap, aa_nodes, aa_friction_nodes;
    long aa_accepted, aa_rejected;
} pd_mpm_state;

pd_status pd_mpm_create(struct pd_world* w, const void* params, void** state, pd_error* err);
void pd_mpm_destroy(void* state);
/* mu(I)'s constants of material m (drucker_prager with `rate_dependence`; dt left 0, set by each
 * step): 1, or 0 and a zero rate (Klar's cone) without it. mu_s is the cone's 3 b. */
int pd_mpm_rate_dependence(const pd_material_def* m, pd_mu_i* rate);
pd_status pd_mpm_check_material(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err);
pd_status pd_mpm_check_body_material(const struct pd_scene* scene, int body, int material,
                                     const char* path, pd_error* err);
pd_real pd_mpm_max_time_step(void* state, const struct pd_world* w);
pd_state_arrays* pd_mpm_persistent(void* state);
pd_status pd_mpm_restored(void* state, struct pd_world* w, struct pd_ckpt_reader* r, pd_error* err);
pd_status pd_mpm_on_reorder(void* state, struct pd_world* w, const uint32_t* perm);
pd_status pd_mpm_on_emit(void* state, struct pd_world* w, size_t first, pd_error* err);
size_t pd_mpm_bytes_per_particle(const struct pd_scene* scene, double bond_fraction);

#endif
