/* Correct: DataCopyPad semantics, bit for bit.
 * A: 5 rows of 13 halves (GM row stride 20) -> UB with isPad, 2 left and 1 right padding elements
 *    of 7.0 (a 32-byte row) and a 1-block UB gap; the padded rows go back to GM with a blocked
 *    DataCopy (1 block per row, 1-block source gap): padding values in place, GM rows of 16.
 * B: the same rows in without padding (UB rows 32-byte aligned, 1-block gap) and out again with
 *    DataCopyPad to a GM row stride of 17 halves: the rows move, GM between them is untouched. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR a_out, GM_ADDR b_out) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (!ASCEND_IS_AIV || GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> ta, tb;
    pipe.InitBuffer(ta, 5 * 64); /* 32-byte rows, each followed by a 32-byte gap */
    pipe.InitBuffer(tb, 5 * 64);
    GlobalTensor<half> gx, ga, gb;
    gx.SetGlobalBuffer((__gm__ half*)x, 5 * 20);
    ga.SetGlobalBuffer((__gm__ half*)a_out, 5 * 16);
    gb.SetGlobalBuffer((__gm__ half*)b_out, 5 * 17);
    LocalTensor<half> a = ta.Get<half>(), b = tb.Get<half>();
    DataCopyPad(a, gx, DataCopyExtParams(5, 13 * 2, 7 * 2, 1, 0), DataCopyPadExtParams<half>(true, 2, 1, half(7.0f)));
    DataCopyPad(b, gx, DataCopyExtParams(5, 13 * 2, 7 * 2, 1, 0), DataCopyPadExtParams<half>(false, 0, 0, half(0.0f)));
    SetFlag<HardEvent::MTE2_MTE3>(0);
    WaitFlag<HardEvent::MTE2_MTE3>(0);
    DataCopy(ga, a, DataCopyParams(5, 1, 1, 0));
    DataCopyPad(gb, b, DataCopyExtParams(5, 13 * 2, 1, 4 * 2, 0));
    PipeBarrier<PIPE_ALL>();
}

int main() {
    std::vector<uint16_t> x(5 * 20), a_want(5 * 16, 0), b_want(5 * 17, 0x1234);
    for (int i = 0; i < 100; ++i) {
        x[i] = static_cast<uint16_t>(0x3C00 + i); /* distinct halves */
    }
    for (int r = 0; r < 5; ++r) {
        a_want[r * 16 + 0] = 0x4700; /* 7.0 */
        a_want[r * 16 + 1] = 0x4700;
        for (int c = 0; c < 13; ++c) {
            a_want[r * 16 + 2 + c] = x[r * 20 + c];
            b_want[r * 17 + c] = x[r * 20 + c];
        }
        a_want[r * 16 + 15] = 0x4700;
    }
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        auto* dx = harness::Upload(x);
        auto* da = harness::Upload(std::vector<uint16_t>(5 * 16, 0));
        auto* db = harness::Upload(std::vector<uint16_t>(5 * 17, 0x1234));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)dx, (GM_ADDR)da, (GM_ADDR)db);
        const int st = aclrtSynchronizeStream(s);
        harness::Check("padded_in", harness::Download(da, 5 * 16), a_want);
        harness::Check("strided_out", harness::Download(db, 5 * 17), b_want);
        return st;
    });
}
