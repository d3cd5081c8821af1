/* hpmoe host launcher: everything a generated NAME_launch.cpp needs to run its kernel, for both
 * targets from one source.
 *
 *   NPU       built with the CANN toolkit against the ACL runtime (acl/acl.h), the SHMEM host library
 *             (aclshmem.h) and the matmul tiling API (tiling/tiling_api.h, MultiCoreMatmulTiling
 *             filling the kernel's TCubeTiling); one process per rank
 *             (`--rank R`, or HPMOE_RANK), started together by the job launcher of your cluster.
 *   emulator  built with g++ and -DHPMOE_EMULATOR against hpmoe's CPU emulation of the same APIs
 *             (hpmoe-ascendc/emulator); one process runs every rank, one host thread each, exactly the
 *             code a rank's process runs on the NPU.
 *
 * A run, per rank:
 *   aclInit, aclrtSetDevice, aclrtCreateStream, SHMEM init over all ranks (my_rank = the rank);
 *   every tensor: symmetric ones from the SHMEM heap (aclshmem_malloc, same order on every rank),
 *     the others with aclrtMalloc; filled from DATA/rankR/NAME.bin (raw little-endian elements),
 *     zeroed when there is no such file;
 *   the schedule table and the flag plan copied in; the counter workspace (symmetric) and the
 *     diagnostics area zeroed; the system workspace; one TCubeTiling per Matmul group, computed
 *     here with the tiling API for the group's largest tile;
 *   the address of the cross-core synchronisation registers' base (aclrtGetHardwareSyncAddr);
 *   a barrier over all ranks (every rank's counters are zero before any kernel can signal them);
 *   the launch; aclrtSynchronizeStream;
 *   every tensor, the diagnostics area and the counters copied back to OUT/rankR/.
 * Exit status: 0 when the launch completed, 1 when it failed (the kernel's diagnostics area says
 * why), 2 on a usage or host API error. In the emulator, its findings go to OUT/emulator.txt. */
#ifndef HPMOE_HOST_LAUNCHER_H
#define HPMOE_HOST_LAUNCHER_H

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclshmem.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#ifdef HPMOE_EMULATOR
#include "hpmoe_emu/launch.h" /* hpmoe_emu::Report() */
#endif

namespace hpmoe {
namespace host {

/* What a kernel argument tensor is. Symmetric tensors come from the SHMEM heap. */
enum class TensorKind { Input, Output, Scratch, Symmetric };

/* Element types of Matmul operands, for the tiling API. */
enum class ElemType { F16, BF16, F32, I8, I32 };

/* One tensor argument of the kernel. */
struct TensorSpec {
    const char* name;
    uint64_t bytes;
    TensorKind kind;
};

/* One Matmul group: the tiling covers its largest tile, m x n x k. */
struct MatmulSpec {
    uint32_t m;
    uint32_t n;
    uint32_t k;
    ElemType a;
    ElemType b;
    ElemType c;
    bool trans_a; /* A stored K x M (the tiling's SetAType isTrans) */
    bool trans_b; /* B stored N x K */
    bool fixed_split = false; /* an on-chip sum's group: the base block is m x n (SetFixSplit) */
};

/* Device addresses of one rank's kernel arguments. */
struct Buffers {
    std::vector<uint8_t*> tensors;
    uint8_t* table = nullptr;
    uint8_t* flags = nullptr;
    uint8_t* counters = nullptr;
    uint8_t* diag = nullptr;
    uint8_t* workspace = nullptr;
    uint8_t* tiling = nullptr;
    /* Where the cross-core synchronisation registers' base address is (aclrtGetHardwareSyncAddr). */
    uint8_t* ffts = nullptr;
};

/* Launches the kernel on `stream` with one rank's arguments (the generated part). */
using LaunchFn = uint32_t (*)(const Buffers&, aclrtStream);

/* Everything the launcher needs to know about one kernel (generated from its schedule header). */
struct KernelSpec {
    const char* name;
    uint32_t ranks;
    uint32_t blocks;
    const TensorSpec* tensors;
    uint32_t tensor_count;
    uint64_t counter_bytes;
    uint64_t diag_bytes;
    const MatmulSpec* matmuls;
    uint32_t matmul_count;
    LaunchFn launch;
};

/* The system workspace the Matmul high-level API needs (16 MiB, as the CANN samples reserve). */
constexpr uint64_t kSysWorkspaceBytes = 16ull * 1024 * 1024;

/* Command-line options. */
struct Options {
    std::string data;   /* input folder: DATA/rankR/NAME.bin */
    std::string out;    /* output folder */
    std::string table;  /* NAME_schedule.bin */
    std::string flags;  /* NAME_flags.bin */
    int rank = -1;      /* NPU: this process's rank; the emulator runs them all */
    int device = -1;    /* NPU: device id (default: the rank) */
    std::string ip_port = "tcp://127.0.0.1:8666"; /* SHMEM bootstrap address (NPU) */
};

namespace detail {

inline void Say(const char* what, const std::string& detail) { std::fprintf(stderr, "hpmoe launcher: %s%s\n", what, detail.c_str()); }

inline bool ReadFile(const std::string& path, std::vector<uint8_t>& out) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        return false;
    }
    out.clear();
    uint8_t buf[65536];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
        out.insert(out.end(), buf, buf + n);
    }
    const bool ok = std::ferror(f) == 0;
    std::fclose(f);
    return ok;
}

