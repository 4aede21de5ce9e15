/* 8-bit RGB PNG files through libpng: written atomically (temp + rename) for `peridot
 * render`, read back by tests. */
#ifndef PD_PNG_H
#define PD_PNG_H

#include <stdint.h>

#include "peridot/io.h"
#include "peridot/types.h"

/* pd_write_png is public: peridot/io.h. */

/* Reads any PNG converted to 8-bit RGB; *rgb is pd_alloc'd, width * height * 3 bytes (free with
 * pd_free(*rgb, (size_t)w * h * 3)). */
pd_status pd_read_png(const char* path, int* width, int* height, uint8_t** rgb, pd_error* err);

#endif
