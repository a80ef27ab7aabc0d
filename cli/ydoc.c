/* ydoc.c - YAML documents with positions, --set overrides, typed getters and the
 * collected `file:line:col: key.path: message` diagnostics of ydoc.h.
 *
 * libyaml's document loader keeps a start mark on every node; this file turns those
 * marks into 1-based GNU-style positions, and marks the nodes that --set creates so
 * that errors about them name the command line instead of a file position.
 */
#include "ydoc.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_units.h"

/* Nodes made by ydoc_set() carry this start_mark.index. A loaded node's index is a
 * byte offset into the file, which can never reach SIZE_MAX, so the mark is free. */
#define CLI_MARK SIZE_MAX
#define CLI_FILE "--set"

/* Where command-line nodes come from: an option ("--set", "--seed", ...), or a place in
 * another file (a sweep's value at sweep.yaml:12:20). A command-line node's
 * start_mark.line is an index into this table, so that an error about it names what the
 * user wrote and where. Entries are added once and kept for the process's life (a few per
 * option, one per value of a sweep). */
static void *xrealloc(void *p, size_t n);
static char *xstrdup(const char *s);
static int set_one(ydoc *d, const char *assignment, ydiag *g);

typedef struct set_origin {
    char *file;       /* owned: "--set", or a file name */
    size_t line, col; /* 1-based place in that file; 0 for an option */
} set_origin;
static set_origin *origins;
static size_t n_origins, cap_origins;

static size_t origin_index(const char *file, size_t line, size_t col)
{
    for (size_t i = 0; i < n_origins; i++)
        if (origins[i].line == line && origins[i].col == col && strcmp(origins[i].file, file) == 0)
            return i;
    if (n_origins == cap_origins) {
        cap_origins = cap_origins ? 2 * cap_origins : 16;
        origins = xrealloc(origins, cap_origins * sizeof *origins);
    }
    origins[n_origins] = (set_origin){xstrdup(file), line, col};
    return n_origins++;
}

/* The origin of the nodes being created by the current ydoc_set_*() call. */
static size_t current_origin;

/* Room for a key path in messages ("producers[12].latency.median"); longer paths are
 * truncated in the message, which is harmless. */
#define PATH_LEN 256
/* Room for a quoted echo of the user's text. */
#define QUOTE_LEN 96

/* ==== small helpers ================================================================ */

/* Diagnostics must never be lost silently, and a loader that cannot allocate a few
 * bytes for a message has nothing useful left to do: out of memory aborts. */
static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL) {
        fputs("kdsim: out of memory\n", stderr);
        abort();
    }
    return q;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

static char *xvformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    SIM_ASSERT(n >= 0);
    char *buf = xrealloc(NULL, (size_t)n + 1);
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    return buf;
}

/* The text of a scalar node as a C string. */
static const char *scalar_text(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static bool scalar_is(const yaml_node_t *n, const char *s)
{
    size_t len = strlen(s);
    return n->type == YAML_SCALAR_NODE && n->data.scalar.length == len &&
           memcmp(n->data.scalar.value, s, len) == 0;
}

/* Echo user text inside double quotes for a message: quotes, backslashes and control
 * characters escaped (a block scalar's newlines must not break the one-line format),
 * and long text cut at a UTF-8 character boundary with "...". */
static const char *quote(char buf[QUOTE_LEN], const char *s)
{
    /* Room after `keep` for an escape pair, the rest of a UTF-8 character, "...", the
     * closing quote and the NUL. */
    const size_t keep = QUOTE_LEN - 16;
    size_t o = 0;
    buf[o++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (o >= keep && ((*p & 0xC0) != 0x80 || o >= keep + 4)) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (*p == '"' || *p == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)*p;
        } else if (*p == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else if (*p == '\t') {
            buf[o++] = '\\';
            buf[o++] = 't';
        } else if (*p < 0x20 || *p == 0x7f) {
            buf[o++] = '?';
        } else {
            buf[o++] = (char)*p;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

/* What the user wrote, for "..., got X": a quoted scalar, "an empty value", "a list"
 * or "a mapping". */
static const char *describe(char buf[QUOTE_LEN], const yaml_node_t *n)
{
    if (n == NULL)
        return "nothing";
    switch (n->type) {
    case YAML_SCALAR_NODE:
        if (n->data.scalar.length == 0)
            return "an empty value";
        return quote(buf, scalar_text(n));
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "nothing";
    }
}

/* ==== diagnostics ================================================================== */

void ydiag_init(ydiag *g)
{
    g->items = NULL;
    g->n = 0;
    g->cap = 0;
}

void ydiag_fini(ydiag *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < g->n; i++) {
        free(g->items[i].file);
        free(g->items[i].path);
        free(g->items[i].msg);
    }
    free(g->items);
    ydiag_init(g);
}

/* Add one item with a ready message (ownership of msg passes to g). A mark left by
 * ydoc_set() turns the item into a command-line one, whoever the caller is. */
static void diag_push(ydiag *g, const char *file, const yaml_mark_t *mark, const char *path,
                      char *msg)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 8;
        g->items = xrealloc(g->items, g->cap * sizeof *g->items);
    }
    ydiag_item *it = &g->items[g->n++];
    yaml_mark_t at;
    if (mark != NULL && mark->index == CLI_MARK) {
        const set_origin *o = mark->line < n_origins ? &origins[mark->line] : NULL;
        file = o ? o->file : CLI_FILE;
        mark = NULL;
        if (o && o->line > 0) {
            at = (yaml_mark_t){0, o->line - 1, o->col - 1};
            mark = &at;
        }
    }
    it->file = xstrdup(file ? file : "");
    it->line = mark ? (long)mark->line + 1 : 0; /* libyaml counts from 0, GNU from 1 */
    it->col = mark ? (long)mark->column + 1 : 0;
    it->path = xstrdup(path ? path : "");
    it->msg = msg;
}

void ydiag_add(ydiag *g, const char *file, const yaml_mark_t *mark, const char *path,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = xvformat(fmt, ap);
    va_end(ap);
    diag_push(g, file, mark, path, msg);
}

/* Sort key of one item; seq keeps the sort stable (qsort is not). */
typedef struct diag_order {
    const ydiag_item *it;
    size_t file_rank; /* order in which the item's file first appeared */
    size_t seq;       /* order of addition */
} diag_order;

static int diag_cmp(const void *pa, const void *pb)
{
    const diag_order *a = pa, *b = pb;
    /* Items without a position (unreadable file, --set) come first: they are about
     * the run as a whole, and later messages may be their consequences. */
    bool pos_a = a->it->line > 0, pos_b = b->it->line > 0;
    if (pos_a != pos_b)
        return pos_a ? 1 : -1;
    if (pos_a) {
        if (a->file_rank != b->file_rank)
            return a->file_rank < b->file_rank ? -1 : 1;
        if (a->it->line != b->it->line)
            return a->it->line < b->it->line ? -1 : 1;
        if (a->it->col != b->it->col)
            return a->it->col < b->it->col ? -1 : 1;
    }
    return a->seq < b->seq ? -1 : (a->seq > b->seq ? 1 : 0);
}

void ydiag_print(const ydiag *g, FILE *out, const char *prog)
{
    if (g == NULL || g->n == 0)
        return;
    diag_order *ord = xrealloc(NULL, g->n * sizeof *ord);
    for (size_t i = 0; i < g->n; i++) {
        ord[i].it = &g->items[i];
        ord[i].seq = i;
        ord[i].file_rank = i;
        /* Quadratic, but a run reports tens of errors, not thousands. */
        for (size_t j = 0; j < i; j++) {
            if (strcmp(g->items[j].file, g->items[i].file) == 0) {
                ord[i].file_rank = ord[j].file_rank;
                break;
            }
        }
    }
    qsort(ord, g->n, sizeof *ord, diag_cmp);

    for (size_t i = 0; i < g->n; i++) {
        const ydiag_item *it = ord[i].it;
        if (prog != NULL && prog[0] != '\0')
            fprintf(out, "%s: ", prog);
        if (it->file[0] != '\0') {
            if (it->line > 0)
                fprintf(out, "%s:%ld:%ld: ", it->file, it->line, it->col);
            else
                fprintf(out, "%s: ", it->file);
        }
        /* "--seed: seed: ..." says the key twice: the option already names it. */
        bool echo = it->file[0] == '-' && it->file[1] == '-' && strcmp(it->file + 2, it->path) == 0;
        if (it->path[0] != '\0' && !echo)
            fprintf(out, "%s: ", it->path);
        fprintf(out, "%s\n", it->msg);
    }
    free(ord);
}

void ydiag_dedupe(ydiag *g)
{
    size_t kept = 0;
    for (size_t i = 0; i < g->n; i++) {
        ydiag_item *it = &g->items[i];
        bool seen = false;
        /* Quadratic, like ydiag_print: tens of distinct errors, not thousands. */
        for (size_t j = 0; j < kept && !seen; j++) {
            const ydiag_item *k = &g->items[j];
            seen = k->line == it->line && k->col == it->col && strcmp(k->file, it->file) == 0 &&
                   strcmp(k->path, it->path) == 0 && strcmp(k->msg, it->msg) == 0;
        }
        if (seen) {
            free(it->file);
            free(it->path);
            free(it->msg);
        } else {
            g->items[kept++] = *it;
        }
    }
    g->n = kept;
}

void ydiag_report(const ydiag *g, FILE *out, const char *file)
{
    size_t n = g ? g->n : 0;
    ydiag_print(g, out, "kdsim");
    fprintf(out, "kdsim: %zu error%s in %s; nothing was run\n", n, n == 1 ? "" : "s", file);
}

/* ==== loading ====================================================================== */

#define OOM_MSG "out of memory while reading the file"

/* The 0-based line and column of byte `off` of text, as libyaml's scanner counts them:
 * a line ends at \n, \r\n or \r, and a column is a character (a UTF-8 lead byte; a
 * byte-order mark at the start counts for none). */
static yaml_mark_t offset_mark(const char *text, size_t len, size_t off)
{
    yaml_mark_t m = {off, 0, 0};
    size_t i = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    for (; i < off && i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n' || (c == '\r' && (i + 1 >= len || text[i + 1] != '\n'))) {
            m.line++;
            m.column = 0;
        } else if (c != '\r' && (c & 0xC0) != 0x80) {
            m.column++;
        }
    }
    return m;
}

