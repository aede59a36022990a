/*
 * snapshot.c — columnar table files and the snapshot directory (see
 * snapshot.h).
 *
 * Table file layout (all integers little-endian):
 *
 *   "RKDBTBL\0"  u32 version  u32 schema_len  schema[schema_len]  u32 crc
 *   schema:  u32 ncols, per column {u16 name_len, name, u8 type, u8 precision,
 *            u8 scale, u8 not_null, u32 length}, u64 rows, u64 nchunks
 *   chunk:   block(u32 rows), then per column: block(values) and, when
 *            nullable, block(validity words); a string column's values are
 *            block(u32 lengths[rows]) followed by block(bytes)
 *   block:   u64 length, u32 crc32c(bytes), bytes[length]
 *   end:     "RKDBEND\0"
 *
 * The reader maps the whole file and walks it with a cursor whose every read
 * is checked against the end, and checks every length against what the
 * schema and row count imply before trusting it. Anything wrong — short
 * file, bad magic, checksum mismatch, impossible length, trailing bytes —
 * is one XX001 error naming the file.
 *
 * The directory: MANIFEST is text, "rackdb snapshot 1", "generation G", one
 * "table FILE ROWS NAME" line per table, and a last line "crc X" over all
 * the bytes before it. Table files are named "G-I.rtbl" so a new save never
 * overwrites a file the current MANIFEST names.
 */
#include "storage/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/crc32c.h"

#define TABLE_MAGIC    "RKDBTBL"
#define TABLE_END      "RKDBEND"
#define TABLE_VERSION  1u
#define MANIFEST       "MANIFEST"
#define MANIFEST_FIRST "rackdb snapshot 1\n"

static bool is_string(sto_type t)
{
    return t.id == STO_TYPE_CHAR || t.id == STO_TYPE_VARCHAR;
}

/* --- writing ---------------------------------------------------------------------- */

typedef struct file_out {
    FILE *f;
    bool failed;
} file_out;

static void put(file_out *o, const void *p, size_t n)
{
    if (n && !o->failed && fwrite(p, 1, n, o->f) != n) o->failed = true;
}

static void put_u32(file_out *o, uint32_t v)
{
    put(o, &v, 4);
}
static void put_u64(file_out *o, uint64_t v)
{
    put(o, &v, 8);
}

static void put_block(file_out *o, const void *p, size_t n)
{
    put_u64(o, n);
    put_u32(o, sto_crc32c(0, p, n));
    put(o, p, n);
}

/* The schema section, built in memory so its checksum can precede nothing
 * and follow it. */
static sto_status build_schema(const sto_table *t, char **out, size_t *len)
{
    const sto_schema *s = sto_table_schema(t);
    size_t n = 4 + 16;
    for (uint32_t i = 0; i < s->ncols; i++)
        n += 2 + strlen(s->cols[i].name) + 8;
    char *b = malloc(n), *p = b;
    if (!b) return sto_error_oom();
#define PUT(v)                                                                                     \
    do {                                                                                           \
        memcpy(p, &(v), sizeof(v));                                                                \
        p += sizeof(v);                                                                            \
    } while (0)
    uint32_t ncols = s->ncols;
    PUT(ncols);
    for (uint32_t i = 0; i < s->ncols; i++) {
        const sto_column_def *c = &s->cols[i];
        size_t nl = strlen(c->name);
        if (nl > UINT16_MAX) {
            free(b);
            return sto_error(STO_INVALID_NAME, "column name too long to save");
        }
        uint16_t nl16 = (uint16_t)nl;
        PUT(nl16);
        memcpy(p, c->name, nl);
        p += nl;
        uint8_t bytes[4] = {c->type.id, c->type.precision, c->type.scale, c->not_null};
        memcpy(p, bytes, 4);
        p += 4;
        uint32_t length = c->type.length;
        PUT(length);
    }
    uint64_t rows = sto_table_rows(t), nchunks = sto_table_nchunks(t);
    PUT(rows);
    PUT(nchunks);
#undef PUT
    *out = b;
    *len = n;
    return STO_OK;
}

