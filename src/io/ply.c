/* PLY files element by element (ply.h). The body goes through a buffer of our own rather than
 * one stdio call per value, so that it knows at every byte how many are left, which bounds
 * every list before its items are read. */
#define _POSIX_C_SOURCE 200809L /* fileno, fseeko */
#include "io/ply.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"

/* A header line longer than this is refused. */
#define PLY_LINE_MAX 512
/* An ascii value longer than this is refused rather than read: no number needs it. */
#define PLY_TOKEN_MAX 128

static int set_why(pd_ply_file* p, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets p->why; returns 0, so that a reader can `return set_why(...)`. */
static int set_why(pd_ply_file* p, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    return 0;
}

/* ---- types ---- */

static int parse_type(const char* s, pd_ply_type* t) {
    static const struct {
        const char* name;
        const char* alias;
        pd_ply_type type;
    } k_types[] = {{"char", "int8", PD_PLY_INT8},        {"uchar", "uint8", PD_PLY_UINT8},
                   {"short", "int16", PD_PLY_INT16},     {"ushort", "uint16", PD_PLY_UINT16},
                   {"int", "int32", PD_PLY_INT32},       {"uint", "uint32", PD_PLY_UINT32},
                   {"float", "float32", PD_PLY_FLOAT32}, {"double", "float64", PD_PLY_FLOAT64}};
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; ++i)
        if (strcmp(s, k_types[i].name) == 0 || strcmp(s, k_types[i].alias) == 0) {
            *t = k_types[i].type;
            return 1;
        }
    return 0;
}

static size_t type_size(pd_ply_type t) {
    static const size_t k_sizes[] = {1, 1, 2, 2, 4, 4, 4, 8};
    return k_sizes[t];
}

/* The value of a binary scalar stored in bytes in the file's byte order. */
static double decode(const unsigned char* bytes, pd_ply_type t, int big_endian) {
    size_t size = type_size(t);
    uint64_t u = 0;
    for (size_t i = 0; i < size; ++i)
        u |= (uint64_t)bytes[big_endian ? size - 1 - i : i] << (8 * i);
    switch (t) {
        case PD_PLY_INT8:
            return (double)(int8_t)u;
        case PD_PLY_UINT8:
            return (double)(uint8_t)u;
        case PD_PLY_INT16:
            return (double)(int16_t)u;
        case PD_PLY_UINT16:
            return (double)(uint16_t)u;
        case PD_PLY_INT32:
            return (double)(int32_t)u;
        case PD_PLY_UINT32:
            return (double)(uint32_t)u;
        case PD_PLY_FLOAT32: {
            uint32_t w = (uint32_t)u;
            float v;
            memcpy(&v, &w, sizeof v);
            return v;
        }
        case PD_PLY_FLOAT64: {
            double v;
            memcpy(&v, &u, sizeof v);
            return v;
        }
    }
    return 0;
}

/* ---- buffered bytes ---- */

static unsigned long long bytes_left(const pd_ply_file* p) {
    unsigned long long at = p->offset + p->pos;
    return at < p->size ? p->size - at : 0;
}

/* Makes buf[pos] a byte not yet taken: 0 at the end of the file. */
static int refill(pd_ply_file* p) {
    if (p->pos < p->len)
        return 1;
    p->offset += p->len;
    p->pos = 0;
    p->len = fread(p->buf, 1, sizeof p->buf, p->f);
    return p->len > 0;
}

static int next_byte(pd_ply_file* p) {
    return refill(p) ? p->buf[p->pos++] : EOF;
}

static int take_bytes(pd_ply_file* p, unsigned char* out, size_t n) {
    for (size_t got = 0; got < n;) {
        if (!refill(p))
            return 0;
        size_t k = p->len - p->pos < n - got ? p->len - p->pos : n - got;
        memcpy(out + got, p->buf + p->pos, k);
        p->pos += k;
        got += k;
    }
    return 1;
}