/* Report a libyaml failure. Scanner, parser and composer errors have a problem mark
 * (and often a context: "while scanning a simple key" with where it started); reader
 * errors (bad UTF-8, control characters) have only a byte offset. */
static void report_parser_error(ydiag *g, const char *name, const yaml_parser_t *p,
                                const char *text, size_t len)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    /* libyaml's words for a tab in indentation ("found character that cannot start any
     * token") do not tell a user what to do. */
    size_t at = p->problem_mark.index;
    if (p->error == YAML_SCANNER_ERROR && at < len && text[at] == '\t') {
        ydiag_add(g, name, &p->problem_mark, "",
                  "invalid YAML: found a tab character where YAML expects spaces; indent "
                  "with spaces, not tabs");
        return;
    }
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        ydiag_add(g, name, NULL, "", OOM_MSG);
        break;
    case YAML_READER_ERROR: {
        /* The reader gives only a byte offset: its line and column, counted as the
         * scanner counts them (characters, not bytes), place it like any other error. */
        yaml_mark_t m = offset_mark(text, len, p->problem_offset);
        bool control = strcmp(problem, "control characters are not allowed") == 0;
        if (control && p->problem_value == 0)
            /* NULs between the letters are what UTF-16 without a byte-order mark looks
             * like to a UTF-8 reader. */
            ydiag_add(g, name, &m, "",
                      "invalid YAML: a NUL byte is not allowed in YAML text; if the file was "
                      "saved as UTF-16, save it as UTF-8, otherwise delete it");
        else if (control)
            ydiag_add(g, name, &m, "",
                      "invalid YAML: the control character U+%04X is not allowed in YAML text, "
                      "which holds only tabs, line breaks and printable characters; delete it",
                      (unsigned)p->problem_value);
        else {
            /* libyaml places a bad trailing octet after the byte that began the
             * sequence (the Latin-1 0xE9 of "caf\xe9,"): point at that byte instead. */
            size_t at_byte = p->problem_offset < len ? p->problem_offset : len;
            if (strstr(problem, "trailing") != NULL) {
                size_t k = at_byte;
                while (k > 0 && at_byte - k < 4 && ((unsigned char)text[k - 1] & 0xC0) == 0x80)
                    k--;
                if (k > 0 && ((unsigned char)text[k - 1] & 0xC0) == 0xC0)
                    at_byte = k - 1;
            }
            m = offset_mark(text, len, at_byte);
            if (at_byte < len)
                ydiag_add(g, name, &m, "",
                          "invalid YAML: the text is not valid UTF-8 here (byte 0x%02X); save "
                          "the file as UTF-8",
                          (unsigned)(unsigned char)text[at_byte]);
            else
                ydiag_add(g, name, &m, "",
                          "invalid YAML: the text is not valid UTF-8 here (the file ends inside "
                          "a character); save the file as UTF-8");
        }
        break;
    }
    default:
        if (p->context != NULL)
            ydiag_add(g, name, &p->problem_mark, "",
                      "invalid YAML: %s (%s started at line %zu, column %zu)", problem, p->context,
                      p->context_mark.line + 1, p->context_mark.column + 1);
        else
            ydiag_add(g, name, &p->problem_mark, "", "invalid YAML: %s", problem);
        break;
    }
}

/* Read the whole file's events before loading it, for what the loader would let
 * through: libyaml's yaml_parser_load returns the first document and leaves the rest
 * unread, so a second document (after a `---`), or a syntax error after the first one,
 * would be ignored without a word; and its scanner takes time quadratic in the nesting
 * depth (80,000 nested `[` cost half a minute), so nesting deeper than YDOC_MAX_DEPTH is
 * refused as soon as it is read. Returns 0, or SIM_ESYNTAX (SIM_ENOMEM) with an item in g
 * when the file has any of those, or any other syntax error (the loader would report it
 * the same way). */
static int prescan(ydiag *g, const char *name, const char *text, size_t len)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return 0; /* the loader reports the lack of memory */
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int rc = 0;
    bool done = false;
    int docs = 0, depth = 0;
    while (rc == 0 && !done) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            report_parser_error(g, name, &p, text, len);
            rc = p.error == YAML_MEMORY_ERROR ? SIM_ENOMEM : SIM_ESYNTAX;
            break;
        }
        switch (e.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++docs == 2) {
                ydiag_add(g, name, &e.start_mark, "",
                          "the file holds more than one YAML document; a scenario is one "
                          "document: delete the second from here on, or give it a file of "
                          "its own");
                rc = SIM_ESYNTAX;
            }
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++depth > YDOC_MAX_DEPTH) {
                ydiag_add(g, name, &e.start_mark, "",
                          "lists and mappings nest more than %d deep here (a scenario needs "
                          "a few levels); look for a '[' or '{' that is never closed",
                          YDOC_MAX_DEPTH);
                rc = SIM_ESYNTAX;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&p);
    return rc;
}

