/*
 * test_loader.c — loading .tbl and CSV text (storage/loader.c) and writing
 * it back (storage/writer.c): values, NULLs, CSV quoting, every bad-input
 * case with its exact line and column and an unchanged table, parallel
 * loads equal to serial ones, real dbgen data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/loader.h"
#include "storage/writer.h"
#include "test.h"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
    return buf;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* id INTEGER NOT NULL, price DECIMAL(7,2), day DATE, code CHAR(4) NOT NULL,
 * note VARCHAR(10), big BIGINT, ratio DOUBLE, ok BOOLEAN */
static sto_table *make_table(void)
{
    const char *names[] = {"id", "price", "day", "code", "note", "big", "ratio", "ok"};
    sto_type types[] = {sto_type_make(STO_TYPE_INTEGER),       sto_type_decimal(7, 2),
                        sto_type_make(STO_TYPE_DATE),          sto_type_string(STO_TYPE_CHAR, 4),
                        sto_type_string(STO_TYPE_VARCHAR, 10), sto_type_make(STO_TYPE_BIGINT),
                        sto_type_make(STO_TYPE_DOUBLE),        sto_type_make(STO_TYPE_BOOLEAN)};
    bool nn[] = {true, false, false, true, false, false, false, false};
    sto_schema *s = NULL;
    sto_table *t = NULL;
    if (sto_schema_new(8, names, types, nn, &s)) return NULL;
    sto_status st = sto_table_new(s, &t);
    sto_status_free(st);
    sto_schema_free(s);
    return t;
}

static sto_load_options tbl_opts(int threads)
{
    sto_load_options o = {sto_text_format_tbl(), threads, 0};
    return o;
}

static sto_load_options csv_opts(bool header, int threads)
{
    sto_load_options o = {sto_text_format_csv(header), threads, 0};
    return o;
}

/* True when both tables hold the same values row by row. */
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

static bool str_is(sto_value v, const char *s)
{
    return !v.is_null && v.v.str.len == strlen(s) &&
           memcmp(sto_str_data(&v.v.str), s, v.v.str.len) == 0;
}

static const char good_tbl[] = "1|12.50|1996-03-13|AB  |hello|9000000000|0.25|t|\n"
                               "2|||ZZ|||||\n"
                               "3|-0.04|1992-01-01|XYZW|a|-1|-2e3|false|\n";

static void test_tbl_values(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    write_text(tmp_path("good.tbl"), good_tbl);
    sto_load_options o = tbl_opts(1);
    uint64_t n = 0;
    sto_status st = sto_load_file(t, tmp_path("good.tbl"), &o, &n);
    CHECK(!st);
    if (st) fprintf(stderr, "%s\n", st->message);
    sto_status_free(st);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(sto_table_rows(t), 3);
    CHECK_EQ_INT(sto_table_get(t, 0, 0).v.i64, 1);
    CHECK_EQ_INT(sto_table_get(t, 1, 0).v.i64, 1250);
    CHECK_EQ_INT(sto_table_get(t, 2, 0).v.i64, sto_date_from_ymd(1996, 3, 13));
    CHECK(str_is(sto_table_get(t, 3, 0), "AB")); /* CHAR loses trailing blanks */
    CHECK(str_is(sto_table_get(t, 4, 0), "hello"));
    CHECK_EQ_INT(sto_table_get(t, 5, 0).v.i64, 9000000000LL);
    CHECK(sto_table_get(t, 6, 0).v.f64 == 0.25);
    CHECK_EQ_INT(sto_table_get(t, 7, 0).v.i64, 1);
    /* Row 2: empty fields are NULL in every nullable column. */
    for (uint32_t c = 1; c < 8; c++)
        if (c != 3) CHECK(sto_table_get(t, c, 1).is_null);
    CHECK(str_is(sto_table_get(t, 3, 1), "ZZ"));
    CHECK_EQ_INT(sto_table_get(t, 1, 2).v.i64, -4);
    CHECK(sto_table_get(t, 6, 2).v.f64 == -2000.0);
    CHECK_EQ_INT(sto_table_get(t, 7, 2).v.i64, 0);
    const sto_column_stats *ps = sto_table_stats(t, 1);
    CHECK(ps->null_count == 1 && ps->min.i == -4 && ps->max.i == 1250);

    /* COPY TO in dbgen's format: NULLs as empty fields, CHAR without its
     * blanks, every field followed by the delimiter; loads back equal. */
    sto_text_format f = sto_text_format_tbl();
    st = sto_write_file(t, tmp_path("out.tbl"), &f, &n);
    CHECK(!st && n == 3);
    sto_status_free(st);
    char back_text[512] = "";
    FILE *fp = fopen(tmp_path("out.tbl"), "r");
    if (fp) {
        size_t got = fread(back_text, 1, sizeof(back_text) - 1, fp);
        back_text[got] = '\0';
        fclose(fp);
    }
    CHECK_STREQ(back_text, "1|12.50|1996-03-13|AB|hello|9000000000|0.25|t|\n"
                           "2|||ZZ|||||\n"
                           "3|-0.04|1992-01-01|XYZW|a|-1|-2000|f|\n");
    sto_table *back = make_table();
    REQUIRE(back);
    st = sto_load_file(back, tmp_path("out.tbl"), &o, &n);
    CHECK(!st && n == 3);
    sto_status_free(st);
    CHECK(tables_equal(t, back));
    sto_table_free(back);
    sto_table_free(t);
}

