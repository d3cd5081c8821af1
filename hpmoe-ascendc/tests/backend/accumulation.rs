//! Global-memory order on one AIC, on the strict emulator, bitwise against the host executor:
//! a matmul reading what the previous matmul of its tile wrote (the kernel must put a barrier
//! between them, and without it the emulator reports the unsynchronised read), consecutive tiles
//! of one AIC where one reads the other's output, and chains of `matmul_accumulate` into one f32
//! region on one and on several AICs. Skipped, with a note, where g++ is missing.

use crate::common;

use common::emulated::{self, kernel_of};

use hpmoe_ascendc::emulator::{EmulateError, Emulation};
use hpmoe_ascendc::{KernelFiles, emit};
use hpmoe_core::model::{CoreKind::*, DType, MachineProfile, Taskflow};
use hpmoe_host::exec::Inputs;

/// [`emulated::equals_executor`] with this file's input seed.
fn equals_executor(tf: &Taskflow, compiled: &hpmoe_core::Compiled, kernel: &KernelFiles) -> Result<(), EmulateError> {
    emulated::equals_executor(tf, compiled, kernel, 5)
}

/// One AIC tile: `h = x · w`, then `y = h · w` and `h += x · w` (f32 `h`).
fn two_matmuls_in_a_tile() -> Taskflow {
    let mut tf = Taskflow::new("in_tile", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::F32, &[16, 16]);
    let w = tf.input("w", DType::F32, &[16, 16]);
    let h = tf.output("h", DType::F32, &[16, 16]);
    let y = tf.output("y", DType::F32, &[16, 16]);
    tf.tile("mm", Aic, |t| {
        t.op("matmul", [x.whole(), w.whole(), h.whole()]);
        t.op("matmul", [h.whole(), w.whole(), y.whole()]);
        t.op("matmul_accumulate", [x.whole(), w.whole(), h.whole()]);
    });
    tf
}

#[test]
fn a_matmul_reading_the_previous_matmuls_output_waits_for_its_write() {
    let tf = two_matmuls_in_a_tile();
    let (compiled, kernel) = kernel_of(&tf);
    assert_eq!(kernel.cpp.matches("hpmoe::CubeWritesDone();").count(), 1, "one barrier, before `y = h · w`");
    equals_executor(&tf, &compiled, &kernel).unwrap_or_else(|e| panic!("{e}"));
    // Without the barrier the strict emulator finds the FIX write and the MTE2 read unordered.
    let mut unordered = kernel.clone();
    unordered.cpp = kernel.cpp.replace("hpmoe::CubeWritesDone();", "");
    if common::emulator_options().is_some() {
        let error = equals_executor(&tf, &compiled, &unordered).expect_err("the emulator must refuse the kernel");
        let text = error.to_string();
        assert!(text.contains("unsynchronised_read") && text.contains("FIX"), "{text}");
    }
}

/// Two families on one AIC: `first` writes `h`, `second` reads it (a matmul of `h`) and adds
/// into `c` after `first`'s plain matmul into `c`. Both run on the only AIC, one after the other.
fn consecutive_tiles() -> Taskflow {
    let mut tf = Taskflow::new("consecutive", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::Bf16, &[4, 16, 16]);
    let w = tf.input("w", DType::Bf16, &[16, 16]);
    let h = tf.scratch("h", DType::Bf16, &[4, 16, 16]);
    let c = tf.output("c", DType::F32, &[16, 16]);
    let y = tf.output("y", DType::F32, &[4, 16, 16]);
    tf.tile("first", Aic, |t| {
        let s = t.grid("s", 4);
        t.op("matmul", [x.at(s.clone()), w.whole(), h.at(s)]);
    });
    tf.tile("start", Aic, |t| t.op("matmul", [x.at(0), w.whole(), c.whole()]));
    tf.tile("second", Aic, |t| {
        let s = t.grid("s", 4);
        t.op("matmul", [h.at(s.clone()), w.whole(), y.at(s)]);
    });
    for s in 1..4 {
        tf.tile(&format!("add{s}"), Aic, |t| t.op("matmul_accumulate", [h.at(s), w.whole(), c.whole()]));
    }
    tf
}