static sto_status write_string_column(file_out *o, const sto_chunk *c, uint32_t col)
{
    const sto_str *v = c->cols[col];
    uint32_t *lens = malloc((size_t)(c->rows ? c->rows : 1) * sizeof(uint32_t));
    if (!lens) return sto_error_oom();
    uint64_t total = 0;
    uint32_t crc = 0;
    for (uint32_t r = 0; r < c->rows; r++) {
        bool valid = sto_chunk_is_valid(c, col, r);
        lens[r] = valid ? v[r].len : 0;
        if (valid) {
            total += v[r].len;
            crc = sto_crc32c(crc, sto_str_data(&v[r]), v[r].len);
        }
    }
    put_block(o, lens, (size_t)c->rows * sizeof(uint32_t));
    free(lens);
    put_u64(o, total);
    put_u32(o, crc);
    for (uint32_t r = 0; r < c->rows; r++)
        if (sto_chunk_is_valid(c, col, r)) put(o, sto_str_data(&v[r]), v[r].len);
    return STO_OK;
}

sto_status sto_table_save_file(const sto_table *t, const char *path)
{
    const sto_schema *s = sto_table_schema(t);
    FILE *f = fopen(path, "wbe");
    if (!f)
        return sto_error(errno == ENOENT ? STO_UNDEFINED_FILE : STO_IO_ERROR,
                         "could not create \"%s\": %s", path, strerror(errno));
    file_out o = {f, false};
    char *schema = NULL;
    size_t slen = 0;
    sto_status st = build_schema(t, &schema, &slen);
    if (st) goto done;
    put(&o, TABLE_MAGIC, 8);
    put_u32(&o, TABLE_VERSION);
    put_u32(&o, (uint32_t)slen);
    put(&o, schema, slen);
    put_u32(&o, sto_crc32c(0, schema, slen));
    free(schema);
    for (size_t k = 0; k < sto_table_nchunks(t) && !st && !o.failed; k++) {
        const sto_chunk *c = sto_table_chunk(t, k);
        put_block(&o, &c->rows, 4);
        for (uint32_t i = 0; i < s->ncols && !st; i++) {
            if (is_string(s->cols[i].type))
                st = write_string_column(&o, c, i);
            else
                put_block(&o, c->cols[i],
                          (size_t)c->rows * sto_type_width((sto_type_id)s->cols[i].type.id));
            if (c->validity[i])
                put_block(&o, c->validity[i], sto_bitmap_words(c->rows) * sizeof(uint64_t));
        }
    }
    put(&o, TABLE_END, 8);
    if (!st && fflush(f) != 0) o.failed = true;
    if (!st && !o.failed && fsync(fileno(f)) != 0) o.failed = true;
done:
    if (fclose(f) != 0) o.failed = true;
    if (!st && o.failed)
        st = sto_error(errno == ENOSPC ? STO_DISK_FULL : STO_IO_ERROR, "could not write \"%s\": %s",
                       path, strerror(errno));
    return st;
}

/* --- reading ---------------------------------------------------------------------- */

typedef struct cursor {
    const uint8_t *p;
    size_t len, off;
} cursor;

static bool get(cursor *c, void *out, size_t n)
{
    if (n > c->len - c->off) return false;
    memcpy(out, c->p + c->off, n);
    c->off += n;
    return true;
}

/* A checked block of exactly `expect` bytes: returns its bytes in place. */
static const uint8_t *get_block(cursor *c, uint64_t expect)
{
    uint64_t n;
    uint32_t crc;
    if (!get(c, &n, 8) || !get(c, &crc, 4)) return NULL;
    if (n != expect || n > c->len - c->off) return NULL;
    const uint8_t *p = c->p + c->off;
    if (sto_crc32c(0, p, n) != crc) return NULL;
    c->off += n;
    return p;
}

