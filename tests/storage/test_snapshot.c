/*
 * test_snapshot.c — saving and reading snapshots (storage/snapshot.c,
 * crc32c.c): round trip of every type, NULLs and long strings across chunk
 * boundaries; truncated files, flipped bytes, a missing table file and a
 * damaged manifest reported by name; a failed save keeps the old snapshot;
 * incremental saves keep unchanged tables' files (same inode), survive a
 * simulated crash before the MANIFEST or before cleanup, and remove dropped
 * and orphaned files; version 1 manifests still open.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/crc32c.h"
#include "storage/snapshot.h"
#include "test.h"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, 512, "%s/%s", tmpdir, name);
    return b;
}

static sto_table *make_table(uint64_t rows)
{
    const char *names[] = {"b", "i", "big", "dec", "dbl", "day", "ch", "vc"};
    sto_type types[] = {sto_type_make(STO_TYPE_BOOLEAN),    sto_type_make(STO_TYPE_INTEGER),
                        sto_type_make(STO_TYPE_BIGINT),     sto_type_decimal(12, 3),
                        sto_type_make(STO_TYPE_DOUBLE),     sto_type_make(STO_TYPE_DATE),
                        sto_type_string(STO_TYPE_CHAR, 20), sto_type_string(STO_TYPE_VARCHAR, 0)};
    bool nn[] = {false, true, false, true, false, false, true, false};
    sto_schema *s = NULL;
    sto_table *t = NULL;
    if (sto_schema_new(8, names, types, nn, &s)) return NULL;
    sto_status st = sto_table_new(s, &t);
    sto_schema_free(s);
    if (st) {
        sto_status_free(st);
        return NULL;
    }
    sto_appender *a = NULL;
    if (sto_appender_new(t, &a)) return t;
    char buf[80];
    for (uint64_t r = 0; r < rows; r++) {
        sto_value v[8];
        memset(v, 0, sizeof(v));
        v[0].v.i64 = r & 1;
        v[0].is_null = r % 5 == 0;
        v[1].v.i64 = (int64_t)r - 1000;
        v[2].v.i64 = (int64_t)(r * 0x9E3779B97F4A7C15ULL);
        v[2].is_null = r % 3 == 0;
        v[3].v.i64 = (int64_t)r * 1001 - 7;
        v[4].v.f64 = (double)r / 8.0;
        v[4].is_null = r % 11 == 0;
        v[5].v.i64 = (int64_t)(r % 3000);
        v[5].is_null = r % 13 == 0;
        int n = snprintf(buf, sizeof(buf), "c%llu", (unsigned long long)(r % 97));
        v[6].v.str = sto_str_make(buf, (uint32_t)n);
        char *vb = buf + 40;
        n = snprintf(vb, 40, r % 2 ? "row %llu, a long varchar" : "%llu", (unsigned long long)r);
        v[7].v.str = sto_str_make(vb, (uint32_t)n);
        v[7].is_null = r % 17 == 0;
        if (sto_appender_row(a, v)) break;
    }
    sto_status_free(sto_appender_commit(a));
    sto_appender_free(a);
    return t;
}

static bool tables_equal(const sto_table *a, const sto_table *b)
{
    if (sto_table_rows(a) != sto_table_rows(b)) return false;
    const sto_schema *s = sto_table_schema(a);
    if (!sto_schema_equal(s, sto_table_schema(b))) return false;
    for (uint64_t r = 0; r < sto_table_rows(a); r++) {
        for (uint32_t c = 0; c < s->ncols; c++) {
            sto_value x = sto_table_get(a, c, r), y = sto_table_get(b, c, r);
            if (x.is_null != y.is_null) return false;
            if (x.is_null) continue;
            uint8_t id = s->cols[c].type.id;
            if (id == STO_TYPE_CHAR || id == STO_TYPE_VARCHAR) {
                if (!sto_str_eq(&x.v.str, &y.v.str)) return false;
            } else if (id == STO_TYPE_DOUBLE) {
                if (x.v.f64 != y.v.f64) return false;
            } else if (x.v.i64 != y.v.i64) {
                return false;
            }
        }
    }
    return true;
}

static void test_crc32c(void)
{
    CHECK_EQ_INT(sto_crc32c(0, "123456789", 9), 0xE3069283u);
    CHECK_EQ_INT(sto_crc32c(0, "", 0), 0);
    /* Incremental equals one shot, at any split and alignment. */
    char buf[100];
    for (int i = 0; i < 100; i++)
        buf[i] = (char)(i * 7 + 3);
    uint32_t whole = sto_crc32c(0, buf, 100);
    int bad = 0;
    for (int split = 0; split <= 100; split++)
        if (sto_crc32c(sto_crc32c(0, buf, (size_t)split), buf + split, (size_t)(100 - split)) !=
            whole)
            bad++;
    CHECK_EQ_INT(bad, 0);
    uint8_t zeros[32] = {0};
    CHECK_EQ_INT(sto_crc32c(0, zeros, 32), 0x8A9136AAu); /* RFC 3720 test vector */
}

