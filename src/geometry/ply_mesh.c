/* PLY meshes (ply_mesh.h): the vertex and face elements of a PLY file as one triangle soup. */
#include "geometry/ply_mesh.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/ply.h"

typedef struct mesh_reader {
    pd_ply_file ply;
    const char* file;
    const char* jpath;
    pd_error* err;
    const pd_ply_element *vertex, *face;
    long xyz[3];  /* x, y, z among the vertex's properties */
    long indices; /* the index list among the face's properties */
    pd_vec3* vertices;
    size_t vertex_count; /* allocated */
    uint32_t* triangles; /* 3 per triangle */
    size_t triangle_count, triangle_cap;
} mesh_reader;

static pd_status refuse(mesh_reader* m, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* PD_ERR_MESH, "mesh file '<file>' <what>". */
static pd_status refuse(mesh_reader* m, const char* fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pd_fail(m->err, PD_ERR_MESH, m->jpath, "mesh file '%s' %s", m->file, what);
}

/* A value of element e's row that the PLY reader could not read (its why says what). */
static pd_status refuse_row(mesh_reader* m, const pd_ply_element* e, size_t row) {
    return refuse(m, "cannot be read: element '%s', row %zu: %s", e->name, row, m->ply.why);
}

static pd_status out_of_memory(mesh_reader* m) {
    return pd_fail(m->err, PD_ERR_OUT_OF_MEMORY, m->jpath, "out of memory loading mesh file '%s'",
                   m->file);
}

static pd_status open_file(mesh_reader* m) {
    pd_ply_fault fault = pd_ply_open(&m->ply, m->file);
    switch (fault) {
        case PD_PLY_FINE:
            return PD_OK;
        case PD_PLY_CANNOT_OPEN:
            return pd_fail(m->err, PD_ERR_IO, m->jpath, "cannot open mesh file '%s': %s", m->file,
                           m->ply.why);
        case PD_PLY_NOT_PLY:
            return refuse(m, "is not a PLY file: %s", m->ply.why);
        case PD_PLY_TOO_SHORT:
            return refuse(m, "declares more elements than its %llu bytes can hold", m->ply.size);
        case PD_PLY_NO_MEMORY:
            return out_of_memory(m);
        case PD_PLY_NOT_REGULAR:
        case PD_PLY_BAD_HEADER:
        case PD_PLY_BAD_BODY:
            break;
    }
    return refuse(m, "has an unreadable PLY header: %s", m->ply.why);
}

/* Finds the vertex element's x, y, z and the face element's index list. */
static pd_status find_layout(mesh_reader* m) {
    static const char* const k_xyz[] = {"x", "y", "z"};
    m->vertex = pd_ply_element_named(&m->ply, "vertex");
    for (int c = 0; c < 3; ++c) {
        m->xyz[c] = m->vertex ? pd_ply_property_index(&m->ply, m->vertex, k_xyz[c]) : -1;
        if (m->xyz[c] < 0 || pd_ply_property_at(&m->ply, m->vertex, (size_t)m->xyz[c])->is_list)
            return refuse(m, "has no vertex element with scalar properties x, y, z");
    }
    m->face = pd_ply_element_named(&m->ply, "face");
    if (!m->face)
        return refuse(m, "has no triangles: it has no face element");
    m->indices = pd_ply_property_index(&m->ply, m->face, "vertex_indices");
    if (m->indices < 0)
        m->indices = pd_ply_property_index(&m->ply, m->face, "vertex_index");
    if (m->indices < 0 || !pd_ply_property_at(&m->ply, m->face, (size_t)m->indices)->is_list)
        return refuse(m, "has no triangles: its face element has no list vertex_indices");
    if (m->vertex->count >= UINT32_MAX)
        return pd_fail(m->err, PD_ERR_TOO_LARGE, m->jpath,
                       "mesh file '%s' has too many vertices (%zu)", m->file, m->vertex->count);
    return PD_OK;
}

/* Which coordinate property k of the vertex element is (0 x, 1 y, 2 z), or -1. */
static int coordinate_of(const mesh_reader* m, size_t k) {
    for (int c = 0; c < 3; ++c)
        if (m->xyz[c] == (long)k)
            return c;
    return -1;
}

static pd_status read_vertices(mesh_reader* m) {
    const pd_ply_element* v = m->vertex;
    for (size_t i = 0; i < v->count; ++i)
        for (size_t k = 0; k < v->property_count; ++k) {
            const pd_ply_property* prop = pd_ply_property_at(&m->ply, v, k);
            int c = coordinate_of(m, k);
            double value = 0;
            if (c < 0 ? !pd_ply_skip_property(&m->ply, prop)
                      : !pd_ply_read_scalar(&m->ply, prop->type, &value))
                return refuse_row(m, v, i);
            if (!isfinite(value))
                return refuse(m, "has a non-finite coordinate: vertex %zu's %s is %g", i,
                              prop->name, value);
            if (c == 0)
                m->vertices[i].x = value;
            else if (c == 1)
                m->vertices[i].y = value;
            else if (c == 2)
                m->vertices[i].z = value;
        }
    return PD_OK;
}

/* Appends triangle a b c, doubling the array when full: each triangle took at least a byte of
 * the file, so the array stays within a multiple of its size. */
static int push_triangle(mesh_reader* m, uint32_t a, uint32_t b, uint32_t c) {
    if (m->triangle_count == m->triangle_cap) {
        size_t cap = m->triangle_cap ? 2 * m->triangle_cap : 64;
        uint32_t* more = pd_realloc(m->triangles, 3 * m->triangle_cap * sizeof(uint32_t),
                                    3 * cap * sizeof(uint32_t));
        if (!more)
            return 0;
        m->triangles = more;
        m->triangle_cap = cap;
    }
    uint32_t* t = &m->triangles[3 * m->triangle_count++];
    t[0] = a, t[1] = b, t[2] = c;
    return 1;
}

/* One item of a face's index list: a whole number naming one of the vertices. */
static pd_status read_index(mesh_reader* m, const pd_ply_property* list, size_t row,
                            uint32_t* index) {
    double v;
    if (!pd_ply_read_scalar(&m->ply, list->type, &v))
        return refuse_row(m, m->face, row);
    if (!(v >= 0 && v < (double)m->vertex->count) || v != floor(v))
        return refuse(m,
                      "has a vertex index out of range: face %zu names vertex %g, of %zu "
                      "vertices numbered from 0",
                      row, v, m->vertex->count);
    *index = (uint32_t)v;
    return PD_OK;
}

/* A face of k indices as the fan of k - 2 triangles from its first corner. */
static pd_status read_polygon(mesh_reader* m, const pd_ply_property* list, size_t row) {
    size_t n;
    if (!pd_ply_read_length(&m->ply, list, &n))
        return refuse_row(m, m->face, row);
    if (n < 3)
        return refuse(m, "has a face of %zu vertex indices (face %zu): a face needs at least 3", n,
                      row);
    uint32_t first = 0, previous = 0;
    for (size_t c = 0; c < n; ++c) {
        uint32_t index = 0;
        pd_status st = read_index(m, list, row, &index);
        if (st != PD_OK)
            return st;
        if (c >= 2 && !push_triangle(m, first, previous, index))
            return out_of_memory(m);
        if (c == 0)
            first = index;
        previous = index;
    }
    return PD_OK;
}

static pd_status read_faces(mesh_reader* m) {
    const pd_ply_element* f = m->face;
    for (size_t i = 0; i < f->count; ++i)
        for (size_t k = 0; k < f->property_count; ++k) {
            const pd_ply_property* prop = pd_ply_property_at(&m->ply, f, k);
            if ((long)k == m->indices) {
                pd_status st = read_polygon(m, prop, i);
                if (st != PD_OK)
                    return st;
            } else if (!pd_ply_skip_property(&m->ply, prop)) {
                return refuse_row(m, f, i);
            }
        }
    return PD_OK;
}

/* Every element in file order: the vertices, the faces, the rest skipped, so that a file
 * that ends before its last declared row is refused wherever it ends. */
static pd_status read_body(mesh_reader* m) {
    for (size_t i = 0; i < m->ply.element_count; ++i) {
        const pd_ply_element* e = &m->ply.elements[i];
        pd_status st = PD_OK;
        if (e == m->vertex)
            st = read_vertices(m);
        else if (e == m->face)
            st = read_faces(m);
        else if (!pd_ply_skip_element(&m->ply, e))
            st = refuse(m, "cannot be read: element '%s': %s", e->name, m->ply.why);
        if (st != PD_OK)
            return st;
    }
    return PD_OK;
}

/* Drops the vertices no triangle uses, as Assimp's import did: a stray point would otherwise
 * widen the mesh's bounds, and with them the box a body is sampled in. */
static pd_status keep_used_vertices(mesh_reader* m) {
    size_t nv = m->vertex_count, corners = 3 * m->triangle_count, used = 0;
    uint32_t* renumber = PD_NEW_ARRAY(uint32_t, nv); /* 0: unused, else new index + 1 */
    if (!renumber)
        return out_of_memory(m);
    for (size_t i = 0; i < corners; ++i)
        renumber[m->triangles[i]] = 1;
    for (size_t v = 0; v < nv; ++v)
        if (renumber[v]) {
            m->vertices[used] = m->vertices[v];
            renumber[v] = (uint32_t)++used;
        }
    for (size_t i = 0; i < corners; ++i)
        m->triangles[i] = renumber[m->triangles[i]] - 1;
    PD_FREE_ARRAY(renumber, uint32_t, nv);
    if (used < nv) {
        pd_vec3* kept = pd_realloc(m->vertices, nv * sizeof(pd_vec3), used * sizeof(pd_vec3));
        if (!kept)
            return out_of_memory(m);
        m->vertices = kept;
        m->vertex_count = used;
    }
    return PD_OK;
}

/* The triangles as pd_mesh_free expects them: an array of exactly 3 per triangle. */
static pd_status fit_triangles(mesh_reader* m) {
    if (m->triangle_count == m->triangle_cap)
        return PD_OK;
    uint32_t* fit = pd_realloc(m->triangles, 3 * m->triangle_cap * sizeof(uint32_t),
                               3 * m->triangle_count * sizeof(uint32_t));
    if (!fit)
        return out_of_memory(m);
    m->triangles = fit;
    m->triangle_cap = m->triangle_count;
    return PD_OK;
}

static pd_status read_mesh(mesh_reader* m) {
    pd_status st = find_layout(m);
    if (st != PD_OK)
        return st;
    /* the header's check that its rows fit in the file bounds the count: 3 bytes a vertex */
    m->vertex_count = m->vertex->count;
    if (m->vertex_count > 0 && !(m->vertices = PD_NEW_ARRAY(pd_vec3, m->vertex_count)))
        return out_of_memory(m);
    if ((st = read_body(m)) != PD_OK)
        return st;
    if (m->triangle_count == 0)
        return refuse(m, "has no triangles");
    if ((st = keep_used_vertices(m)) != PD_OK)
        return st;
    return fit_triangles(m);
}

pd_status pd_ply_mesh_read(const char* file, pd_mesh* out, const char* jpath, pd_error* err) {
    memset(out, 0, sizeof *out);
    mesh_reader* m = pd_alloc(sizeof *m); /* 17 KB, mostly the read buffer: off the stack */
    if (!m)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, jpath, "out of memory loading mesh file '%s'",
                       file);
    memset(m, 0, sizeof *m);
    m->file = file, m->jpath = jpath, m->err = err;
    pd_status st = open_file(m);
    if (st == PD_OK) {
        st = read_mesh(m);
        pd_ply_close(&m->ply);
    }
    if (st == PD_OK) {
        *out = (pd_mesh){m->vertex_count, m->triangle_count, m->vertices, m->triangles};
    } else {
        if (m->vertices)
            PD_FREE_ARRAY(m->vertices, pd_vec3, m->vertex_count);
        if (m->triangles)
            PD_FREE_ARRAY(m->triangles, uint32_t, 3 * m->triangle_cap);
    }
    pd_free(m, sizeof *m);
    return st;
}
