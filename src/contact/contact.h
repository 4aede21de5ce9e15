/* Particle-particle contact between bodies and self-contact, shared by every method.
 *
 * Pairs: two particles i, j are a contact pair when they are closer than the contact distance
 * d_c = (s_i + s_j) / 2 (s the sampling spacing of each particle's body) and
 *   - they belong to different bodies, or
 *   - they belong to the same body but are not bonded: their rest distance exceeds
 *     horizon * s_i (the radius the methods build their families with), i.e. far-apart parts
 *     of one body folding onto each other (self-contact), and neither's material renews its
 *     families on the current positions (plastic flow, fluids, sand): such a body bonds every
 *     pair closer than the horizon at each renewal, so a close pair of it is always bonded
 *     (counted by their rest distance instead, a slumping fluid's particles that started
 *     apart kept about 70 penalty pairs per step on top of their bonds, and with
 *     solver.plastic_passes 4 the line search's floor on those pairs froze it in place);
 *   - they are two grains (def.grains of both materials): particles that stand for sand, which
 *     nothing but the contact keeps apart (sbpd: Algorithm 1's self collisions, at a distance
 *     of its own);
 *   - neither is a rod ghost, and not both of them are constrained (fixed or pinned).
 * d_c = s: two grid-sampled bodies whose surfaces touch have their outer particle layers one
 * spacing apart (each particle stands for a cube of side s), so contact starts exactly where
 * the sampled surfaces meet. The pairs are found through the hash grid (src/neighbor/hash_grid.h)
 * from a candidate list (every pair within d_c + 2 skins, skin at least a quarter of the
 * smallest spacing, up to where the list reaches the horizon) that is rebuilt at the start of each
 * step and whenever a particle has moved more than a skin since (unless the few that did, at
 * most a quarter, touch nothing through a pair not listed: candidates_stale): every pair closer
 * than d_c is always in it, so the contact energy is a function of the positions alone (a Verlet
 * list; measured on the demo, a rebuild at every evaluation cost 37 % of the run time, this 11 %).
 *
 * Energy per pair (a quadratic penalty, zero beyond d_c, C1 at d_c):
 *   E_ij = k_ij / 2 (d_c - d)^2,  d = |y_i - y_j| < d_c,
 *   k_ij = kappa E_ij d_c,  E_ij = 2 E_i E_j / (E_i + E_j)
 * with E the Young's modulus of each particle's material: the pair is as stiff as a bar of
 * the softer material one spacing long with a cross-section of one spacing squared, i.e. as
 * stiff as the material's own bonds, so the contact layer deforms like one more layer of
 * material, the implicit solve stays as well conditioned as the body's own (the stiffness
 * goes onto the preconditioner's diagonal), and the penetration under a load f is
 * f / (E d_c): a strain of the layer, independent of the time step. A stiffness of m/h^2
 * instead would let a column of N particles sink N g h^2 per contact (11 mm = one spacing per
 * layer at h = 1/30 s). docs/adding-a-solver.md shows how a method uses this module.
 *
 * Friction (lagged, as in IPC: Li et al. 2020, Sec. 5): at the start of a step the pairs in
 * contact at the step's start positions x0 are recorded with their normal n and normal force
 * lambda = k (d_c - d); during the step each such pair resists its relative tangential
 * displacement u_t = P_n ((y_i - x0_i) - (y_j - x0_j)) with the energy
 *   D = mu lambda (|u_t|^2 / (2 eps))      for |u_t| < eps   (sticking, smoothed)
 *   D = mu lambda (|u_t| - eps / 2)         beyond            (sliding: force mu lambda)
 * so the tangential force never exceeds mu lambda (Coulomb) and is smooth near zero slip;
 * eps = slip_velocity * h. mu_ij = sqrt(mu_i mu_j) from each particle's material.
 *
 * Pair forces are computed on both sides from the same operands (antisymmetric
 * differences, commutative means), so they are exactly equal and opposite. Evaluation runs in
 * parallel over particles, each writing only its own gradient; sums are per-chunk partials
 * added in order: the same bits for any thread count. The candidates' buffers (the list, the
 * grid's rows, the pair stiffnesses) grow with the candidates and give their room back once
 * PD_CONTACT_QUIET_STEPS steps in a row held under a quarter of it, sized then to the most
 * those steps held (a quarter spare): no allocation once warm, in a steady state or one that
 * swings within what its last quiet steps held (the 25K bunny's landing held 78.8K eligible
 * candidates, its steps after it 8-19K; docs/benchmarks.md, Memory). */
#ifndef PD_CONTACT_H
#define PD_CONTACT_H

#include <stddef.h>
#include <stdint.h>

#include "core/param.h"
#include "neighbor/hash_grid.h"
#include "peridot/types.h"

struct pd_particles;