static void test_round_trip(void)
{
    sto_table *t1 = make_table(65537), *t2 = make_table(10), *t3 = make_table(0);
    REQUIRE(t1 && t2 && t3);
    CHECK_EQ_INT(sto_table_rows(t1), 65537);
    const char *names[] = {"big one", "small", "empty"};
    sto_table *tables[] = {t1, t2, t3};
    sto_status st = sto_snapshot_save(tmp_path("snap"), names, tables, 3);
    if (st) fprintf(stderr, "%s\n", st->message);
    REQUIRE(!st);
    sto_snapshot_entry *e = NULL;
    size_t n = 0;
    st = sto_snapshot_open(tmp_path("snap"), &e, &n);
    if (st) fprintf(stderr, "%s\n", st->message);
    REQUIRE(!st);
    REQUIRE(n == 3);
    for (size_t i = 0; i < 3; i++) {
        CHECK_STREQ(e[i].name, names[i]);
        CHECK(tables_equal(e[i].table, tables[i]));
    }
    /* Statistics are rebuilt on the way in. */
    CHECK_EQ_INT(sto_table_stats(e[0].table, 2)->null_count, sto_table_stats(t1, 2)->null_count);
    CHECK_EQ_INT(sto_table_stats(e[0].table, 1)->max.i, 65536 - 1000);
    sto_snapshot_entries_free(e, n);

    /* Saving again replaces the snapshot and leaves only the new files. */
    const char *one[] = {"small"};
    sto_table *only[] = {t2};
    REQUIRE(!sto_snapshot_save(tmp_path("snap"), one, only, 1));
    REQUIRE(!sto_snapshot_open(tmp_path("snap"), &e, &n));
    CHECK_EQ_INT(n, 1);
    CHECK(n == 1 && tables_equal(e[0].table, t2));
    sto_snapshot_entries_free(e, n);
    int files = 0;
    DIR *d = opendir(tmp_path("snap"));
    REQUIRE(d);
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') files++;
    closedir(d);
    CHECK_EQ_INT(files, 2); /* MANIFEST and one table file */

    /* Bad names are refused before anything is written. */
    const char *dup[] = {"x", "x"};
    sto_table *two[] = {t2, t3};
    st = sto_snapshot_save(tmp_path("snap"), dup, two, 2);
    CHECK(st && strcmp(st->sqlstate, STO_DUPLICATE_TABLE) == 0);
    sto_status_free(st);
    const char *nl[] = {"a\nb"};
    st = sto_snapshot_save(tmp_path("snap"), nl, only, 1);
    CHECK(st && strcmp(st->sqlstate, STO_INVALID_NAME) == 0);
    sto_status_free(st);
    sto_table_free(t1);
    sto_table_free(t2);
    sto_table_free(t3);
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static bool read_all(const char *path, char **data, long *len)
{
    *len = file_size(path);
    FILE *f = fopen(path, "rb");
    if (!f || *len < 0) {
        if (f) fclose(f);
        return false;
    }
    *data = malloc((size_t)*len + 1);
    bool ok = *data && fread(*data, 1, (size_t)*len, f) == (size_t)*len;
    fclose(f);
    return ok;
}

static void write_all(const char *path, const char *data, long len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, (size_t)len, f);
    fclose(f);
}

