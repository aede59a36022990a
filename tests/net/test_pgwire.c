/*
 * test_pgwire.c — the protocol codec without sockets: framing limits,
 * decoders on valid and malformed bodies, message encoding, binary values
 * both ways, $n substitution and SCRAM-SHA-256 against its own client side.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "net/pgwire/params.h"
#include "net/pgwire/protocol.h"
#include "net/pgwire/scram.h"
#include "net/pgwire/values.h"
#include "test.h"

static void test_frame(void)
{
    size_t total = 0;
    sto_status st = NULL;
    CHECK_EQ_INT(pgw_frame("Q\0\0", 3, 100, &total, &st), PGW_FRAME_NEED_MORE);
    CHECK_EQ_INT(pgw_frame("Q\0\0\0\x06"
                           "a",
                           6, 100, &total, &st),
                 PGW_FRAME_NEED_MORE);
    CHECK_EQ_INT(pgw_frame("Q\0\0\0\x06"
                           "a\0",
                           7, 100, &total, &st),
                 PGW_FRAME_OK);
    CHECK_EQ_INT(total, 7);
    CHECK_EQ_INT(pgw_frame("Q\0\0\0\x03", 5, 100, &total, &st), PGW_FRAME_BAD);
    CHECK_STREQ(st->sqlstate, "08P01");
    sto_status_free(st);
    st = NULL;
    CHECK_EQ_INT(pgw_frame("Q\0\0\x10\0", 5, 100, &total, &st), PGW_FRAME_BAD);
    sto_status_free(st);
    st = NULL;
    CHECK_EQ_INT(pgw_frame_startup("\0\0\0\x04", 4, &total, &st), PGW_FRAME_BAD);
    sto_status_free(st);
    st = NULL;
    CHECK_EQ_INT(pgw_frame_startup("\0\x01\0\0", 4, &total, &st), PGW_FRAME_BAD);
    sto_status_free(st);
}

static void test_startup(void)
{
    pgw_buf b = {0};
    size_t m = pgw_msg_begin(&b, 0);
    pgw_put_i32(&b, (int32_t)PGW_PROTOCOL_V3);
    pgw_put_cstr(&b, "user");
    pgw_put_cstr(&b, "ann");
    pgw_put_cstr(&b, "database");
    pgw_put_cstr(&b, "tpch");
    pgw_put_u8(&b, 0);
    pgw_msg_end(&b, m);
    pgw_startup s;
    REQUIRE(pgw_read_startup(b.data, b.len, &s) == NULL);
    CHECK_EQ_INT(s.code, PGW_PROTOCOL_V3);
    CHECK_STREQ(pgw_startup_param(&s, "user"), "ann");
    CHECK_STREQ(pgw_startup_param(&s, "database"), "tpch");
    CHECK(pgw_startup_param(&s, "options") == NULL);
    /* without the final terminator */
    sto_status st = pgw_read_startup(b.data, b.len - 1, &s);
    CHECK(st != NULL);
    sto_status_free(st);
    /* cancel request */
    pgw_buf_clear(&b);
    m = pgw_msg_begin(&b, 0);
    pgw_put_i32(&b, (int32_t)PGW_CANCEL_CODE);
    pgw_put_i32(&b, 7);
    pgw_put_i32(&b, -5);
    pgw_msg_end(&b, m);
    REQUIRE(pgw_read_startup(b.data, b.len, &s) == NULL);
    CHECK_EQ_INT(s.code, PGW_CANCEL_CODE);
    CHECK_EQ_INT(s.cancel_pid, 7);
    CHECK_EQ_INT(s.cancel_key, -5);
    /* protocol 2 */
    pgw_buf_clear(&b);
    m = pgw_msg_begin(&b, 0);
    pgw_put_i32(&b, 2 << 16);
    pgw_put_u8(&b, 0);
    pgw_msg_end(&b, m);
    st = pgw_read_startup(b.data, b.len, &s);
    CHECK(st && !strcmp(st->sqlstate, "0A000"));
    sto_status_free(st);
    pgw_buf_free(&b);
}

