/* outdir.c - a run's --out DIR written whole into a hidden folder, then moved into place
 * (outdir.h). */
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "opts.h"
#include "sim_err.h"

const char *const kdsim_outdir_names[] = {
    "report.json",           "report.txt",
    "report.html",           "stream_per_second.csv",
    "stream_per_minute.csv", "shards_per_minute.csv",
    "consumers_per_minute.csv", "consumers_latency_cdf.csv",
    "kcl_workers_per_minute.csv", "kcl_lease_table_per_minute.csv",
    "capacity_per_minute.csv", "plots",
    NULL};

/* The outdir being written, for kdsim_outdir_shown (one run per process). */
static const kdsim_outdir *active;

/* Remove `path` and, for a directory, everything under it, without following symbolic
 * links. Best effort: what cannot be removed stays. */
static void remove_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                char *sub = kdsim_strdupf("%s/%s", path, e->d_name);
                remove_tree(sub);
                free(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* DIR's parent and the last part of its name ("a/b/" -> "a", "b"; "b" -> ".", "b"). */
static void split_dir(const char *dir, char **parent, char **base)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && dir[b - 1] != '/')
        b--;
    *base = kdsim_strdupf("%.*s", (int)(n - b), dir + b);
    if (b == 0)
        *parent = kdsim_strdupf(".");
    else if (b == 1)
        *parent = kdsim_strdupf("/");
    else
        *parent = kdsim_strdupf("%.*s", (int)(b - 1), dir);
}

int kdsim_outdir_begin(kdsim_outdir *o, const char *dir, FILE *err)
{
    memset(o, 0, sizeof *o);
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            fprintf(err, "kdsim: --out %s: this is a file, not a directory; give a directory "
                         "(a missing one is created); nothing was run\n", dir);
            return KDSIM_EXIT_USAGE;
        }
        o->existed = true;
        for (size_t i = 0; kdsim_outdir_names[i]; i++) {
            const char *name = kdsim_outdir_names[i];
            bool want_dir = !strcmp(name, "plots");
            char *p = kdsim_strdupf("%s/%s", dir, name);
            bool clash = lstat(p, &sb) == 0 && (want_dir ? !S_ISDIR(sb.st_mode)
                                                         : !S_ISREG(sb.st_mode));
            if (clash)
                fprintf(err, "kdsim: --out %s: %s is not a %s, and kdsim writes its %s there; "
                             "move it away or give another --out; nothing was run\n",
                        dir, p, want_dir ? "directory" : "regular file",
                        want_dir ? "plots" : "output of that name");
            free(p);
            if (clash)
                return KDSIM_EXIT_USAGE;
        }
        o->staging = kdsim_strdupf("%s/.kdsim-new-XXXXXX", dir);
    } else if (errno == ENOENT || errno == ENOTDIR) {
        /* Its missing parents are made now, as mkdir -p would: the hidden folder goes
         * beside DIR. Checked first, so that a parent that cannot be made makes none. */
        if (kdsim_out_dir_check(dir, err))
            return KDSIM_EXIT_USAGE;
        char *parent, *base;
        split_dir(dir, &parent, &base);
        if (kdsim_make_dirs(parent, err)) {
            free(parent);
            free(base);
            return KDSIM_EXIT_USAGE;
        }
        o->staging = kdsim_strdupf("%s/.%s.kdsim-new-XXXXXX", parent, base);
        free(parent);
        free(base);
    } else {
        fprintf(err, "kdsim: --out %s: %s; nothing was run\n", dir, strerror(errno));
        return KDSIM_EXIT_USAGE;
    }
    if (!mkdtemp(o->staging)) {
        fprintf(err, "kdsim: --out %s: cannot write there (%s); nothing was run\n", dir,
                strerror(errno));
        free(o->staging);
        o->staging = NULL;
        return KDSIM_EXIT_USAGE;
    }
    if (!o->existed) {
        /* mkdtemp makes the folder 0700; renamed into place, it becomes DIR, which
         * should have the mode any new folder gets (0777 less the umask). */
        mode_t mask = umask(0);
        umask(mask);
        chmod(o->staging, 0777 & ~mask);
    }
    o->dir = kdsim_strdupf("%s", dir);
    active = o;
    return 0;
}

/* Undo a commit_into that failed: the new outputs moved in so far go back to the
 * staging folder (removed with it), and the previous run's come back from the trash, so
 * that DIR is as it was. Best effort: a rename that fails again leaves that file where
 * it is, with a message. */