#[test]
fn consecutive_tiles_of_one_aic_see_each_others_writes() {
    let tf = consecutive_tiles();
    let (compiled, kernel) = kernel_of(&tf);
    assert!(!kernel.cpp.contains("hpmoe::CubeWritesDone();"), "no tile reads what it wrote itself");
    equals_executor(&tf, &compiled, &kernel).unwrap_or_else(|e| panic!("{e}"));
}

/// `c = Σ_s x[s] · w` over `s` in declaration order: a plain matmul, then `S - 1` accumulating
/// families, spread over `aic` AICs.
fn accumulation_chain(aic: u32) -> Taskflow {
    let mut tf = Taskflow::new(format!("chain_{aic}"), MachineProfile::small(aic, 1));
    let x = tf.input("x", DType::Bf16, &[6, 16, 32]);
    let w = tf.input("w", DType::Bf16, &[32, 16]);
    let c = tf.output("c", DType::F32, &[16, 16]);
    tf.tile("first", Aic, |t| t.op("matmul", [x.at(0), w.whole(), c.whole()]));
    for s in 1..6 {
        tf.tile(&format!("acc{s}"), Aic, |t| t.op("matmul_accumulate", [x.at(s), w.whole(), c.whole()]));
    }
    tf
}

#[test]
fn accumulation_chains_add_in_their_order_on_one_and_on_several_aics() {
    for aic in [1, 2, 3] {
        let tf = accumulation_chain(aic);
        let (compiled, kernel) = kernel_of(&tf);
        assert_eq!(kernel.cpp.matches("hpmoe::MatmulAccumulateTile(").count(), 5);
        equals_executor(&tf, &compiled, &kernel).unwrap_or_else(|e| panic!("{aic} AICs: {e}"));
    }
}

#[test]
fn accumulating_into_a_bf16_region_is_refused_by_the_backend() {
    let mut tf = Taskflow::new("bf16_acc", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::Bf16, &[16, 16]);
    let c = tf.output("c", DType::Bf16, &[16, 16]);
    tf.tile("first", Aic, |t| t.op("matmul", [x.whole(), x.whole(), c.whole()]));
    tf.tile("acc", Aic, |t| t.op("matmul_accumulate", [x.whole(), x.whole(), c.whole()]));
    let compiled = hpmoe_core::plan(&tf).unwrap();
    let error = emit(&tf, &compiled).unwrap_err();
    assert_eq!(
        error.to_string(),
        "taskflow `bf16_acc`, tile `acc`: matmul_accumulate adds into `c[:, :]`, which is bf16: the Matmul API's atomic \
         add would round the product into bf16 before adding it; accumulate into an f32 region"
    );
}

#[test]
fn the_barrier_before_each_tiles_signals_is_what_orders_consecutive_tiles() {
    let Some(mut options) = common::emulator_options() else { return };
    let tf = consecutive_tiles();
    let (_, kernel) = kernel_of(&tf);
    let context =
        std::fs::read_to_string(hpmoe_ascendc::runtime::source_include_dir().join("hpmoe/context.h")).unwrap();
    let patched = context.replace("AscendC::PipeBarrier<PIPE_ALL>();", "");
    assert_ne!(patched, context);
    options.runtime_overrides.push(("hpmoe/context.h".into(), patched));
    let error = Emulation::build(&kernel, &options)
        .and_then(|e| e.run(&tf, &Inputs::random(&tf, 5)))
        .expect_err("without the barrier the emulator must refuse the kernel");
    let text = error.to_string();
    // e.g. `error unsynchronised_read ... call=Matmul::IterateAll MTE2 reads global memory ... that
    // this core's FIX instruction Matmul::IterateAll#2 writes ... [tile: ... add1()]`.
    assert!(text.contains("unsynchronised_read") && text.contains("FIX instruction"), "{text}");
}