static void test_bind(void)
{
    pgw_buf b = {0};
    pgw_put_cstr(&b, "portal");
    pgw_put_cstr(&b, "stmt");
    pgw_put_i16(&b, 1), pgw_put_i16(&b, 1); /* all binary */
    pgw_put_i16(&b, 2);
    pgw_put_i32(&b, 4), pgw_buf_append(&b, "\0\0\0\x2a", 4);
    pgw_put_i32(&b, -1);
    pgw_put_i16(&b, 0);
    pgw_bind_msg m;
    REQUIRE(pgw_read_bind(b.data, b.len, &m) == NULL);
    CHECK_STREQ(m.portal, "portal");
    CHECK_STREQ(m.statement, "stmt");
    CHECK_EQ_INT(m.nparams, 2);
    CHECK_EQ_INT(pgw_format_of(m.nformats, m.formats, 1), 1);
    CHECK_EQ_INT(m.lengths[0], 4);
    CHECK(m.values[1] == NULL);
    pgw_bind_msg_free(&m);
    /* every truncation of it is an error, never a crash */
    for (size_t len = 0; len < b.len; len++) {
        sto_status st = pgw_read_bind(b.data, len, &m);
        CHECK(st != NULL);
        sto_status_free(st);
    }
    /* an absurd parameter count */
    pgw_buf_clear(&b);
    pgw_put_cstr(&b, "");
    pgw_put_cstr(&b, "");
    pgw_put_i16(&b, 0);
    pgw_put_i16(&b, 30000);
    sto_status st = pgw_read_bind(b.data, b.len, &m);
    CHECK(st && !strcmp(st->sqlstate, "08P01"));
    sto_status_free(st);
    pgw_buf_free(&b);
}

static void test_encode(void)
{
    pgw_buf b = {0};
    pgw_put_command_complete(&b, "SELECT 3");
    CHECK_EQ_INT(b.len, 1 + 4 + 9);
    CHECK(memcmp(b.data, "C\0\0\0\x0dSELECT 3\0", 14) == 0);
    pgw_buf_clear(&b);
    pgw_put_error(&b, false, "ERROR", "42P01", "no", 15);
    const char want[] = "E\0\0\0\x22SERROR\0VERROR\0C42P01\0Mno\0P15\0";
    CHECK_EQ_INT(b.len, sizeof(want));
    CHECK(memcmp(b.data, want, sizeof(want)) == 0);
    pgw_buf_clear(&b);
    pgw_put_ready(&b, 'T');
    CHECK(memcmp(b.data, "Z\0\0\0\x05T", 6) == 0);
    pgw_buf_free(&b);
}

/* The COPY messages: exact bytes out, and the decoders accept what the
 * encoders wrote and reject malformed bodies. */
static void test_copy(void)
{
    pgw_buf b = {0};
    pgw_put_copy_in_response(&b, 2);
    CHECK_EQ_INT(b.len, 1 + 4 + 1 + 2 + 2 * 2);
    CHECK(memcmp(b.data, "G\0\0\0\x0b\0\0\x02\0\0\0\0", 12) == 0);
    int format = -1;
    uint16_t ncols = 0;
    sto_status st = pgw_read_copy_response(b.data + 5, b.len - 5, &format, &ncols);
    CHECK(st == NULL);
    CHECK_EQ_INT(format, 0);
    CHECK_EQ_INT(ncols, 2);
    pgw_buf_clear(&b);
    pgw_put_copy_out_response(&b, 0);
    CHECK(memcmp(b.data, "H\0\0\0\x07\0\0\0", 8) == 0);
    CHECK_EQ_INT(b.len, 8);
    /* a per-column format that differs from the overall one, a cut body */
    st = pgw_read_copy_response("\0\0\x01\0\x01", 5, &format, &ncols);
    CHECK(st && strcmp(st->sqlstate, "08P01") == 0);
    sto_status_free(st);
    st = pgw_read_copy_response("\0\0\x02\0\0", 5, &format, &ncols);
    CHECK(st != NULL);
    sto_status_free(st);
    pgw_buf_clear(&b);
    pgw_put_copy_data(&b, "1|a\n2|", 6);
    CHECK_EQ_INT(b.len, 11);
    CHECK(memcmp(b.data,
                 "d\0\0\0\x0a"
                 "1|a\n2|",
                 11) == 0);
    pgw_buf_clear(&b);
    pgw_put_copy_done(&b);
    CHECK(b.len == 5 && memcmp(b.data, "c\0\0\0\x04", 5) == 0);
    CHECK(pgw_read_copy_done(b.data + 5, 0) == NULL);
    st = pgw_read_copy_done("x", 1);
    CHECK(st != NULL);
    sto_status_free(st);
    pgw_buf_clear(&b);
    pgw_put_copy_fail(&b, "user quit");
    CHECK(memcmp(b.data, "f\0\0\0\x0euser quit\0", 15) == 0);
    const char *msg = NULL;
    CHECK(pgw_read_copy_fail(b.data + 5, b.len - 5, &msg) == NULL);
    CHECK_STREQ(msg, "user quit");
    st = pgw_read_copy_fail("no nul", 6, &msg);
    CHECK(st != NULL);
    sto_status_free(st);
    pgw_buf_free(&b);
}

