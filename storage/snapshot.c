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
 * The directory: MANIFEST is text, "rackdb snapshot 2", "generation G", one
 * "table FILE ROWS SIZE NAME" line per table, and a last line "crc X" over
 * all the bytes before it (version 1, still read, has no SIZE). Table files
 * are named "G-I.rtbl", G above every file already there, so a new save
 * never overwrites a file the current MANIFEST names. A save rewrites only
 * the tables it is told changed; the others keep their files (and older
 * generation numbers), checked against the MANIFEST's row count and size.
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
#include "storage/string_dedup.h"

#define TABLE_MAGIC   "RKDBTBL"
#define TABLE_END     "RKDBEND"
#define TABLE_VERSION 1u
#define MANIFEST      "MANIFEST"
#define MANIFEST_V1   "rackdb snapshot 1\n"
#define MANIFEST_V2   "rackdb snapshot 2\n"
#define FILE_NAME_MAX 64

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
            if (sto_type_is_string(s->cols[i].type.id))
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

/* Reads one string column of a chunk: lengths, then bytes. Long strings
 * that repeat in the column are stored once (string_dedup.h), as the
 * loader stores them. */
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
    sto_dedup d = {0}; /* without its table every string is copied */
    if (sto_dedup_applies(c->schema->cols[col].type)) sto_dedup_init(&d);
    bool ok = true;
    for (uint32_t r = 0; r < c->rows && ok; r++) {
        uint32_t l;
        memcpy(&l, lens + (size_t)r * 4, 4);
        if (l > STO_STR_INLINE_MAX) {
            const char *stored = sto_dedup_store(&d, &c->heap, p, l, NULL);
            ok = stored != NULL;
            if (ok) v[r] = sto_str_make(stored, l);
        } else {
            v[r] = sto_str_make(p, l);
        }
        p += l;
    }
    sto_dedup_free(&d);
    return ok;
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
            if (sto_type_is_string(s->cols[i].type.id)) {
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

/* Removes table files the new MANIFEST does not name (an older save's, or
 * an interrupted save's) and temporary leftovers. */
static void remove_unreferenced(const char *dir, const char (*keep)[FILE_NAME_MAX], size_t nkeep)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned long long gen;
        size_t idx;
        int end = 0;
        bool ours = sscanf(e->d_name, "%llu-%zu.rtbl%n", &gen, &idx, &end) == 2 && end > 0;
        bool stale = strcmp(e->d_name, MANIFEST ".tmp") == 0 || (ours && e->d_name[end] != '\0');
        if (ours && !stale) {
            stale = true;
            for (size_t i = 0; i < nkeep && stale; i++)
                stale = strcmp(keep[i], e->d_name) != 0;
        }
        if (stale) {
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
        size_t first = strlen(MANIFEST_V2);
        char *last = n >= first + 13 ? b + n - 13 : NULL;
        unsigned crc;
        if (!last || last[-1] != '\n' ||
            (memcmp(b, MANIFEST_V1, first) != 0 && memcmp(b, MANIFEST_V2, first) != 0) ||
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

/* One "table" line of a MANIFEST. Version 1 manifests carry no file size
 * (sized false); their tables are rewritten by the next save rather than
 * reused unchecked. */
typedef struct manifest_entry {
    char file[FILE_NAME_MAX];
    uint64_t rows, size;
    bool sized;
    const char *name; /* points into the manifest text */
} manifest_entry;

/* Splits a checked manifest text (modified in place) into its entries. */
static sto_status parse_manifest(const char *dir, char *text, manifest_entry **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    bool v2 = memcmp(text, MANIFEST_V2, strlen(MANIFEST_V2)) == 0;
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    manifest_entry *e = calloc(lines ? lines : 1, sizeof(*e));
    if (!e) return sto_error_oom();
    size_t count = 0;
    char *save = NULL;
    strtok_r(text, "\n", &save); /* the first line was checked */
    for (char *line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "generation ", 11) == 0) continue;
        unsigned long long rows = 0, size = 0;
        int name_at = 0;
        int got =
            v2 ? sscanf(line, "table %63s %llu %llu %n", e[count].file, &rows, &size, &name_at)
               : sscanf(line, "table %63s %llu %n", e[count].file, &rows, &name_at);
        if (got != (v2 ? 3 : 2) || name_at == 0 || strchr(e[count].file, '/') || !line[name_at]) {
            free(e);
            return sto_error(STO_DATA_CORRUPTED, "snapshot manifest in \"%s\" is damaged", dir);
        }
        e[count].rows = rows;
        e[count].size = size;
        e[count].sized = v2;
        e[count].name = line + name_at;
        count++;
    }
    *out = e;
    *n = count;
    return STO_OK;
}

/* The current MANIFEST's entries, for a save to reuse. A missing or damaged
 * MANIFEST gives none: then every table is written. */
static sto_status current_entries(const char *dir, char **text, manifest_entry **e, size_t *n)
{
    *text = NULL;
    *e = NULL;
    *n = 0;
    size_t len = 0;
    sto_status st = read_manifest(dir, text, &len);
    if (st) {
        bool oom = strcmp(st->sqlstate, STO_OUT_OF_MEMORY) == 0;
        sto_status_free(st);
        return oom ? sto_error_oom() : STO_OK;
    }
    st = parse_manifest(dir, *text, e, n);
    if (st) {
        bool oom = strcmp(st->sqlstate, STO_OUT_OF_MEMORY) == 0;
        sto_status_free(st);
        free(*text);
        *text = NULL;
        return oom ? sto_error_oom() : STO_OK;
    }
    return STO_OK;
}

/* An unchanged table keeps its file when the MANIFEST names it with the
 * same row count and the file is there at the recorded size; anything else
 * (a v1 entry, a missing or cut file) is rewritten from memory instead. */
static const manifest_entry *reusable(const char *dir, const manifest_entry *old, size_t nold,
                                      const char *name, const sto_table *t)
{
    const manifest_entry *m = NULL;
    for (size_t i = 0; i < nold && !m; i++)
        if (strcmp(old[i].name, name) == 0) m = &old[i];
    if (!m || !m->sized || m->rows != sto_table_rows(t)) return NULL;
    char *path = path_join(dir, m->file);
    struct stat sb;
    bool ok =
        path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size == m->size;
    free(path);
    return ok ? m : NULL;
}

/* Test-only crash simulation: RACKDB_SNAPSHOT_FAILPOINT=before-manifest stops
 * a save after the table files are durable but before the MANIFEST is
 * replaced; =before-cleanup stops it after the MANIFEST is in place but
 * before unreferenced files are removed. Either way the save reports an
 * error and leaves the directory as a crash at that point would. */
static bool failpoint(const char *where)
{
    const char *fp = getenv("RACKDB_SNAPSHOT_FAILPOINT");
    return fp && strcmp(fp, where) == 0;
}

static sto_status failpoint_error(const char *where)
{
    return sto_error(STO_IO_ERROR, "snapshot save stopped at failpoint %s", where);
}

/* Writes the MANIFEST text (plus its checksum line) by way of MANIFEST.tmp. */
static sto_status install_manifest(const char *dir, const char *text, size_t len)
{
    char crc[32];
    snprintf(crc, sizeof(crc), "crc %08x\n", sto_crc32c(0, text, len));
    char *tmp = path_join(dir, MANIFEST ".tmp"), *final = path_join(dir, MANIFEST);
    FILE *f = tmp ? fopen(tmp, "we") : NULL;
    sto_status st = STO_OK;
    if (!tmp || !final) {
        st = sto_error_oom();
    } else if (!f) {
        st = sto_error(STO_IO_ERROR, "could not create \"%s\": %s", tmp, strerror(errno));
    } else {
        bool ok = fwrite(text, 1, len, f) == len && fputs(crc, f) >= 0 && fflush(f) == 0 &&
                  fsync(fileno(f)) == 0;
        ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, final) != 0) {
            st = sto_error(errno == ENOSPC ? STO_DISK_FULL : STO_IO_ERROR,
                           "could not write \"%s\": %s", final, strerror(errno));
            unlink(tmp);
        }
    }
    free(tmp);
    free(final);
    return st;
}

