/* peridot run's ParaView collection: DIR/frames.pvd lists every frame_<N>.vtu written so far
 * with its simulated time, rewritten (atomically) after each one, so that a run that fails or
 * is stopped leaves a collection of the frames it wrote. */
#ifndef PD_CLI_FRAMES_PVD_H
#define PD_CLI_FRAMES_PVD_H

#include "common.h"

#define PD_CLI_PVD_NAME "frames.pvd"

typedef struct pd_cli_pvd {
    char path[PD_PATH_MAX + 32];
    pd_pvd_entry* entries;
    char (*files)[32]; /* entries[i].file points at files[i] */
    size_t count, cap;
} pd_cli_pvd;

/* A fresh run's empty list: nothing is written until the first frame. */
void pd_cli_pvd_start(pd_cli_pvd* c, const char* dir);
/* A resumed run's list: the frame_<N>.vtu of dir up to `frame` (those after it are gone), each
 * at the time of its row in stats.csv, written at once. 0, or 1 after the message. */
int pd_cli_pvd_resume(pd_cli_pvd* c, const char* dir, int frame);
/* Adds frame_<frame>.vtu at `time` (s) and rewrites the collection. */
pd_status pd_cli_pvd_add(pd_cli_pvd* c, int frame, double time, pd_error* err);
void pd_cli_pvd_free(pd_cli_pvd* c);

#endif
