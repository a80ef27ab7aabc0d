/* html.c - the self-contained HTML report, DIR/report.html (html.h). Everything on
 * the page comes from the JSON report and from the SVG files gnuplot drew. */
#include "html.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "outdir.h"
#include "report_int.h"
#include "sim_err.h"
#include "sim_units.h"

/* ---- text ------------------------------------------------------------------------- */

/* Write s with the five characters that HTML gives a meaning escaped. */
static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* An integer with thousands separators: 1,234,567. */
static const char *grouped(char *buf, size_t n, uint64_t v)
{
    char raw[32];
    int len = snprintf(raw, sizeof raw, "%" PRIu64, v);
    size_t k = 0;
    for (int i = 0; i < len && k + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = raw[i];
    }
    buf[k] = 0;
    return buf;
}

/* A real with `dec` (0 to 6) decimals and thousands separators; "-" when not finite. */
static const char *real(char *buf, size_t n, double x, int dec)
{
    if (!isfinite(x) || fabs(x) > 1e15) {
        snprintf(buf, n, isfinite(x) ? "%.6g" : "-", x);
        return buf;
    }
    dec = dec < 0 ? 0 : dec > 6 ? 6 : dec;
    uint64_t scale = 1;
    for (int i = 0; i < dec; i++)
        scale *= 10;
    uint64_t v = (uint64_t)llround(fabs(x) * (double)scale);
    char g[40];
    grouped(g, sizeof g, v / scale);
    if (dec > 0)
        snprintf(buf, n, "%s%s.%0*" PRIu64, x < 0 && v ? "-" : "", g, dec, v % scale);
    else
        snprintf(buf, n, "%s%s", x < 0 && v ? "-" : "", g);
    return buf;
}

/* ---- inline SVG ------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, k;
    do {
        if (cap - n < 65536) {
            cap = cap ? 2 * cap : 262144;
            char *b = realloc(buf, cap + 1);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        k = fread(buf + n, 1, cap - n, f);
        n += k;
    } while (k > 0);
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static bool starts(const char *p, const char *s)
{
    return strncmp(p, s, strlen(s)) == 0;
}

/* The ids seen so far in one SVG. */
typedef struct idset {
    char **v; /* owned strings */
    size_t n;
} idset;

static void inline_svg_ids(FILE *out, const char *svg, const char *prefix, const char *label,
                           idset *ids)
{
    const char *p = strstr(svg, "<svg");
    if (!p)
        return;
    fputs("<svg role=\"img\" aria-label=\"", out);
    esc(out, label);
    fputc('"', out);
    p += 4;
    while (*p) {
        if (starts(p, " xmlns")) { /* drop the attribute: name="value" */
            const char *q = strchr(p, '=');
            if (q && (q[1] == '"' || q[1] == '\'')) {
                const char *e = strchr(q + 2, q[1]);
                if (e) {
                    p = e + 1;
                    continue;
                }
            }
        }
        if (starts(p, " id='") || starts(p, " id=\"")) {
            fputc(*p++, out);
            const char *v = p + 4, *e = strchr(v, p[3]);
            if (e) {
                /* gnuplot repeats some ids (gnuplot_plot_1 for a curve and its key
                 * entry): later copies get a number, references keep the first. */
                size_t len = (size_t)(e - v), again = 0;
                for (size_t i = 0; i < ids->n; i++)
                    again += strlen(ids->v[i]) == len && !strncmp(ids->v[i], v, len);
                fprintf(out, "id=%c%s-%.*s", p[3], prefix, (int)len, v);
                if (again)
                    fprintf(out, "-%zu", again + 1);
                fputc(p[3], out);
                char **grown = realloc(ids->v, (ids->n + 1) * sizeof *grown);
                char *copy = strndup(v, len);
                if (grown)
                    ids->v = grown;
                if (grown && copy)
                    ids->v[ids->n++] = copy;
                else
                    free(copy);
                p = e + 1;
                continue;
            }
        }
        if (starts(p, "href='#") || starts(p, "href=\"#")) {
            fwrite(p, 1, 7, out);
            fprintf(out, "%s-", prefix);
            p += 7;
            continue;
        }
        if (starts(p, "url(#")) {
            fprintf(out, "url(#%s-", prefix);
            p += 5;
            continue;
        }
        fputc(*p++, out);
    }
    fputc('\n', out);
}

