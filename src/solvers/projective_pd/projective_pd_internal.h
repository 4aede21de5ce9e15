/* Functions shared by the files of the projective_pd method. */
#ifndef PD_PROJECTIVE_PD_INTERNAL_H
#define PD_PROJECTIVE_PD_INTERNAL_H

#include "solvers/projective_pd/projective_pd_data.h"
#include "solvers/solver.h"

struct pd_world;

pd_status pd_ppd_check_material(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err);
/* E and nu of a material given either way (E, nu or Lame). */
/* Maps E, nu (or Lame) to the constants of Eq. 8 (+ dilatation). */
pd_ppd_material pd_ppd_map_material(const pd_material_def* m, const pd_ppd_params* prm, pd_real A,
                                    pd_real B);
pd_status pd_ppd_create(struct pd_world* world, const void* params, void** state, pd_error* err);
void pd_ppd_destroy_state(pd_ppd_state* s);
/* The world reordered its particles: new index i holds old particle perm[i]. */
pd_status pd_ppd_on_reorder(void* state, struct pd_world* w, const uint32_t* perm);
struct pd_state_arrays* pd_ppd_persistent(void* state);
/* Room for a checkpoint's family of `bonds` bonds and its per-bond arrays. */
pd_status pd_ppd_reserve_bonds(void* state, size_t bonds);
void pd_ppd_save(void* state, struct pd_ckpt_writer* cw);
pd_status pd_ppd_restored(void* state, struct pd_world* w, struct pd_ckpt_reader* r, pd_error* err);
/* The global matrix of Eq. 12 (M/h^2 + bond weights) as a pd_sym_csr over the families. */
pd_sym_csr pd_ppd_matrix(const pd_ppd_state* s);

/* Rebuilds what depends on the families and on dt (shape tensors, stiffness, diagonal, Jacobi
 * bound, Cholesky factor), after a renewal, a removal of bonds or a new time step. */
pd_status pd_ppd_build_system(pd_ppd_state* s, const struct pd_world* w, pd_error* err);
/* The same after a renewal, for the particles whose family or references changed since the
 * last rebuild (s->stale) and their neighbours; the others keep their shape tensor, surface
 * correction and bond stiffness, moved to their new bonds' places (old offsets in
 * s->fam_spare). The same bits as pd_ppd_build_system; it falls back to it where the carried
 * values are not at hand (s->stale_valid). */
pd_status pd_ppd_rebuild_renewed(pd_ppd_state* s, const struct pd_world* w, pd_error* err);
#define PPD_STALE_REFS   1
#define PPD_STALE_FAMILY 2
/* Particles per task of the local step's scatter plan (a few cells: the colours' tasks balance
 * over the threads). */
#define PPD_TASK_GRAIN 128

/* The skin of the renewals' Verlet list, in spacings: its search radius is the horizon plus
 * this (2.26 spacings at the default horizon of 2.01: 1.4 times the pairs to filter), and it
 * lasts while no grain has moved an eighth of a spacing. */
#define PPD_VERLET_SKIN 0.25
/* Plans the local step anew when the families changed since it was planned, at the world's
 * positions, its cells aligned with the world's Z-curve (pd_world_order_cell). */
pd_status pd_ppd_plan_local_step(pd_ppd_state* s, const struct pd_world* w);

/* A new time step, renewed families, bonds broken for good (projective_pd_renew.c). */
pd_status pd_ppd_on_time_step(void* state, struct pd_world* w, pd_error* err);
pd_status pd_ppd_renew_families(void* state, struct pd_world* w, const uint8_t* body_renews,
                                pd_error* err);
/* Material changes (bodies[i].material_changes): what the changed particles keep and what is
 * rebuilt (projective_pd_renew.c); the refusal of flowing materials on shells and rods. */
pd_status pd_ppd_change_materials(void* state, struct pd_world* w, const uint8_t* changed,
                                  pd_error* err);
/* Some body of the scene changes its material (bodies[i].material_changes): its families are
 * renewed then, with X of their own, and may span two materials (projective_pd_setup.c). */
int pd_ppd_materials_change(const struct pd_scene* sc);
pd_status pd_ppd_check_body_material(const struct pd_scene* sc, int body, int material,
                                     const char* path, pd_error* err);