/* Moves n bytes on; past the buffer by seeking. */
static int skip_bytes(pd_ply_file* p, unsigned long long n) {
    if (n > bytes_left(p))
        return set_why(p, "truncated: the file ends before the rows it declares");
    size_t buffered = p->len - p->pos;
    if (n <= buffered) {
        p->pos += (size_t)n;
        return 1;
    }
    n -= buffered;
    p->offset += p->len + n;
    p->pos = p->len = 0;
    return fseeko(p->f, (off_t)n, SEEK_CUR) == 0 || set_why(p, "cannot seek: %s", strerror(errno));
}

/* ---- header ---- */

/* One header line into line, without its newline (\r\n taken as \n): printable text only, so
 * that a header of binary bytes ends at its first one rather than being read as text. */
static int header_line(pd_ply_file* p, char line[PLY_LINE_MAX], int number) {
    size_t n = 0;
    for (int c; (c = next_byte(p)) != EOF;) {
        if (c == '\n') {
            if (n > 0 && line[n - 1] == '\r')
                --n;
            line[n] = '\0';
            return 1;
        }
        if ((c < 0x20 && c != '\r' && c != '\t') || c > 0x7e)
            return set_why(p, "line %d: byte 0x%02x is not printable text", number, c);
        if (n + 1 >= PLY_LINE_MAX)
            return set_why(p, "line %d is longer than %d characters", number, PLY_LINE_MAX - 2);
        line[n++] = (char)c;
    }
    return set_why(p, "the file ends before \"end_header\" and its newline");
}

/* Splits line at blanks into at most max tokens; returns their count, or max + 1 when there
 * are more. */
static int split(char* line, char** tok, int max) {
    int n = 0;
    for (char* s = line;;) {
        s += strspn(s, " \t");
        if (!*s)
            return n;
        if (n == max)
            return max + 1;
        tok[n++] = s;
        s += strcspn(s, " \t");
        if (*s)
            *s++ = '\0';
    }
}

static pd_ply_fault bad_line(pd_ply_file* p, int line, const char* what) {
    set_why(p, "line %d: %s", line, what);
    return PD_PLY_BAD_HEADER;
}

/* A copy of array with room for twice its *cap items of `size` bytes (8 at first), or NULL. */
static void* grown(void* array, size_t* cap, size_t size) {
    size_t more = *cap ? 2 * *cap : 8;
    void* q = pd_realloc(array, *cap * size, more * size);
    if (q)
        *cap = more;
    return q;
}

/* A decimal count of at most 18 digits (leading zeros aside): anything larger is more rows
 * than a file holds, and the limit keeps the number exact. */
static int parse_count(const char* s, size_t* count) {
    if (!*s || strspn(s, "0123456789") != strlen(s))
        return 0;
    s += strspn(s, "0");
    if (strlen(s) > 18)
        return 0;
    *count = (size_t)strtoull(s, NULL, 10);
    return 1;
}

static pd_ply_fault parse_element(pd_ply_file* p, char** tok, int n, int line) {
    size_t count;
    if (n != 3)
        return bad_line(p, line, "an element line is \"element NAME COUNT\"");
    if (!isalpha((unsigned char)tok[1][0])) /* "element 333...3vertex 8": Assimp hung on it */
        return bad_line(p, line, "an element's name must start with a letter");
    if (strlen(tok[1]) >= PD_PLY_NAME_MAX)
        return bad_line(p, line, "element name too long");
    if (!parse_count(tok[2], &count))
        return bad_line(p, line, "an element's count must be a whole number below 10^18");
    if (p->element_count == p->element_cap) {
        void* more = grown(p->elements, &p->element_cap, sizeof *p->elements);
        if (!more)
            return PD_PLY_NO_MEMORY;
        p->elements = more;
    }
    pd_ply_element* e = &p->elements[p->element_count++];
    snprintf(e->name, sizeof e->name, "%s", tok[1]);
    e->count = count;
    e->first = p->property_count;
    e->property_count = 0;
    return PD_PLY_FINE;
}

