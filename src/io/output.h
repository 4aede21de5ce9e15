/* Frame writers (binary little-endian PLY, legacy VTK) and a PLY reader for `render` and
 * tests. Every writer writes to "<path>.tmp" and renames, so a reader never sees half a
 * file. */
#ifndef PD_OUTPUT_H
#define PD_OUTPUT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "peridot/io.h"
#include "peridot/types.h"

typedef enum pd_field_type {
    PD_FIELD_REAL,  /* pd_real source, written as float */
    PD_FIELD_INT32, /* int32_t source, written as int */
} pd_field_type;

/* A per-particle attribute of `components` values per particle, stored interleaved
 * (data[i * components + c]); names[c] is the PLY property name of component c. */
typedef struct pd_field {
    const char* names[6];
    int components;
    pd_field_type type;
    const void* data;
} pd_field;

/* Writes n points atomically; row k is particle order[k] (so that a world that reorders its
 * particles still writes them in a stable order), or particle k when order is NULL. */
pd_status pd_write_ply(const char* path, size_t n, const pd_vec3* pos, const pd_field* fields,
                       int field_count, const uint32_t* order, pd_error* err);
pd_status pd_write_vtk(const char* path, size_t n, const pd_vec3* pos, const pd_field* fields,
                       int field_count, const uint32_t* order, pd_error* err);

/* A file written under "<path>.tmp" and renamed onto path by pd_atomic_commit, so that a
 * reader sees either the old file or the whole new one. Used by every writer here and by
 * png.c. */
typedef struct pd_atomic_file {
    FILE* f;
    const char* path;
    char tmp[PD_PATH_MAX + 8];
} pd_atomic_file;

pd_status pd_atomic_open(pd_atomic_file* af, const char* path, pd_error* err);
/* Closes, checks every write succeeded, renames; on any failure removes the temp file. */
pd_status pd_atomic_commit(pd_atomic_file* af, pd_error* err);
/* Closes and removes the temp file (after a failure while writing). */
void pd_atomic_abort(pd_atomic_file* af);

/* pd_read_ply, pd_write_text_atomic and pd_record_file are public: peridot/io.h. */

#endif
