/* Frames as ParaView reads them: a VTK XML UnstructuredGrid per frame and a .pvd collection that
 * lists them with their times (VTK's "VTK File Formats", XML section). ParaView's PLY reader keeps
 * the points only and its legacy reader shows integer arrays only on request (issue 35); here
 * every attribute is a named point-data array with its components, and each particle a vertex
 * cell, so that its filters (glyphs, thresholds, plots over time) see the particles. Values are
 * the PLY frame's: float32 positions and attributes, int32 labels, bit for bit. */
#include <string.h>

#include "core/error.h"
#include "io/output.h"
#include "peridot/peridot.h"

/* Every appended block starts with its byte count as a little-endian UInt64 (header_type). */
#define VTU_BLOCK_HEADER 8

/* VTK_VERTEX, the cell type of one point. */
#define VTU_VERTEX 1

/* The appended blocks in file order: each field's array, the points, then the cells'
 * connectivity (Int32 i), offsets (Int32 i + 1) and types (UInt8 VTU_VERTEX). */
typedef struct vtu_layout {
    int field_count;
    unsigned long long field_offset[PD_PLY_MAX_PROPS];
    unsigned long long points, connectivity, offsets, types, end;
} vtu_layout;

static unsigned long long block_bytes(size_t values, size_t value_bytes) {
    return VTU_BLOCK_HEADER + (unsigned long long)values * value_bytes;
}

static void plan_blocks(size_t n, const pd_field* fields, int field_count, vtu_layout* l) {
    unsigned long long at = 0;
    l->field_count = field_count;
    for (int k = 0; k < field_count; ++k) {
        l->field_offset[k] = at;
        at += block_bytes(n * (size_t)fields[k].components, 4);
    }
    l->points = at, at += block_bytes(3 * n, 4);
    l->connectivity = at, at += block_bytes(n, 4);
    l->offsets = at, at += block_bytes(n, 4);
    l->types = at, at += block_bytes(n, 1);
    l->end = at;
}

static void write_array_tag(FILE* f, const char* type, const char* name, int components,
                            unsigned long long offset) {
    fprintf(f, "        <DataArray type=\"%s\"", type);
    if (name)
        fprintf(f, " Name=\"%s\"", name);
    fprintf(f, " NumberOfComponents=\"%d\" format=\"appended\" offset=\"%llu\"", components,
            offset);
}

/* A field's array under its name, with ComponentName<c> for each of several components (ParaView
 * shows "velocity" with vx, vy, vz; a 6-component stress in VTK's symmetric-tensor order). */
static void write_field_tag(FILE* f, const pd_field* field, const char* name,
                            unsigned long long offset) {
    write_array_tag(f, field->type == PD_FIELD_INT32 ? "Int32" : "Float32", name, field->components,
                    offset);
    for (int c = 0; field->components > 1 && c < field->components; ++c)
        fprintf(f, " ComponentName%d=\"%s\"", c, field->names[c]);
    fprintf(f, "/>\n");
}

static void write_header(FILE* f, size_t n, const pd_field* fields, const char* const* array_names,
                         const vtu_layout* l, double time) {
    fprintf(f,
            "<?xml version=\"1.0\"?>\n<!-- written by peridot %s -->\n<VTKFile "
            "type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
            "header_type=\"UInt64\">\n  <UnstructuredGrid>\n    <FieldData>\n"
            "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" "
            "format=\"ascii\">%.17g</DataArray>\n    </FieldData>\n"
            "    <Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">\n      <PointData>\n",
            pd_version(), time, n, n);
    for (int k = 0; k < l->field_count; ++k) {
        char name[64];
        if (array_names && array_names[k])
            snprintf(name, sizeof name, "%s", array_names[k]);
        else
            pd_field_array_name(&fields[k], k, name, sizeof name);
        write_field_tag(f, &fields[k], name, l->field_offset[k]);
    }
    fprintf(f, "      </PointData>\n      <Points>\n");
    write_array_tag(f, "Float32", "Points", 3, l->points);
    fprintf(f, "/>\n      </Points>\n      <Cells>\n");
    write_array_tag(f, "Int32", "connectivity", 1, l->connectivity);
    fprintf(f, "/>\n");
    write_array_tag(f, "Int32", "offsets", 1, l->offsets);
    fprintf(f, "/>\n");
    write_array_tag(f, "UInt8", "types", 1, l->types);
    fprintf(f, "/>\n      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n"
               "  <AppendedData encoding=\"raw\">\n   _");
}