static pd_ply_fault parse_property(pd_ply_file* p, char** tok, int n, int line) {
    pd_ply_property prop = {0};
    if (p->element_count == 0)
        return bad_line(p, line, "a property before any element");
    int list = n == 5 && strcmp(tok[1], "list") == 0;
    if (n != 3 && !list)
        return bad_line(p, line,
                        "a property line is \"property TYPE NAME\" or "
                        "\"property list TYPE TYPE NAME\"");
    /* an unknown type: Assimp read the rows after it into gigabytes */
    if (list ? !parse_type(tok[2], &prop.count_type) || !parse_type(tok[3], &prop.type)
             : !parse_type(tok[1], &prop.type))
        return bad_line(p, line, "unknown property type");
    const char* name = tok[n - 1];
    if (strlen(name) >= PD_PLY_NAME_MAX)
        return bad_line(p, line, "property name too long");
    snprintf(prop.name, sizeof prop.name, "%s", name);
    prop.is_list = list;
    if (p->property_count == p->property_cap) {
        void* more = grown(p->properties, &p->property_cap, sizeof *p->properties);
        if (!more)
            return PD_PLY_NO_MEMORY;
        p->properties = more;
    }
    p->properties[p->property_count++] = prop;
    p->elements[p->element_count - 1].property_count++;
    return PD_PLY_FINE;
}

static pd_ply_fault parse_format(pd_ply_file* p, char** tok, int n, int line, int* has_format) {
    static const char* const k_names[] = {"ascii", "binary_little_endian", "binary_big_endian"};
    static const pd_ply_format k_formats[] = {PD_PLY_ASCII, PD_PLY_BINARY_LE, PD_PLY_BINARY_BE};
    if (n != 3)
        return bad_line(p, line, "a format line is \"format TYPE VERSION\"");
    if (*has_format)
        return bad_line(p, line, "a second format line");
    for (int i = 0; i < 3; ++i)
        if (strcmp(tok[1], k_names[i]) == 0) {
            p->format = k_formats[i];
            *has_format = 1;
            return PD_PLY_FINE;
        }
    return bad_line(p, line, "unknown format");
}

/* One line after the first; *done once it is end_header. */
static pd_ply_fault parse_line(pd_ply_file* p, char* text, int line, int* has_format, int* done) {
    char* tok[6];
    int n = split(text, tok, 5);
    if (n == 0)
        return bad_line(p, line, "an empty line");
    if (strcmp(tok[0], "comment") == 0 || strcmp(tok[0], "obj_info") == 0)
        return PD_PLY_FINE;
    if (strcmp(tok[0], "format") == 0)
        return parse_format(p, tok, n, line, has_format);
    if (strcmp(tok[0], "element") == 0)
        return parse_element(p, tok, n, line);
    if (strcmp(tok[0], "property") == 0)
        return parse_property(p, tok, n, line);
    if (strcmp(tok[0], "end_header") == 0 && n == 1) {
        *done = 1;
        return PD_PLY_FINE;
    }
    return bad_line(p, line, "not a line of a PLY header");
}

/* Least bytes a row of e takes: each scalar its binary size and each list its length's, or in
 * ascii two characters a value (a digit and a separator). */
static double least_row_bytes(const pd_ply_file* p, const pd_ply_element* e) {
    double row = 0;
    for (size_t k = 0; k < e->property_count; ++k) {
        const pd_ply_property* prop = pd_ply_property_at(p, e, k);
        row += p->format == PD_PLY_ASCII
                   ? 2.0
                   : (double)type_size(prop->is_list ? prop->count_type : prop->type);
    }
    return row;
}

