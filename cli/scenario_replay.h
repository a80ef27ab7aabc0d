/* scenario_replay.h - the scenario keys of a replayed trace: a producer's
 * `rate: {profile: replay, file, within_minute, scale}` and `record_size: trace`.
 *
 * The trace is a CloudWatch export of IncomingRecords and IncomingBytes per minute
 * (trace_csv.h; the format is in docs/replay.md). Minute 0 of the trace is time 0 of
 * the run; the rate is 0 after the trace ends. The file name is relative to the
 * scenario's folder.
 */
#ifndef SCENARIO_REPLAY_H
#define SCENARIO_REPLAY_H

#include <stdbool.h>

#include "kds_rate.h"
#include "scenario.h"
#include "sim_dist.h"
#include "ydoc.h"

/* Load the replay profile in mapping `n` (at key path `kp`, the producer's `rate`) of
 * producer mapping `pm` into r. The poisson spread draws from a generator seeded with
 * the scenario's master seed and the producer's name, so replications differ and one
 * seed replays the same seconds. The profile's arrays are kept with the scenario.
 * Errors (keys, the file, every bad row as file:line:col) go to the walk. */
void kdsim_load_replay(kdsim_scenario *sc, ywalk *w, yaml_node_t *pm, yaml_node_t *n,
                       const char *kp, kds_rate *r);

/* `record_size: trace`: when producer mapping `pm` says so, set *size to the trace's
 * bytes per record (IncomingBytes / IncomingRecords over the whole trace, a constant)
 * and return true; report an error (and return true) when its rate is not a replayed
 * trace with an IncomingBytes column. Returns false for any other record_size, which
 * the caller then reads as usual. */
bool kdsim_replay_record_size(ywalk *w, yaml_node_t *pm, const char *path, const kds_rate *r,
                              sim_dist *size);

#endif
