/* sim_mem.h - what the process uses of the machine: memory, for the --max-memory guard
 * (a run that outgrows its budget stops cleanly with a message instead of being killed
 * by the operating system; Linux only, from /proc: elsewhere the guard reads 0 and never
 * fires), and wall-clock time, for progress, timing and benchmarks. Nothing here may
 * change what a simulation computes. */
#ifndef SIM_MEM_H
#define SIM_MEM_H

#include <stdint.h>

/* Resident set size of this process in bytes, or 0 when it cannot be read. */
uint64_t sim_rss_bytes(void);

/* Seconds on a monotonic wall clock from an arbitrary origin: only differences mean
 * anything. Cheap (no system call on Linux). */
double sim_wall_s(void);

/* Physical memory of the machine in bytes, or 0 when unknown. */
uint64_t sim_phys_bytes(void);

#endif
