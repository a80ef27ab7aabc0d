/* check_ydoc.c - tests of the YAML document layer: loading with positions, syntax
 * errors, --set overrides and their origin in messages, unknown and repeated keys,
 * every typed getter's happy path and exact error message, distributions, and the
 * ordering of printed diagnostics.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_err.h"
#include "sim_units.h"
#include "testutil.h"
#include "ydoc.h"

/* ---- fixture ---------------------------------------------------------------------- */

static ydoc d;
static ydiag g;
static ywalk w;

static void setup(void)
{
    memset(&d, 0, sizeof d);
    ydiag_init(&g);
    w.d = &d;
    w.g = &g;
}

static void teardown(void)
{
    ydoc_fini(&d);
    ydiag_fini(&g);
}

/* Load `text` as "s.yaml", which must succeed; returns the root mapping. */
static yaml_node_t *load(const char *text)
{
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", text, strlen(text), &g), 0);
    ck_assert_uint_eq(g.n, 0);
    yaml_node_t *root = ydoc_root(&d);
    ck_assert_ptr_nonnull(root);
    return root;
}

/* Everything ydiag_print writes for prog "kdsim", in a buffer that lives until the
 * next call (so a test can compare it without freeing). */
static const char *printed(void)
{
    static char *buf;
    size_t len;
    free(buf);
    buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ydiag_print(&g, f, "kdsim");
    fclose(f);
    return buf;
}

/* The one diagnostic expected, as printed (without the newline). */
static void expect_one(const char *line)
{
    char want[1024];
    snprintf(want, sizeof want, "%s\n", line);
    ck_assert_str_eq(printed(), want);
}

/* ---- core ------------------------------------------------------------------------- */

static const char scenario[] = "stream:\n"
                               "  name: orders\n"
                               "  shards: 4\n"
                               "  mode: on_demand_standard\n"
                               "  retention: 24h\n"
                               "  enhanced: true\n"
                               "producers:\n"
                               "  - name: web\n"
                               "    rate: 1000 records/s\n"
                               "    bandwidth: 1 MiB/s\n"
                               "    record_size: 25 KiB\n"
                               "    skew: 0.25\n"
                               "    offset: -3\n"
                               "  - name: batch\n"
                               "    latency: 20ms\n";

static const char *const modes[] = {"provisioned", "on_demand_standard", "on_demand_advantage",
                                    NULL};

START_TEST(test_getters_happy)
{
    yaml_node_t *root = load(scenario);
    yaml_node_t *stream = yw_get(&w, root, "stream");
    ck_assert(yw_is_map(&w, stream, "stream"));

    const char *name = NULL;
    uint64_t shards = 0;
    int mode = -1;
    sim_time retention = 0;
    bool enhanced = false;
    ck_assert(yw_str(&w, stream, "stream", "name", true, &name));
    ck_assert_str_eq(name, "orders");
    ck_assert(yw_u64(&w, stream, "stream", "shards", true, 1, 500, &shards));
    ck_assert_uint_eq(shards, 4);
    ck_assert(yw_enum(&w, stream, "stream", "mode", true, modes, &mode));
    ck_assert_int_eq(mode, 1);
    ck_assert(yw_duration(&w, stream, "stream", "retention", true, SIM_HOUR(24), SIM_DAY(365),
                          &retention));
    ck_assert(retention == SIM_HOUR(24));
    ck_assert(yw_bool(&w, stream, "stream", "enhanced", true, &enhanced));
    ck_assert(enhanced);

    yaml_node_t *prods = yw_get(&w, root, "producers");
    ck_assert(yw_is_seq(&w, prods, "producers"));
    ck_assert_uint_eq(yw_seq_len(&w, prods), 2);
    ck_assert_ptr_null(yw_seq_item(&w, prods, 2));
    yaml_node_t *p0 = yw_seq_item(&w, prods, 0);
    double rate = 0, bw = 0, skew = 0;
    uint64_t size = 0;
    int64_t offset = 0;
    ck_assert(yw_count_rate(&w, p0, "producers[0]", "rate", true, "records", 1, 1e6, &rate));
    ck_assert_double_eq(rate, 1000);
    ck_assert(yw_byte_rate(&w, p0, "producers[0]", "bandwidth", true, 0, INFINITY, &bw));
    ck_assert_double_eq(bw, 1048576);
    ck_assert(yw_bytes(&w, p0, "producers[0]", "record_size", true, 1, 1048576, &size));
    ck_assert_uint_eq(size, 25600);
    ck_assert(yw_double(&w, p0, "producers[0]", "skew", true, 0, 1, &skew));
    ck_assert_double_eq(skew, 0.25);
    ck_assert(yw_i64(&w, p0, "producers[0]", "offset", true, -10, 10, &offset));
    ck_assert_int_eq(offset, -3);

    /* Optional and absent: false, the caller's default untouched, nothing reported. */
    uint64_t dflt = 77;
    ck_assert(!yw_u64(&w, p0, "producers[0]", "absent", false, 0, 100, &dflt));
    ck_assert_uint_eq(dflt, 77);

    yaml_node_t *p1 = yw_seq_item(&w, prods, 1);
    sim_dist lat;
    ck_assert(yw_dist(&w, p1, "producers[1]", "latency", true, 'd', &lat));
    ck_assert_int_eq(lat.kind, SIM_DIST_CONST);
    ck_assert_double_eq(lat.a, 20.0); /* durations in a distribution are milliseconds */
    ck_assert_uint_eq(g.n, 0);
}
END_TEST

