/* Violation: eight SetFlag<V_S> pending, then TPipe::FetchEventID(V_S) -> event_ids_exhausted.
 * Before that, FetchEventID gives the lowest id with no set pending, and a waited id is free again
 * (a wrong id returns early and leaves sets unpaired: a different error, so the test fails). */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k() {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        TPipe pipe;
        const int32_t first = pipe.FetchEventID(HardEvent::V_S);
        SetFlag<HardEvent::V_S>(first);
        WaitFlag<HardEvent::V_S>(first);
        for (int32_t i = 0; i < 8; ++i) {
            const int32_t id = pipe.FetchEventID(HardEvent::V_S);
            if (id != i) {
                return;
            }
            SetFlag<HardEvent::V_S>(id);
        }
        pipe.FetchEventID(HardEvent::V_S);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