/* Loads `text` into a table that already holds good_tbl's rows and checks
 * the error code, that the message contains `where`, and that the table
 * still holds exactly its old rows. */
static void expect_error(const char *text, const sto_load_options *o, const char *code,
                         const char *where)
{
    sto_table *t = make_table(), *ref = make_table();
    REQUIRE(t && ref);
    sto_load_options base = tbl_opts(1);
    REQUIRE(!sto_load_buffer(t, "good.tbl", good_tbl, strlen(good_tbl), &base, NULL));
    REQUIRE(!sto_load_buffer(ref, "good.tbl", good_tbl, strlen(good_tbl), &base, NULL));
    write_text(tmp_path("bad.txt"), text);
    uint64_t n = 77;
    sto_status st = sto_load_file(t, tmp_path("bad.txt"), o, &n);
    CHECK(st != NULL);
    if (!st) fprintf(stderr, "  no error for %s\n", where);
    if (st) {
        if (strcmp(st->sqlstate, code) != 0 || !strstr(st->message, where))
            fprintf(stderr, "  got %s \"%s\", wanted %s \"%s\"\n", st->sqlstate, st->message, code,
                    where);
        CHECK_STREQ(st->sqlstate, code);
        CHECK(strstr(st->message, where) != NULL);
        CHECK(strstr(st->message, "bad.txt") != NULL);
    }
    sto_status_free(st);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(sto_table_rows(t), 3);
    CHECK(tables_equal(t, ref));
    CHECK_EQ_INT(sto_table_stats(t, 0)->max.i, 3);
    sto_table_free(t);
    sto_table_free(ref);
}

