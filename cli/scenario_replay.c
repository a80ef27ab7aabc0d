/* scenario_replay.c - loading a producer's replayed trace (scenario_replay.h). */
#include "scenario_replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "kds_replay.h"
#include "scenario_int.h"
#include "sim_err.h"
#include "sim_rng.h"
#include "trace_csv.h"

static const char *const SPREADS[] = {"even", "poisson", NULL};

/* `rel` relative to the folder of `base` (the scenario file); malloc'd. */
static char *beside(const char *base, const char *rel)
{
    const char *slash = strrchr(base, '/');
    size_t dn = rel[0] == '/' || !slash ? 0 : (size_t)(slash - base) + 1, rn = strlen(rel);
    char *p = malloc(dn + rn + 1);
    SIM_ASSERT(p != NULL);
    memcpy(p, base, dn);
    memcpy(p + dn, rel, rn + 1);
    return p;
}

void kdsim_load_replay(kdsim_scenario *sc, ywalk *w, yaml_node_t *pm, yaml_node_t *n,
                       const char *kp, kds_rate *r)
{
    static const char *const keys[] = {"profile", "file", "within_minute", "scale", NULL};
    yw_check_keys(w, n, kp, keys);
    const char *file = NULL;
    int spread = KDS_REPLAY_EVEN;
    double scale = 1;
    yw_enum(w, n, kp, "within_minute", false, SPREADS, &spread);
    yw_double(w, n, kp, "scale", false, 1e-6, 1e6, &scale);
    *r = kds_rate_constant(0);
    if (!yw_str(w, n, kp, "file", true, &file))
        return;
    char *path = beside(sc->path, file);
    char fp[PATH];
    yw_path(fp, sizeof fp, kp, "file");
    /* A file that is not there is one error, at the key, with where it was looked for; a
     * file that is there has its own errors under its name (sorted after or before this
     * file's, so "above" would be a guess). */
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        yw_error(w, yw_get(w, n, "file"), fp, "cannot open the trace %s: %s%s", path,
                 strerror(errno),
                 file[0] == '/' ? "" : " (the path is relative to the scenario's folder)");
        free(path);
        return;
    }
    fclose(probe);
    kdsim_trace t;
    size_t before = w->g->n;
    if (kdsim_trace_read(path, &t, w->g) != 0) {
        size_t k = w->g->n - before;
        yw_error(w, yw_get(w, n, "file"), fp,
                 "cannot use the trace %s: it has %zu error%s, reported with its name", path,
                 k, k == 1 ? "" : "s");
        free(path);
        return;
    }
    /* A producer sends at most MAX_RATE records/s (README): the busiest minute, scaled,
     * must stay within it, or the run would try to make 1e15 records (or, past a
     * double's range, none). The error is at the key that makes it too much (the scale
     * when given, else the file) and names the minute's row. */
    double peak = t.busiest_records * scale / 60;
    if (!(peak <= MAX_RATE)) {
        yaml_node_t *sn = yw_get(w, n, "scale");
        char sp[PATH], by[96] = "";
        if (sn)
            snprintf(by, sizeof by, ", %.6g with %s: %g", t.busiest_records * scale,
                     yw_path(sp, sizeof sp, kp, "scale"), scale);
        yw_error(w, sn ? sn : yw_get(w, n, "file"), sn ? sp : fp,
                 "the trace's busiest minute (%s:%zu:%zu) has %.6g records%s, %.6g records/s; "
                 "a producer sends at most %.0f records/s",
                 path, t.busiest_line, t.busiest_col, t.busiest_records, by, peak, MAX_RATE);
        free(path);
        kdsim_trace_fini(&t);
        return;
    }
    kdsim_add_input(sc, yw_path(fp, sizeof fp, kp, "file"), file, path);
    free(path);
    /* MAX_RATE x 60 records a minute is well under the poisson spread's 2^32 - 1, which
     * kds_replay_build asserts. */
    _Static_assert((long long)MAX_RATE * 60 < 4294967295LL, "MAX_RATE a minute fits 32 bits");
    size_t slots = kds_replay_slots(t.n, (kds_replay_spread)spread);
    double *counts = kdsim_keep(sc, slots, sizeof *counts);
    /* cum holds the profile's running sums (slots + 1) and, one past them, the trace's
     * bytes per record (NaN without an IncomingBytes column) for `record_size: trace`:
     * a TABLE profile only ever comes from this loader. */
    double *cum = kdsim_keep(sc, slots + 2, sizeof *cum);
    gsl_rng *rng = NULL;
    if (spread == KDS_REPLAY_POISSON) {
        const char *name = NULL;
        yaml_node_t *nm = yw_get(w, pm, "name");
        if (nm && nm->type == YAML_SCALAR_NODE)
            name = (const char *)nm->data.scalar.value;
        char rn[PATH + 16];
        snprintf(rn, sizeof rn, "%s/replay", name ? name : kp);
        rng = kdsim_load_rng_new(sc, rn);
    }
    *r = kds_replay_build(t.records, t.n, scale, (kds_replay_spread)spread, rng, counts, cum);
    cum[slots + 1] = t.has_bytes && t.total_records > 0 ? t.total_bytes / t.total_records : NAN;
    gsl_rng_free(rng);
    kdsim_trace_fini(&t);
}

bool kdsim_replay_record_size(ywalk *w, yaml_node_t *pm, const char *path, const kds_rate *r,
                              sim_dist *size)
{
    yaml_node_t *n = yw_get(w, pm, "record_size");
    if (!n || n->type != YAML_SCALAR_NODE || strcmp((const char *)n->data.scalar.value, "trace"))
        return false;
    char kp[PATH];
    yw_path(kp, sizeof kp, path, "record_size");
    if (r->kind != KDS_RATE_TABLE) {
        /* A replay that failed to load leaves a constant 0 rate; its errors are out. */
        yaml_node_t *rate = yw_get(w, pm, "rate");
        yaml_node_t *prof =
            rate && rate->type == YAML_MAPPING_NODE ? yw_get(w, rate, "profile") : NULL;
        bool replay = prof && prof->type == YAML_SCALAR_NODE &&
                      !strcmp((const char *)prof->data.scalar.value, "replay");
        if (!replay)
            yw_error(w, n, kp,
                     "record_size: trace takes the size from a replayed trace; "
                     "it needs rate: {profile: replay, file: ...}");
        return true;
    }
    double per = r->cum[r->n_slots + 1];
    if (isnan(per)) {
        yw_error(w, n, kp,
                 "record_size: trace needs the trace's IncomingBytes column (and "
                 "some records); give a size instead, like record_size: 1 KiB");
        return true;
    }
    if (per > (double)(10 * KDS_MIB)) { /* past any stream's max_record_size, and past a uint64 */
        yw_error(w, n, kp,
                 "record_size: trace: the trace's IncomingBytes / IncomingRecords is %.6g B a "
                 "record, above the largest record a stream takes (10 MiB); check the trace's "
                 "columns or give a size instead, like record_size: 1 KiB",
                 per);
        return true;
    }
    *size = sim_dist_const(nearbyint(per) < 1 ? 1 : nearbyint(per));
    return true;
}