int ydoc_load_string(ydoc *d, const char *name, const char *text, size_t len, ydiag *g)
{
    memset(d, 0, sizeof *d);
    int rc = prescan(g, name, text, len);
    if (rc)
        return rc;

    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        ydiag_add(g, name, NULL, "", OOM_MSG);
        return SIM_ENOMEM;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &d->doc)) {
        /* yaml_parser_load has already deleted the partial document. */
        rc = p.error == YAML_MEMORY_ERROR ? SIM_ENOMEM : SIM_ESYNTAX;
        report_parser_error(g, name, &p, text, len);
        yaml_parser_delete(&p);
        return rc;
    }
    yaml_parser_delete(&p);

    /* An empty file (or one holding only comments, or a bare "---") means "all
     * defaults": give it an empty mapping so that callers need no special case. */
    yaml_node_t *root = yaml_document_get_root_node(&d->doc);
    if (root == NULL || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
                         root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)) {
        yaml_document_delete(&d->doc);
        if (!yaml_document_initialize(&d->doc, NULL, NULL, NULL, 1, 1) ||
            !yaml_document_add_mapping(&d->doc, NULL, YAML_BLOCK_MAPPING_STYLE)) {
            yaml_document_delete(&d->doc);
            ydiag_add(g, name, NULL, "", OOM_MSG);
            return SIM_ENOMEM;
        }
    }
    d->loaded = true;
    d->file = xstrdup(name);
    return 0;
}

int ydoc_load_file(ydoc *d, const char *path, ydiag *g)
{
    memset(d, 0, sizeof *d);

    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        ydiag_add(g, path, NULL, "", "cannot open the file: %s", strerror(errno));
        return SIM_EIO;
    }
    /* Read it whole: scenarios are small, and one in-memory path serves files and
     * tests alike. */
    size_t len = 0, cap = 4096;
    char *buf = xrealloc(NULL, cap);
    for (;;) {
        if (len == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int err = errno;
        fclose(f);
        free(buf);
        ydiag_add(g, path, NULL, "", "cannot read the file: %s", strerror(err));
        return SIM_EIO;
    }
    fclose(f);

    int rc = ydoc_load_string(d, path, buf, len, g);
    free(buf);
    return rc;
}

void ydoc_fini(ydoc *d)
{
    if (d == NULL)
        return;
    if (d->loaded)
        yaml_document_delete(&d->doc);
    free(d->file);
    memset(d, 0, sizeof *d);
}

yaml_node_t *ydoc_root(ydoc *d)
{
    if (d == NULL || !d->loaded)
        return NULL;
    return yaml_document_get_root_node(&d->doc);
}

/* ==== --set overrides ============================================================== */

/* One step of an override's key path: a mapping key or a list index. */
typedef struct set_step {
    const char *key; /* borrowed, into the path copy; NULL for an index */
    size_t index;    /* list index when key == NULL */
} set_step;

/* Split "a.b[1].c" (modified in place) into steps. Keys are non-empty and free of
 * '.', '[' and ']'; an index is a decimal number in brackets after a key or another
 * index. Returns the number of steps, or 0 when the path is malformed. */
static size_t split_path(char *s, set_step *steps, size_t max)
{
    size_t n = 0;
    char *p = s;
    for (;;) {
        /* A key (always first, and after every '.'). */
        char *k = p;
        while (*p != '\0' && *p != '.' && *p != '[' && *p != ']')
            p++;
        if (p == k || n == max)
            return 0;
        steps[n].key = k;
        steps[n++].index = 0;
        /* Any number of [N] after it. */
        while (*p == '[') {
            *p++ = '\0';
            char *digits = p;
            size_t v = 0;
            while (*p >= '0' && *p <= '9') {
                size_t dv = (size_t)(*p - '0');
                if (v > (SIZE_MAX - dv) / 10)
                    return 0;
                v = v * 10 + dv;
                p++;
            }
            if (p == digits || *p != ']' || n == max)
                return 0;
            *p++ = '\0';
            steps[n].key = NULL;
            steps[n++].index = v;
        }
        if (*p == '\0')
            return n;
        if (*p != '.')
            return 0;
        *p++ = '\0';
    }
}

/* Mark node `id` as the current override's: messages about it name the override. */
static void mark_cli(yaml_document_t *doc, int id)
{
    yaml_node_t *n = yaml_document_get_node(doc, id);
    n->start_mark.index = n->end_mark.index = CLI_MARK;
    n->start_mark.line = n->end_mark.line = current_origin;
}

/* Add a node for the command line and mark it as such. Returns its id, or 0. */
static int add_cli_scalar(yaml_document_t *doc, const char *text)
{
    int id =
        yaml_document_add_scalar(doc, NULL, (const yaml_char_t *)text, -1, YAML_PLAIN_SCALAR_STYLE);
    if (id != 0)
        mark_cli(doc, id);
    return id;
}

/* The most nodes one --set value may hold, its aliases expanded: a value is a few items
 * (a list of failure times, an outage's two keys), and aliases of aliases must not
 * expand into the document without bound. */
#define SET_VALUE_MAX_NODES 4096

/* Copy node `id` of src and everything under it into dst as command-line nodes; each
 * node spends one of *budget. Returns the copy's id, or 0 (out of memory, or the budget
 * spent). Ids, not pointers, into dst: adding a node may move its node array. */
static int copy_cli_node(yaml_document_t *dst, yaml_document_t *src, int id, long *budget)
{
    if (--*budget < 0)
        return 0;
    yaml_node_t *n = yaml_document_get_node(src, id);
    int nid = 0;
    switch (n->type) {
    case YAML_SCALAR_NODE:
        nid = yaml_document_add_scalar(dst, NULL, n->data.scalar.value,
                                       (int)n->data.scalar.length, n->data.scalar.style);
        if (nid)
            mark_cli(dst, nid);
        return nid;
    case YAML_SEQUENCE_NODE:
        if ((nid = yaml_document_add_sequence(dst, NULL, YAML_FLOW_SEQUENCE_STYLE)) == 0)
            return 0;
        mark_cli(dst, nid);
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            int c = copy_cli_node(dst, src, *it, budget);
            if (c == 0 || !yaml_document_append_sequence_item(dst, nid, c))
                return 0;
        }
        return nid;
    case YAML_MAPPING_NODE:
        if ((nid = yaml_document_add_mapping(dst, NULL, YAML_FLOW_MAPPING_STYLE)) == 0)
            return 0;
        mark_cli(dst, nid);
        for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
             pr++) {
            int k = copy_cli_node(dst, src, pr->key, budget);
            int v = k ? copy_cli_node(dst, src, pr->value, budget) : 0;
            if (v == 0 || !yaml_document_append_mapping_pair(dst, nid, k, v))
                return 0;
        }
        return nid;
    default:
        return 0;
    }
}

/* The node for an override's value: a YAML flow list or mapping when it is one
 * ("[450s, 20m]", "{at: 1h, for: 6h}"), so that --set reaches the keys whose values are
 * lists or mappings; otherwise (and when it does not read as one, such as a description
 * "[draft] ...") the text itself. Nesting deeper than YDOC_MAX_DEPTH is kept as text
 * without being parsed (libyaml's scanner is quadratic in the depth). Returns the id, 0
 * on failure, with *too_big set when the value expands past SET_VALUE_MAX_NODES. */
