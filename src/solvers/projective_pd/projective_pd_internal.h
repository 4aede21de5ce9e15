/* Functions shared by the files of the projective_pd method. */
#ifndef PD_PROJECTIVE_PD_INTERNAL_H
#define PD_PROJECTIVE_PD_INTERNAL_H

#include "solvers/projective_pd/projective_pd_data.h"
#include "solvers/solver.h"

struct pd_world;

pd_status pd_ppd_check_material(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err);
/* Maps E, nu (or Lame) to the constants of Eq. 8 (+ dilatation). */
pd_ppd_material pd_ppd_map_material(const pd_material_def* m, const pd_ppd_params* prm, pd_real A,
                                    pd_real B);
pd_status pd_ppd_create(struct pd_world* world, const void* params, void** state, pd_error* err);
void pd_ppd_destroy_state(pd_ppd_state* s);
/* The world reordered its particles: new index i holds old particle perm[i]. */
pd_status pd_ppd_on_reorder(void* state, struct pd_world* w, const uint32_t* perm);
/* The global matrix of Eq. 12 (M/h^2 + bond weights) as a pd_sym_csr over the families. */
pd_sym_csr pd_ppd_matrix(const pd_ppd_state* s);

/* Rebuilds what depends on the families and on dt (shape tensors, stiffness, diagonal, Jacobi
 * bound, Cholesky factor), after a renewal, a removal of bonds or a new time step. */
pd_status pd_ppd_build_system(pd_ppd_state* s, const struct pd_world* w, pd_error* err);
/* (Re)allocates the per-bond arrays for the current family's capacity. */
pd_status pd_ppd_allocate_bonds(pd_ppd_state* s);

/* A new time step, renewed families, bonds broken for good (projective_pd_renew.c). */
pd_status pd_ppd_on_time_step(void* state, struct pd_world* w, pd_error* err);
pd_status pd_ppd_renew_families(void* state, struct pd_world* w, const uint8_t* body_renews,
                                pd_error* err);
pd_status pd_ppd_break_bonds(void* state, struct pd_world* w, pd_bond_test test, void* ctx,
                             size_t* removed, pd_error* err);

/* For tests: the elastic energy (J) at y (+ contact when solver.contact), with its exact
 * gradient left in s->g. */
pd_real pd_ppd_elastic_energy(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags);

#endif
