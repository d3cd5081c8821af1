/* hpmoe device runtime: what a tile knows while it runs, and the signals it sends after.
 *
 * Generated tile code reads `ctx.rank` (the RANK of region expressions); puts hand one of the
 * entry's signals to the SHMEM put-with-signal; SendSignals() sends the rest once the tile's
 * writes are complete. */
#ifndef HPMOE_CONTEXT_H
#define HPMOE_CONTEXT_H

#include "config.h"
#include "counters.h"
#include "shmem.h"
#include "table.h"

namespace hpmoe {

class TileContext {
public:
    HPMOE_FN TileContext(const Table& table, const hpmoe_entry_record& entry, int64_t rank_, __gm__ int32_t* counters)
        : rank(rank_), table_(table), entry_(entry), counters_(counters) {}

    /* The rank running the tile (RANK in region expressions). */
    const int64_t rank;

    /* The family of local instance `instance` and its grid coordinates (Table::Decode). */
    HPMOE_FN uint32_t Decode(uint32_t instance, uint32_t coords[HPMOE_MAX_GRID_DIMS]) const {
        return table_.Decode(instance, coords);
    }

    /* The counter workspace of this rank (symmetric: the same address names the counter on
     * every PE). */
    HPMOE_FN __gm__ int32_t* Counter(uint32_t id) const { return counters_ + id; }

    /* For the tile's signalling put to `pe`: the first of the entry's signals to that PE, which
     * the put will carry, or null if there is none. At most one signal rides on a put. */
    HPMOE_FN __gm__ int32_t* TakeSignalFor(int64_t pe) {
        if (taken_ >= 0) {
            return nullptr;
        }
        for (uint32_t i = 0; i < entry_.signal_count; ++i) {
            const hpmoe_signal_record s = table_.Signal(entry_.first_signal + i);
            if (static_cast<int64_t>(s.rank) == pe) {
                taken_ = static_cast<int32_t>(i);
                return counters_ + s.counter;
            }
        }
        return nullptr;
    }

    /* Called by every put: the tile's puts must complete before its signals and before the core
     * moves on (a later tile of the core may overwrite a put's source). */
    HPMOE_FN void NotePut() { puts_ = true; }
    HPMOE_FN bool IssuedPuts() const { return puts_; }

    /* The entry named an instance this core cannot run: the table and the kernel disagree. */
    HPMOE_FN void MarkBadTile() { bad_ = true; }
    HPMOE_FN bool BadTile() const { return bad_; }

    /* After the tile: makes its writes complete, then adds 1 to each counter it signals (except
     * the one a put already carried). SHMEM atomics are asynchronous (they reach the target only
     * at the issuer's aclshmem_quiet), so the adds end with a quiet of their own. */
    HPMOE_FN void SendSignals() {
        if (puts_) {
            aclshmem_quiet();
        } else {
            AscendC::PipeBarrier<PIPE_ALL>();
        }
        bool added = false;
        for (uint32_t i = 0; i < entry_.signal_count; ++i) {
            if (static_cast<int32_t>(i) == taken_) {
                continue;
            }
            const hpmoe_signal_record s = table_.Signal(entry_.first_signal + i);
            AddOne(counters_, s.counter, static_cast<int32_t>(s.rank));
            added = true;
        }
        if (added) {
            aclshmem_quiet();
        }
    }

private:
    const Table& table_;
    hpmoe_entry_record entry_;
    __gm__ int32_t* counters_;
    int32_t taken_ = -1;
    bool puts_ = false;
    bool bad_ = false;
};

}  // namespace hpmoe

#endif /* HPMOE_CONTEXT_H */