static void test_bad_input(void)
{
    sto_load_options o = tbl_opts(1);
    const char *ok = "10|1.00|1995-01-01|A|x|1|1|t|\n";
    char buf[512];
#define BAD(line3, code, where)                                                                    \
    do {                                                                                           \
        snprintf(buf, sizeof(buf), "%s%s%s\n%s", ok, ok, line3, ok);                               \
        expect_error(buf, &o, code, where);                                                        \
    } while (0)
    BAD("11|1.00|1995-01-01|A|x|1|1|", STO_BAD_COPY_FILE_FORMAT, "line 3, column 8 (ok)");
    BAD("11|1.00|1995-01-01|A|x|1|1|t|extra|", STO_BAD_COPY_FILE_FORMAT, "line 3, column 9");
    BAD("11", STO_BAD_COPY_FILE_FORMAT, "line 3, column 2 (price): missing data");
    BAD("abc|1.00|1995-01-01|A|x|1|1|t|", STO_INVALID_TEXT_REPRESENTATION,
        "line 3, column 1 (id): invalid input syntax for type INTEGER: \"abc\"");
    BAD("12x|1.00|1995-01-01|A|x|1|1|t|", STO_INVALID_TEXT_REPRESENTATION, "column 1 (id)");
    BAD("2147483648|1.00|1995-01-01|A|x|1|1|t|", STO_NUMERIC_VALUE_OUT_OF_RANGE,
        "line 3, column 1 (id): value out of range for type INTEGER");
    BAD("11|100000.00|1995-01-01|A|x|1|1|t|", STO_NUMERIC_VALUE_OUT_OF_RANGE,
        "line 3, column 2 (price): value out of range for type DECIMAL(7,2)");
    BAD("11|1.2.3|1995-01-01|A|x|1|1|t|", STO_INVALID_TEXT_REPRESENTATION,
        "line 3, column 2 (price)");
    BAD("11|1.00|1995-13-01|A|x|1|1|t|", STO_DATETIME_FIELD_OVERFLOW, "line 3, column 3 (day)");
    BAD("11|1.00|1995-02-29|A|x|1|1|t|", STO_DATETIME_FIELD_OVERFLOW, "line 3, column 3 (day)");
    BAD("11|1.00|19950101|A|x|1|1|t|", STO_INVALID_DATETIME_FORMAT, "line 3, column 3 (day)");
    BAD("11|1.00|1995-01-01|ABCDE|x|1|1|t|", STO_STRING_DATA_RIGHT_TRUNCATION,
        "line 3, column 4 (code): value too long for type CHAR(4)");
    BAD("11|1.00|1995-01-01|A|0123456789x|1|1|t|", STO_STRING_DATA_RIGHT_TRUNCATION,
        "line 3, column 5 (note)");
    BAD("11|1.00|1995-01-01||x|1|1|t|", STO_NOT_NULL_VIOLATION,
        "line 3, column 4 (code): null value in column \"code\"");
    BAD("11|1.00|1995-01-01|A|x|99999999999999999999|1|t|", STO_NUMERIC_VALUE_OUT_OF_RANGE,
        "column 6 (big)");
    BAD("11|1.00|1995-01-01|A|x|1|one|t|", STO_INVALID_TEXT_REPRESENTATION, "column 7 (ratio)");
    BAD("11|1.00|1995-01-01|A|x|1|1|maybe|", STO_INVALID_TEXT_REPRESENTATION, "column 8 (ok)");
#undef BAD
    /* Line numbers count a header line, and CRLF line ends work. */
    sto_load_options h = csv_opts(true, 1);
    expect_error("id,price,day,code,note,big,ratio,ok\r\n"
                 "1,1,1995-01-01,A,x,1,1,t\r\n"
                 "2,1,1995-01-01,A,x,1,1,t\r\n"
                 "3,1,1995-01-01,A,x,1,1,t,\r\n",
                 &h, STO_BAD_COPY_FILE_FORMAT, "line 4, column 9");
    sto_load_options c = csv_opts(false, 1);
    expect_error("1,1,1995-01-01,\"A\"x,x,1,1,t\n", &c, STO_BAD_COPY_FILE_FORMAT,
                 "line 1, column 4 (code): unexpected characters after a quoted field");
    expect_error("1,1,1995-01-01,A,x,1,1,t\n2,1,1995-01-01,\"A,x,1,1,t\n", &c,
                 STO_BAD_COPY_FILE_FORMAT, "line 2, column 4 (code): unterminated");
    /* A quoted empty string is not NULL, so a NOT NULL CHAR accepts it; an
     * integer does not. */
    expect_error("\"\",1,1995-01-01,A,x,1,1,t\n", &c, STO_INVALID_TEXT_REPRESENTATION,
                 "line 1, column 1 (id)");
}

/* A file of several chunks per thread: each thread drops the pages it has
 * parsed, and an error far into the file still names its line (found by
 * reading the file from its start again). */
static void test_error_after_released_pages(void)
{
    const char *ok = "10|1.00|1995-01-01|A|x|1|1|t|\n";
    size_t good = 200000, len = strlen(ok);
    char *text = malloc(good * len + 64);
    REQUIRE(text);
    for (size_t i = 0; i < good; i++)
        memcpy(text + i * len, ok, len);
    strcpy(text + good * len, "11|1.00|1995-02-30|A|x|1|1|t|\n");
    sto_load_options o = tbl_opts(2);
    expect_error(text, &o, STO_DATETIME_FIELD_OVERFLOW, "line 200001, column 3 (day)");
    free(text);
}

