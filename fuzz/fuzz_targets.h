/* The fuzzed entry points (docs/validation.md, "Fuzzing"): each takes arbitrary bytes and must
 * return without a crash, a leak or undefined behaviour, whatever the bytes. The libFuzzer
 * drivers (fuzz_main.c) and the regression test of the crashing inputs found
 * (tests/bad_input/fuzz_regressions.c) call the same functions. */
#ifndef PD_FUZZ_TARGETS_H
#define PD_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* A scene: the bytes up to the first 0x01 are the JSON text, each later 0x01-separated part a
 * --set override (at most 8). Parsed and validated as `peridot info --estimate` does, and
 * estimated when accepted. */
void pd_fuzz_scene(const uint8_t* data, size_t size);
/* A mesh file: the first byte picks the extension (.ply, .obj, .stl by its value mod 3), the
 * rest is the file, loaded as a body's shape is (Assimp and our checks) and measured. */
void pd_fuzz_mesh(const uint8_t* data, size_t size);
/* A frame file as `peridot render` reads it (pd_read_ply). */
void pd_fuzz_frame(const uint8_t* data, size_t size);

#endif