static sto_status corrupt(const char *path, const char *what)
{
    return sto_error(STO_DATA_CORRUPTED, "snapshot file \"%s\" is damaged: %s", path, what);
}

static sto_status read_schema(const char *path, cursor *c, sto_schema **schema, uint64_t *rows,
                              uint64_t *nchunks)
{
    char magic[8];
    uint32_t version = 0, slen = 0, crc = 0;
    if (!get(c, magic, 8) || memcmp(magic, TABLE_MAGIC, 8) != 0)
        return corrupt(path, "not a rackdb table file");
    if (!get(c, &version, 4) || !get(c, &slen, 4)) return corrupt(path, "truncated header");
    if (version != TABLE_VERSION) return corrupt(path, "unknown format version");
    if (slen > c->len - c->off || c->len - c->off - slen < 4)
        return corrupt(path, "truncated header");
    cursor s = {c->p + c->off, slen, 0};
    c->off += slen;
    get(c, &crc, 4);
    if (sto_crc32c(0, s.p, slen) != crc) return corrupt(path, "header checksum mismatch");

    uint32_t ncols;
    if (!get(&s, &ncols, 4) || ncols > slen / 10) return corrupt(path, "bad column count");
    char **names = calloc(ncols ? ncols : 1, sizeof(*names));
    sto_type *types = calloc(ncols ? ncols : 1, sizeof(*types));
    bool *nn = calloc(ncols ? ncols : 1, sizeof(*nn));
    sto_status st = STO_OK;
    if (!names || !types || !nn) {
        st = sto_error_oom();
        goto done;
    }
    for (uint32_t i = 0; i < ncols && !st; i++) {
        uint16_t nl;
        uint8_t b[4];
        uint32_t length;
        if (!get(&s, &nl, 2) || nl > s.len - s.off) {
            st = corrupt(path, "bad column name");
            break;
        }
        names[i] = malloc((size_t)nl + 1);
        if (!names[i]) {
            st = sto_error_oom();
            break;
        }
        get(&s, names[i], nl);
        names[i][nl] = '\0';
        if (!get(&s, b, 4) || !get(&s, &length, 4) || b[0] >= STO_TYPE_COUNT || b[3] > 1 ||
            strlen(names[i]) != nl) {
            st = corrupt(path, "bad column definition");
            break;
        }
        types[i].id = b[0];
        types[i].precision = b[1];
        types[i].scale = b[2];
        types[i].length = length;
        nn[i] = b[3];
    }
    if (!st && (!get(&s, rows, 8) || !get(&s, nchunks, 8) || s.off != s.len))
        st = corrupt(path, "bad header");
    if (!st) {
        st = sto_schema_new(ncols, (const char *const *)names, types, nn, schema);
        if (st && st != sto_error_oom()) {
            sto_status_free(st);
            st = corrupt(path, "invalid schema");
        }
    }
done:
    for (uint32_t i = 0; names && i < ncols; i++)
        free(names[i]);
    free(names);
    free(types);
    free(nn);
    return st;
}

/* Reads one string column of a chunk: lengths, then bytes. */
static bool read_strings(cursor *cur, sto_chunk *c, uint32_t col)
{
    const uint8_t *lens = get_block(cur, (uint64_t)c->rows * 4);
    if (!lens) return false;
    uint64_t total = 0;
    for (uint32_t r = 0; r < c->rows; r++) {
        uint32_t l;
        memcpy(&l, lens + (size_t)r * 4, 4);
        total += l;
    }
    const uint8_t *bytes = get_block(cur, total);
    if (!bytes) return false;
    sto_str *v = c->cols[col];
    const char *p = (const char *)bytes;
    for (uint32_t r = 0; r < c->rows; r++) {
        uint32_t l;
        memcpy(&l, lens + (size_t)r * 4, 4);
        if (!sto_chunk_make_str(c, p, l, &v[r])) return false;
        p += l;
    }
    return true;
}