static void test_missing_and_unreadable(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    sto_load_options o = tbl_opts(2);
    sto_status st = sto_load_file(t, tmp_path("no-such-file.tbl"), &o, NULL);
    CHECK(st && strcmp(st->sqlstate, STO_UNDEFINED_FILE) == 0 &&
          strstr(st->message, "no-such-file.tbl"));
    sto_status_free(st);
    st = sto_load_file(t, tmpdir, &o, NULL); /* a directory */
    CHECK(st && strcmp(st->sqlstate, STO_IO_ERROR) == 0);
    sto_status_free(st);
    write_text(tmp_path("empty.tbl"), "");
    uint64_t n = 5;
    st = sto_load_file(t, tmp_path("empty.tbl"), &o, &n);
    CHECK(!st && n == 0 && sto_table_rows(t) == 0);
    sto_status_free(st);
    sto_table_free(t);
}

static void test_csv_quoting(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    const char *text = "id,price,day,code,note,big,ratio,ok\n"
                       "1,\"1.5\",1996-01-02,\"A,B\",\"say \"\"hi\"\"\",7,1,t\n"
                       "2,,,\"\",\"\",,,\n"
                       "3,2,1996-01-02,C,\"two\nlines\",8,1,f\n"
                       "4,2,1996-01-02,D,,8,1,f";
    sto_load_options o = csv_opts(true, 1);
    uint64_t n = 0;
    sto_status st = sto_load_buffer(t, "q.csv", text, strlen(text), &o, &n);
    CHECK(!st);
    if (st) fprintf(stderr, "%s\n", st->message);
    sto_status_free(st);
    CHECK_EQ_INT(n, 4);
    CHECK_EQ_INT(sto_table_get(t, 1, 0).v.i64, 150);
    CHECK(str_is(sto_table_get(t, 3, 0), "A,B"));
    CHECK(str_is(sto_table_get(t, 4, 0), "say \"hi\""));
    CHECK(str_is(sto_table_get(t, 3, 1), "")); /* quoted empty: a string */
    CHECK(str_is(sto_table_get(t, 4, 1), ""));
    CHECK(sto_table_get(t, 5, 1).is_null); /* unquoted empty: NULL */
    CHECK(str_is(sto_table_get(t, 4, 2), "two\nlines"));
    CHECK_EQ_INT(sto_table_get(t, 0, 3).v.i64, 4); /* last line without newline */
    CHECK(sto_table_get(t, 4, 3).is_null);

    /* Written back as CSV and loaded again: the same table. */
    sto_text_format f = sto_text_format_csv(true);
    uint64_t w = 0;
    st = sto_write_file(t, tmp_path("out.csv"), &f, &w);
    CHECK(!st && w == 4);
    sto_status_free(st);
    sto_table *back = make_table();
    REQUIRE(back);
    st = sto_load_file(back, tmp_path("out.csv"), &o, &n);
    CHECK(!st && n == 4);
    sto_status_free(st);
    CHECK(tables_equal(t, back));
    sto_table_free(back);

    /* .tbl text cannot hold an empty string or a line break: the write
     * fails and leaves the old file alone. */
    write_text(tmp_path("keep.tbl"), "old contents\n");
    sto_text_format tf = sto_text_format_tbl();
    st = sto_write_file(t, tmp_path("keep.tbl"), &tf, NULL);
    CHECK(st && strcmp(st->sqlstate, STO_BAD_COPY_FILE_FORMAT) == 0);
    sto_status_free(st);
    FILE *fp = fopen(tmp_path("keep.tbl"), "r");
    char line[64] = "";
    if (fp) {
        if (!fgets(line, sizeof(line), fp)) line[0] = '\0';
        fclose(fp);
    }
    CHECK_STREQ(line, "old contents\n");
    sto_table_free(t);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = calloc(1, 4096);
    if (b && fread(b, 1, 4095, f) == 0) b[0] = '\0';
    fclose(f);
    return b;
}

/* PostgreSQL's text format (a zeroed sto_text_format with a tab): \N is
 * NULL, an empty field an empty string, backslash escapes stand for bytes,
 * and writing then loading gives back every value. */