inline bool WriteFile(const std::string& path, const void* data, size_t bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        return false;
    }
    const bool ok = std::fwrite(data, 1, bytes, f) == bytes;
    return std::fclose(f) == 0 && ok;
}

/* mkdir -p. */
inline bool MakeDir(const std::string& path) {
    for (size_t i = 1; i <= path.size(); ++i) {
        if (i == path.size() || path[i] == '/') {
            const std::string prefix = path.substr(0, i);
            if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
                return false;
            }
        }
    }
    return true;
}

inline std::string RankDir(const std::string& root, int rank) { return root + "/rank" + std::to_string(rank); }

inline matmul_tiling::DataType TilingType(ElemType t) {
    switch (t) {
        case ElemType::F16:
            return matmul_tiling::DataType::DT_FLOAT16;
        case ElemType::BF16:
            return matmul_tiling::DataType::DT_BF16;
        case ElemType::F32:
            return matmul_tiling::DataType::DT_FLOAT;
        case ElemType::I8:
            return matmul_tiling::DataType::DT_INT8;
        case ElemType::I32:
            return matmul_tiling::DataType::DT_INT32;
    }
    return matmul_tiling::DataType::DT_FLOAT;
}

/* The tilings of every Matmul group, back to back, as the kernel's `tiling` argument holds them. */
inline bool ComputeTilings(const KernelSpec& k, std::vector<uint8_t>& out) {
    out.clear();
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    if (platform == nullptr) {
        Say("no platform information for the matmul tiling", "");
        return false;
    }
    for (uint32_t g = 0; g < k.matmul_count; ++g) {
        const MatmulSpec& mm = k.matmuls[g];
        /* The whole group's largest tile on one core: every tile sets its own shapes in the kernel. */
        matmul_tiling::MultiCoreMatmulTiling api(*platform);
        api.SetDim(1);
        api.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, TilingType(mm.a), mm.trans_a);
        api.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, TilingType(mm.b), mm.trans_b);
        api.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, TilingType(mm.c));
        api.SetShape(static_cast<int32_t>(mm.m), static_cast<int32_t>(mm.n), static_cast<int32_t>(mm.k));
        api.SetOrgShape(static_cast<int32_t>(mm.m), static_cast<int32_t>(mm.n), static_cast<int32_t>(mm.k));
        api.SetBias(false);
        api.SetBufferSpace(-1, -1, -1);
        if (mm.fixed_split && api.SetFixSplit(static_cast<int32_t>(mm.m), static_cast<int32_t>(mm.n), -1) != 0) {
            Say("the tiling API refused the on-chip sum's base block of Matmul group ", std::to_string(g));
            return false;
        }
        TCubeTiling tiling;
        if (api.GetTiling(tiling) == -1) {
            Say("the tiling API found no tiling for Matmul group ", std::to_string(g));
            return false;
        }
        /* The kernel's `tiling` argument holds the TCubeTiling structs back to back. */
        const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&tiling);
        out.insert(out.end(), bytes, bytes + sizeof(tiling));
    }
    return true;
}

