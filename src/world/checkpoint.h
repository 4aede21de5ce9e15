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

/* pd_world_checkpoint_write and _read are public: peridot/world.h. */

#endif