static void test_pg_text(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    const char *text = "1\t1.5\t1996-01-02\tA\\tB\tsay \\\\hi\t7\t1\tt\n"
                       "2\t\\N\t\\N\t\t\t\\N\t\\N\t\\N\n"
                       "3\t 2e1 \t1996-01-02\tC\ttwo\\nlines\t8\t1\tf\n"
                       "4\t2\t1996-01-02\t\\x41\\102\tx\\\ty\\N\t8\t1\tf\n";
    sto_load_options o = {{'\t', false, false, false, false}, 1, 0};
    uint64_t n = 0;
    sto_status st = sto_load_buffer(t, "q.txt", text, strlen(text), &o, &n);
    CHECK(!st && n == 4);
    if (st) fprintf(stderr, "%s\n", st->message);
    sto_status_free(st);
    CHECK(str_is(sto_table_get(t, 3, 0), "A\tB"));
    CHECK(str_is(sto_table_get(t, 4, 0), "say \\hi"));
    CHECK(sto_table_get(t, 1, 1).is_null);
    CHECK(sto_table_get(t, 2, 1).is_null);
    CHECK(str_is(sto_table_get(t, 3, 1), "")); /* an empty field is a string */
    CHECK(str_is(sto_table_get(t, 4, 1), ""));
    CHECK(sto_table_get(t, 7, 1).is_null);
    CHECK_EQ_INT(sto_table_get(t, 1, 2).v.i64, 2000); /* blanks, exponent */
    CHECK(str_is(sto_table_get(t, 4, 2), "two\nlines"));
    CHECK(str_is(sto_table_get(t, 3, 3), "AB"));
    CHECK(str_is(sto_table_get(t, 4, 3), "x\tyN")); /* \N inside a field is N */

    sto_text_format f = o.format;
    uint64_t w = 0;
    st = sto_write_file(t, tmp_path("out.txt"), &f, &w);
    CHECK(!st && w == 4);
    sto_status_free(st);
    char *out = read_all(tmp_path("out.txt"));
    CHECK_STREQ(out, "1\t1.50\t1996-01-02\tA\\tB\tsay \\\\hi\t7\t1\tt\n"
                     "2\t\\N\t\\N\t\t\t\\N\t\\N\t\\N\n"
                     "3\t20.00\t1996-01-02\tC\ttwo\\nlines\t8\t1\tf\n"
                     "4\t2.00\t1996-01-02\tAB\tx\\tyN\t8\t1\tf\n");
    free(out);
    sto_table *back = make_table();
    REQUIRE(back);
    st = sto_load_file(back, tmp_path("out.txt"), &o, &n);
    CHECK(!st && n == 4);
    sto_status_free(st);
    CHECK(tables_equal(t, back));
    sto_table_free(back);

    /* An empty field is no number (PostgreSQL: 22P02), and \N no NOT NULL
     * value. */
    const char *bad = "\t1\t\\N\tA\t\\N\t\\N\t\\N\t\\N\n";
    st = sto_load_buffer(t, "bad.txt", bad, strlen(bad), &o, NULL);
    CHECK(st && strcmp(st->sqlstate, STO_INVALID_TEXT_REPRESENTATION) == 0);
    sto_status_free(st);
    const char *bad2 = "\\N\t1\t\\N\tA\t\\N\t\\N\t\\N\t\\N\n";
    st = sto_load_buffer(t, "bad.txt", bad2, strlen(bad2), &o, NULL);
    CHECK(st && strcmp(st->sqlstate, STO_NOT_NULL_VIOLATION) == 0);
    sto_status_free(st);
    CHECK_EQ_INT(sto_table_rows(t), 4);
    sto_table_free(t);
}

/* .tbl fields take PostgreSQL's numeric spellings too: blanks around a
 * number, an exponent in a DECIMAL; empty fields stay NULL. */
static void test_tbl_numeric_spellings(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    const char *text = " 7 |1.5e2|1996-01-02 |ab|x| -3|2.5e0| t|\n"
                       "8|||cd|||||\n";
    sto_load_options o = tbl_opts(1);
    uint64_t n = 0;
    sto_status st = sto_load_buffer(t, "s.tbl", text, strlen(text), &o, &n);
    CHECK(!st && n == 2);
    if (st) fprintf(stderr, "%s\n", st->message);
    sto_status_free(st);
    CHECK_EQ_INT(sto_table_get(t, 0, 0).v.i64, 7);
    CHECK_EQ_INT(sto_table_get(t, 1, 0).v.i64, 15000);
    CHECK_EQ_INT(sto_table_get(t, 2, 0).v.i64, 9497);
    CHECK_EQ_INT(sto_table_get(t, 5, 0).v.i64, -3);
    CHECK(sto_table_get(t, 6, 0).v.f64 == 2.5);
    CHECK_EQ_INT(sto_table_get(t, 7, 0).v.i64, 1);
    CHECK(sto_table_get(t, 1, 1).is_null);
    CHECK(sto_table_get(t, 4, 1).is_null);
    /* the message shows the field as written */
    const char *bad = "1|1e9|1996-01-02|ab|x|1|1|t|\n";
    st = sto_load_buffer(t, "s.tbl", bad, strlen(bad), &o, NULL);
    CHECK(st && strcmp(st->sqlstate, STO_NUMERIC_VALUE_OUT_OF_RANGE) == 0 &&
          strstr(st->message, "\"1e9\""));
    sto_status_free(st);
    sto_table_free(t);
}