static void expect_damaged(const char *path, const char *what)
{
    sto_table *t = NULL;
    sto_status st = sto_table_load_file(path, &t);
    CHECK(st != NULL && t == NULL);
    if (st) {
        if (strcmp(st->sqlstate, STO_DATA_CORRUPTED) != 0 || !strstr(st->message, path))
            fprintf(stderr, "  %s: %s %s\n", what, st->sqlstate, st->message);
        CHECK_STREQ(st->sqlstate, STO_DATA_CORRUPTED);
        CHECK(strstr(st->message, path) != NULL);
    } else {
        fprintf(stderr, "  %s: loaded a damaged file\n", what);
    }
    sto_status_free(st);
}

static void test_damaged_files(void)
{
    sto_table *t = make_table(70000);
    REQUIRE(t);
    const char *good = tmp_path("t.rtbl");
    REQUIRE(!sto_table_save_file(t, good));
    char *data = NULL;
    long len = 0;
    REQUIRE(read_all(good, &data, &len));
    sto_table *back = NULL;
    REQUIRE(!sto_table_load_file(good, &back));
    CHECK(tables_equal(t, back));
    sto_table_free(back);

    const char *bad = tmp_path("bad.rtbl");
    /* Truncated anywhere: in the header, inside a block, before the end. */
    const long cuts[] = {0, 4, 8, 20, 40, 100, 1000, len / 2, len - 9, len - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        write_all(bad, data, cuts[i]);
        expect_damaged(bad, "truncated");
    }
    /* Trailing garbage. */
    char *longer = malloc((size_t)len + 3);
    REQUIRE(longer);
    memcpy(longer, data, (size_t)len);
    memcpy(longer + len, "xyz", 3);
    write_all(bad, longer, len + 3);
    expect_damaged(bad, "trailing bytes");
    free(longer);
    /* One flipped byte anywhere is caught: every byte of a small file's
     * header and first blocks, then sampled positions. */
    free(data);
    sto_table *small = make_table(3000);
    REQUIRE(small);
    REQUIRE(!sto_table_save_file(small, good));
    sto_table_free(small);
    REQUIRE(read_all(good, &data, &len));
    int missed = 0;
    for (long pos = 0; pos < len; pos += (pos < 300 ? 1 : 1999)) {
        data[pos] ^= 0x40;
        write_all(bad, data, len);
        data[pos] ^= 0x40;
        sto_table *x = NULL;
        sto_status st = sto_table_load_file(bad, &x);
        if (!st || strcmp(st->sqlstate, STO_DATA_CORRUPTED) != 0) missed++;
        sto_status_free(st);
        sto_table_free(x);
    }
    CHECK_EQ_INT(missed, 0);
    /* The first block's length claiming far more than the file holds. */
    uint32_t slen;
    memcpy(&slen, data + 12, 4);
    REQUIRE(16 + (long)slen + 4 + 8 <= len);
    memcpy(data + 16 + slen + 4, "\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
    write_all(bad, data, len);
    expect_damaged(bad, "huge length");
    free(data);
    sto_table_free(t);
}

static void test_damaged_snapshot(void)
{
    sto_table *t1 = make_table(100), *t2 = make_table(5);
    REQUIRE(t1 && t2);
    const char *names[] = {"a", "b"};
    sto_table *tables[] = {t1, t2};
    const char *dir = tmp_path("snap2");
    REQUIRE(!sto_snapshot_save(dir, names, tables, 2));
    char manifest[600];
    snprintf(manifest, sizeof(manifest), "%s/MANIFEST", dir);
    char *m = NULL;
    long mlen = 0;
    REQUIRE(read_all(manifest, &m, &mlen));
    m[mlen] = '\0';

    /* A table file the manifest names is gone: error names that file. */
    char *line = strstr(m, "table ");
    REQUIRE(line);
    char file[64];
    REQUIRE(sscanf(line, "table %63s", file) == 1);
    char path[700], moved[700];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    snprintf(moved, sizeof(moved), "%s/moved", dir);
    REQUIRE(rename(path, moved) == 0);
    sto_snapshot_entry *e = NULL;
    size_t n = 9;
    sto_status st = sto_snapshot_open(dir, &e, &n);
    CHECK(st && strcmp(st->sqlstate, STO_DATA_CORRUPTED) == 0 && strstr(st->message, file));
    CHECK(e == NULL && n == 0);
    sto_status_free(st);
    REQUIRE(rename(moved, path) == 0);
    REQUIRE(!sto_snapshot_open(dir, &e, &n));
    sto_snapshot_entries_free(e, n);

    /* A manifest with an entry removed (or any byte changed) is refused. */
    char *second = strstr(line + 1, "table ");
    REQUIRE(second);
    char *eol = strchr(second, '\n');
    REQUIRE(eol);
    char edited[2048];
    snprintf(edited, sizeof(edited), "%.*s%s", (int)(second - m), m, eol + 1);
    write_all(manifest, edited, (long)strlen(edited));
    st = sto_snapshot_open(dir, &e, &n);
    CHECK(st && strcmp(st->sqlstate, STO_DATA_CORRUPTED) == 0 && strstr(st->message, "MANIFEST"));
    sto_status_free(st);
    /* Truncated manifest. */
    write_all(manifest, m, mlen - 5);
    st = sto_snapshot_open(dir, &e, &n);
    CHECK(st && strcmp(st->sqlstate, STO_DATA_CORRUPTED) == 0);
    sto_status_free(st);
    /* No manifest at all. */
    unlink(manifest);
    st = sto_snapshot_open(dir, &e, &n);
    CHECK(st && strcmp(st->sqlstate, STO_UNDEFINED_FILE) == 0);
    sto_status_free(st);
    /* A damaged table file inside a snapshot is named. */
    write_all(manifest, m, mlen);
    char *tdata = NULL;
    long tlen = 0;
    REQUIRE(read_all(path, &tdata, &tlen));
    tdata[tlen / 2] ^= 1;
    write_all(path, tdata, tlen);
    st = sto_snapshot_open(dir, &e, &n);
    CHECK(st && strcmp(st->sqlstate, STO_DATA_CORRUPTED) == 0 && strstr(st->message, file));
    sto_status_free(st);
    free(tdata);
    free(m);

    /* A save that cannot complete leaves the previous snapshot readable:
     * here the directory is a file, so nothing can be written at all. */
    const char *notdir = tmp_path("plainfile");
    write_all(notdir, "x", 1);
    st = sto_snapshot_save(notdir, names, tables, 2);
    CHECK(st != NULL);
    sto_status_free(st);
    sto_table_free(t1);
    sto_table_free(t2);
}

static void test_failed_save_keeps_old(void)
{
    sto_table *t = make_table(50);
    REQUIRE(t);
    const char *dir = tmp_path("snap3");
    const char *names[] = {"t"};
    sto_table *tables[] = {t};
    REQUIRE(!sto_snapshot_save(dir, names, tables, 1));
    /* The second table of the next save cannot be written (its column name
     * is longer than the format allows), after the first one was. */
    char *longname = malloc(70000);
    REQUIRE(longname);
    memset(longname, 'x', 69999);
    longname[69999] = '\0';
    const char *cn[] = {longname};
    sto_type ct[] = {sto_type_make(STO_TYPE_INTEGER)};
    sto_schema *ws = NULL;
    sto_table *weird = NULL;
    REQUIRE(!sto_schema_new(1, cn, ct, NULL, &ws));
    REQUIRE(!sto_table_new(ws, &weird));
    sto_schema_free(ws);
    free(longname);
    sto_table *t2 = make_table(7);
    const char *names2[] = {"t", "weird"};
    sto_table *tables2[] = {t2, weird};
    sto_status st = sto_snapshot_save(dir, names2, tables2, 2);
    CHECK(st != NULL);
    sto_status_free(st);
    sto_snapshot_entry *e = NULL;
    size_t n = 0;
    st = sto_snapshot_open(dir, &e, &n);
    CHECK(!st && n == 1 && tables_equal(e[0].table, t));
    sto_status_free(st);
    sto_snapshot_entries_free(e, n);
    /* The next good save works and clears the leftovers. */
    REQUIRE(!sto_snapshot_save(dir, names, tables2, 1));
    st = sto_snapshot_open(dir, &e, &n);
    CHECK(!st && n == 1 && tables_equal(e[0].table, t2));
    sto_status_free(st);
    sto_snapshot_entries_free(e, n);
    int files = 0;
    DIR *d = opendir(dir);
    REQUIRE(d);
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') files++;
    closedir(d);
    CHECK_EQ_INT(files, 2);
    sto_table_free(t);
    sto_table_free(t2);
    sto_table_free(weird);
}

/* The file the MANIFEST in dir names for table `name` ("" when none). */
static void file_of(const char *dir, const char *name, char *file, size_t size)
{
    char manifest[600];
    snprintf(manifest, sizeof(manifest), "%s/MANIFEST", dir);
    file[0] = '\0';
    FILE *f = fopen(manifest, "r");
    if (!f) return;
    char line[700];
    while (fgets(line, sizeof(line), f)) {
        char fn[64];
        unsigned long long rows, bytes;
        int at = 0;
        line[strcspn(line, "\n")] = '\0';
        if (sscanf(line, "table %63s %llu %llu %n", fn, &rows, &bytes, &at) == 3 && at &&
            strcmp(line + at, name) == 0)
            snprintf(file, size, "%s", fn);
    }
    fclose(f);
}

static bool stat_in(const char *dir, const char *file, struct stat *sb)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return stat(path, sb) == 0;
}

