/* Frame files: the binary little-endian PLY writer of the scene contract (SCENE.md, "Output"),
 * a legacy VTK 3.0 binary POLYDATA writer for ParaView, and a frame reader (the vertex element
 * of a PLY file as io/ply.h reads it) for `peridot render` and the tests. Writers go through
 * "<path>.tmp" and rename(), which is atomic on POSIX, so a reader never sees half a file. Byte
 * orders are packed explicitly, so the files are the same on any host. */
#define _POSIX_C_SOURCE 200809L /* ftruncate */
#include "io/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/ply.h"
#include "peridot/peridot.h"

/* Values packed per fwrite; small enough for the stack, large enough to amortise stdio. */
#define PD_IO_CHUNK_BYTES 32768

/* Names the file in err (cut to fit: a too-long path was refused before anything opened). */
static void set_error_file(pd_error* err, const char* path) {
    if (err)
        snprintf(err->file, sizeof err->file, "%.*s", (int)sizeof err->file - 1, path);
}

/* The file goes in err->file and not again in the message: a printed error names it once. */
static pd_status io_fail(pd_error* err, const char* path, const char* what, int errnum) {
    pd_status s = pd_fail(err, PD_ERR_IO, "", "cannot %s: %s", what, strerror(errnum));
    set_error_file(err, path);
    return s;
}

static pd_status format_fail(pd_error* err, const char* path, const char* what) {
    pd_status s = pd_fail(err, PD_ERR_IO, "", "%s", what);
    set_error_file(err, path);
    return s;
}

/* ---- atomic files ---- */

pd_status pd_atomic_open(pd_atomic_file* af, const char* path, pd_error* err) {
    af->f = NULL;
    af->path = path;
    int len = snprintf(af->tmp, sizeof af->tmp, "%s.tmp", path);
    if (len < 0 || (size_t)len >= sizeof af->tmp)
        return pd_fail(err, PD_ERR_IO, path, "path too long: %s", path);
    af->f = fopen(af->tmp, "wb");
    if (!af->f)
        return io_fail(err, af->tmp, "create", errno);
    return PD_OK;
}

void pd_atomic_abort(pd_atomic_file* af) {
    if (af->f)
        fclose(af->f);
    af->f = NULL;
    remove(af->tmp);
}

pd_status pd_atomic_commit(pd_atomic_file* af, pd_error* err) {
    int failed_write = ferror(af->f);
    int write_errno = errno;
    int failed_close = fclose(af->f) != 0;
    af->f = NULL;
    if (failed_write || failed_close) {
        int e = failed_write ? write_errno : errno;
        remove(af->tmp);
        return io_fail(err, af->path, "write", e ? e : EIO);
    }
    if (rename(af->tmp, af->path) != 0) {
        int e = errno;
        remove(af->tmp);
        return io_fail(err, af->path, "rename its temporary file onto it", e);
    }
    return PD_OK;
}

pd_status pd_write_text_atomic(const char* path, const char* text, size_t len, pd_error* err) {
    pd_atomic_file af;
    pd_status s = pd_atomic_open(&af, path, err);
    if (s != PD_OK)
        return s;
    if (len > 0 && fwrite(text, 1, len, af.f) != len) {
        int e = errno;
        pd_atomic_abort(&af);
        return io_fail(err, path, "write", e);
    }
    return pd_atomic_commit(&af, err);
}

/* ---- record files ---- */

pd_status pd_record_open(pd_record_file* rf, const char* path, pd_error* err) {
    rf->size = 0;
    snprintf(rf->path, sizeof rf->path, "%s", path);
    rf->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return rf->fd < 0 ? io_fail(err, path, "create", errno) : PD_OK;
}

pd_status pd_record_reopen(pd_record_file* rf, const char* path, long long keep, pd_error* err) {
    rf->size = keep;
    snprintf(rf->path, sizeof rf->path, "%s", path);
    rf->fd = open(path, O_WRONLY | O_CLOEXEC);
    if (rf->fd < 0)
        return io_fail(err, path, "open", errno);
    if (ftruncate(rf->fd, (off_t)keep) != 0 || lseek(rf->fd, 0, SEEK_END) < 0) {
        int e = errno;
        close(rf->fd);
        rf->fd = -1;
        return io_fail(err, path, "write", e);
    }
    return PD_OK;
}