/* The world renews, every step, the bodies that hold a flowing (plastic) particle; none when
 * no body does (at creation: the world's renewal is then left unset). */
pd_status pd_ppd_update_renewal(pd_ppd_state* s, struct pd_world* w, int at_creation,
                                pd_error* err);
pd_status pd_ppd_break_bonds(void* state, struct pd_world* w, pd_bond_test test, void* ctx,
                             size_t* removed, pd_error* err);

/* A symmetric matrix from its upper triangle; pd_ppd_kinv: (X*X)^+ of i's family so. */
static inline pd_mat3 pd_ppd_sym3_full(pd_ppd_sym3 k) {
    return (pd_mat3){{{k.xx, k.xy, k.xz}, {k.xy, k.yy, k.yz}, {k.xz, k.yz, k.zz}}};
}
static inline pd_mat3 pd_ppd_kinv(const pd_ppd_state* s, uint32_t i) {
    return pd_ppd_sym3_full(s->kinv[i]);
}

/* The granular factor on lambda and kv of particle i (Sec. 7): 1 without granular matter. */
static inline pd_real pd_ppd_vscale(const pd_ppd_state* s, size_t i) {
    return s->vscale ? s->vscale[i] : 1;
}

/* q_i = mu + (lambda/2 + kv) s_i of particle i (Pa; s_i the granular factor, kv 0 on a planar
 * family): a_ij = 2 kb_ij q_i is the bond's quadratic stiffness. Formed per use from the
 * material, the flag and the factor, which change only where the system is rebuilt (8 bytes a
 * particle less than an array). */
static inline pd_real pd_ppd_material_kq(const pd_ppd_material* m, int planar, pd_real vscale) {
    return m->mu + (0.5 * m->lambda + (planar ? 0 : m->kv)) * vscale;
}
static inline pd_real pd_ppd_kq(const pd_ppd_state* s, uint32_t i) {
    return pd_ppd_material_kq(&s->mat[s->material[i]], s->planar[i], pd_ppd_vscale(s, i));
}

/* kb of i's bond b (m), stored or derived. Where a family keeps its rest positions for good
 * (no material flows or changes, so both ends of a bond are of one material), i's kb and j's
 * differ only by the weights: kb_ji = kb_ij w_j / w_i (the same V_i V_j, |X|, f(n) and surface
 * correction). Then c_ij = 2 kb_ij kq_i + 2 kb_ji kq_j = 2 kb_ij (w_i kq_i + w_j kq_j) / w_i,
 * and kb_ij = c_ij w_i / (2 (w_i kq_i + w_j kq_j)) is read from c: no kb is stored (4 bytes a
 * bond; docs/methods/projective_pd.md, "Bond storage"). */
static inline pd_real pd_ppd_bond_kb(const pd_ppd_state* s, uint32_t i, uint32_t b) {
    if (s->kb)
        return s->kb[b];
    const pd_real* w = s->fam.w;
    uint32_t j = s->fam.j[b];
    return s->c[b] * w[i] / (2 * (w[i] * pd_ppd_kq(s, i) + w[j] * pd_ppd_kq(s, j)));
}

/* F = (Y*X)(X*X)^+ over i's family at positions y (Sec. 3, Eq. 2-4). */
pd_mat3 pd_ppd_deformation_gradient(const pd_ppd_state* s, const pd_vec3* y, uint32_t i);

/* Plasticity (Sec. 5, projective_pd_plastic.c): the yield constants of every material, and the
 * plastic flow at positions y, the step's new positions or an iterate (reference vectors
 * updated, the system rebuilt when some flowed or the references had `changed` before). */
void pd_ppd_yield_constants(const pd_material_def* m, pd_ppd_material* out);
pd_status pd_ppd_plastic_flow(pd_ppd_state* s, const struct pd_world* w, const pd_vec3* y,
                              int changed, pd_error* err);
/* The same at the step's end: the rebuild is left to the next step (system_stale) where that
 * changes no bit of it (projective_pd_plastic.c). */
pd_status pd_ppd_plastic_flow_at_step_end(pd_ppd_state* s, const struct pd_world* w,
                                          const pd_vec3* y, int changed, pd_error* err);