static pd_ply_fault read_header(pd_ply_file* p) {
    char line[PLY_LINE_MAX];
    if (!header_line(p, line, 1) || strcmp(line, "ply") != 0) {
        set_why(p, "its first line is not \"ply\"");
        return PD_PLY_NOT_PLY;
    }
    int has_format = 0, done = 0;
    for (int number = 2; !done; ++number) {
        if (!header_line(p, line, number))
            return PD_PLY_BAD_HEADER;
        pd_ply_fault fault = parse_line(p, line, number, &has_format, &done);
        if (fault != PD_PLY_FINE)
            return fault;
    }
    if (!has_format) {
        set_why(p, "the header has no format line");
        return PD_PLY_BAD_HEADER;
    }
    double need = 0;
    for (size_t i = 0; i < p->element_count; ++i)
        need += (double)p->elements[i].count * least_row_bytes(p, &p->elements[i]);
    if (need > (double)bytes_left(p)) {
        set_why(p, "the header declares more elements than the file's %llu bytes can hold",
                p->size);
        return PD_PLY_TOO_SHORT;
    }
    return PD_PLY_FINE;
}

pd_ply_fault pd_ply_open(pd_ply_file* p, const char* path) {
    memset(p, 0, sizeof *p);
    struct stat named, info;
    if (stat(path, &named) == 0 && !S_ISREG(named.st_mode)) {
        set_why(p, "not a regular file");
        return PD_PLY_NOT_REGULAR;
    }
    p->f = fopen(path, "rb");
    if (!p->f) {
        p->errnum = errno;
        set_why(p, "%s", strerror(p->errnum));
        return PD_PLY_CANNOT_OPEN;
    }
    pd_ply_fault fault = PD_PLY_NOT_REGULAR;
    if (fstat(fileno(p->f), &info) != 0 || !S_ISREG(info.st_mode)) {
        set_why(p, "not a regular file");
    } else {
        p->size = (unsigned long long)info.st_size;
        fault = read_header(p);
    }
    if (fault != PD_PLY_FINE)
        pd_ply_close(p);
    return fault;
}

void pd_ply_close(pd_ply_file* p) {
    if (p->f)
        fclose(p->f);
    if (p->elements)
        PD_FREE_ARRAY(p->elements, pd_ply_element, p->element_cap);
    if (p->properties)
        PD_FREE_ARRAY(p->properties, pd_ply_property, p->property_cap);
    p->f = NULL;
    p->elements = NULL;
    p->properties = NULL;
    p->element_count = p->element_cap = p->property_count = p->property_cap = 0;
}

const pd_ply_element* pd_ply_element_named(const pd_ply_file* p, const char* name) {
    for (size_t i = 0; i < p->element_count; ++i)
        if (strcmp(p->elements[i].name, name) == 0)
            return &p->elements[i];
    return NULL;
}

const pd_ply_property* pd_ply_property_at(const pd_ply_file* p, const pd_ply_element* e, size_t k) {
    return &p->properties[e->first + k];
}

long pd_ply_property_index(const pd_ply_file* p, const pd_ply_element* e, const char* name) {
    for (size_t k = 0; k < e->property_count; ++k)
        if (strcmp(pd_ply_property_at(p, e, k)->name, name) == 0)
            return (long)k;
    return -1;
}

/* ---- body ---- */