/* A few thousand varied rows, some with quoted fields spanning lines. */
static char *make_big_text(bool csv, size_t rows, size_t *len)
{
    size_t cap = rows * 96 + 64, n = 0;
    char *b = malloc(cap);
    if (!b) return NULL;
    char d = csv ? ',' : '|';
    for (size_t r = 0; r < rows; r++) {
        char note[32];
        if (csv && r % 5 == 0)
            snprintf(note, sizeof(note), "\"n%zu\n\"\"q\"\"\"", r % 1000);
        else if (r % 3 == 0)
            note[0] = '\0';
        else
            snprintf(note, sizeof(note), "n%zu", r % 100000);
        n += (size_t)snprintf(b + n, cap - n,
                              "%zu%c%zu.%02zu%c1995-%02zu-%02zu%cC%zu%c%s%c%zu%c%s\n", r, d,
                              r % 99999, r % 100, d, r % 12 + 1, r % 28 + 1, d, r % 7, d, note, d,
                              r * 1000003, d, csv ? "0.5,t" : "0.5|f|");
    }
    *len = n;
    return b;
}

static void test_parallel_equals_serial(void)
{
    for (int csv = 0; csv < 2; csv++) {
        size_t len = 0;
        char *text = make_big_text(csv, 20000, &len);
        REQUIRE(text);
        sto_table *one = make_table(), *four = make_table();
        REQUIRE(one && four);
        sto_load_options o1 = csv ? csv_opts(false, 1) : tbl_opts(1);
        sto_load_options o4 = csv ? csv_opts(false, 4) : tbl_opts(4);
        o4.min_bytes_per_thread = 1; /* force four ranges on a small input */
        uint64_t n1 = 0, n4 = 0;
        sto_status st = sto_load_buffer(one, "big", text, len, &o1, &n1);
        if (st) fprintf(stderr, "%s\n", st->message);
        CHECK(!st);
        sto_status_free(st);
        st = sto_load_buffer(four, "big", text, len, &o4, &n4);
        if (st) fprintf(stderr, "%s\n", st->message);
        CHECK(!st);
        sto_status_free(st);
        CHECK_EQ_INT(n1, 20000);
        CHECK_EQ_INT(n4, 20000);
        CHECK(sto_table_nchunks(four) >= 4); /* it really was split */
        CHECK(tables_equal(one, four));
        CHECK(csv == 0 || str_is(sto_table_get(four, 4, 5), "n5\n\"q\""));
        CHECK_EQ_INT(sto_table_stats(one, 0)->distinct, sto_table_stats(four, 0)->distinct);

        /* An error near the end is reported with the same line either way. */
        char *bad = malloc(len + 64);
        REQUIRE(bad);
        memcpy(bad, text, len);
        size_t blen = len + (size_t)sprintf(bad + len, csv ? "1,x,1995-01-01,C,n,1,0.5,t\n"
                                                           : "1|x|1995-01-01|C|n|1|0.5|f|\n");
        uint64_t lines = 0;
        for (size_t i = 0; i < blen; i++)
            lines += bad[i] == '\n';
        char where[64];
        snprintf(where, sizeof(where), "line %llu, column 2 (price)", (unsigned long long)lines);
        sto_status s1 = sto_load_buffer(one, "big", bad, blen, &o1, NULL);
        sto_status s4 = sto_load_buffer(four, "big", bad, blen, &o4, NULL);
        CHECK(s1 && s4 && strcmp(s1->message, s4->message) == 0);
        CHECK(s4 && strstr(s4->message, where));
        if (s4 && !strstr(s4->message, where)) fprintf(stderr, "%s vs %s\n", s4->message, where);
        sto_status_free(s1);
        sto_status_free(s4);
        CHECK_EQ_INT(sto_table_rows(four), 20000);
        free(bad);
        free(text);
        sto_table_free(one);
        sto_table_free(four);
    }
}

