/* Frame files: the binary little-endian PLY writer of the scene contract (SCENE.md, "Output"),
 * a legacy VTK 3.0 binary POLYDATA writer for ParaView, and a PLY reader (binary little/big
 * endian and ascii) for `peridot render` and the tests. Writers go through "<path>.tmp" and
 * rename(), which is atomic on POSIX, so a reader never sees half a file. Byte orders are
 * packed explicitly, so the files are the same on any host. */
#define _POSIX_C_SOURCE 200809L /* fileno, fstat */
#include "io/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
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

static pd_status check_fields(size_t n, const pd_vec3* pos, const pd_field* fields, int field_count,
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
    pd_status s = check_fields(n, pos, fields, field_count, path, err);
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

/* Writes n*count big-endian 32-bit values; value(j) gives value j. */
typedef uint32_t pd_value_fn(const void* ctx, size_t j);

static void write_be_values(FILE* f, size_t total, pd_value_fn* value, const void* ctx) {
    unsigned char buf[PD_IO_CHUNK_BYTES];
    size_t used = 0;
    for (size_t j = 0; j < total; ++j) {
        if (used + 4 > sizeof buf) {
            fwrite(buf, 1, used, f);
            used = 0;
        }
        put_be32(buf + used, value(ctx, j));
        used += 4;
    }
    fwrite(buf, 1, used, f);
}

/* Row k of the output is particle order[k] (k itself without an order). */
static size_t row(const uint32_t* order, size_t k) {
    return order ? order[k] : k;
}

typedef struct pd_points_ref {
    const pd_vec3* pos;
    const uint32_t* order;
} pd_points_ref;

static uint32_t point_coord(const void* ctx, size_t j) {
    const pd_points_ref* r = ctx;
    return float_bits((float)pd_v3_comp(r->pos[row(r->order, j / 3)], (int)(j % 3)));
}

/* VERTICES cells: "1 i" for each point i. */
static uint32_t vertex_cell(const void* ctx, size_t j) {
    (void)ctx;
    return (j % 2 == 0) ? 1u : (uint32_t)(j / 2);
}

typedef struct pd_component_ref {
    const pd_field* field;
    int first, count; /* components [first, first + count) */
    const uint32_t* order;
} pd_component_ref;

static uint32_t field_value(const void* ctx, size_t j) {
    const pd_component_ref* r = ctx;
    return field_bits(r->field, row(r->order, j / (size_t)r->count),
                      r->first + (int)(j % (size_t)r->count));
}

/* The VTK array name of a vector field: the common prefix of its component names without a
 * trailing '_' ("n_x n_y n_z" -> "n"), where the contract's "vx vy vz" reads as "velocity". */
static void vector_name(const pd_field* f, int index, char* out, size_t cap) {
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
        vector_name(field, index, name, sizeof name);
        fprintf(f, "VECTORS %s %s\n", name, type);
        pd_component_ref r = {field, 0, 3, order};
        write_be_values(f, n * 3, field_value, &r);
        fprintf(f, "\n");
        return;
    }
    /* Other widths (1, or the 6 of a symmetric stress) become one scalar array each. */
    for (int c = 0; c < field->components; ++c) {
        fprintf(f, "SCALARS %s %s 1\nLOOKUP_TABLE default\n", field->names[c], type);
        pd_component_ref r = {field, c, 1, order};
        write_be_values(f, n, field_value, &r);
        fprintf(f, "\n");
    }
}

pd_status pd_write_vtk(const char* path, size_t n, const pd_vec3* pos, const pd_field* fields,
                       int field_count, const uint32_t* order, pd_error* err) {
    pd_status s = check_fields(n, pos, fields, field_count, path, err);
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
    write_be_values(f, n * 3, point_coord, &points);
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

typedef enum pd_ply_format { PLY_ASCII, PLY_LE, PLY_BE } pd_ply_format;
typedef enum pd_ply_type { T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_F32, T_F64 } pd_ply_type;

typedef struct pd_ply_header {
    pd_ply_format format;
    int has_vertex;
    size_t count;
    int prop_count;
    char names[PD_PLY_MAX_PROPS][32];
    pd_ply_type types[PD_PLY_MAX_PROPS];
    size_t row_bytes;
    /* Elements declared before `vertex`, which must be skipped to reach it. */
    size_t skip_bytes, skip_rows;
    size_t elem_count; /* rows of the element being declared */
    int in_vertex, skip_has_list;
} pd_ply_header;

/* Splits off the next blank-separated token of *s (NULL when none); *s moves past it. A local
 * tokenizer, because strtok keeps global state. */
static char* next_token(char** s) {
    char* p = *s + strspn(*s, " \t");
    if (!*p) {
        *s = p;
        return NULL;
    }
    char* end = p + strcspn(p, " \t");
    *s = *end ? end + 1 : end;
    *end = '\0';
    return p;
}

static int parse_type(const char* s, pd_ply_type* t) {
    static const struct {
        const char* a;
        const char* b;
        pd_ply_type t;
    } k_types[] = {{"char", "int8", T_I8},      {"uchar", "uint8", T_U8},
                   {"short", "int16", T_I16},   {"ushort", "uint16", T_U16},
                   {"int", "int32", T_I32},     {"uint", "uint32", T_U32},
                   {"float", "float32", T_F32}, {"double", "float64", T_F64}};
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; ++i)
        if (strcmp(s, k_types[i].a) == 0 || strcmp(s, k_types[i].b) == 0) {
            *t = k_types[i].t;
            return 1;
        }
    return 0;
}

