/*
 * output.c — the four output modes of the shell.
 *
 * Table and markdown modes need every column's width before the first line,
 * so they read each value twice (once to measure, once to print) instead of
 * keeping a copy of the whole result as text.
 */
#include "cli/output.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const mode_names[] = {"table", "csv", "json", "markdown"};

bool cli_mode_parse(const char *name, cli_mode *out)
{
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
        if (strcasecmp(name, mode_names[i]) == 0) {
            *out = (cli_mode)i;
            return true;
        }
    }
    return false;
}

const char *cli_mode_name(cli_mode mode)
{
    return (unsigned)mode < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[mode] : "?";
}

/* Characters (not bytes) of UTF-8 text. */
static size_t text_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

static void pad(FILE *f, size_t n)
{
    while (n--)
        fputc(' ', f);
}

/* Widths of every column: the widest of header and values. */
static size_t *column_widths(rackdb_result *r, uint32_t ncols, uint64_t nrows)
{
    size_t *w = calloc(ncols ? ncols : 1, sizeof(*w));
    if (!w) return NULL;
    for (uint32_t c = 0; c < ncols; c++)
        w[c] = text_width(rackdb_result_column_name(r, c));
    for (uint64_t row = 0; row < nrows; row++) {
        for (uint32_t c = 0; c < ncols; c++) {
            const char *t = rackdb_result_text(r, row, c);
            size_t n = t ? text_width(t) : 0;
            if (n > w[c]) w[c] = n;
        }
    }
    return w;
}

/* Writes a line held in buf without trailing blanks. */
static void put_trimmed(FILE *f, char *buf, size_t len)
{
    while (len && buf[len - 1] == ' ')
        len--;
    fwrite(buf, 1, len, f);
    fputc('\n', f);
}

/* psql's aligned format: " a | b " cells, a "---+---" rule, header names
 * centered, numbers right-aligned, no trailing blanks. */
static bool print_table(FILE *f, rackdb_result *r)
{
    uint32_t ncols = rackdb_result_column_count(r);
    uint64_t nrows = rackdb_result_row_count(r);
    size_t *w = column_widths(r, ncols, nrows);
    if (!w) return false;
    /* Lines are built in memory so trailing blanks can be dropped. */
    char *line = NULL;
    size_t cap = 0;
    FILE *lf = open_memstream(&line, &cap);
    if (!lf) {
        free(w);
        return false;
    }
    for (uint32_t c = 0; c < ncols; c++) {
        const char *name = rackdb_result_column_name(r, c);
        size_t space = w[c] - text_width(name);
        fputs(c ? "| " : " ", lf);
        pad(lf, space / 2);
        fputs(name, lf);
        pad(lf, space - space / 2 + 1);
    }
    fflush(lf);
    put_trimmed(f, line, (size_t)ftello(lf));
    for (uint32_t c = 0; c < ncols; c++) {
        if (c) fputc('+', f);
        for (size_t i = 0; i < w[c] + 2; i++)
            fputc('-', f);
    }
    fputc('\n', f);
    for (uint64_t row = 0; row < nrows; row++) {
        rewind(lf);
        for (uint32_t c = 0; c < ncols; c++) {
            const char *t = rackdb_result_text(r, row, c);
            if (!t) t = "";
            size_t space = w[c] - text_width(t);
            fputs(c ? "| " : " ", lf);
            if (rackdb_result_column_is_numeric(r, c)) {
                pad(lf, space);
                fputs(t, lf);
                fputc(' ', lf);
            } else {
                fputs(t, lf);
                pad(lf, space + 1);
            }
        }
        fflush(lf);
        put_trimmed(f, line, (size_t)ftello(lf));
    }
    fprintf(f, "(%" PRIu64 " row%s)\n", nrows, nrows == 1 ? "" : "s");
    fclose(lf);
    free(line);
    free(w);
    return true;
}

static void csv_field(FILE *f, const char *t)
{
    if (!t) return; /* NULL: empty, unquoted */
    if (*t && !strpbrk(t, ",\"\r\n")) {
        fputs(t, f);
        return;
    }
    fputc('"', f);
    for (; *t; t++) {
        if (*t == '"') fputc('"', f);
        fputc(*t, f);
    }
    fputc('"', f);
}

static bool print_csv(FILE *f, rackdb_result *r)
{
    uint32_t ncols = rackdb_result_column_count(r);
    uint64_t nrows = rackdb_result_row_count(r);
    for (uint32_t c = 0; c < ncols; c++) {
        if (c) fputc(',', f);
        csv_field(f, rackdb_result_column_name(r, c));
    }
    fputc('\n', f);
    for (uint64_t row = 0; row < nrows; row++) {
        for (uint32_t c = 0; c < ncols; c++) {
            if (c) fputc(',', f);
            csv_field(f, rackdb_result_text(r, row, c));
        }
        fputc('\n', f);
    }
    return true;
}