pd_status pd_record_append(pd_record_file* rf, const char* text, size_t len, pd_error* err) {
    for (size_t done = 0; done < len;) {
        ssize_t n = write(rf->fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            /* cut the torn record: the file ends after the last whole one */
            if (ftruncate(rf->fd, (off_t)rf->size) != 0 || lseek(rf->fd, 0, SEEK_END) < 0)
                e = errno;
            return io_fail(err, rf->path, "write", e);
        }
        done += (size_t)n;
    }
    rf->size += (long long)len;
    return PD_OK;
}

pd_status pd_record_close(pd_record_file* rf, pd_error* err) {
    if (rf->fd < 0)
        return PD_OK;
    int failed = close(rf->fd) != 0;
    rf->fd = -1;
    return failed ? io_fail(err, rf->path, "write", errno) : PD_OK;
}

/* ---- byte packing ---- */

static uint32_t float_bits(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static void put_le32(unsigned char* p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static void put_be32(unsigned char* p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Component c of particle i of a field, as the 32 bits the file stores (float or int). */
static uint32_t field_bits(const pd_field* f, size_t i, int c) {
    size_t k = i * (size_t)f->components + (size_t)c;
    if (f->type == PD_FIELD_INT32)
        return (uint32_t)((const int32_t*)f->data)[k];
    return float_bits((float)((const pd_real*)f->data)[k]);
}

pd_status pd_check_fields(size_t n, const pd_vec3* pos, const pd_field* fields, int field_count,
                          const char* path, pd_error* err) {
    if (!path || (n > 0 && !pos) || field_count < 0 || (field_count > 0 && !fields))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "missing positions, fields or path");
    int props = 3;
    for (int k = 0; k < field_count; ++k) {
        const pd_field* f = &fields[k];
        if (f->components < 1 || f->components > 6 || (n > 0 && !f->data))
            return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "field %d: bad components or data",
                           k);
        for (int c = 0; c < f->components; ++c)
            if (!f->names[c] || !f->names[c][0] || strlen(f->names[c]) >= 32)
                return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path,
                               "field %d component %d: missing or too long name", k, c);
        props += f->components;
    }
    if (props > PD_PLY_MAX_PROPS)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "%d properties; at most %d", props,
                       PD_PLY_MAX_PROPS);
    return PD_OK;
}

/* ---- PLY writer ---- */

static void write_ply_header(FILE* f, size_t n, const pd_field* fields, int field_count) {
    fprintf(f, "ply\nformat binary_little_endian 1.0\ncomment written by peridot %s\n",
            pd_version());
    fprintf(f, "element vertex %zu\nproperty float x\nproperty float y\nproperty float z\n", n);
    for (int k = 0; k < field_count; ++k)
        for (int c = 0; c < fields[k].components; ++c)
            fprintf(f, "property %s %s\n", fields[k].type == PD_FIELD_INT32 ? "int" : "float",
                    fields[k].names[c]);
    fprintf(f, "end_header\n");
}

/* Packs particle i as one little-endian PLY row; returns the bytes written. */
static size_t pack_ply_row(unsigned char* p, size_t i, const pd_vec3* pos, const pd_field* fields,
                           int field_count) {
    size_t off = 0;
    put_le32(p + off, float_bits((float)pos[i].x)), off += 4;
    put_le32(p + off, float_bits((float)pos[i].y)), off += 4;
    put_le32(p + off, float_bits((float)pos[i].z)), off += 4;
    for (int k = 0; k < field_count; ++k)
        for (int c = 0; c < fields[k].components; ++c)
            put_le32(p + off, field_bits(&fields[k], i, c)), off += 4;
    return off;
}

pd_status pd_write_ply(const char* path, size_t n, const pd_vec3* pos, const pd_field* fields,
                       int field_count, const uint32_t* order, pd_error* err) {
    pd_status s = pd_check_fields(n, pos, fields, field_count, path, err);
    if (s != PD_OK)
        return s;
    pd_atomic_file af;
    if ((s = pd_atomic_open(&af, path, err)) != PD_OK)
        return s;
    write_ply_header(af.f, n, fields, field_count);
    unsigned char buf[PD_IO_CHUNK_BYTES];
    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
        if (used + 4 * PD_PLY_MAX_PROPS > sizeof buf) {
            fwrite(buf, 1, used, af.f);
            used = 0;
        }
        used += pack_ply_row(buf + used, order ? order[i] : i, pos, fields, field_count);
    }
    fwrite(buf, 1, used, af.f);
    return pd_atomic_commit(&af, err);
}

/* ---- VTK writer ---- */

