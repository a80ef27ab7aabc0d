/* check_kds_lease.c - tests of the DynamoDB lease table (kds_lease.h): conditional
 * writes on leaseCounter (renew, take, checkpoint), ownerSwitchesSinceCheckpoint,
 * creation and deletion, the capacity each request consumes, provisioned read and
 * write capacity that throttles (with and without burst), on-demand that does not,
 * owners and whether one still renews a lease, the KCL 3.x leader's handoffs and
 * assignments, and shared references.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "kds_lease.h"
#include "testutil.h"

typedef struct fixture {
    sim *s;
    kds_lease_table *t;
} fixture;

/* A table at time 0 with `billing`, `wcu` and `rcu`, and no burst unless given. */
static void fx_init(fixture *f, kds_lease_billing billing, uint32_t rcu, uint32_t wcu,
                    double burst_s)
{
    f->s = sim_new(1);
    ck_assert_ptr_nonnull(f->s);
    kds_lease_table_cfg c;
    kds_lease_table_cfg_defaults(&c);
    c.billing = billing;
    c.rcu = rcu;
    c.wcu = wcu;
    c.burst_s = burst_s;
    f->t = kds_lease_table_new(f->s, "app", &c);
    ck_assert_ptr_nonnull(f->t);
}

static void fx_fini(fixture *f)
{
    kds_lease_table_unref(f->t);
    sim_free(f->s);
}

static void nop(sim *s, void *ctx)
{
    (void)s;
    (void)ctx;
}

/* Move the simulation's clock to t. */
static void advance(fixture *f, sim_time t)
{
    sim_at(f->s, t, nop, NULL);
    sim_run_until(f->s, t);
}

START_TEST(defaults)
{
    kds_lease_table_cfg c;
    kds_lease_table_cfg_defaults(&c);
    ck_assert_int_eq(c.billing, KDS_LEASE_ON_DEMAND); /* PAY_PER_REQUEST since 2.3.7 */
    ck_assert_uint_eq(c.rcu, 10);
    ck_assert_uint_eq(c.wcu, 10);
    ck_assert_double_eq(c.burst_s, 300.0);
}
END_TEST