static void write_block_header(FILE* f, unsigned long long bytes) {
    unsigned char b[VTU_BLOCK_HEADER];
    for (int i = 0; i < VTU_BLOCK_HEADER; ++i)
        b[i] = (unsigned char)(bytes >> (8 * i));
    fwrite(b, 1, sizeof b, f);
}

/* Cell i is the vertex of point i: connectivity i, and the offset of its end, i + 1. */
static uint32_t cell_point(const void* ctx, size_t j) {
    (void)ctx;
    return (uint32_t)j;
}

static uint32_t cell_end(const void* ctx, size_t j) {
    (void)ctx;
    return (uint32_t)(j + 1);
}

static void write_cell_types(FILE* f, size_t n) {
    unsigned char buf[4096];
    memset(buf, VTU_VERTEX, sizeof buf);
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof buf ? n - done : sizeof buf;
        fwrite(buf, 1, k, f);
        done += k;
    }
}

static void write_blocks(FILE* f, size_t n, const pd_vec3* pos, const pd_field* fields,
                         int field_count, const uint32_t* order) {
    for (int k = 0; k < field_count; ++k) {
        int components = fields[k].components;
        write_block_header(f, (unsigned long long)n * (size_t)components * 4);
        pd_component_ref r = {&fields[k], 0, components, order};
        pd_write_values32(f, n * (size_t)components, pd_field_value, &r, 0);
    }
    pd_points_ref points = {pos, order};
    write_block_header(f, (unsigned long long)n * 12);
    pd_write_values32(f, 3 * n, pd_point_coord, &points, 0);
    write_block_header(f, (unsigned long long)n * 4);
    pd_write_values32(f, n, cell_point, NULL, 0);
    write_block_header(f, (unsigned long long)n * 4);
    pd_write_values32(f, n, cell_end, NULL, 0);
    write_block_header(f, n);
    write_cell_types(f, n);
}

pd_status pd_write_vtu(const char* path, size_t n, const pd_vec3* pos, const pd_field* fields,
                       const char* const* array_names, int field_count, const uint32_t* order,
                       double time, pd_error* err) {
    pd_status s = pd_check_fields(n, pos, fields, field_count, path, err);
    if (s != PD_OK)
        return s;
    if (n > (size_t)INT32_MAX - 1) /* the cells' Int32 offsets reach n */
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "%zu points exceed VTK's Int32 cells",
                       n);
    for (int k = 0; array_names && k < field_count; ++k)
        if (array_names[k] && strcspn(array_names[k], "\"<>&") != strlen(array_names[k]))
            return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "array name %s is not XML text",
                           array_names[k]);
    vtu_layout layout;
    plan_blocks(n, fields, field_count, &layout);
    pd_atomic_file af;
    if ((s = pd_atomic_open(&af, path, err)) != PD_OK)
        return s;
    write_header(af.f, n, fields, array_names, &layout, time);
    write_blocks(af.f, n, pos, fields, field_count, order);
    fprintf(af.f, "\n  </AppendedData>\n</VTKFile>\n");
    return pd_atomic_commit(&af, err);
}

/* ---- the collection ---- */

/* s with XML's five special characters as entities. */
static void write_xml_text(FILE* f, const char* s) {
    for (; *s; ++s) {
        const char* entity = *s == '&'    ? "&amp;"
                             : *s == '<'  ? "&lt;"
                             : *s == '>'  ? "&gt;"
                             : *s == '"'  ? "&quot;"
                             : *s == '\'' ? "&apos;"
                                          : NULL;
        if (entity)
            fputs(entity, f);
        else
            fputc(*s, f);
    }
}

pd_status pd_write_pvd(const char* path, const pd_pvd_entry* entries, size_t count, pd_error* err) {
    if (!path || (count > 0 && !entries))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path, "missing entries or path");
    pd_atomic_file af;
    pd_status s = pd_atomic_open(&af, path, err);
    if (s != PD_OK)
        return s;
    fprintf(af.f,
            "<?xml version=\"1.0\"?>\n<!-- written by peridot %s -->\n<VTKFile "
            "type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
            pd_version());
    for (size_t i = 0; i < count; ++i) {
        /* %.9g: the time as stats.csv states it, so a resumed run lists the same text */
        fprintf(af.f, "    <DataSet timestep=\"%.9g\" group=\"\" part=\"0\" file=\"",
                entries[i].time);
        write_xml_text(af.f, entries[i].file);
        fprintf(af.f, "\"/>\n");
    }
    fprintf(af.f, "  </Collection>\n</VTKFile>\n");
    return pd_atomic_commit(&af, err);
}
