/* provenance.c - SHA-256 digests of scenarios and sweeps, with nettle (provenance.h). */
#include "provenance.h"

#include <stdio.h>
#include <string.h>

#include <nettle/sha2.h>

#include "sim_err.h"

static int add_file(struct sha256_ctx *ctx, const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return SIM_EIO;
    unsigned char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        sha256_update(ctx, got, buf);
    int bad = ferror(f);
    fclose(f);
    return bad ? SIM_EIO : 0;
}

static void hex(struct sha256_ctx *ctx, char out[KDSIM_SHA256_HEX])
{
    unsigned char d[SHA256_DIGEST_SIZE];
    sha256_digest(ctx, sizeof d, d);
    for (size_t i = 0; i < sizeof d; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

int kdsim_sha256_run(const char *file, const char *const *sets, size_t n,
                     const char *const *inputs, size_t n_inputs, char out[KDSIM_SHA256_HEX])
{
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    out[0] = 0;
    if (add_file(&ctx, file))
        return SIM_EIO;
    for (size_t i = 0; i < n; i++) {
        /* "--duration duration=2m" (an override an option made) is "duration=2m". */
        const char *s = sets[i], *sp = strchr(s, ' ');
        if (strncmp(s, "--", 2) == 0 && sp)
            s = sp + 1;
        /* The seed is recorded apart: every seed of one scenario shares its digest,
         * whether it came from --seed, --set seed= or a replication. */
        if (strncmp(s, "seed=", 5) == 0)
            continue;
        sha256_update(&ctx, 1, (const uint8_t *)"\n");
        sha256_update(&ctx, strlen(s), (const uint8_t *)s);
    }
    for (size_t i = 0; i < n_inputs; i++) {
        sha256_update(&ctx, 1, (const uint8_t *)"\n");
        if (add_file(&ctx, inputs[i]))
            return SIM_EIO;
    }
    hex(&ctx, out);
    return 0;
}
