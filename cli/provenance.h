/* provenance.h - what identifies a result: SHA-256 digests of the scenario as run (its
 * file's bytes plus the overrides applied to it) and of a sweep, in hex.
 *
 * Every row of a sweep or replication table carries the kdsim version, the scenario's
 * digest, the seed and the parameters, so that any row can be traced to its inputs
 * and re-run alone. Files the scenario names (the price file, a replayed trace) are not
 * part of the digest: they are recorded by name in the report (cost.prices.file,
 * inputs).
 */
#ifndef PROVENANCE_H
#define PROVENANCE_H

#include <stddef.h>

#define KDSIM_SHA256_HEX 65 /* 64 hex digits and the NUL */

/* The SHA-256 of the bytes of `file`, then of each of the n overrides, each preceded
 * by a newline ("\n" "stream.shards=4" ...; an override made by an option, like
 * "--duration duration=2m", counts as "duration=2m"), as 64 lower-case hex digits.
 * Returns 0 or SIM_EIO (the file cannot be read; out is then ""). */
int kdsim_sha256_scenario(const char *file, const char *const *sets, size_t n,
                          char out[KDSIM_SHA256_HEX]);

/* The SHA-256 of the bytes of every file in files[0..n-1], one after the other. Returns 0
 * or SIM_EIO. */
int kdsim_sha256_files(const char *const *files, size_t n, char out[KDSIM_SHA256_HEX]);

#endif
