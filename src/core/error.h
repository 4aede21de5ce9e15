#ifndef PD_ERROR_H
#define PD_ERROR_H

#include "peridot/types.h"

/* Fills err (if not NULL) with a JSON path and a printf-style message; returns status so
 * that callers can write `return pd_fail(err, PD_ERR_BAD_SCENE, path, "...")`. */
pd_status pd_fail(pd_error* err, pd_status status, const char* path, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