static void test_cancel(void)
{
    size_t len = 0;
    char *text = make_big_text(false, 5000, &len);
    REQUIRE(text);
    sto_table *t = make_table();
    REQUIRE(t);
    sto_load_options o = tbl_opts(2);
    o.min_bytes_per_thread = 1;
    REQUIRE(!sto_load_buffer(t, "first", text, len, &o, NULL));
    atomic_bool stop = true;
    o.cancel = &stop;
    uint64_t n = 1;
    sto_status st = sto_load_buffer(t, "second", text, len, &o, &n);
    CHECK(st && strcmp(st->sqlstate, STO_QUERY_CANCELED) == 0);
    sto_status_free(st);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(sto_table_rows(t), 5000);
    atomic_store(&stop, false);
    CHECK(!sto_load_buffer(t, "third", text, len, &o, &n) && n == 5000);
    CHECK_EQ_INT(sto_table_rows(t), 10000);
    free(text);
    sto_table_free(t);
}

/* Random damage to valid input never crashes the loader: each attempt
 * either loads or fails with a located error and the table unchanged. */
static void test_mutations(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    size_t len = 0;
    char *base = make_big_text(true, 300, &len);
    REQUIRE(base);
    char *text = malloc(len);
    REQUIRE(text);
    const char alphabet[] = "0123456789|,\"\n\r.- aZ";
    uint64_t x = 0x243f6a8885a308d3ULL; /* xorshift64: the same cases every run */
    int unlocated = 0, changed = 0;
    for (int round = 0; round < 400; round++) {
        memcpy(text, base, len);
        int edits = 1 + round % 4;
        for (int e = 0; e < edits; e++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            text[x % len] = alphabet[(x >> 32) % (sizeof(alphabet) - 1)];
        }
        bool csv = round % 2 == 0;
        sto_load_options o = csv ? csv_opts(false, 1 + round % 3) : tbl_opts(1 + round % 3);
        o.min_bytes_per_thread = 1;
        uint64_t before = sto_table_rows(t), n = 0;
        sto_status st = sto_load_buffer(t, "mutated", text, len, &o, &n);
        if (st) {
            if (!strstr(st->message, "mutated: line ")) unlocated++;
            if (sto_table_rows(t) != before) changed++;
            sto_status_free(st);
        } else if (sto_table_rows(t) != before + n) {
            changed++;
        }
        sto_table_truncate(t, 0);
    }
    CHECK_EQ_INT(unlocated, 0);
    CHECK_EQ_INT(changed, 0);
    free(text);
    free(base);
    sto_table_free(t);
}

static sto_table *make_lineitem(void)
{
    const char *names[] = {"l_orderkey",    "l_partkey",       "l_suppkey",  "l_linenumber",
                           "l_quantity",    "l_extendedprice", "l_discount", "l_tax",
                           "l_returnflag",  "l_linestatus",    "l_shipdate", "l_commitdate",
                           "l_receiptdate", "l_shipinstruct",  "l_shipmode", "l_comment"};
    sto_type i = sto_type_make(STO_TYPE_INTEGER), d = sto_type_decimal(15, 2),
             dt = sto_type_make(STO_TYPE_DATE);
    sto_type types[] = {i,
                        i,
                        i,
                        i,
                        d,
                        d,
                        d,
                        d,
                        sto_type_string(STO_TYPE_CHAR, 1),
                        sto_type_string(STO_TYPE_CHAR, 1),
                        dt,
                        dt,
                        dt,
                        sto_type_string(STO_TYPE_CHAR, 25),
                        sto_type_string(STO_TYPE_CHAR, 10),
                        sto_type_string(STO_TYPE_VARCHAR, 44)};
    bool nn[16];
    for (int k = 0; k < 16; k++)
        nn[k] = true;
    sto_schema *s = NULL;
    sto_table *t = NULL;
    if (sto_schema_new(16, names, types, nn, &s)) return NULL;
    sto_status st = sto_table_new(s, &t);
    sto_status_free(st);
    sto_schema_free(s);
    return t;
}

