/* An output folder held by one run at a time: an advisory lock (flock) on "<dir>/.peridot.lock",
 * a file that names the holder's pid. The kernel drops the lock when its holder dies however it
 * dies, so a lock file whose lock is free was left by a run that did not end normally and is
 * taken over. */
#ifndef PD_FOLDER_LOCK_H
#define PD_FOLDER_LOCK_H

#include "peridot/types.h"

#define PD_FOLDER_LOCK_NAME ".peridot.lock"

typedef struct pd_folder_lock {
    int fd; /* -1 when not held */
    char path[PD_PATH_MAX + 32];
} pd_folder_lock;

/* Takes dir's lock (dir must exist). PD_OK, with *stale_pid the pid a dead run left in the lock
 * file (0 when there was none); PD_ERR_BUSY when another live process holds it (its pid in the
 * message); PD_ERR_IO when the lock file cannot be made. */
pd_status pd_folder_lock_take(pd_folder_lock* lock, const char* dir, long* stale_pid,
                              pd_error* err);
/* The pid of the live run holding dir's lock, or 0 when none does (nothing is created): lets a
 * run refuse a held folder before it spends time building its world. */
long pd_folder_lock_holder(const char* dir);
/* Removes the lock file and drops the lock; harmless when not held. */
void pd_folder_lock_release(pd_folder_lock* lock);

#endif
