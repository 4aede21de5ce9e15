/* The output folder's lock (folder_lock.h). flock rather than O_EXCL: the kernel releases it
 * when the holder dies, even by SIGKILL, so no run is ever kept out by a crash. */
#define _DEFAULT_SOURCE /* flock */
#include "folder_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

/* The pid written in an open lock file, or 0. */
static long read_pid(int fd) {
    char text[32] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    return strtol(text, NULL, 10);
}

/* Whether fd is still the file at path: a holder that released the lock may have removed the
 * file between our open and our flock, and a lock on a removed file keeps nobody out. */
static int still_linked(int fd, const char* path) {
    struct stat held, named;
    return fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_dev == named.st_dev &&
           held.st_ino == named.st_ino;
}

static pd_status write_pid(pd_folder_lock* lock, pd_error* err) {
    char text[32];
    int len = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(lock->fd, 0) != 0 || pwrite(lock->fd, text, (size_t)len, 0) != len) {
        int e = errno;
        pd_folder_lock_release(lock);
        return pd_cli_fail(err, PD_ERR_IO, "cannot write the lock file %s: %s", lock->path,
                           strerror(e));
    }
    return PD_OK;
}

pd_status pd_folder_lock_take(pd_folder_lock* lock, const char* dir, long* stale_pid,
                              pd_error* err) {
    *stale_pid = 0;
    lock->fd = -1;
    snprintf(lock->path, sizeof lock->path, "%s/%s", dir, PD_FOLDER_LOCK_NAME);
    for (int attempt = 0; attempt < 100; ++attempt) {
        int fd = open(lock->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return pd_cli_fail(err, PD_ERR_IO, "cannot create the lock file %s: %s", lock->path,
                               strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            long holder = read_pid(fd);
            close(fd);
            if (e != EWOULDBLOCK)
                return pd_cli_fail(err, PD_ERR_IO, "cannot lock %s: %s", lock->path, strerror(e));
            return pd_cli_fail(
                err, PD_ERR_BUSY,
                "'%s' is in use by another peridot run (pid %ld, lock file %s); wait "
                "for it to end or choose another folder (-o DIR)",
                dir, holder, lock->path);
        }
        if (!still_linked(fd, lock->path)) { /* removed by its last holder: try the new one */
            close(fd);
            continue;
        }
        lock->fd = fd;
        *stale_pid = read_pid(fd);
        return write_pid(lock, err);
    }
    return pd_cli_fail(err, PD_ERR_BUSY, "'%s': the lock file %s keeps changing", dir, lock->path);
}

long pd_folder_lock_holder(const char* dir) {
    char path[PD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, PD_FOLDER_LOCK_NAME);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    long holder = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0)
        holder = errno == EWOULDBLOCK ? read_pid(fd) : 0;
    close(fd); /* drops the shared lock, if taken */
    return holder < 0 ? 0 : holder;
}

void pd_folder_lock_release(pd_folder_lock* lock) {
    if (lock->fd < 0)
        return;
    unlink(lock->path); /* before unlocking: a waiter then sees the file gone and retries */
    close(lock->fd);
    lock->fd = -1;
}