static int is_blank(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The next blank-separated ascii value into tok (its separator taken too); *len its bytes. */
static int read_token(pd_ply_file* p, char tok[PLY_TOKEN_MAX], size_t* len) {
    int c = next_byte(p);
    while (c != EOF && is_blank(c))
        c = next_byte(p);
    if (c == EOF)
        return set_why(p, "truncated: the file ends before the rows it declares");
    size_t n = 0;
    for (; c != EOF && !is_blank(c); c = next_byte(p)) {
        if (n + 1 >= PLY_TOKEN_MAX)
            return set_why(p, "a value longer than %d characters", PLY_TOKEN_MAX - 1);
        tok[n++] = (char)c;
    }
    tok[n] = '\0';
    *len = n;
    return 1;
}

/* strtod's whole token (a NUL inside it is not a number's end), named in the message with its
 * unprintable bytes as '?'. */
static int parse_number(pd_ply_file* p, const char* tok, size_t len, double* value) {
    char* end;
    *value = strtod(tok, &end);
    if (end == tok + len)
        return 1;
    char shown[41];
    size_t n = len < sizeof shown - 1 ? len : sizeof shown - 1;
    for (size_t i = 0; i < n; ++i)
        shown[i] = tok[i] >= 0x20 && tok[i] <= 0x7e ? tok[i] : '?';
    shown[n] = '\0';
    return set_why(p, "\"%s%s\" is not a number", shown, len > n ? "..." : "");
}

int pd_ply_read_scalar(pd_ply_file* p, pd_ply_type type, double* value) {
    if (p->format == PD_PLY_ASCII) {
        char tok[PLY_TOKEN_MAX];
        size_t len = 0;
        return read_token(p, tok, &len) && parse_number(p, tok, len, value);
    }
    unsigned char bytes[8];
    if (!take_bytes(p, bytes, type_size(type)))
        return set_why(p, "truncated: the file ends before the rows it declares");
    *value = decode(bytes, type, p->format == PD_PLY_BINARY_BE);
    return 1;
}

int pd_ply_read_length(pd_ply_file* p, const pd_ply_property* list, size_t* length) {
    double n;
    if (!pd_ply_read_scalar(p, list->count_type, &n))
        return 0;
    if (!(n >= 0) || n != floor(n))
        return set_why(p, "a list's length %g is not a whole number >= 0", n);
    /* ascii: a character and a separator an item, none after the last */
    double least = p->format == PD_PLY_ASCII ? 2 * n - 1 : n * (double)type_size(list->type);
    if (least > (double)bytes_left(p))
        return set_why(p, "a list of %.0f items, more than the %llu bytes left can hold", n,
                       bytes_left(p));
    *length = (size_t)n;
    return 1;
}

int pd_ply_skip_property(pd_ply_file* p, const pd_ply_property* prop) {
    double value;
    if (!prop->is_list)
        return pd_ply_read_scalar(p, prop->type, &value);
    size_t n;
    if (!pd_ply_read_length(p, prop, &n))
        return 0;
    if (p->format != PD_PLY_ASCII)
        return skip_bytes(p, (unsigned long long)n * type_size(prop->type));
    for (size_t i = 0; i < n; ++i)
        if (!pd_ply_read_scalar(p, prop->type, &value))
            return 0;
    return 1;
}

/* Bytes of each binary row of e, or 0 when they differ (a list) or the file is ascii. */
static size_t fixed_row_bytes(const pd_ply_file* p, const pd_ply_element* e) {
    size_t row = 0;
    for (size_t k = 0; k < e->property_count; ++k) {
        const pd_ply_property* prop = pd_ply_property_at(p, e, k);
        if (prop->is_list || p->format == PD_PLY_ASCII)
            return 0;
        row += type_size(prop->type);
    }
    return row;
}

int pd_ply_skip_element(pd_ply_file* p, const pd_ply_element* e) {
    if (e->property_count == 0) /* rows of nothing: a count of any size takes no byte */
        return 1;
    size_t row = fixed_row_bytes(p, e);
    if (row > 0)
        return e->count <= bytes_left(p) / row
                   ? skip_bytes(p, (unsigned long long)e->count * row)
                   : set_why(p, "truncated: the file ends before the rows it declares");
    /* every row takes at least a byte or fails at the end of the file: the loop is bounded by
     * the file's size, whatever the count */
    for (size_t r = 0; r < e->count; ++r)
        for (size_t k = 0; k < e->property_count; ++k)
            if (!pd_ply_skip_property(p, pd_ply_property_at(p, e, k)))
                return 0;
    return 1;
}
