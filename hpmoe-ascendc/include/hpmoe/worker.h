/* hpmoe device runtime: the worker loops. Every AIC and AIV core of the launch walks its own list
 * of the schedule table:
 *
 *   for each entry of the core, in order:
 *     (AIV) the hardware flag waits the flag plan gives the entry;
 *     wait until counter wait_counter of this rank >= wait_target (bounded; on timeout write a
 *       diagnostic record and stop);
 *     run the tile (the generated Tiles::Run dispatches on the instance's family);
 *     (AIC) set the hardware flag if the plan says so;
 *     make the tile's writes complete and add 1 to every counter it signals.
 *
 * Before the first entry each core checks the launch (block count, PE count), the table and the
 * flag plan against the constants the kernel was generated with, and records its state in the
 * diagnostics area; at the end it records DONE, or why it stopped. */
#ifndef HPMOE_WORKER_H
#define HPMOE_WORKER_H

#include "abi.h"
#include "config.h"
#include "context.h"
#include "counters.h"
#include "diag.h"
#include "flag_plan.h"
#include "flags.h"
#include "shmem.h"
#include "table.h"

namespace hpmoe {

/* The kernel's global-memory arguments the runtime reads. */
struct Launch {
    GM_ADDR table;    /* NAME_schedule.bin */
    GM_ADDR flags;    /* NAME_flags.bin */
    GM_ADDR counters; /* symmetric, counters_per_rank_max int32, zeroed before the launch */
    GM_ADDR diag;     /* HPMOE_DIAG_BYTES(cores_per_rank), zeroed before the launch */
};

/* What the kernel was generated with (the constants of NAME_schedule.h). */
struct KernelSpec {
    TableExpect table;
    FlagPlanExpect flags;
    uint64_t wait_timeout_us;
};

/* One core's identity and validated inputs. */
struct Core {
    Table table;
    FlagPlan plan;
    Diag diag;
    uint32_t local = 0;
    uint32_t global = 0;
    int64_t rank = 0;
    __gm__ int32_t* counters = nullptr;
};

/* Identity, diagnostics record, launch and table checks. False: the core must not run. */
HPMOE_FN bool StartCore(const Launch& launch, const KernelSpec& spec, bool aic, Core& core) {
    FlushDataCache(launch.table);
    const TableExpect& t = spec.table;
    core.local = static_cast<uint32_t>(aic ? AscendC::GetBlockIdx() : t.aic_per_rank + AscendC::GetBlockIdx());
    if (core.local >= t.cores_per_rank) {
        return false; /* launched with more blocks than the table has cores: no record to write */
    }
    core.rank = aclshmem_my_pe();
    core.global = static_cast<uint32_t>(core.rank) * t.cores_per_rank + core.local;
    core.counters = reinterpret_cast<__gm__ int32_t*>(launch.counters);
    core.diag.Init(launch.diag, core.local, core.global);
    if (AscendC::GetBlockNum() != t.aic_per_rank || aclshmem_n_pes() != static_cast<int>(t.ranks) || core.rank < 0 ||
        core.rank >= static_cast<int64_t>(t.ranks)) {
        core.diag.Fail(HPMOE_STATUS_BAD_LAUNCH, 0, 0, 0, static_cast<int32_t>(t.aic_per_rank),
                       static_cast<int32_t>(AscendC::GetBlockNum()), 0);
        return false;
    }
    uint32_t status = core.table.Open(launch.table, t, HPMOE_VERIFY_TABLE_CRC != 0);
    if (status == HPMOE_TABLE_OK) {
        status = core.plan.Open(launch.flags, spec.flags, HPMOE_VERIFY_TABLE_CRC != 0);
    }
    if (status != HPMOE_TABLE_OK) {
        core.diag.Fail(HPMOE_STATUS_BAD_TABLE, 0, 0, 0, 0, 0, status);
        return false;
    }
    return true;
}

/* The entry's counter wait. False (and a diagnostic record) on timeout or abort. */
HPMOE_FN bool WaitEntry(Core& core, const hpmoe_entry_record& e, uint32_t position, uint64_t timeout_us) {
    if (e.wait_counter == HPMOE_NO_WAIT) {
        return true;
    }
    int32_t seen = 0;
    const uint32_t outcome =
        WaitAtLeast(core.counters + e.wait_counter, static_cast<int32_t>(e.wait_target), timeout_us, core.diag, seen);
    if (outcome == kWaitOk) {
        return true;
    }
    core.diag.Fail(outcome == kWaitTimeout ? HPMOE_STATUS_WAIT_TIMEOUT : HPMOE_STATUS_ABORTED, position, e.instance,
                   e.wait_counter, static_cast<int32_t>(e.wait_target), seen, 0);
    return false;
}

/* A core that stopped early gives its flag partners this much longer to finish the protocol. */
constexpr uint64_t kDrainTimeoutFactor = 4;

/* The AIC's part of the loop: it sets the hardware flag after the tiles the flag plan names, and
 * ends its Matmul objects (Tiles::Finish) after the last entry. */
template <uint16_t kFlag>
class AicSide {
public:
    static constexpr bool kAic = true;

    HPMOE_FN AicSide(Core& core, const KernelSpec& spec)
        : producer_(core.diag, spec.table.aic_per_rank + spec.table.aiv_per_aic * core.local,
                    core.plan.Total(core.global)) {}

    /* Before entry `index`'s counter wait: nothing on the AIC. */
    HPMOE_FN void BeforeWait(Core&, uint32_t) {}

