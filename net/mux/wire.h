/*
 * wire.h — the frame format every transport carries between servers.
 *
 * Each frame is a fixed 32-byte header followed by `len` payload bytes. The
 * header names the frame type (data, sync, credit, hello, abort, heartbeat),
 * the exchange it belongs to, the sending rank, the last-message flag and a
 * type-specific 64-bit word (credits granted, cluster id, phase round). The
 * header carries its own CRC-32C so a stray byte stream (a port scanner, a
 * peer of another version) is recognized on its first 32 bytes and the
 * connection closed instead of being trusted with a length that could be
 * anything. Payloads are not checksummed here; TCP and RC queue pairs
 * already protect them.
 *
 * Data frames travel in pool messages that keep 32 bytes of room in front of
 * the payload, so header and payload go out as one contiguous buffer (one
 * write, or one scatter-gather entry for verbs).
 */
#ifndef RACKDB_NET_MUX_WIRE_H
#define RACKDB_NET_MUX_WIRE_H

#include "storage/status.h"
#include <stddef.h>
#include <stdint.h>

#define MUX_WIRE_MAGIC    0x58424452u /* "RDBX" as little-endian bytes */
#define MUX_WIRE_VERSION  1
#define MUX_WIRE_HDR_SIZE 32
#define MUX_WIRE_CTRL_MAX 4096 /* largest payload of a control frame */
#define MUX_FLAG_LAST     0x01u

/* Frame types, named once: the enum, the names and the decoder's checks. */
#define MUX_FRAME_TYPE_LIST(X)                                                                     \
    X(DATA, 1)      /* a message of an exchange; consumes one credit */                            \
    X(SYNC, 2)      /* end of this sender's turn in a round-robin phase */                         \
    X(CREDIT, 3)    /* aux = number of receive buffers granted to the sender */                    \
    X(HELLO, 4)     /* aux = cluster id, payload = cluster size; first frame on a connection */    \
    X(ABORT, 5)     /* payload = reason; the sender gives up the whole query */                    \
    X(HEARTBEAT, 6) /* nothing else was sent for a while; proves the sender alive */               \
    X(BYE, 7)       /* orderly shutdown: the sender sends nothing more, then closes */

typedef enum {
#define MUX_FRAME_ENUM(name, value) MUX_FRAME_##name = value,
    MUX_FRAME_TYPE_LIST(MUX_FRAME_ENUM)
#undef MUX_FRAME_ENUM
} mux_frame_type;

typedef struct mux_wire_hdr {
    uint8_t type;      /* mux_frame_type */
    uint8_t flags;     /* MUX_FLAG_* */
    uint8_t version;   /* filled in by decode; encode always writes MUX_WIRE_VERSION */
    uint32_t exchange; /* exchange id (data frames) */
    uint32_t sender;   /* rank of the sending server */
    uint32_t len;      /* payload bytes after the header */
    uint64_t aux;      /* type-specific word */
} mux_wire_hdr;

/* Writes the 32-byte header, CRC included. */
void mux_wire_encode(const mux_wire_hdr *h, uint8_t out[MUX_WIRE_HDR_SIZE]);

/* Checks magic, version, CRC, type, flags and the payload length (at most
 * max_data for data frames, MUX_WIRE_CTRL_MAX for the others) and fills *h.
 * Errors are PROTOCOL_VIOLATION with a message saying what was wrong. */
sto_status mux_wire_decode(const uint8_t in[MUX_WIRE_HDR_SIZE], size_t max_data, mux_wire_hdr *h);

/* "data", "sync", ...; "unknown" for anything else. */
const char *mux_frame_type_name(int type);

#endif
