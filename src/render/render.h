/* The particle renderer: declared in the public peridot/render.h. */
#ifndef PD_RENDER_H
#define PD_RENDER_H

#include "peridot/render.h"

#endif