START_TEST(conditional_writes)
{
    fixture f;
    fx_init(&f, KDS_LEASE_ON_DEMAND, 10, 10, 300);
    kds_lease_table *t = f.t;
    int32_t i = -1;
    ck_assert_int_eq(kds_lease_create(t, 3, -1, -1, KDS_CKPT_TRIM_HORIZON, 0, &i), KDS_DDB_OK);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(kds_lease_find(t, 3), 0);
    ck_assert_int_eq(kds_lease_find(t, 2), -1);
    ck_assert_int_eq(kds_lease_find(t, 999), -1);
    /* A second PutItem for the same shard fails its attribute_not_exists condition. */
    ck_assert_int_eq(kds_lease_create(t, 3, -1, -1, KDS_CKPT_LATEST, 0, NULL),
                     KDS_DDB_CONDITION_FAILED);
    ck_assert_int_eq(t->items[0].owner, -1);
    ck_assert_uint_eq(t->items[0].counter, 0);

    int32_t a = kds_lease_owner_add(t, "app", "a", 1), b = kds_lease_owner_add(t, "app", "b", 1);
    ck_assert_int_eq(a, 0);
    ck_assert_int_eq(b, 1);
    /* Take: counter 0 -> 1, owner a; no owner switch, the lease had no owner. */
    ck_assert_int_eq(kds_lease_take(t, 0, 0, a), KDS_DDB_OK);
    ck_assert_int_eq(t->items[0].owner, a);
    ck_assert_uint_eq(t->items[0].counter, 1);
    ck_assert_uint_eq(t->items[0].owner_switches, 0);
    /* Renew with the current counter; a stale counter fails. */
    ck_assert_int_eq(kds_lease_renew(t, 0, 1, -1), KDS_DDB_OK);
    ck_assert_uint_eq(t->items[0].counter, 2);
    ck_assert_int_eq(kds_lease_renew(t, 0, 1, -1), KDS_DDB_CONDITION_FAILED);
    ck_assert_uint_eq(t->items[0].counter, 2);
    /* b steals with what it saw (a switch from a): a's next renewal fails. */
    ck_assert_int_eq(kds_lease_take(t, 0, 2, b), KDS_DDB_OK);
    ck_assert_uint_eq(t->items[0].owner_switches, 1);
    ck_assert_int_eq(kds_lease_renew(t, 0, 2, -1), KDS_DDB_CONDITION_FAILED);
    /* b's checkpoint resets the switches and moves the counter; a's fails. */
    ck_assert_int_eq(kds_lease_checkpoint(t, 0, 2, KDS_CKPT_SEQUENCE, 42),
                     KDS_DDB_CONDITION_FAILED);
    ck_assert_int_eq(kds_lease_checkpoint(t, 0, 3, KDS_CKPT_SEQUENCE, 42), KDS_DDB_OK);
    ck_assert_int_eq(t->items[0].ckpt, KDS_CKPT_SEQUENCE);
    ck_assert_uint_eq(t->items[0].ckpt_pos, 42);
    ck_assert_uint_eq(t->items[0].owner_switches, 0);
    ck_assert_uint_eq(t->items[0].counter, 4);
    /* Re-taking one's own lease is not an owner switch. */
    ck_assert_int_eq(kds_lease_take(t, 0, 4, b), KDS_DDB_OK);
    ck_assert_uint_eq(t->items[0].owner_switches, 0);
    ck_assert_uint_eq(t->st.cond_failed[KDS_DDB_RENEW], 2);
    ck_assert_uint_eq(t->st.cond_failed[KDS_DDB_CHECKPOINT], 1);
    ck_assert_uint_eq(t->st.cond_failed[KDS_DDB_CREATE], 1);
    /* Delete: gone, writes to it fail, the shard can be found no more. */
    ck_assert_uint_eq(t->first_live, 0);
    ck_assert_int_eq(kds_lease_delete(t, 0), KDS_DDB_OK);
    ck_assert(t->items[0].deleted);
    ck_assert_uint_eq(t->n_live, 0);
    ck_assert_uint_eq(t->first_live, 1); /* loops over the live items skip it */
    ck_assert_int_eq(kds_lease_find(t, 3), -1);
    ck_assert_int_eq(kds_lease_renew(t, 0, 5, -1), KDS_DDB_CONDITION_FAILED);
    ck_assert_int_eq(kds_lease_delete(t, 0), KDS_DDB_CONDITION_FAILED);
    fx_fini(&f);
}
END_TEST

/* The KCL 3.x leader's writes: a handoff names the old owner checkpointOwner and leaves
 * the counter; a second handoff mid-way fails; an assignment ends it, increments the
 * counter, and moves the lease from the worker that still held it (the checkpointOwner),
 * not from the owner named to take it next. */
