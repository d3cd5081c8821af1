//! What `#[taskflow]` spends on the DeepSeek-V3 EP8 layer (`examples/examples/moe_ffn_dsl.rs`,
//! 53 760 tile instances): the front-end, the whole pipeline, and encoding the table and
//! the IR the macro embeds. The macro runs this optimised (the workspace builds
//! proc-macros with `opt-level = 3` in dev too), so run it in release:
//!
//! ```sh
//! cargo bench -p hpmoe-core --bench frontend
//! ```

use hpmoe_core::schedule::SimpleCost;
use hpmoe_core::syntax;
use std::time::{Duration, Instant};

const SRC: &str = include_str!("../../examples/examples/moe_ffn_dsl.rs");

fn main() {
    // The folder of the flagship, against which its taskflows' `include!`s resolve (reading the
    // included layout is part of the front-end's time, as in the macro).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/examples");
    let cost = SimpleCost::default();
    let runs = 7;
    let mut parse = Vec::new();
    let mut compile = Vec::new();
    let mut encode = Vec::new();
    let mut entries = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let found = syntax::parse_file_in(SRC, Some(&dir)).expect("the example parses");
        parse.push(t.elapsed());
        let t = Instant::now();
        let compiled = found[0].compile(&cost).expect("the example compiles");
        compile.push(t.elapsed());
        let t = Instant::now();
        let (bytes, json) = (compiled.table.to_bytes(), found[0].taskflow.to_json());
        encode.push(t.elapsed());
        entries = compiled.table.entries().len();
        assert!(!bytes.is_empty() && !json.is_empty());
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (p, c, e) = (median(&mut parse), median(&mut compile), median(&mut encode));
    println!("moe_ffn (DeepSeek-V3, EP 8, 4096 tokens/rank): {entries} table entries, median of {runs} runs");
    println!("  front-end (parse + lower)    {:>8.1} ms", p.as_secs_f64() * 1e3);
    println!("  checks + schedule + table    {:>8.1} ms", c.as_secs_f64() * 1e3);
    println!("  table blob + IR JSON         {:>8.1} ms", e.as_secs_f64() * 1e3);
    println!("  total                        {:>8.1} ms", (p + c + e).as_secs_f64() * 1e3);
}
