/* The interface every method implements. A method lives in its own folder under
 * src/solvers/, keeps its data in a header apart from its algorithm, declares its options in
 * parameter tables, and is registered by name in registry.c (docs/adding-a-solver.md). */
#ifndef PD_SOLVER_H
#define PD_SOLVER_H

#include "core/param.h"
#include "io/output.h"
#include "peridot/types.h"
#include "peridot/world.h"
#include "world/step_context.h"

struct pd_world;
struct pd_state_arrays;

struct pd_ckpt_writer;
struct pd_ckpt_reader;
struct pd_scene;

/* An explicit method's automatic step is this fraction of its stability bound: the bound is
 * taken at a frame's start and the state changes within the frame (renewed families). */
#define PD_AUTO_DT_SAFETY 0.9

/* pd_stage_time and PD_MAX_STAGES: peridot/world.h. */

/* What one step reports (stats.csv, progress, bench). Times in seconds. */
typedef struct pd_step_stats {
    int iterations;  /* nonlinear (local/global) iterations of the last step */
    double residual; /* relative residual at the end of the last step */
    /* the objective the step's implicit solve minimised, at its end (J): for the energy-based
     * methods E(q) of the implicit Euler step, inertia + elastic + contact potentials; NaN when
     * the method does not report one */
    double energy;
    /* Xu 2018 Eq. 25 at the end of the step: the last iteration's decrease of E over the
     * step's; NaN when the method does not report one */
    double relative_error;
    /* > 0 when the step stopped at its iteration cap with the measure its tolerance judges
     * (projective_pd: the residual; hyperelastic_pd: Eq. 25's relative error) above 10 times
     * the tolerance: that measure over the tolerance. Implicit methods set it; 0 otherwise. */
    double unconverged_by;
    /* the world's stage: material changes and neighbourhood renewal with what they rebuild
     * (He 2017 t_n); a method's own stages follow in `stages` */
    double t_neighbors;
    /* the method's stages of the last step, named by the method (pd_step_stats_stages):
     * peridot_bench prints one column "<name> ms" per name */
    pd_stage_time stages[PD_MAX_STAGES];
    int stage_count;
    /* the part of the step in the bond kernels (F, directions, energy, gradient, gather; no
     * contact), over local_evaluations evaluations of `bonds` bonds: ns per bond per
     * evaluation in peridot_bench (0 when the method does not count them) */
    double t_bond_forces;
    int local_evaluations;
    size_t bonds;
    /* the rest of a step (line search, collisions, bookkeeping) is the wall time less
     * t_neighbors and the stages: peridot_bench's "other" column */
} pd_step_stats;

/* Sets the method's stage table: count names (static strings, one per stage, in the order the
 * bench prints them) and the seconds of each in this step. */
static inline void pd_step_stats_stages(pd_step_stats* stats, const char* const* names,
                                        const double* seconds, int count) {
    count = count < PD_MAX_STAGES ? count : PD_MAX_STAGES;
    for (int k = 0; k < count; ++k)
        stats->stages[k] = (pd_stage_time){names[k], seconds[k]};
    stats->stage_count = count;
}

/* One bond as a fracture test sees it: particles i -> j, the bond's reference vector X<xi> and
 * the particles' current positions. */
typedef struct pd_bond_view {
    uint32_t i, j;
    pd_vec3 xi;     /* reference vector (m) */
    pd_vec3 yi, yj; /* current positions (m) */
} pd_bond_view;
/* Returns nonzero when the bond breaks. */
typedef int (*pd_bond_test)(void* ctx, const pd_bond_view* bond);

/* An output attribute (a name of `output.attributes`) that a method computes and publishes;
 * the world publishes the common ones (velocity, material, body, id: world/fields.c). An
 * attribute that neither publishes is refused when the scene is validated. */
typedef struct pd_field_info {
    unsigned attribute;   /* its PD_ATTR_* bit (the name in output.attributes) */
    const char* names[6]; /* PLY / VTK property name of each component */
    int components;       /* values per particle, interleaved */
    pd_field_type type;   /* of the data the method hands out */
    const char* unit;     /* "m/s", "Pa", "1" */
    const char* doc;      /* one sentence for docs/scene-format.md */
} pd_field_info;

/* The optional material blocks a method honours. A material with a block (or a model of a
 * block) the method does not implement is refused when the scene is validated, naming the
 * block and what the method supports: nothing is accepted that does nothing. */
typedef struct pd_material_support {
    unsigned plasticity;      /* bit (1u << PD_PLASTICITY_*) for each model the method implements */
    unsigned viscoelasticity; /* bit (1u << PD_VISCO_*) for each `viscoelasticity` model */
    unsigned volume_correction; /* bit (1u << PD_PLASTICITY_*) for each model whose return has
                                 * the volume correction (`plasticity.volume_correction`) */
    unsigned rate_dependence;   /* bit (1u << PD_PLASTICITY_*) for each model whose return takes
                                 * `plasticity.rate_dependence` (mu(I)) */
} pd_material_support;

