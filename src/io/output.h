/* Frame writers (binary little-endian PLY, legacy VTK) and a PLY reader for `render` and
 * tests. Every writer writes to "<path>.tmp" and renames, so a reader never sees half a
 * file. */
#ifndef PD_OUTPUT_H
#define PD_OUTPUT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

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

/* A PLY file read back: positions and every other vertex property as float columns. */
#define PD_PLY_MAX_PROPS 32
typedef struct pd_ply_data {
    size_t count;
    int prop_count; /* includes x, y, z */
    char names[PD_PLY_MAX_PROPS][32];
    float* columns[PD_PLY_MAX_PROPS]; /* count floats each (ints converted) */
} pd_ply_data;

pd_status pd_read_ply(const char* path, pd_ply_data* out, pd_error* err);
/* Column of property `name`, or NULL. */
const float* pd_ply_column(const pd_ply_data* ply, const char* name);
void pd_ply_free(pd_ply_data* ply);

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

/* Writes `text` to path atomically (temp + rename). */
pd_status pd_write_text_atomic(const char* path, const char* text, size_t len, pd_error* err);

/* A file grown by whole records (stats.csv's rows): an append writes its record entirely or
 * not at all (a failed write is cut back), so the file always ends after a whole record, and
 * every write and the close are checked, naming the file. */
typedef struct pd_record_file {
    int fd; /* -1 when closed */
    long long size;
    char path[PD_PATH_MAX + 32];
} pd_record_file;

/* Creates (truncates) path. */
pd_status pd_record_open(pd_record_file* rf, const char* path, pd_error* err);
/* Opens path to append after its first `keep` bytes (a resumed run's stats.csv). */
pd_status pd_record_reopen(pd_record_file* rf, const char* path, long long keep, pd_error* err);
pd_status pd_record_append(pd_record_file* rf, const char* text, size_t len, pd_error* err);
/* Closes, reporting a failure the file system deferred to the close; harmless when closed. */
pd_status pd_record_close(pd_record_file* rf, pd_error* err);

#endif