static sto_status read_chunks(const char *path, cursor *cur, sto_table *t, uint64_t rows,
                              uint64_t nchunks)
{
    const sto_schema *s = sto_table_schema(t);
    uint64_t seen = 0;
    /* Every chunk takes at least 16 bytes, so a huge count is caught before
     * anything is allocated for it. */
    if (nchunks > (cur->len - cur->off) / 16) return corrupt(path, "bad chunk count");
    for (uint64_t k = 0; k < nchunks; k++) {
        const uint8_t *rp = get_block(cur, 4);
        uint32_t n;
        if (!rp) return corrupt(path, "truncated or damaged chunk header");
        memcpy(&n, rp, 4);
        if (n == 0 || n > STO_CHUNK_ROWS || n > rows - seen)
            return corrupt(path, "bad chunk row count");
        sto_chunk *c;
        STO_TRY(sto_table_new_chunk(t, n, &c));
        sto_chunk_set_rows(c, n);
        for (uint32_t i = 0; i < s->ncols; i++) {
            bool ok;
            if (is_string(s->cols[i].type)) {
                ok = read_strings(cur, c, i);
            } else {
                size_t bytes = (size_t)n * sto_type_width((sto_type_id)s->cols[i].type.id);
                const uint8_t *p = get_block(cur, bytes);
                if ((ok = p != NULL)) memcpy(c->cols[i], p, bytes);
            }
            if (ok && c->validity[i]) {
                size_t bytes = sto_bitmap_words(n) * sizeof(uint64_t);
                const uint8_t *p = get_block(cur, bytes);
                if ((ok = p != NULL)) memcpy(c->validity[i], p, bytes);
            }
            if (!ok) {
                sto_chunk_free(c);
                char what[160];
                snprintf(what, sizeof(what),
                         "chunk %" PRIu64 ", column \"%s\": truncated or checksum mismatch", k + 1,
                         s->cols[i].name);
                return corrupt(path, what);
            }
        }
        sto_status st = sto_table_append_chunks(t, &c, 1);
        if (st) {
            sto_chunk_free(c);
            return st;
        }
        seen += n;
    }
    char end[8];
    if (seen != rows) return corrupt(path, "row count does not match the header");
    if (!get(cur, end, 8) || memcmp(end, TABLE_END, 8) != 0 || cur->off != cur->len)
        return corrupt(path, "bad end of file");
    return STO_OK;
}

sto_status sto_table_load_file(const char *path, sto_table **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return corrupt(path, "file is missing");
        return sto_error(STO_IO_ERROR, "could not open \"%s\": %s", path, strerror(errno));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return sto_error(STO_IO_ERROR, "could not read \"%s\"", path);
    }
    size_t len = (size_t)sb.st_size;
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (map == MAP_FAILED)
        return sto_error(STO_IO_ERROR, "could not read \"%s\": %s", path, strerror(errno));
    cursor cur = {map, len, 0};
    sto_schema *schema = NULL;
    sto_table *t = NULL;
    uint64_t rows = 0, nchunks = 0;
    sto_status st = read_schema(path, &cur, &schema, &rows, &nchunks);
    if (!st) st = sto_table_new(schema, &t);
    if (!st) st = read_chunks(path, &cur, t, rows, nchunks);
    sto_schema_free(schema);
    if (map) munmap(map, len);
    if (st) {
        sto_table_free(t);
        return st;
    }
    *out = t;
    return STO_OK;
}

/* --- the directory --------------------------------------------------------------- */

static sto_status fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return sto_error(STO_IO_ERROR, "could not open directory \"%s\"", dir);
    int rc = fsync(fd);
    close(fd);
    return rc ? sto_error(STO_IO_ERROR, "could not fsync directory \"%s\"", dir) : STO_OK;
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Writes `path` by way of a temporary file: write, fsync, rename. */
static sto_status save_table_atomic(const sto_table *t, const char *path)
{
    size_t n = strlen(path) + 8;
    char *tmp = malloc(n);
    if (!tmp) return sto_error_oom();
    snprintf(tmp, n, "%s.tmp", path);
    sto_status st = sto_table_save_file(t, tmp);
    if (!st && rename(tmp, path) != 0)
        st = sto_error(STO_IO_ERROR, "could not rename \"%s\": %s", tmp, strerror(errno));
    if (st) unlink(tmp);
    free(tmp);
    return st;
}