/* plastic_return in_solve (projective_pd_plastic.c): before the step's first evaluation, the
 * references and shape tensors of the step's start kept (the arrays grown to the families);
 * at each iterate y, every plastic particle's references returned from the start's at y
 * (returns 1 when some particle yields there: its force is then no gradient of the merit);
 * after the solve, the plastic strain of the last iterate's return counted (returns 1 when some
 * particle's references moved: the system must be rebuilt). */
pd_status pd_ppd_return_begin(pd_ppd_state* s);
int pd_ppd_return_at(pd_ppd_state* s, const pd_vec3* y);
int pd_ppd_return_end(pd_ppd_state* s);
void pd_ppd_return_free(pd_ppd_state* s);
/* (X*X)^+ of i's family into s->kinv[i] and s->planar[i] (projective_pd_setup.c). */
void pd_ppd_shape_tensor(pd_ppd_state* s, uint32_t i);
/* The same (X*X)^+ computed, not stored; *planar (may be NULL) as pd_ppd_shape_tensor's flag. */
pd_ppd_sym3 pd_ppd_family_kinv(const pd_ppd_state* s, uint32_t i, int* planar);
/* Eq. 20: the map F^-1 that gives a bond newly added to particle i its reference vector,
 * X = F^-1 (y_j - y_i), with F from i's current family at y and its singular values clamped
 * to [1 + e_iso - ||e_dev||, 1 + e_iso + ||e_dev||] (Sec. 5, New Particle Neighbors). */
pd_mat3 pd_ppd_new_bond_map(const pd_ppd_state* s, const pd_vec3* y, uint32_t i);
/* I1 (-tr sigma, Pa) and sqrt(J2) (Pa) of particle i at y from its bond strains (Eq. 16-17). */
void pd_ppd_stress_invariants(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, pd_real* i1,
                              pd_real* sqrt_j2);
/* The pressure particle i's own bonds exert at y: -tr / 3 of the virial of its energy's bond
 * forces (Pa; projective_pd.c). */
pd_real pd_ppd_bond_pressure(const pd_ppd_state* s, const pd_vec3* y, uint32_t i);
/* sqrt(J2) - (A + B I1) of particle i at y (Pa; > 0 outside the yield surface), its
 * A + B I1 in *limit. */
pd_real pd_ppd_yield_excess(const pd_ppd_state* s, const pd_vec3* y, uint32_t i, pd_real* limit);

/* Granular matter (Sec. 7, projective_pd_granular.c): its constants from the material's
 * `granular` block; (k_f + k_c) / K_f at a density ratio rho / rho_0 (Eq. 25-27); per step
 * the densities and the factors on lambda and kv; after the solve, the density constraints,
 * static friction (Eq. 28) and the repulsive distance constraint (Sec. 8) on y. */
void pd_ppd_granular_constants(const pd_material_def* m, pd_ppd_material* out);
pd_real pd_ppd_granular_factor(const pd_ppd_material* m, pd_real ratio);
void pd_ppd_granular_stiffness(pd_ppd_state* s, const struct pd_world* w);
/* The published density (kg/m^3) of every particle at the world's positions into s->density,
 * when it is asked for (ppd_publish_fields). */
void pd_ppd_publish_density(pd_ppd_state* s, const struct pd_world* w);
void pd_ppd_granular_correct(pd_ppd_state* s, const struct pd_world* w, pd_vec3* y);
/* granular_constraints in_solve: whether; the step's density definition (before the solve);
 * the energy of the density penalty and the repulsion at y, their gradient added into s->g. */
int pd_ppd_granular_in_solve(const pd_ppd_state* s);
void pd_ppd_granular_prepare(pd_ppd_state* s, const struct pd_world* w);
pd_real pd_ppd_granular_energy(pd_ppd_state* s, const pd_vec3* y);
/* Sec. 6: particle redistribution (Eq. 21-24) of the fluids at the step's end positions. */
void pd_ppd_fluid_redistribute(pd_ppd_state* s, struct pd_world* w);
/* Eq. 28: the step from x (predicted y*, solved y) pushed the grain back by at least eta of its
 * predicted move, (y - y*).(x - y*) >= eta |y* - x|^2: it stays at x. */
int pd_ppd_static_friction_holds(pd_vec3 x, pd_vec3 ystar, pd_vec3 y, pd_real eta);

/* For tests: the elastic energy (J) at y (+ contact when solver.contact), with its exact
 * gradient left in s->g. */
pd_real pd_ppd_elastic_energy(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags);

#endif
