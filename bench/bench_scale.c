/* bench_scale.c - the scale benchmark (issue 9): a 10,000-shard stream with every shard
 * written near 1 MiB/s (10 records/s of 100 KiB, one producer per shard with an
 * ExplicitHashKey inside it, flushing once a second), read by one polling consumer
 * (once a second per shard) and one enhanced fan-out consumer. Prints simulated
 * seconds per wall second and the peak resident memory.
 *
 * usage: bench_scale [SHARDS] [SIMULATED_SECONDS]    (defaults 10000, 120)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "kds_efo.h"
#include "kds_world.h"
#include "sim_mem.h"

int main(int argc, char **argv)
{
    uint32_t shards = argc > 1 ? (uint32_t)atoi(argv[1]) : 10000;
    double secs = argc > 2 ? atof(argv[2]) : 120;
    if (shards < 1 || shards > 10000 || secs <= 0) {
        fprintf(stderr, "usage: bench_scale [SHARDS 1..10000] [SIMULATED_SECONDS]\n");
        return 2;
    }
    kds_world_cfg wc = {0};
    wc.seed = 1;
    wc.duration = (sim_time)(secs * 1e9);
    kds_stream_cfg_defaults(&wc.stream);
    wc.stream.name = "scale";
    wc.stream.shards = shards;
    kds_producer_cfg *pc = calloc(shards, sizeof *pc);
    char (*names)[24] = calloc(shards, sizeof *names);
    if (!pc || !names)
        return 1;
    for (uint32_t i = 0; i < shards; i++) {
        kds_producer_cfg_defaults(&pc[i]);
        snprintf(names[i], sizeof names[i], "p%u", i);
        pc[i].name = names[i];
        pc[i].rate = kds_rate_constant(10);
        pc[i].size = sim_dist_const(100 * 1024);
        pc[i].keys.kind = KDS_KEYS_EXPLICIT;
        pc[i].keys.explicit_key = kds_hashkey_even_start(i, shards) + 1;
        pc[i].linger = SIM_S(1);
        pc[i].batch_records = 10;
        /* Each producer starts at its own phase within the first second. */
        pc[i].start = (sim_time)((double)i / shards * 1e9);
    }
    wc.producers = pc;
    wc.n_producers = shards;
    kds_efo_consumer_cfg efo;
    kds_efo_consumer_cfg_defaults(&efo);
    efo.name = "efo";
    efo.start = KDS_START_TRIM_HORIZON;
    kds_consumer_cfg cc[2] = {0};
    cc[0].kind = KDS_CONSUMER_POLLING;
    kds_poller_cfg_defaults(&cc[0].polling);
    cc[0].polling.name = "poller";
    cc[0].polling.idle = SIM_S(1);
    cc[1].kind = KDS_CONSUMER_MODEL;
    cc[1].make = kds_efo_make;
    cc[1].cfg = &efo;
    wc.consumers = cc;
    wc.n_consumers = 2;

    double t0 = sim_wall_s();
    kds_world w;
    if (kds_world_init(&w, &wc) != 0) {
        fprintf(stderr, "bench_scale: cannot build the world\n");
        return 1;
    }
    double t1 = sim_wall_s();
    kds_world_run(&w);
    double t2 = sim_wall_s();
    uint64_t in = 0;
    for (size_t i = 0; i < w.stream.n_shards; i++)
        in += w.stream.shards[i]->st.bytes_in;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("scale: %u shards, %.0f s simulated, %.2f GiB written (%.3f MiB/s per shard)\n",
           shards, secs, (double)in / (1u << 30), (double)in / secs / shards / 1048576.0);
    printf("  build %.2f s, run %.2f s wall: %.1f simulated s per wall s, %.3g events/s\n",
           t1 - t0, t2 - t1, secs / (t2 - t1), (double)sim_events_run(w.sim) / (t2 - t1));
    printf("  peak resident memory %.0f MiB; invariants %s\n", (double)ru.ru_maxrss / 1024.0,
           w.violated ? w.violation : "hold");
    int bad = w.violated;
    kds_world_fini(&w);
    free(pc);
    free(names);
    return bad;
}