START_TEST(leader_writes)
{
    fixture f;
    fx_init(&f, KDS_LEASE_ON_DEMAND, 10, 10, 300);
    kds_lease_table *t = f.t;
    ck_assert_int_eq(kds_lease_create(t, 0, -1, -1, KDS_CKPT_TRIM_HORIZON, 0, NULL), KDS_DDB_OK);
    int32_t a = kds_lease_owner_add(t, "app", "a", 1), b = kds_lease_owner_add(t, "app", "b", 1),
            c = kds_lease_owner_add(t, "app", "c", 1);
    ck_assert_int_eq(kds_lease_take(t, 0, 0, a), KDS_DDB_OK);
    uint64_t n = t->items[0].counter;
    /* ownerSwitchesSinceCheckpoint: not at the handoff's start, which writes only the
     * owners; at an assignment from another owner. */
    ck_assert_int_eq(kds_lease_handoff(t, 0, a, b, 0), KDS_DDB_OK);
    ck_assert_int_eq(t->items[0].owner, b);
    ck_assert_int_eq(t->items[0].ckpt_owner, a);
    ck_assert_int_eq(t->items[0].moved_from, a);
    ck_assert_uint_eq(t->items[0].counter, n);
    ck_assert_uint_eq(t->items[0].owner_switches, 0);
    ck_assert_int_eq(kds_lease_handoff(t, 0, b, c, 0), KDS_DDB_CONDITION_FAILED);
    ck_assert_int_eq(kds_lease_assign(t, 0, b, c, 0), KDS_DDB_OK);
    ck_assert_int_eq(t->items[0].owner, c);
    ck_assert_int_eq(t->items[0].ckpt_owner, -1);
    ck_assert_int_eq(t->items[0].moved_from, a);
    ck_assert_uint_eq(t->items[0].counter, n + 1);
    ck_assert_uint_eq(t->items[0].owner_switches, 1);
    /* With no handoff in progress, the owner is whom it moves from. */
    ck_assert_int_eq(kds_lease_assign(t, 0, c, b, 0), KDS_DDB_OK);
    ck_assert_int_eq(t->items[0].moved_from, c);
    ck_assert_uint_eq(t->items[0].owner_switches, 2);
    /* A new, unowned lease assigned is not a switch. */
    ck_assert_int_eq(kds_lease_create(t, 1, -1, -1, KDS_CKPT_TRIM_HORIZON, 0, NULL), KDS_DDB_OK);
    ck_assert_int_eq(kds_lease_assign(t, 1, -1, a, 0), KDS_DDB_OK);
    ck_assert_uint_eq(t->items[1].owner_switches, 0);
    fx_fini(&f);
}
END_TEST

/* Capacity consumed: 1 write unit per write of a 300 B item (failed conditions
 * included), a scan half a unit per 4 KB of items, a GetItem one unit. */
START_TEST(consumed_units)
{
    fixture f;
    fx_init(&f, KDS_LEASE_ON_DEMAND, 10, 10, 300);
    kds_lease_table *t = f.t;
    for (uint32_t s = 0; s < 100; s++)
        ck_assert_int_eq(kds_lease_create(t, s, -1, -1, KDS_CKPT_LATEST, 0, NULL), KDS_DDB_OK);
    ck_assert_double_eq(kds_lease_write_units(t), 100.0);
    ck_assert_int_eq(kds_lease_renew(t, 5, 7, -1), KDS_DDB_CONDITION_FAILED);
    ck_assert_double_eq(kds_lease_write_units(t), 101.0);
    /* 100 x 300 B = 30,000 B = 8 blocks of 4 KB: 4 read units. */
    ck_assert_int_eq(kds_lease_scan(t), KDS_DDB_OK);
    ck_assert_double_eq(kds_lease_read_units(t), 4.0);
    ck_assert_int_eq(kds_lease_get(t, 0), KDS_DDB_OK);
    ck_assert_double_eq(kds_lease_read_units(t), 5.0);
    ck_assert_uint_eq(t->st.requests[KDS_DDB_SCAN], 1);
    ck_assert_uint_eq(t->st.requests[KDS_DDB_CREATE], 100);
    /* isLeaseTableEmpty reads one item: half a unit, a scan however large the table. */
    ck_assert_int_eq(kds_lease_scan_one(t), KDS_DDB_OK);
    ck_assert_double_eq(kds_lease_read_units(t), 5.5);
    ck_assert_uint_eq(t->st.requests[KDS_DDB_SCAN], 2);
    /* On-demand never throttles. */
    for (int k = 0; k < 10000; k++)
        kds_lease_renew(t, 0, t->items[0].counter, -1);
    ck_assert_uint_eq(t->st.throttled_writes, 0);
    ck_assert_uint_eq(t->items[0].counter, 10000);
    /* An empty table's scan still costs half a unit. */
    fixture g;
    fx_init(&g, KDS_LEASE_ON_DEMAND, 10, 10, 300);
    ck_assert_int_eq(kds_lease_scan(g.t), KDS_DDB_OK);
    ck_assert_double_eq(kds_lease_read_units(g.t), 0.5);
    fx_fini(&g);
    fx_fini(&f);
}
END_TEST

/* Provisioned, no burst: 5 write units a second. Writes at one instant are admitted
 * while capacity remains, then throttled, consuming nothing; a second later five more
 * pass. */