static void test_dbgen_lineitem(void)
{
    char src[512], cmd[1200];
    snprintf(src, sizeof(src), "%s/tpch/reference-data/sf0.01/lineitem.tbl.gz", test_shared_dir());
    if (access(src, R_OK) != 0) {
        fprintf(stderr, "no %s: skipping the dbgen check\n", src);
        return;
    }
    snprintf(cmd, sizeof(cmd), "gzip -dc '%s' > '%s'", src, tmp_path("lineitem.tbl"));
    REQUIRE(system(cmd) == 0);
    sto_table *t = make_lineitem(), *t1 = make_lineitem();
    REQUIRE(t && t1);
    sto_load_options o = tbl_opts(2);
    uint64_t n = 0;
    sto_status st = sto_load_file(t, tmp_path("lineitem.tbl"), &o, &n);
    if (st) fprintf(stderr, "%s\n", st->message);
    CHECK(!st);
    sto_status_free(st);
    CHECK_EQ_INT(n, 60175);
    CHECK_EQ_INT(sto_table_rows(t), 60175);
    /* 1|1552|93|1|17|24710.35|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|
     * DELIVER IN PERSON|TRUCK|egular courts above the| */
    CHECK_EQ_INT(sto_table_get(t, 1, 0).v.i64, 1552);
    CHECK_EQ_INT(sto_table_get(t, 5, 0).v.i64, 2471035);
    CHECK_EQ_INT(sto_table_get(t, 6, 0).v.i64, 4);
    CHECK(str_is(sto_table_get(t, 8, 0), "N"));
    CHECK_EQ_INT(sto_table_get(t, 10, 0).v.i64, sto_date_from_ymd(1996, 3, 13));
    CHECK(str_is(sto_table_get(t, 13, 0), "DELIVER IN PERSON"));
    CHECK(str_is(sto_table_get(t, 15, 0), "egular courts above the"));
    /* Last line: 60000|836|3|6|45|78157.35|...|ke final packages. carefully final fo| */
    CHECK_EQ_INT(sto_table_get(t, 0, 60174).v.i64, 60000);
    CHECK_EQ_INT(sto_table_get(t, 5, 60174).v.i64, 7815735);
    CHECK(str_is(sto_table_get(t, 15, 60174), "ke final packages. carefully final fo"));
    /* Sums over every row (computed independently from the text). */
    int64_t qty = 0, price = 0;
    for (size_t k = 0; k < sto_table_nchunks(t); k++) {
        const sto_chunk *c = sto_table_chunk(t, k);
        for (uint32_t r = 0; r < c->rows; r++) {
            qty += ((const int64_t *)c->cols[4])[r];
            price += ((const int64_t *)c->cols[5])[r];
        }
    }
    CHECK_EQ_INT(qty, 153612700);
    CHECK_EQ_INT(price, 215218976047LL);
    const sto_column_stats *sd = sto_table_stats(t, 10);
    CHECK(sd->min.i >= sto_date_from_ymd(1992, 1, 1) &&
          sd->max.i <= sto_date_from_ymd(1998, 12, 31));
    CHECK(sto_table_stats(t, 8)->distinct == 3); /* A, N, R */
    CHECK(sto_table_stats(t, 0)->distinct > 14000 && sto_table_stats(t, 0)->distinct < 16000);

    /* Serial load and a .tbl round trip give the same table. */
    o.threads = 1;
    st = sto_load_file(t1, tmp_path("lineitem.tbl"), &o, NULL);
    CHECK(!st);
    sto_status_free(st);
    CHECK(tables_equal(t, t1));
    sto_text_format f = sto_text_format_tbl();
    st = sto_write_file(t, tmp_path("lineitem2.tbl"), &f, &n);
    CHECK(!st && n == 60175);
    sto_status_free(st);
    snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", tmp_path("lineitem.tbl"),
             tmp_path("lineitem2.tbl"));
    CHECK(system(cmd) == 0); /* byte for byte what dbgen wrote */
    sto_table_free(t);
    sto_table_free(t1);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "%s/rackdb-loader-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_tbl_values);
    RUN(test_bad_input);
    RUN(test_error_after_released_pages);
    RUN(test_missing_and_unreadable);
    RUN(test_csv_quoting);
    RUN(test_pg_text);
    RUN(test_tbl_numeric_spellings);
    RUN(test_parallel_equals_serial);
    RUN(test_cancel);
    RUN(test_mutations);
    RUN(test_dbgen_lineitem);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return TEST_REPORT();
}
