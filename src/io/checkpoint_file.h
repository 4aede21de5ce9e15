/* A checkpoint file: a header (magic, format version) and then named records, each a name, a
 * byte count and the bytes, read back in the order written with every name and size checked.
 * Written through "<path>.tmp" and renamed, so a checkpoint is whole or absent. Records hold the
 * machine's own byte order: a checkpoint resumes on the machine kind that wrote it. */
#ifndef PD_CHECKPOINT_FILE_H
#define PD_CHECKPOINT_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "io/output.h"

/* The format's version; a reader refuses another. 2: projective_pd keeps its bonds' kb in single
 * precision (a format 1 file's records have other sizes). 3: and none where no material flows
 * or changes (a format 2 file holds a record more). */
#define PD_CHECKPOINT_FORMAT 3

typedef struct pd_ckpt_writer {
    pd_atomic_file af;
    int failed;
} pd_ckpt_writer;

pd_status pd_ckpt_create(pd_ckpt_writer* w, const char* path, pd_error* err);
/* Appends a record (a write error shows at the commit). */
void pd_ckpt_put(pd_ckpt_writer* w, const char* name, const void* data, size_t bytes);
pd_status pd_ckpt_commit(pd_ckpt_writer* w, pd_error* err);

typedef struct pd_ckpt_reader {
    FILE* f;
    char path[PD_PATH_MAX];
} pd_ckpt_reader;

/* Opens and checks the header: PD_ERR_BAD_SCENE when it is not a checkpoint of this format. */
pd_status pd_ckpt_open(pd_ckpt_reader* r, const char* path, pd_error* err);
/* The next record's byte count; it must be named `name`. */
pd_status pd_ckpt_next(pd_ckpt_reader* r, const char* name, size_t* bytes, pd_error* err);
/* Its bytes (`bytes` from pd_ckpt_next). */
pd_status pd_ckpt_read(pd_ckpt_reader* r, void* data, size_t bytes, pd_error* err);
/* pd_ckpt_next and pd_ckpt_read of a record that must hold exactly `bytes`. */
pd_status pd_ckpt_get(pd_ckpt_reader* r, const char* name, void* data, size_t bytes, pd_error* err);
void pd_ckpt_close(pd_ckpt_reader* r);

#endif
