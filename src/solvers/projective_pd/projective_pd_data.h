/* Data of the projective_pd method (He, Wang, Wu 2017): options, per-bond and per-particle
 * state. The algorithm is in projective_pd.c. */
#ifndef PD_PROJECTIVE_PD_DATA_H
#define PD_PROJECTIVE_PD_DATA_H

#include "core/param.h"
#include "optim/descent.h"

enum { PD_PPD_CHEBYSHEV, PD_PPD_DIRECT, PD_PPD_POSITION_BASED };
/* solver.projective_pd.iteration */
enum { PD_PPD_ACCURATE, PD_PPD_SEMI_ITERATIVE };
/* Where granular matter's density constraints and repulsion act (projective_pd_granular.c) */
enum { PD_PPD_GRANULAR_AFTER_SOLVE, PD_PPD_GRANULAR_IN_SOLVE };
/* What granular matter's Eq. 25-26 take for rho / rho_0 (projective_pd_granular.c) */
enum { PD_PPD_COMPACTION_KERNEL, PD_PPD_COMPACTION_REFERENCE };
/* Where the plastic return acts (projective_pd_plastic.c) */
enum { PD_PPD_RETURN_AFTER_SOLVE, PD_PPD_RETURN_IN_SOLVE };
/* The density penalty's pressure the yield check adds to I1 (plastic_return in_solve). */
enum { PD_PPD_YIELD_PRESSURE_OWN, PD_PPD_YIELD_PRESSURE_KERNEL_MEAN };
/* Where a state past the cone's apex goes to the apex (plastic_return in_solve). */
enum { PD_PPD_APEX_IN_SOLVE, PD_PPD_APEX_AFTER_SOLVE };
/* Where the yield test's I1 and J2 come from (projective_pd_plastic.c) */
enum {
    PD_PPD_INVARIANTS_AUTO,
    PD_PPD_INVARIANTS_DEFORMATION_GRADIENT,
    PD_PPD_INVARIANTS_BOND_STRAINS
};

typedef struct pd_ppd_params {
    int iterations;
    int iteration;    /* PD_PPD_ACCURATE or PD_PPD_SEMI_ITERATIVE */
    pd_real semi_rho; /* the semi-iterative weights' rho (0: the Gershgorin bound) */
    int semi_check;   /* outer iterations between energy checks */
    pd_real tolerance;
    int global_solve;
    int linear_iterations;
    pd_real horizon;
    int line_search;
    pd_real armijo;
    int dilatation;
    int inversion_fix;
    int surface_correction;
    int history;
    int contact;                   /* particle-particle contact between bodies and self-contact */
    pd_real contact_stiffness;     /* kappa of src/contact (1) */
    int density_iterations;        /* Jacobi iterations of the density constraints (src/sph) */
    int redistribution_iterations; /* Jacobi iterations of Eq. 22-24 (src/sph) */
    int viscosity_iterations;      /* Jacobi iterations of the implicit viscosity (src/sph) */
    int plastic_return;            /* PD_PPD_RETURN_AFTER_SOLVE or _IN_SOLVE */
    int plastic_passes;            /* plastic corrections per step, between parts of the solve */
    int plastic_invariants;        /* PD_PPD_INVARIANTS_* */
    pd_real density_relaxation;
    int granular_constraints;  /* PD_PPD_GRANULAR_IN_SOLVE or _AFTER_SOLVE */
    pd_real density_stiffness; /* in-solve density penalty, over the material's bulk modulus */
    int yield_pressure;        /* PD_PPD_YIELD_PRESSURE_* */
    int apex_return;           /* PD_PPD_APEX_* */
} pd_ppd_params;

/* Most L-BFGS pairs `history` may keep. */
#define PD_PPD_MAX_HISTORY PD_DESCENT_MAX_HISTORY

/* time.dt "auto" (s): He 2017 runs elastic bodies at up to 1/30 s but finds the implicit
 * step's damping unwanted there (Sec. 9, Fig. 1: 1, 4 and 16 ms); 4 ms is Fig. 1's middle
 * step and the dress of Fig. 19's. Fluids and sand scenes step at 1-2 ms and say so. */
#define PD_PPD_AUTO_DT 0.004

extern const pd_param_table pd_ppd_param_table;
/* Material blocks it honours (projective_pd_params.c). */
extern const struct pd_material_support pd_ppd_material_support;

#endif

