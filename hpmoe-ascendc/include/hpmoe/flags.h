/* hpmoe device runtime: the hardware cross-core flag between an AIC and its own two AIVs.
 *
 * Used only where the emitter proved it sound (hpmoe_ascendc::flags): the AIC sets the flag in
 * mode 2 after a tile (bumping the flag counter of both its AIVs), and each AIV does exactly one
 * wait per set, in order: a real wait before the tile that consumes the AIC's result, or a
 * "drain" wait merged into its next real wait or done at the end of its list. The plan keeps
 * every flag counter within 15 by construction; as a second line of defence the AIC also checks,
 * before each set, that neither AIV has 15 sets pending (from the flag_consumed counts the AIVs
 * publish in the diagnostics area), with a bounded wait.
 *
 * Flag waits cannot time out in hardware. So that a failure never leaves an AIV blocked, a core
 * that stops early still finishes its side of the protocol: an AIV drains its remaining waits,
 * and an AIC performs its remaining sets, paced by the AIVs' published progress so no counter
 * ever passes 15. */
#ifndef HPMOE_FLAGS_H
#define HPMOE_FLAGS_H

#include "abi.h"
#include "config.h"
#include "counters.h"
#include "diag.h"

namespace hpmoe {

/* No hardware flag is used by this kernel. */
constexpr uint16_t kNoFlag = 0xFFFFu;
/* A flag counter holds 0..15; one more set without a wait is an error that can freeze the device. */
constexpr uint32_t kFlagMaxPending = 15u;

/* A flag id the kernel may use: 0..15, and none the libraries it runs with reserve. */
template <uint16_t Id>
struct FlagId {
    static_assert(Id <= 15, "hardware cross-core flag ids are 0..15");
    static_assert(Id > 7, "flag ids 0..7 are reserved by the Matmul high-level API");
    static_assert(Id < 8 || Id > 10, "flag ids 8..10 are reserved by catlass");
    static_assert(Id < 11 || Id > 14, "flag ids 11..14 are reserved by SyncAll");
    static constexpr uint16_t value = Id;
};

/* AIC side: sets the flag for its own two AIVs (local cores `aiv0` and `aiv0 + 1`). */
template <uint16_t Id>
class FlagProducer {
public:
    HPMOE_FN FlagProducer(Diag& diag, uint32_t aiv0, uint32_t total) : diag_(diag), aiv0_(aiv0), total_(total) {}

    /* One set, after both AIVs have room for it. False if they did not make room in time. */
    HPMOE_FN bool Set(uint64_t timeout_us) {
        const Deadline deadline(timeout_us);
        while (sets_ - Consumed() >= kFlagMaxPending) {
            if (deadline.Passed()) {
                return false;
            }
        }
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FlagId<Id>::value);
        ++sets_;
        diag_.PublishFlagSet(sets_);
        return true;
    }

    /* The sets not yet done (after a failure, or to check the list did them all). */
    HPMOE_FN bool Drain(uint64_t timeout_us) {
        while (sets_ < total_) {
            if (!Set(timeout_us)) {
                return false;
            }
        }
        return true;
    }

    HPMOE_FN uint32_t Sets() const { return sets_; }
    /* Waits both AIVs have completed: the smaller of their published counts. */
    HPMOE_FN uint32_t Consumed() const {
        const uint32_t a = diag_.FlagConsumedOf(aiv0_);
        const uint32_t b = diag_.FlagConsumedOf(aiv0_ + 1);
        return a < b ? a : b;
    }

private:
    Diag& diag_;
    uint32_t aiv0_;
    uint32_t total_;
    uint32_t sets_ = 0;
};

/* AIV side: waits for its AIC's sets, one wait per set, publishing each. */
template <uint16_t Id>
class FlagConsumer {
public:
    HPMOE_FN FlagConsumer(Diag& diag, uint32_t total) : diag_(diag), total_(total) {}

    HPMOE_FN void Wait(uint32_t n) {
        for (uint32_t i = 0; i < n; ++i) {
            AscendC::CrossCoreWaitFlag<2, PIPE_S>(FlagId<Id>::value);
            ++consumed_;
            diag_.PublishFlagConsumed(consumed_);
        }
    }
    /* The waits left: at the end of the list, or after a failure. */
    HPMOE_FN void Drain() { Wait(total_ - consumed_); }

private:
    Diag& diag_;
    uint32_t total_;
    uint32_t consumed_ = 0;
};

}  // namespace hpmoe

#endif /* HPMOE_FLAGS_H */
