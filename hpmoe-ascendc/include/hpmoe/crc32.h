/* hpmoe device runtime: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's crc32()),
 * the checksum of the schedule table and the flag plan. Bitwise: small, and only run when
 * HPMOE_VERIFY_TABLE_CRC asks for it. */
#ifndef HPMOE_CRC32_H
#define HPMOE_CRC32_H

#include "config.h"

namespace hpmoe {

/* CRC-32 of bytes [0, n) at p. */
HPMOE_FN uint32_t Crc32(__gm__ const uint8_t* p, uint32_t n) {
    uint32_t crc = 0xFFFFFFFFu;
    for (uint32_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (uint32_t bit = 0; bit < 8; ++bit) {
            const uint32_t mask = 0u - (crc & 1u);
            crc = (crc >> 1) ^ (0xEDB88320u & mask);
        }
    }
    return ~crc;
}

}  // namespace hpmoe

#endif /* HPMOE_CRC32_H */
