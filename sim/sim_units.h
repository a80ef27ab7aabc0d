/* sim_units.h - parsing and printing quantities with units, for the YAML scenarios and
 * the command line alike.
 *
 * Durations: an integer or decimal number followed by ns, us, ms, s, m (or min), h or d:
 * "500ms", "30s", "10m", "6h", "7d", "1.5s"; "0" alone is accepted. Sizes are binary:
 * B, KiB, MiB, GiB, TiB ("25 KiB"); the SI-looking KB/MB/GB are refused as ambiguous,
 * because AWS's "GB" means 2^30 B. Rates: a size per second ("1 MiB/s") or a count per
 * second or minute with an optional word ("1000 records/s", "5 calls/s", "120/min").
 * Spaces between number and unit are optional. Results are rounded to the nearest
 * nanosecond or byte; overflow and negative values are errors.
 */
#ifndef SIM_UNITS_H
#define SIM_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

/* Parse a duration into nanoseconds. Returns 0, SIM_ESYNTAX (no number), SIM_EUNIT
 * (missing or unknown unit), or SIM_ERANGE (negative or beyond +-292 years). */
int sim_parse_duration(const char *text, sim_time *out);

/* Parse a size into bytes ("25 KiB", "1 MiB", "512 B", "1.5 KiB"). A bare integer is
 * bytes. Same error codes as sim_parse_duration. */
int sim_parse_bytes(const char *text, uint64_t *out);

/* Parse a byte rate ("1 MiB/s", "500 KiB/s", "2 MiB/min") into bytes per second. */
int sim_parse_byte_rate(const char *text, double *bytes_per_s);

/* Parse a count rate ("1000 records/s", "5 calls/s", "2000/s", "60/min", "3/h") into
 * events per second. `word` is the optional unit word ("records", "calls"; NULL allows
 * none); its singular is accepted too. */
int sim_parse_count_rate(const char *text, const char *word, double *per_s);

/* Print a duration in the largest unit that keeps it exact to 3 decimals
 * ("500ms", "1.5s", "7d"). Always NUL-terminates; returns buf. */
char *sim_fmt_duration(char *buf, size_t n, sim_time t);

/* Print a size in the largest binary unit with at most 2 decimals ("1 MiB", "25 KiB",
 * "1.5 KiB", "100 B"). Always NUL-terminates; returns buf. */
char *sim_fmt_bytes(char *buf, size_t n, uint64_t bytes);

/* Hint for an error code, naming the accepted forms ("a duration like 500ms, 30s,
 * 10m, 6h or 7d"). kind is 'd' (duration), 'b' (bytes), 'r' (byte rate), 'c' (count
 * rate). Static string. */
const char *sim_units_hint(char kind);

#endif
