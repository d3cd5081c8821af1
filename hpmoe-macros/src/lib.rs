//! `#[taskflow]`, `#[tile]` and `#[op]`: the kernel author's front door to hpmoe.
//!
//! This crate holds the entry points only. Parsing, checking and scheduling live in
//! `hpmoe-core` (its `syntax` feature is the front-end, shared with build scripts), the kernel
//! text in `hpmoe-ascendc` (without its `emulator` feature); the code the macro emits is built in
//! [`expand`](self) from what the front-end found. The macro never builds `hpmoe-host`: the
//! executor and the simulator that run the returned `Program` are the user crate's dependency.

#![warn(missing_docs)]

use proc_macro::TokenStream;
use std::path::Path;

mod expand;

/// Compiles a taskflow: a fused kernel of AIC (matrix) and AIV (vector, communication)
/// tiles joined by dependencies, checked and statically scheduled while the crate compiles.
///
/// ```
/// use hpmoe_core::dsl::*;
/// use hpmoe_macros::taskflow;
///
/// /// Each rank sends a block of rows to every rank, which multiplies what it received.
/// #[taskflow(profile = small(2), ranks = 4)]
/// fn tiny_moe() {
///     const ROWS: u64 = 16; // rows each rank sends to each rank
///     const HIDDEN: u64 = 64;
///     const X: Tensor<Bf16> = input([RANKS * ROWS, HIDDEN]);
///     const W: Tensor<Bf16> = input([HIDDEN, 128]);
///     const RECV: Tensor<Bf16> = symmetric([RANKS * ROWS, HIDDEN]); // grouped by source rank
///     const OUT: Tensor<F32> = output([RANKS * ROWS, 128]);
///
///     #[tile(aiv, grid(dst in 0..RANKS))]
///     fn dispatch(dst: Idx) {
///         put(X.rows(dst * ROWS, ROWS), RECV.on(dst).rows(RANK * ROWS, ROWS));
///     }
///
///     /// Waits only for the put that carries its rows.
///     #[tile(aic, grid(src in 0..RANKS))]
///     fn gmm(src: Idx) {
///         matmul(RECV.rows(src * ROWS, ROWS), W, OUT.rows(src * ROWS, ROWS));
///     }
///
///     /// A user-defined op: its Rust reference body runs on the host executor, `emit`
///     /// is how the AscendC backend calls it on the device.
///     #[op(aiv, work = vector(1), emit = "hpmoe_user::Relu({out})", read_write(out))]
///     fn relu(out: &mut TileData) {
///         for v in &mut out.values {
///             *v = v.max(0.0);
///         }
///     }
///
///     #[tile(aiv, grid(src in 0..RANKS, half in 0..2))]
///     fn activate(src: Idx, half: Idx) {
///         relu(OUT.rows(src * ROWS, ROWS).slice(half * 64, 64));
///     }
/// }
///
/// let program = tiny_moe(); // a const fn: everything was computed at compile time
/// let table = program.table().unwrap();
/// assert_eq!(table.view().name(), "tiny_moe");
/// assert_eq!(table.entries().len(), (4 + 4 + 8) * 4); // instances x ranks
/// assert_eq!(program.taskflow().unwrap().families.len(), 3);
/// assert_eq!(program.user_op("relu").unwrap().emit, "hpmoe_user::Relu({out})");
/// ```
///
/// # The taskflow function
///
/// `#[taskflow(profile = P, ranks = N)]` goes on a function without parameters whose body
/// holds only items. `P` is `ascend910b` (24 AIC + 48 AIV), `ascend_a3_die` (the same per
/// die) or `small(A)` (A AIC and 2A AIV per rank, for tests and host runs); `N` is the
/// number of ranks (expert-parallel size, `1..=1024`). The taskflow is SPMD: every rank runs
/// every tile. The function becomes a `const fn` returning [`hpmoe_core::dsl::Program`]:
/// the schedule table (`program.table()`, decoded from a binary blob with its CRC), the IR
/// for the simulator (`program.taskflow()`), a host-executable form of each tile
/// (`program.tiles`, functions that evaluate the tile's regions for one instance and call
/// a [`hpmoe_core::dsl::TileContext`] once per op, after reading a guarded tile's count
/// through it), and the user ops' reference bodies. The IR carries the guards, so the host
/// executor and the AscendC backend see them too.
/// The macro adds `const RANKS: u64 = N;` to the body.
///
/// The body's items:
///
/// - **Compile-time integers**: `const T: u64 = 4096;`, `const E: u64 = 256 / RANKS;`.
///   The macro evaluates them (in any order) with the declared type's range checked at
///   every operation: `+ - * / % << >> & | ^`, unary `-`, `as` casts, `u64::MAX`. An
///   overflow, a division by zero or a truncating cast is an error at that operation.
/// - **Tensors**: `const X: Tensor<Bf16> = input([T, H]);` with `input` (read-only),
///   `output`, `scratch` or `symmetric` (same address on every rank: the only kind a `put`
///   may write into on another rank), element type `Bf16`, `F16`, `F32`, `I8` or `I32`, and
///   a shape of compile-time integers. `const A: Tensor<Bf16> = X;` names the tensor `X` of
///   the body `A` too (same element type; the IR knows `X` alone): a layout file can read a
///   tensor its includer picks (`examples/dsl/`: `GMM1_IN`, the rows GMM1 multiplies — `RECV`
///   under BF16 dispatch, the dequantised `XIN` under INT8).
/// - **Tiles**: `#[tile(aic | aiv, grid(e in 0..E, m in 0..M), after(...))] fn name(e: Idx, m: Idx) { .. }`.
///   The grid's indices are the function's parameters, in order, each an `Idx`; each grid
///   point is one tile instance. The body is a list of op calls and `let` bindings:
///   `matmul(A.at(e).slice(m * B, B), W.at(e), H.at(e).slice(m * B, B));`. A region is a
///   tensor followed by `.at(i)`, `.slice(start, len)` (alias `.rows`), `.all()`, each
///   narrowing the next dimension (the rest are whole), and `.on(rank)` for another rank's
///   copy (a `put` destination). Index expressions are affine in the grid indices and
///   `RANK` (the executing rank): `RANK * S + b * B`, and may end with `% m`
///   (`(RANK + d) % RANKS`). Lengths are constants.
/// - **Guards**: `run_if_above(COUNTS.at(e), b * B);` before a tile's ops makes its body
///   conditional on a count known only at run time (capacity padding): the instance runs
///   its ops only when that `i32` element is greater than the bound (an index expression);
///   otherwise it does no work but still waits for its inputs and signals its waiters, so the
///   static schedule holds. The count is one element of an `i32` tensor on the executing rank
///   that the tile does not write itself; the tile depends on whoever writes it (a put from
///   another rank, for instance). One guard per tile, before its op calls.
/// - **Loops**: `for p in 0..H / P { matmul_tn_accumulate(X.at(e).all().slice(p * P, P), ..); }`
///   in a tile body repeats its op calls (and `let`s) once per value of a compile-time range,
///   unrolled by the macro with `p` a constant in each copy: an op per block of a dimension the
///   grid (at most four dimensions) does not split. The range uses constants only — not the
///   grid indices, `RANK` or a `let` — so every instance has the same ops; a guard cannot be
///   inside one; a tile calls at most 64 ops (`examples/dsl/moe_ffn_natural_backward.rs`: one
///   weight-gradient op per 1024 gradient rows).
/// - **Dependencies** come from data: a tile reading a region depends on the tiles declared
///   before it that write overlapping data, on the rank whose memory it is (so a put feeds
///   readers on its destination). `after(gmm1(e, ..), dispatch)` adds explicit ones: a tile
///   name with one index expression, range (`load(r * 4..r * 4 + 4)`) or `..` (all) per grid
///   dimension of that tile, or the bare name for all of its instances. A tile naming itself
///   chains its instances: `after(step(e, s - 1))` runs each `step` after the one before it
///   along `s`, and `step(e, 0)`, whose neighbour lies outside the grid, has no such
///   dependency. An instance may not wait for itself, and entries on itself pointing both ways
///   form a cycle; an `after` on another tile must stay inside its grid.
/// - **Families that exist at some sizes**: `when(R / W > 1)` among a tile's arguments keeps
///   the family only where the condition holds: comparisons (`< <= > >= == !=`) of
///   compile-time integer expressions, joined by `&&`, `||`, `!` and parentheses. Where it is
///   false the family is left out as if it were not written (its grid, body and `after` are not
///   read, as under a false `#[cfg]`, and its function is not in the expansion), and an `after`
///   naming it is an error. One layout
///   included at several sizes uses it for a chain that one size needs and another does not
///   (`examples/dsl/moe_ffn_backward.rs`: the weight-gradient chains exist only with more than
///   one row group per expert).
/// - **Ops**: the built-ins of [`hpmoe_core::dsl`] (`matmul`, `matmul_accumulate`,
///   `matmul_nt`, `matmul_tn`, `matmul_tn_accumulate`, `matmul_tn_slots_accumulate`,
///   `matmul_tn_slots` on AIC;
///   `put`, `copy`, `swiglu`,
///   `scale_rows`, `accumulate`, `weighted_accumulate`, `gather_weighted_accumulate`,
///   `quantize`, `dequantize`, `cast`, `zero`, `swiglu_backward`, `scale_rows_repeat`,
///   `row_dot_topk`, `sum_topk` and their gathering forms `gather_scale_rows_repeat`,
///   `gather_row_dot_topk`, `gather_sum_topk`, and `fence` (no work: later readers of its
///   region wait for it instead of for the writes before it, a relay) on AIV), and
///   user-defined ones:
///   `#[op(aic | aiv, work = matmul | copy | vector(F) | gather(F), emit = "Call({a}, {b})", read_write(b))]
///   fn name(a: &TileData, b: &mut TileData) { reference body }`. `&TileData` parameters
///   are read, `&mut TileData` ones written (or read and written when listed in
///   `read_write`); `emit` is the AscendC call with `{param}` placeholders; `work` feeds the
///   cost model (flops per element for vector ops; `gather(F)`: the op reads one row of its
///   first argument per element of its second, F flops per element of those rows). A tile cannot share its name with an op
///   it calls (both are functions of the body).
/// - **Included items**: `include!("layer.rs");` stands for the items of that file, read
///   relative to the folder of the file holding the taskflow (as rustc's `include!`), so one
///   layout serves several shapes: each taskflow declares the shape's integer consts and
///   includes the tensors and tiles written in terms of them (`examples/dsl/moe_ffn.rs`). The
///   file holds body items only and includes nothing itself; an error inside it is reported at
///   the `include!`; the crate is rebuilt when it changes.
///
/// The items stay as written (helper attributes removed) and type-check against
/// [`hpmoe_core::dsl`], so rust-analyzer follows every name; they are marked
/// `#[allow(dead_code)]` since nothing calls the tile functions. Names starting with
/// `__hpmoe` are reserved for the generated code.
///
/// # Checks
///
/// Every error of a taskflow is reported in one compilation, at its tokens: unknown
/// tensors, tiles and ops (with the closest name), grid/parameter mismatches, empty or
/// oversized grids, ops on the wrong core kind, argument counts and kinds, regions out of
/// bounds, puts into non-symmetric tensors or to ranks out of range, reads of data nothing
/// writes, unordered write-after-read and write-after-write, dependency cycles (with the
/// path), UB/L1 footprint, and the task, counter and table limits. When the declarations
/// themselves have errors, the checks that need the expanded instances wait until those
/// are fixed. On error the function is still emitted, so the IDE keeps working; a panic
/// inside the macro becomes a compile error.
#[proc_macro_attribute]
pub fn taskflow(args: TokenStream, item: TokenStream) -> TokenStream {
    // The folder of the file holding the taskflow, against which its body's `include!`s resolve.
    let dir = proc_macro::Span::call_site().local_file().and_then(|f| f.parent().map(Path::to_path_buf));
    expand::guarded(item.clone().into(), || expand::taskflow(dir.as_deref(), args.into(), item.into())).into()
}

/// Marks a tile function inside a `#[taskflow]` function (see [`macro@taskflow`]). Anywhere
/// else it is an error.
#[proc_macro_attribute]
pub fn tile(_args: TokenStream, item: TokenStream) -> TokenStream {
    expand::outside("tile", item.into()).into()
}

/// Declares a user-defined op inside a `#[taskflow]` function (see [`macro@taskflow`]).
/// Anywhere else it is an error.
#[proc_macro_attribute]
pub fn op(_args: TokenStream, item: TokenStream) -> TokenStream {
    expand::outside("op", item.into()).into()
}
