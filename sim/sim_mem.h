/* sim_mem.h - how much memory the process uses, for the --max-memory guard: a run that
 * outgrows its budget stops cleanly with a message instead of being killed by the
 * operating system. Linux only (/proc); elsewhere the guard reads 0 and never fires. */
#ifndef SIM_MEM_H
#define SIM_MEM_H

#include <stdint.h>

/* Resident set size of this process in bytes, or 0 when it cannot be read. */
uint64_t sim_rss_bytes(void);

/* Physical memory of the machine in bytes, or 0 when unknown. */
uint64_t sim_phys_bytes(void);

#endif