/* 1 when material m's return takes the volume correction under the method whose support is
 * `sup` (NULL: none): given true, or not given where the method implements it. */
int pd_material_volume_correction(const pd_material_def* m, const pd_material_support* sup);

/* For a method that simulates volumes only (a grid or a kernel needs a 3D neighbourhood):
 * PD_OK for a dynamic body, else refuses bodies[body].kind naming `method` and the kind. */
pd_status pd_solver_require_volume_body(const struct pd_scene* scene, int body, const char* method,
                                        pd_error* err);

/* What a method can simulate (docs/methods.md; the cross-method physics tests run a phenomenon
 * for every method that has its capability). A method declares the PD_CAP_DECLARED bits in its
 * vtable's `capabilities`; the others are read from what it already states (the plasticity
 * models and Prony series of `materials`, `change_materials`, `releases_pins`, `persistent`)
 * by pd_solver_capabilities, never declared twice. */
enum {
    PD_CAP_ELASTIC = 1u << 0,           /* elastic solid bodies (volumes of particles) */
    PD_CAP_SHELL = 1u << 1,             /* bodies[i].kind "shell" (one layer) */
    PD_CAP_ROD = 1u << 2,               /* bodies[i].kind "rod" (one line) */
    PD_CAP_FLUID = 1u << 3,             /* a fluid (the method's own material block) */
    PD_CAP_FRACTURE = 1u << 4,          /* bonds break for good by a material's criterion */
    PD_CAP_CONTACT = 1u << 5,           /* contact between bodies (solver.contact) */
    PD_CAP_COLLIDER_FRICTION = 1u << 6, /* colliders with Coulomb friction */
    PD_CAP_DECLARED = (1u << 7) - 1,
    PD_CAP_DRUCKER_PRAGER = 1u << 7,    /* derived from materials->plasticity */
    PD_CAP_VON_MISES = 1u << 8,         /* derived from materials->plasticity */
    PD_CAP_PRONY = 1u << 9,             /* derived from materials->viscoelasticity */
    PD_CAP_MATERIAL_CHANGES = 1u << 10, /* derived from change_materials */
    PD_CAP_PIN_RELEASE = 1u << 11,      /* derived from releases_pins */
    PD_CAP_CHECKPOINTS = 1u << 12,      /* derived from persistent */
    PD_CAP_MAXWELL = 1u << 13,          /* derived from materials->viscoelasticity */
    PD_CAP_EMITTERS = 1u << 14,         /* derived from on_emit */
    PD_CAP_COUNT = 15
};