static size_t type_size(pd_ply_type t) {
    static const size_t k_sizes[] = {1, 1, 2, 2, 4, 4, 4, 8};
    return k_sizes[t];
}

/* One "property ..." line of the header. Returns NULL or what is wrong. */
static const char* parse_property(pd_ply_header* h, char* rest) {
    char* tok = next_token(&rest);
    if (!tok)
        return "property without a type";
    if (strcmp(tok, "list") == 0) {
        if (h->in_vertex)
            return "list property in element vertex is not supported";
        h->skip_has_list = 1;
        return NULL;
    }
    pd_ply_type t;
    if (!parse_type(tok, &t))
        return "unknown property type";
    char* name = next_token(&rest);
    if (!name)
        return "property without a name";
    if (!h->in_vertex) {
        if (!h->has_vertex)
            h->skip_bytes += h->elem_count * type_size(t);
        return NULL;
    }
    if (h->prop_count >= PD_PLY_MAX_PROPS)
        return "too many vertex properties";
    if (strlen(name) >= sizeof h->names[0])
        return "property name too long";
    strcpy(h->names[h->prop_count], name);
    h->types[h->prop_count++] = t;
    h->row_bytes += type_size(t);
    return NULL;
}

/* One "element NAME COUNT" line. */
static const char* parse_element(pd_ply_header* h, char* rest) {
    char* name = next_token(&rest);
    char* count = next_token(&rest);
    if (!name || !count)
        return "bad element line";
    char* end;
    errno = 0;
    unsigned long long c = strtoull(count, &end, 10);
    if (errno || *end || count[0] == '-')
        return "bad element count";
    if (h->in_vertex)
        h->has_vertex = 1; /* the vertex element is complete; later elements are ignored */
    h->in_vertex = strcmp(name, "vertex") == 0 && !h->has_vertex;
    h->elem_count = (size_t)c;
    if (h->in_vertex)
        h->count = (size_t)c;
    else if (!h->has_vertex)
        h->skip_rows += (size_t)c;
    return NULL;
}

static const char* parse_header_line(pd_ply_header* h, char* line, int* done) {
    char* rest = line;
    char* key = next_token(&rest);
    if (!key || strcmp(key, "comment") == 0 || strcmp(key, "obj_info") == 0)
        return NULL;
    if (strcmp(key, "end_header") == 0) {
        *done = 1;
        return NULL;
    }
    if (strcmp(key, "format") == 0) {
        char* fmt = next_token(&rest);
        if (fmt && strcmp(fmt, "ascii") == 0)
            h->format = PLY_ASCII;
        else if (fmt && strcmp(fmt, "binary_little_endian") == 0)
            h->format = PLY_LE;
        else if (fmt && strcmp(fmt, "binary_big_endian") == 0)
            h->format = PLY_BE;
        else
            return "unknown format";
        return NULL;
    }
    if (strcmp(key, "element") == 0)
        return parse_element(h, rest);
    if (strcmp(key, "property") == 0)
        return parse_property(h, rest);
    return "unknown header line";
}

static const char* read_header(FILE* f, pd_ply_header* h) {
    char line[512];
    memset(h, 0, sizeof *h);
    h->format = PLY_ASCII;
    if (!fgets(line, sizeof line, f) || strncmp(line, "ply", 3) != 0 ||
        strspn(line + 3, "\r\n") != strlen(line + 3))
        return "not a PLY file";
    for (int done = 0; !done;) {
        if (!fgets(line, sizeof line, f))
            return "header ends before end_header";
        if (!strchr(line, '\n') && !feof(f))
            return "header line too long";
        line[strcspn(line, "\r\n")] = '\0';
        const char* bad = parse_header_line(h, line, &done);
        if (bad)
            return bad;
    }
    if (h->in_vertex)
        h->has_vertex = 1;
    if (!h->has_vertex)
        return "no element vertex";
    if (h->format != PLY_ASCII && h->skip_has_list && h->skip_rows > 0)
        return "list elements before element vertex are not supported";
    return NULL;
}

static double decode_binary(const unsigned char* p, pd_ply_type t, int big_endian) {
    unsigned char b[8];
    size_t size = type_size(t);
    for (size_t i = 0; i < size; ++i)
        b[i] = big_endian ? p[size - 1 - i] : p[i];
    uint64_t u = 0;
    for (size_t i = 0; i < size; ++i)
        u |= (uint64_t)b[i] << (8 * i);
    switch (t) {
        case T_I8:
            return (double)(int8_t)u;
        case T_U8:
            return (double)(uint8_t)u;
        case T_I16:
            return (double)(int16_t)u;
        case T_U16:
            return (double)(uint16_t)u;
        case T_I32:
            return (double)(int32_t)u;
        case T_U32:
            return (double)(uint32_t)u;
        case T_F32: {
            uint32_t w = (uint32_t)u;
            float v;
            memcpy(&v, &w, sizeof v);
            return v;
        }
        case T_F64: {
            double v;
            memcpy(&v, &u, sizeof v);
            return v;
        }
    }
    return 0;
}