START_TEST(test_bool_spellings)
{
    yaml_node_t *root = load("a: True\nb: FALSE\nc: \"true\"\n");
    bool a = false, b = true, c = false;
    ck_assert(yw_bool(&w, root, "", "a", true, &a) && a);
    ck_assert(yw_bool(&w, root, "", "b", true, &b) && !b);
    ck_assert(yw_bool(&w, root, "", "c", true, &c) && c);
}
END_TEST

START_TEST(test_empty_documents)
{
    static const char *const texts[] = {"", "# only a comment\n", "---\n"};
    for (size_t i = 0; i < 3; i++) {
        yaml_node_t *root = load(texts[i]);
        ck_assert_int_eq(root->type, YAML_MAPPING_NODE);
        ck_assert_ptr_null(yw_get(&w, root, "stream"));
        ydoc_fini(&d);
    }
}
END_TEST

START_TEST(test_paths)
{
    char buf[64];
    ck_assert_str_eq(yw_path(buf, sizeof buf, "", "stream"), "stream");
    ck_assert_str_eq(yw_path(buf, sizeof buf, NULL, "stream"), "stream");
    ck_assert_str_eq(yw_path(buf, sizeof buf, "producers[1]", "rate"), "producers[1].rate");
    ck_assert_str_eq(yw_index(buf, sizeof buf, "producers", 1), "producers[1]");
    /* The result may be built in the buffer that holds the prefix. */
    strcpy(buf, "consumers");
    yw_index(buf, sizeof buf, buf, 0);
    ck_assert_str_eq(yw_path(buf, sizeof buf, buf, "idle"), "consumers[0].idle");
    /* Truncated, never overflowed. */
    char small[8];
    ck_assert_str_eq(yw_path(small, sizeof small, "producers", "rate"), "produce");
}
END_TEST

START_TEST(test_load_file)
{
    char name[] = "/tmp/check_ydoc_XXXXXX";
    int fd = mkstemp(name);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, scenario, sizeof scenario - 1), (ssize_t)sizeof scenario - 1);
    close(fd);

    ck_assert_int_eq(ydoc_load_file(&d, name, &g), 0);
    unlink(name);
    ck_assert_str_eq(d.file, name);
    yaml_node_t *stream = yw_get(&w, ydoc_root(&d), "stream");
    uint64_t shards = 0;
    ck_assert(!yw_u64(&w, stream, "stream", "shards", true, 5, 500, &shards));
    char want[256];
    snprintf(want, sizeof want, "kdsim: %s:3:11: stream.shards: must be between 5 and 500, got 4",
             name);
    expect_one(want);
}
END_TEST

/* ---- --set ------------------------------------------------------------------------ */

START_TEST(test_set_replace_and_create)
{
    load(scenario);
    ck_assert_int_eq(ydoc_set(&d, "stream.shards=8", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "producers[1].latency=5ms", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "producers[0].burst.size=3", &g), 0); /* two new keys */
    ck_assert_int_eq(ydoc_set(&d, "report.format=json", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "stream.name=a=b", &g), 0); /* first '=' splits */
    ck_assert_int_eq(ydoc_set(&d, "stream.name=", &g), 0);    /* an empty value is a value */
    ck_assert_uint_eq(g.n, 0);

    yaml_node_t *root = ydoc_root(&d);
    yaml_node_t *stream = yw_get(&w, root, "stream");
    yaml_node_t *prods = yw_get(&w, root, "producers");
    uint64_t shards = 0, burst = 0;
    const char *s = NULL;
    sim_dist lat;
    ck_assert(yw_u64(&w, stream, "stream", "shards", true, 1, 500, &shards));
    ck_assert_uint_eq(shards, 8);
    ck_assert(yw_str(&w, stream, "stream", "name", true, &s));
    ck_assert_str_eq(s, "");
    ck_assert(yw_dist(&w, yw_seq_item(&w, prods, 1), "producers[1]", "latency", true, 'd', &lat));
    ck_assert_double_eq(lat.a, 5.0);
    yaml_node_t *b = yw_get(&w, yw_seq_item(&w, prods, 0), "burst");
    ck_assert(yw_is_map(&w, b, "producers[0].burst"));
    ck_assert(yw_u64(&w, b, "producers[0].burst", "size", true, 0, 10, &burst));
    ck_assert_uint_eq(burst, 3);
    ck_assert(yw_str(&w, yw_get(&w, root, "report"), "report", "format", true, &s));
    ck_assert_str_eq(s, "json");

    /* The replaced value is still given once: the key was reused, not appended. */
    static const char *const keys[] = {"name", "shards", "mode", "retention", "enhanced", NULL};
    ck_assert_int_eq(yw_check_keys(&w, stream, "stream", keys), 0);
}
END_TEST

START_TEST(test_set_list_item)
{
    yaml_node_t *root = load("tags: [a, b]\n");
    (void)root;
    ck_assert_int_eq(ydoc_set(&d, "tags[1]=z", &g), 0);
    yaml_node_t *tags = yw_get(&w, ydoc_root(&d), "tags");
    ck_assert_str_eq(yw_scalar(&w, yw_seq_item(&w, tags, 1), "tags[1]"), "z");
}
END_TEST

/* A value that is a whole YAML flow list or mapping sets a list or a mapping, its nodes
 * the override's own (errors in them name --set); anything else, even text that starts
 * like one, stays text. */
