/* hpmoe device runtime: reading the schedule table (NAME_schedule.bin) in global memory.
 *
 * The record layouts come from the generated NAME_schedule.h (its HPMOE_TABLE_LAYOUT_V1 part,
 * written by hpmoe-core's ScheduleTable::c_header), which must be included before this header:
 * the layout lives in one place. Open() checks the blob against the values the kernel was
 * generated with before any core trusts an index read from it. */
#ifndef HPMOE_TABLE_H
#define HPMOE_TABLE_H

#include "abi.h"
#include "config.h"
#include "crc32.h"

#ifndef HPMOE_TABLE_LAYOUT_V1
#error "include the generated NAME_schedule.h (the schedule table layout) before hpmoe/table.h"
#endif

namespace hpmoe {

/* What the kernel was generated for: the table's header fields and its checksum field, in the order
 * of the generated constants (hpmoe_core::table::CHECKED_CONSTANTS). */
struct TableExpect {
    uint32_t ranks;
    uint32_t cores_per_rank;
    uint32_t aic_per_rank;
    uint32_t aiv_per_aic;
    uint32_t families;
    uint32_t instances_per_rank;
    uint32_t entry_count;
    uint32_t signal_count;
    uint32_t total_bytes;
    uint32_t checksum;
};

/* A validated view of the schedule table. */
class Table {
public:
    /* Checks magic, format version, size, every count against `expect`, the checksum field
     * against the generated one and, with verify_crc, the CRC-32 of the bytes. Returns
     * HPMOE_TABLE_OK or the HPMOE_TABLE_* code of the first failed check. */
    HPMOE_FN uint32_t Open(__gm__ const uint8_t* blob, const TableExpect& expect, bool verify_crc) {
        base_ = blob;
        __gm__ const hpmoe_table_header* h = reinterpret_cast<__gm__ const hpmoe_table_header*>(blob);
        const char magic[9] = HPMOE_TABLE_MAGIC;
        for (uint32_t i = 0; i < 8; ++i) {
            if (h->magic[i] != static_cast<uint8_t>(magic[i])) {
                return HPMOE_TABLE_BAD_MAGIC;
            }
        }
        if (h->version != HPMOE_TABLE_FORMAT_VERSION) {
            return HPMOE_TABLE_BAD_VERSION;
        }
        if (h->total_bytes != expect.total_bytes) {
            return HPMOE_TABLE_WRONG_SIZE;
        }
        if (h->ranks != expect.ranks || h->cores_per_rank != expect.cores_per_rank ||
            h->aic_per_rank != expect.aic_per_rank || h->aiv_per_aic != expect.aiv_per_aic ||
            h->families != expect.families || h->instances_per_rank != expect.instances_per_rank ||
            h->entry_count != expect.entry_count || h->signal_count != expect.signal_count) {
            return HPMOE_TABLE_WRONG_SHAPE;
        }
        if (h->checksum != expect.checksum) {
            return HPMOE_TABLE_WRONG_CHECKSUM;
        }
        if (verify_crc && Crc32(blob + HPMOE_TABLE_CHECKSUM_START, h->total_bytes - HPMOE_TABLE_CHECKSUM_START) !=
                              h->checksum) {
            return HPMOE_TABLE_CORRUPT;
        }
        ranks_ = h->ranks;
        cores_per_rank_ = h->cores_per_rank;
        aic_per_rank_ = h->aic_per_rank;
        families_count_ = h->families;
        families_ = reinterpret_cast<__gm__ const hpmoe_family_record*>(blob + h->families_section.offset);
        cores_ = reinterpret_cast<__gm__ const hpmoe_core_record*>(blob + h->cores_section.offset);
        counters_ = reinterpret_cast<__gm__ const uint32_t*>(blob + h->counters_section.offset);
        entries_ = reinterpret_cast<__gm__ const hpmoe_entry_record*>(blob + h->entries_section.offset);
        signals_ = reinterpret_cast<__gm__ const hpmoe_signal_record*>(blob + h->signals_section.offset);
        return HPMOE_TABLE_OK;
    }

    HPMOE_FN uint32_t Ranks() const { return ranks_; }
    HPMOE_FN uint32_t CoresPerRank() const { return cores_per_rank_; }
    HPMOE_FN uint32_t AicPerRank() const { return aic_per_rank_; }
    /* Counters rank `rank` uses. */
    HPMOE_FN uint32_t Counters(uint32_t rank) const { return counters_[rank]; }
    HPMOE_FN hpmoe_core_record Core(uint32_t global_core) const { return cores_[global_core]; }
    HPMOE_FN hpmoe_entry_record Entry(uint32_t index) const { return entries_[index]; }
    HPMOE_FN hpmoe_signal_record Signal(uint32_t index) const { return signals_[index]; }

    /* The family of local instance `instance` and its grid coordinates (row-major over the
     * family's extents). Returns the family index, or the family count if no family holds it. */
    HPMOE_FN uint32_t Decode(uint32_t instance, uint32_t coords[HPMOE_MAX_GRID_DIMS]) const {
        for (uint32_t f = 0; f < families_count_; ++f) {
            const hpmoe_family_record fam = families_[f];
            if (instance >= fam.first_instance && instance - fam.first_instance < fam.instance_count) {
                uint32_t rest = instance - fam.first_instance;
                for (uint32_t d = HPMOE_MAX_GRID_DIMS; d > 0; --d) {
                    const uint32_t dim = d - 1;
                    if (dim < fam.dims) {
                        coords[dim] = rest % fam.extents[dim];
                        rest /= fam.extents[dim];
                    } else {
                        coords[dim] = 0;
                    }
                }
                return f;
            }
        }
        return families_count_;
    }

private:
    __gm__ const uint8_t* base_ = nullptr;
    uint32_t ranks_ = 0;
    uint32_t cores_per_rank_ = 0;
    uint32_t aic_per_rank_ = 0;
    uint32_t families_count_ = 0;
    __gm__ const hpmoe_family_record* families_ = nullptr;
    __gm__ const hpmoe_core_record* cores_ = nullptr;
    __gm__ const uint32_t* counters_ = nullptr;
    __gm__ const hpmoe_entry_record* entries_ = nullptr;
    __gm__ const hpmoe_signal_record* signals_ = nullptr;
};

}  // namespace hpmoe

#endif /* HPMOE_TABLE_H */