static int count_files(const char *dir)
{
    int files = 0;
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') files++;
    closedir(d);
    return files;
}

/* Opens dir and checks it holds exactly `n` tables equal to `want`. */
static bool snapshot_is(const char *dir, const char *const *names, sto_table *const *want, size_t n)
{
    sto_snapshot_entry *e = NULL;
    size_t got = 0;
    sto_status st = sto_snapshot_open(dir, &e, &got);
    if (st) {
        fprintf(stderr, "  open: %s\n", st->message);
        sto_status_free(st);
        return false;
    }
    bool ok = got == n;
    for (size_t i = 0; ok && i < n; i++)
        ok = strcmp(e[i].name, names[i]) == 0 && tables_equal(e[i].table, want[i]);
    sto_snapshot_entries_free(e, got);
    return ok;
}

static bool same_file(const struct stat *x, const struct stat *y)
{
    return x->st_ino == y->st_ino && x->st_mtim.tv_sec == y->st_mtim.tv_sec &&
           x->st_mtim.tv_nsec == y->st_mtim.tv_nsec && x->st_size == y->st_size;
}

static void test_incremental_save(void)
{
    sto_table *ta = make_table(3000), *tb = make_table(20), *tb2 = make_table(25),
              *tb3 = make_table(30);
    REQUIRE(ta && tb && tb2 && tb3);
    const char *dir = tmp_path("incr");
    const char *names[] = {"a", "b"};
    sto_table *v1[] = {ta, tb};
    REQUIRE(!sto_snapshot_save_changed(dir, names, v1, NULL, 2));
    char fa[64], fb[64], fb2[64], f[64];
    file_of(dir, "a", fa, sizeof(fa));
    file_of(dir, "b", fb, sizeof(fb));
    REQUIRE(fa[0] && fb[0]);
    struct stat sa, sb, now;
    REQUIRE(stat_in(dir, fa, &sa) && stat_in(dir, fb, &sb));

    /* Only b changed: a keeps its file (same inode, mtime, size), b gets a
     * new one and its old file is gone. */
    const bool only_b[] = {false, true};
    sto_table *v2[] = {ta, tb2};
    REQUIRE(!sto_snapshot_save_changed(dir, names, v2, only_b, 2));
    file_of(dir, "a", f, sizeof(f));
    CHECK_STREQ(f, fa);
    CHECK(stat_in(dir, fa, &now) && same_file(&now, &sa));
    file_of(dir, "b", fb2, sizeof(fb2));
    CHECK(fb2[0] && strcmp(fb2, fb) != 0);
    CHECK(!stat_in(dir, fb, &now));
    CHECK(snapshot_is(dir, names, v2, 2));
    CHECK_EQ_INT(count_files(dir), 3);

    /* A crash after b's new file is written but before the MANIFEST: the
     * old state reads back; the next good save removes the leftover. */
    setenv("RACKDB_SNAPSHOT_FAILPOINT", "before-manifest", 1);
    sto_table *v3[] = {ta, tb3};
    sto_status st = sto_snapshot_save_changed(dir, names, v3, only_b, 2);
    unsetenv("RACKDB_SNAPSHOT_FAILPOINT");
    CHECK(st != NULL);
    sto_status_free(st);
    CHECK_EQ_INT(count_files(dir), 4); /* the orphan is there */
    CHECK(snapshot_is(dir, names, v2, 2));
    REQUIRE(!sto_snapshot_save_changed(dir, names, v3, only_b, 2));
    CHECK(snapshot_is(dir, names, v3, 2));
    CHECK_EQ_INT(count_files(dir), 3);
    CHECK(stat_in(dir, fa, &now) && same_file(&now, &sa));

    /* A crash after the MANIFEST but before cleanup: the new state reads
     * back; the old file lingers until the next save, even one that writes
     * nothing. */
    file_of(dir, "b", fb, sizeof(fb));
    setenv("RACKDB_SNAPSHOT_FAILPOINT", "before-cleanup", 1);
    st = sto_snapshot_save_changed(dir, names, v2, only_b, 2);
    unsetenv("RACKDB_SNAPSHOT_FAILPOINT");
    CHECK(st != NULL);
    sto_status_free(st);
    CHECK(snapshot_is(dir, names, v2, 2));
    CHECK(stat_in(dir, fb, &now));
    const bool none[] = {false, false};
    REQUIRE(!sto_snapshot_save_changed(dir, names, v2, none, 2));
    CHECK(!stat_in(dir, fb, &now));
    CHECK_EQ_INT(count_files(dir), 3);
    CHECK(snapshot_is(dir, names, v2, 2));

    /* Dropping b: its file goes once the new MANIFEST is in place. */
    file_of(dir, "b", fb, sizeof(fb));
    REQUIRE(!sto_snapshot_save_changed(dir, names, v2, none, 1));
    CHECK(!stat_in(dir, fb, &now));
    CHECK_EQ_INT(count_files(dir), 2);
    CHECK(stat_in(dir, fa, &now) && same_file(&now, &sa));
    CHECK(snapshot_is(dir, names, v2, 1));

    /* "Unchanged" is checked, not trusted: a row count that differs from
     * the MANIFEST, or a file gone missing, is written again. */
    sto_table *wrong[] = {tb};
    REQUIRE(!sto_snapshot_save_changed(dir, names, wrong, none, 1));
    CHECK(snapshot_is(dir, names, wrong, 1));
    file_of(dir, "a", f, sizeof(f));
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, f);
    REQUIRE(unlink(path) == 0);
    REQUIRE(!sto_snapshot_save_changed(dir, names, wrong, none, 1));
    CHECK(snapshot_is(dir, names, wrong, 1));
    CHECK_EQ_INT(count_files(dir), 2);

    /* A file cut short after the save is caught by its recorded size. */
    file_of(dir, "a", f, sizeof(f));
    snprintf(path, sizeof(path), "%s/%s", dir, f);
    REQUIRE(truncate(path, 100) == 0);
    sto_snapshot_entry *e = NULL;
    size_t n = 0;
    st = sto_snapshot_open(dir, &e, &n);
    CHECK(st && strcmp(st->sqlstate, STO_DATA_CORRUPTED) == 0 && strstr(st->message, f));
    sto_status_free(st);
    sto_table_free(ta);
    sto_table_free(tb);
    sto_table_free(tb2);
    sto_table_free(tb3);
}