/* Copy gnuplot's SVG into the page. Inline SVG needs no XML prolog and no namespace
 * declarations (the HTML parser supplies them), and the ids gnuplot gives its markers
 * ("gpPt1") are the same in every plot, so each plot's ids get its own prefix. */
static void inline_svg(FILE *out, const char *svg, const char *prefix, const char *label)
{
    idset ids = {NULL, 0};
    inline_svg_ids(out, svg, prefix, label, &ids);
    for (size_t i = 0; i < ids.n; i++)
        free(ids.v[i]);
    free(ids.v);
}

/* ---- page parts ------------------------------------------------------------------- */

static const char CSS[] =
    "body{font-family:system-ui,'DejaVu Sans','Liberation Sans',Arial,sans-serif;margin:0;"
    "color:#1d2430;background:#f6f7f9;line-height:1.45}\n"
    "main{max-width:1100px;margin:0 auto;padding:1.5em 1.5em 3em}\n"
    "h1{font-size:1.7em;margin:.2em 0}h2{border-bottom:2px solid #d5dae2;padding-bottom:.2em;"
    "margin-top:2em}h3{margin-top:1.5em}\n"
    ".meta{color:#5a6475}\n"
    ".desc{background:#fff;border-left:4px solid #1f5fbf;padding:.8em 1.2em;"
    "white-space:pre-line}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:.8em}\n"
    ".card{background:#fff;border:1px solid #d5dae2;border-radius:6px;padding:.7em .9em}\n"
    ".card .v{font-size:1.35em;font-weight:600}.card .k{color:#5a6475;font-size:.9em}\n"
    ".card.bad .v{color:#b02a1a}\n"
    "table{border-collapse:collapse;background:#fff;margin:.5em 0;font-size:.9em}\n"
    "th,td{border:1px solid #d5dae2;padding:.25em .6em;text-align:right;vertical-align:top}\n"
    "th{background:#eef1f5}td.t,th.t{text-align:left}td.t{white-space:nowrap}\n"
    "caption{text-align:left;font-weight:600;padding:.3em 0}\n"
    ".scroll{overflow-x:auto}\n"
    "figure{background:#fff;border:1px solid #d5dae2;border-radius:6px;margin:1em 0;"
    "padding:.6em}\n"
    "figure svg{display:block;width:100%;height:auto}\n"
    "figure svg text,figure svg tspan{font-family:'DejaVu Sans','Liberation Sans',Arial,"
    "sans-serif}\n"
    "figcaption{color:#5a6475;font-size:.9em}\n"
    "nav a{margin-right:1em}\n"
    "ul.assume li{margin:.3em 0}\n"
    "code{background:#eef1f5;padding:0 .2em}\n";

static void card(FILE *f, const char *value, const char *what, bool bad)
{
    fprintf(f, "<div class=\"card%s\"><div class=\"v\">", bad ? " bad" : "");
    esc(f, value);
    fputs("</div><div class=\"k\">", f);
    esc(f, what);
    fputs("</div></div>\n", f);
}