START_TEST(provisioned_throttles)
{
    fixture f;
    fx_init(&f, KDS_LEASE_PROVISIONED, 2, 5, 0);
    kds_lease_table *t = f.t;
    uint32_t ok = 0, thr = 0;
    for (uint32_t s = 0; s < 20; s++) {
        kds_ddb_status r = kds_lease_create(t, s, -1, -1, KDS_CKPT_LATEST, 0, NULL);
        ok += r == KDS_DDB_OK;
        thr += r == KDS_DDB_THROTTLED;
    }
    /* The bucket is one second deep (no burst kept): five writes. */
    ck_assert_uint_eq(ok, 5);
    ck_assert_uint_eq(thr, 15);
    ck_assert_uint_eq(t->st.throttled_writes, 15);
    ck_assert_uint_eq(t->st.throttled[KDS_DDB_CREATE], 15);
    ck_assert_double_eq(kds_lease_write_units(t), 5.0);
    advance(&f, SIM_S(1));
    ok = 0;
    for (int k = 0; k < 20; k++)
        ok += kds_lease_renew(t, 0, t->items[0].counter, -1) == KDS_DDB_OK;
    ck_assert_uint_eq(ok, 5);
    /* Reads have their own capacity: 2 units a second. */
    ck_assert_int_eq(kds_lease_get(t, 0), KDS_DDB_OK);
    ck_assert_int_eq(kds_lease_get(t, 0), KDS_DDB_OK);
    ck_assert_int_eq(kds_lease_get(t, 0), KDS_DDB_THROTTLED);
    ck_assert_uint_eq(t->st.throttled_reads, 1);
    /* Over 10 s, 5 writes a second pass (plus the 5 in the bucket), whatever is
     * asked. */
    uint64_t before = t->st.requests[KDS_DDB_RENEW] - t->st.throttled[KDS_DDB_RENEW];
    for (int ms = 1000; ms < 11000; ms += 100) {
        advance(&f, SIM_MS(1000 + ms));
        for (int k = 0; k < 3; k++)
            kds_lease_renew(t, 0, t->items[0].counter, -1);
    }
    uint64_t passed = t->st.requests[KDS_DDB_RENEW] - t->st.throttled[KDS_DDB_RENEW] - before;
    ck_assert_uint_ge(passed, 53);
    ck_assert_uint_le(passed, 57);
    fx_fini(&f);
}
END_TEST

/* DynamoDB keeps five minutes of unused capacity: a 10 WCU table absorbs a burst of
 * 3,000 writes at once, then throttles. */
START_TEST(burst_capacity)
{
    fixture f;
    fx_init(&f, KDS_LEASE_PROVISIONED, 10, 10, 300);
    kds_lease_table *t = f.t;
    ck_assert_int_eq(kds_lease_create(t, 0, -1, -1, KDS_CKPT_LATEST, 0, NULL), KDS_DDB_OK);
    uint32_t ok = 1;
    while (kds_lease_renew(t, 0, t->items[0].counter, -1) == KDS_DDB_OK)
        ok++;
    ck_assert_uint_eq(ok, 3000);
    fx_fini(&f);
}
END_TEST

/* A scan larger than what the bucket holds is admitted while it holds anything and
 * overdraws it: the next requests wait for the debt to be repaid. */
START_TEST(large_scan_overdraws)
{
    fixture f;
    fx_init(&f, KDS_LEASE_PROVISIONED, 1, 40000, 0); /* 1 RCU, one second deep */
    kds_lease_table *t = f.t;
    for (uint32_t s = 0; s < 1000; s++)
        kds_lease_create(t, s, -1, -1, KDS_CKPT_LATEST, 0, NULL);
    /* 300,000 B: 74 blocks of 4 KB, 37 read units against a 1 RCU table. */
    ck_assert_int_eq(kds_lease_scan(t), KDS_DDB_OK);
    ck_assert_double_eq(kds_lease_read_units(t), 37.0);
    advance(&f, SIM_S(30));
    ck_assert_int_eq(kds_lease_scan(t), KDS_DDB_THROTTLED);
    advance(&f, SIM_S(37));
    ck_assert_int_eq(kds_lease_scan(t), KDS_DDB_OK);
    fx_fini(&f);
}
END_TEST