static int add_cli_value(yaml_document_t *doc, const char *value, bool *too_big)
{
    *too_big = false;
    if (value[0] != '[' && value[0] != '{')
        return add_cli_scalar(doc, value);
    int depth = 0, deepest = 0;
    for (const char *c = value; *c; c++) {
        depth += *c == '[' || *c == '{';
        depth -= (*c == ']' || *c == '}') && depth > 0;
        if (depth > deepest)
            deepest = depth;
    }
    yaml_parser_t p;
    yaml_document_t v;
    if (deepest > YDOC_MAX_DEPTH || !yaml_parser_initialize(&p))
        return add_cli_scalar(doc, value);
    yaml_parser_set_input_string(&p, (const unsigned char *)value, strlen(value));
    if (!yaml_parser_load(&p, &v)) {
        yaml_parser_delete(&p);
        return add_cli_scalar(doc, value);
    }
    /* The whole value must be that one list or mapping: libyaml stops after the first
     * document, and "[draft] notes" reads as [draft] and the rest left unread. */
    yaml_document_t rest;
    bool whole = yaml_parser_load(&p, &rest);
    if (whole) {
        whole = yaml_document_get_root_node(&rest) == NULL;
        yaml_document_delete(&rest);
    }
    yaml_parser_delete(&p);
    yaml_node_t *root = yaml_document_get_root_node(&v);
    int id;
    if (!whole || root == NULL || root->type == YAML_SCALAR_NODE) {
        id = add_cli_scalar(doc, value);
    } else {
        long budget = SET_VALUE_MAX_NODES;
        id = copy_cli_node(doc, &v, 1, &budget);
        *too_big = budget < 0;
    }
    yaml_document_delete(&v);
    return id;
}

static int add_cli_mapping(yaml_document_t *doc)
{
    int id = yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE);
    if (id != 0)
        mark_cli(doc, id);
    return id;
}

/* The id of the first pair of mapping `map` whose key is `key`, as an index into its
 * pairs, or -1. The first one wins, as in yw_get(). */
static long find_pair(yaml_document_t *doc, int map, const char *key)
{
    yaml_node_t *m = yaml_document_get_node(doc, map);
    long np = (long)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
    for (long i = 0; i < np; i++) {
        yaml_node_t *k = yaml_document_get_node(doc, m->data.mapping.pairs.start[i].key);
        if (k != NULL && scalar_is(k, key))
            return i;
    }
    return -1;
}

#define SET_MAX_STEPS 32

/* Walk (and grow) the document along the steps and store the value. Works with node
 * ids, not pointers, because adding a node may move the document's node array. */
static int set_apply(ydoc *d, const set_step *steps, size_t nsteps, const char *value, ydiag *g)
{
    yaml_document_t *doc = &d->doc;
    char where[PATH_LEN] = ""; /* the path walked so far, for messages */
    const yaml_mark_t here = {CLI_MARK, current_origin, 0}; /* the override's origin */
    bool too_big = false;
    /* ydoc_load_* always leaves a root, and libyaml's root is the first node added. */
    SIM_ASSERT(yaml_document_get_root_node(doc) != NULL);
    int cur = 1;

    for (size_t s = 0; s < nsteps; s++) {
        bool last = s + 1 == nsteps;
        yaml_node_t *node = yaml_document_get_node(doc, cur);
        int new_id;

        if (steps[s].key != NULL) {
            const char *key = steps[s].key;
            if (node->type != YAML_MAPPING_NODE) {
                ydiag_add(g, "", &here, where,
                          "cannot set key '%s': the value here is %s, not a mapping", key,
                          node->type == YAML_SEQUENCE_NODE ? "a list" : "a single value");
                return SIM_EINVAL;
            }
            long p = find_pair(doc, cur, key);
            yw_path(where, sizeof where, where, key);
            if (p >= 0 && last) {
                /* Replace the value, keeping the key (and its file position). */
                if ((new_id = add_cli_value(doc, value, &too_big)) == 0)
                    goto add_failed;
                node = yaml_document_get_node(doc, cur);
                node->data.mapping.pairs.start[p].value = new_id;
                return 0;
            }
            if (p >= 0) {
                cur = node->data.mapping.pairs.start[p].value;
                continue;
            }
            if (!last && steps[s + 1].key == NULL) {
                ydiag_add(g, "", &here, where,
                          "no such list; [%zu] can only change an item the file defines",
                          steps[s + 1].index);
                return SIM_EINVAL;
            }
            int key_id = add_cli_scalar(doc, key);
            if (key_id == 0)
                goto add_failed;
            new_id = last ? add_cli_value(doc, value, &too_big) : add_cli_mapping(doc);
            if (new_id == 0 || !yaml_document_append_mapping_pair(doc, cur, key_id, new_id))
                goto add_failed;
            if (last)
                return 0;
            cur = new_id;
        } else {
            size_t i = steps[s].index;
            if (node->type != YAML_SEQUENCE_NODE) {
                ydiag_add(g, "", &here, where,
                          "cannot use [%zu]: the value here is %s", i,
                          node->type == YAML_MAPPING_NODE ? "a mapping, not a list"
                                                          : "a single value, not a list");
                return SIM_EINVAL;
            }
            size_t len = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
            if (i >= len) {
                if (len == 0)
                    ydiag_add(g, "", &here, where,
                              "no item [%zu]: the list is empty", i);
                else
                    ydiag_add(g, "", &here, where,
                              "no item [%zu]: the list has %zu item%s (indices 0 to %zu)", i, len,
                              len == 1 ? "" : "s", len - 1);
                return SIM_EINVAL;
            }
            yw_index(where, sizeof where, where, i);
            if (last) {
                if ((new_id = add_cli_value(doc, value, &too_big)) == 0)
                    goto add_failed;
                node = yaml_document_get_node(doc, cur);
                node->data.sequence.items.start[i] = new_id;
                return 0;
            }
            cur = node->data.sequence.items.start[i];
        }
    }
    SIM_ASSERT(!"set_apply: the last step returns");
    return SIM_EINVAL;

add_failed:
    if (too_big) {
        ydiag_add(g, "", &here, where,
                  "the value holds more than %d items and keys, its aliases expanded; a "
                  "scenario value needs a few",
                  SET_VALUE_MAX_NODES);
        return SIM_EINVAL;
    }
    /* libyaml refuses a scalar that is not valid UTF-8 (or runs out of memory); a key
     * path that was accepted is valid UTF-8 only if the value is the culprit, so name
     * both. */
    ydiag_add(g, "", &here, where, "the key or value is not valid UTF-8 text");
    return SIM_EINVAL;
}

int ydoc_set(ydoc *d, const char *assignment, ydiag *g)
{
    return ydoc_set_as(d, CLI_FILE, assignment, g);
}

int ydoc_set_at(ydoc *d, const char *file, long line, long col, const char *assignment,
                ydiag *g)
{
    current_origin = origin_index(file, line > 0 ? (size_t)line : 0,
                                  line > 0 && col > 0 ? (size_t)col : line > 0 ? 1 : 0);
    return set_one(d, assignment, g);
}

int ydoc_set_as(ydoc *d, const char *origin, const char *assignment, ydiag *g)
{
    current_origin = origin_index(origin, 0, 0);
    return set_one(d, assignment, g);
}

int ydoc_set_any(ydoc *d, const char *set, ydiag *g)
{
    if (set[0] == '\x1f') {
        /* "\x1fFILE\x1fLINE:COL\x1fkey=value": written at FILE:LINE:COL. */
        const char *f = set + 1, *fe = strchr(f, '\x1f');
        char *end = NULL;
        long line = fe ? strtol(fe + 1, &end, 10) : 0;
        long col = end && *end == ':' ? strtol(end + 1, &end, 10) : 0;
        if (fe && end && *end == '\x1f') {
            char *file = xrealloc(NULL, (size_t)(fe - f) + 1);
            memcpy(file, f, (size_t)(fe - f));
            file[fe - f] = '\0';
            int rc = ydoc_set_at(d, file, line, col, end + 1, g);
            free(file);
            return rc;
        }
    }
    /* "--seed seed=7": an override that the option --seed made. */
    const char *sp = strchr(set, ' ');
    if (strncmp(set, "--", 2) == 0 && sp) {
        static const char *const opts[] = {"--seed", "--duration", "--prices", "--vary"};
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++)
            if ((size_t)(sp - set) == strlen(opts[k]) &&
                strncmp(set, opts[k], strlen(opts[k])) == 0)
                return ydoc_set_as(d, opts[k], sp + 1, g);
        return ydoc_set(d, sp + 1, g);
    }
    return ydoc_set(d, set, g);
}