    /* After the tile of entry `index` (position `position` of the core's list): the flag set the
     * plan gives it. False (and a diagnostic record) on timeout. */
    HPMOE_FN bool AfterRun(Core& core, const KernelSpec& spec, uint32_t index, uint32_t position,
                           const hpmoe_entry_record& e) {
        if constexpr (kFlag != kNoFlag) {
            if (core.plan.Op(index) != 0 && !producer_.Set(spec.wait_timeout_us)) {
                core.diag.Fail(HPMOE_STATUS_FLAG_TIMEOUT, position, e.instance, HPMOE_DIAG_FLAG_COUNTER | kFlag,
                               static_cast<int32_t>(producer_.Sets()), static_cast<int32_t>(producer_.Consumed()), 0);
                return false;
            }
        }
        return true;
    }

    /* After the loop (`failed`: it stopped early): ends the Matmul objects and waits until the AIVs
     * consumed every set; after a failure it gives them longer. False (and a record) when a loop
     * that had not failed times out here. */
    template <class Tiles>
    HPMOE_FN bool Finish(Core& core, const KernelSpec& spec, Tiles& tiles, bool failed, uint32_t entries) {
        tiles.Finish();
        if constexpr (kFlag != kNoFlag) {
            /* Normally nothing is left; after a failure, release the AIVs' remaining waits. */
            const uint64_t timeout_us = failed ? kDrainTimeoutFactor * spec.wait_timeout_us : spec.wait_timeout_us;
            if (!producer_.Drain(timeout_us) && !failed) {
                core.diag.Fail(HPMOE_STATUS_FLAG_TIMEOUT, entries, 0, HPMOE_DIAG_FLAG_COUNTER | kFlag,
                               static_cast<int32_t>(core.plan.Total(core.global)),
                               static_cast<int32_t>(producer_.Sets()), 0);
                return false;
            }
        }
        return true;
    }

private:
    FlagProducer<kFlag == kNoFlag ? 15 : kFlag> producer_;
};

/* The AIV's part of the loop: before each entry it waits for the hardware flag sets the flag plan
 * gives it, and at the end it consumes whatever its AIC still sets. */
template <uint16_t kFlag>
class AivSide {
public:
    static constexpr bool kAic = false;

    HPMOE_FN AivSide(Core& core, const KernelSpec&) : consumer_(core.diag, core.plan.Total(core.global)) {}

    /* Before entry `index`'s counter wait: the flag waits of the plan. */
    HPMOE_FN void BeforeWait(Core& core, uint32_t index) {
        if constexpr (kFlag != kNoFlag) {
            consumer_.Wait(core.plan.Op(index));
        }
    }

    /* After a tile: nothing on the AIV. */
    HPMOE_FN bool AfterRun(Core&, const KernelSpec&, uint32_t, uint32_t, const hpmoe_entry_record&) { return true; }

    /* After the loop: the AIC's sets meant for the other AIV, and every set after a failure. */
    template <class Tiles>
    HPMOE_FN bool Finish(Core&, const KernelSpec&, Tiles&, bool, uint32_t) {
        if constexpr (kFlag != kNoFlag) {
            consumer_.Drain();
        }
        return true;
    }

private:
    FlagConsumer<kFlag == kNoFlag ? 15 : kFlag> consumer_;
};

/* The worker loop of one core, AIC or AIV (`Side`, above, is what differs). */
template <class Side, class Tiles>
HPMOE_FN void RunCore(const Launch& launch, const KernelSpec& spec, Tiles& tiles) {
    Core core;
    if (!StartCore(launch, spec, Side::kAic, core)) {
        return;
    }
    const hpmoe_core_record list = core.table.Core(core.global);
    Side side(core, spec);
    uint32_t done = 0;
    bool failed = false;
    for (uint32_t i = 0; i < list.entry_count; ++i) {
        const uint32_t index = list.first_entry + i;
        const hpmoe_entry_record e = core.table.Entry(index);
        side.BeforeWait(core, index);
        if (!WaitEntry(core, e, i, spec.wait_timeout_us)) {
            failed = true;
            break;
        }
        TileContext ctx(core.table, e, core.rank, core.counters);
        tiles.Run(ctx, e.instance);
        if (ctx.BadTile()) {
            core.diag.Fail(HPMOE_STATUS_BAD_TILE, i, e.instance, 0, 0, 0, 0);
            failed = true;
            break;
        }
        if (!side.AfterRun(core, spec, index, i, e)) {
            failed = true;
            break;
        }
        ctx.SendSignals();
        ++done;
        core.diag.Progress(done);
    }
    if (!side.Finish(core, spec, tiles, failed, list.entry_count)) {
        failed = true;
    }
    if (!failed) {
        core.diag.Done(done);
    }
}

/* The AIC loop. `tiles` runs AIC tiles (Run) and ends the Matmul objects (Finish). */
template <uint16_t kFlag, class Tiles>
HPMOE_FN void RunAic(const Launch& launch, const KernelSpec& spec, Tiles& tiles) {
    RunCore<AicSide<kFlag>>(launch, spec, tiles);
}

/* The AIV loop. `tiles` runs AIV tiles (Run). */
template <uint16_t kFlag, class Tiles>
HPMOE_FN void RunAiv(const Launch& launch, const KernelSpec& spec, Tiles& tiles) {
    RunCore<AivSide<kFlag>>(launch, spec, tiles);
}

}  // namespace hpmoe

#endif /* HPMOE_WORKER_H */