/* A version 1 MANIFEST (no sizes, as older builds wrote) still opens, and
 * the next save rewrites its tables rather than reuse them unchecked. */
static void test_manifest_v1(void)
{
    sto_table *t = make_table(40);
    REQUIRE(t);
    const char *dir = tmp_path("v1");
    REQUIRE(mkdir(dir, 0755) == 0);
    char path[700];
    snprintf(path, sizeof(path), "%s/1-0.rtbl", dir);
    REQUIRE(!sto_table_save_file(t, path));
    char text[200];
    int len =
        snprintf(text, sizeof(text), "rackdb snapshot 1\ngeneration 1\ntable 1-0.rtbl 40 t\n");
    char crc[32];
    snprintf(crc, sizeof(crc), "crc %08x\n", sto_crc32c(0, text, (size_t)len));
    strcat(text, crc);
    snprintf(path, sizeof(path), "%s/MANIFEST", dir);
    write_all(path, text, (long)strlen(text));
    const char *names[] = {"t"};
    sto_table *tables[] = {t};
    CHECK(snapshot_is(dir, names, tables, 1));
    const bool none[] = {false};
    REQUIRE(!sto_snapshot_save_changed(dir, names, tables, none, 1));
    char f[64];
    file_of(dir, "t", f, sizeof(f));
    CHECK(f[0] && strcmp(f, "1-0.rtbl") != 0);
    CHECK(snapshot_is(dir, names, tables, 1));
    CHECK_EQ_INT(count_files(dir), 2);
    sto_table_free(t);
}

