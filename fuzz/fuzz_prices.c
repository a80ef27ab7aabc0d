/* fuzz_prices.c - the libFuzzer target for kdsim_fuzz_prices (fuzz_targets.h). */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return kdsim_fuzz_prices(data, size);
}