typedef struct pd_contact_def {
    pd_real horizon;         /* same-body pairs within horizon * spacing at rest are bonded (1) */
    pd_real stiffness;       /* kappa: multiplies k_ij = E_ij d_c (1) */
    pd_real slip_velocity;   /* eps / h: relative tangential speed below which friction sticks
                                (m/s) */
    const pd_real* modulus;  /* per material: Young's modulus (Pa) */
    const pd_real* friction; /* per material: Coulomb coefficient (1); NULL: no friction */
    const uint8_t* renews;   /* per material: 1 when its bodies renew their families on the
                                current positions (no self-contact); NULL: none does */
    const uint8_t* grains;   /* per material: 1 when two particles of one body of it are a
                                pair as two bodies' are, at any rest distance (grains: nothing
                                but the contact keeps them apart); NULL: none */
} pd_contact_def;
pd_contact_def pd_default_contact_def(void);

typedef struct pd_contact {
    pd_contact_def def;
    const struct pd_particles* p; /* the world's particles (reordered in place by the world) */
    size_t n;
    pd_real radius; /* largest contact distance: the grid's search radius (m) */
    pd_hash_grid grid;
    pd_neighbor_list near; /* candidates within radius + 2 skin of where they were found */
    float* near_at;        /* the positions they were found at, 3 a particle, single precision
                            * (12 bytes a particle less) */
    pd_real near_slack;    /* within this of the positions (m): candidates_stale allows for it */
    pd_real skin;          /* s/4 or more, s the smallest spacing (candidate_skin) (m) */
    int near_valid;
    /* 1: a method that tells of every reordering (pd_contact_particles_reordered) keeps the
     * candidate list across steps; 0 (default): begin_step drops it */
    int keep_candidates;
    /* 1: the search keeps the eligible candidates only, in a lean grid (set before the first
     * evaluation; the same pairs, fewer bytes: projective_pd). 0 (default): the grid keeps
     * every pair within the reach, filtered after (hyperelastic_pd's and sbpd's estimates count
     * that list) */
    int eligible_only;
    /* per particle, at the last evaluation */
    /* dE_contact/dy_i (N): the contact's own array, or with grad_adds the caller's, into which
     * an evaluation adds it (NULL there: none kept) */
    pd_vec3* grad;
    int grad_adds;
    pd_real* diag; /* sum of the pair stiffnesses acting on i: a diagonal Hessian bound (N/m) */
    /* the pairs at the last evaluation, read through the candidate list: pair_k[k] is the
     * stiffness of the pair (i, near.indices[k]) for k in i's row (N/m), 0 where that candidate
     * is no pair (a spring Laplacian a preconditioner may add: no index or count stored apart,
     * 4 bytes a candidate and 4 a particle less) */
    pd_real* pair_k;
    size_t pair_capacity;
    /* the room's rule (pd_contact_begin_step): the most candidates the searches of the step
     * under way held, the most of the quiet steps before it and how many there were; what the
     * search that made the list held (a kept list's need, in the searches' units) */
    size_t step_most, quiet_most, kept_listed;
    int quiet_steps;
    /* lagged friction pairs, per particle (CSR), recorded by pd_contact_begin_step; f_offsets
     * only where some material has friction */
    const pd_vec3* x0;
    pd_real eps; /* slip length (m) */
    uint32_t* f_offsets;
    uint32_t* f_j;
    pd_vec3* f_normal; /* n = (x0_i - x0_j) / d */
    pd_real* f_force;  /* mu_ij lambda (N) */
    size_t f_capacity;
    int f_ready;
    /* deterministic reductions: one partial per chunk */
    pd_real* partial;
    size_t chunks;
    /* what the last evaluation saw, for tests and stats */
    pd_real energy;  /* J */
    pd_real closest; /* smallest d / d_c over the pairs (1 when there are none) */
    pd_real floor;   /* the closest a trial of the current line search may come (d_c) */
    size_t pairs;    /* contact pairs (each counted once) */
    size_t sticking; /* friction pairs below the slip length */
    size_t friction_pairs;
    /* per material, when pd_contact_init_scene made them */
    pd_real* own_modulus;
    pd_real* own_friction;
    uint8_t* own_renews;
    int material_count;
} pd_contact;

/* Closest a contact pair may come, in contact distances, in a line-search trial (unless it
 * already was closer, less PD_CONTACT_SLACK): a particle slipping between four particles of
 * another body's lattice face passes at 0.71 d_c, so 0.75 keeps bodies from passing through each
 * other. */
#define PD_CONTACT_FLOOR 0.75
/* How much closer a pair that starts a line search at or near that floor may come (d_c): no
 * slack froze bodies whose pairs sat at the floor (projective_pd's Fig. 19 dress). */
#define PD_CONTACT_SLACK 0.01
/* Steps in a row whose candidates held under a quarter of their room before it is given back */
#define PD_CONTACT_QUIET_STEPS 3

