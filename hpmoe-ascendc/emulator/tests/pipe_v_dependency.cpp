/* Add then Mul reading Add's result with no PipeBarrier<PIPE_V>: the documentation requires the
 * barrier unless the compiler's automatic synchronisation inserts it (on by default). With
 * HPMOE_EMU_STRICT_PIPE_V=1 -> unsynchronised_read; by default the run is clean. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k() {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        TPipe pipe;
        TBuf<TPosition::VECCALC> a, b, c;
        pipe.InitBuffer(a, 256);
        pipe.InitBuffer(b, 256);
        pipe.InitBuffer(c, 256);
        LocalTensor<float> x = a.Get<float>(), y = b.Get<float>(), z = c.Get<float>();
        Duplicate(x, 1.0f, 64);
        Duplicate(y, 2.0f, 64);
        PipeBarrier<PIPE_V>();
        Add(z, x, y, 64);
        Mul(x, z, y, 64);
        PipeBarrier<PIPE_ALL>();
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
