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

/* VTK XML UnstructuredGrid (vtu.c): one vertex cell a particle, each field one point-data
 * array named array_names[k] (NULL: pd_field_array_name), raw appended binary with UInt64 block
 * headers, and `time` as the field data TimeValue. */
pd_status pd_write_vtu(const char* path, size_t n, const pd_vec3* pos, const pd_field* fields,
                       const char* const* array_names, int field_count, const uint32_t* order,
                       double time, pd_error* err);

/* ---- what the frame writers share (output.c) ---- */

/* Refuses missing data, a field of 0 or more than 6 components, a component name missing or of
 * 32 characters or more, and more than PD_PLY_MAX_PROPS values a particle. */
pd_status pd_check_fields(size_t n, const pd_vec3* pos, const pd_field* fields, int field_count,
                          const char* path, pd_error* err);
/* The array name of a field in VTK files: its one component's name, or the common prefix of its
 * component names without a trailing '_' ("n_x n_y n_z" -> "n"), where the contract's
 * "vx vy vz" reads as "velocity" ("field<index>" when there is none). */
void pd_field_array_name(const pd_field* f, int index, char* out, size_t cap);

/* Value j of a sequence, as the 32 bits a file stores. */
typedef uint32_t pd_value_fn(const void* ctx, size_t j);
/* Writes value(0) ... value(total - 1), each 4 bytes, little- or big-endian. */
void pd_write_values32(FILE* f, size_t total, pd_value_fn* value, const void* ctx, int big_endian);

/* Rows in order[k] (k itself without an order): coordinate j % 3 of row j / 3 as a float. */
typedef struct pd_points_ref {
    const pd_vec3* pos;
    const uint32_t* order;
} pd_points_ref;
uint32_t pd_point_coord(const void* points_ref, size_t j);

/* Components [first, first + count) of a field, row by row in order (count values a row). */
typedef struct pd_component_ref {
    const pd_field* field;
    int first, count;
    const uint32_t* order;
} pd_component_ref;
uint32_t pd_field_value(const void* component_ref, size_t j);

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