/* The highest generation named by any table file in dir. */
static uint64_t last_generation(const char *dir)
{
    uint64_t g = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned long long gen;
        size_t idx;
        char ext[8];
        if (sscanf(e->d_name, "%llu-%zu.%7s", &gen, &idx, ext) == 3 && gen > g) g = gen;
    }
    closedir(d);
    return g;
}

/* Removes table files and leftovers of generations other than `keep`. */
static void remove_stale(const char *dir, uint64_t keep)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned long long gen;
        size_t idx;
        int end = 0;
        bool ours = sscanf(e->d_name, "%llu-%zu.rtbl%n", &gen, &idx, &end) == 2 && end > 0;
        bool tmp = strcmp(e->d_name, MANIFEST ".tmp") == 0;
        if ((ours && gen != keep) || tmp || (ours && e->d_name[end] != '\0')) {
            char *p = path_join(dir, e->d_name);
            if (p) unlink(p);
            free(p);
        }
    }
    closedir(d);
}

static bool valid_name(const char *name)
{
    if (!name || !*name) return false;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return false;
    return true;
}

sto_status sto_snapshot_save(const char *dir, const char *const *names, sto_table *const *tables,
                             size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!valid_name(names[i]))
            return sto_error(STO_INVALID_NAME, "invalid table name for a snapshot");
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return sto_error(STO_DUPLICATE_TABLE, "table \"%s\" named twice", names[i]);
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return sto_error(STO_IO_ERROR, "could not create directory \"%s\": %s", dir,
                         strerror(errno));
    uint64_t gen = last_generation(dir) + 1;

    /* The manifest text, built while the table files are written. */
    size_t cap = 128, len = 0;
    for (size_t i = 0; i < n; i++)
        cap += strlen(names[i]) + 64;
    char *text = malloc(cap);
    if (!text) return sto_error_oom();
    len +=
        (size_t)snprintf(text + len, cap - len, "%sgeneration %" PRIu64 "\n", MANIFEST_FIRST, gen);
    sto_status st = STO_OK;
    for (size_t i = 0; i < n && !st; i++) {
        char file[64];
        snprintf(file, sizeof(file), "%" PRIu64 "-%zu.rtbl", gen, i);
        char *path = path_join(dir, file);
        if (!path) {
            st = sto_error_oom();
            break;
        }
        st = save_table_atomic(tables[i], path);
        free(path);
        len += (size_t)snprintf(text + len, cap - len, "table %s %" PRIu64 " %s\n", file,
                                sto_table_rows(tables[i]), names[i]);
    }
    if (!st) st = fsync_dir(dir); /* table files are durable before the manifest */
    if (!st) {
        char crc[32];
        snprintf(crc, sizeof(crc), "crc %08x\n", sto_crc32c(0, text, len));
        char *tmp = path_join(dir, MANIFEST ".tmp"), *final = path_join(dir, MANIFEST);
        FILE *f = tmp ? fopen(tmp, "we") : NULL;
        if (!tmp || !final) {
            st = sto_error_oom();
        } else if (!f) {
            st = sto_error(STO_IO_ERROR, "could not create \"%s\": %s", tmp, strerror(errno));
        } else {
            bool ok = fwrite(text, 1, len, f) == len && fputs(crc, f) >= 0 && fflush(f) == 0 &&
                      fsync(fileno(f)) == 0;
            ok = fclose(f) == 0 && ok;
            if (!ok || rename(tmp, final) != 0) {
                st = sto_error(STO_IO_ERROR, "could not write \"%s\": %s", final, strerror(errno));
                unlink(tmp);
            }
        }
        free(tmp);
        free(final);
    }
    free(text);
    if (!st) st = fsync_dir(dir);
    /* After a failure the new generation's files are the stale ones; the
     * next successful save removes them. */
    if (!st) remove_stale(dir, gen);
    return st;
}