static void key_figures(FILE *f, const json_t *r)
{
    const json_t *st = json_object_get(r, "stream");
    double secs = jr(r, "duration_s");
    char b[64], w[200];
    uint64_t in = ju(st, "records_in"), thr = ju(st, "write_throttled_records");
    fputs("<section id=\"figures\"><h2>Key figures</h2>\n<div class=\"cards\">\n", f);
    card(f, grouped(b, sizeof b, in), "records written", false);
    card(f, real(b, sizeof b, secs > 0 ? (double)in / secs : 0, 1), "records/s written on average",
         false);
    card(f, real(b, sizeof b, jr(st, "peak_records_per_s"), 0), "records/s at the busiest second",
         false);
    snprintf(w, sizeof w, "records write-throttled (%.2f %% of the writes offered)",
             in + thr ? 100.0 * (double)thr / (double)(in + thr) : 0.0);
    card(f, grouped(b, sizeof b, thr), w, thr > 0);
    card(f, grouped(b, sizeof b, ju(st, "read_throttled_calls")), "GetRecords calls read-throttled",
         ju(st, "read_throttled_calls") > 0);
    snprintf(w, sizeof w, "open shards at the end (at most %s)",
             real(b, sizeof b, jr(json_object_get(st, "capacity"), "open_shards_max"), 0));
    card(f, grouped(b, sizeof b, ju(st, "open_shards")), w, false);
    uint64_t given_up = 0, dups = 0;
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(r, "producers"), i, p)
    {
        given_up += ju(p, "records_given_up");
        dups += ju(p, "duplicates_written");
    }
    card(f, grouped(b, sizeof b, given_up), "records the producers gave up on (lost)",
         given_up > 0);
    if (dups)
        card(f, grouped(b, sizeof b, dups), "duplicate records written (retried timeouts)", true);
    const json_t *c;
    json_array_foreach(json_object_get(r, "consumers"), i, c)
    {
        const json_t *l = json_object_get(c, "latency_ms");
        char v[64], p99[32];
        if (ju(c, "records_delivered") == 0)
            snprintf(v, sizeof v, "none delivered");
        else
            snprintf(v, sizeof v, "%s / %s ms", real(b, sizeof b, jr(l, "p50"), 0),
                     real(p99, sizeof p99, jr(l, "p99"), 0));
        snprintf(w, sizeof w, "%s: latency p50 / p99", js(c, "name"));
        card(f, v, w, false);
        uint64_t lost = ju(c, "records_expired_unread");
        if (lost) {
            snprintf(w, sizeof w, "%s: records expired unread (lost)", js(c, "name"));
            card(f, grouped(b, sizeof b, lost), w, true);
        }
    }
    const json_t *cost = json_object_get(r, "cost");
    if (cost) {
        const json_t *modes = json_object_get(cost, "modes");
        const char *mode = js(cost, "scenario_mode"), *cheap = js(cost, "cheapest_mode");
        const json_t *as_run = json_object_get(cost, "as_run");
        char v[64];
        snprintf(v, sizeof v, "$%s",
                 real(b, sizeof b,
                      jr(as_run ? as_run : json_object_get(modes, mode), "monthly_usd"), 2));
        if (as_run)
            snprintf(w, sizeof w, "a month as this scenario runs (as run, switching modes)");
        else
            snprintf(w, sizeof w, "a month as this scenario runs (%s)", mode);
        card(f, v, w, false);
        snprintf(v, sizeof v, "$%s",
                 real(b, sizeof b, jr(json_object_get(modes, cheap), "monthly_usd"), 2));
        snprintf(w, sizeof w, "a month in the cheapest mode (%s)", cheap);
        card(f, v, w, false);
    }
    fputs("</div></section>\n", f);
}

static void th(FILE *f, const char *const *cols)
{
    fputs("<tr>", f);
    for (size_t i = 0; cols[i]; i++)
        fprintf(f, "<th%s>%s</th>", i == 0 ? " class=\"t\"" : "", cols[i]);
    fputs("</tr>\n", f);
}

static void td_text(FILE *f, const char *s)
{
    fputs("<td class=\"t\">", f);
    esc(f, s);
    fputs("</td>", f);
}

static void td_u(FILE *f, uint64_t v)
{
    char b[40];
    fprintf(f, "<td>%s</td>", grouped(b, sizeof b, v));
}

static void td_r(FILE *f, double v, int dec)
{
    char b[48];
    fprintf(f, "<td>%s</td>", real(b, sizeof b, v, dec));
}