/* A table read back from its file stores a long string that repeats in a
 * chunk's column once: the heap of each chunk holds the three repeated
 * values once and every unique one, and all values read back equal. */
static void test_repeated_strings_stored_once(void)
{
    const char *names[] = {"kind", "label"};
    sto_type types[] = {sto_type_make(STO_TYPE_VARCHAR), sto_type_make(STO_TYPE_VARCHAR)};
    bool nn[] = {true, true};
    sto_schema *s = NULL;
    sto_table *t = NULL, *back = NULL;
    sto_appender *a = NULL;
    REQUIRE(!sto_schema_new(2, names, types, nn, &s));
    REQUIRE(!sto_table_new(s, &t));
    sto_schema_free(s);
    REQUIRE(!sto_appender_new(t, &a));
    char kind[32], label[32];
    for (int i = 0; i < 70000; i++) {
        snprintf(kind, sizeof(kind), "repeated kind #%d", i % 3); /* 17 bytes */
        snprintf(label, sizeof(label), "unique label %07d", i);   /* 20 bytes */
        sto_value v[2] = {{false, {.str = sto_str_make(kind, 17)}},
                          {false, {.str = sto_str_make(label, 20)}}};
        REQUIRE(!sto_appender_row(a, v));
    }
    REQUIRE(!sto_appender_commit(a));
    sto_appender_free(a);
    sto_status st = sto_table_save_file(t, tmp_path("repeats.tbl"));
    CHECK(st == NULL);
    sto_status_free(st);
    st = sto_table_load_file(tmp_path("repeats.tbl"), &back);
    CHECK(st == NULL);
    sto_status_free(st);
    REQUIRE(back);
    CHECK(tables_equal(t, back));
    for (size_t k = 0; k < sto_table_nchunks(back); k++) {
        const sto_chunk *c = sto_table_chunk(back, k);
        CHECK_EQ_INT(c->heap.bytes_used, 3 * 17 + (uint64_t)c->rows * 20);
    }
    sto_table_free(t);
    sto_table_free(back);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "%s/rackdb-snapshot-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_crc32c);
    RUN(test_round_trip);
    RUN(test_damaged_files);
    RUN(test_damaged_snapshot);
    RUN(test_failed_save_keeps_old);
    RUN(test_incremental_save);
    RUN(test_manifest_v1);
    RUN(test_repeated_strings_stored_once);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return TEST_REPORT();
}