/* text -> binary -> text gives the same text. */
static void roundtrip(uint32_t oid, const char *text, const char *expect)
{
    pgw_buf bin = {0}, back = {0};
    sto_status st = pgw_text_to_binary(oid, text, &bin);
    CHECK(st == NULL);
    sto_status_free(st);
    st = pgw_binary_to_text(oid, bin.data, bin.len, &back);
    CHECK(st == NULL);
    sto_status_free(st);
    pgw_buf_append(&back, "", 1);
    CHECK_STREQ(back.data, expect ? expect : text);
    pgw_buf_free(&bin);
    pgw_buf_free(&back);
}

static void test_values(void)
{
    roundtrip(PGW_OID_INT4, "-2147483648", NULL);
    roundtrip(PGW_OID_INT8, "9223372036854775807", NULL);
    roundtrip(PGW_OID_INT2, "-7", NULL);
    roundtrip(PGW_OID_BOOL, "t", "true");
    roundtrip(PGW_OID_DATE, "1998-09-02", NULL);
    roundtrip(PGW_OID_DATE, "1970-01-01", NULL);
    roundtrip(PGW_OID_FLOAT8, "0.1", NULL);
    roundtrip(PGW_OID_NUMERIC, "0.00", NULL);
    roundtrip(PGW_OID_NUMERIC, "12.50", NULL);
    roundtrip(PGW_OID_NUMERIC, "-123456789.0001", NULL);
    roundtrip(PGW_OID_NUMERIC, "10000", NULL);
    roundtrip(PGW_OID_NUMERIC, "0.00012", NULL);
    roundtrip(PGW_OID_TEXT, "it's", NULL);
    /* numeric 12.50 on the wire: ndigits 2, weight 0, sign +, dscale 2, 12, 5000 */
    pgw_buf b = {0};
    CHECK(pgw_text_to_binary(PGW_OID_NUMERIC, "12.50", &b) == NULL);
    CHECK(b.len == 12 && !memcmp(b.data, "\0\x02\0\0\0\0\0\x02\0\x0c\x13\x88", 12));
    pgw_buf_clear(&b);
    /* date 2000-01-01 is 0 */
    CHECK(pgw_text_to_binary(PGW_OID_DATE, "2000-01-01", &b) == NULL);
    CHECK(b.len == 4 && !memcmp(b.data, "\0\0\0\0", 4));
    pgw_buf_clear(&b);
    sto_status st = pgw_binary_to_text(PGW_OID_INT4, "\0\0\0", 3, &b);
    CHECK(st != NULL);
    sto_status_free(st);
    st = pgw_binary_to_text(PGW_OID_NUMERIC, "\0\x01\0\0\0\0\0\0\x27\x10", 10, &b); /* 10000 */
    CHECK(st != NULL);
    sto_status_free(st);
    st = pgw_text_to_binary(PGW_OID_INT4, "12x", &b);
    CHECK(st && !strcmp(st->sqlstate, "22P02"));
    sto_status_free(st);
    pgw_buf_free(&b);
}

