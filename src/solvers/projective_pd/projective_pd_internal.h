/* Functions shared by the files of the projective_pd method. */
#ifndef PD_PROJECTIVE_PD_INTERNAL_H
#define PD_PROJECTIVE_PD_INTERNAL_H

#include "solvers/projective_pd/projective_pd_data.h"

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
/* Global step by the prefactored sparse Cholesky: z = A^-1 b over the free particles (0 for
 * constrained ones). */
pd_status pd_ppd_solve_direct(pd_ppd_state* s, const pd_vec3* b, pd_vec3* z);

/* For tests: the elastic energy (J) at y (+ contact when solver.contact), with its exact
 * gradient left in s->g. */
pd_real pd_ppd_elastic_energy(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags);

#endif