/* Apply one override with the current origin. */
static int set_one(ydoc *d, const char *assignment, ydiag *g)
{
    char q[QUOTE_LEN];
    const yaml_mark_t here = {CLI_MARK, current_origin, 0};
    const char *eq = strchr(assignment, '=');
    if (d == NULL || !d->loaded) {
        ydiag_add(g, "", &here, "", "no scenario is loaded to apply %s to",
                  quote(q, assignment));
        return SIM_EINVAL;
    }
    if (eq == NULL || eq == assignment) {
        ydiag_add(g, "", &here, "",
                  "expected key.path=value (such as stream.shards=4 or producers[0].rate=500/s),"
                  " got %s",
                  quote(q, assignment));
        return SIM_EINVAL;
    }

    size_t klen = (size_t)(eq - assignment);
    char *path = xrealloc(NULL, klen + 1);
    memcpy(path, assignment, klen);
    path[klen] = '\0';

    set_step steps[SET_MAX_STEPS];
    size_t n = split_path(path, steps, SET_MAX_STEPS);
    int rc;
    if (n == 0) {
        ydiag_add(g, "", &here, "",
                  "expected key.path=value with keys joined by '.' and list items as [0] "
                  "(such as producers[0].rate=500/s), got %s",
                  quote(q, assignment));
        rc = SIM_EINVAL;
    } else {
        rc = set_apply(d, steps, n, eq + 1, g);
    }
    free(path);
    return rc;
}

/* ==== walking ====================================================================== */

void yw_error(ywalk *w, yaml_node_t *n, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = xvformat(fmt, ap);
    va_end(ap);
    /* diag_push turns a --set node's mark into the command-line origin. */
    diag_push(w->g, w->d ? w->d->file : "", n ? &n->start_mark : NULL, path, msg);
}

/* Copy src into buf of n bytes, cutting it short if need be (a truncated path in a
 * message beats an overflow, and snprintf's truncation warnings). */
static char *copy_cut(char *buf, size_t n, const char *src)
{
    if (n == 0)
        return buf;
    size_t len = strlen(src);
    if (len >= n)
        len = n - 1;
    memmove(buf, src, len);
    buf[len] = '\0';
    return buf;
}

char *yw_path(char *buf, size_t n, const char *path, const char *key)
{
    char tmp[PATH_LEN * 2];
    /* Format into a copy first: callers may pass their own buffer as `path`. */
    if (path == NULL || path[0] == '\0')
        snprintf(tmp, sizeof tmp, "%s", key);
    else
        snprintf(tmp, sizeof tmp, "%s.%s", path, key);
    return copy_cut(buf, n, tmp);
}

char *yw_index(char *buf, size_t n, const char *path, size_t i)
{
    char tmp[PATH_LEN * 2];
    snprintf(tmp, sizeof tmp, "%s[%zu]", path ? path : "", i);
    return copy_cut(buf, n, tmp);
}

bool yw_is_map(ywalk *w, yaml_node_t *n, const char *path)
{
    char q[QUOTE_LEN];
    if (n != NULL && n->type == YAML_MAPPING_NODE)
        return true;
    if (n != NULL && n->start_mark.index == CLI_MARK)
        yw_error(w, n, path, "expected a mapping of keys to values, such as {a: 1, b: 2}, got %s",
                 describe(q, n));
    else
        yw_error(w, n, path, "expected a mapping of keys to values, got %s", describe(q, n));
    return false;
}

bool yw_is_seq(ywalk *w, yaml_node_t *n, const char *path)
{
    char q[QUOTE_LEN];
    if (n != NULL && n->type == YAML_SEQUENCE_NODE)
        return true;
    if (n != NULL && n->start_mark.index == CLI_MARK)
        yw_error(w, n, path, "expected a list, such as [a, b], got %s", describe(q, n));
    else
        yw_error(w, n, path, "expected a list (items starting with '- '), got %s",
                 describe(q, n));
    return false;
}

yaml_node_t *yw_get(ywalk *w, yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&w->d->doc, p->key);
        if (k != NULL && scalar_is(k, key))
            return yaml_document_get_node(&w->d->doc, p->value);
    }
    return NULL;
}

size_t yw_seq_len(ywalk *w, yaml_node_t *seq)
{
    (void)w;
    if (seq == NULL || seq->type != YAML_SEQUENCE_NODE)
        return 0;
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

yaml_node_t *yw_seq_item(ywalk *w, yaml_node_t *seq, size_t i)
{
    if (i >= yw_seq_len(w, seq))
        return NULL;
    return yaml_document_get_node(&w->d->doc, seq->data.sequence.items.start[i]);
}

const char *yw_scalar(ywalk *w, yaml_node_t *n, const char *path)
{
    char q[QUOTE_LEN];
    if (n == NULL || n->type != YAML_SCALAR_NODE) {
        yw_error(w, n, path, "expected a single value, got %s", describe(q, n));
        return NULL;
    }
    /* A "\0" escape would silently cut the text short for every parser below. */
    if (strlen(scalar_text(n)) != n->data.scalar.length) {
        yw_error(w, n, path, "the value contains a NUL character; remove the \\0 escape");
        return NULL;
    }
    return scalar_text(n);
}

/* ==== key checking ================================================================= */

#define SUGGEST_MAX_LEN 64

/* Optimal string alignment distance: Levenshtein plus adjacent transpositions, the
 * commonest typo ("raet" for "rate"). Strings longer than SUGGEST_MAX_LEN - 1 get a
 * large distance, as nobody mistypes a key that long into another. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= SUGGEST_MAX_LEN || lb >= SUGGEST_MAX_LEN)
        return SIZE_MAX;
    unsigned char d[SUGGEST_MAX_LEN][SUGGEST_MAX_LEN]; /* distances stay below 64 */
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (unsigned char)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (unsigned char)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = (size_t)d[i - 1][j] + 1;
            if ((size_t)d[i][j - 1] + 1 < v)
                v = (size_t)d[i][j - 1] + 1;
            if ((size_t)d[i - 1][j - 1] + cost < v)
                v = (size_t)d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                (size_t)d[i - 2][j - 2] + 1 < v)
                v = (size_t)d[i - 2][j - 2] + 1;
            d[i][j] = (unsigned char)v;
        }
    }
    return d[la][lb];
}

static size_t common_prefix(const char *a, const char *b)
{
    size_t n = 0;
    while (a[n] != '\0' && a[n] == b[n])
        n++;
    return n;
}

/* The allowed name closest to `word`, or NULL when none is close: within 2 edits (and
 * not all of the candidate replaced, so "x" does not suggest "id"), or sharing a
 * prefix of 4 or more characters ("producer_rate" -> "producers"). Ties go to the
 * longer shared prefix, then to the earlier name. */
static const char *suggest(const char *word, const char *const *names)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX, best_p = 0;
    for (size_t i = 0; names[i] != NULL; i++) {
        size_t dist = edit_distance(word, names[i]);
        size_t pre = common_prefix(word, names[i]);
        bool close = (dist <= 2 && dist < strlen(names[i])) || pre >= 4;
        if (!close)
            continue;
        if (best == NULL || dist < best_d || (dist == best_d && pre > best_p)) {
            best = names[i];
            best_d = dist;
            best_p = pre;
        }
    }
    return best;
}

