/* prices.h - price files and a scenario's `billing` settings.
 *
 * A price file (scenarios/prices/us-east-1-2026-09.yaml is the default) holds every unit
 * price of model.md section 9 as a plain decimal in US dollars: `region`, `as_of`, and
 * the sections provisioned, on_demand_standard, on_demand_advantage and s3_delivery
 * with the items of kds_price_list (kds_billing.h). Every item is required, unknown
 * items are refused with a did-you-mean, and every value is checked; problems are
 * collected as `file:line:col: key.path: message` like the scenario's.
 *
 * A scenario's optional `billing` mapping selects and adjusts the prices:
 *   billing:
 *     prices: PATH          # relative to the scenario's folder (default: the file
 *                           # above, in the kdsim source tree)
 *     month_hours: 720      # hours in the month of the monthly projection
 *     sizing_headroom: 0    # extra capacity for AWS's sizing rule, a fraction (0.2)
 *     overrides:            # prices that replace the file's, same layout
 *       provisioned: {shard_hour: 0.016}
 * `kdsim run|cost --prices FILE` replaces billing.prices (FILE relative to the current
 * folder); the scenario's overrides still apply.
 */
#ifndef PRICES_H
#define PRICES_H

#include <stddef.h>

#include "kds_billing.h"
#include "ydoc.h"

/* The longest accepted value: a price above $1,000 per unit is surely a typo, and the
 * bound keeps the billing arithmetic within 128 bits. */
#define KDSIM_PRICE_MAX (1000 * KDS_NANO_PER_UNIT)

typedef struct kdsim_billing {
    kds_prices prices;                 /* the price file's values, overrides applied */
    kds_billing_settings settings;     /* month_hours, sizing_headroom */
    char *file;                        /* owned: the price file's name (no folder), for
                                          reports; NULL until loaded */
    char *path;                        /* owned: the price file as opened, for the run's
                                          digest (provenance.h); NULL until loaded */
    char *region;                      /* owned: the file's `region` */
    char *as_of;                       /* owned: the file's `as_of` */
    const kds_price_desc **overridden; /* owned array: the entries the scenario overrode,
                                          in price-list order */
    size_t n_overridden;
} kdsim_billing;

/* Empty settings: default month and headroom, no prices. */
void kdsim_billing_init(kdsim_billing *b);
void kdsim_billing_fini(kdsim_billing *b); /* NULL-safe */

/* Parse a price as a plain decimal in units of 1e-9 ("0.014" -> 14,000,000): digits
 * with at most one '.', at most 9 decimal places, at most `max`. Returns 0, SIM_ESYNTAX
 * (not a plain decimal), SIM_ERANGE (above max) or SIM_ELIMIT (more decimals). */
int kdsim_parse_decimal(const char *text, kds_nano max, kds_nano *out);

/* Load the price file `path` (named `path` in messages) into `out`, `region` and
 * `as_of` (owned strings, may be NULL to ignore). Returns 0, or SIM_EIO / SIM_ESYNTAX /
 * SIM_EINVAL with every problem in `g`. */
int kdsim_prices_load(const char *path, kds_prices *out, char **region, char **as_of, ydiag *g);

/* The same from memory (`name` stands for the file in messages): for the fuzz target. */
int kdsim_prices_load_text(const char *name, const char *text, size_t len, kds_prices *out,
                           char **region, char **as_of, ydiag *g);

/* Read the scenario's `billing` mapping `node` (NULL when absent) walked with `w`,
 * whose file is `scenario_path`, into `b`, loading its price file (billing.prices
 * resolved against the scenario's folder unless absolute; the default file otherwise)
 * and applying the overrides. Every problem goes to w->g. Returns whether all went
 * well. */
bool kdsim_billing_load(ywalk *w, yaml_node_t *node, const char *scenario_path, kdsim_billing *b);

/* The default price file: the one in the source tree kdsim was built from. */
const char *kdsim_default_prices(void);

#endif
