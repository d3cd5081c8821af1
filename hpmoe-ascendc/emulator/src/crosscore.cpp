/* hpmoe AscendC emulator: cross-core flags and SyncAll.
 *
 * Flag ids 0..15 per core, each a counter 0..15; a wait blocks while the counter is 0, then
 * decrements it; a set that would take a counter past 15 is an error (the hardware can freeze).
 * Modes (ascendc-api.md): 0 - all cores of one kind of the rank: every core of the kind must set
 * before each of them gets +1; 1 - the two AIVs of one block: both set, both get +1; 2 - an AIC
 * set gives each of its two AIVs +1, the AIC gets +1 once both its AIVs have set. The set is
 * issued on the given pipe: the setting core's GM writes must be complete to that pipe. */
#include "machine.h"

namespace hpmoe_emu {

namespace {
std::string Bump(Core& c, int id, const char* how) {
    if (c.flag[id] >= 15) {
        return "flag id " + std::to_string(id) + " of " + c.name + " rank " + std::to_string(c.rank) +
               " already counts 15 (" + how + "): a 16th set without a wait can freeze the device";
    }
    ++c.flag[id];
    return std::string();
}
}  // namespace

void CrossCoreSet(int mode, int device_pipe, uint16_t id) {
    Core& c = Cur("CrossCoreSetFlag");
    CheckSyncBase(c, "CrossCoreSetFlag");
    Group& g = *c.g;
    const int pipe = PipeFromDevice(device_pipe);
    if (id > 15) {
        Fail(c, "flag_id", "CrossCoreSetFlag", "flag id " + std::to_string(id) + " (0..15)");
    }
    if (mode == 1 && c.aic) {
        Fail(c, "flag_mode", "CrossCoreSetFlag", "mode 1 (the two AIVs of a block) set by an AIC");
    }
    if (id >= 11 && id <= 14) {
        c.used_syncall_ids = true;
        std::unique_lock<std::mutex> lk(g.m);
        const bool clash = g.syncall_used;
        lk.unlock();
        if (clash) {
            Fail(c, "flag_id_reserved", "CrossCoreSetFlag",
                 "flag id " + std::to_string(id) + " is one of SyncAll's ids 11..14 and this launch calls SyncAll");
        }
    }
    CheckGmWritesDone(c, pipe, "CrossCoreSetFlag", "a cross-core flag set while this core's global-memory writes are pending");
    std::string err;
    {
        std::unique_lock<std::mutex> lk(g.m);
        const int per_rank = static_cast<int>(g.block_dim) * 3;
        auto core_at = [&](int local) { return g.cores[static_cast<size_t>(c.rank * per_rank + local)].get(); };
        if (mode == 0) {
            /* A barrier of the rank's cores of this kind: each has set once (pair_sets counts). */
            ++c.pair_sets[id];
            int count = 0;
            int total = 0;
            for (int l = 0; l < per_rank; ++l) {
                Core* o = core_at(l);
                if (o->aic == c.aic) {
                    ++total;
                    if (o->pair_sets[id] > 0) {
                        ++count;
                    }
                }
            }
            if (count == total) {
                for (int l = 0; l < per_rank && err.empty(); ++l) {
                    Core* o = core_at(l);
                    if (o->aic == c.aic) {
                        --o->pair_sets[id];
                        err = Bump(*o, id, "mode 0");
                    }
                }
            }
        } else if (mode == 1) {
            Core* partner = core_at(static_cast<int>(g.block_dim) + (c.index ^ 1));
            ++c.pair_sets[id];
            if (partner->pair_sets[id] > 0) {
                --partner->pair_sets[id];
                --c.pair_sets[id];
                err = Bump(c, id, "mode 1");
                if (err.empty()) {
                    err = Bump(*partner, id, "mode 1");
                }
            }
        } else if (c.aic) {
            for (int s = 0; s < 2 && err.empty(); ++s) {
                err = Bump(*core_at(static_cast<int>(g.block_dim) + 2 * c.block + s), id, "mode 2, set by its AIC");
            }
        } else {
            Core* aic = core_at(c.block);
            Core* partner = core_at(static_cast<int>(g.block_dim) + (c.index ^ 1));
            /* pair_sets counts this AIV's sets towards its AIC not yet matched by its partner's. */
            ++c.pair_sets[id];
            if (partner->pair_sets[id] > 0) {
                --partner->pair_sets[id];
                --c.pair_sets[id];
                err = Bump(*aic, id, "mode 2, set by both AIVs");
            }
        }
        g.cv.notify_all();
    }
    if (!err.empty()) {
        Fail(c, "flag_overflow", "CrossCoreSetFlag", err);
    }
}

void CrossCoreWait(int mode, int device_pipe, uint16_t id) {
    Core& c = Cur("CrossCoreWaitFlag");
    CheckSyncBase(c, "CrossCoreWaitFlag");
    Group& g = *c.g;
    (void)device_pipe;
    if (id > 15) {
        Fail(c, "flag_id", "CrossCoreWaitFlag", "flag id " + std::to_string(id) + " (0..15)");
    }
    std::unique_lock<std::mutex> lk(g.m);
    BlockWhile(c, lk, [&] { return c.flag[id] == 0; },
               "CrossCoreWaitFlag mode " + std::to_string(mode) + " id " + std::to_string(id) + " count 0");
    --c.flag[id];
}

void SyncAll(bool aiv_only) {
    Core& c = Cur("SyncAll");
    Group& g = *c.g;
    if (aiv_only && c.aic) {
        Fail(c, "syncall_misuse", "SyncAll", "SyncAll<isAIVOnly=true> called on an AIC");
    }
    if (c.used_syncall_ids) {
        Fail(c, "flag_id_reserved", "SyncAll", "this core set flag ids 11..14, which SyncAll uses");
    }
    CheckGmWritesDone(c, EP_S, "SyncAll", "SyncAll while this core's global-memory writes are pending");
    std::unique_lock<std::mutex> lk(g.m);
    g.syncall_used = true;
    for (auto& o : g.cores) {
        if (o->rank == c.rank && o->used_syncall_ids) {
            const std::string name = o->name;
            lk.unlock();
            Fail(c, "flag_id_reserved", "SyncAll", name + " set flag ids 11..14, which SyncAll uses");
        }
    }
    const int kind = aiv_only ? 0 : 1;
    const int per_rank = static_cast<int>(g.block_dim) * 3;
    const int total = aiv_only ? 2 * static_cast<int>(g.block_dim) : per_rank;
    const size_t key = static_cast<size_t>(c.rank * 2 + kind);
    if (g.sa_arrived.size() < static_cast<size_t>(g.n_ranks * 2)) {
        g.sa_arrived.assign(static_cast<size_t>(g.n_ranks * 2), 0);
        g.sa_gen.assign(static_cast<size_t>(g.n_ranks * 2), 0);
    }
    const uint64_t gen = g.sa_gen[key];
    if (++g.sa_arrived[key] == total) {
        g.sa_arrived[key] = 0;
        ++g.sa_gen[key];
        g.cv.notify_all();
        return;
    }
    BlockWhile(c, lk, [&] { return g.sa_gen[key] == gen; },
               std::string("SyncAll") + (aiv_only ? "" : "<false>") + " (" + std::to_string(g.sa_arrived[key]) + " of " +
                   std::to_string(total) + " cores arrived)");
}

}  // namespace hpmoe_emu