/* "a, b or c" into buf, for "expected one of ..." and "allowed keys are ...". */
static char *join_names(char *buf, size_t n, const char *const *names, const char *last_sep)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; names[i] != NULL && o < n; i++) {
        const char *sep = i == 0 ? "" : (names[i + 1] == NULL ? last_sep : ", ");
        int k = snprintf(buf + o, n - o, "%s%s", sep, names[i]);
        if (k < 0)
            break;
        o += (size_t)k;
    }
    return buf;
}

int yw_check_keys(ywalk *w, yaml_node_t *n, const char *path, const char *const *allowed)
{
    if (n == NULL || n->type != YAML_MAPPING_NODE)
        return 0;
    int reported = 0;
    yaml_node_pair_t *pairs = n->data.mapping.pairs.start;
    size_t np = (size_t)(n->data.mapping.pairs.top - pairs);
    char q[QUOTE_LEN];

    for (size_t i = 0; i < np; i++) {
        yaml_node_t *k = yaml_document_get_node(&w->d->doc, pairs[i].key);
        if (k == NULL)
            continue;
        if (k->type != YAML_SCALAR_NODE) {
            yw_error(w, k, path, "expected a plain key name, got %s", describe(q, k));
            reported++;
            continue;
        }
        const char *name = scalar_text(k);

        /* A repeated key is reported once per repeat, and not again as unknown. */
        bool repeat = false;
        for (size_t j = 0; j < i && !repeat; j++) {
            yaml_node_t *kj = yaml_document_get_node(&w->d->doc, pairs[j].key);
            repeat =
                kj != NULL && kj->type == YAML_SCALAR_NODE &&
                kj->data.scalar.length == k->data.scalar.length &&
                memcmp(kj->data.scalar.value, k->data.scalar.value, k->data.scalar.length) == 0;
        }
        if (repeat) {
            yw_error(w, k, path, "key '%s' given twice", name);
            reported++;
            continue;
        }

        bool known = false;
        for (size_t a = 0; allowed[a] != NULL && !known; a++)
            known = scalar_is(k, allowed[a]);
        if (known)
            continue;
        const char *hint = suggest(name, allowed);
        if (hint != NULL) {
            yw_error(w, k, path, "unknown key '%s'; did you mean '%s'?", name, hint);
        } else {
            char list[512];
            if (allowed[0] == NULL)
                yw_error(w, k, path, "unknown key '%s'; no keys are allowed here", name);
            else
                yw_error(w, k, path, "unknown key '%s'; the keys allowed here are %s", name,
                         join_names(list, sizeof list, allowed, " and "));
        }
        reported++;
    }
    return reported;
}

/* ==== typed getters ================================================================ */

/* The scalar value of map[key] for a typed getter, or NULL: when the key is absent
 * (reported only if required) or its value is not a scalar (reported). kp receives
 * the key's path for the caller's messages. */
static yaml_node_t *get_scalar(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                               bool required, char kp[PATH_LEN], const char **text)
{
    yw_path(kp, PATH_LEN, path, key);
    yaml_node_t *v = yw_get(w, map, key);
    if (v == NULL) {
        if (required)
            yw_error(w, map, path, "missing required key '%s'", key);
        return NULL;
    }
    *text = yw_scalar(w, v, kp);
    return *text ? v : NULL;
}

/* Report a value outside [lo, hi]. Bounds are preformatted with their unit; NULL
 * means unbounded on that side. `suffix` follows the last bound ("records/s"). */
static void range_error(ywalk *w, yaml_node_t *n, const char *kp, const char *lo, const char *hi,
                        const char *suffix, const char *text)
{
    const char *sp = suffix[0] ? " " : "";
    if (lo != NULL && hi != NULL)
        yw_error(w, n, kp, "must be between %s and %s%s%s, got %s", lo, hi, sp, suffix, text);
    else if (lo != NULL)
        yw_error(w, n, kp, "must be at least %s%s%s, got %s", lo, sp, suffix, text);
    else if (hi != NULL)
        yw_error(w, n, kp, "must be at most %s%s%s, got %s", hi, sp, suffix, text);
    else
        yw_error(w, n, kp, "is out of range, got %s", text);
}

/* A whole number: an optional '-' and decimal digits, nothing else (no '+', no
 * underscores, no exponent, no hex). *neg and *mag give sign and magnitude. Returns
 * 0, SIM_ESYNTAX, or SIM_ERANGE when the magnitude needs more than 64 bits. */
static int parse_int(const char *s, bool *neg, uint64_t *mag)
{
    *neg = *s == '-';
    if (*neg)
        s++;
    if (*s == '\0')
        return SIM_ESYNTAX;
    uint64_t v = 0;
    bool overflow = false;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return SIM_ESYNTAX;
        unsigned dv = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - dv) / 10)
            overflow = true;
        else
            v = v * 10 + dv;
    }
    *mag = v;
    return overflow ? SIM_ERANGE : 0;
}

/* A finite decimal number ("12", "-0.5", "1e3", ".5"); strtod's "inf", "nan" and hex
 * floats are refused, as YAML's core schema spells those differently and no scenario
 * value needs them. */
static int parse_double(const char *s, double *out)
{
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    if (!((*p >= '0' && *p <= '9') || *p == '.') || strpbrk(s, "xX") != NULL)
        return SIM_ESYNTAX;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        return SIM_ESYNTAX;
    if (errno == ERANGE || !isfinite(v))
        return SIM_ERANGE;
    *out = v;
    return 0;
}

bool yw_str(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
            const char **out)
{
    char kp[PATH_LEN];
    const char *text;
    if (get_scalar(w, map, path, key, required, kp, &text) == NULL)
        return false;
    *out = text;
    return true;
}

bool yw_bool(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
             bool *out)
{
    char kp[PATH_LEN], q[QUOTE_LEN];
    const char *text;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    /* YAML 1.2's core schema: yes/no/on/off are strings there, and guessing them
     * invites the "Norway problem". */
    if (strcmp(text, "true") == 0 || strcmp(text, "True") == 0 || strcmp(text, "TRUE") == 0) {
        *out = true;
        return true;
    }
    if (strcmp(text, "false") == 0 || strcmp(text, "False") == 0 || strcmp(text, "FALSE") == 0) {
        *out = false;
        return true;
    }
    yw_error(w, v, kp, "expected true or false, got %s", describe(q, v));
    return false;
}

bool yw_u64(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
            uint64_t lo, uint64_t hi, uint64_t *out)
{
    char kp[PATH_LEN], q[QUOTE_LEN];
    const char *text;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    bool neg;
    uint64_t mag;
    int rc = parse_int(text, &neg, &mag);
    if (rc == SIM_ESYNTAX) {
        yw_error(w, v, kp, "expected a whole number, got %s", describe(q, v));
        return false;
    }
    if (rc == 0 && (!neg || mag == 0) && mag >= lo && mag <= hi) {
        *out = mag;
        return true;
    }
    char los[32], his[32];
    snprintf(los, sizeof los, "%" PRIu64, lo);
    snprintf(his, sizeof his, "%" PRIu64, hi);
    /* An unbounded side is not worth naming, unless the value overflowed past it. */
    bool too_big = rc == SIM_ERANGE && !neg;
    range_error(w, v, kp, los, hi == UINT64_MAX && !too_big ? NULL : his, "", text);
    return false;
}

bool yw_i64(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
            int64_t lo, int64_t hi, int64_t *out)
{
    char kp[PATH_LEN], q[QUOTE_LEN];
    const char *text;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    bool neg;
    uint64_t mag;
    int rc = parse_int(text, &neg, &mag);
    if (rc == SIM_ESYNTAX) {
        yw_error(w, v, kp, "expected a whole number, got %s", describe(q, v));
        return false;
    }
    /* |INT64_MIN| = INT64_MAX + 1 is the one magnitude that fits only when negative. */
    bool fits = rc == 0 && (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX);
    if (fits) {
        int64_t x =
            neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
        if (x >= lo && x <= hi) {
            *out = x;
            return true;
        }
    }
    char los[32], his[32];
    snprintf(los, sizeof los, "%" PRId64, lo);
    snprintf(his, sizeof his, "%" PRId64, hi);
    /* An unbounded side is not worth naming, unless the value overflowed past it. */
    range_error(w, v, kp, lo == INT64_MIN && (fits || !neg) ? NULL : los,
                hi == INT64_MAX && (fits || neg) ? NULL : his, "", text);
    return false;
}

