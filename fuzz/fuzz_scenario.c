/* fuzz_scenario.c - the libFuzzer target for kdsim_fuzz_scenario (fuzz_targets.h). */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return kdsim_fuzz_scenario(data, size);
}
