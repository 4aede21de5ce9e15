/* The memory this process may use: declared in the public peridot/memory.h. */
#ifndef PD_MEMORY_LIMIT_H
#define PD_MEMORY_LIMIT_H

#include "peridot/memory.h"

#endif