#ifndef PD_PROJECTIVE_PD_STATE
#define PD_PROJECTIVE_PD_STATE
#include "boundary/collider_contact.h"
#include "contact/contact.h"
#include "contact/contact_hooks.h"
#include "linalg/sym_csr.h"
#include "linalg/sym_direct.h"
#include "neighbor/family_renewal.h"
#include "neighbor/isotropy.h"
#include "neighbor/scatter_plan.h"
#include "optim/descent.h"
#include "sph/density_constraint.h"
#include "world/state_arrays.h"
#include "world/step_context.h"

/* The method's own material keys, stored in pd_material_def.method_params. */
typedef struct pd_ppd_material_params {
    pd_real deviatoric_scale;
    pd_real contact_friction;
    /* the `granular` block (He 2017 Sec. 7): wet and dry sand */
    int granular;               /* 1 when the block is given */
    pd_real hardening;          /* H_f of Eq. 25 (1) */
    pd_real cohesion_stiffness; /* K_c of Eq. 26 (Pa) */
    pd_real saturation;         /* water saturation theta of Eq. 27 (1) */
    pd_real cohesion_falloff;   /* H_0 of Eq. 27 (1) */
    pd_real debonding;          /* b of Eq. 27 (1) */
    int compaction;             /* PD_PPD_COMPACTION_*: what Eq. 25-26's rho / rho_0 reads */
    int static_friction;        /* Eq. 28 on */
    pd_real static_threshold;   /* eta of Eq. 28 (1) */
    pd_real repulsion;          /* closest approach of two particles (spacings, Sec. 8) */
    int fluid;                  /* the `fluid` block: a viscoelastic fluid (Sec. 6) */
    pd_real viscosity;          /* dynamic viscosity (Pa s) */
    pd_real redistribution;     /* delta of Eq. 24 (1) */
} pd_ppd_material_params;
extern const pd_param_table pd_ppd_material_table;

/* Constants of Eq. 8 for one material, mapped from E and nu (docs/methods/projective_pd.md). */
typedef struct pd_ppd_material {
    pd_real mu;                 /* deviatoric constant of Eq. 8 (Pa) */
    pd_real lambda;             /* isotropic (spring) constant of Eq. 8 (Pa) */
    pd_real kv;                 /* dilatation constant (beyond the paper; 0 when off) (Pa) */
    pd_real moment_a, moment_b; /* fourth moments of its interior families (1) */
    pd_direction_weight iso;    /* bond factor f(n) making those moments isotropic */
    /* plasticity (Sec. 5): sqrt(J2) <= A + B I1 (Eq. 14); K, G turn bond strains into the
     * stress invariants */
    int plastic;
    pd_real yield_a, yield_b; /* A (Pa), B (1) of Eq. 15 */
    pd_real bulk, shear;      /* K, G of the material (Pa) */
    /* granular matter (Sec. 7): lambda and kv scale by (k_f + k_c) / K_f per particle, K_f the
     * material's Lame lambda (projective_pd_granular.c) */
    int granular;
    int fluid;                   /* viscoelastic fluid (Sec. 6): bilateral density constraints */
    pd_real kinematic_viscosity; /* mu / rho (m^2/s) */
    pd_real redistribution;      /* delta of Eq. 24 (1) */
    pd_real hardening;           /* H_f (1) */
    pd_real cohesion_ratio;      /* K_c / K_f (1) */
    pd_real cohesion_decay;      /* H_c = H_0 theta^(-1/2) (1; infinite when dry) */
    pd_real debond_ratio;        /* rho_1 / rho_0 = 1 - b theta (1) */
    int compaction;              /* PD_PPD_COMPACTION_* */
    int static_friction;
    pd_real static_threshold; /* eta (1) */
    pd_real repulsion;        /* spacings */
    pd_real rest_sum;         /* kernel sum of an interior family at rest: rho_0 (1) */
    pd_real rest_height;      /* bottom row on a wall at rho_0 (spacings): the in_solve hold */
    pd_real rest_density;     /* the material's density (kg/m^3) */
} pd_ppd_material;

/* A symmetric 3x3 matrix by its upper triangle (48 bytes, not 72). */
typedef struct pd_ppd_sym3 {
    pd_real xx, xy, xz, yy, yz, zz;
} pd_ppd_sym3;