void sto_snapshot_entries_free(sto_snapshot_entry *entries, size_t n)
{
    if (!entries) return;
    for (size_t i = 0; i < n; i++) {
        free(entries[i].name);
        sto_table_free(entries[i].table);
    }
    free(entries);
}

/* Reads MANIFEST into memory and checks its checksum line. */
static sto_status read_manifest(const char *dir, char **text, size_t *len)
{
    char *path = path_join(dir, MANIFEST);
    if (!path) return sto_error_oom();
    FILE *f = fopen(path, "re");
    if (!f) {
        sto_status st =
            sto_error(errno == ENOENT ? STO_UNDEFINED_FILE : STO_IO_ERROR,
                      "could not open snapshot manifest \"%s\": %s", path, strerror(errno));
        free(path);
        return st;
    }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    sto_status st = STO_OK;
    while (b) {
        n += fread(b + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *grown = cap > (64u << 20) ? NULL : realloc(b, cap * 2);
        if (!grown) {
            free(b);
            b = NULL;
            break;
        }
        b = grown;
        cap *= 2;
    }
    bool err = ferror(f);
    fclose(f);
    if (!b) {
        st = sto_error(STO_DATA_CORRUPTED, "snapshot manifest \"%s\" is too large", path);
    } else if (err) {
        st = sto_error(STO_IO_ERROR, "could not read \"%s\"", path);
    } else {
        b[n] = '\0';
        /* The last line is "crc XXXXXXXX\n" over everything before it. */
        size_t first = strlen(MANIFEST_FIRST);
        char *last = n >= first + 13 ? b + n - 13 : NULL;
        unsigned crc;
        if (!last || last[-1] != '\n' || memcmp(b, MANIFEST_FIRST, first) != 0 ||
            sscanf(last, "crc %8x\n", &crc) != 1 || sto_crc32c(0, b, (size_t)(last - b)) != crc)
            st = sto_error(STO_DATA_CORRUPTED, "snapshot manifest \"%s\" is damaged", path);
        else
            *last = '\0';
    }
    if (st) free(b);
    free(path);
    if (!st) {
        *text = b;
        *len = n - 13;
    }
    return st;
}

sto_status sto_snapshot_open(const char *dir, sto_snapshot_entry **entries, size_t *n)
{
    *entries = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0;
    STO_TRY(read_manifest(dir, &text, &len));
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    sto_snapshot_entry *e = calloc(lines ? lines : 1, sizeof(*e));
    if (!e) {
        free(text);
        return sto_error_oom();
    }
    size_t count = 0;
    sto_status st = STO_OK;
    char *save = NULL;
    strtok_r(text, "\n", &save); /* the first line was checked */
    for (char *line = strtok_r(NULL, "\n", &save); line && !st;
         line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "generation ", 11) == 0) continue;
        char file[64];
        unsigned long long rows;
        int name_at = 0;
        if (sscanf(line, "table %63s %llu %n", file, &rows, &name_at) != 2 || name_at == 0 ||
            strchr(file, '/') || !line[name_at]) {
            st = sto_error(STO_DATA_CORRUPTED, "snapshot manifest in \"%s\" is damaged", dir);
            break;
        }
        char *path = path_join(dir, file);
        e[count].name = strdup(line + name_at);
        if (!path || !e[count].name) {
            free(path);
            free(e[count].name);
            st = sto_error_oom();
            break;
        }
        st = sto_table_load_file(path, &e[count].table);
        if (!st && sto_table_rows(e[count].table) != rows)
            st = corrupt(path, "row count differs from the manifest");
        free(path);
        count++;
    }
    free(text);
    if (st) {
        sto_snapshot_entries_free(e, count);
        return st;
    }
    *entries = e;
    *n = count;
    return STO_OK;
}