sto_status sto_snapshot_save(const char *dir, const char *const *names, sto_table *const *tables,
                             size_t n)
{
    return sto_snapshot_save_changed(dir, names, tables, NULL, n);
}

sto_status sto_snapshot_save_changed(const char *dir, const char *const *names,
                                     sto_table *const *tables, const bool *changed, size_t n)
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
    /* Above every file in the directory, so a new file never overwrites one
     * the current MANIFEST names (reused files keep their older numbers). */
    uint64_t gen = last_generation(dir) + 1;
    char *old_text = NULL;
    manifest_entry *old = NULL;
    size_t nold = 0;
    if (changed) STO_TRY(current_entries(dir, &old_text, &old, &nold));

    /* The manifest text, built while the table files are written. */
    size_t cap = 128, len = 0;
    for (size_t i = 0; i < n; i++)
        cap += strlen(names[i]) + 128;
    char *text = malloc(cap);
    char(*files)[FILE_NAME_MAX] = calloc(n ? n : 1, sizeof(*files));
    sto_status st = STO_OK;
    if (!text || !files) {
        st = sto_error_oom();
        goto out;
    }
    len += (size_t)snprintf(text + len, cap - len, "%sgeneration %" PRIu64 "\n", MANIFEST_V2, gen);
    for (size_t i = 0; i < n && !st; i++) {
        const manifest_entry *keep =
            changed && !changed[i] ? reusable(dir, old, nold, names[i], tables[i]) : NULL;
        uint64_t size = 0;
        if (keep) {
            snprintf(files[i], FILE_NAME_MAX, "%s", keep->file);
            size = keep->size;
        } else {
            snprintf(files[i], FILE_NAME_MAX, "%" PRIu64 "-%zu.rtbl", gen, i);
            char *path = path_join(dir, files[i]);
            if (!path) {
                st = sto_error_oom();
                break;
            }
            st = save_table_atomic(tables[i], path);
            struct stat sb;
            if (!st && stat(path, &sb) != 0)
                st = sto_error(STO_IO_ERROR, "could not stat \"%s\": %s", path, strerror(errno));
            if (!st) size = (uint64_t)sb.st_size;
            free(path);
        }
        len += (size_t)snprintf(text + len, cap - len, "table %s %" PRIu64 " %" PRIu64 " %s\n",
                                files[i], sto_table_rows(tables[i]), size, names[i]);
    }
    if (!st) st = fsync_dir(dir); /* table files are durable before the manifest */
    if (!st && failpoint("before-manifest")) st = failpoint_error("before-manifest");
    if (!st) st = install_manifest(dir, text, len);
    if (!st) st = fsync_dir(dir);
    if (!st && failpoint("before-cleanup")) st = failpoint_error("before-cleanup");
    /* After a failure the new generation's files are the unreferenced ones;
     * the next successful save removes them. */
    if (!st) remove_unreferenced(dir, (const char(*)[FILE_NAME_MAX])files, n);
