/* ydoc.h - YAML documents with positions, typed getters, and error collection.
 *
 * The scenario loader reads a YAML file with libyaml's document loader (every node
 * keeps its start mark), applies command-line overrides ("--set key.path=value"), and
 * walks the tree with the getters below. Every problem is collected as
 * `file:line:col: key.path: message` (1-based, GNU style) so that all errors of a file
 * are reported at once; nothing here prints until ydiag_print().
 */
#ifndef YDOC_H
#define YDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <yaml.h>

#include "sim.h"
#include "sim_dist.h"

/* ---- diagnostics ------------------------------------------------------------------ */

typedef struct ydiag_item {
    char *file; /* owned; the file named in the message, or "--set" for overrides */
    long line;  /* 1-based; 0 when the item has no position */
    long col;   /* 1-based; 0 when the item has no position */
    char *path; /* owned; key path such as "producers[1].rate", or "" */
    char *msg;  /* owned; lower-case message with the fix when there is one */
} ydiag_item;

typedef struct ydiag {
    ydiag_item *items; /* owned array */
    size_t n;          /* items in use */
    size_t cap;        /* items allocated */
} ydiag;

/* Make *g an empty list of errors; ydiag_fini frees what was added. Never fails. */
void ydiag_init(ydiag *g);
void ydiag_fini(ydiag *g); /* NULL-safe */

/* Add one error. `mark` may be NULL (no position). The message is printf-formatted.
 * Out of memory aborts (a diagnostic must never be lost silently). */
