/* Particle storage: one array per attribute (SoA), grown together. */
#include "world/particles.h"

#include <string.h>

#include "core/alloc.h"

pd_status pd_particles_reserve(pd_particles* p, size_t capacity) {
    if (capacity <= p->capacity)
        return PD_OK;
#define PD_GROW_(field, type)                                                                      \
    {                                                                                              \
        type* q = pd_realloc(p->field, p->capacity * sizeof(type), capacity * sizeof(type));       \
        if (!q)                                                                                    \
            return PD_ERR_OUT_OF_MEMORY;                                                           \
        p->field = q;                                                                              \
    }
    PD_PARTICLE_ARRAYS(PD_GROW_)
#undef PD_GROW_
    p->capacity = capacity;
    return PD_OK;
}

void pd_particles_free(pd_particles* p) {
#define PD_FREE_(field, type) pd_free(p->field, p->capacity * sizeof(type));
    PD_PARTICLE_ARRAYS(PD_FREE_)
#undef PD_FREE_
    memset(p, 0, sizeof *p);
}

size_t pd_particles_push(pd_particles* p, pd_vec3 x) {
    size_t i = p->count++;
    p->rest[i] = p->pos[i] = x;
    p->vel[i] = p->force[i] = pd_v3(0, 0, 0);
    p->mass[i] = p->volume[i] = p->spacing[i] = 0;
    p->material[i] = p->body[i] = 0;
    p->id[i] = (int32_t)i;
    p->pin[i] = -1;
    p->flags[i] = 0;
    return i;
}

void pd_particles_permute(pd_particles* p, const uint32_t* perm, void* scratch) {
#define PD_PERMUTE_(field, type)                                                                   \
    {                                                                                              \
        type* tmp = (type*)scratch;                                                                \
        for (size_t i = 0; i < p->count; ++i)                                                      \
            tmp[i] = p->field[perm[i]];                                                            \
        memcpy(p->field, tmp, p->count * sizeof(type));                                            \
    }
    PD_PARTICLE_ARRAYS(PD_PERMUTE_)
#undef PD_PERMUTE_
}