static void json_string(FILE *f, const char *t)
{
    fputc('"', f);
    for (; *t; t++) {
        unsigned char ch = (unsigned char)*t;
        switch (ch) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (ch < 0x20)
                fprintf(f, "\\u%04x", ch);
            else
                fputc(ch, f);
        }
    }
    fputc('"', f);
}

/* JSON has no NaN or Infinity: such doubles are written as strings. */
static bool json_number_ok(const char *t)
{
    return strcmp(t, "NaN") != 0 && strcmp(t, "Infinity") != 0 && strcmp(t, "-Infinity") != 0;
}

static bool print_json(FILE *f, rackdb_result *r)
{
    uint32_t ncols = rackdb_result_column_count(r);
    uint64_t nrows = rackdb_result_row_count(r);
    fputc('[', f);
    for (uint64_t row = 0; row < nrows; row++) {
        fputs(row ? ",\n  {" : "\n  {", f);
        for (uint32_t c = 0; c < ncols; c++) {
            if (c) fputs(", ", f);
            json_string(f, rackdb_result_column_name(r, c));
            fputs(": ", f);
            const char *t = rackdb_result_text(r, row, c);
            if (!t)
                fputs("null", f);
            else if (rackdb_result_column_oid(r, c) == 16)
                fputs(rackdb_result_bool(r, row, c) ? "true" : "false", f);
            else if (rackdb_result_column_is_numeric(r, c) && json_number_ok(t))
                fputs(t, f);
            else
                json_string(f, t);
        }
        fputc('}', f);
    }
    fputs(nrows ? "\n]\n" : "]\n", f);
    return true;
}

/* A markdown cell: `|` escaped, line breaks as spaces. */
static void md_cell(FILE *f, const char *t, size_t width, bool right)
{
    size_t n = text_width(t);
    for (const char *p = t; *p; p++)
        if (*p == '|') n++;
    if (right) pad(f, width - n);
    for (; *t; t++) {
        if (*t == '|')
            fputs("\\|", f);
        else if (*t == '\n' || *t == '\r')
            fputc(' ', f);
        else
            fputc(*t, f);
    }
    if (!right) pad(f, width - n);
}

static size_t md_width(const char *t)
{
    size_t n = text_width(t);
    for (; *t; t++)
        if (*t == '|') n++;
    return n;
}

static bool print_markdown(FILE *f, rackdb_result *r)
{
    uint32_t ncols = rackdb_result_column_count(r);
    uint64_t nrows = rackdb_result_row_count(r);
    size_t *w = calloc(ncols ? ncols : 1, sizeof(*w));
    if (!w) return false;
    for (uint32_t c = 0; c < ncols; c++) {
        w[c] = md_width(rackdb_result_column_name(r, c));
        if (w[c] < 3) w[c] = 3; /* room for "---" / "--:" */
        for (uint64_t row = 0; row < nrows; row++) {
            const char *t = rackdb_result_text(r, row, c);
            size_t n = t ? md_width(t) : 0;
            if (n > w[c]) w[c] = n;
        }
    }
    fputc('|', f);
    for (uint32_t c = 0; c < ncols; c++) {
        fputc(' ', f);
        md_cell(f, rackdb_result_column_name(r, c), w[c], false);
        fputs(" |", f);
    }
    fputs("\n|", f);
    for (uint32_t c = 0; c < ncols; c++) {
        bool right = rackdb_result_column_is_numeric(r, c);
        fputc(' ', f);
        for (size_t i = 0; i < w[c] - (right ? 1 : 0); i++)
            fputc('-', f);
        if (right) fputc(':', f);
        fputs(" |", f);
    }
    fputc('\n', f);
    for (uint64_t row = 0; row < nrows; row++) {
        fputc('|', f);
        for (uint32_t c = 0; c < ncols; c++) {
            const char *t = rackdb_result_text(r, row, c);
            fputc(' ', f);
            md_cell(f, t ? t : "", w[c], rackdb_result_column_is_numeric(r, c));
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    free(w);
    return true;
}

bool cli_print_result(FILE *f, rackdb_result *r, cli_mode mode)
{
    switch (mode) {
    case CLI_MODE_TABLE:
        return print_table(f, r);
    case CLI_MODE_CSV:
        return print_csv(f, r);
    case CLI_MODE_JSON:
        return print_json(f, r);
    case CLI_MODE_MARKDOWN:
        return print_markdown(f, r);
    }
    return false;
}