START_TEST(test_set_flow_values)
{
    load("tags: [a, b]\nstream: {name: s}\n");
    ck_assert_int_eq(ydoc_set(&d, "tags=[x, y, z]", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "stream.outage={at: 1h, for: [2h, 3h]}", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "notes=[draft] not a list", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "two=[1]\n---\n[2]", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "open=[1, 2", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "commented=[1] # one", &g), 0);
    char deep[2 * YDOC_MAX_DEPTH + 8];
    memset(deep, '[', YDOC_MAX_DEPTH + 1);
    memset(deep + YDOC_MAX_DEPTH + 1, ']', YDOC_MAX_DEPTH + 1);
    deep[2 * YDOC_MAX_DEPTH + 2] = '\0';
    char deep_set[sizeof deep + 8];
    snprintf(deep_set, sizeof deep_set, "deep=%s", deep);
    ck_assert_int_eq(ydoc_set(&d, deep_set, &g), 0);
    ck_assert_uint_eq(g.n, 0);

    yaml_node_t *root = ydoc_root(&d);
    yaml_node_t *tags = yw_get(&w, root, "tags");
    ck_assert(yw_is_seq(&w, tags, "tags"));
    ck_assert_int_eq(tags->data.sequence.items.top - tags->data.sequence.items.start, 3);
    ck_assert_str_eq(yw_scalar(&w, yw_seq_item(&w, tags, 2), "tags[2]"), "z");
    yaml_node_t *out = yw_get(&w, yw_get(&w, root, "stream"), "outage");
    ck_assert(yw_is_map(&w, out, "stream.outage"));
    ck_assert_str_eq(yw_scalar(&w, yw_get(&w, out, "at"), "stream.outage.at"), "1h");
    yaml_node_t *f = yw_get(&w, out, "for");
    ck_assert(yw_is_seq(&w, f, "stream.outage.for"));
    ck_assert_str_eq(yw_scalar(&w, yw_seq_item(&w, f, 1), "stream.outage.for[1]"), "3h");
    ck_assert_str_eq(yw_scalar(&w, yw_get(&w, root, "notes"), "notes"), "[draft] not a list");
    ck_assert_str_eq(yw_scalar(&w, yw_get(&w, root, "two"), "two"), "[1]\n---\n[2]");
    ck_assert_str_eq(yw_scalar(&w, yw_get(&w, root, "open"), "open"), "[1, 2");
    ck_assert(yw_is_seq(&w, yw_get(&w, root, "commented"), "commented"));
    ck_assert_str_eq(yw_scalar(&w, yw_get(&w, root, "deep"), "deep"), deep);
    ck_assert_uint_eq(g.n, 0);

    /* Errors in a value set this way name the override; a list where a list is wanted
     * is described as the command line writes it. */
    ck_assert(!yw_is_map(&w, yw_seq_item(&w, tags, 0), "tags[0]"));
    ck_assert(!yw_is_seq(&w, yw_get(&w, out, "at"), "stream.outage.at"));
    expect_one("kdsim: --set: tags[0]: expected a mapping of keys to values, such as "
               "{a: 1, b: 2}, got \"x\"\n"
               "kdsim: --set: stream.outage.at: expected a list, such as [a, b], got \"1h\"");
}
END_TEST

/* Aliases of aliases cannot expand a value without bound. */
START_TEST(test_set_flow_alias_bomb)
{
    load("tags: [a]\n");
    ck_assert_int_eq(ydoc_set(&d, "tags=[&a [1,2,3,4,5,6,7,8], &b [*a,*a,*a,*a,*a,*a,*a,*a], "
                                  "&c [*b,*b,*b,*b,*b,*b,*b,*b], [*c,*c,*c,*c,*c,*c,*c,*c]]",
                             &g),
                     SIM_EINVAL);
    expect_one("kdsim: --set: tags: the value holds more than 4096 items and keys, its "
               "aliases expanded; a scenario value needs a few");
}
END_TEST

START_TEST(test_set_error_origin)
{
    load(scenario);
    ck_assert_int_eq(ydoc_set(&d, "stream.shards=600", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "stream.shardz=4", &g), 0);
    ck_assert_int_eq(ydoc_set(&d, "producers[0].rate=fast", &g), 0);
    yaml_node_t *root = ydoc_root(&d);
    yaml_node_t *stream = yw_get(&w, root, "stream");
    uint64_t shards;
    double rate;
    static const char *const keys[] = {"name", "shards", "mode", "retention", "enhanced", NULL};
    ck_assert(!yw_u64(&w, stream, "stream", "shards", true, 1, 500, &shards));
    ck_assert_int_eq(yw_check_keys(&w, stream, "stream", keys), 1);
    ck_assert(!yw_count_rate(&w, yw_seq_item(&w, yw_get(&w, root, "producers"), 0), "producers[0]",
                             "rate", true, "records", 1, 1e6, &rate));
    /* Errors about file nodes keep their position; --set ones come first. */
    ck_assert_int_eq(ydoc_set(&d, "producers[0].name.first=x", &g), SIM_EINVAL);
    char want[1024];
    snprintf(want, sizeof want,
             "kdsim: --set: stream.shards: must be between 1 and 500, got 600\n"
             "kdsim: --set: stream: unknown key 'shardz'; did you mean 'shards'?\n"
             "kdsim: --set: producers[0].rate: expected %s, got \"fast\"\n"
             "kdsim: --set: producers[0].name: cannot set key 'first': the value here is a "
             "single value, not a mapping\n",
             sim_units_hint('c'));
    ck_assert_str_eq(printed(), want);
}
END_TEST

