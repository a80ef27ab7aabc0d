/* sim_mem.h - what the process uses of the machine: memory, for the --max-memory guard
 * (a run that outgrows its budget stops cleanly with a message instead of being killed
 * by the operating system; Linux only, from /proc: elsewhere the guard reads 0 and never
 * fires), wall-clock time, for progress, timing and benchmarks, and the growth of the
 * models' tables. Nothing here may change what a simulation computes. */
#ifndef SIM_MEM_H
#define SIM_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Resident set size of this process in bytes, or 0 when it cannot be read. */
uint64_t sim_rss_bytes(void);

/* Seconds on a monotonic wall clock from an arbitrary origin: only differences mean
 * anything. Cheap (no system call on Linux). */
double sim_wall_s(void);

/* Physical memory of the machine in bytes, or 0 when unknown. */
uint64_t sim_phys_bytes(void);

/* Grow array `a` of *n elements of `size` bytes each to hold at least `need`: to the
 * larger of need and 2 * *n (so that growing by one at a time costs O(final size) in
 * all), the new elements zeroed, *n set. Returns the array, perhaps moved; nothing
 * changes when need <= *n. Out of memory is a SIM_ASSERT failure, as for the models'
 * other bookkeeping. For tables indexed by shard index, which grow as shards are made. */
void *sim_grow_zeroed(void *a, size_t *n, size_t need, size_t size);

#endif
