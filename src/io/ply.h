/* PLY files, read element by element: the header as a list of elements and their properties,
 * and the body value by value, in ascii or binary little- or big-endian order. The frame reader
 * (io/output.c) and the mesh reader (geometry/ply_mesh.c) share it. Every count is bounded by
 * the file's size before anyone allocates for it: the header's elements must fit in the bytes
 * after it (each value takes at least its binary size, or two characters in ascii), and a
 * list's length in the bytes left. */
#ifndef PD_PLY_H
#define PD_PLY_H

#include <stddef.h>
#include <stdio.h>

typedef enum pd_ply_format { PD_PLY_ASCII, PD_PLY_BINARY_LE, PD_PLY_BINARY_BE } pd_ply_format;
typedef enum pd_ply_type {
    PD_PLY_INT8,
    PD_PLY_UINT8,
    PD_PLY_INT16,
    PD_PLY_UINT16,
    PD_PLY_INT32,
    PD_PLY_UINT32,
    PD_PLY_FLOAT32,
    PD_PLY_FLOAT64
} pd_ply_type;

/* Element and property names are refused from this length on. */
#define PD_PLY_NAME_MAX 64

typedef struct pd_ply_property {
    char name[PD_PLY_NAME_MAX];
    int is_list;
    pd_ply_type count_type; /* a list's length */
    pd_ply_type type;       /* a scalar's, or each item of a list */
} pd_ply_property;

typedef struct pd_ply_element {
    char name[PD_PLY_NAME_MAX];
    size_t count;                 /* rows */
    size_t first, property_count; /* its properties in pd_ply_file.properties */
} pd_ply_element;

typedef enum pd_ply_fault {
    PD_PLY_FINE,
    PD_PLY_CANNOT_OPEN, /* why holds strerror */
    PD_PLY_NOT_REGULAR, /* not opened: a FIFO would block */
    PD_PLY_NOT_PLY,     /* the first line is not "ply" */
    PD_PLY_BAD_HEADER,  /* why names the line and what is wrong with it */
    PD_PLY_TOO_SHORT,   /* the declared elements need more bytes than the file has */
    PD_PLY_BAD_BODY,    /* a value that is not a number, a list too long, the end of the file */
    PD_PLY_NO_MEMORY,
} pd_ply_fault;

typedef struct pd_ply_file {
    FILE* f;
    pd_ply_format format;
    pd_ply_element* elements;
    size_t element_count, element_cap;
    pd_ply_property* properties;
    size_t property_count, property_cap;
    unsigned long long size;   /* of the file when opened */
    unsigned long long offset; /* of buf[0] in the file */
    size_t pos, len;           /* buf[pos, len) is read but not yet taken */
    unsigned char buf[16384];
    char why[256]; /* what went wrong, for the caller's message */
    int errnum;    /* PD_PLY_CANNOT_OPEN's errno */
} pd_ply_file;

/* Opens path and reads its header. The header's lines must be printable text, each one the
 * format defines ("ply", "format", "comment", "obj_info", "element NAME COUNT" with a name
 * starting with a letter, "property TYPE NAME", "property list TYPE TYPE NAME"), up to
 * "end_header" and its newline. On a fault, p holds nothing to close. */
pd_ply_fault pd_ply_open(pd_ply_file* p, const char* path);
void pd_ply_close(pd_ply_file* p);

/* The first element called name, or NULL. */
const pd_ply_element* pd_ply_element_named(const pd_ply_file* p, const char* name);
/* Property k of element e. */
const pd_ply_property* pd_ply_property_at(const pd_ply_file* p, const pd_ply_element* e, size_t k);
/* Index within e of the first property called name, or -1. */
long pd_ply_property_index(const pd_ply_file* p, const pd_ply_element* e, const char* name);

/* The body, in file order: each returns 1, or 0 with p->why set (PD_PLY_BAD_BODY). */
int pd_ply_read_scalar(pd_ply_file* p, pd_ply_type type, double* value);
/* A list's length: a whole number >= 0 whose items fit in the bytes left. */
int pd_ply_read_length(pd_ply_file* p, const pd_ply_property* list, size_t* length);
/* One row's value of prop (a scalar, or a list's length and items), unread. */
int pd_ply_skip_property(pd_ply_file* p, const pd_ply_property* prop);
/* Every row of e, unread. */
int pd_ply_skip_element(pd_ply_file* p, const pd_ply_element* e);

#endif