#define HPMOE_HOST_CHECK(call)                                                  \
    do {                                                                        \
        const aclError hpmoe_host_err = (call);                                 \
        if (hpmoe_host_err != ACL_SUCCESS) {                                    \
            hpmoe::host::detail::Say(#call " failed with ",                     \
                                     std::to_string(static_cast<int>(hpmoe_host_err))); \
            return 2;                                                           \
        }                                                                       \
    } while (0)

/* Device memory of one tensor-sized buffer, zeroed, or filled with `data`. */
inline int Upload(uint8_t* dst, uint64_t bytes, const std::vector<uint8_t>* data) {
    if (bytes == 0) {
        return 0;
    }
    if (data == nullptr) {
        HPMOE_HOST_CHECK(aclrtMemset(dst, bytes, 0, bytes));
        return 0;
    }
    if (data->size() != bytes) {
        Say("wrong size of an upload: ", std::to_string(data->size()) + " bytes for a buffer of " + std::to_string(bytes));
        return 2;
    }
    HPMOE_HOST_CHECK(aclrtMemcpy(dst, bytes, data->data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    return 0;
}

inline int Download(const std::string& path, const uint8_t* src, uint64_t bytes) {
    std::vector<uint8_t> host(bytes);
    if (bytes > 0) {
        HPMOE_HOST_CHECK(aclrtMemcpy(host.data(), bytes, src, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    }
    if (!WriteFile(path, host.data(), host.size())) {
        Say("cannot write ", path);
        return 2;
    }
    return 0;
}

/* One rank's whole run (one process's on the NPU, one host thread's in the emulator). */
inline int RunRank(const KernelSpec& k, const Options& opt, int rank) {
    std::vector<uint8_t> table;
    std::vector<uint8_t> flags;
    if (!ReadFile(opt.table, table) || !ReadFile(opt.flags, flags)) {
        Say("cannot read the schedule table or flag plan: ", opt.table + ", " + opt.flags);
        return 2;
    }
    std::vector<uint8_t> tilings;
    if (!ComputeTilings(k, tilings)) {
        return 2;
    }
    const int device = opt.device >= 0 ? opt.device : rank;
    HPMOE_HOST_CHECK(aclrtSetDevice(device));
    aclrtStream stream = nullptr;
    HPMOE_HOST_CHECK(aclrtCreateStream(&stream));

    aclshmemx_init_attr_t attr{};
    attr.my_pe = rank;
    attr.n_pes = static_cast<int>(k.ranks);
    std::snprintf(attr.ip_port, sizeof(attr.ip_port), "%s", opt.ip_port.c_str());
    uint64_t symmetric = k.counter_bytes;
    for (uint32_t t = 0; t < k.tensor_count; ++t) {
        if (k.tensors[t].kind == TensorKind::Symmetric) {
            symmetric += k.tensors[t].bytes;
        }
    }
    /* Room for every symmetric allocation, each rounded up by the heap, plus the library's own. */
    attr.local_mem_size = symmetric + 64ull * 1024 * 1024;
    if (aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) != 0) {
        Say("SHMEM initialisation failed on rank ", std::to_string(rank));
        return 2;
    }

    Buffers b;
    b.tensors.resize(k.tensor_count, nullptr);
    for (uint32_t t = 0; t < k.tensor_count; ++t) {
        const TensorSpec& spec = k.tensors[t];
        if (spec.kind == TensorKind::Symmetric) {
            b.tensors[t] = static_cast<uint8_t*>(aclshmem_malloc(spec.bytes));
            if (b.tensors[t] == nullptr) {
                Say("aclshmem_malloc failed for tensor ", spec.name);
                return 2;
            }
        } else {
            void* p = nullptr;
            HPMOE_HOST_CHECK(aclrtMalloc(&p, spec.bytes, ACL_MEM_MALLOC_HUGE_FIRST));
            b.tensors[t] = static_cast<uint8_t*>(p);
        }
        std::vector<uint8_t> data;
        const bool have = ReadFile(RankDir(opt.data, rank) + "/" + spec.name + ".bin", data);
        if (spec.kind == TensorKind::Input && !have) {
            Say("no data for input tensor ", std::string(spec.name) + " on rank " + std::to_string(rank));
            return 2;
        }
        if (Upload(b.tensors[t], spec.bytes, have ? &data : nullptr) != 0) {
            return 2;
        }
    }
    b.counters = static_cast<uint8_t*>(aclshmem_malloc(k.counter_bytes));
    if (b.counters == nullptr && k.counter_bytes != 0) {
        Say("aclshmem_malloc failed for the counters", "");
        return 2;
    }
    void* p = nullptr;
    HPMOE_HOST_CHECK(aclrtMalloc(&p, table.size(), ACL_MEM_MALLOC_HUGE_FIRST));
    b.table = static_cast<uint8_t*>(p);
    HPMOE_HOST_CHECK(aclrtMalloc(&p, flags.size(), ACL_MEM_MALLOC_HUGE_FIRST));
    b.flags = static_cast<uint8_t*>(p);
    HPMOE_HOST_CHECK(aclrtMalloc(&p, k.diag_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    b.diag = static_cast<uint8_t*>(p);
    HPMOE_HOST_CHECK(aclrtMalloc(&p, kSysWorkspaceBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    b.workspace = static_cast<uint8_t*>(p);
    if (!tilings.empty()) {
        HPMOE_HOST_CHECK(aclrtMalloc(&p, tilings.size(), ACL_MEM_MALLOC_HUGE_FIRST));
        b.tiling = static_cast<uint8_t*>(p);
    }
    if (Upload(b.table, table.size(), &table) != 0 || Upload(b.flags, flags.size(), &flags) != 0 ||
        Upload(b.counters, k.counter_bytes, nullptr) != 0 || Upload(b.diag, k.diag_bytes, nullptr) != 0 ||
        Upload(b.workspace, kSysWorkspaceBytes, nullptr) != 0 ||
        (b.tiling != nullptr && Upload(b.tiling, tilings.size(), &tilings) != 0)) {
        return 2;
    }
    void* ffts = nullptr;
    HPMOE_HOST_CHECK(aclrtGetHardwareSyncAddr(&ffts));
    b.ffts = static_cast<uint8_t*>(ffts);
    /* Every rank's counters are zero before any rank's kernel may add to them. */
    aclshmemx_barrier_all_on_stream(stream);
    HPMOE_HOST_CHECK(aclrtSynchronizeStream(stream));

    const uint32_t launched = k.launch(b, stream);
    const aclError finished = aclrtSynchronizeStream(stream);
    const int status = (launched == 0 && finished == ACL_SUCCESS) ? 0 : 1;

    const std::string dir = RankDir(opt.out, rank);
    if (!MakeDir(dir)) {
        Say("cannot create ", dir);
        return 2;
    }
    for (uint32_t t = 0; t < k.tensor_count; ++t) {
        if (Download(dir + "/" + k.tensors[t].name + ".bin", b.tensors[t], k.tensors[t].bytes) != 0) {
            return 2;
        }
    }
    if (Download(dir + "/diag.bin", b.diag, k.diag_bytes) != 0 ||
        Download(dir + "/counters.bin", b.counters, k.counter_bytes) != 0) {
        return 2;
    }
    for (uint32_t t = 0; t < k.tensor_count; ++t) {
        if (k.tensors[t].kind == TensorKind::Symmetric) {
            aclshmem_free(b.tensors[t]);
        } else {
            (void)aclrtFree(b.tensors[t]);
        }
    }
    aclshmem_free(b.counters);
    for (uint8_t* q : {b.table, b.flags, b.diag, b.workspace, b.tiling}) {
        if (q != nullptr) {
            (void)aclrtFree(q);
        }
    }
    (void)aclshmem_finalize();
    (void)aclrtDestroyStream(stream);
    (void)aclrtResetDevice(device);
    return status;
}

inline bool ParseInt(const char* s, int& out) {
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 0 || v > 1000000) {
        return false;
    }
    out = static_cast<int>(v);
    return true;
}

inline int Usage(const KernelSpec& k) {
    std::fprintf(stderr,
                 "usage: %s_launch --data DIR --out DIR --table %s_schedule.bin --flags %s_flags.bin"
                 " [--rank R] [--device D] [--ip-port tcp://HOST:PORT]\n"
                 "  DIR/rankR/TENSOR.bin holds each tensor's bytes on rank R (inputs required, others zeroed);\n"
                 "  results, diag.bin and counters.bin go to OUT/rankR/.\n",
                 k.name, k.name, k.name);
    return 2;
}

inline int Parse(const KernelSpec& k, int argc, char** argv, Options& opt) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (value == nullptr) {
            return Usage(k);
        }
        if (arg == "--data") {
            opt.data = value;
        } else if (arg == "--out") {
            opt.out = value;
        } else if (arg == "--table") {
            opt.table = value;
        } else if (arg == "--flags") {
            opt.flags = value;
        } else if (arg == "--ip-port") {
            opt.ip_port = value;
        } else if (arg == "--rank") {
            if (!ParseInt(value, opt.rank)) {
                return Usage(k);
            }
        } else if (arg == "--device") {
            if (!ParseInt(value, opt.device)) {
                return Usage(k);
            }
        } else {
            return Usage(k);
        }
        ++i;
    }
    if (opt.data.empty() || opt.out.empty() || opt.table.empty() || opt.flags.empty()) {
        return Usage(k);
    }
    if (opt.rank < 0) {
        const char* env = std::getenv("HPMOE_RANK");
        if (env != nullptr && !ParseInt(env, opt.rank)) {
            return Usage(k);
        }
    }
    return 0;
}

}  // namespace detail

/* The launcher's main: parses the options, runs this process's rank (NPU) or every rank (emulator). */
inline int Main(const KernelSpec& k, int argc, char** argv) {
    Options opt;
    if (const int bad = detail::Parse(k, argc, argv, opt)) {
        return bad;
    }
    HPMOE_HOST_CHECK(aclInit(nullptr));
    int status = 0;
#ifdef HPMOE_EMULATOR
    /* Every rank at once, one host thread each, as one process per rank would run them. */
    std::vector<int> results(k.ranks, 2);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < k.ranks; ++r) {
        threads.emplace_back([&, r] { results[r] = detail::RunRank(k, opt, static_cast<int>(r)); });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    for (int r : results) {
        status = r > status ? r : status;
    }
    std::string report;
    for (const std::string& finding : hpmoe_emu::Report()) {
        report += finding + "\n";
    }
    if (!detail::MakeDir(opt.out) || !detail::WriteFile(opt.out + "/emulator.txt", report.data(), report.size())) {
        detail::Say("cannot write the emulator's report under ", opt.out);
        status = 2;
    }
#else
    if (opt.rank < 0 || static_cast<uint32_t>(opt.rank) >= k.ranks) {
        detail::Say("on the NPU each process runs one rank: give --rank (or HPMOE_RANK) below ",
                    std::to_string(k.ranks));
        return 2;
    }
    status = detail::RunRank(k, opt, opt.rank);
#endif
    (void)aclFinalize();
    return status;
}

}  // namespace host
}  // namespace hpmoe

#endif /* HPMOE_HOST_LAUNCHER_H */