static const struct {
    const char *assignment;
    const char *message;
} bad_sets[] = {
    {"stream.shards", "kdsim: --set: expected key.path=value (such as stream.shards=4 or "
                      "producers[0].rate=500/s), got \"stream.shards\""},
    {"=4", "kdsim: --set: expected key.path=value (such as stream.shards=4 or "
           "producers[0].rate=500/s), got \"=4\""},
    {"stream..shards=4", "kdsim: --set: expected key.path=value with keys joined by '.' and "
                         "list items as [0] (such as producers[0].rate=500/s), got "
                         "\"stream..shards=4\""},
    {"producers[x].rate=4", "kdsim: --set: expected key.path=value with keys joined by '.' "
                            "and list items as [0] (such as producers[0].rate=500/s), got "
                            "\"producers[x].rate=4\""},
    {"producers[5].rate=4",
     "kdsim: --set: producers: no item [5]: the list has 2 items (indices 0 to 1)"},
    {"stream[0]=4", "kdsim: --set: stream: cannot use [0]: the value here is a mapping, not "
                    "a list"},
    {"consumers[0].name=x",
     "kdsim: --set: consumers: no such list; [0] can only change an item the file defines"},
    {"stream.name.first=x", "kdsim: --set: stream.name: cannot set key 'first': the value "
                            "here is a single value, not a mapping"},
    {"producers.rate=1", "kdsim: --set: producers: cannot set key 'rate': the value here is "
                         "a list, not a mapping"},
};

START_TEST(test_set_errors)
{
    load(scenario);
    ck_assert_int_eq(ydoc_set(&d, bad_sets[_i].assignment, &g), SIM_EINVAL);
    expect_one(bad_sets[_i].message);
}
END_TEST

/* ---- keys ------------------------------------------------------------------------- */

static const char *const producer_keys[] = {"name",        "rate",           "bandwidth",
                                            "record_size", "partition_keys", NULL};

START_TEST(test_unknown_keys)
{
    yaml_node_t *root = load("producers:\n"
                             "  - name: web\n"
                             "    ratee: 5/s\n"     /* one insertion */
                             "    nmae: x\n"        /* one transposition */
                             "    partition: 100\n" /* shared prefix */
                             "    colour: blue\n"   /* nothing close */
                             "    rate: 5/s\n"
                             "    rate: 6/s\n"); /* repeated */
    yaml_node_t *p0 = yw_seq_item(&w, yw_get(&w, root, "producers"), 0);
    ck_assert_int_eq(yw_check_keys(&w, p0, "producers[0]", producer_keys), 5);
    ck_assert_str_eq(printed(),
                     "kdsim: s.yaml:3:5: producers[0]: unknown key 'ratee'; did you mean "
                     "'rate'?\n"
                     "kdsim: s.yaml:4:5: producers[0]: unknown key 'nmae'; did you mean "
                     "'name'?\n"
                     "kdsim: s.yaml:5:5: producers[0]: unknown key 'partition'; did you mean "
                     "'partition_keys'?\n"
                     "kdsim: s.yaml:6:5: producers[0]: unknown key 'colour'; the keys allowed "
                     "here are name, rate, bandwidth, record_size and partition_keys\n"
                     "kdsim: s.yaml:8:5: producers[0]: key 'rate' given twice\n");
}
END_TEST

START_TEST(test_suggest_closest)
{
    static const char *const keys[] = {"shards", "shard_limit", "stream", NULL};
    yaml_node_t *root = load("shard: 1\nx: 2\n");
    ck_assert_int_eq(yw_check_keys(&w, root, "", keys), 2);
    /* "shard" is one edit from "shards" and shares 5 characters with "shard_limit":
     * the closest wins. A one-letter key suggests nothing. */
    ck_assert_str_eq(printed(), "kdsim: s.yaml:1:1: unknown key 'shard'; did you mean "
                                "'shards'?\n"
                                "kdsim: s.yaml:2:1: unknown key 'x'; the keys allowed here "
                                "are shards, shard_limit and stream\n");
}
END_TEST

/* ---- errors ----------------------------------------------------------------------- */

START_TEST(test_syntax_error)
{
    static const char text[] = "stream:\n"
                               "  shards: 4\n"
                               "  name: [a, b\n"
                               "producers: []\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", text, sizeof text - 1, &g), SIM_ESYNTAX);
    ck_assert(!d.loaded);
    ck_assert_ptr_null(ydoc_root(&d));
    expect_one("kdsim: s.yaml:4:10: invalid YAML: did not find expected ',' or ']' "
               "(while parsing a flow sequence started at line 3, column 9)");
}
END_TEST

START_TEST(test_syntax_error_tab)
{
    static const char text[] = "stream:\n\tshards: 4\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", text, sizeof text - 1, &g), SIM_ESYNTAX);
    expect_one("kdsim: s.yaml:2:1: invalid YAML: found a tab character where YAML expects "
               "spaces; indent with spaces, not tabs");
}
END_TEST

/* A reader error (bad UTF-8, a control character) has only a byte offset: it is placed at
 * its line and column (characters, not bytes), and a control character in a UTF-8 file
 * is not called an encoding problem. */