out:
    free(text);
    free(files);
    free(old);
    free(old_text);
    return st;
}

sto_status sto_snapshot_open(const char *dir, sto_snapshot_entry **entries, size_t *n)
{
    *entries = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0;
    STO_TRY(read_manifest(dir, &text, &len));
    manifest_entry *m = NULL;
    size_t nm = 0;
    sto_status st = parse_manifest(dir, text, &m, &nm);
    if (st) {
        free(text);
        return st;
    }
    sto_snapshot_entry *e = calloc(nm ? nm : 1, sizeof(*e));
    size_t count = 0;
    if (!e) st = sto_error_oom();
    for (size_t i = 0; i < nm && !st; i++) {
        char *path = path_join(dir, m[i].file);
        e[count].name = strdup(m[i].name);
        if (!path || !e[count].name) {
            free(path);
            free(e[count].name);
            st = sto_error_oom();
            break;
        }
        struct stat sb;
        if (m[i].sized && stat(path, &sb) == 0 && (uint64_t)sb.st_size != m[i].size)
            st = corrupt(path, "file size differs from the manifest");
        if (!st) st = sto_table_load_file(path, &e[count].table);
        if (!st && sto_table_rows(e[count].table) != m[i].rows)
            st = corrupt(path, "row count differs from the manifest");
        free(path);
        count++;
    }
    free(m);
    free(text);
    if (st) {
        sto_snapshot_entries_free(e, count);
        return st;
    }
    *entries = e;
    *n = count;
    return STO_OK;
}