/* A double bound for messages, or NULL when it is unbounded (infinite or +-DBL_MAX). */
static const char *fmt_double_bound(char *buf, size_t n, double x)
{
    if (isinf(x) || fabs(x) >= DBL_MAX)
        return NULL;
    snprintf(buf, n, "%.15g", x);
    return buf;
}

bool yw_double(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
               double lo, double hi, double *out)
{
    char kp[PATH_LEN], q[QUOTE_LEN];
    const char *text;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    double x = 0;
    int rc = parse_double(text, &x);
    if (rc == SIM_ESYNTAX) {
        yw_error(w, v, kp, "expected a number, got %s", describe(q, v));
        return false;
    }
    if (rc == 0 && x >= lo && x <= hi) {
        *out = x;
        return true;
    }
    char los[32], his[32];
    range_error(w, v, kp, fmt_double_bound(los, sizeof los, lo),
                fmt_double_bound(his, sizeof his, hi), "", text);
    return false;
}

/* Report a value that a unit parser refused (rc < 0) or that fell outside [lo, hi]
 * (rc == 0): a malformed value gets the accepted forms (`hint`, or sim_units_hint(kind)
 * when NULL), an out-of-range one the accepted range (lo/hi preformatted, NULL if
 * unbounded). */
static void unit_error(ywalk *w, yaml_node_t *v, const char *kp, int rc, char kind, const char *lo,
                       const char *hi, const char *suffix, const char *hint)
{
    char q[QUOTE_LEN];
    const char *text = scalar_text(v);
    if (rc == SIM_ERANGE && hi == NULL && text[0] != '-')
        yw_error(w, v, kp, "is too large, got %s", text); /* overflowed the parser */
    else if (rc == 0 || rc == SIM_ERANGE)
        range_error(w, v, kp, lo, hi, suffix, text);
    else
        yw_error(w, v, kp, "expected %s, got %s", hint ? hint : sim_units_hint(kind),
                 describe(q, v));
}

bool yw_duration(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
                 sim_time lo, sim_time hi, sim_time *out)
{
    char kp[PATH_LEN];
    const char *text;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    sim_time t = 0;
    int rc = sim_parse_duration(text, &t);
    if (rc == 0 && t >= lo && t <= hi) {
        *out = t;
        return true;
    }
    char los[32], his[32];
    sim_fmt_duration(los, sizeof los, lo);
    sim_fmt_duration(his, sizeof his, hi);
    unit_error(w, v, kp, rc, 'd', lo == INT64_MIN ? NULL : los, hi == SIM_TIME_MAX ? NULL : his,
               "", NULL);
    return false;
}

bool yw_bytes(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
              uint64_t lo, uint64_t hi, uint64_t *out)
{
    char kp[PATH_LEN];
    const char *text;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    uint64_t b = 0;
    int rc = sim_parse_bytes(text, &b);
    if (rc == 0 && b >= lo && b <= hi) {
        *out = b;
        return true;
    }
    char los[32], his[32];
    sim_fmt_bytes(los, sizeof los, lo);
    sim_fmt_bytes(his, sizeof his, hi);
    unit_error(w, v, kp, rc, 'b', los, hi == UINT64_MAX ? NULL : his, "", NULL);
    return false;
}

/* A byte-rate bound: "1 MiB/s" when it is a whole number of bytes, else "%g B/s". */
static const char *fmt_rate_bound(char *buf, size_t n, double x)
{
    if (fmt_double_bound(buf, n, x) == NULL)
        return NULL;
    if (x >= 0 && x < 1.8e19 && x == floor(x)) {
        sim_fmt_bytes(buf, n, (uint64_t)x);
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "/s");
    } else {
        snprintf(buf, n, "%.15g B/s", x);
    }
    return buf;
}

bool yw_byte_rate(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
                  double lo, double hi, double *out)
{
    char kp[PATH_LEN];
    const char *text;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    double r = 0;
    int rc = sim_parse_byte_rate(text, &r);
    if (rc == 0 && r >= lo && r <= hi) {
        *out = r;
        return true;
    }
    char los[48], his[48];
    unit_error(w, v, kp, rc, 'r', fmt_rate_bound(los, sizeof los, lo),
               fmt_rate_bound(his, sizeof his, hi), "", NULL);
    return false;
}

/* "5 records/s" said in `word` ("5 calls/s") into fix, when the text is a number, another
 * word and a period, and so said it reads as a count rate. */
static bool in_word(const char *text, const char *word, char *fix, size_t n)
{
    if (word == NULL)
        return false;
    const char *sp = strchr(text, ' ');
    const char *slash = strchr(text, '/');
    if (sp == NULL || slash == NULL || slash < sp)
        return false;
    const char *wd = sp;
    while (*wd == ' ')
        wd++;
    for (const char *c = wd; c < slash; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
            return false;
    if (wd == slash || (size_t)(sp - text) + strlen(word) + strlen(slash) + 2 > n)
        return false;
    snprintf(fix, n, "%.*s %s%s", (int)(sp - text), text, word, slash);
    double r;
    return sim_parse_count_rate(fix, word, &r) == 0;
}

bool yw_count_rate(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
                   const char *word, double lo, double hi, double *out)
{
    char kp[PATH_LEN];
    const char *text;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    double r = 0;
    int rc = sim_parse_count_rate(text, word, &r);
    if (rc == 0 && r >= lo && r <= hi) {
        *out = r;
        return true;
    }
    char los[32], his[32], unit[64], hint[160];
    if (word != NULL)
        snprintf(unit, sizeof unit, "%s/s", word);
    else
        snprintf(unit, sizeof unit, "per second");
    /* The hint in the key's own word: read_calls counts calls, and suggesting
     * "1000 records/s" to someone who wrote "5 records/s" there would not help; the
     * value with that word, when it reads, is the likely fix. */
    if (word != NULL)
        snprintf(hint, sizeof hint, "a count rate like 1000 %s/s, 5/s or 60/min", word);
    else
        snprintf(hint, sizeof hint, "a count rate like 5/s or 60/min");
    char fix[QUOTE_LEN + 32];
    if (rc < 0 && rc != SIM_ERANGE && in_word(text, word, fix, sizeof fix)) {
        char q[QUOTE_LEN];
        yw_error(w, v, kp, "expected %s, got %s; did you mean \"%s\"?", hint, describe(q, v),
                 fix);
        return false;
    }
    unit_error(w, v, kp, rc, 'c', fmt_double_bound(los, sizeof los, lo),
               fmt_double_bound(his, sizeof his, hi), unit, hint);
    return false;
}

bool yw_enum(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
             const char *const *names, int *out)
{
    char kp[PATH_LEN], q[QUOTE_LEN], list[512];
    const char *text;
    if (required && yw_get(w, map, key) == NULL) {
        join_names(list, sizeof list, names, ", ");
        yw_error(w, map, path, "missing required key '%s' (one of %s)", key, list);
        return false;
    }
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return false;
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = i;
            return true;
        }
    }
    join_names(list, sizeof list, names, ", ");
    const char *hint = suggest(text, names);
    if (hint != NULL)
        yw_error(w, v, kp, "expected one of %s, got %s; did you mean '%s'?", list, describe(q, v),
                 hint);
    else
        yw_error(w, v, kp, "expected one of %s, got %s", list, describe(q, v));
    return false;
}