static const char* read_binary_rows(FILE* f, const pd_ply_header* h, pd_ply_data* out) {
    if (h->skip_bytes > 0 && fseek(f, (long)h->skip_bytes, SEEK_CUR) != 0)
        return "truncated before element vertex";
    /* Refuse a count the file cannot hold before allocating for it. */
    long here = ftell(f);
    if (here < 0 || fseek(f, 0, SEEK_END) != 0)
        return "cannot seek";
    long end = ftell(f);
    if (end < here || fseek(f, here, SEEK_SET) != 0)
        return "cannot seek";
    if (h->row_bytes > 0 && h->count > (size_t)(end - here) / h->row_bytes)
        return "truncated: fewer vertices than the header declares";
    unsigned char buf[PD_IO_CHUNK_BYTES];
    size_t rows_per_chunk = sizeof buf / h->row_bytes;
    for (size_t i = 0; i < h->count;) {
        size_t rows = h->count - i < rows_per_chunk ? h->count - i : rows_per_chunk;
        if (fread(buf, h->row_bytes, rows, f) != rows)
            return "truncated: fewer vertices than the header declares";
        for (size_t r = 0; r < rows; ++r, ++i) {
            const unsigned char* p = buf + r * h->row_bytes;
            for (int k = 0; k < h->prop_count; ++k) {
                out->columns[k][i] = (float)decode_binary(p, h->types[k], h->format == PLY_BE);
                p += type_size(h->types[k]);
            }
        }
    }
    return NULL;
}

static const char* read_ascii_rows(FILE* f, const pd_ply_header* h, pd_ply_data* out) {
    for (size_t r = 0; r < h->skip_rows; ++r) {
        int c;
        while ((c = fgetc(f)) != '\n')
            if (c == EOF)
                return "truncated before element vertex";
    }
    for (size_t i = 0; i < h->count; ++i)
        for (int k = 0; k < h->prop_count; ++k) {
            double v;
            if (fscanf(f, "%lf", &v) != 1)
                return "bad or missing ascii vertex value";
            out->columns[k][i] = (float)v;
        }
    return NULL;
}

static int has_column(const pd_ply_header* h, const char* name) {
    for (int k = 0; k < h->prop_count; ++k)
        if (strcmp(h->names[k], name) == 0)
            return 1;
    return 0;
}

/* The rows the header declares fit in the bytes after it (size of the file): a binary row takes
 * row_bytes, an ascii one at least two characters per value. Checked before anything is
 * allocated for them, so that a short file cannot ask for gigabytes. */
static int rows_fit(const pd_ply_header* h, long header_end, off_t file_size) {
    if (header_end < 0 || file_size < header_end)
        return 0;
    double left = (double)(file_size - header_end);
    double row = h->format == PLY_ASCII ? 2.0 * h->prop_count : (double)h->row_bytes;
    double before = h->format == PLY_ASCII ? 2.0 * (double)h->skip_rows : (double)h->skip_bytes;
    return row > 0 && (double)h->count * row + before <= left;
}

pd_status pd_read_ply(const char* path, pd_ply_data* out, pd_error* err) {
    memset(out, 0, sizeof *out);
    struct stat named;
    if (stat(path, &named) == 0 && !S_ISREG(named.st_mode)) /* not opened: a FIFO would block */
        return format_fail(err, path, "not a regular file");
    FILE* f = fopen(path, "rb");
    if (!f)
        return io_fail(err, path, "open", errno);
    pd_ply_header h;
    struct stat info;
    const char* bad = fstat(fileno(f), &info) != 0 || !S_ISREG(info.st_mode) ? "not a regular file"
                                                                             : read_header(f, &h);
    if (!bad && !(has_column(&h, "x") && has_column(&h, "y") && has_column(&h, "z")))
        bad = "vertex has no x, y, z properties";
    if (!bad && !rows_fit(&h, ftell(f), info.st_size))
        bad = "truncated: the header declares more vertices than the file's size can hold";
    if (bad) {
        fclose(f);
        return format_fail(err, path, bad);
    }
    out->count = h.count;
    out->prop_count = h.prop_count;
    for (int k = 0; k < h.prop_count; ++k) {
        strcpy(out->names[k], h.names[k]);
        if (h.count > 0 && !(out->columns[k] = pd_alloc(h.count * sizeof(float)))) {
            fclose(f);
            pd_ply_free(out);
            return pd_fail(err, PD_ERR_OUT_OF_MEMORY, path, "%s: no memory for %zu vertices", path,
                           h.count);
        }
    }
    bad = h.format == PLY_ASCII ? read_ascii_rows(f, &h, out) : read_binary_rows(f, &h, out);
    fclose(f);
    if (bad) {
        pd_ply_free(out);
        return format_fail(err, path, bad);
    }
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
