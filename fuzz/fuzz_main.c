/* libFuzzer driver: PD_FUZZ_TARGET names the entry point (fuzz_targets.h) this binary fuzzes. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    PD_FUZZ_TARGET(data, size);
    return 0;
}
