/* provenance.h - what identifies a result: SHA-256 digests of the scenario as run (its
 * file's bytes, the overrides applied to it and the files it reads) and of a sweep, in
 * hex.
 *
 * Every row of a sweep or replication table carries the kdsim version, the scenario's
 * digest, the seed and the parameters, so that any row can be traced to its inputs
 * and re-run alone. The files the scenario reads (a replayed trace, the price file) are
 * part of the digest too: a run is a function of them as much as of the scenario, and
 * `--resume` keeps a run's result only when its digest is the same.
 */
#ifndef PROVENANCE_H
#define PROVENANCE_H

#include <stddef.h>

#define KDSIM_SHA256_HEX 65 /* 64 hex digits and the NUL */

/* The SHA-256 of the bytes of `file`, then of each of the n overrides, each preceded
 * by a newline ("\n" "stream.shards=4" ...; an override made by an option, like
 * "--duration duration=2m", counts as "duration=2m"; one of the key `seed` does not count,
 * since the seed is recorded apart), then of the bytes of each of the
 * n_inputs files the scenario reads (inputs[i], as opened: replayed traces in scenario
 * order, then the price file), each preceded by a newline, as 64 lower-case hex digits.
 * Returns 0 or SIM_EIO (a file cannot be read; out is then ""). */
int kdsim_sha256_run(const char *file, const char *const *sets, size_t n,
                     const char *const *inputs, size_t n_inputs, char out[KDSIM_SHA256_HEX]);

#endif
