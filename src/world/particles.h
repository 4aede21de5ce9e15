#ifndef PD_PARTICLES_H
#define PD_PARTICLES_H

#include "world/world.h"

/* Each attribute of pd_particles once, X(field, type): storage, permutation, checkpoints. */
#define PD_PARTICLE_ARRAYS(X)                                                                      \
    X(rest, pd_vec3)                                                                               \
    X(pos, pd_vec3)                                                                                \
    X(vel, pd_vec3)                                                                                \
    X(force, pd_vec3)                                                                              \
    X(mass, pd_real)                                                                               \
    X(volume, pd_real)                                                                             \
    X(spacing, pd_real)                                                                            \
    X(material, int32_t)                                                                           \
    X(body, int32_t)                                                                               \
    X(id, int32_t)                                                                                 \
    X(pin, int32_t)                                                                                \
    X(flags, uint8_t)

/* Grows every SoA array to hold at least `capacity` particles. */
pd_status pd_particles_reserve(pd_particles* p, size_t capacity);
void pd_particles_free(pd_particles* p);
/* Appends one particle with the given position; other attributes zero / -1. Returns its
 * index. The arrays must have room (reserve first). */
size_t pd_particles_push(pd_particles* p, pd_vec3 x);
/* Applies a permutation: new index i holds old particle perm[i]. `scratch` must hold
 * count * sizeof(pd_vec3) bytes. */
void pd_particles_permute(pd_particles* p, const uint32_t* perm, void* scratch);

#endif
