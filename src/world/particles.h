#ifndef PD_PARTICLES_H
#define PD_PARTICLES_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/status.h"
#include "peridot/types.h"

/* Particle flags. */
enum {
    PD_P_FIXED = 1 << 0,  /* never moves (fixed bodies) */
    PD_P_PINNED = 1 << 1, /* follows a pin's keyframes */
    PD_P_GHOST = 1 << 2,  /* rod ghost particle: simulated, but no collisions (He 2017 Fig. 6) */
    PD_P_SHELL = 1 << 3,  /* belongs to a one-layer shell */
};
#define PD_P_CONSTRAINED (PD_P_FIXED | PD_P_PINNED)

/* Structure of arrays; index i is one particle. `rest` is the sampled (initial) position and
 * never changes; methods keep their own reference state (bonds) apart from it. */
typedef struct pd_particles {
    size_t count, capacity;
    pd_vec3* rest;
    pd_vec3* pos;
    pd_vec3* vel;
    pd_vec3* force;   /* internal force at the end of a step, filled for pinned particles */
    pd_real* mass;    /* kg */
    pd_real* volume;  /* m^3 */
    pd_real* spacing; /* sampling spacing of the particle's body (m) */
    int32_t* material;
    int32_t* body;
    int32_t* id;  /* stable identity across reorderings */
    int32_t* pin; /* global pin index, or -1 */
    uint8_t* flags;
} pd_particles;

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