static void roll_back(kdsim_outdir *o, const char *trash, const bool *moved_in, FILE *err)
{
    for (size_t i = 0; kdsim_outdir_names[i]; i++) {
        const char *name = kdsim_outdir_names[i];
        char *cur = kdsim_strdupf("%s/%s", o->dir, name);
        char *neu = kdsim_strdupf("%s/%s", o->staging, name);
        char *old = kdsim_strdupf("%s/%s", trash, name);
        struct stat sb;
        if (moved_in[i])
            rename(cur, neu);
        if (lstat(old, &sb) == 0 && rename(old, cur) != 0)
            fprintf(err, "kdsim: cannot put %s back from %s: %s\n", name, trash,
                    strerror(errno));
        free(cur);
        free(neu);
        free(old);
    }
}

/* Into an existing DIR: the previous run's outputs go to a hidden trash folder (renames
 * within DIR, so nothing is half-moved), the new ones take their place, and the trash
 * is removed; a rename that fails puts everything back (roll_back). Files kdsim does
 * not write are not touched. */
static int commit_into(kdsim_outdir *o, FILE *err)
{
    char *trash = kdsim_strdupf("%s/.kdsim-old-XXXXXX", o->dir);
    int rc = 0;
    if (!mkdtemp(trash)) {
        fprintf(err, "kdsim: --out %s: cannot write there: %s\n", o->dir, strerror(errno));
        free(trash);
        return SIM_EIO;
    }
    for (size_t i = 0; kdsim_outdir_names[i] && !rc; i++) {
        const char *name = kdsim_outdir_names[i];
        char *old = kdsim_strdupf("%s/%s", o->dir, name);
        char *away = kdsim_strdupf("%s/%s", trash, name);
        struct stat sb;
        if (lstat(old, &sb) == 0 && rename(old, away) != 0) {
            fprintf(err, "kdsim: cannot replace %s: %s\n", old, strerror(errno));
            rc = SIM_EIO;
        }
        free(old);
        free(away);
    }
    DIR *d = rc ? NULL : opendir(o->staging);
    if (!rc && !d) {
        fprintf(err, "kdsim: cannot read %s: %s\n", o->staging, strerror(errno));
        rc = SIM_EIO;
    }
    struct dirent *e;
    bool moved_in[sizeof kdsim_outdir_names / sizeof *kdsim_outdir_names] = {false};
    while (d && !rc && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *from = kdsim_strdupf("%s/%s", o->staging, e->d_name);
        char *to = kdsim_strdupf("%s/%s", o->dir, e->d_name);
        if (rename(from, to) != 0) {
            fprintf(err, "kdsim: cannot move %s into %s: %s\n", e->d_name, o->dir,
                    strerror(errno));
            rc = SIM_EIO;
        } else {
            for (size_t i = 0; kdsim_outdir_names[i]; i++)
                if (!strcmp(e->d_name, kdsim_outdir_names[i]))
                    moved_in[i] = true; /* every name is one of them (commit asserts) */
        }
        free(from);
        free(to);
    }
    if (d)
        closedir(d);
    if (rc)
        roll_back(o, trash, moved_in, err);
    remove_tree(trash);
    free(trash);
    return rc;
}

int kdsim_outdir_commit(kdsim_outdir *o, FILE *err)
{
    int rc = 0;
    /* A name this run writes must be in kdsim_outdir_names, or a later run into this
     * DIR that does not write it would leave this run's file behind. */
    DIR *d = opendir(o->staging);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        bool known = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
        for (size_t i = 0; kdsim_outdir_names[i] && !known; i++)
            known = !strcmp(e->d_name, kdsim_outdir_names[i]);
        SIM_ASSERT(known);
    }
    if (d)
        closedir(d);
    if (!o->existed) {
        if (rename(o->staging, o->dir) != 0) {
            fprintf(err, "kdsim: cannot create %s: %s\n", o->dir, strerror(errno));
            rc = SIM_EIO;
        }
    } else {
        rc = commit_into(o, err);
    }
    kdsim_outdir_abort(o); /* what is left of the staging folder, if anything */
    return rc;
}

void kdsim_outdir_abort(kdsim_outdir *o)
{
    if (!o)
        return;
    if (o->staging)
        remove_tree(o->staging);
    if (active == o)
        active = NULL;
    free(o->staging);
    free(o->dir);
    memset(o, 0, sizeof *o);
}

const char *kdsim_outdir_shown(const char *path, char *buf, size_t n)
{
    if (!active || !active->staging)
        return path;
    size_t k = strlen(active->staging);
    if (strncmp(path, active->staging, k) != 0 || (path[k] != '\0' && path[k] != '/'))
        return path;
    snprintf(buf, n, "%s%s", active->dir, path + k);
    return buf;
}
