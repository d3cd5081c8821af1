/* hpmoe AscendC emulator: launches (a group of one launch per rank), core threads, identities,
 * errors and the report, virtual time, and the watchdog (wall-clock timeout, deadlock). */
#include "machine.h"

#include <sched.h>
#include <unistd.h>

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "acl/acl.h"

namespace hpmoe_emu {

namespace {
thread_local Core* tl_core = nullptr;

std::mutex g_launch_mutex;
std::shared_ptr<Group> g_forming;      /* the group ranks are joining */
std::vector<std::string> g_last_report;
std::mutex g_report_mutex;

/* Poll-class calls in a row after which a core counts as polling. */
constexpr uint64_t kPollStreak = 64;
/* The system counter's rate. */
constexpr int64_t kCyclesPerSecond = 50000000;

int64_t TimeoutMs() {
    const char* e = std::getenv("HPMOE_EMU_TIMEOUT_MS");
    if (e != nullptr && *e != '\0') {
        return std::strtoll(e, nullptr, 10);
    }
    return 60000;
}
}  // namespace

/* Host-side launch state of a stream. */
struct Stream {
    std::shared_ptr<Group> group;
};

int HostPe();
int HostNPes();

std::string Hex(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
    return buf;
}

Core* CurOrNull() { return tl_core; }

static void StopIfNeeded(Core& c) {
    if (c.g->stop.load(std::memory_order_relaxed)) {
        c.stopped = true;
        throw StopCore{};
    }
}

Core& Cur(const char* call) {
    Core* c = tl_core;
    if (c == nullptr) {
        std::fprintf(stderr, "hpmoe emulator: %s called outside a kernel launch\n", call);
        std::abort();
    }
    StopIfNeeded(*c);
    c->poll_streak.store(0, std::memory_order_relaxed);
    c->poll_clock.store(false, std::memory_order_relaxed);
    c->g->progress.fetch_add(1, std::memory_order_relaxed);
    return *c;
}

Core& CurPoll(const char* call, bool clock) {
    Core* c = tl_core;
    if (c == nullptr) {
        std::fprintf(stderr, "hpmoe emulator: %s called outside a kernel launch\n", call);
        std::abort();
    }
    StopIfNeeded(*c);
    const uint64_t streak = c->poll_streak.fetch_add(1, std::memory_order_relaxed) + 1;
    c->polls.fetch_add(1, std::memory_order_relaxed);
    if (clock) {
        c->poll_clock.store(true, std::memory_order_relaxed);
    }
    if (streak > kPollStreak) {
        if (streak > 16 * kPollStreak) {
            usleep(50);
        } else {
            sched_yield();
        }
    }
    return *c;
}

void PollProgress(Core& c) {
    c.poll_streak.store(0, std::memory_order_relaxed);
    c.poll_clock.store(false, std::memory_order_relaxed);
    c.g->progress.fetch_add(1, std::memory_order_relaxed);
}

static std::string CoreTag(const Core& c) {
    return "rank=" + std::to_string(c.rank) + " core=" + c.name;
}

void Finding(Group& g, const std::string& line) {
    std::lock_guard<std::mutex> lk(g.m);
    g.findings.push_back(line);
    if (g.status == 0) {
        g.status = ACL_ERROR_RT_AICORE_EXCEPTION;
    }
}

void Fail(Core& c, const char* kind, const char* call, const std::string& msg) {
    Group& g = *c.g;
    {
        std::lock_guard<std::mutex> lk(g.m);
        if (!g.stop.load()) {
            g.findings.push_back(std::string("error ") + kind + " " + CoreTag(c) + " call=" + call + " " + msg);
            g.status = ACL_ERROR_RT_AICORE_EXCEPTION;
            g.stop.store(true);
        }
        g.cv.notify_all();
    }
    c.stopped = true;
    throw StopCore{};
}

void BlockWhile(Core& c, std::unique_lock<std::mutex>& lk, const std::function<bool()>& blocked,
                const std::string& desc) {
    Group& g = *c.g;
    if (!blocked()) {
        return;
    }
    c.wait_desc = desc;
    c.blocked_pred = &blocked;
    c.run.store(CORE_BLOCKED);
    while (blocked()) {
        if (g.stop.load()) {
            c.run.store(CORE_RUNNING);
            c.blocked_pred = nullptr;
            c.stopped = true;
            throw StopCore{};
        }
        g.cv.wait_for(lk, std::chrono::milliseconds(2));
    }
    c.run.store(CORE_RUNNING);
    c.blocked_pred = nullptr;
    c.wait_desc.clear();
}

/* ---- identity and time ---- */
bool IsAic() { return Cur("ASCEND_IS_AIC").aic; }
bool IsAiv() { return !Cur("ASCEND_IS_AIV").aic; }
int64_t BlockIdx() { return Cur("GetBlockIdx").index; }
int64_t BlockNum() { return Cur("GetBlockNum").g->block_dim; }
int64_t SubBlockIdx() {
    Core& c = Cur("GetSubBlockIdx");
    return c.aic ? 0 : c.sub;
}
int64_t TaskRation() { return Cur("GetTaskRation").aic ? 1 : 2; }
void NoteKernelType(int type) {
    Core& c = Cur("KERNEL_TASK_TYPE_DEFAULT");
    c.kernel_type = type;
    if (type != 5 /* KERNEL_TYPE_MIX_AIC_1_2 */) {
        Fail(c, "kernel_type", "KERNEL_TASK_TYPE_DEFAULT",
             "type=" + std::to_string(type) + " but the emulator launches KERNEL_TYPE_MIX_AIC_1_2 (5)");
    }
}

int64_t SystemCycle() {
    Core& c = CurPoll("GetSystemCycle", true);
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c.g->start).count();
    return ns / 20 + c.g->virtual_cycles.load();
}