void ydiag_add(ydiag *g, const char *file, const yaml_mark_t *mark, const char *path,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Print every item as `prog: file:line:col: path: msg` sorted by (file order of
 * addition, line, column), one per line. Items without a position (an unreadable file,
 * --set) print first as `prog: file: path: msg`; ties keep the order of addition. */
void ydiag_print(const ydiag *g, FILE *out, const char *prog);

/* Drop every item that repeats an earlier one exactly (file, position, path and
 * message), keeping the first: for errors collected over several loads of one file, as
 * a sweep's points are. */
void ydiag_dedupe(ydiag *g);

/* What every command prints when its input (`file`, with the options applied to it) has
 * errors: each item as ydiag_print(g, out, "kdsim") does, then the summary line
 * `kdsim: N error(s) in FILE; nothing was run` (always: a failed load says so even if
 * it added no item). */
void ydiag_report(const ydiag *g, FILE *out, const char *file);

/* ---- documents -------------------------------------------------------------------- */

typedef struct ydoc {
    yaml_document_t doc; /* the loaded document (libyaml owns its nodes) */
    bool loaded;         /* doc is valid and must be deleted */
    char *file;          /* owned; the name used in messages */
} ydoc;

/* The deepest nesting of lists and mappings a YAML file may have: scenarios need about
 * six levels, and libyaml's scanner takes time quadratic in the depth. */
#define YDOC_MAX_DEPTH 64

/* Load the one document of a YAML file. Syntax errors, a second document (after a
 * `---`) and nesting deeper than YDOC_MAX_DEPTH go to `g` with their position; an
 * unreadable file is one item without position. Returns 0, or SIM_EIO / SIM_ESYNTAX
 * (SIM_ENOMEM if libyaml runs out of memory; the item is in g).
 * An empty file yields an empty mapping. On failure d holds nothing to free. */
int ydoc_load_file(ydoc *d, const char *path, ydiag *g);

/* The same from memory; `name` is used in messages. */
int ydoc_load_string(ydoc *d, const char *name, const char *text, size_t len, ydiag *g);

void ydoc_fini(ydoc *d); /* NULL-safe */

/* The root node (a mapping for every well-formed scenario), or NULL if empty. */
yaml_node_t *ydoc_root(ydoc *d);

/* Apply an override `key.path=value` (paths like "stream.shards",
 * "producers[0].rate", "consumers[1].idle"). Intermediate mappings and the final key
 * are created when missing; sequence indices must exist. The value is a plain YAML
 * scalar. The new node is remembered as coming from the command line, so errors about
 * it read `--set: key.path: message`. Returns 0 or SIM_EINVAL (an item in g).
 * Adding nodes may move libyaml's node array: apply every override before taking
 * yaml_node_t pointers from the document. */
int ydoc_set(ydoc *d, const char *assignment, ydiag *g);

/* The same for an override that comes from another option (`--seed 7` is applied as
 * ydoc_set_as(d, "--seed", "seed=7", g)): errors about it name that option instead of
 * --set. `origin` is copied. */
int ydoc_set_as(ydoc *d, const char *origin, const char *assignment, ydiag *g);

/* The same for an override written at line:col (1-based) of another file, as a sweep's
 * values are: errors about it are reported at `file:line:col:`. `file` is copied. */
int ydoc_set_at(ydoc *d, const char *file, long line, long col, const char *assignment,
                ydiag *g);

/* Apply one override in any of the forms the scenario loader takes (scenario.h):
 * "key.path=value" (from --set); "--OPT key.path=value", made by the option --OPT
 * (--seed, --duration, --prices or --vary; another --OPT counts as --set); or
 * "\x1fFILE\x1fLINE:COL\x1fkey.path=value", written at FILE:LINE:COL. Returns as
 * ydoc_set(). */
int ydoc_set_any(ydoc *d, const char *set, ydiag *g);

/* ---- walking ---------------------------------------------------------------------- */

/* A walking context: the document, where errors go, and the current key path. */
typedef struct ywalk {
    ydoc *d;
    ydiag *g;
} ywalk;

/* Report `fmt` at node n (its start mark) under `path`. */
void yw_error(ywalk *w, yaml_node_t *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Join a path and a key ("producers[1]" + "rate") into buf; returns buf. */
char *yw_path(char *buf, size_t n, const char *path, const char *key);
/* Join a path and an index ("producers" + 1 -> "producers[1]"); returns buf. */
char *yw_index(char *buf, size_t n, const char *path, size_t i);

/* True if n is a mapping; otherwise reports "expected a mapping" and returns false. */
bool yw_is_map(ywalk *w, yaml_node_t *n, const char *path);
/* True if n is a sequence; otherwise reports "expected a list" and returns false. */
bool yw_is_seq(ywalk *w, yaml_node_t *n, const char *path);

/* Report every key of mapping n that is not in the NULL-terminated `allowed` list,
 * with a did-you-mean suggestion when one allowed key is close (edit distance <= 2 or
 * a shared prefix), and every key given twice. Returns the number reported. */
int yw_check_keys(ywalk *w, yaml_node_t *n, const char *path, const char *const *allowed);

/* The value of `key` in mapping n, or NULL. */
yaml_node_t *yw_get(ywalk *w, yaml_node_t *map, const char *key);

/* Number of items in sequence n and item i (NULL when out of range). */
size_t yw_seq_len(ywalk *w, yaml_node_t *seq);
yaml_node_t *yw_seq_item(ywalk *w, yaml_node_t *seq, size_t i);

/* The text of scalar n, or NULL (reporting "expected a scalar") if n is not one. */
const char *yw_scalar(ywalk *w, yaml_node_t *n, const char *path);

/* Typed getters on map[key]. Each returns true when the key is present and valid,
 * false otherwise; when absent and `required`, it reports "missing required key";
 * when absent and optional, *out is left untouched (holding the caller's default).
 * Out-of-range values are reported with the accepted range and the unit. Text from
 * yw_str (and yw_scalar) is borrowed from the document, valid until ydoc_fini(). */
bool yw_str(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
            const char **out);
bool yw_bool(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
             bool *out);
bool yw_u64(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
            uint64_t lo, uint64_t hi, uint64_t *out);
bool yw_i64(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
            int64_t lo, int64_t hi, int64_t *out);
bool yw_double(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
               double lo, double hi, double *out);
bool yw_duration(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                 bool required, sim_time lo, sim_time hi, sim_time *out);
bool yw_bytes(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
              uint64_t lo, uint64_t hi, uint64_t *out);
bool yw_byte_rate(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                  bool required, double lo, double hi, double *out);
bool yw_count_rate(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                   bool required, const char *word, double lo, double hi, double *out);
/* One of the NULL-terminated `names`; *out is its index. */
bool yw_enum(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
             const char *const *names, int *out);

/* A distribution: either a scalar in the given unit ('d' duration -> value in ms,
 * 'b' size -> bytes, 'n' plain number) meaning a constant, or a mapping
 * {dist: const|uniform|exp|lognormal|normal|gamma|pareto, and the parameters of that
 * kind: value | min,max | mean | median,sigma | mean,stddev | mean,shape | min,alpha,
 * plus optional clamps min/max}, parameters in the same unit except the dimensionless
 * shapes sigma, shape and alpha (plain numbers). Checked with sim_dist_check(). */
bool yw_dist(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
             char unit, sim_dist *out);

#endif