/* ==== distributions ================================================================ */

/* Parameter names of each kind, in sim_dist's (a, b) order; `b_shape` says b is a
 * dimensionless shape (sigma, k, alpha) rather than a quantity in the caller's unit. */
static const struct dist_form {
    const char *a, *b;
    bool b_shape;
} dist_forms[] = {
    [SIM_DIST_CONST] = {"value", NULL, false},     [SIM_DIST_UNIFORM] = {"min", "max", false},
    [SIM_DIST_EXP] = {"mean", NULL, false},        [SIM_DIST_LOGNORMAL] = {"median", "sigma", true},
    [SIM_DIST_NORMAL] = {"mean", "stddev", false}, [SIM_DIST_GAMMA] = {"mean", "shape", true},
    [SIM_DIST_PARETO] = {"min", "alpha", true},
};
#define DIST_KINDS (sizeof dist_forms / sizeof dist_forms[0])

/* What a quantity of `unit` looks like, for "expected ..." messages. */
static const char *unit_hint(char unit)
{
    switch (unit) {
    case 'd':
        return sim_units_hint('d');
    case 'b':
        return sim_units_hint('b');
    default:
        return "a number";
    }
}

/* Parse a quantity in the distribution's unit: 'd' a duration, in milliseconds; 'b' a
 * size, in bytes; anything else a plain number. */
static int parse_quantity(const char *text, char unit, double *out)
{
    int rc;
    if (unit == 'd') {
        sim_time t = 0;
        if ((rc = sim_parse_duration(text, &t)) == 0)
            *out = sim_to_ms(t);
    } else if (unit == 'b') {
        uint64_t b = 0;
        if ((rc = sim_parse_bytes(text, &b)) == 0)
            *out = (double)b;
    } else {
        rc = parse_double(text, out);
    }
    return rc;
}

/* One parameter of a distribution mapping. Absent: reported when required, else *out
 * is left alone. Returns false on any problem (reported). */
static bool dist_param(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
                       char unit, bool *present, double *out)
{
    char kp[PATH_LEN], q[QUOTE_LEN];
    const char *text = NULL;
    *present = yw_get(w, map, key) != NULL;
    yaml_node_t *v = get_scalar(w, map, path, key, required, kp, &text);
    if (v == NULL)
        return !*present && !required;
    int rc = parse_quantity(text, unit, out);
    if (rc == 0)
        return true;
    if (rc == SIM_ERANGE)
        yw_error(w, v, kp, "%s, got %s", text[0] == '-' ? "must not be negative" : "is too large",
                 text);
    else
        yw_error(w, v, kp, "expected %s, got %s", unit_hint(unit), describe(q, v));
    return false;
}

/* The mapping form {dist: kind, parameters..., min, max}. */
static bool dist_mapping(ywalk *w, yaml_node_t *m, const char *kp, char unit, sim_dist *out)
{
    const char *kinds[DIST_KINDS + 1];
    char list[256], q[QUOTE_LEN];
    for (size_t i = 0; i < DIST_KINDS; i++)
        kinds[i] = sim_dist_kind_name((sim_dist_kind)i);
    kinds[DIST_KINDS] = NULL;
    join_names(list, sizeof list, kinds, ", ");

    yaml_node_t *kn = yw_get(w, m, "dist");
    if (kn == NULL) {
        yw_error(w, m, kp, "missing required key 'dist'; give one of %s", list);
        return false;
    }
    char kpd[PATH_LEN];
    const char *kname = yw_scalar(w, kn, yw_path(kpd, sizeof kpd, kp, "dist"));
    if (kname == NULL)
        return false;
    sim_dist_kind kind;
    if (sim_dist_kind_parse(kname, &kind) != 0 || (size_t)kind >= DIST_KINDS) {
        const char *hint = suggest(kname, kinds);
        if (hint != NULL)
            yw_error(w, kn, kpd, "expected one of %s, got %s; did you mean '%s'?", list,
                     describe(q, kn), hint);
        else
            yw_error(w, kn, kpd, "expected one of %s, got %s", list, describe(q, kn));
        return false;
    }

    /* Allowed keys: dist, the kind's parameters, and the clamps (which uniform and
     * pareto already name as parameters). */
    const struct dist_form *f = &dist_forms[kind];
    const char *allowed[6];
    size_t na = 0;
    allowed[na++] = "dist";
    allowed[na++] = f->a;
    if (f->b != NULL)
        allowed[na++] = f->b;
    if (strcmp(f->a, "min") != 0)
        allowed[na++] = "min";
    if (f->b == NULL || strcmp(f->b, "max") != 0)
        allowed[na++] = "max";
    allowed[na] = NULL;
    bool ok = yw_check_keys(w, m, kp, allowed) == 0;

    sim_dist d = sim_dist_const(0);
    d.kind = kind;
    d.min = 0;
    d.max = INFINITY;
    bool present;
    ok = dist_param(w, m, kp, f->a, true, unit, &present, &d.a) && ok;
    if (f->b != NULL)
        ok = dist_param(w, m, kp, f->b, true, f->b_shape ? 'n' : unit, &present, &d.b) && ok;
    if (kind == SIM_DIST_CONST && ok) {
        /* sim_dist_const knows how to clamp a negative constant. */
        d = sim_dist_const(d.a);
    }
    /* Clamps. Where min or max is a parameter (uniform, pareto) it also bounds the
     * samples, which changes nothing but keeps the clamps honest in reports. */
    double clamp;
    if (strcmp(f->a, "min") == 0)
        d.min = d.a;
    else if (!dist_param(w, m, kp, "min", false, unit, &present, &clamp))
        ok = false;
    else if (present)
        d.min = clamp;
    if (f->b != NULL && strcmp(f->b, "max") == 0)
        d.max = d.b;
    else if (!dist_param(w, m, kp, "max", false, unit, &present, &clamp))
        ok = false;
    else if (present)
        d.max = clamp;
    if (!ok)
        return false;

    const char *why = NULL;
    if (sim_dist_check(&d, &why) != 0) {
        yw_error(w, m, kp, "invalid %s distribution: %s", sim_dist_kind_name(kind),
                 why ? why : "bad parameters");
        return false;
    }
    *out = d;
    return true;
}

bool yw_dist(ywalk *w, yaml_node_t *map, const char *path, const char *key, bool required,
             char unit, sim_dist *out)
{
    char kp[PATH_LEN], q[QUOTE_LEN];
    yw_path(kp, sizeof kp, path, key);
    yaml_node_t *v = yw_get(w, map, key);
    if (v == NULL) {
        if (required)
            yw_error(w, map, path, "missing required key '%s'", key);
        return false;
    }
    if (v->type == YAML_MAPPING_NODE)
        return dist_mapping(w, v, kp, unit, out);

    const char *text = yw_scalar(w, v, kp);
    if (text == NULL)
        return false;
    double x = 0;
    int rc = parse_quantity(text, unit, &x);
    if (rc == SIM_ERANGE) {
        yw_error(w, v, kp, "%s, got %s", text[0] == '-' ? "must not be negative" : "is too large",
                 text);
        return false;
    }
    if (rc != 0) {
        const char *example = unit == 'd' ? "20ms" : unit == 'b' ? "1 KiB" : "10";
        yw_error(w, v, kp, "expected %s, or a mapping like {dist: exp, mean: %s}, got %s",
                 unit_hint(unit), example, describe(q, v));
        return false;
    }
    sim_dist d = sim_dist_const(x);
    const char *why = NULL;
    if (sim_dist_check(&d, &why) != 0) {
        yw_error(w, v, kp, "invalid constant: %s", why ? why : "bad value");
        return false;
    }
    *out = d;
    return true;
}