START_TEST(test_bad_utf8)
{
    static const char text[] = "name: caf\xe9\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", text, sizeof text - 1, &g), SIM_ESYNTAX);
    expect_one("kdsim: s.yaml:1:10: invalid YAML: the text is not valid UTF-8 here (byte 0xE9); "
               "save the file as UTF-8");
    ydiag_fini(&g);
    static const char lead[] = "a: 1\r\nb: \xc3\xa9t\xc3\xa9 \xff\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", lead, sizeof lead - 1, &g), SIM_ESYNTAX);
    expect_one("kdsim: s.yaml:2:8: invalid YAML: the text is not valid UTF-8 here (byte 0xFF); "
               "save the file as UTF-8");
    ydiag_fini(&g);
    static const char trail[] = "a: caf\xe9, x\n"; /* Latin-1: 0xE9 then a comma */
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", trail, sizeof trail - 1, &g), SIM_ESYNTAX);
    expect_one("kdsim: s.yaml:1:7: invalid YAML: the text is not valid UTF-8 here (byte 0xE9); "
               "save the file as UTF-8");
    ydiag_fini(&g);
    static const char bel[] = "\xef\xbb\xbf" "a: 1\nb: x\a\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", bel, sizeof bel - 1, &g), SIM_ESYNTAX);
    expect_one("kdsim: s.yaml:2:5: invalid YAML: the control character U+0007 is not allowed in "
               "YAML text, which holds only tabs, line breaks and printable characters; delete "
               "it");
    ydiag_fini(&g);
    static const char nul[] = "a: 1\r\rb: 2\0\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", nul, sizeof nul - 1, &g), SIM_ESYNTAX);
    expect_one("kdsim: s.yaml:3:5: invalid YAML: a NUL byte is not allowed in YAML text; if the "
               "file was saved as UTF-16, save it as UTF-8, otherwise delete it");
}
END_TEST

/* A second document is refused where it starts, explicit (---) or after a ...; a
 * single document with markers, or ended with ..., is one document. */
START_TEST(test_two_documents)
{
    static const char two[] = "---\na: 1\n---\nb: 2\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", two, sizeof two - 1, &g), SIM_ESYNTAX);
    ck_assert(!d.loaded);
    expect_one("kdsim: s.yaml:3:1: the file holds more than one YAML document; a scenario is "
               "one document: delete the second from here on, or give it a file of its own");
    ydiag_fini(&g);
    static const char after_end[] = "a: 1\n...\nb: 2\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", after_end, sizeof after_end - 1, &g),
                     SIM_ESYNTAX);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_int_eq(g.items[0].line, 3);
    ydiag_fini(&g);
    static const char one[] = "---\na: 1\n...\n";
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", one, sizeof one - 1, &g), 0);
    ck_assert_uint_eq(g.n, 0);
}
END_TEST

/* Nesting is refused past YDOC_MAX_DEPTH levels, where the level past it opens, and
 * allowed up to it; 100,000 levels are refused at once (libyaml's scanner would take
 * time quadratic in the depth to read them all). */
