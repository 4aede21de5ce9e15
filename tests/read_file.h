/* A whole file for tests that read back what was written. */
#ifndef PD_TEST_READ_FILE_H
#define PD_TEST_READ_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The file at path, NUL-terminated, malloc'd (free it), its length in *size; NULL (and *size 0)
 * when it cannot be read or is empty. */
static inline unsigned char* pd_test_read_file(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    *size = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char* buf = len > 0 ? malloc((size_t)len + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
        buf[len] = 0;
        *size = (size_t)len;
    }
    fclose(f);
    return buf;
}

#endif
