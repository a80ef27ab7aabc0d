/* html.h - DIR/report.html: the whole report of a run as one self-contained page.
 *
 * The page holds the scenario's description, the key figures, the tables (stream and
 * shards, resharding, producers, consumers, cost), the assumptions, and every plot of
 * DIR/plots as inline SVG. It needs no network: no external style sheet, script, font
 * or image (links to the PNG and SVG files beside it are relative). Every text taken
 * from the scenario or the report is HTML-escaped.
 */
#ifndef HTML_H
#define HTML_H

#include <stdio.h>

#include <jansson.h>

#include "kds_world.h"
#include "plots.h"

/* Write the page for `report` (the JSON tree) with the drawn plots of `plots` (their
 * SVG files read from dir/plots) to `out`. Returns 0, or SIM_EIO when a plot's SVG
 * cannot be read. */
int kdsim_html_render(const json_t *report, const kdsim_plots *plots, const char *dir, FILE *out);

/* The pictures of `--out DIR`: draw the plots (plots.h), then write DIR/report.html,
 * complete or not at all. Called once the JSON, text and CSV files are written.
 * Returns 0 (a missing gnuplot is a warning), SIM_EIO or SIM_ENOMEM. */
int kdsim_html_write_dir(const kds_world *w, const json_t *report, const char *dir);

#endif
