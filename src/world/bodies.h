#ifndef PD_BODIES_H
#define PD_BODIES_H

#include "world/world.h"

/* Samples every body of w->scene into particles and attaches pins. */
pd_status pd_world_add_bodies(pd_world* w, pd_error* err);

#endif