void SetSysWorkspace(uint8_t* p) { Cur("SetSysWorkspace").workspace = p; }
uint8_t* SysWorkspace() { return Cur("GetSysWorkSpacePtr").workspace; }

/* ---- the watchdog ---- */
/* Finished, blocked in the emulator, or polling: a long streak of poll-class calls that is still
 * growing (a core that stopped polling and computes without emulator calls is running). */
static bool CoreStuck(const Core& c, uint64_t polls_before) {
    const int run = c.run.load();
    return run == CORE_FINISHED || run == CORE_BLOCKED ||
           (c.poll_streak.load() > kPollStreak && c.polls.load() != polls_before);
}

static void DeadlockReport(Group& g, const char* kind, const std::string& why) {
    std::lock_guard<std::mutex> lk(g.m);
    if (g.stop.load()) {
        return;
    }
    g.findings.push_back(std::string("error ") + kind + " " + why);
    for (auto& cp : g.cores) {
        Core& c = *cp;
        const int run = c.run.load();
        std::string state;
        if (run == CORE_FINISHED) {
            continue;
        }
        if (run == CORE_BLOCKED) {
            state = "waits " + c.wait_desc;
        } else if (c.poll_streak.load() > kPollStreak) {
            state = "polls (" + std::to_string(c.poll_streak.load()) +
                    " calls in a row of DataCacheCleanAndInvalid, GetSystemCycle or GetValue returning the same value" +
                    (c.poll_desc.empty() ? std::string() : "; last polled " + c.poll_desc) + ")";
        } else {
            state = "running";
        }
        g.findings.push_back("state rank=" + std::to_string(c.rank) + " core=" + c.name + " " + state);
    }
    g.status = std::string(kind) == "timeout" ? ACL_ERROR_RT_AICORE_TIMEOUT : ACL_ERROR_RT_AICORE_EXCEPTION;
    g.stop.store(true);
    g.cv.notify_all();
}

static void Watchdog(Group* gp) {
    Group& g = *gp;
    const int64_t timeout_ms = TimeoutMs();
    uint64_t last_progress = UINT64_MAX;
    std::vector<uint64_t> polls(g.cores.size(), 0);
    int stable_rounds = 0;
    int64_t jumped = 0;
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        {
            std::lock_guard<std::mutex> lk(g.m);
            if (g.finished == static_cast<int>(g.cores.size())) {
                return;
            }
        }
        if (g.stop.load()) {
            continue; /* wait for the cores to unwind */
        }
        const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - g.start).count();
        if (elapsed > timeout_ms) {
            DeadlockReport(g, "timeout", "launch ran longer than HPMOE_EMU_TIMEOUT_MS=" + std::to_string(timeout_ms));
            continue;
        }
        bool all_stuck = true;
        bool any_clock = false;
        for (size_t i = 0; i < g.cores.size(); ++i) {
            Core& cr = *g.cores[i];
            const uint64_t before = polls[i];
            polls[i] = cr.polls.load();
            if (!CoreStuck(cr, before)) {
                all_stuck = false;
            }
            if (cr.run.load() != CORE_FINISHED && cr.poll_streak.load() > kPollStreak && cr.poll_clock.load()) {
                any_clock = true;
            }
        }
        if (all_stuck) {
            /* A core marked blocked whose condition already holds is only waiting to be
             * scheduled (a loaded host): not stuck. */
            std::lock_guard<std::mutex> lk(g.m);
            for (auto& cp : g.cores) {
                if (cp->run.load() == CORE_BLOCKED && cp->blocked_pred != nullptr && !(*cp->blocked_pred)()) {
                    all_stuck = false;
                    break;
                }
            }
        }
        const uint64_t progress = g.progress.load();
        if (!all_stuck || progress != last_progress) {
            last_progress = progress;
            stable_rounds = 0;
            if (!all_stuck) {
                jumped = 0;
            }
            continue;
        }
        if (++stable_rounds < 3) {
            continue;
        }
        if (any_clock && jumped < 600 * kCyclesPerSecond) {
            /* Every unfinished core waits and some poll the clock: move virtual time on so their
             * own deadlines pass (README.md, "Virtual time"). */
            const int64_t step = std::max<int64_t>(kCyclesPerSecond, jumped / 8);
            g.virtual_cycles.fetch_add(step);
            jumped += step;
            continue;
        }
        DeadlockReport(g, "deadlock",
                       any_clock ? "every unfinished core still waits after 600 s of virtual time"
                                 : "every unfinished core waits and none can make progress");
    }
}