START_TEST(test_deep_nesting)
{
    char ok[2 * YDOC_MAX_DEPTH + 8], deep[200008];
    size_t n = 0;
    n += (size_t)sprintf(ok, "a: ");
    for (int i = 1; i < YDOC_MAX_DEPTH; i++) /* the root mapping is the first level */
        ok[n++] = '[';
    for (int i = 1; i < YDOC_MAX_DEPTH; i++)
        ok[n++] = ']';
    ok[n] = '\0';
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", ok, n, &g), 0);
    ydoc_fini(&d);
    n = (size_t)sprintf(deep, "a: ");
    for (int i = 0; i < 100000; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    ck_assert_int_eq(ydoc_load_string(&d, "s.yaml", deep, n, &g), SIM_ESYNTAX);
    ck_assert(!d.loaded);
    expect_one("kdsim: s.yaml:1:67: lists and mappings nest more than 64 deep here (a scenario "
               "needs a few levels); look for a '[' or '{' that is never closed");
}
END_TEST

START_TEST(test_missing_file)
{
    ck_assert_int_eq(ydoc_load_file(&d, "/nonexistent/s.yaml", &g), SIM_EIO);
    ck_assert(!d.loaded);
    expect_one("kdsim: /nonexistent/s.yaml: cannot open the file: No such file or directory");
}
END_TEST

/* One getter call, chosen by a letter, on key "v" of a one-key document: the table
 * below gives the value, the getter and the exact message. */
typedef struct getter_case {
    const char *yaml; /* the document */
    char getter;      /* s str, b bool, u u64, i i64, f double, d duration, y bytes,
                         r byte rate, c count rate, e enum, D dist in ms */
    const char *want; /* exact message after "kdsim: s.yaml:" (hint %s filled in) */
    char hint;        /* sim_units_hint kind used in want, or 0 */
} getter_case;

static const getter_case getter_errors[] = {
    {"x: 1\n", 'u', "1:1: missing required key 'v'", 0},
    {"v: [1, 2]\n", 'u', "1:4: v: expected a single value, got a list", 0},
    {"v: {a: 1}\n", 's', "1:4: v: expected a single value, got a mapping", 0},
    {"v: yes please\n", 'b', "1:4: v: expected true or false, got \"yes please\"", 0},
    {"v: yes\n", 'b', "1:4: v: expected true or false, got \"yes\"", 0},
    {"v:\n", 'b', "1:3: v: expected true or false, got an empty value", 0},
    {"v: 600\n", 'u', "1:4: v: must be between 1 and 500, got 600", 0},
    {"v: 0\n", 'u', "1:4: v: must be between 1 and 500, got 0", 0},
    {"v: -1\n", 'u', "1:4: v: must be between 1 and 500, got -1", 0},
    {"v: 12.5\n", 'u', "1:4: v: expected a whole number, got \"12.5\"", 0},
    {"v: 1_000\n", 'u', "1:4: v: expected a whole number, got \"1_000\"", 0},
    {"v: 1e3\n", 'u', "1:4: v: expected a whole number, got \"1e3\"", 0},
    {"v: 0x10\n", 'u', "1:4: v: expected a whole number, got \"0x10\"", 0},
    {"v: +5\n", 'u', "1:4: v: expected a whole number, got \"+5\"", 0},
    {"v: 12a\n", 'u', "1:4: v: expected a whole number, got \"12a\"", 0},
    {"v: 99999999999999999999\n", 'u',
     "1:4: v: must be between 1 and 500, got 99999999999999999999", 0},
    {"v: -11\n", 'i', "1:4: v: must be between -10 and 10, got -11", 0},
    {"v: 9223372036854775808\n", 'i', "1:4: v: must be between -10 and 10, got 9223372036854775808",
     0},
    {"v: 1.5\n", 'f', "1:4: v: must be between 0 and 1, got 1.5", 0},
    {"v: nan\n", 'f', "1:4: v: expected a number, got \"nan\"", 0},
    {"v: 1,5\n", 'f', "1:4: v: expected a number, got \"1,5\"", 0},
    {"v: 5 parsecs\n", 'd', "1:4: v: expected %s, got \"5 parsecs\"", 'd'},
    {"v: 30\n", 'd', "1:4: v: expected %s, got \"30\"", 'd'},
    {"v: 2h\n", 'd', "1:4: v: must be between 1ms and 1h, got 2h", 0},
    {"v: -5s\n", 'd', "1:4: v: must be between 1ms and 1h, got -5s", 0},
    {"v: 5 KB\n", 'y', "1:4: v: expected %s, got \"5 KB\"", 'b'},
    {"v: 2 MiB\n", 'y', "1:4: v: must be between 1 B and 1 MiB, got 2 MiB", 0},
    {"v: fast\n", 'r', "1:4: v: expected %s, got \"fast\"", 'r'},
    {"v: 2 MiB/s\n", 'r', "1:4: v: must be between 1 KiB/s and 1 MiB/s, got 2 MiB/s", 0},
    {"v: 5 calls/s\n", 'c',
     "1:4: v: expected %s, got \"5 calls/s\"; did you mean \"5 records/s\"?", 'c'},
    {"v: 5 rec/min\n", 'c',
     "1:4: v: expected %s, got \"5 rec/min\"; did you mean \"5 records/min\"?", 'c'},
    {"v: 5 foo bar/s\n", 'c', "1:4: v: expected %s, got \"5 foo bar/s\"", 'c'},
    {"v: 2000 records/s\n", 'c', "1:4: v: must be between 1 and 1000 records/s, got 2000 records/s",
     0},
    {"v: ondemand\n", 'e',
     "1:4: v: expected one of provisioned, on_demand_standard, "
     "on_demand_advantage, got \"ondemand\"",
     0},
    {"v: provisoned\n", 'e',
     "1:4: v: expected one of provisioned, on_demand_standard, "
     "on_demand_advantage, got \"provisoned\"; did you mean "
     "'provisioned'?",
     0},
    {"v: \"a\\0b\"\n", 's',
     "1:4: v: the value contains a NUL character; remove the \\0 "
     "escape",
     0},
    /* Distributions: the scalar and mapping forms. */
    {"v: soon\n", 'D',
     "1:4: v: expected %s, or a mapping like {dist: exp, mean: 20ms}, got "
     "\"soon\"",
     'd'},
    {"v: -5ms\n", 'D', "1:4: v: must not be negative, got -5ms", 0},
    {"v: {mean: 5ms}\n", 'D',
     "1:4: v: missing required key 'dist'; give one of const, "
     "uniform, exp, lognormal, normal, gamma, pareto",
     0},
    {"v: {dist: weibull, scale: 5ms}\n", 'D',
     "1:11: v.dist: expected one of const, uniform, exp, lognormal, normal, gamma, pareto, "
     "got \"weibull\"",
     0},
    {"v: {dist: logn, median: 5ms}\n", 'D',
     "1:11: v.dist: expected one of const, uniform, exp, lognormal, normal, gamma, pareto, "
     "got \"logn\"; did you mean 'lognormal'?",
     0},
    {"v: {dist: gama, mean: 5ms, shape: 2}\n", 'D',
     "1:11: v.dist: expected one of const, uniform, exp, lognormal, normal, gamma, pareto, "
     "got \"gama\"; did you mean 'gamma'?",
     0},
    {"v: {dist: lognormal, median: 5ms}\n", 'D', "1:4: v: missing required key 'sigma'", 0},
    {"v: {dist: lognormal, median: 5ms, sigma: 1, mean: 3ms}\n", 'D',
     "1:45: v: unknown key 'mean'; did you mean 'median'?", 0},
    {"v: {dist: exp, mean: 5}\n", 'D', "1:22: v.mean: expected %s, got \"5\"", 'd'},
    {"v: {dist: lognormal, median: 5ms, sigma: 1s}\n", 'D',
     "1:42: v.sigma: expected a number, got \"1s\"", 0},
    {"v: {dist: normal, mean: 5ms, stddev: 1ms, min: 2ms, max: 1ms}\n", 'D',
     "1:4: v: invalid normal distribution: min is greater than max", 0},
    {"v: {dist: lognormal, median: 0ms, sigma: 1}\n", 'D',
     "1:4: v: invalid lognormal distribution: the median must be a positive finite number", 0},
};

START_TEST(test_getter_errors)
{
    const getter_case *c = &getter_errors[_i];
    yaml_node_t *root = load(c->yaml);
    union {
        const char *s;
        bool b;
        uint64_t u;
        int64_t i;
        double f;
        sim_time t;
        int e;
        sim_dist dist;
    } out;
    bool ok = true;
    switch (c->getter) {
    case 's':
        ok = yw_str(&w, root, "", "v", true, &out.s);
        break;
    case 'b':
        ok = yw_bool(&w, root, "", "v", true, &out.b);
        break;
    case 'u':
        ok = yw_u64(&w, root, "", "v", true, 1, 500, &out.u);
        break;
    case 'i':
        ok = yw_i64(&w, root, "", "v", true, -10, 10, &out.i);
        break;
    case 'f':
        ok = yw_double(&w, root, "", "v", true, 0, 1, &out.f);
        break;
    case 'd':
        ok = yw_duration(&w, root, "", "v", true, SIM_MS(1), SIM_HOUR(1), &out.t);
        break;
    case 'y':
        ok = yw_bytes(&w, root, "", "v", true, 1, 1048576, &out.u);
        break;
    case 'r':
        ok = yw_byte_rate(&w, root, "", "v", true, 1024, 1048576, &out.f);
        break;
    case 'c':
        ok = yw_count_rate(&w, root, "", "v", true, "records", 1, 1000, &out.f);
        break;
    case 'e':
        ok = yw_enum(&w, root, "", "v", true, modes, &out.e);
        break;
    case 'D':
        ok = yw_dist(&w, root, "", "v", true, 'd', &out.dist);
        break;
    default:
        ck_abort_msg("bad getter letter");
    }
    ck_assert(!ok);

    char tail[512], want[600];
    snprintf(tail, sizeof tail, c->want, c->hint ? sim_units_hint(c->hint) : "");
    snprintf(want, sizeof want, "kdsim: s.yaml:%s", tail);
    expect_one(want);
}
END_TEST

START_TEST(test_hint_text)
{
    /* The header promises this wording; the getter messages above depend on it. */
    const char *h = sim_units_hint('d');
    ck_assert(strncmp(h, "a duration like 500ms, 30s, 10m, 6h or 7d", 41) == 0);
}
END_TEST

START_TEST(test_not_map_or_list)
{
    yaml_node_t *root = load("a: 5\nb: [1]\n");
    ck_assert(!yw_is_map(&w, yw_get(&w, root, "a"), "a"));
    ck_assert(!yw_is_seq(&w, yw_get(&w, root, "a"), "a"));
    ck_assert(!yw_is_map(&w, yw_get(&w, root, "b"), "b"));
    ck_assert(!yw_is_seq(&w, yw_get(&w, root, "c"), "c"));
    ck_assert_str_eq(printed(),
                     "kdsim: s.yaml: c: expected a list (items starting with '- '), got "
                     "nothing\n"
                     "kdsim: s.yaml:1:4: a: expected a mapping of keys to values, got \"5\"\n"
                     "kdsim: s.yaml:1:4: a: expected a list (items starting with '- '), got "
                     "\"5\"\n"
                     "kdsim: s.yaml:2:4: b: expected a mapping of keys to values, got a "
                     "list\n");
}
END_TEST

START_TEST(test_quoting)
{
    yaml_node_t *root = load("v: |\n  two\n  lines \"q\"\n"
                             "w: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                             "\n");
    bool b;
    ck_assert(!yw_bool(&w, root, "", "v", true, &b));
    ck_assert(!yw_bool(&w, root, "", "w", true, &b));
    ck_assert_str_eq(printed(),
                     "kdsim: s.yaml:1:4: v: expected true or false, got "
                     "\"two\\nlines \\\"q\\\"\\n\"\n"
                     "kdsim: s.yaml:4:4: w: expected true or false, got \"aaaaaaaaaaaaaaaaa"
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"\n");
}
END_TEST

/* ---- distributions ---------------------------------------------------------------- */

START_TEST(test_dist_forms)
{
    yaml_node_t *root = load("c: 1 KiB\n"
                             "k: {dist: const, value: 7}\n"
                             "u: {dist: uniform, min: 1ms, max: 1s}\n"
                             "e: {dist: exp, mean: 20ms, max: 100ms}\n"
                             "l: {dist: lognormal, median: 20ms, sigma: 0.5, min: 1ms}\n"
                             "n: {dist: normal, mean: 10ms, stddev: 2ms}\n"
                             "g: {dist: gamma, mean: 10ms, shape: 2}\n"
                             "p: {dist: pareto, min: 1ms, alpha: 1.5}\n"
                             "x: 2.5\n");
    sim_dist c, k, u, e, l, n, gm, p, x;
    ck_assert(yw_dist(&w, root, "", "c", true, 'b', &c));
    ck_assert(c.kind == SIM_DIST_CONST && c.a == 1024);
    ck_assert(yw_dist(&w, root, "", "k", true, 'n', &k));
    ck_assert(k.kind == SIM_DIST_CONST && k.a == 7);
    ck_assert(yw_dist(&w, root, "", "u", true, 'd', &u));
    ck_assert(u.kind == SIM_DIST_UNIFORM && u.a == 1 && u.b == 1000);
    ck_assert(u.min == 1 && u.max == 1000);
    ck_assert(yw_dist(&w, root, "", "e", true, 'd', &e));
    ck_assert(e.kind == SIM_DIST_EXP && e.a == 20 && e.min == 0 && e.max == 100);
    ck_assert(yw_dist(&w, root, "", "l", true, 'd', &l));
    ck_assert(l.kind == SIM_DIST_LOGNORMAL && l.a == 20 && l.b == 0.5 && l.min == 1);
    ck_assert(isinf(l.max));
    ck_assert(yw_dist(&w, root, "", "n", true, 'd', &n));
    ck_assert(n.kind == SIM_DIST_NORMAL && n.a == 10 && n.b == 2);
    ck_assert(yw_dist(&w, root, "", "g", true, 'd', &gm));
    ck_assert(gm.kind == SIM_DIST_GAMMA && gm.a == 10 && gm.b == 2);
    ck_assert(yw_dist(&w, root, "", "p", true, 'd', &p));
    ck_assert(p.kind == SIM_DIST_PARETO && p.a == 1 && p.b == 1.5 && p.min == 1);
    ck_assert(yw_dist(&w, root, "", "x", true, 'n', &x));
    ck_assert(x.kind == SIM_DIST_CONST && x.a == 2.5);
    ck_assert_uint_eq(g.n, 0);

    /* Optional and absent leaves the default alone. */
    sim_dist keep = sim_dist_const(3);
    ck_assert(!yw_dist(&w, root, "", "absent", false, 'd', &keep));
    ck_assert(keep.a == 3);
    ck_assert_uint_eq(g.n, 0);
}
END_TEST

/* ---- printing --------------------------------------------------------------------- */

START_TEST(test_print_order)
{
    yaml_mark_t m = {0, 0, 0};
    m.line = 9;
    m.column = 1;
    ydiag_add(&g, "a.yaml", &m, "x", "tenth line");
    m.line = 2;
    m.column = 7;
    ydiag_add(&g, "a.yaml", &m, "y", "third line, col 8");
    ydiag_add(&g, "--set", NULL, "stream.shards", "no position");
    m.column = 0;
    ydiag_add(&g, "a.yaml", &m, "", "third line, col 1");
    ydiag_add(&g, "b.yaml", &m, "", "other file, added last");
    m.column = 7;
    ydiag_add(&g, "a.yaml", &m, "z", "third line, col 8, added later %d", 2);
    ydiag_add(&g, "a.yaml", NULL, "", "no position, added later");
    ck_assert_str_eq(printed(), "kdsim: --set: stream.shards: no position\n"
                                "kdsim: a.yaml: no position, added later\n"
                                "kdsim: a.yaml:3:1: third line, col 1\n"
                                "kdsim: a.yaml:3:8: y: third line, col 8\n"
                                "kdsim: a.yaml:3:8: z: third line, col 8, added later 2\n"
                                "kdsim: a.yaml:10:2: x: tenth line\n"
                                "kdsim: b.yaml:3:1: other file, added last\n");
    /* Printing does not reorder the items themselves. */
    ck_assert_str_eq(g.items[0].msg, "tenth line");

    /* A walk's errors arrive in tree order but print in file order. */
    ydiag_fini(&g);
    yaml_node_t *root = load("b: x\na: y\n");
    bool v;
    ck_assert(!yw_bool(&w, root, "", "a", true, &v));
    ck_assert(!yw_bool(&w, root, "", "b", true, &v));
    ck_assert_str_eq(printed(), "kdsim: s.yaml:1:4: b: expected true or false, got \"x\"\n"
                                "kdsim: s.yaml:2:4: a: expected true or false, got \"y\"\n");
}
END_TEST

START_TEST(test_print_empty_and_fini)
{
    ck_assert_str_eq(printed(), "");
    ydiag_fini(NULL);
    ydoc_fini(NULL);
}
END_TEST

static Suite *ydoc_suite(void)
{
    Suite *s = suite_create("ydoc");

    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_getters_happy);
    tcase_add_test(core, test_bool_spellings);
    tcase_add_test(core, test_empty_documents);
    tcase_add_test(core, test_paths);
    tcase_add_test(core, test_load_file);
    tcase_add_test(core, test_set_replace_and_create);
    tcase_add_test(core, test_set_list_item);
    tcase_add_test(core, test_set_error_origin);
    tcase_add_test(core, test_set_flow_values);
    tcase_add_test(core, test_set_flow_alias_bomb);
    tcase_add_test(core, test_unknown_keys);
    tcase_add_test(core, test_suggest_closest);
    tcase_add_test(core, test_dist_forms);
    tcase_add_test(core, test_print_order);
    tcase_add_test(core, test_print_empty_and_fini);
    suite_add_tcase(s, core);

    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, setup, teardown);
    tcase_add_test(errors, test_syntax_error);
    tcase_add_test(errors, test_syntax_error_tab);
    tcase_add_test(errors, test_bad_utf8);
    tcase_add_test(errors, test_missing_file);
    tcase_add_test(errors, test_two_documents);
    tcase_add_test(errors, test_deep_nesting);
    tcase_add_loop_test(errors, test_set_errors, 0, (int)(sizeof bad_sets / sizeof bad_sets[0]));
    tcase_add_loop_test(errors, test_getter_errors, 0,
                        (int)(sizeof getter_errors / sizeof getter_errors[0]));
    tcase_add_test(errors, test_hint_text);
    tcase_add_test(errors, test_not_map_or_list);
    tcase_add_test(errors, test_quoting);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(ydoc_suite());
}