void pd_write_values32(FILE* f, size_t total, pd_value_fn* value, const void* ctx, int big_endian) {
    unsigned char buf[PD_IO_CHUNK_BYTES];
    size_t used = 0;
    for (size_t j = 0; j < total; ++j) {
        if (used + 4 > sizeof buf) {
            fwrite(buf, 1, used, f);
            used = 0;
        }
        (big_endian ? put_be32 : put_le32)(buf + used, value(ctx, j));
        used += 4;
    }
    fwrite(buf, 1, used, f);
}

static void write_be_values(FILE* f, size_t total, pd_value_fn* value, const void* ctx) {
    pd_write_values32(f, total, value, ctx, 1);
}

/* Row k of the output is particle order[k] (k itself without an order). */
static size_t row(const uint32_t* order, size_t k) {
    return order ? order[k] : k;
}

uint32_t pd_point_coord(const void* ctx, size_t j) {
    const pd_points_ref* r = ctx;
    return float_bits((float)pd_v3_comp(r->pos[row(r->order, j / 3)], (int)(j % 3)));
}

/* VERTICES cells: "1 i" for each point i. */
static uint32_t vertex_cell(const void* ctx, size_t j) {
    (void)ctx;
    return (j % 2 == 0) ? 1u : (uint32_t)(j / 2);
}

uint32_t pd_field_value(const void* ctx, size_t j) {
    const pd_component_ref* r = ctx;
    return field_bits(r->field, row(r->order, j / (size_t)r->count),
                      r->first + (int)(j % (size_t)r->count));
}

void pd_field_array_name(const pd_field* f, int index, char* out, size_t cap) {
    if (f->components == 1) {
        snprintf(out, cap, "%s", f->names[0]);
        return;
    }
    size_t len = strlen(f->names[0]);
    for (int c = 1; c < f->components; ++c) {
        size_t m = 0;
        while (m < len && f->names[c][m] == f->names[0][m])
            ++m;
        len = m;
    }
    while (len > 0 && f->names[0][len - 1] == '_')
        --len;
    if (len == 1 && f->names[0][0] == 'v')
        snprintf(out, cap, "velocity");
    else if (len == 0 || len >= cap)
        snprintf(out, cap, "field%d", index);
    else
        snprintf(out, cap, "%.*s", (int)len, f->names[0]);
}

static void write_vtk_field(FILE* f, size_t n, const pd_field* field, int index,
                            const uint32_t* order) {
    const char* type = field->type == PD_FIELD_INT32 ? "int" : "float";
    if (field->components == 3) {
        char name[64];
        pd_field_array_name(field, index, name, sizeof name);
        fprintf(f, "VECTORS %s %s\n", name, type);
        pd_component_ref r = {field, 0, 3, order};
        write_be_values(f, n * 3, pd_field_value, &r);
        fprintf(f, "\n");
        return;
    }
    /* Other widths (1, or the 6 of a symmetric stress) become one scalar array each. */
    for (int c = 0; c < field->components; ++c) {
        fprintf(f, "SCALARS %s %s 1\nLOOKUP_TABLE default\n", field->names[c], type);
        pd_component_ref r = {field, c, 1, order};
        write_be_values(f, n, pd_field_value, &r);
        fprintf(f, "\n");
    }
}

pd_status pd_write_vtk(const char* path, size_t n, const pd_vec3* pos, const pd_field* fields,
                       int field_count, const uint32_t* order, pd_error* err) {
    pd_status s = pd_check_fields(n, pos, fields, field_count, path, err);
    if (s != PD_OK)
        return s;
    if (n > (size_t)INT32_MAX / 2)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "%zu points exceed VTK's int cells", n);
    pd_atomic_file af;
    if ((s = pd_atomic_open(&af, path, err)) != PD_OK)
        return s;
    FILE* f = af.f;
    fprintf(f, "# vtk DataFile Version 3.0\nperidot %s particles\nBINARY\nDATASET POLYDATA\n",
            pd_version());
    fprintf(f, "POINTS %zu float\n", n);
    pd_points_ref points = {pos, order};
    write_be_values(f, n * 3, pd_point_coord, &points);
    fprintf(f, "\nVERTICES %zu %zu\n", n, 2 * n);
    write_be_values(f, 2 * n, vertex_cell, NULL);
    fprintf(f, "\n");
    if (field_count > 0)
        fprintf(f, "POINT_DATA %zu\n", n);
    for (int k = 0; k < field_count; ++k)
        write_vtk_field(f, n, &fields[k], k, order);
    return pd_atomic_commit(&af, err);
}

/* ---- PLY reader ---- */

/* What keeps the vertex element from becoming columns, or NULL: every scalar property of it
 * becomes one (lists are skipped), and x, y, z must be among them. */
