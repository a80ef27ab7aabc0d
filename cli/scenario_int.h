/* scenario_int.h - what the scenario loader's files share: limits, the key-path
 * buffer size, the allocation keeper and the per-section loaders.
 */
#ifndef SCENARIO_INT_H
#define SCENARIO_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "kds_efo.h"
#include "kds_poller.h"
#include "kds_world.h"
#include "scenario.h"
#include "ydoc.h"

#define PATH 256

/* Hard limits of what kdsim accepts, with the reason in the message. AWS's own
 * limits come from model.md; the others keep a run within one machine. */
#define MAX_DURATION SIM_DAY(400)
#define MAX_SHARDS 10000
#define MAX_PRODUCERS 10000
#define MAX_CONSUMERS 1000
#define MAX_CLIENTS 100000
/* Clients of all producers together: each is simulated on its own (about 100 B and an
 * event each, and its own flushes), so 10,000 producers of 100,000 clients each would
 * need some 100 GB before the first event, beyond what --max-memory can stop. */
#define MAX_CLIENTS_TOTAL 1000000
#define MAX_RATE 1e7 /* records/s: what 10,000 shards take at 1,000 records/s each */

/* Zeroed memory for n items of `size` bytes, freed with the scenario. Aborts when out
 * of memory (the loader has nothing useful to do without it). */
void *kdsim_keep(kdsim_scenario *sc, size_t n, size_t size);

/* Record that the scenario names `file` (borrowed; as written) at key path `key`
 * (copied), for the report, and reads it as `path` (copied), for the run's digest.
 * Aborts on out-of-memory, as kdsim_keep(). */
void kdsim_add_input(kdsim_scenario *sc, const char *key, const char *file, const char *path);

/* A new GSL generator for the loader's own draws, seeded from the scenario's seed and
 * `name` (sim_rng.h) and recorded in sc->rngs for the report. The caller owns it and
 * frees it with gsl_rng_free. Aborts on out-of-memory, as kdsim_keep(). */
gsl_rng *kdsim_load_rng_new(kdsim_scenario *sc, const char *name);

/* Load consumers[i] (mapping cm at `path`) into cc. Sets *name to its name (or NULL
 * when missing) and *uses_efo when it registers as an enhanced fan-out consumer.
 * Errors go to the walk's diagnostics. */
void kdsim_load_consumer(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                         kds_consumer_cfg *cc, const char **name, bool *uses_efo);

/* Characters (UTF-8 code points) of a string: AWS counts characters, not bytes. */
size_t kdsim_utf8_chars(const char *s);

/* Check the entity name `name`, the value of map.key, against AWS's name pattern
 * [a-zA-Z0-9_.-]{1,128} (names go into CSV files and random-stream names); reports at
 * map.key. Returns whether it is ok. */
bool kdsim_check_name(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                      const char *name);

/* Whether `name` is one AWS takes for a stream or a consumer: 1 to 128 letters, digits,
 * '_', '.' or '-'. */
bool kdsim_name_ok(const char *name);

/* stream.record_distribution, stream.resharding and stream.on_demand, into the
 * world's stream and capacity configs (after the stream's own keys are read). */
void kdsim_load_capacity(kdsim_scenario *sc, ywalk *w, yaml_node_t *stream);

/* Loaders of consumer kinds kept in files of their own (the `kind` table of
 * scenario_consumers.c): fill cc from the mapping cm at `path`; set *uses_efo when the
 * consumer registers for enhanced fan-out. */
void kdsim_load_firehose(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                         kds_consumer_cfg *cc, bool *uses_efo);
void kdsim_load_flink(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                      kds_consumer_cfg *cc, bool *uses_efo);

/* Shared pieces of consumer sections. */

/* start_position / start_timestamp / start_sequence. */
void kdsim_load_start(ywalk *w, yaml_node_t *cm, const char *path, kds_start_kind *start,
                      sim_time *start_time, uint64_t *start_pos);

/* The push mechanics of a consumer reading through enhanced fan-out, each kind with the
 * same keys: push_delay and subscribe_latency (distributions, ms) and push_interval (a
 * duration, 1 ms to 1 min), into *c; keys absent leave it as it is. */
void kdsim_load_efo(ywalk *w, yaml_node_t *cm, const char *path, kds_efo_cfg *c);

/* pause: {at, for}. */
void kdsim_load_pause(ywalk *w, yaml_node_t *cm, const char *path, sim_time *at,
                      sim_time *len);

/* processing: {per_batch (a distribution, ms), per_record (a duration, 0 to 60 s)}: the
 * application's time for a batch, into *per_batch_ms and *per_record_ms; keys absent
 * leave them as they are. */
void kdsim_load_processing(ywalk *w, yaml_node_t *cm, const char *path, sim_dist *per_batch_ms,
                           double *per_record_ms);

/* AWS fields that take whole numbers (MaximumBatchingWindowInSeconds, SizeInMBs, ...):
 * after map[key] was read as `v` (a duration in ns or a size in B), report at it when v
 * is not a whole number of `unit` (SIM_S(1) "seconds", KDS_MIB "MiB"), naming the AWS
 * field `aws` and the two whole values around v, each written with `suffix` ("s",
 * " MiB"). Returns whether v is whole. */
bool kdsim_check_whole(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                       uint64_t v, uint64_t unit, const char *unit_name, const char *suffix,
                       const char *aws);

/* Keys that only one retrieval uses (the NULL-terminated `keys`): each one present in cm
 * is an error saying it applies to `retrieval` only. */
void kdsim_refuse_keys(ywalk *w, yaml_node_t *cm, const char *path, const char *const *keys,
                       const char *retrieval);

/* The `kcl` consumer kind (scenario_kcl.c): a Kinesis Client Library application with
 * its workers and lease table. Sets *uses_efo when it reads through enhanced fan-out. */
void kdsim_load_kcl(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                    kds_consumer_cfg *cc, bool *uses_efo);

/* The `lambda` consumer kind (scenario_lambda.c): an AWS Lambda event source mapping.
 * Sets *uses_efo when it reads through enhanced fan-out. */
void kdsim_load_lambda(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                       kds_consumer_cfg *cc, bool *uses_efo);

#endif