typedef struct pd_solver_vtable {
    const char* name;                      /* method key in the scene */
    const char* paper;                     /* "He, Wang, Wu 2017, Projective Peridynamics" */
    const pd_param_table* params;          /* keys of the scene's `solver` object */
    const pd_param_table* material_params; /* method keys inside a material (any type; BLOCK
                                            * rows are nested objects of their rows) */
    /* Refuses a material the method cannot honour (e.g. a Poisson ratio); path is the JSON
     * path of the material for the message. */
    pd_status (*check_material)(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err);
    /* Material blocks it honours; NULL honours none. */
    const pd_material_support* materials;
    /* Attributes it publishes beyond the world's (may be NULL with field_count 0) ... */
    const pd_field_info* fields;
    int field_count;
    /* ... and the data of fields[k] for the world's current particle order (index i is
     * particle i), valid until the next step. */
    const void* (*publish_fields)(void* state, int k);
    pd_status (*create)(struct pd_world* world, const void* params, void** state, pd_error* err);
    void (*destroy)(void* state);
    /* Advances positions and velocities of the world's particles (ctx->particles) by one time
     * step of ctx->dt, without colliders (the world projects them after) unless
     * contact_in_solve. */
    pd_status (*step)(void* state, struct pd_world* world, const pd_step_context* ctx,
                      pd_step_stats* stats);
    /* The world reordered its particles: new index i holds old particle perm[i]. */
    pd_status (*on_reorder)(void* state, struct pd_world* world, const uint32_t* perm);
    /* The order the method wants its particles in, in place of the world's Z-curve: perm[i] =
     * the index of the particle that goes to place i, by the positions x (a grid method: by
     * grid cell, the order its transfers walk, so that they read memory in sequence). NULL: the
     * Z-curve. Needs on_reorder. */
    pd_status (*order)(void* state, const struct pd_world* world, const pd_vec3* x, uint32_t* perm);
    /* Steps between the world's reorderings of this method's particles (0: PD_REORDER_EVERY). */
    int reorder_every;
    /* Checkpoints (world/checkpoint.h): the arrays the method keeps across steps and their
     * family (the world writes and reads them), and, after a checkpoint was read into a fresh
     * state brought into its particle order, a rebuild of what the method derives from them
     * (a factor). Both NULL: the method writes no checkpoints, and a scene that asks for them
     * is refused. */
    struct pd_state_arrays* (*persistent)(void* state);
    pd_status (*restored)(void* state, struct pd_world* world, struct pd_ckpt_reader* r,
                          pd_error* err);
    /* What the method keeps across steps beyond its arrays (flags, sets), as records after
     * them, which `restored` reads back first; NULL: nothing more. */
    void (*save)(void* state, struct pd_ckpt_writer* cw);
    /* Room for a checkpoint's family of `bonds` bonds (renewals grew it past the fresh one's)
     * in the family and every per-bond array; NULL: the method's bonds never grow. */
    pd_status (*reserve_bonds)(void* state, size_t bonds);
    /* time.dt "auto" (SCENE.md): an implicit method's step, its documented default (s; 0 for
     * an explicit method, which gives max_time_step instead). */
    double auto_time_step;
    /* An explicit method's stability bound on dt in the current state (s): with time.dt
     * "auto" the world steps at PD_AUTO_DT_SAFETY times it, recomputed at every frame's start
     * (stiffness and families change); a numeric time.dt above it is refused at creation.
     * NULL: an implicit method. */
    pd_real (*max_time_step)(void* state, const struct pd_world* world);
    /* 1: with time.dt "auto" the bound is also taken before every step within a frame, and a
     * step above PD_AUTO_DT_SAFETY of it shortens the frame's remaining steps (a body that
     * speeds up within a frame; the frame still ends on time). 0: at frames' starts only. */
    int auto_step_each_step;
    /* The world changed the time step (world->def.dt): rebuild what depends on it. NULL: the
     * method takes any dt as it comes. */
    pd_status (*on_time_step)(void* state, struct pd_world* world, pd_error* err);
    /* Renews the families of the bodies with body_renews[b] != 0 from the current positions
     * (bonds that persist keep their state; neighbourhood/family_renewal.h). NULL: the method
     * has no bonds to renew. */
    pd_status (*renew_families)(void* state, struct pd_world* world, const uint8_t* body_renews,
                                pd_error* err);
    /* Removes for good every bond for which test() is nonzero (fracture); *removed gets the
     * number of directed bonds removed. NULL: the method has no bonds. */
    pd_status (*break_bonds)(void* state, struct pd_world* world, pd_bond_test test, void* ctx,
                             size_t* removed, pd_error* err);
    /* Material changes (bodies[i].material_changes): the world has just switched the material
     * and mass of the particles with changed[i] set (p->material, p->mass; at the start of a
     * step, before the step's renewal). The method refreshes what depends on them. NULL: the
     * method does not implement changes, and a scene that asks for one is refused. */
    pd_status (*change_materials)(void* state, struct pd_world* world, const uint8_t* changed,
                                  pd_error* err);
    /* Emitters (scene `emitters`): the world has just appended particles first .. count - 1
     * (positions, velocities, masses, materials set; room for them was reserved before
     * `create`, world->particles.capacity); the method gives them its state at rest (F = I)
     * and counts them from now on. NULL: the method takes no particles after its start, and a
     * scene with emitters is refused. */
    pd_status (*on_emit)(void* state, struct pd_world* world, size_t first, pd_error* err);
    /* Refuses, with a message naming `path` (the key that gives the body the material:
     * bodies[i].material or bodies[i].material_changes[k].material), a material the method
     * implements in general but cannot run on this body (e.g. plastic flow on a one-layer
     * shell). Asked for the body's own material and for every change. NULL: all accepted. */
    pd_status (*check_body_material)(const struct pd_scene* scene, int body, int material,
                                     const char* path, pd_error* err);
    /* Bytes per particle the method needs beyond the world's own arrays (for estimates), when
     * a particle has bond_fraction of a full (interior) family's bonds on average. */
    size_t (*bytes_per_particle)(const struct pd_scene* scene, double bond_fraction);
    /* 1: step resolves collider contact and Coulomb friction itself (inside an implicit
     * solve, boundary/friction.h) and writes the velocity each particle moved with; the
     * world then only projects a particle that still ended inside a collider and takes its
     * velocity from its motion. 0: the world projects and applies friction to velocities. */
    int contact_in_solve;
    /* 1: the method reads the pinned flags afresh every step, so the world may let a pin go
     * (bodies[i].pins[k].release: the world clears PD_P_PINNED of its particles); 0: a scene
     * with a release is refused. */
    int releases_pins;
    /* PD_CAP_* bits within PD_CAP_DECLARED the method can simulate (pd_solver_capabilities adds
     * the derived ones). */
    unsigned capabilities;
} pd_solver_vtable;

const pd_solver_vtable* pd_solver_find(const char* name);
/* NULL-terminated list of every registered method. */
const pd_solver_vtable* const* pd_solver_all(void);
/* The method's PD_CAP_* bits: its declared `capabilities` and those derived from its vtable. */
unsigned pd_solver_capabilities(const pd_solver_vtable* m);
/* Scene-facing name ("elastic", "drucker_prager", ...) and one-line meaning of the capability
 * bit `cap` (one of PD_CAP_*); NULL for any other value. */
const char* pd_capability_name(unsigned cap);
const char* pd_capability_doc(unsigned cap);

#endif
