/* Files a run writes and tools read: frames read back, text written atomically, ParaView's
 * collection of frames (.pvd), a file grown by whole records (stats.csv), PNG pictures. Frames are
 * written through the world (pd_world_write_frame, peridot/world.h). */
#ifndef PERIDOT_IO_H
#define PERIDOT_IO_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Writes `text` to path atomically (temp + rename). */
pd_status pd_write_text_atomic(const char* path, const char* text, size_t len, pd_error* err);

/* One dataset of a ParaView collection (.pvd): its file, relative to the .pvd, and its time. */
typedef struct pd_pvd_entry {
    double time; /* s */
    const char* file;
} pd_pvd_entry;
/* Writes the collection that lists entries as a time series, atomically (temp + rename), so a
 * reader sees the previous list or the new one whole; times written as stats.csv's (%.9g). */
pd_status pd_write_pvd(const char* path, const pd_pvd_entry* entries, size_t count, pd_error* err);

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

/* An 8-bit RGB PNG (rgb holds width * height * 3 bytes, rows top to bottom), written atomically
 * (temp + rename). */
pd_status pd_write_png(const char* path, int width, int height, const uint8_t* rgb, pd_error* err);

#ifdef __cplusplus
}
#endif

#endif
