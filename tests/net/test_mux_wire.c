/*
 * test_mux_wire.c — frame header encoding and the decoder's rejections.
 */
#include "net/mux/wire.h"
#include "storage/crc32c.h"
#include "test.h"

static void round_trip(void)
{
    mux_wire_hdr h = {.type = MUX_FRAME_DATA,
                      .flags = MUX_FLAG_LAST,
                      .exchange = 0xdeadbeef,
                      .sender = 3,
                      .len = 4096,
                      .aux = 0x0123456789abcdefull};
    uint8_t b[MUX_WIRE_HDR_SIZE];
    mux_wire_encode(&h, b);
    mux_wire_hdr d;
    sto_status st = mux_wire_decode(b, 1 << 20, &d);
    REQUIRE(st == NULL);
    CHECK_EQ_INT(d.type, MUX_FRAME_DATA);
    CHECK_EQ_INT(d.flags, MUX_FLAG_LAST);
    CHECK_EQ_INT(d.version, MUX_WIRE_VERSION);
    CHECK(d.exchange == 0xdeadbeef);
    CHECK_EQ_INT(d.sender, 3);
    CHECK_EQ_INT(d.len, 4096);
    CHECK(d.aux == 0x0123456789abcdefull);
    /* Little-endian layout: magic "RDBX" first, crc last. */
    CHECK(b[0] == 'R' && b[1] == 'D' && b[2] == 'B' && b[3] == 'X');
    CHECK_EQ_INT(b[4], MUX_WIRE_VERSION);
    uint32_t crc = sto_crc32c(0, b, 28);
    CHECK(b[28] == (crc & 0xff) && b[31] == crc >> 24);
}

static void every_type_round_trips(void)
{
    int types[] = {MUX_FRAME_DATA,  MUX_FRAME_SYNC,      MUX_FRAME_CREDIT, MUX_FRAME_HELLO,
                   MUX_FRAME_ABORT, MUX_FRAME_HEARTBEAT, MUX_FRAME_BYE};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        mux_wire_hdr h = {.type = (uint8_t)types[i], .sender = 1, .len = 16}, d;
        uint8_t b[MUX_WIRE_HDR_SIZE];
        mux_wire_encode(&h, b);
        sto_status st = mux_wire_decode(b, 1024, &d);
        CHECK(st == NULL);
        sto_status_free(st);
        CHECK_EQ_INT(d.type, types[i]);
    }
    CHECK_STREQ(mux_frame_type_name(MUX_FRAME_CREDIT), "CREDIT");
    CHECK_STREQ(mux_frame_type_name(99), "unknown");
}

/* Decodes b and expects a PROTOCOL_VIOLATION whose message contains `what`. */
static void expect_reject(const uint8_t *b, size_t max, const char *what)
{
    mux_wire_hdr d;
    sto_status st = mux_wire_decode(b, max, &d);
    CHECK(st != NULL);
    if (!st) return;
    CHECK_STREQ(st->sqlstate, STO_PROTOCOL_VIOLATION);
    if (!strstr(st->message, what)) fprintf(stderr, "message: %s (want %s)\n", st->message, what);
    CHECK(strstr(st->message, what) != NULL);
    sto_status_free(st);
}

static void rejects(void)
{
    mux_wire_hdr h = {.type = MUX_FRAME_DATA, .exchange = 7, .sender = 1, .len = 100};
    uint8_t good[MUX_WIRE_HDR_SIZE], b[MUX_WIRE_HDR_SIZE];
    mux_wire_encode(&h, good);

    memcpy(b, good, sizeof b);
    b[0] = 'G';
    expect_reject(b, 1024, "bad magic");

    memcpy(b, good, sizeof b);
    b[4] = 2; /* a newer version */
    expect_reject(b, 1024, "wrong protocol version 2");

    memcpy(b, good, sizeof b);
    b[9] ^= 0x10; /* exchange id bit flip: only the crc notices */
    expect_reject(b, 1024, "checksum");

    memcpy(b, good, sizeof b);
    b[29] ^= 1;
    expect_reject(b, 1024, "checksum");

    expect_reject(good, 99, "exceeds the limit of 99");

    mux_wire_hdr bad_type = {.type = 42, .len = 0};
    mux_wire_encode(&bad_type, b);
    expect_reject(b, 1024, "unknown frame type 42");

    mux_wire_hdr bad_flags = {.type = MUX_FRAME_DATA, .flags = 0x80};
    mux_wire_encode(&bad_flags, b);
    expect_reject(b, 1024, "flags");

    mux_wire_hdr big_ctrl = {.type = MUX_FRAME_ABORT, .len = MUX_WIRE_CTRL_MAX + 1};
    mux_wire_encode(&big_ctrl, b);
    expect_reject(b, 1u << 30, "exceeds");

    /* ASCII garbage, as a stray client would send. */
    expect_reject((const uint8_t *)"GET / HTTP/1.1\r\nHost: x\r\n\r\n.....", 1024, "bad magic");
}

int main(void)
{
    RUN(round_trip);
    RUN(every_type_round_trips);
    RUN(rejects);
    return TEST_REPORT();
}
