/* The fuzzed entry points (fuzz_targets.h). Files are written under the temporary folder with
 * the process id in their name, so that parallel fuzzing jobs do not share them. */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geometry/sampling.h"
#include "io/output.h"
#include "peridot/peridot.h"

#define PD_FUZZ_MAX_SETS 8

void pd_fuzz_scene(const uint8_t* data, size_t size) {
    char* text = malloc(size + 1);
    if (!text)
        return;
    memcpy(text, data, size);
    text[size] = '\0';
    const char* sets[PD_FUZZ_MAX_SETS];
    int nsets = 0;
    for (char* p = memchr(text, 1, size); p && nsets < PD_FUZZ_MAX_SETS;
         p = memchr(p + 1, 1, size - (size_t)(p + 1 - text))) {
        *p = '\0';
        sets[nsets++] = p + 1;
        if (p + 1 >= text + size)
            break;
    }
    pd_scene scene;
    pd_error err;
    if (pd_scene_parse(text, "fuzz.json", "/nonexistent", sets, nsets, &scene, &err) == PD_OK) {
        pd_estimate est;
        pd_scene_estimate(&scene, &est, &err);
        pd_scene_free(&scene);
    }
    free(text);
}

/* Writes size bytes to a file named for this process with extension ext; 0 on failure. */
static int write_temp(char* path, size_t cap, const char* ext, const uint8_t* data, size_t size) {
    const char* dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, cap, "%s/pd_fuzz_%ld.%s", dir, (long)getpid(), ext);
    FILE* f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

void pd_fuzz_mesh(const uint8_t* data, size_t size) {
    static const char* const ext[] = {"ply", "obj", "stl"};
    if (size < 1)
        return;
    pd_shape_def shape = pd_default_shape_def();
    shape.type = PD_SHAPE_MESH;
    if (!write_temp(shape.path, sizeof shape.path, ext[data[0] % 3], data + 1, size - 1))
        return;
    pd_vec3 lo, hi;
    double volume, area;
    pd_error err;
    pd_shape_measure(&shape, &lo, &hi, &volume, &area, "bodies[0].shape", &err);
    remove(shape.path);
}

void pd_fuzz_frame(const uint8_t* data, size_t size) {
    char path[512];
    if (!write_temp(path, sizeof path, "ply", data, size))
        return;
    pd_ply_data ply;
    pd_error err;
    if (pd_read_ply(path, &ply, &err) == PD_OK)
        pd_ply_free(&ply);
    remove(path);
}
