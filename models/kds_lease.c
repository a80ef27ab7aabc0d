/* kds_lease.c - the DynamoDB lease table of kds_lease.h: items, conditional writes,
 * capacity and the owner registry. */
#include "kds_lease.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

void kds_lease_table_cfg_defaults(kds_lease_table_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->billing = KDS_LEASE_ON_DEMAND;
    cfg->rcu = 10;
    cfg->wcu = 10;
    cfg->burst_s = 300.0;
    cfg->item_bytes = 300;
    cfg->series_limit = SIM_SERIES_LIMIT;
}

const char *kds_ckpt_kind_name(kds_ckpt_kind k)
{
    static const char *const names[] = {"TRIM_HORIZON", "LATEST", "AT_TIMESTAMP", "SEQUENCE",
                                        "SHARD_END"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

const char *kds_ddb_op_name(kds_ddb_op op)
{
    static const char *const names[] = {"scan",   "get",    "renew",  "take",
                                        "checkpoint", "create", "delete", "query",
                                        "assign", "worker_metrics", "leader_lock"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* One capacity unit in milli-units, the unit of the counts and of every charge (all of
 * them whole halves of a unit). */
#define MILLI UINT64_C(1000)

/* The buckets count in two-thousandths of a unit (a charge of `milli` is milli / 2 of
 * them), so that DynamoDB's largest table, 40,000 units with 300 s of burst, fits in a
 * bucket (KDS_BUCKET_MAX). A request is admitted while the bucket holds at least one:
 * "any capacity left", to 0.002 of a unit. */
#define PER_UNIT UINT64_C(500)

_Static_assert((uint64_t)KDS_LEASE_MAX_UNITS * PER_UNIT * KDS_LEASE_MAX_BURST_S <=
                   KDS_BUCKET_MAX,
               "the largest table's burst must fit in a bucket");

/* A bucket one second of capacity deep, or `burst_s` seconds when more. */
static void bucket_init(kds_bucket *b, uint32_t units_per_s, double burst_s, sim_time now)
{
    uint64_t rate = (uint64_t)units_per_s * PER_UNIT;
    double d = floor((double)rate * (burst_s > 1.0 ? burst_s : 1.0));
    uint64_t depth = d < (double)PER_UNIT ? PER_UNIT : (uint64_t)d;
    kds_bucket_init(b, rate, depth, now);
}

kds_lease_table *kds_lease_table_new(sim *s, const char *name, const kds_lease_table_cfg *cfg)
{
    kds_lease_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cfg = *cfg;
    t->name = name;
    t->sim = s;
    t->refs = 1;
    t->leader = -1;
    sim_time now = sim_now(s);
    bucket_init(&t->rbucket, cfg->rcu, cfg->burst_s, now);
    bucket_init(&t->wbucket, cfg->wcu, cfg->burst_s, now);
    sim_series_init(&t->st.read_units_min, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&t->st.write_units_min, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&t->st.throttled_min, SIM_MIN(1), SIM_SERIES_SUM);
    size_t limit = cfg->series_limit ? cfg->series_limit : SIM_SERIES_LIMIT;
    sim_series_set_limit(&t->st.read_units_min, limit);
    sim_series_set_limit(&t->st.write_units_min, limit);
    sim_series_set_limit(&t->st.throttled_min, limit);
    return t;
}

void kds_lease_table_ref(kds_lease_table *t)
{
    t->refs++;
}

void kds_lease_table_unref(kds_lease_table *t)
{
    if (!t || --t->refs > 0)
        return;
    free(t->items);
    free(t->by_shard);
    free(t->owners);
    sim_series_fini(&t->st.read_units_min);
    sim_series_fini(&t->st.write_units_min);
    sim_series_fini(&t->st.throttled_min);
    free(t);
}

int32_t kds_lease_find(const kds_lease_table *t, uint32_t shard)
{
    if (shard >= t->n_by_shard)
        return -1;
    int32_t i = t->by_shard[shard];
    return i >= 0 && !t->items[i].deleted ? i : -1;
}

/* Admit one request of `milli` capacity milli-units of kind `op`: on-demand always;
 * provisioned while the bucket holds capacity, charging it in full. Counts it. */
static bool admit(kds_lease_table *t, kds_ddb_op op, bool write, uint64_t milli)
{
    sim_time now = sim_now(t->sim);
    t->st.requests[op]++;
    if (t->cfg.billing == KDS_LEASE_PROVISIONED) {
        kds_bucket *b = write ? &t->wbucket : &t->rbucket;
        if (kds_bucket_avail(b, now) == 0) {
            t->st.throttled[op]++;
            if (write)
                t->st.throttled_writes++;
            else
                t->st.throttled_reads++;
            sim_series_add(&t->st.throttled_min, now, 1);
            return false;
        }
        kds_bucket_charge(b, now, milli * PER_UNIT / MILLI);
    }
    if (write) {
        t->st.write_milli += milli;
        sim_series_add(&t->st.write_units_min, now, (double)milli / 1000.0);
    } else {
        t->st.read_milli += milli;
        sim_series_add(&t->st.read_units_min, now, (double)milli / 1000.0);
    }
    return true;
}

/* Units of an item of `size` bytes in blocks of `block` bytes, at least one. */
static uint64_t blocks(uint64_t size, uint64_t block)
{
    uint64_t n = (size + block - 1) / block;
    return n ? n : 1;
}

/* A write: one unit per KB of the item; a strongly consistent read: one per 4 KB. */
static uint64_t write_cost(const kds_lease_table *t)
{
    return blocks(t->cfg.item_bytes, 1024) * MILLI;
}

static uint64_t get_cost(const kds_lease_table *t)
{
    return blocks(t->cfg.item_bytes, 4096) * MILLI;
}

kds_ddb_status kds_lease_create(kds_lease_table *t, uint32_t shard, int32_t p0, int32_t p1,
                                kds_ckpt_kind ckpt, sim_time ckpt_time, int32_t *index)
{
    if (!admit(t, KDS_DDB_CREATE, true, write_cost(t)))
        return KDS_DDB_THROTTLED;
    if (kds_lease_find(t, shard) >= 0) {
        t->st.cond_failed[KDS_DDB_CREATE]++;
        return KDS_DDB_CONDITION_FAILED;
    }
    if (shard >= t->n_by_shard) {
        size_t n = t->n_by_shard ? t->n_by_shard : 8;
        while (n <= shard)
            n *= 2;
        int32_t *nb = realloc(t->by_shard, n * sizeof *nb);
        SIM_ASSERT(nb != NULL);
        for (size_t i = t->n_by_shard; i < n; i++)
            nb[i] = -1;
        t->by_shard = nb;
        t->n_by_shard = n;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->items = realloc(t->items, t->cap * sizeof *t->items);
        SIM_ASSERT(t->items != NULL);
    }
    kds_lease *l = &t->items[t->n];
    memset(l, 0, sizeof *l);
    l->shard = shard;
    l->owner = -1;
    l->ckpt_owner = -1;
    l->throughput = -1;
    l->moved_from = -1;
    l->counter = 0;
    l->counter_at = sim_now(t->sim);
    l->ckpt = ckpt;
    l->ckpt_time = ckpt_time;
    l->parents[0] = p0;
    l->parents[1] = p1;
    l->created = sim_now(t->sim);
    t->by_shard[shard] = (int32_t)t->n;
    if (index)
        *index = (int32_t)t->n;
    t->n++;
    t->n_live++;
    t->version++;
    return KDS_DDB_OK;
}

kds_ddb_status kds_lease_scan(kds_lease_table *t)
{
    /* Eventually consistent: half a unit per 4 KB of items scanned, at least half a
     * unit for an empty table. */
    uint64_t bytes = (uint64_t)t->n_live * t->cfg.item_bytes;
    return admit(t, KDS_DDB_SCAN, false, blocks(bytes, 4096) * MILLI / 2) ? KDS_DDB_OK
                                                                          : KDS_DDB_THROTTLED;
}

kds_ddb_status kds_lease_scan_one(kds_lease_table *t)
{
    return admit(t, KDS_DDB_SCAN, false, MILLI / 2) ? KDS_DDB_OK : KDS_DDB_THROTTLED;
}

kds_ddb_status kds_lease_get(kds_lease_table *t, size_t i)
{
    (void)i;
    return admit(t, KDS_DDB_GET, false, get_cost(t)) ? KDS_DDB_OK : KDS_DDB_THROTTLED;
}

/* The common part of the conditional UpdateItems: admission and the counter check. */
static kds_ddb_status update(kds_lease_table *t, kds_ddb_op op, size_t i, uint64_t expected)
{
    SIM_ASSERT(i < t->n);
    if (!admit(t, op, true, write_cost(t)))
        return KDS_DDB_THROTTLED;
    const kds_lease *l = &t->items[i];
    if (l->deleted || l->counter != expected) {
        t->st.cond_failed[op]++;
        return KDS_DDB_CONDITION_FAILED;
    }
    return KDS_DDB_OK;
}

kds_ddb_status kds_lease_renew(kds_lease_table *t, size_t i, uint64_t expected,
                               int32_t ckpt_owner)
{
    kds_ddb_status r = update(t, KDS_DDB_RENEW, i, expected);
    if (r == KDS_DDB_OK && t->items[i].ckpt_owner != ckpt_owner) {
        /* A handoff started (or ended) since the renewer last looked. */
        t->st.cond_failed[KDS_DDB_RENEW]++;
        return KDS_DDB_CONDITION_FAILED;
    }
    if (r == KDS_DDB_OK) {
        t->items[i].counter++;
        t->items[i].counter_at = sim_now(t->sim);
    }
    return r;
}

kds_ddb_status kds_lease_take(kds_lease_table *t, size_t i, uint64_t expected, int32_t owner)
{
    kds_ddb_status r = update(t, KDS_DDB_TAKE, i, expected);
    if (r == KDS_DDB_OK) {
        kds_lease *l = &t->items[i];
        /* getDynamoTakeLeaseUpdate: a switch from another owner, not the take of an
         * unowned lease. */
        if (l->owner >= 0 && l->owner != owner)
            l->owner_switches++;
        l->owner = owner;
        l->counter++;
        l->counter_at = sim_now(t->sim);
        t->version++;
    }
    return r;
}

kds_ddb_status kds_lease_checkpoint(kds_lease_table *t, size_t i, uint64_t expected,
                                    kds_ckpt_kind kind, uint64_t pos)
{
    kds_ddb_status r = update(t, KDS_DDB_CHECKPOINT, i, expected);
    if (r == KDS_DDB_OK) {
        kds_lease *l = &t->items[i];
        l->ckpt = kind;
        l->ckpt_pos = pos;
        l->owner_switches = 0;
        l->counter++;
        l->counter_at = sim_now(t->sim);
    }
    return r;
}

kds_ddb_status kds_lease_delete(kds_lease_table *t, size_t i)
{
    SIM_ASSERT(i < t->n);
    if (!admit(t, KDS_DDB_DELETE, true, write_cost(t)))
        return KDS_DDB_THROTTLED;
    kds_lease *l = &t->items[i];
    if (l->deleted) {
        t->st.cond_failed[KDS_DDB_DELETE]++;
        return KDS_DDB_CONDITION_FAILED;
    }
    l->deleted = true;
    l->owner = -1;
    t->n_live--;
    while (t->first_live < t->n && t->items[t->first_live].deleted)
        t->first_live++;
    t->version++;
    return KDS_DDB_OK;
}

kds_ddb_status kds_lease_query(kds_lease_table *t, int32_t owner)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += !t->items[i].deleted && t->items[i].owner == owner;
    /* Eventually consistent, as the scan: half a unit per 4 KB, at least half a unit. */
    return admit(t, KDS_DDB_QUERY, false, blocks(n * KDS_LEASE_KEY_BYTES, 4096) * MILLI / 2)
               ? KDS_DDB_OK
               : KDS_DDB_THROTTLED;
}

/* A leader's write moving lease `i` to `to`, conditional on its owner being `expected`
 * and, for a handoff, on no handoff in progress (what the leader read). An assignment
 * increments the counter (the old owner's next renewal fails) and ends any handoff; a
 * handoff leaves the counter and names the old owner checkpointOwner. */
static kds_ddb_status leader_write(kds_lease_table *t, size_t i, int32_t expected, int32_t to,
                                   int cause, bool handoff)
{
    SIM_ASSERT(i < t->n);
    if (!admit(t, KDS_DDB_ASSIGN, true, write_cost(t)))
        return KDS_DDB_THROTTLED;
    kds_lease *l = &t->items[i];
    if (l->deleted || l->owner != expected || (handoff && l->ckpt_owner >= 0)) {
        t->st.cond_failed[KDS_DDB_ASSIGN]++;
        return KDS_DDB_CONDITION_FAILED;
    }
    /* An assignment counts a switch as a take does (and the KCL 3.x serializer also when
     * it gives the lease back to its checkpointOwner); a handoff's start writes only the
     * two owners (initiateGracefulLeaseHandoff). */
    bool from_other = l->owner >= 0 && l->owner != to;
    if (!handoff && (from_other || (l->ckpt_owner >= 0 && l->ckpt_owner == to)))
        l->owner_switches++;
    /* Mid-handoff, the worker still holding the lease is its checkpointOwner, not the
     * owner named to take it next: an assignment that ends the handoff moves it from the
     * former. */
    l->moved_from = !handoff && l->ckpt_owner >= 0 ? l->ckpt_owner : l->owner;
    l->moved_renewing = kds_lease_renewing(t, i, l->moved_from);
    l->move_cause = cause;
    l->ckpt_owner = handoff ? l->owner : -1;
    l->owner = to;
    if (!handoff) {
        l->counter++;
        l->counter_at = sim_now(t->sim);
    }
    t->version++;
    return KDS_DDB_OK;
}

kds_ddb_status kds_lease_assign(kds_lease_table *t, size_t i, int32_t expected, int32_t owner,
                                int cause)
{
    return leader_write(t, i, expected, owner, cause, false);
}

kds_ddb_status kds_lease_handoff(kds_lease_table *t, size_t i, int32_t from, int32_t to,
                                 int cause)
{
    return leader_write(t, i, from, to, cause, true);
}

kds_ddb_status kds_lease_transfer(kds_lease_table *t, size_t i, uint64_t expected, int32_t me)
{
    SIM_ASSERT(i < t->n);
    if (!admit(t, KDS_DDB_ASSIGN, true, write_cost(t)))
        return KDS_DDB_THROTTLED;
    kds_lease *l = &t->items[i];
    if (l->deleted || l->counter != expected || l->ckpt_owner != me) {
        t->st.cond_failed[KDS_DDB_ASSIGN]++;
        return KDS_DDB_CONDITION_FAILED;
    }
    l->ckpt_owner = -1;
    l->counter++;
    l->counter_at = sim_now(t->sim);
    t->version++;
    return KDS_DDB_OK;
}

/* A request to an on-demand side table: counted, never throttled, no lease-table
 * capacity. */
static void side_request(kds_lease_table *t, kds_ddb_op op)
{
    t->st.requests[op]++;
}

void kds_lease_metrics_write(kds_lease_table *t, int32_t id, double value)
{
    SIM_ASSERT(id >= 0 && (size_t)id < t->n_owners);
    side_request(t, KDS_DDB_METRICS);
    t->owners[id].metrics_at = sim_now(t->sim);
    t->owners[id].metric = value;
}

void kds_lease_metrics_read(kds_lease_table *t)
{
    side_request(t, KDS_DDB_METRICS);
}

bool kds_lease_lock(kds_lease_table *t, int32_t id, sim_time lease)
{
    sim_time now = sim_now(t->sim);
    side_request(t, KDS_DDB_LOCK);
    if (t->leader == id || t->leader < 0 || now - t->leader_beat > lease) {
        t->leader = id;
        t->leader_beat = now;
    }
    return t->leader == id;
}

void kds_lease_unlock(kds_lease_table *t, int32_t id)
{
    if (t->leader != id)
        return;
    side_request(t, KDS_DDB_LOCK);
    t->leader = -1;
}

int32_t kds_lease_owner_add(kds_lease_table *t, const char *app, const char *worker,
                            uint32_t incarnation)
{
    if (t->n_owners == t->cap_owners) {
        size_t ncap = t->cap_owners ? t->cap_owners * 2 : 8;
        kds_lease_owner *no = realloc(t->owners, ncap * sizeof *no);
        if (!no)
            return -1;
        t->owners = no;
        t->cap_owners = ncap;
    }
    t->owners[t->n_owners] =
        (kds_lease_owner){worker, app, incarnation, KDS_OWNER_RUNNING, -1, -1, 0.0};
    t->version++;
    return (int32_t)t->n_owners++;
}

void kds_lease_owner_set(kds_lease_table *t, int32_t id, kds_owner_state state)
{
    SIM_ASSERT(id >= 0 && (size_t)id < t->n_owners);
    kds_lease_owner *o = &t->owners[id];
    if (o->state == KDS_OWNER_PAUSED && state == KDS_OWNER_RUNNING)
        o->resumed_at = sim_now(t->sim);
    o->state = state;
    t->version++;
}

bool kds_lease_renewing(const kds_lease_table *t, size_t i, int32_t owner)
{
    SIM_ASSERT(i < t->n);
    if (owner < 0)
        return false;
    SIM_ASSERT((size_t)owner < t->n_owners);
    const kds_lease_owner *o = &t->owners[owner];
    return o->state == KDS_OWNER_RUNNING && o->resumed_at <= t->items[i].counter_at;
}

void kds_lease_table_finish(kds_lease_table *t, sim_time end)
{
    sim_series_extend(&t->st.read_units_min, end);
    sim_series_extend(&t->st.write_units_min, end);
    sim_series_extend(&t->st.throttled_min, end);
}
