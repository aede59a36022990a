/*
 * crc32c.h — CRC-32C (Castagnoli), the checksum of snapshots and messages.
 *
 * Snapshot files checksum every column chunk with it, and the network
 * shuffle reuses it for message payloads. It runs on the SSE4.2 crc32
 * instruction, eight bytes per step.
 */
#ifndef RACKDB_STORAGE_CRC32C_H
#define RACKDB_STORAGE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a checksum: start with crc = 0; sto_crc32c(0, "123456789", 9)
 * is 0xE3069283. */
uint32_t sto_crc32c(uint32_t crc, const void *p, size_t n);

#endif