static void test_params(void)
{
    CHECK_EQ_INT(pgw_param_max("SELECT $1, '$5', \"$7\", $2 -- $9\n/* $8 /* $9 */ */"), 2);
    CHECK_EQ_INT(pgw_param_max("SELECT a$1 FROM t"), 0);
    pgw_param p[] = {{"it's", 0},
                     {"-5", PGW_OID_INT4},
                     {NULL, PGW_OID_TEXT},
                     {"1998-09-02", PGW_OID_DATE},
                     {"yes", PGW_OID_BOOL}};
    char *out = NULL;
    REQUIRE(pgw_substitute("SELECT $1, 3-$2, $3, $4, $5, '$1'", 5, p, &out) == NULL);
    CHECK_STREQ(out, "SELECT  'it''s' , 3- (-5) ,  NULL ,  DATE '1998-09-02' ,  TRUE , '$1'");
    free(out);
    sto_status st = pgw_substitute("SELECT $6", 5, p, &out);
    CHECK(st && !strcmp(st->sqlstate, "08P01"));
    sto_status_free(st);
    pgw_param bad[] = {{"1; DROP TABLE t", PGW_OID_INT4}};
    st = pgw_substitute("SELECT $1", 1, bad, &out);
    CHECK(st && !strcmp(st->sqlstate, "22P02"));
    sto_status_free(st);
    /* a backslash is an ordinary character in a standard string */
    pgw_param bs[] = {{"a\\'b", 0}};
    REQUIRE(pgw_substitute("$1", 1, bs, &out) == NULL);
    CHECK_STREQ(out, " 'a\\''b' ");
    free(out);
}

static void test_scram(void)
{
    pgw_scram s;
    REQUIRE(pgw_scram_begin(&s, "ann", "pencil") == NULL);
    const char *first = "n,,n=ann,r=rOprNGfwEbeRWgbNEkqO";
    pgw_buf out = {0};
    REQUIRE(pgw_scram_server_first(&s, first, strlen(first), &out) == NULL);
    pgw_buf_append(&out, "", 1);
    CHECK(strncmp(out.data, "r=rOprNGfwEbeRWgbNEkqO", 22) == 0);
    CHECK(strstr(out.data, ",i=4096") != NULL);
    char *final = pgw_scram_client_final(first + 3, out.data, "pencil");
    REQUIRE(final != NULL);
    pgw_buf v = {0};
    CHECK(pgw_scram_server_final(&s, final, strlen(final), &v) == NULL);
    CHECK(v.len > 2 && !memcmp(v.data, "v=", 2));
    free(final);
    pgw_scram_end(&s);
    pgw_buf_free(&v);

    /* a wrong password, and an unknown user: the same error */
    const char *users[] = {"ann", "nobody"};
    const char *passwords[] = {"pencil", NULL};
    for (int i = 0; i < 2; i++) {
        REQUIRE(pgw_scram_begin(&s, users[i], passwords[i]) == NULL);
        pgw_buf_clear(&out);
        REQUIRE(pgw_scram_server_first(&s, first, strlen(first), &out) == NULL);
        pgw_buf_append(&out, "", 1);
        final = pgw_scram_client_final(first + 3, out.data, "eraser");
        REQUIRE(final != NULL);
        sto_status st = pgw_scram_server_final(&s, final, strlen(final), &v);
        CHECK(st && !strcmp(st->sqlstate, "28P01"));
        if (st) {
            char want[128];
            snprintf(want, sizeof(want), "password authentication failed for user \"%s\"",
                     users[i]);
            CHECK_STREQ(st->message, want);
        }
        sto_status_free(st);
        free(final);
        pgw_scram_end(&s);
    }
    /* channel binding requested, and a malformed message */
    REQUIRE(pgw_scram_begin(&s, "ann", "pencil") == NULL);
    sto_status st = pgw_scram_server_first(&s, "p=tls-server-end-point,,n=,r=x", 30, &out);
    CHECK(st != NULL);
    sto_status_free(st);
    st = pgw_scram_server_first(&s, "n,,n=ann", 8, &out);
    CHECK(st != NULL);
    sto_status_free(st);
    pgw_scram_end(&s);
    pgw_buf_free(&out);
}

int main(void)
{
    RUN(test_frame);
    RUN(test_startup);
    RUN(test_bind);
    RUN(test_encode);
    RUN(test_copy);
    RUN(test_values);
    RUN(test_params);
    RUN(test_scram);
    return TEST_REPORT();
}
