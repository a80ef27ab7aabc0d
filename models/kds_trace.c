/* kds_trace.c - the event trace's filters and line format (kds_trace.h). */
#include "kds_trace.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "kds_stream.h"

const char *const kds_trace_kinds[] = {"put",    "get",        "push",    "reshard", "invoke",
                                       "s3",     "checkpoint", "failure", "lease",   NULL};

static bool in_list(const char *const *list, const char *s)
{
    if (!list)
        return true;
    for (size_t i = 0; list[i]; i++)
        if (s && strcmp(list[i], s) == 0)
            return true;
    return false;
}

/* Whether `entity` is one of the names, or, for "CONSUMER/WORKER" (a KCL worker),
 * whether either part is: a filter by the consumer keeps all its workers' lines. */
static bool names_match(const char *const *names, const char *entity)
{
    if (in_list(names, entity))
        return true;
    const char *slash = entity ? strchr(entity, '/') : NULL;
    if (!slash)
        return false;
    if (in_list(names, slash + 1))
        return true;
    size_t n = (size_t)(slash - entity);
    for (size_t i = 0; names[i]; i++)
        if (strlen(names[i]) == n && strncmp(names[i], entity, n) == 0)
            return true;
    return false;
}

bool kds_trace_wants(const kds_trace *t, const char *kind, const char *entity, int64_t shard)
{
    if (!t)
        return false;
    if (!in_list(t->kinds, kind))
        return false;
    if (t->names && !names_match(t->names, entity))
        return false;
    if (t->shard >= 0 && shard != t->shard)
        return false;
    return true;
}

/* The entity column's width: the run's longest name, at least KDS_TRACE_ENTITY_WIDTH. */
static int entity_width(const kds_trace *t)
{
    return t->entity_width > KDS_TRACE_ENTITY_WIDTH ? t->entity_width : KDS_TRACE_ENTITY_WIDTH;
}

void kds_trace_emit(kds_trace *t, sim_time now, const char *kind, const char *entity,
                    int64_t shard, const char *fmt, ...)
{
    if (!kds_trace_wants(t, kind, entity, shard))
        return;
    char sh[32];
    if (shard >= 0)
        snprintf(sh, sizeof sh, "shardId-%012" PRId64, shard);
    else
        snprintf(sh, sizeof sh, "-");
    int w = entity_width(t);
    fprintf(t->out, "%14.6f  %-10s %-*s %-20s ", sim_to_s(now), kind, w, entity ? entity : "-",
            sh);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(t->out, fmt, ap);
    va_end(ap);
    fputc('\n', t->out);
    t->lines++;
}

void kds_trace_header(kds_trace *t)
{
    int w = entity_width(t);
    fprintf(t->out, "%14s  %-10s %-*s %-20s %s\n", "time (s)", "kind", w, "entity", "shard",
            "what happened");
}

char *kds_trace_expired(char *buf, size_t n, uint64_t expired)
{
    if (expired > 0)
        snprintf(buf, n, " (%" PRIu64 " expired unread before them)", expired);
    else if (n > 0)
        buf[0] = '\0';
    return buf;
}

char *kds_trace_dur(char *buf, size_t n, sim_time d)
{
    if (d >= SIM_HOUR(2) && d % SIM_HOUR(1) == 0)
        snprintf(buf, n, "%" PRId64 " h", (int64_t)(d / SIM_HOUR(1)));
    else if (d >= SIM_MIN(2) && d % SIM_MIN(1) == 0)
        snprintf(buf, n, "%" PRId64 " min", (int64_t)(d / SIM_MIN(1)));
    else {
        char num[32];
        snprintf(num, sizeof num, "%.3f", sim_to_s(d));
        size_t len = strlen(num);
        while (len > 0 && num[len - 1] == '0')
            num[--len] = '\0';
        if (len > 0 && num[len - 1] == '.')
            num[--len] = '\0';
        snprintf(buf, n, "%s s", num);
    }
    return buf;
}

char *kds_trace_refresh(char *buf, size_t n, bool refreshed, sim_time ttl)
{
    char dur[32];
    if (refreshed)
        snprintf(buf, n,
                 "; its shard iterator had expired (unused for over %s): a new one first, one "
                 "more round trip",
                 kds_trace_dur(dur, sizeof dur, ttl));
    else if (n > 0)
        buf[0] = '\0';
    return buf;
}

const char *kds_trace_mode_words(int mode)
{
    switch (mode) {
    case KDS_MODE_PROVISIONED:
        return "Provisioned";
    case KDS_MODE_ON_DEMAND_STANDARD:
        return "On-demand Standard";
    case KDS_MODE_ON_DEMAND_ADVANTAGE:
        return "On-demand Advantage";
    }
    return "?";
}