typedef struct pd_ppd_state {
    pd_ppd_params prm;
    /* the world's context of the step under way (dt, gravity, particles), set by step() for
     * its duration and NULL between steps; set-up reads the world */
    const pd_step_context* step;
    pd_real matrix_dt; /* the h of the matrix's diagonal m/h^2 + sum c (s): the world's dt when
                        * pd_ppd_build_system last ran */
    /* 1: the references moved (the plastic flow at a step's end) and what depends on them
     * (pd_ppd_build_system) is not rebuilt yet: the next step's renewal rebuilds it anyway,
     * else its start does (projective_pd_plastic.c) */
    int system_stale;
    size_t n;
    pd_family fam;
    /* the family before the last renewal, whose arrays the next renewal writes into
     * (pd_family_renew_into): a body that renews every step allocates no family, and the kernel
     * does not fault its pages in anew each step (9.5 % of the 1M sand's step). Zeroed until the
     * first renewal: a body that never renews holds none. */
    pd_family fam_spare;
    pd_state_arrays persist; /* what lasts from step to step (state_arrays.h) */
    pd_bond_set broken;      /* pairs (by particle id) broken for good */
    pd_hash_grid grid;
    pd_neighbor_cache renewal_list; /* the renewals' Verlet list (family_renewal.h) */
    pd_ppd_material* mat;           /* per scene material */
    int material_count;
    const pd_real* mass; /* the world's arrays (kg, m^3) */
    const pd_real* volume;
    const int32_t* material;
    /* per bond (persist.bond_capacity entries; the family's bond_count in use) */
    float* c;       /* a_ij + a_ji: off-diagonal weight of the global matrix, single precision (a
                     * preconditioner's: 15 % faster sweeps on the 100K sand, measured) (N/m) */
    float* kb;      /* V_i V_j w f(n) / |X|^2, times the surface correction (m); the bond's
                     * quadratic stiffness is a_ij = 2 kb q_i (N/m; q_i: pd_ppd_kq). Single
                     * precision: rest-state geometry, read into double arithmetic (4 bytes a
                     * bond less; docs/methods/projective_pd.md, "Bond storage"). NULL where
                     * the families keep their rest positions for good (pd_ppd_bond_kb derives
                     * it from c: 4 bytes a bond less) */
    pd_real* gcorr; /* a rebuild's surface correction per bond, kept in scenes that flow */
    size_t gcorr_capacity;
    /* per particle, made at the first renewal (NULL before): what changed since the last
     * rebuild, for the incremental one after a renewal (pd_ppd_rebuild_renewed): PPD_STALE_REFS
     * its references moved (its shape tensor refreshed then), PPD_STALE_FAMILY the renewal
     * changed its bonds */
    uint8_t* stale;
    /* 1: kb, gcorr and the shape tensors are those of a complete rebuild, carried through the
     * renewals since (a reordering, a checkpoint or an array grown sets 0: rebuilt whole) */
    int stale_valid;
    size_t rebuilds_in_part; /* counted, for tests and measurements */
    /* per particle */
    pd_ppd_sym3* kinv;       /* (X*X)^+ of the family (pd_ppd_kinv) */
    uint8_t* planar;         /* family spans a plane or a line: no inversion fix, no dilatation */
    pd_real* diag;           /* m/h^2 + sum_j c_ij */
    pd_vec3* ystar;          /* inertial prediction y* */
    pd_vec3* g;              /* dE/dy: exact gradient of the elastic energy (N) */
    uint8_t* fixed;          /* 1: constrained (pinned, fixed body): never moves in the solve */
    pd_real* plastic_strain; /* accumulated plastic strain (1), published; NULL: none is plastic */
    pd_real* vscale;         /* per particle: factor on lambda and kv (granular, Sec. 7; NULL: 1) */
    int granular;            /* some material is granular or a fluid: density constraints */
    /* made the first time a field is asked for (ppd_publish_fields), not before: the kernel
     * density (kg/m^3), computed then at the world's positions, and zeros for the plastic
     * strain of a world where no material is plastic (16 bytes a particle that a run that
     * does not publish them does not hold) */
    pd_real* density;
    pd_real* zero_strain;
    int density_in_order;         /* 1: density was computed since the last reordering */
    const struct pd_world* world; /* the density's positions and colliders */
    /* density constraints (src/sph) of granular particles: per particle kernel radius, rest
     * kernel sum, inverse mass, kind; lambda and the per-chunk maxima (grad and move borrow
     * the Chebyshev scratch, free after the solve). Those (and fluid_nu, fluid_delta) are NULL
     * when no material is granular or a fluid. */
    pd_real *dens_radius, *dens_rest, *dens_inv_mass, *dens_lambda, *dens_partial;
    pd_real* dens_wall; /* the spacing of the rows the walls' share continues (m; 0: the
                         * half-space, granular matter's: density_def says why); NULL, as
                         * the arrays below, without granular matter or a fluid */
    uint8_t* dens_kind;
    pd_real* dens_pressure; /* the pressure the step's density constraints carried (Pa) */
    pd_real* dens_hold;     /* in_solve: the distance within which a no_slip collider holds a
                             * particle (m; collider_contact.h's hold) */
    pd_real density_error;  /* largest C_i before the step's last density iteration */
    pd_density_constraint_def dens_def; /* the step's, for the in-solve terms */
    const pd_real* dens_spacing;        /* the particles' spacing (m), for the repulsion */
    /* viscoelastic fluids (Sec. 6): per particle kinematic viscosity and delta of Eq. 24 */
    int fluid; /* some material is a fluid */
    pd_real *fluid_nu, *fluid_delta;
    pd_real redistribution_error; /* mean C_i H^2 before the last redistribution iteration */
    int plastic;                  /* some material flows plastically */
    /* plastic_return in_solve: the step's start references (per bond, ret_capacity of them)
     * and shape tensors, each particle's plastic strain increment at the last iterate and
     * whether its references differ from the start's there (bit 0; bit 1: its planar flag at
     * the start) (projective_pd_plastic.c) */
    pd_vec3* ret_xi;
    size_t ret_capacity;
    pd_ppd_sym3* ret_kinv;
    pd_real* ret_dp;
    uint8_t* ret_moved;
    int ret_active;  /* the step's solve returns at its iterates */
    pd_vec3* cheb_a; /* Chebyshev scratch: two of the optimiser's vectors (share_sweep_scratch) */
    pd_vec3* cheb_b;
    uint8_t* weighted;      /* bonds of i take the isotropic direction weights (solids) */
    pd_collider_contact cc; /* contact with the colliders (boundary/collider_contact.h) */
    pd_real* partial;       /* one per chunk or task: deterministic reductions */
    size_t chunks;          /* of PPD_GRAIN particles */
    size_t partial_count;   /* partial holds 2 per chunk or per task, whichever is more */
    pd_scatter_plan plan;   /* the local step's order: bonds add into g at both ends */
    pd_real rho;            /* Jacobi spectral radius bound (Gershgorin) */
    pd_sym_direct direct;   /* global_solve = direct: A over the free particles */
    pd_descent opt;         /* the iterate, its residual and the L-BFGS pairs (src/optim) */
    int inverted;           /* some particle took the inversion fix at the iterate */
    int fix_off;      /* the fix is off for the rest of the step: its force stopped the descent */
    int motion_start; /* x + h v, not y*, started the last step (start_point) */
    double t_local, t_global;    /* s spent in this step's local and global steps */
    double t_density, t_plastic; /* s in the density constraints (+ Eq. 28, repulsion) and the
                                  * plastic flow with its rebuilds */
    double t_viscosity;          /* s in a fluid's implicit viscosity (Sec. 6) */
    double t_redistribution;     /* s in a fluid's particle redistribution (Eq. 21-24) */
    double t_bond_forces;        /* s in the local step's bond kernels (t_local less contact) */
    int local_evaluations;       /* local steps this step evaluated */
    int scalar_local; /* tests: every particle takes the reference (scalar) form of the local step
                       */
    /* what the last step did, for tests */
    pd_descent_report report;
    int semi_restarts;     /* semi_iterative: restarts of the acceleration in the last step */
    pd_real semi_rho_used; /* semi_iterative: the rho its weights ended the last step with */
    pd_real last_merit, last_r_norm; /* the last evaluation's merit (J) and |r| (N) */
    pd_real semi_merit0;             /* semi_iterative: the merit its last solve started from (J) */
    double last_residual;            /* relative to last_force_scale */
    double last_force_scale;         /* N: what the residual is measured against */
    double r_star;                   /* N: |r| at the inertial prediction y* */

    /* contact between bodies (src/contact), when prm.contact */
    pd_contact contact;       /* src/contact: pairs, penalty and friction (prm.contact) */
    size_t contact_pinned;    /* constrained particles when the candidates were kept */
    pd_contact_hooks hooks;   /* the descent's constraint hooks over cc and contact */
    pd_status contact_status; /* a contact buffer that could not grow during the step */
    pd_real rho_contact;      /* Jacobi bound with the contact springs (see rho) */
} pd_ppd_state;
#endif
