#include "peridot/peridot.h"

const char* pd_version(void) {
    return PD_VERSION_STRING;
}