static void stream_tables(FILE *f, const json_t *r)
{
    const json_t *st = json_object_get(r, "stream");
    char b[64], d[64];
    fputs("<section id=\"stream\"><h2>Stream and shards</h2>\n<p>", f);
    esc(f, js(st, "name"));
    sim_fmt_bytes(b, sizeof b, ju(st, "bytes_in"));
    sim_fmt_duration(d, sizeof d, (sim_time)llround(jr(st, "retention_h") * 3600e9));
    fprintf(f, ": %s, %" PRIu64 " open shards at the end, retention %s, %s written.</p>\n",
            js(st, "mode"), ju(st, "open_shards"), d, b);
    static const char *const cols[] = {"shard", "state", "records in", "bytes in", "write thr.",
                                       "read calls", "read thr.", "records out", "expired",
                                       "parent", NULL};
    fputs("<div class=\"scroll\"><table>\n", f);
    th(f, cols);
    size_t i;
    const json_t *sh;
    json_array_foreach(json_object_get(st, "shards"), i, sh)
    {
        fputs("<tr>", f);
        td_text(f, js(sh, "shard_id"));
        td_text(f, js(sh, "state"));
        td_u(f, ju(sh, "records_in"));
        td_text(f, sim_fmt_bytes(b, sizeof b, ju(sh, "bytes_in")));
        td_u(f, ju(sh, "write_throttled_records"));
        td_u(f, ju(sh, "read_calls"));
        td_u(f, ju(sh, "read_throttled_calls"));
        td_u(f, ju(sh, "records_out"));
        td_u(f, ju(sh, "records_expired"));
        td_text(f, js(sh, "parent_shard_id"));
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);

    const json_t *ops = json_object_get(st, "reshards");
    if (json_array_size(ops) > 0) {
        static const char *const oc[] = {"requested (s)", "operation", "cause", "status",
                                         "completed (s)", "new shards", "message", NULL};
        fputs("<h3>Resharding</h3>\n<div class=\"scroll\"><table>\n", f);
        th(f, oc);
        const json_t *op;
        json_array_foreach(ops, i, op)
        {
            fputs("<tr>", f);
            td_r(f, jr(op, "requested_s"), 1);
            td_text(f, js(op, "operation"));
            td_text(f, js(op, "cause"));
            td_text(f, js(op, "status"));
            if (json_is_number(json_object_get(op, "completed_s")))
                td_r(f, jr(op, "completed_s"), 1);
            else
                td_text(f, "-");
            fputs("<td class=\"t\">", f);
            size_t k;
            const json_t *ch;
            json_array_foreach(json_object_get(op, "children"), k, ch)
            {
                if (k)
                    fputs(", ", f);
                esc(f, json_string_value(ch));
            }
            fputs("</td>", f);
            td_text(f, js(op, "message"));
            fputs("</tr>\n", f);
        }
        fputs("</table></div>\n", f);
    }
    const json_t *hot = json_object_get(st, "hot");
    const json_t *h;
    if (json_array_size(json_object_get(hot, "hottest_shards")) > 0) {
        static const char *const hc[] = {"hottest shards", "peak offered records/s", "at minute",
                                         "budget records/s", "write thr.", NULL};
        fputs("<h3>Hottest shards</h3>\n<table>\n", f);
        th(f, hc);
        json_array_foreach(json_object_get(hot, "hottest_shards"), i, h)
        {
            fputs("<tr>", f);
            td_text(f, js(h, "shard_id"));
            td_r(f, jr(h, "peak_offered_records_per_s"), 0);
            td_r(f, jr(h, "peak_minute"), 0);
            td_u(f, ju(h, "budget_records_per_s"));
            td_u(f, ju(h, "write_throttled_records"));
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    if (json_array_size(json_object_get(hot, "hot_keys")) > 0) {
        static const char *const kc[] = {"hot key", "producer", "shard", "offered records/s",
                                         "producer's write thr.", NULL};
        fputs("<table>\n", f);
        th(f, kc);
        json_array_foreach(json_object_get(hot, "hot_keys"), i, h)
        {
            fputs("<tr>", f);
            td_text(f, js(h, "key"));
            td_text(f, js(h, "producer"));
            td_text(f, js(h, "shard_id"));
            td_r(f, jr(h, "offered_records_per_s"), 0);
            td_u(f, ju(h, "producer_write_throttled_records"));
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    fputs("</section>\n", f);
}

static void producer_table(FILE *f, const json_t *r)
{
    static const char *const cols[] = {"producer", "API", "attempted", "written", "throttled",
                                       "failed (internal)", "given up", "duplicates", "retried",
                                       "calls", NULL};
    fputs("<section id=\"producers\"><h2>Producers</h2>\n<div class=\"scroll\"><table>\n", f);
    th(f, cols);
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(r, "producers"), i, p)
    {
        fputs("<tr>", f);
        td_text(f, js(p, "name"));
        td_text(f, js(p, "api"));
        td_u(f, ju(p, "records_attempted"));
        td_u(f, ju(p, "records_written"));
        td_u(f, ju(p, "write_throttled_records"));
        td_u(f, ju(p, "records_failed_internal"));
        td_u(f, ju(p, "records_given_up"));
        td_u(f, ju(p, "duplicates_written"));
        td_u(f, ju(p, "records_retried"));
        td_u(f, ju(p, "put_calls"));
        fputs("</tr>\n", f);
    }
    fputs("</table></div></section>\n", f);
}

/* An array of objects (a KCL application's workers) as a table of their scalar keys,
 * the first object's keys as columns; nothing if the array is empty or absent. */
static void scalar_table(FILE *f, const json_t *arr, const char *caption)
{
    const json_t *first = json_array_get(arr, 0);
    if (!json_is_object(first))
        return;
    fputs("<div class=\"scroll\"><table>\n<caption>", f);
    esc(f, caption);
    fputs("</caption>\n<tr>", f);
    const char *k;
    const json_t *v;
    bool col0 = true;
    json_object_foreach((json_t *)first, k, v)
    {
        if (json_is_array(v) || json_is_object(v))
            continue;
        fputs(col0 ? "<th class=\"t\">" : "<th>", f);
        esc(f, k);
        fputs("</th>", f);
        col0 = false;
    }
    fputs("</tr>\n", f);
    size_t i;
    const json_t *o;
    json_array_foreach(arr, i, o)
    {
        fputs("<tr>", f);
        json_object_foreach((json_t *)first, k, v)
        {
            if (json_is_array(v) || json_is_object(v))
                continue;
            const json_t *x = json_object_get(o, k);
            if (json_is_string(x))
                td_text(f, json_string_value(x));
            else if (json_is_integer(x) && json_integer_value(x) >= 0)
                td_u(f, (uint64_t)json_integer_value(x));
            else if (json_is_number(x))
                td_r(f, json_number_value(x), 3);
            else if (json_is_boolean(x))
                td_text(f, json_is_true(x) ? "yes" : "no");
            else
                td_text(f, "-");
        }
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

/* The files the scenario read besides itself (the JSON report's inputs: a replayed
 * trace), one line each as report.txt gives them: the key that named it and the file as
 * the scenario wrote it. Nothing when there are none. */
static void inputs(FILE *f, const json_t *r)
{
    size_t i;
    const json_t *in;
    json_array_foreach(json_object_get(r, "inputs"), i, in)
    {
        fputs("<p class=\"meta\">input <code>", f);
        esc(f, js(in, "key"));
        fputs("</code>: <code>", f);
        esc(f, js(in, "file"));
        fputs("</code></p>\n", f);
    }
}

/* A KCL application's lease table, its worker events and its lease moves: what the
 * KCL scenarios' descriptions ask the reader to look at (the JSON report's lease_table,
 * worker_events and lease_move_log; docs/consumers-kcl.md). Nothing for another kind. */
static void kcl_tables(FILE *f, const json_t *c)
{
    const json_t *lt = json_object_get(c, "lease_table");
    if (!json_is_object(lt))
        return;
    char b[48];
    /* A total the figures table above leaves out, as report.txt gives it: the records
     * processed after the last checkpoint of a lease that moved (replay_expected), next
     * to the duplicates the moves caused. */
    fprintf(f, "<p>Duplicates from failover %s",
            grouped(b, sizeof b, ju(c, "duplicates_from_failover")));
    fprintf(f, " (records processed after the last checkpoint: %s).</p>\n",
            grouped(b, sizeof b, ju(c, "replay_expected")));
    fputs("<p>Lease table <code>", f);
    esc(f, js(lt, "name"));
    fputs("</code>: ", f);
    if (json_is_integer(json_object_get(lt, "read_capacity")))
        fprintf(f, "provisioned, %" PRIu64 " read and %" PRIu64 " write capacity units",
                ju(lt, "read_capacity"), ju(lt, "write_capacity"));
    else
        esc(f, js(lt, "billing"));
    if (json_is_true(json_object_get(c, "lease_table_shared")))
        fputs(", shared with another application of this scenario", f);
    fprintf(f, "; %s read units", real(b, sizeof b, jr(lt, "read_units_consumed"), 1));
    fprintf(f, " and %s write units consumed",
            real(b, sizeof b, jr(lt, "write_units_consumed"), 1));
    fprintf(f, "; throttled: %s reads", grouped(b, sizeof b, ju(lt, "throttled_reads")));
    fprintf(f, ", %s writes.</p>\n", grouped(b, sizeof b, ju(lt, "throttled_writes")));
    const json_t *req = json_object_get(lt, "requests");
    if (json_object_size(req) > 0) {
        static const char *const cols[] = {"operation", "requests", "throttled",
                                           "condition failed", NULL};
        fputs("<div class=\"scroll\"><table>\n<caption>lease table requests by operation"
              "</caption>\n",
              f);
        th(f, cols);
        const char *op;
        const json_t *n;
        json_object_foreach((json_t *)req, op, n)
        {
            fputs("<tr>", f);
            td_text(f, op);
            td_u(f, ju(req, op));
            td_u(f, ju(json_object_get(lt, "throttled"), op));
            td_u(f, ju(json_object_get(lt, "condition_failed"), op));
            fputs("</tr>\n", f);
        }
        fputs("</table></div>\n", f);
    }
    scalar_table(f, json_object_get(c, "worker_events"),
                 "worker events (converged_after_s: until every lease was held by its "
                 "owner, a running worker, and the loads differed by at most one; - not by "
                 "the end)");
    scalar_table(f, json_object_get(c, "lease_move_log"),
                 json_is_true(json_object_get(c, "lease_move_log_truncated"))
                     ? "lease moves (the first 1,000; report.json counts them all)"
                     : "lease moves");
}

static void consumer_table(FILE *f, const json_t *r)
{
    const json_t *cs = json_object_get(r, "consumers");
    if (json_array_size(cs) == 0)
        return;
    static const char *const cols[] = {"consumer", "kind", "delivered", "duplicates",
                                       "expired unread", "unread at end", "mean ms", "p50 ms",
                                       "p90 ms", "p99 ms", "max ms", "iterator age max (ms)",
                                       "calls", "read thr.", NULL};
    fputs("<section id=\"consumers\"><h2>Consumers</h2>\n<p>Latency: from the record's write "
          "time (ApproximateArrivalTimestamp) to the end of its processing.</p>\n"
          "<div class=\"scroll\"><table>\n", f);
    th(f, cols);
    size_t i;
    const json_t *c;
    json_array_foreach(cs, i, c)
    {
        const json_t *l = json_object_get(c, "latency_ms");
        fputs("<tr>", f);
        td_text(f, js(c, "name"));
        td_text(f, js(c, "kind"));
        td_u(f, ju(c, "records_delivered"));
        td_u(f, ju(c, "duplicates_delivered"));
        td_u(f, ju(c, "records_expired_unread"));
        td_u(f, ju(c, "records_unread"));
        td_r(f, jr_nan(l, "mean"), 1);
        td_r(f, jr_nan(l, "p50"), 1);
        td_r(f, jr_nan(l, "p90"), 1);
        td_r(f, jr_nan(l, "p99"), 1);
        td_r(f, jr_nan(l, "max"), 1);
        td_r(f, jr_nan(c, "iterator_age_ms_max"), 0); /* "-": never read */
        td_u(f, ju(c, "getrecords_calls"));
        td_u(f, ju(c, "read_throttled_calls"));
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
    /* Kind-specific figures (Lambda, Firehose, Flink, ...), one small table each. */
    json_array_foreach(cs, i, c)
    {
        const json_t *fig = json_object_get(c, "figures");
        if (json_object_size(fig) == 0)
            continue;
        fputs("<h3>", f);
        esc(f, js(c, "name"));
        fputs(" (", f);
        esc(f, js(c, "kind"));
        fputs(")</h3>\n<table>\n", f);
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)fig, k, v)
        {
            fputs("<tr>", f);
            td_text(f, k);
            double x = json_is_number(v) ? json_number_value(v) : NAN; /* "-": null */
            td_r(f, x, isfinite(x) && fabs(x - round(x)) > 0 ? 3 : 0);
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
        scalar_table(f, json_object_get(c, "workers"), "workers (KCL)");
        kcl_tables(f, c);
    }
    fputs("</section>\n", f);
}

static void cost_tables(FILE *f, const json_t *r)
{
    const json_t *cost = json_object_get(r, "cost");
    if (!cost)
        return;
    const json_t *modes = json_object_get(cost, "modes");
    const json_t *pr = json_object_get(cost, "prices");
    char b[64];
    fputs("<section id=\"cost\"><h2>Cost</h2>\n<p>The stream's own bill in every capacity mode "
          "for the simulated period and for a month of ", f);
    fprintf(f, "%" PRIu64 " hours, at the prices of <code>", ju(cost, "month_h"));
    esc(f, js(pr, "file"));
    fputs("</code> (", f);
    esc(f, js(pr, "region"));
    fputs(", ", f);
    esc(f, js(pr, "as_of"));
    const json_t *as_run = json_object_get(cost, "as_run");
    if (as_run) {
        fprintf(f, "). The stream switched capacity mode %" PRIu64 " time%s and ended as <strong>",
                ju(as_run, "mode_switches"), ju(as_run, "mode_switches") == 1 ? "" : "s");
        esc(f, js(cost, "scenario_mode"));
        fputs("</strong>: its bill as run (each stretch in its own mode) is the <em>as run</em> "
              "row; each mode's row bills the whole run in that mode", f);
    } else {
        fputs("). The scenario runs as <strong>", f);
        esc(f, js(cost, "scenario_mode"));
        fputs("</strong>", f);
    }
    fputs("; the cheapest mode is <strong>", f);
    esc(f, js(cost, "cheapest_mode"));
    fputs("</strong>.</p>\n<table>\n", f);
    static const char *const cols[] = {"mode", "shards", "period (USD)", "month (USD)", NULL};
    th(f, cols);
    const char *key;
    const json_t *m;
    json_object_foreach((json_t *)modes, key, m)
    {
        fputs("<tr>", f);
        td_text(f, key);
        double avg;
        if (kdsim_cost_shards_billed(cost, m, &avg)) {
            char t[48];
            snprintf(t, sizeof t, "avg %.2f (resharded)", avg);
            td_text(f, t);
        } else if (json_object_get(m, "shards"))
            td_u(f, ju(m, "shards"));
        else
            td_text(f, "-");
        td_r(f, jr(m, "period_usd"), 2);
        td_r(f, jr(m, "monthly_usd"), 2);
        fputs("</tr>\n", f);
    }
    if (as_run) {
        fputs("<tr>", f);
        td_text(f, "as run");
        td_text(f, "-");
        td_r(f, jr(as_run, "period_usd"), 2);
        td_r(f, jr(as_run, "monthly_usd"), 2);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    static const char *const ic[] = {"line item", "unit", "USD per unit", "quantity",
                                      "period (USD)", "month quantity", "month (USD)", NULL};
    json_object_foreach((json_t *)modes, key, m)
    {
        fputs("<h3>", f);
        esc(f, key);
        fputs("</h3>\n<div class=\"scroll\"><table>\n", f);
        th(f, ic);
        size_t i;
        const json_t *it;
        json_array_foreach(json_object_get(m, "items"), i, it)
        {
            fputs("<tr>", f);
            td_text(f, js(it, "item"));
            td_text(f, js(it, "unit"));
            snprintf(b, sizeof b, "%.6g", jr(it, "unit_price_usd"));
            fprintf(f, "<td>%s</td>", b);
            snprintf(b, sizeof b, "%.6g", jr(it, "quantity"));
            fprintf(f, "<td>%s</td>", b);
            td_r(f, jr(it, "usd"), 2);
            snprintf(b, sizeof b, "%.6g", jr(it, "monthly_quantity"));
            fprintf(f, "<td>%s</td>", b);
            td_r(f, jr(it, "monthly_usd"), 2);
            fputs("</tr>\n", f);
        }
        fputs("</table></div>\n", f);
    }
    fputs("<ul class=\"assume\">\n", f);
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(cost, "assumptions"), i, a)
    {
        fputs("<li>", f);
        esc(f, json_string_value(a));
        fputs("</li>\n", f);
    }
    fputs("</ul></section>\n", f);
}

static void assumptions(FILE *f, const json_t *r)
{
    fputs("<section id=\"assumptions\"><h2>Assumptions</h2>\n<p>Numbers AWS does not "
          "publish, and simplifications of the model.</p>\n<ul class=\"assume\">\n", f);
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(r, "assumptions"), i, a)
    {
        fputs("<li><code>", f);
        esc(f, js(a, "setting"));
        fputs("</code> = ", f);
        esc(f, js(a, "value"));
        fputs(": ", f);
        esc(f, js(a, "why"));
        fputs("</li>\n", f);
    }
    fputs("</ul></section>\n", f);
}

static int plots_section(FILE *f, const kdsim_plots *p, const char *dir)
{
    fputs("<section id=\"plots\"><h2>Plots</h2>\n", f);
    size_t drawn = 0;
    for (size_t i = 0; i < p->n; i++)
        drawn += p->v[i].drawn;
    if (drawn == 0) {
        fputs("<p>No plots: ", f);
        fputs(p->gnuplot_found ? "gnuplot could not draw them (see the run's messages)"
                               : "gnuplot was not installed when this report was written "
                                 "(Debian: <code>apt-get install gnuplot-nox</code>)",
              f);
        fputs(". Their data and scripts are in <code>plots/</code>; "
              "<code>sh plots/plots.sh</code> draws them.</p>\n</section>\n", f);
        return 0;
    }
    const char *group = NULL;
    for (size_t i = 0; i < p->n; i++) {
        const kdsim_plot *pl = &p->v[i];
        if (!pl->drawn)
            continue;
        if (!group || strcmp(group, pl->group)) {
            group = pl->group;
            fputs("<h3>", f);
            esc(f, group);
            fputs("</h3>\n", f);
        }
        char path[4400];
        snprintf(path, sizeof path, "%s/plots/%s.svg", dir, pl->name);
        size_t len;
        char *svg = slurp(path, &len);
        if (!svg) {
            char sb[4600];
            fprintf(stderr, "kdsim: cannot read %s\n", kdsim_outdir_shown(path, sb, sizeof sb));
            return SIM_EIO;
        }
        char prefix[32];
        snprintf(prefix, sizeof prefix, "p%zu", i);
        fputs("<figure id=\"plot-", f);
        esc(f, pl->name);
        fputs("\">\n", f);
        inline_svg(f, svg, prefix, pl->title);
        free(svg);
        fputs("<figcaption>", f);
        esc(f, pl->title);
        fputs(" &middot; <a href=\"plots/", f);
        esc(f, pl->name);
        fputs(".png\">PNG</a> &middot; <a href=\"plots/", f);
        esc(f, pl->name);
        fputs(".svg\">SVG</a> &middot; data <a href=\"plots/", f);
        /* the data file is named in the plot's inputs: data='<file>' */
        const char *d = strstr(pl->vars, "data='");
        const char *e = d ? strchr(d + 6, '\'') : NULL;
        if (d && e)
            fprintf(f, "%.*s\">%.*s</a>", (int)(e - d - 6), d + 6, (int)(e - d - 6), d + 6);
        else
            fputs("\">-</a>", f);
        fputs("</figcaption>\n</figure>\n", f);
    }
    fputs("</section>\n", f);
    return 0;
}

int kdsim_html_render(const json_t *r, const kdsim_plots *plots, const char *dir, FILE *f)
{
    char dur[32];
    sim_fmt_duration(dur, sizeof dur, (sim_time)llround(jr(r, "duration_s") * 1e9));
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>kdsim: ", f);
    esc(f, js(r, "scenario"));
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", CSS);
    fputs("<header><h1>", f);
    esc(f, js(r, "scenario"));
    fputs("</h1>\n<p class=\"meta\">kdsim ", f);
    esc(f, js(r, "kdsim_version"));
    fprintf(f, " &middot; seed %" PRIu64 " &middot; %s simulated &middot; %" PRIu64
               " events</p>\n", ju(r, "seed"), dur, ju(r, "events"));
    inputs(f, r);
    fputs("<nav><a href=\"#figures\">Key figures</a><a href=\"#plots\">Plots</a>"
          "<a href=\"#stream\">Stream</a><a href=\"#producers\">Producers</a>"
          "<a href=\"#consumers\">Consumers</a><a href=\"#cost\">Cost</a>"
          "<a href=\"#assumptions\">Assumptions</a></nav>\n</header>\n", f);
    const char *desc = js(r, "description");
    if (*desc) {
        fputs("<section id=\"description\"><h2>What this scenario shows</h2>\n"
              "<p class=\"desc\">", f);
        esc(f, desc);
        fputs("</p></section>\n", f);
    }
    key_figures(f, r);
    int rc = plots_section(f, plots, dir);
    if (rc)
        return rc;
    stream_tables(f, r);
    producer_table(f, r);
    consumer_table(f, r);
    cost_tables(f, r);
    assumptions(f, r);
    fputs("<footer><p class=\"meta\">Every random draw comes from the master seed and each "
          "entity's name (generator ", f);
    esc(f, js(json_object_get(r, "random"), "generator"));
    fputs("): the same scenario and seed give the same report. The data behind this page: "
          "<a href=\"report.json\">report.json</a>, <a href=\"report.txt\">report.txt</a> and "
          "the CSV files beside it.</p></footer>\n</main>\n</body>\n</html>\n", f);
    return 0;
}

int kdsim_html_write_dir(const kds_world *w, const json_t *report, const char *dir)
{
    kdsim_plots plots;
    int rc = kdsim_plots_write(w, report, dir, &plots);
    if (!rc) {
        kdsim_afile a;
        rc = kdsim_aopen(&a, dir, "report.html");
        if (!rc) {
            rc = kdsim_html_render(report, &plots, dir, a.f);
            if (rc) {
                fclose(a.f);
                remove(a.tmp);
            } else {
                rc = kdsim_aclose(&a);
            }
        }
    }
    kdsim_plots_fini(&plots);
    return rc;
}
