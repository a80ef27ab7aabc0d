/* report.h - the run's reports: the human report, the JSON report and the CSV time
 * series, all read from a finished world.
 *
 * The JSON report's keys are documented in docs/report-json.md and kept stable. It
 * contains no wall-clock time, no address and no unordered iteration, so one scenario
 * and one seed give byte-identical JSON on every machine.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "kds_world.h"
#include "scenario.h"

/* Build the JSON report of a finished world. Returns a new reference (the caller
 * json_decref()s it), or NULL when out of memory. */
json_t *kdsim_report_json(const kdsim_scenario *sc, const kds_world *w);

/* Serialise a report as kdsim writes it (2-space indent, keys in insertion order,
 * reals with 12 significant digits, trailing newline). Returns a malloc'd string
 * or NULL. */
char *kdsim_report_dump(const json_t *report);

/* Write the human report of `report` (the JSON tree) to out. */
void kdsim_report_text(const json_t *report, FILE *out);

/* Write report.json, report.txt and the CSV time series into directory `dir`
 * (created if missing). Each file is written to a temporary name and renamed, so no
 * half-written file is left. Returns 0 or SIM_EIO with a message on stderr. */
int kdsim_report_write_dir(const kdsim_scenario *sc, const kds_world *w, const json_t *report,
                           const char *dir);

#endif
