#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

pd_status pd_fail(pd_error* err, pd_status status, const char* path, const char* fmt, ...) {
    if (!err)
        return status;
    snprintf(err->path, sizeof err->path, "%s", path ? path : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}
