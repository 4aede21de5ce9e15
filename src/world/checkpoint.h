/* Checkpoints of a world (issue 30, item 5): everything the next step reads, so that a run
 * resumed from one continues bit for bit as the run that wrote it: the particles (their order
 * included), the clocks and counters of the world, the pins, the material changes made, the
 * method's family and its declared arrays (state_arrays.h), after which the method rebuilds
 * what it derives from them (pd_solver_vtable.restored). */
#ifndef PD_CHECKPOINT_H
#define PD_CHECKPOINT_H

#include <stdint.h>

#include "world/world.h"

/* Whether the world's method can be checkpointed (it declares its persistent arrays). */
int pd_world_can_checkpoint(const pd_world* w);

/* Writes the world at the end of frame `frame` to path (atomically: temporary file, rename). */
pd_status pd_world_checkpoint_write(const pd_world* w, int frame, uint64_t scene_print,
                                    const char* path, pd_error* err);

/* Reads a checkpoint into w, made by pd_create_world from the same scene and not stepped:
 * PD_ERR_BAD_SCENE (why in err) when it is another scene's, method's or format's. *frame gets
 * the frame it was written at. */
pd_status pd_world_checkpoint_read(pd_world* w, uint64_t scene_print, const char* path, int* frame,
                                   pd_error* err);

#endif
