/* pd_now, the monotonic wall clock: declared in the public peridot/parallel.h. */
#ifndef PD_TIMER_H
#define PD_TIMER_H

#include "peridot/parallel.h"

#endif
