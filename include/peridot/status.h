/* Status codes returned by every fallible library function. One X-macro makes the enum and
 * the messages, so they cannot drift apart. */
#ifndef PERIDOT_STATUS_H
#define PERIDOT_STATUS_H

#define PD_STATUS_LIST(X)                                                                          \
    X(PD_OK, "ok")                                                                                 \
    X(PD_ERR_INVALID_ARGUMENT, "invalid argument")                                                 \
    X(PD_ERR_OUT_OF_MEMORY, "out of memory")                                                       \
    X(PD_ERR_TOO_LARGE, "scene needs more memory than allowed")                                    \
    X(PD_ERR_BAD_SCENE, "bad scene")                                                               \
    X(PD_ERR_IO, "input/output error")                                                             \
    X(PD_ERR_MESH, "unusable mesh")                                                                \
    X(PD_ERR_UNKNOWN_METHOD, "unknown method")                                                     \
    X(PD_ERR_UNSUPPORTED, "unsupported by this method")                                            \
    X(PD_ERR_SOLVER, "linear solver failed")                                                       \
    X(PD_ERR_UNSTABLE, "simulation went unstable")                                                 \
    X(PD_ERR_BUSY, "in use by another run")

#define PD_STATUS_ENUM_(name, msg) name,
typedef enum pd_status { PD_STATUS_LIST(PD_STATUS_ENUM_) PD_STATUS_COUNT } pd_status;
#undef PD_STATUS_ENUM_

/* A static English message for a status; never NULL. */
const char* pd_status_string(pd_status status);

#endif
