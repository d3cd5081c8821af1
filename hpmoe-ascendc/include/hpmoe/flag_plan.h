/* hpmoe device runtime: reading the flag plan (NAME_flags.bin, layout in abi.h): which entries
 * set or wait for the hardware cross-core flag between an AIC and its own two AIVs. */
#ifndef HPMOE_FLAG_PLAN_H
#define HPMOE_FLAG_PLAN_H

#include "abi.h"
#include "config.h"
#include "crc32.h"

namespace hpmoe {

/* What the kernel was generated for. */
struct FlagPlanExpect {
    uint32_t total_bytes;
    uint32_t checksum;
    uint32_t cores;
    uint32_t entries;
    uint32_t table_checksum;
};

class FlagPlan {
public:
    /* Checks the blob like Table::Open; returns HPMOE_TABLE_OK or an HPMOE_FLAGS_* code. */
    HPMOE_FN uint32_t Open(__gm__ const uint8_t* blob, const FlagPlanExpect& expect, bool verify_crc) {
        __gm__ const hpmoe_flags_header* h = reinterpret_cast<__gm__ const hpmoe_flags_header*>(blob);
        const char magic[9] = HPMOE_FLAGS_MAGIC;
        for (uint32_t i = 0; i < 8; ++i) {
            if (h->magic[i] != static_cast<uint8_t>(magic[i])) {
                return HPMOE_FLAGS_BAD_MAGIC;
            }
        }
        if (h->version != HPMOE_FLAGS_FORMAT_VERSION) {
            return HPMOE_FLAGS_BAD_VERSION;
        }
        if (h->total_bytes != expect.total_bytes || h->cores != expect.cores || h->entries != expect.entries) {
            return HPMOE_FLAGS_WRONG_SIZE;
        }
        if (h->table_checksum != expect.table_checksum) {
            return HPMOE_FLAGS_WRONG_TABLE;
        }
        if (h->checksum != expect.checksum) {
            return HPMOE_FLAGS_WRONG_CHECKSUM;
        }
        if (verify_crc && Crc32(blob + 16, h->total_bytes - 16) != h->checksum) {
            return HPMOE_FLAGS_CORRUPT;
        }
        flag_id_ = h->flag_id;
        totals_ = reinterpret_cast<__gm__ const uint32_t*>(blob + HPMOE_FLAGS_HEADER_BYTES);
        ops_ = blob + HPMOE_FLAGS_HEADER_BYTES + 4u * h->cores;
        return HPMOE_TABLE_OK;
    }

    /* The hardware flag id in use, or HPMOE_NO_FLAG. */
    HPMOE_FN uint32_t FlagId() const { return flag_id_; }
    /* Flag sets (AIC) or waits (AIV) of a global core's whole list. */
    HPMOE_FN uint32_t Total(uint32_t global_core) const { return totals_[global_core]; }
    /* An entry's flag operation: AIC 1 = set after the tile; AIV n = n waits before it. */
    HPMOE_FN uint32_t Op(uint32_t entry_index) const { return ops_[entry_index]; }

private:
    uint32_t flag_id_ = HPMOE_NO_FLAG;
    __gm__ const uint32_t* totals_ = nullptr;
    __gm__ const uint8_t* ops_ = nullptr;
};

}  // namespace hpmoe

#endif /* HPMOE_FLAG_PLAN_H */