/* A move from a healthy worker: its owner is running and has not stalled since the
 * lease's counter last moved (its renewer kept trying). A pause since then, or an owner
 * paused, stopped or dead, is not; a renewal after the pause makes it healthy again. */
START_TEST(owner_renewing)
{
    fixture f;
    fx_init(&f, KDS_LEASE_ON_DEMAND, 10, 10, 300);
    kds_lease_table *t = f.t;
    kds_lease_create(t, 0, -1, -1, KDS_CKPT_LATEST, 0, NULL);
    ck_assert(!kds_lease_renewing(t, 0, -1)); /* unowned */
    int32_t a = kds_lease_owner_add(t, "app", "a", 1);
    advance(&f, SIM_S(1));
    ck_assert_int_eq(kds_lease_take(t, 0, 0, a), KDS_DDB_OK);
    ck_assert_int_eq(t->items[0].counter_at, SIM_S(1));
    ck_assert_int_eq(t->owners[a].resumed_at, -1);
    advance(&f, SIM_S(30)); /* throttled renewals move nothing: still a's doing */
    ck_assert(kds_lease_renewing(t, 0, a));
    uint64_t v = t->version;
    kds_lease_owner_set(t, a, KDS_OWNER_PAUSED);
    ck_assert_uint_gt(t->version, v);
    ck_assert(!kds_lease_renewing(t, 0, a));
    advance(&f, SIM_S(45));
    kds_lease_owner_set(t, a, KDS_OWNER_RUNNING);
    ck_assert_int_eq(t->owners[a].resumed_at, SIM_S(45));
    ck_assert(!kds_lease_renewing(t, 0, a)); /* no renewal since the pause */
    advance(&f, SIM_S(46));
    ck_assert_int_eq(kds_lease_renew(t, 0, t->items[0].counter, -1), KDS_DDB_OK);
    ck_assert_int_eq(t->items[0].counter_at, SIM_S(46));
    ck_assert(kds_lease_renewing(t, 0, a));
    /* A checkpoint moves the counter too; a stop or a crash is never healthy. */
    advance(&f, SIM_S(50));
    ck_assert_int_eq(kds_lease_checkpoint(t, 0, t->items[0].counter, KDS_CKPT_SEQUENCE, 1),
                     KDS_DDB_OK);
    ck_assert_int_eq(t->items[0].counter_at, SIM_S(50));
    kds_lease_owner_set(t, a, KDS_OWNER_STOPPED);
    ck_assert(!kds_lease_renewing(t, 0, a));
    kds_lease_owner_set(t, a, KDS_OWNER_DEAD);
    ck_assert(!kds_lease_renewing(t, 0, a));
    fx_fini(&f);
}
END_TEST

START_TEST(shared_references)
{
    fixture f;
    fx_init(&f, KDS_LEASE_ON_DEMAND, 10, 10, 300);
    kds_lease_table_ref(f.t);
    ck_assert_int_eq(f.t->refs, 2);
    kds_lease_table_unref(f.t); /* still alive */
    ck_assert_int_eq(kds_lease_create(f.t, 1, -1, -1, KDS_CKPT_LATEST, 0, NULL), KDS_DDB_OK);
    kds_lease_table_unref(NULL);
    fx_fini(&f);
}
END_TEST

static Suite *lease_suite(void)
{
    Suite *s = suite_create("kds_lease");
    TCase *core = tcase_create("core");
    tcase_add_test(core, defaults);
    tcase_add_test(core, conditional_writes);
    tcase_add_test(core, leader_writes);
    tcase_add_test(core, consumed_units);
    tcase_add_test(core, owner_renewing);
    tcase_add_test(core, shared_references);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, provisioned_throttles);
    tcase_add_test(limits, burst_capacity);
    tcase_add_test(limits, large_scan_overdraws);
    suite_add_tcase(s, limits);
    return s;
}

int main(void)
{
    return tu_run_suite(lease_suite());
}
