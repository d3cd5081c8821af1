//! The documented and the wrong calls that a devkit stand-in must accept or reject: shared by the
//! declaration-only headers' test (`devkit_decl.rs`) and the emulator's (`emulator_api.rs`), which
//! must keep the same compile-time rules.

/// Includes and aliases every case starts with.
pub const PRELUDE: &str = r#"
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "lib/activation/swiglu.h"
#include "shmem.h"
using namespace AscendC;
using Bf16 = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>;
using F32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using F16 = MatmulType<TPosition::GM, CubeFormat::ND, half>;
"#;

/// A translation unit with `code` inside a device function.
pub fn body(code: &str) -> String {
    format!(
        "{PRELUDE}\n__aicore__ inline void f(LocalTensor<float>& a, const LocalTensor<float>& c, TPipe* pipe, TCubeTiling* t) {{\n    (void)a; (void)c; (void)pipe; (void)t;\n    {code}\n}}\n"
    )
}

/// Documented calls, all accepted.
pub const ACCEPTED: &str = "CrossCoreSetFlag<2, PIPE_FIX>(15); CrossCoreSetFlag<0, PIPE_MTE3>(15); CrossCoreSetFlag<1, PIPE_V>(15);\n\
     CrossCoreWaitFlag<2, PIPE_S>(15); CrossCoreWaitFlag(15);\n\
     Muls(a, a, 2.0f, 8); Adds(a, a, 1.0f, 8); Duplicate(a, 0.0f, 8);\n\
     SwiGLU(a, a, a, 1.0f); SwiGLU(a, c, c, 1.0f, 8u);\n\
     Matmul<Bf16, Bf16, F32> mm; REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, t);\n\
     Matmul<F16, F16, F16> mm2; REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, t, mm2, t);\n\
     if ASCEND_IS_AIC { mm.End(); }\n\
     aclshmem_putmem_signal(nullptr, nullptr, 64, nullptr, 1, ACLSHMEM_SIGNAL_ADD, 1);\n\
     const int32_t e = pipe->FetchEventID(HardEvent::V_S); SetFlag<HardEvent::V_S>(e); WaitFlag<HardEvent::V_S>(e);";

/// Wrong calls: (file name, code, a phrase of the expected error).
pub const REJECTED: [(&str, &str, &str); 11] = [
    ("mode", "CrossCoreSetFlag<3, PIPE_V>(15);", "modeId must be 0, 1 or 2"),
    ("wait_mode", "CrossCoreWaitFlag<4, PIPE_S>(15);", "modeId must be 0, 1 or 2"),
    ("pipe_s", "CrossCoreSetFlag<2, PIPE_S>(15);", "the set pipe must be"),
    ("pipe_all", "CrossCoreSetFlag<2, PIPE_ALL>(15);", "the set pipe must be"),
    ("double_scalar", "Muls(a, a, 2.0, 8);", "the scalar must have exactly the tensor's element type"),
    ("explicit_t", "Muls<float>(a, a, 2.0, 8);", "the scalar must have exactly the tensor's element type"),
    ("int_dup", "Duplicate(a, 0, 8);", "the scalar must have exactly the tensor's element type"),
    ("swiglu_const", "SwiGLU(a, c, c, 1.0f);", "SwiGLU"),
    ("mm_types", "Matmul<Bf16, F16, F32> mm; mm.End();", "A and B must have the same element type"),
    ("mm_pairs", "Matmul<Bf16, Bf16, F32> mm; REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm);", "come in pairs"),
    ("kernel_type", "KERNEL_TASK_TYPE_DEFAULT(3);", "KERNEL_TASK_TYPE_DEFAULT takes a KERNEL_TYPE_* value"),
];
