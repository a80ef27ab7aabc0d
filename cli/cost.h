/* cost.h - the report's `cost` section: what the run's traffic costs in every capacity
 * mode, as JSON (docs/report-json.md, "cost") and as text tables.
 *
 * The numbers come from the billing model (kds_billing.h) at the scenario's prices
 * (prices.h); this file only gathers, names and prints them. The text is printed from
 * the JSON, like the rest of the human report, so both always agree.
 */
#ifndef COST_H
#define COST_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "kds_world.h"
#include "scenario.h"

/* The `cost` object of a finished world at the scenario's prices and settings. Returns
 * a new reference, or NULL when out of memory or when a bill passes what kdsim counts
 * (then kdsim_cost_error says so). */
json_t *kdsim_cost_json(const kdsim_scenario *sc, const kds_world *w);

/* Set when kdsim_cost_json (and so kdsim_report_json) returned NULL because a bill
 * passed what kdsim counts: the message to show; NULL otherwise (out of memory). */
extern const char *kdsim_cost_error;

/* The run report's cost section: one line per mode (period and month) and the
 * cheapest mode. `cost` is the object made by kdsim_cost_json(). */
void kdsim_cost_text(const json_t *cost, FILE *out);

/* `kdsim cost`: the comparison, the sizing rule, and every mode's line items with
 * their arithmetic (quantity x unit price = dollars), period and month side by side,
 * then the assumptions. */
void kdsim_cost_text_detail(const json_t *cost, FILE *out);

/* The shards that mode `md` of `cost` bills for the period, written to *shards: its
 * `shards` for a fixed count, or the average of the shard-hours its first line item
 * bills when the run resharded or grew (then it returns true; false otherwise, and
 * for modes without shards). */
bool kdsim_cost_shards_billed(const json_t *cost, const json_t *md, double *shards);

#endif