static const char* vertex_layout_fault(const pd_ply_file* p, const pd_ply_element* v) {
    if (!v)
        return "no element vertex";
    int scalars = 0;
    for (size_t k = 0; k < v->property_count; ++k) {
        const pd_ply_property* prop = pd_ply_property_at(p, v, k);
        if (prop->is_list)
            continue;
        if (strlen(prop->name) >= sizeof((pd_ply_data*)0)->names[0])
            return "property name too long";
        if (++scalars > PD_PLY_MAX_PROPS)
            return "too many vertex properties";
    }
    static const char* const k_xyz[] = {"x", "y", "z"};
    for (int c = 0; c < 3; ++c) {
        long k = pd_ply_property_index(p, v, k_xyz[c]);
        if (k < 0 || pd_ply_property_at(p, v, (size_t)k)->is_list)
            return "vertex has no x, y, z properties";
    }
    return NULL;
}

/* One float column per scalar property of v; the header's check that its rows fit in the file
 * bounds the count. */
static int allocate_columns(const pd_ply_file* p, const pd_ply_element* v, pd_ply_data* out) {
    out->count = v->count;
    for (size_t k = 0; k < v->property_count; ++k) {
        const pd_ply_property* prop = pd_ply_property_at(p, v, k);
        if (prop->is_list)
            continue;
        int c = out->prop_count++;
        snprintf(out->names[c], sizeof out->names[c], "%.31s", prop->name); /* checked: < 32 */
        if (v->count > 0 && !(out->columns[c] = pd_alloc(v->count * sizeof(float))))
            return 0;
    }
    return 1;
}

static int read_vertex_rows(pd_ply_file* p, const pd_ply_element* v, pd_ply_data* out) {
    for (size_t i = 0; i < v->count; ++i)
        for (size_t k = 0, c = 0; k < v->property_count; ++k) {
            const pd_ply_property* prop = pd_ply_property_at(p, v, k);
            double value;
            if (prop->is_list ? !pd_ply_skip_property(p, prop)
                              : !pd_ply_read_scalar(p, prop->type, &value))
                return 0;
            if (!prop->is_list)
                out->columns[c++][i] = (float)value;
        }
    return 1;
}

/* Skips the elements before v and reads v; the elements after it are left unread. */
static const char* read_frame_body(pd_ply_file* p, const pd_ply_element* v, pd_ply_data* out) {
    for (const pd_ply_element* e = p->elements; e < v; ++e)
        if (!pd_ply_skip_element(p, e))
            return p->why;
    return read_vertex_rows(p, v, out) ? NULL : p->why;
}

pd_status pd_read_ply(const char* path, pd_ply_data* out, pd_error* err) {
    memset(out, 0, sizeof *out);
    pd_ply_file p;
    pd_ply_fault fault = pd_ply_open(&p, path);
    if (fault == PD_PLY_CANNOT_OPEN)
        return io_fail(err, path, "open", p.errnum);
    if (fault == PD_PLY_NOT_PLY)
        return format_fail(err, path, "not a PLY file: its first line is not \"ply\"");
    if (fault != PD_PLY_FINE) {
        char what[sizeof p.why + 16];
        snprintf(what, sizeof what, "%s%s", fault == PD_PLY_TOO_SHORT ? "truncated: " : "", p.why);
        return format_fail(err, path, what);
    }
    const pd_ply_element* v = pd_ply_element_named(&p, "vertex");
    const char* bad = vertex_layout_fault(&p, v);
    if (!bad && !allocate_columns(&p, v, out)) {
        pd_ply_close(&p);
        size_t count = out->count;
        pd_ply_free(out);
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, path, "%s: no memory for %zu vertices", path,
                       count);
    }
    if (!bad)
        bad = read_frame_body(&p, v, out);
    if (bad) {
        pd_status s = format_fail(err, path, bad);
        pd_ply_close(&p);
        pd_ply_free(out);
        return s;
    }
    pd_ply_close(&p);
    return PD_OK;
}

const float* pd_ply_column(const pd_ply_data* ply, const char* name) {
    for (int k = 0; k < ply->prop_count; ++k)
        if (strcmp(ply->names[k], name) == 0)
            return ply->columns[k];
    return NULL;
}

void pd_ply_free(pd_ply_data* ply) {
    for (int k = 0; k < PD_PLY_MAX_PROPS; ++k)
        pd_free(ply->columns[k], ply->count * sizeof(float));
    memset(ply, 0, sizeof *ply);
}
