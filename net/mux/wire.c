/*
 * wire.c — encoding and checking the 32-byte frame header (see wire.h).
 *
 * Layout, little-endian: magic u32 | version u8 | type u8 | flags u8 | 0 u8 |
 * exchange u32 | sender u32 | len u32 | aux u64 | crc32c(bytes 0..27) u32.
 */
#include "net/mux/wire.h"
#include "storage/crc32c.h"
#include <string.h>

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

void mux_wire_encode(const mux_wire_hdr *h, uint8_t out[MUX_WIRE_HDR_SIZE])
{
    put32(out, MUX_WIRE_MAGIC);
    out[4] = MUX_WIRE_VERSION;
    out[5] = h->type;
    out[6] = h->flags;
    out[7] = 0;
    put32(out + 8, h->exchange);
    put32(out + 12, h->sender);
    put32(out + 16, h->len);
    put64(out + 20, h->aux);
    put32(out + 28, sto_crc32c(0, out, 28));
}

const char *mux_frame_type_name(int type)
{
    switch (type) {
#define MUX_FRAME_NAME(name, value)                                                                \
    case value:                                                                                    \
        return #name;
        MUX_FRAME_TYPE_LIST(MUX_FRAME_NAME)
#undef MUX_FRAME_NAME
    }
    return "unknown";
}

static int known_type(int type)
{
    switch (type) {
#define MUX_FRAME_KNOWN(name, value) case value:
        MUX_FRAME_TYPE_LIST(MUX_FRAME_KNOWN)
#undef MUX_FRAME_KNOWN
        return 1;
    }
    return 0;
}

sto_status mux_wire_decode(const uint8_t in[MUX_WIRE_HDR_SIZE], size_t max_data, mux_wire_hdr *h)
{
    uint32_t magic = get32(in);
    if (magic != MUX_WIRE_MAGIC)
        return sto_error(STO_PROTOCOL_VIOLATION, "bad magic 0x%08x in frame header", magic);
    /* The version is checked before the CRC: a peer of another version may
     * checksum differently, and "wrong version" is the useful message. */
    if (in[4] != MUX_WIRE_VERSION)
        return sto_error(STO_PROTOCOL_VIOLATION, "wrong protocol version %u (expected %u)", in[4],
                         MUX_WIRE_VERSION);
    uint32_t crc = get32(in + 28);
    if (crc != sto_crc32c(0, in, 28))
        return sto_error(STO_PROTOCOL_VIOLATION, "frame header checksum mismatch");
    if (!known_type(in[5]))
        return sto_error(STO_PROTOCOL_VIOLATION, "unknown frame type %u", in[5]);
    if (in[6] & ~MUX_FLAG_LAST || in[7] != 0)
        return sto_error(STO_PROTOCOL_VIOLATION, "unknown frame flags 0x%02x", in[6]);
    h->version = in[4];
    h->type = in[5];
    h->flags = in[6];
    h->exchange = get32(in + 8);
    h->sender = get32(in + 12);
    h->len = get32(in + 16);
    h->aux = get64(in + 20);
    size_t max = h->type == MUX_FRAME_DATA ? max_data : MUX_WIRE_CTRL_MAX;
    if (h->len > max)
        return sto_error(STO_PROTOCOL_VIOLATION, "%s frame of %u bytes exceeds the limit of %zu",
                         mux_frame_type_name(h->type), h->len, max);
    return STO_OK;
}
