/* pd_parallel_for and the thread count: declared in the public peridot/parallel.h. */
#ifndef PD_PARALLEL_H
#define PD_PARALLEL_H

#include "peridot/parallel.h"

#endif
