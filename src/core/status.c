#include "peridot/status.h"

#define PD_STATUS_MESSAGE_(name, msg) msg,
static const char* const k_messages[] = {PD_STATUS_LIST(PD_STATUS_MESSAGE_)};
#undef PD_STATUS_MESSAGE_

const char* pd_status_string(pd_status status) {
    if ((int)status < 0 || status >= PD_STATUS_COUNT)
        return "unknown status";
    return k_messages[status];
}