/* ---- core threads ---- */
static void CoreMain(Core* c) {
    tl_core = c;
    Group& g = *c->g;
    const std::function<void()>& body = g.bodies[static_cast<size_t>(c->rank)];
    if (sigsetjmp(c->fault_jmp, 1) == 0) {
        try {
            body();
            EndOfCoreChecks(*c);
        } catch (const StopCore&) {
        }
    } else {
        RecordGuardFault(*c);
    }
    tl_core = nullptr;
    std::lock_guard<std::mutex> lk(g.m);
    c->run.store(CORE_FINISHED);
    ++g.finished;
    g.cv.notify_all();
}

static void FinishGroup(Group& g) {
    for (auto& t : g.threads) {
        t.join();
    }
    if (g.monitor.joinable()) {
        g.monitor.join();
    }
    /* Flags left set, queue/shmem states were checked per core; fillers here. */
    std::vector<std::string> filler = GmCheckFillers();
    std::lock_guard<std::mutex> lk(g.m);
    if (!g.stop.load()) {
        for (auto& cp : g.cores) {
            for (int id = 0; id < 16; ++id) {
                if (cp->pair_sets[id] != 0) {
                    g.findings.push_back("error flag_outstanding rank=" + std::to_string(cp->rank) + " core=" + cp->name +
                                         " call=end id=" + std::to_string(id) + " " + std::to_string(cp->pair_sets[id]) +
                                         " set(s) never matched by the partner core(s) of its mode 0/1/2 group");
                    g.status = ACL_ERROR_RT_AICORE_EXCEPTION;
                }
                if (cp->flag[id] != 0) {
                    g.findings.push_back("error flag_outstanding rank=" + std::to_string(cp->rank) + " core=" + cp->name +
                                         " call=end id=" + std::to_string(id) + " count=" + std::to_string(cp->flag[id]) +
                                         " (sets never waited for)");
                    g.status = ACL_ERROR_RT_AICORE_EXCEPTION;
                }
            }
        }
    }
    for (auto& f : filler) {
        g.findings.push_back(f);
        g.status = ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    g.done = true;
    {
        std::lock_guard<std::mutex> rl(g_report_mutex);
        g_last_report = g.findings;
    }
    g.cv.notify_all();
}

static void StartGroup(const std::shared_ptr<Group>& gp) {
    Group& g = *gp;
    InstallFaultHandler();
    /* Other ranks' host threads may already wait in aclrtSynchronizeStream on this group. */
    std::lock_guard<std::mutex> lk(g.m);
    const int per_rank = static_cast<int>(g.block_dim) * 3;
    for (int r = 0; r < g.n_ranks; ++r) {
        for (int i = 0; i < per_rank; ++i) {
            auto c = std::make_unique<Core>();
            c->g = &g;
            c->rank = r;
            c->aic = i < static_cast<int>(g.block_dim);
            c->index = c->aic ? i : i - static_cast<int>(g.block_dim);
            c->block = c->aic ? c->index : c->index / 2;
            c->sub = c->aic ? 0 : c->index % 2;
            c->slot = r * per_rank + i;
            c->name = (c->aic ? "aic" : "aiv") + std::to_string(c->index);
            InitCoreMemory(*c);
            g.cores.push_back(std::move(c));
        }
    }
    g.start = std::chrono::steady_clock::now();
    g.started = true;
    for (auto& c : g.cores) {
        g.threads.emplace_back(CoreMain, c.get());
    }
    g.monitor = std::thread(Watchdog, &g);
    /* A finisher joins everything so that aclrtSynchronizeStream only waits for `done`. */
    std::thread([gp]() { 
        {
            std::unique_lock<std::mutex> lk(gp->m);
            gp->cv.wait(lk, [&] { return gp->finished == static_cast<int>(gp->cores.size()); });
        }
        FinishGroup(*gp);
    }).detach();
}

int LaunchKernel(const char* name, uint32_t block_dim, void* stream, std::function<void()> body) {
    if (stream == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    Stream* s = static_cast<Stream*>(stream);
    const int pe = HostPe();
    const int n = HostNPes();
    if (block_dim == 0 || block_dim > 25) {
        std::lock_guard<std::mutex> rl(g_report_mutex);
        g_last_report = {"error bad_launch rank=" + std::to_string(pe) + " call=launch blockDim=" +
                         std::to_string(block_dim) + " (1..25 blocks in MIX mode on 2201)"};
        return ACL_ERROR_INVALID_PARAM;
    }
    std::shared_ptr<Group> start;
    {
        std::lock_guard<std::mutex> lk(g_launch_mutex);
        if (!g_forming || g_forming->rank_joined[static_cast<size_t>(pe)] || g_forming->n_ranks != n) {
            g_forming = std::make_shared<Group>();
            g_forming->n_ranks = n;
            g_forming->bodies.resize(static_cast<size_t>(n));
            g_forming->rank_joined.assign(static_cast<size_t>(n), false);
            g_forming->block_dim = block_dim;
            g_forming->kernel = name;
        }
        Group& g = *g_forming;
        if (g.block_dim != block_dim || g.kernel != name) {
            std::lock_guard<std::mutex> gl(g.m);
            g.findings.push_back("error bad_launch rank=" + std::to_string(pe) + " call=launch " + name + " blockDim=" +
                                 std::to_string(block_dim) + " differs from rank's peers (" + g.kernel + ", " +
                                 std::to_string(g.block_dim) + ")");
            g.status = ACL_ERROR_INVALID_PARAM;
        }
        g.bodies[static_cast<size_t>(pe)] = std::move(body);
        g.rank_joined[static_cast<size_t>(pe)] = true;
        s->group = g_forming;
        if (++g.joined == n) {
            start = g_forming;
            g_forming.reset();
        }
    }
    if (start) {
        StartGroup(start);
    }
    return ACL_SUCCESS;
}

int SynchronizeStream(void* stream) {
    if (stream == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    Stream* s = static_cast<Stream*>(stream);
    std::shared_ptr<Group> g = s->group;
    if (!g) {
        return ACL_SUCCESS;
    }
    std::unique_lock<std::mutex> lk(g->m);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(TimeoutMs() + 10000);
    std::chrono::steady_clock::time_point stop_seen{};
    while (!g->done) {
        if (g->stop.load()) {
            /* A core that runs without emulator calls cannot be stopped: give up on it after a
             * grace period, report what is known and leave its thread behind. */
            const auto now = std::chrono::steady_clock::now();
            if (stop_seen == std::chrono::steady_clock::time_point{}) {
                stop_seen = now;
            } else if (now - stop_seen > std::chrono::seconds(2)) {
                std::vector<std::string> lines = g->findings;
                for (auto& c : g->cores) {
                    if (c->run.load() != CORE_FINISHED) {
                        lines.push_back("state rank=" + std::to_string(c->rank) + " core=" + c->name +
                                        " did not stop: it runs without calling the emulator (left running)");
                    }
                }
                const int status = g->status;
                lk.unlock();
                std::lock_guard<std::mutex> rl(g_report_mutex);
                g_last_report = lines;
                return status;
            }
        }
        if (!g->started && std::chrono::steady_clock::now() > deadline) {
            lk.unlock();
            std::lock_guard<std::mutex> rl(g_report_mutex);
            g_last_report = {"error timeout call=launch only " + std::to_string(g->joined) + " of " +
                             std::to_string(g->n_ranks) + " ranks launched"};
            return ACL_ERROR_RT_AICORE_TIMEOUT;
        }
        g->cv.wait_for(lk, std::chrono::milliseconds(5));
    }
    s->group.reset();
    return g->status;
}

void* NewStream() { return new Stream(); }
void DeleteStream(void* s) { delete static_cast<Stream*>(s); }

std::vector<std::string> Report() {
    std::lock_guard<std::mutex> rl(g_report_mutex);
    return g_last_report;
}

}  // namespace hpmoe_emu