/* The keys every method with this contact declares, written once: in its `solver` table ... */
#define PD_CONTACT_SOLVER_ROWS(T, on, stiffness)                                                   \
    {"contact",                                                                                    \
     PD_PARAM_BOOL,                                                                                \
     offsetof(T, on),                                                                              \
     1,                                                                                            \
     0,                                                                                            \
     1,                                                                                            \
     "-",                                                                                          \
     NULL,                                                                                         \
     "Particle-particle contact between bodies and between far-apart parts of one body, as an "    \
     "energy in the solve (src/contact; beyond the paper); false lets bodies pass through each "   \
     "other."},                                                                                    \
    {                                                                                              \
        "contact_stiffness", PD_PARAM_REAL, offsetof(T, stiffness), 4, 0.01, 1000, "1", NULL,      \
            "Multiplies the contact penalty stiffness E d_c of a particle pair (E the softer "     \
            "material's Young's modulus, d_c the pair's spacing)."                                 \
    }
/* ... and in its material table (a pd_real of its material keys). */
#define PD_CONTACT_MATERIAL_ROW(T, friction)                                                       \
    {                                                                                              \
        "contact_friction", PD_PARAM_REAL, offsetof(T, friction), 0, 0, 10, "1", NULL,             \
            "Coulomb friction coefficient of this material against other bodies (and itself) in "  \
            "particle-particle contact; a pair takes sqrt(mu_a mu_b). Requires solver.contact."    \
    }

/* Refuses (at `path`, the material) a contact_friction that solver.contact = false would
 * ignore. */
pd_status pd_contact_check_friction(int contact_on, pd_real friction, const char* path,
                                    pd_error* err);

/* Prepares contact for the world's particles with the scene's materials: the penalty stiffness
 * from each one's Young's modulus, friction from the pd_real at byte `friction_offset` of its
 * method_params (the method's contact_friction key), self-contact off for the materials with
 * renews[m] (may be NULL). def's per-material arrays are filled (and owned) here. */
pd_status pd_contact_init_scene(pd_contact* c, pd_contact_def def, const struct pd_particles* p,
                                const pd_material_def* materials, int count, size_t friction_offset,
                                const uint8_t* renews);

/* A line search begins at the last evaluation: its trials may bring pairs no closer than
 * PD_CONTACT_FLOOR, or than they are now less PD_CONTACT_SLACK (a descent's search_begins). */
void pd_contact_search_begins(pd_contact* c);
/* 1 when the last evaluation kept that floor (a descent's trial_admissible). */
int pd_contact_admissible(const pd_contact* c);

/* Prepares contact for the world's particles: allocates the per-particle arrays once. */
pd_status pd_contact_init(pd_contact* c, const pd_contact_def* def, const struct pd_particles* p);
void pd_contact_free(pd_contact* c);
/* From now on an evaluation adds dE_contact/dy_i into c->grad, which the caller points at an
 * array of its own before each evaluation (a gradient it has filled; NULL: none), instead of
 * keeping it apart: the contact's own array is freed (24 bytes a particle). */
void pd_contact_add_gradient_to_callers(pd_contact* c);

/* 1 when i and j may touch (not the same particle, not bonded, no ghost, not both fixed, not
 * of one body that renews its families unless both are grains). */
int pd_contact_eligible(const pd_contact* c, uint32_t i, uint32_t j);
/* The contact distance of a pair (m). */
pd_real pd_contact_distance(const pd_contact* c, uint32_t i, uint32_t j);
/* The penalty stiffness of a pair (N/m). */
pd_real pd_contact_stiffness(const pd_contact* c, uint32_t i, uint32_t j);

/* Call at the start of every step (the particles may have been reordered since the last):
 * drops the candidate list (unless keep_candidates: then only after
 * pd_contact_particles_reordered; the list is rebuilt anyway once a particle has moved more
 * than a skin since it was found and touches a particle through a pair not listed, or many
 * have) and records the friction pairs at the step's start positions
 * x0 (kept until the step ends) with slip length eps = slip_velocity * dt. */
pd_status pd_contact_begin_step(pd_contact* c, const pd_vec3* x0, pd_real dt);
/* The world renumbered the particles (a method's on_reorder): the candidate list is stale. */
void pd_contact_particles_reordered(pd_contact* c);

/* Finds the pairs at y and evaluates the contact (+ friction) energy; fills grad and diag.
 * Returns PD_OK or PD_ERR_OUT_OF_MEMORY (a buffer could not grow); *energy gets J. */
pd_status pd_contact_evaluate(pd_contact* c, const pd_vec3* y, pd_real* energy);
/* Only c->closest at y (pd_contact_evaluate's, the same number), for a caller that asks whether
 * a point keeps its pairs apart: no energy, gradient, diagonal or pair stiffness (those of the
 * last evaluation are stale until the next pd_contact_evaluate). */
pd_status pd_contact_closest(pd_contact* c, const pd_vec3* y);

#endif
